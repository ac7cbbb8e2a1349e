//! End-to-end: the stack `aws-lc` (AWS-LC's own libssl, in crates/runner-aws-lc, which
//! scripts/build.sh builds alone): measured with itself by every measure, its `n/a` cells, its
//! pairs with the stacks of the other runners, the network mode, and `profile`.

use serde_json::Value;
use tlsbench_harness::protocol::Metric;
use tlsbench_harness::{Measure, Scenario};

use crate::{common, net_common};
use common::{read_json, succeeded, tlsbench};

const FULL_13: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// AWS-LC's own version string and the aws-lc-sys release that builds it; not what the
/// `openssl` crate reports on the system's OpenSSL ("OpenSSL 3.0.19 ...").
fn assert_aws_lc(library: &str) {
    assert!(library.starts_with("AWS-LC ") && library.contains(" (aws-lc-sys 0."), "{library}");
}

fn results(doc: &Value) -> &Vec<Value> {
    doc["results"].as_array().unwrap()
}

#[test]
fn aws_lc_with_itself_measures_handshakes_resumption_and_transfer_by_time_heap_and_io() {
    let scenarios = [
        FULL_13,
        "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm",
        "handshake-full_1.3_x25519_rsa-2048_aes-128-gcm",
        "handshake-full_1.2_secp256r1_rsa-2048_aes-256-gcm",
        "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm",
        "handshake-resume-ticket_1.2_x25519_rsa-2048_aes-256-gcm",
        "transfer_1.3_x25519_ecdsa-p256_aes-256-gcm",
        // Not a scenario AWS-LC can do: n/a with the reason.
        "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems",
    ];
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args(["run", "--stack", "aws-lc", "--measure", "time", "--measure", "heap", "--measure", "io"])
        .args(common::QUICK)
        .args(scenarios.iter().flat_map(|s| ["--scenario", s]))
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    succeeded(output);
    let doc = read_json(&json);
    for name in scenarios {
        let cells: Vec<&Value> = results(&doc).iter().filter(|r| r["scenario"] == name).collect();
        assert!(!cells.is_empty(), "{name}: no cells");
        if name.ends_with("_no-ems") {
            for r in cells {
                assert_eq!(r["status"], "unsupported", "{r}");
                assert_eq!(r["reason"], "aws-lc: extended master secret cannot be switched off", "{r}");
            }
            continue;
        }
        // Each side has every metric of the measures that apply to the kind (heap and io
        // measure handshakes; transfer is time's), less a collected runtime's own and the
        // contended waits (a run without threads shows none).
        let kind = name.parse::<Scenario>().unwrap().kind;
        let mut expected: Vec<&str> = [Measure::Time, Measure::Heap, Measure::Io]
            .iter()
            .filter(|m| m.applies_to(kind))
            .flat_map(|&m| Metric::of(m, kind))
            .filter(|m| !m.is_gc_runtimes_own() && !m.is_per_iteration())
            .map(|m| m.name())
            .collect();
        expected.sort_unstable();
        // `1.3 aes-128-gcm x25519` of `handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm`.
        let parts: Vec<&str> = name.split('_').collect();
        let negotiated = format!("{} {} {}", parts[1], parts[4], parts[2]);
        for side in ["client", "server"] {
            let of_side: Vec<&&Value> = cells.iter().filter(|r| r["side"] == side).collect();
            let mut metrics: Vec<&str> = of_side.iter().map(|r| r["metric"].as_str().unwrap()).collect();
            metrics.sort_unstable();
            assert_eq!(metrics, expected, "{name} {side}");
            for r in of_side {
                assert_eq!(r["status"], "ok", "{r}");
                assert_eq!((r["client_stack"].as_str(), r["server_stack"].as_str()), (Some("aws-lc"), Some("aws-lc")));
                assert_eq!(r["process"], "in-process", "{r}");
                assert_aws_lc(r["client_library"].as_str().unwrap());
                assert_aws_lc(r["server_library"].as_str().unwrap());
                assert!(r["median"].as_f64().is_some_and(|m| m.is_finite() && m >= 0.0), "{r}");
                if r["metric"] == "handshakes_per_s" || r["metric"] == "mb_per_s" {
                    assert!(r["median"].as_f64().unwrap() > 0.0, "{r}");
                    let said = r["negotiated"].as_str().unwrap_or_default();
                    assert!(said.starts_with(&negotiated), "{name} {side}: {said}");
                }
            }
        }
    }
}

/// No other runner holds AWS-LC's libssl, whose unprefixed SSL_* symbols would capture another
/// libssl's: its pairs with OpenSSL and rustls run split, each side in its own runner, and each
/// reports its own library.
#[test]
fn aws_lc_interoperates_with_openssl_and_rustls_both_ways_across_runners() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args(["interop", "--stack", "aws-lc", "--stack", "openssl", "--stack", "rustls-aws-lc-rs"])
        .args(common::QUICK)
        .args(["--scenario", FULL_13, "--scenario", "handshake-resume-ticket_1.2_secp256r1_rsa-2048_aes-256-gcm"])
        .args(["--scenario", "transfer_1.3_x25519_ecdsa-p256_aes-256-gcm", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8(succeeded(output).stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("aws-lc ")), "aws-lc row missing:\n{text}");
    let doc = read_json(&json);
    // 9 pairs x 3 scenarios x 2 sides x 2 rates (wall and CPU time).
    assert_eq!(results(&doc).len(), 9 * 3 * 2 * 2);
    for r in results(&doc) {
        assert_eq!(r["status"], "ok", "{r}");
        let (client, server) = (r["client_stack"].as_str().unwrap(), r["server_stack"].as_str().unwrap());
        for (stack, library) in [(client, &r["client_library"]), (server, &r["server_library"])] {
            let library = library.as_str().unwrap();
            match stack {
                "aws-lc" => assert_aws_lc(library),
                "openssl" => assert!(library.starts_with("OpenSSL 3."), "{library}"),
                _ => assert!(library.starts_with("rustls 0.23.") && library.contains("aws-lc-rs"), "{library}"),
            }
        }
        let expected = if (client == "aws-lc") == (server == "aws-lc") { "in-process" } else { "split-process" };
        assert_eq!(r["process"], expected, "{client} -> {server}");
    }
}

#[test]
fn list_stacks_shows_aws_lc_with_its_library_and_backend() {
    let dir = tempfile::tempdir().unwrap();
    let output = tlsbench(dir.path()).args(["list", "stacks"]).output().unwrap();
    let text = String::from_utf8(succeeded(output).stdout).unwrap();
    let at = text.lines().position(|l| l.starts_with("aws-lc ")).unwrap_or_else(|| panic!("no aws-lc in:\n{text}"));
    assert!(text.lines().nth(at).unwrap().contains("AWS-LC "), "{text}");
    let backend = text.lines().skip(at + 1).find(|l| l.trim_start().starts_with("backend")).unwrap();
    assert!(
        backend.contains("AWS-LC ") && backend.contains("aws-lc-sys 0.") && backend.contains("static"),
        "{backend}"
    );
}

/// `serve` and `load` over loopback: AWS-LC's server with OpenSSL's client, and AWS-LC's client
/// resuming every connection from its own server's TLS 1.3 tickets, two in flight.
#[test]
fn aws_lc_serves_and_loads_over_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let server = net_common::Server::start(
        dir.path(),
        &["--stack", "aws-lc", "--scenario", FULL_13, "--response", "10KiB", "--workers", "1"],
    );
    let args =
        ["--stack", "openssl", "--scenario", FULL_13, "--connect", &server.addr, "--connections", "20", "--response"];
    let (ok, client, out) = net_common::load(dir.path(), &[&args[..], &["10KiB"]].concat());
    let served = server.stop();
    assert!(ok, "{out}");
    assert_eq!(client.map(|c| (c.connections, c.failed)), Some((20, 0)), "{out}");
    assert_eq!(served.negotiated.as_deref(), Some("1.3 aes-128-gcm x25519"));
    assert_aws_lc(&served.library);
    assert!(out.contains("10KiB, checked (length and digest)"), "{out}");

    let scenario = "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let server = net_common::Server::start(dir.path(), &["--stack", "aws-lc", "--scenario", scenario]);
    let args = ["--stack", "aws-lc", "--scenario", scenario, "--connect", &server.addr, "--connections", "30"];
    let (ok, client, out) = net_common::load(dir.path(), &[&args[..], &["--concurrency", "2"]].concat());
    let served = server.stop();
    assert!(ok, "{out}");
    let client = client.unwrap();
    assert_aws_lc(&client.library);
    assert_eq!((client.connections, client.resumed, client.failed), (30, 30, 0), "{out}");
    assert!(served.resumed >= 30, "the server saw them resume too: {served:?}");
}

/// The instructions measure and `profile` under callgrind: AWS-LC's libssl and libcrypto
/// attributed by their source tree and symbol names (libssl's unprefixed, libcrypto's with
/// aws-lc-sys's prefix).
#[test]
fn aws_lc_counts_instructions_and_its_profile_names_its_libssl_and_libcrypto() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args(["run", "--measure", "instructions", "--stack", "aws-lc", "--samples", "1", "--scenario", FULL_13])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    succeeded(output);
    let doc = read_json(&json);
    assert_eq!(results(&doc).len(), 2, "one count per side");
    for r in results(&doc) {
        assert_eq!((r["metric"].as_str(), r["status"].as_str()), (Some("instructions_per_handshake"), Some("ok")));
        // A TLS 1.3 ECDSA handshake costs each side hundreds of thousands of instructions at least.
        assert!(r["median"].as_f64().unwrap() > 1e5, "{r}");
    }

    let output = tlsbench(dir.path())
        .args(["profile", FULL_13, "--stack", "aws-lc", "--side", "server", "--iterations", "3", "--out", "out"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(succeeded(output).stdout).unwrap();
    let profile = read_json(&dir.path().join("out").join(format!("aws-lc_server_{FULL_13}.json")));
    let share = |class: &str| {
        let classes = profile["classes"].as_array().unwrap();
        classes.iter().find(|c| c["class"] == class).unwrap()["instructions"].as_u64().unwrap()
    };
    let total = profile["total"].as_u64().unwrap();
    // The server's ECDSA signature and key exchange dominate; the TLS code is a real part of it.
    assert!(share("crypto") > total / 2, "{:#}", profile["classes"]);
    assert!(share("tls") > total / 100, "{:#}", profile["classes"]);
    assert!(share("other") < total / 10, "unattributed code: {:#}", profile["classes"]);
    assert!(stdout.contains("AWS-LC's libssl") && stdout.contains("AWS-LC's libcrypto"), "{stdout}");
    let names: Vec<&str> =
        profile["by_exclusive"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert!(names.iter().any(|n| n.starts_with("aws_lc_0_")), "{names:?}");
}
