//! The instructions measure: each side's instructions, counted by valgrind's callgrind in a
//! process of its own. A runner switches callgrind's collection on only inside the counted
//! side's library calls (the harness's `Clock`), for a fixed number of iterations; callgrind
//! writes the total when the process exits, and it is read here. The sync measure runs its
//! runners the same way, with more of callgrind's events (sync/). A run's sample of either is
//! taken in sampling/callgrind.rs, `tlsbench profile`'s in profile/.
//!
//! Counts are made repeatable by taking away what varies between runs of the same binary:
//! address-space randomisation (`setarch -R`), the environment (cleared, since its size moves
//! the stack and with it the alignment of buffers), and the amount of work (fixed iterations).
//! Cache simulation is off: only instructions are counted.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use tlsbench_harness::driver::TRANSFER_WRITE_SIZE;
use tlsbench_harness::{KeyType, Kind, Measure, Scenario, Side};

use crate::runner_command::{RunnerCommand, SampleSettings, Work};

/// Measured iterations of a handshake sample, and of a transfer sample (16 KiB writes: 1 MiB).
/// Enough that one iteration's variation (an ECDSA signature one byte shorter) is diluted, few
/// enough that a sample under valgrind takes seconds.
pub const HANDSHAKES: u64 = 20;
/// Contexts with the system's trust store counted per sample.
const SYSTEM_CONTEXTS: u64 = 5;
pub const TRANSFER_WRITES: u64 = 64;
/// Unmeasured iterations first: lazy initialisation, first-use tables, the session cache's
/// first entries.
pub const WARMUP_ITERATIONS: u64 = 2;

/// The programs that run a side under callgrind, found in PATH once.
pub struct Callgrind {
    env: PathBuf,
    setarch: PathBuf,
    valgrind: PathBuf,
}

impl Callgrind {
    pub fn find() -> Result<Callgrind> {
        let find = |name: &str, package: &str| {
            in_path(name).ok_or_else(|| {
                anyhow!(
                    "the instructions and sync measures run each side under {name}, which is not in PATH \
                     (install {package})"
                )
            })
        };
        Ok(Callgrind {
            env: find("env", "coreutils")?,
            setarch: find("setarch", "util-linux")?,
            valgrind: find("valgrind", "valgrind")?,
        })
    }

    /// The program and arguments that run `runner command` under callgrind, with collection off
    /// until the runner switches it on, its output in `out`. `extra` are further callgrind
    /// options (the profile's).
    /// `env` is the runner's whole environment: `env -i` clears the rest, so that the counts do
    /// not depend on the user's variables.
    pub fn command(
        &self,
        runner: &Path,
        command: &RunnerCommand,
        out: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> (PathBuf, Vec<String>) {
        let mut argv: Vec<String> = vec!["-i".into()];
        // `env -i` starts empty: a variable to remove (an empty value, executor.rs) is left out.
        argv.extend(env.iter().filter(|(_, value)| !value.is_empty()).map(|(name, value)| format!("{name}={value}")));
        argv.extend([
            self.setarch.display().to_string(),
            "-R".into(),
            self.valgrind.display().to_string(),
            "--tool=callgrind".into(),
            // Only errors on stderr, which the orchestrator keeps with a failed cell.
            "-q".into(),
            "--collect-atstart=no".into(),
            "--cache-sim=no".into(),
            format!("--callgrind-out-file={}", out.display()),
        ]);
        argv.extend(extra.iter().map(|s| s.to_string()));
        argv.push(runner.display().to_string());
        argv.extend(command.words());
        (self.env.clone(), argv)
    }
}

fn in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// The instructions callgrind counted in a run, from its output file's `totals:` line (or
/// `summary:`, which older versions write instead).
pub fn total(out: &Path) -> Result<u64> {
    let text = std::fs::read_to_string(out).with_context(|| format!("reading callgrind's output {}", out.display()))?;
    let events = text.lines().find_map(|l| l.strip_prefix("events:")).map(str::split_whitespace);
    if events.is_none_or(|mut e| e.next() != Some("Ir")) {
        bail!("callgrind's output {} does not count instructions (Ir) first", out.display());
    }
    let line = text.lines().rev().find_map(|l| l.strip_prefix("totals:").or_else(|| l.strip_prefix("summary:")));
    let first = line.and_then(|l| l.split_whitespace().next());
    first.and_then(|n| n.parse().ok()).ok_or_else(|| anyhow!("callgrind's output {} has no total", out.display()))
}

/// What a runner under callgrind may take for one sample beyond the user's `--timeout`:
/// valgrind's start (reading the runner's debug information takes seconds), then each
/// iteration at callgrind's pace, some 50 to 100 times slower than natively.
pub fn budget(scenario: &Scenario) -> Duration {
    let per_iteration = match (scenario.kind, scenario.key) {
        (Kind::Transfer, _) => Duration::from_millis(100),
        (_, KeyType::EcdsaP256 | KeyType::Ed25519) => Duration::from_millis(500),
        (_, KeyType::EcdsaP384 | KeyType::Rsa2048) => Duration::from_secs(2),
        _ => Duration::from_secs(10),
    };
    Duration::from_secs(20) + per_iteration * (iterations(scenario.kind) + WARMUP_ITERATIONS) as u32
}

pub fn iterations(kind: Kind) -> u64 {
    match kind {
        Kind::Transfer => TRANSFER_WRITES,
        // Tens of milliseconds each natively (OpenSSL 3's parse of ~140 roots), ~50× under valgrind.
        Kind::ContextClientSystem => SYSTEM_CONTEXTS,
        _ => HANDSHAKES,
    }
}

/// What a count is divided by: the handshakes, or the megabytes (10^6 bytes) of plaintext that
/// `iterations` writes of a transfer move.
pub fn units(kind: Kind, iterations: u64) -> f64 {
    match kind {
        Kind::Transfer => (iterations * TRANSFER_WRITE_SIZE as u64) as f64 / 1e6,
        _ => iterations as f64,
    }
}

/// The sample settings of a runner counted under callgrind (`measure`: instructions or sync):
/// the scenario and the fixed work; `count_side` where the process runs both sides (the
/// in-process cells, `tlsbench profile`).
pub fn counted<'a>(
    scenario: &'a Scenario,
    measure: Measure,
    iterations: u64,
    count_side: Option<Side>,
    data_dir: &'a Path,
) -> SampleSettings<'a> {
    let work = Work::Counted { iterations, warmup_iterations: WARMUP_ITERATIONS, count_side };
    SampleSettings { scenario, measure, work, data_dir }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_total_that_callgrind_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        let header = concat!(
            "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\ncmd: runner\npart: 1\n\n",
            "positions: line\nevents: Ir\nsummary: 1234567\n\nfn=(1) main\n0 1234567\n",
        );
        std::fs::write(&file, format!("{header}\ntotals: 1234567\n")).unwrap();
        assert_eq!(total(&file).unwrap(), 1_234_567);
        // Older callgrinds write the summary only.
        std::fs::write(&file, header).unwrap();
        assert_eq!(total(&file).unwrap(), 1_234_567);
        std::fs::write(&file, header.replace("events: Ir", "events: Dr")).unwrap();
        assert!(total(&file).unwrap_err().to_string().contains("does not count instructions"));
        std::fs::write(&file, "events: Ir\n").unwrap();
        assert!(total(&file).unwrap_err().to_string().contains("has no total"));
        assert!(total(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn the_command_runs_the_runner_under_callgrind_without_aslr_or_environment_but_its_allocator() {
        let callgrind = Callgrind {
            env: "/usr/bin/env".into(),
            setarch: "/usr/bin/setarch".into(),
            valgrind: "/usr/bin/valgrind".into(),
        };
        let allocator = [("TLSBENCH_ALLOCATOR", "jemalloc")];
        let scenario: Scenario = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap();
        let settings = counted(&scenario, Measure::Instructions, 20, Some(Side::Client), Path::new("/data"));
        let command =
            RunnerCommand::Sample { client: "a", server: "b", threads: None, contexts: None, cpus: None, settings };
        let (program, args) = callgrind.command(
            Path::new("/bin/runner"),
            &command,
            Path::new("/tmp/out"),
            &["--dump-line=yes"],
            &allocator,
        );
        assert_eq!(program, Path::new("/usr/bin/env"));
        let runner = args.iter().position(|a| a == "/bin/runner").unwrap();
        let (before, after) = args.split_at(runner);
        assert_eq!(&before[..5], ["-i", "TLSBENCH_ALLOCATOR=jemalloc", "/usr/bin/setarch", "-R", "/usr/bin/valgrind"]);
        for option in [
            "--tool=callgrind",
            "--collect-atstart=no",
            "--cache-sim=no",
            "--callgrind-out-file=/tmp/out",
            "--dump-line=yes",
        ] {
            assert!(before.iter().any(|a| a == option), "{option} missing from {before:?}");
        }
        assert_eq!(after[0], "/bin/runner");
        assert_eq!(after[1..], command.words(), "the runner's command line follows it unchanged");
    }
}
