//! The runners, which say themselves (`list`) which stacks they hold and which versions they
//! run: where they are, asking each, and which one measures a stack or a pair.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tlsbench_harness::build::BuildInfo;
use tlsbench_harness::protocol::{ListReply, StackInfo, PROTOCOL_VERSION};

use crate::executor;
use crate::stacks::{all_ids, known, opt_in, owns, parse_id, split_release};

/// Where the runner binaries are: `$TLSBENCH_RUNNER_DIR`, else beside the tlsbench binary.
pub fn runner_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("TLSBENCH_RUNNER_DIR") {
        return Ok(dir.into());
    }
    let exe = std::env::current_exe().context("locating the tlsbench binary")?;
    Ok(exe.parent().context("the tlsbench binary has no parent directory")?.to_path_buf())
}

/// Where the runners of stacks at other releases are: `$TLSBENCH_RELEASES_DIR`, else
/// `versions/` beside the release runners' directory (target/versions for target/release), a
/// directory per `ID@RELEASE` (docs/versions.md).
pub fn releases_dir(release: &Path) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("TLSBENCH_RELEASES_DIR") {
        return Ok(dir.into());
    }
    let parent = release.parent().with_context(|| format!("{} has no parent directory", release.display()))?;
    Ok(parent.join("versions"))
}

/// What the runner binaries are called: `tlsbench-runner-FAMILY`.
const RUNNER_PREFIX: &str = "tlsbench-runner-";

/// A runner binary and the stacks its `list` reply names.
#[derive(Clone, Debug)]
pub struct Runner {
    pub path: PathBuf,
    pub stacks: Vec<StackInfo>,
    /// The build it says it is (`scripts/build.sh --build NAME`); None from runners built by
    /// their own toolchains (Go's, Java's).
    pub build: Option<BuildInfo>,
    /// Whether its `sample` takes `--full-speed` (the Rust runners' does: tlsbench_harness::speed).
    pub full_speed: bool,
}

impl Runner {
    fn holds(&self, id: &str) -> bool {
        self.stacks.iter().any(|s| s.id == id)
    }
}

/// The runners and the stacks each holds, as their `list` replies say: the one place that
/// says which runner holds which stack, so that a stack added to a runner's `family!` is
/// measured by it. Libraries that cannot share a process are in different runners; a stack may
/// be in several (rustls, with no C symbols to clash).
#[derive(Clone, Debug)]
pub struct Runners {
    /// Broadest first: a pair that several runners hold is measured by the one with the most
    /// stacks, and a stack is described by it (the same runner every time).
    runners: Vec<Runner>,
    /// Runner binaries that could not be used, with why (it failed to list its stacks, or
    /// speaks another protocol version): their stacks are missing, and messages say why.
    unusable: Vec<(PathBuf, String)>,
    /// Where they were looked for, for messages.
    dir: PathBuf,
}

impl Runners {
    /// The runners in [`runner_dir`], asked for their stacks, with those of the stacks built at
    /// other releases ([`Runners::with_releases`]).
    pub fn find() -> Result<Runners> {
        Runners::discover(&runner_dir()?)?.with_releases()
    }

    /// These runners and those in each directory of [`releases_dir`]: a stack at another
    /// release of its library, `ID@RELEASE`, has runners of its own (its library linked
    /// statically, so that it never meets the system's), which list it under that id. Stacks
    /// such a runner lists without a release are left out: they are the release directory's.
    pub fn with_releases(mut self) -> Result<Runners> {
        let Ok(entries) = std::fs::read_dir(releases_dir(&self.dir)?) else { return Ok(self) };
        let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()).collect();
        dirs.sort();
        for dir in dirs {
            let found = Runners::discover(&dir)?;
            self.unusable.extend(found.unusable);
            for mut runner in found.runners {
                runner.stacks.retain(|s| split_release(&s.id).1.is_some());
                if !runner.stacks.is_empty() {
                    self.runners.push(runner);
                }
            }
        }
        let dir = self.dir.clone();
        Ok(Runners { unusable: self.unusable, ..Runners::new(self.runners, &dir) })
    }

    /// Every runner binary (`tlsbench-runner-*`) in `dir`, asked for its stacks. The runners
    /// are asked at once (a JVM takes a while to start). One that cannot be used is set aside
    /// with its reason, so that a broken or stale runner costs its own stacks, not every command.
    pub fn discover(dir: &Path) -> Result<Runners> {
        let entries = std::fs::read_dir(dir).with_context(|| format!("looking for runners in {}", dir.display()))?;
        let mut paths: Vec<PathBuf> =
            entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| is_runner(p)).collect();
        paths.sort();
        let listed: Vec<Result<ListReply>> = std::thread::scope(|scope| {
            let asking: Vec<_> = paths.iter().map(|path| scope.spawn(move || list(path))).collect();
            asking
                .into_iter()
                .map(|thread| thread.join().unwrap_or_else(|_| Err(anyhow::anyhow!("listing panicked"))))
                .collect()
        });
        let (mut runners, mut unusable) = (Vec::new(), Vec::new());
        for (path, listed) in paths.into_iter().zip(listed) {
            match listed {
                Ok(reply) => {
                    let ListReply { stacks, build, full_speed, .. } = reply;
                    runners.push(Runner { path, stacks, build, full_speed })
                }
                Err(e) => unusable.push((path, format!("{e:#}"))),
            }
        }
        let mut runners = Runners::new(runners, dir);
        runners.unusable = unusable;
        Ok(runners)
    }

    /// Runners as their `list` replies described them.
    pub fn new(mut runners: Vec<Runner>, dir: &Path) -> Runners {
        runners.sort_by(|a, b| b.stacks.len().cmp(&a.stacks.len()).then_with(|| a.path.cmp(&b.path)));
        Runners { runners, unusable: Vec::new(), dir: dir.to_path_buf() }
    }

    /// Every known stack that some runner holds, in `KNOWN`'s order: what a command measures
    /// when no stack is named. With them, a note naming the known stacks that no runner holds
    /// and why, for stderr.
    pub fn available(&self) -> (Vec<String>, Option<String>) {
        let (held, missing): (Vec<&str>, Vec<&str>) =
            all_ids().into_iter().partition(|id| self.for_pair(id, id).is_some());
        let missing: Vec<&str> = missing.into_iter().filter(|id| opt_in(id).is_none()).collect();
        let note = (!missing.is_empty()).then(|| {
            let why = match self.unusable.is_empty() {
                true => "no runner holds them (build all runners: scripts/build.sh)".to_string(),
                false => self.unusable_runners(),
            };
            format!("not measured: {}: {why}", missing.join(", "))
        });
        (held.into_iter().map(String::from).collect(), note)
    }

    /// The stacks a command takes when none is named ([`Runners::available`]); the note goes
    /// to stderr.
    pub fn default_stacks(&self) -> Vec<String> {
        let (ids, note) = self.available();
        if let Some(note) = note {
            crate::output::stderr::line(note);
        }
        ids
    }

    /// The runner that can measure `client` against `server` in one process, if any.
    pub fn for_pair(&self, client: &str, server: &str) -> Option<&Path> {
        self.runner_for_pair(client, server).map(|r| r.path.as_path())
    }

    /// The runner that measures a pair in one process (see [`Runners::for_pair`]).
    pub fn runner_for_pair(&self, client: &str, server: &str) -> Option<&Runner> {
        self.runners.iter().find(|r| r.holds(client) && r.holds(server))
    }

    /// The runner that describes `id` and measures its side of a split pair.
    pub fn of(&self, id: &str) -> Result<&Path> {
        match self.for_pair(id, id) {
            Some(path) => Ok(path),
            None => bail!(
                "no runner in {} holds stack `{id}` (runners found: {}{}; {})",
                self.dir.display(),
                self.names(),
                match self.unusable.is_empty() {
                    true => String::new(),
                    false => format!("; {}", self.unusable_runners()),
                },
                match opt_in(id) {
                    Some(build) => format!("its runner is built only on request: {build}"),
                    None => "build all runners: scripts/build.sh".to_string(),
                }
            ),
        }
    }

    /// The description of `id` from the runner that describes it (see [`Runners::of`]).
    pub fn info(&self, id: &str) -> Option<&StackInfo> {
        self.runners.iter().flat_map(|r| &r.stacks).find(|s| s.id == id)
    }

    /// The descriptions of `ids` (their runners' `list` entries), each checked to report its
    /// own library.
    pub fn infos(&self, ids: &[String]) -> Result<Vec<StackInfo>> {
        let mut wanted = Vec::new();
        for id in ids {
            known(id).with_context(|| parse_id(id).unwrap_err())?;
            self.of(id)?;
            let info = self.info(id).expect("`of` found a runner that holds the stack");
            if !owns(id, &info.library) {
                bail!("stack `{id}` reports library `{}`, which is not its own; refusing to measure it", info.library);
            }
            wanted.push(info.clone());
        }
        Ok(wanted)
    }

    /// The stacks at other releases that runners hold (`ID@RELEASE`), in the order found: not
    /// measured unless named, and listed by `tlsbench list stacks`.
    pub fn releases(&self) -> Vec<String> {
        let ids = self.runners.iter().flat_map(|r| &r.stacks).map(|s| s.id.clone());
        crate::order::first_seen(ids.filter(|id| split_release(id).1.is_some()))
    }

    /// The runners found, broadest first.
    pub fn all(&self) -> &[Runner] {
        &self.runners
    }

    /// Where they were looked for.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The runner that describes `id` (see [`Runners::of`]), if any.
    pub fn runner_of(&self, id: &str) -> Option<&Runner> {
        self.runners.iter().find(|r| r.holds(id))
    }

    /// `NAME is unusable: WHY` for each runner set aside, joined with "; ".
    /// The runners whose `list` failed, with the reason.
    pub fn unusable(&self) -> impl Iterator<Item = (&Path, &str)> {
        self.unusable.iter().map(|(path, why)| (path.as_path(), why.as_str()))
    }

    fn unusable_runners(&self) -> String {
        self.unusable
            .iter()
            .map(|(path, why)| format!("{} is unusable: {why}", file_name(path)))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn names(&self) -> String {
        match self.runners.is_empty() {
            true => "none".to_string(),
            false => self.runners.iter().map(|r| file_name(&r.path)).collect::<Vec<_>>().join(", "),
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap_or_default().to_string_lossy().into_owned()
}

/// A runner's stacks and build, as its `list` reply says; an error when it cannot say, speaks
/// another version of the protocol, or holds a stack tlsbench does not know.
fn list(path: &Path) -> Result<ListReply> {
    let output = executor::call(path, &["list"], LIST_TIME_LIMIT).context("asking it for its stacks")?;
    let with_stderr = |what: String| match &output.stderr {
        Some(printed) => format!("{what} (stderr: {printed})"),
        None => what,
    };
    let reply: serde_json::Value = serde_json::from_str(&output.stdout)
        .map_err(|e| anyhow::anyhow!(with_stderr(format!("its stack list is unreadable: {e}"))))?;
    match reply.get("protocol_version").and_then(serde_json::Value::as_u64) {
        Some(v) if v == PROTOCOL_VERSION as u64 => {}
        Some(v) => bail!(
            "it speaks runner protocol {v}, this tlsbench speaks {PROTOCOL_VERSION} \
             (rebuild it: scripts/build.sh)"
        ),
        None => bail!(
            "its stack list names no protocol_version \
             (this tlsbench speaks runner protocol {PROTOCOL_VERSION}; rebuild it: scripts/build.sh)"
        ),
    }
    let reply: ListReply = serde_json::from_value(reply)
        .map_err(|e| anyhow::anyhow!(with_stderr(format!("its stack list is unreadable: {e}"))))?;
    if let Some(stack) = reply.stacks.iter().find(|s| known(&s.id).is_none()) {
        bail!(
            "it holds stack `{}`, which tlsbench does not know: \
             add it to KNOWN in crates/tlsbench/src/stacks.rs with the library it reports",
            stack.id
        );
    }
    Ok(reply)
}

/// How long a runner may take to list its stacks.
const LIST_TIME_LIMIT: Duration = Duration::from_secs(60);

/// A runner binary: an executable file named `tlsbench-runner-NAME`, not the build's `.d`
/// and other files beside it.
fn is_runner(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let executable = path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    name.starts_with(RUNNER_PREFIX) && !name.contains('.') && executable
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsbench_harness::Capabilities;

    #[test]
    fn runners_of_other_releases_add_their_stacks_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let release = dir.path().join("release");
        let version = dir.path().join("versions").join("openssl@3.5");
        let ids: [(&Path, &[&str]); 2] =
            [(&release, &["openssl", "rustls-ring"]), (&version, &["openssl@3.5", "openssl"])];
        for (dir, ids) in ids {
            // A runner that lists `ids`: a script printing the reply.
            std::fs::create_dir_all(dir).unwrap();
            let stacks =
                ids.iter().map(|id| StackInfo::new(*id, "OpenSSL 3.5.4", Capabilities::everything())).collect();
            let reply = ListReply { protocol_version: PROTOCOL_VERSION, stacks, build: None, full_speed: false };
            std::fs::write(dir.join("list.json"), serde_json::to_string(&reply).unwrap()).unwrap();
            let path = dir.join("tlsbench-runner-fake");
            std::fs::write(&path, format!("#!/bin/sh\ncat '{}'\n", dir.join("list.json").display())).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        let runners = Runners::discover(&release).unwrap().with_releases().unwrap();
        assert_eq!(runners.of("openssl").unwrap(), release.join("tlsbench-runner-fake"));
        assert_eq!(runners.of("openssl@3.5").unwrap(), version.join("tlsbench-runner-fake"));
        assert!(runners.of("openssl@3.6").is_err());
        assert_eq!(runners.releases(), ["openssl@3.5"]);
    }

    fn runner(path: &str, ids: &[&str]) -> Runner {
        let info = |id: &&str| StackInfo::new(*id, "", tlsbench_harness::Capabilities::everything());
        Runner { path: path.into(), stacks: ids.iter().map(info).collect(), build: None, full_speed: false }
    }

    #[test]
    fn the_runners_lists_say_which_runner_measures_a_pair() {
        let runners = Runners::new(
            vec![
                runner("/r/tlsbench-runner-boringssl", &["boringssl", "rustls-ring"]),
                runner("/r/tlsbench-runner-openssl", &["rustls-ring", "openssl", "gnutls"]),
            ],
            Path::new("/r"),
        );
        assert_eq!(runners.for_pair("rustls-ring", "openssl"), Some(Path::new("/r/tlsbench-runner-openssl")));
        assert_eq!(runners.for_pair("boringssl", "rustls-ring"), Some(Path::new("/r/tlsbench-runner-boringssl")));
        assert_eq!(runners.for_pair("openssl", "boringssl"), None);
        // Held by both: the broadest runner, whatever the order the directory listed them in.
        assert_eq!(runners.of("rustls-ring").unwrap(), Path::new("/r/tlsbench-runner-openssl"));
        let missing = runners.of("bertie").unwrap_err().to_string();
        assert_eq!(
            missing,
            "no runner in /r holds stack `bertie` (runners found: tlsbench-runner-openssl, tlsbench-runner-boringssl; \
             build all runners: scripts/build.sh)"
        );
    }

    #[test]
    fn an_opt_in_stack_without_its_runner_is_no_note_but_naming_it_says_how_to_build_it() {
        let all_but_opt_in: Vec<&str> = all_ids().into_iter().filter(|id| opt_in(id).is_none()).collect();
        let runners = Runners::new(vec![runner("/r/tlsbench-runner-all", &all_but_opt_in)], Path::new("/r"));
        let (held, note) = runners.available();
        assert_eq!(held, all_but_opt_in);
        assert_eq!(note, None);
        for fips in ["rustls-aws-lc-rs-fips", "aws-lc-fips"] {
            let err = runners.of(fips).unwrap_err().to_string();
            assert!(err.ends_with("its runner is built only on request: scripts/build.sh --fips)"), "{err}");
        }
        let err = runners.of("wolfssl").unwrap_err().to_string();
        assert!(err.ends_with("its runner is built only on request: scripts/build.sh --wolfssl)"), "{err}");
        // Another stack missing is still noted.
        let runners = Runners::new(vec![runner("/r/tlsbench-runner-all", &all_but_opt_in[1..])], Path::new("/r"));
        assert!(runners.available().1.is_some_and(|note| note.starts_with("not measured: rustls-aws-lc-rs: ")));
    }

    #[test]
    fn only_executable_runner_files_are_runners() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for (name, mode) in [
            ("tlsbench-runner-x", 0o755),
            ("tlsbench-runner-x.d", 0o644),
            ("tlsbench-runner-y", 0o644),
            ("tlsbench", 0o755),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, "").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let mut found: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| is_runner(p))
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        found.sort();
        assert_eq!(found, ["tlsbench-runner-x"]);
    }
}
