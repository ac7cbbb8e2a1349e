//! The Bencher Metric Format (BMF) export that `bencher run --adapter json` reads: benchmark
//! name -> measure -> {value, lower_value, upper_value}, from each cell's median and 95% interval.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{benchmark_name, with_numbers, Exporter};
use crate::results::RunDocument;

pub struct BencherExporter;

/// One measure of one benchmark: the median and its 95% confidence interval.
#[derive(Serialize)]
struct Metric {
    value: f64,
    lower_value: f64,
    upper_value: f64,
}

impl Exporter for BencherExporter {
    fn serialize(&self, doc: &RunDocument) -> anyhow::Result<Vec<u8>> {
        // BTreeMaps: the same run always exports the same bytes, whatever serde_json's features.
        let mut benchmarks: BTreeMap<String, BTreeMap<&str, Metric>> = BTreeMap::new();
        for (cell, median, [low, high]) in with_numbers(doc) {
            let metric = Metric { value: median, lower_value: low, upper_value: high };
            benchmarks.entry(benchmark_name(cell)).or_default().insert(&cell.metric, metric);
        }
        let mut bytes = serde_json::to_vec_pretty(&benchmarks)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    #[test]
    fn exports_each_cell_with_a_number() {
        let text = String::from_utf8(BencherExporter.serialize(&fixture::document()).unwrap()).unwrap();
        let expected = r#"{
  "handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305/rustls-aws-lc-rs/server": {
    "handshakes_per_s": {
      "value": 1500.0,
      "lower_value": 1400.0,
      "upper_value": 1600.0
    }
  },
  "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm/rustls-aws-lc-rs/client": {
    "handshakes_per_s": {
      "value": 987.65,
      "lower_value": 980.0,
      "upper_value": 990.0
    }
  },
  "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm/rustls-aws-lc-rs/server": {
    "handshakes_per_s": {
      "value": 12345.0,
      "lower_value": 12200.0,
      "upper_value": 12493.14
    },
    "heap_peak_bytes": {
      "value": 45678.0,
      "lower_value": 45678.0,
      "upper_value": 45678.0
    }
  }
}
"#;
        assert_eq!(text, expected);
    }
}
