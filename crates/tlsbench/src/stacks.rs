//! The stacks tlsbench knows: which runner binary links each, and how to recognise its library
//! in what the runner reports. The runners themselves say which version they run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tlsbench_harness::protocol::StackInfo;

use crate::executor;

pub struct KnownStack {
    pub id: &'static str,
    /// Whether a reported library string is this stack's own; a result whose library is not
    /// is refused (linking two libcrypto's can silently route one's calls into the other).
    pub owns: fn(&str) -> bool,
}

pub const KNOWN: &[KnownStack] = &[
    KnownStack { id: "rustls-aws-lc-rs", owns: |library| library.starts_with("rustls 0.23.") && library.contains("(aws-lc-rs ") },
    KnownStack { id: "rustls-ring", owns: |library| library.starts_with("rustls 0.23.") && library.contains("(ring ") },
    KnownStack { id: "openssl", owns: |library| library.starts_with("OpenSSL 3.") },
    // Not rust-openssl's plain "BoringSSL": that is what OpenSSL's calls report when captured.
    KnownStack { id: "boringssl", owns: |library| library.starts_with("BoringSSL (API version ") },
    KnownStack { id: "gnutls", owns: |library| library.starts_with("GnuTLS 3.") },
    // LibreTLS reports no version at runtime: the adapter compiles in the one it was built against.
    KnownStack { id: "libtls", owns: |library| library.starts_with("LibreTLS ") },
    // s2n-tls reports no version at runtime: the adapter compiles in the crate's. The variant
    // with receive buffering says so in its library string.
    KnownStack { id: "s2n-tls", owns: |library| library.starts_with("s2n-tls ") && !library.contains("(recv buffering)") },
    KnownStack { id: "s2n-tls-recvbuf", owns: |library| library.starts_with("s2n-tls ") && library.ends_with(" (recv buffering)") },
    // Bertie reports no version at runtime either; its string also says what it does not verify.
    KnownStack { id: "bertie", owns: |library| library.starts_with("Bertie ") },
];

/// A runner binary and the stacks linked into it. Libraries that cannot share a process live
/// in different families; a stack may be in several (rustls, with no C symbols to clash).
pub struct Family {
    pub runner: &'static str,
    pub stacks: &'static [&'static str],
}

pub const FAMILIES: &[Family] = &[
    // First: the rustls stacks are described and measured with each other by this runner.
    Family { runner: "tlsbench-runner-openssl", stacks: &["rustls-aws-lc-rs", "rustls-ring", "openssl", "gnutls", "libtls", "s2n-tls", "s2n-tls-recvbuf", "bertie"] },
    // BoringSSL's unprefixed symbols would capture the system libssl's: a runner of its own.
    Family { runner: "tlsbench-runner-boringssl", stacks: &["boringssl", "rustls-aws-lc-rs", "rustls-ring"] },
];

/// The runner that can measure `client` against `server` in one process, if any.
pub fn runner_for_pair(client: &str, server: &str) -> Option<&'static str> {
    FAMILIES.iter().find(|f| f.stacks.contains(&client) && f.stacks.contains(&server)).map(|f| f.runner)
}

/// The first runner holding `id`: the one asked for the stack's description.
pub fn runner_of(id: &str) -> &'static str {
    runner_for_pair(id, id).expect("every known stack is in a family")
}

/// Parses a stack id, naming the valid ones if it is unknown.
pub fn parse_id(id: &str) -> Result<String, String> {
    match known(id) {
        Some(stack) => Ok(stack.id.to_string()),
        None => Err(format!("unknown stack `{id}` (valid: {})", all_ids().join(", "))),
    }
}

pub fn known(id: &str) -> Option<&'static KnownStack> {
    KNOWN.iter().find(|s| s.id == id)
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

pub fn runner_path(dir: &Path, runner: &str) -> Result<PathBuf> {
    let path = dir.join(runner);
    if !path.is_file() {
        bail!("runner `{runner}` is not in {} (build all binaries: cargo build --release --workspace)", dir.display());
    }
    Ok(path)
}

/// Asks the runners of `ids` what they hold; checks each reports its own library.
pub fn discover(dir: &Path, ids: &[String]) -> Result<Vec<StackInfo>> {
    let mut infos = Vec::new();
    let mut asked: Vec<&str> = Vec::new();
    for id in ids {
        known(id).with_context(|| parse_id(id).unwrap_err())?;
        let runner = runner_of(id);
        if !asked.contains(&runner) {
            asked.push(runner);
            let path = runner_path(dir, runner)?;
            let output = executor::call(&path, &["list"], Duration::from_secs(60))
                .with_context(|| format!("asking runner {} for its stacks", path.display()))?;
            let listed: Vec<StackInfo> = serde_json::from_str(&output)
                .with_context(|| format!("runner {} printed an unreadable stack list", path.display()))?;
            infos.extend(listed);
        }
    }
    let mut wanted = Vec::new();
    for id in ids {
        let info = infos.iter().find(|i| &i.id == id).with_context(|| format!("the runner of stack `{id}` does not list it"))?;
        let stack = known(id).expect("ids were parsed against KNOWN");
        if !(stack.owns)(&info.library) {
            bail!("stack `{id}` reports library `{}`, which is not its own; refusing to measure it", info.library);
        }
        wanted.push(info.clone());
    }
    Ok(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stack_owns_only_its_own_library() {
        let libraries = [
            "rustls 0.23.46 (aws-lc-rs 1.19.0)",
            "rustls 0.23.46 (ring 0.17.14)",
            "OpenSSL 3.0.19 27 Jan 2026",
            "BoringSSL (API version 44, boring-sys 5.4.0)",
            "GnuTLS 3.7.9",
            "LibreTLS 3.7.0",
            "s2n-tls 0.3.47",
            "s2n-tls 0.3.47 (recv buffering)",
            "Bertie 0.1.0-pre.2 (no chain or host name verification)",
        ];
        for (stack, own) in KNOWN.iter().zip(libraries) {
            for library in libraries.iter().chain(&["BoringSSL", "OpenSSL 1.1.1w"]) {
                assert_eq!((stack.owns)(library), *library == own, "{} owns {library}?", stack.id);
            }
        }
    }

    #[test]
    fn every_stack_is_in_a_family_and_every_family_stack_is_known() {
        for stack in KNOWN {
            assert!(FAMILIES.iter().any(|f| f.stacks.contains(&stack.id)), "{} has no runner", stack.id);
        }
        for family in FAMILIES {
            assert!(family.stacks.iter().all(|id| known(id).is_some()), "{}", family.runner);
        }
        assert_eq!(runner_for_pair("rustls-ring", "openssl"), Some("tlsbench-runner-openssl"));
        assert_eq!(runner_for_pair("boringssl", "rustls-aws-lc-rs"), Some("tlsbench-runner-boringssl"));
        assert_eq!(runner_for_pair("openssl", "boringssl"), None);
    }

    #[test]
    fn an_unknown_id_names_the_valid_ones() {
        assert_eq!(parse_id("openssl"), Ok("openssl".to_string()));
        assert_eq!(parse_id("gnutls"), Ok("gnutls".to_string()));
        assert_eq!(parse_id("wolfssl"), Err("unknown stack `wolfssl` (valid: rustls-aws-lc-rs, rustls-ring, openssl, boringssl, gnutls, libtls, s2n-tls, s2n-tls-recvbuf, bertie)".to_string()));
    }
}
