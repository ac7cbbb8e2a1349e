//! Storing a run: its plan whole, in one transaction, then each sample, warm-up and cell's end
//! as it happens, so that a run stopped at any point keeps everything measured before.

use rusqlite::params;

use super::{json, sqlite, status_name, Store, StoreError, StoredRun, StoredSample};
use crate::key::CellKey;
use crate::results::{Conditions, Status};
use crate::steady::Warmup;

impl Store {
    /// Stores a new run with its planned cells (and any samples they already hold), in one
    /// transaction: a run is in the database whole or not at all.
    pub fn insert_run(&mut self, run: &StoredRun) -> Result<(), StoreError> {
        let path = self.path.clone();
        let err = |e| sqlite(&path, e);
        let (info, env) = (&run.info, &run.info.environment);
        let tx = self.conn.transaction().map_err(err)?;
        tx.execute(
            "INSERT INTO runs (id, started, tlsbench_version, command_line, samples, min_time_ms, warmup_ms, timeout_s,
                               cpu, cores, kernel, rustc, allocator, aslr, governor, conditions, target_ci,
                               time_budget_s, builds, core_speeds, forks, warmup_max_ms, count_samples)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            params![
                info.id,
                info.started,
                info.tlsbench_version,
                json(&info.command_line),
                info.samples as i64,
                info.min_time_ms as i64,
                info.warmup_ms as i64,
                run.timeout.as_secs_f64(),
                env.cpu,
                env.cores as i64,
                env.kernel,
                env.rustc,
                env.allocator,
                env.aslr,
                env.governor,
                env.conditions.as_ref().map(json),
                info.target_ci,
                info.time_budget_s,
                env.builds,
                (!env.core_speeds.is_empty()).then(|| json(&env.core_speeds)),
                run.forks.map(|n| n as i64),
                run.warmup_max.map(|d| d.as_millis() as i64),
                run.count_samples.map(|n| n as i64),
            ],
        )
        .map_err(err)?;
        for (position, stack) in info.stacks.iter().enumerate() {
            tx.execute(
                "INSERT INTO run_stacks (run_id, position, id, library, tls_library, backend, capabilities)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
                params![
                    info.id,
                    position as i64,
                    stack.id,
                    stack.library,
                    stack.tls_library,
                    stack.backend.as_ref().map(json),
                    json(&stack.capabilities)
                ],
            )
            .map_err(err)?;
        }
        let key_columns = CellKey::COLUMNS.join(", ");
        let insert_cell = format!(
            "INSERT INTO cells (run_id, position, status, reason, client_library, server_library, client_negotiated,
                                server_negotiated, allocator_used, {key_columns})
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?{})",
            ", ?".repeat(CellKey::COLUMNS.len())
        );
        for (position, cell) in run.cells.iter().enumerate() {
            let position_sql = position as i64;
            let cell_columns: [&dyn rusqlite::ToSql; 9] = [
                &info.id,
                &position_sql,
                &status_name(cell.status),
                &cell.reason,
                &cell.client_library,
                &cell.server_library,
                &cell.negotiated[0],
                &cell.negotiated[1],
                &cell.allocator_used,
            ];
            let key = cell.key.values();
            let key_columns = key.iter().map(|v| v as &dyn rusqlite::ToSql);
            tx.execute(&insert_cell, rusqlite::params_from_iter(cell_columns.into_iter().chain(key_columns)))
                .map_err(err)?;
            for (index, sample) in cell.samples.iter().enumerate() {
                insert_sample(&tx, &info.id, position, index, sample).map_err(err)?;
            }
            for warmup in &cell.warmups {
                insert_warmup(&tx, &info.id, position, warmup).map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }

    /// Stores sample `index` of cell `cell`, the libraries both sides reported for it and what
    /// each side negotiated (client's view, then server's; one a runner left out stays as it was).
    pub fn record_sample(
        &mut self,
        run: &str,
        cell: usize,
        index: usize,
        sample: &StoredSample,
        libraries: [&str; 2],
        negotiated: [Option<&str>; 2],
    ) -> Result<(), StoreError> {
        let path = self.path.clone();
        let err = |e| sqlite(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        insert_sample(&tx, run, cell, index, sample).map_err(err)?;
        tx.execute(
            "UPDATE cells SET client_library = ?, server_library = ?,
                              client_negotiated = COALESCE(?, client_negotiated),
                              server_negotiated = COALESCE(?, server_negotiated)
             WHERE run_id = ? AND position = ?",
            params![libraries[0], libraries[1], negotiated[0], negotiated[1], run, cell as i64],
        )
        .map_err(err)?;
        tx.commit().map_err(err)
    }

    /// Stores how one of cell `cell`'s processes warmed up.
    pub fn record_warmup(&mut self, run: &str, cell: usize, warmup: &Warmup) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| sqlite(&path, e))?;
        insert_warmup(&tx, run, cell, warmup).map_err(|e| sqlite(&path, e))?;
        tx.commit().map_err(|e| sqlite(&path, e))
    }

    /// Stores the allocator the runners of cell `cell` reported (its version with it).
    pub fn record_allocator_used(&mut self, run: &str, cell: usize, used: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE cells SET allocator_used = ? WHERE run_id = ? AND position = ?",
                params![used, run, cell as i64],
            )
            .map(drop)
            .map_err(|e| self.error(e))
    }

    /// Stores the run's allocators as its runners reported them (the environment's line).
    pub fn record_allocators(&mut self, run: &str, allocators: &str) -> Result<(), StoreError> {
        self.conn
            .execute("UPDATE runs SET allocator = ? WHERE id = ?", params![allocators, run])
            .map(drop)
            .map_err(|e| self.error(e))
    }

    /// Stores what the machine did while run `run` measured (its latest session, when resumed).
    pub fn record_conditions(&mut self, run: &str, conditions: &Conditions) -> Result<(), StoreError> {
        self.conn
            .execute("UPDATE runs SET conditions = ? WHERE id = ?", params![json(conditions), run])
            .map(drop)
            .map_err(|e| self.error(e))
    }

    /// Stores that cell `cell` stopped: it failed or turned out unsupported, for `reason`.
    pub fn record_end(&mut self, run: &str, cell: usize, status: Status, reason: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE cells SET status = ?, reason = ? WHERE run_id = ? AND position = ?",
                params![status_name(status), reason, run, cell as i64],
            )
            .map(drop)
            .map_err(|e| self.error(e))
    }
}

fn insert_sample(
    tx: &rusqlite::Transaction,
    run: &str,
    cell: usize,
    index: usize,
    sample: &StoredSample,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO samples (run_id, cell, idx, iterations, fork, cpus, cpu_speed) VALUES (?, ?, ?, ?, ?, ?, ?)",
        params![
            run,
            cell as i64,
            index as i64,
            sample.iterations as i64,
            sample.fork,
            sample.cpus.as_deref().map(tlsbench_harness::pin::list),
            sample.cpu_speed
        ],
    )?;
    for value in &sample.values {
        tx.execute(
            "INSERT INTO sample_values (run_id, cell, idx, side, metric, value, seconds) VALUES (?, ?, ?, ?, ?, ?, ?)",
            params![
                run,
                cell as i64,
                index as i64,
                value.side.to_string(),
                value.metric.name(),
                value.value,
                value.seconds
            ],
        )?;
    }
    Ok(())
}

fn insert_warmup(tx: &rusqlite::Transaction, run: &str, cell: usize, warmup: &Warmup) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO warmups (run_id, cell, fork, ms, windows, steady, gc_per_s, gc_percent, gc_sample_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        params![
            run,
            cell as i64,
            warmup.fork,
            warmup.ms,
            warmup.windows,
            warmup.steady,
            warmup.gc.map(|gc| gc.per_s),
            warmup.gc.map(|gc| gc.percent),
            warmup.gc.map(|gc| gc.sample_ms as i64),
        ],
    )
    .map(drop)
}
