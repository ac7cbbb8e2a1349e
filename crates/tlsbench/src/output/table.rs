//! The results table printed to stdout, and the cell layout and number formatting that the
//! Markdown export shares with it.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use tlsbench_harness::Side;

use crate::results::{CellResult, RunDocument, Status};
use crate::stats::MIN_SAMPLES_FOR_CI95;

/// Explains the cell notation; printed under every table.
pub const LEGEND: &str = "median ±x%: the farther end of the median's 95% confidence interval, \
                          relative to the median; *: some samples are outliers (MAD test), kept \
                          in the statistics";

/// The table of a run: one row per (scenario, side, metric), one column per pair, then the
/// legend and one `note:` line per distinct reason a cell failed or is unsupported.
pub fn render(doc: &RunDocument) -> String {
    if doc.results.is_empty() {
        return "no results\n".to_string();
    }
    let grid = Grid::new(&doc.results);
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(["scenario", "side", "metric"].into_iter().map(String::from).chain(grid.pairs.iter().cloned()));
    for row in &grid.rows {
        let fixed = [row.scenario.to_string(), row.side.to_string(), row.metric.to_string()];
        table.add_row(fixed.into_iter().chain(row.cells.iter().map(|c| c.map_or_else(|| "-".into(), format_cell))));
    }
    for i in 3..3 + grid.pairs.len() {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = format!("{table}\n{LEGEND}\n");
    if let Some(warning) = few_samples_warning(&doc.results) {
        out += &format!("warning: {warning}\n");
    }
    for note in notes(&doc.results) {
        out += &format!("note: {note}\n");
    }
    out
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
        let results: Vec<&CellResult> = results.into_iter().collect();
        let mut pairs: Vec<String> = Vec::new();
        for cell in &results {
            let label = cell.pair_label();
            if !pairs.contains(&label) {
                pairs.push(label);
            }
        }
        let mut rows: Vec<GridRow<'a>> = Vec::new();
        for cell in results {
            let key = (&cell.scenario[..], cell.side, &cell.metric[..]);
            let at = match rows.iter().position(|r| (r.scenario, r.side, r.metric) == key) {
                Some(at) => at,
                None => {
                    let cells = vec![None; pairs.len()];
                    rows.push(GridRow { scenario: key.0, side: key.1, metric: key.2, cells });
                    rows.len() - 1
                }
            };
            // Every label was collected above, so `position` always finds it; a repeated cell
            // keeps the first one, as the rows and columns do.
            if let Some(column) = pairs.iter().position(|p| *p == cell.pair_label()) {
                rows[at].cells[column].get_or_insert(cell);
            }
        }
        Grid { pairs, rows }
    }
}

/// A cell as shown: `12,345 ±1.2%`, with ` *` when it has outliers; `failed` or `n/a`.
pub fn format_cell(cell: &CellResult) -> String {
    let median = match (cell.status, cell.median) {
        (Status::Failed, _) => return "failed".to_string(),
        (Status::Unsupported, _) => return "n/a".to_string(),
        (Status::Ok, None) => return "-".to_string(),
        (Status::Ok, Some(median)) => median,
    };
    let mut text = format_number(median);
    if let Some(spread) = cell.ci95.and_then(|ci| spread_percent(median, ci)) {
        let decimals = if spread < 10.0 { 1 } else { 0 };
        text += &format!(" ±{spread:.decimals$}%");
    }
    if !cell.outliers.is_empty() {
        text += " *";
    }
    text
}

/// The larger distance from the median to either end of the interval, in percent of the median;
/// `None` when the median is 0 and a relative spread means nothing.
fn spread_percent(median: f64, [low, high]: [f64; 2]) -> Option<f64> {
    let spread = (median - low).max(high - median) / median.abs() * 100.0;
    spread.is_finite().then_some(spread)
}

/// Four significant digits, and whole numbers with `,` grouping from 1,000 up: precision beyond
/// that is noise for a benchmark and makes columns hard to scan.
pub fn format_number(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return x.to_string();
    }
    let decimals = decimals_for(x.abs());
    // Rounding can carry into the next decade (999.96 -> "1000.0"): size on the rounded value.
    let decimals = decimals_for(format!("{:.decimals$}", x.abs()).parse().unwrap_or(x.abs()));
    let text = format!("{x:.decimals$}");
    if decimals > 0 {
        return text;
    }
    let (sign, digits) = text.split_at(usize::from(text.starts_with('-')));
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}")
}

/// Decimals that leave four significant digits for a positive `a`.
fn decimals_for(a: f64) -> usize {
    match a {
        a if a >= 1000.0 => 0,
        a if a >= 100.0 => 1,
        a if a >= 10.0 => 2,
        a if a >= 1.0 => 3,
        a => 3 + (-a.log10()).ceil() as usize,
    }
}

/// One line per distinct (pair, status, reason) among failed and unsupported cells, naming the
/// scenarios it covers: `openssl: failed on s1, s2: reason`.
pub fn notes<'a>(results: impl IntoIterator<Item = &'a CellResult>) -> Vec<String> {
    let mut seen: Vec<(String, &str, &str, Vec<&str>)> = Vec::new();
    for cell in results {
        let status = match cell.status {
            Status::Ok => continue,
            Status::Failed => "failed",
            Status::Unsupported => "unsupported",
        };
        let (pair, reason) = (cell.pair_label(), cell.reason.as_deref().unwrap_or("no reason given"));
        match seen.iter_mut().find(|(p, s, r, _)| *p == pair && *s == status && *r == reason) {
            Some((_, _, _, scenarios)) if !scenarios.contains(&&cell.scenario[..]) => scenarios.push(&cell.scenario),
            Some(_) => {}
            None => seen.push((pair, status, reason, vec![&cell.scenario])),
        }
    }
    seen.into_iter()
        .map(|(pair, status, reason, scenarios)| format!("{pair}: {status} on {}: {reason}", scenarios.join(", ")))
        .collect()
}

/// A hint when some cell has too few samples for its ± to be a 95% interval.
pub fn few_samples_warning<'a>(results: impl IntoIterator<Item = &'a CellResult>) -> Option<String> {
    let few = |c: &CellResult| c.status == Status::Ok && (1..MIN_SAMPLES_FOR_CI95).contains(&c.samples.len());
    results.into_iter().any(few).then(|| {
        format!(
            "some cells have fewer than {MIN_SAMPLES_FOR_CI95} samples: their ± is the whole range and covers \
             the median with less than 95% confidence; use --samples {MIN_SAMPLES_FOR_CI95} or more"
        )
    })
}

/// A small run document for the tests of the table and the exporters: two pairs, a failed and
/// an unsupported cell, outliers, two metrics.
#[cfg(test)]
pub mod fixture {
    use crate::results::*;
    use tlsbench_harness::protocol::StackInfo;
    use tlsbench_harness::{Capabilities, Side};

    pub const FULL: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    pub const CHACHA: &str = "handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305";

    pub fn document() -> RunDocument {
        let rustls = |scenario: &str, side: Side, median: f64, ci: [f64; 2], outliers: Vec<usize>| CellResult {
            samples: vec![ci[0], median, ci[1]],
            median: Some(median),
            ci95: Some(ci),
            min: Some(ci[0]),
            max: Some(ci[1]),
            outliers,
            ..cell(scenario, "rustls-aws-lc-rs", side, Status::Ok, None)
        };
        let failed = "negotiated TLS 1.2, expected TLS 1.3";
        let unsupported = "openssl: cipher suite chacha20-poly1305 not supported";
        RunDocument {
            schema_version: SCHEMA_VERSION,
            run: RunInfo {
                id: "run-1".into(),
                started: "2025-01-02T03:04:05Z".into(),
                tlsbench_version: "0.1.0".into(),
                command_line: vec!["tlsbench".into(), "run".into()],
                environment: Environment {
                    cpu: "Test CPU @ 3.0GHz".into(),
                    cores: 2,
                    kernel: "6.1.0".into(),
                    rustc: "rustc 1.85.0".into(),
                    allocator: "system".into(),
                    aslr: "on".into(),
                    governor: "performance".into(),
                },
                stacks: ["rustls-aws-lc-rs", "openssl"]
                    .map(|id| StackInfo {
                        id: id.into(),
                        library: format!("{id} 1.0"),
                        capabilities: Capabilities::everything(),
                    })
                    .to_vec(),
                samples: 3,
                min_time_ms: 100,
                warmup_ms: 50,
            },
            results: vec![
                rustls(FULL, Side::Server, 12345.0, [12200.0, 12493.14], vec![]),
                cell(FULL, "openssl", Side::Server, Status::Failed, Some(failed)),
                rustls(FULL, Side::Client, 987.65, [980.0, 990.0], vec![2]),
                cell(FULL, "openssl", Side::Client, Status::Failed, Some(failed)),
                rustls(CHACHA, Side::Server, 1500.0, [1400.0, 1600.0], vec![]),
                cell(CHACHA, "openssl", Side::Server, Status::Unsupported, Some(unsupported)),
                CellResult {
                    measure: "heap".into(),
                    metric: "heap_peak_bytes".into(),
                    unit: "B".into(),
                    better: "lower".into(),
                    ..rustls(FULL, Side::Server, 45678.0, [45678.0, 45678.0], vec![])
                },
            ],
        }
    }

    /// A time cell without numbers; the callers fill in what their status needs.
    fn cell(scenario: &str, stack: &str, side: Side, status: Status, reason: Option<&str>) -> CellResult {
        CellResult {
            scenario: scenario.into(),
            client_stack: stack.into(),
            server_stack: stack.into(),
            client_library: Some(format!("{stack} 1.0")),
            server_library: Some(format!("{stack} 1.0")),
            measure: "time".into(),
            process: "in-process".into(),
            side,
            metric: "handshakes_per_s".into(),
            unit: "1/s".into(),
            better: "higher".into(),
            samples: vec![],
            median: None,
            ci95: None,
            min: None,
            max: None,
            outliers: vec![],
            status,
            reason: reason.map(String::from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_four_significant_digits() {
        let shown: Vec<String> = [1234.4, 12345.0, 1234567.8, 123.44, 12.344, 1.2344, 0.012344, 999.96, -4321.0, 0.0]
            .into_iter()
            .map(format_number)
            .collect();
        assert_eq!(
            shown,
            ["1,234", "12,345", "1,234,568", "123.4", "12.34", "1.234", "0.01234", "1,000", "-4,321", "0"]
        );
    }

    #[test]
    fn renders_the_fixture() {
        let expected = "\
┌─────────────────────────────────────────────────────────┬────────┬──────────────────┬──────────────────┬─────────┐
│ scenario                                                ┆ side   ┆ metric           ┆ rustls-aws-lc-rs ┆ openssl │
╞═════════════════════════════════════════════════════════╪════════╪══════════════════╪══════════════════╪═════════╡
│ handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm        ┆ server ┆ handshakes_per_s ┆     12,345 ±1.2% ┆  failed │
│ handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm        ┆ client ┆ handshakes_per_s ┆    987.6 ±0.8% * ┆  failed │
│ handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305 ┆ server ┆ handshakes_per_s ┆      1,500 ±6.7% ┆     n/a │
│ handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm        ┆ server ┆ heap_peak_bytes  ┆     45,678 ±0.0% ┆       - │
└─────────────────────────────────────────────────────────┴────────┴──────────────────┴──────────────────┴─────────┘
median ±x%: the farther end of the median's 95% confidence interval, relative to the median; *: some samples are outliers (MAD test), kept in the statistics
warning: some cells have fewer than 6 samples: their ± is the whole range and covers the median with less than 95% confidence; use --samples 6 or more
note: openssl: failed on handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm: negotiated TLS 1.2, expected TLS 1.3
note: openssl: unsupported on handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305: openssl: cipher suite chacha20-poly1305 not supported
";
        assert_eq!(render(&fixture::document()), expected);
    }

    #[test]
    fn interop_pair_and_no_spread_at_zero() {
        let mut cell = fixture::document().results[0].clone();
        cell.server_stack = "openssl".into();
        cell.median = Some(0.0);
        assert_eq!(cell.pair_label(), "rustls-aws-lc-rs -> openssl");
        assert_eq!(format_cell(&cell), "0");
    }
}
