//! `tlsbench runs`: the stored runs, oldest first, with their stacks, how their cells ended and
//! whether each is complete or was interrupted.

use std::path::Path;

use super::model::{Cell, Table};
use super::{columns, WIDTH};
use crate::store::RunSummary;

pub fn render(runs: &[RunSummary], db: &Path) -> String {
    if runs.is_empty() {
        return format!("no runs in {} yet\n", db.display());
    }
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
    columns::render(&table, WIDTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_complete_and_interrupted_runs() {
        let run = |id: &str, missing| RunSummary {
            id: id.into(),
            started: "2025-01-02T03:04:05Z".into(),
            pairs: vec!["openssl".into(), "rustls-ring -> openssl".into()],
            scenarios: 2,
            ok: 3,
            failed: 1,
            unsupported: 0,
            missing,
        };
        let expected = "\
run | started               stacks                           scenarios  ok  failed  n/a  state
r-1 | 2025-01-02T03:04:05Z  openssl, rustls-ring -> openssl          2   3       1    0  complete
r-2 | 2025-01-02T03:04:05Z  openssl, rustls-ring -> openssl          2   3       1    0  interrupted: 7 samples missing
ok, failed, n/a: cells (pair x scenario) by how they ended
";
        assert_eq!(render(&[run("r-1", 0), run("r-2", 7)], Path::new("results.db")), expected);
        assert_eq!(render(&[], Path::new("x.db")), "no runs in x.db yet\n");
    }
}
