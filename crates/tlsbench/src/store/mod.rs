//! The results database (docs/results.md, "The database"): one SQLite file holding every run, its
//! environment and settings, and every sample, each written in its own transaction as it is taken.
//!
//! This file opens it and holds what is stored; its tables and how an older file is migrated
//! are schema.rs, storing a run and each sample as it comes write.rs, reading runs back read.rs;
//! `tlsbench cold`'s runs, stored and read back, cold.rs.

mod cold;
#[cfg(test)]
mod cold_tests;
mod read;
mod schema;
#[cfg(test)]
mod tests;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};
use tlsbench_harness::protocol::MetricValue;

use crate::key::CellKey;
use crate::results::{RunInfo, Status};
use crate::steady::Warmup;
pub use cold::ColdRunSummary;
pub use schema::DB_SCHEMA_VERSION;

/// The default database file, in the working directory.
pub const DEFAULT_PATH: &str = "results.db";

/// Another process writing the same file holds its lock for one sample's transaction at most.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

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
    #[error("no run `{id}` in {path} ({})", known_runs(.known, "runs"))]
    UnknownRun { id: String, path: PathBuf, known: Vec<String> },
    #[error("no cold run `{id}` in {path} ({})", known_runs(.known, "cold runs"))]
    UnknownColdRun { id: String, path: PathBuf, known: Vec<String> },
    #[error("results database {path}: {source}")]
    Sqlite { path: PathBuf, source: rusqlite::Error },
    #[error("results database {path}: run {run} holds unreadable data: {what}")]
    Unreadable { path: PathBuf, run: String, what: String },
}

/// The valid choices for an unknown id of a run of kind `runs`: the latest few, or that there
/// are none.
fn known_runs(known: &[String], runs: &str) -> String {
    const SHOWN: usize = 5;
    match known.len() {
        0 => format!("it holds no {runs} yet"),
        n if n <= SHOWN => format!("{runs}: {}", known.join(", ")),
        n => format!("latest {runs}: {}; `tlsbench runs` lists all {n}", known[n - SHOWN..].join(", ")),
    }
}

/// A run as stored: its document header, the settings the document lacks (kept so that a
/// resumed run takes its samples as the run took them), and every cell.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub info: RunInfo,
    pub timeout: Duration,
    /// `--forks` as the run had it; None in a run stored before it was kept (schema 15).
    pub forks: Option<usize>,
    /// `--warmup-max-ms` as the run had it; None likewise.
    pub warmup_max: Option<Duration>,
    /// The samples of a cell whose counts repeat; None in a run stored before it was kept
    /// (schema 17), whose cells all took `info.samples`.
    pub count_samples: Option<usize>,
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
    /// The CPUs its threads were pinned to, in thread order; None: wherever the scheduler put them.
    pub cpus: Option<Vec<u32>>,
    /// How fast the CPU the sentinel placed it on ran around it, as a fraction of full speed
    /// (noise/sentinel.rs); None: not placed, or a run from before.
    pub cpu_speed: Option<f64>,
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

    fn error(&self, e: rusqlite::Error) -> StoreError {
        sqlite(&self.path, e)
    }
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
