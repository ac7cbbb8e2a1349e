//! End-to-end: a `tlsbench cold` run stored in the results database as it printed it, listed by
//! `tlsbench runs`, read back by `cold --show` and exported; an unknown id names those there are.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::Value;

use crate::common::{one_message, read_json, succeeded, tlsbench, QUICK};

const FULL: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// Every figure stored for the only cold run: (scenario, stack, process, side, phase, value).
fn stored(db: &std::path::Path) -> Vec<(String, String, u64, String, String, u64)> {
    let conn = Connection::open(db).unwrap();
    let mut statement = conn
        .prepare(
            "SELECT r.scenario, r.stack, v.process, v.side, v.phase, v.value
             FROM cold_values v JOIN cold_rows r ON (r.run_id, r.position) = (v.run_id, v.cold_row)
             ORDER BY r.position, v.process, v.side, v.phase",
        )
        .unwrap();
    let rows = statement.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)));
    let mut rows: Vec<_> = rows.unwrap().map(Result::unwrap).collect();
    rows.sort();
    rows
}

/// The same figures from the exported JSON document.
fn exported(doc: &Value) -> Vec<(String, String, u64, String, String, u64)> {
    let mut rows = Vec::new();
    for scenario in doc["scenarios"].as_array().unwrap() {
        let name = scenario["scenario"].as_str().unwrap();
        for row in scenario["rows"].as_array().unwrap() {
            let stack = row["stack"].as_str().unwrap();
            for (index, process) in row["processes"].as_array().unwrap().iter().enumerate() {
                let mut figure = |side: &str, phase: &str, value: &Value| {
                    let value = value.as_u64().unwrap();
                    rows.push((name.into(), stack.into(), index as u64, side.into(), phase.into(), value));
                };
                figure("process", "start", &process["start_ns"]);
                for side in ["client", "server"] {
                    for (phase, value) in process[side].as_object().unwrap() {
                        figure(side, phase, value);
                    }
                }
            }
        }
    }
    rows.sort();
    rows
}

#[test]
fn a_cold_run_is_stored_listed_shown_again_and_exported_as_measured() {
    let dir = tempfile::tempdir().unwrap();
    let (db, json) = (dir.path().join("cold.db"), dir.path().join("cold.json"));
    let run = ["cold", "--quick", "--processes", "1", "--stack", "openssl", "--db", "cold.db", "--json", "cold.json"];
    let printed = succeeded(tlsbench(dir.path()).args(run).output().unwrap());
    let doc = read_json(&json);
    let id = doc["run"]["id"].as_str().unwrap().to_string();
    assert_eq!((doc["run"]["measure"].as_str(), doc["run"]["unit"].as_str()), (Some("time"), Some("ns")));
    assert_eq!(doc["run"]["processes"], 1);
    assert!(doc["run"]["environment"]["kernel"].is_string() && doc["run"]["environment"]["cpu"].is_string());
    let scenarios = doc["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 3, "the 3 default scenarios");
    for scenario in scenarios {
        let row = &scenario["rows"][0];
        assert_eq!((row["stack"].as_str(), row["status"].as_str()), (Some("openssl"), Some("ok")), "{row}");
        assert!(row["library"].as_str().unwrap().starts_with("OpenSSL "), "{row}");
        let phases = scenario["phases"].as_array().unwrap();
        for side in ["client", "server"] {
            assert_eq!(row["processes"][0][side].as_object().unwrap().len(), phases.len(), "{row}");
        }
    }

    // The database holds exactly the figures the JSON does, every one of them measured.
    let figures = stored(&db);
    assert_eq!(figures, exported(&doc));
    assert_eq!(figures.len(), 3 + 2 * (3 + 3 + 4), "a start and each phase of each side, per scenario");
    assert!(figures.iter().all(|f| f.5 > 0), "{figures:?}");

    let runs = succeeded(tlsbench(dir.path()).args(["runs", "--db", "cold.db"]).output().unwrap());
    let runs = String::from_utf8(runs.stdout).unwrap();
    assert!(runs.starts_with("cold run "), "{runs}");
    let line = runs.lines().find(|l| l.starts_with(&id)).unwrap_or_else(|| panic!("{runs}"));
    assert!(line.contains(" time ") && line.contains(" openssl ") && line.ends_with(" complete"), "{line}");

    // Read back: the tables as printed, and the same document exported again.
    let show = ["cold", "--show", "--db", "cold.db", "--json", "again.json", "--csv", "again.csv"];
    let shown = succeeded(tlsbench(dir.path()).args(show).output().unwrap());
    assert_eq!(String::from_utf8(shown.stdout).unwrap(), String::from_utf8(printed.stdout).unwrap());
    assert_eq!(read_json(&dir.path().join("again.json")), doc);
    let csv = std::fs::read_to_string(dir.path().join("again.csv")).unwrap();
    assert_eq!(csv.lines().next(), Some("scenario,stack,process,side,phase,value,unit,library,status,reason"));
    assert_eq!(csv.lines().count(), 1 + figures.len());

    let unknown = tlsbench(dir.path()).args(["cold", "--show", "nope", "--db", "cold.db"]).output().unwrap();
    assert!(!unknown.status.success());
    let expected = format!("error: no cold run `nope` in cold.db (cold runs: {id})");
    assert_eq!(one_message(&unknown.stderr), expected);
    // `show` takes runs of `tlsbench run`, and says where a cold one is shown; and the other way round.
    let show = tlsbench(dir.path()).args(["show", &id, "--db", "cold.db"]).output().unwrap();
    assert!(!show.status.success());
    assert!(one_message(&show.stderr).ends_with(&format!("`tlsbench cold --show {id}` prints it")), "{show:?}");
    let run = ["run", "--stack", "openssl", "--scenario", FULL, "--db", "cold.db"];
    succeeded(tlsbench(dir.path()).args(run).args(QUICK).output().unwrap());
    let run_id: String = Connection::open(&db).unwrap().query_row("SELECT id FROM runs", [], |r| r.get(0)).unwrap();
    let shown = tlsbench(dir.path()).args(["cold", "--show", &run_id, "--db", "cold.db"]).output().unwrap();
    assert!(!shown.status.success());
    let expected =
        format!("error: `{run_id}` is a run of `tlsbench run`, not a cold run: `tlsbench show {run_id}` prints it");
    assert_eq!(one_message(&shown.stderr), expected);
    // Both listed: the runs, then the cold runs.
    let runs = succeeded(tlsbench(dir.path()).args(["runs", "--db", "cold.db"]).output().unwrap());
    let runs = String::from_utf8(runs.stdout).unwrap();
    assert!(runs.starts_with("run ") && runs.contains(&format!("\n{run_id} ")), "{runs}");
    assert!(runs.find("\ncold run ").unwrap() > runs.find(&run_id).unwrap(), "{runs}");
}

#[test]
fn a_killed_cold_run_keeps_the_scenarios_it_printed_and_says_it_was_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cold.db");
    // Enough processes that each scenario takes a while: the run is killed after its first.
    let run = ["cold", "--processes", "300", "--stack", "openssl", "--db", "cold.db"];
    let mut child = tlsbench(dir.path()).args(run).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let rows = || {
        let conn = Connection::open(&db).ok()?;
        conn.busy_timeout(Duration::from_secs(10)).unwrap();
        conn.query_row("SELECT COUNT(*) FROM cold_rows", [], |r| r.get::<_, i64>(0)).ok()
    };
    let deadline = Instant::now() + Duration::from_secs(300);
    while rows().unwrap_or(0) == 0 {
        assert!(child.try_wait().unwrap().is_none(), "tlsbench cold ended before its first scenario was stored");
        assert!(Instant::now() < deadline, "no scenario stored within 5 minutes");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let runs = succeeded(tlsbench(dir.path()).args(["runs", "--db", "cold.db"]).output().unwrap());
    let runs = String::from_utf8(runs.stdout).unwrap();
    assert!(runs.lines().nth(1).is_some_and(|l| l.contains(" 1 of 3 ") && l.ends_with(" interrupted")), "{runs}");
    let shown = succeeded(tlsbench(dir.path()).args(["cold", "--show", "--db", "cold.db"]).output().unwrap());
    let (tables, note) = (String::from_utf8(shown.stdout).unwrap(), one_message(&shown.stderr));
    assert_eq!(tables.matches("\ncold ").count() + usize::from(tables.starts_with("cold ")), 1, "{tables}");
    assert!(tables.lines().any(|l| l.starts_with("openssl ")), "{tables}");
    assert!(note.ends_with("was interrupted: 1 of its 3 scenarios were measured"), "{note}");
}
