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
    /// In a run with `--threads`: each CPU its threads used, with its speed at a fixed loop,
    /// measured as the run started (cores.rs); absent in other runs and those from before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub core_speeds: Vec<crate::cores::CoreSpeed>,
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
    /// The noise probe before the first round (crate::noise); absent from runs before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<crate::noise::NoiseProbe>,
    /// Which CPU each time sample of a stack compiled ahead of time ran on (crate::noise's
    /// sentinel); absent from runs before it, and where there was no CPU to choose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentinel: Option<crate::noise::SentinelSummary>,
}

impl Conditions {
    /// How much the machine's speed moves from one stretch of work to the next, in % of a rate:
    /// half the spread (p90 - p10) of the calibration loop's times, the larger of before and
    /// after the run. Two runs of the quick comparison a few minutes apart moved their medians by
    /// about 1% on a quiet machine here (issue 33), more than each run's samples spread (their
    /// rounds span the run, so drift within it is in them already; between runs it is not). A
    /// rate's interval is widened by this much at each end (sampling/document.rs), so that it holds
    /// what the same build measures in the next run: widened so, the 6-sample intervals of two
    /// quick comparisons held the other's median in 97% of the rate cells, against 69% unwidened.
    pub fn drift_percent(&self) -> f64 {
        // Without the loops a neighbour slowed, as the rates' intervals are without their slowed
        // samples (docs/sampling.md, "A noisy machine").
        let kept = |c: &Calibration| c.kept_spread_percent.unwrap_or(c.spread_percent);
        let spread = kept(&self.calibration_before).max(kept(&self.calibration_after)) / 2.0;
        if spread.is_finite() {
            spread
        } else {
            0.0
        }
    }
}

/// The times of one fixed loop, repeated: on a quiet machine they hardly move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub median_ms: f64,
    /// (p90 - p10) / median of the loop's times, in %.
    pub spread_percent: f64,
    /// The same of the loops left when those a neighbour slowed are set aside (stats::slowed);
    /// absent from runs before tlsbench set them aside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_spread_percent: Option<f64>,
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
    /// "higher" or "lower", or "neither" for a property of what was measured (the roots a trust
    /// store held): [`bracket`] titles it.
    pub better: String,
    pub samples: Vec<f64>,
    pub median: Option<f64>,
    /// The figure of the time measure's rates, in place of the median: the mean of the faster
    /// half of the kept samples (`stats::faster_half`; docs/sampling.md, "The faster half");
    /// absent for other results, and in runs stored before tlsbench took it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faster_half_mean: Option<f64>,
    /// The interval of the figure ([`CellResult::figure`]): of the median, distribution-free, at
    /// 95% from 6 samples; of the faster half's mean, as `stats::faster_half` says.
    pub ci95: Option<[f64; 2]>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Indices into `samples` of the values the MAD test flags as outliers (kept, not hidden).
    pub outliers: Vec<usize>,
    /// Indices into `samples` of the rates a noisy machine slowed (`stats::slowed`), set aside:
    /// the median, interval, min and max are of the others (the time measure's rates only;
    /// docs/sampling.md, "A noisy machine").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slowed: Vec<usize>,
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
    /// The CPUs each sample's threads were pinned to, in thread order (parallel to `samples`), in
    /// a run with `--threads` (the one-thread row: one CPU each, in turn); absent where a sample
    /// ran wherever the scheduler put it. The scaling efficiency reads them (docs/axes.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_cpus: Vec<Vec<u32>>,
    /// How each of those processes warmed up for the cell before its first sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmups: Vec<crate::steady::Warmup>,
}

impl CellResult {
    /// Whether it is one of the time measure's rates: the figures a machine's speed moves, whose
    /// intervals take the drift term and whose figure is the faster half's mean. The runs' own
    /// test of a sample's series is `sampling::cell`'s, by metric.
    pub fn is_time_rate(&self) -> bool {
        self.key.measure == "time" && self.better == "higher"
    }

    /// The figure tables print and `compare` judges: the faster half's mean where there is one
    /// (the time measure's rates), else the median.
    pub fn figure(&self) -> Option<f64> {
        self.faster_half_mean.or(self.median)
    }

    /// Has a number (neither failed nor unsupported).
    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }

    /// Of CPU time (`cpu_handshakes_per_s`, `cpu_user_us_per_connection`), not the wall clock's.
    pub fn is_cpu(&self) -> bool {
        self.metric.starts_with("cpu_")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Unsupported,
    Failed,
}

/// What a metric's title says in brackets: `1/s, higher is better`, or the unit alone for a
/// property neither way of which is better.
pub fn bracket(unit: &str, better: &str) -> String {
    match better {
        "higher" | "lower" => format!("{unit}, {better} is better"),
        _ => unit.to_string(),
    }
}

/// A small run document for the tests of the tables, the reports and the exporters: two pairs,
/// a failed and an unsupported cell, outliers, two metrics.
#[cfg(test)]
pub mod fixture {
    use super::*;
    use crate::key::CellKey;
    use tlsbench_harness::protocol::StackInfo;
    use tlsbench_harness::{Capabilities, Side};

    pub const FULL: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    pub const CHACHA: &str = "handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305";

    pub fn document() -> RunDocument {
        let rustls = |scenario: &str, side: Side, median: f64, ci: [f64; 2], outliers: Vec<usize>| CellResult {
            samples: vec![ci[0], median, ci[1]],
            median: Some(median),
            ci95: Some(ci),
            min: Some(ci[0]),
            max: Some(ci[1]),
            outliers,
            ..cell(scenario, "rustls-aws-lc-rs", side, Status::Ok, None)
        };
        let failed = "negotiated TLS 1.2, expected TLS 1.3";
        let unsupported = "openssl: cipher suite chacha20-poly1305 not supported";
        RunDocument {
            schema_version: SCHEMA_VERSION,
            run: RunInfo {
                id: "run-1".into(),
                started: "2025-01-02T03:04:05Z".into(),
                tlsbench_version: "0.1.0".into(),
                command_line: vec!["tlsbench".into(), "run".into()],
                environment: Environment {
                    cpu: "Test CPU @ 3.0GHz".into(),
                    cores: 2,
                    kernel: "6.1.0".into(),
                    rustc: "rustc 1.85.0".into(),
                    allocator: "system".into(),
                    builds: None,
                    aslr: "on".into(),
                    governor: "performance".into(),
                    conditions: None,
                    core_speeds: Vec::new(),
                },
                stacks: ["rustls-aws-lc-rs", "openssl"]
                    .map(|id| StackInfo::new(id, format!("{id} 1.0"), Capabilities::everything()))
                    .to_vec(),
                samples: 3,
                min_time_ms: 100,
                warmup_ms: 50,
                target_ci: None,
                time_budget_s: None,
            },
            results: vec![
                rustls(FULL, Side::Server, 12345.0, [12200.0, 12493.14], vec![]),
                cell(FULL, "openssl", Side::Server, Status::Failed, Some(failed)),
                rustls(FULL, Side::Client, 987.65, [980.0, 990.0], vec![2]),
                cell(FULL, "openssl", Side::Client, Status::Failed, Some(failed)),
                rustls(CHACHA, Side::Server, 1500.0, [1400.0, 1600.0], vec![]),
                cell(CHACHA, "openssl", Side::Server, Status::Unsupported, Some(unsupported)),
                with_measure(
                    "heap",
                    CellResult {
                        metric: "heap_peak_bytes".into(),
                        unit: "B".into(),
                        better: "lower".into(),
                        ..rustls(FULL, Side::Server, 45678.0, [45678.0, 45678.0], vec![])
                    },
                ),
            ],
        }
    }

    /// `cell` as a cell of another measure.
    pub fn with_measure(measure: &str, cell: CellResult) -> CellResult {
        CellResult { key: CellKey { measure: measure.into(), ..cell.key.clone() }, ..cell }
    }

    /// The fixture's stacks described as runners now describe them: rustls on AWS-LC, openssl
    /// on its libcrypto.
    pub fn with_backends(mut doc: RunDocument) -> RunDocument {
        for stack in &mut doc.run.stacks {
            let (tls, backend) = match stack.id.as_str() {
                "rustls-aws-lc-rs" => (
                    "rustls 0.23.46",
                    tlsbench_harness::Backend::new("AWS-LC", "1.66.2", Some("aws-lc-rs 1.19.0".into())),
                ),
                _ => ("OpenSSL 3.0.19", tlsbench_harness::Backend::new("OpenSSL libcrypto", "3.0.19", None)),
            };
            (stack.tls_library, stack.backend) = (Some(tls.into()), Some(backend));
        }
        doc
    }

    /// A time cell without numbers; the callers fill in what their status needs.
    fn cell(scenario: &str, stack: &str, side: Side, status: Status, reason: Option<&str>) -> CellResult {
        CellResult {
            key: CellKey {
                scenario: scenario.into(),
                client_stack: stack.into(),
                server_stack: stack.into(),
                measure: "time".into(),
                process: "in-process".into(),
                ..CellKey::default()
            },
            client_library: Some(format!("{stack} 1.0")),
            server_library: Some(format!("{stack} 1.0")),
            scaling_efficiency: None,
            scaling_efficiency_ci: None,
            side,
            metric: "handshakes_per_s".into(),
            unit: "1/s".into(),
            better: "higher".into(),
            samples: vec![],
            median: None,
            faster_half_mean: None,
            ci95: None,
            min: None,
            max: None,
            outliers: vec![],
            slowed: vec![],
            status,
            reason: reason.map(String::from),
            negotiated: None,
            sample_forks: Vec::new(),
            sample_cpus: Vec::new(),
            warmups: Vec::new(),
        }
    }
}
