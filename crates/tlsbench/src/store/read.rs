//! Reading runs back: the list of `tlsbench runs`, and a run with every cell and sample as it
//! was stored. Data this build cannot read (written by another version) is reported, not
//! guessed at.

use std::time::Duration;

use rusqlite::OptionalExtension;
use tlsbench_harness::protocol::{Metric, MetricValue, StackInfo};

use super::{parse_status, RunSummary, Store, StoreError, StoredCell, StoredRun, StoredSample};
use crate::key::{CellKey, Value as KeyValue};
use crate::results::{Environment, RunInfo, Status};
use crate::steady::{GcSeen, Warmup};

impl Store {
    /// Every stored run, oldest first.
    pub fn runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        let mut runs: Vec<RunSummary> = Vec::new();
        let key_columns: Vec<String> = CellKey::COLUMNS.iter().map(|c| format!("c.{c}")).collect();
        let mut statement = self
            .conn
            .prepare(&format!(
                "SELECT r.id, r.started, r.samples, c.status,
                        (SELECT COUNT(*) FROM samples s WHERE s.run_id = c.run_id AND s.cell = c.position), {}
                 FROM runs r LEFT JOIN cells c ON c.run_id = r.id
                 ORDER BY r.rowid, c.position",
                key_columns.join(", ")
            ))
            .map_err(|e| self.error(e))?;
        let mut rows = statement.query([]).map_err(|e| self.error(e))?;
        let mut scenarios: Vec<String> = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.error(e))? {
            let id: String = row.get(0).map_err(|e| self.error(e))?;
            if runs.last().is_none_or(|r| r.id != id) {
                scenarios.clear();
                let started = row.get(1).map_err(|e| self.error(e))?;
                runs.push(RunSummary {
                    id: id.clone(),
                    started,
                    pairs: vec![],
                    scenarios: 0,
                    ok: 0,
                    failed: 0,
                    unsupported: 0,
                    missing: 0,
                });
            }
            let run = runs.last_mut().expect("pushed above for this id");
            let Some(status) = row.get::<_, Option<String>>(3).map_err(|e| self.error(e))? else {
                continue; // a run without cells: planned nothing
            };
            let key = self.key(&id, row, 5)?;
            let pair = key.pair_label();
            if !run.pairs.contains(&pair) {
                run.pairs.push(pair);
            }
            if !scenarios.contains(&key.scenario) {
                scenarios.push(key.scenario);
                run.scenarios += 1;
            }
            let (planned, taken): (i64, i64) =
                (row.get(2).map_err(|e| self.error(e))?, row.get(4).map_err(|e| self.error(e))?);
            match parse_status(&status) {
                Some(Status::Ok) => {
                    run.ok += 1;
                    run.missing += (planned - taken).max(0) as usize;
                }
                Some(Status::Failed) => run.failed += 1,
                Some(Status::Unsupported) => run.unsupported += 1,
                None => {}
            }
        }
        Ok(runs)
    }

    /// The cell key in a row's columns from `first` on, in the order of `CellKey::COLUMNS`.
    fn key(&self, run: &str, row: &rusqlite::Row, first: usize) -> Result<CellKey, StoreError> {
        let values = (first..first + CellKey::COLUMNS.len())
            .map(|i| row.get::<_, Option<KeyValue>>(i))
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.error(e))?;
        CellKey::from_values(values).map_err(|e| self.unreadable(run, format!("a cell's key: {e}")))
    }

    /// The id of the run stored last.
    pub fn latest(&self) -> Result<String, StoreError> {
        let latest = self
            .conn
            .query_row("SELECT id FROM runs ORDER BY rowid DESC LIMIT 1", [], |row| row.get(0))
            .optional()
            .map_err(|e| self.error(e))?;
        latest.ok_or_else(|| StoreError::UnknownRun { id: "latest".into(), path: self.path.clone(), known: vec![] })
    }

    /// The run `id` with every cell and sample, as stored.
    pub fn load(&self, id: &str) -> Result<StoredRun, StoreError> {
        let header = self
            .conn
            .query_row(
                "SELECT started, tlsbench_version, command_line, samples, min_time_ms, warmup_ms, timeout_s,
                        cpu, cores, kernel, rustc, allocator, aslr, governor, conditions, target_ci, time_budget_s,
                        builds, core_speeds, forks, warmup_max_ms, count_samples
                 FROM runs WHERE id = ?",
                [id],
                |row| {
                    Ok((
                        RunInfo {
                            id: id.to_string(),
                            started: row.get(0)?,
                            tlsbench_version: row.get(1)?,
                            command_line: Vec::new(), // parsed below, where a bad one can be reported
                            environment: Environment {
                                cpu: row.get(7)?,
                                cores: row.get::<_, i64>(8)? as usize,
                                kernel: row.get(9)?,
                                rustc: row.get(10)?,
                                allocator: row.get(11)?,
                                aslr: row.get(12)?,
                                governor: row.get(13)?,
                                builds: row.get(17)?,
                                conditions: None,        // parsed below, as the command line
                                core_speeds: Vec::new(), // and so are these
                            },
                            stacks: Vec::new(),
                            samples: row.get::<_, i64>(3)? as usize,
                            min_time_ms: row.get::<_, i64>(4)? as u64,
                            warmup_ms: row.get::<_, i64>(5)? as u64,
                            target_ci: row.get(15)?,
                            time_budget_s: row.get(16)?,
                        },
                        row.get::<_, String>(2)?,
                        row.get::<_, f64>(6)?,
                        row.get::<_, Option<String>>(14)?,
                        row.get::<_, Option<String>>(18)?,
                        (row.get::<_, Option<i64>>(19)?, row.get::<_, Option<i64>>(20)?),
                        row.get::<_, Option<i64>>(21)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.error(e))?;
        let Some((mut info, command_line, timeout, conditions, core_speeds, (forks, warmup_max_ms), count_samples)) =
            header
        else {
            let known = self.runs()?.into_iter().map(|r| r.id).collect();
            return Err(StoreError::UnknownRun { id: id.to_string(), path: self.path.clone(), known });
        };
        info.command_line = self.parse(id, "command line", &command_line)?;
        info.environment.conditions = conditions.map(|c| self.parse(id, "conditions", &c)).transpose()?;
        if let Some(speeds) = core_speeds {
            info.environment.core_speeds = self.parse(id, "core speeds", &speeds)?;
        }
        info.stacks = self.stacks(id)?;
        let cells = self.cells(id)?;
        Ok(StoredRun {
            info,
            timeout: Duration::from_secs_f64(timeout),
            forks: forks.map(|n| n as usize),
            warmup_max: warmup_max_ms.map(|ms| Duration::from_millis(ms as u64)),
            count_samples: count_samples.map(|n| n as usize),
            cells,
        })
    }

    fn stacks(&self, run: &str) -> Result<Vec<StackInfo>, StoreError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT id, library, tls_library, backend, capabilities FROM run_stacks
                 WHERE run_id = ? ORDER BY position",
            )
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map([run], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, Option<String>>(2)?,
                    row.get::<_, Option<String>>(3)?,
                    row.get::<_, String>(4)?,
                ))
            })
            .map_err(|e| self.error(e))?;
        let mut stacks = Vec::new();
        for row in rows {
            let (id, library, tls_library, backend, capabilities) = row.map_err(|e| self.error(e))?;
            let backend = backend.map(|b| self.parse(run, &format!("backend of {id}"), &b)).transpose()?;
            let capabilities = self.parse(run, &format!("capabilities of {id}"), &capabilities)?;
            stacks.push(StackInfo { id, library, tls_library, backend, capabilities });
        }
        Ok(stacks)
    }

    fn cells(&self, run: &str) -> Result<Vec<StoredCell>, StoreError> {
        let mut statement = self
            .conn
            .prepare(&format!(
                "SELECT status, reason, client_library, server_library, client_negotiated, server_negotiated,
                        allocator_used, {}
                 FROM cells WHERE run_id = ? ORDER BY position",
                CellKey::COLUMNS.join(", ")
            ))
            .map_err(|e| self.error(e))?;
        let mut rows = statement.query([run]).map_err(|e| self.error(e))?;
        let mut cells = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.error(e))? {
            let status: String = row.get(0).map_err(|e| self.error(e))?;
            let text = |i| row.get::<_, Option<String>>(i).map_err(|e| self.error(e));
            cells.push(StoredCell {
                key: self.key(run, row, 7)?,
                status: parse_status(&status).ok_or_else(|| self.unreadable(run, format!("cell status `{status}`")))?,
                reason: text(1)?,
                client_library: text(2)?,
                server_library: text(3)?,
                negotiated: [text(4)?, text(5)?],
                allocator_used: text(6)?,
                samples: Vec::new(),
                warmups: Vec::new(),
            });
        }

        let mut statement = self
            .conn
            .prepare(
                "SELECT s.cell, s.idx, s.iterations, v.side, v.metric, v.value, v.seconds, s.fork, s.cpus, s.cpu_speed
                 FROM samples s LEFT JOIN sample_values v ON (v.run_id, v.cell, v.idx) = (s.run_id, s.cell, s.idx)
                 WHERE s.run_id = ? ORDER BY s.cell, s.idx, v.rowid",
            )
            .map_err(|e| self.error(e))?;
        let mut rows = statement.query([run]).map_err(|e| self.error(e))?;
        while let Some(row) = rows.next().map_err(|e| self.error(e))? {
            let (cell, index): (i64, i64) =
                (row.get(0).map_err(|e| self.error(e))?, row.get(1).map_err(|e| self.error(e))?);
            let samples = &mut cells
                .get_mut(cell as usize)
                .ok_or_else(|| self.unreadable(run, format!("a sample of cell {cell}, which does not exist")))?
                .samples;
            // Rows come ordered by index, a sample's values after it: a new index is the next one.
            if samples.len() as i64 == index {
                let iterations = row.get::<_, i64>(2).map_err(|e| self.error(e))? as u64;
                let fork = row.get::<_, Option<u32>>(7).map_err(|e| self.error(e))?;
                let cpus = row.get::<_, Option<String>>(8).map_err(|e| self.error(e))?;
                let cpus = cpus
                    .map(|list| tlsbench_harness::pin::parse_cpus(&list))
                    .transpose()
                    .map_err(|e| self.unreadable(run, format!("the CPUs of sample {index} of cell {cell}: {e}")))?;
                let cpu_speed = row.get::<_, Option<f64>>(9).map_err(|e| self.error(e))?;
                samples.push(StoredSample { iterations, values: Vec::new(), fork, cpus, cpu_speed });
            } else if samples.len() as i64 != index + 1 {
                return Err(self.unreadable(run, format!("cell {cell} has sample {index} but not the ones before it")));
            }
            let Some(side) = row.get::<_, Option<String>>(3).map_err(|e| self.error(e))? else {
                continue; // a sample that reported no values
            };
            let metric: String = row.get(4).map_err(|e| self.error(e))?;
            let value = MetricValue {
                side: self.parse(run, "side", &serde_json::Value::String(side).to_string())?,
                metric: self.parse::<Metric>(run, "metric", &serde_json::Value::String(metric).to_string())?,
                value: row.get(5).map_err(|e| self.error(e))?,
                seconds: row.get(6).map_err(|e| self.error(e))?,
            };
            samples.last_mut().expect("the sample of this index was pushed above").values.push(value);
        }

        let mut statement = self
            .conn
            .prepare(
                "SELECT cell, fork, ms, windows, steady, gc_per_s, gc_percent, gc_sample_ms FROM warmups
                 WHERE run_id = ? ORDER BY rowid",
            )
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map([run], |row| {
                let gc = match (row.get(5)?, row.get(6)?, row.get(7)?) {
                    (Some(per_s), Some(percent), Some(sample_ms)) => Some(GcSeen { per_s, percent, sample_ms }),
                    _ => None,
                };
                let (fork, ms, windows, steady) = (row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?);
                let warmup = Warmup { fork, ms, windows, steady, gc };
                Ok((row.get::<_, i64>(0)?, warmup))
            })
            .map_err(|e| self.error(e))?;
        for row in rows {
            let (cell, warmup) = row.map_err(|e| self.error(e))?;
            let cell = cells
                .get_mut(cell as usize)
                .ok_or_else(|| self.unreadable(run, format!("a warm-up of cell {cell}, which does not exist")))?;
            cell.warmups.push(warmup);
        }
        Ok(cells)
    }

    /// Reads JSON that tlsbench wrote; a stack description or metric this build does not know
    /// (written by another version) is reported, not guessed at.
    pub(super) fn parse<T: serde::de::DeserializeOwned>(
        &self,
        run: &str,
        what: &str,
        text: &str,
    ) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| self.unreadable(run, format!("{what} `{text}`: {e}")))
    }

    pub(super) fn unreadable(&self, run: &str, what: String) -> StoreError {
        StoreError::Unreadable { path: self.path.clone(), run: run.to_string(), what }
    }
}
