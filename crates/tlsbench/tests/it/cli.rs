//! End-to-end: the real tlsbench binary with its real runners (built by `cargo test --workspace`).

use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use common::{read_json, succeeded, tlsbench};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn results(doc: &Value) -> &Vec<Value> {
    doc["results"].as_array().unwrap()
}

#[test]
fn list_stacks_shows_each_library_version() {
    let dir = tempfile::tempdir().unwrap();
    let output = tlsbench(dir.path()).args(["list", "stacks"]).output().unwrap();
    let output = succeeded(output);
    let text = String::from_utf8(output.stdout).unwrap();
    for needle in
        ["rustls-aws-lc-rs", "rustls 0.23.", "(aws-lc-rs 1.", "rustls-ring", "(ring 0.17.", "openssl", "OpenSSL 3."]
    {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
}

#[test]
fn a_reader_that_stops_early_is_no_error() {
    // `tlsbench list scenarios | head -1`: the pipe closes while tlsbench still writes.
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tlsbench"))
        .env("TLSBENCH_DATA_DIR", dir.path().join("data"))
        .args(["list", "scenarios", "--stack", "openssl"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with("handshake-"), "{first}");
    let output = child.wait_with_output().unwrap();
    let stderr = stderr(&output);
    assert!(output.status.success() && !stderr.contains("panicked"), "{:?}: {stderr}", output.status);
}

#[test]
fn list_scenarios_gives_canonical_names() {
    let dir = tempfile::tempdir().unwrap();
    let output = tlsbench(dir.path()).args(["list", "scenarios"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.lines().count(), tlsbench_harness::Scenario::all().len());
    assert!(text.lines().any(|l| l == "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"));
    assert!(text.lines().any(|l| l == "transfer_1.2_x25519_ecdsa-p256_chacha20-poly1305"));
    assert!(text.lines().any(|l| l == "handshake-resume-ticket_1.3_x25519mlkem768_ed25519_chacha20-poly1305_mtls"));
}

#[test]
fn list_scenarios_for_a_stack_says_which_it_supports_and_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let output = tlsbench(dir.path()).args(["list", "scenarios", "--stack", "openssl"]).output().unwrap();
    let output = succeeded(output);
    let text = String::from_utf8(output.stdout).unwrap();
    // A scenario's line, and the next one: where the verdict does not fit beside its scenario
    // in 120 columns, it is there, indented.
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().all(|l| l.chars().count() <= 120), "{text}");
    let support = |name: &str| {
        let at = lines.iter().position(|l| l.split_whitespace().next() == Some(name));
        let at = at.unwrap_or_else(|| panic!("{name}"));
        match lines[at].split_once(' ') {
            Some((_, support)) => support.trim().to_string(),
            None => lines[at + 1].trim().to_string(),
        }
    };
    assert_eq!(support("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"), "supported (in the default run)");
    assert_eq!(support("handshake-resume-id_1.2_secp384r1_rsa-4096_aes-256-gcm_mtls_no-ems"), "supported");
    assert_eq!(
        support("handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm"),
        "unsupported: openssl: group x25519mlkem768 not supported"
    );
    let output = tlsbench(dir.path()).args(["list", "scenarios", "--stack", "rustls-ring"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems")
            && text.contains("unsupported: rustls-ring: extended master secret cannot be switched off")
    );
}

#[test]
fn a_run_exports_the_design_s_json_csv_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv, md) = (dir.path().join("r.json"), dir.path().join("r.csv"), dir.path().join("r.md"));
    let output = tlsbench(dir.path())
        .args([
            "run",
            "--stack",
            "rustls-aws-lc-rs",
            "--stack",
            "openssl",
            "--samples",
            "6",
            "--min-time-ms",
            "5",
            "--warmup-ms",
            "1",
        ])
        .args([
            "--scenario",
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "--scenario",
            "transfer_1.2_*_aes-256-gcm",
        ])
        .args(["--measure", "time", "--measure", "io"])
        .arg("--export-json")
        .arg(&json)
        .arg("--export-csv")
        .arg(&csv)
        .arg("--export-markdown")
        .arg(&md)
        .output()
        .unwrap();
    let output = succeeded(output);
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(
        table.contains("rustls-aws-lc-rs") && table.contains("openssl") && table.contains("handshakes_per_s"),
        "{table}"
    );

    let doc = read_json(&json);
    assert_eq!(doc["schema_version"], 1);
    for key in ["id", "started", "tlsbench_version"] {
        assert!(doc["run"][key].is_string(), "run.{key}");
    }
    for key in ["cpu", "kernel", "rustc", "allocator", "aslr", "governor"] {
        assert!(doc["run"]["environment"][key].is_string(), "environment.{key}");
    }
    let conditions = &doc["run"]["environment"]["conditions"];
    for key in ["load_average_start", "load_average_end", "steal_percent"] {
        assert!(conditions[key].as_f64().is_some_and(|x| x >= 0.0), "conditions.{key}: {conditions}");
    }
    for key in ["calibration_before", "calibration_after"] {
        let calibration = &conditions[key];
        assert!(
            calibration["median_ms"].as_f64().unwrap() > 0.0 && calibration["spread_percent"].as_f64().unwrap() >= 0.0,
            "{calibration}"
        );
    }
    assert_eq!(
        doc["run"]["environment"]["cores"].as_u64().unwrap() as usize,
        std::thread::available_parallelism().unwrap().get()
    );
    // 2 stacks x 2 sides x (time: handshake rate, transfer rate, each by wall and CPU time; io:
    // the handshake's counts; transfer has no io).
    let io_counts =
        tlsbench_harness::protocol::Metric::of(tlsbench_harness::Measure::Io, tlsbench_harness::Kind::HandshakeFull)
            .len();
    let results = results(&doc);
    assert_eq!(results.len(), 2 * 2 * (4 + io_counts));
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["client_stack"], r["server_stack"]);
        let (measure, better) = match r["metric"].as_str().unwrap() {
            "handshakes_per_s" | "mb_per_s" | "cpu_handshakes_per_s" | "cpu_mb_per_s" => ("time", "higher"),
            _ => ("io", "lower"),
        };
        assert_eq!((r["measure"].as_str().unwrap(), r["better"].as_str().unwrap()), (measure, better), "{r}");
        // The time rates' figure is their faster half's mean; counts have their median alone.
        assert_eq!(r["faster_half_mean"].is_f64(), measure == "time", "{r}");
        let library = r["client_library"].as_str().unwrap();
        match r["client_stack"].as_str().unwrap() {
            "openssl" => assert!(library.starts_with("OpenSSL 3."), "{library}"),
            _ => assert!(library.starts_with("rustls 0.23.") && library.contains("aws-lc-rs"), "{library}"),
        }
        let samples: Vec<f64> = r["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        // A time cell takes further samples only in place of rates a noisy machine slowed, which
        // its summary sets aside (docs/sampling.md, "A noisy machine"); at most as many again.
        let slowed: Vec<usize> =
            r["slowed"].as_array().map_or(Vec::new(), |s| s.iter().map(|i| i.as_u64().unwrap() as usize).collect());
        assert!((6..=12).contains(&samples.len()) && (slowed.is_empty() || measure == "time"), "{r}");
        let kept: Vec<f64> = (0..samples.len()).filter(|i| !slowed.contains(i)).map(|i| samples[i]).collect();
        assert!(kept.len() >= 6 || samples.len() >= 8, "{r}");
        let (median, min, max) =
            (r["median"].as_f64().unwrap(), r["min"].as_f64().unwrap(), r["max"].as_f64().unwrap());
        let least = |a: f64, b: f64| a.min(b);
        assert_eq!(
            (min, max),
            (kept.iter().copied().fold(f64::INFINITY, least), kept.iter().copied().fold(0.0, f64::max))
        );
        let ci = r["ci95"].as_array().unwrap();
        let (low, high) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        // A count's interval is the median's: up to eight samples kept, their range. A time rate's
        // is its figure's, the mean of the faster half, as far as the farther of the fastest sample
        // and the slower half's fastest; widened on the ratio scale by the machine's drift (half
        // the calibration loop's spread without the loops a neighbour slowed).
        let by = match r["measure"] == "time" {
            true => {
                let conditions = &doc["run"]["environment"]["conditions"];
                let spread = |when: &str| {
                    let calibration = &conditions[when];
                    calibration["kept_spread_percent"].as_f64().or(calibration["spread_percent"].as_f64()).unwrap()
                };
                1.0 + spread("calibration_before").max(spread("calibration_after")) / 200.0
            }
            false => 1.0,
        };
        assert!(min > 0.0 && low > 0.0 && low <= median && median <= high, "{r}");
        match r["faster_half_mean"].as_f64() {
            Some(figure) => {
                assert_eq!(measure, "time", "{r}");
                assert!((figure / common::faster_half_mean(kept.clone()) - 1.0).abs() < 1e-12, "{r}");
                let mut sorted = kept.clone();
                sorted.sort_by(f64::total_cmp);
                let reach = (figure - sorted[sorted.len() / 2 - 1]).max(max - figure);
                let (expected_low, expected_high) = ((figure - reach) / by, (figure + reach) * by);
                assert!((low / expected_low - 1.0).abs() < 1e-9 && (high / expected_high - 1.0).abs() < 1e-9, "{r}");
            }
            None if kept.len() <= 8 => {
                assert!((low * by / min - 1.0).abs() < 1e-9 && (high / by / max - 1.0).abs() < 1e-9, "{r}")
            }
            None => assert!(low * by >= min && high / by <= max, "{r}"),
        }
        let units: &[(&str, &str)] = match r["scenario"].as_str().unwrap().starts_with("transfer") {
            true => &[("mb_per_s", "MB/s"), ("cpu_mb_per_s", "MB/s")],
            false => &[
                ("handshakes_per_s", "1/s"),
                ("cpu_handshakes_per_s", "1/s"),
                ("read_calls", "calls"),
                ("write_calls", "calls"),
                ("io_calls", "calls"),
                ("empty_read_calls", "calls"),
                ("records_written", "records"),
                ("bytes_written", "B"),
            ],
        };
        assert!(units.contains(&(r["metric"].as_str().unwrap(), r["unit"].as_str().unwrap())), "{r}");
    }
    let sides: Vec<&str> = results.iter().map(|r| r["side"].as_str().unwrap()).collect();
    assert_eq!(sides.iter().filter(|s| **s == "client").count(), results.len() / 2);

    let csv = std::fs::read_to_string(csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + results.len());
    // The cell key's columns first, then each side's numbers.
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("scenario,client_stack,server_stack,measure,process,allocator,threads,contexts,build,"),
        "{header}"
    );
    assert!(header.contains(",side,metric,unit,better,status,median,faster_half_mean,ci95_low,ci95_high,"), "{header}");
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("transfer_1.2_x25519_ecdsa-p256_aes-256-gcm") && md.contains("| scenario"), "{md}");
}

#[test]
fn an_interop_pair_names_both_stacks_and_libraries() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args([
            "run",
            "--client",
            "rustls-ring",
            "--server",
            "openssl",
            "--samples",
            "2",
            "--min-time-ms",
            "2",
            "--warmup-ms",
            "0",
        ])
        .args(["--scenario", "handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305"])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    let output = succeeded(output);
    assert!(String::from_utf8(output.stdout).unwrap().contains("rustls-ring -> openssl"));
    for r in results(&read_json(&json)) {
        assert_eq!((r["client_stack"].as_str(), r["server_stack"].as_str()), (Some("rustls-ring"), Some("openssl")));
        assert!(r["client_library"].as_str().unwrap().contains("(ring "), "{r}");
        assert!(r["server_library"].as_str().unwrap().starts_with("OpenSSL 3."), "{r}");
        assert_eq!(r["status"], "ok");
    }
}

/// A message on stderr as one paragraph: its lines, each at most 120 columns, joined back where
/// they were wrapped (a continuation line is indented).
#[track_caller]
fn unwrapped(err: &str) -> String {
    let err = &without_gpl_note(err);
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.iter().all(|l| l.chars().count() <= 120), "a line over 120 columns:\n{err}");
    assert!(lines.iter().skip(1).all(|l| l.starts_with("  ")), "not one wrapped paragraph:\n{err}");
    lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ")
}

/// `err` without the note that a run naming no stack prints where a GPL-only stack is built (as
/// scripts/test.sh builds wolfSSL's runner), and not elsewhere.
fn without_gpl_note(err: &str) -> String {
    err.lines().filter(|l| !l.starts_with("note: GPL-only, so measured only when named")).collect::<Vec<_>>().join("\n")
}

#[test]
fn bad_input_gets_one_message_naming_the_valid_choices() {
    let dir = tempfile::tempdir().unwrap();
    let seconds = |option: &str, value: &str| {
        format!(
            "invalid value '{value}' for '{option} <SECONDS>': \
             `{value}` is not a number of seconds from 0.001 to 604800 (a week)"
        )
    };
    let load = ["load", "--stack", "openssl", "--connect", "127.0.0.1:9"];
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (
            vec!["run", "--stack", "no-such-tls"],
            2,
            "unknown stack `no-such-tls` (valid: rustls-aws-lc-rs, rustls-ring, rustls-aws-lc-rs-fips, openssl, \
             boringssl, aws-lc, aws-lc-fips, gnutls, libtls, s2n-tls, s2n-tls-recvbuf, bertie, wolfssl, go, jsse, \
             netty-tcnative; \
             and ID@RELEASE for a stack at another release of its library, once built: docs/versions.md)"
                .into(),
        ),
        (vec!["run", "--client", "openssl"], 2, "--server".into()),
        (vec!["run", "--scenario", "handshake-resume_*"], 1, "no scenario matches `handshake-resume_*`".into()),
        (
            vec!["run", "--measure", "cpu"],
            2,
            "invalid value 'cpu' for '--measure <M>': \
             unknown measure `cpu` (valid: time, instructions, sync, io, heap, rss, net"
                .into(),
        ),
        (vec!["run", "--samples", "0"], 2, "--samples".into()),
        (
            vec!["run", "--target-ci", "0"],
            2,
            "invalid value '0' for '--target-ci <PCT>': `0` is not a percentage above 0 and below 100 (e.g. 2%)".into(),
        ),
        (vec!["run", "--target-ci", "abc"], 2, "`abc` is not a percentage above 0 and below 100 (e.g. 2%)".into()),
        (vec!["run", "--target-ci", "2%", "--time-budget", "-1"], 2, seconds("--time-budget", "-1")),
        (vec!["run", "--timeout", "1e30"], 2, seconds("--timeout", "1e30")),
        (vec!["run", "--time-budget", "60"], 2, "--target-ci".into()),
        (
            vec!["run", "--measure", "rss", "--scenario", "transfer_*"],
            1,
            "`transfer_*` selects transfer scenarios, which no measure of this run applies to".into(),
        ),
        // Not a panic with a backtrace, as --io-timeout once was.
        ([&load[..], &["--io-timeout", "nan"]].concat(), 2, seconds("--io-timeout", "nan")),
        ([&load[..], &["--io-timeout", "inf"]].concat(), 2, seconds("--io-timeout", "inf")),
        ([&load[..], &["--io-timeout", "-1"]].concat(), 2, seconds("--io-timeout", "-1")),
        ([&load[..], &["--io-timeout", "0"]].concat(), 2, seconds("--io-timeout", "0")),
        ([&load[..], &["--duration", "-5"]].concat(), 2, seconds("--duration", "-5")),
    ];
    for (args, code, needle) in cases {
        let output = tlsbench(dir.path()).args(&args).output().unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {err}");
        let message = unwrapped(&err);
        assert!(message.starts_with("error: ") && message.contains(&needle), "{args:?}: {err}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn a_long_error_is_wrapped_at_120_columns() {
    // The unknown-stack error names every valid stack: longer than a line.
    let dir = tempfile::tempdir().unwrap();
    let output = tlsbench(dir.path()).args(["run", "--stack", "no-such-tls"]).output().unwrap();
    let err = stderr(&output);
    assert!(err.lines().count() > 1, "{err}");
    assert!(err.lines().all(|l| l.chars().count() <= 120), "{err}");
    assert!(err.starts_with("error: invalid value 'no-such-tls' for '--stack <ID>': unknown stack"), "{err}");
    assert!(err.lines().skip(1).all(|l| l.starts_with("  ") && !l.starts_with("   ")), "{err}");
    assert!(unwrapped(&err).ends_with("once built: docs/versions.md) (see --help)"), "{err}");
}

/// The samples of `metric` on `side` of the results of (stack, scenario, process).
fn samples_of(doc: &Value, stack: &str, scenario: &str, process: &str, side: &str, metric: &str) -> Vec<f64> {
    let r = results(doc)
        .iter()
        .find(|r| {
            (&r["client_stack"], &r["scenario"], &r["process"], &r["side"], &r["metric"])
                == (&stack.into(), &scenario.into(), &process.into(), &side.into(), &metric.into())
        })
        .unwrap_or_else(|| panic!("no {metric} of {side} in {stack} {scenario} {process}"));
    r["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
}

#[test]
fn cpu_time_is_reported_for_both_sides_and_is_at_most_their_wall_time() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let (full, transfer) =
        ("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm");
    let output = tlsbench(dir.path())
        .args(["run", "--stack", "openssl", "--stack", "rustls-aws-lc-rs", "--process", "both", "--samples", "3"])
        .args(["--min-time-ms", "20", "--warmup-ms", "5", "--scenario", full, "--scenario", transfer, "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    succeeded(output);
    let doc = read_json(&json);
    for stack in ["openssl", "rustls-aws-lc-rs"] {
        for (scenario, wall, cpu) in
            [(full, "handshakes_per_s", "cpu_handshakes_per_s"), (transfer, "mb_per_s", "cpu_mb_per_s")]
        {
            for process in ["in-process", "split-process"] {
                for side in ["client", "server"] {
                    let (wall, cpu) = (
                        samples_of(&doc, stack, scenario, process, side, wall),
                        samples_of(&doc, stack, scenario, process, side, cpu),
                    );
                    assert_eq!(wall.len(), cpu.len());
                    // Same work in each sample: a rate by CPU time is at least the rate by wall time,
                    // as one thread's CPU time is at most its wall time (10% allowed, as when the
                    // CPU clock was read around each call; the figure is now the calls' wall time
                    // less the time the thread was switched out, held against the kernel's thread
                    // clock by the harness's cpu_time tests).
                    for (w, c) in wall.iter().zip(&cpu) {
                        assert!(
                            *w > 0.0 && c.is_finite() && *c >= w / 1.10,
                            "{stack} {scenario} {process} {side}: wall {w}, cpu {c}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn target_ci_takes_further_samples_until_met_or_says_which_cells_missed_it() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let run = |target: &str, budget: &str| {
        tlsbench(dir.path())
            .args(["run", "--stack", "rustls-ring", "--samples", "6", "--min-time-ms", "20", "--warmup-ms", "0"])
            .args([
                "--scenario",
                "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
                "--target-ci",
                target,
                "--time-budget",
                budget,
            ])
            .arg("--export-json")
            .arg(&json)
            .output()
            .unwrap()
    };
    // Met by the first 6 samples: no further round. The table's intervals are then widened by
    // the machine's drift, measured after the run: on a loaded machine (load 8 on 2 cores) that
    // alone can take them past 99%, and the note must then name the cell rather than claim it.
    let output = run("99%", "60");
    let output = succeeded(output);
    let table = String::from_utf8_lossy(&output.stdout).replace("\n  ", " ");
    assert!(
        table.contains("--target-ci 99%: every result reached it")
            || (table.contains("--target-ci 99%: ")
                && table.contains("did not reach it within the time budget of 60 s: rustls-ring")),
        "{table}"
    );
    let doc = read_json(&json);
    // No further round for the target; samples beyond 6 only in place of slowed ones (at most 6 more).
    assert!(results(&doc).iter().all(|r| (6..=12).contains(&r["samples"].as_array().unwrap().len())));
    assert_eq!((doc["run"]["target_ci"].as_f64(), doc["run"]["time_budget_s"].as_f64()), (Some(99.0), Some(60.0)));
    // Out of reach: further rounds until the budget is spent, every sample kept, and the table
    // names what missed.
    let output = run("0.0001", "5");
    let output = succeeded(output);
    assert!(
        crate::common::unwrapped(&output.stderr)
            .contains("--target-ci 0.0001%: after 6 samples per cell, further rounds"),
        "{}",
        stderr(&output)
    );
    let table = String::from_utf8_lossy(&output.stdout).replace("\n  ", " ");
    assert!(table.contains("did not reach it within the time budget of 5 s: rustls-ring"), "{table}");
    let doc = read_json(&json);
    assert!(results(&doc).iter().all(|r| r["samples"].as_array().unwrap().len() > 6), "{doc}");
}

#[test]
fn a_pair_that_a_stack_declares_it_cannot_complete_is_not_applicable_with_the_reason() {
    // Bertie's server sends no intermediate certificate: clients that verify the chain reject
    // it. The cell is n/a, in one process and split, and not a failure of the run.
    for process in ["auto", "split"] {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let output = tlsbench(dir.path())
            .args(["run", "--client", "rustls-ring", "--server", "bertie", "--process", process, "--samples", "1"])
            .args(["--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--export-json"])
            .arg(&json)
            .output()
            .unwrap();
        assert!(output.status.success(), "{process}: {}", stderr(&output));
        for r in results(&read_json(&json)) {
            assert_eq!(r["status"], "unsupported", "{r}");
            assert!(
                r["reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("bertie: its server sends the leaf certificate without the intermediate"),
                "{r}"
            );
        }
    }
}

/// Kills the first runner that `parent` started to measure `stack` as client, polling for up to
/// `limit`. Only `parent`'s children: other tests run their own runners at the same time.
fn kill_runner_of(parent: u32, stack: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            let is_runner = args.first().is_some_and(|a| a.ends_with(b"tlsbench-runner-openssl"));
            let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
            let ours = status.lines().any(|l| l.strip_prefix("PPid:").is_some_and(|p| p.trim() == parent.to_string()));
            if ours && is_runner && args.windows(2).any(|w| w[0] == b"--client" && w[1] == stack.as_bytes()) {
                let pid: i32 = entry.file_name().to_string_lossy().parse().unwrap();
                return std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success();
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

#[test]
fn a_runner_killed_mid_run_fails_its_cell_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = std::process::Command::new(PathBuf::from(env!("CARGO_BIN_EXE_tlsbench")))
        .env("TLSBENCH_DATA_DIR", dir.path().join("data"))
        .current_dir(dir.path())
        .args([
            "run",
            "--stack",
            "rustls-ring",
            "--stack",
            "openssl",
            "--samples",
            "3",
            "--min-time-ms",
            "150",
            "--warmup-ms",
            "0",
        ])
        .args(["--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"])
        .arg("--export-json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(kill_runner_of(child.id(), "openssl", Duration::from_secs(60)), "no openssl runner appeared");
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "a failed cell makes the exit status non-zero");
    assert!(
        stderr(&output).contains(
            "failed: handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm openssl: runner was killed by signal 9 (SIGKILL)"
        ),
        "{}",
        stderr(&output)
    );

    let doc = read_json(&json);
    for r in results(&doc) {
        match r["client_stack"].as_str().unwrap() {
            "openssl" => {
                assert_eq!(r["status"], "failed");
                assert_eq!(r["reason"], "runner was killed by signal 9 (SIGKILL)");
                assert!(r["median"].is_null() && r["samples"].as_array().unwrap().is_empty());
            }
            _ => {
                assert_eq!(r["status"], "ok", "{r}");
                // Further samples only in place of slowed ones, at most as many again.
                assert!((3..=6).contains(&r["samples"].as_array().unwrap().len()), "{r}");
            }
        }
    }
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(table.contains("failed") && table.contains("runner was killed by signal 9"), "{table}");
}

#[test]
fn a_pair_measured_in_one_process_and_split_in_one_run_names_each_way() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args(["run", "--client", "rustls-aws-lc-rs", "--server", "openssl", "--process", "both"])
        .args(["--samples", "2", "--min-time-ms", "3", "--warmup-ms", "0", "--db"])
        .arg(dir.path().join("r.db"))
        .args([
            "--scenario",
            "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls",
            "--scenario",
            "transfer_1.3_*_aes-128-gcm",
        ])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    let output = succeeded(output);
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(
        table.contains("rustls-aws-lc-rs -> openssl [split]") && table.contains("rustls-aws-lc-rs -> openssl "),
        "{table}"
    );
    let doc = read_json(&json);
    let results = results(&doc);
    // 2 process models x (handshake: 2 sides + transfer: 2 sides) x (wall time, CPU time).
    assert_eq!(results.len(), 16);
    for process in ["in-process", "split-process"] {
        let of: Vec<&Value> = results.iter().filter(|r| r["process"] == process).collect();
        assert_eq!(of.len(), 8, "{process}");
        for r in of {
            assert_eq!(r["status"], "ok", "{r}");
            assert!(
                r["client_library"].as_str().unwrap().contains("aws-lc-rs")
                    && r["server_library"].as_str().unwrap().starts_with("OpenSSL 3."),
                "{r}"
            );
            assert_eq!(r["samples"].as_array().unwrap().len(), 2);
        }
    }
}

#[test]
fn interop_asks_by_default_whether_each_pair_works_on_the_two_headline_handshakes() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args([
            "interop",
            "--stack",
            "openssl",
            "--stack",
            "rustls-ring",
            "--min-time-ms",
            "2",
            "--warmup-ms",
            "0",
            "--export-json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let output = succeeded(output);
    let doc = read_json(&json);
    let scenarios: std::collections::BTreeSet<&str> =
        results(&doc).iter().map(|r| r["scenario"].as_str().unwrap()).collect();
    let expected =
        ["handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"];
    assert_eq!(scenarios.into_iter().collect::<Vec<_>>(), expected);
    assert!(results(&doc).iter().all(|r| r["samples"].as_array().unwrap().len() == 2), "two samples per pair");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("To measure one pair precisely:\n  tlsbench run --client CLIENT --server SERVER"),
        "{stderr}"
    );
}

#[test]
fn interop_prints_a_matrix_of_every_client_against_every_server() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = tlsbench(dir.path())
        .args([
            "interop",
            "--stack",
            "openssl",
            "--stack",
            "rustls-ring",
            "--samples",
            "2",
            "--min-time-ms",
            "2",
            "--warmup-ms",
            "0",
        ])
        .args(["--scenario", "handshake-full_1.2_x25519_ecdsa-p256_chacha20-poly1305", "--db"])
        .arg(dir.path().join("r.db"))
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    let output = succeeded(output);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("handshake-full_1.2_x25519_ecdsa-p256_chacha20-poly1305: server side, handshakes_per_s"),
        "{text}"
    );
    assert!(text.contains("client \\ server") && text.lines().any(|l| l.starts_with("rustls-ring ")), "{text}");
    let pairs: Vec<(String, String)> = results(&read_json(&json))
        .iter()
        .map(|r| (r["client_stack"].as_str().unwrap().to_string(), r["server_stack"].as_str().unwrap().to_string()))
        .collect();
    for pair in
        [("openssl", "openssl"), ("openssl", "rustls-ring"), ("rustls-ring", "openssl"), ("rustls-ring", "rustls-ring")]
    {
        assert!(pairs.contains(&(pair.0.to_string(), pair.1.to_string())), "{pair:?} missing");
    }
    let output = tlsbench(dir.path()).args(["interop", "--client", "openssl", "--server", "openssl"]).output().unwrap();
    assert_eq!(
        without_gpl_note(&stderr(&output)).trim(),
        "error: interop pairs every client with every server; choose the stacks with --stack"
    );
}
