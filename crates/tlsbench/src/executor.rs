//! Runs a runner process with a time limit and returns what it printed. A crash, a signal, a
//! hang or garbage on stdout becomes an error naming what happened, never a number.
//!
//! A runner's stdout is its reply channel; its stderr holds whatever its libraries printed
//! (see the harness's `runner` module, "The reply channel"). The last lines of stderr come back
//! with the reply, so that a cell that fails keeps what the libraries said.

use std::io::{BufRead, BufReader, Read};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use wait_timeout::ChildExt;

/// How many of stderr's last non-empty lines are kept, and at most how many characters of them.
const STDERR_LINES: usize = 3;
const STDERR_CHARS: usize = 400;

/// What a runner that exited with 0 printed.
#[derive(Debug, PartialEq, Eq)]
pub struct Output {
    /// The reply.
    pub stdout: String,
    /// The last lines of stderr, short (see [`last_lines`]); None when it printed nothing.
    pub stderr: Option<String>,
}

/// Runs `program args...`, waits at most `limit`, and returns its output if it exited with 0.
pub fn call(program: &Path, args: &[&str], limit: Duration) -> Result<Output> {
    call_with(program, args, &[], limit)
}

/// `call` with variables added to the runner's environment (its allocator: see
/// `tlsbench_harness::allocator`).
pub fn call_with(program: &Path, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Result<Output> {
    call_on_cpu(program, args, env, limit, None)
}

/// `call_with`, on `cpu` alone if given.
pub fn call_on_cpu(
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    limit: Duration,
    cpu: Option<usize>,
) -> Result<Output> {
    start_pinned(program, args, env, Stdio::null(), cpu)?.finish(Instant::now() + limit, limit)
}

/// Runs two programs whose stdin is one socket between them (the two sides of a split-process
/// pair), with one deadline for both; returns each one's output as `call` does.
#[cfg(test)]
pub fn call_pair(a: (&Path, &[&str]), b: (&Path, &[&str]), limit: Duration) -> (Result<Output>, Result<Output>) {
    call_pair_with(a, b, &[], limit)
}

/// `call_pair` with variables added to both runners' environment.
pub fn call_pair_with(
    a: (&Path, &[&str]),
    b: (&Path, &[&str]),
    env: &[(&str, &str)],
    limit: Duration,
) -> (Result<Output>, Result<Output>) {
    call_pair_on(a, b, env, limit, first_allowed_cpu())
}

/// `call_pair_with`, both runners on `cpu` (None: the first this process may use).
pub fn call_pair_on(
    a: (&Path, &[&str]),
    b: (&Path, &[&str]),
    env: &[(&str, &str)],
    limit: Duration,
    cpu: Option<usize>,
) -> (Result<Output>, Result<Output>) {
    let deadline = Instant::now() + limit;
    let (socket_a, socket_b) = match UnixStream::pair() {
        Ok(pair) => pair,
        Err(e) => return (Err(anyhow!("creating the socket between the runners: {e}")), Err(anyhow!("no socket"))),
    };
    // Each child gets its end as stdin; ours close as the Commands drop, so that a child sees
    // the end of the stream when its peer exits. Both run on one CPU: the two sides take turns,
    // as in one process, and a side on a CPU of its own would start each turn on a CPU that sat
    // idle during its peer's (measured: up to a quarter slower on a VM).
    let cpu = cpu.or_else(first_allowed_cpu);
    let first = start_pinned(a.0, a.1, env, Stdio::from(OwnedFd::from(socket_a)), cpu);
    let second = start_pinned(b.0, b.1, env, Stdio::from(OwnedFd::from(socket_b)), cpu);
    match (first, second) {
        (Ok(first), Ok(second)) => (first.finish(deadline, limit), second.finish(deadline, limit)),
        (first, second) => {
            let outcome = |running: Result<Running>| running.and_then(|r| r.finish(Instant::now(), limit));
            (outcome(first), outcome(second))
        }
    }
}

/// A started runner with threads draining its output.
struct Running {
    child: std::process::Child,
    stdout: thread::JoinHandle<String>,
    /// Only the end of stderr: a library that prints on every handshake can print a lot.
    stderr: thread::JoinHandle<String>,
}

/// Starts a runner, on `cpu` alone if given.
fn start_pinned(
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: Stdio,
    cpu: Option<usize>,
) -> Result<Running> {
    start_on(program, args, env, stdin, cpu.map(|cpu| crate::cores::set_of(&[cpu])))
}

/// `call`, the runner and every thread it starts on `cpus` only; with the CPUs the kernel
/// reports the started runner may use (None if it ended before they were read).
pub fn call_on(program: &Path, args: &[&str], cpus: &[usize], limit: Duration) -> (Result<Output>, Option<Vec<usize>>) {
    match start_on(program, args, &[], Stdio::null(), Some(crate::cores::set_of(cpus))) {
        Ok(running) => {
            let affinity = crate::cores::of_process(running.child.id());
            (running.finish(Instant::now() + limit, limit), affinity)
        }
        Err(e) => (Err(e), None),
    }
}

/// Restricts what `command` starts to the CPUs of `set`, from before it runs any of its code.
fn pin(command: &mut Command, set: libc::cpu_set_t) {
    // SAFETY: between fork and exec the closure only calls sched_setaffinity, a plain system
    // call, on a set copied into it.
    unsafe {
        command.pre_exec(move || match libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        });
    }
}

/// Puts the runner that `command` starts in a process group of its own, out of the terminal's,
/// so that Ctrl-C stops tlsbench after the current sample (see main.rs) instead of killing the
/// runner mid-sample and failing its cell. With a `pre_exec` hook, which makes std fork: a Ctrl-C
/// that comes between the fork and the child's move to its group runs tlsbench's own handler in
/// the child, which only says to stop. Without one std uses posix_spawn, whose child sets that
/// handler back to the default before it moves, and the Ctrl-C killed it (a test saw "runner was
/// killed by signal 2").
pub(crate) fn own_process_group(command: &mut Command) {
    command.process_group(0);
    // SAFETY: the hook does nothing between fork and exec.
    unsafe {
        command.pre_exec(|| Ok(()));
    }
}

/// Starts a runner, on the CPUs of `cpus` only if given.
fn start_on(
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: Stdio,
    cpus: Option<libc::cpu_set_t>,
) -> Result<Running> {
    let mut command = Command::new(program);
    // An empty value removes the variable (the trust store's SSL_CERT_DIR, crate::trust).
    for &(name, value) in env {
        match value.is_empty() {
            true => command.env_remove(name),
            false => command.env(name, value),
        };
    }
    if let Some(set) = cpus {
        pin(&mut command, set);
    }
    own_process_group(&mut command);
    let mut child = command
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    // Read both pipes on their own threads so that a chatty runner cannot block on a full pipe.
    let stdout = drain(child.stdout.take().expect("stdout is piped"), usize::MAX);
    let stderr = drain(child.stderr.take().expect("stderr is piped"), STDERR_KEPT_BYTES);
    Ok(Running { child, stdout, stderr })
}

impl Running {
    /// Waits until `deadline` (`limit` after the start), then kills; returns the output if the
    /// runner exited with 0.
    fn finish(mut self, deadline: Instant, limit: Duration) -> Result<Output> {
        let child = &mut self.child;
        let left = deadline.saturating_duration_since(Instant::now());
        let status = match child.wait_timeout(left).context("waiting for the runner")? {
            Some(status) => status,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(anyhow!("runner exceeded its time limit of {} s and was killed", limit.as_secs_f64()));
            }
        };
        let stdout = self.stdout.join().unwrap_or_default();
        let stderr = last_lines(&self.stderr.join().unwrap_or_default());
        match status.success() {
            true => Ok(Output { stdout, stderr }),
            false => Err(exit_error(status, stderr)),
        }
    }
}

/// Why a runner that did not exit with 0 ended, with the last lines it printed on stderr.
pub(crate) fn exit_error(status: std::process::ExitStatus, stderr: Option<String>) -> anyhow::Error {
    let cause = match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
        (_, Some(signal)) => format!("runner was killed by signal {signal} ({})", signal_name(signal)),
        (Some(code), _) => format!("runner exited with status {code}"),
        _ => format!("runner ended with {status}"),
    };
    with_stderr(cause, stderr)
}

/// `cause`, followed by what the runner last printed on stderr if anything.
pub(crate) fn with_stderr(cause: String, stderr: Option<String>) -> anyhow::Error {
    match stderr {
        None => anyhow!(cause),
        Some(last_words) => anyhow!("{cause}: {last_words}"),
    }
}

/// A runner that replies twice: one line once it is ready, and its last reply once SIGTERM
/// stops it (the network mode's server). Killed if dropped while still running.
pub struct Service {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    stderr: Option<thread::JoinHandle<String>>,
}

impl Service {
    pub fn start(program: &Path, args: &[&str]) -> Result<Service> {
        Service::start_on(program, args, None)
    }

    /// `start`, the runner and every thread it starts on `cpus` only if given.
    pub fn start_on(program: &Path, args: &[&str], cpus: Option<&[usize]>) -> Result<Service> {
        let mut command = Command::new(program);
        if let Some(cpus) = cpus {
            pin(&mut command, crate::cores::set_of(cpus));
        }
        own_process_group(&mut command);
        let mut child = command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", program.display()))?;
        let lines = lines_of(child.stdout.take().expect("stdout is piped"));
        let stderr = Some(drain(child.stderr.take().expect("stderr is piped"), STDERR_KEPT_BYTES));
        Ok(Service { child, lines, stderr })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The next line of its reply, waiting at most `limit`; if it ends or takes longer, why.
    pub fn next_line(&mut self, limit: Duration) -> Result<String> {
        match self.lines.recv_timeout(limit) {
            Ok(line) => Ok(line),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let cause = format!("runner did not reply within {} s and was killed", limit.as_secs_f64());
                Err(with_stderr(cause, self.kill()))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let Some(status) = self.child.wait_timeout(limit).context("waiting for the runner")? else {
                    return Err(with_stderr(
                        "runner closed its reply channel without replying and was killed".into(),
                        self.kill(),
                    ));
                };
                let stderr = self.stderr_tail();
                Err(match status.success() {
                    true => with_stderr("runner exited without replying".into(), stderr),
                    false => exit_error(status, stderr),
                })
            }
        }
    }

    /// SIGTERM, then its last reply, waiting at most `limit` for it.
    pub fn stop(mut self, limit: Duration) -> Result<String> {
        // SAFETY: a signal to our own child, not yet reaped (Drop and next_line reap it only
        // after it has ended).
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        self.next_line(limit)
    }

    /// Kills it and whatever it started (its process group: they would hold its stderr open);
    /// the last lines it printed on stderr.
    fn kill(&mut self) -> Option<String> {
        // SAFETY: a signal to the process group this child leads (`process_group(0)`), whose
        // leader is not yet reaped, so its id cannot have been reused.
        unsafe { libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL) };
        let _ = self.child.wait();
        self.stderr_tail()
    }

    /// The last lines it printed on stderr, once it has ended (see [`last_lines`]).
    fn stderr_tail(&mut self) -> Option<String> {
        last_lines(&self.stderr.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default())
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// The lines a runner writes on `stdout`, as they come, read on a thread of their own; the
/// channel closes when the runner closes its stdout.
pub(crate) fn lines_of(stdout: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let (sender, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// The last few non-empty lines of `text`, joined with " | ", cut to their last
/// `STDERR_CHARS` characters; None when there are none.
pub fn last_lines(text: &str) -> Option<String> {
    let mut lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).rev().take(STDERR_LINES).collect();
    lines.reverse();
    let joined = lines.join(" | ");
    let chars = joined.chars().count();
    match chars {
        0 => None,
        n if n <= STDERR_CHARS => Some(joined),
        n => Some(format!("...{}", joined.chars().skip(n - STDERR_CHARS).collect::<String>())),
    }
}

/// The first CPU this process may run on, if the system says.
pub(crate) fn first_allowed_cpu() -> Option<usize> {
    let set = crate::cores::thread_affinity()?;
    // SAFETY: CPU_ISSET reads within the set, at CPUs below CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize).find(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
}

/// How much of the end of a runner's stderr is held while it runs.
pub(crate) const STDERR_KEPT_BYTES: usize = 64 * 1024;

/// Reads `pipe` to its end on a thread, keeping its last `keep` bytes (at least).
fn drain(mut pipe: impl Read + Send + 'static, keep: usize) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let (mut kept, mut chunk) = (Vec::new(), vec![0; 16 * 1024]);
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => kept.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
            // Trimmed only when twice over, so that the copy costs little per byte read.
            if kept.len() > keep.saturating_mul(2) {
                kept.drain(..kept.len() - keep);
            }
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_exit_status_signal_and_time_limit() {
        let sh = Path::new("/bin/sh");
        let ok = call(sh, &["-c", "echo hello"], Duration::from_secs(10)).unwrap();
        assert_eq!(ok, Output { stdout: "hello\n".into(), stderr: None });
        let exit = call(sh, &["-c", "echo oops >&2; exit 3"], Duration::from_secs(10)).unwrap_err();
        assert_eq!(exit.to_string(), "runner exited with status 3: oops");
        let killed = call(sh, &["-c", "kill -9 $$"], Duration::from_secs(10)).unwrap_err();
        assert_eq!(killed.to_string(), "runner was killed by signal 9 (SIGKILL)");
        let hung = call(sh, &["-c", "sleep 30"], Duration::from_millis(200)).unwrap_err();
        assert_eq!(hung.to_string(), "runner exceeded its time limit of 0.2 s and was killed");
    }

    #[test]
    fn a_runner_pinned_to_cpus_runs_there_and_so_does_what_it_starts() {
        let sh = Path::new("/bin/sh");
        let cpu = *crate::cores::allowed().last().expect("a CPU");
        // The shell's own view, and that of a process it starts: inherited.
        let script = "grep Cpus_allowed_list /proc/self/status; sleep 0.2";
        let (output, affinity) = call_on(sh, &["-c", script], &[cpu], Duration::from_secs(10));
        assert_eq!(output.unwrap().stdout, format!("Cpus_allowed_list:\t{cpu}\n"));
        assert_eq!(affinity, Some(vec![cpu]));
        let mut service =
            Service::start_on(sh, &["-c", "echo ready; grep Cpus_allowed_list /proc/self/status"], Some(&[cpu]))
                .unwrap();
        assert_eq!(service.next_line(Duration::from_secs(10)).unwrap(), "ready");
        assert_eq!(service.next_line(Duration::from_secs(10)).unwrap(), format!("Cpus_allowed_list:\t{cpu}"));
    }

    #[test]
    fn a_pair_talks_through_the_socket_on_its_stdin() {
        let sh = Path::new("/bin/sh");
        // One side writes a line into the socket; the other reads it from its stdin and prints it.
        let writer: &[&str] = &["-c", "echo over the socket >&0"];
        let reader: &[&str] = &["-c", "read line; echo \"got: $line\""];
        let (a, b) = call_pair((sh, writer), (sh, reader), Duration::from_secs(10));
        assert_eq!((a.unwrap().stdout, b.unwrap().stdout), (String::new(), "got: over the socket\n".to_string()));
        // A side that dies leaves its peer with the end of the stream, not a hang.
        let (a, b) = call_pair(
            (sh, &["-c", "exit 4"]),
            (sh, &["-c", "cat >/dev/null; echo peer gone"]),
            Duration::from_secs(10),
        );
        assert_eq!(a.unwrap_err().to_string(), "runner exited with status 4");
        assert_eq!(b.unwrap().stdout, "peer gone\n");
    }

    #[test]
    fn a_service_replies_when_ready_and_again_when_stopped_and_never_hangs() {
        let sh = Path::new("/bin/sh");
        let limit = Duration::from_secs(10);
        let server = "trap 'echo stopped; exit 0' TERM; echo ready; while :; do sleep 0.05; done";
        let mut service = Service::start(sh, &["-c", server]).unwrap();
        assert_eq!(service.next_line(limit).unwrap(), "ready");
        assert_eq!(service.stop(limit).unwrap(), "stopped");

        let mut silent = Service::start(sh, &["-c", "echo starting >&2; sleep 30"]).unwrap();
        let error = silent.next_line(Duration::from_millis(300)).unwrap_err().to_string();
        assert_eq!(error, "runner did not reply within 0.3 s and was killed: starting");
        let mut dead = Service::start(sh, &["-c", "echo no port >&2; exit 3"]).unwrap();
        assert_eq!(dead.next_line(limit).unwrap_err().to_string(), "runner exited with status 3: no port");
        let mut deaf = Service::start(sh, &["-c", "trap '' TERM; echo ready; sleep 30"]).unwrap();
        assert_eq!(deaf.next_line(limit).unwrap(), "ready");
        let error = deaf.stop(Duration::from_millis(300)).unwrap_err().to_string();
        assert!(error.starts_with("runner did not reply within 0.3 s and was killed"), "{error}");
    }

    #[test]
    fn stderr_comes_back_as_its_last_few_lines_kept_short() {
        let sh = Path::new("/bin/sh");
        let chatty = "for i in 1 2 3 4 5; do echo \"line $i\" >&2; echo >&2; done; echo reply";
        let output = call(sh, &["-c", chatty], Duration::from_secs(10)).unwrap();
        assert_eq!(output, Output { stdout: "reply\n".into(), stderr: Some("line 3 | line 4 | line 5".into()) });
        // A library printing on every handshake: only the end is held, and only its last lines
        // come back, cut to STDERR_CHARS.
        let flood = concat!(
            "i=0; while [ $i -lt 20000 ]; do echo \"handshake $i\" >&2; i=$((i+1)); done; ",
            "printf '%0500d\\n' 7 >&2; exit 5",
        );
        let error = call(sh, &["-c", flood], Duration::from_secs(30)).unwrap_err().to_string();
        let tail = error.strip_prefix("runner exited with status 5: ...").unwrap_or_else(|| panic!("{error}"));
        assert_eq!(tail.chars().count(), STDERR_CHARS);
        assert!(tail.ends_with("0007"), "{tail}");
        assert_eq!(last_lines(" \n\n"), None);
    }
}
