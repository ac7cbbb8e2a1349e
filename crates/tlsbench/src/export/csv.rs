//! The CSV export: one row per cell, with its statistics and its samples, for spreadsheets and
//! scripts.

use super::Exporter;
use crate::key::CellKey;
use crate::results::{CellResult, RunDocument};

pub struct CsvExporter;

/// The columns after the key's (`CellKey::COLUMNS`, which come first), in the order of `rest`.
const REST: [&str; 19] = [
    "client_library",
    "server_library",
    "side",
    "metric",
    "unit",
    "better",
    "status",
    "median",
    "faster_half_mean",
    "ci95_low",
    "ci95_high",
    "min",
    "max",
    "samples",
    "outliers",
    "reason",
    "scaling_efficiency",
    "scaling_efficiency_ci_low",
    "scaling_efficiency_ci_high",
];

impl Exporter for CsvExporter {
    fn serialize(&self, doc: &RunDocument) -> anyhow::Result<Vec<u8>> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.write_record(CellKey::COLUMNS.iter().chain(&REST))?;
        for cell in &doc.results {
            let key = cell.key.values().map(|value| value.map(|v| v.to_string()).unwrap_or_default());
            writer.write_record(key.iter().chain(&rest(cell)))?;
        }
        Ok(writer.into_inner()?)
    }
}

/// A cell's fields after its key, as `REST` names them; an empty field where one does not apply.
/// Numbers are written with Rust's shortest round-trip form, the same inside the `;`-joined
/// lists as in the single fields.
fn rest(cell: &CellResult) -> [String; REST.len()] {
    let number = |x: Option<f64>| x.map(|x| x.to_string()).unwrap_or_default();
    let text = |x: &Option<String>| x.clone().unwrap_or_default();
    let joined = |items: Vec<String>| items.join(";");
    let status = serde_json::to_value(cell.status).expect("a status serialises");
    [
        text(&cell.client_library),
        text(&cell.server_library),
        cell.side.to_string(),
        cell.metric.clone(),
        cell.unit.clone(),
        cell.better.clone(),
        status.as_str().expect("a status is a name").to_string(),
        number(cell.median),
        number(cell.faster_half_mean),
        number(cell.ci95.map(|ci| ci[0])),
        number(cell.ci95.map(|ci| ci[1])),
        number(cell.min),
        number(cell.max),
        joined(cell.samples.iter().map(f64::to_string).collect()),
        joined(cell.outliers.iter().map(usize::to_string).collect()),
        text(&cell.reason),
        number(cell.scaling_efficiency),
        number(cell.scaling_efficiency_ci.map(|ci| ci[0])),
        number(cell.scaling_efficiency_ci.map(|ci| ci[1])),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    #[test]
    fn one_row_per_cell() {
        let text = String::from_utf8(CsvExporter.serialize(&fixture::document()).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 7);
        assert_eq!(
            lines[0],
            "scenario,client_stack,server_stack,measure,process,allocator,threads,contexts,build,compiler,\
             client_library,server_library,\
             side,metric,unit,better,status,median,faster_half_mean,ci95_low,ci95_high,min,max,samples,outliers,reason,\
             scaling_efficiency,scaling_efficiency_ci_low,scaling_efficiency_ci_high"
        );
        assert_eq!(
            lines[3],
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm,rustls-aws-lc-rs,rustls-aws-lc-rs,time,in-process,,,,,,\
             rustls-aws-lc-rs 1.0,rustls-aws-lc-rs 1.0,client,handshakes_per_s,1/s,higher,ok,987.65,,980,990,980,990,\
             980;987.65;990,2,,,,"
        );
        assert_eq!(
            lines[6],
            "handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305,openssl,openssl,time,in-process,,,,,,openssl 1.0,\
             openssl 1.0,server,handshakes_per_s,1/s,higher,unsupported,,,,,,,,,\
             openssl: cipher suite chacha20-poly1305 not supported,,,"
        );
    }
}
