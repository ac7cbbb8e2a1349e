//! What the network mode's end-to-end tests share: tlsbench in a data directory of its own, and
//! a `tlsbench serve` in the background. (A directory module: Cargo does not make it a test.)
// Each test file uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use tlsbench_harness::net::NetReport;

/// tlsbench, with its certificates (and any results) in `data`.
pub fn tlsbench(data: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("tlsbench"));
    cmd.env("TLSBENCH_DATA_DIR", data).current_dir(data);
    cmd
}

/// The address a starting `tlsbench serve` prints on its first line (its stdout piped).
pub fn served_address(server: &mut Child) -> String {
    let mut first = String::new();
    BufReader::new(server.stdout.as_mut().expect("stdout is piped")).read_line(&mut first).unwrap();
    assert!(first.starts_with("127.0.0.1:"), "serve prints its address first, got {first:?}");
    first.trim().to_string()
}

/// A `tlsbench serve` in the background.
pub struct Server {
    child: Child,
    pub addr: String,
    output: PathBuf,
}

impl Server {
    pub fn start(data: &Path, args: &[&str]) -> Server {
        let output = data.join(format!("server-{}.json", args.join("_").replace(['/', ' '], "")));
        let mut child = tlsbench(data)
            .arg("serve")
            .args(args)
            .arg("--output")
            .arg(&output)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let addr = served_address(&mut child);
        Server { child, addr, output }
    }

    /// The CPU time, in clock ticks, of the runner that this `tlsbench serve` started: it
    /// grows once the server does handshakes.
    pub fn runner_cpu_ticks(&self) -> u64 {
        let pid = self.child.id();
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        let ticks = |runner: &str| {
            let stat = std::fs::read_to_string(format!("/proc/{runner}/stat")).unwrap_or_default();
            // After the command's ")", utime and stime are the 12th and 13th fields.
            let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
            [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum::<u64>()
        };
        children.split_whitespace().map(ticks).sum()
    }

    /// Waits until the server's runner has worked `ticks` clock ticks more than `since`, or
    /// `limit` has passed: a load generator started on a busy machine may take seconds to begin.
    pub fn wait_for_work(&self, since: u64, ticks: u64, limit: std::time::Duration) {
        let start = std::time::Instant::now();
        while self.runner_cpu_ticks() < since + ticks && start.elapsed() < limit {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// SIGTERM, as a service manager stops it: it finishes and reports.
    pub fn stop(mut self) -> NetReport {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        self.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let text = std::fs::read_to_string(&self.output).unwrap_or_else(|e| panic!("no report ({status}, {e}): {err}"));
        serde_json::from_str(&text).unwrap()
    }
}

/// `tlsbench load ... --output FILE`: (success, report if written, stderr and stdout).
pub fn load(data: &Path, args: &[&str]) -> (bool, Option<NetReport>, String) {
    let output = data.join("load.json");
    let _ = std::fs::remove_file(&output);
    let out = tlsbench(data).arg("load").args(args).arg("--output").arg(&output).output().unwrap();
    let report = std::fs::read_to_string(&output).ok().map(|text| serde_json::from_str(&text).unwrap());
    (out.status.success(), report, String::from_utf8(out.stderr).unwrap() + &String::from_utf8(out.stdout).unwrap())
}
