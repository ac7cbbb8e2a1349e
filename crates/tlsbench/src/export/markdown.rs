//! The Markdown export: the run's environment, one table per metric laid out like the stdout
//! table, and notes on the cells that have no number.

use std::fmt::Write;

use super::Exporter;
use crate::output::table::{few_samples_warning, format_cell, notes, Grid, LEGEND};
use crate::results::RunDocument;

pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn serialize(&self, doc: &RunDocument) -> anyhow::Result<Vec<u8>> {
        let (run, env) = (&doc.run, &doc.run.environment);
        let mut md = format!("# tlsbench run {}\n\n", run.id);
        writeln!(md, "- started: {}", run.started)?;
        writeln!(md, "- cpu: {} ({} cores)", env.cpu, env.cores)?;
        writeln!(md, "- kernel: {}", env.kernel)?;
        writeln!(md, "- rustc: {}", env.rustc)?;

        let mut metrics: Vec<(&str, &str)> = Vec::new();
        for cell in &doc.results {
            if !metrics.contains(&(&cell.metric, &cell.unit)) {
                metrics.push((&cell.metric, &cell.unit));
            }
        }
        for (metric, unit) in metrics {
            writeln!(md, "\n## {metric} ({unit})\n")?;
            let grid = Grid::new(doc.results.iter().filter(|c| (&c.metric[..], &c.unit[..]) == (metric, unit)));
            table_row(&mut md, ["scenario", "side"].into_iter().chain(grid.pairs.iter().map(|p| &p[..])))?;
            table_row(&mut md, ["---", "---"].into_iter().chain(grid.pairs.iter().map(|_| "---:")))?;
            for row in &grid.rows {
                let cells: Vec<String> = row.cells.iter().map(|c| c.map_or_else(|| "-".into(), format_cell)).collect();
                let side = row.side.to_string();
                table_row(&mut md, [row.scenario, &side].into_iter().chain(cells.iter().map(|c| &c[..])))?;
            }
        }
        writeln!(md, "\n{LEGEND}")?;

        let notes: Vec<String> = few_samples_warning(&doc.results).into_iter().chain(notes(&doc.results)).collect();
        if !notes.is_empty() {
            md += "\n## Notes\n\n";
            for note in notes {
                writeln!(md, "- {note}")?;
            }
        }
        Ok(md.into_bytes())
    }
}

/// `| a | b |`
fn table_row<'a>(md: &mut String, cells: impl Iterator<Item = &'a str>) -> std::fmt::Result {
    let cells: Vec<&str> = cells.collect();
    writeln!(md, "| {} |", cells.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::table::fixture;

    #[test]
    fn renders_the_fixture() {
        let md = String::from_utf8(MarkdownExporter.serialize(&fixture::document()).unwrap()).unwrap();
        let expected = "\
# tlsbench run run-1

- started: 2025-01-02T03:04:05Z
- cpu: Test CPU @ 3.0GHz (2 cores)
- kernel: 6.1.0
- rustc: rustc 1.85.0

## handshakes_per_s (1/s)

| scenario | side | rustls-aws-lc-rs | openssl |
| --- | --- | ---: | ---: |
| handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm | server | 12,345 ±1.2% | failed |
| handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm | client | 987.6 ±0.8% * | failed |
| handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305 | server | 1,500 ±6.7% | n/a |

## heap_peak_bytes (B)

| scenario | side | rustls-aws-lc-rs |
| --- | --- | ---: |
| handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm | server | 45,678 ±0.0% |

median ±x%: the farther end of the median's 95% confidence interval, relative to the median; *: some samples are outliers (MAD test), kept in the statistics

## Notes

- some cells have fewer than 6 samples: their ± is the whole range and covers the median with less than 95% confidence; use --samples 6 or more
- openssl: failed on handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm: negotiated TLS 1.2, expected TLS 1.3
- openssl: unsupported on handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305: openssl: cipher suite chacha20-poly1305 not supported
";
        assert_eq!(md, expected);
    }
}
