//! End-to-end: the Go stack at another Go release (scripts/build-go.sh 1.27, docs/versions.md):
//! `go` and `go@1.27` listed and measured in one run, each on its own Go. Ignored unless asked
//! for (`--ignored`, as scripts/test.sh does after building it): they need go@1.27 built.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;
use crate::fake_go::runner_dir;
use crate::versions;
use common::{succeeded, tlsbench};

const RELEASE: &str = "go@1.27";

/// The directory of go@1.27's runner (see [`versions::release_dir`]).
fn release_dir() -> PathBuf {
    versions::release_dir(RELEASE, "tlsbench-runner-go", "scripts/build-go.sh 1.27")
}

/// The library a Go runner lists for its one stack.
fn listed_library(runner: &Path) -> String {
    let output = succeeded(Command::new(runner).arg("list").output().unwrap());
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    list["stacks"][0]["library"].as_str().unwrap().to_string()
}

#[test]
#[ignore = "needs go@1.27: scripts/build-go.sh 1.27 (scripts/test.sh builds it and runs this)"]
fn list_stacks_shows_go_at_its_release_with_its_go() {
    let dir = release_dir();
    let library = listed_library(&dir.join("tlsbench-runner-go"));
    assert!(library.starts_with("Go crypto/tls go1.27."), "{library}");
    let tmp = tempfile::tempdir().unwrap();
    let output = succeeded(tlsbench(tmp.path()).args(["list", "stacks"]).output().unwrap());
    let text = String::from_utf8(output.stdout).unwrap();
    let line = |id: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no {id} in:\n{text}"))
            .to_string()
    };
    assert!(line(RELEASE).ends_with(&library), "{}", line(RELEASE));
    assert!(line("go").contains("Go crypto/tls go1.") && !line("go").contains("go1.27."), "{}", line("go"));
}

#[test]
#[ignore = "needs go@1.27: scripts/build-go.sh 1.27 (scripts/test.sh builds it and runs this)"]
fn go_and_go_at_1_27_in_one_run_each_report_their_own_go() {
    let dir = release_dir();
    let release_library = listed_library(&dir.join("tlsbench-runner-go"));
    let default_library = listed_library(&runner_dir().join("tlsbench-runner-go"));
    assert_ne!(release_library, default_library);
    versions::measured_beside_today("go", RELEASE, &default_library, &release_library);
}

#[test]
fn build_go_refuses_a_release_the_runner_cannot_be_built_with_in_one_line() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-go.sh");
    let output = Command::new(script).arg("1.19").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "go 1.19: cannot be built here: the Go runner needs Go 1.25 or later (runners/go/go.mod), not Go 1.19\n"
    );
}
