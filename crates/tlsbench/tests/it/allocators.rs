//! End-to-end: the allocator axis (`run --allocator A`, repeated). Each allocator is a column of
//! the run's table; the runners report what they allocated with, and the run's environment
//! records those reports; a stack whose runtime allocates apart from malloc is n/a with that
//! reason; a name tlsbench does not know is an error naming the valid ones. That the named
//! allocator really serves the allocations is crates/runner-openssl/tests/allocator.rs.

use std::process::Command;

use serde_json::Value;
use tlsbench_harness::protocol::Reply;

use crate::common;
use crate::fake_go;
use common::{read_json, succeeded, tlsbench};
use fake_go::{runner_dir, runners_with_a_runtime_stack};

const SCENARIO: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

#[test]
fn each_allocator_is_a_column_the_runners_report_and_a_runtime_stack_is_na() {
    let (dir, runners) = (tempfile::tempdir().unwrap(), runners_with_a_runtime_stack());
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .env("TLSBENCH_RUNNER_DIR", runners.path())
        // Left in the user's environment, it must not move the cells off their allocator.
        .env("TLSBENCH_ALLOCATOR", "mimalloc")
        .args([
            "run",
            "--stack",
            "openssl",
            "--stack",
            "rustls-ring",
            "--stack",
            "go",
            "--allocator",
            "jemalloc",
            "--allocator",
            "mimalloc",
        ])
        .args([
            "--allocator",
            "jemalloc",
            "--measure",
            "heap",
            "--scenario",
            SCENARIO,
            "--samples",
            "1",
            "--export-json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let output = succeeded(output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let doc = read_json(&json);
    let results = doc["results"].as_array().unwrap();

    // One column per allocator (a repeated one once), side by side in one table.
    for label in [
        "openssl (jemalloc)",
        "openssl (mimalloc)",
        "rustls-ring (jemalloc)",
        "rustls-ring (mimalloc)",
        "go (jemalloc)",
    ] {
        assert!(stdout.contains(label), "{label} in:\n{stdout}");
    }
    for stack in ["openssl", "rustls-ring"] {
        for allocator in ["jemalloc", "mimalloc"] {
            let cells: Vec<&Value> =
                results.iter().filter(|r| r["client_stack"] == stack && r["allocator"] == allocator).collect();
            assert!(!cells.is_empty(), "{stack} {allocator}");
            assert!(cells.iter().all(|r| r["status"] == "ok"), "{cells:?}");
            let allocations =
                cells.iter().find(|r| r["metric"] == "allocations_per_handshake" && r["side"] == "server").unwrap();
            assert!(allocations["median"].as_f64().unwrap() > 10.0, "{allocations}");
        }
    }
    assert!(
        !results.iter().any(|r| r["allocator"].is_null() || r["allocator"] == "glibc"),
        "only the allocators asked for"
    );
    // The runtime's stack: n/a in every allocator's column, saying why, and never run.
    let go: Vec<&Value> = results.iter().filter(|r| r["client_stack"] == "go").collect();
    assert!(!go.is_empty());
    for r in go {
        assert_eq!(r["status"], "unsupported", "{r}");
        let reason = r["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("go: allocates through its language's runtime, not through tlsbench's malloc"),
            "{reason}"
        );
    }
    // The environment: what the runners reported, with versions; no longer "system (libc malloc)".
    let environment = doc["run"]["environment"]["allocator"].as_str().unwrap();
    assert!(environment.starts_with("jemalloc 5.") && environment.contains(", mimalloc "), "{environment}");
    assert!(environment.ends_with("behind tlsbench's malloc interposer"), "{environment}");
    let stacks = doc["run"]["stacks"].as_array().unwrap();
    let declared = |id: &str| stacks.iter().find(|s| s["id"] == id).unwrap()["capabilities"]["allocators"].clone();
    assert_eq!(declared("openssl"), serde_json::json!(["glibc", "jemalloc", "mimalloc"]));
    assert!(declared("go").is_null(), "absent: the runner cannot switch");
}

#[test]
fn an_unknown_allocator_is_an_error_naming_the_valid_ones() {
    let output =
        Command::new(env!("CARGO_BIN_EXE_tlsbench")).args(["run", "--allocator", "tcmalloc"]).output().unwrap();
    let stderr = crate::common::one_message(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown allocator `tcmalloc` (valid: glibc, jemalloc, mimalloc)"), "{stderr}");
}

#[test]
fn a_runner_reports_its_allocator_and_refuses_one_it_does_not_know() {
    let data = tempfile::tempdir().unwrap();
    let sample = |allocator: Option<&str>| {
        let mut command = Command::new(runner_dir().join("tlsbench-runner-openssl"));
        command.args([
            "sample",
            "--client",
            "openssl",
            "--server",
            "openssl",
            "--scenario",
            SCENARIO,
            "--measure",
            "io",
        ]);
        command.arg("--data-dir").arg(data.path());
        match allocator {
            Some(name) => command.env("TLSBENCH_ALLOCATOR", name),
            None => command.env_remove("TLSBENCH_ALLOCATOR"),
        };
        serde_json::from_slice::<Reply>(&succeeded(command.output().unwrap()).stdout).unwrap()
    };
    for (asked, expected) in
        [(None, "glibc"), (Some("glibc"), "glibc"), (Some("jemalloc"), "jemalloc"), (Some("mimalloc"), "mimalloc")]
    {
        let Reply::Ok(report) = sample(asked) else { panic!("{asked:?}") };
        let used = report.allocator.expect("the runner reports its allocator");
        assert_eq!(used.name.name(), expected);
        assert!(used.version.chars().next().is_some_and(|c| c.is_ascii_digit()), "{used}");
    }
    assert_eq!(
        sample(Some("tcmalloc")),
        Reply::failed("TLSBENCH_ALLOCATOR: unknown allocator `tcmalloc` (valid: glibc, jemalloc, mimalloc)")
    );
}

#[test]
fn instruction_counts_run_on_the_allocator_of_their_column() {
    // callgrind's runner starts with `env -i`: its allocator must still reach it.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args([
            "run",
            "--stack",
            "openssl",
            "--allocator",
            "jemalloc",
            "--measure",
            "instructions",
            "--scenario",
            SCENARIO,
        ])
        .args(["--samples", "1", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    succeeded(output);
    let doc = read_json(&json);
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        assert_eq!((r["status"].as_str(), r["allocator"].as_str()), (Some("ok"), Some("jemalloc")), "{r}");
        assert!(r["median"].as_f64().unwrap() > 100_000.0, "a handshake's instructions: {r}");
    }
}
