//! The JSON that github-action-benchmark reads with its custom tools: `[{name, unit, value,
//! range, extra}]`. The action takes one direction per file, so there is one export per direction.

use serde::Serialize;

use super::{benchmark_name, with_numbers, Exporter};
use crate::output::format::format_number;
use crate::results::RunDocument;

/// The metrics where higher is better (the action's `customBiggerIsBetter` tool), or those where
/// lower is better (`customSmallerIsBetter`).
pub struct GithubActionExporter {
    pub higher_is_better: bool,
}

#[derive(Serialize)]
struct Entry {
    name: String,
    unit: String,
    value: f64,
    /// The farther end of the figure's interval, as the action shows it: `± 148.1`.
    range: String,
    extra: String,
}

impl Exporter for GithubActionExporter {
    fn serialize(&self, doc: &RunDocument) -> anyhow::Result<Vec<u8>> {
        let better = if self.higher_is_better { "higher" } else { "lower" };
        let entries: Vec<Entry> = with_numbers(doc)
            .filter(|(cell, _, _)| cell.better == better)
            .map(|(cell, median, [low, high])| Entry {
                name: format!("{}/{}", benchmark_name(cell), cell.metric),
                unit: cell.unit.clone(),
                value: median,
                range: format!("± {}", format_number((median - low).max(high - median))),
                extra: format!(
                    "median of {} samples; 95% CI of the median: {} to {}",
                    cell.samples.len(),
                    format_number(low),
                    format_number(high)
                ),
            })
            .collect();
        let mut bytes = serde_json::to_vec_pretty(&entries)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    fn export(higher_is_better: bool) -> String {
        String::from_utf8(GithubActionExporter { higher_is_better }.serialize(&fixture::document()).unwrap()).unwrap()
    }

    #[test]
    fn exports_the_metrics_where_higher_is_better() {
        let expected = r#"[
  {
    "name": "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm/rustls-aws-lc-rs/server/handshakes_per_s",
    "unit": "1/s",
    "value": 12345.0,
    "range": "± 148.1",
    "extra": "median of 3 samples; 95% CI of the median: 12,200 to 12,493"
  },
  {
    "name": "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm/rustls-aws-lc-rs/client/handshakes_per_s",
    "unit": "1/s",
    "value": 987.65,
    "range": "± 7.650",
    "extra": "median of 3 samples; 95% CI of the median: 980.0 to 990.0"
  },
  {
    "name": "handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305/rustls-aws-lc-rs/server/handshakes_per_s",
    "unit": "1/s",
    "value": 1500.0,
    "range": "± 100.0",
    "extra": "median of 3 samples; 95% CI of the median: 1,400 to 1,600"
  }
]
"#;
        assert_eq!(export(true), expected);
    }

    #[test]
    fn exports_the_metrics_where_lower_is_better() {
        let expected = r#"[
  {
    "name": "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm/rustls-aws-lc-rs/server/heap_peak_bytes",
    "unit": "B",
    "value": 45678.0,
    "range": "± 0",
    "extra": "median of 3 samples; 95% CI of the median: 45,678 to 45,678"
  }
]
"#;
        assert_eq!(export(false), expected);
    }
}
