//! The allocator behind the interposed malloc ([`interpose_malloc!`](crate::interpose_malloc)):
//! glibc's own, jemalloc or mimalloc, chosen per process by `TLSBENCH_ALLOCATOR`.
//!
//! A runner defines malloc, free and the rest for the heap measure. Those definitions forward
//! every call to one allocator, chosen on the very first call (before `main`: the dynamic
//! loader and libc allocate first) from the environment variable [`ENV`], and fixed from then
//! on, so that every block is freed, resized and measured by the allocator that made it. Rust's
//! allocations and the C libraries' (libssl, libgnutls, AWS-LC, BoringSSL) all go through the
//! executable's `malloc`, so they all reach the chosen allocator.
//!
//! jemalloc (tikv-jemalloc-sys) and mimalloc (libmimalloc-sys) are built from source into the
//! binary with prefixed symbols (`_rjem_malloc`, `mi_malloc`): they replace nothing by
//! themselves, and nothing but this module calls them. With glibc (the default, and what an
//! unset or empty variable means) each call costs one compare more than calling
//! `__libc_malloc` directly.
//!
//! glibc's own reallocarray calls `realloc` through the PLT, so it needs no definition here;
//! malloc_usable_size reads the allocator's own headers, so it is forwarded too.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering::Relaxed};

use serde::{Deserialize, Serialize};

/// The environment variable that chooses the allocator of a runner process.
pub const ENV: &str = "TLSBENCH_ALLOCATOR";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Allocator {
    /// glibc's malloc (ptmalloc2), as every runner used before.
    Glibc = 1,
    Jemalloc = 2,
    Mimalloc = 3,
}

impl Allocator {
    pub const ALL: [Allocator; 3] = [Allocator::Glibc, Allocator::Jemalloc, Allocator::Mimalloc];

    pub fn name(self) -> &'static str {
        match self {
            Allocator::Glibc => "glibc",
            Allocator::Jemalloc => "jemalloc",
            Allocator::Mimalloc => "mimalloc",
        }
    }

    fn from_code(code: u8) -> Option<Allocator> {
        Allocator::ALL.into_iter().find(|a| *a as u8 == code)
    }

    /// The version the linked code reports: `gnu_get_libc_version()`, jemalloc's
    /// `mallctl("version")`, `mi_version()`.
    pub fn version(self) -> String {
        // SAFETY: each returns a pointer to a static string, or fills a pointer-sized out value.
        unsafe {
            match self {
                Allocator::Glibc => CStr::from_ptr(gnu_get_libc_version()).to_string_lossy().into_owned(),
                Allocator::Jemalloc => {
                    let mut version: *const c_char = std::ptr::null();
                    let mut len = std::mem::size_of::<*const c_char>();
                    let name = c"version";
                    let rc = tikv_jemalloc_sys::mallctl(
                        name.as_ptr(),
                        (&raw mut version).cast(),
                        &mut len,
                        std::ptr::null_mut(),
                        0,
                    );
                    match rc == 0 && !version.is_null() {
                        true => CStr::from_ptr(version).to_string_lossy().into_owned(),
                        false => "unknown".into(),
                    }
                }
                Allocator::Mimalloc => {
                    // Major, then two digits each of minor and patch: 30302 for 3.3.2.
                    let v = libmimalloc_sys::mi_version();
                    format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
                }
            }
        }
    }

    /// Whether the chosen allocator's own books hold `ptr`, a live block: jemalloc's
    /// `arenas.lookup`, mimalloc's `mi_is_in_heap_region`. For glibc, that neither of the
    /// others holds it. The tests' proof that the allocator is really in use.
    // The address is looked up in the allocators' maps, never dereferenced.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn owns(self, ptr: *const c_void) -> bool {
        match self {
            Allocator::Glibc => !Allocator::Jemalloc.owns(ptr) && !Allocator::Mimalloc.owns(ptr),
            Allocator::Jemalloc => {
                let (mut arena, mut len) = (0u32, std::mem::size_of::<u32>());
                let mut lookup = ptr;
                let name = c"arenas.lookup";
                // SAFETY: arenas.lookup takes a pointer in and writes an unsigned; it checks
                // that the pointer is its own before reading anything of it.
                let rc = unsafe {
                    tikv_jemalloc_sys::mallctl(
                        name.as_ptr(),
                        (&raw mut arena).cast(),
                        &mut len,
                        (&raw mut lookup).cast(),
                        std::mem::size_of::<*const c_void>(),
                    )
                };
                rc == 0
            }
            // SAFETY: a lookup in mimalloc's segment map, for any address.
            Allocator::Mimalloc => unsafe { libmimalloc_sys::mi_is_in_heap_region(ptr) },
        }
    }
}

impl std::fmt::Display for Allocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Allocator {
    type Err = String;
    fn from_str(name: &str) -> Result<Allocator, String> {
        Allocator::ALL.into_iter().find(|a| a.name() == name).ok_or_else(|| {
            format!("unknown allocator `{name}` (valid: {})", Allocator::ALL.map(Allocator::name).join(", "))
        })
    }
}

impl Serialize for Allocator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Allocator {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Allocator, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// What a runner process allocated with, as it reports it: the name and the version its code
/// reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocatorInUse {
    pub name: Allocator,
    pub version: String,
}

impl std::fmt::Display for AllocatorInUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.name, self.version)
    }
}

/// 0 until the first allocation decides; then an [`Allocator`] code. [`UNKNOWN`] when the
/// variable named something else (glibc serves, and the runner refuses to measure).
static CHOSEN: AtomicU8 = AtomicU8::new(0);
const UNKNOWN: u8 = 0x81;
const GLIBC: u8 = Allocator::Glibc as u8;
const JEMALLOC: u8 = Allocator::Jemalloc as u8;
const MIMALLOC: u8 = Allocator::Mimalloc as u8;

/// The allocator this process's interposed malloc forwards to; None in a binary without the
/// interposer (nothing called it), where the allocator is libc's and cannot be switched.
pub fn in_use() -> Option<AllocatorInUse> {
    let name = Allocator::from_code(CHOSEN.load(Relaxed) & 0x7f)?;
    Some(AllocatorInUse { name, version: name.version() })
}

/// Whether this binary's malloc is tlsbench's, which can switch allocators.
pub fn switchable() -> bool {
    CHOSEN.load(Relaxed) != 0
}

/// Fails when `TLSBENCH_ALLOCATOR` asks for what this process does not run: an unknown name, or
/// another allocator than glibc's in a binary without the interposer.
pub fn check_requested() -> Result<(), String> {
    let requested = match std::env::var(ENV) {
        Ok(name) if !name.is_empty() => name,
        _ => return Ok(()),
    };
    let requested: Allocator = requested.parse().map_err(|e| format!("{ENV}: {e}"))?;
    match in_use() {
        Some(used) if used.name == requested => Ok(()),
        Some(used) => Err(format!("{ENV} asks for {requested}, but this process allocates with {}", used.name)),
        None if requested == Allocator::Glibc => Ok(()),
        None => Err(format!(
            "{ENV} asks for {requested}, but this binary does not interpose malloc, so it cannot switch allocator"
        )),
    }
}

#[inline(always)]
fn chosen() -> u8 {
    match CHOSEN.load(Relaxed) {
        0 => choose(),
        code => code,
    }
}

/// Reads the variable once. libc's getenv does not allocate; before libc has set up `environ`
/// (an allocation by the dynamic loader), the process's initial environment is read from
/// /proc/self/environ with plain system calls instead.
#[cold]
fn choose() -> u8 {
    let mut buf = [0u8; 16];
    let value = requested_value(&mut buf);
    let code = match value {
        None | Some(b"") | Some(b"glibc") => GLIBC,
        Some(b"jemalloc") => JEMALLOC,
        Some(b"mimalloc") => MIMALLOC,
        Some(_) => UNKNOWN,
    };
    // A racing first call computes the same from the same environment.
    CHOSEN.store(code, Relaxed);
    code
}

extern "C" {
    static environ: *const *const c_char;
    fn gnu_get_libc_version() -> *const c_char;
}

/// The variable's value (up to `buf`'s length; a longer one is returned cut, which names no
/// allocator), or None when unset.
fn requested_value(buf: &mut [u8; 16]) -> Option<&[u8]> {
    const NAME: &[u8] = b"TLSBENCH_ALLOCATOR=";
    // SAFETY: reading libc's environment pointer; getenv on a NUL-terminated name.
    unsafe {
        if !environ.is_null() {
            let value = libc::getenv(c"TLSBENCH_ALLOCATOR".as_ptr());
            if value.is_null() {
                return None;
            }
            let bytes = CStr::from_ptr(value).to_bytes();
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            return Some(&buf[..n]);
        }
    }
    // /proc/self/environ: NUL-separated NAME=value entries, streamed through a stack buffer.
    // SAFETY: plain system calls on a descriptor this function owns.
    unsafe {
        let fd = libc::open(c"/proc/self/environ".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let mut chunk = [0u8; 512];
        // Position in the current entry, and whether it is still matching NAME.
        let (mut at, mut matching, mut found, mut len) = (0usize, true, false, 0usize);
        'read: loop {
            let n = libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len());
            if n <= 0 {
                break;
            }
            for &byte in &chunk[..n as usize] {
                if byte == 0 {
                    if found {
                        break 'read;
                    }
                    (at, matching) = (0, true);
                    continue;
                }
                if found {
                    if len < buf.len() {
                        buf[len] = byte;
                        len += 1;
                    }
                } else if matching {
                    matching = at < NAME.len() && NAME[at] == byte;
                    at += 1;
                    if matching && at == NAME.len() {
                        found = true;
                    }
                }
            }
        }
        libc::close(fd);
        found.then_some(&buf[..len])
    }
}

// The forwarding functions the interposer's definitions call.

extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(count: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_free(ptr: *mut c_void);
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    fn __libc_valloc(size: usize) -> *mut c_void;
    fn __libc_pvalloc(size: usize) -> *mut c_void;
}

use libmimalloc_sys as mi;
use tikv_jemalloc_sys as je;

#[doc(hidden)]
#[inline(always)]
pub unsafe fn malloc(size: usize) -> *mut c_void {
    // SAFETY: the caller's contract is malloc's.
    unsafe {
        match chosen() {
            JEMALLOC => je::malloc(size),
            MIMALLOC => mi::mi_malloc(size),
            _ => __libc_malloc(size),
        }
    }
}

#[doc(hidden)]
#[inline(always)]
pub unsafe fn calloc(count: usize, size: usize) -> *mut c_void {
    // SAFETY: the caller's contract is calloc's.
    unsafe {
        match chosen() {
            JEMALLOC => je::calloc(count, size),
            MIMALLOC => mi::mi_calloc(count, size),
            _ => __libc_calloc(count, size),
        }
    }
}

#[doc(hidden)]
#[inline(always)]
pub unsafe fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: the caller's contract is realloc's. glibc frees on realloc(p, 0) and returns
    // null; the others return a minimal block, which is as valid.
    unsafe {
        match chosen() {
            JEMALLOC => je::realloc(ptr, size),
            MIMALLOC => mi::mi_realloc(ptr, size),
            _ => __libc_realloc(ptr, size),
        }
    }
}

#[doc(hidden)]
#[inline(always)]
pub unsafe fn free(ptr: *mut c_void) {
    // SAFETY: the caller's contract is free's.
    unsafe {
        match chosen() {
            JEMALLOC => je::free(ptr),
            MIMALLOC => mi::mi_free(ptr),
            _ => __libc_free(ptr),
        }
    }
}

/// memalign, aligned_alloc and posix_memalign: glibc rounds an alignment that is not a power of
/// two up to one, and so does this for the others.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn memalign(align: usize, size: usize) -> *mut c_void {
    let align = align.max(1).checked_next_power_of_two().unwrap_or(0);
    if align == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: the caller's contract is memalign's; the alignment is a power of two.
    unsafe {
        match chosen() {
            JEMALLOC => je::aligned_alloc(align, size),
            MIMALLOC => mi::mi_malloc_aligned(size, align),
            _ => __libc_memalign(align, size),
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf does not allocate.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    }
}

#[doc(hidden)]
#[inline(always)]
pub unsafe fn valloc(size: usize) -> *mut c_void {
    // SAFETY: the caller's contract is valloc's.
    unsafe {
        match chosen() {
            GLIBC | UNKNOWN => __libc_valloc(size),
            _ => memalign(page_size(), size),
        }
    }
}

#[doc(hidden)]
#[inline(always)]
pub unsafe fn pvalloc(size: usize) -> *mut c_void {
    // SAFETY: the caller's contract is pvalloc's: page-aligned, the size rounded up to pages.
    unsafe {
        match chosen() {
            GLIBC | UNKNOWN => __libc_pvalloc(size),
            _ => {
                let page = page_size();
                match size.max(1).checked_next_multiple_of(page) {
                    Some(rounded) => memalign(page, rounded),
                    None => std::ptr::null_mut(),
                }
            }
        }
    }
}

/// glibc's malloc_usable_size, found once with dlsym(RTLD_NEXT): the executable's definition
/// shadows libc's.
static GLIBC_USABLE_SIZE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

#[doc(hidden)]
#[inline(always)]
pub unsafe fn malloc_usable_size(ptr: *mut c_void) -> usize {
    if ptr.is_null() {
        return 0;
    }
    // SAFETY: the caller's contract: a live block of this process's malloc.
    unsafe {
        match chosen() {
            JEMALLOC => je::malloc_usable_size(ptr),
            MIMALLOC => mi::mi_usable_size(ptr),
            _ => {
                let mut f = GLIBC_USABLE_SIZE.load(Relaxed);
                if f.is_null() {
                    f = libc::dlsym(libc::RTLD_NEXT, c"malloc_usable_size".as_ptr());
                    if f.is_null() {
                        return 0;
                    }
                    GLIBC_USABLE_SIZE.store(f, Relaxed);
                }
                let f: unsafe extern "C" fn(*mut c_void) -> usize = std::mem::transmute(f);
                f(ptr)
            }
        }
    }
}

#[doc(hidden)]
pub const EINVAL: c_int = libc::EINVAL;
#[doc(hidden)]
pub const ENOMEM: c_int = libc::ENOMEM;
