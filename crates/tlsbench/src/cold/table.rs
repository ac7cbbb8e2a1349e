//! The tables of `tlsbench cold`, one per scenario, from the cold document: printed as the run
//! goes and again, from the database, by `cold --show`.

use tlsbench_harness::{Measure, Side};

use super::document::{ColdDocument, ColdProcess, ColdScenario};
use crate::output;
use crate::results::Status;

/// Every scenario's table, a blank line between them, as the run printed them.
pub fn render_all(doc: &ColdDocument) -> String {
    let tables: Vec<String> = doc.scenarios.iter().map(|s| render(s, doc.run.measure, doc.run.processes)).collect();
    tables.join("\n")
}

/// The median of the processes' figures.
fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

/// The table of one scenario: a row per stack, per side its phases' medians and the first
/// (cold) against the last (warm) handshake of its kind.
pub fn render(scenario: &ColdScenario, measure: Measure, processes: usize) -> String {
    let phases = &scenario.phases;
    let (unit, scale) = match measure {
        Measure::Instructions => ("k instructions", 1_000.0),
        _ => ("µs", 1_000.0),
    };
    let mut text = format!(
        "cold {}\nmedians of {processes} fresh processes, {unit} inside each side's calls; \
         start: from the spawn to the runner's main\n",
        scenario.scenario
    );
    let names: Vec<&str> = phases.iter().map(|p| label(p)).collect();
    let mut side_header = String::new();
    for name in names.iter().chain(["1st÷2nd"].iter()) {
        side_header.push_str(&format!(" {name:>8}"));
    }
    let width = side_header.chars().count();
    text.push_str(&format!("{:<16} {:>6} |{:<width$}| server\n", "", "start", " client"));
    text.push_str(&format!("{:<16} {:>6} |{side_header}|{side_header}\n", "stack", "ms"));
    let mut notes = Vec::new();
    for row in &scenario.rows {
        let id = &row.stack;
        let samples = match (row.status, &row.reason) {
            (Status::Ok, _) if !row.processes.is_empty() => &row.processes,
            (status, reason) => {
                let reason = reason.as_deref().unwrap_or("no process replied");
                let prefix = if status == Status::Unsupported { "unsupported: " } else { "" };
                notes.push(format!("{id}: {prefix}{reason}"));
                text.push_str(&format!("{id:<16} [{}]\n", notes.len()));
                continue;
            }
        };
        let start = samples.iter().filter_map(|s| s.start_ns).collect::<Vec<_>>();
        let start = match start.len() == samples.len() && !start.is_empty() {
            true => format!("{:.1}", median(start) as f64 / 1e6),
            false => "-".into(),
        };
        text.push_str(&format!("{id:<16} {start:>6} |"));
        for side in [Side::Client, Side::Server] {
            let of = |process: &ColdProcess, phase: &str| {
                let values = match side {
                    Side::Client => &process.client,
                    Side::Server => &process.server,
                };
                values.get(phase).copied().unwrap_or(0)
            };
            let medians: Vec<u64> =
                phases.iter().map(|phase| median(samples.iter().map(|s| of(s, phase)).collect())).collect();
            for m in &medians {
                text.push_str(&format!(" {:>8.1}", *m as f64 / scale));
            }
            // The first handshake of the kind measured against the last (warm) one.
            let (first, warm) = (medians[phases.len() - 2], medians[phases.len() - 1]);
            let ratio = if warm > 0 { format!("{:.2}×", first as f64 / warm as f64) } else { "-".into() };
            text.push_str(&format!(" {ratio:>8}|"));
        }
        text.pop();
        text.push('\n');
    }
    for (n, note) in notes.iter().enumerate() {
        text.push_str(&output::columns::wrap(&format!("[{}] {note}", n + 1), output::WIDTH, 4));
        text.push('\n');
    }
    text
}

fn label(phase: &str) -> &str {
    match phase {
        "context" => "context",
        "first" => "first",
        "second" => "second",
        "first_resume" => "resume 1",
        "second_resume" => "resume 2",
        other => other,
    }
}
