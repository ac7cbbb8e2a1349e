//! The results document of a run (docs/results.md): what is exported as JSON and what the table
//! and the other exporters render.

use std::path::Path;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use tlsbench_harness::protocol::StackInfo;
use tlsbench_harness::Side;

use crate::key::CellKey;

/// Bump on any change to the JSON layout that a reader would notice.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    pub schema_version: u32,
    pub run: RunInfo,
    pub results: Vec<CellResult>,
}

impl RunDocument {
    /// Reads an exported document; one of another schema version is refused, not misread.
    pub fn read(path: &Path) -> anyhow::Result<RunDocument> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
        match value.get("schema_version").and_then(serde_json::Value::as_u64) {
            Some(version) if version == u64::from(SCHEMA_VERSION) => {}
            Some(version) => bail!(
                "{} has results schema version {version}; this tlsbench reads version {SCHEMA_VERSION}",
                path.display()
            ),
            None => bail!("{} is not a tlsbench results document (it has no schema_version)", path.display()),
        }
        serde_json::from_value(value).with_context(|| format!("{} is not a tlsbench results document", path.display()))
    }
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
    /// `--target-ci` in %: cells whose 95% intervals were wider got further samples, for at
    /// most `time_budget_s` of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ci: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_budget_s: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub cpu: String,
    pub cores: usize,
    pub kernel: String,
    pub rustc: String,
    pub allocator: String,
    /// The runners' builds as they reported them (name, profile, flags) and what that means for
    /// the C libraries; absent in runs from before builds were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builds: Option<String>,
    pub aslr: String,
    pub governor: String,
    /// What the machine did while the run measured; absent in runs from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Conditions>,
}

/// What the machine did during the run: whatever else ran on it shows in the load, in time
/// stolen by the hypervisor, and in how much a fixed loop's time moves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// The 1-minute load average when the run started measuring and when it ended.
    pub load_average_start: f64,
    pub load_average_end: f64,
    /// Time the hypervisor gave this machine's CPUs to others, in % of all CPU time over the run
    /// (from /proc/stat); None where the system does not say.
    pub steal_percent: Option<f64>,
    /// A fixed CPU-bound loop timed before the first sample and after the last.
    pub calibration_before: Calibration,
    pub calibration_after: Calibration,
}

/// The times of one fixed loop, repeated: on a quiet machine they hardly move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub median_ms: f64,
    /// (p90 - p10) / median of the loop's times, in %.
    pub spread_percent: f64,
    pub max_over_min: f64,
}

/// One number series: one (pair, scenario, measure, side, metric).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    #[serde(flatten)]
    pub key: CellKey,
    pub client_library: Option<String>,
    pub server_library: Option<String>,
    /// On a `..._per_thread` result of N threads: its rate per thread over the rate of the
    /// same cell with one thread in the same run (medians), e.g. 0.92; 1 is perfect scaling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling_efficiency: Option<f64>,
    /// The efficiency's interval: its two rates' 95% intervals taken at their far ends (the
    /// lowest over the highest, the highest over the lowest), so at least 90% confidence when
    /// both have one; absent when either has none (too few samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling_efficiency_ci: Option<[f64; 2]>,
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
    /// What this side's handshakes negotiated (e.g. `1.3 aes-256-gcm x25519, ticket received`),
    /// where the runner said: with the libraries' defaults, the only place the suite and group
    /// are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negotiated: Option<String>,
    /// Which of the cell's processes took each sample (parallel to `samples`), where they stay
    /// up for many samples (a JIT's or a garbage collector's runtime: docs/sampling.md); absent
    /// where every sample was a process of its own. The interval spans every fork's median.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_forks: Vec<u32>,
    /// How each of those processes warmed up for the cell before its first sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmups: Vec<crate::steady::Warmup>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Unsupported,
    Failed,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{Exporter, JsonExporter};
    use crate::output::table::fixture;

    #[test]
    fn reads_an_exported_document_and_refuses_another_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, JsonExporter.serialize(&fixture::document()).unwrap()).unwrap();
        assert_eq!(RunDocument::read(&path).unwrap(), fixture::document());
        std::fs::write(&path, r#"{"schema_version": 2, "run": {}}"#).unwrap();
        let err = RunDocument::read(&path).unwrap_err().to_string();
        assert_eq!(err, format!("{} has results schema version 2; this tlsbench reads version 1", path.display()));
        std::fs::write(&path, "[1, 2]").unwrap();
        let err = RunDocument::read(&path).unwrap_err().to_string();
        assert_eq!(err, format!("{} is not a tlsbench results document (it has no schema_version)", path.display()));
    }
}
