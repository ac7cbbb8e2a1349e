//! End-to-end: stacks from two link families (the system's OpenSSL, and BoringSSL, whose
//! symbols would capture OpenSSL's in one process) in one run, each reporting its own library.

use crate::common;
use common::{read_json, succeeded, tlsbench};

/// The library each stack must report: OpenSSL's own version string, and BoringSSL's (which
/// has no version number; rust-openssl captured by BoringSSL would say just "BoringSSL").
fn assert_own_library(stack: &str, library: &str) {
    match stack {
        "openssl" => assert!(library.starts_with("OpenSSL 3."), "{stack}: {library}"),
        "boringssl" => assert!(
            library.starts_with("BoringSSL (API version ") && library.contains("boring-sys 5."),
            "{stack}: {library}"
        ),
        _ => panic!("unexpected stack {stack} ({library})"),
    }
}

#[test]
fn openssl_and_boringssl_in_one_run_each_report_their_own_library() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args(["run", "--stack", "openssl", "--stack", "boringssl"])
        .args(common::QUICK)
        .args([
            "--scenario",
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "--scenario",
            "transfer_1.2_x25519_ecdsa-p256_aes-256-gcm",
        ])
        .args(["--measure", "time", "--measure", "io"])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    succeeded(output);
    let doc = read_json(&json);
    let results = doc["results"].as_array().unwrap();
    // 2 stacks x 2 sides x (time: handshake and transfer rates, by wall and CPU time; io: the
    // handshake's counts).
    let io_counts =
        tlsbench_harness::protocol::Metric::of(tlsbench_harness::Measure::Io, tlsbench_harness::Kind::HandshakeFull)
            .len();
    assert_eq!(results.len(), 2 * 2 * (4 + io_counts));
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["client_stack"], r["server_stack"], "{r}");
        assert_own_library(r["client_stack"].as_str().unwrap(), r["client_library"].as_str().unwrap());
        assert_own_library(r["server_stack"].as_str().unwrap(), r["server_library"].as_str().unwrap());
    }
    let boringssl = results.iter().filter(|r| r["client_stack"] == "boringssl").count();
    assert_eq!(boringssl, results.len() / 2, "half the cells are BoringSSL's");
}

#[test]
fn list_stacks_shows_boringssl_with_its_library() {
    let dir = tempfile::tempdir().unwrap();
    let output = tlsbench(dir.path()).args(["list", "stacks"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let line = text.lines().find(|l| l.contains("boringssl")).unwrap_or_else(|| panic!("no boringssl in:\n{text}"));
    assert!(line.contains("BoringSSL (API version "), "{line}");
}

#[test]
fn openssl_and_boringssl_talk_to_each_other_across_their_families() {
    // No runner holds both, so each pair runs split: each side in its own family's runner.
    for (client, server, scenario) in [
        ("openssl", "boringssl", "handshake-resume-ticket_1.2_secp256r1_rsa-2048_chacha20-poly1305"),
        ("boringssl", "openssl", "handshake-full_1.3_x25519_ed25519_aes-256-gcm_mtls"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let output = tlsbench(dir.path())
            .args([
                "run",
                "--client",
                client,
                "--server",
                server,
                "--samples",
                "1",
                "--min-time-ms",
                "2",
                "--warmup-ms",
                "0",
            ])
            .args(["--scenario", scenario, "--export-json"])
            .arg(&json)
            .output()
            .unwrap();
        assert!(output.status.success(), "{client} -> {server}: {}", String::from_utf8_lossy(&output.stderr));
        let doc = read_json(&json);
        let results = doc["results"].as_array().unwrap();
        assert_eq!(results.len(), 4, "{client} -> {server}: handshakes_per_s and cpu_handshakes_per_s of each side");
        for r in results {
            assert_eq!(r["status"], "ok", "{r}");
            assert_eq!((r["client_stack"].as_str(), r["server_stack"].as_str()), (Some(client), Some(server)));
            assert_own_library(client, r["client_library"].as_str().unwrap());
            assert_own_library(server, r["server_library"].as_str().unwrap());
        }
    }
}

#[test]
fn the_interop_matrix_spans_families_with_split_pairs_where_no_runner_holds_both() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args(["interop", "--stack", "boringssl", "--stack", "gnutls", "--stack", "rustls-ring"])
        .args(["--samples", "2", "--min-time-ms", "2", "--warmup-ms", "0"])
        .args(["--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8(succeeded(output).stdout).unwrap();
    for client in ["boringssl", "gnutls", "rustls-ring"] {
        assert!(text.lines().any(|l| l.starts_with(&format!("{client} "))), "{client} row missing:\n{text}");
    }
    let doc = read_json(&json);
    let results = doc["results"].as_array().unwrap();
    let process = |client: &str, server: &str| {
        let cell = results.iter().find(|r| r["client_stack"] == client && r["server_stack"] == server);
        cell.unwrap_or_else(|| panic!("{client} -> {server} missing"))["process"].as_str().unwrap().to_string()
    };
    // BoringSSL and GnuTLS share no runner; rustls lives in both families.
    assert_eq!(process("boringssl", "gnutls"), "split-process");
    assert_eq!(process("gnutls", "boringssl"), "split-process");
    assert_eq!(process("rustls-ring", "boringssl"), "in-process");
    assert_eq!(process("gnutls", "rustls-ring"), "in-process");
    assert_eq!(results.len(), 9 * 2 * 2, "9 pairs x 2 sides x (wall time, CPU time)");
    assert!(results.iter().all(|r| r["status"] == "ok"), "{results:?}");
}
