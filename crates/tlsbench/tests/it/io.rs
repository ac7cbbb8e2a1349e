//! End-to-end: `tlsbench trace` and `tlsbench io` with the real runners (built by
//! `cargo test --workspace`, or `cargo build --release` before `cargo test -p tlsbench`).

use std::path::Path;

use assert_cmd::Command;

fn tlsbench(data: &Path) -> Command {
    let mut cmd = Command::cargo_bin("tlsbench").unwrap();
    cmd.env("TLSBENCH_DATA_DIR", data.join("data")).current_dir(data);
    cmd
}

/// Runs tlsbench with `args`; returns (success, stdout, stderr).
/// Whether `args` succeeded, their stdout, and their stderr with its wrapped lines joined again.
fn run(args: &[&str]) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let output = tlsbench(dir.path()).args(args).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    (output.status.success(), stdout, crate::common::unwrapped(&output.stderr))
}

#[test]
fn trace_prints_both_sides_calls_by_flight_with_records_and_totals() {
    let (ok, out, err) = run(&["trace", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--stack", "rustls-ring"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm");
    assert!(lines[1].starts_with("client: rustls-ring (rustls 0.23."), "{out}");
    // The client begins by writing its hello, one record in one write, without reading first.
    let start = lines.iter().position(|l| *l == "== handshake").unwrap_or_else(|| panic!("{out}"));
    assert_eq!(lines[start + 1], "-- flight 1: client");
    assert!(lines[start + 2].starts_with("client  write ") && lines[start + 2].contains(": client_hello]"), "{out}");
    assert!(lines[start + 3].starts_with("server  read  want 4096   got "), "{out}");
    for phase in ["== application data", "== close_notify"] {
        assert!(lines.contains(&phase), "{phase}:\n{out}");
    }
    // The counts of rustls's io-profile (crates/runner-openssl/tests/io.rs reasons them out).
    assert!(out.contains("\nclient  9 IO calls: 5 reads (2 would block), 4 writes; 5 records, "), "{out}");
    assert!(out.contains("\nserver  10 IO calls: 7 reads (3 would block), 3 writes; 5 records, "), "{out}");
    assert!(out.ends_with("\ntotal   19 IO calls\n"), "{out}");
}

#[test]
fn trace_takes_an_interop_pair_a_handshake_kind_and_json() {
    let (ok, out, err) = run(&[
        "trace",
        "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm",
        "--client",
        "openssl",
        "--server",
        "rustls-ring",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("\nserver: rustls-ring (") && out.contains("\nclient: openssl (OpenSSL 3."), "{out}");
    // OpenSSL reads a record header, then its body; rustls's server flight is one record.
    assert!(out.contains("\nclient  read  want 5      got 5\n"), "{out}");
    assert!(
        out.contains("[handshake ")
            && out.contains(": server_hello, certificate, server_key_exchange, server_hello_done]"),
        "{out}"
    );
    assert!(!out.contains("== application data"), "a handshake kind traces the handshake only:\n{out}");

    let (ok, out, err) =
        run(&["trace", "io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm", "--stack", "openssl", "--json"]);
    assert!(ok, "{err}");
    let trace: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(trace["client_stack"], "openssl");
    assert!(trace["events"].as_array().unwrap().len() > 20, "{out}");
}

#[test]
fn trace_refuses_what_it_cannot_trace_and_names_the_valid_stacks() {
    let (ok, _, err) = run(&["trace", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--stack", "no-such-tls"]);
    assert!(!ok);
    assert!(
        err.contains(
            "unknown stack `no-such-tls` (valid: rustls-aws-lc-rs, rustls-ring, rustls-aws-lc-rs-fips, openssl,"
        ),
        "{err}"
    );
    let (ok, _, err) = run(&["trace", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--stack", "bertie"]);
    assert!(!ok);
    assert!(
        err.contains(
            "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm is unsupported: bertie: close_notify not implemented"
        ),
        "{err}"
    );
    let (ok, _, err) = run(&["trace", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm", "--stack", "openssl"]);
    assert!(!ok);
    assert!(err.contains("measure io does not apply to transfer scenarios"), "{err}");
    let (ok, _, err) =
        run(&["trace", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--client", "openssl", "--server", "boringssl"]);
    assert!(!ok);
    assert!(err.contains("no runner holds both openssl and boringssl"), "{err}");
    let (ok, _, err) = run(&["trace", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm"]);
    assert!(!ok && err.contains("--stack"), "{err}");
}

#[test]
fn io_prints_the_behaviours_and_totals_per_stack_and_n_a_with_the_reason() {
    let (ok, out, err) =
        run(&["io", "--config", "pinned", "--stack", "s2n-tls", "--stack", "s2n-tls-recvbuf", "--stack", "bertie"]);
    assert!(ok, "{err}");
    let tables: Vec<&str> = out.split("\n\n").collect();
    assert_eq!(tables.len(), 2, "{out}");
    assert!(tables[0].starts_with("io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm: "), "{out}");
    assert!(tables[1].starts_with("io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm: "), "{out}");
    for table in tables {
        let cells = |stack: &str| cells(table, stack);
        // The header's two levels: what is counted, then of what.
        let (above, header) = table.lines().zip(table.lines().skip(1)).find(|(_, l)| l.starts_with("stack ")).unwrap();
        assert!(above.contains("buffering") && above.contains("record") && above.contains("calls"), "{table}");
        assert!(header.contains("coalescing") && header.contains("empty reads") && header.contains("io"), "{table}");
        // Receive buffering is the one difference between the two s2n-tls stacks, and the
        // table shows it, with fewer reads and the same writes.
        let (plain, buffered) = (cells("s2n-tls"), cells("s2n-tls-recvbuf"));
        assert_eq!((plain[1].as_str(), buffered[1].as_str()), ("no/no", "yes/yes"), "{table}");
        assert_eq!(plain[2], buffered[2], "{table}");
        assert_eq!((&plain[6], &plain[8]), (&buffered[6], &buffered[8]), "writes and records:\n{table}");
        let reads = |cells: &[String]| -> Vec<u64> { cells[4].split('/').map(|n| n.parse().unwrap()).collect() };
        assert!(reads(&buffered).iter().zip(reads(&plain)).all(|(b, p)| *b < p), "{table}");
        assert_eq!(cells("bertie")[1..], ["n/a"; 9], "{table}");
    }
    assert!(out.contains("note: bertie: n/a: close_notify not implemented"), "{out}");
    assert!(out.contains("note: bertie: n/a: TLS 1.2 not implemented"), "{out}");
}

#[test]
fn io_shows_each_library_as_shipped_with_what_it_negotiated() {
    let (ok, out, err) = run(&["io", "--stack", "openssl", "--stack", "bertie"]);
    assert!(ok, "{err}");
    let tables: Vec<&str> = out.split("\n\n").collect();
    let titles: Vec<&str> = tables.iter().map(|t| t.lines().next().unwrap().split(':').next().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "io-profile_1.3_default_ecdsa-p256_default",
            "io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "io-profile_1.2_default_ecdsa-p256_default"
        ],
        "{out}"
    );
    let cells = |table: &str| cells(table, "openssl");
    // As shipped, OpenSSL's TLS 1.3 server sends session tickets after the handshake: more
    // records and bytes from the server than pinned, and the client says one arrived.
    let server = |cells: Vec<String>, i: usize| -> u64 { cells[i].split('/').nth(1).unwrap().parse().unwrap() };
    let (pinned, shipped) = (cells(tables[0]), cells(tables[1]));
    assert!(server(shipped.clone(), 8) > server(pinned.clone(), 8) && server(shipped, 9) > server(pinned, 9), "{out}");
    assert!(tables[1].lines().next().unwrap().ends_with("each library's defaults"), "{out}");
    let negotiated = tables[1].lines().find(|l| l.starts_with("  openssl: ")).unwrap_or_else(|| panic!("{out}"));
    assert!(negotiated.starts_with("  openssl: 1.3 ") && negotiated.ends_with(", ticket received"), "{negotiated}");
    // A stack that cannot do a scenario is n/a in that configuration's table too.
    assert!(tables[1].contains("note: bertie: n/a: close_notify not implemented"), "{out}");
}

/// The row of `stack` in a table of `tlsbench io`: its label, then its cells (`client/server`,
/// no spaces), found by the label before the bar.
fn cells(table: &str, stack: &str) -> Vec<String> {
    let row = table.lines().filter_map(|l| l.split_once(" | ")).find(|(label, _)| label.trim() == stack);
    let (label, rest) = row.unwrap_or_else(|| panic!("{stack}:\n{table}"));
    let cells = rest.split_whitespace().filter(|c| *c != "|").map(String::from);
    std::iter::once(label.trim().to_string()).chain(cells).collect()
}
