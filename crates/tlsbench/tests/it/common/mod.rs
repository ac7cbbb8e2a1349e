//! What the end-to-end tests share: tlsbench in a directory of its own, a run's success, and the
//! JSON it exported. (A directory module: Cargo does not make it a test.)
// Each test file uses a part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// tlsbench (its runners beside it in the target directory) run in `dir`, so that its results
/// database (results.db in the working directory) is its own, with its certificates in `dir`/data.
pub fn tlsbench(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tlsbench"));
    cmd.env("TLSBENCH_DATA_DIR", dir.join("data")).current_dir(dir);
    cmd
}

/// A run's least work that still measures each cell: two samples of 2 ms each, no warm-up.
pub const QUICK: [&str; 6] = ["--samples", "2", "--min-time-ms", "2", "--warmup-ms", "0"];

/// The output of a command that must have succeeded; if it did not, its stderr says why.
#[track_caller]
pub fn succeeded(output: Output) -> Output {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Writes `script` to `path` as an executable (a fake or wrapping runner).
#[track_caller]
pub fn executable(path: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// What tlsbench printed on stderr (or stdout) with the lines it wrapped at 120 columns joined
/// again: its words, one space apart.
pub fn unwrapped(text: &[u8]) -> String {
    String::from_utf8_lossy(text).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One message (an error) as tlsbench prints it, unwrapped: each line at most 120 columns, and
/// every line after the first indented, as its continuation.
#[track_caller]
pub fn one_message(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().all(|l| l.chars().count() <= 120), "a line over 120 columns:\n{text}");
    assert!(lines.iter().skip(1).all(|l| l.starts_with("  ")), "not one wrapped message:\n{text}");
    unwrapped(text.as_bytes())
}

/// The JSON document in the file at `path` (a run's --export-json).
#[track_caller]
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The mean of the faster half of `values` (the samples at or above their median), as a time rate's
/// figure is taken (docs/sampling.md, "The faster half").
pub fn faster_half_mean(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let half = &values[values.len() / 2..];
    half.iter().sum::<f64>() / half.len() as f64
}

/// A result's figure: a time rate's `faster_half_mean`, else its `median`.
#[track_caller]
pub fn figure(result: &Value) -> f64 {
    result.get("faster_half_mean").unwrap_or(&result["median"]).as_f64().unwrap_or_else(|| panic!("{result}"))
}
