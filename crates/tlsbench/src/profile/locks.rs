//! Where a side's locks and atomics are: the functions that take the locks, found above the
//! lock functions and their wrappers in the chains of callers callgrind kept apart
//! (`--separate-callers`), and the functions that execute the atomic instructions.

use std::collections::HashMap;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::callgrind_file::CallGraph;
use crate::sync::{self, Counts, Lock};

/// How many callers callgrind keeps apart above each lock function: enough to pass OpenSSL's
/// wrapper (CRYPTO_THREAD_read_lock) and the static functions of a stripped library, which
/// are named by their address.
pub const CALLER_DEPTH: usize = 6;

/// A profile's sync counts and the functions behind them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyncProfile {
    /// The side's counts over the profile's iterations, as the sync measure counts them.
    pub mutex_locks: u64,
    pub rwlock_read_locks: u64,
    pub rwlock_write_locks: u64,
    pub once_checks: u64,
    pub atomic_rmw: u64,
    pub futex_calls: u64,
    /// The functions that take the most locks, most first.
    pub takers: Vec<TakerRow>,
    /// The functions that execute the most atomic read-modify-write instructions themselves
    /// (outside the allocator), most first.
    pub atomics: Vec<AtomicRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TakerRow {
    /// The first caller above the lock function and its wrappers that has a name (or, when none
    /// of the callers callgrind kept has one, the first above the wrappers).
    pub function: String,
    pub lock: Lock,
    /// Locks (or once checks) taken through it over the profile's iterations.
    pub count: u64,
    /// The frames between it and the lock function, nearest the lock first, of the chain that
    /// took the most (`CRYPTO_THREAD_read_lock`, a static function's address, ...).
    pub via: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AtomicRow {
    pub function: String,
    /// The ELF object's file name.
    pub object: String,
    pub count: u64,
}

impl SyncProfile {
    /// From callgrind's file of a profile run with [`sync::CALLGRIND_OPTIONS`] and
    /// [`sync::separate_callers`] at [`CALLER_DEPTH`]: `top` rows per table.
    pub fn of(graph: &CallGraph, top: usize) -> Result<SyncProfile> {
        let counts = Counts::of(graph)?;
        let mut by_taker: HashMap<(String, Lock), (u64, u64, Vec<String>)> = HashMap::new();
        for taker in sync::takers(graph)? {
            let (function, via) = taker_of(&taker.callers);
            let entry = by_taker.entry((function, taker.lock)).or_default();
            entry.0 += taker.count;
            // The path of the chain that took the most, for the table.
            if taker.count > entry.1 {
                (entry.1, entry.2) = (taker.count, via);
            }
        }
        let mut takers: Vec<TakerRow> = by_taker
            .into_iter()
            .map(|((function, lock), (count, _, via))| TakerRow { function, lock, count, via })
            .collect();
        takers.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| (&a.function, a.lock).cmp(&(&b.function, b.lock))));
        takers.truncate(top);
        let merged = graph.merge_contexts(sync::without_context);
        let ge = merged.event("Ge").expect("Counts::of checked it");
        let mut atomics: Vec<AtomicRow> = merged
            .functions
            .iter()
            .filter(|f| !f.is_allocator())
            .map(|f| AtomicRow {
                function: f.name.clone(),
                object: f.object.rsplit('/').next().unwrap_or_default().to_string(),
                count: f.exclusive_events.get(ge).copied().unwrap_or(0),
            })
            .filter(|row| row.count > 0)
            .collect();
        atomics.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.function.cmp(&b.function)));
        atomics.truncate(top);
        let [mutex_locks, rwlock_read_locks, rwlock_write_locks, once_checks] = counts.locks;
        Ok(SyncProfile {
            mutex_locks,
            rwlock_read_locks,
            rwlock_write_locks,
            once_checks,
            atomic_rmw: counts.atomic_rmw,
            futex_calls: counts.futex_calls,
            takers,
            atomics,
        })
    }

    /// The locks of each kind, by [`Lock::ALL`]'s order.
    pub fn locks(&self) -> [(Lock, u64); 4] {
        [
            (Lock::Mutex, self.mutex_locks),
            (Lock::RwlockRead, self.rwlock_read_locks),
            (Lock::RwlockWrite, self.rwlock_write_locks),
            (Lock::Once, self.once_checks),
        ]
    }
}

/// The function that takes a lock, from its callers (nearest first), and the frames between:
/// the first with a name above the lock wrappers, as a maintainer looks for it.
fn taker_of(callers: &[String]) -> (String, Vec<String>) {
    let above = callers.iter().position(|c| !is_lock_wrapper(c)).unwrap_or(callers.len().saturating_sub(1));
    let named = callers[above..].iter().position(|c| !c.starts_with("0x")).map(|at| above + at);
    match (named, callers.get(above)) {
        (Some(at), _) => (callers[at].clone(), callers[..at].to_vec()),
        (None, Some(first)) => (first.clone(), callers[..above].to_vec()),
        (None, None) => ("(no caller kept)".to_string(), Vec::new()),
    }
}

/// A function whose name says it locks (`CRYPTO_THREAD_read_lock`, `CRYPTO_once`,
/// `CRYPTO_MUTEX_lock_read`, `gnutls_static_mutex_lock`): a library's wrapper of the lock
/// functions, passed to find who takes the lock.
fn is_lock_wrapper(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["lock", "once", "mutex"].iter().any(|w| name.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn callers(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_taker_is_the_first_named_caller_above_the_wrappers() {
        let chain = callers(&["CRYPTO_THREAD_read_lock", "0x000000000022edb0", "RAND_get0_public", "RAND_bytes_ex"]);
        assert_eq!(
            taker_of(&chain),
            ("RAND_get0_public".to_string(), callers(&["CRYPTO_THREAD_read_lock", "0x000000000022edb0"]))
        );
        let unnamed = callers(&["CRYPTO_THREAD_read_lock", "0x22edb0", "0x20bc60"]);
        assert_eq!(taker_of(&unnamed), ("0x22edb0".to_string(), callers(&["CRYPTO_THREAD_read_lock"])));
        assert_eq!(
            taker_of(&callers(&["rustls::ticketer::TicketRotator::encrypt"])).0,
            "rustls::ticketer::TicketRotator::encrypt"
        );
        assert_eq!(
            taker_of(&callers(&["bssl::CRYPTO_once(int*, void (*)())"])).0,
            "bssl::CRYPTO_once(int*, void (*)())"
        );
        assert_eq!(taker_of(&[]).0, "(no caller kept)");
    }
}
