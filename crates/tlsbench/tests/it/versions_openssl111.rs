//! End-to-end: OpenSSL 1.1.1 (scripts/build-openssl.sh 1.1.1, docs/stacks.md#openssl-111) as
//! `openssl@1.1.1`, through the real tool: its handshakes, resumption and transfer beside the
//! system's OpenSSL 3, what it cannot do `n/a` with the reason, its pairs with the system's
//! OpenSSL and rustls, the network mode with a certificate from another CA, and its heap and
//! profile. Ignored unless asked for (`--ignored`, as scripts/test.sh does after building it):
//! they need openssl@1.1.1 built. The adapter's own tests (a wrong CA, a wrong host name,
//! every scenario, the ticket a server renews) run against it with OPENSSL_DIR set
//! (docs/stacks.md#openssls-client-and-a-tls-12-ticket-the-server-renews).

use std::path::Path;

use serde_json::Value;

use crate::common::{read_json, succeeded, tlsbench, QUICK};
use crate::net_common::{self, Server};
use crate::versions;

const RELEASE: &str = "openssl@1.1.1";
const LIBRARY: &str = "OpenSSL 1.1.1w  11 Sep 2023";
const FULL_13: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
const FULL_12: &str = "handshake-full_1.2_secp256r1_rsa-2048_aes-256-gcm";
const TICKET_13: &str = "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm";
const TICKET_12: &str = "handshake-resume-ticket_1.2_x25519_ecdsa-p256_chacha20-poly1305";
const TRANSFER: &str = "transfer_1.3_x25519_ecdsa-p256_chacha20-poly1305";
const NO_EMS: &str = "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems";
const MLKEM: &str = "handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm";

/// Fails unless openssl@1.1.1 is built.
fn need_release() {
    versions::release_dir(RELEASE, "tlsbench-runner-openssl-static", "scripts/build-openssl.sh 1.1.1");
}

/// `command` (run or interop) of `scenarios` with `args`, its results document.
fn measured(dir: &Path, command: &str, scenarios: &[&str], args: &[&str]) -> Value {
    let mut cmd = tlsbench(dir);
    cmd.arg(command);
    for scenario in scenarios {
        cmd.args(["--scenario", scenario]);
    }
    succeeded(cmd.args(args).args(["--export-json", "run.json"]).output().unwrap());
    read_json(&dir.join("run.json"))
}

/// The rows (a metric of a side each) of `client -> server` in `scenario`.
fn rows<'a>(doc: &'a Value, client: &str, server: &str, scenario: &str) -> Vec<&'a Value> {
    let results = doc["results"].as_array().unwrap();
    let rows: Vec<&Value> = results
        .iter()
        .filter(|r| r["client_stack"] == client && r["server_stack"] == server && r["scenario"] == scenario)
        .collect();
    assert!(!rows.is_empty(), "no cell {client} -> {server} {scenario} in {doc}");
    rows
}

/// What `side` of an ok cell negotiated, every row of the cell being ok.
fn negotiated(rows: &[&Value], side: &str) -> String {
    for row in rows {
        assert_eq!(row["status"], "ok", "{row}");
    }
    let row = rows.iter().find(|r| r["side"] == side).unwrap();
    row["negotiated"].as_str().unwrap().to_string()
}

/// Why a cell is n/a, the same in each of its rows.
fn unsupported(rows: &[&Value]) -> String {
    for row in rows {
        assert_eq!((&row["status"], &row["reason"]), (&"unsupported".into(), &rows[0]["reason"]), "{row}");
    }
    rows[0]["reason"].as_str().unwrap().to_string()
}

#[test]
#[ignore = "needs openssl@1.1.1: scripts/build-openssl.sh 1.1.1 (scripts/test.sh builds it and runs this)"]
fn handshakes_resumption_and_transfer_beside_the_systems_openssl_each_with_its_own_library() {
    need_release();
    let tmp = tempfile::tempdir().unwrap();
    let scenarios = [FULL_13, FULL_12, TICKET_13, TICKET_12, TRANSFER];
    let args = [&QUICK[..], &["--stack", "openssl", "--stack", RELEASE]].concat();
    let doc = measured(tmp.path(), "run", &scenarios, &args);
    // What each client negotiated: the version, suite and group asked, and resumption where
    // asked (a resumed TLS 1.2 handshake of 1.1.1 reports no group: docs/stacks.md#openssl-111).
    let expected = [
        (FULL_13, "1.3 aes-128-gcm x25519, no ticket", "1.3 aes-128-gcm x25519, no ticket"),
        (FULL_12, "1.2 aes-256-gcm secp256r1, no ticket", "1.2 aes-256-gcm secp256r1, no ticket"),
        (
            TICKET_13,
            "1.3 aes-128-gcm x25519, resumed, ticket received",
            "1.3 aes-128-gcm x25519, resumed, ticket received",
        ),
        (
            TICKET_12,
            "1.2 chacha20-poly1305 x25519, resumed, ticket received",
            "1.2 chacha20-poly1305 group not reported, resumed, ticket received",
        ),
        (TRANSFER, "1.3 chacha20-poly1305 x25519, no ticket", "1.3 chacha20-poly1305 x25519, no ticket"),
    ];
    for (scenario, system, release) in expected {
        for (stack, client) in [("openssl", system), (RELEASE, release)] {
            let rows = rows(&doc, stack, stack, scenario);
            assert_eq!(negotiated(&rows, "client"), client, "{stack} {scenario}");
            for row in rows {
                let library = row["client_library"].as_str().unwrap();
                assert_eq!(library == LIBRARY, stack == RELEASE, "{stack}: {row}");
                assert_eq!(row["server_library"], row["client_library"], "{row}");
            }
        }
    }
    // 1.1.1's TLS 1.2 server keeps nothing of its key exchange; the system's reports the group.
    assert_eq!(negotiated(&rows(&doc, RELEASE, RELEASE, FULL_12), "server"), "1.2 aes-256-gcm group not reported");
    assert_eq!(negotiated(&rows(&doc, "openssl", "openssl", FULL_12), "server"), "1.2 aes-256-gcm secp256r1");
    let system = rows(&doc, "openssl", "openssl", FULL_13)[0]["client_library"].as_str().unwrap();
    assert!(system.starts_with("OpenSSL 3."), "{system}");
    let stacks = doc["run"]["stacks"].as_array().unwrap();
    let described = stacks.iter().find(|s| s["id"] == RELEASE).unwrap();
    assert_eq!(described["library"], LIBRARY, "{described}");
    assert!(described.to_string().contains("static, platform: linux-x86_64"), "{described}");
}

#[test]
#[ignore = "needs openssl@1.1.1: scripts/build-openssl.sh 1.1.1 (scripts/test.sh builds it and runs this)"]
fn what_1_1_1_cannot_do_is_na_with_its_reason() {
    need_release();
    let tmp = tempfile::tempdir().unwrap();
    let args = [&QUICK[..], &["--stack", "openssl", "--stack", RELEASE]].concat();
    let doc = measured(tmp.path(), "run", &[NO_EMS, MLKEM], &args);
    assert_eq!(
        unsupported(&rows(&doc, RELEASE, RELEASE, NO_EMS)),
        "OpenSSL 1.1.1 cannot switch the extended master secret off (SSL_OP_NO_EXTENDED_MASTER_SECRET came in 3.0)"
    );
    assert_eq!(
        unsupported(&rows(&doc, RELEASE, RELEASE, MLKEM)),
        format!("{RELEASE}: group x25519mlkem768 not supported")
    );
    // The system's OpenSSL 3.0 switches EMS off.
    assert_eq!(negotiated(&rows(&doc, "openssl", "openssl", NO_EMS), "server"), "1.2 aes-128-gcm x25519, no EMS");
}

#[test]
#[ignore = "needs openssl@1.1.1: scripts/build-openssl.sh 1.1.1 (scripts/test.sh builds it and runs this)"]
fn interop_with_the_systems_openssl_and_rustls_both_ways() {
    need_release();
    let tmp = tempfile::tempdir().unwrap();
    let stacks = [RELEASE, "openssl", "rustls-aws-lc-rs"];
    let args = [&QUICK[..], &["--stack", stacks[0], "--stack", stacks[1], "--stack", stacks[2]]].concat();
    let scenarios = [FULL_13, FULL_12, TICKET_13, TICKET_12];
    let doc = measured(tmp.path(), "interop", &scenarios, &args);
    for scenario in scenarios {
        for peer in &stacks[1..] {
            for (client, server) in [(RELEASE, *peer), (*peer, RELEASE)] {
                let rows = rows(&doc, client, server, scenario);
                let negotiated = negotiated(&rows, "client");
                let version = &scenario.split('_').nth(1).unwrap();
                assert!(negotiated.starts_with(&format!("{version} ")), "{client} -> {server}: {negotiated}");
                assert_eq!(negotiated.contains("resumed"), scenario == TICKET_13 || scenario == TICKET_12);
                let library = if client == RELEASE { &rows[0]["client_library"] } else { &rows[0]["server_library"] };
                assert_eq!(library, LIBRARY, "{}", rows[0]);
            }
        }
    }
}

#[test]
#[ignore = "needs openssl@1.1.1: scripts/build-openssl.sh 1.1.1 (scripts/test.sh builds it and runs this)"]
fn serve_and_load_over_loopback_and_a_certificate_from_another_ca_fails() {
    need_release();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    // openssl@1.1.1's server, rustls's client, resuming from TLS 1.3 tickets.
    let server = Server::start(data, &["--stack", RELEASE, "--scenario", TICKET_13]);
    let load = ["--connect", &server.addr, "--connections", "20", "--concurrency", "2"];
    let (ok, client, out) =
        net_common::load(data, &[&["--stack", "rustls-aws-lc-rs", "--scenario", TICKET_13][..], &load].concat());
    let server = server.stop();
    assert!(ok, "{out}");
    assert_eq!(client.map(|c| (c.connections, c.resumed)), Some((20, 20)), "{out}");
    assert!(server.resumed >= 20, "{server:?}");
    // openssl@1.1.1's client against the system's OpenSSL.
    let server = Server::start(data, &["--stack", "openssl", "--scenario", FULL_12]);
    let load = ["--connect", &server.addr, "--connections", "20"];
    let (ok, client, out) = net_common::load(data, &[&["--stack", RELEASE, "--scenario", FULL_12][..], &load].concat());
    server.stop();
    assert!(ok, "{out}");
    let client = client.unwrap();
    assert_eq!((client.connections, client.failed), (20, 0), "{out}");
    assert!(client.negotiated.as_deref().is_some_and(|n| n.starts_with("1.2 aes-256-gcm secp256r1")), "{out}");
    // A server whose certificates come from another CA: every connection fails verification.
    // The other PKI names its root as this one does, so the client takes its own root for the
    // intermediate's issuer and finds the signature wrong (as OpenSSL 3 does).
    let elsewhere = tempfile::tempdir().unwrap();
    let server = Server::start(elsewhere.path(), &["--stack", "rustls-ring", "--scenario", FULL_13]);
    let load = ["--connect", &server.addr, "--connections", "2", "--io-timeout", "2"];
    let (ok, client, out) = net_common::load(data, &[&["--stack", RELEASE, "--scenario", FULL_13][..], &load].concat());
    server.stop();
    assert!(!ok, "{out}");
    let client = client.unwrap();
    assert_eq!(client.connections, 0, "{out}");
    assert!(!client.failures.is_empty(), "{out}");
    for failure in &client.failures {
        assert!(failure.reason.contains("certificate verify failed"), "{failure:?}");
        assert!(failure.reason.contains("(certificate verification: certificate signature failure)"), "{failure:?}");
    }
}

#[test]
#[ignore = "needs openssl@1.1.1: scripts/build-openssl.sh 1.1.1 (scripts/test.sh builds it and runs this)"]
fn heap_and_io_are_measured_and_the_profile_tells_libssl_from_libcrypto() {
    need_release();
    let tmp = tempfile::tempdir().unwrap();
    let args = ["--stack", RELEASE, "--measure", "heap", "--measure", "io", "--samples", "2"];
    let doc = measured(tmp.path(), "run", &[FULL_13], &args);
    let rows = rows(&doc, RELEASE, RELEASE, FULL_13);
    for side in ["client", "server"] {
        negotiated(&rows, side);
        // The interposer sees 1.1.1's CRYPTO_malloc calls; each side writes its flight's records.
        for metric in ["heap_retained_bytes", "heap_peak_bytes", "records_written", "bytes_written"] {
            let row = rows.iter().find(|r| r["side"] == side && r["metric"] == metric);
            let median = row.and_then(|r| r["median"].as_f64()).unwrap_or_else(|| panic!("no {side} {metric}"));
            assert!(median > 0.0, "{side} {metric}: {median}");
        }
    }

    let output = tlsbench(tmp.path())
        .args(["profile", FULL_13, "--stack", RELEASE, "--side", "client", "--iterations", "3", "--out", "out"])
        .output()
        .unwrap();
    succeeded(output);
    let profile = read_json(&tmp.path().join("out").join(format!("{RELEASE}_client_{FULL_13}.json")));
    let share = |class: &str| {
        let classes = profile["classes"].as_array().unwrap();
        classes.iter().find(|c| c["class"] == class).unwrap()["instructions"].as_u64().unwrap()
    };
    let total = profile["total"].as_u64().unwrap();
    // An ECDSA handshake's client: libcrypto's signatures and key exchange outweigh libssl, and
    // the two hold nearly all of it (OpenSSL's own code has no debug info: told apart by name).
    assert!(share("tls") > 0 && share("crypto") > share("tls"), "{:#}", profile["classes"]);
    assert!(share("other") < total / 10, "{:#}", profile["classes"]);
}
