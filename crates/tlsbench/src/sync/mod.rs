//! The sync measure: how a side's library calls synchronise with other threads, counted by
//! callgrind in a process of its own as the instructions measure counts instructions
//! (instructions.rs: how a runner is run under callgrind; the runner starts a thread first, so
//! that glibc takes its multi-threaded paths). From callgrind's file:
//!
//! - lock and once calls, by kind: the runs of each lock function's first instruction (callgrind
//!   counts calls whether it collects or not, so its call counts hold the setup and the peer's
//!   calls too), and the fast paths of Rust's std locks, which are inlined (inlined.rs);
//! - atomic read-modify-write instructions: callgrind's `Ge` event (`--collect-bus=yes`),
//!   outside the allocator, whose own vary with the heap's state from run to run;
//! - futex system calls: the runs of the system call instructions of glibc's lock functions,
//!   which make no other system call (callgrind's `sysCount`, `--collect-systime=yes`, says which
//!   instructions are system calls, but counts them whether it collects or not), and Rust's std
//!   futex calls, which go through glibc's `syscall()` (its entries from std's futex code).
//!
//! docs/measures.md#sync says what is counted and what is not.

mod inlined;

use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use tlsbench_harness::protocol::{Metric, MetricValue};
use tlsbench_harness::{Kind, Side};

use crate::callgrind_file::{CallGraph, Function};

/// What the sync measure and `tlsbench profile` add to callgrind's options: the `Ge` event,
/// system calls (`sysCount`, `sysTime`), counts by instruction (a function's entries, a system
/// call's runs), and `syscall()`'s callers kept apart (Rust's std futex calls).
pub const CALLGRIND_OPTIONS: [&str; 4] =
    ["--collect-bus=yes", "--collect-systime=yes", "--dump-instr=yes", "--separate-callers1=syscall"];

/// A kind of lock, or a once check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lock {
    Mutex,
    RwlockRead,
    RwlockWrite,
    Once,
}

impl Lock {
    pub const ALL: [Lock; 4] = [Lock::Mutex, Lock::RwlockRead, Lock::RwlockWrite, Lock::Once];

    pub fn metric(self) -> Metric {
        match self {
            Lock::Mutex => Metric::MutexLocks,
            Lock::RwlockRead => Metric::RwlockReadLocks,
            Lock::RwlockWrite => Metric::RwlockWriteLocks,
            Lock::Once => Metric::OnceChecks,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Lock::Mutex => "mutex",
            Lock::RwlockRead => "rwlock read",
            Lock::RwlockWrite => "rwlock write",
            Lock::Once => "once",
        }
    }
}

/// The lock functions counted, by their names without glibc's version or leading underscores:
/// glibc's (in libc.so from 2.34 on, libpthread.so before). C11's mtx_lock and call_once, and
/// C++'s std::mutex, call these, so they are not counted again. Unlocks are not counted.
const LOCK_FUNCTIONS: [(&str, Lock); 15] = [
    ("pthread_mutex_lock", Lock::Mutex),
    ("pthread_mutex_trylock", Lock::Mutex),
    ("pthread_mutex_timedlock", Lock::Mutex),
    ("pthread_mutex_clocklock", Lock::Mutex),
    ("pthread_spin_lock", Lock::Mutex),
    ("pthread_spin_trylock", Lock::Mutex),
    ("pthread_rwlock_rdlock", Lock::RwlockRead),
    ("pthread_rwlock_tryrdlock", Lock::RwlockRead),
    ("pthread_rwlock_timedrdlock", Lock::RwlockRead),
    ("pthread_rwlock_clockrdlock", Lock::RwlockRead),
    ("pthread_rwlock_wrlock", Lock::RwlockWrite),
    ("pthread_rwlock_trywrlock", Lock::RwlockWrite),
    ("pthread_rwlock_timedwrlock", Lock::RwlockWrite),
    ("pthread_rwlock_clockwrlock", Lock::RwlockWrite),
    ("pthread_once", Lock::Once),
];

/// callgrind's options that give each lock function a context per chain of `depth` callers
/// (`tlsbench profile`'s), so that each chain's locks are counted apart.
pub fn separate_callers(depth: usize) -> Vec<String> {
    ["pthread_mutex_*", "pthread_spin_*", "pthread_rwlock_*", "pthread_once*"]
        .iter()
        .map(|pattern| format!("--separate-callers{depth}={pattern}"))
        .collect()
}

/// A function's name without glibc's symbol version (`@@GLIBC_2.34`), leading underscores
/// (glibc's internal aliases) and the callgrind context of a lock function or `syscall`.
pub fn base_name(name: &str) -> &str {
    let name = without_context(name);
    name.split('@').next().unwrap_or(name).trim_start_matches('_')
}

/// A function's name without the callgrind context (`'caller'caller...`) that the sync
/// measure's and the profile's `--separate-callers` give glibc's lock functions and `syscall`;
/// other names are whole (a Rust name may hold a `'`).
pub fn without_context(name: &str) -> &str {
    let Some((function, _callers)) = name.split_once('\'') else { return name };
    let base = function.split('@').next().unwrap_or(function).trim_start_matches('_');
    match base.starts_with("pthread_") || base == "syscall" {
        true => function,
        false => name,
    }
}

/// The kind of lock `function` takes, if it is one of [`LOCK_FUNCTIONS`].
pub fn lock_function(function: &Function) -> Option<Lock> {
    let name = base_name(&function.name);
    LOCK_FUNCTIONS.iter().find(|(f, _)| *f == name).map(|&(_, lock)| lock)
}

/// Whether every system call `function` makes is a futex: glibc's lock, once, condition
/// variable, barrier and semaphore functions and its futex helpers.
fn makes_futex_calls(function: &Function) -> bool {
    const PREFIXES: [&str; 9] = [
        "pthread_mutex_",
        "pthread_rwlock_",
        "pthread_once",
        "pthread_cond_",
        "pthread_barrier_",
        "pthread_spin_",
        "sem_",
        "lll_",
        "futex_",
    ];
    let object = function.object.rsplit('/').next().unwrap_or_default();
    let glibc = object.starts_with("libc.so") || object.starts_with("libpthread.so");
    glibc && PREFIXES.iter().any(|p| base_name(&function.name).starts_with(p))
}

/// Rust's std makes its futex calls through glibc's `syscall()`, from the contended paths of
/// its futex-based locks (`std::sys::sync::mutex::futex::Mutex::lock_contended`, ...): the
/// function `syscall` in the context of such a caller (`--separate-callers1=syscall`).
fn is_std_futex_call(function: &Function) -> bool {
    let mut context = function.name.split('\'');
    context.next().is_some_and(|name| base_name(name) == "syscall")
        && context.next().is_some_and(|c| c.contains("::futex::"))
}

/// What one side's library calls did over a sample's measured iterations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Lock calls and once checks, by [`Lock::ALL`]'s order.
    pub locks: [u64; 4],
    pub atomic_rmw: u64,
    pub futex_calls: u64,
}

/// One place in the code that takes locks, for `tlsbench profile`: a lock function in one chain
/// of callers, or an inlined Rust std lock in one function.
#[derive(Clone, Debug, PartialEq)]
pub struct Taker {
    pub lock: Lock,
    /// Locks taken there while callgrind collected.
    pub count: u64,
    /// Its callers, nearest first: the lock function's callers as far as callgrind separated
    /// them, or the functions an inlined lock is in.
    pub callers: Vec<String>,
}

/// The columns of the events the sync measure reads, or what is missing.
struct Events {
    ge: usize,
    sys_count: usize,
}

impl Events {
    fn of(graph: &CallGraph) -> Result<Events> {
        let missing = |event: &str, option: &str| {
            anyhow!("callgrind's file does not count {event}: the sync measure runs callgrind with {option}")
        };
        Ok(Events {
            ge: graph.event("Ge").ok_or_else(|| missing("Ge", "--collect-bus=yes"))?,
            sys_count: graph.event("sysCount").ok_or_else(|| missing("sysCount", "--collect-systime=yes"))?,
        })
    }
}

impl Counts {
    /// The counts of a callgrind file written with [`CALLGRIND_OPTIONS`].
    pub fn of(graph: &CallGraph) -> Result<Counts> {
        let events = Events::of(graph)?;
        if graph.instructions.is_empty() && graph.total() > 0 {
            return Err(anyhow!(
                "callgrind's file has no counts by instruction: the sync measure runs it with --dump-instr=yes"
            ));
        }
        let mut counts = Counts::default();
        for taker in takers(graph)? {
            counts.locks[Lock::ALL.iter().position(|&l| l == taker.lock).expect("a kind of ALL")] += taker.count;
        }
        let exclusive = |f: &Function, event: usize| f.exclusive_events.get(event).copied().unwrap_or(0);
        counts.atomic_rmw = graph.functions.iter().filter(|f| !f.is_allocator()).map(|f| exclusive(f, events.ge)).sum();
        // A system call instruction has a sysCount, collected or not; its Ir is its runs while
        // collecting.
        let in_glibc: u64 = graph
            .instructions
            .iter()
            .filter(|(&(f, _), costs)| {
                costs.get(events.sys_count).is_some_and(|&n| n > 0) && makes_futex_calls(&graph.functions[f])
            })
            .map(|(&(f, address), _)| graph.executed(f, address))
            .sum();
        let from_std: u64 = (0..graph.functions.len())
            .filter(|&f| is_std_futex_call(&graph.functions[f]))
            .map(|f| graph.entries(f).unwrap_or(0))
            .sum();
        counts.futex_calls = in_glibc + from_std;
        Ok(counts)
    }

    /// The side's metrics, per handshake or per megabyte of a transfer, over `iterations`.
    pub fn values(&self, side: Side, kind: Kind, iterations: u64) -> Vec<MetricValue> {
        let units = crate::instructions::units(kind, iterations);
        let value = |metric, count: u64| MetricValue { side, metric, value: count as f64 / units, seconds: 0.0 };
        let mut values: Vec<MetricValue> =
            Lock::ALL.iter().zip(self.locks).map(|(l, n)| value(l.metric(), n)).collect();
        values.push(value(Metric::AtomicRmw, self.atomic_rmw));
        values.push(value(Metric::FutexCalls, self.futex_calls));
        values
    }
}

/// Every place that took locks while callgrind collected: each lock function (in each of its
/// callgrind contexts) and each inlined Rust std lock, with what it took.
pub fn takers(graph: &CallGraph) -> Result<Vec<Taker>> {
    let events = Events::of(graph)?;
    let mut takers = Vec::new();
    for (index, function) in graph.functions.iter().enumerate() {
        let Some(lock) = lock_function(function) else { continue };
        let count = graph.entries(index).unwrap_or(0);
        if count > 0 {
            let callers = function.name.split('\'').skip(1).map(String::from).collect();
            takers.push(Taker { lock, count, callers });
        }
    }
    takers.extend(inlined::std_locks(graph, events.ge)?);
    Ok(takers)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side whose library called pthread_rwlock_rdlock 3 times and pthread_once twice while
    /// collecting (and more while not), whose allocator took 5 atomics, whose rwlock took 3 and
    /// whose library 4, and whose futex calls were 1 in glibc and 2 from Rust's std; the
    /// library's own getrandom is a system call but not a futex. sysCount counts system calls
    /// collected or not (here 9 and 7); their Ir, only while collecting.
    const SIDE: &str = "\
positions: instr line
events: Ir Ge sysCount
ob=(1) /bin/runner
fl=(1) lib.c
fn=(1) lib_call
0x100 1 50 4 1
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfi=(2) pthread_rwlock_rdlock.c
cfn=(2) pthread_rwlock_rdlock@@GLIBC_2.34'CRYPTO_THREAD_read_lock'ossl_method_store_fetch
calls=40 0x8e7b0 10
* * 30 3
* * 6
cob=(2)
cfi=(3) pthread_once.c
cfn=(3) __pthread_once
calls=9 0x8e120 20
* * 10
* * 4
cob=(2)
cfi=(4) malloc.c
cfn=(4) malloc_consolidate
calls=1 0x95000 30
* * 10 5
* * 2
fn=(5) std::sys::sync::mutex::futex::Mutex::lock_contended
0x300 1 2
cob=(2)
cfi=(5) syscall.S
cfn=(6) syscall'std::sys::sync::mutex::futex::Mutex::lock_contended
calls=7 0x101810 1
* * 4 0 7
ob=(2)
fl=(2)
fn=(2)
0x8e7b0 10 3
+3 * 27 3
fl=(3)
fn=(3)
0x8e120 20 2
+2 * 8
fl=(4)
fn=(4)
0x95000 30 10 5
fn=(7) __lll_lock_wait_private
0x96000 40 2
+2 * 1 0 9
fn=(6)
0x101810 1 2
+4 * 2 0 7
";

    #[test]
    fn counts_each_lock_function_s_collected_entries_and_leaves_the_allocator_s_atomics_out() {
        let graph = CallGraph::parse(SIDE).unwrap();
        let counts = Counts::of(&graph).unwrap();
        assert_eq!(counts, Counts { locks: [0, 3, 0, 2], atomic_rmw: 7, futex_calls: 3 });
        let values = counts.values(Side::Server, Kind::HandshakeFull, 2);
        let of = |metric| values.iter().find(|v| v.metric == metric).unwrap().value;
        assert_eq!((of(Metric::RwlockReadLocks), of(Metric::OnceChecks), of(Metric::AtomicRmw)), (1.5, 1.0, 3.5));
        assert_eq!(values.len(), 6);
        // 64 writes of 16 KiB are 1.048576 MB.
        let per_mb = counts.values(Side::Client, Kind::Transfer, 64);
        assert!((per_mb[1].value - 3.0 / 1.048576).abs() < 1e-9, "{per_mb:?}");
    }

    #[test]
    fn a_lock_function_s_context_names_its_callers() {
        let takers = takers(&CallGraph::parse(SIDE).unwrap()).unwrap();
        let rdlock = takers.iter().find(|t| t.lock == Lock::RwlockRead).unwrap();
        assert_eq!(
            (rdlock.count, rdlock.callers.as_slice()),
            (3, ["CRYPTO_THREAD_read_lock", "ossl_method_store_fetch"].map(String::from).as_slice())
        );
    }

    #[test]
    fn names_lose_their_context_version_and_internal_underscores() {
        assert_eq!(base_name("pthread_rwlock_rdlock@@GLIBC_2.34'CRYPTO_THREAD_read_lock'f"), "pthread_rwlock_rdlock");
        assert_eq!(base_name("___pthread_mutex_lock"), "pthread_mutex_lock");
        assert_eq!(without_context("syscall'std::sys::sync::mutex::futex::Mutex::wake"), "syscall");
        // Only the lock functions and syscall have contexts; another name keeps its quote.
        assert_eq!(without_context("<&'a str as core::fmt::Display>::fmt"), "<&'a str as core::fmt::Display>::fmt");
        let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
        assert_eq!(lock_function(&Function::named("__pthread_once", libc, "???")), Some(Lock::Once));
        assert_eq!(lock_function(&Function::named("pthread_mutex_unlock", libc, "???")), None);
        assert_eq!(lock_function(&Function::named("pthread_mutex_lock_full", libc, "???")), None);
    }

    #[test]
    fn a_file_without_the_events_says_which_option_is_missing() {
        let error = Counts::of(&CallGraph::parse("positions: line\nevents: Ir\n").unwrap()).unwrap_err();
        assert!(error.to_string().contains("--collect-bus=yes"), "{error}");
        let error =
            Counts::of(&CallGraph::parse("positions: line\nevents: Ir Ge sysCount\nfn=f\n1 5\n").unwrap()).unwrap_err();
        assert!(error.to_string().contains("--dump-instr=yes"), "{error}");
    }
}
