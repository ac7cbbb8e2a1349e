//! `tlsbench report`: one run across its stacks, in the form of published TLS benchmark write-ups:
//! tables with factors against a baseline stack (terminal, Markdown) and an HTML page with charts.

mod html;
mod svg;
pub mod tables;

use anyhow::bail;

use crate::group::GroupBy;
use crate::output::format::legend;
use crate::output::notes::{few_samples_warning, notes};
use crate::output::{columns, WIDTH};
use crate::profile::Profile;
use crate::results::RunDocument;
use tables::{factor_legend, MetricTable};

pub struct Report<'a> {
    doc: &'a RunDocument,
    baseline: Option<&'a str>,
    tables: Vec<MetricTable<'a>>,
    /// Profiles (`tlsbench profile`) shown in the HTML page.
    profiles: Vec<Profile>,
}

impl<'a> Report<'a> {
    /// The report of `doc`; `baseline` must be one of its stacks (or `client -> server` pairs).
    #[cfg(test)]
    pub fn new(doc: &'a RunDocument, baseline: Option<&'a str>) -> anyhow::Result<Report<'a>> {
        Report::grouped(doc, baseline, None)
    }

    /// The report of `doc`, each metric's table split by the stacks' library or backend with `by`.
    pub fn grouped(doc: &'a RunDocument, baseline: Option<&'a str>, by: Option<GroupBy>) -> anyhow::Result<Report<'a>> {
        if let Some(baseline) = baseline {
            let mut pairs: Vec<String> = Vec::new();
            for pair in doc.results.iter().map(|c| c.key.pair_label()) {
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
            if !pairs.iter().any(|p| p == baseline) {
                bail!("baseline `{baseline}` is not a stack of run {} (valid: {})", doc.run.id, pairs.join(", "));
            }
        }
        Ok(Report { doc, baseline, tables: MetricTable::grouped(doc, baseline, by), profiles: Vec::new() })
    }

    /// The HTML page shows these profiles too.
    pub fn with_profiles(mut self, profiles: Vec<Profile>) -> Report<'a> {
        self.profiles = profiles;
        self
    }

    /// The tables as the terminal shows them, with the legend and the notes.
    pub fn terminal(&self) -> String {
        let run = &self.doc.run;
        let mut out = format!("tlsbench run {} (started {}, {} samples per cell)\n", run.id, run.started, run.samples);
        for table in &self.tables {
            out += "\n";
            out += &table.terminal();
        }
        // Under the tables, each paragraph wrapped to the width as the tables keep to it.
        let wrap = |text: &str| columns::wrap(text, WIDTH, 2);
        out += &wrap(&legend(&self.doc.results));
        if let Some(baseline) = self.baseline {
            out += &wrap(&factor_legend(baseline));
        }
        if let Some(warning) = few_samples_warning(&self.doc.results) {
            out += &wrap(&format!("warning: {warning}"));
        }
        for note in notes(&self.doc.results) {
            out += &wrap(&format!("note: {note}"));
        }
        // With threads or workers, how each stack scaled, as `run` and `show` print it.
        out += &crate::output::scaling::render(self.doc);
        out
    }

    /// The self-contained HTML page (DIR/index.html).
    pub fn html(&self) -> String {
        html::page(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    #[test]
    fn the_terminal_report_has_a_table_per_metric_with_factors() {
        let doc = fixture::document();
        let text = Report::new(&doc, Some("openssl")).unwrap().terminal();
        let expected = "\
tlsbench run run-1 (started 2025-01-02T03:04:05Z, 3 samples per cell)

handshakes_per_s (1/s, higher is better)
scenario                                                 side   | rustls-aws-lc-rs  openssl  rustls-aws-lc-rs/openssl
handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm         server |     12,345 ±1.2%   failed                         -
handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm         client |    987.6 ±0.8% *   failed                         -
handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305  server |      1,500 ±6.7%      n/a                         -

heap_peak_bytes (B, lower is better)
scenario                                          side   | rustls-aws-lc-rs
handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm  server |           45,678
figure ±x%: the median (a time rate: the mean of its faster half of samples) ± the farther end of its interval, relative
  to it (a count shows one only beyond `tlsbench compare`'s noise threshold); *: some samples are outliers (MAD test),
  kept in the statistics
a/openssl: the figure of stack a over the figure of openssl in the same row (above 1: larger)
warning: some cells have fewer than 6 samples: a median's ± is then their whole range, at less than 95% confidence, and
  a time rate's figure the mean of 1 to 3; use --samples 6 or more
note: openssl: failed on handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm: negotiated TLS 1.2, expected TLS 1.3
note: openssl: unsupported on handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305: openssl: cipher suite
  chacha20-poly1305 not supported
";
        assert_eq!(text, expected);
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
    }

    #[test]
    fn an_unknown_baseline_names_the_valid_ones() {
        let doc = fixture::document();
        let err = Report::new(&doc, Some("wolfssl")).err().unwrap();
        assert_eq!(
            err.to_string(),
            "baseline `wolfssl` is not a stack of run run-1 (valid: rustls-aws-lc-rs, openssl)"
        );
    }
}
