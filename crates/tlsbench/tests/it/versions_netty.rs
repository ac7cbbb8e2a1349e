//! End-to-end: the netty-tcnative stack at another tcnative release (scripts/build-netty.sh
//! 2.0.84 4.1.137, docs/versions.md): `netty-tcnative` and `netty-tcnative@2.0.84` listed and
//! measured in one run, each with the tcnative and Netty it loaded. scripts/test.sh does not build
//! it (a Maven build), so these tests are ignored unless asked for: after its build,
//! `cargo test --release -p tlsbench --test it versions_netty -- --ignored`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;
use crate::fake_go::runner_dir;
use crate::versions;
use common::{succeeded, tlsbench};

const RELEASE: &str = "netty-tcnative@2.0.84";

/// The directory of netty-tcnative@2.0.84's runner, built on demand only (see
/// [`versions::release_dir`]); the default Java runner must be built too (scripts/build.sh).
#[track_caller]
fn release_dir() -> PathBuf {
    let dir = versions::release_dir(RELEASE, "tlsbench-runner-java", "scripts/build-netty.sh 2.0.84 4.1.137");
    let java = runner_dir().join("tlsbench-runner-java");
    assert!(java.is_file(), "{} is not built (scripts/build.sh)", java.display());
    dir
}

/// The id and library of the one netty-tcnative stack a Java runner lists.
fn listed(runner: &Path) -> (String, String) {
    let output = succeeded(Command::new(runner).arg("list").output().unwrap());
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    let stacks = list["stacks"].as_array().unwrap();
    let netty: Vec<&Value> =
        stacks.iter().filter(|s| s["id"].as_str().unwrap().starts_with("netty-tcnative")).collect();
    assert_eq!(netty.len(), 1, "{list}");
    (netty[0]["id"].as_str().unwrap().to_string(), netty[0]["library"].as_str().unwrap().to_string())
}

#[test]
#[ignore = "needs netty-tcnative@2.0.84, built on demand: scripts/build-netty.sh 2.0.84 4.1.137"]
fn netty_tcnative_at_a_release_holds_that_stack_alone_with_the_tcnative_it_loaded() {
    let dir = release_dir();
    let runner = dir.join("tlsbench-runner-java");
    let output = succeeded(Command::new(&runner).arg("list").output().unwrap());
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(list["stacks"].as_array().unwrap().len(), 1, "{list}");
    let (id, library) = listed(&runner);
    assert_eq!(id, RELEASE);
    assert!(library.starts_with("netty-tcnative-boringssl-static 2.0.84.Final (BoringSSL, netty 4."), "{library}");
    let tmp = tempfile::tempdir().unwrap();
    let output = succeeded(tlsbench(tmp.path()).args(["list", "stacks"]).output().unwrap());
    let text = String::from_utf8(output.stdout).unwrap();
    let at = text.lines().position(|l| l.split_whitespace().next() == Some(RELEASE));
    let at = at.unwrap_or_else(|| panic!("no {RELEASE} in:\n{text}"));
    // An id wider than the label column gets a line of its own, its library on the next.
    let lines: Vec<&str> = text.lines().skip(at).take(2).collect();
    assert!(lines.iter().any(|l| l.trim_end().ends_with(&library)), "{lines:?}");
}

#[test]
#[ignore = "needs netty-tcnative@2.0.84, built on demand: scripts/build-netty.sh 2.0.84 4.1.137"]
fn netty_tcnative_and_netty_tcnative_at_2_0_84_in_one_run_each_report_their_own_library() {
    let dir = release_dir();
    let (_, release_library) = listed(&dir.join("tlsbench-runner-java"));
    let (_, default_library) = listed(&runner_dir().join("tlsbench-runner-java"));
    assert_ne!(release_library, default_library);
    versions::measured_beside_today("netty-tcnative", RELEASE, &default_library, &release_library);
}

#[test]
fn build_netty_refuses_what_is_no_release_in_one_line() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-netty.sh");
    let refused = "cannot be built here";
    for (args, refusal) in [
        (&["2.0.x"][..], format!("2.0.x: {refused}: not a netty-tcnative release (such as 2.0.84 or 2.0.84.Final)")),
        (
            &["2.0.84.Final", "5.0.0"][..],
            format!("2.0.84: {refused}: Netty 5.0.0 is not a Netty 4 release (such as 4.1.137 or 4.2.18.Final)"),
        ),
    ] {
        let output = Command::new(&script).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr, format!("netty-tcnative {refusal}\n"));
    }
}
