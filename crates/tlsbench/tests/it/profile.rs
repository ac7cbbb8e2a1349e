//! End-to-end: `tlsbench profile` on a real runner under valgrind, checked against valgrind's
//! own reader of the same file (callgrind_annotate), and its JSON shown by `report --html`.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

const SCENARIO: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
/// Few handshakes: the test is about reading the profile, not about its figures.
const ITERATIONS: &str = "3";
const CLASSES: [&str; 6] = ["TLS library", "crypto provider", "allocator", "libc", "harness", "other"];

fn tlsbench(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("tlsbench").unwrap();
    cmd.env("TLSBENCH_DATA_DIR", dir.join("data")).current_dir(dir);
    cmd
}

/// Stderr, with the lines tlsbench wrapped at 120 columns joined again.
fn stderr(output: &Output) -> String {
    crate::common::unwrapped(&output.stderr)
}

/// Profiles the server side of `stack` into `dir`/out; its stdout and the paths it wrote
/// (json, svg, callgrind).
fn profile(dir: &Path, stack: &str) -> (String, [PathBuf; 3]) {
    let output = tlsbench(dir)
        .args([
            "profile",
            SCENARIO,
            "--stack",
            stack,
            "--side",
            "server",
            "--iterations",
            ITERATIONS,
            "--top",
            "10",
            "--out",
            "out",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let file = |extension: &str| dir.join("out").join(format!("{stack}_server_{SCENARIO}.{extension}"));
    (String::from_utf8(output.stdout).unwrap(), [file("json"), file("svg"), file("callgrind")])
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// callgrind_annotate's function list: (count, `file:function`, object if it names one).
fn annotate(callgrind: &Path, inclusive: bool) -> Vec<(u64, String, Option<String>)> {
    let output = std::process::Command::new("callgrind_annotate")
        .args(["--threshold=100", "--auto=no", &format!("--inclusive={}", if inclusive { "yes" } else { "no" })])
        .arg(callgrind)
        .output()
        .expect("callgrind_annotate runs (it comes with valgrind)");
    assert!(output.status.success(), "{}", stderr(&output));
    // It warns, and goes on with wrong lines, where it misreads the file.
    assert_eq!(stderr(&output), "", "callgrind_annotate's complaints");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut rows = Vec::new();
    for line in text.lines() {
        // `1,234 (12.34%)  file:function [/object]`
        let Some((count, rest)) = line.trim_start().split_once(" (") else { continue };
        let Ok(count) = count.replace(',', "").parse::<u64>() else { continue };
        let Some((_, name)) = rest.split_once("%)  ") else { continue };
        let (name, object) = match name.rsplit_once(" [/") {
            Some((name, object)) => (name, Some(format!("/{}", object.trim_end_matches(']')))),
            None => (name, None),
        };
        rows.push((count, name.to_string(), object));
    }
    rows
}

/// The entries of callgrind_annotate for `function` of `object`: the ones that name it, and
/// those of code inlined into it, which callgrind_annotate lists under the inlined file.
/// The lock functions' entries are split by their chains of callers (`name'caller'...`, the
/// profile's `--separate-callers`), which the profile's tables merge: so are they here, an entry
/// of each file a function's lines come from.
fn entries(rows: &[(u64, String, Option<String>)], function: &Value) -> Vec<u64> {
    let name = format!(":{}", function["name"].as_str().unwrap());
    let object = function["object"].as_str().unwrap().to_string();
    let mut by_file: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for (count, n, o) in rows {
        let n = n.split('\'').next().unwrap();
        if n.ends_with(&name) && o.as_ref().is_none_or(|o| o.ends_with(&format!("/{object}"))) {
            *by_file.entry(n).or_default() += count;
        }
    }
    by_file.into_values().collect()
}

#[test]
fn the_profile_agrees_with_callgrind_annotate() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, [json, svg, callgrind]) = profile(dir.path(), "openssl");
    let profile = read_json(&json);
    let total = profile["total"].as_u64().unwrap();

    // The total is callgrind's, and the library classes add up to it.
    let exclusive = annotate(&callgrind, false);
    let program_total = exclusive.iter().find(|(_, name, _)| name == "PROGRAM TOTALS").map(|r| r.0);
    assert_eq!(program_total, Some(total));
    let classes: u64 = profile["classes"].as_array().unwrap().iter().map(|c| c["instructions"].as_u64().unwrap()).sum();
    assert_eq!(classes, total);
    for class in CLASSES {
        assert!(stdout.contains(class), "{class} missing from:\n{stdout}");
    }

    // Each top function's own instructions: callgrind_annotate splits a function's lines by the
    // file they come from (inlined code), so its entries add up to ours.
    for function in profile["by_exclusive"].as_array().unwrap() {
        let theirs: u64 = entries(&exclusive, function).into_iter().sum();
        assert_eq!(function["exclusive"].as_u64().unwrap(), theirs, "exclusive of {function}");
    }
    assert_flamegraph_holds_the_total(&std::fs::read_to_string(&svg).unwrap(), total);

    // With what it calls: callgrind_annotate gives a callee the sum of its calls' costs,
    // under the file the callee is in; its largest entry is that one.
    let inclusive = annotate(&callgrind, true);
    for function in profile["by_inclusive"].as_array().unwrap() {
        let theirs = entries(&inclusive, function).into_iter().max();
        assert_eq!(Some(function["inclusive"].as_u64().unwrap()), theirs, "inclusive of {function}");
    }

    // OpenSSL 3.0's locks: thousands of rwlock reads behind its wrapper CRYPTO_THREAD_read_lock,
    // taken by the functions above it, and the atomics of its reference counts.
    let sync = &profile["sync"];
    let per_handshake = |field: &str| sync[field].as_f64().unwrap() / profile["units"].as_f64().unwrap();
    assert!(per_handshake("rwlock_read_locks") > 100.0, "{sync:#}");
    assert!(per_handshake("atomic_rmw") >= per_handshake("rwlock_read_locks"), "{sync:#}");
    assert_eq!(per_handshake("futex_calls"), 0.0, "one thread contends with no one: {sync:#}");
    let takers = sync["takers"].as_array().unwrap();
    let read_locks: u64 =
        takers.iter().filter(|t| t["lock"] == "rwlock-read").map(|t| t["count"].as_u64().unwrap()).sum();
    assert!(read_locks > 0 && read_locks <= sync["rwlock_read_locks"].as_u64().unwrap(), "{sync:#}");
    for taker in takers {
        let function = taker["function"].as_str().unwrap();
        assert!(!function.contains("CRYPTO_THREAD_") && !function.starts_with("pthread_"), "a wrapper: {taker}");
    }
    assert!(takers.iter().any(|t| t["via"][0] == "CRYPTO_THREAD_read_lock"), "{sync:#}");
    assert!(stdout.contains("Functions that take the most locks"), "{stdout}");
    assert!(stdout.contains("rwlock read"), "{stdout}");
}

#[test]
fn the_flamegraph_and_the_json_go_into_the_html_report() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, [json, svg, _]) = profile(dir.path(), "rustls-aws-lc-rs");
    for class in CLASSES {
        assert!(stdout.contains(class), "{class} missing from:\n{stdout}");
    }
    let profile = read_json(&json);
    // rustls and aws-lc-rs are linked into the runner: told apart by their source paths.
    let share = |class: &str| {
        profile["classes"].as_array().unwrap().iter().find(|c| c["class"] == class).unwrap()["instructions"]
            .as_u64()
            .unwrap()
    };
    assert!(share("tls") > 0 && share("crypto") > share("tls"), "{:#}", profile["classes"]);

    // The SVG is well-formed XML, the same as the JSON holds.
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("<svg"));
    assert_eq!(profile["svg"].as_str().unwrap(), svg_text);
    let mut reader = quick_xml::Reader::from_str(&svg_text);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("the flamegraph is not well-formed XML at {}: {e}", reader.buffer_position()),
        }
    }

    assert_flamegraph_holds_the_total(&svg_text, profile["total"].as_u64().unwrap());

    // A run to report on, then the report with the profile.
    let run = tlsbench(dir.path())
        .args([
            "run",
            "--stack",
            "rustls-aws-lc-rs",
            "--scenario",
            SCENARIO,
            "--samples",
            "1",
            "--min-time-ms",
            "1",
            "--warmup-ms",
            "0",
        ])
        .args(["--export-json", "run.json"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let report =
        tlsbench(dir.path()).args(["report", "run.json", "--html", "html", "--profile"]).arg(&json).output().unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let page = std::fs::read_to_string(dir.path().join("html").join("index.html")).unwrap();
    assert!(page.contains("<section id=\"profiles\">"));
    assert!(page.contains("data:image/svg+xml;base64,"));
    let top = profile["by_exclusive"][0]["name"].as_str().unwrap();
    assert!(page.contains(top), "{top} missing from the page");
}

#[test]
fn bad_input_names_the_valid_choices() {
    let dir = tempfile::tempdir().unwrap();
    let fails = |args: &[&str], expected: &str| {
        let output = tlsbench(dir.path()).arg("profile").args(args).output().unwrap();
        assert!(!output.status.success());
        assert!(stderr(&output).contains(expected), "`{expected}` missing from: {}", stderr(&output));
    };
    fails(
        &[SCENARIO, "--stack", "no-such-tls", "--side", "server"],
        "unknown stack `no-such-tls` (valid: rustls-aws-lc-rs, ",
    );
    fails(&[SCENARIO, "--stack", "openssl", "--side", "both"], "unknown side `both` (valid: client, server)");
    fails(&["handshake-full_1.3_x25519_ecdsa-p256_aes-512", "--stack", "openssl", "--side", "server"], "aes-512");
    fails(
        &["io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--stack", "openssl", "--side", "server"],
        "covers scenarios of kind handshake-full, ",
    );
    fails(
        &[SCENARIO, "--stack", "openssl", "--side", "server", "--peer", "boringssl"],
        "no runner holds both `openssl` and `boringssl`",
    );
}

#[test]
fn valgrind_missing_is_said_with_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    // A PATH with the other programs the measure runs, but not valgrind.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for program in ["env", "setarch"] {
        let found = which(program);
        std::os::unix::fs::symlink(found, bin.join(program)).unwrap();
    }
    let output = tlsbench(dir.path())
        .env("PATH", &bin)
        .args(["profile", SCENARIO, "--stack", "openssl", "--side", "server"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(stderr(&output).contains("valgrind, which is not in PATH (install valgrind)"), "{}", stderr(&output));
}

#[test]
fn a_runner_that_fails_under_valgrind_shows_its_last_words() {
    let dir = tempfile::tempdir().unwrap();
    // A runner that holds openssl (its list is the real runner's) and dies when it samples.
    let real = Command::cargo_bin("tlsbench-runner-openssl").unwrap().get_program().to_owned();
    let list = std::process::Command::new(&real).arg("list").output().unwrap();
    let mut reply: Value = serde_json::from_slice(&list.stdout).unwrap();
    reply["stacks"].as_array_mut().unwrap().retain(|s| s["id"] == "openssl");
    let runners = dir.path().join("runners");
    std::fs::create_dir(&runners).unwrap();
    std::fs::write(runners.join("list.json"), serde_json::to_string(&reply).unwrap()).unwrap();
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = list ]; then cat {}; exit 0; fi\n\
         echo 'the library aborted: no entropy' >&2\nexit 3\n",
        runners.join("list.json").display()
    );
    let runner = runners.join("tlsbench-runner-dying");
    crate::common::executable(&runner, &script);

    let output = tlsbench(dir.path())
        .env("TLSBENCH_RUNNER_DIR", &runners)
        .args(["profile", SCENARIO, "--stack", "openssl", "--side", "server", "--iterations", "1"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let error = stderr(&output);
    assert!(error.contains("the library aborted: no entropy") && error.contains("exit"), "{error}");
}

fn which(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not in PATH"))
}

/// The flamegraph's stacks add up to the instructions collected: its root frame (`all`) says
/// their sum. Calls cut where a cycle closes (mutual recursion, whose calls callgrind counts
/// inside each other) may leave a little out; the calls below the cut-off are in it, as frames
/// of their own.
fn assert_flamegraph_holds_the_total(svg: &str, total: u64) {
    let title = svg.split("<title>all (").nth(1).expect("the flamegraph has its root frame");
    let folded: u64 = title.split(' ').next().unwrap().replace(',', "").parse().unwrap();
    assert!(folded.abs_diff(total) <= total / 500, "the flamegraph holds {folded} of {total} instructions");
}
