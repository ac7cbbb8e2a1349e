//! Runs a runner process with a time limit and returns what it printed. A crash, a signal, a
//! hang or garbage on stdout becomes an error naming what happened, never a number.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use wait_timeout::ChildExt;

/// Runs `program args...`, waits at most `limit`, and returns its stdout if it exited with 0.
pub fn call(program: &Path, args: &[&str], limit: Duration) -> Result<String> {
    let mut child = Command::new(program)
        .args(args)
        // Its own process group, out of the terminal's: Ctrl-C stops tlsbench after the current
        // sample (see main.rs) instead of killing the runner mid-sample and failing its cell.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    // Read both pipes on their own threads so that a chatty runner cannot block on a full pipe.
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    let status = match child.wait_timeout(limit).context("waiting for the runner")? {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(anyhow!("runner exceeded its time limit of {} s and was killed", limit.as_secs_f64()));
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
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
}
