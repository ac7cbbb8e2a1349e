//! The memory-N kinds: per scenario and side, the bytes per connection against the number of
//! connections, heap and rss side by side, then the same numbers as a table.

use std::fmt::Write;

use tlsbench_harness::Side;

use super::charts::{after_kind, connections, connections_label, detail, kind, number, series_of};
use crate::key::pair_label;
use crate::order::first_seen;
use crate::output::format::format_cell;
use crate::output::model::{self, Cell, Column, Table};
use crate::report::svg::{escape, Line, LineChart, Point};
use crate::results::{CellResult, RunDocument};

/// The memory-N metrics the memory section draws against N.
const PER_CONNECTION: [&str; 2] = ["heap_per_connection_bytes", "rss_per_connection_bytes"];

/// The memory-N kinds: per scenario (the name after the kind) and side, the bytes per connection
/// against the number of connections, heap and rss side by side; then the same numbers as a
/// table. Their other metrics are in the tables at the end.
pub(super) fn memory(doc: &RunDocument, pairs: &[String]) -> String {
    let cells: Vec<(usize, &CellResult)> = doc
        .results
        .iter()
        .filter(|c| PER_CONNECTION.contains(&c.metric.as_str()))
        .filter_map(|c| Some((connections(kind(&c.key.scenario))?, c)))
        .collect();
    if cells.is_empty() {
        return String::new();
    }
    let mut html = String::from("<section id=\"memory\">\n<h2>Memory</h2>\n");
    html += "<p class=\"legend\">Bytes per connection with N connections open, each pair of sides through its \
             handshake. heap: what each side's library allocated, both sides in one process. rss: the growth \
             of each side's process, one process per side ([split]), allocator overhead and buffers included.</p>\n";
    for rest in first_seen(cells.iter().map(|(_, c)| after_kind(&c.key.scenario))) {
        let cells: Vec<(usize, &CellResult)> =
            cells.iter().copied().filter(|(_, c)| after_kind(&c.key.scenario) == rest).collect();
        let _ = writeln!(html, "<section class=\"memory-group\">\n<h3>memory-N_{}</h3>", escape(rest));
        for side in [Side::Client, Side::Server] {
            let figures: Vec<String> = PER_CONNECTION
                .iter()
                .map(|metric| {
                    cells.iter().copied().filter(|(_, c)| c.side == side && c.metric == *metric).collect::<Vec<_>>()
                })
                .filter(|cells| !cells.is_empty())
                .map(|cells| format!("<figure>{}</figure>", memory_chart(side, &cells, pairs)))
                .collect();
            if !figures.is_empty() {
                let _ = writeln!(html, "<div class=\"row\">{}</div>", figures.concat());
            }
        }
        html += &memory_table(&cells);
        html += "</section>\n";
    }
    html += "</section>\n";
    html
}

/// One side's metric against N (`cells` are of one metric and side): a line per pair.
fn memory_chart(side: Side, cells: &[(usize, &CellResult)], pairs: &[String]) -> String {
    let (metric, unit, better) = (&cells[0].1.metric, &cells[0].1.unit, &cells[0].1.better);
    let lines = first_seen(cells.iter().map(|(_, c)| c.key.pair_label()))
        .into_iter()
        .map(|pair| {
            let mut points: Vec<Point> = cells
                .iter()
                .filter(|(_, c)| c.key.pair_label() == pair)
                .map(|(n, c)| Point {
                    x: *n as f64,
                    value: number(c).ok(),
                    tooltip: format!("{pair}, {} connections: {}", connections_label(*n), detail(c)),
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            Line { series: series_of(&pair, pairs), points, dashed: false }
        })
        .collect();
    let chart = LineChart {
        title: format!("{side} side: {metric} ({better} is better)"),
        x_axis: "connections (log scale)".into(),
        y_axis: format!("{unit} per connection"),
        lines,
        references: Vec::new(),
    };
    chart.render()
}

/// Per pair and side, the bytes per connection at each N, heap and rss in one row: the rss
/// cells' pair ran split-process but is the same pair of stacks.
fn memory_table(cells: &[(usize, &CellResult)]) -> String {
    let mut ns: Vec<usize> = cells.iter().map(|(n, _)| *n).collect();
    ns.sort_unstable();
    ns.dedup();
    let metrics: Vec<&str> = PER_CONNECTION.into_iter().filter(|m| cells.iter().any(|(_, c)| c.metric == *m)).collect();
    let mut columns = Vec::new();
    for metric in &metrics {
        for n in &ns {
            let header = vec![format!("{metric} (B) at N connections"), connections_label(*n)];
            columns.push(Column { header, cells: Vec::new() });
        }
    }
    let mut table = Table { label_header: vec!["stack".into(), "side".into()], columns, ..Table::default() };
    for (client, server) in
        first_seen(cells.iter().map(|(_, c)| (c.key.client_stack.as_str(), c.key.server_stack.as_str())))
    {
        for side in [Side::Client, Side::Server] {
            let row: Vec<&(usize, &CellResult)> = cells
                .iter()
                .filter(|(_, c)| {
                    (c.key.client_stack.as_str(), c.key.server_stack.as_str(), c.side) == (client, server, side)
                })
                .collect();
            if row.is_empty() {
                continue;
            }
            let texts = metrics.iter().flat_map(|metric| {
                let row = &row;
                ns.iter().map(move |n| {
                    let cell = row.iter().find(|(at, c)| at == n && c.metric == *metric);
                    Cell::number(cell.map_or_else(|| "-".into(), |(_, c)| format_cell(c)))
                })
            });
            table.push_row(vec![pair_label(client, server), side.to_string()], texts.collect());
        }
    }
    model::html(&table, Some("memory"))
}
