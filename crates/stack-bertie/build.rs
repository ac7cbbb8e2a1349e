//! Bertie has no runtime version string, so the version this build links is read from the
//! workspace's Cargo.lock and compiled in (as crates/stack-rustls/build.rs does for rustls).

use std::path::Path;

fn main() {
    let lock = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let version = locked_version(&text, "bertie").unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BERTIE_VERSION={version}");
}

/// The version of `[[package]] name = "krate"` in a Cargo.lock.
fn locked_version(lock: &str, krate: &str) -> Option<String> {
    let entry = lock.split("[[package]]").find(|p| p.contains(&format!("name = \"{krate}\"\n")))?;
    let line = entry.lines().find(|l| l.starts_with("version = "))?;
    Some(line.trim_start_matches("version = ").trim_matches('"').to_string())
}
