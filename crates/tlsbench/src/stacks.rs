//! The stacks tlsbench knows and how to recognise each one's library in what a runner reports;
//! and the runners, which say themselves (`list`) which stacks they hold and which versions
//! they run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tlsbench_harness::build::BuildInfo;
use tlsbench_harness::protocol::{ListReply, StackInfo, PROTOCOL_VERSION};

use crate::executor;

pub struct KnownStack {
    pub id: &'static str,
    /// Whether a reported library string is this stack's own; a result whose library is not
    /// is refused (linking two libcrypto's can silently route one's calls into the other).
    pub owns: fn(&str) -> bool,
}

pub const KNOWN: &[KnownStack] = &[
    KnownStack {
        id: "rustls-aws-lc-rs",
        owns: |library| {
            library.starts_with("rustls 0.23.") && library.contains("(aws-lc-rs ") && !library.contains(", FIPS)")
        },
    },
    KnownStack { id: "rustls-ring", owns: |library| library.starts_with("rustls 0.23.") && library.contains("(ring ") },
    // On AWS-LC's FIPS module, in a runner of its own (crates/runner-fips, opt-in).
    KnownStack {
        id: "rustls-aws-lc-rs-fips",
        owns: |library| {
            library.starts_with("rustls 0.23.") && library.contains("(aws-lc-rs ") && library.ends_with(", FIPS)")
        },
    },
    KnownStack {
        id: "openssl",
        owns: |library| library.starts_with("OpenSSL 3.") || library.starts_with("OpenSSL 4."),
    },
    // Not rust-openssl's plain "BoringSSL": that is what OpenSSL's calls report when captured.
    KnownStack { id: "boringssl", owns: |library| library.starts_with("BoringSSL (API version ") },
    // AWS-LC's own version string and the aws-lc-sys release that builds it (crates/runner-aws-lc):
    // not rust-openssl's plain "AWS-LC 1.73.0", nor aws-lc-rs's AWS-LC under rustls or s2n-tls,
    // nor the FIPS module's "AWS-LC FIPS 4.2.0".
    KnownStack {
        id: "aws-lc",
        owns: |library| {
            library.starts_with("AWS-LC ") && !library.starts_with("AWS-LC FIPS ") && library.contains(" (aws-lc-sys ")
        },
    },
    // AWS-LC's libssl on its FIPS module: the module's own string, and aws-lc-fips-sys (crates/runner-fips).
    KnownStack {
        id: "aws-lc-fips",
        owns: |library| library.starts_with("AWS-LC FIPS ") && library.contains(" (aws-lc-fips-sys "),
    },
    KnownStack { id: "gnutls", owns: |library| library.starts_with("GnuTLS 3.") },
    // LibreTLS reports no version at runtime: the adapter compiles in the one it was built against.
    KnownStack { id: "libtls", owns: |library| library.starts_with("LibreTLS ") },
    // s2n-tls reports no version at runtime: the adapter compiles in the crate's. The variant
    // with receive buffering says so in its library string.
    KnownStack {
        id: "s2n-tls",
        owns: |library| library.starts_with("s2n-tls ") && !library.contains("(recv buffering)"),
    },
    KnownStack {
        id: "s2n-tls-recvbuf",
        owns: |library| library.starts_with("s2n-tls ") && library.ends_with(" (recv buffering)"),
    },
    // Bertie reports no version at runtime either; its string also says what it does not verify.
    KnownStack { id: "bertie", owns: |library| library.starts_with("Bertie ") },
    // GPL-only, so in a runner of its own (crates/runner-wolfssl, opt-in).
    KnownStack { id: "wolfssl", owns: |library| library.starts_with("wolfSSL 5.") },
    // Runners in other languages (runners/): Go's crypto/tls, the JDK's JSSE, and Netty's
    // OpenSSL engine on tcnative, which must report the BoringSSL it really loaded.
    KnownStack { id: "go", owns: |library| library.starts_with("Go crypto/tls go1.") },
    KnownStack { id: "jsse", owns: |library| library.starts_with("JSSE ") },
    KnownStack {
        id: "netty-tcnative",
        owns: |library| library.starts_with("netty-tcnative") && library.contains("BoringSSL"),
    },
];

/// Libraries of a stack's releases before those its default runner can link: owned only by an
/// `ID@RELEASE` that names the release (`OpenSSL 1.1.1w  11 Sep 2023` is `openssl@1.1.1`'s), never
/// by the plain `ID` (`openssl` is the system's OpenSSL 3).
const OLDER_RELEASES: &[KnownStack] =
    &[KnownStack { id: "openssl", owns: |library| library.starts_with("OpenSSL 1.1.1") }];

/// Stacks whose runner a plain build leaves out (a long C build), with how to build it: their
/// absence is no note of its own, and a command that names one says how to get it.
pub const OPT_IN: &[(&str, &str)] = &[
    ("rustls-aws-lc-rs-fips", "scripts/build.sh --fips"),
    ("aws-lc-fips", "scripts/build.sh --fips"),
    ("wolfssl", "scripts/build.sh --wolfssl"),
];

fn opt_in(id: &str) -> Option<&'static str> {
    OPT_IN.iter().find(|(opt, _)| *opt == id).map(|(_, build)| *build)
}

/// Parses a stack id, naming the valid ones if it is unknown.
pub fn parse_id(id: &str) -> Result<String, String> {
    match known(id) {
        Some(_) => Ok(id.to_string()),
        None => Err(format!(
            "unknown stack `{id}` (valid: {}; and ID@RELEASE for a stack at another release of its library, \
             once built: docs/versions.md)",
            all_ids().join(", ")
        )),
    }
}

/// The stack of `id`: a known stack's, or for `ID@RELEASE` (a stack at another release of its
/// library, e.g. `openssl@3.5`) the stack `ID`'s.
pub fn known(id: &str) -> Option<&'static KnownStack> {
    let (base, release) = split_release(id);
    if release.is_some_and(|r| !is_release(r)) {
        return None;
    }
    KNOWN.iter().find(|s| s.id == base)
}

/// `ID@RELEASE` as `(ID, Some(RELEASE))`; any other id as `(id, None)`.
pub fn split_release(id: &str) -> (&str, Option<&str>) {
    match id.split_once('@') {
        Some((base, release)) => (base, Some(release)),
        None => (id, None),
    }
}

/// A release as users write it: `3.5`, `3.5.4`, `4.0.0-beta1`.
fn is_release(release: &str) -> bool {
    release.starts_with(|c: char| c.is_ascii_digit())
        && release.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}

/// Whether `library`, as a runner reports it, is `id`'s own: its stack's library, and for
/// `ID@RELEASE` that release of it (`OpenSSL 3.5.4 30 Sep 2025` is `openssl@3.5`'s and
/// `openssl@3.5.4`'s, not `openssl@3.6`'s). Go names its releases `go1.27.3`
/// (`Go crypto/tls go1.27.3` is `go@1.27`'s). A build from a maintainer's tree is labelled
/// `VERSION+COMMIT`: its library names both, as one word or two (`OpenSSL 3.6.0-dev (checkout
/// 1a2b3c4d5e from /src/openssl)` is `openssl@3.6.0-dev+1a2b3c4d5e`'s). OpenSSL before 3.0 names
/// its releases by a letter after the line (`1.1.1w` is `openssl@1.1.1`'s), and such a library is
/// only an `ID@RELEASE`'s ([`OLDER_RELEASES`]).
pub fn owns(id: &str, library: &str) -> bool {
    let Some(stack) = known(id) else { return false };
    let (base, release) = split_release(id);
    let words: Vec<&str> = library
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ','))
        .map(|word| if base == "go" { word.strip_prefix("go").unwrap_or(word) } else { word })
        .collect();
    let names = |release: &str| {
        words
            .iter()
            .any(|word| *word == release || word.strip_prefix(release).is_some_and(|rest| rest.starts_with('.')))
            || (base == "openssl" && words.iter().any(|word| is_lettered_release(word, release)))
    };
    let release_matches = match release {
        None => true,
        Some(release) => {
            names(release)
                || release.split_once('+').is_some_and(|(version, commit)| names(version) && words.contains(&commit))
        }
    };
    let older = || release.is_some() && OLDER_RELEASES.iter().any(|older| older.id == base && (older.owns)(library));
    ((stack.owns)(library) || older()) && release_matches
}

/// Whether `word` is a lettered release of OpenSSL's line `release`: `1.1.1w` of `1.1.1`.
fn is_lettered_release(word: &str, release: &str) -> bool {
    word.strip_prefix(release).is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_lowercase()))
}

pub fn all_ids() -> Vec<&'static str> {
    KNOWN.iter().map(|s| s.id).collect()
}

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
        let listed: Vec<Result<(Vec<StackInfo>, Option<BuildInfo>)>> = std::thread::scope(|scope| {
            let asking: Vec<_> = paths.iter().map(|path| scope.spawn(move || list(path))).collect();
            asking
                .into_iter()
                .map(|thread| thread.join().unwrap_or_else(|_| Err(anyhow::anyhow!("listing panicked"))))
                .collect()
        });
        let (mut runners, mut unusable) = (Vec::new(), Vec::new());
        for (path, listed) in paths.into_iter().zip(listed) {
            match listed {
                Ok((stacks, build)) => runners.push(Runner { path, stacks, build }),
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
        self.runners.iter().find(|r| r.holds(client) && r.holds(server)).map(|r| r.path.as_path())
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
fn list(path: &Path) -> Result<(Vec<StackInfo>, Option<BuildInfo>)> {
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
    Ok((reply.stacks, reply.build))
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
    fn each_stack_owns_only_its_own_library() {
        let libraries = [
            "rustls 0.23.46 (aws-lc-rs 1.19.0)",
            "rustls 0.23.46 (ring 0.17.14)",
            "rustls 0.23.46 (aws-lc-rs 1.19.0, FIPS)",
            "OpenSSL 3.0.19 27 Jan 2026",
            "BoringSSL (API version 44, boring-sys 5.4.0)",
            "AWS-LC 1.73.0 (aws-lc-sys 0.41.0)",
            "AWS-LC FIPS 4.2.0 (aws-lc-fips-sys 0.14.4)",
            "GnuTLS 3.7.9",
            "LibreTLS 3.7.0",
            "s2n-tls 0.3.47",
            "s2n-tls 0.3.47 (recv buffering)",
            "Bertie 0.1.0-pre.2 (no chain or host name verification)",
            "wolfSSL 5.9.4 (wolfssl-sys 5.3.0; configure: --enable-tls13)",
            "Go crypto/tls go1.26.8",
            "JSSE (SunJSSE 17, OpenJDK 17.0.15+6-Debian-1deb12u1)",
            "netty-tcnative-boringssl-static 2.0.74.Final (BoringSSL, netty 4.1.128.Final)",
        ];
        assert_eq!(libraries.len(), KNOWN.len(), "one library string per known stack");
        for (stack, own) in KNOWN.iter().zip(libraries) {
            // What rust-openssl reports on BoringSSL or AWS-LC alone, AWS-LC's own
            // OpenSSL-compatible string (OPENSSL_VERSION_TEXT), and the FIPS module's and
            // aws-lc-sys's names crossed (the FIPS module is not `aws-lc`, nor the plain one
            // `aws-lc-fips`).
            let bare = [
                "BoringSSL",
                "OpenSSL 1.1.1w",
                "AWS-LC 1.73.0",
                "OpenSSL 1.1.1 (compatible; AWS-LC 1.73.0)",
                "AWS-LC FIPS 4.2.0",
                "AWS-LC FIPS 4.2.0 (aws-lc-sys 0.41.0)",
                "AWS-LC 1.73.0 (aws-lc-fips-sys 0.14.4)",
            ];
            for library in libraries.iter().chain(&bare) {
                assert_eq!((stack.owns)(library), *library == own, "{} owns {library}?", stack.id);
            }
        }
    }

    #[test]
    fn a_stack_at_another_release_is_its_stack_and_owns_only_that_release() {
        assert_eq!(parse_id("openssl@3.5"), Ok("openssl@3.5".to_string()));
        assert_eq!(known("openssl@4.0.0-beta1").map(|s| s.id), Some("openssl"));
        for bad in ["openssl@", "openssl@next", "openssl@3.5/x", "no-such-tls@1.0"] {
            assert!(parse_id(bad).unwrap_err().starts_with(&format!("unknown stack `{bad}`")), "{bad}");
        }
        let library = "OpenSSL 3.5.4 30 Sep 2025";
        assert!(owns("openssl@3.5", library) && owns("openssl@3.5.4", library) && owns("openssl", library));
        assert!(!owns("openssl@3.6", library) && !owns("openssl@3.5.40", library));
        // A release names its line: 3 is any 3.x.
        assert!(owns("openssl@3", library));
        assert!(!owns("openssl@3.5", "BoringSSL (API version 19)"));
        assert!(owns("openssl@4.0", "OpenSSL 4.0.0 14 Oct 2026"));
        // Go's releases are goX.Y.Z (runtime.Version()); a local tree's label is in its library.
        let go = "Go crypto/tls go1.27.3";
        assert!(owns("go@1.27", go) && owns("go@1.27.3", go) && owns("go", go));
        assert!(!owns("go@1.26", go) && !owns("go@1.2", go) && !owns("go@1.27.30", go));
        assert!(!owns("openssl@1.27", "OpenSSL go1.27.3"), "only Go's releases are goX.Y");
        let local = "Go crypto/tls go1.27-devel+abcdef1234 (/src/go, devel go1.27-abcdef1234 Mon Jan 5 2026)";
        assert!(owns("go@1.27-devel+abcdef1234", local) && !owns("go@1.27-devel+0123456789", local));
        // A tree's VERSION+COMMIT, as one word (rustls's) or as two (OpenSSL's own string, then
        // the checkout): both must be there.
        let rustls = "rustls 0.23.46+1a2b3c4d5e (aws-lc-rs 1.19.0) from /src/rustls";
        assert!(
            owns("rustls-aws-lc-rs@0.23.46+1a2b3c4d5e", rustls) && !owns("rustls-aws-lc-rs@0.23.46+0a0a0a0a0a", rustls)
        );
        let tree = "OpenSSL 3.6.0-dev  (checkout 1a2b3c4d5e from /src/openssl)";
        assert!(owns("openssl@3.6.0-dev+1a2b3c4d5e", tree) && owns("openssl@3.6", tree));
        assert!(!owns("openssl@3.6.0-dev+0a0a0a0a0a", tree) && !owns("openssl@3.7.0-dev+1a2b3c4d5e", tree));
        assert!(!owns("openssl@3.6.0-dev+1a2b3c4d5e", "OpenSSL 3.6.0-dev "), "a release is not the tree");
        assert!(owns("go@1.26.8", "Go crypto/tls go1.26.8 (/usr/local/go)"));
    }

    #[test]
    fn openssl_1_1_1_is_only_a_release_that_names_it() {
        let library = "OpenSSL 1.1.1w  11 Sep 2023";
        assert!(owns("openssl@1.1.1", library) && owns("openssl@1.1.1w", library) && owns("openssl@1.1", library));
        // Not the plain stack (the system's 3.x), nor another release, nor another letter.
        assert!(!owns("openssl", library) && !owns("openssl@3", library) && !owns("openssl@3.5", library));
        assert!(!owns("openssl@1.1.1v", library) && !owns("openssl@1.1.0", library));
        // 1.1.1 owns no 3.x library, and no other stack owns 1.1.1's library at any release.
        assert!(!owns("openssl@1.1.1", "OpenSSL 3.0.19 27 Jan 2026"));
        assert!(!owns("boringssl@1.1.1", library) && !owns("libtls@1.1.1", library));
        // The letters belong to OpenSSL's releases alone.
        assert!(!owns("rustls-ring@0.23.2", "rustls 0.23.2a (ring 0.17.14)"));
    }

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
            let reply = ListReply { protocol_version: PROTOCOL_VERSION, stacks, build: None };
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
        Runner { path: path.into(), stacks: ids.iter().map(info).collect(), build: None }
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

    #[test]
    fn an_unknown_id_names_the_valid_ones() {
        assert_eq!(parse_id("openssl"), Ok("openssl".to_string()));
        assert_eq!(parse_id("gnutls"), Ok("gnutls".to_string()));
        let expected = concat!(
            "unknown stack `no-such-tls` (valid: rustls-aws-lc-rs, rustls-ring, rustls-aws-lc-rs-fips, openssl, ",
            "boringssl, aws-lc, aws-lc-fips, gnutls, libtls, s2n-tls, s2n-tls-recvbuf, bertie, wolfssl, go, jsse, ",
            "netty-tcnative; ",
            "and ID@RELEASE for a stack at another release of its library, once built: docs/versions.md)",
        );
        assert_eq!(parse_id("no-such-tls"), Err(expected.to_string()));
    }
}
