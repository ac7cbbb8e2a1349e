//! The results database (docs/results.md, "The database"): one SQLite file holding every run, its
//! environment and settings, and every sample, each written in its own transaction as it is taken.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};
use tlsbench_harness::protocol::{Metric, MetricValue, StackInfo};

use crate::key::{CellKey, Value as KeyValue};
use crate::results::{Conditions, Environment, RunInfo, Status};
use crate::steady::Warmup;

/// The layout of the tables, kept in `PRAGMA user_version`: a file of an earlier version is
/// migrated, one of another refused rather than read or written wrongly. A change to the tables
/// is one more step in `MIGRATIONS` and the same change in `SCHEMA`.
pub const DB_SCHEMA_VERSION: i64 = FIRST_READABLE_VERSION + MIGRATIONS.len() as i64;

/// The oldest layout this tlsbench reads (version 1 kept no measures).
const FIRST_READABLE_VERSION: i64 = 2;

/// How a file of each version becomes the next: `MIGRATIONS[i]` takes version
/// `FIRST_READABLE_VERSION + i` to the one after it. What a run of an earlier version did not
/// keep is left NULL (its runners did not report it) or takes the value it implied.
const MIGRATIONS: &[&str] = &[
    // 3: a measure per cell; version 2 measured time only.
    "ALTER TABLE cells ADD COLUMN measure TEXT NOT NULL DEFAULT 'time';",
    // 4: what each side's handshakes negotiated.
    "ALTER TABLE cells ADD COLUMN client_negotiated TEXT; ALTER TABLE cells ADD COLUMN server_negotiated TEXT;",
    // 5: the machine's conditions over the run, and its --target-ci and --time-budget.
    "ALTER TABLE runs ADD COLUMN conditions TEXT; ALTER TABLE runs ADD COLUMN target_ci REAL;
     ALTER TABLE runs ADD COLUMN time_budget_s REAL;",
    // 6: the allocator axis (none chosen: glibc's in the Rust runners).
    "ALTER TABLE cells ADD COLUMN allocator TEXT; ALTER TABLE cells ADD COLUMN allocator_used TEXT;",
    // 7: the stacks' TLS libraries and crypto backends, as their runners report them.
    "ALTER TABLE run_stacks ADD COLUMN tls_library TEXT; ALTER TABLE run_stacks ADD COLUMN backend TEXT;",
    // 8: the threads axis (none: one pair).
    "ALTER TABLE cells ADD COLUMN threads INTEGER;",
    // 9: the build axis (none chosen: release).
    "ALTER TABLE cells ADD COLUMN build TEXT; ALTER TABLE runs ADD COLUMN builds TEXT;",
    // 10: processes that stay up: which one took each sample (none: a process of its own), and
    // their warm-ups.
    "ALTER TABLE samples ADD COLUMN fork INTEGER;
     CREATE TABLE warmups (run_id TEXT NOT NULL, cell INTEGER NOT NULL, fork INTEGER NOT NULL, ms REAL NOT NULL,
                           windows INTEGER NOT NULL, steady INTEGER NOT NULL,
                           FOREIGN KEY (run_id, cell) REFERENCES cells (run_id, position));",
];

/// The default database file, in the working directory.
pub const DEFAULT_PATH: &str = "results.db";

/// Another process writing the same file holds its lock for one sample's transaction at most.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE runs (
    id               TEXT PRIMARY KEY,
    started          TEXT NOT NULL,    -- RFC 3339, UTC
    tlsbench_version TEXT NOT NULL,
    command_line     TEXT NOT NULL,    -- JSON array of the arguments
    samples          INTEGER NOT NULL, -- samples per cell
    min_time_ms      INTEGER NOT NULL,
    warmup_ms        INTEGER NOT NULL,
    timeout_s        REAL NOT NULL,    -- not in the results document; kept to resume with it
    cpu TEXT NOT NULL, cores INTEGER NOT NULL, kernel TEXT NOT NULL, rustc TEXT NOT NULL,
    allocator TEXT NOT NULL, aslr TEXT NOT NULL, governor TEXT NOT NULL,
    conditions    TEXT,              -- JSON: load, steal and calibration over the run, at its end
    target_ci     REAL,              -- --target-ci in %, and its --time-budget
    time_budget_s REAL,
    builds        TEXT               -- the runners' builds as they reported them (--build); NULL before schema 7
);
CREATE TABLE run_stacks (
    run_id       TEXT NOT NULL REFERENCES runs (id),
    position     INTEGER NOT NULL,
    id           TEXT NOT NULL,
    library      TEXT NOT NULL,    -- the version the stack's runner reported
    tls_library  TEXT,             -- the TLS library without its backend; NULL: not reported
    backend      TEXT,             -- JSON: the crypto backend {name, version, detail}; NULL: not reported
    capabilities TEXT NOT NULL,    -- JSON
    PRIMARY KEY (run_id, position)
);
-- One (pair, scenario, measure) of the run's plan, in the order planned.
CREATE TABLE cells (
    run_id         TEXT NOT NULL REFERENCES runs (id),
    position       INTEGER NOT NULL,
    scenario       TEXT NOT NULL,
    client_stack   TEXT NOT NULL,
    server_stack   TEXT NOT NULL,
    process        TEXT NOT NULL,    -- 'in-process', 'split-process' or 'tcp'
    measure        TEXT NOT NULL,    -- 'time', 'io', 'heap', 'rss' or 'net'
    status         TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'unsupported')),
    reason         TEXT,
    client_library TEXT,
    server_library TEXT,
    client_negotiated TEXT,          -- what the last sample's handshakes negotiated, e.g.
    server_negotiated TEXT,          -- '1.3 aes-256-gcm x25519, ticket received'
    allocator      TEXT,             -- 'glibc', 'jemalloc' or 'mimalloc' (--allocator); NULL: none chosen
    allocator_used TEXT,             -- what the runners reported, e.g. 'jemalloc 5.3.1-0-g81034ce...'
    threads        INTEGER,          -- pairs side by side, one per thread (--threads N, N > 1); NULL: one
    build          TEXT,             -- 'release', 'native' or 'lto' (--build); NULL: none chosen (release's)
    PRIMARY KEY (run_id, position)
);
-- One runner invocation that returned numbers; `idx` counts from 0 in the order taken.
CREATE TABLE samples (
    run_id     TEXT NOT NULL,
    cell       INTEGER NOT NULL,
    idx        INTEGER NOT NULL,
    iterations INTEGER NOT NULL,
    fork       INTEGER,          -- which of the cell's processes that stay up took it; NULL: its own process
    PRIMARY KEY (run_id, cell, idx),
    FOREIGN KEY (run_id, cell) REFERENCES cells (run_id, position)
);
CREATE TABLE sample_values (
    run_id  TEXT NOT NULL,
    cell    INTEGER NOT NULL,
    idx     INTEGER NOT NULL,
    side    TEXT NOT NULL,
    metric  TEXT NOT NULL,
    value   REAL NOT NULL,
    seconds REAL NOT NULL,
    PRIMARY KEY (run_id, cell, idx, side, metric),
    FOREIGN KEY (run_id, cell, idx) REFERENCES samples (run_id, cell, idx)
);
-- How each process of a cell that stays up warmed up before its first sample (schema 10).
CREATE TABLE warmups (
    run_id  TEXT NOT NULL,
    cell    INTEGER NOT NULL,
    fork    INTEGER NOT NULL,
    ms      REAL NOT NULL,
    windows INTEGER NOT NULL,
    steady  INTEGER NOT NULL,     -- 1: its rate stopped rising; 0: it reached the bound still rising
    FOREIGN KEY (run_id, cell) REFERENCES cells (run_id, position)
);
";

/// What went wrong with the database, for the callers that tell a missing run from a broken file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no results database at {0} (`tlsbench run` creates it; --db PATH chooses another)")]
    Missing(PathBuf),
    #[error(
        "results database {path} has schema version {found}, but this tlsbench ({}) reads only versions 2 \
         to {DB_SCHEMA_VERSION}; use the tlsbench that wrote it, or --db PATH to choose another file",
        env!("CARGO_PKG_VERSION")
    )]
    SchemaVersion { path: PathBuf, found: i64 },
    #[error("{0} is not a tlsbench results database; choose another file with --db PATH")]
    NotOurs(PathBuf),
    #[error("no run `{id}` in {path} ({})", known_runs(.known))]
    UnknownRun { id: String, path: PathBuf, known: Vec<String> },
    #[error("results database {path}: {source}")]
    Sqlite { path: PathBuf, source: rusqlite::Error },
    #[error("results database {path}: run {run} holds unreadable data: {what}")]
    Unreadable { path: PathBuf, run: String, what: String },
}

/// The valid choices for an unknown run id: the latest few, or that there are none.
fn known_runs(known: &[String]) -> String {
    const SHOWN: usize = 5;
    match known.len() {
        0 => "it holds no runs yet".to_string(),
        n if n <= SHOWN => format!("runs: {}", known.join(", ")),
        n => format!("latest runs: {}; `tlsbench runs` lists all {n}", known[n - SHOWN..].join(", ")),
    }
}

/// A run as stored: its document header, the setting the document lacks, and every cell.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub info: RunInfo,
    pub timeout: Duration,
    pub cells: Vec<StoredCell>,
}

/// One (pair, scenario) with every sample taken so far, in the order taken.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredCell {
    pub key: CellKey,
    pub status: Status,
    pub reason: Option<String>,
    pub client_library: Option<String>,
    pub server_library: Option<String>,
    /// What the last sample's handshakes negotiated, client's view then server's.
    pub negotiated: [Option<String>; 2],
    /// What the runners reported of the allocator the run chose (`--allocator`), its version with it.
    pub allocator_used: Option<String>,
    pub samples: Vec<StoredSample>,
    /// How its processes that stay up warmed up, in the order they did.
    pub warmups: Vec<Warmup>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StoredSample {
    pub iterations: u64,
    pub values: Vec<MetricValue>,
    /// Which of the cell's processes that stay up took it; None: a process of its own.
    pub fork: Option<u32>,
}

/// One line of `tlsbench runs`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub id: String,
    pub started: String,
    /// Pair labels in planned order: `openssl`, `rustls-ring -> openssl`.
    pub pairs: Vec<String>,
    pub scenarios: usize,
    pub ok: usize,
    pub failed: usize,
    pub unsupported: usize,
    /// Samples that `ok` cells still lack: 0 when the run is complete.
    pub missing: usize,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens the database at `path` for a new run, creating the file and its tables if needed.
    pub fn create_or_open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path).map_err(|e| sqlite(path, e))?;
        let mut store = Store::configure(conn, path)?;
        store.check_or_create_schema(true)?;
        Ok(store)
    }

    /// Opens an existing database to read it; a missing file is an error, not an empty database.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing(path.to_path_buf()));
        }
        // Read-write, though it only reads: after a writer was killed mid-transaction, the first
        // connection rolls the leftover journal back, which a read-only one cannot do.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sqlite(path, e))?;
        let mut store = Store::configure(conn, path)?;
        store.check_or_create_schema(false)?;
        Ok(store)
    }

    fn configure(conn: Connection, path: &Path) -> Result<Store, StoreError> {
        let store = Store { conn, path: path.to_path_buf() };
        store.conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| store.error(e))?;
        store.conn.pragma_update(None, "foreign_keys", true).map_err(|e| store.error(e))?;
        Ok(store)
    }

    /// Refuses a file of another schema; creates the tables in an empty one when `create`.
    fn check_or_create_schema(&mut self, create: bool) -> Result<(), StoreError> {
        // IMMEDIATE for a writer: two tlsbench processes starting on a new file must not both
        // create tables. A reader only reads.
        let behavior = if create { TransactionBehavior::Immediate } else { TransactionBehavior::Deferred };
        let tx = self.conn.transaction_with_behavior(behavior).map_err(|e| sqlite(&self.path, e))?;
        let version: i64 =
            tx.pragma_query_value(None, "user_version", |row| row.get(0)).map_err(|e| sqlite(&self.path, e))?;
        let tables: i64 = tx
            .query_row("SELECT COUNT(*) FROM sqlite_master", [], |row| row.get(0))
            .map_err(|e| sqlite(&self.path, e))?;
        match (version, tables) {
            (DB_SCHEMA_VERSION, _) => {}
            (FIRST_READABLE_VERSION.., _) if version < DB_SCHEMA_VERSION => {
                let steps = &MIGRATIONS[(version - FIRST_READABLE_VERSION) as usize..];
                tx.execute_batch(&steps.concat()).map_err(|e| sqlite(&self.path, e))?;
                tx.pragma_update(None, "user_version", DB_SCHEMA_VERSION).map_err(|e| sqlite(&self.path, e))?;
            }
            (0, 0) if create => {
                tx.execute_batch(SCHEMA).map_err(|e| sqlite(&self.path, e))?;
                tx.pragma_update(None, "user_version", DB_SCHEMA_VERSION).map_err(|e| sqlite(&self.path, e))?;
            }
            (0, _) => return Err(StoreError::NotOurs(self.path.clone())),
            (found, _) => return Err(StoreError::SchemaVersion { path: self.path.clone(), found }),
        }
        tx.commit().map_err(|e| sqlite(&self.path, e))
    }

    /// Stores a new run with its planned cells (and any samples they already hold), in one
    /// transaction: a run is in the database whole or not at all.
    pub fn insert_run(&mut self, run: &StoredRun) -> Result<(), StoreError> {
        let path = self.path.clone();
        let err = |e| sqlite(&path, e);
        let (info, env) = (&run.info, &run.info.environment);
        let tx = self.conn.transaction().map_err(err)?;
        tx.execute(
            "INSERT INTO runs (id, started, tlsbench_version, command_line, samples, min_time_ms, warmup_ms, timeout_s,
                               cpu, cores, kernel, rustc, allocator, aslr, governor, conditions, target_ci, time_budget_s, builds)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            ],
        )
        .map_err(err)?;
        for (position, stack) in info.stacks.iter().enumerate() {
            tx.execute(
                "INSERT INTO run_stacks (run_id, position, id, library, tls_library, backend, capabilities) VALUES (?, ?, ?, ?, ?, ?, ?)",
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
            "UPDATE cells SET client_library = ?, server_library = ?, client_negotiated = COALESCE(?, client_negotiated),
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
                        cpu, cores, kernel, rustc, allocator, aslr, governor, conditions, target_ci, time_budget_s, builds
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
                                conditions: None, // parsed below, as the command line
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
                    ))
                },
            )
            .optional()
            .map_err(|e| self.error(e))?;
        let Some((mut info, command_line, timeout, conditions)) = header else {
            let known = self.runs()?.into_iter().map(|r| r.id).collect();
            return Err(StoreError::UnknownRun { id: id.to_string(), path: self.path.clone(), known });
        };
        info.command_line = self.parse(id, "command line", &command_line)?;
        info.environment.conditions = conditions.map(|c| self.parse(id, "conditions", &c)).transpose()?;
        info.stacks = self.stacks(id)?;
        let cells = self.cells(id)?;
        Ok(StoredRun { info, timeout: Duration::from_secs_f64(timeout), cells })
    }

    fn stacks(&self, run: &str) -> Result<Vec<StackInfo>, StoreError> {
        let mut statement = self
            .conn
            .prepare("SELECT id, library, tls_library, backend, capabilities FROM run_stacks WHERE run_id = ? ORDER BY position")
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
                "SELECT s.cell, s.idx, s.iterations, v.side, v.metric, v.value, v.seconds, s.fork
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
                samples.push(StoredSample { iterations, values: Vec::new(), fork });
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
            .prepare("SELECT cell, fork, ms, windows, steady FROM warmups WHERE run_id = ? ORDER BY rowid")
            .map_err(|e| self.error(e))?;
        let rows = statement
            .query_map([run], |row| {
                let warmup = Warmup { fork: row.get(1)?, ms: row.get(2)?, windows: row.get(3)?, steady: row.get(4)? };
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
    fn parse<T: serde::de::DeserializeOwned>(&self, run: &str, what: &str, text: &str) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| self.unreadable(run, format!("{what} `{text}`: {e}")))
    }

    fn unreadable(&self, run: &str, what: String) -> StoreError {
        StoreError::Unreadable { path: self.path.clone(), run: run.to_string(), what }
    }

    fn error(&self, e: rusqlite::Error) -> StoreError {
        sqlite(&self.path, e)
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
        "INSERT INTO samples (run_id, cell, idx, iterations, fork) VALUES (?, ?, ?, ?, ?)",
        params![run, cell as i64, index as i64, sample.iterations as i64, sample.fork],
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
        "INSERT INTO warmups (run_id, cell, fork, ms, windows, steady) VALUES (?, ?, ?, ?, ?, ?)",
        params![run, cell as i64, warmup.fork, warmup.ms, warmup.windows, warmup.steady],
    )
    .map(drop)
}

/// SQLite's "not a database" becomes the plain message; anything else keeps SQLite's words.
fn sqlite(path: &Path, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotOurs(path.to_path_buf()),
        _ => StoreError::Sqlite { path: path.to_path_buf(), source: e },
    }
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("argument lists and capabilities serialize to JSON")
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Unsupported => "unsupported",
    }
}

fn parse_status(text: &str) -> Option<Status> {
    [Status::Ok, Status::Failed, Status::Unsupported].into_iter().find(|s| status_name(*s) == text)
}

#[cfg(test)]
mod tests {
    use tlsbench_harness::Side;

    use super::*;
    use crate::output::table::fixture;

    fn value(side: Side, metric: Metric, value: f64) -> MetricValue {
        MetricValue { side, metric, value, seconds: 0.1 }
    }

    fn sample(client: f64, server: f64) -> StoredSample {
        StoredSample {
            iterations: 42,
            values: vec![
                value(Side::Client, Metric::HandshakesPerS, client),
                value(Side::Server, Metric::HandshakesPerS, server),
            ],
            fork: None,
        }
    }

    fn cell(client: &str, status: Status, reason: Option<&str>, samples: Vec<StoredSample>) -> StoredCell {
        StoredCell {
            key: CellKey {
                scenario: fixture::FULL.into(),
                client_stack: client.into(),
                server_stack: client.into(),
                process: "in-process".into(),
                measure: "time".into(),
                ..CellKey::default()
            },
            status,
            reason: reason.map(String::from),
            client_library: (!samples.is_empty()).then(|| format!("{client} 1.0")),
            server_library: (!samples.is_empty()).then(|| format!("{client} 1.0")),
            negotiated: [None, None],
            allocator_used: None,
            samples,
            warmups: Vec::new(),
        }
    }

    /// The fixture's run header with a rustls cell of two samples, a failed openssl cell
    /// that kept one sample from before it failed, and an unsupported cell.
    fn run(id: &str) -> StoredRun {
        let mut info = fixture::document().run;
        info.id = id.into();
        StoredRun {
            info,
            timeout: Duration::from_millis(1500),
            cells: vec![
                cell("rustls-aws-lc-rs", Status::Ok, None, vec![sample(1000.0, 2000.0), sample(1001.5, 2002.25)]),
                cell(
                    "openssl",
                    Status::Failed,
                    Some("runner was killed by signal 9 (SIGKILL)"),
                    vec![sample(900.0, 1900.0)],
                ),
                cell("rustls-ring", Status::Unsupported, Some("no"), vec![]),
            ],
        }
    }

    #[test]
    fn a_run_reads_back_as_it_was_stored() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create_or_open(&dir.path().join("r.db")).unwrap();
        store.insert_run(&run("run-1")).unwrap();
        assert_eq!(store.load("run-1").unwrap(), run("run-1"));
    }

    #[test]
    fn samples_and_ends_are_recorded_as_they_happen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = Store::create_or_open(&path).unwrap();
        let mut planned = run("run-1");
        for cell in &mut planned.cells {
            cell.samples.clear();
            (cell.client_library, cell.server_library) = (None, None);
        }
        planned.cells[1].status = Status::Ok;
        planned.cells[1].reason = None;
        store.insert_run(&planned).unwrap();
        store.record_sample("run-1", 0, 0, &sample(1000.0, 2000.0), ["rustls-aws-lc-rs 1.0"; 2], [None; 2]).unwrap();
        store.record_sample("run-1", 1, 0, &sample(900.0, 1900.0), ["openssl 1.0"; 2], [None; 2]).unwrap();
        store.record_end("run-1", 1, Status::Failed, "runner was killed by signal 9 (SIGKILL)").unwrap();

        // Another connection, as after a crash: everything recorded is there.
        let reopened = Store::open_existing(&path).unwrap();
        let mut expected = run("run-1");
        expected.cells[0].samples.pop();
        assert_eq!(reopened.load("run-1").unwrap(), expected);
        let summary = RunSummary {
            id: "run-1".into(),
            started: "2025-01-02T03:04:05Z".into(),
            pairs: vec!["rustls-aws-lc-rs".into(), "openssl".into(), "rustls-ring".into()],
            scenarios: 1,
            ok: 1,
            failed: 1,
            unsupported: 1,
            missing: 2, // the run takes 3 samples per cell; the ok cell has 1
        };
        assert_eq!(reopened.runs().unwrap(), vec![summary]);

        store.record_sample("run-1", 0, 1, &sample(1001.5, 2002.25), ["rustls-aws-lc-rs 1.0"; 2], [None; 2]).unwrap();
        store.record_sample("run-1", 0, 2, &sample(999.0, 2001.0), ["rustls-aws-lc-rs 1.0"; 2], [None; 2]).unwrap();
        assert_eq!(reopened.runs().unwrap()[0].missing, 0);
        assert_eq!(reopened.latest().unwrap(), "run-1");
    }

    #[test]
    fn runs_are_listed_in_the_order_stored_and_an_unknown_one_names_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = Store::create_or_open(&path).unwrap();
        assert_eq!(
            store.latest().unwrap_err().to_string(),
            format!("no run `latest` in {} (it holds no runs yet)", path.display())
        );
        // Ids that sort the other way round: the order stored decides which is latest.
        store.insert_run(&run("b")).unwrap();
        store.insert_run(&run("a")).unwrap();
        assert_eq!(store.runs().unwrap().iter().map(|r| &r.id[..]).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(store.latest().unwrap(), "a");
        let err = store.load("c").unwrap_err();
        assert!(matches!(err, StoreError::UnknownRun { .. }));
        assert_eq!(err.to_string(), format!("no run `c` in {} (runs: b, a)", path.display()));
        for id in ["c", "d", "e", "f", "g"] {
            store.insert_run(&run(id)).unwrap();
        }
        assert_eq!(
            store.load("x").unwrap_err().to_string(),
            format!("no run `x` in {} (latest runs: c, d, e, f, g; `tlsbench runs` lists all 7)", path.display())
        );
    }

    fn conditions() -> Conditions {
        use crate::results::Calibration;
        Conditions {
            load_average_start: 0.25,
            load_average_end: 1.5,
            steal_percent: Some(0.125),
            calibration_before: Calibration { median_ms: 3.0, spread_percent: 4.5, max_over_min: 1.125 },
            calibration_after: Calibration { median_ms: 3.25, spread_percent: 38.0, max_over_min: 2.5 },
        }
    }

    #[test]
    fn a_run_keeps_its_conditions_and_target() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create_or_open(&dir.path().join("r.db")).unwrap();
        let mut stored = run("run-1");
        (stored.info.target_ci, stored.info.time_budget_s) = (Some(2.0), Some(300.0));
        store.insert_run(&stored).unwrap();
        // Planned without conditions; they come at the end of the measuring.
        assert_eq!(store.load("run-1").unwrap(), stored);
        store.record_conditions("run-1", &conditions()).unwrap();
        stored.info.environment.conditions = Some(conditions());
        assert_eq!(store.load("run-1").unwrap(), stored);
    }

    /// The fixture's run with its stacks described as runners now describe them.
    fn run_with_backends(id: &str) -> StoredRun {
        let mut stored = run(id);
        for stack in &mut stored.info.stacks {
            stack.tls_library = Some(format!("{} tls", stack.id));
            stack.backend =
                Some(tlsbench_harness::Backend::new("AWS-LC", "1.66.2", Some(format!("under {}", stack.id))));
        }
        stored.info.stacks[1].backend.as_mut().unwrap().detail = None;
        stored
    }

    #[test]
    fn a_run_keeps_its_stacks_tls_libraries_and_backends() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create_or_open(&dir.path().join("r.db")).unwrap();
        store.insert_run(&run_with_backends("run-1")).unwrap();
        assert_eq!(store.load("run-1").unwrap(), run_with_backends("run-1"));
    }

    #[test]
    fn a_cell_keeps_its_thread_count_and_its_label_says_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create_or_open(&dir.path().join("r.db")).unwrap();
        let mut stored = run("run-1");
        stored.cells[0].key.threads = Some(4);
        stored.cells[0].key.allocator = Some("jemalloc".into());
        store.insert_run(&stored).unwrap();
        assert_eq!(store.load("run-1").unwrap(), stored);
        let pairs = &store.runs().unwrap()[0].pairs;
        assert!(pairs.contains(&"rustls-aws-lc-rs (jemalloc, 4 threads)".to_string()), "{pairs:?}");
    }

    #[test]
    fn a_cell_keeps_its_build() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create_or_open(&dir.path().join("r.db")).unwrap();
        let mut stored = run("run-1");
        stored.cells[0].key.build = Some("lto".into());
        store.insert_run(&stored).unwrap();
        assert_eq!(store.load("run-1").unwrap(), stored);
        let pairs = &store.runs().unwrap()[0].pairs;
        assert!(pairs.contains(&"rustls-aws-lc-rs [lto]".to_string()), "{pairs:?}");
    }

    #[test]
    fn a_cell_keeps_its_allocator() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create_or_open(&dir.path().join("r.db")).unwrap();
        let mut stored = run("run-1");
        stored.cells[0].key.allocator = Some("mimalloc".into());
        stored.cells[0].allocator_used = Some("mimalloc 3.3.2".into());
        store.insert_run(&stored).unwrap();
        assert_eq!(store.load("run-1").unwrap(), stored);
        let pairs = &store.runs().unwrap()[0].pairs;
        assert!(pairs.contains(&"rustls-aws-lc-rs (mimalloc)".to_string()), "{pairs:?}");
    }

    /// The tables as version 2 made them, the oldest layout a file can have.
    const SCHEMA_V2: &str = "
        CREATE TABLE runs (id TEXT PRIMARY KEY, started TEXT NOT NULL, tlsbench_version TEXT NOT NULL,
            command_line TEXT NOT NULL, samples INTEGER NOT NULL, min_time_ms INTEGER NOT NULL,
            warmup_ms INTEGER NOT NULL, timeout_s REAL NOT NULL, cpu TEXT NOT NULL, cores INTEGER NOT NULL,
            kernel TEXT NOT NULL, rustc TEXT NOT NULL, allocator TEXT NOT NULL, aslr TEXT NOT NULL,
            governor TEXT NOT NULL);
        CREATE TABLE run_stacks (run_id TEXT NOT NULL REFERENCES runs (id), position INTEGER NOT NULL,
            id TEXT NOT NULL, library TEXT NOT NULL, capabilities TEXT NOT NULL, PRIMARY KEY (run_id, position));
        CREATE TABLE cells (run_id TEXT NOT NULL REFERENCES runs (id), position INTEGER NOT NULL,
            scenario TEXT NOT NULL, client_stack TEXT NOT NULL, server_stack TEXT NOT NULL, process TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'unsupported')), reason TEXT,
            client_library TEXT, server_library TEXT, PRIMARY KEY (run_id, position));
        CREATE TABLE samples (run_id TEXT NOT NULL, cell INTEGER NOT NULL, idx INTEGER NOT NULL,
            iterations INTEGER NOT NULL, PRIMARY KEY (run_id, cell, idx),
            FOREIGN KEY (run_id, cell) REFERENCES cells (run_id, position));
        CREATE TABLE sample_values (run_id TEXT NOT NULL, cell INTEGER NOT NULL, idx INTEGER NOT NULL,
            side TEXT NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL, seconds REAL NOT NULL,
            PRIMARY KEY (run_id, cell, idx, side, metric),
            FOREIGN KEY (run_id, cell, idx) REFERENCES samples (run_id, cell, idx));";

    /// A file of `version`: version 2's tables, the migration steps up to `version`, and the
    /// fixture's run "old" in version 2's columns (which every later version has).
    fn file_of_version(dir: &Path, version: i64) -> PathBuf {
        let path = dir.join(format!("v{version}.db"));
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(SCHEMA_V2).unwrap();
        conn.execute_batch(&MIGRATIONS[..(version - FIRST_READABLE_VERSION) as usize].concat()).unwrap();
        conn.pragma_update(None, "user_version", version).unwrap();
        let old = run("old");
        let (info, env) = (&old.info, &old.info.environment);
        conn.execute(
            "INSERT INTO runs (id, started, tlsbench_version, command_line, samples, min_time_ms, warmup_ms, timeout_s,
                               cpu, cores, kernel, rustc, allocator, aslr, governor)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            params![
                info.id,
                info.started,
                info.tlsbench_version,
                json(&info.command_line),
                info.samples as i64,
                info.min_time_ms as i64,
                info.warmup_ms as i64,
                old.timeout.as_secs_f64(),
                env.cpu,
                env.cores as i64,
                env.kernel,
                env.rustc,
                env.allocator,
                env.aslr,
                env.governor
            ],
        )
        .unwrap();
        for (position, stack) in info.stacks.iter().enumerate() {
            conn.execute(
                "INSERT INTO run_stacks (run_id, position, id, library, capabilities) VALUES (?, ?, ?, ?, ?)",
                params![info.id, position as i64, stack.id, stack.library, json(&stack.capabilities)],
            )
            .unwrap();
        }
        for (position, cell) in old.cells.iter().enumerate() {
            let k = &cell.key;
            conn.execute(
                "INSERT INTO cells (run_id, position, scenario, client_stack, server_stack, process, status, reason,
                                    client_library, server_library)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                params![
                    info.id,
                    position as i64,
                    k.scenario,
                    k.client_stack,
                    k.server_stack,
                    k.process,
                    status_name(cell.status),
                    cell.reason,
                    cell.client_library,
                    cell.server_library
                ],
            )
            .unwrap();
            for (index, sample) in cell.samples.iter().enumerate() {
                let (position, index) = (position as i64, index as i64);
                conn.execute(
                    "INSERT INTO samples (run_id, cell, idx, iterations) VALUES (?, ?, ?, ?)",
                    params![info.id, position, index, sample.iterations as i64],
                )
                .unwrap();
                for v in &sample.values {
                    conn.execute(
                        "INSERT INTO sample_values (run_id, cell, idx, side, metric, value, seconds)
                         VALUES (?, ?, ?, ?, ?, ?, ?)",
                        params![info.id, position, index, v.side.to_string(), v.metric.name(), v.value, v.seconds],
                    )
                    .unwrap();
                }
            }
        }
        path
    }

    /// A column: its name, its type and whether it refuses NULL.
    type Column = (String, String, bool);

    /// Each table's columns.
    fn columns(path: &Path) -> Vec<(String, Vec<Column>)> {
        let conn = Connection::open(path).unwrap();
        let mut tables = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").unwrap();
        let names: Vec<String> = tables.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
        names
            .into_iter()
            .map(|table| {
                let mut info = conn.prepare(&format!("PRAGMA table_info({table})")).unwrap();
                let mut columns: Vec<Column> = info
                    .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(3)?)))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                columns.sort();
                (table, columns)
            })
            .collect()
    }

    /// The fixture's run with every axis chosen and everything the runners report now.
    fn run_with_everything(id: &str) -> StoredRun {
        let mut stored = run_with_backends(id);
        (stored.info.target_ci, stored.info.time_budget_s) = (Some(2.0), Some(300.0));
        stored.info.environment.conditions = Some(conditions());
        stored.info.environment.builds = Some("native (cargo profile release, RUSTFLAGS -C target-cpu=native)".into());
        let cell = &mut stored.cells[0];
        (cell.key.allocator, cell.key.threads, cell.key.build) =
            (Some("jemalloc".into()), Some(2), Some("native".into()));
        cell.key.process = "split-process".into();
        cell.allocator_used = Some("jemalloc 5.3.1".into());
        cell.negotiated =
            [Some("1.3 aes-256-gcm x25519, ticket received".into()), Some("1.3 aes-256-gcm x25519".into())];
        cell.samples.iter_mut().enumerate().for_each(|(i, s)| s.fork = Some(i as u32 % 2));
        cell.warmups = vec![
            Warmup { fork: 0, ms: 4321.5, windows: 12, steady: true },
            Warmup { fork: 1, ms: 10000.0, windows: 30, steady: false },
        ];
        stored
    }

    #[test]
    fn a_file_of_every_earlier_version_is_migrated_and_keeps_its_runs() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("fresh.db");
        Store::create_or_open(&fresh).unwrap();
        for version in FIRST_READABLE_VERSION..DB_SCHEMA_VERSION {
            let path = file_of_version(dir.path(), version);
            let mut store = Store::create_or_open(&path).unwrap();
            let user_version = |p: &Path| {
                Connection::open(p).unwrap().pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0)).unwrap()
            };
            assert_eq!(user_version(&path), DB_SCHEMA_VERSION, "version {version}");
            // The steps end where a new file's tables are.
            assert_eq!(columns(&path), columns(&fresh), "version {version}");
            // Its run reads back: what that version did not keep is absent, its cells measured
            // time with one pair on release's build and glibc's allocator, each sample its own process.
            assert_eq!(store.load("old").unwrap(), run("old"), "version {version}");
            // It takes runs of today, and keeps recording the old one.
            store.insert_run(&run_with_everything("new")).unwrap();
            assert_eq!(store.load("new").unwrap(), run_with_everything("new"), "version {version}");
            let taken = run("old").cells[0].samples.len();
            let seen = [Some("1.3 aes-256-gcm x25519"), None];
            store.record_sample("old", 0, taken, &sample(1.0, 2.0), ["rustls-aws-lc-rs 1.0"; 2], seen).unwrap();
            store.record_warmup("old", 0, &Warmup { fork: 0, ms: 1.0, windows: 8, steady: true }).unwrap();
            store.record_conditions("old", &conditions()).unwrap();
            let old = store.load("old").unwrap();
            assert_eq!(old.cells[0].negotiated, [Some("1.3 aes-256-gcm x25519".to_string()), None]);
            assert_eq!((old.cells[0].samples.len(), old.cells[0].warmups.len()), (taken + 1, 1));
            assert_eq!(old.info.environment.conditions, Some(conditions()));
        }
    }

    #[test]
    fn a_database_of_another_schema_version_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        // A file from a later tlsbench.
        let newer = DB_SCHEMA_VERSION + 1;
        let other = Connection::open(&path).unwrap();
        other.execute_batch(&format!("CREATE TABLE runs (id TEXT); PRAGMA user_version = {newer};")).unwrap();
        drop(other);
        let expected = format!(
            "results database {} has schema version {newer}, but this tlsbench ({}) reads only versions 2 to \
             {DB_SCHEMA_VERSION}; use the tlsbench that wrote it, or --db PATH to choose another file",
            path.display(),
            env!("CARGO_PKG_VERSION")
        );
        for result in [Store::create_or_open(&path), Store::open_existing(&path)] {
            let err = result.err().expect("refused");
            assert!(matches!(err, StoreError::SchemaVersion { found, .. } if found == newer));
            assert_eq!(err.to_string(), expected);
        }
        let after = Connection::open(&path).unwrap();
        let version: i64 = after.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        let tables: i64 = after.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0)).unwrap();
        assert_eq!((version, tables), (newer, 1));
    }

    #[test]
    fn other_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (foreign, text, missing) = (dir.path().join("f.db"), dir.path().join("t.db"), dir.path().join("m.db"));
        Connection::open(&foreign).unwrap().execute_batch("CREATE TABLE notes (text TEXT);").unwrap();
        std::fs::write(&text, "not a database, but long enough to be read as a header by SQLite").unwrap();
        for path in [&foreign, &text] {
            let err = Store::create_or_open(path).err().expect("refused");
            assert_eq!(
                err.to_string(),
                format!("{} is not a tlsbench results database; choose another file with --db PATH", path.display())
            );
        }
        let err = Store::open_existing(&missing).err().expect("refused");
        assert_eq!(
            err.to_string(),
            format!(
                "no results database at {} (`tlsbench run` creates it; --db PATH chooses another)",
                missing.display()
            )
        );
        assert!(!missing.exists(), "reading must not create the file");
    }
}
