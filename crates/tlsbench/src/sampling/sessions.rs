//! Runners that stay up for many samples (docs/runner-protocol.md, "Sessions"), and the pool
//! that keeps them: a JIT warms up once per process instead of once per sample.
//!
//! A [`Session`] is one runner process started with `session`: each request is one line on its
//! stdin, each reply one line on its stdout. A reply that does not come within its limit gets
//! the process killed, as a one-shot runner would be (executor.rs). The [`Pool`] keys its
//! sessions by what a process can serve: a runner, the pair (in-process) or the side and stack
//! (split: the peer changes from sample to sample, met at a socket path each sample makes anew),
//! the allocator and the fork. One process serves every scenario of its key, but a scenario
//! that needs process-wide settings other than the first one's (a JVM pins some TLS settings
//! for good) is refused with `needs_new_process` and moves to the key's next slot.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use tlsbench_harness::Side;
use wait_timeout::ChildExt;

use crate::executor::{self, Output};

/// One runner process taking requests.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: mpsc::Receiver<String>,
    /// What it printed on stderr since its last request (its end only, see executor.rs).
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The scenarios it has warmed up for, once each, whatever its peer in the samples after.
    pub warm_for: HashSet<String>,
    /// Warm from its start for every scenario: its stacks are compiled ahead of time.
    pub always_warm: bool,
    /// Each side's measured time per sample that its warm-up chose for a scenario from what its
    /// collector did (steady::GcSeen), where longer than the run's.
    pub sample_ms: HashMap<String, u64>,
}

impl Session {
    /// Starts `program session` with `env` added to its environment.
    pub fn start(program: &Path, env: &[(&str, &str)]) -> Result<Session> {
        let mut command = Command::new(program);
        // Out of the terminal's process group, as one-shot runners are.
        executor::own_process_group(&mut command);
        let mut child = command
            .arg("session")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {} session", program.display()))?;
        let stdin = child.stdin.take();
        let replies = executor::lines_of(child.stdout.take().expect("stdout is piped"));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let kept = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut chunk = vec![0; 16 * 1024];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                        kept.extend_from_slice(&chunk[..n]);
                        if kept.len() > 2 * executor::STDERR_KEPT_BYTES {
                            let cut = kept.len() - executor::STDERR_KEPT_BYTES;
                            kept.drain(..cut);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
        });
        Ok(Session {
            child,
            stdin,
            replies,
            stderr,
            warm_for: HashSet::new(),
            always_warm: false,
            sample_ms: HashMap::new(),
        })
    }

    /// Sends one request: the words of a `sample` or `side` command.
    pub fn send(&mut self, words: &[&str]) -> Result<()> {
        if let Some(word) = words.iter().find(|w| w.contains(['\t', '\n'])) {
            bail!("a request word holds a tab or a newline, which a session request cannot carry: {word:?}");
        }
        self.stderr.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let stdin = self.stdin.as_mut().ok_or_else(|| anyhow!("the session's stdin is closed"))?;
        let line = words.join("\t") + "\n";
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
            .context("sending a request to the runner (it may have exited)")
    }

    /// The reply to the request sent, waiting until `deadline` (`limit` after it was sent);
    /// a runner that has not replied by then is killed, and one that ended says how.
    pub fn receive(&mut self, deadline: Instant, limit: Duration) -> Result<Output> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.replies.recv_timeout(left) {
            Ok(line) => Ok(Output { stdout: line, stderr: self.stderr_lines() }),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.kill();
                let cause = format!("runner exceeded its time limit of {} s and was killed", limit.as_secs_f64());
                Err(executor::with_stderr(cause, self.stderr_lines()))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = match self.child.wait_timeout(Duration::from_secs(5)).context("waiting for the runner")? {
                    Some(status) => status,
                    None => {
                        self.kill();
                        return Err(executor::with_stderr(
                            "runner closed its reply channel and was killed".into(),
                            self.stderr_lines(),
                        ));
                    }
                };
                // The reader thread may still hold the last of stderr: give it a moment.
                thread::sleep(Duration::from_millis(20));
                Err(match status.success() {
                    true => executor::with_stderr("runner exited without replying".into(), self.stderr_lines()),
                    false => executor::exit_error(status, self.stderr_lines()),
                })
            }
        }
    }

    /// Whether it is warm for `scenario`.
    pub fn is_warm_for(&self, scenario: &str) -> bool {
        self.always_warm || self.warm_for.contains(scenario)
    }

    /// Puts every thread of the process on `cpu` alone, or back on every CPU this process may
    /// use (None). The threads a runtime starts later inherit it from the thread that starts them.
    pub fn pin(&self, cpu: Option<usize>) {
        let set = match cpu {
            Some(cpu) => crate::cores::set_of(&[cpu]),
            None => match crate::cores::thread_affinity() {
                Some(set) => set,
                None => return,
            },
        };
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.child.id())) else { return };
        for tid in tasks.filter_map(|t| t.ok()?.file_name().to_str()?.parse::<libc::pid_t>().ok()) {
            // SAFETY: sched_setaffinity only reads the set. A thread that has exited in between
            // makes the call fail, which changes nothing.
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        }
    }

    /// The last lines printed on stderr since the last request.
    fn stderr_lines(&self) -> Option<String> {
        let kept = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        executor::last_lines(&String::from_utf8_lossy(&kept))
    }

    /// Kills it and whatever it started (its process group).
    fn kill(&mut self) {
        // SAFETY: a signal to the process group this child leads (`process_group(0)`), whose
        // leader is not yet reaped, so its id cannot have been reused.
        if let Ok(None) = self.child.try_wait() {
            unsafe { libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL) };
        }
        let _ = self.child.wait();
    }
}

impl Drop for Session {
    /// Ends the session: the end of its stdin lets it exit by itself; one still there after a
    /// moment is killed.
    fn drop(&mut self) {
        self.stdin = None;
        if !matches!(self.child.wait_timeout(Duration::from_millis(200)), Ok(Some(_))) {
            self.kill();
        }
    }
}

/// What one session process serves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub runner: PathBuf,
    pub role: Role,
    /// The allocator the process was started on (`TLSBENCH_ALLOCATOR`).
    pub allocator: &'static str,
    /// Which of the processes a cell takes its samples from.
    pub fork: usize,
    /// Which of the processes of the above: 0, or more for scenarios that one refused
    /// ([`Pool::slot`]).
    pub slot: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Both sides of a pair, in one process.
    Pair { client: String, server: String },
    /// One side of split pairs, whatever the peer.
    Side { side: Side, stack: String },
}

/// The live sessions of a run, and where split sides meet.
pub struct Pool {
    live: HashMap<Key, Session>,
    /// The slot of each key (at slot 0) and scenario that slot 0 refused.
    slots: HashMap<(Key, String), usize>,
    pub sockets: Sockets,
}

/// The most processes that stay up a run keeps at once: a JVM holds 100 to 200 MB here, and
/// `tlsbench interop` with its eight default scenarios would keep over a hundred.
pub const LIVE_PROCESSES: usize = 48;

/// The most processes one key starts for scenarios that the ones before refused: as many as a
/// run keeps up at once (a batch holds no more scenarios), so only a runner that refuses every
/// process reaches it.
pub const SLOTS: usize = LIVE_PROCESSES;

/// The directory of the sockets where the two sides of split samples meet, one path each.
pub struct Sockets {
    dir: tempfile::TempDir,
    next: std::sync::atomic::AtomicU64,
}

impl Sockets {
    /// A path where the two sides of one split sample meet, used once.
    pub fn path(&self) -> PathBuf {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.dir.path().join(format!("{n}.sock"))
    }
}

impl Pool {
    pub fn new() -> Result<Pool> {
        let dir = tempfile::Builder::new()
            .prefix("tlsbench-peers-")
            .tempdir()
            .context("creating the directory of the peers' sockets")?;
        Ok(Pool { live: HashMap::new(), slots: HashMap::new(), sockets: Sockets { dir, next: 0.into() } })
    }

    /// `key` (at slot 0) with the slot whose process serves `scenario`: 0 unless refused there.
    pub fn slot(&self, key: Key, scenario: &str) -> Key {
        let slot = self.slots.get(&(key.clone(), scenario.to_string())).copied().unwrap_or(0);
        Key { slot, ..key }
    }

    /// `key`'s process refused `scenario` (`needs_new_process`): it moves to the next slot, or
    /// there is none left.
    pub fn refused(&mut self, key: &Key, scenario: &str) -> Result<()> {
        if key.slot + 1 >= SLOTS {
            bail!(
                "{SLOTS} processes of {} each refused {scenario} for needing a process of its own",
                key.runner.display()
            );
        }
        self.slots.insert((Key { slot: 0, ..key.clone() }, scenario.to_string()), key.slot + 1);
        Ok(())
    }

    /// The session of `key`, started now if it is not up; the caller gives it back with
    /// [`Pool::put`] while it is fit for further samples.
    pub fn take(&mut self, key: &Key, env: &[(&str, &str)]) -> Result<Session> {
        match self.live.remove(key) {
            Some(session) => Ok(session),
            None => Session::start(&key.runner, env),
        }
    }

    pub fn put(&mut self, key: Key, session: Session) {
        self.live.insert(key, session);
    }
}
