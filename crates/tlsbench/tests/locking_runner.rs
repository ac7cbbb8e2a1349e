//! End-to-end: the sync measure counts what a side's library calls take, exactly, and nothing of
//! the peer's calls or the setup.
//!
//! This test binary is also the runner it tests, as tests/printing_runner.rs is: tlsbench finds
//! it as `tlsbench-runner-locking`, alone in the directory named by TLSBENCH_RUNNER_DIR. Its
//! family is rustls with ring, the real stack, wrapped to take a known number of locks in each
//! library call that creates a connection (once per handshake and side), in each write of a
//! transfer, and many more in the configs, which are setup. The wrapper exists only here; it is
//! never among tlsbench's stacks. The same stack unwrapped, in the real runner beside tlsbench,
//! gives each count's base: rustls's own.

use std::cell::UnsafeCell;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tlsbench_harness::testing::{Hooks, Wrapped};
use tlsbench_harness::{Connection, LibError, Negotiated, Stack};
use tlsbench_stack_rustls::Rustls;

const RUNNER_NAME: &str = "tlsbench-runner-locking";
const FULL: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
const TRANSFER: &str = "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// What the wrapper adds to each new client: glibc mutex locks, glibc rwlock write locks, one
/// write of a Rust std RwLock, and atomic additions of its own.
const CLIENT_MUTEX_LOCKS: u64 = 3;
const CLIENT_RWLOCK_WRITES: u64 = 2;
const CLIENT_ATOMIC_ADDS: u64 = 4;
/// What it adds to each new server: glibc rwlock read locks, pthread_once checks, one lock of a
/// Rust std Mutex, and waits at a barrier of one thread, each of which wakes the barrier's
/// waiters with a futex call (glibc does, whether any waits or not).
const SERVER_RWLOCK_READS: u64 = 5;
const SERVER_ONCE_CHECKS: u64 = 2;
const SERVER_BARRIER_WAITS: u64 = 3;
/// And to each write of a transfer's server: mutex locks.
const SEND_MUTEX_LOCKS: u64 = 1;
/// The configs' locks: setup, never counted.
const CONFIG_LOCKS: usize = 100;

/// glibc's locks, as a C library keeps them: statics initialised by their initialisers, and a
/// barrier of one thread, initialised with each server config.
struct Primitives {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    rwlock: UnsafeCell<libc::pthread_rwlock_t>,
    once: UnsafeCell<libc::pthread_once_t>,
    barrier: UnsafeCell<libc::pthread_barrier_t>,
}

// SAFETY: each is used only through glibc's functions, which synchronise it.
unsafe impl Sync for Primitives {}

static PRIMITIVES: Primitives = Primitives {
    mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
    rwlock: UnsafeCell::new(libc::PTHREAD_RWLOCK_INITIALIZER),
    once: UnsafeCell::new(libc::PTHREAD_ONCE_INIT),
    // SAFETY: all zeroes is a valid bit pattern for the C struct; pthread_barrier_init sets it.
    barrier: UnsafeCell::new(unsafe { std::mem::zeroed() }),
};
static STD_MUTEX: std::sync::Mutex<u64> = std::sync::Mutex::new(0);
static STD_RWLOCK: std::sync::RwLock<u64> = std::sync::RwLock::new(0);
static COUNTER: AtomicU64 = AtomicU64::new(0);

extern "C" fn initialise() {}

fn mutex_locks(n: u64) {
    for _ in 0..n {
        // SAFETY: a mutex initialised by PTHREAD_MUTEX_INITIALIZER, locked and unlocked here.
        unsafe {
            libc::pthread_mutex_lock(PRIMITIVES.mutex.get());
            libc::pthread_mutex_unlock(PRIMITIVES.mutex.get());
        }
    }
}

fn rwlock_locks(n: u64, write: bool) {
    for _ in 0..n {
        // SAFETY: an rwlock initialised by PTHREAD_RWLOCK_INITIALIZER, locked and unlocked here.
        unsafe {
            match write {
                true => libc::pthread_rwlock_wrlock(PRIMITIVES.rwlock.get()),
                false => libc::pthread_rwlock_rdlock(PRIMITIVES.rwlock.get()),
            };
            libc::pthread_rwlock_unlock(PRIMITIVES.rwlock.get());
        }
    }
}

/// The hooks of a stack that takes known locks in its calls, then does what its stack does.
struct Locking;

impl<S: Stack> Hooks<S> for Locking {
    type Client = LockingConnection<S::Client>;
    type Server = LockingConnection<S::Server>;

    fn on_client_config(&self) {
        mutex_locks(CONFIG_LOCKS as u64);
    }
    fn on_server_config(&self) {
        rwlock_locks(CONFIG_LOCKS as u64, false);
        // SAFETY: a barrier of one thread, initialised before any connection waits at it.
        unsafe { libc::pthread_barrier_init(PRIMITIVES.barrier.get(), std::ptr::null(), 1) };
    }
    fn new_client(&self, new: impl FnOnce() -> Result<S::Client, LibError>) -> Result<Self::Client, LibError> {
        mutex_locks(CLIENT_MUTEX_LOCKS);
        rwlock_locks(CLIENT_RWLOCK_WRITES, true);
        *STD_RWLOCK.write().unwrap_or_else(|e| e.into_inner()) += 1;
        for _ in 0..CLIENT_ATOMIC_ADDS {
            COUNTER.fetch_add(1, Ordering::Relaxed);
        }
        Ok(LockingConnection { inner: new()? })
    }
    fn new_server(&self, new: impl FnOnce() -> Result<S::Server, LibError>) -> Result<Self::Server, LibError> {
        rwlock_locks(SERVER_RWLOCK_READS, false);
        for _ in 0..SERVER_ONCE_CHECKS {
            // SAFETY: a once initialised by PTHREAD_ONCE_INIT, and a function that does nothing.
            unsafe { libc::pthread_once(PRIMITIVES.once.get(), initialise) };
        }
        *STD_MUTEX.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        for _ in 0..SERVER_BARRIER_WAITS {
            // SAFETY: the barrier the server config initialised.
            unsafe { libc::pthread_barrier_wait(PRIMITIVES.barrier.get()) };
        }
        Ok(LockingConnection { inner: new()? })
    }
}

struct LockingConnection<C> {
    inner: C,
}

impl<C: Connection> Connection for LockingConnection<C> {
    fn handshake(&mut self) -> Result<bool, LibError> {
        self.inner.handshake()
    }
    fn send(&mut self, data: &[u8]) -> Result<(), LibError> {
        mutex_locks(SEND_MUTEX_LOCKS);
        self.inner.send(data)
    }
    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        self.inner.receive(buf)
    }
    fn negotiated(&self) -> Result<Negotiated, LibError> {
        self.inner.negotiated()
    }
}

tlsbench_harness::family!(LockingRustls { "rustls-ring" => Wrapped::new(&Rustls::ring(), Locking) });

fn main() -> ExitCode {
    let called_as = std::env::args_os().next().map(PathBuf::from).unwrap_or_default();
    if called_as.file_name().is_some_and(|name| name == RUNNER_NAME) {
        return tlsbench_harness::runner::main::<LockingRustls>();
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let runners = dir.path().join("runners");
    std::fs::create_dir(&runners).expect("the runner directory");
    let me = std::env::current_exe().expect("this test's binary");
    std::os::unix::fs::symlink(me, runners.join(RUNNER_NAME)).expect("linking the runner");
    let name = "the_sync_measure_counts_each_side_s_own_locks_exactly";
    eprintln!("test {name} ...");
    the_sync_measure_counts_each_side_s_own_locks_exactly(dir.path());
    eprintln!("test {name} ... ok");
    ExitCode::SUCCESS
}

/// `tlsbench run --measure sync` of rustls-ring on both scenarios, in one process and split,
/// two samples each; with `runners`, only the runners there. Its cells.
fn run(dir: &Path, runners: Option<&Path>) -> Vec<Value> {
    let json = dir.join("sync.json");
    let _ = std::fs::remove_file(&json);
    let mut command = Command::new(env!("CARGO_BIN_EXE_tlsbench"));
    command.env("TLSBENCH_DATA_DIR", dir.join("data")).current_dir(dir);
    if let Some(runners) = runners {
        command.env("TLSBENCH_RUNNER_DIR", runners);
    }
    command.args(["run", "--measure", "sync", "--stack", "rustls-ring", "--process", "both", "--samples", "2"]);
    command.args(["--scenario", FULL, "--scenario", TRANSFER, "--export-json"]).arg(&json);
    let output = command.output().expect("running tlsbench");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    doc["results"].as_array().expect("results").clone()
}

/// The one value of a cell's two samples, which must be equal: the counts are exact.
fn count(cells: &[Value], scenario: &str, process: &str, side: &str, metric: &str) -> f64 {
    let cell = cells
        .iter()
        .find(|c| c["scenario"] == scenario && c["process"] == process && c["side"] == side && c["metric"] == metric)
        .unwrap_or_else(|| panic!("no cell {scenario} {process} {side} {metric}"));
    assert_eq!(cell["status"], "ok", "{cell}");
    let samples: Vec<f64> = cell["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(samples.len(), 2, "{cell}");
    assert_eq!(samples[0], samples[1], "two runs of {scenario} {process} {side} {metric} differ: {samples:?}");
    samples[0]
}

fn the_sync_measure_counts_each_side_s_own_locks_exactly(dir: &Path) {
    let wrapped = run(dir, Some(&dir.join("runners")));
    // rustls-ring unwrapped, in the real runner beside tlsbench: rustls's own counts.
    let base = run(dir, None);
    const METRICS: [&str; 6] =
        ["mutex_locks", "rwlock_read_locks", "rwlock_write_locks", "once_checks", "atomic_rmw", "futex_calls"];
    for process in ["in-process", "split-process"] {
        let added = |scenario: &str, side: &str, metric: &str| {
            count(&wrapped, scenario, process, side, metric) - count(&base, scenario, process, side, metric)
        };
        let per_handshake = |side: &str| METRICS.map(|metric| added(FULL, side, metric));
        // Each side has what its own calls took, none of what its peer's took, and none of the
        // configs' hundred locks each.
        let [mutex, read, write, once, atomics, futex] = per_handshake("client");
        assert_eq!(
            [mutex, read, write, once, futex],
            [CLIENT_MUTEX_LOCKS as f64, 0.0, (CLIENT_RWLOCK_WRITES + 1) as f64, 0.0, 0.0],
            "{process} client"
        );
        // Its own additions, and at least one in each glibc mutex lock: the runner has started a
        // thread, so glibc does not skip them as it does in a single-threaded process.
        assert!(atomics >= (CLIENT_ATOMIC_ADDS + CLIENT_MUTEX_LOCKS) as f64, "{process} client: {atomics} atomics");
        let [mutex, read, write, once, atomics, futex] = per_handshake("server");
        assert_eq!(
            [mutex, read, write, once, futex],
            [1.0, SERVER_RWLOCK_READS as f64, 0.0, SERVER_ONCE_CHECKS as f64, SERVER_BARRIER_WAITS as f64],
            "{process} server"
        );
        assert!(atomics >= SERVER_RWLOCK_READS as f64, "{process} server: {atomics} atomics");
        // A transfer: the server's writes, 64 of 16 KiB in a sample, per MB.
        let per_mb = SEND_MUTEX_LOCKS as f64 * 64.0 / 1.048576;
        assert!((added(TRANSFER, "server", "mutex_locks") - per_mb).abs() < 1e-6, "{process}");
        assert_eq!(added(TRANSFER, "client", "mutex_locks"), 0.0, "{process}");
        for cells in [&wrapped, &base] {
            let cell = cells.iter().find(|c| c["metric"] == "mutex_locks").unwrap();
            assert_eq!((cell["unit"].as_str(), cell["better"].as_str()), (Some("locks"), Some("lower")), "{cell}");
        }
    }
}
