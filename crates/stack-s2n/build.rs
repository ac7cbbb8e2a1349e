//! s2n-tls has no runtime version string, and s2n-tls-sys vendors no version of the C library
//! (no VERSION file; its CMakeLists says 1.0.0, "major updates only"): the crate's version this
//! build links is compiled in, and the s2n-tls commit its C source was published from, which the
//! crate's .cargo_vcs_info.json records (docs/stacks.md#s2n-tls).

use std::path::PathBuf;

fn main() {
    tlsbench_build_info::export_locked_versions(&[
        ("s2n-tls", "S2N_TLS_VERSION"),
        ("s2n-tls-sys", "S2N_TLS_SYS_VERSION"),
        ("aws-lc-rs", "AWS_LC_RS_VERSION"),
    ]);
    // aws-lc-rs's AWS-LC: the lock also holds the one openssl-sys links for the aws-lc stack.
    tlsbench_build_info::export_locked_dependency_versions(&[("aws-lc-rs", "aws-lc-sys", "AWS_LC_SYS_VERSION")]);
    println!("cargo:rerun-if-env-changed=CARGO_HOME");
    println!("cargo:rustc-env=S2N_TLS_SOURCE_COMMIT={}", source_commit().unwrap_or_default());
}

/// The first 10 digits of the commit in s2n-tls-sys's .cargo_vcs_info.json, from the registry's
/// sources of the locked version (`$CARGO_HOME/registry/src/*/s2n-tls-sys-VERSION/`).
fn source_commit() -> Option<String> {
    let lock = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").ok()?).join("../../Cargo.lock");
    let lock = std::fs::read_to_string(lock).ok()?;
    let entry = lock.split("[[package]]").find(|p| p.contains("name = \"s2n-tls-sys\"\n"))?;
    let version = entry.lines().find_map(|l| l.strip_prefix("version = "))?.trim_matches('"');
    let home = match std::env::var_os("CARGO_HOME") {
        Some(home) => PathBuf::from(home),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cargo"),
    };
    let mut registries: Vec<PathBuf> =
        std::fs::read_dir(home.join("registry/src")).ok()?.flatten().map(|e| e.path()).collect();
    registries.sort();
    registries.into_iter().find_map(|registry| {
        let info =
            std::fs::read_to_string(registry.join(format!("s2n-tls-sys-{version}/.cargo_vcs_info.json"))).ok()?;
        let sha = info.split("\"sha1\"").nth(1)?.split('"').nth(1)?;
        (sha.len() >= 10 && sha.chars().all(|c| c.is_ascii_hexdigit())).then(|| sha[..10].to_string())
    })
}
