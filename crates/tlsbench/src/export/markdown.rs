//! The Markdown export: the run's environment, one table per metric (with factor columns against
//! a baseline stack when `tlsbench report` names one), and notes on the cells without a number.

use std::fmt::Write;

use super::Exporter;
use crate::group::GroupBy;
use crate::output::format::legend;
use crate::output::notes::{few_samples_warning, notes};
use crate::report::tables::{factor_legend, MetricTable};
use crate::results::RunDocument;

#[derive(Default)]
pub struct MarkdownExporter {
    /// The stack the factor columns divide by; none without a baseline.
    pub baseline: Option<String>,
    /// Each metric's table split by the stacks' library or backend (`--group-by`).
    pub group_by: Option<GroupBy>,
}

impl Exporter for MarkdownExporter {
    fn serialize(&self, doc: &RunDocument) -> anyhow::Result<Vec<u8>> {
        let (run, env) = (&doc.run, &doc.run.environment);
        let mut md = format!("# tlsbench run {}\n\n", run.id);
        writeln!(md, "- started: {}", run.started)?;
        writeln!(md, "- cpu: {} ({} cores)", env.cpu, env.cores)?;
        writeln!(md, "- kernel: {}", env.kernel)?;
        writeln!(md, "- rustc: {}", env.rustc)?;
        for (what, value) in env.conditions.as_ref().map(crate::environment::describe).unwrap_or_default() {
            writeln!(md, "- {what}: {value}")?;
        }

        for table in MetricTable::grouped(doc, self.baseline.as_deref(), self.group_by) {
            md += "\n";
            md += &table.markdown();
        }
        writeln!(md, "\n{}", legend(&doc.results))?;
        if let Some(baseline) = &self.baseline {
            writeln!(md, "\n{}", factor_legend(baseline))?;
        }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    #[test]
    fn renders_the_fixture() {
        let md = String::from_utf8(MarkdownExporter::default().serialize(&fixture::document()).unwrap()).unwrap();
        let expected = "\
# tlsbench run run-1

- started: 2025-01-02T03:04:05Z
- cpu: Test CPU @ 3.0GHz (2 cores)
- kernel: 6.1.0
- rustc: rustc 1.85.0

## handshakes_per_s (1/s, higher is better)

| scenario | side | rustls-aws-lc-rs | openssl |
| --- | --- | ---: | ---: |
| handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm | server | 12,345 ±1.2% | failed |
| handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm | client | 987.6 ±0.8% * | failed |
| handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305 | server | 1,500 ±6.7% | n/a |

## heap_peak_bytes (B, lower is better)

| scenario | side | rustls-aws-lc-rs |
| --- | --- | ---: |
| handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm | server | 45,678 |

figure ±x%: the median (a time rate: the mean of its faster half of samples) ± the farther end of its interval, \
    relative to it (a count shows one only beyond `tlsbench compare`'s noise threshold); \
    *: some samples are outliers (MAD test), kept in the statistics

## Notes

- some cells have fewer than 6 samples: a median's ± is then their whole range, at less than 95% confidence, \
    and a time rate's figure the mean of 1 to 3; use --samples 6 or more
- openssl: failed on handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm: negotiated TLS 1.2, expected TLS 1.3
- openssl: unsupported on handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305: \
    openssl: cipher suite chacha20-poly1305 not supported
";
        assert_eq!(md, expected);
    }
}
