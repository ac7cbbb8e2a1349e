//! For the workspace's build scripts. Some libraries do not report their version at
//! runtime (rustls, Bertie, s2n-tls, BoringSSL's vendoring crate), so the version this build
//! links is read from the workspace's Cargo.lock and compiled in as an environment variable.
//! And the build a runner is (`scripts/build.sh --build NAME`: its profile and flags) is
//! compiled in the same way, so that the runner can say which build it is.

use std::path::Path;

/// Sets `cargo:rustc-env={var}={version of krate}` for each pair, from the workspace's
/// Cargo.lock ("unknown" when it has none), and reruns the build script when the lock changes.
/// A crate the lock holds at several versions (aws-lc-sys: aws-lc-rs's and openssl-sys's) fails
/// the build: [`export_locked_dependency_versions`] says which one is meant.
pub fn export_locked_versions(pairs: &[(&str, &str)]) {
    let text = workspace_lock();
    for (krate, var) in pairs {
        let versions = locked_versions(&text, krate);
        assert!(
            versions.len() < 2,
            "Cargo.lock holds {krate} at {versions:?}: name the crate whose dependency is meant \
             (export_locked_dependency_versions)"
        );
        let version = versions.into_iter().next().unwrap_or_else(|| "unknown".into());
        println!("cargo:rustc-env={var}={version}");
    }
}

/// Sets `cargo:rustc-env={var}={version}` for each `(dependent, dependency, var)`: the version
/// of `dependency` that `dependent` depends on in the workspace's Cargo.lock ("unknown" when
/// the lock has no such edge), for a crate the lock may hold at several versions.
pub fn export_locked_dependency_versions(triples: &[(&str, &str, &str)]) {
    let text = workspace_lock();
    for (dependent, dependency, var) in triples {
        let version = locked_dependency_version(&text, dependent, dependency).unwrap_or_else(|| "unknown".into());
        println!("cargo:rustc-env={var}={version}");
    }
}

/// The workspace's Cargo.lock, which the build script then reruns on.
fn workspace_lock() -> String {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR for build scripts");
    let lock = Path::new(&manifest_dir).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    std::fs::read_to_string(&lock).unwrap_or_default()
}

/// Sets the `TLSBENCH_BUILD_*` variables the harness reports as its runner's build
/// (`tlsbench_harness::build`): the build's name (`TLSBENCH_BUILD`, which scripts/build.sh sets;
/// else the cargo profile), the profile, its opt-level, and the flags rustc and the C compilers
/// were given (RUSTFLAGS; CFLAGS and CXXFLAGS, which the cc and cmake crates pass on to the C
/// libraries built from source).
pub fn export_build() {
    for var in ["TLSBENCH_BUILD", "CFLAGS", "CXXFLAGS", "CC"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let profile = profile_of(&var("OUT_DIR")).unwrap_or_else(|| var("PROFILE"));
    let name = match var("TLSBENCH_BUILD") {
        name if name.is_empty() => profile.clone(),
        name => name,
    };
    // Cargo passes the build's rustc flags to build scripts separated by 0x1f.
    let rustflags =
        var("CARGO_ENCODED_RUSTFLAGS").split('\x1f').filter(|f| !f.is_empty()).collect::<Vec<_>>().join(" ");
    for (key, value) in [
        ("NAME", name),
        ("PROFILE", profile),
        ("OPT_LEVEL", var("OPT_LEVEL")),
        ("RUSTFLAGS", rustflags),
        ("CFLAGS", var("CFLAGS")),
        ("CXXFLAGS", var("CXXFLAGS")),
        ("C_COMPILER", c_compiler(&var("CC"))),
    ] {
        println!("cargo:rustc-env=TLSBENCH_BUILD_{key}={value}");
    }
}

/// The cargo profile's directory in a build script's OUT_DIR
/// (`TARGET_DIR[/TRIPLE]/PROFILE/build/CRATE-HASH/out`): `release`, `debug`, or a custom
/// profile's name (`lto`), which the PROFILE variable does not tell (it says `release`).
fn profile_of(out_dir: &str) -> Option<String> {
    let parts: Vec<&str> = out_dir.split('/').collect();
    let build = parts.iter().rposition(|p| *p == "build")?;
    Some(parts.get(build.checked_sub(1)?)?.to_string())
}

/// The C compiler the cc and cmake crates use for the libraries built from source: CC, else
/// `cc`, as its `--version` names it: `gcc 12.2.0`, `clang 14.0.6`; empty when it does not run.
fn c_compiler(cc: &str) -> String {
    let cc = if cc.is_empty() { "cc" } else { cc };
    let output = std::process::Command::new(cc).arg("--version").output();
    let text = output.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    compiler_of(text.lines().next().unwrap_or_default()).unwrap_or_default()
}

/// The compiler and its version in the first line of `--version`'s output:
/// `gcc (Debian 12.2.0-14) 12.2.0` is `gcc 12.2.0`, `Debian clang version 14.0.6` is
/// `clang 14.0.6`.
fn compiler_of(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let numeric = |w: &&&str| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.');
    if let Some(at) = words.iter().position(|w| *w == "clang") {
        let version = words[at..].iter().find(numeric)?;
        return Some(format!("clang {version}"));
    }
    let name = words.first()?.rsplit('/').next()?;
    if name == "gcc" || name == "cc" || name.ends_with("-gcc") {
        return Some(format!("gcc {}", words.iter().rev().find(numeric)?));
    }
    None
}

/// The versions of every `[[package]] name = "krate"` in a Cargo.lock.
fn locked_versions(lock: &str, krate: &str) -> Vec<String> {
    lock.split("[[package]]")
        .filter(|p| p.contains(&format!("name = \"{krate}\"\n")))
        .filter_map(|entry| {
            let line = entry.lines().find(|l| l.starts_with("version = "))?;
            Some(line.trim_start_matches("version = ").trim_matches('"').to_string())
        })
        .collect()
}

/// The version of `dependency` in the dependencies of `dependent` (its only version in the lock).
/// Cargo.lock lists a dependency by name alone when the lock holds one version of it, and as
/// `name version` when it holds several.
fn locked_dependency_version(lock: &str, dependent: &str, dependency: &str) -> Option<String> {
    let [entry] =
        lock.split("[[package]]").filter(|p| p.contains(&format!("name = \"{dependent}\"\n"))).collect::<Vec<_>>()[..]
    else {
        return None;
    };
    let listed = entry
        .lines()
        .map(|l| l.trim().trim_end_matches(',').trim_matches('"'))
        .find(|l| *l == dependency || l.strip_prefix(dependency).is_some_and(|rest| rest.starts_with(' ')))?;
    match listed.split_once(' ') {
        Some((_, version)) => Some(version.split(' ').next()?.to_string()),
        None => locked_versions(lock, dependency).into_iter().next(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_is_the_directory_above_build() {
        assert_eq!(
            profile_of("/w/target/builds/lto/cargo/lto/build/tlsbench-harness-0123/out").as_deref(),
            Some("lto")
        );
        assert_eq!(profile_of("/w/target/release/build/tlsbench-harness-0123/out").as_deref(), Some("release"));
        assert_eq!(profile_of("out"), None);
    }

    #[test]
    fn the_c_compiler_is_named_by_its_family_and_version() {
        assert_eq!(compiler_of("gcc (Debian 12.2.0-14) 12.2.0").as_deref(), Some("gcc 12.2.0"));
        assert_eq!(compiler_of("cc (Debian 12.2.0-14) 12.2.0").as_deref(), Some("gcc 12.2.0"));
        assert_eq!(compiler_of("Debian clang version 14.0.6").as_deref(), Some("clang 14.0.6"));
        assert_eq!(compiler_of("clang version 18.1.8 (Fedora 18.1.8-1.fc40)").as_deref(), Some("clang 18.1.8"));
        assert_eq!(compiler_of("tcc version 0.9.27").as_deref(), None);
        assert_eq!(compiler_of("").as_deref(), None);
        // This machine's own compiler says what it is.
        let here = c_compiler("");
        assert!(here.starts_with("gcc ") || here.starts_with("clang "), "{here}");
    }

    #[test]
    fn finds_the_version_of_the_named_package_only() {
        let lock = concat!(
            "[[package]]\nname = \"ring\"\nversion = \"0.17.14\"\n\n",
            "[[package]]\nname = \"rustls\"\nversion = \"0.23.46\"\n",
        );

        assert_eq!(locked_versions(lock, "rustls"), ["0.23.46"]);
        assert_eq!(locked_versions(lock, "ring"), ["0.17.14"]);
        assert_eq!(locked_versions(lock, "rust"), Vec::<String>::new());
    }

    #[test]
    fn a_dependency_held_at_several_versions_is_the_one_its_dependent_names() {
        let lock = concat!(
            "[[package]]\nname = \"aws-lc-rs\"\nversion = \"1.19.0\"\ndependencies = [\n",
            " \"aws-lc-sys 0.47.0\",\n \"zeroize\",\n]\n\n",
            "[[package]]\nname = \"aws-lc-sys\"\nversion = \"0.41.0\"\n\n",
            "[[package]]\nname = \"aws-lc-sys\"\nversion = \"0.47.0\"\n\n",
            "[[package]]\nname = \"openssl-sys\"\nversion = \"0.9.118\"\ndependencies = [\n",
            " \"aws-lc-sys 0.41.0\",\n \"libc\",\n]\n\n",
            "[[package]]\nname = \"zeroize\"\nversion = \"1.8.2\"\n",
        );
        assert_eq!(locked_versions(lock, "aws-lc-sys"), ["0.41.0", "0.47.0"]);
        assert_eq!(locked_dependency_version(lock, "aws-lc-rs", "aws-lc-sys").as_deref(), Some("0.47.0"));
        assert_eq!(locked_dependency_version(lock, "openssl-sys", "aws-lc-sys").as_deref(), Some("0.41.0"));
        // Listed by name alone: the lock's only version.
        assert_eq!(locked_dependency_version(lock, "aws-lc-rs", "zeroize").as_deref(), Some("1.8.2"));
        // Not a dependency of it, or no such dependent.
        assert_eq!(locked_dependency_version(lock, "openssl-sys", "zeroize"), None);
        assert_eq!(locked_dependency_version(lock, "rustls", "aws-lc-sys"), None);
    }
}
