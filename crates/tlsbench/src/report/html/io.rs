//! The io measure: per scenario, a table of each pair's calls, records and bytes, both sides.

use std::fmt::Write;

use tlsbench_harness::Side;

use crate::order::first_seen;
use crate::output::format::format_number;
use crate::output::model::{self, Cell, Column, Table};
use crate::report::svg::{escape, format_tick};
use crate::results::{CellResult, RunDocument, Status};

/// The io measure's metrics in the order of the io tables' columns, with their headings.
const IO_COLUMNS: [(&str, &str); 5] = [
    ("read_calls", "read calls"),
    ("write_calls", "write calls"),
    ("io_calls", "IO calls"),
    ("records_written", "records"),
    ("bytes_written", "bytes"),
];

/// The io measure: per scenario, a table of each pair's calls, records and bytes, both sides.
pub(super) fn io(doc: &RunDocument) -> String {
    let cells: Vec<&CellResult> = doc.results.iter().filter(|c| c.key.is_io()).collect();
    if cells.is_empty() {
        return String::new();
    }
    let mut html = String::from("<section id=\"io\">\n<h2>IO</h2>\n");
    html += "<p class=\"legend\">Medians per side: per handshake, or per whole connection in io-profile. Calls are \
             the library's reads and writes on its transport, reads that found nothing included; records and bytes \
             are what the side wrote, record headers included. <code>tlsbench trace SCENARIO --stack ID</code> \
             shows one connection's calls in order.</p>\n";
    for scenario in first_seen(cells.iter().map(|c| c.key.scenario.as_str())) {
        let _ = writeln!(html, "<h3><code>{}</code></h3>", escape(scenario));
        let columns = [Side::Client, Side::Server].into_iter().flat_map(|side| {
            IO_COLUMNS.map(|(_, heading)| Column { header: vec![side.to_string(), heading.into()], cells: Vec::new() })
        });
        let mut table = Table { label_header: vec!["stack".into()], columns: columns.collect(), ..Table::default() };
        let cells: Vec<&CellResult> = cells.iter().copied().filter(|c| c.key.scenario == scenario).collect();
        for pair in first_seen(cells.iter().map(|c| c.key.pair_label())) {
            let texts = [Side::Client, Side::Server].into_iter().flat_map(|side| {
                let (cells, pair) = (&cells, &pair);
                IO_COLUMNS.into_iter().map(move |(metric, _)| {
                    let cell =
                        cells.iter().find(|c| c.key.pair_label() == *pair && c.side == side && c.metric == metric);
                    Cell::number(cell.map_or_else(|| "-".into(), |c| count(c)))
                })
            });
            table.push_row(vec![pair.clone()], texts.collect());
        }
        html += &model::html(&table, Some("io"));
    }
    html += "</section>\n";
    html
}

/// An io cell's median as a count: `3`, `1,157`; `3.500` when two samples differ.
fn count(cell: &CellResult) -> String {
    match (cell.status, cell.median) {
        (Status::Failed, _) => "failed".into(),
        (Status::Unsupported, _) => "n/a".into(),
        (Status::Ok, None) => "-".into(),
        (Status::Ok, Some(median)) if median.fract() == 0.0 => format_tick(median, 1.0),
        (Status::Ok, Some(median)) => format_number(median),
    }
}
