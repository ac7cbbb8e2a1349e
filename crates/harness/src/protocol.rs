//! What a runner prints on stdout for the orchestrator: one JSON document per invocation.

use serde::{Deserialize, Serialize};

use crate::{Capabilities, Kind, Side};

/// `runner list`: one entry per stack the runner's family holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StackInfo {
    pub id: String,
    /// The library name and version the running code reports.
    pub library: String,
    pub capabilities: Capabilities,
}

/// `runner sample`: the outcome of one sample of one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Reply {
    Ok(SampleReport),
    Unsupported { reason: String },
    Failed { reason: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleReport {
    pub client_library: String,
    pub server_library: String,
    /// Handshakes done, or 16 KiB records sent, in the measured part of the sample.
    pub iterations: u64,
    pub values: Vec<MetricValue>,
}

/// One number of one side in one sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    pub side: Side,
    pub metric: Metric,
    pub value: f64,
    /// The side's measured time behind the value, in seconds (0 for counts).
    pub seconds: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Metric {
    HandshakesPerS,
    /// Bytes one side writes during one handshake (its flights, records included).
    HandshakeBytes,
    /// Megabytes (10^6 bytes) of plaintext per second: sent on the sending side, received on
    /// the receiving side.
    MbPerS,
}

impl Metric {
    /// The metrics a scenario kind reports for each side.
    pub fn of(kind: Kind) -> &'static [Metric] {
        match kind {
            Kind::Transfer => &[Metric::MbPerS],
            _ => &[Metric::HandshakesPerS, Metric::HandshakeBytes],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Metric::HandshakesPerS => "handshakes_per_s",
            Metric::HandshakeBytes => "handshake_bytes",
            Metric::MbPerS => "mb_per_s",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Metric::HandshakesPerS => "1/s",
            Metric::HandshakeBytes => "B",
            Metric::MbPerS => "MB/s",
        }
    }

    /// The measure (DESIGN.md) a metric belongs to.
    pub fn measure(self) -> &'static str {
        match self {
            Metric::HandshakesPerS | Metric::MbPerS => "time",
            Metric::HandshakeBytes => "io",
        }
    }

    /// Whether a larger value is better.
    pub fn higher_is_better(self) -> bool {
        self != Metric::HandshakeBytes
    }
}
