//! End-to-end: wolfSSL, the opt-in stack (GPL-only, so its runner is built only on request:
//! scripts/build.sh --wolfssl). Always: asked for and not built, tlsbench refuses, naming the
//! build command. With its runner built beside tlsbench: interop with openssl and rustls,
//! split-process, and its heap and io measures, every cell checked. Those tests are skipped,
//! saying so, when the runner is not built, unless TLSBENCH_REQUIRE_WOLFSSL is set.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{self, read_json, succeeded, tlsbench};
use crate::fake_go::runner_dir;

const RUNNER: &str = "tlsbench-runner-wolfssl";
const FULL: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// The wolfSSL runner beside tlsbench, if built; else None (the test is skipped, saying so),
/// or a failure where TLSBENCH_REQUIRE_WOLFSSL says it must be built.
fn built() -> Option<PathBuf> {
    let path = runner_dir().join(RUNNER);
    if path.is_file() {
        return Some(path);
    }
    let reason = format!("{} is not built (scripts/build.sh --wolfssl)", path.display());
    assert!(std::env::var_os("TLSBENCH_REQUIRE_WOLFSSL").is_none(), "TLSBENCH_REQUIRE_WOLFSSL: {reason}");
    eprintln!("skipped: {reason}");
    None
}

#[test]
fn asked_for_wolfssl_without_its_runner_tlsbench_names_the_build_command() {
    // The runners of a plain build (the system's OpenSSL family's), wherever wolfSSL's is.
    let dir = tempfile::tempdir().unwrap();
    let runners = dir.path().join("runners");
    std::fs::create_dir(&runners).unwrap();
    let openssl = "tlsbench-runner-openssl";
    std::os::unix::fs::symlink(runner_dir().join(openssl), runners.join(openssl)).unwrap();
    for args in [
        &["run", "--stack", "wolfssl", "--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"][..],
        &["interop", "--stack", "wolfssl", "--stack", "openssl"],
        &["list", "scenarios", "--stack", "wolfssl"],
    ] {
        let output = tlsbench(dir.path()).env("TLSBENCH_RUNNER_DIR", &runners).args(args).output().unwrap();
        let stderr = common::unwrapped(&output.stderr);
        assert!(!output.status.success(), "{args:?}: {stderr}");
        let expected = format!(
            "no runner in {} holds stack `wolfssl` (runners found: {openssl}; its runner is built only on request: \
             scripts/build.sh --wolfssl)",
            runners.display()
        );
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
    }
    // And a command that names no stack measures the others without a note about wolfSSL.
    let output = tlsbench(dir.path()).env("TLSBENCH_RUNNER_DIR", &runners).args(["list", "stacks"]).output().unwrap();
    let output = succeeded(output);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("wolfssl"));
    assert!(!String::from_utf8_lossy(&output.stdout).contains("wolfssl"));
}

#[test]
fn a_run_that_names_no_stack_leaves_a_built_wolfssl_out_and_says_how_to_measure_it() {
    // The OpenSSL family's runner, and one listing `wolfssl` (GPL-only), as a runner built by
    // scripts/build.sh --wolfssl does, whose samples fail.
    let dir = tempfile::tempdir().unwrap();
    let runners = dir.path().join("runners");
    std::fs::create_dir(&runners).unwrap();
    let openssl = "tlsbench-runner-openssl";
    std::os::unix::fs::symlink(runner_dir().join(openssl), runners.join(openssl)).unwrap();
    let capabilities = serde_json::to_string(&tlsbench_harness::Capabilities::everything()).unwrap();
    let list = format!(
        concat!(
            r#"{{"protocol_version":{},"stacks":[{{"id":"wolfssl","#,
            r#""library":"wolfSSL 5.0.0 (a fake)","capabilities":{}}}]}}"#,
        ),
        tlsbench_harness::protocol::PROTOCOL_VERSION,
        capabilities
    );
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\nlist) printf '%s\\n' '{list}' ;;\n\
         *) printf '%s' '{{\"status\":\"failed\",\"reason\":\"a fake\"}}' ;;\nesac\n"
    );
    common::executable(&runners.join("tlsbench-runner-fake"), &script);
    let run = |stacks: &[&str]| {
        let json = dir.path().join("r.json");
        let mut command = tlsbench(dir.path());
        command.env("TLSBENCH_RUNNER_DIR", &runners).args(["run", "--scenario", FULL]).args(stacks);
        let output = command.args(common::QUICK).arg("--export-json").arg(&json).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (read_json(&json), stderr)
    };
    let (doc, stderr) = run(&[]);
    let note =
        "note: GPL-only, so measured only when named: wolfssl (--stack wolfssl, and --stack for each other stack)";
    assert!(stderr.lines().any(|l| l == note), "{stderr}");
    let stacks: Vec<&str> =
        doc["run"]["stacks"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert!(stacks.contains(&"openssl") && !stacks.contains(&"wolfssl"), "{stacks:?}");
    let results = doc["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["client_stack"] != "wolfssl"), "{results:?}");
    // Named, it is measured (here its fake's samples fail), and there is nothing to note.
    let (doc, stderr) = run(&["--stack", "wolfssl", "--stack", "openssl"]);
    assert!(!stderr.contains("GPL-only"), "{stderr}");
    let results = doc["results"].as_array().unwrap();
    let wolfssl: Vec<&Value> = results.iter().filter(|r| r["client_stack"] == "wolfssl").collect();
    assert!(!wolfssl.is_empty() && wolfssl.iter().all(|r| r["status"] == "failed"), "{results:?}");
}

/// The results of a run of `args` (with the quick settings), exported as JSON.
fn run(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path()).args(args).args(common::QUICK).arg("--export-json").arg(&json).output().unwrap();
    succeeded(output);
    read_json(&json)
}

/// Whether `library` is the one `stack` reports.
fn is_own_library(stack: &str, library: &str) -> bool {
    match stack {
        "wolfssl" => library.starts_with("wolfSSL 5.") && library.contains("configure: "),
        "openssl" => library.starts_with("OpenSSL 3."),
        "rustls-aws-lc-rs" => library.starts_with("rustls 0.23.") && library.contains("(aws-lc-rs "),
        _ => false,
    }
}

#[test]
fn wolfssl_interoperates_with_openssl_and_rustls_in_both_roles() {
    if built().is_none() {
        return;
    }
    let scenarios = [
        "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
        "handshake-full_1.2_secp256r1_rsa-2048_aes-256-gcm",
        "handshake-resume-id_1.2_x25519_ecdsa-p256_chacha20-poly1305",
    ];
    let mut args = vec!["interop", "--stack", "wolfssl", "--stack", "openssl", "--stack", "rustls-aws-lc-rs"];
    for scenario in &scenarios {
        args.extend(["--scenario", scenario]);
    }
    let doc = run(&args);
    let results = doc["results"].as_array().unwrap();
    let with_wolfssl: Vec<&Value> =
        results.iter().filter(|r| r["client_stack"] == "wolfssl" || r["server_stack"] == "wolfssl").collect();
    // wolfSSL against each of the three as a client and as a server (itself once), in every scenario.
    let pairs: std::collections::BTreeSet<(String, String)> = with_wolfssl
        .iter()
        .map(|r| (r["client_stack"].as_str().unwrap().to_string(), r["server_stack"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(pairs.len(), 5, "{pairs:?}");
    for r in &with_wolfssl {
        assert_eq!(r["status"], "ok", "{r}");
        for side in ["client", "server"] {
            let (stack, library) = (&r[format!("{side}_stack")], &r[format!("{side}_library")]);
            assert!(is_own_library(stack.as_str().unwrap(), library.as_str().unwrap()), "{r}");
        }
    }
    let scenarios_seen: std::collections::BTreeSet<&str> =
        with_wolfssl.iter().map(|r| r["scenario"].as_str().unwrap()).collect();
    assert_eq!(scenarios_seen.len(), scenarios.len(), "{scenarios_seen:?}");
}

#[test]
fn wolfssl_allocations_and_io_are_counted() {
    if built().is_none() {
        return;
    }
    let scenario = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let doc = run(&["run", "--stack", "wolfssl", "--scenario", scenario, "--measure", "heap", "--measure", "io"]);
    let median = |side: &str, metric: &str| {
        let results = doc["results"].as_array().unwrap();
        let r = results.iter().find(|r| r["side"] == side && r["metric"] == metric);
        let r = r.unwrap_or_else(|| panic!("{side} {metric} in {doc}"));
        assert_eq!(r["status"], "ok", "{r}");
        r["median"].as_f64().unwrap()
    };
    for side in ["client", "server"] {
        // wolfSSL allocates through malloc, which the runner interposes: its handshakes allocate.
        assert!(median(side, "allocations_per_handshake") > 10.0, "{side}");
        assert!(median(side, "heap_peak_bytes") > 1000.0, "{side}");
        // A TLS 1.3 handshake: each side writes at least its flight's records.
        assert!(median(side, "records_written") >= 1.0, "{side}");
        assert!(median(side, "write_calls") >= 1.0, "{side}");
    }
}
