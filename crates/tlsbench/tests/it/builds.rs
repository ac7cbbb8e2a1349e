//! End-to-end: the build axis (`run --build NAME`, repeated). Each build is a column of the
//! run's table, measured by the runners in that build's directory, which must say they are that
//! build; the run's environment records what they said; Go's and Java's stacks are n/a outside
//! release; a build not built, a stale one and an unknown name are errors that say what to do;
//! `compare` matches two builds cell by cell, across runs and within one. The commands that run
//! one build (`serve`, `load`, `trace`, `io`, `profile`: `--build NAME`) run its runners, name
//! it in what they print and write, and refuse as `run` does.
//!
//! CI does not build native or lto (a full build of the C libraries each, too long for it): the
//! "native" directory here holds the release runner behind a filter that renames its build in
//! its replies, which is all tlsbench sees of a build. That a real build reports its flags is
//! the runner's own `list` below, and scripts/build.sh --build native on a machine that has the
//! time.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tlsbench_harness::protocol::{ListReply, PROTOCOL_VERSION};
use tlsbench_harness::Capabilities;

use crate::common::executable;

const SCENARIO: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

fn release_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_tlsbench")).parent().unwrap().to_path_buf()
}

/// A release directory with the real OpenSSL runner and a fake Go runner (no build in its
/// list), and a builds directory whose `native` holds the OpenSSL runner renamed `native`.
struct Dirs {
    root: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Dirs {
        let root = tempfile::tempdir().unwrap();
        let release = root.path().join("release");
        std::fs::create_dir_all(&release).unwrap();
        std::os::unix::fs::symlink(
            release_dir().join("tlsbench-runner-openssl"),
            release.join("tlsbench-runner-openssl"),
        )
        .unwrap();
        let capabilities = serde_json::to_string(&Capabilities::everything()).unwrap();
        let list = format!(
            concat!(
                r#"{{"protocol_version":{PROTOCOL_VERSION},"stacks":[{{"id":"go","#,
                r#""library":"Go crypto/tls go1.0 (a fake)","capabilities":{capabilities}}}]}}"#,
            ),
            PROTOCOL_VERSION = PROTOCOL_VERSION,
            capabilities = capabilities,
        );
        executable(
            &release.join("tlsbench-runner-fake"),
            &format!(
                "#!/bin/sh\ncase \"$1\" in\nlist) printf '%s\\n' '{list}' ;;\n\
                 *) printf '%s' '{{\"status\":\"unsupported\",\"reason\":\"a fake\"}}' ;;\nesac\n"
            ),
        );
        let dirs = Dirs { root };
        dirs.native_as("native");
        dirs
    }

    /// builds/native's runner: release's, its replies saying build `name`.
    fn native_as(&self, name: &str) {
        self.native_listing_as(name, name);
    }

    /// builds/native's runner: release's, its `list` saying build `listed` and its other
    /// replies (samples, traces, net reports) `replying`. Its replies pass through sed line by
    /// line (serve's first line is read while it serves), and a signal to it reaches the
    /// runner (SIGTERM stops serve).
    fn native_listing_as(&self, listed: &str, replying: &str) {
        let native = self.root.path().join("builds/native");
        std::fs::create_dir_all(&native).unwrap();
        let real = release_dir().join("tlsbench-runner-openssl");
        let sed = format!(
            "sed -u -e 's/\"build\":{{\"name\":\"[a-z]*\"/\"build\":{{\"name\":\"{listed}\"/' \
             -e 's/\"build\":\"[a-z]*\"/\"build\":\"{replying}\"/'"
        );
        executable(
            &native.join("tlsbench-runner-openssl"),
            &format!(
                "#!/bin/bash\n'{}' \"$@\" <&0 > >({sed}) &\nrunner=$!\n\
                 trap 'kill -TERM $runner' TERM INT\nwait $runner\nstatus=$?\n\
                 # A trapped signal ends the first wait early: wait for the runner to finish.\n\
                 if [ $status -gt 128 ]; then wait $runner; status=$?; fi\nexit $status\n",
                real.display()
            ),
        );
    }

    /// builds/release-clang's runner: release's, its `list` saying that clang compiled its C
    /// libraries (what scripts/build.sh --cc clang's runner says of itself).
    fn clang_from_release(&self) {
        let clang = self.root.path().join("builds/release-clang");
        std::fs::create_dir_all(&clang).unwrap();
        let real = release_dir().join("tlsbench-runner-openssl");
        let sed = r#"sed -u -e 's/"c_compiler":"[^"]*"/"c_compiler":"clang 14.0.6"/'"#;
        executable(
            &clang.join("tlsbench-runner-openssl"),
            &format!(
                "#!/bin/bash
'{}' \"$@\" | {sed}
",
                real.display()
            ),
        );
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tlsbench"));
        command
            .current_dir(self.root.path())
            .env("TLSBENCH_DATA_DIR", self.root.path().join("data"))
            .env("TLSBENCH_RUNNER_DIR", self.root.path().join("release"))
            .env("TLSBENCH_BUILDS_DIR", self.root.path().join("builds"))
            .args(args);
        command
    }

    fn tlsbench(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn read_json(&self, file: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.root.path().join(file)).unwrap()).unwrap()
    }
}

/// Stderr, with the lines tlsbench wrapped at 120 columns joined again.
fn stderr(output: &Output) -> String {
    crate::common::unwrapped(&output.stderr)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn each_build_is_a_column_measured_by_its_own_runners_and_compared_cell_by_cell() {
    let dirs = Dirs::new();
    let run = |extra: &[&str], json: &str| {
        let mut args = vec![
            "run",
            "--stack",
            "openssl",
            "--stack",
            "go",
            "--measure",
            "io",
            "--scenario",
            SCENARIO,
            "--samples",
            "1",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--export-json", json, "--export-csv", "r.csv"]);
        let output = dirs.tlsbench(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(dirs.root.path().join(json)).unwrap()).unwrap();
        (String::from_utf8_lossy(&output.stdout).into_owned(), doc)
    };
    let (stdout, doc) = run(&["--build", "release", "--build", "native", "--build", "native"], "both.json");
    for label in ["openssl [release]", "openssl [native]", "go [native]"] {
        assert!(stdout.contains(label), "{label} in:\n{stdout}");
    }
    let results = doc["results"].as_array().unwrap();
    for build in ["release", "native"] {
        let cells: Vec<&Value> =
            results.iter().filter(|r| r["client_stack"] == "openssl" && r["build"] == build).collect();
        assert!(!cells.is_empty() && cells.iter().all(|r| r["status"] == "ok"), "{build}: {cells:?}");
    }
    // Go's runner is built by its own toolchain: n/a in native's column, never run there.
    let go_native: Vec<&Value> =
        results.iter().filter(|r| r["client_stack"] == "go" && r["build"] == "native").collect();
    assert!(!go_native.is_empty());
    for r in go_native {
        assert_eq!(r["status"], "unsupported", "{r}");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .starts_with("go: its runner (tlsbench-runner-fake) is built by its own toolchain"),
            "{r}"
        );
    }
    // The environment: each build as its runners said, and what no build reaches.
    let builds = doc["run"]["environment"]["builds"].as_str().unwrap();
    assert!(builds.starts_with("release (cargo profile ") && builds.contains("; native (cargo profile "), "{builds}");
    assert!(builds.contains("the system's OpenSSL, GnuTLS and libtls are Debian's builds"), "{builds}");
    let csv = std::fs::read_to_string(dirs.root.path().join("r.csv")).unwrap();
    let build = csv.lines().next().unwrap().split(',').position(|c| c == "build").expect("a build column");
    assert!(csv.lines().any(|l| l.starts_with(SCENARIO) && l.split(',').nth(build) == Some("native")), "{csv}");

    // Two builds of one run, compared as two runs.
    let id = doc["run"]["id"].as_str().unwrap();
    let output = dirs.tlsbench(&["compare", id, id, "--build-a", "release", "--build-b", "native"]);
    let compared = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(compared.contains("the runs differ in build: A release, B native"), "{compared}");
    assert!(!compared.contains("only in"), "every cell matched:\n{compared}");
    // A row matched across builds is both builds': labelled without either.
    assert!(has_row(&compared, "openssl") && !compared.contains("openssl [release]"), "{compared}");
    let output = dirs.tlsbench(&["compare", id, id, "--build-a", "lto"]);
    assert!(
        stderr(&output).contains(&format!("run {id} has no cells of build `lto` (its builds: release, native)")),
        "{}",
        stderr(&output)
    );

    // A run of release against a run of native: matched cell by cell, the build what differs.
    let (_, plain) = run(&[], "release.json");
    let (native_stdout, native) = run(&["--build", "native"], "native.json");
    assert!(native_stdout.contains("openssl [native]"), "{native_stdout}");
    assert!(plain["results"].as_array().unwrap().iter().all(|r| r["build"].is_null()), "no --build: unlabelled");
    let output = dirs.tlsbench(&["compare", "release.json", "native.json"]);
    let compared = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(compared.contains("the runs differ in build: A release, B native"), "{compared}");
    let openssl_cells = native["results"].as_array().unwrap().iter().filter(|r| r["client_stack"] == "openssl").count();
    assert!(
        openssl_cells > 0 && !compared.contains("only in A: ") && !compared.contains("only in B: openssl"),
        "{compared}"
    );
}

#[test]
fn a_build_not_built_stale_or_unknown_is_an_error_saying_what_to_do() {
    let dirs = Dirs::new();
    let args = ["run", "--stack", "openssl", "--measure", "io", "--scenario", SCENARIO, "--samples", "1"];
    let with = |build: &str| dirs.tlsbench(&[&args[..], &["--build", build]].concat());

    let output = with("lto");
    let lto = dirs.root.path().join("builds/lto");
    assert_eq!(
        stderr(&output).trim(),
        format!(
            "error: build `lto` is not built: {} does not exist (build it: scripts/build.sh --build lto)",
            lto.display()
        )
    );
    // A runner left from another build in native's directory.
    dirs.native_as("release");
    let output = with("native");
    let native = dirs.root.path().join("builds/native");
    assert_eq!(
        stderr(&output).trim(),
        format!(
            "error: tlsbench-runner-openssl in {} is build `release`, not `native` \
             (stale, or copied from another build): rebuild it with scripts/build.sh --build native",
            native.display()
        )
    );
    let output = with("pgo");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("invalid value 'pgo' for '--build <BUILD>'")
            && stderr(&output).contains("[possible values: release, native, lto]"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn the_runner_reports_the_build_it_was_compiled_as() {
    let output = Command::new(release_dir().join("tlsbench-runner-openssl")).arg("list").output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let reply: ListReply = serde_json::from_slice(&output.stdout).unwrap();
    let build = reply.build.expect("a Rust runner says its build");
    // Built by cargo for these tests: no TLSBENCH_BUILD, so the name is the profile's, and
    // the profile is the directory cargo built into.
    let profile = release_dir().file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        (build.name.as_str(), build.profile.as_str()),
        (option_env!("TLSBENCH_BUILD").unwrap_or(&profile), profile.as_str())
    );
    assert_eq!(build.rustflags, option_env!("RUSTFLAGS").unwrap_or_default());
}

/// The reason `run` gives Go's cells outside release, and the error of the one-build commands
/// that are asked for Go's stack there.
const GO_IN_NATIVE: &str = "go: its runner (tlsbench-runner-fake) is built by its own toolchain, \
                            which `--build native`'s flags do not reach; it is measured in the release build only";

#[test]
fn io_and_trace_run_the_chosen_builds_runners_and_name_the_build() {
    let dirs = Dirs::new();
    let output = dirs.tlsbench(&["io", "--build", "native", "--config", "pinned"]);
    let table = stdout(&output);
    assert!(output.status.success(), "{}", stderr(&output));
    // Each traced row is the native runner's: its replies say native (or the trace is refused).
    assert!(has_row(&table, "openssl [native]") && has_row(&table, "rustls-ring [native]"), "{table}");
    // Taken by default, Go's stack is n/a in native, with run's reason; named, an error.
    assert!(has_row(&table, "go [native]"), "{table}");
    let reason = GO_IN_NATIVE.strip_prefix("go: ").unwrap();
    assert!(table.contains(&format!("note: go [native]: n/a: {reason}")), "{table}");
    let output = dirs.tlsbench(&["io", "--build", "native", "--stack", "go"]);
    assert_eq!(stderr(&output).trim(), format!("error: {GO_IN_NATIVE}"));
    let output = dirs.tlsbench(&["io", "--stack", "openssl", "--config", "pinned"]);
    assert!(
        output.status.success() && !stdout(&output).contains("[native]") && has_row(&stdout(&output), "openssl"),
        "{}",
        stderr(&output)
    );

    let io_profile = "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let output = dirs.tlsbench(&["trace", io_profile, "--stack", "openssl", "--build", "native"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("client: openssl [native] (OpenSSL 3."), "{}", stdout(&output));
    let output = dirs.tlsbench(&["trace", io_profile, "--stack", "openssl", "--build", "native", "--json"]);
    let trace: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(trace["build"], "native");
    let output = dirs.tlsbench(&["trace", io_profile, "--stack", "openssl", "--json"]);
    let trace: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(trace.get("build").is_none(), "release is unnamed: {trace}");

    // A runner replaced since the directory was checked: its reply is refused.
    dirs.native_listing_as("native", "lto");
    let output = dirs.tlsbench(&["trace", io_profile, "--stack", "openssl", "--build", "native"]);
    assert!(stderr(&output).contains("the runner is build `lto`, not `native`; result refused"), "{}", stderr(&output));
}

#[test]
fn serve_and_load_run_the_chosen_builds_runners_and_name_the_build() {
    let dirs = Dirs::new();
    let mut server = dirs
        .command(&["serve", "--stack", "openssl", "--build", "native", "--workers", "1", "--output", "served.json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut addr = String::new();
    BufReader::new(server.stdout.as_mut().unwrap()).read_line(&mut addr).unwrap();
    assert!(addr.starts_with("127.0.0.1:"), "serve prints its address first, got {addr:?}");
    let addr = addr.trim();

    let output = dirs.tlsbench(&[
        "load",
        "--stack",
        "openssl",
        "--build",
        "native",
        "--connect",
        addr,
        "--connections",
        "5",
        "--output",
        "native.json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).starts_with("openssl [native] "), "{}", stdout(&output));
    assert_eq!(dirs.read_json("native.json")["build"], "native");
    let output = dirs.tlsbench(&[
        "load",
        "--stack",
        "openssl",
        "--connect",
        addr,
        "--connections",
        "5",
        "--output",
        "release.json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(dirs.read_json("release.json").get("build").is_none(), "release is unnamed");
    // Partial results of two builds are not one result.
    let output = dirs.tlsbench(&["merge", "native.json", "release.json"]);
    assert!(
        stderr(&output).contains("release.json is of build release, the first partial of build native"),
        "{}",
        stderr(&output)
    );

    // SIGTERM, as a service manager stops it; it reaches the runner through the fake.
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
    let status = server.wait().unwrap();
    let mut err = String::new();
    server.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "{status}: {err}");
    assert!(
        err.contains(&"openssl [native] (OpenSSL 3.".to_string()) && err.contains(&format!("serves on {addr}")),
        "{err}"
    );
    let served = dirs.read_json("served.json");
    assert_eq!(served["build"], "native");
    assert!(served["connections"].as_u64().unwrap() >= 10, "{served}");

    let output = dirs.tlsbench(&["serve", "--stack", "go", "--build", "native"]);
    assert_eq!(stderr(&output).trim(), format!("error: {GO_IN_NATIVE}"));
}

#[test]
fn a_one_build_command_asked_for_a_build_not_built_says_how_to_build_it() {
    let dirs = Dirs::new();
    let lto = dirs.root.path().join("builds/lto");
    let expected = format!(
        "error: build `lto` is not built: {} does not exist (build it: scripts/build.sh --build lto)",
        lto.display()
    );
    let commands: [&[&str]; 5] = [
        &["serve", "--stack", "openssl", "--build", "lto"],
        &["load", "--stack", "openssl", "--connect", "127.0.0.1:9", "--build", "lto"],
        &["trace", SCENARIO, "--stack", "openssl", "--build", "lto"],
        &["io", "--stack", "openssl", "--build", "lto"],
        &["profile", SCENARIO, "--stack", "openssl", "--side", "client", "--build", "lto"],
    ];
    for args in commands {
        let output = dirs.tlsbench(args);
        assert_eq!((output.status.code(), stderr(&output).trim()), (Some(1), expected.as_str()), "{args:?}");
    }
    let output = dirs.tlsbench(&["profile", SCENARIO, "--stack", "go", "--side", "server", "--build", "native"]);
    assert_eq!(stderr(&output).trim(), format!("error: {GO_IN_NATIVE}"));
}

#[test]
fn the_c_compiler_is_an_axis_of_its_own_beside_the_build() {
    let dirs = Dirs::new();
    let args =
        ["run", "--stack", "openssl", "--stack", "go", "--measure", "io", "--scenario", SCENARIO, "--samples", "1"];
    // Not built yet: the error says how to build it.
    let output = dirs.tlsbench(&[&args[..], &["--compiler", "clang"]].concat());
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("build `release with clang` is not built")
            && stderr(&output).contains("(build it: scripts/build.sh --build release --cc clang)"),
        "{}",
        stderr(&output)
    );
    // So do the commands that run one build, which take the compiler too.
    let output = dirs.tlsbench(&["serve", "--stack", "openssl", "--compiler", "clang"]);
    assert!(stderr(&output).contains("(build it: scripts/build.sh --build release --cc clang)"), "{output:?}");
    dirs.clang_from_release();
    let output = dirs.tlsbench(&["io", "--stack", "openssl", "--compiler", "clang"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("openssl [clang]"), "{}", stdout(&output));
    let output =
        dirs.tlsbench(&[&args[..], &["--compiler", "gcc", "--compiler", "clang", "--export-json", "cc.json"]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    assert!(table.contains("openssl [gcc]") && table.contains("openssl [clang]"), "{table}");
    let doc = dirs.read_json("cc.json");
    let results = doc["results"].as_array().unwrap();
    for compiler in ["gcc", "clang"] {
        let openssl: Vec<&Value> =
            results.iter().filter(|r| r["client_stack"] == "openssl" && r["compiler"] == compiler).collect();
        assert!(!openssl.is_empty() && openssl.iter().all(|r| r["status"] == "ok"), "{compiler}: {openssl:?}");
        assert!(openssl.iter().all(|r| r["build"].is_null()), "no --build: the build unlabelled");
    }
    // Go's runner is built by its own toolchain: n/a with clang, with the reason.
    let go_clang: Vec<&Value> =
        results.iter().filter(|r| r["client_stack"] == "go" && r["compiler"] == "clang").collect();
    assert!(!go_clang.is_empty());
    for r in go_clang {
        assert_eq!(r["status"], "unsupported", "{r}");
        assert!(r["reason"].as_str().unwrap().contains("which `--compiler clang` does not reach"), "{r}");
    }
    let builds = doc["run"]["environment"]["builds"].as_str().unwrap();
    assert!(builds.contains("C compiler clang 14.0.6"), "{builds}");
    // The two compilers of one run, compared as two runs: every cell matched.
    let id = doc["run"]["id"].as_str().unwrap();
    let output = dirs.tlsbench(&["compare", id, id, "--compiler-a", "gcc", "--compiler-b", "clang"]);
    let compared = stdout(&output);
    assert!(output.status.success(), "{}", stderr(&output));
    // Rows are labelled with A's pair, its compiler chosen in the run.
    assert!(has_row(&compared, "openssl [gcc]") && !compared.contains("only in"), "{compared}");
    // A runner of gcc's in clang's directory is refused.
    std::fs::remove_file(dirs.root.path().join("builds/release-clang/tlsbench-runner-openssl")).unwrap();
    std::os::unix::fs::symlink(
        release_dir().join("tlsbench-runner-openssl"),
        dirs.root.path().join("builds/release-clang/tlsbench-runner-openssl"),
    )
    .unwrap();
    let output = dirs.tlsbench(&[&args[..], &["--compiler", "clang"]].concat());
    assert!(!output.status.success());
    assert!(stderr(&output).contains("is compiled by gcc, not `release with clang`"), "{}", stderr(&output));
}

/// Whether a table of the terminal has a row labelled `label` (the text before its bar).
fn has_row(table: &str, label: &str) -> bool {
    table.lines().filter_map(|l| l.split_once(" | ")).any(|(l, _)| l.trim() == label)
}
