//! The tests of store/: runs read back as stored, samples recorded as they come, and a file of
//! every earlier layout migrated.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use tlsbench_harness::protocol::Metric;
use tlsbench_harness::Side;

use super::schema::{FIRST_READABLE_VERSION, MIGRATIONS};
use super::*;
use crate::cores::CoreSpeed;
use crate::results::fixture;
use crate::results::Conditions;

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
        cpus: None,
        cpu_speed: None,
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
        forks: None,
        warmup_max: None,
        count_samples: None,
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
        calibration_before: Calibration {
            median_ms: 3.0,
            spread_percent: 4.5,
            kept_spread_percent: Some(3.0),
            max_over_min: 1.125,
        },
        calibration_after: Calibration {
            median_ms: 3.25,
            spread_percent: 38.0,
            kept_spread_percent: None,
            max_over_min: 2.5,
        },
        noise: None,
        sentinel: None,
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
        stack.backend = Some(tlsbench_harness::Backend::new("AWS-LC", "1.66.2", Some(format!("under {}", stack.id))));
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
pub(super) fn file_of_version(dir: &Path, version: i64) -> PathBuf {
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
            let mut columns: Vec<Column> =
                info.query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect();
            columns.sort();
            (table, columns)
        })
        .collect()
}

/// The fixture's run with every axis chosen and everything the runners report now.
fn run_with_everything(id: &str) -> StoredRun {
    let mut stored = run_with_backends(id);
    (stored.info.target_ci, stored.info.time_budget_s) = (Some(2.0), Some(300.0));
    (stored.forks, stored.warmup_max, stored.count_samples) = (Some(1), Some(Duration::from_millis(5000)), Some(2));
    stored.info.environment.conditions = Some(conditions());
    stored.info.environment.builds = Some("native (cargo profile release, RUSTFLAGS -C target-cpu=native)".into());
    let cell = &mut stored.cells[0];
    (cell.key.allocator, cell.key.threads, cell.key.build) = (Some("jemalloc".into()), Some(2), Some("native".into()));
    cell.key.process = "split-process".into();
    cell.allocator_used = Some("jemalloc 5.3.1".into());
    cell.negotiated = [Some("1.3 aes-256-gcm x25519, ticket received".into()), Some("1.3 aes-256-gcm x25519".into())];
    cell.samples.iter_mut().enumerate().for_each(|(i, s)| s.fork = Some(i as u32 % 2));
    cell.samples.iter_mut().enumerate().for_each(|(i, s)| s.cpus = Some(vec![i as u32, 7]));
    stored.info.environment.core_speeds =
        vec![CoreSpeed { cpu: 0, loop_ms: 3.125 }, CoreSpeed { cpu: 7, loop_ms: 4.5 }];
    cell.warmups = vec![
        Warmup { fork: 0, ms: 4321.5, windows: 12, steady: true, gc: None },
        Warmup {
            fork: 1,
            ms: 10000.0,
            windows: 30,
            steady: false,
            gc: Some(crate::steady::GcSeen { per_s: 6.5, percent: 2.25, sample_ms: 120 }),
        },
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
        store.record_warmup("old", 0, &Warmup { fork: 0, ms: 1.0, windows: 8, steady: true, gc: None }).unwrap();
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
        format!("no results database at {} (`tlsbench run` creates it; --db PATH chooses another)", missing.display())
    );
    assert!(!missing.exists(), "reading must not create the file");
}
