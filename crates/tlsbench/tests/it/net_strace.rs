//! The network mode's syscall counts held against strace's record of the same processes: both
//! sides of rustls, OpenSSL and plain TCP, the server and the load generator each under its own
//! `strace -ff` at once.
//!
//! strace sees all a process does: starting up, loading the certificates, the orchestrator
//! reading its runner's reply, the client's warm-up connections. tlsbench's counts cover each
//! measuring thread from where it first reads its CPU time (getrusage RUSAGE_THREAD) to where
//! it reads it again: the server's workers for their whole life, the load generator for its
//! measured connections. strace's record of those two calls marks the same window in the same
//! thread, and inside it the two must count the very same calls.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tlsbench_harness::net::NetReport;
use tlsbench_harness::Side;
use wait_timeout::ChildExt;

use crate::net_common;

const CONNECTIONS: u64 = 40;
/// The client's connections in flight, which are also its warm-up connections (served, not
/// measured by the client).
const CONCURRENCY: u64 = 2;
/// The server's threads, each with its window.
const WORKERS: usize = 2;
/// 100 application writes per response: `tcp` makes 100 writes, `tcp-buffered` one.
const RESPONSE: &str = "100x64";
/// Any side ends well within this, even traced.
const LIMIT: Duration = Duration::from_secs(60);
/// What starts and ends a measuring thread's window, as strace prints it.
const MARK: &str = "getrusage(RUSAGE_THREAD";

/// Syscalls by class, as tlsbench reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Classes {
    read: u64,
    write: u64,
    /// The event loops' polls, the writes' waits for room, and the server's accept4 calls that
    /// found no connection (tlsbench counts those with the polls).
    poll: u64,
    /// socket, connect, accept4 (of a connection), setsockopt, getsockopt, shutdown, close.
    other: u64,
}

impl Classes {
    fn total(&self) -> u64 {
        self.read + self.write + self.poll + self.other
    }

    fn of_report(r: &NetReport) -> Classes {
        let s = &r.sockets;
        Classes { read: s.reads, write: s.writes, poll: r.polls + s.write_waits, other: s.other }
    }
}

/// What strace saw the measuring threads of one side do inside their windows.
#[derive(Default)]
struct Traced {
    windows: usize,
    classes: Classes,
    /// The rest by name: memory, locks, the process id (OpenSSL's fork check), randomness.
    not_socket: BTreeMap<String, u64>,
}

impl Traced {
    /// Reads `strace -ff -o DIR/PREFIX`'s files, one per thread: DIR/PREFIX.TID.
    fn read(dir: &Path, prefix: &str) -> Traced {
        let mut traced = Traced::default();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            let tid = name.strip_prefix(prefix).and_then(|rest| rest.strip_prefix('.'));
            if tid.is_some_and(|tid| tid.bytes().all(|b| b.is_ascii_digit())) {
                traced.add_thread(&std::fs::read_to_string(&path).unwrap());
            }
        }
        traced
    }

    /// Counts the calls between each pair of marks in one thread's trace.
    fn add_thread(&mut self, trace: &str) {
        let mut inside = false;
        for line in trace.lines() {
            if line.starts_with(MARK) {
                inside = !inside;
                self.windows += usize::from(!inside);
                continue;
            }
            // Signals and the continuation of a call strace already showed (a poll resumed
            // after the tracer stopped the thread) are no calls of the program's.
            if !inside || line.starts_with("---") || line.starts_with("+++") || line.starts_with("restart_syscall(") {
                continue;
            }
            let name = line.split_once('(').map_or(line, |(name, _)| name);
            let failed = line.rsplit_once(" = ").is_some_and(|(_, result)| result.starts_with("-1 "));
            let c = &mut self.classes;
            match name {
                "read" | "readv" | "recvfrom" | "recvmsg" => c.read += 1,
                "write" | "writev" | "sendto" | "sendmsg" => c.write += 1,
                "poll" | "ppoll" => c.poll += 1,
                "accept4" if failed => c.poll += 1,
                "socket" | "connect" | "accept4" | "setsockopt" | "getsockopt" | "shutdown" | "close" => c.other += 1,
                _ => *self.not_socket.entry(name.to_string()).or_default() += 1,
            }
        }
        assert!(!inside, "a window that never ended: {}", trace.lines().last().unwrap_or(""));
    }
}

/// `strace -ff -o DIR/PREFIX tlsbench ...`: a trace file per thread, the runner's included.
/// tlsbench finds only the OpenSSL runner, which holds the stacks measured here: the other
/// runners it would ask for their stacks (a JVM among them) have threads of their own, some of
/// which read their CPU time as the window marks do.
fn straced(data: &Path, prefix: &str) -> Command {
    let runners = data.join("runners");
    if !runners.exists() {
        std::fs::create_dir(&runners).unwrap();
        std::os::unix::fs::symlink(
            assert_cmd::cargo::cargo_bin("tlsbench-runner-openssl"),
            runners.join("tlsbench-runner-openssl"),
        )
        .unwrap();
    }
    let mut cmd = Command::new("strace");
    cmd.args(["-ff", "-qq", "-o"]).arg(data.join(prefix)).arg("--").arg(assert_cmd::cargo::cargo_bin("tlsbench"));
    let log = File::create(data.join(format!("{prefix}.log"))).unwrap();
    cmd.env("TLSBENCH_DATA_DIR", data)
        .env("TLSBENCH_RUNNER_DIR", &runners)
        .current_dir(data)
        .stdin(Stdio::null())
        .stderr(log);
    cmd
}

/// Waits for `child`, bounded; panics with its messages if it failed.
fn finish(mut child: Child, data: &Path, prefix: &str) {
    let status = match child.wait_timeout(LIMIT).unwrap() {
        Some(status) => status,
        None => {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{prefix} still running after {LIMIT:?}")
        }
    };
    let messages = std::fs::read_to_string(data.join(format!("{prefix}.log"))).unwrap_or_default();
    assert!(status.success(), "{prefix}: {status}: {messages}");
}

/// One side of `stack` serving itself: what tlsbench reported and what strace saw.
struct Seen {
    what: String,
    report: NetReport,
    traced: Traced,
}

/// `stack` serving itself over loopback, each side under strace: (server, client).
fn run(data: &Path, stack: &str) -> (Seen, Seen) {
    let (server_prefix, client_prefix) = (format!("{stack}-server"), format!("{stack}-client"));
    let (server_report, client_report) =
        (data.join(format!("{stack}-server.json")), data.join(format!("{stack}-client.json")));
    let mut server = straced(data, &server_prefix)
        .args(["serve", "--stack", stack, "--workers", &WORKERS.to_string(), "--response", RESPONSE, "--output"])
        .arg(&server_report)
        .stdout(Stdio::piped())
        .spawn()
        .expect("strace is installed (scripts/setup.sh)");
    let addr = net_common::served_address(&mut server);

    let client = straced(data, &client_prefix)
        .args(["load", "--stack", stack, "--connect", &addr, "--response", RESPONSE])
        .args(["--connections", &CONNECTIONS.to_string(), "--concurrency", &CONCURRENCY.to_string(), "--output"])
        .arg(&client_report)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    finish(client, data, &client_prefix);

    // SIGTERM to tlsbench, strace's child: it stops its runner, which reports.
    let children = format!("/proc/{0}/task/{0}/children", server.id());
    let tlsbench = std::fs::read_to_string(&children).unwrap();
    let tlsbench: i32 = tlsbench.split_whitespace().next().expect("strace runs tlsbench").parse().unwrap();
    // SAFETY: a signal to the process strace started for this test, still running.
    unsafe { libc::kill(tlsbench, libc::SIGTERM) };
    finish(server, data, &server_prefix);

    let side = |what: &str, report: &Path, prefix: &str| Seen {
        what: format!("{stack} {what}"),
        report: serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap(),
        traced: Traced::read(data, prefix),
    };
    (side("server", &server_report, &server_prefix), side("client", &client_report, &client_prefix))
}

/// Inside the windows tlsbench's counts equal strace's, class by class: no tolerance. Timing
/// changes how many reads find nothing and how many polls wake up, but every one of them is a
/// call both see; a call tlsbench forgot or counted twice is a difference. The threads open no
/// file inside their windows (an openat would show under "not on a socket"), so every read,
/// write and close there is on a socket. The connections are all completed ones (a failed
/// connection's calls would be strace's only), and the server's include the client's warm-up.
#[test]
fn syscalls_counted_on_each_side_are_those_strace_sees() {
    let dir = tempfile::tempdir().unwrap();
    let mut sides = Vec::new();
    for stack in ["rustls-aws-lc-rs", "openssl", "tcp", "tcp-buffered"] {
        let (server, client) = run(dir.path(), stack);
        sides.extend([server, client]);
    }
    print_table(&sides);
    for side in &sides {
        let (report, traced) = (&side.report, &side.traced);
        assert_eq!((report.failed, &report.failures[..]), (0, &[][..]), "{}", side.what);
        let (connections, windows) = match report.side {
            Side::Server => (CONNECTIONS + CONCURRENCY, WORKERS),
            Side::Client => (CONNECTIONS, 1),
        };
        assert_eq!(
            (report.connections, traced.windows),
            (connections, windows),
            "{}: connections, and threads measured",
            side.what
        );
        let ours = Classes::of_report(report);
        assert!(
            traced.classes.read > connections && traced.classes.write >= connections,
            "{}: {:?}",
            side.what,
            traced.classes
        );
        assert_eq!(
            ours, traced.classes,
            "{}: syscalls counted by tlsbench (left) and seen by strace (right)",
            side.what
        );
        assert_eq!(report.syscalls(), traced.classes.total(), "{}: the total", side.what);
    }
}

fn print_table(sides: &[Seen]) {
    println!(
        "syscalls per connection, {RESPONSE} responses, tlsbench / strace \
         (calls strace saw outside the sockets apart):"
    );
    println!(
        "{:<24}{:>16}{:>16}{:>16}{:>16}{:>16}   not on a socket",
        "", "read", "write", "poll", "other socket", "total"
    );
    for side in sides {
        let n = side.report.connections.max(1) as f64;
        let (ours, theirs) = (Classes::of_report(&side.report), side.traced.classes);
        let pair = |a: u64, b: u64| format!("{:.2} / {:.2}", a as f64 / n, b as f64 / n);
        let not_socket: Vec<String> =
            side.traced.not_socket.iter().map(|(name, calls)| format!("{name} {:.2}", *calls as f64 / n)).collect();
        println!(
            "{:<24}{:>16}{:>16}{:>16}{:>16}{:>16}   {}",
            side.what,
            pair(ours.read, theirs.read),
            pair(ours.write, theirs.write),
            pair(ours.poll, theirs.poll),
            pair(ours.other, theirs.other),
            pair(ours.total(), theirs.total()),
            match not_socket.is_empty() {
                true => "none".to_string(),
                false => not_socket.join(", "),
            }
        );
    }
}
