//! End-to-end: `run --threads N` on unequal cores. The N threads are pinned one per CPU, the
//! one-thread row is measured on each of those CPUs in turn, and the efficiency compares each
//! thread count with one thread on the same CPUs; the run measures each CPU's speed and names
//! the slower ones under the table. Here one CPU is made slower by a busy process pinned to it.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use serde_json::Value;
use tlsbench_harness::pin;

use crate::common::{faster_half_mean, figure, read_json, succeeded, tlsbench};

const SCENARIO: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// Processes that spin on one CPU for as long as they live; killed when dropped, also when the
/// test fails.
struct Spinners(Vec<Child>);

impl Spinners {
    /// Enough spinners on `cpu` to outweigh the machine's other work (its load average, which
    /// the scheduler moves to the other CPUs), so that `cpu` is the slower one however busy the
    /// machine is: a thread pinned there gets a share of it, of about 1/(spinners + 1). Each in
    /// a session of its own: where the kernel groups the scheduling by session (autogroup), a
    /// spinner in this test's session would only take from this test's own share of the CPU.
    fn on(cpu: u32) -> Spinners {
        let load: f64 = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next()?.parse().ok())
            .unwrap_or(0.0);
        let count = (load.ceil() as usize + 2).min(16);
        let mut spinners = Spinners(Vec::new());
        for _ in 0..count {
            let mut command = Command::new("taskset");
            command.args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"]);
            // SAFETY: setsid is async-signal-safe, as what runs between fork and exec must be.
            unsafe {
                command.pre_exec(|| match libc::setsid() {
                    -1 => Err(std::io::Error::last_os_error()),
                    _ => Ok(()),
                })
            };
            let child = command.spawn().expect("taskset (util-linux) starts a spinning shell");
            spinners.0.push(child);
        }
        spinners
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The result of `metric` on `side` for the cell of `threads` (None: the one-thread row).
fn result<'a>(doc: &'a Value, metric: &str, side: &str, threads: Option<u64>) -> &'a Value {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == metric && r["side"] == side && r["threads"].as_u64() == threads)
        .unwrap_or_else(|| panic!("no {metric} {side} result of {threads:?} threads"))
}

#[test]
fn with_one_cpu_made_slower_the_efficiency_compares_with_one_thread_on_the_same_cpus() {
    let allowed = pin::allowed_cpus();
    assert!(allowed.len() >= 2, "this test needs two CPUs to pin to; this process may use {allowed:?}");
    let (fast, slow) = (allowed[0], allowed[1]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let output = {
        let _spinners = Spinners::on(slow);
        tlsbench(dir.path())
            .args(["run", "--stack", "rustls-aws-lc-rs", "--scenario", SCENARIO, "--threads", "2"])
            .args(["--samples", "6", "--min-time-ms", "40", "--warmup-ms", "10"])
            .arg("--export-json")
            .arg(&json)
            .output()
            .unwrap()
    };
    let table = String::from_utf8(succeeded(output).stdout).unwrap();
    let doc = read_json(&json);

    // (a) The one-thread row took its samples on each CPU the two threads use, in turn, and the
    // two threads ran on those CPUs, one each.
    let one = result(&doc, "handshakes_per_s", "server", None);
    let cpus: Vec<Vec<u64>> = serde_json::from_value(one["sample_cpus"].clone()).unwrap();
    assert_eq!(cpus.len(), one["samples"].as_array().unwrap().len(), "{one}");
    for cpu in [fast, slow] {
        assert!(cpus.contains(&vec![u64::from(cpu)]), "a one-thread sample on CPU {cpu}: {cpus:?}");
    }
    let two = result(&doc, "handshakes_per_s", "server", Some(2));
    let two_cpus: Vec<Vec<u64>> = serde_json::from_value(two["sample_cpus"].clone()).unwrap();
    assert!(two_cpus.iter().all(|c| *c == [u64::from(fast), u64::from(slow)]), "{two_cpus:?}");

    // (b) Each used CPU's speed is in the environment, and the note under the table names the
    // slower CPU.
    let speeds = doc["run"]["environment"]["core_speeds"].as_array().unwrap();
    assert_eq!(speeds.iter().map(|s| s["cpu"].as_u64().unwrap()).collect::<Vec<_>>(), [fast, slow].map(u64::from));
    let note = table.lines().find(|l| l.contains("cores:")).unwrap_or_else(|| panic!("no core note:\n{table}"));
    assert!(note.contains(&format!("CPU {slow} (")) && note.contains("slower than the fastest"), "{note}");
    assert!(table.lines().all(|l| l.chars().count() <= 120), "{table}");

    // (c) The efficiency is against one thread on the same two CPUs: the 2-thread rate over twice
    // the mean of each CPU's one-thread figure (the faster half's mean), where an unpinned
    // one-thread row would have run on the idle CPU alone. The slow CPU's one-thread rate is below
    // the fast one's (the spinners' doing, measured), so the efficiency is above that naive ratio.
    // Quiet, it reads about 100% where the naive one reads (1 + 1/(k + 1)) / 2 with k spinners;
    // the tests beside this one load the same CPUs at other times, so no band around 100% is
    // asserted, only what follows from the samples.
    for side in ["client", "server"] {
        let per_thread = result(&doc, "handshakes_per_s_per_thread", side, Some(2));
        let efficiency = per_thread["scaling_efficiency"].as_f64().unwrap();
        let aggregate = figure(result(&doc, "handshakes_per_s", side, Some(2)));
        let one = result(&doc, "handshakes_per_s", side, None);
        let on = |cpu: u32| -> f64 {
            let samples = one["samples"].as_array().unwrap().iter().zip(&cpus);
            faster_half_mean(
                samples.filter(|(_, c)| **c == [u64::from(cpu)]).map(|(v, _)| v.as_f64().unwrap()).collect(),
            )
        };
        let (on_fast, on_slow) = (on(fast), on(slow));
        assert!(on_slow < on_fast, "{side}: one thread on CPU {slow} {on_slow}, on CPU {fast} {on_fast}");
        let expected = aggregate / (2.0 * (on_fast + on_slow) / 2.0);
        assert!((efficiency - expected).abs() <= 1e-9 * expected, "{side}: efficiency {efficiency}, {expected}");
        let naive = aggregate / (2.0 * on_fast);
        assert!(efficiency > naive, "{side}: efficiency {efficiency}, naive {naive}");
    }
}
