//! `tlsbench runs`: the stored runs, oldest first, with their stacks, how their cells ended and
//! whether each is complete or was interrupted; then the cold runs (`tlsbench cold`) likewise.

use std::path::Path;

use super::model::{Cell, Table};
use super::{columns, WIDTH};
use crate::store::{ColdRunSummary, RunSummary};

pub fn render(runs: &[RunSummary], cold: &[ColdRunSummary], db: &Path) -> String {
    if runs.is_empty() && cold.is_empty() {
        return format!("no runs in {} yet\n", db.display());
    }
    let tables = [(!runs.is_empty()).then(|| runs_table(runs)), (!cold.is_empty()).then(|| cold_table(cold))];
    tables.into_iter().flatten().map(|table| columns::render(&table, WIDTH)).collect::<Vec<_>>().join("\n")
}

fn runs_table(runs: &[RunSummary]) -> Table {
    let mut table = Table::with_header(&["run"], &["started", "stacks", "scenarios", "ok", "failed", "n/a", "state"]);
    for run in runs {
        let state = match run.missing {
            0 => "complete".to_string(),
            n => format!("interrupted: {n} samples missing"),
        };
        let counts = [run.scenarios, run.ok, run.failed, run.unsupported].map(|n| Cell::number(n.to_string()));
        let cells = [Cell::text(&run.started), Cell::text(run.pairs.join(", "))].into_iter().chain(counts);
        table.push_row(vec![run.id.clone()], cells.chain([Cell::text(state)]).collect());
    }
    table.notes.push("ok, failed, n/a: cells (pair x scenario) by how they ended".into());
    table
}

fn cold_table(runs: &[ColdRunSummary]) -> Table {
    // No `started`: a cold run's id is its start, and the stacks need the room.
    let header = ["measure", "processes", "stacks", "scenarios", "ok", "failed", "n/a", "state"];
    let mut table = Table::with_header(&["cold run"], &header);
    for run in runs {
        // An interrupted run stored the scenarios it measured, and not those after them.
        let (scenarios, state) = match run.measured >= run.scenarios {
            true => (run.scenarios.to_string(), "complete"),
            false => (format!("{} of {}", run.measured, run.scenarios), "interrupted"),
        };
        let counts = [run.processes, run.ok, run.failed, run.unsupported].map(|n| n.to_string());
        let [processes, ok, failed, unsupported] = counts.map(Cell::number);
        let scenarios = Cell::number(scenarios);
        let cells = [Cell::text(&run.measure), processes, Cell::text(run.stacks.join(", "))];
        let cells = cells.into_iter().chain([scenarios, ok, failed, unsupported, Cell::text(state)]);
        table.push_row(vec![run.id.clone()], cells.collect());
    }
    table.notes.push(
        "cold runs (each id is its start, UTC): fresh processes per stack and scenario, each stack with itself \
         (`tlsbench cold --show RUN` prints one); ok, failed, n/a: rows (stack x scenario) by how they ended"
            .into(),
    );
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, missing: usize) -> RunSummary {
        RunSummary {
            id: id.into(),
            started: "2025-01-02T03:04:05Z".into(),
            pairs: vec!["openssl".into(), "rustls-ring -> openssl".into()],
            scenarios: 2,
            ok: 3,
            failed: 1,
            unsupported: 0,
            missing,
        }
    }

    #[test]
    fn lists_complete_and_interrupted_runs() {
        let expected = "\
run | started               stacks                           scenarios  ok  failed  n/a  state
r-1 | 2025-01-02T03:04:05Z  openssl, rustls-ring -> openssl          2   3       1    0  complete
r-2 | 2025-01-02T03:04:05Z  openssl, rustls-ring -> openssl          2   3       1    0  interrupted: 7 samples missing
ok, failed, n/a: cells (pair x scenario) by how they ended
";
        assert_eq!(render(&[run("r-1", 0), run("r-2", 7)], &[], Path::new("results.db")), expected);
        assert_eq!(render(&[], &[], Path::new("x.db")), "no runs in x.db yet\n");
    }

    #[test]
    fn lists_cold_runs_after_the_runs_marked_as_cold() {
        let cold = |id: &str, measured| ColdRunSummary {
            id: id.into(),
            measure: "time".into(),
            processes: 3,
            stacks: vec!["openssl".into(), "rustls-ring".into()],
            scenarios: 3,
            measured,
            ok: 2 * measured,
            failed: 0,
            unsupported: 0,
        };
        let expected = "\
cold run              | measure  processes  stacks                scenarios  ok  failed  n/a  state
20261129T052000Z-3755 | time             3  openssl, rustls-ring          3   6       0    0  complete
20261129T052100Z-0a1f | time             3  openssl, rustls-ring     1 of 3   2       0    0  interrupted
cold runs (each id is its start, UTC): fresh processes per stack and scenario, each stack with itself (`tlsbench cold
  --show RUN` prints one); ok, failed, n/a: rows (stack x scenario) by how they ended
";
        let colds = [cold("20261129T052000Z-3755", 3), cold("20261129T052100Z-0a1f", 1)];
        assert_eq!(render(&[], &colds, Path::new("x.db")), expected);
        // Beside runs: their table, a blank line, the cold runs'.
        let runs = render(&[run("r-1", 0)], &[], Path::new("x.db"));
        assert_eq!(render(&[run("r-1", 0)], &colds, Path::new("x.db")), format!("{runs}\n{expected}"));
    }
}
