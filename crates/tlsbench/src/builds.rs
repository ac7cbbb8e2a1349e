//! The builds of the runners (`run --build NAME`): `scripts/build.sh --build NAME` builds the
//! Rust runners with the build's compiler flags into a directory of their own, beside release's,
//! and each runner says which build it is. Here: where each build's runners are, and the check
//! that they are that build.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::stacks::{self, Runners};

/// The builds scripts/build.sh makes (its `--build`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Build {
    /// Today's: cargo's release profile, no extra flags; the runners beside tlsbench.
    Release,
    /// `-C target-cpu=native`, and `-march=native` for the C libraries built from source.
    Native,
    /// Fat LTO and one codegen unit (the cargo profile `lto`).
    Lto,
}

impl Build {
    pub const ALL: [Build; 3] = [Build::Release, Build::Native, Build::Lto];

    pub fn name(self) -> &'static str {
        match self {
            Build::Release => "release",
            Build::Native => "native",
            Build::Lto => "lto",
        }
    }

    /// The command that builds it.
    pub fn command(self) -> String {
        match self {
            Build::Release => "scripts/build.sh".into(),
            other => format!("scripts/build.sh --build {other}"),
        }
    }
}

impl std::fmt::Display for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Build {
    type Err = String;

    fn from_str(name: &str) -> Result<Build, String> {
        Build::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .ok_or_else(|| format!("unknown build `{name}` (valid: {})", Build::ALL.map(Build::name).join(", ")))
    }
}

/// Where a build's runners are: release's where tlsbench finds its runners
/// ([`stacks::runner_dir`]); another's in `builds/NAME` beside that directory
/// (target/builds/native for target/release), or in `$TLSBENCH_BUILDS_DIR/NAME`.
pub fn dir(build: Build) -> Result<PathBuf> {
    let release = stacks::runner_dir()?;
    if build == Build::Release {
        return Ok(release);
    }
    if let Some(dir) = std::env::var_os("TLSBENCH_BUILDS_DIR") {
        return Ok(PathBuf::from(dir).join(build.name()));
    }
    let parent = release.parent().with_context(|| format!("{} has no parent directory", release.display()))?;
    Ok(parent.join("builds").join(build.name()))
}

/// The runners of `build`, checked to be that build.
pub fn find(build: Build) -> Result<Runners> {
    let dir = dir(build)?;
    if build != Build::Release && !dir.is_dir() {
        bail!("build `{build}` is not built: {} does not exist (build it: {})", dir.display(), build.command());
    }
    let runners = match build {
        Build::Release => Runners::discover(&dir)?.with_releases()?,
        _ => Runners::discover(&dir)?,
    };
    check(build, &runners)?;
    Ok(runners)
}

/// The runners of the one build a command runs (`serve`, `load`, `trace`, `io` and `profile`
/// take `--build NAME`), with `run --build`'s checks: release's directory holds release;
/// another build's directory is built, holds that build, and has a runner for each stack of
/// `ids`. A stack whose runner only release has (Go's, Java's) is an error saying why.
pub fn one(release: Runners, build: Build, ids: &[String]) -> Result<Runners> {
    check(Build::Release, &release)?;
    if build == Build::Release {
        return Ok(release);
    }
    for id in ids {
        release.of(id)?;
        if let Some(reason) = runtime_only(&release, build, id) {
            bail!("{reason}");
        }
    }
    of_build(&release, build, ids)
}

/// The runners of `build` (not release), checked to be that build and to hold each stack of
/// `ids` that release's Rust runners hold.
pub fn of_build(release: &Runners, build: Build, ids: &[String]) -> Result<Runners> {
    let runners = find(build)?;
    missing(release, build, &runners, ids)?;
    Ok(runners)
}

/// That a reply came from a runner of `build`. Its directory was checked when the command
/// started; a runner replaced since must not put another build's figures under this one's
/// name. Release's runners are not held to a name (cargo's test builds say their profile), nor
/// are runners that report none (Go's and Java's, release's only).
pub fn check_reply(build: Build, reported: Option<&str>) -> Result<(), String> {
    match reported {
        Some(reported) if build != Build::Release && reported != build.name() => {
            Err(format!("the runner is build `{reported}`, not `{build}`; result refused"))
        }
        _ => Ok(()),
    }
}

/// A stack as a command that runs one build names it: `ID` in release, `ID [BUILD]` in
/// another, as `run` labels its build columns.
pub fn label(id: &str, build: Build) -> String {
    match build {
        Build::Release => id.to_string(),
        other => format!("{id} [{other}]"),
    }
}

/// That every runner in a build's directory says it is that build: a runner left from an
/// earlier build, or copied from another, would measure the wrong thing under the build's name.
/// In release's directory, runners that report no build (Go's, Java's) are release's, and so is
/// a Rust runner built by cargo with another profile than the named builds' (the tests' debug).
pub fn check(build: Build, runners: &Runners) -> Result<()> {
    let dir = runners.dir();
    if build != Build::Release && runners.all().is_empty() {
        bail!("build `{build}` is not built: no usable runner in {} (build it: {})", dir.display(), build.command());
    }
    for runner in runners.all() {
        let file = runner.path.file_name().unwrap_or_default().to_string_lossy();
        let reported = runner.build.as_ref().map(|b| b.name.as_str());
        let wrong = match (build, reported) {
            (Build::Release, None) => None,
            (Build::Release, Some(name)) => {
                name.parse::<Build>().ok().filter(|&b| b != Build::Release).map(|b| b.to_string())
            }
            (_, Some(name)) if name == build.name() => None,
            (_, Some(name)) => Some(name.to_string()),
            (_, None) => Some("none".to_string()),
        };
        if let Some(wrong) = wrong {
            bail!(
                "{file} in {} is build `{wrong}`, not `{build}` (stale, or copied from another build): rebuild it with {}",
                dir.display(),
                build.command()
            );
        }
    }
    Ok(())
}

/// Why `id` has no runner in `build` while release has one: Go's and Java's runners are built
/// by their own toolchains, which scripts/build.sh's flags do not reach. None where the stack's
/// release runner is a Rust one: then the build is incomplete, an error (see [`missing`]).
pub fn runtime_only(release: &Runners, build: Build, id: &str) -> Option<String> {
    let runner = release.runner_of(id)?;
    runner.build.is_none().then(|| {
        format!(
            "{id}: its runner ({}) is built by its own toolchain, which `--build {build}`'s flags do not reach; it is measured in the release build only",
            file_name(&runner.path)
        )
    })
}

/// The stacks of `ids` that release's Rust runners hold and `build`'s runners do not: a build
/// made before a stack was added, or only in part.
pub fn missing(release: &Runners, build: Build, runners: &Runners, ids: &[String]) -> Result<()> {
    let missing: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| runners.for_pair(id, id).is_none() && runtime_only(release, build, id).is_none())
        .collect();
    if !missing.is_empty() {
        bail!(
            "build `{build}` in {} holds no runner for {} (built before they were added, or in part): rebuild it with {}",
            runners.dir().display(),
            missing.join(", "),
            build.command()
        );
    }
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap_or_default().to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stacks::Runner;
    use tlsbench_harness::build::BuildInfo;
    use tlsbench_harness::protocol::StackInfo;

    fn built(name: &str) -> Option<BuildInfo> {
        Some(BuildInfo {
            name: name.into(),
            profile: "release".into(),
            opt_level: "3".into(),
            rustflags: String::new(),
            cflags: String::new(),
            cxxflags: String::new(),
        })
    }

    fn runners(dir: &str, found: &[(&str, &[&str], Option<BuildInfo>)]) -> Runners {
        let info = |id: &&str| StackInfo::new(*id, "", tlsbench_harness::Capabilities::everything());
        let runner = |(name, ids, build): &(&str, &[&str], Option<BuildInfo>)| Runner {
            path: Path::new(dir).join(name),
            stacks: ids.iter().map(info).collect(),
            build: build.clone(),
        };
        Runners::new(found.iter().map(runner).collect(), Path::new(dir))
    }

    #[test]
    fn names_parse_and_an_unknown_one_names_the_valid_ones() {
        assert_eq!("native".parse::<Build>(), Ok(Build::Native));
        assert_eq!("pgo".parse::<Build>(), Err("unknown build `pgo` (valid: release, native, lto)".to_string()));
        assert_eq!(Build::Lto.command(), "scripts/build.sh --build lto");
    }

    #[test]
    fn a_builds_directory_must_hold_that_build() {
        let native = runners("/t/builds/native", &[("tlsbench-runner-openssl", &["openssl"], built("native"))]);
        check(Build::Native, &native).unwrap();
        // Left from another build, or from before runners said their build.
        let stale = runners("/t/builds/native", &[("tlsbench-runner-openssl", &["openssl"], built("release"))]);
        assert_eq!(
            check(Build::Native, &stale).unwrap_err().to_string(),
            "tlsbench-runner-openssl in /t/builds/native is build `release`, not `native` (stale, or copied from another build): \
             rebuild it with scripts/build.sh --build native"
        );
        let silent = runners("/t/builds/lto", &[("tlsbench-runner-go", &["go"], None)]);
        assert!(check(Build::Lto, &silent)
            .unwrap_err()
            .to_string()
            .starts_with("tlsbench-runner-go in /t/builds/lto is build `none`, not `lto`"));
        let empty = runners("/t/builds/lto", &[]);
        assert_eq!(
            check(Build::Lto, &empty).unwrap_err().to_string(),
            "build `lto` is not built: no usable runner in /t/builds/lto (build it: scripts/build.sh --build lto)"
        );
        // Release's directory: Go's and Java's runners say no build, cargo's test builds say
        // their profile; a named build's runner there is refused.
        let release = runners(
            "/t/release",
            &[("tlsbench-runner-openssl", &["openssl"], built("debug")), ("tlsbench-runner-go", &["go"], None)],
        );
        check(Build::Release, &release).unwrap();
        let copied = runners("/t/release", &[("tlsbench-runner-openssl", &["openssl"], built("native"))]);
        assert!(check(Build::Release, &copied).unwrap_err().to_string().contains("is build `native`, not `release`"));
    }

    #[test]
    fn a_reply_of_another_build_is_refused_and_a_build_other_than_release_labels_its_stacks() {
        check_reply(Build::Native, Some("native")).unwrap();
        assert_eq!(
            check_reply(Build::Native, Some("release")).unwrap_err(),
            "the runner is build `release`, not `native`; result refused"
        );
        // Release's runners say their cargo profile under test; Go's and Java's say nothing.
        check_reply(Build::Release, Some("debug")).unwrap();
        check_reply(Build::Lto, None).unwrap();
        assert_eq!(
            (label("openssl", Build::Release), label("openssl", Build::Lto)),
            ("openssl".to_string(), "openssl [lto]".to_string())
        );
    }

    #[test]
    fn a_stack_missing_from_a_build_is_n_a_for_a_runtime_and_an_error_for_a_rust_runner() {
        let release = runners(
            "/t/release",
            &[
                ("tlsbench-runner-openssl", &["openssl", "rustls-ring"], built("release")),
                ("tlsbench-runner-go", &["go"], None),
            ],
        );
        let native = runners("/t/builds/native", &[("tlsbench-runner-openssl", &["openssl"], built("native"))]);
        assert_eq!(
            runtime_only(&release, Build::Native, "go").as_deref(),
            Some("go: its runner (tlsbench-runner-go) is built by its own toolchain, which `--build native`'s flags do not reach; it is measured in the release build only")
        );
        assert_eq!(runtime_only(&release, Build::Native, "openssl"), None);
        missing(&release, Build::Native, &native, &["openssl".into(), "go".into()]).unwrap();
        assert_eq!(
            missing(&release, Build::Native, &native, &["rustls-ring".into()]).unwrap_err().to_string(),
            "build `native` in /t/builds/native holds no runner for rustls-ring (built before they were added, or in part): \
             rebuild it with scripts/build.sh --build native"
        );
    }
}
