//! The tests of store/cold.rs: a cold run reads back as the document it printed from, scenario
//! by scenario as stored, its tables the same; a file of the previous layout takes cold runs.

use rusqlite::Connection;

use super::schema::{FIRST_READABLE_VERSION, MIGRATIONS};
use super::tests::file_of_version;
use super::*;
use crate::cold_document::{fixture, ColdDocument};
use crate::output::cold_table as table;

/// Stores `doc` as `tlsbench cold` does: its header, then each scenario.
fn store(store: &mut Store, doc: &ColdDocument) {
    store.insert_cold_run(&doc.run).unwrap();
    for (position, scenario) in doc.scenarios.iter().enumerate() {
        store.record_cold_scenario(&doc.run.id, position, scenario).unwrap();
    }
}

fn with_id(id: &str) -> ColdDocument {
    let mut doc = fixture::document();
    doc.run.id = id.into();
    doc
}

#[test]
fn a_cold_run_reads_back_as_the_document_it_printed_and_prints_the_same_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let doc = fixture::document();
    store(&mut Store::create_or_open(&path).unwrap(), &doc);

    let loaded = Store::open_existing(&path).unwrap().load_cold("cold-1").unwrap();
    // Every process's figures as measured, the failed row's first process, the reasons.
    assert_eq!(loaded, doc);
    assert_eq!(loaded.scenarios[0].rows[2].processes.len(), 1);
    // The tables as the run printed them, one scenario after another with a blank line between.
    let printed: Vec<String> = doc.scenarios.iter().map(|s| table::render(s, doc.run.measure, 2)).collect();
    assert_eq!(table::render_all(&loaded), printed.join("\n"));
}

#[test]
fn each_scenario_is_kept_as_it_is_stored_and_an_interrupted_run_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let doc = fixture::document();
    let mut writer = Store::create_or_open(&path).unwrap();
    writer.insert_cold_run(&doc.run).unwrap();
    let reader = Store::open_existing(&path).unwrap();
    assert_eq!(reader.load_cold("cold-1").unwrap().scenarios, vec![]);
    writer.record_cold_scenario("cold-1", 0, &doc.scenarios[0]).unwrap();
    // Killed here: what it measured is there, and the list says what it lacks.
    assert_eq!(reader.load_cold("cold-1").unwrap().scenarios, doc.scenarios[..1]);
    let summary = ColdRunSummary {
        id: "cold-1".into(),
        measure: "time".into(),
        processes: 2,
        stacks: vec!["openssl".into(), "rustls-ring".into(), "boringssl".into()],
        scenarios: 2,
        measured: 1,
        ok: 2,
        failed: 1,
        unsupported: 0,
    };
    assert_eq!(reader.cold_runs().unwrap(), vec![summary]);
    writer.record_cold_scenario("cold-1", 1, &doc.scenarios[1]).unwrap();
    let summary = &reader.cold_runs().unwrap()[0];
    assert_eq!((summary.measured, summary.ok, summary.failed, summary.unsupported), (2, 4, 1, 1));
    // Cold runs are not runs of `tlsbench run`, and the other way round.
    assert_eq!(reader.runs().unwrap(), vec![]);
    assert!(reader.has_run("cold-1", true).unwrap() && !reader.has_run("cold-1", false).unwrap());
}

#[test]
fn an_unknown_cold_run_names_those_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let mut db = Store::create_or_open(&path).unwrap();
    let none = format!("no cold run `latest` in {} (it holds no cold runs yet)", path.display());
    assert_eq!(db.latest_cold().unwrap_err().to_string(), none);
    store(&mut db, &with_id("c-b"));
    store(&mut db, &with_id("c-a"));
    assert_eq!(db.latest_cold().unwrap(), "c-a");
    let err = db.load_cold("c-x").unwrap_err();
    assert!(matches!(err, StoreError::UnknownColdRun { .. }));
    assert_eq!(err.to_string(), format!("no cold run `c-x` in {} (cold runs: c-b, c-a)", path.display()));
    for n in 0..5 {
        store(&mut db, &with_id(&format!("c-{n}")));
    }
    assert_eq!(
        db.load_cold("c-x").unwrap_err().to_string(),
        format!(
            "no cold run `c-x` in {} (latest cold runs: c-0, c-1, c-2, c-3, c-4; `tlsbench runs` lists all 7)",
            path.display()
        )
    );
}

#[test]
fn a_file_of_the_version_before_cold_runs_is_migrated_keeps_its_runs_and_takes_cold_runs() {
    let dir = tempfile::tempdir().unwrap();
    // Version 16 added the cold tables (schema.rs).
    let previous = 15;
    let path = file_of_version(dir.path(), previous);
    let tables = |path: &Path| {
        let conn = Connection::open(path).unwrap();
        let count = "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'cold_%'";
        (
            conn.query_row(count, [], |r| r.get::<_, i64>(0)).unwrap(),
            conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0)).unwrap(),
        )
    };
    assert_eq!(tables(&path), (0, previous));
    assert!(MIGRATIONS[(previous - FIRST_READABLE_VERSION) as usize].contains("CREATE TABLE cold_runs"));
    let mut db = Store::create_or_open(&path).unwrap();
    assert_eq!(tables(&path), (3, DB_SCHEMA_VERSION));
    assert_eq!(db.runs().unwrap().iter().map(|r| r.id.clone()).collect::<Vec<_>>(), ["old"]);
    assert_eq!(db.cold_runs().unwrap(), vec![]);
    store(&mut db, &fixture::document());
    assert_eq!(db.load_cold("cold-1").unwrap(), fixture::document());
    assert_eq!(db.runs().unwrap().len(), 1);
}
