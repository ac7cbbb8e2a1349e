//! The bar charts: per scenario group (the kind: handshake-full, transfer, ...) one chart per
//! metric and side, each pair in its page-wide colour; and what the other charts share with
//! them (a pair's series, a cell's number and tooltip, the parts of a scenario's name).

use std::fmt::Write;

use tlsbench_harness::Kind;

use crate::order::first_seen;
use crate::output::format::format_cell;
use crate::report::svg::{colour, escape, format_tick, Bar, BarChart, Group, Series};
use crate::results::{CellResult, RunDocument, Status};

/// Per scenario group (the kind: handshake-full, transfer, ...), one chart per metric and side.
/// The memory-N kinds are left to the memory section, which draws them against N.
pub(super) fn charts(doc: &RunDocument, pairs: &[String]) -> String {
    let kinds = first_seen(doc.results.iter().map(|c| kind(&c.key.scenario)).filter(|k| connections(k).is_none()));
    if kinds.is_empty() {
        return String::new();
    }
    let mut html = String::from("<section id=\"charts\">\n<h2>Charts</h2>\n");
    for kind_name in kinds {
        let cells: Vec<&CellResult> = doc.results.iter().filter(|c| kind(&c.key.scenario) == kind_name).collect();
        let _ = writeln!(html, "<section class=\"group\" id=\"group-{0}\">\n<h3>{0}</h3>", escape(kind_name));
        for (metric, side) in first_seen(cells.iter().map(|c| (c.metric.clone(), c.side))) {
            let series: Vec<&&CellResult> = cells.iter().filter(|c| c.metric == metric && c.side == side).collect();
            let (unit, better) = (&series[0].unit, &series[0].better);
            // The legend lists the pairs this chart has, each in its page-wide colour.
            let chart_pairs = first_seen(series.iter().map(|c| c.key.pair_label()));
            let groups = first_seen(series.iter().map(|c| c.key.scenario.clone()))
                .into_iter()
                .map(|scenario| Group {
                    label: scenario.strip_prefix(&format!("{kind_name}_")).unwrap_or(&scenario).replace('_', " "),
                    bars: series.iter().filter(|c| c.key.scenario == scenario).map(|c| bar(c, &chart_pairs)).collect(),
                })
                .collect();
            let chart = BarChart {
                title: format!("{kind_name}, {side} side: {metric}"),
                axis: format!("{metric} ({})", crate::results::bracket(unit, better)),
                series: chart_pairs.iter().map(|p| series_of(p, pairs)).collect(),
                groups,
            };
            let _ = writeln!(html, "<figure>{}</figure>", chart.render());
        }
        html += "</section>\n";
    }
    html += "</section>\n";
    html
}

/// The chart series of the pair labelled `pair`, in its page-wide colour.
pub(super) fn series_of(pair: &str, pairs: &[String]) -> Series {
    let at = pairs.iter().position(|p| p == pair).expect("pairs hold every cell's pair");
    Series { name: pair.to_string(), colour: colour(at) }
}

fn bar(cell: &CellResult, pairs: &[String]) -> Bar {
    let pair = cell.key.pair_label();
    let series = pairs.iter().position(|p| *p == pair).expect("pairs hold every cell's pair");
    Bar { series, value: number(cell), tooltip: format!("{pair}: {}", detail(cell)) }
}

/// The cell's figure (its median, or a time rate's faster-half mean) and its interval, or the text
/// shown instead of a number.
pub(super) fn number(cell: &CellResult) -> Result<(f64, [f64; 2]), String> {
    match (cell.status, cell.figure(), cell.ci95) {
        (Status::Ok, Some(median), Some(ci)) => Ok((median, ci)),
        (Status::Ok, _, _) => Err("no samples".into()),
        (Status::Failed, _, _) => Err("failed".into()),
        (Status::Unsupported, _, _) => Err("n/a".into()),
    }
}

/// A cell for a tooltip: its number and unit, or why it has none.
pub(super) fn detail(cell: &CellResult) -> String {
    match &cell.reason {
        Some(reason) => format!("{}: {reason}", format_cell(cell)),
        None => format!("{} {}", format_cell(cell), cell.unit),
    }
}

/// The scenario kind: the name up to its first `_`.
pub(super) fn kind(scenario: &str) -> &str {
    scenario.split('_').next().unwrap_or(scenario)
}

/// The rest of the scenario name: `1.3_x25519_ecdsa-p256_aes-128-gcm`.
pub(super) fn after_kind(scenario: &str) -> &str {
    scenario.split_once('_').map_or("", |(_, rest)| rest)
}

/// `100`, `1,000`: a number of connections as the page writes it, as the charts' x ticks do.
pub(super) fn connections_label(n: usize) -> String {
    format_tick(n as f64, 1.0)
}

/// N of a memory-N kind.
pub(super) fn connections(kind: &str) -> Option<usize> {
    kind.parse::<Kind>().ok()?.connections()
}
