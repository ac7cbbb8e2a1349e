//! End-to-end: a library that prints to stdout during its handshake does not break its runner,
//! and what it printed stays with a cell that fails.
//!
//! This test binary is also the runner it tests. tlsbench finds it as `tlsbench-runner-printing`
//! (a link to this binary, alone in the directory named by TLSBENCH_RUNNER_DIR) and runs it as
//! any runner. Its family is rustls with aws-lc-rs, the real stack, wrapped to print as a
//! library might at every handshake step: Rust's `println!`, C's `printf` (stdio, buffered until
//! the process exits) and a raw `write(1, ...)`. Two switches in the environment, which the
//! runner inherits from tlsbench, make the wrapper fail its handshake after printing
//! (`PRINTING_RUNNER_FAIL`) or stall in it (`PRINTING_RUNNER_STALL`). The wrapper exists only
//! here; it is never among tlsbench's stacks.

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};
use std::time::Duration;

use serde_json::Value;
use tlsbench_harness::testing::{Hooks, Wrapped};
use tlsbench_harness::{Connection, LibError, Negotiated, Side, Stack};
use tlsbench_stack_rustls::Rustls;

const RUNNER_NAME: &str = "tlsbench-runner-printing";
const FAIL: &str = "PRINTING_RUNNER_FAIL";
const STALL: &str = "PRINTING_RUNNER_STALL";
const SCENARIO: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// The hooks of a stack that prints at every handshake step of its connections, then does what
/// its stack does.
struct Printing;

struct PrintingConnection<C> {
    inner: C,
    side: Side,
}

impl<S: Stack> Hooks<S> for Printing {
    type Client = PrintingConnection<S::Client>;
    type Server = PrintingConnection<S::Server>;

    fn new_client(&self, new: impl FnOnce() -> Result<S::Client, LibError>) -> Result<Self::Client, LibError> {
        Ok(PrintingConnection { inner: new()?, side: Side::Client })
    }
    fn new_server(&self, new: impl FnOnce() -> Result<S::Server, LibError>) -> Result<Self::Server, LibError> {
        Ok(PrintingConnection { inner: new()?, side: Side::Server })
    }
}

impl<C: Connection> Connection for PrintingConnection<C> {
    fn handshake(&mut self) -> Result<bool, LibError> {
        println!("println from the {} handshake", self.side);
        let side = CString::new(self.side.to_string()).expect("a side's name has no NUL");
        let format: &CStr = c"printf from the %s handshake\n";
        let raw = format!("write(1) from the {} handshake\n", self.side);
        // SAFETY: a NUL-terminated format with one %s and a NUL-terminated argument; and a
        // write of a buffer we own, with its length.
        unsafe {
            libc::printf(format.as_ptr(), side.as_ptr());
            libc::write(1, raw.as_ptr().cast(), raw.len());
        }
        if std::env::var_os(FAIL).is_some() {
            return Err(LibError::new(format!("failing as {FAIL} asks")));
        }
        if std::env::var_os(STALL).is_some() {
            std::thread::sleep(Duration::from_secs(600));
        }
        self.inner.handshake()
    }
    fn send(&mut self, data: &[u8]) -> Result<(), LibError> {
        self.inner.send(data)
    }
    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        self.inner.receive(buf)
    }
    fn negotiated(&self) -> Result<Negotiated, LibError> {
        self.inner.negotiated()
    }
}

tlsbench_harness::family!(PrintingRustls { "rustls-aws-lc-rs" => Wrapped::new(&Rustls::aws_lc_rs(), Printing) });

fn main() -> ExitCode {
    let called_as = std::env::args_os().next().map(PathBuf::from).unwrap_or_default();
    if called_as.file_name().is_some_and(|name| name == RUNNER_NAME) {
        return tlsbench_harness::runner::main::<PrintingRustls>();
    }
    type Test = (&'static str, fn(&Path));
    let tests: [Test; 4] = [
        ("the_reply_is_the_only_thing_on_stdout", the_reply_is_the_only_thing_on_stdout),
        ("a_printing_stack_is_measured", a_printing_stack_is_measured),
        ("a_failed_cell_keeps_what_the_library_printed", a_failed_cell_keeps_what_the_library_printed),
        (
            "a_runner_past_its_time_limit_is_killed_and_its_cell_fails",
            a_runner_past_its_time_limit_is_killed_and_its_cell_fails,
        ),
    ];
    let dir = tempfile::tempdir().expect("a temporary directory");
    let runners = dir.path().join("runners");
    std::fs::create_dir(&runners).expect("the runner directory");
    let me = std::env::current_exe().expect("this test's binary");
    std::os::unix::fs::symlink(me, runners.join(RUNNER_NAME)).expect("linking the runner");
    for (name, test) in tests {
        eprintln!("test {name} ...");
        test(dir.path());
        eprintln!("test {name} ... ok");
    }
    ExitCode::SUCCESS
}

fn runner(dir: &Path) -> PathBuf {
    dir.join("runners").join(RUNNER_NAME)
}

/// tlsbench with only this test's runner, in `dir`.
fn tlsbench(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tlsbench"));
    command.env("TLSBENCH_RUNNER_DIR", dir.join("runners")).env("TLSBENCH_DATA_DIR", dir.join("data")).current_dir(dir);
    command.env_remove(FAIL).env_remove(STALL);
    command
}

/// `tlsbench run` of the printing stack with itself on SCENARIO; its output and the exported
/// results.
fn run(dir: &Path, samples: &str, extra: &[&str], env: Option<&str>) -> (Output, Vec<Value>) {
    let json = dir.join("r.json");
    let _ = std::fs::remove_file(&json);
    let mut command = tlsbench(dir);
    command.args(["run", "--stack", "rustls-aws-lc-rs", "--scenario", SCENARIO, "--samples", samples]);
    command.args(["--min-time-ms", "2", "--warmup-ms", "0"]).args(extra);
    command.arg("--export-json").arg(&json);
    if let Some(var) = env {
        command.env(var, "1");
    }
    let output = command.output().expect("running tlsbench");
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no export ({e}): {}", String::from_utf8_lossy(&output.stderr)));
    let doc: Value = serde_json::from_str(&text).expect("the export is JSON");
    (output, doc["results"].as_array().expect("results").clone())
}

fn the_reply_is_the_only_thing_on_stdout(dir: &Path) {
    let output = Command::new(runner(dir))
        .args(["sample", "--client", "rustls-aws-lc-rs", "--server", "rustls-aws-lc-rs", "--scenario", SCENARIO])
        .args(["--min-time-ms", "2", "--warmup-ms", "0", "--data-dir"])
        .arg(dir.join("data"))
        .output()
        .unwrap();
    let (stdout, stderr) =
        (String::from_utf8(output.stdout).unwrap(), String::from_utf8_lossy(&output.stderr).into_owned());
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "one line, the reply: {stdout}");
    let reply: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(reply["status"], "ok", "{reply}");
    // What the library printed, every way it can, went to stderr.
    for printed in
        ["println from the client handshake", "printf from the server handshake", "write(1) from the client handshake"]
    {
        assert!(stderr.contains(printed), "`{printed}` not on stderr");
    }
}

fn a_printing_stack_is_measured(dir: &Path) {
    let (output, results) = run(dir, "2", &[], None);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(results.len(), 4, "handshakes per second by wall and CPU time, each side");
    for r in &results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["samples"].as_array().unwrap().len(), 2, "{r}");
        assert!(r["median"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["server_library"].as_str().unwrap().contains("(aws-lc-rs "), "{r}");
    }
}

fn a_failed_cell_keeps_what_the_library_printed(dir: &Path) {
    let (output, results) = run(dir, "1", &[], Some(FAIL));
    assert_eq!(output.status.code(), Some(1), "a failed cell fails the run");
    for r in &results {
        assert_eq!(r["status"], "failed", "{r}");
        let reason = r["reason"].as_str().unwrap();
        assert!(reason.contains(&format!("failing as {FAIL} asks")), "{reason}");
        // The runner's own reason, then the library's last words, all three ways of printing.
        let printed = reason.split_once(" (stderr: ").map(|(_, printed)| printed).unwrap_or_else(|| panic!("{reason}"));
        for line in [
            "println from the client handshake",
            "printf from the client handshake",
            "write(1) from the client handshake",
        ] {
            assert!(printed.contains(line), "`{line}` not in: {reason}");
        }
    }
}

fn a_runner_past_its_time_limit_is_killed_and_its_cell_fails(dir: &Path) {
    let (output, results) = run(dir, "1", &["--timeout", "0.5"], Some(STALL));
    assert_eq!(output.status.code(), Some(1));
    for r in &results {
        assert_eq!(r["status"], "failed", "{r}");
        let reason = r["reason"].as_str().unwrap();
        let seconds = reason
            .strip_prefix("runner exceeded its time limit of ")
            .and_then(|rest| rest.strip_suffix(" s and was killed"));
        // --timeout, plus a little for the sample's two milliseconds of measured time per side.
        let seconds: f64 = seconds.and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{reason}"));
        assert!((0.5..1.0).contains(&seconds), "{reason}");
    }
}
