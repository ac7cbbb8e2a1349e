//! The build this runner is: `scripts/build.sh --build NAME` builds the Rust runners of each
//! build (release, native, lto) with its own flags into a directory of its own, and each runner
//! says which build it is, so that tlsbench can check that a build's directory holds that build.
//! Compiled in by build.rs (`tlsbench_build_info::export_build`).

use serde::{Deserialize, Serialize};

/// A runner's build, as its compiler was told.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// `release`, `native`, `lto` (scripts/build.sh's TLSBENCH_BUILD), else the cargo profile.
    pub name: String,
    /// The cargo profile: `release`, `lto` (release with fat LTO and one codegen unit), `debug`.
    pub profile: String,
    pub opt_level: String,
    /// RUSTFLAGS, as rustc got them; empty when none.
    pub rustflags: String,
    /// What the C and C++ compilers were given for the libraries built from source (BoringSSL,
    /// AWS-LC, s2n-tls, ring's C, jemalloc, mimalloc); empty when none.
    pub cflags: String,
    pub cxxflags: String,
    /// The C compiler of those libraries, by family and version: `gcc 12.2.0`, `clang 14.0.6`
    /// (scripts/build.sh --cc); empty from runners that did not say (before it was reported).
    #[serde(default)]
    pub c_compiler: String,
}

impl BuildInfo {
    /// The compiler's family, `gcc` or `clang` (the `--compiler` axis); empty when unknown.
    pub fn compiler_family(&self) -> &str {
        self.c_compiler.split(' ').next().unwrap_or_default()
    }
}

/// This runner's build.
pub fn this() -> BuildInfo {
    BuildInfo {
        name: env!("TLSBENCH_BUILD_NAME").into(),
        profile: env!("TLSBENCH_BUILD_PROFILE").into(),
        opt_level: env!("TLSBENCH_BUILD_OPT_LEVEL").into(),
        rustflags: env!("TLSBENCH_BUILD_RUSTFLAGS").into(),
        cflags: env!("TLSBENCH_BUILD_CFLAGS").into(),
        cxxflags: env!("TLSBENCH_BUILD_CXXFLAGS").into(),
        c_compiler: env!("TLSBENCH_BUILD_C_COMPILER").into(),
    }
}

impl std::fmt::Display for BuildInfo {
    /// `native (cargo profile release, opt-level 3, RUSTFLAGS -C target-cpu=native, CFLAGS -march=native,
    /// C compiler gcc 12.2.0)`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (cargo profile {}, opt-level {}", self.name, self.profile, self.opt_level)?;
        for (what, flags) in [("RUSTFLAGS", &self.rustflags), ("CFLAGS", &self.cflags), ("CXXFLAGS", &self.cxxflags)] {
            if !flags.is_empty() {
                write!(f, ", {what} {flags}")?;
            }
        }
        if !self.c_compiler.is_empty() {
            write!(f, ", C compiler {}", self.c_compiler)?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_runner_says_its_profile_and_flags() {
        let build = this();
        // The tests are built by cargo with some profile; its directory names it.
        assert!(!build.profile.is_empty() && !build.name.is_empty() && !build.opt_level.is_empty(), "{build:?}");
        let shown = BuildInfo {
            name: "native".into(),
            profile: "release".into(),
            opt_level: "3".into(),
            rustflags: "-C target-cpu=native".into(),
            cflags: "-march=native".into(),
            cxxflags: String::new(),
            c_compiler: "clang 14.0.6".into(),
        };
        assert_eq!(
            shown.to_string(),
            "native (cargo profile release, opt-level 3, RUSTFLAGS -C target-cpu=native, CFLAGS -march=native, \
             C compiler clang 14.0.6)"
        );
        assert_eq!(shown.compiler_family(), "clang");
        // The C compiler the tests' build used, by family.
        assert!(["gcc", "clang"].contains(&build.compiler_family()), "{build:?}");
    }
}
