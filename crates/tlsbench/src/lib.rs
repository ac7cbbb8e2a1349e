//! tlsbench: measures TLS implementations the same way and reports how they compare.
//!
//! The orchestrator as a library: `commands` holds what each subcommand does, the modules below
//! it the planning, sampling, statistics, storage and rendering they share (docs/architecture.md).
//! The `tlsbench` binary parses its command line and calls `commands::execute`.

pub mod builds;
pub mod callgrind_file;
pub mod cli;
pub mod cold;
pub mod cold_document;
pub mod commands;
pub mod compare;
pub mod cores;
pub mod environment;
pub mod executor;
pub mod export;
pub mod group;
pub mod instructions;
pub mod io;
pub mod key;
pub mod net;
pub mod noise;
pub mod order;
pub mod output;
pub mod peak;
pub mod plan;
pub mod profile;
pub mod report;
pub mod results;
pub mod runner_command;
pub mod runners;
pub mod sample_call;
pub mod sampling;
pub mod stacks;
pub mod stats;
pub mod steady;
pub mod store;
pub mod sync;
pub mod trust;
