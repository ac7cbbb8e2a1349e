//! The tables of a report, in the form of published TLS benchmark write-ups: per metric, one row
//! per scenario and side, one column per stack, and a factor column per stack against a baseline.

use crate::group::{self, GroupBy};
use crate::order::first_seen;
use crate::output::format::format_cell;
use crate::output::model::{self, Cell, Column, Table};
use crate::output::table::{metric_table, Grid};
use crate::output::{columns, WIDTH};
use crate::results::{CellResult, RunDocument, Status};

/// The cells of one metric laid out as a grid, with the baseline's column if there is one.
pub struct MetricTable<'a> {
    pub metric: &'a str,
    pub unit: &'a str,
    pub better: &'a str,
    pub grid: Grid<'a>,
    /// Index into `grid.pairs`.
    pub baseline: Option<usize>,
    /// The group's heading when the tables are grouped (`--group-by`).
    pub group: Option<String>,
}

impl<'a> MetricTable<'a> {
    /// One table per metric, in order of first appearance. A baseline that is not one of a
    /// metric's columns gives that table no factor columns.
    pub fn all(results: &'a [CellResult], baseline: Option<&str>) -> Vec<MetricTable<'a>> {
        Self::of_cells(&results.iter().collect::<Vec<_>>(), baseline, None)
    }

    /// [`MetricTable::all`], or with `by`, per metric a table for each group that has its cells
    /// (a baseline gives factor columns in the tables of its own group).
    pub fn grouped(doc: &'a RunDocument, baseline: Option<&str>, by: Option<GroupBy>) -> Vec<MetricTable<'a>> {
        let Some(by) = by else { return Self::all(&doc.results, baseline) };
        let groups = group::split(doc, by);
        let per_group: Vec<Vec<MetricTable<'a>>> =
            groups.iter().map(|g| Self::of_cells(&g.cells, baseline, Some(g.heading()))).collect();
        // Metric by metric, as ungrouped, each metric's groups together.
        let metrics = first_seen(per_group.iter().flatten().map(|t| (t.metric, t.unit)));
        let mut tables: Vec<MetricTable<'a>> = Vec::new();
        let mut per_group: Vec<std::collections::VecDeque<MetricTable<'a>>> =
            per_group.into_iter().map(Into::into).collect();
        for metric in metrics {
            for group in &mut per_group {
                if group.front().is_some_and(|t| (t.metric, t.unit) == metric) {
                    tables.extend(group.pop_front());
                }
            }
        }
        tables
    }

    fn of_cells(results: &[&'a CellResult], baseline: Option<&str>, group: Option<String>) -> Vec<MetricTable<'a>> {
        let mut metrics: Vec<(&str, &str, &str)> = Vec::new();
        for &cell in results {
            let key = (&cell.metric[..], &cell.unit[..], &cell.better[..]);
            if !metrics.contains(&key) {
                metrics.push(key);
            }
        }
        metrics
            .into_iter()
            .map(|(metric, unit, better)| {
                let grid =
                    Grid::new(results.iter().copied().filter(|c| (&c.metric[..], &c.unit[..]) == (metric, unit)));
                let baseline = baseline.and_then(|b| grid.pairs.iter().position(|p| p == b));
                MetricTable { metric, unit, better, grid, baseline, group: group.clone() }
            })
            .collect()
    }

    /// `handshakes_per_s (1/s, higher is better)`
    pub fn title(&self) -> String {
        let title = format!("{} ({})", self.metric, crate::results::bracket(self.unit, self.better));
        match &self.group {
            Some(group) => format!("{title}, {group}"),
            None => title,
        }
    }

    /// The table (model.rs): a row per scenario and side, a column per pair, then
    /// `pair/baseline` for each other pair; titled by [`MetricTable::title`].
    pub fn model(&self) -> Table {
        let mut table = metric_table(&self.grid, format_cell).with_title(self.title());
        if let Some(b) = self.baseline {
            let base = &self.grid.pairs[b];
            for p in self.others(b) {
                let factors = self.grid.rows.iter().map(|row| factor(row.cells[p], row.cells[b]));
                table.columns.push(Column {
                    header: vec![format!("{}/{base}", self.grid.pairs[p])],
                    cells: factors.map(|f| Cell::number(f.map_or_else(|| "-".into(), format_factor))).collect(),
                });
            }
        }
        table
    }

    /// The title, then the table in [`WIDTH`] columns.
    pub fn terminal(&self) -> String {
        columns::render(&self.model(), WIDTH)
    }

    pub fn markdown(&self) -> String {
        model::markdown(&self.model())
    }

    pub fn html(&self) -> String {
        model::html(&self.model(), Some("results"))
    }

    fn others(&self, baseline: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.grid.pairs.len()).filter(move |&p| p != baseline)
    }
}

/// A cell's figure over the baseline's, when both have a number.
pub fn factor(cell: Option<&CellResult>, baseline: Option<&CellResult>) -> Option<f64> {
    let median = |c: Option<&CellResult>| c.filter(|c| c.status == Status::Ok).and_then(|c| c.figure());
    let (value, base) = (median(cell)?, median(baseline)?);
    (base != 0.0).then(|| value / base)
}

/// `1.23x`
pub fn format_factor(factor: f64) -> String {
    format!("{factor:.2}x")
}

/// Explains the factor columns, under tables that have them.
pub fn factor_legend(baseline: &str) -> String {
    format!("a/{baseline}: the figure of stack a over the figure of {baseline} in the same row (above 1: larger)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    /// The headings of the labels and the columns.
    fn header(table: &MetricTable) -> Vec<String> {
        let model = table.model();
        model.label_header.iter().cloned().chain(model.columns.iter().map(|c| c.header.join(" "))).collect()
    }

    /// Each row's cells as text, after its label.
    fn rows(table: &MetricTable) -> Vec<Vec<String>> {
        let model = table.model();
        (0..model.labels.len()).map(|r| model.columns.iter().map(|c| c.cells[r].text.clone()).collect()).collect()
    }

    #[test]
    fn factor_columns_divide_by_the_baseline() {
        let mut doc = fixture::document();
        // Give openssl a number in the first row: 10,000 against rustls's 12,345.
        doc.results[1].status = crate::results::Status::Ok;
        doc.results[1].reason = None;
        doc.results[1].median = Some(10000.0);
        doc.results[1].ci95 = Some([9900.0, 10100.0]);
        doc.results[1].samples = vec![9900.0, 10000.0, 10100.0];
        let tables = MetricTable::all(&doc.results, Some("openssl"));
        assert_eq!(tables.len(), 2);
        let handshakes = &tables[0];
        assert_eq!(handshakes.title(), "handshakes_per_s (1/s, higher is better)");
        assert_eq!(header(handshakes), ["scenario", "side", "rustls-aws-lc-rs", "openssl", "rustls-aws-lc-rs/openssl"]);
        let rows = rows(handshakes);
        assert_eq!(rows[0], ["12,345 ±1.2%", "10,000 ±1.0%", "1.23x"]);
        assert_eq!(rows[1], ["987.6 ±0.8% *", "failed", "-"]);
        assert_eq!(rows[2], ["1,500 ±6.7%", "n/a", "-"]);
        // The heap table has no openssl column, so no factor.
        assert_eq!(tables[1].baseline, None);
        assert_eq!(header(&tables[1]), ["scenario", "side", "rustls-aws-lc-rs"]);
        assert_eq!(header(&MetricTable::all(&doc.results, None)[0]).len(), 4);
    }

    #[test]
    fn grouped_tables_are_per_metric_and_group_with_factors_in_the_baseline_s_group() {
        let doc = fixture::with_backends(fixture::document());
        let tables = MetricTable::grouped(&doc, Some("openssl"), Some(GroupBy::Library));
        let titles: Vec<String> = tables.iter().map(MetricTable::title).collect();
        assert_eq!(
            titles,
            [
                "handshakes_per_s (1/s, higher is better), library rustls 0.23.46: \
                 rustls-aws-lc-rs on AWS-LC 1.66.2 (aws-lc-rs 1.19.0)",
                "handshakes_per_s (1/s, higher is better), library OpenSSL 3.0.19: \
                 openssl on OpenSSL libcrypto 3.0.19",
                "heap_peak_bytes (B, lower is better), library rustls 0.23.46: \
                 rustls-aws-lc-rs on AWS-LC 1.66.2 (aws-lc-rs 1.19.0)",
            ]
        );
        assert_eq!(header(&tables[0]), ["scenario", "side", "rustls-aws-lc-rs"]);
        assert_eq!(tables[1].baseline, Some(0));
        assert_eq!(header(&tables[1]), ["scenario", "side", "openssl"]);
        assert_eq!(MetricTable::grouped(&doc, None, None).len(), MetricTable::all(&doc.results, None).len());
    }

    #[test]
    fn the_terminal_markdown_and_html_tables_show_the_same_cells() {
        // Each line's words, one space apart: the terminal pads its columns.
        let squeezed = |text: &str| -> String {
            let lines = text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
            lines.collect::<Vec<_>>().join("\n")
        };
        let doc = fixture::document();
        for table in MetricTable::all(&doc.results, Some("openssl")) {
            let (terminal, markdown, html) = (table.terminal(), table.markdown(), table.html());
            for row in rows(&table) {
                assert!(squeezed(&terminal).contains(&squeezed(&row.join(" "))), "{row:?}:\n{terminal}");
                assert!(markdown.contains(&format!("| {} |", row.join(" | "))), "{row:?}:\n{markdown}");
                let cells: String = row.iter().map(|c| format!("<td class=\"num\">{c}</td>")).collect();
                assert!(html.contains(&format!("{cells}</tr>")), "{row:?}:\n{html}");
            }
            assert!(terminal.lines().all(|l| l.chars().count() <= WIDTH), "{terminal}");
        }
    }

    #[test]
    fn renders_markdown_with_right_aligned_numbers() {
        let doc = fixture::document();
        let tables = MetricTable::all(&doc.results, Some("rustls-aws-lc-rs"));
        let expected = "\
## heap_peak_bytes (B, lower is better)

| scenario | side | rustls-aws-lc-rs |
| --- | --- | ---: |
| handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm | server | 45,678 |
";
        assert_eq!(tables[1].markdown(), expected);
        assert!(tables[0].markdown().contains(
            "| scenario | side | rustls-aws-lc-rs | openssl | openssl/rustls-aws-lc-rs |\n\
             | --- | --- | ---: | ---: | ---: |\n"
        ));
    }
}
