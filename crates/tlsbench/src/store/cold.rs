//! `tlsbench cold`'s runs in the database (tables cold_runs, cold_rows, cold_values; schema 16):
//! the run stored before it measures, each scenario's rows in one transaction when its table is
//! printed, and read back as the cold document it printed from.

use rusqlite::{params, OptionalExtension};
use tlsbench_harness::{Measure, Scenario};

use super::{json, parse_status, sqlite, status_name, Store, StoreError};
use crate::cold_document::{phases, unit, COLD_SCHEMA_VERSION};
use crate::cold_document::{ColdDocument, ColdEnvironment, ColdProcess, ColdRow, ColdRun, ColdScenario};
use crate::results::Status;

/// One cold run's line of `tlsbench runs`.
#[derive(Clone, Debug, PartialEq)]
pub struct ColdRunSummary {
    pub id: String,
    pub measure: String,
    pub processes: usize,
    pub stacks: Vec<String>,
    /// Planned, and measured (stored) so far: fewer when the run was interrupted.
    pub scenarios: usize,
    pub measured: usize,
    /// Rows (stack x scenario) by how they ended.
    pub ok: usize,
    pub failed: usize,
    pub unsupported: usize,
}

/// The side of a process's start in cold_values, and its phase.
const START: (&str, &str) = ("process", "start");

impl Store {
    /// Stores a cold run's header, before it measures anything.
    pub fn insert_cold_run(&mut self, run: &ColdRun) -> Result<(), StoreError> {
        let env = &run.environment;
        self.conn
            .execute(
                "INSERT INTO cold_runs (id, started, tlsbench_version, command_line, measure, processes, stacks,
                                        scenarios, cpu, cores, kernel, rustc, aslr, governor)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                params![
                    run.id,
                    run.started,
                    run.tlsbench_version,
                    json(&run.command_line),
                    run.measure.name(),
                    run.processes as i64,
                    json(&run.stacks),
                    json(&run.planned_scenarios),
                    env.cpu,
                    env.cores as i64,
                    env.kernel,
                    env.rustc,
                    env.aslr,
                    env.governor
                ],
            )
            .map(drop)
            .map_err(|e| self.error(e))
    }

    /// Stores one measured scenario of cold run `run`, the `position`th planned, whole or not at all.
    pub fn record_cold_scenario(
        &mut self,
        run: &str,
        position: usize,
        scenario: &ColdScenario,
    ) -> Result<(), StoreError> {
        let path = self.path.clone();
        let err = |e| sqlite(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        let first: i64 =
            tx.query_row("SELECT COUNT(*) FROM cold_rows WHERE run_id = ?", [run], |r| r.get(0)).map_err(err)?;
        for (n, row) in scenario.rows.iter().enumerate() {
            let row_position = first + n as i64;
            tx.execute(
                "INSERT INTO cold_rows (run_id, position, scenario_position, scenario, stack, status, reason, library)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                params![
                    run,
                    row_position,
                    position as i64,
                    scenario.scenario,
                    row.stack,
                    status_name(row.status),
                    row.reason,
                    row.library
                ],
            )
            .map_err(err)?;
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO cold_values (run_id, cold_row, process, side, phase, value) VALUES (?, ?, ?, ?, ?, ?)",
                )
                .map_err(err)?;
            for (index, process) in row.processes.iter().enumerate() {
                let start = process.start_ns.map(|ns| (START.0, START.1, ns));
                let sides = [("client", &process.client), ("server", &process.server)];
                let phases =
                    sides.into_iter().flat_map(|(side, values)| values.iter().map(move |(p, v)| (side, &p[..], *v)));
                for (side, phase, value) in start.into_iter().chain(phases) {
                    insert.execute(params![run, row_position, index as i64, side, phase, value as i64]).map_err(err)?;
                }
            }
        }
        tx.commit().map_err(err)
    }

    /// Every stored cold run, oldest first.
    pub fn cold_runs(&self) -> Result<Vec<ColdRunSummary>, StoreError> {
        let count = |condition: &str| format!("(SELECT COUNT({condition}) FROM cold_rows c WHERE c.run_id = r.id");
        let mut statement = self
            .conn
            .prepare(&format!(
                "SELECT r.id, r.measure, r.processes, r.stacks, r.scenarios, {}), {} AND status = 'ok'),
                        {} AND status = 'failed'), {} AND status = 'unsupported')
                 FROM cold_runs r ORDER BY r.rowid",
                count("DISTINCT scenario_position"),
                count("*"),
                count("*"),
                count("*")
            ))
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map([], |row| {
                let n = |i| row.get::<_, i64>(i).map(|n| n as usize);
                let summary = ColdRunSummary {
                    id: row.get(0)?,
                    measure: row.get(1)?,
                    processes: n(2)?,
                    stacks: Vec::new(),
                    scenarios: 0,
                    measured: n(5)?,
                    ok: n(6)?,
                    failed: n(7)?,
                    unsupported: n(8)?,
                };
                Ok((summary, row.get::<_, String>(3)?, row.get::<_, String>(4)?))
            })
            .map_err(|e| self.error(e))?;
        let mut runs = Vec::new();
        for row in rows {
            let (mut summary, stacks, scenarios) = row.map_err(|e| self.error(e))?;
            summary.stacks = self.parse(&summary.id, "stacks", &stacks)?;
            summary.scenarios = self.parse::<Vec<String>>(&summary.id, "scenarios", &scenarios)?.len();
            runs.push(summary);
        }
        Ok(runs)
    }

    /// The id of the cold run stored last.
    pub fn latest_cold(&self) -> Result<String, StoreError> {
        let latest = self
            .conn
            .query_row("SELECT id FROM cold_runs ORDER BY rowid DESC LIMIT 1", [], |row| row.get(0))
            .optional()
            .map_err(|e| self.error(e))?;
        latest.ok_or_else(|| StoreError::UnknownColdRun { id: "latest".into(), path: self.path.clone(), known: vec![] })
    }

    /// Whether `id` is a run of `tlsbench run`, or (`cold`) of `tlsbench cold`.
    pub fn has_run(&self, id: &str, cold: bool) -> Result<bool, StoreError> {
        let table = if cold { "cold_runs" } else { "runs" };
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE id = ?");
        self.conn.query_row(&sql, [id], |row| row.get::<_, i64>(0)).map(|n| n > 0).map_err(|e| self.error(e))
    }

    /// Cold run `id` as the document it printed from, with the scenarios stored so far.
    pub fn load_cold(&self, id: &str) -> Result<ColdDocument, StoreError> {
        let header = self
            .conn
            .query_row(
                "SELECT started, tlsbench_version, command_line, measure, processes, stacks, scenarios,
                        cpu, cores, kernel, rustc, aslr, governor
                 FROM cold_runs WHERE id = ?",
                [id],
                |row| {
                    let text = |i| row.get::<_, String>(i);
                    let environment = ColdEnvironment {
                        cpu: text(7)?,
                        cores: row.get::<_, i64>(8)? as usize,
                        kernel: text(9)?,
                        rustc: text(10)?,
                        aslr: text(11)?,
                        governor: text(12)?,
                    };
                    let json_columns = [text(2)?, text(3)?, text(5)?, text(6)?];
                    Ok((text(0)?, text(1)?, row.get::<_, i64>(4)? as usize, environment, json_columns))
                },
            )
            .optional()
            .map_err(|e| self.error(e))?;
        let Some((started, tlsbench_version, processes, environment, [command_line, measure, stacks, scenarios])) =
            header
        else {
            let known = self.cold_runs()?.into_iter().map(|r| r.id).collect();
            return Err(StoreError::UnknownColdRun { id: id.to_string(), path: self.path.clone(), known });
        };
        let measure: Measure = measure.parse().map_err(|e| self.unreadable(id, format!("its measure: {e}")))?;
        let run = ColdRun {
            id: id.to_string(),
            started,
            tlsbench_version,
            command_line: self.parse(id, "command line", &command_line)?,
            measure,
            unit: unit(measure).to_string(),
            processes,
            stacks: self.parse(id, "stacks", &stacks)?,
            planned_scenarios: self.parse(id, "scenarios", &scenarios)?,
            environment,
        };
        Ok(ColdDocument { schema_version: COLD_SCHEMA_VERSION, run, scenarios: self.cold_scenarios(id)? })
    }

    fn cold_scenarios(&self, run: &str) -> Result<Vec<ColdScenario>, StoreError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT scenario_position, scenario, stack, status, reason, library FROM cold_rows
                 WHERE run_id = ? ORDER BY position",
            )
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map([run], |row| {
                let (stack, status, reason, library) =
                    (row.get(2)?, row.get::<_, String>(3)?, row.get(4)?, row.get(5)?);
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, stack, status, reason, library))
            })
            .map_err(|e| self.error(e))?;
        let mut scenarios: Vec<(i64, ColdScenario)> = Vec::new();
        let mut positions = Vec::new();
        for row in rows {
            let (position, scenario, stack, status, reason, library) = row.map_err(|e| self.error(e))?;
            if scenarios.last().is_none_or(|(p, _)| *p != position) {
                let parsed: Scenario =
                    scenario.parse().map_err(|e| self.unreadable(run, format!("scenario `{scenario}`: {e}")))?;
                let phases = phases(parsed.kind).into_iter().map(String::from).collect();
                scenarios.push((position, ColdScenario { scenario, phases, rows: Vec::new() }));
            }
            let status: Status =
                parse_status(&status).ok_or_else(|| self.unreadable(run, format!("row status `{status}`")))?;
            let last = scenarios.len() - 1;
            let rows = &mut scenarios[last].1.rows;
            rows.push(ColdRow { stack, status, reason, library, processes: Vec::new() });
            positions.push((last, rows.len() - 1));
        }
        let mut statement = self
            .conn
            .prepare(
                "SELECT cold_row, process, side, phase, value FROM cold_values WHERE run_id = ?
                 ORDER BY cold_row, process, rowid",
            )
            .map_err(|e| self.error(e))?;
        let values = statement
            .query_map([run], |row| {
                let n = |i| row.get::<_, i64>(i);
                Ok((n(0)?, n(1)?, row.get::<_, String>(2)?, row.get::<_, String>(3)?, n(4)?))
            })
            .map_err(|e| self.error(e))?;
        for value in values {
            let (row, process, side, phase, value) = value.map_err(|e| self.error(e))?;
            let &(s, r) = positions
                .get(row as usize)
                .ok_or_else(|| self.unreadable(run, format!("a figure of row {row}, which does not exist")))?;
            let processes = &mut scenarios[s].1.rows[r].processes;
            // Figures come ordered by process: a new index is the next one.
            if processes.len() as i64 == process {
                processes.push(ColdProcess { start_ns: None, client: Default::default(), server: Default::default() });
            } else if processes.len() as i64 != process + 1 {
                return Err(self.unreadable(run, format!("row {row} has process {process} but not those before it")));
            }
            let figures = processes.last_mut().expect("pushed above");
            match (&side[..], &phase[..]) {
                START => figures.start_ns = Some(value as u64),
                ("client", _) => _ = figures.client.insert(phase, value as u64),
                ("server", _) => _ = figures.server.insert(phase, value as u64),
                _ => return Err(self.unreadable(run, format!("a figure of side `{side}`"))),
            }
        }
        Ok(scenarios.into_iter().map(|(_, scenario)| scenario).collect())
    }
}
