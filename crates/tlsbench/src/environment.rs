//! What the run ran on, read from the system where it tells.

use std::fs;

use crate::results::Environment;

pub fn detect() -> Environment {
    let read = |path: &str| fs::read_to_string(path).ok().map(|s| s.trim().to_string());
    let cpu = read("/proc/cpuinfo")
        .and_then(|info| info.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|m| m.trim().to_string()))
        .unwrap_or_else(|| "unknown".into());
    let aslr = match read("/proc/sys/kernel/randomize_va_space").as_deref() {
        Some("0") => "off".to_string(),
        Some("1") => "on (conservative)".to_string(),
        Some("2") => "on (full)".to_string(),
        other => other.unwrap_or("unknown").to_string(),
    };
    Environment {
        cpu,
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        kernel: read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        rustc: env!("TLSBENCH_RUSTC_VERSION").to_string(),
        // The runners use Rust's default global allocator, which is the C library's malloc.
        allocator: "system (libc malloc)".into(),
        aslr,
        governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").unwrap_or_else(|| "unavailable".into()),
    }
}
