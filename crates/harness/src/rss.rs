//! The process's resident memory, from /proc/self/status: what the rss measure reads (memory-N's
//! sides in split.rs, the context kinds in context.rs) and what a TCP server reports (net/serve.rs).

/// Resets the peak to the current resident size (Linux: `5` into clear_refs) and returns the peak
/// as reset, as the Go and Java runners do: a later reading of the resident size would count what
/// the process gave back or took in between.
pub fn reset_peak() -> Result<u64, String> {
    std::fs::write("/proc/self/clear_refs", "5").map_err(|e| format!("resetting the peak RSS: {e}"))?;
    field("VmHWM")
}

/// The peak resident size since the process started or its last [`reset_peak`].
pub fn peak() -> Result<u64, String> {
    field("VmHWM")
}

/// The resident size now.
pub fn current() -> Result<u64, String> {
    field("VmRSS")
}

/// A `/proc/self/status` field in bytes.
fn field(name: &str) -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("reading /proc/self/status: {e}"))?;
    let line = status.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':'));
    let kib = line.and_then(|l| l.trim().strip_suffix("kB")?.trim().parse::<u64>().ok());
    kib.map(|k| k * 1024).ok_or_else(|| format!("/proc/self/status has no {name}"))
}
