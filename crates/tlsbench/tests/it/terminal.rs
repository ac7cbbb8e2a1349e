//! End-to-end: what `tlsbench show` and `tlsbench run --quick` print on a terminal. The table
//! tests show a results document written here, so they need no runner; the quick run uses the
//! real runners (built by `cargo test --workspace`).

use serde_json::{json, Value};

use crate::common;
use common::{read_json, succeeded, tlsbench};

const STACKS: [&str; 9] = [
    "rustls-aws-lc-rs",
    "rustls-ring",
    "openssl",
    "boringssl",
    "s2n-tls",
    "s2n-tls-recvbuf",
    "bertie",
    "gnutls",
    "libtls",
];

/// Long names that share no part, so that nothing can be said once above the columns.
const SCENARIOS: [&str; 6] = [
    "handshake-resume-ticket_1.3_x25519mlkem768_ecdsa-p384_chacha20-poly1305_mtls",
    "handshake-resume-id_1.2_secp384r1_rsa-4096_aes-256-gcm_cert-requested_no-ems",
    "handshake-full_1.2_secp256r1_ed25519_aes-128-gcm_mtls_no-ems",
    "handshake-full_1.3_x25519_rsa-3072_aes-128-gcm",
    "handshake-full_1.3_x25519_rsa-3072_aes-128-gcm_cert-requested",
    "handshake-resume-ticket_1.2_x25519_rsa-2048_aes-256-gcm",
];

const LONG_REASON: &str = "server runner: handshake failed after the server's second flight: the peer sent an alert \
                           (decrypt_error) while the client verified the CertificateVerify signature of the server's \
                           ECDSA P-384 leaf against the chain to the generated root";

/// One result as the JSON export holds it: samples that vary for a rate (unit `/s`), equal for
/// a count, so that the rate has a spread and the count has none.
fn cell(scenario: &str, client: &str, server: &str, process: &str, side: &str, metric: (&str, &str, f64)) -> Value {
    let (name, unit, median) = metric;
    let rate = unit.ends_with("/s");
    let samples: Vec<f64> =
        (0..6).map(|i| if rate { median * (0.96 + 0.02 * f64::from(i % 3)) } else { median }).collect();
    let mut sorted = samples.clone();
    sorted.sort_by(f64::total_cmp);
    json!({
        "scenario": scenario, "client_stack": client, "server_stack": server,
        "client_library": format!("{client} 1.0"), "server_library": format!("{server} 1.0"),
        "measure": if rate { "time" } else { "io" }, "process": process, "side": side,
        "metric": name, "unit": unit, "better": if rate { "higher" } else { "lower" },
        "samples": samples, "median": median, "ci95": [sorted[0], sorted[5]], "min": sorted[0], "max": sorted[5],
        "outliers": if rate && client == "openssl" { vec![1] } else { vec![] }, "status": "ok", "reason": null
    })
}

fn without_number(mut cell: Value, status: &str, reason: &str) -> Value {
    for key in ["median", "ci95", "min", "max"] {
        cell[key] = Value::Null;
    }
    cell["samples"] = json!([]);
    cell["status"] = json!(status);
    cell["reason"] = json!(reason);
    cell
}

/// Nine stacks with themselves, an interop pair in one process and split, a pair that is
/// always split; a rate and two counts (one a whole number, one an average with a fraction);
/// a failed pair with a long reason, and cells that are n/a.
fn document() -> Value {
    let pairs: Vec<(&str, &str, &str)> = STACKS
        .iter()
        .map(|s| (*s, *s, "in-process"))
        .chain([
            ("rustls-aws-lc-rs", "s2n-tls-recvbuf", "in-process"),
            ("rustls-aws-lc-rs", "s2n-tls-recvbuf", "split-process"),
            ("boringssl", "openssl", "split-process"),
        ])
        .collect();
    let metrics = [
        ("handshakes_per_s", "1/s", 17376.0),
        ("read_calls", "calls", 8.0),
        ("allocations_per_handshake", "allocations", 156.5),
    ];
    let mut results = Vec::new();
    for metric in metrics {
        for scenario in SCENARIOS {
            for &(client, server, process) in &pairs {
                for side in ["client", "server"] {
                    let cell = cell(scenario, client, server, process, side, metric);
                    results.push(match (client, scenario.contains("_1.2_")) {
                        ("bertie", true) => without_number(cell, "unsupported", "bertie: TLS 1.2 not supported"),
                        ("boringssl", _) if server == "openssl" => without_number(cell, "failed", LONG_REASON),
                        _ => cell,
                    });
                }
            }
        }
    }
    // What a stack supports does not show in the table.
    let nothing = json!({
        "kinds": [], "versions": [], "groups": [], "keys": [], "suites": [], "client_auth": [], "ems_off": false
    });
    let stacks: Vec<Value> =
        STACKS.iter().map(|id| json!({ "id": id, "library": format!("{id} 1.0"), "capabilities": nothing })).collect();
    json!({
        "schema_version": 1,
        "run": {
            "id": "20261123T000000Z-0001", "started": "2026-11-23T00:00:00Z", "tlsbench_version": "0.1.0",
            "command_line": ["tlsbench", "run"],
            "environment": {
                "cpu": "test", "cores": 2, "kernel": "6", "rustc": "1.85", "allocator": "system", "aslr": "on",
                "governor": "performance"
            },
            "stacks": stacks, "samples": 6, "min_time_ms": 20, "warmup_ms": 10
        },
        "results": results
    })
}

/// `tlsbench show` of [`document`].
fn shown() -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nine.json");
    std::fs::write(&path, serde_json::to_string(&document()).unwrap()).unwrap();
    let output = tlsbench(dir.path()).arg("show").arg(&path).output().unwrap();
    String::from_utf8(succeeded(output).stdout).unwrap()
}

/// The lines of each metric's block, by the metric its heading names.
fn blocks(text: &str) -> Vec<(String, Vec<&str>)> {
    let mut blocks: Vec<(String, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        if line.starts_with("figure ±") {
            break;
        }
        match line.split_once(" (") {
            Some((metric, _)) if !metric.contains(' ') && !metric.is_empty() => {
                blocks.push((metric.to_string(), Vec::new()))
            }
            _ => blocks.last_mut().expect("the table starts with a heading").1.push(line),
        }
    }
    blocks
}

#[test]
fn nine_stacks_and_long_names_fit_120_columns() {
    let text = shown();
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 120, "a line of {widest} characters:\n{text}");
    let metrics: Vec<String> = blocks(&text).into_iter().map(|(metric, _)| metric).collect();
    assert_eq!(metrics, ["handshakes_per_s", "read_calls", "allocations_per_handshake"], "{text}");
    for (metric, lines) in blocks(&text) {
        for pair in STACKS.iter().map(|s| s.to_string()).chain([
            "rustls-aws-lc-rs -> s2n-tls-recvbuf".to_string(),
            "rustls-aws-lc-rs -> s2n-tls-recvbuf [split]".to_string(),
            "boringssl -> openssl [split]".to_string(),
        ]) {
            let rows = lines
                .iter()
                .filter(|l| l.starts_with(&format!("{pair} ")) && !l.starts_with(&format!("{pair} [split]")))
                .count();
            assert!(rows >= 1, "{metric}: no row for {pair}:\n{text}");
        }
    }
}

#[test]
fn counts_are_whole_or_keep_their_fraction_and_have_no_spread_while_rates_keep_theirs() {
    let text = shown();
    for (metric, lines) in blocks(&text) {
        let rows: Vec<&&str> = lines.iter().filter(|l| l.starts_with("rustls-ring ")).collect();
        assert!(!rows.is_empty(), "{metric}:\n{text}");
        for row in rows {
            let cells: Vec<&str> = row
                .split(" | ")
                .skip(1)
                .flat_map(|group| group.split("  "))
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            assert!(!cells.is_empty(), "{row}");
            for cell in cells {
                match metric.as_str() {
                    "handshakes_per_s" => assert!(
                        cell.starts_with("17,") && cell.contains(" ±") && cell.ends_with('%'),
                        "{cell} in {row}"
                    ),
                    "read_calls" => assert_eq!(cell, "8", "{row}"),
                    _ => assert_eq!(cell, "156.5", "{row}"),
                }
            }
        }
    }
    let outlier_rows = text.lines().filter(|l| l.starts_with("openssl ") && l.contains("% *")).count();
    assert!(outlier_rows >= 1, "openssl's rates have an outlier:\n{text}");
}

#[test]
fn each_reason_is_listed_once_whole_and_its_cells_point_at_it() {
    let text = shown();
    let reasons: Vec<&str> = text.split('\n').filter(|l| l.starts_with('[')).collect();
    assert_eq!(reasons.len(), 2, "{text}");
    let listed = |status: &str| {
        let at = text.find(&format!("] {status}: ")).unwrap_or_else(|| panic!("no {status} reason:\n{text}"));
        let number = &text[text[..at].rfind('[').unwrap()..=at];
        let reason: String = text[at..]
            .lines()
            .take_while(|l| !l.starts_with('[') || l.starts_with(number))
            .collect::<Vec<_>>()
            .join(" ");
        (number.to_string(), reason.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    let (failed, reason) = listed("failed");
    assert!(reason.ends_with(LONG_REASON), "the long reason, wrapped, is whole: {reason}");
    let (unsupported, _) = listed("n/a");
    let rows = |label: &str| text.lines().filter(|l| l.starts_with(&format!("{label} "))).collect::<Vec<_>>();
    for row in rows("boringssl -> openssl [split]") {
        assert!(row.split(" | ").skip(1).all(|group| group.contains(&format!("failed{failed}"))), "{row}");
    }
    assert!(rows("bertie").iter().any(|row| row.contains(&format!("n/a{unsupported}"))), "{text}");
    assert!(!rows("bertie").iter().any(|row| row.contains("failed")), "{text}");
}

#[test]
fn a_quick_run_measures_the_headline_scenarios_and_says_how_to_measure_more() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args(["run", "--quick", "--stack", "openssl", "--measure", "io", "--samples", "1", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    let output = succeeded(output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let doc = read_json(&json);
    let mut scenarios: Vec<&str> =
        doc["results"].as_array().unwrap().iter().map(|r| r["scenario"].as_str().unwrap()).collect();
    scenarios.dedup();
    assert_eq!(
        scenarios,
        [
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm",
        ]
    );
    assert!(stderr.lines().all(|l| l.chars().count() <= 120), "{stderr}");
    let hint = &stderr[stderr.find("This was the quick comparison").unwrap_or_else(|| panic!("{stderr}"))..];
    // A command longer than a line goes on, as a shell reads it, after ` \`.
    let hint = hint.replace(" \\\n    ", " ");
    let commands: Vec<&str> = hint.lines().filter(|l| l.starts_with("  ")).map(str::trim).collect();
    assert_eq!(commands.len(), 2, "{hint}");
    for command in &commands {
        assert!(
            command.contains(" run --stack openssl --measure io --samples 1 --export-json ")
                && !command.contains("--quick"),
            "{hint}"
        );
    }
    assert!(commands[1].ends_with(" --scenario '*'"), "{hint}");
}

#[test]
fn help_lists_one_line_per_command_and_wraps_every_help_on_words_within_120_columns() {
    let dir = tempfile::tempdir().unwrap();
    let help = |args: &[&str]| {
        let output = succeeded(tlsbench(dir.path()).args(args).env("COLUMNS", "120").output().unwrap());
        String::from_utf8(output.stdout).unwrap()
    };
    let top = help(&["--help"]);
    let commands: Vec<&str> =
        top.lines().skip_while(|l| *l != "Commands:").skip(1).take_while(|l| !l.is_empty()).collect();
    // Each command's line starts with its name; a wrapped description would add a line that
    // starts with spaces only.
    assert!(commands.len() >= 10, "{top}");
    for line in &commands {
        let name = line.split_whitespace().next().unwrap_or("");
        assert!(line.starts_with("  ") && !name.is_empty() && line.len() <= 120, "{line:?} in\n{top}");
        assert!(line[2..].starts_with(name), "a continuation line {line:?} in\n{top}");
    }
    let names: Vec<&str> = commands.iter().filter_map(|l| l.split_whitespace().next()).collect();
    for name in names.iter().filter(|n| **n != "help") {
        let text = help(&[name, "--help"]);
        // clap without its wrap_help feature leaves each paragraph on one line, for the terminal
        // to break inside words.
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "`{name} --help` line over 120: {line:?}");
        }
    }
}
