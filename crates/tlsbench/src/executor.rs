//! Runs a runner process with a time limit and returns what it printed. A crash, a signal, a
//! hang or garbage on stdout becomes an error naming what happened, never a number.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use wait_timeout::ChildExt;

/// Runs `program args...`, waits at most `limit`, and returns its stdout if it exited with 0.
pub fn call(program: &Path, args: &[&str], limit: Duration) -> Result<String> {
    start(program, args, Stdio::null())?.finish(Instant::now() + limit, limit)
}

/// Runs two programs whose stdin is one socket between them (the two sides of a split-process
/// pair), with one deadline for both; returns each one's stdout as `call` does.
pub fn call_pair(a: (&Path, &[&str]), b: (&Path, &[&str]), limit: Duration) -> (Result<String>, Result<String>) {
    let deadline = Instant::now() + limit;
    let (socket_a, socket_b) = match UnixStream::pair() {
        Ok(pair) => pair,
        Err(e) => return (Err(anyhow!("creating the socket between the runners: {e}")), Err(anyhow!("no socket"))),
    };
    // Each child gets its end as stdin; ours close as the Commands drop, so that a child sees
    // the end of the stream when its peer exits. Both run on one CPU: the two sides take turns,
    // as in one process, and a side on a CPU of its own would start each turn on a CPU that sat
    // idle during its peer's (measured: up to a quarter slower on a VM).
    let cpu = first_allowed_cpu();
    let first = start_pinned(a.0, a.1, Stdio::from(OwnedFd::from(socket_a)), cpu);
    let second = start_pinned(b.0, b.1, Stdio::from(OwnedFd::from(socket_b)), cpu);
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
    stderr: thread::JoinHandle<String>,
}

fn start(program: &Path, args: &[&str], stdin: Stdio) -> Result<Running> {
    start_pinned(program, args, stdin, None)
}

/// Starts a runner, on `cpu` alone if given.
fn start_pinned(program: &Path, args: &[&str], stdin: Stdio, cpu: Option<usize>) -> Result<Running> {
    let mut command = Command::new(program);
    if let Some(cpu) = cpu {
        // SAFETY: between fork and exec the closure only calls sched_setaffinity, a plain system
        // call, on a set built on its own stack.
        unsafe {
            command.pre_exec(move || {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                match libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
    }
    let mut child = command
        .args(args)
        // Its own process group, out of the terminal's: Ctrl-C stops tlsbench after the current
        // sample (see main.rs) instead of killing the runner mid-sample and failing its cell.
        .process_group(0)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    // Read both pipes on their own threads so that a chatty runner cannot block on a full pipe.
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    Ok(Running { child, stdout, stderr })
}

impl Running {
    /// Waits until `deadline` (`limit` after the start), then kills; returns stdout if the
    /// runner exited with 0.
    fn finish(mut self, deadline: Instant, limit: Duration) -> Result<String> {
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
        let stderr = self.stderr.join().unwrap_or_default();
        if status.success() {
            return Ok(stdout);
        }
        let last_words = stderr.lines().filter(|l| !l.trim().is_empty()).last().unwrap_or("").trim().to_string();
        let cause = match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
            (_, Some(signal)) => format!("runner was killed by signal {signal} ({})", signal_name(signal)),
            (Some(code), _) => format!("runner exited with status {code}"),
            _ => format!("runner ended with {status}"),
        };
        Err(match last_words.is_empty() {
            true => anyhow!(cause),
            false => anyhow!("{cause}: {last_words}"),
        })
    }
}

/// The first CPU this process may run on, if the system says.
fn first_allowed_cpu() -> Option<usize> {
    // SAFETY: the set is zeroed, then filled by the kernel for this process.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0).then_some(set)
    }?;
    (0..libc::CPU_SETSIZE as usize).find(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
}

fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
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
        assert_eq!(ok, "hello\n");
        let exit = call(sh, &["-c", "echo oops >&2; exit 3"], Duration::from_secs(10)).unwrap_err();
        assert_eq!(exit.to_string(), "runner exited with status 3: oops");
        let killed = call(sh, &["-c", "kill -9 $$"], Duration::from_secs(10)).unwrap_err();
        assert_eq!(killed.to_string(), "runner was killed by signal 9 (SIGKILL)");
        let hung = call(sh, &["-c", "sleep 30"], Duration::from_millis(200)).unwrap_err();
        assert_eq!(hung.to_string(), "runner exceeded its time limit of 0.2 s and was killed");
    }

    #[test]
    fn a_pair_talks_through_the_socket_on_its_stdin() {
        let sh = Path::new("/bin/sh");
        // One side writes a line into the socket; the other reads it from its stdin and prints it.
        let writer: &[&str] = &["-c", "echo over the socket >&0"];
        let reader: &[&str] = &["-c", "read line; echo \"got: $line\""];
        let (a, b) = call_pair((sh, writer), (sh, reader), Duration::from_secs(10));
        assert_eq!((a.unwrap(), b.unwrap()), (String::new(), "got: over the socket\n".to_string()));
        // A side that dies leaves its peer with the end of the stream, not a hang.
        let (a, b) = call_pair((sh, &["-c", "exit 4"]), (sh, &["-c", "cat >/dev/null; echo peer gone"]), Duration::from_secs(10));
        assert_eq!(a.unwrap_err().to_string(), "runner exited with status 4");
        assert_eq!(b.unwrap(), "peer gone\n");
    }
}
