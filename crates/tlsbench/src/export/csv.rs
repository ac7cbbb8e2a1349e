//! The CSV export: one row per cell, with its statistics and its samples, for spreadsheets and
//! scripts.

use serde::Serialize;
use tlsbench_harness::Side;

use super::Exporter;
use crate::results::{CellResult, RunDocument, Status};

pub struct CsvExporter;

/// One CSV row; `None` becomes an empty field. Numbers are written with Rust's shortest
/// round-trip form, the same inside the `;`-joined lists as in the single fields.
#[derive(Serialize)]
struct Row<'a> {
    scenario: &'a str,
    client_stack: &'a str,
    server_stack: &'a str,
    client_library: Option<&'a str>,
    server_library: Option<&'a str>,
    measure: &'a str,
    side: Side,
    metric: &'a str,
    unit: &'a str,
    better: &'a str,
    status: Status,
    median: Option<String>,
    ci95_low: Option<String>,
    ci95_high: Option<String>,
    min: Option<String>,
    max: Option<String>,
    samples: String,
    outliers: String,
    reason: Option<&'a str>,
    /// `--allocator`'s choice; empty without it. Last, so that readers of the columns before
    /// it see them where they were.
    allocator: Option<&'a str>,
    /// `--threads`: the pairs side by side (empty: one), and on a `..._per_thread` row of
    /// several, the scaling efficiency against one thread (a fraction).
    threads: Option<u32>,
    scaling_efficiency: Option<f64>,
    scaling_efficiency_ci_low: Option<String>,
    scaling_efficiency_ci_high: Option<String>,
    /// `--build`'s choice; empty without it. Last, for the same reason.
    build: Option<&'a str>,
}

impl Exporter for CsvExporter {
    fn serialize(&self, doc: &RunDocument) -> anyhow::Result<Vec<u8>> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        for cell in &doc.results {
            writer.serialize(row(cell))?;
        }
        Ok(writer.into_inner()?)
    }
}

fn row(cell: &CellResult) -> Row<'_> {
    let number = |x: Option<f64>| x.map(|x| x.to_string());
    let joined = |items: Vec<String>| items.join(";");
    Row {
        scenario: &cell.scenario,
        client_stack: &cell.client_stack,
        server_stack: &cell.server_stack,
        client_library: cell.client_library.as_deref(),
        server_library: cell.server_library.as_deref(),
        measure: &cell.measure,
        side: cell.side,
        metric: &cell.metric,
        unit: &cell.unit,
        better: &cell.better,
        status: cell.status,
        median: number(cell.median),
        ci95_low: number(cell.ci95.map(|ci| ci[0])),
        ci95_high: number(cell.ci95.map(|ci| ci[1])),
        min: number(cell.min),
        max: number(cell.max),
        samples: joined(cell.samples.iter().map(f64::to_string).collect()),
        outliers: joined(cell.outliers.iter().map(usize::to_string).collect()),
        reason: cell.reason.as_deref(),
        allocator: cell.allocator.as_deref(),
        threads: cell.threads,
        scaling_efficiency: cell.scaling_efficiency,
        scaling_efficiency_ci_low: number(cell.scaling_efficiency_ci.map(|ci| ci[0])),
        scaling_efficiency_ci_high: number(cell.scaling_efficiency_ci.map(|ci| ci[1])),
        build: cell.build.as_deref(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::table::fixture;

    #[test]
    fn one_row_per_cell() {
        let text = String::from_utf8(CsvExporter.serialize(&fixture::document()).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 7);
        assert_eq!(
            lines[0],
            "scenario,client_stack,server_stack,client_library,server_library,measure,side,metric,unit,better,\
             status,median,ci95_low,ci95_high,min,max,samples,outliers,reason,allocator,threads,scaling_efficiency,\
             scaling_efficiency_ci_low,scaling_efficiency_ci_high,build"
        );
        assert_eq!(
            lines[3],
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm,rustls-aws-lc-rs,rustls-aws-lc-rs,rustls-aws-lc-rs 1.0,\
             rustls-aws-lc-rs 1.0,time,client,handshakes_per_s,1/s,higher,ok,987.65,980,990,980,990,980;987.65;990,2,,,,,,,"
        );
        assert_eq!(
            lines[6],
            "handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305,openssl,openssl,openssl 1.0,openssl 1.0,time,\
             server,handshakes_per_s,1/s,higher,unsupported,,,,,,,,openssl: cipher suite chacha20-poly1305 not supported,,,,,,"
        );
    }
}
