//! The tables of `tlsbench cold`, one per scenario, from its document (cold_document.rs):
//! printed as the run goes and again, from the database, by `cold --show`.

use tlsbench_harness::{Measure, Side};

use crate::cold_document::{ColdDocument, ColdProcess, ColdScenario};
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
        // wrap ends its lines itself.
        text.push_str(&output::columns::wrap(&format!("[{}] {note}", n + 1), output::WIDTH, 4));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cold_document::fixture;

    #[test]
    fn a_row_per_stack_with_its_medians_and_a_note_per_row_without_figures() {
        let doc = fixture::document();
        let full = render(&doc.scenarios[0], Measure::Time, 2);
        let lines: Vec<&str> = full.lines().collect();
        assert_eq!(lines[0], format!("cold {}", fixture::FULL));
        assert!(lines[1].starts_with("medians of 2 fresh processes, µs inside"), "{full}");
        // Of 2 processes the upper median, the second's: 2.1 ms start, client 410 µs context,
        // 1200 first, 300 second (4× the first), server 280 second.
        assert_eq!(
            lines[4],
            "openssl             2.1 |    410.0   1200.0    300.0    4.00×|    510.0    900.0    280.0    3.21×"
        );
        assert_eq!(lines[6], "boringssl        [1]");
        assert_eq!(lines[7], "[1] boringssl: runner was killed by signal 9");
        let resume = render(&doc.scenarios[1], Measure::Time, 2);
        assert!(resume.contains(" resume 1 resume 2  1st÷2nd|"), "{resume}");
        assert!(resume.ends_with("\n[1] boringssl: unsupported: boringssl: no session ids\n"), "{resume}");
        let all = render_all(&doc);
        assert_eq!(all, format!("{full}\n{resume}"));
        assert!(all.lines().all(|l| l.chars().count() <= output::WIDTH), "{all}");
    }

    #[test]
    fn instructions_in_thousands_and_no_start_under_callgrind() {
        let mut doc = fixture::document();
        doc.scenarios[0].rows.iter_mut().flat_map(|r| &mut r.processes).for_each(|p| p.start_ns = None);
        let table = render(&doc.scenarios[0], Measure::Instructions, 2);
        assert!(table.contains("k instructions inside each side's calls"), "{table}");
        assert!(table.contains("\nopenssl               - |    410.0"), "{table}");
    }
}
