//! The builds of the runners (`run --build NAME`): `scripts/build.sh --build NAME` builds the
//! Rust runners with the build's compiler flags into a directory of their own, beside release's,
//! and each runner says which build it is. Here: where each build's runners are, and the check
//! that they are that build.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::runners::{self, Runners};

/// The builds scripts/build.sh makes (its `--build`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Build {
    /// Today's: cargo's release profile, no extra flags; the runners beside tlsbench.
    #[default]
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

/// The C compiler of the libraries built from source (`scripts/build.sh --cc`): an axis of its
/// own beside the build (`run --compiler`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Compiler {
    /// The system's cc (gcc on Debian): every build's, unlabelled.
    #[default]
    Gcc,
    /// clang (scripts/build.sh --cc clang installs it), its runners in target/builds/NAME-clang.
    Clang,
}

impl Compiler {
    pub const ALL: [Compiler; 2] = [Compiler::Gcc, Compiler::Clang];

    pub fn name(self) -> &'static str {
        match self {
            Compiler::Gcc => "gcc",
            Compiler::Clang => "clang",
        }
    }
}

impl std::fmt::Display for Compiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Compiler {
    type Err = String;

    fn from_str(name: &str) -> Result<Compiler, String> {
        Compiler::ALL.into_iter().find(|c| c.name() == name).ok_or_else(|| {
            format!("unknown C compiler `{name}` (valid: {})", Compiler::ALL.map(Compiler::name).join(", "))
        })
    }
}

/// A build of the runners with a C compiler: one directory of runners.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Built {
    pub build: Build,
    pub compiler: Compiler,
}

impl Built {
    pub fn new(build: Build, compiler: Compiler) -> Built {
        Built { build, compiler }
    }

    /// Today's runners, beside tlsbench: release with gcc.
    pub fn is_default(self) -> bool {
        self == Built::default()
    }

    /// The names of its axes that are not today's runners' (release, gcc), the build first: what
    /// labels and file names add.
    pub fn chosen(self) -> impl Iterator<Item = &'static str> {
        let build = (self.build != Build::Release).then(|| self.build.name());
        let compiler = (self.compiler != Compiler::Gcc).then(|| self.compiler.name());
        build.into_iter().chain(compiler)
    }

    /// Its directory's name under builds/: `native`, `release-clang`.
    fn dir_name(self) -> String {
        match self.compiler {
            Compiler::Gcc => self.build.name().to_string(),
            other => format!("{}-{other}", self.build),
        }
    }

    /// The command that builds it.
    pub fn command(self) -> String {
        match self.compiler {
            Compiler::Gcc => self.build.command(),
            other => format!("scripts/build.sh --build {} --cc {other}", self.build),
        }
    }
}

impl std::fmt::Display for Built {
    /// `native`, `native with clang`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.compiler {
            Compiler::Gcc => write!(f, "{}", self.build),
            other => write!(f, "{} with {other}", self.build),
        }
    }
}

/// Where a build's runners are: release's (with gcc) where tlsbench finds its runners
/// ([`runners::runner_dir`]); another's in `builds/NAME` beside that directory
/// (target/builds/native for target/release, target/builds/release-clang with clang), or in
/// `$TLSBENCH_BUILDS_DIR/NAME`.
pub fn dir(built: Built) -> Result<PathBuf> {
    let release = runners::runner_dir()?;
    if built.is_default() {
        return Ok(release);
    }
    if let Some(dir) = std::env::var_os("TLSBENCH_BUILDS_DIR") {
        return Ok(PathBuf::from(dir).join(built.dir_name()));
    }
    let parent = release.parent().with_context(|| format!("{} has no parent directory", release.display()))?;
    Ok(parent.join("builds").join(built.dir_name()))
}

/// The runners of `built`, checked to be that build, with that compiler.
pub fn find(built: Built) -> Result<Runners> {
    let dir = dir(built)?;
    if !built.is_default() && !dir.is_dir() {
        bail!("build `{built}` is not built: {} does not exist (build it: {})", dir.display(), built.command());
    }
    let runners = match built.is_default() {
        true => Runners::discover(&dir)?.with_releases()?,
        false => Runners::discover(&dir)?,
    };
    check(built, &runners)?;
    Ok(runners)
}

/// The runners of the one build a command runs (`serve`, `load`, `trace`, `io` and `profile`
/// take `--build NAME` and `--compiler CC`), with `run --build`'s checks: release's
/// directory holds release; another build's directory is built, holds that build, and has a
/// runner for each stack of `ids`. A stack whose runner only release has (Go's, Java's) is an
/// error saying why.
pub fn one(release: Runners, built: Built, ids: &[String]) -> Result<Runners> {
    check(Built::default(), &release)?;
    if built.is_default() {
        return Ok(release);
    }
    for id in ids {
        release.of(id)?;
        if let Some(reason) = runtime_only(&release, built, id) {
            bail!("{reason}");
        }
    }
    of_build(&release, built, ids)
}

/// The runners of `built` (not today's), checked to be that build and to hold each stack of
/// `ids` that release's Rust runners hold.
pub fn of_build(release: &Runners, built: Built, ids: &[String]) -> Result<Runners> {
    let runners = find(built)?;
    missing(release, built, &runners, ids)?;
    Ok(runners)
}

/// That a reply came from a runner of `build`. Its directory was checked when the command
/// started; a runner replaced since must not put another build's figures under this one's
/// name. Release's runners are not held to a name (cargo's test builds say their profile), nor
/// are runners that report none (Go's and Java's, release's only). (A reply does not say its
/// C compiler: the directory's check is what holds a compiler's runners to it.)
pub fn check_reply(build: Build, reported: Option<&str>) -> Result<(), String> {
    match reported {
        Some(reported) if build != Build::Release && reported != build.name() => {
            Err(format!("the runner is build `{reported}`, not `{build}`; result refused"))
        }
        _ => Ok(()),
    }
}

/// A stack as a command that runs one build names it: `ID` in release with gcc, `ID [BUILD]`
/// in another build, `ID [clang]` with another compiler, as `run` labels its columns.
pub fn label(id: &str, built: Built) -> String {
    built.chosen().fold(id.to_string(), |label, chosen| format!("{label} [{chosen}]"))
}

/// What a file of `built` puts after its name so that it lies beside release's (with gcc), not
/// over it: nothing, `_native`, `_clang`, `_lto_clang`.
pub fn file_suffix(built: Built) -> String {
    built.chosen().map(|chosen| format!("_{chosen}")).collect()
}

/// That every runner in a build's directory says it is that build, with that C compiler: a
/// runner left from an earlier build, or copied from another, would measure the wrong thing
/// under the build's name. In release's directory, runners that report no build (Go's, Java's)
/// are release's, and so is a Rust runner built by cargo with another profile than the named
/// builds' (the tests' debug); a runner that names no compiler (from before runners said it)
/// is gcc's.
pub fn check(built: Built, runners: &Runners) -> Result<()> {
    let dir = runners.dir();
    if !built.is_default() && runners.all().is_empty() {
        bail!("build `{built}` is not built: no usable runner in {} (build it: {})", dir.display(), built.command());
    }
    for runner in runners.all() {
        let file = runner.path.file_name().unwrap_or_default().to_string_lossy();
        let reported = runner.build.as_ref().map(|b| b.name.as_str());
        let wrong = match (built.build, reported) {
            (Build::Release, None) => None,
            (Build::Release, Some(name)) => {
                name.parse::<Build>().ok().filter(|&b| b != Build::Release).map(|b| format!("build `{b}`"))
            }
            (build, Some(name)) if name == build.name() => None,
            (_, Some(name)) => Some(format!("build `{name}`")),
            (_, None) => Some("build `none`".to_string()),
        };
        let compiler = runner.build.as_ref().map(|b| b.compiler_family()).filter(|c| !c.is_empty());
        let wrong = wrong.or_else(|| match (built.compiler, compiler) {
            (_, None) if runner.build.is_none() => None,
            (Compiler::Gcc, None) => None,
            (expected, reported) if reported == Some(expected.name()) => None,
            (_, reported) => Some(format!("compiled by {}", reported.unwrap_or("an unnamed C compiler"))),
        });
        if let Some(wrong) = wrong {
            bail!(
                "{file} in {} is {wrong}, not `{built}` (stale, or copied from another build): rebuild it with {}",
                dir.display(),
                built.command()
            );
        }
    }
    Ok(())
}

/// Why `id` has no runner in `built` while release has one: Go's and Java's runners are built
/// by their own toolchains, which scripts/build.sh's flags and C compiler do not reach. None
/// where the stack's release runner is a Rust one: then the build is incomplete, an error (see
/// [`missing`]).
pub fn runtime_only(release: &Runners, built: Built, id: &str) -> Option<String> {
    let runner = release.runner_of(id)?;
    let option = match (built.build, built.compiler) {
        (build, Compiler::Gcc) => format!("`--build {build}`'s flags do"),
        (Build::Release, compiler) => format!("`--compiler {compiler}` does"),
        (build, compiler) => format!("`--build {build}` and `--compiler {compiler}` do"),
    };
    runner.build.is_none().then(|| {
        format!(
            "{id}: its runner ({}) is built by its own toolchain, which {option} not reach; \
             it is measured in the release build only",
            file_name(&runner.path)
        )
    })
}

/// The stacks of `ids` that release's Rust runners hold and `built`'s runners do not: a build
/// made before a stack was added, or only in part.
pub fn missing(release: &Runners, built: Built, runners: &Runners, ids: &[String]) -> Result<()> {
    let missing: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| runners.for_pair(id, id).is_none() && runtime_only(release, built, id).is_none())
        .collect();
    if !missing.is_empty() {
        bail!(
            "build `{built}` in {} holds no runner for {} (built before they were added, or in part): \
             rebuild it with {}",
            runners.dir().display(),
            missing.join(", "),
            built.command()
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
    use crate::runners::Runner;
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
            c_compiler: "gcc 12.2.0".into(),
        })
    }

    fn gcc(build: Build) -> Built {
        Built::new(build, Compiler::Gcc)
    }

    fn runners(dir: &str, found: &[(&str, &[&str], Option<BuildInfo>)]) -> Runners {
        let info = |id: &&str| StackInfo::new(*id, "", tlsbench_harness::Capabilities::everything());
        let runner = |(name, ids, build): &(&str, &[&str], Option<BuildInfo>)| Runner {
            path: Path::new(dir).join(name),
            stacks: ids.iter().map(info).collect(),
            build: build.clone(),
            full_speed: false,
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
    fn a_compiler_is_its_own_axis_with_a_directory_of_its_own() {
        assert_eq!("clang".parse::<Compiler>(), Ok(Compiler::Clang));
        assert_eq!("icc".parse::<Compiler>(), Err("unknown C compiler `icc` (valid: gcc, clang)".to_string()));
        let clang = Built::new(Build::Release, Compiler::Clang);
        assert_eq!(
            (clang.dir_name(), clang.command()),
            ("release-clang".into(), "scripts/build.sh --build release --cc clang".into())
        );
        assert_eq!(gcc(Build::Native).dir_name(), "native");
        assert_eq!(Built::new(Build::Lto, Compiler::Clang).to_string(), "lto with clang");
        let with = |compiler: &str| built("release").map(|b| BuildInfo { c_compiler: compiler.into(), ..b });
        let clangs =
            runners("/t/builds/release-clang", &[("tlsbench-runner-openssl", &["openssl"], with("clang 14.0.6"))]);
        check(clang, &clangs).unwrap();
        // gcc's runners copied into clang's directory, or the other way round, are refused.
        let gccs = runners("/t/builds/release-clang", &[("tlsbench-runner-openssl", &["openssl"], with("gcc 12.2.0"))]);
        assert_eq!(
            check(clang, &gccs).unwrap_err().to_string(),
            "tlsbench-runner-openssl in /t/builds/release-clang is compiled by gcc, not `release with clang` \
             (stale, or copied from another build): rebuild it with scripts/build.sh --build release --cc clang"
        );
        assert!(check(gcc(Build::Release), &clangs)
            .unwrap_err()
            .to_string()
            .contains("is compiled by clang, not `release`"));
        // A runner from before runners named their compiler is gcc's; Go's names no build at all.
        check(gcc(Build::Release), &runners("/t/release", &[("tlsbench-runner-openssl", &["openssl"], with(""))]))
            .unwrap();
        let go = runners("/t/release", &[("tlsbench-runner-go", &["go"], None)]);
        let reason = runtime_only(&go, clang, "go").unwrap();
        assert!(
            reason.ends_with("which `--compiler clang` does not reach; it is measured in the release build only"),
            "{reason}"
        );
    }

    #[test]
    fn a_builds_directory_must_hold_that_build() {
        let native = runners("/t/builds/native", &[("tlsbench-runner-openssl", &["openssl"], built("native"))]);
        check(gcc(Build::Native), &native).unwrap();
        // Left from another build, or from before runners said their build.
        let stale = runners("/t/builds/native", &[("tlsbench-runner-openssl", &["openssl"], built("release"))]);
        assert_eq!(
            check(gcc(Build::Native), &stale).unwrap_err().to_string(),
            "tlsbench-runner-openssl in /t/builds/native is build `release`, not `native` \
             (stale, or copied from another build): rebuild it with scripts/build.sh --build native"
        );
        let silent = runners("/t/builds/lto", &[("tlsbench-runner-go", &["go"], None)]);
        assert!(check(gcc(Build::Lto), &silent)
            .unwrap_err()
            .to_string()
            .starts_with("tlsbench-runner-go in /t/builds/lto is build `none`, not `lto`"));
        let empty = runners("/t/builds/lto", &[]);
        assert_eq!(
            check(gcc(Build::Lto), &empty).unwrap_err().to_string(),
            "build `lto` is not built: no usable runner in /t/builds/lto (build it: scripts/build.sh --build lto)"
        );
        // Release's directory: Go's and Java's runners say no build, cargo's test builds say
        // their profile; a named build's runner there is refused.
        let release = runners(
            "/t/release",
            &[("tlsbench-runner-openssl", &["openssl"], built("debug")), ("tlsbench-runner-go", &["go"], None)],
        );
        check(gcc(Build::Release), &release).unwrap();
        let copied = runners("/t/release", &[("tlsbench-runner-openssl", &["openssl"], built("native"))]);
        assert!(check(gcc(Build::Release), &copied)
            .unwrap_err()
            .to_string()
            .contains("is build `native`, not `release`"));
    }

    #[test]
    fn a_reply_of_another_build_is_refused() {
        check_reply(Build::Native, Some("native")).unwrap();
        assert_eq!(
            check_reply(Build::Native, Some("release")).unwrap_err(),
            "the runner is build `release`, not `native`; result refused"
        );
        // Release's runners say their cargo profile under test; Go's and Java's say nothing.
        check_reply(Build::Release, Some("debug")).unwrap();
        check_reply(Build::Lto, None).unwrap();
    }

    #[test]
    fn a_build_and_a_compiler_label_the_stack_and_keep_its_files_apart() {
        let built = |build, compiler| Built::new(build, compiler);
        let default = built(Build::Release, Compiler::Gcc);
        assert_eq!((label("openssl", default), file_suffix(default)), ("openssl".to_string(), String::new()));
        let mut suffixes = std::collections::HashSet::new();
        for build in Build::ALL {
            for compiler in Compiler::ALL {
                let (label, suffix) = (label("openssl", built(build, compiler)), file_suffix(built(build, compiler)));
                assert_eq!(label.contains(&format!("[{build}]")), build != Build::Release, "{label}");
                assert_eq!(label.contains(&format!("[{compiler}]")), compiler != Compiler::Gcc, "{label}");
                assert!(suffixes.insert(suffix.clone()), "{suffix:?} names two builds' files");
            }
        }
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
            runtime_only(&release, gcc(Build::Native), "go").as_deref(),
            Some(
                "go: its runner (tlsbench-runner-go) is built by its own toolchain, \
                 which `--build native`'s flags do not reach; it is measured in the release build only"
            )
        );
        assert_eq!(runtime_only(&release, gcc(Build::Native), "openssl"), None);
        missing(&release, gcc(Build::Native), &native, &["openssl".into(), "go".into()]).unwrap();
        assert_eq!(
            missing(&release, gcc(Build::Native), &native, &["rustls-ring".into()]).unwrap_err().to_string(),
            "build `native` in /t/builds/native holds no runner for rustls-ring \
             (built before they were added, or in part): rebuild it with scripts/build.sh --build native"
        );
    }
}
