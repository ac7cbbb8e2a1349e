//! Processes that stay up (docs/sampling.md), played by a fake runner whose rate is steady or
//! keeps rising: each cell's samples come from two processes taking turns, each warmed up once
//! until steady or until the bound; cells interleave round by round across the live processes;
//! which process took each sample and how each warmed up are stored and exported.

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use common::{read_json, succeeded, tlsbench};
use serde_json::Value;
use tlsbench_harness::protocol::PROTOCOL_VERSION;
use tlsbench_harness::Capabilities;

const FULL: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
const RESUMED: &str = "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// A runner holding a fake `go` (a stack with a runtime that warms up: min_warmup_ms) whose
/// sessions log every request as `PID SCENARIO MIN_TIME_MS WARMUP_MS MEASURE` to `log` and reply with a rate
/// that is steady, or rises by 5% with every request when `FAKE_RISING` is set. With `FAKE_STEPS`
/// set, it plays a JIT: each request takes its min_time, and the rate rises in three steps of
/// 16 requests, flat while the reported compiler time grows by 90% of each request's time,
/// but for a quiet moment of 4 requests in the middle of each flat; then a plateau of 400
/// with a compiler at 5%. With `FAKE_GC` set, it reports a collector that takes 4% of each
/// request's measured stretch (twice its min_time), a collection every 50 ms. With
/// `FAKE_ONE_SCENARIO` set, a session refuses every scenario but its first for needing a new
/// process, as a JVM does a scenario that needs other JVM-wide settings (not logged).
fn fake_runner(dir: &Path, log: &Path) {
    let capabilities = serde_json::to_string(&Capabilities { min_warmup_ms: 1, ..Capabilities::everything() }).unwrap();
    let list = format!(
        concat!(
            r#"{{"protocol_version":{PROTOCOL_VERSION},"stacks":[{{"id":"go","#,
            r#""library":"Go crypto/tls go1.0 (a fake)","capabilities":{capabilities}}}]}}"#,
        ),
        PROTOCOL_VERSION = PROTOCOL_VERSION,
        capabilities = capabilities,
    );
    let library = "Go crypto/tls go1.0 (a fake)";
    // One script; concat! only cuts the sample reply's long printf line into pieces.
    let script = format!(
        concat!(
            r#"#!/bin/sh
case "$1" in
list) printf '%s\n' '{list}' ;;
session)
    n=0 first=
    while IFS= read -r line; do
        scenario=$(printf '%s' "$line" | tr '\t' '\n' | sed -n '/^--scenario$/{{n;p;}}')
        [ -z "$first" ] && first=$scenario
        if [ -n "$FAKE_ONE_SCENARIO" ] && [ "$scenario" != "$first" ]; then
            printf '%s\n' '{{"status":"needs_new_process","reason":"pinned by its first scenario"}}'
            continue
        fi
        n=$((n + 1))
        min_time=$(printf '%s' "$line" | tr '\t' '\n' | sed -n '/^--min-time-ms$/{{n;p;}}')
        warmup=$(printf '%s' "$line" | tr '\t' '\n' | sed -n '/^--warmup-ms$/{{n;p;}}')
        measure=$(printf '%s' "$line" | tr '\t' '\n' | sed -n '/^--measure$/{{n;p;}}')
        echo "$$ $scenario $min_time $warmup $measure" >> '{log}'
        rate=1000 jit=
        [ -n "$FAKE_RISING" ] && rising=$((${{rising:-1000}} * 105 / 100)) && rate=$rising
        if [ -n "$FAKE_STEPS" ]; then
            level=$(( (n - 1) / 16 )) within=$(( (n - 1) % 16 ))
            [ $level -gt 3 ] && level=3
            rate=$((100 * (level + 1)))
            busy=$((min_time * 9 / 10))
            [ $level -eq 3 ] && busy=$((min_time / 20))
            [ $level -lt 3 ] && [ $within -ge 6 ] && [ $within -lt 10 ] && busy=0
            compiled=$((${{compiled:-0}} + busy))
            jit=",\"jit_compile_ms\":$compiled"
            sleep "$(printf '0.%03d' "$min_time")"
        fi
        if [ -n "$FAKE_GC" ]; then
            measured=$((2 * min_time))
            jit=",\"gc_collections\":$((measured / 50)),\"gc_ms\":$((measured * 4 / 100)),\"measured_ms\":$measured"
        fi
        printf '{{"status":"ok","client_library":"{library}","server_library":"{library}","iterations":10,"#,
            r#""values":[{{"side":"client","metric":"handshakes_per_s","value":%d,"seconds":0.1}},"#,
            r#"{{"side":"server","metric":"handshakes_per_s","value":%d,"seconds":0.1}}],"negotiated":[]%s}}\n' "#,
            r#"$rate $((rate + n % 2)) "$jit"
    done ;;
*) printf '%s\n' '{{"status":"failed","reason":"this fake only takes sessions"}}' ;;
esac
"#
        ),
        list = list,
        library = library,
        log = log.display()
    );
    let fake = dir.join("tlsbench-runner-fake");
    common::executable(&fake, &script);
}

/// What the fake was asked for: a warm-up window or a sample (which warms up for --warmup-ms, 1
/// here, where a window warms up for none), each of its min_time.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Asked {
    Window(u64),
    Sample(u64),
}

/// A run of the fake `go` on `scenarios` with 4 samples (of --min-time-ms 7, lengthened to a
/// JIT's warm-up window, 100 ms); its JSON, the request log and its table's words.
fn run(rising: bool, scenarios: &[&str], warmup_max_ms: &str) -> (Value, Vec<(String, String, Asked)>, String) {
    let fake: &[&str] = if rising { &["FAKE_RISING"] } else { &[] };
    run_with(fake, scenarios, warmup_max_ms, "4", "7")
}

/// As [`run`], with `samples`, `--min-time-ms` and the fake's variables `fake` set.
fn run_with(
    fake: &[&str],
    scenarios: &[&str],
    warmup_max_ms: &str,
    samples: &str,
    min_time_ms: &str,
) -> (Value, Vec<(String, String, Asked)>, String) {
    let dir = tempfile::tempdir().unwrap();
    let runners = dir.path().join("runners");
    std::fs::create_dir(&runners).unwrap();
    let log = dir.path().join("requests.log");
    fake_runner(&runners, &log);
    let json = dir.path().join("run.json");
    let mut cmd = tlsbench(dir.path());
    cmd.env("TLSBENCH_RUNNER_DIR", &runners).args([
        "run",
        "--stack",
        "go",
        "--samples",
        samples,
        "--min-time-ms",
        min_time_ms,
        "--warmup-ms",
        "1",
    ]);
    cmd.args(["--warmup-max-ms", warmup_max_ms, "--export-json"]).arg(&json);
    for scenario in scenarios {
        cmd.args(["--scenario", scenario]);
    }
    for variable in fake {
        cmd.env(variable, "1");
    }
    let output = succeeded(cmd.output().unwrap());
    let requests = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| {
            let words: Vec<&str> = line.split(' ').collect();
            let ms = words[2].parse().unwrap();
            let asked = if words[3] == "0" { Asked::Window(ms) } else { Asked::Sample(ms) };
            (words[0].to_string(), words[1].to_string(), asked)
        })
        .collect();
    // The table's notes wrap at 120 columns: compared as words.
    let table = String::from_utf8_lossy(&output.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    (read_json(&json), requests, table)
}

/// The result of `scenario` for the client side.
fn client_result<'a>(doc: &'a Value, scenario: &str) -> &'a Value {
    let results = doc["results"].as_array().unwrap();
    results
        .iter()
        .find(|r| r["scenario"] == scenario && r["side"] == "client" && r["metric"] == "handshakes_per_s")
        .unwrap()
}

#[test]
fn a_steady_stack_warms_up_briefly_once_per_process_and_its_two_processes_take_turns() {
    let (doc, requests, table) = run(false, &[FULL], "20000");
    let result = client_result(&doc, FULL);
    // Samples 0..4 from forks 0, 1, 0, 1.
    assert_eq!(result["sample_forks"], serde_json::json!([0, 1, 0, 1]));
    let warmups = result["warmups"].as_array().unwrap();
    assert_eq!(warmups.len(), 2, "{warmups:?}");
    for warmup in warmups {
        assert_eq!(warmup["steady"], true, "{warmup}");
        // Steady from the first windows: the eight the rule compares, far from the bound.
        assert_eq!(warmup["windows"], 8, "{warmup}");
        assert!(warmup["ms"].as_f64().unwrap() < 20_000.0, "{warmup}");
    }
    // Two processes, each warmed up by its own windows, of the run's 7 ms (it reports no JIT),
    // before its samples, which last as long as a JIT's window (100 ms), not 7.
    let pids: BTreeSet<&str> = requests.iter().map(|(pid, _, _)| pid.as_str()).collect();
    assert_eq!(pids.len(), 2, "{requests:?}");
    for pid in pids {
        let asked: Vec<Asked> = requests.iter().filter(|(p, _, _)| p == pid).map(|(_, _, a)| *a).collect();
        let expected = [[Asked::Window(7); 8].as_slice(), &[Asked::Sample(100); 2]].concat();
        assert_eq!(asked, expected, "process {pid}");
    }
    let expected = concat!(
        "warm-up: 1 ms per sample; the stacks with a JIT or a collector ran in processes that stayed up, ",
        "warmed up for each scenario until the rate stopped rising: go ",
    );
    assert!(table.contains(expected), "{table}");
    assert!(!table.contains("still rising"), "{table}");
}

#[test]
fn a_stack_that_never_settles_warms_up_until_the_bound_and_the_table_says_so() {
    let (doc, _, table) = run(true, &[FULL], "1000");
    let result = client_result(&doc, FULL);
    let warmups = result["warmups"].as_array().unwrap();
    assert_eq!(warmups.len(), 2);
    // Ended by the bound, not by a verdict (however many windows a loaded machine fits in it).
    for warmup in warmups {
        assert_eq!(warmup["steady"], false, "{warmup}");
        assert!(warmup["ms"].as_f64().unwrap() >= 1000.0, "{warmup}");
    }
    // The forks' figures differ (each rises with its own count): the interval spans both, each
    // fork's figure the mean of its faster half, as the cell's is (docs/sampling.md).
    let samples: Vec<f64> = result["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let ci = result["ci95"].as_array().unwrap();
    let forks: Vec<u64> = result["sample_forks"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    for fork in [0, 1] {
        let of_fork: Vec<f64> = samples.iter().zip(&forks).filter(|(_, f)| **f == fork).map(|(v, _)| *v).collect();
        let figure = crate::common::faster_half_mean(of_fork);
        assert!(
            ci[0].as_f64().unwrap() <= figure && figure <= ci[1].as_f64().unwrap(),
            "fork {fork}: {figure} outside {ci:?}"
        );
    }
    assert!(
        table.contains("still rising at the bound (--warmup-max-ms), measured as they were (^): go 2 of 2"),
        "{table}"
    );
    // Its cells are marked, and two processes cover the spread between them.
    assert!(table.contains(" ^ "), "{table}");
    assert!(!table.contains("one process per cell"), "{table}");
}

#[test]
fn a_jit_that_rises_in_steps_warms_up_past_its_last_step_and_is_measured_on_its_plateau() {
    // One process (--forks 1, as --quick takes); windows of 100 ms once its first (of the run's
    // 7 ms) has reported a JIT, 16 to a step.
    let (doc, requests, table) = run_with(&["FAKE_STEPS"], &[FULL], "20000", "1", "7");
    let result = client_result(&doc, FULL);
    let warmups = result["warmups"].as_array().unwrap();
    assert_eq!(warmups.len(), 1, "{warmups:?}");
    assert_eq!(warmups[0]["steady"], true, "{warmups:?}");
    // The last step comes with the 49th request: a warm-up that ended before it ended on a step,
    // in a flat stretch with a quiet moment of the compiler.
    let windows = warmups[0]["windows"].as_u64().unwrap();
    assert!(windows > 48, "ended after {windows} windows, before the last step: {warmups:?}");
    let asked: Vec<Asked> = requests.iter().map(|(_, _, a)| *a).take(windows as usize).collect();
    assert_eq!(asked[..2], [Asked::Window(7), Asked::Window(100)], "{requests:?}");
    assert!(asked[1..].iter().all(|a| *a == Asked::Window(100)), "{requests:?}");
    assert_eq!(result["median"].as_f64().unwrap(), 400.0, "{result}");
    assert_eq!(requests.iter().filter(|(_, _, a)| matches!(a, Asked::Sample(_))).count(), 1, "{requests:?}");
    assert!(!table.contains("still rising") && !table.contains(" ^ "), "{table}");
    assert!(table.contains("one process per cell (--quick takes one, --forks N takes N)"), "{table}");
}

#[test]
fn a_collector_that_takes_much_of_the_time_lengthens_its_cells_samples() {
    // Windows of the run's 25 ms (no JIT), each a stretch of 50 ms holding one collection.
    let (doc, requests, table) = run_with(&["FAKE_GC"], &[FULL], "20000", "2", "25");
    // A collection every 50 ms costing 4%: a sample's stretch must hold 50 × (4 / 1)² = 800 ms
    // for its rate to move by at most 1% with the collections in it; at 2 ms of stretch per ms
    // of each side's time, 400 ms each side.
    let result = client_result(&doc, FULL);
    for warmup in result["warmups"].as_array().unwrap() {
        assert_eq!(warmup["gc"]["sample_ms"], 400, "{warmup}");
        assert_eq!((warmup["gc"]["per_s"].as_f64(), warmup["gc"]["percent"].as_f64()), (Some(20.0), Some(4.0)));
    }
    let samples: Vec<Asked> = requests.iter().map(|(_, _, a)| *a).filter(|a| matches!(a, Asked::Sample(_))).collect();
    assert_eq!(samples, [Asked::Sample(400); 2], "{requests:?}");
    assert!(
        table.contains(
            "samples lengthened for the collector (docs/sampling.md): go 2 processes to 400 ms \
                        (20 collections/s, 4.0% of the time)"
        ),
        "{table}"
    );
}

#[test]
fn io_cells_take_a_few_samples_of_the_run_s_length_from_the_warm_processes() {
    // The collector of the test above asks the time cell's samples for 400 ms; io's counts per
    // handshake do not move with it, so its samples take the run's 25 ms, and three of them (its
    // counts repeat) against the time cell's twenty, neither given by --samples.
    let dir = tempfile::tempdir().unwrap();
    let runners = dir.path().join("runners");
    std::fs::create_dir(&runners).unwrap();
    let log = dir.path().join("requests.log");
    fake_runner(&runners, &log);
    let mut cmd = tlsbench(dir.path());
    cmd.env("TLSBENCH_RUNNER_DIR", &runners).env("FAKE_GC", "1").args(["run", "--stack", "go", "--scenario", FULL]);
    cmd.args(["--measure", "time", "--measure", "io", "--min-time-ms", "25", "--warmup-ms", "1"]);
    succeeded(cmd.args(["--forks", "1", "--warmup-max-ms", "20000"]).output().unwrap());
    let log = std::fs::read_to_string(&log).unwrap();
    // Samples (not windows, which warm up for 0 ms) by measure, as `MIN_TIME_MS` each.
    let samples = |measure: &str| -> Vec<u64> {
        let words = log.lines().map(|line| line.split(' ').collect::<Vec<_>>());
        words.filter(|w| w[3] != "0" && w[4] == measure).map(|w| w[2].parse().unwrap()).collect()
    };
    assert_eq!(samples("io"), [25; 3], "{log}");
    assert_eq!(samples("time"), [400; 20], "{log}");
}

#[test]
fn cells_interleave_round_by_round_across_their_live_processes() {
    let (doc, requests, _) = run(false, &[FULL, RESUMED], "20000");
    // One process per fork serves both scenarios, warmed up for each in turn (its windows of the
    // run's 7 ms), then measured.
    let pids: BTreeSet<&str> = requests.iter().map(|(pid, _, _)| pid.as_str()).collect();
    assert_eq!(pids.len(), 2, "{requests:?}");
    for pid in &pids {
        for scenario in [FULL, RESUMED] {
            let asked: Vec<Asked> =
                requests.iter().filter(|(p, s, _)| p == pid && s == scenario).map(|(_, _, a)| *a).collect();
            let expected = [[Asked::Window(7); 8].as_slice(), &[Asked::Sample(100); 2]].concat();
            assert_eq!(asked, expected, "process {pid}, {scenario}");
        }
    }
    // The measured samples, in the order taken: each round holds one of each cell.
    let measured: Vec<&str> =
        requests.iter().filter(|(_, _, a)| matches!(a, Asked::Sample(_))).map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(measured.len(), 8);
    for round in measured.chunks(2) {
        assert_ne!(round[0], round[1], "a round took two samples of one cell: {measured:?}");
    }
    for scenario in [FULL, RESUMED] {
        assert_eq!(client_result(&doc, scenario)["sample_forks"], serde_json::json!([0, 1, 0, 1]));
    }
}

#[test]
fn a_scenario_that_a_process_refuses_gets_processes_of_its_own() {
    let (doc, requests, _) = run_with(&["FAKE_ONE_SCENARIO"], &[FULL, RESUMED], "20000", "4", "7");
    let mut pids_of: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for (pid, scenario, _) in &requests {
        pids_of.entry(scenario).or_default().insert(pid);
    }
    assert!(pids_of.values().all(|pids| pids.len() == 2), "{pids_of:?}");
    assert!(pids_of[FULL].is_disjoint(&pids_of[RESUMED]), "{pids_of:?}");
    // Nothing failed: each cell took its four samples, from its two processes in turn.
    for scenario in [FULL, RESUMED] {
        let result = client_result(&doc, scenario);
        assert_eq!(result["status"], "ok", "{result}");
        assert_eq!(result["sample_forks"], serde_json::json!([0, 1, 0, 1]));
    }
}

#[test]
fn a_run_that_would_keep_too_many_processes_up_takes_its_scenarios_in_batches() {
    // Over 30 scenarios, two processes each (each refuses the others): more than a run keeps up
    // at once (48).
    let globs = ["handshake-full_1.3_*_ecdsa-p256_aes-128-gcm*", "handshake-full_1.2_*_ecdsa-p256_aes-128-gcm*"];
    let (doc, requests, _) = run_with(&["FAKE_ONE_SCENARIO"], &globs, "20000", "2", "7");
    let scenarios: BTreeSet<&str> = requests.iter().map(|(_, s, _)| s.as_str()).collect();
    assert!(scenarios.len() * 2 > 48, "{} scenarios", scenarios.len());
    // Each process's life, from its first request to its last: at most 48 overlap.
    let mut lives: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, (pid, _, _)) in requests.iter().enumerate() {
        lives.entry(pid).and_modify(|(_, last)| *last = i).or_insert((i, i));
    }
    assert_eq!(lives.len(), scenarios.len() * 2);
    let most = (0..requests.len())
        .map(|i| lives.values().filter(|(first, last)| *first <= i && i <= *last).count())
        .max()
        .unwrap();
    assert!(most <= 48, "{most} processes up at once");
    // Every cell still took its two samples, one from each of its processes.
    let results = doc["results"].as_array().unwrap();
    assert!(
        results.iter().filter(|r| r["side"] == "client").all(|r| r["sample_forks"] == serde_json::json!([0, 1])),
        "{results:?}"
    );
}

#[test]
fn a_resumed_run_takes_its_samples_with_the_run_s_forks_and_warm_up_bound() {
    // One process per cell (--forks 1), warmed up for at most 1 s, of a rate that never settles:
    // without them, a resumed run would take two processes, each warmed up for 30 s.
    let dir = tempfile::tempdir().unwrap();
    let runners = dir.path().join("runners");
    std::fs::create_dir(&runners).unwrap();
    fake_runner(&runners, &dir.path().join("requests.log"));
    let db = dir.path().join("runs.db");
    let tlsbench = || {
        let mut cmd = tlsbench(dir.path());
        cmd.env("TLSBENCH_RUNNER_DIR", &runners).env("FAKE_RISING", "1").arg("run").arg("--db").arg(&db);
        cmd
    };
    let settings = ["--forks", "1", "--warmup-max-ms", "1000", "--samples", "4", "--min-time-ms", "7"];
    succeeded(
        tlsbench().args(["--stack", "go", "--scenario", FULL, "--warmup-ms", "1"]).args(settings).output().unwrap(),
    );
    // Its last two samples lost, as if it had been stopped after two.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("DELETE FROM sample_values WHERE idx >= 2; DELETE FROM samples WHERE idx >= 2;").unwrap();
    let id: String = conn.query_row("SELECT id FROM runs", [], |row| row.get(0)).unwrap();
    drop(conn);

    let json = dir.path().join("resumed.json");
    succeeded(tlsbench().args(["--resume", &id, "--export-json"]).arg(&json).output().unwrap());
    let doc = read_json(&json);
    let result = client_result(&doc, FULL);
    // Every sample from the cell's one process: the run's, then the resumed run's.
    assert_eq!(result["sample_forks"], serde_json::json!([0, 0, 0, 0]), "{result}");
    let warmups = result["warmups"].as_array().unwrap();
    assert_eq!(warmups.len(), 2, "one process warmed up in each: {warmups:?}");
    for warmup in warmups {
        // Ended by the run's bound, 1 s: a rate that never settles warms up until its bound.
        assert_eq!(warmup["steady"], false, "{warmup}");
        assert!(warmup["ms"].as_f64().unwrap() < 30_000.0, "{warmup}");
    }
}
