//! The instructions measure end to end: real runners under valgrind's callgrind (installed by
//! scripts/setup.sh), counting each side's library calls.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;
use common::{read_json, succeeded, tlsbench};

const FULL_13: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
const TRANSFER_13: &str = "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// The runner that holds openssl and the rustls stacks, beside tlsbench.
fn runner() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_tlsbench")).with_file_name("tlsbench-runner-openssl")
}

fn spread(samples: &[f64]) -> f64 {
    let (min, max) = samples.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    (max - min) / min
}

fn samples(cell: &Value) -> Vec<f64> {
    cell["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
}

/// Two samples of each side, in one process and split over two: each side's count repeats
/// within compare's 0.3%, and the two process models count the same kind of number (here they
/// agree within about 1%: the libraries' own state differs, the allocator's above all).
#[test]
fn counts_repeat_and_agree_between_one_process_and_two() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let output = tlsbench(dir.path())
        .args([
            "run",
            "--measure",
            "instructions",
            "--stack",
            "rustls-aws-lc-rs",
            "--process",
            "both",
            "--samples",
            "2",
        ])
        .args(["--scenario", FULL_13, "--scenario", TRANSFER_13, "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    succeeded(output);
    let doc = read_json(&json);
    let cells = doc["results"].as_array().unwrap();
    for (scenario, metric) in [(FULL_13, "instructions_per_handshake"), (TRANSFER_13, "instructions_per_mb")] {
        for side in ["client", "server"] {
            let of = |process: &str| {
                let cell =
                    cells.iter().find(|c| c["scenario"] == scenario && c["side"] == side && c["process"] == process);
                let cell = cell.unwrap_or_else(|| panic!("{scenario} {side} {process}: {cells:?}"));
                assert_eq!(
                    (cell["status"].as_str(), cell["metric"].as_str(), cell["unit"].as_str()),
                    (Some("ok"), Some(metric), Some("instructions"))
                );
                assert_eq!(cell["better"], "lower");
                samples(cell)
            };
            let (one, two) = (of("in-process"), of("split-process"));
            assert_eq!((one.len(), two.len()), (2, 2));
            // A TLS 1.3 handshake's key exchange and signature alone take hundreds of thousands of
            // instructions on each side; a megabyte's encryption or decryption, more than a million.
            assert!(one.iter().chain(&two).all(|&n| n > 100_000.0), "{scenario} {side}: {one:?} {two:?}");
            assert!(spread(&one) < 0.003 && spread(&two) < 0.003, "{scenario} {side}: {one:?} {two:?}");
            assert!((one[0] / two[0] - 1.0).abs() < 0.03, "{scenario} {side}: in-process {one:?}, split {two:?}");
        }
    }
    // The handshakes were checked as in any other measure.
    let negotiated = cells.iter().find(|c| c["scenario"] == FULL_13).unwrap()["negotiated"].to_string();
    assert!(negotiated.contains("1.3 aes-128-gcm x25519"), "{negotiated}");
}

/// What callgrind collected in one runner under it, for `iterations` measured handshakes.
fn collected(dir: &Path, iterations: u64, side: &str) -> u64 {
    let out = dir.join(format!("{side}-{iterations}.callgrind"));
    let status = Command::new("setarch")
        .args(["-R", "valgrind", "--tool=callgrind", "-q", "--collect-atstart=no", "--cache-sim=no"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(runner())
        .args([
            "sample",
            "--client",
            "rustls-aws-lc-rs",
            "--server",
            "rustls-aws-lc-rs",
            "--scenario",
            FULL_13,
            "--measure",
            "instructions",
        ])
        .args(["--count-side", side, "--iterations", &iterations.to_string(), "--warmup-iterations", "2", "--data-dir"])
        .arg(dir.join("data"))
        .env_clear()
        .output()
        .unwrap();
    let status = succeeded(status);
    let reply: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!((reply["status"].as_str(), reply["iterations"].as_u64()), (Some("ok"), Some(iterations)), "{reply}");
    let text = std::fs::read_to_string(&out).unwrap();
    let totals = text.lines().find_map(|l| l.strip_prefix("totals:")).expect("callgrind writes its totals");
    totals.trim().parse().unwrap()
}

/// Collection is on only inside the counted side's measured calls: twice the handshakes count
/// twice the instructions. Anything else collected (loading the certificates, the warm-up, the
/// peer's calls, the harness between calls) would not double.
#[test]
fn the_count_is_proportional_to_the_measured_handshakes() {
    let dir = tempfile::tempdir().unwrap();
    for side in ["client", "server"] {
        let (five, ten) = (collected(dir.path(), 5, side), collected(dir.path(), 10, side));
        let ratio = ten as f64 / five as f64;
        assert!((ratio - 2.0).abs() < 0.01, "{side}: {five} for 5 handshakes, {ten} for 10 (ratio {ratio})");
    }
}

#[test]
fn a_runner_off_valgrind_or_without_a_counted_side_refuses_to_count() {
    let dir = tempfile::tempdir().unwrap();
    let ask = |extra: &[&str]| {
        let output = Command::new(runner())
            .args([
                "sample",
                "--client",
                "openssl",
                "--server",
                "openssl",
                "--scenario",
                FULL_13,
                "--measure",
                "instructions",
                "--data-dir",
            ])
            .arg(dir.path())
            .args(extra)
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let off_valgrind = ask(&["--count-side", "server"]);
    assert_eq!(off_valgrind["status"], "failed");
    assert!(off_valgrind["reason"].as_str().unwrap().contains("runs under valgrind"), "{off_valgrind}");
    let no_side = ask(&[]);
    assert!(no_side["reason"].as_str().unwrap().contains("--count-side client|server"), "{no_side}");
}

#[test]
fn instructions_are_taken_in_memory_only() {
    let dir = tempfile::tempdir().unwrap();
    let output = tlsbench(dir.path())
        .args(["run", "--measure", "instructions", "--transport", "tcp", "--stack", "openssl"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("instructions is taken in memory"), "{stderr}");
}
