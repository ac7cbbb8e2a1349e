//! End-to-end: the threads axis (`run --threads N`). N independent pairs, one per thread, in
//! one runner: the runner reports each thread's rates, tlsbench sums them into the aggregate,
//! measures one thread in the same run, and reports the rate per thread with its scaling
//! efficiency against that one thread; with `--contexts`, threads that share one server config
//! and one client config, as a multi-threaded server does, beside threads with their own.
//! Combinations that cannot be measured so are errors or n/a cells that name what is valid.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tlsbench_harness::protocol::{sum_threads, Metric, MetricValue, Reply};
use tlsbench_harness::Side;

use crate::common;
use crate::fake_go;
use common::{succeeded, tlsbench};
use fake_go::{runner_dir, runners_with_a_runtime_stack};

/// The one-thread rate an efficiency is against: the mean over the CPUs of each CPU's one-thread
/// figure, where the row's samples were pinned to each in turn (docs/axes.md); else its figure.
fn one_thread_reference(one: &Value) -> f64 {
    let (samples, cpus) = (one["samples"].as_array().unwrap(), one["sample_cpus"].as_array());
    let Some(cpus) = cpus.filter(|c| c.len() == samples.len()) else { return common::figure(one) };
    let mut ids: Vec<u64> = cpus.iter().map(|c| c[0].as_u64().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    let on = |id: u64| {
        let on_cpu = samples.iter().zip(cpus).filter(|(_, c)| c[0] == id).map(|(v, _)| v.as_f64().unwrap());
        common::faster_half_mean(on_cpu.collect())
    };
    ids.iter().map(|&id| on(id)).sum::<f64>() / ids.len() as f64
}

const SCENARIO: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

fn runner_sample(data: &Path, stack: &str, scenario: &str, extra: &[&str]) -> Reply {
    let output = Command::new(runner_dir().join("tlsbench-runner-openssl"))
        .args([
            "sample",
            "--client",
            stack,
            "--server",
            stack,
            "--scenario",
            scenario,
            "--min-time-ms",
            "20",
            "--warmup-ms",
            "5",
        ])
        .arg("--data-dir")
        .arg(data)
        .args(extra)
        .output()
        .unwrap();
    serde_json::from_slice(&succeeded(output).stdout).unwrap()
}

#[test]
fn the_runner_measures_each_thread_and_the_values_are_their_sums() {
    let data = tempfile::tempdir().unwrap();
    let data = data.path();
    for (stack, scenario) in [
        ("openssl", SCENARIO),
        ("rustls-ring", SCENARIO),
        ("rustls-aws-lc-rs", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm"),
    ] {
        let Reply::Ok(report) = runner_sample(data, stack, scenario, &["--threads", "3"]) else { panic!("{stack}") };
        assert_eq!(report.threads.len(), 3, "{stack}");
        // Every thread completed verified handshakes (the gates fail the sample otherwise),
        // and each side of each thread has its own rates.
        for thread in &report.threads {
            assert!(thread.iterations > 0, "{stack}: {thread:?}");
            for side in [Side::Client, Side::Server] {
                assert!(thread.values.iter().any(|v| v.side == side && v.value > 0.0), "{stack} {side:?}: {thread:?}");
            }
        }
        assert_eq!(report.iterations, report.threads.iter().map(|t| t.iterations).sum::<u64>());
        // Equal but for the last bit: serde_json's default parser does not round every float exactly.
        let sums = sum_threads(&report.threads);
        assert_eq!(report.values.len(), sums.len(), "{stack}");
        for (value, sum) in report.values.iter().zip(&sums) {
            assert_eq!((value.side, value.metric), (sum.side, sum.metric), "{stack}");
            assert!(
                (value.value - sum.value).abs() <= 1e-12 * sum.value && (value.seconds - sum.seconds).abs() <= 1e-12,
                "{stack}: {value:?} {sum:?}"
            );
        }
        assert!(report.negotiated_by_side().iter().all(Option::is_some), "{stack}: {:?}", report.negotiated);
        // One pair replies as before: no per-thread part; asked for one thread, the pair runs on
        // a thread of its own and replies as the threads do.
        let Reply::Ok(one) = runner_sample(data, stack, scenario, &[]) else { panic!("{stack}") };
        assert!(one.threads.is_empty());
        let Reply::Ok(one) = runner_sample(data, stack, scenario, &["--threads", "1"]) else { panic!("{stack}") };
        assert_eq!(one.threads.len(), 1, "{stack}");
        assert_eq!(one.iterations, one.threads[0].iterations, "{stack}");
    }
    let Reply::Unsupported { reason } =
        runner_sample(data, "openssl", SCENARIO, &["--threads", "2", "--measure", "io"])
    else {
        panic!()
    };
    assert_eq!(
        reason,
        "--threads applies to the time measure (rates that can scale with threads); measure io is taken with one pair"
    );
}

/// The one-thread row of a run with `--threads N` runs its pair on a thread of its own (`sample
/// --threads 1`), as each of the N threads does, so that they compare like with like (glibc's
/// malloc trims the main thread's heap alone); a run without `--threads` keeps the main thread.
#[test]
fn a_threaded_run_measures_its_one_thread_row_on_a_thread_of_its_own() {
    let (dir, runners) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = dir.path().join("runner-arguments");
    let runner = runner_dir().join("tlsbench-runner-openssl");
    let wrapper = format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n", log.display(), runner.display());
    let wrapped = runners.path().join("tlsbench-runner-openssl");
    common::executable(&wrapped, &wrapper);
    for threads in [&["--threads", "2"][..], &[]] {
        let _ = std::fs::remove_file(&log);
        let output = tlsbench(dir.path())
            .env("TLSBENCH_RUNNER_DIR", runners.path())
            .args(["run", "--stack", "openssl", "--scenario", SCENARIO, "--samples", "1"])
            .args(["--min-time-ms", "5", "--warmup-ms", "1"])
            .args(threads)
            .output()
            .unwrap();
        succeeded(output);
        let arguments = std::fs::read_to_string(&log).unwrap();
        let samples: Vec<&str> = arguments.lines().filter(|l| l.starts_with("sample ")).collect();
        let with = |flag: &str| samples.iter().filter(|l| l.contains(flag)).count();
        match threads.is_empty() {
            true => assert_eq!((samples.len(), with("--threads")), (1, 0), "{arguments}"),
            // The one-thread row takes a sample on each CPU of the two threads, each pinned
            // (threads_pinned.rs), however few samples the run asks for.
            false => {
                let cpus = tlsbench_harness::pin::allowed_cpus().len().min(2);
                let expected = (cpus + 1, cpus, 1, cpus + 1);
                let seen = (samples.len(), with("--threads 1 "), with("--threads 2 "), with("--cpus "));
                assert_eq!(seen, expected, "{arguments}");
            }
        }
    }
}

#[test]
fn the_runner_s_threads_share_one_config_and_every_measured_handshake_resumes() {
    let data = tempfile::tempdir().unwrap();
    let data = data.path();
    for (stack, scenario) in [
        // One thread's session is resumed by the other's connections: the server's session cache
        // and the client's saved session are the shared configs'.
        ("openssl", "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm"),
        ("gnutls", "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm"),
        ("rustls-aws-lc-rs", "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm"),
        ("s2n-tls", "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm"),
    ] {
        for contexts in ["shared", "own"] {
            let reply = runner_sample(data, stack, scenario, &["--threads", "2", "--contexts", contexts]);
            let Reply::Ok(report) = reply else { panic!("{stack} {contexts}: {reply:?}") };
            assert_eq!(report.threads.len(), 2, "{stack}");
            assert!(report.threads.iter().all(|t| t.iterations > 0), "{stack} {contexts}: {:?}", report.threads);
            // The gates checked that every measured handshake of both threads resumed; the
            // reply says what they negotiated, each side.
            for negotiated in &report.negotiated {
                assert!(negotiated.negotiated.contains(", resumed"), "{stack} {contexts}: {negotiated:?}");
            }
            assert_eq!(report.negotiated.len(), 2, "{stack} {contexts}");
        }
    }
}

#[test]
fn a_run_with_threads_gives_one_and_two_threads_the_rate_per_thread_and_the_efficiency() {
    let (dir, runners) = (tempfile::tempdir().unwrap(), runners_with_a_runtime_stack());
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let output = tlsbench(dir.path())
        .env("TLSBENCH_RUNNER_DIR", runners.path())
        .args([
            "run",
            "--stack",
            "openssl",
            "--stack",
            "rustls-ring",
            "--stack",
            "go",
            "--threads",
            "2",
            "--scenario",
            SCENARIO,
        ])
        .args(["--samples", "2", "--min-time-ms", "20", "--warmup-ms", "5", "--export-json"])
        .arg(&json)
        .arg("--export-csv")
        .arg(&csv)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}: {stderr}"))).unwrap();
    let results = doc["results"].as_array().unwrap();
    let find = |stack: &str, metric: &str, side: &str, threads: Option<u64>| {
        let threads = threads.map_or(Value::Null, Value::from);
        let found = results.iter().find(|r| {
            r["client_stack"] == stack && r["metric"] == metric && r["side"] == side && r["threads"] == threads
        });
        found.unwrap_or_else(|| panic!("{stack} {metric} {side} {threads} in {results:?}")).clone()
    };
    for label in ["openssl (2 threads)", "rustls-ring (2 threads)", "handshakes_per_s_per_thread"] {
        assert!(stdout.contains(label), "{label} in:\n{stdout}");
    }
    for stack in ["openssl", "rustls-ring"] {
        for side in ["client", "server"] {
            let one = find(stack, "handshakes_per_s", side, None);
            let two = find(stack, "handshakes_per_s", side, Some(2));
            assert_eq!((&one["status"], &two["status"]), (&Value::from("ok"), &Value::from("ok")), "{one} {two}");
            let per_thread = find(stack, "handshakes_per_s_per_thread", side, Some(2));
            let (aggregate, one_thread) = (common::figure(&two), one_thread_reference(&one));
            // The rate per thread is the aggregate's share of each thread; the efficiency is
            // against the one-thread cell of this run.
            assert!((common::figure(&per_thread) - aggregate / 2.0).abs() <= 1e-9 * aggregate, "{per_thread}");
            let efficiency = per_thread["scaling_efficiency"].as_f64().unwrap();
            assert!(
                (efficiency - aggregate / (2.0 * one_thread)).abs() < 1e-12,
                "{efficiency} {aggregate} {one_thread}"
            );
            // The one-thread row of the per-thread block is the one-thread cell's own rate.
            assert_eq!(find(stack, "handshakes_per_s_per_thread", side, None)["median"], one["median"]);
            // Its interval holds it, and the table prints both.
            let interval = per_thread["scaling_efficiency_ci"].as_array().expect("an interval").clone();
            let [low, high] = [0, 1].map(|i| interval[i].as_f64().unwrap());
            assert!(low <= efficiency && efficiency <= high, "{low} {efficiency} {high}");
            let spread = (efficiency - low).max(high - efficiency) * 100.0;
            assert!(stdout.contains(&format!("({:.0} ±{spread:.0}%)", efficiency * 100.0)), "{stdout}");
        }
    }
    // The stack whose runner takes no --threads: its thread cells are n/a saying why (its
    // one-thread cell is asked, and the fake runner fails it).
    let go = find("go", "handshakes_per_s", "server", Some(2));
    assert_eq!(go["status"], "unsupported");
    assert_eq!(
        go["reason"],
        "go: its runner measures one pair per sample (no `sample --threads`), so it takes no part in --threads"
    );
    assert_eq!(find("go", "handshakes_per_s", "server", None)["status"], "failed");
    assert!(find("go", "handshakes_per_s_per_thread", "server", Some(2))["scaling_efficiency"].is_null());

    let csv = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column =
        |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}: {csv}"));
    let (threads, scaling_efficiency) = (column("threads"), column("scaling_efficiency"));
    let (side, metric) = (column("side"), column("metric"));
    let row: Vec<&str> = csv
        .lines()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|r| {
            r[1..3] == ["openssl", "openssl"]
                && [r[side], r[metric]] == ["server", "handshakes_per_s_per_thread"]
                && r[threads] == "2"
        })
        .unwrap();
    let efficiency: f64 = row[scaling_efficiency].parse().unwrap();
    let in_json =
        find("openssl", "handshakes_per_s_per_thread", "server", Some(2))["scaling_efficiency"].as_f64().unwrap();
    assert!((efficiency - in_json).abs() < 1e-12, "{efficiency} {in_json}");
}

#[test]
fn a_run_with_both_contexts_gives_each_its_cells_and_efficiency_against_the_same_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    let scenario = "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm";
    let output = tlsbench(dir.path())
        .env("TLSBENCH_RUNNER_DIR", runner_dir())
        .args(["run", "--stack", "openssl", "--stack", "rustls-ring", "--scenario", scenario])
        .args(["--threads", "2", "--contexts", "both"])
        .args(["--samples", "2", "--min-time-ms", "20", "--warmup-ms", "5", "--export-json"])
        .arg(&json)
        .arg("--export-csv")
        .arg(&csv)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}: {stderr}"))).unwrap();
    let results = doc["results"].as_array().unwrap();
    let find = |stack: &str, metric: &str, threads: Option<u64>, contexts: Option<&str>| {
        let (threads, contexts) = (threads.map_or(Value::Null, Value::from), contexts.map_or(Value::Null, Value::from));
        let found = results.iter().find(|r| {
            r["client_stack"] == stack
                && r["metric"] == metric
                && r["side"] == "server"
                && r["threads"] == threads
                && r["contexts"] == contexts
        });
        found.unwrap_or_else(|| panic!("{stack} {metric} {threads} {contexts} in {results:?}")).clone()
    };
    for stack in ["openssl", "rustls-ring"] {
        let one = one_thread_reference(&find(stack, "handshakes_per_s", None, None));
        for contexts in ["own", "shared"] {
            let two = find(stack, "handshakes_per_s", Some(2), Some(contexts));
            assert_eq!(two["status"], "ok", "{two}");
            // Each mode's efficiency is its own rate per thread over the same one thread's.
            let per_thread = find(stack, "handshakes_per_s_per_thread", Some(2), Some(contexts));
            let efficiency = per_thread["scaling_efficiency"].as_f64().unwrap();
            assert!((efficiency - common::figure(&two) / (2.0 * one)).abs() < 1e-12, "{per_thread}");
            let interval = per_thread["scaling_efficiency_ci"].as_array().expect("an interval").clone();
            assert!(interval[0].as_f64().unwrap() <= efficiency && efficiency <= interval[1].as_f64().unwrap());
        }
    }
    for label in ["openssl (2 threads, own contexts)", "rustls-ring (2 threads, shared context)"] {
        assert!(stdout.contains(label), "{label} in:\n{stdout}");
    }
    // The CSV keys each row by its mode too.
    let csv = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let contexts = header.iter().position(|h| *h == "contexts").expect("a contexts column");
    assert_eq!(header[contexts - 1], "threads");
    let modes: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').nth(contexts).unwrap()).collect();
    for mode in ["", "own", "shared"] {
        assert!(modes.contains(&mode), "{mode:?} in {modes:?}");
    }
}

#[test]
fn threads_with_no_time_measure_or_over_tcp_are_errors_naming_what_is_valid() {
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tlsbench")).arg("run").args(args).output().unwrap();
        (output.status.code(), crate::common::unwrapped(&output.stderr))
    };
    let (code, stderr) = run(&["--threads", "2", "--measure", "heap"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("--threads applies to the time measure (valid: --measure time); this run measures heap"),
        "{stderr}"
    );
    let (_, stderr) = run(&["--threads", "2", "--transport", "tcp"]);
    let expected = "--threads runs N pairs inside one runner, in memory; \
                    over --transport tcp a server scales with --workers N";
    assert!(stderr.contains(expected), "{stderr}");
    let (_, stderr) = run(&["--threads", "2", "--process", "split"]);
    assert!(stderr.contains("(valid with --threads: auto, both)"), "{stderr}");
    let (code, stderr) = run(&["--threads", "0"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("0 is not in 1..=1024"), "{stderr}");
    // What threads share needs threads; and is one of three modes.
    let needs_threads = "--contexts chooses what the threads of --threads N share (valid: own, shared, both), so it \
                         needs --threads N with N > 1, e.g. --threads 2 --contexts both";
    for args in [&["--contexts", "shared"][..], &["--contexts", "both", "--threads", "1"]] {
        let (code, stderr) = run(args);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains(needs_threads), "{args:?}: {stderr}");
    }
    let (_, stderr) = run(&["--contexts", "shared", "--transport", "tcp", "--workers", "2"]);
    assert!(stderr.contains("over --transport tcp a server's workers always share its context"), "{stderr}");
    let (code, stderr) = run(&["--threads", "2", "--contexts", "one"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("invalid value 'one' for '--contexts <MODE>'"), "{stderr}");
    assert!(stderr.contains("[possible values: own, shared, both]"), "{stderr}");
}

#[test]
fn the_runner_s_threads_each_report_contended_waits_on_both_sides() {
    let data = tempfile::tempdir().unwrap();
    let reply = runner_sample(data.path(), "openssl", SCENARIO, &["--threads", "2", "--contexts", "shared"]);
    let Reply::Ok(report) = reply else { panic!("{reply:?}") };
    let waits = |values: &[MetricValue], side| {
        let found = values.iter().find(|v| v.side == side && v.metric == Metric::ContendedWaitsPerHandshake);
        found.unwrap_or_else(|| panic!("no {side:?} contended waits in {values:?}")).value
    };
    for thread in &report.threads {
        for side in [Side::Client, Side::Server] {
            assert!(waits(&thread.values, side) >= 0.0, "{thread:?}");
        }
    }
    // The sample's own: the threads' waits over all their handshakes.
    let total = |side| report.threads.iter().map(|t| waits(&t.values, side) * t.iterations as f64).sum::<f64>();
    for side in [Side::Client, Side::Server] {
        let expected = total(side) / report.iterations as f64;
        assert!((waits(&report.values, side) - expected).abs() <= 1e-9 * expected.max(1.0), "{report:?}");
    }
}

#[test]
fn a_run_with_shared_contexts_shows_each_side_s_contended_waits_after_the_rates_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .env("TLSBENCH_RUNNER_DIR", runner_dir())
        .args(["run", "--stack", "openssl", "--scenario", SCENARIO, "--threads", "2", "--contexts", "shared"])
        .args(["--samples", "2", "--min-time-ms", "20", "--warmup-ms", "5", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}: {stderr}"))).unwrap();
    let results = doc["results"].as_array().unwrap();
    let find = |side: &str, threads: Option<u64>| {
        let threads = threads.map_or(Value::Null, Value::from);
        let found = results
            .iter()
            .find(|r| r["metric"] == "contended_waits_per_handshake" && r["side"] == side && r["threads"] == threads);
        found.unwrap_or_else(|| panic!("{side} {threads} in {results:?}")).clone()
    };
    for side in ["client", "server"] {
        let two = find(side, Some(2));
        assert_eq!((&two["status"], &two["unit"], &two["better"]), (&"ok".into(), &"waits".into(), &"lower".into()));
        assert!(two["median"].as_f64().is_some_and(|m| m >= 0.0), "{two}");
        // One pair on one thread has no other thread to wait for: its library calls sleep on no
        // lock (a rare sleep of the kernel's is allowed for).
        let one = find(side, None);
        assert!(one["median"].as_f64().is_some_and(|m| m < 0.01), "{one}");
    }
    let at = |text: &str| stdout.find(text).unwrap_or_else(|| panic!("{text} in:\n{stdout}"));
    assert!(at("handshakes_per_s_per_thread") < at("contended_waits_per_handshake (waits, lower is better)"));
}
