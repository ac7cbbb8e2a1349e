//! End-to-end: the threads axis (`run --threads N`). N independent pairs, one per thread, in
//! one runner: the runner reports each thread's rates, tlsbench sums them into the aggregate,
//! measures one thread in the same run, and reports the rate per thread with its scaling
//! efficiency against that one thread. Combinations that cannot be measured so are errors or
//! n/a cells that name what is valid.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tlsbench_harness::protocol::{sum_threads, Reply};
use tlsbench_harness::Side;

use crate::common;
use crate::fake_go;
use common::{succeeded, tlsbench};
use fake_go::{runner_dir, runners_with_a_runtime_stack};

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
        // One pair replies as before: no per-thread part.
        let Reply::Ok(one) = runner_sample(data, stack, scenario, &[]) else { panic!("{stack}") };
        assert!(one.threads.is_empty());
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
            let (aggregate, one_thread) = (two["median"].as_f64().unwrap(), one["median"].as_f64().unwrap());
            // The rate per thread is the aggregate's share of each thread; the efficiency is
            // against the one-thread cell of this run.
            assert!(
                (per_thread["median"].as_f64().unwrap() - aggregate / 2.0).abs() <= 1e-9 * aggregate,
                "{per_thread}"
            );
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
fn threads_with_no_time_measure_or_over_tcp_are_errors_naming_what_is_valid() {
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tlsbench")).arg("run").args(args).output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
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
}
