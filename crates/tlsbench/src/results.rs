//! The results document of a run (DESIGN.md, "Results"): what is exported as JSON and what the
//! table and the other exporters render.

use serde::{Deserialize, Serialize};
use tlsbench_harness::protocol::StackInfo;
use tlsbench_harness::Side;

/// Bump on any change to the JSON layout that a reader would notice.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    pub schema_version: u32,
    pub run: RunInfo,
    pub results: Vec<CellResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: String,
    /// RFC 3339, UTC.
    pub started: String,
    pub tlsbench_version: String,
    pub command_line: Vec<String>,
    pub environment: Environment,
    /// Every stack the run used, with the library version its runner reported.
    pub stacks: Vec<StackInfo>,
    /// How samples were taken: count, each side's minimum measured time, warmup.
    pub samples: usize,
    pub min_time_ms: u64,
    pub warmup_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub cpu: String,
    pub cores: usize,
    pub kernel: String,
    pub rustc: String,
    pub allocator: String,
    pub aslr: String,
    pub governor: String,
}

/// One number series: one (pair, scenario, measure, side, metric).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    pub scenario: String,
    pub client_stack: String,
    pub server_stack: String,
    pub client_library: Option<String>,
    pub server_library: Option<String>,
    pub measure: String,
    pub side: Side,
    pub metric: String,
    pub unit: String,
    /// "higher" or "lower".
    pub better: String,
    pub samples: Vec<f64>,
    pub median: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Indices into `samples` of the values the MAD test flags as outliers (kept, not hidden).
    pub outliers: Vec<usize>,
    pub status: Status,
    pub reason: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Unsupported,
    Failed,
}

impl CellResult {
    /// The column label of the pair: the stack id, or `client -> server` for an interop pair.
    pub fn pair_label(&self) -> String {
        pair_label(&self.client_stack, &self.server_stack)
    }
}

/// The stack id of a pair of one stack, or `client -> server` for an interop pair.
pub fn pair_label(client: &str, server: &str) -> String {
    match client == server {
        true => client.to_string(),
        false => format!("{client} -> {server}"),
    }
}
