//! The database's tables, and how a file of an earlier layout becomes today's: one migration
//! step per version, each adding what the next version keeps.

use rusqlite::TransactionBehavior;

use super::{sqlite, Store, StoreError};

/// The layout of the tables, kept in `PRAGMA user_version`: a file of an earlier version is
/// migrated, one of another refused rather than read or written wrongly. A change to the tables
/// is one more step in `MIGRATIONS` and the same change in `SCHEMA`.
pub const DB_SCHEMA_VERSION: i64 = FIRST_READABLE_VERSION + MIGRATIONS.len() as i64;

/// The oldest layout this tlsbench reads (version 1 kept no measures).
pub(super) const FIRST_READABLE_VERSION: i64 = 2;

/// How a file of each version becomes the next: `MIGRATIONS[i]` takes version
/// `FIRST_READABLE_VERSION + i` to the one after it. What a run of an earlier version did not
/// keep is left NULL (its runners did not report it) or takes the value it implied.
pub(super) const MIGRATIONS: &[&str] = &[
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
    // 11: the C compiler axis (none chosen: gcc).
    "ALTER TABLE cells ADD COLUMN compiler TEXT;",
    // 12: what a warm-up saw of its process's collector, and the sample length it chose.
    "ALTER TABLE warmups ADD COLUMN gc_per_s REAL; ALTER TABLE warmups ADD COLUMN gc_percent REAL;
     ALTER TABLE warmups ADD COLUMN gc_sample_ms INTEGER;",
    // 13: what threads share (none chosen: their own configs).
    "ALTER TABLE cells ADD COLUMN contexts TEXT;",
    // 14: threads pinned one per CPU: each sample's CPUs, and the speed of each CPU used.
    "ALTER TABLE samples ADD COLUMN cpus TEXT; ALTER TABLE runs ADD COLUMN core_speeds TEXT;",
    // 15: the forks and warm-up bound of processes that stay up, to resume a run with them.
    "ALTER TABLE runs ADD COLUMN forks INTEGER; ALTER TABLE runs ADD COLUMN warmup_max_ms INTEGER;",
    // 16: `tlsbench cold`'s runs, their rows and every process's figures.
    "CREATE TABLE cold_runs (id TEXT PRIMARY KEY, started TEXT NOT NULL, tlsbench_version TEXT NOT NULL,
                             command_line TEXT NOT NULL, measure TEXT NOT NULL, processes INTEGER NOT NULL,
                             stacks TEXT NOT NULL, scenarios TEXT NOT NULL, cpu TEXT NOT NULL, cores INTEGER NOT NULL,
                             kernel TEXT NOT NULL, rustc TEXT NOT NULL, aslr TEXT NOT NULL, governor TEXT NOT NULL);
     CREATE TABLE cold_rows (run_id TEXT NOT NULL REFERENCES cold_runs (id), position INTEGER NOT NULL,
                             scenario_position INTEGER NOT NULL, scenario TEXT NOT NULL, stack TEXT NOT NULL,
                             status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'unsupported')), reason TEXT,
                             library TEXT, PRIMARY KEY (run_id, position));
     CREATE TABLE cold_values (run_id TEXT NOT NULL, cold_row INTEGER NOT NULL, process INTEGER NOT NULL,
                               side TEXT NOT NULL, phase TEXT NOT NULL, value INTEGER NOT NULL,
                               PRIMARY KEY (run_id, cold_row, process, side, phase),
                               FOREIGN KEY (run_id, cold_row) REFERENCES cold_rows (run_id, position));",
    // 17: the samples of a cell whose counts repeat (io, instructions, sync), to resume with;
    // before, every cell took the run's samples.
    "ALTER TABLE runs ADD COLUMN count_samples INTEGER;",
    // 18: how fast the CPU the sentinel chose ran around each sample (none: not placed).
    "ALTER TABLE samples ADD COLUMN cpu_speed REAL;",
];

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
    builds        TEXT,              -- the runners' builds as they reported them (--build); NULL before schema 9
    core_speeds   TEXT,              -- JSON: each CPU a run with --threads used, its loop's time; NULL: none
    forks         INTEGER,           -- --forks and --warmup-max-ms, to resume with; NULL before schema 15
    warmup_max_ms INTEGER,
    count_samples INTEGER            -- samples per cell of io, instructions, sync; NULL before schema 17
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
    contexts       TEXT,             -- what they share, 'own' or 'shared' (--contexts); NULL: none chosen (own)
    build          TEXT,             -- 'release', 'native' or 'lto' (--build); NULL: none chosen (release's)
    compiler       TEXT,             -- 'gcc' or 'clang' (--compiler); NULL: none chosen (gcc)
    PRIMARY KEY (run_id, position)
);
-- One runner invocation that returned numbers; `idx` counts from 0 in the order taken.
CREATE TABLE samples (
    run_id     TEXT NOT NULL,
    cell       INTEGER NOT NULL,
    idx        INTEGER NOT NULL,
    iterations INTEGER NOT NULL,
    fork       INTEGER,          -- which of the cell's processes that stay up took it; NULL: its own process
    cpus       TEXT,             -- the CPUs its threads were pinned to, in thread order ('0,1'); NULL: none
    cpu_speed  REAL,             -- its CPU's speed around it, a fraction of full speed (schema 18); NULL: not placed
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
    gc_per_s     REAL,            -- its collector over the last windows (schema 12): collections per s,
    gc_percent   REAL,            -- its time in % of the measured stretches,
    gc_sample_ms INTEGER,         -- and each side's measured time per sample chosen from them
    FOREIGN KEY (run_id, cell) REFERENCES cells (run_id, position)
);
-- `tlsbench cold`'s runs (schema 16): fresh processes per stack and handshake scenario.
CREATE TABLE cold_runs (
    id               TEXT PRIMARY KEY,  -- in the style of runs' ids, and not one of them
    started          TEXT NOT NULL,     -- RFC 3339, UTC
    tlsbench_version TEXT NOT NULL,
    command_line     TEXT NOT NULL,     -- JSON array of the arguments
    measure          TEXT NOT NULL,     -- 'time' (values in ns) or 'instructions'
    processes        INTEGER NOT NULL,  -- fresh processes per stack and scenario
    stacks           TEXT NOT NULL,     -- JSON array: the stacks, each with itself, in row order
    scenarios        TEXT NOT NULL,     -- JSON array: the scenarios planned, in order
    cpu TEXT NOT NULL, cores INTEGER NOT NULL, kernel TEXT NOT NULL, rustc TEXT NOT NULL,
    aslr TEXT NOT NULL, governor TEXT NOT NULL
);
-- One stack in one scenario, stored with its scenario's others when its table is printed.
CREATE TABLE cold_rows (
    run_id            TEXT NOT NULL REFERENCES cold_runs (id),
    position          INTEGER NOT NULL,  -- counts from 0 over the whole run, in the order printed
    scenario_position INTEGER NOT NULL,  -- the scenario's place in the plan
    scenario          TEXT NOT NULL,
    stack             TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'unsupported')),
    reason            TEXT,              -- why it failed or is unsupported
    library           TEXT,              -- the version its runner reported; NULL: no reply said
    PRIMARY KEY (run_id, position)
);
-- Every figure of every process of a row, as measured.
CREATE TABLE cold_values (
    run_id  TEXT NOT NULL,
    cold_row INTEGER NOT NULL,  -- the row's position
    process  INTEGER NOT NULL,  -- counts from 0 in the order run
    side     TEXT NOT NULL,     -- 'client', 'server', or 'process' for its start
    phase    TEXT NOT NULL,     -- 'context', 'first', 'second', 'first_resume', 'second_resume'; 'start'
    value    INTEGER NOT NULL,  -- in the measure's unit; a start in ns
    PRIMARY KEY (run_id, cold_row, process, side, phase),
    FOREIGN KEY (run_id, cold_row) REFERENCES cold_rows (run_id, position)
);
";

impl Store {
    /// Refuses a file of another schema; creates the tables in an empty one when `create`.
    pub(super) fn check_or_create_schema(&mut self, create: bool) -> Result<(), StoreError> {
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
}
