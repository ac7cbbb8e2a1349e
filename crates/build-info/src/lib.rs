//! For the stack adapters' build scripts. Some libraries do not report their version at
//! runtime (rustls, Bertie, s2n-tls, BoringSSL's vendoring crate), so the version this build
//! links is read from the workspace's Cargo.lock and compiled in as an environment variable.

use std::path::Path;

/// Sets `cargo:rustc-env={var}={version of krate}` for each pair, from the workspace's
/// Cargo.lock ("unknown" when it has none), and reruns the build script when the lock changes.
pub fn export_locked_versions(pairs: &[(&str, &str)]) {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR for build scripts");
    let lock = Path::new(&manifest_dir).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    for (krate, var) in pairs {
        let version = locked_version(&text, krate).unwrap_or_else(|| "unknown".into());
        println!("cargo:rustc-env={var}={version}");
    }
}

/// The version of `[[package]] name = "krate"` in a Cargo.lock.
fn locked_version(lock: &str, krate: &str) -> Option<String> {
    let entry = lock.split("[[package]]").find(|p| p.contains(&format!("name = \"{krate}\"\n")))?;
    let line = entry.lines().find(|l| l.starts_with("version = "))?;
    Some(line.trim_start_matches("version = ").trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_version_of_the_named_package_only() {
        let lock = "[[package]]\nname = \"ring\"\nversion = \"0.17.14\"\n\n[[package]]\nname = \"rustls\"\nversion = \"0.23.46\"\n";
        assert_eq!(locked_version(lock, "rustls").as_deref(), Some("0.23.46"));
        assert_eq!(locked_version(lock, "ring").as_deref(), Some("0.17.14"));
        assert_eq!(locked_version(lock, "rust"), None);
    }
}
