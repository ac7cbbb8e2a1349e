//! End-to-end: every run kept in the results database, interrupted (killed, Ctrl-C) and resumed,
//! shown, compared and exported again; databases of another schema refused.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use rusqlite::Connection;
use serde_json::Value;

use crate::common::unwrapped;

const FULL: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// tlsbench in `dir`, with its certificates there too.
fn tlsbench(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("tlsbench").unwrap();
    cmd.env("TLSBENCH_DATA_DIR", dir.join("data")).current_dir(dir);
    cmd
}

/// A run of both stacks on one scenario, `samples` samples of `min_time_ms` per cell, in `db`.
fn run_args(db: &Path, samples: u32, min_time_ms: u32) -> Vec<String> {
    let args = ["run", "--stack", "rustls-ring", "--stack", "openssl", "--scenario", FULL, "--warmup-ms", "0"];
    let mut args: Vec<String> = args.map(String::from).to_vec();
    args.extend(["--samples".into(), samples.to_string(), "--min-time-ms".into(), min_time_ms.to_string()]);
    args.extend(["--db".into(), db.display().to_string()]);
    args
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(output: Output) -> String {
    assert!(output.status.success(), "{}\n{}", text(&output.stdout), text(&output.stderr));
    text(&output.stdout)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Reads the database while tlsbench writes it: SQLite's locking makes that safe.
fn query(db: &Path, sql: &str) -> i64 {
    let conn = Connection::open(db).unwrap();
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    conn.query_row(sql, [], |row| row.get(0)).unwrap_or(0)
}

/// Waits until `db` holds at least `samples` samples, or fails after a minute.
fn wait_for_samples(db: &Path, samples: i64, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !db.exists()
        || query(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'samples'") == 0
        || query(db, "SELECT COUNT(*) FROM samples") < samples
    {
        assert!(child.try_wait().unwrap().is_none(), "tlsbench ended before {samples} samples were stored");
        assert!(Instant::now() < deadline, "no {samples} samples stored within a minute");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The only stored run's id.
fn run_id(db: &Path) -> String {
    let conn = Connection::open(db).unwrap();
    conn.query_row("SELECT id FROM runs", [], |row| row.get(0)).unwrap()
}

/// Every stored handshakes_per_s value, by (client stack, side), in the order taken.
fn stored_values(db: &Path) -> Vec<(String, String, Vec<f64>)> {
    let conn = Connection::open(db).unwrap();
    let mut statement = conn
        .prepare(
            "SELECT c.client_stack, v.side, v.value
             FROM sample_values v JOIN cells c ON (c.run_id, c.position) = (v.run_id, v.cell)
             WHERE v.metric = 'handshakes_per_s' ORDER BY c.position, v.side, v.idx",
        )
        .unwrap();
    let mut series: Vec<(String, String, Vec<f64>)> = Vec::new();
    let rows = statement
        .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, f64>(2)?)))
        .unwrap();
    for row in rows {
        let (stack, side, value) = row.unwrap();
        match series.last_mut() {
            Some((s, d, values)) if *s == stack && *d == side => values.push(value),
            _ => series.push((stack, side, vec![value])),
        }
    }
    series
}

fn samples_of(doc: &Value, stack: &str, side: &str) -> Vec<f64> {
    let cell = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["client_stack"] == stack && r["side"] == side && r["metric"] == "handshakes_per_s")
        .unwrap();
    cell["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
}

#[test]
fn a_killed_run_keeps_its_samples_and_resume_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tlsbench"))
        .args(run_args(&db, 6, 40))
        .env("TLSBENCH_DATA_DIR", dir.path().join("data"))
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // One round is two samples (one per stack); kill (SIGKILL, no chance to clean up) right after.
    wait_for_samples(&db, 2, &mut child);
    child.kill().unwrap();
    child.wait().unwrap();

    let kept = stored_values(&db);
    let taken: usize = kept.iter().filter(|(_, side, _)| side == "client").map(|(_, _, v)| v.len()).sum();
    assert!((2..12).contains(&taken), "{taken} samples stored of 12");
    let id = run_id(&db);
    let runs = ok(tlsbench(dir.path()).args(["runs", "--db"]).arg(&db).output().unwrap());
    assert!(runs.contains(&id) && runs.contains(&format!("interrupted: {} samples missing", 12 - taken)), "{runs}");
    let shown = tlsbench(dir.path()).args(["show", &id, "--db"]).arg(&db).output().unwrap();
    assert!(
        unwrapped(&shown.stderr).contains(&format!("`tlsbench run --resume {id} --db {}` takes them", db.display())),
        "{}",
        text(&shown.stderr)
    );

    let json = dir.path().join("resumed.json");
    let resumed = ok(tlsbench(dir.path())
        .args(["run", "--resume", &id, "--db"])
        .arg(&db)
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap());
    let doc = read_json(&json);
    assert_eq!(doc["run"]["id"], id.as_str());
    assert_eq!(doc["run"]["samples"], 6);
    for r in doc["results"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
        // Further samples only in place of those a noisy machine slowed, at most as many again.
        assert!((6..=12).contains(&r["samples"].as_array().unwrap().len()), "{r}");
    }
    // What was measured before the kill is kept, first, not measured again.
    for (stack, side, values) in &kept {
        assert_eq!(samples_of(&doc, stack, side)[..values.len()], values[..], "{stack} {side}");
    }
    let runs = ok(tlsbench(dir.path()).args(["runs", "--db"]).arg(&db).output().unwrap());
    assert!(runs.contains("complete") && !runs.contains("interrupted"), "{runs}");

    // The stored run shows and exports exactly as the run printed and exported it.
    let shown_json = dir.path().join("shown.json");
    let shown = ok(tlsbench(dir.path())
        .args(["show", &id, "--db"])
        .arg(&db)
        .arg("--export-json")
        .arg(&shown_json)
        .output()
        .unwrap());
    assert_eq!(shown, resumed);
    assert_eq!(std::fs::read(&shown_json).unwrap(), std::fs::read(&json).unwrap());
}

#[test]
fn ctrl_c_stops_after_the_current_sample_and_says_how_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tlsbench"))
        .args(run_args(&db, 20, 40))
        .env("TLSBENCH_DATA_DIR", dir.path().join("data"))
        .current_dir(dir.path())
        // Its own process group, so that SIGINT reaches it and its runner as Ctrl-C on a
        // terminal does, and nothing else.
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_samples(&db, 1, &mut child);
    let group = format!("-{}", child.id());
    assert!(std::process::Command::new("kill").args(["-INT", "--", &group]).status().unwrap().success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", text(&output.stderr));
    let id = run_id(&db);
    let stderr = unwrapped(&output.stderr);
    assert!(stderr.contains("stopping after the current sample"), "{stderr}");
    assert!(
        stderr.contains(&format!("`tlsbench run --resume {id} --db {}` measures the rest", db.display())),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "no table for an interrupted run");
    // The runner killed by the same SIGINT did not fail its cell: the run is resumable as it was.
    let cells: Vec<String> = {
        let conn = Connection::open(&db).unwrap();
        let mut statement = conn.prepare("SELECT status || ': ' || COALESCE(reason, '') FROM cells").unwrap();
        statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(query(&db, "SELECT COUNT(*) FROM cells WHERE status = 'ok'"), 2, "{cells:?}\n{stderr}");
    assert!(query(&db, "SELECT COUNT(*) FROM samples") < 40);
}

#[test]
fn stored_runs_compare_with_verdicts_and_export_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let a_json = dir.path().join("a.json");
    // 6 samples per cell: a difference can be significant with 4 kept on each side, and a noisy
    // machine may set samples aside as slowed (with 4 taken, a clean clone's run once found the
    // thousand times slower cell below not significant, most likely with 3 kept: p 0.1 at best).
    // With io: metrics where lower is better, for the smaller-is-better export.
    let run = tlsbench(dir.path())
        .args(run_args(&db, 6, 2))
        .args(["--measure", "time", "--measure", "io"])
        .arg("--export-json")
        .arg(&a_json)
        .output();
    let table = ok(run.unwrap());
    let id = run_id(&db);

    // `show` without a run shows the latest, as `run` printed it; every export works on it.
    assert_eq!(ok(tlsbench(dir.path()).args(["show", "--db"]).arg(&db).output().unwrap()), table);
    let file = |name: &str| dir.path().join(name);
    let exported = tlsbench(dir.path())
        .args(["show", &id, "--db"])
        .arg(&db)
        .args([
            "--export-json",
            "b.json",
            "--export-csv",
            "b.csv",
            "--export-markdown",
            "b.md",
            "--export-bencher",
            "bencher.json",
        ])
        .args(["--export-github-action", "bigger.json", "--export-github-action-smaller", "smaller.json"])
        .output()
        .unwrap();
    ok(exported);
    assert_eq!(std::fs::read(file("b.json")).unwrap(), std::fs::read(&a_json).unwrap());
    // Per stack and side: handshakes_per_s by wall and CPU time, and the io metrics.
    let io_counts =
        tlsbench_harness::protocol::Metric::of(tlsbench_harness::Measure::Io, tlsbench_harness::Kind::HandshakeFull)
            .len();
    assert_eq!(std::fs::read_to_string(file("b.csv")).unwrap().lines().count(), 1 + 2 * 2 * (2 + io_counts));
    assert!(std::fs::read_to_string(file("b.md")).unwrap().contains("## handshakes_per_s (1/s, higher is better)"));
    let bencher = read_json(&file("bencher.json"));
    let server = &bencher[format!("{FULL}/openssl/server")];
    assert!(server["handshakes_per_s"]["value"].as_f64().unwrap() > 0.0, "{bencher}");
    assert!(server["handshakes_per_s"]["lower_value"].as_f64() <= server["handshakes_per_s"]["value"].as_f64());
    let bigger = read_json(&file("bigger.json"));
    let names: Vec<&str> = bigger.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(names.contains(&format!("{FULL}/rustls-ring/client/handshakes_per_s").as_str()), "{names:?}");
    let smaller = read_json(&file("smaller.json"));
    let io_metrics =
        ["/read_calls", "/empty_read_calls", "/write_calls", "/io_calls", "/records_written", "/bytes_written"];
    assert_eq!(smaller.as_array().unwrap().len(), 2 * 2 * io_counts, "{smaller}");
    assert!(
        smaller.as_array().unwrap().iter().all(|e| io_metrics.iter().any(|m| e["name"].as_str().unwrap().ends_with(m))),
        "{smaller}"
    );

    // A run against itself: nothing differs.
    let same =
        ok(tlsbench(dir.path()).args(["compare", &id, &id, "--fail-on-regression", "--db"]).arg(&db).output().unwrap());
    // Verdicts are counted by measure: time's (wall and CPU) apart from io's.
    let (time_cells, io_cells) = (2 * 2 * 2, 2 * 2 * io_counts);
    assert!(
        same.contains(&format!("summary: time 0 better, 0 worse, {time_cells} ~; io 0 better, 0 worse, {io_cells} ~")),
        "{same}"
    );

    // B: the same run with rustls-ring's handshakes a thousand times slower (a file, not a stored
    // run): far beyond the spread of 2 ms samples, so that A's and B's samples cannot overlap.
    let mut slower = read_json(&a_json);
    for r in slower["results"].as_array_mut().unwrap() {
        if r["client_stack"] == "rustls-ring" && r["metric"] == "handshakes_per_s" {
            let slow = |v: &Value| Value::from(v.as_f64().unwrap() / 1000.0);
            r["samples"] = r["samples"].as_array().unwrap().iter().map(slow).collect();
            r["median"] = slow(&r["median"]);
            r["faster_half_mean"] = slow(&r["faster_half_mean"]);
        }
    }
    std::fs::write(file("slower.json"), serde_json::to_vec(&slower).unwrap()).unwrap();
    let regressed = tlsbench(dir.path())
        .args(["compare", &id, "slower.json", "--fail-on-regression", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let report = text(&regressed.stdout);
    assert_eq!(regressed.status.code(), Some(1), "{report}\n{}", text(&regressed.stderr));
    assert_eq!(text(&regressed.stderr), "2 cell(s) worse in B than in A (--fail-on-regression)\n");
    assert!(report.contains(&format!("B: slower.json: run {id}")), "{report}");
    let worse: Vec<&str> = report.lines().filter(|l| l.ends_with(" worse")).collect();
    assert_eq!(worse.len(), 2, "{report}");
    // p: 0.029 with 4 kept samples against 4, the smallest the exact test gives; less with more kept
    // ("<0.001" from 7 against 7).
    let p = |l: &str| l.split_whitespace().rev().nth(1).and_then(|p| p.trim_start_matches('<').parse::<f64>().ok());
    assert!(
        worse.iter().all(|l| l.contains("rustls-ring") && l.contains("0.001x") && p(l).is_some_and(|p| p <= 0.029)),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "summary: time 0 better, 2 worse, {} ~; io 0 better, 0 worse, {io_cells} ~",
            time_cells - 2
        )),
        "{report}"
    );
    // The other way round it is an improvement, and not a failure.
    let improved = ok(tlsbench(dir.path())
        .args(["compare", "slower.json", &id, "--fail-on-regression", "--db"])
        .arg(&db)
        .output()
        .unwrap());
    assert!(
        improved.contains(&format!(
            "summary: time 2 better, 0 worse, {} ~; io 0 better, 0 worse, {io_cells} ~",
            time_cells - 2
        )),
        "{improved}"
    );
    // Eight time rates are too few to find the move they share (docs/usage.md, compare).
    let beside =
        tlsbench(dir.path()).args(["compare", &id, "slower.json", "--beside-shift", "--db"]).arg(&db).output().unwrap();
    assert!(!beside.status.success());
    let said = text(&beside.stderr);
    assert!(said.contains("--beside-shift needs at least 10 time rates judged in both runs"), "{said}");
}

#[test]
fn a_database_of_another_schema_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // The version this tlsbench writes, from a database it made.
    let current = dir.path().join("current.db");
    ok(tlsbench(dir.path()).args(run_args(&current, 1, 1)).output().unwrap());
    let version = query(&current, "PRAGMA user_version");
    assert!(version > 0);

    // Version 2 is upgraded in place (store/tests.rs tests it); 1 and the next are refused.
    for other in [version + 1, 1] {
        let db = dir.path().join(format!("v{other}.db"));
        Connection::open(&db)
            .unwrap()
            .execute_batch(&format!("CREATE TABLE runs (id TEXT PRIMARY KEY); PRAGMA user_version = {other};"))
            .unwrap();
        let expected = format!(
            "error: results database {} has schema version {other}, but this tlsbench ({}) reads only versions 2 \
             to {version}; use the tlsbench that wrote it, or --db PATH to choose another file\n",
            db.display(),
            env!("CARGO_PKG_VERSION")
        );
        let runs: Vec<String> = ["runs", "--db", db.to_str().unwrap()].map(String::from).to_vec();
        for args in [runs, run_args(&db, 2, 2)] {
            let output = tlsbench(dir.path()).args(&args).output().unwrap();
            assert_eq!(output.status.code(), Some(1), "{args:?}");
            assert_eq!(crate::common::one_message(&output.stderr), expected.trim_end(), "{args:?}");
            assert!(output.stdout.is_empty());
        }
        // Left exactly as it was.
        assert_eq!(query(&db, "PRAGMA user_version"), other);
        assert_eq!(query(&db, "SELECT COUNT(*) FROM sqlite_master"), 2); // the table and its index
    }
}

#[test]
fn bad_input_gets_one_message_naming_what_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let missing = dir.path().join("none.db");
    ok(tlsbench(dir.path()).args(run_args(&db, 2, 2)).output().unwrap());
    let id = run_id(&db);
    let (db_arg, missing_arg) = (db.display().to_string(), missing.display().to_string());
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (
            vec!["show", "nope", "--db", &db_arg],
            1,
            format!("error: no run `nope` in {db_arg} (runs: {id}), and there is no file `nope`"),
        ),
        (
            vec!["show", "nope", "--db", &missing_arg],
            1,
            format!(
                "error: `nope` is neither a file nor a run: \
                 there is no results database at {missing_arg} (--db PATH chooses one)"
            ),
        ),
        (
            vec!["runs", "--db", &missing_arg],
            1,
            format!(
                "error: no results database at {missing_arg} (`tlsbench run` creates it; --db PATH chooses another)"
            ),
        ),
        (
            vec!["report", "--baseline", "wolfssl", "--db", &db_arg],
            1,
            format!("error: baseline `wolfssl` is not a stack of run {id} (valid: rustls-ring, openssl)"),
        ),
        (
            vec!["compare", &id, &id, "--threshold", "200", "--db", &db_arg],
            2,
            "error: invalid value '200' for '--threshold <PCT>': \
             `200` is not a percentage from 0 to below 100 (see --help)"
                .into(),
        ),
        (
            vec!["run", "--resume", &id, "--stack", "openssl", "--db", &db_arg],
            2,
            "error: the argument '--resume <RUN>' cannot be used with '--stack <ID>' (see --help)".into(),
        ),
        (vec!["run", "--resume", "nope", "--db", &db_arg], 1, format!("error: no run `nope` in {db_arg} (runs: {id})")),
    ];
    for (args, code, expected) in cases {
        let output = tlsbench(dir.path()).args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(code), "{args:?}: {}", text(&output.stderr));
        assert_eq!(crate::common::one_message(&output.stderr), expected, "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    // Nothing was created by reading.
    assert!(!missing.exists());
    assert!(!PathBuf::from(dir.path()).join("results.db").exists());
}
