//! The results table printed to stdout: a block per metric, a row per pair, a column per
//! scenario and side, with the reasons of the cells without a number listed under it. How a cell
//! and a number are written is format.rs; what is said under the table, notes.rs.

use std::collections::HashMap;

use tlsbench_harness::Side;

use super::format::{format_cell, legend, EFFICIENCY_LEGEND};
use super::notes::{few_samples_warning, precision, workers_busy};
use super::WIDTH;
use crate::group::{self, GroupBy};
use crate::order::first_seen;
use crate::output::columns;
use crate::output::model::{Cell, Table};
use crate::results::{CellResult, RunDocument, Status};

/// The table of a run, for a terminal of [`WIDTH`] columns: one block per metric, a row per
/// pair (stack), a column per scenario and side. The parts of the scenario names that all of a
/// block's columns share are said once, as a glob above the block, and the columns are headed
/// by the rest. Below: the legend, and each distinct reason a cell has no number, numbered as
/// the cells refer to it.
pub fn render(doc: &RunDocument) -> String {
    render_grouped(doc, None)
}

/// [`render`], with each metric's block split by group (`--group-by`): a block per group that
/// has cells of the metric, the group's heading above it.
pub fn render_grouped(doc: &RunDocument, by: Option<GroupBy>) -> String {
    if doc.results.is_empty() {
        return "no results\n".to_string();
    }
    let reasons = Reasons::new(&doc.results);
    let metrics = first_seen(doc.results.iter().map(|c| (&c.metric[..], &c.unit[..], &c.better[..])));
    let groups = by.map(|by| group::split(doc, by));
    let mut out = String::new();
    for (metric, unit, better) in metrics {
        let of_metric = |c: &&CellResult| (&c.metric[..], &c.unit[..]) == (metric, unit);
        let title = format!("{metric} ({})", crate::results::bracket(unit, better));
        let Some(groups) = &groups else {
            let cells: Vec<&CellResult> = doc.results.iter().filter(of_metric).collect();
            out += &metric_block(&title, &cells, &reasons);
            out.push('\n');
            continue;
        };
        for group in groups {
            let cells: Vec<&CellResult> = group.cells.iter().copied().filter(of_metric).collect();
            if cells.is_empty() {
                continue;
            }
            out += &columns::wrap(&group.heading(), WIDTH, 2);
            out += &metric_block(&title, &cells, &reasons);
            out.push('\n');
        }
    }
    let efficiency = match doc.results.iter().any(|c| c.scaling_efficiency.is_some()) {
        true => format!("; {EFFICIENCY_LEGEND}"),
        false => String::new(),
    };
    let legend = legend(&doc.results);
    out += &columns::wrap(&format!("{legend}{efficiency}; [n]: the reason numbered n below"), WIDTH, 2);
    if let Some(warning) = few_samples_warning(&doc.results) {
        out += &columns::wrap(&format!("warning: {warning}"), WIDTH, 2);
    }
    if let Some(line) = workers_busy(&doc.results) {
        out += &columns::wrap(&line, WIDTH, 2);
    }
    if let Some(line) = crate::peak::note(&doc.results) {
        out += &columns::wrap(&line, WIDTH, 2);
    }
    for (i, (status, reason)) in reasons.0.iter().enumerate() {
        out += &columns::wrap(&format!("[{}] {}: {reason}", i + 1, status_word(*status)), WIDTH, 4);
    }
    out += &precision(doc);
    // With threads or workers: how each stack scaled, beside what its handshakes synchronise.
    out += &super::scaling::render(doc);
    out
}

/// One metric's cells: the metric table (model.rs) of [`metric_table`] transposed, rows of
/// pairs and columns of (scenario, side), each scenario by its parts that differ.
fn metric_block(title: &str, cells: &[&CellResult], reasons: &Reasons) -> String {
    let mut grid = Grid::new(cells.iter().copied());
    let scenarios = first_seen(grid.rows.iter().map(|r| r.scenario));
    let names = ScenarioNames::new(&scenarios);
    // Scenario by scenario, the client's column before the server's.
    let index: HashMap<&str, usize> = scenarios.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    grid.rows.sort_by_key(|r| (index[r.scenario], r.side == Side::Server));
    let mut table = metric_table(&grid, |c| reasons.cell_text(c)).transposed();
    let headings: HashMap<&str, &Vec<String>> = scenarios.iter().copied().zip(&names.headings).collect();
    for column in &mut table.columns {
        let (scenario, side) = (&column.header[0], column.header[1].clone());
        column.header = headings[scenario.as_str()].iter().cloned().chain([side]).collect();
    }
    let heading = match names.pattern {
        Some(pattern) => format!("{title}, scenarios {pattern}"),
        None => title.to_string(),
    };
    columns::render(&table.with_title(heading), WIDTH)
}

/// The table of one metric's cells (those of `grid`): a row per scenario and side, labelled by
/// both, a column per pair, each cell its `text` (`-` where the pair has none). `tlsbench run`
/// and `show` print it transposed; `tlsbench report` as it is, with factor columns.
pub fn metric_table(grid: &Grid, text: impl Fn(&CellResult) -> String) -> Table {
    let mut table =
        Table::with_header(&["scenario", "side"], &grid.pairs.iter().map(String::as_str).collect::<Vec<_>>());
    for row in &grid.rows {
        let cells = row.cells.iter().map(|c| Cell::number(c.map_or_else(|| "-".to_string(), &text))).collect();
        table.push_row(vec![row.scenario.to_string(), row.side.to_string()], cells);
    }
    table
}

/// Short names for the scenarios of one block: what all of them share as a glob, and for each
/// the parts where they differ. Distinct scenarios always differ in some shown part, so no two
/// columns have the same heading.
pub(super) struct ScenarioNames {
    /// `*_*_x25519_ecdsa-p256_aes-128-gcm`; `None` when the scenarios share nothing.
    pub(super) pattern: Option<String>,
    /// Per scenario, its differing parts in name order.
    pub(super) headings: Vec<Vec<String>>,
}

impl ScenarioNames {
    /// Names are `kind_version_group_key_suite` and then optional suffixes (client auth, EMS),
    /// which count as one part, shown as `-` where a scenario has none and others have some.
    pub(super) fn new(scenarios: &[&str]) -> ScenarioNames {
        const PARTS: usize = 6;
        let parts: Vec<Vec<&str>> = scenarios
            .iter()
            .map(|name| {
                let mut parts: Vec<&str> = name.splitn(PARTS, '_').collect();
                parts.resize(PARTS, "");
                parts
            })
            .collect();
        let shared: Vec<bool> = (0..PARTS).map(|i| parts.iter().all(|p| p[i] == parts[0][i])).collect();
        let headings = parts
            .iter()
            .map(|p| {
                (0..PARTS)
                    .filter(|&i| !shared[i])
                    .map(|i| if p[i].is_empty() { "-" } else { p[i] }.to_string())
                    .collect()
            })
            .collect();
        if !shared.contains(&true) {
            return ScenarioNames { pattern: None, headings };
        }
        let glob = |i: usize| if shared[i] { parts[0][i] } else { "*" };
        let mut pattern = (0..PARTS - 1).map(glob).collect::<Vec<_>>().join("_");
        match (shared[PARTS - 1], parts[0][PARTS - 1]) {
            (true, "") => {}
            (true, suffix) => pattern += &format!("_{suffix}"),
            (false, _) if pattern.ends_with('*') => {}
            (false, _) => pattern += "*",
        }
        ScenarioNames { pattern: Some(pattern), headings }
    }
}

/// The distinct (status, reason) of the cells without a number, in order of first appearance;
/// a cell refers to its reason by its number from 1.
struct Reasons<'a>(Vec<(Status, &'a str)>);

impl<'a> Reasons<'a> {
    fn new(results: &'a [CellResult]) -> Reasons<'a> {
        Reasons(first_seen(results.iter().filter(|c| c.status != Status::Ok).map(|c| (c.status, reason_of(c)))))
    }

    /// `12,345 ±1.2%`, or `n/a[2]` pointing at the reason (no space: as wide as `client`).
    fn cell_text(&self, cell: &CellResult) -> String {
        let text = format_cell(cell);
        match self.0.iter().position(|&(status, reason)| (status, reason) == (cell.status, reason_of(cell))) {
            Some(i) => format!("{text}[{}]", i + 1),
            None => text,
        }
    }
}

fn reason_of(cell: &CellResult) -> &str {
    cell.reason.as_deref().unwrap_or("no reason given")
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Unsupported => "n/a",
    }
}

/// Cells laid out as rows (scenario, side, metric) by columns (pairs), each in order of first
/// appearance so that the table follows the order the run planned.
pub struct Grid<'a> {
    pub pairs: Vec<String>,
    pub rows: Vec<GridRow<'a>>,
}

pub struct GridRow<'a> {
    pub scenario: &'a str,
    pub side: Side,
    pub metric: &'a str,
    /// One per pair; `None` where the pair has no cell in this row.
    pub cells: Vec<Option<&'a CellResult>>,
}

impl<'a> Grid<'a> {
    pub fn new(results: impl IntoIterator<Item = &'a CellResult>) -> Self {
        let results: Vec<(&CellResult, String)> = results.into_iter().map(|c| (c, c.key.pair_label())).collect();
        let pairs = first_seen(results.iter().map(|(_, label)| label.clone()));
        // Each row's and pair's place, found in one pass: a whole-matrix run has thousands.
        let column: HashMap<&str, usize> = pairs.iter().enumerate().map(|(i, p)| (p.as_str(), i)).collect();
        let mut at: HashMap<(&str, Side, &str), usize> = HashMap::new();
        let mut rows: Vec<GridRow<'a>> = Vec::new();
        for (cell, label) in &results {
            let key = (&cell.key.scenario[..], cell.side, &cell.metric[..]);
            let row = *at.entry(key).or_insert_with(|| {
                rows.push(GridRow { scenario: key.0, side: key.1, metric: key.2, cells: vec![None; pairs.len()] });
                rows.len() - 1
            });
            // A repeated cell keeps the first one, as the exports do.
            rows[row].cells[column[label.as_str()]].get_or_insert(cell);
        }
        Grid { pairs, rows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    #[test]
    fn a_noisy_run_says_so_under_the_table() {
        use crate::results::{Calibration, Conditions};
        let mut doc = fixture::document();
        assert!(!render(&doc).contains("noisy"));
        let calibration = |spread_percent| Calibration {
            median_ms: 3.0,
            spread_percent,
            kept_spread_percent: None,
            max_over_min: 1.5,
        };
        doc.run.environment.conditions = Some(Conditions {
            load_average_start: 0.1,
            load_average_end: 0.3,
            steal_percent: Some(0.0),
            calibration_before: calibration(4.0),
            calibration_after: calibration(45.0),
            noise: None,
            sentinel: None,
        });
        let table = render(&doc);
        assert_eq!(table.matches("warning: noisy machine during this run").count(), 1, "{table}");
    }

    #[test]
    fn grouped_each_metric_has_a_block_per_group_under_its_heading() {
        let doc = fixture::with_backends(fixture::document());
        let text = render_grouped(&doc, Some(GroupBy::Backend));
        let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("backend ")).collect();
        assert_eq!(
            headings,
            [
                "backend AWS-LC 1.66.2: rustls-aws-lc-rs (aws-lc-rs 1.19.0)",
                "backend OpenSSL libcrypto 3.0.19: openssl",
                "backend AWS-LC 1.66.2: rustls-aws-lc-rs (aws-lc-rs 1.19.0)",
            ],
            "{text}"
        );
        // Each block holds its group's rows only; the reasons stay numbered over the whole run.
        let openssl_block =
            text.split("backend OpenSSL libcrypto 3.0.19: openssl\n").nth(1).unwrap().split("\n\n").next().unwrap();
        assert!(
            openssl_block.contains("openssl |") && !openssl_block.contains("rustls-aws-lc-rs |"),
            "{openssl_block}"
        );
        assert!(openssl_block.contains("failed[1]") && openssl_block.contains("n/a[2]"), "{openssl_block}");
        assert!(text.contains("[1] failed: negotiated TLS 1.2, expected TLS 1.3"), "{text}");
        // Ungrouped, as before.
        assert_eq!(render_grouped(&doc, None), render(&doc));
        assert!(!render(&doc).contains("backend "));
    }

    #[test]
    fn renders_the_fixture() {
        let expected = "\
handshakes_per_s (1/s, higher is better), scenarios handshake-full_*_*_*_*
                 | 1.3                         | 1.2
                 | x25519                      | secp256r1
                 | ecdsa-p256                  | rsa-2048
                 | aes-128-gcm                 | chacha20-poly1305
                 |        client        server |            server
rustls-aws-lc-rs | 987.6 ±0.8% *  12,345 ±1.2% |       1,500 ±6.7%
openssl          |     failed[1]     failed[1] |            n/a[2]

heap_peak_bytes (B, lower is better), scenarios handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm
                 | server
rustls-aws-lc-rs | 45,678

figure ±x%: the median (a time rate: the mean of its faster half of samples) ± the farther end of its interval, relative
  to it (a count shows one only beyond `tlsbench compare`'s noise threshold); *: some samples are outliers (MAD test),
  kept in the statistics; [n]: the reason numbered n below
warning: some cells have fewer than 6 samples: a median's ± is then their whole range, at less than 95% confidence, and
  a time rate's figure the mean of 1 to 3; use --samples 6 or more
[1] failed: negotiated TLS 1.2, expected TLS 1.3
[2] n/a: openssl: cipher suite chacha20-poly1305 not supported
intervals of the figures: wall time ±1.2% typical, ±6.7% widest (rustls-aws-lc-rs
  handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305 server); 3 samples per cell: for ±2% use --target-ci 2
";
        assert_eq!(render(&fixture::document()), expected);
    }

    #[test]
    fn scenario_headings_keep_only_what_differs_and_never_repeat() {
        let all: Vec<String> = tlsbench_harness::Scenario::all().iter().map(|s| s.name()).collect();
        let mut rng = fastrand::Rng::with_seed(10);
        for size in [1, 2, 3, 5, 8, 44, all.len()] {
            let mut names = all.clone();
            rng.shuffle(&mut names);
            let chosen: Vec<&str> = names[..size].iter().map(String::as_str).collect();
            let shortened = ScenarioNames::new(&chosen);
            let headings: Vec<String> = shortened.headings.iter().map(|h| h.join(" ")).collect();
            assert_eq!(first_seen(&headings).len(), size, "two columns share a heading: {chosen:?}");
            for (name, heading) in chosen.iter().zip(&shortened.headings) {
                let pattern = shortened.pattern.as_deref().unwrap_or("*");
                let glob = glob::Pattern::new(pattern).expect("the pattern is a glob");
                assert!(glob.matches(name), "{pattern} does not match {name}");
                let parts: Vec<&str> = name.split('_').collect();
                assert!(
                    heading.iter().all(|part| part == "-" || part.split('_').all(|p| parts.contains(&p))),
                    "{heading:?} of {name}"
                );
            }
        }
        let quick = ScenarioNames::new(&[
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
        ]);
        assert_eq!(quick.pattern.as_deref(), Some("*_*_x25519_ecdsa-p256_aes-128-gcm"));
        assert_eq!(quick.headings, [["handshake-full", "1.3"], ["handshake-resume-ticket", "1.2"]]);
        let auth = ScenarioNames::new(&[
            "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls",
        ]);
        assert_eq!(auth.pattern.as_deref(), Some("transfer_1.3_x25519_ecdsa-p256_aes-128-gcm*"));
        assert_eq!(auth.headings, [["-"], ["mtls"]]);
    }

    #[test]
    fn each_reason_is_listed_once_and_its_cells_point_at_it() {
        let mut doc = fixture::document();
        let mut again = doc.results[1].clone();
        (again.key.scenario, again.key.client_stack, again.key.server_stack) =
            (fixture::CHACHA.into(), "gnutls".into(), "gnutls".into());
        doc.results.push(again);
        let text = render(&doc);
        let listed: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
        assert_eq!(listed.len(), 2, "{text}");
        assert!(
            listed[0].starts_with("[1] failed: negotiated TLS 1.2")
                && listed[1].starts_with("[2] n/a: openssl: cipher suite"),
            "{text}"
        );
        assert_eq!(text.matches("failed[1]").count(), 3, "{text}");
        assert_eq!(text.matches("n/a[2]").count(), 1, "{text}");
    }
}
