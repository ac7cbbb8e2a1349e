//! End-to-end: stacks at other releases of their libraries (docs/versions.md). OpenSSL 3.5 built
//! from source (scripts/build-openssl.sh 3.5) and rustls 0.23.29 (scripts/build-rustls.sh
//! 0.23.29) beside today's, in one run and across a pair; `compare` across releases with its
//! exit status; the gate on a rustls checkout; and what cannot be built, refused in one line.
//! A test that needs a release's runner is `#[ignore]`d, its reason naming what builds it, so
//! that a plain `cargo test` lists it as ignored: scripts/test.sh builds the releases it needs
//! and runs those tests with `--ignored`. Run so, a test whose runner is missing fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;
use crate::fake_go::runner_dir;
use common::{read_json, succeeded, tlsbench};

const OPENSSL: &str = "openssl@3.5";
const RUSTLS: &str = "rustls-aws-lc-rs@0.23.29";
const FULL_13: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// The directory of a release's runners, where tlsbench looks for them. The tests that call it
/// are `#[ignore]`d unless asked for (`--ignored`): one whose `runner` is not built there fails,
/// naming what builds it.
#[track_caller]
pub fn release_dir(release: &str, runner: &str, built_by: &str) -> PathBuf {
    let versions = match std::env::var_os("TLSBENCH_RELEASES_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => runner_dir().parent().unwrap().join("versions"),
    };
    let dir = versions.join(release);
    assert!(dir.join(runner).is_file(), "{} is not built ({built_by})", dir.display());
    dir
}

/// `today` and `release` (its stack at another release) measured in one short run of time:
/// each one's cells ok, against itself only, and reporting its own library, in the cells and in
/// the run's stacks.
pub fn measured_beside_today(today: &str, release: &str, today_library: &str, release_library: &str) {
    assert_ne!(today_library, release_library);
    let tmp = tempfile::tempdir().unwrap();
    let doc = run(tmp.path(), &[&TIME[..], &["--forks", "1", "--stack", today, "--stack", release]].concat());
    for (stack, library) in [(today, today_library), (release, release_library)] {
        let cells = cells(&doc, stack, stack);
        assert!(!cells.is_empty(), "no cells of {stack} in {doc}");
        for r in cells {
            assert_eq!(r["status"], "ok", "{r}");
            assert_eq!(
                (r["client_library"].as_str(), r["server_library"].as_str()),
                (Some(library), Some(library)),
                "{r}"
            );
        }
        let stacks = doc["run"]["stacks"].as_array().unwrap();
        let described = stacks.iter().find(|s| s["id"] == stack).unwrap_or_else(|| panic!("{stack} in {stacks:?}"));
        assert_eq!(described["library"], library, "{described}");
    }
    let results = doc["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["client_stack"] == today || r["client_stack"] == release), "only the two");
}

/// Fails unless openssl@3.5 is built.
fn need_openssl() {
    release_dir(OPENSSL, "tlsbench-runner-openssl-static", "scripts/build-openssl.sh 3.5");
}

/// Fails unless rustls@0.23.29 is built.
fn need_rustls() {
    release_dir("rustls@0.23.29", "tlsbench-runner-rustls", "scripts/build-rustls.sh 0.23.29");
}

fn script(name: &str) -> Command {
    Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts").join(name))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Heap: a count, quick and the same each time; taken with both sides in one process, so of one
/// runner's stacks; 5 samples, enough for compare's test to tell two releases apart.
const HEAP: [&str; 4] = ["--measure", "heap", "--samples", "5"];
/// Time, the shortest there is: what a pair of two runners shows.
const TIME: [&str; 8] = ["--measure", "time", "--samples", "2", "--min-time-ms", "2", "--warmup-ms", "0"];

/// A short run of FULL_13 with `args`, its results document.
fn run(dir: &Path, args: &[&str]) -> Value {
    let json = dir.join("run.json");
    let output =
        tlsbench(dir).args(["run", "--scenario", FULL_13]).args(args).arg("--export-json").arg(&json).output().unwrap();
    succeeded(output);
    read_json(&json)
}

/// The cells of a results document whose client is `client` and server `server`.
fn cells<'a>(doc: &'a Value, client: &str, server: &str) -> Vec<&'a Value> {
    let results = doc["results"].as_array().unwrap();
    results.iter().filter(|r| r["client_stack"] == client && r["server_stack"] == server).collect()
}

#[test]
#[ignore = "needs openssl@3.5 and rustls@0.23.29: scripts/build-openssl.sh 3.5, scripts/build-rustls.sh 0.23.29 \
            (scripts/test.sh builds them and runs this)"]
fn releases_beside_todays_in_one_run_each_with_its_own_library() {
    need_openssl();
    need_rustls();
    let tmp = tempfile::tempdir().unwrap();
    let doc = run(tmp.path(), &[&HEAP[..], &["--stack", "openssl", "--stack", OPENSSL, "--stack", RUSTLS]].concat());
    for (stack, library) in
        [("openssl", "OpenSSL 3."), (OPENSSL, "OpenSSL 3.5."), (RUSTLS, "rustls 0.23.29 (aws-lc-rs ")]
    {
        let cells = cells(&doc, stack, stack);
        assert!(!cells.is_empty(), "no cells of {stack}: {doc}");
        for cell in cells {
            assert_eq!(cell["status"], "ok", "{cell}");
            assert!(cell["client_library"].as_str().unwrap().starts_with(library), "{stack}: {cell}");
            assert!(cell["negotiated"].as_str().unwrap().starts_with("1.3 aes-128-gcm x25519"), "{cell}");
        }
    }
    // The system's OpenSSL is not 3.5: the two are told apart by the library each reports.
    let system = cells(&doc, "openssl", "openssl")[0]["client_library"].as_str().unwrap();
    assert!(!system.starts_with("OpenSSL 3.5."), "{system}");
}

#[test]
#[ignore = "needs openssl@3.5 and rustls@0.23.29: scripts/build-openssl.sh 3.5, scripts/build-rustls.sh 0.23.29 \
            (scripts/test.sh builds them and runs this)"]
fn a_pair_across_releases_handshakes_and_is_keyed_by_both_releases() {
    need_openssl();
    need_rustls();
    let tmp = tempfile::tempdir().unwrap();
    let doc = run(tmp.path(), &[&TIME[..], &["--client", OPENSSL, "--server", RUSTLS]].concat());
    let cells = cells(&doc, OPENSSL, RUSTLS);
    assert!(!cells.is_empty(), "no cells of {OPENSSL} against {RUSTLS}: {doc}");
    for cell in cells {
        assert_eq!(cell["status"], "ok", "{cell}");
        assert!(cell["client_library"].as_str().unwrap().starts_with("OpenSSL 3.5."), "{cell}");
        assert!(cell["server_library"].as_str().unwrap().starts_with("rustls 0.23.29 "), "{cell}");
    }
}

#[test]
#[ignore = "needs openssl@3.5: scripts/build-openssl.sh 3.5 (scripts/test.sh builds it and runs this)"]
fn compare_across_releases_gives_verdicts_and_fails_on_the_worse_one() {
    need_openssl();
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), &[&HEAP[..], &["--stack", "openssl", "--stack", OPENSSL]].concat());
    let compare = |a: &str, b: &str| {
        tlsbench(tmp.path())
            .args(["compare", "run.json", "run.json", "--stack-a", a, "--stack-b", b, "--fail-on-regression"])
            .output()
            .unwrap()
    };
    // One release against itself: the same cells, nothing worse.
    let same = succeeded(compare(OPENSSL, OPENSSL));
    let text = String::from_utf8_lossy(&same.stdout);
    assert!(text.contains(FULL_13) && text.contains(OPENSSL), "{text}");
    // OpenSSL 3.0 keeps about twice 3.5's heap per connection (docs/stacks.md#openssl-at-other-
    // releases): 3.0 judged against 3.5 is worse, and the gate says so in its exit status.
    let worse = compare(OPENSSL, "openssl");
    assert_eq!(worse.status.code(), Some(1), "{}{}", String::from_utf8_lossy(&worse.stdout), stderr(&worse));
    assert!(stderr(&worse).ends_with("worse in B than in A (--fail-on-regression)\n"), "{}", stderr(&worse));
}

/// `tlsbench profile` of a stack at a release: its statically linked OpenSSL is told apart by its
/// functions' names, and its locks are the sync measure's, counted over the same handshakes.
#[test]
#[ignore = "needs openssl@3.5: scripts/build-openssl.sh 3.5 (scripts/test.sh builds it and runs this)"]
fn profile_of_a_release_shows_its_libraries_and_the_sync_measure_s_locks() {
    need_openssl();
    let tmp = tempfile::tempdir().unwrap();
    let profile = tlsbench(tmp.path())
        .args(["profile", FULL_13, "--stack", OPENSSL, "--side", "client", "--top", "5", "--out", "out"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&succeeded(profile).stdout).into_owned();
    let profile = read_json(&tmp.path().join("out").join(format!("{OPENSSL}_client_{FULL_13}.json")));
    let share = |class: &str| {
        let classes = profile["classes"].as_array().unwrap();
        classes.iter().find(|c| c["class"] == class).unwrap()["instructions"].as_u64().unwrap()
    };
    let total = profile["total"].as_u64().unwrap();
    // libssl's and libcrypto's functions, not "other": a client's handshake is mostly its crypto.
    assert!(share("tls") > total / 100 && share("crypto") > total / 2, "{:#}", profile["classes"]);
    assert!(share("other") < total / 20, "{:#}", profile["classes"]);
    assert!(stdout.contains("Functions that take the most locks"), "{stdout}");

    // The same 20 handshakes counted by the sync measure (after the same 2 unmeasured).
    let doc = run(tmp.path(), &["--measure", "sync", "--stack", OPENSSL, "--samples", "1"]);
    let measured = |metric: &str| {
        let cell = cells(&doc, OPENSSL, OPENSSL).into_iter().find(|c| c["side"] == "client" && c["metric"] == metric);
        cell.unwrap_or_else(|| panic!("no {metric} in {doc}"))["median"].as_f64().unwrap()
    };
    let sync = &profile["sync"];
    let iterations = profile["iterations"].as_f64().unwrap();
    for metric in ["mutex_locks", "rwlock_read_locks", "rwlock_write_locks", "once_checks", "futex_calls"] {
        assert_eq!(sync[metric].as_f64().unwrap() / iterations, measured(metric), "{metric}: {sync:#}");
    }
    // OpenSSL 3.5 still takes locks in a handshake, if far fewer than 3.0.
    assert!(measured("rwlock_read_locks") > 0.0 && measured("once_checks") > 0.0, "{sync:#}");
}

#[test]
#[ignore = "needs openssl@3.5 and rustls@0.23.29: scripts/build-openssl.sh 3.5, scripts/build-rustls.sh 0.23.29 \
            (scripts/test.sh builds them and runs this)"]
fn list_stacks_shows_the_releases_built_with_their_libraries() {
    need_openssl();
    need_rustls();
    let tmp = tempfile::tempdir().unwrap();
    let output = succeeded(tlsbench(tmp.path()).args(["list", "stacks"]).output().unwrap());
    let text = String::from_utf8(output.stdout).unwrap();
    // A stack's block: its id, then its library (on the same line, or the next for a long id).
    let library = |id: &str| {
        let mut lines = text.lines().skip_while(|l| l.split_whitespace().next() != Some(id));
        let first = lines.next().unwrap_or_else(|| panic!("no {id} in:\n{text}"));
        match first.trim() == id {
            true => lines.next().unwrap().trim().to_string(),
            false => first[id.len()..].trim().to_string(),
        }
    };
    assert!(library(OPENSSL).starts_with("OpenSSL 3.5."), "{text}");
    assert!(library(RUSTLS).starts_with("rustls 0.23.29 (aws-lc-rs "), "{text}");
    assert!(library("rustls-ring@0.23.29").starts_with("rustls 0.23.29 (ring "), "{text}");
    assert!(!library("rustls-aws-lc-rs").starts_with("rustls 0.23.29 "), "{text}");
}

#[test]
fn what_cannot_be_built_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let not_rustls = tmp.path().join("other");
    std::fs::create_dir_all(not_rustls.join("src")).unwrap();
    std::fs::write(not_rustls.join("src/lib.rs"), "").unwrap();
    std::fs::write(not_rustls.join("Cargo.toml"), "[package]\nname = \"other\"\nversion = \"0.1.0\"\n\n[workspace]\n")
        .unwrap();
    let cases = [
        (
            script("build-rustls.sh").arg(&not_rustls).output().unwrap(),
            format!("{}: cannot be built here: {0} holds no crate named rustls", not_rustls.display()),
        ),
        (
            script("build-rustls.sh").arg(tmp.path().join("other/src")).output().unwrap(),
            format!(
                "cannot be built here: {} holds no Cargo workspace that cargo metadata reads",
                not_rustls.join("src").display()
            ),
        ),
        (
            script("build-rustls.sh").arg("newest").output().unwrap(),
            "newest: cannot be built here: neither a release (MAJOR.MINOR.PATCH) nor a directory".into(),
        ),
        (
            script("build-openssl.sh").arg("1.1").output().unwrap(),
            "1.1: not supported: the openssl stack needs OpenSSL 1.1.1 (written 1.1.1), or 3.0 or later".into(),
        ),
        (
            script("build-openssl.sh").arg("1.1.0").output().unwrap(),
            "usage: scripts/build-openssl.sh MAJOR.MINOR|1.1.1|SOURCE_TREE|PREFIX (e.g. 3.5, 3.6, 4.0, 1.1.1, \
             an OpenSSL checkout, or an install prefix)"
                .into(),
        ),
    ];
    for (output, message) in cases {
        let text = stderr(&output);
        assert_ne!(output.status.code(), Some(0), "{text}");
        assert_eq!(text.lines().count(), 1, "one line: {text}");
        assert!(text.ends_with(&format!("{message}\n")), "{text}");
    }
}

/// A rustls checkout for the gate: the registry's rustls 0.23.46 (the workspace's) in a git
/// repository of its own, and a branch of it with extra work in every ClientHello.
fn rustls_checkouts(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let registry = Path::new(&std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{}/.cargo", env!("HOME"))))
        .join("registry/src");
    let source = std::fs::read_dir(&registry)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("rustls-0.23.46"))
        .find(|p| p.join("Cargo.toml").is_file())?;
    let (base, branch) = (dir.join("rustls"), dir.join("rustls-branch"));
    let sh = |script: &str| {
        let output = Command::new("sh").arg("-ec").arg(script).current_dir(dir).output().unwrap();
        succeeded(output);
    };
    sh(&format!(
        "cp -a '{}' rustls && cd rustls && git init -q -b main && git add -A && \
         git -c user.name=t -c user.email=t@t commit -qm base && git worktree add -q -b slow ../rustls-branch",
        source.display()
    ));
    let hs = branch.join("src/client/hs.rs");
    let code = std::fs::read_to_string(&hs).unwrap();
    let anchor = "    let config = &input.config;\n";
    assert!(code.contains(anchor), "rustls's emit_client_hello_for_retry moved: update this test");
    // More instructions, and a lock where there was none: a Rust std Mutex, once per client hello.
    let slower = "    let mut extra = 0u64;\n    for i in 0..5_000u64 {\n        \
                  extra = core::hint::black_box(extra.wrapping_mul(31).wrapping_add(i));\n    }\n    \
                  static GATE_LOCK: ::std::sync::Mutex<u64> = ::std::sync::Mutex::new(0);\n    \
                  *GATE_LOCK.lock().unwrap() += extra;\n";
    std::fs::write(&hs, code.replacen(anchor, &format!("{anchor}{slower}"), 1)).unwrap();
    sh("cd rustls-branch && git -c user.name=t -c user.email=t@t commit -qam slower");
    Some((base, branch))
}

#[test]
fn the_gate_flags_a_slower_branch_and_a_new_lock_and_passes_the_same_commit_twice() {
    let tmp = tempfile::tempdir().unwrap();
    // The workspace's rustls: a build of the workspace put its source in cargo's registry.
    let checkouts = rustls_checkouts(tmp.path());
    let (base, branch) = checkouts.expect("rustls 0.23.46's source in cargo's registry (CARGO_HOME)");
    // Its runners and results in the test's directory, not target/versions and target/gate.
    let gate = |a: &Path, b: &Path| {
        let mut gate = script("gate.sh");
        gate.env("TLSBENCH_RELEASES_DIR", tmp.path().join("versions"))
            .env("TLSBENCH_GATE_DIR", tmp.path().join("gate"));
        gate.arg(a).arg(b).args(["--scenario", FULL_13, "--samples", "1"]).output().unwrap()
    };
    let same = gate(&base, &base);
    let text = String::from_utf8_lossy(&same.stdout);
    assert_eq!(same.status.code(), Some(0), "{text}{}", stderr(&same));
    assert!(text.contains(FULL_13), "{text}");
    let slower = gate(&base, &branch);
    let text = String::from_utf8_lossy(&slower.stdout);
    assert_eq!(slower.status.code(), Some(1), "{text}{}", stderr(&slower));
    assert!(stderr(&slower).ends_with("worse in B than in A (--fail-on-regression)\n"), "{}", stderr(&slower));
    // The new lock: none in the base, one per handshake in the branch, on the client only; with
    // its two atomic instructions (lock, unlock), the sync counts that got worse.
    let run = read_json(&tmp.path().join("gate").join("run.json"));
    let mutex_locks = |stack: &str, side: &str| {
        let cells = cells(&run, stack, stack);
        let cell = cells.into_iter().find(|c| c["side"] == side && c["metric"] == "mutex_locks").unwrap();
        cell["median"].as_f64().unwrap()
    };
    // The gate names its two builds on stderr: `gate: base rustls@LABEL, branch rustls@LABEL`.
    let said = stderr(&slower);
    let labels = said.lines().find_map(|l| l.strip_prefix("gate: base rustls@")).expect("the gate names its builds");
    let (base_label, branch_label) = labels.split_once(", branch rustls@").expect("base, then branch");
    let (base_stack, branch_stack) =
        (format!("rustls-aws-lc-rs@{base_label}"), format!("rustls-aws-lc-rs@{branch_label}"));
    assert_eq!(mutex_locks(&branch_stack, "client") - mutex_locks(&base_stack, "client"), 1.0, "{run}");
    assert_eq!(mutex_locks(&branch_stack, "server"), mutex_locks(&base_stack, "server"), "{run}");
    assert!(text.contains("; sync 0 better, 2 worse, "), "{text}");
}

/// The library `runner`'s list names for `id`.
fn listed_library(runner: &Path, id: &str) -> String {
    let output = succeeded(Command::new(runner).arg("list").output().unwrap());
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    let stacks = list["stacks"].as_array().unwrap();
    let stack = stacks.iter().find(|s| s["id"] == id).unwrap_or_else(|| panic!("no {id} in {list}"));
    stack["library"].as_str().unwrap().to_string()
}

/// s2n-tls, BoringSSL and AWS-LC's libssl at other releases of their crates, built on demand
/// only, never by scripts/test.sh (a BoringSSL or AWS-LC build takes minutes): each test is
/// ignored unless asked for, e.g. `cargo test --release -p tlsbench --test it built_on_demand --
/// --ignored` after its build command.
mod built_on_demand {
    use super::*;

    /// `today` and `release` (its crate at another release, in its runner `runner`) in one run
    /// of heap, each with its own library, the release's naming its crate's version.
    fn crate_release_beside_todays(today: &str, release: &str, runner: &str, built_by: &str) {
        let dir = release_dir(release, runner, built_by);
        let library = listed_library(&dir.join(runner), release);
        let version = release.split_once('@').unwrap().1;
        match today {
            "s2n-tls" => assert!(library.starts_with(&format!("s2n-tls crate {version} (commit ")), "{library}"),
            // AWS-LC 1.71.0 of aws-lc-sys 0.39.1: its own release, which today's is not.
            "aws-lc" => assert!(
                library.starts_with("AWS-LC ") && library.ends_with(&format!(" (aws-lc-sys {version})")),
                "{library}"
            ),
            _ => assert!(library.ends_with(&format!(", boring-sys {version})")), "{library}"),
        }
        let tmp = tempfile::tempdir().unwrap();
        let doc = run(tmp.path(), &[&HEAP[..], &["--stack", today, "--stack", release]].concat());
        for stack in [today, release] {
            let cells = cells(&doc, stack, stack);
            assert!(!cells.is_empty(), "no cells of {stack}: {doc}");
            for cell in cells {
                assert_eq!(cell["status"], "ok", "{cell}");
                let reported = cell["client_library"].as_str().unwrap();
                assert_eq!(reported == library, stack == release, "{stack}: {cell}");
                assert!(cell["negotiated"].as_str().unwrap().starts_with("1.3 aes-128-gcm x25519"), "{cell}");
            }
        }
    }

    #[test]
    #[ignore = "needs s2n-tls@0.3.31, built on demand: scripts/build-crate.sh s2n-tls 0.3.31"]
    fn s2n_tls_at_a_crate_release_beside_todays_each_with_its_own_library() {
        let built_by = "scripts/build-crate.sh s2n-tls 0.3.31";
        crate_release_beside_todays("s2n-tls", "s2n-tls@0.3.31", "tlsbench-runner-s2n-tls", built_by);
    }

    #[test]
    #[ignore = "needs boringssl@5.3.0, built on demand: scripts/build-crate.sh boring 5.3.0"]
    fn boringssl_at_a_crate_release_beside_todays_each_with_its_own_library() {
        let built_by = "scripts/build-crate.sh boring 5.3.0";
        crate_release_beside_todays("boringssl", "boringssl@5.3.0", "tlsbench-runner-boringssl", built_by);
    }

    #[test]
    #[ignore = "needs aws-lc@0.39.1, built on demand: scripts/build-crate.sh aws-lc 0.39.1"]
    fn aws_lc_at_a_crate_release_beside_todays_each_with_its_own_library() {
        let built_by = "scripts/build-crate.sh aws-lc 0.39.1";
        crate_release_beside_todays("aws-lc", "aws-lc@0.39.1", "tlsbench-runner-aws-lc", built_by);
    }
}

#[test]
fn build_crate_refuses_what_it_cannot_build_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let checkout = tmp.path().display().to_string();
    let cases = [
        (
            script("build-crate.sh").args(["s2n-tls", &checkout]).output().unwrap(),
            format!(
                "s2n-tls {checkout}: cannot be built here: a local checkout is built for rustls only; \
                 s2n-tls is built from its releases on crates.io"
            ),
        ),
        (
            script("build-crate.sh").args(["boring", "newest"]).output().unwrap(),
            "boring newest: cannot be built here: neither a release (MAJOR.MINOR.PATCH) nor a directory".into(),
        ),
    ];
    for (output, message) in cases {
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{text}");
        assert_eq!(text, format!("{message}\n"));
    }
    let unknown = script("build-crate.sh").args(["wolfssl", "5.8.0"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).starts_with("usage: scripts/build-crate.sh rustls|s2n-tls|boring|aws-lc "),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn a_release_runner_that_is_not_what_it_says_costs_its_own_line_of_the_list() {
    // A runner that calls the system's OpenSSL openssl@3.6: its stack is refused with the
    // reason, and every other stack is still listed.
    let tmp = tempfile::tempdir().unwrap();
    let listed = succeeded(Command::new(runner_dir().join("tlsbench-runner-openssl")).arg("list").output().unwrap());
    let lying = String::from_utf8(listed.stdout).unwrap().replace(r#""id":"openssl""#, r#""id":"openssl@3.6""#);
    let dir = tmp.path().join("versions/openssl@3.6");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(tmp.path().join("list.json"), lying).unwrap();
    let runner = dir.join("tlsbench-runner-liar");
    std::fs::write(&runner, format!("#!/bin/sh\nexec cat '{}'\n", tmp.path().join("list.json").display())).unwrap();
    Command::new("chmod").arg("+x").arg(&runner).status().unwrap();
    let mut list = tlsbench(tmp.path());
    list.env("TLSBENCH_RELEASES_DIR", tmp.path().join("versions")).args(["list", "stacks"]);
    let output = succeeded(list.output().unwrap());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("openssl ") && l.contains("OpenSSL")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("rustls-ring ")), "{text}");
    let refused = text.lines().skip_while(|l| !l.starts_with("not listed: ")).collect::<Vec<_>>().join(" ");
    assert!(refused.starts_with("not listed: stack `openssl@3.6` reports library `OpenSSL "), "{text}");
    assert!(refused.contains("which is not its own"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
}
