//! Rust's std locks: `std::sync::Mutex` and `RwLock` are futex-based, and their fast paths are
//! inlined into the code that takes them, one atomic compare-and-exchange each, with no lock
//! function to count. The runner's debug information (`debug = "line-tables-only"` keeps the
//! inlined frames) says which of the atomic instructions callgrind counted is such a lock.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, Result};

use super::{Lock, Taker};
use crate::callgrind_file::CallGraph;

/// The inlined Rust std locks among the atomic instructions of `graph` (`ge`: the column of
/// callgrind's `Ge` event), each with the runs of its instruction while callgrind collected.
pub(super) fn std_locks(graph: &CallGraph, ge: usize) -> Result<Vec<Taker>> {
    // The atomic instructions that ran, by object: only an object with debug information can
    // hold an inlined lock.
    let mut by_object: BTreeMap<&str, Vec<(usize, u64, u64)>> = BTreeMap::new();
    for (&(function, address), costs) in &graph.instructions {
        let f = &graph.functions[function];
        if costs.get(ge).is_some_and(|&n| n > 0) && !f.is_allocator() {
            by_object.entry(&f.object).or_default().push((function, address, graph.executed(function, address)));
        }
    }
    let mut takers = Vec::new();
    for (object, sites) in by_object {
        // The vdso, and objects callgrind could not name, have no file to read.
        if !Path::new(object).is_file() {
            continue;
        }
        let data = std::fs::read(object).with_context(|| format!("reading {object}'s debug information"))?;
        let frames = Frames::of(&data).with_context(|| format!("reading {object}'s debug information"))?;
        for (function, address, executed) in sites {
            if let Some((lock, mut callers)) = frames.std_lock(address)? {
                // The function it is in, as callgrind names it: by its whole path.
                callers.push(graph.functions[function].name.clone());
                takers.push(Taker { lock, count: executed, callers });
            }
        }
    }
    Ok(takers)
}

type Reader<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

/// The inlined frames at an address of one ELF object, from its DWARF.
struct Frames<'a> {
    context: addr2line::Context<Reader<'a>>,
}

impl<'a> Frames<'a> {
    fn of(data: &'a [u8]) -> Result<Frames<'a>> {
        use object::{Object, ObjectSection};
        let file = object::File::parse(data)?;
        let endian = if file.is_little_endian() { gimli::RunTimeEndian::Little } else { gimli::RunTimeEndian::Big };
        // Debug sections are not compressed in the runners' builds; a compressed one reads as
        // absent (no frames), like an object without debug information.
        let section = |id: gimli::SectionId| -> Result<Reader<'a>, gimli::Error> {
            let data = file.section_by_name(id.name()).and_then(|s| match s.uncompressed_data() {
                Ok(Cow::Borrowed(bytes)) => Some(bytes),
                _ => None,
            });
            Ok(gimli::EndianSlice::new(data.unwrap_or_default(), endian))
        };
        let dwarf = gimli::Dwarf::load(section)?;
        Ok(Frames { context: addr2line::Context::from_dwarf(dwarf)? })
    }

    /// The std lock whose fast path the instruction at `address` is, with the frames it is
    /// inlined into that are not Rust's libraries' (the code that takes the lock), innermost
    /// first, up to the function callgrind names, which is left out.
    fn std_lock(&self, address: u64) -> Result<Option<(Lock, Vec<String>)>> {
        let mut frames = self.context.find_frames(address).skip_all_loads()?;
        let mut named: Vec<(String, String)> = Vec::new();
        while let Some(frame) = frames.next()? {
            let name = frame.function.as_ref().map(|f| f.demangle().map(Cow::into_owned)).transpose()?;
            let file = frame.location.as_ref().and_then(|l| l.file).unwrap_or_default();
            named.push((name.unwrap_or_default(), file.to_string()));
        }
        // The outermost frame is the function itself, not inlined.
        named.pop();
        let Some(at) = named.iter().position(|(name, file)| std_lock_frame(file, name).is_some()) else {
            return Ok(None);
        };
        let lock = std_lock_frame(&named[at].1, &named[at].0).expect("found above");
        let callers = named[at + 1..].iter().filter(|(_, file)| !is_rust_library(file)).map(|(n, _)| n.clone());
        Ok(Some((lock, callers.collect())))
    }
}

/// Whether a frame, by the file its location is in and its function's name, is the fast path
/// of one of std's futex locks (library/std/src/sys/sync/{mutex,rwlock}/futex.rs since Rust
/// 1.77; library/std/src/sys/unix/locks/futex_*.rs before).
fn std_lock_frame(file: &str, function: &str) -> Option<Lock> {
    if !(file.contains("/std/src/sys/") && file.contains("futex")) {
        return None;
    }
    let function = last_segment(function);
    match (file.contains("mutex"), file.contains("rwlock"), function) {
        (true, _, "lock" | "try_lock") => Some(Lock::Mutex),
        (_, true, "read" | "try_read") => Some(Lock::RwlockRead),
        (_, true, "write" | "try_write") => Some(Lock::RwlockWrite),
        _ => None,
    }
}

/// Code of Rust's own libraries (std, core, alloc), as their sources are named in the debug
/// information of a program built by rustup's toolchain.
fn is_rust_library(file: &str) -> bool {
    ["/library/std/", "/library/core/", "/library/alloc/"].iter().any(|l| file.contains(l))
}

/// `read` of `std::sys::sync::rwlock::futex::RwLock::read::h0123456789abcdef` or of
/// `read<T>`.
fn last_segment(name: &str) -> &str {
    let name = name.split('<').next().unwrap_or(name);
    let mut segments = name.rsplit("::");
    let last = segments.next().unwrap_or(name);
    match last.strip_prefix('h').is_some_and(|h| h.len() == 16 && h.chars().all(|c| c.is_ascii_hexdigit())) {
        true => segments.next().unwrap_or(last),
        false => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_lock_frames_are_told_by_their_file_and_function() {
        let rwlock = "/rustc/5980761/library/std/src/sys/sync/rwlock/futex.rs";
        let mutex = "/rustc/5980761/library/std/src/sys/sync/mutex/futex.rs";
        assert_eq!(std_lock_frame(rwlock, "read"), Some(Lock::RwlockRead));
        assert_eq!(
            std_lock_frame(rwlock, "std::sys::sync::rwlock::futex::RwLock::try_write::h0123456789abcdef"),
            Some(Lock::RwlockWrite)
        );
        assert_eq!(std_lock_frame(rwlock, "read_unlock"), None, "an unlock is not a lock");
        assert_eq!(std_lock_frame(mutex, "lock"), Some(Lock::Mutex));
        assert_eq!(
            std_lock_frame("/rustc/1/library/std/src/sys/unix/locks/futex_mutex.rs", "try_lock"),
            Some(Lock::Mutex)
        );
        assert_eq!(std_lock_frame("/rustc/1/library/core/src/sync/atomic.rs", "compare_exchange"), None);
        assert_eq!(std_lock_frame("/src/my/rwlock/futex.rs", "read"), None, "not std's");
    }
}
