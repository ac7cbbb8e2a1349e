//! The measurement core of tlsbench: what a stack adapter implements, how bytes move between the
//! two sides, how a sample is measured and checked, and how a runner reports it.
//!
//! Everything in the measured loop is generic over the [`Stack`] trait, so the calls into each
//! library are statically dispatched; the runtime choice of stack happens once, in [`runner`].

pub mod allocator;
pub mod build;
mod clock;
pub mod cold;
pub mod context;
pub mod cpu_time;
pub mod driver;
mod error;
pub mod gate;
pub mod heap;
pub mod io;
pub mod memory;
pub mod net;
pub mod pin;
pub mod pki;
pub mod protocol;
pub mod rss;
pub mod runner;
pub mod scenario;
pub mod speed;
pub mod split;
pub mod stack;
pub mod step;
pub mod testing;
pub mod transport;

pub use error::{Error, LibError};
pub use pki::Pki;
pub use scenario::{ClientAuth, Config, Contexts, Group, KeyType, Kind, Measure, Scenario, Suite, Version};
pub use stack::{
    check_pair, Backend, Capabilities, Connection, Exclusion, MeasureLimit, Negotiated, PeerLimit, Side, Stack,
};
pub use transport::{Endpoint, Link};
