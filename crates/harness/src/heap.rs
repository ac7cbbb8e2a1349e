//! Heap accounting for the `heap` measure: every allocation in the process, the C libraries'
//! included, tagged with the side whose library call made it.
//!
//! A runner binary routes malloc, calloc, realloc, free and the aligned allocators through
//! [`interpose_malloc!`](crate::interpose_malloc), which forwards each call to the allocator
//! chosen for the process ([`crate::allocator`]: glibc's own by default, jemalloc or mimalloc)
//! and reports it here. Shared libraries (libssl, libgnutls, AWS-LC inside
//! s2n-tls and rustls) bind `malloc` to the executable's definition, so their allocations are
//! seen as well as Rust's. Until [`enable`] is called nothing is recorded and each call costs one
//! untaken branch, so the time measure pays nothing for it.
//!
//! While enabled, each live block is kept in a table (pointer -> size and side), which lives in
//! its own anonymous mapping: it is never itself counted as heap. Runners are single-threaded;
//! a lock still guards the table against any thread a library starts.

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};

use crate::Side;

/// Set by the interposed allocator on its first call: this binary's allocations can be seen.
static INTERPOSED: AtomicBool = AtomicBool::new(false);
static ENABLED: AtomicBool = AtomicBool::new(false);
thread_local! {
    /// The side whose library is running on this thread: 0 for neither (the harness itself), 1
    /// client, 2 server. Per thread, so that the pairs of `sample --threads` never share a
    /// written cache line (nor, were heap taken with threads, each other's tags). A `const`
    /// initialiser and a type without drop: no lazy initialisation and no destructor to
    /// register, so reading it from inside malloc allocates nothing.
    static TAG: Cell<u8> = const { Cell::new(0) };
}
/// Blocks the table had no room for (the counts are then wrong, and the sample fails).
static LOST: AtomicU64 = AtomicU64::new(0);

/// What one side has allocated and holds, since accounting was enabled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Bytes requested by blocks still live.
    pub held: u64,
    /// The most `held` was since the last [`reset_peak`].
    pub peak: u64,
    pub allocations: u64,
    pub frees: u64,
}

struct Counters {
    held: AtomicU64,
    peak: AtomicU64,
    allocations: AtomicU64,
    frees: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const, reason = "only copied into COUNTERS' slots, each its own")]
const ZERO: Counters = Counters {
    held: AtomicU64::new(0),
    peak: AtomicU64::new(0),
    allocations: AtomicU64::new(0),
    frees: AtomicU64::new(0),
};
static COUNTERS: [Counters; 3] = [ZERO, ZERO, ZERO];

fn tag_of(side: Option<Side>) -> u8 {
    match side {
        None => 0,
        Some(Side::Client) => 1,
        Some(Side::Server) => 2,
    }
}

/// Starts recording. Fails in a binary whose allocator is not interposed: its numbers would be
/// zero rather than wrong, but a zero is not a measurement.
pub fn enable() -> Result<(), String> {
    if !INTERPOSED.load(Relaxed) {
        return Err(
            "this binary does not interpose malloc (tlsbench_harness::interpose_malloc!), so it cannot see the heap"
                .into(),
        );
    }
    TABLE.map()?;
    ENABLED.store(true, Relaxed);
    Ok(())
}

/// Whether this process records its heap: each block's entry then touches a page of the table,
/// which a reading of resident memory would count.
pub fn enabled() -> bool {
    ENABLED.load(Relaxed)
}

/// The allocations `side` makes inside `call` are its own; frees are charged to whoever
/// allocated the block.
#[inline]
pub fn tagged<T>(side: Side, call: impl FnOnce() -> T) -> T {
    let previous = TAG.replace(tag_of(Some(side)));
    let out = call();
    TAG.set(previous);
    out
}

/// `call`'s allocations belong to neither side: the harness's own buffers (the transport's
/// pipes grow inside a library's write call).
#[inline(always)]
pub fn untagged<T>(call: impl FnOnce() -> T) -> T {
    if !ENABLED.load(Relaxed) {
        return call();
    }
    let previous = TAG.replace(0);
    let out = call();
    TAG.set(previous);
    out
}

pub fn usage(side: Side) -> Usage {
    counters_usage(&COUNTERS[tag_of(Some(side)) as usize])
}

fn counters_usage(c: &Counters) -> Usage {
    Usage {
        held: c.held.load(Relaxed),
        peak: c.peak.load(Relaxed),
        allocations: c.allocations.load(Relaxed),
        frees: c.frees.load(Relaxed),
    }
}

/// Starts a new peak from what `side` holds now.
pub fn reset_peak(side: Side) {
    let c = &COUNTERS[tag_of(Some(side)) as usize];
    c.peak.store(c.held.load(Relaxed), Relaxed);
}

/// What the harness itself (no side: the transport's pipes, the drivers' vectors) has
/// allocated and holds since accounting was enabled. Not a figure tlsbench reports: a
/// whole-process count such as valgrind's DHAT sees these blocks too, and a test subtracts them.
pub fn harness_usage() -> Usage {
    counters_usage(&COUNTERS[tag_of(None) as usize])
}

/// Starts a new peak of the harness's own blocks from what it holds now.
pub fn reset_harness_peak() {
    let c = &COUNTERS[tag_of(None) as usize];
    c.peak.store(c.held.load(Relaxed), Relaxed);
}

/// Blocks that could not be recorded; nonzero means the counts are incomplete.
pub fn lost() -> u64 {
    LOST.load(Relaxed)
}

// The hooks the interposed allocator calls. They must not allocate, and must not panic.

#[doc(hidden)]
#[inline(always)]
pub fn allocated(ptr: *mut u8, size: usize) {
    if !INTERPOSED.load(Relaxed) {
        INTERPOSED.store(true, Relaxed);
    }
    if ENABLED.load(Relaxed) && !ptr.is_null() {
        record_allocation(ptr as usize, size as u64);
    }
}

#[doc(hidden)]
#[inline(always)]
pub fn freed(ptr: *mut u8) {
    if ENABLED.load(Relaxed) && !ptr.is_null() {
        record_free(ptr as usize);
    }
}

#[cold]
fn record_allocation(ptr: usize, size: u64) {
    let tag = TAG.get();
    if !TABLE.insert(ptr, size, tag) {
        LOST.fetch_add(1, Relaxed);
        return;
    }
    let c = &COUNTERS[(tag as usize).min(2)];
    let held = c.held.load(Relaxed) + size;
    c.held.store(held, Relaxed);
    if held > c.peak.load(Relaxed) {
        c.peak.store(held, Relaxed);
    }
    c.allocations.fetch_add(1, Relaxed);
}

#[cold]
fn record_free(ptr: usize) {
    // A block from before accounting began is not in the table, and not counted.
    if let Some((size, tag)) = TABLE.remove(ptr) {
        let c = &COUNTERS[(tag as usize).min(2)];
        c.held.store(c.held.load(Relaxed).saturating_sub(size), Relaxed);
        c.frees.fetch_add(1, Relaxed);
    }
}

/// Live blocks: open addressing with linear probing over a power-of-two number of slots, in an
/// anonymous mapping whose pages the kernel provides as they are first touched.
struct Table {
    slots: UnsafeCell<*mut Slot>,
    lock: AtomicBool,
}

#[derive(Clone, Copy)]
struct Slot {
    /// 0: empty.
    ptr: usize,
    /// Size << 2 | tag.
    meta: u64,
}

/// 2^24 slots (256 MiB of address space): 10,000 connections of a heavy stack hold well under
/// a tenth of that, so probes stay short.
const SLOT_BITS: u32 = 24;
const SLOTS: usize = 1 << SLOT_BITS;

// SAFETY: every access to the slots happens under `lock`.
unsafe impl Sync for Table {}

static TABLE: Table = Table { slots: UnsafeCell::new(std::ptr::null_mut()), lock: AtomicBool::new(false) };

impl Table {
    fn map(&self) -> Result<(), String> {
        self.locked(|slots| {
            if !slots.is_null() {
                return Ok(());
            }
            let bytes = SLOTS * std::mem::size_of::<Slot>();
            // SAFETY: a fresh private anonymous mapping; zeroed pages are empty slots.
            let mapped = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    bytes,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if mapped == libc::MAP_FAILED {
                return Err(format!("mapping the heap table: {}", std::io::Error::last_os_error()));
            }
            *slots = mapped.cast();
            Ok(())
        })
    }

    fn locked<T>(&self, f: impl FnOnce(&mut *mut Slot) -> T) -> T {
        while self.lock.compare_exchange_weak(false, true, Acquire, Relaxed).is_err() {
            std::hint::spin_loop();
        }
        // SAFETY: the lock is held.
        let out = f(unsafe { &mut *self.slots.get() });
        self.lock.store(false, Release);
        out
    }

    fn home(ptr: usize) -> usize {
        ((ptr as u64 >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SLOT_BITS)) as usize
    }

    /// False when the table is full.
    fn insert(&self, ptr: usize, size: u64, tag: u8) -> bool {
        self.locked(|slots| {
            let slots = *slots;
            let mut i = Self::home(ptr);
            for _ in 0..SLOTS {
                // SAFETY: i < SLOTS, inside the mapping.
                let slot = unsafe { &mut *slots.add(i) };
                if slot.ptr == 0 || slot.ptr == ptr {
                    *slot = Slot { ptr, meta: size << 2 | tag as u64 };
                    return true;
                }
                i = (i + 1) & (SLOTS - 1);
            }
            false
        })
    }

    /// The block's size and tag, if it was recorded. Removal shifts later entries of the probe
    /// run back, so lookups never need tombstones.
    fn remove(&self, ptr: usize) -> Option<(u64, u8)> {
        self.locked(|slots| {
            let slots = *slots;
            let at = |i: usize| unsafe { &mut *slots.add(i & (SLOTS - 1)) };
            let mut i = Self::home(ptr);
            loop {
                let slot = at(i);
                if slot.ptr == 0 {
                    return None;
                }
                if slot.ptr == ptr {
                    break;
                }
                i = (i + 1) & (SLOTS - 1);
            }
            let found = *at(i);
            // Backward-shift deletion: move up any entry whose home is not in (hole, j].
            let mut hole = i;
            let mut j = i;
            loop {
                j = (j + 1) & (SLOTS - 1);
                let next = *at(j);
                if next.ptr == 0 {
                    break;
                }
                let home = Self::home(next.ptr);
                let between = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
                if !between {
                    *at(hole) = next;
                    hole = j;
                }
            }
            *at(hole) = Slot { ptr: 0, meta: 0 };
            Some((found.meta >> 2, (found.meta & 3) as u8))
        })
    }
}

/// Defines malloc, calloc, realloc, free, the aligned allocators and malloc_usable_size in the
/// binary that invokes it, forwarding each call to the allocator `TLSBENCH_ALLOCATOR` chose
/// ([`crate::allocator`]: glibc's by default, jemalloc or mimalloc) and reporting each block to
/// [`crate::heap`]. Invoke it once, at the top level of a runner's (or a test's) crate.
#[macro_export]
macro_rules! interpose_malloc {
    () => {
        #[allow(clippy::missing_safety_doc)]
        mod tlsbench_interposed_malloc {
            use std::ffi::{c_int, c_void};

            use $crate::allocator as forward;
            use $crate::heap::{allocated, freed};

            #[no_mangle]
            pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
                let ptr = unsafe { forward::malloc(size) };
                allocated(ptr.cast(), size);
                ptr
            }

            #[no_mangle]
            pub unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
                let ptr = unsafe { forward::calloc(count, size) };
                allocated(ptr.cast(), count.wrapping_mul(size));
                ptr
            }

            #[no_mangle]
            pub unsafe extern "C" fn realloc(old: *mut c_void, size: usize) -> *mut c_void {
                let ptr = unsafe { forward::realloc(old, size) };
                // On failure the old block stays; realloc(p, 0) frees it (glibc returns null).
                if !ptr.is_null() || (size == 0 && !old.is_null()) {
                    freed(old.cast());
                    allocated(ptr.cast(), size);
                }
                ptr
            }

            #[no_mangle]
            pub unsafe extern "C" fn free(ptr: *mut c_void) {
                freed(ptr.cast());
                unsafe { forward::free(ptr) }
            }

            #[no_mangle]
            pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
                let ptr = unsafe { forward::memalign(align, size) };
                allocated(ptr.cast(), size);
                ptr
            }

            #[no_mangle]
            pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
                unsafe { memalign(align, size) }
            }

            #[no_mangle]
            pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
                if !align.is_power_of_two() || align % std::mem::size_of::<*mut c_void>() != 0 {
                    return forward::EINVAL;
                }
                let ptr = unsafe { memalign(align, size) };
                if ptr.is_null() {
                    return forward::ENOMEM;
                }
                unsafe { *out = ptr };
                0
            }

            #[no_mangle]
            pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
                let ptr = unsafe { forward::valloc(size) };
                allocated(ptr.cast(), size);
                ptr
            }

            #[no_mangle]
            pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
                let ptr = unsafe { forward::pvalloc(size) };
                allocated(ptr.cast(), size);
                ptr
            }

            #[no_mangle]
            pub unsafe extern "C" fn malloc_usable_size(ptr: *mut c_void) -> usize {
                unsafe { forward::malloc_usable_size(ptr) }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_finds_every_live_block_after_removals_inside_probe_runs() {
        TABLE.map().unwrap();
        // Pointers far above any real heap, many sharing home slots (the hash ignores the low 4
        // bits), so that removals shift entries back across runs.
        let ptrs: Vec<usize> = (0..5000).map(|i| 0x7f00_0000_0000 + (i / 3) * 16 + (i % 3)).collect();
        for (i, &p) in ptrs.iter().enumerate() {
            assert!(TABLE.insert(p, i as u64 * 8, (i % 3) as u8));
        }
        for (i, &p) in ptrs.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
            assert_eq!(TABLE.remove(p), Some((i as u64 * 8, (i % 3) as u8)));
        }
        for (i, &p) in ptrs.iter().enumerate() {
            let expected = (i % 2 == 1).then_some((i as u64 * 8, (i % 3) as u8));
            assert_eq!(TABLE.remove(p), expected, "block {i}");
        }
    }
}
