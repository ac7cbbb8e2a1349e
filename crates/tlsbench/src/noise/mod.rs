//! A noisy machine: making one on purpose (inject.rs, `tlsbench inject-noise`), and measuring
//! how noisy this one is before a run's first round (probe.rs), docs/sampling.md.

mod inject;
mod probe;

pub use inject::{inject, parse_ms_range, MsRange};
pub use probe::{probe, NoiseProbe};
