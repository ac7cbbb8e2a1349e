//! `tlsbench cold` (docs/scenarios.md#cold-processes-tlsbench-cold): per stack and handshake scenario, N fresh runner
//! processes, each replying with its first context, its first handshake and the warm ones after
//! it, per side (docs/runner-protocol.md#cold); the table puts the cold figures beside the warm
//! ones. Under `--measure instructions`, each side of each sample runs under callgrind, which
//! dumps its count after each phase.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tlsbench_harness::cold::{Cold, ColdReply, ColdSide, PHASES};
use tlsbench_harness::{pki, Kind, Measure, Pki, Scenario, Side};

use crate::cli::ColdArgs;
use crate::instructions::{total, Callgrind};
use crate::runner_command::{strs, RunnerCommand};
use crate::{executor, output};

/// What one cold process may take, valgrind's start included.
const TIMEOUT: Duration = Duration::from_secs(300);

/// The scenarios without `--scenario`: a full TLS 1.3 handshake with each common key type, and
/// the first resumption from a ticket.
pub const DEFAULT_SCENARIOS: [&str; 3] = [
    "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
    "handshake-full_1.3_x25519_rsa-2048_aes-128-gcm",
    "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm",
];

pub fn cold(args: ColdArgs) -> Result<ExitCode> {
    let measure = args.measure;
    if !matches!(measure, Measure::Time | Measure::Instructions) {
        bail!("cold measures time or instructions, not {measure}");
    }
    let processes = args.processes.map_or(if args.quick { 3 } else { 5 }, |n| n as usize);
    let scenarios: Vec<Scenario> = match args.scenarios.is_empty() {
        true => DEFAULT_SCENARIOS.iter().map(|s| s.parse().expect("the defaults are valid")).collect(),
        false => args.scenarios.clone(),
    };
    if let Some(s) = scenarios.iter().find(|s| !is_handshake(s.kind)) {
        bail!("cold takes handshake scenarios (handshake-full, handshake-resume-id, handshake-resume-ticket), not {s}");
    }
    let runners = crate::runners::Runners::find()?;
    let ids = match args.stacks.is_empty() {
        true => runners.default_stacks(),
        false => args.stacks.clone(),
    };
    let data_dir = pki::default_data_dir();
    let keys: Vec<_> = crate::order::first_seen(scenarios.iter().map(|s| s.key));
    Pki::load_or_generate(&data_dir, &keys).map_err(anyhow::Error::msg)?;
    let callgrind = match measure {
        Measure::Instructions => Some(Callgrind::find()?),
        _ => None,
    };
    let mut failed = 0;
    for (i, scenario) in scenarios.iter().enumerate() {
        let mut rows = Vec::new();
        for id in &ids {
            let runner = runners.of(id)?;
            let outcome = (0..processes)
                .map(|_| match &callgrind {
                    None => timed(runner, id, scenario, &data_dir),
                    Some(callgrind) => counted(callgrind, runner, id, scenario, &data_dir),
                })
                .collect::<Result<Vec<Cold>, String>>();
            failed += usize::from(matches!(outcome, Err(ref reason) if !reason.starts_with("unsupported: ")));
            rows.push((id.clone(), outcome));
        }
        if i > 0 {
            output::print("\n");
        }
        output::print(render(scenario, measure, processes, &rows));
    }
    Ok(if failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn is_handshake(kind: Kind) -> bool {
    matches!(kind, Kind::HandshakeFull | Kind::HandshakeResumeId | Kind::HandshakeResumeTicket)
}

/// CLOCK_MONOTONIC, as the runner reads it at the top of its `main`.
fn monotonic_ns() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-parameter; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// One fresh process, timed.
fn timed(runner: &Path, id: &str, scenario: &Scenario, data_dir: &Path) -> Result<Cold, String> {
    let command = |spawned_at_ns| RunnerCommand::Cold {
        client: id,
        server: id,
        scenario,
        data_dir,
        spawned_at_ns: Some(spawned_at_ns),
        count_side: None,
    };
    let env = crate::trust::runner_env();
    // The clock is read last, just before the spawn.
    let words = command(0).words();
    let at = words.iter().position(|w| w == "--spawned-at-ns").expect("the flag is there") + 1;
    let mut words = words;
    words[at] = monotonic_ns().to_string();
    let output = executor::call_with(runner, &strs(&words), &env, TIMEOUT).map_err(|e| format!("{e:#}"))?;
    reply(&output.stdout, output.stderr.as_deref())
}

/// One fresh process per side under callgrind, each counting its side's calls, phase by phase.
fn counted(
    callgrind: &Callgrind,
    runner: &Path,
    id: &str,
    scenario: &Scenario,
    data_dir: &Path,
) -> Result<Cold, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("a directory for callgrind's output: {e}"))?;
    let mut sides = [ColdSide::default(), ColdSide::default()];
    for (slot, side) in [Side::Client, Side::Server].into_iter().enumerate() {
        let out = dir.path().join(format!("{side}.callgrind"));
        let command = RunnerCommand::Cold {
            client: id,
            server: id,
            scenario,
            data_dir,
            spawned_at_ns: None,
            count_side: Some(side),
        };
        let (program, args) = callgrind.command(runner, &command, &out, &[], &crate::trust::runner_env());
        let output = executor::call(&program, &strs(&args), TIMEOUT).map_err(|e| format!("{e:#}"))?;
        reply(&output.stdout, output.stderr.as_deref())?;
        sides[slot] = phase_counts(&out, scenario.kind)?;
    }
    let [client, server] = sides;
    Ok(Cold { process_start_ns: None, client, server })
}

/// The phases' counts from callgrind's dumps `OUT.1`, `OUT.2`, ... in the order the runner dumped
/// them (its phases, [`PHASES`]).
fn phase_counts(out: &Path, kind: Kind) -> Result<ColdSide, String> {
    let phases = phases(kind);
    let mut side = ColdSide::default();
    for (n, phase) in phases.iter().enumerate() {
        let file = PathBuf::from(format!("{}.{}", out.display(), n + 1));
        let count = total(&file).map_err(|e| format!("{e:#}"))?;
        match *phase {
            "context" => side.context_ns = count,
            "first" => side.first_ns = count,
            "second" => side.second_ns = Some(count),
            "first_resume" => side.first_resume_ns = Some(count),
            _ => side.second_resume_ns = Some(count),
        }
    }
    Ok(side)
}

/// The phases a cold sample of `kind` has, in order.
pub fn phases(kind: Kind) -> Vec<&'static str> {
    match kind.is_resumption() {
        false => PHASES[..3].to_vec(),
        true => vec![PHASES[0], PHASES[1], PHASES[3], PHASES[4]],
    }
}

fn reply(stdout: &str, stderr: Option<&str>) -> Result<Cold, String> {
    let with_stderr = |reason: String| match stderr {
        Some(printed) => format!("{reason} (stderr: {printed})"),
        None => reason,
    };
    match serde_json::from_str::<ColdReply>(stdout).context("the runner printed an unreadable cold reply") {
        Ok(ColdReply::Ok { cold, .. }) => Ok(cold),
        Ok(ColdReply::Unsupported { reason }) => Err(format!("unsupported: {reason}")),
        Ok(ColdReply::Failed { reason }) => Err(with_stderr(reason)),
        Err(e) => Err(with_stderr(format!("{e:#}"))),
    }
}

/// The median of the processes' figures.
fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

/// The table of one scenario: a row per stack, per side its phases' medians and the first
/// (cold) against the last (warm) handshake of its kind.
pub fn render(
    scenario: &Scenario,
    measure: Measure,
    processes: usize,
    rows: &[(String, Result<Vec<Cold>, String>)],
) -> String {
    let phases = phases(scenario.kind);
    let (unit, scale) = match measure {
        Measure::Instructions => ("k instructions", 1_000.0),
        _ => ("µs", 1_000.0),
    };
    let mut text = format!(
        "cold {scenario}\nmedians of {processes} fresh processes, {unit} inside each side's calls; \
         start: from the spawn to the runner's main\n"
    );
    let names: Vec<&str> = phases.iter().map(|p| label(p)).collect();
    let mut side_header = String::new();
    for name in names.iter().chain(["1st÷2nd"].iter()) {
        side_header.push_str(&format!(" {name:>8}"));
    }
    let width = side_header.chars().count();
    text.push_str(&format!("{:<16} {:>6} |{:<width$}| server\n", "", "start", " client"));
    text.push_str(&format!("{:<16} {:>6} |{side_header}|{side_header}\n", "stack", "ms"));
    let mut notes = Vec::new();
    for (id, outcome) in rows {
        let samples = match outcome {
            Ok(samples) => samples,
            Err(reason) => {
                notes.push(format!("{id}: {reason}"));
                text.push_str(&format!("{id:<16} [{}]\n", notes.len()));
                continue;
            }
        };
        let start = samples.iter().filter_map(|s| s.process_start_ns).collect::<Vec<_>>();
        let start = match start.len() == samples.len() && !start.is_empty() {
            true => format!("{:.1}", median(start) as f64 / 1e6),
            false => "-".into(),
        };
        text.push_str(&format!("{id:<16} {start:>6} |"));
        for side in [Side::Client, Side::Server] {
            let of = |cold: &Cold| match side {
                Side::Client => cold.client,
                Side::Server => cold.server,
            };
            let medians: Vec<u64> = phases
                .iter()
                .map(|phase| median(samples.iter().map(|s| of(s).phase(phase).unwrap_or(0)).collect()))
                .collect();
            for m in &medians {
                text.push_str(&format!(" {:>8.1}", *m as f64 / scale));
            }
            // The first handshake of the kind measured against the last (warm) one.
            let (first, warm) = (medians[phases.len() - 2], medians[phases.len() - 1]);
            let ratio = if warm > 0 { format!("{:.2}×", first as f64 / warm as f64) } else { "-".into() };
            text.push_str(&format!(" {ratio:>8}|"));
        }
        text.pop();
        text.push('\n');
    }
    for (n, note) in notes.iter().enumerate() {
        text.push_str(&output::columns::wrap(&format!("[{}] {note}", n + 1), output::WIDTH, 4));
        text.push('\n');
    }
    text
}

fn label(phase: &str) -> &'static str {
    match phase {
        "context" => "context",
        "first" => "first",
        "second" => "second",
        "first_resume" => "resume 1",
        _ => "resume 2",
    }
}
