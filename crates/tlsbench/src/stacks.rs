//! The stacks tlsbench knows and how to recognise each one's library in what a runner reports
//! (which runner holds which stack: `runners.rs`).

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

pub(crate) fn opt_in(id: &str) -> Option<&'static str> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
