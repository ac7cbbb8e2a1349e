//! A noisy machine: making one on purpose (inject.rs, `tlsbench inject-noise`), and measuring
//! how noisy this one is before a run's first round (probe.rs), and which of its CPUs runs
//! at full speed before each sample (sentinel.rs), docs/sampling.md.

mod inject;
mod probe;
mod sentinel;

pub use inject::{inject, parse_ms_range, MsRange};
pub use probe::{probe, NoiseProbe};
pub use sentinel::{Placement, Sentinel, SentinelSummary, FULL_SPEED, NOISY_PROBES_PERCENT};
