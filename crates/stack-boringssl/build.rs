//! BoringSSL reports only "BoringSSL" at runtime, so the version of boring-sys (which vendors
//! one BoringSSL commit) this build links is read from the workspace's Cargo.lock and compiled in.

use std::path::Path;

fn main() {
    let lock = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let version = locked_version(&text, "boring-sys").unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BORING_SYS_VERSION={version}");
}

/// The version of `[[package]] name = "krate"` in a Cargo.lock.
fn locked_version(lock: &str, krate: &str) -> Option<String> {
    let entry = lock.split("[[package]]").find(|p| p.contains(&format!("name = \"{krate}\"\n")))?;
    let line = entry.lines().find(|l| l.starts_with("version = "))?;
    Some(line.trim_start_matches("version = ").trim_matches('"').to_string())
}
