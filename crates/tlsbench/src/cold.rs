//! `tlsbench cold` (docs/scenarios.md#cold-processes-tlsbench-cold): per stack and handshake scenario, N fresh runner
//! processes, each replying with its first context, its first handshake and the warm ones after
//! it, per side (docs/runner-protocol.md#cold); the table puts the cold figures beside the warm
//! ones. Under `--measure instructions`, each side of each sample runs under callgrind, which
//! dumps its count after each phase. Each run is stored as it goes (store/cold.rs), read back by
//! `cold --show` and exported with `--json` and `--csv` (export/cold.rs), all from one document
//! (cold_document.rs) whose tables output/cold_table.rs prints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use tlsbench_harness::cold::{Cold, ColdReply, ColdSide};
use tlsbench_harness::{pki, Kind, Measure, Pki, Scenario, Side};

use crate::cli::ColdArgs;
use crate::cold_document::COLD_SCHEMA_VERSION;
use crate::cold_document::{self as document, phases, ColdDocument, ColdEnvironment, ColdRun, ColdScenario, Outcome};
use crate::instructions::{total, Callgrind};
use crate::results::Status;
use crate::runner_command::{strs, RunnerCommand};
use crate::store::{Store, StoreError};
use crate::{executor, export, output};

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
    if let Some(id) = &args.show {
        return show(id.as_deref(), &args);
    }
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
    // The run is stored before it measures, each scenario as its table is printed: an
    // interrupted run keeps what it measured.
    let mut store = Store::create_or_open(&args.db.db)?;
    let started = SystemTime::now();
    let run = ColdRun {
        id: crate::commands::run_id(started),
        started: humantime::format_rfc3339_seconds(started).to_string(),
        tlsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: std::env::args().collect(),
        measure,
        unit: document::unit(measure).to_string(),
        processes,
        stacks: ids.clone(),
        planned_scenarios: scenarios.iter().map(Scenario::name).collect(),
        environment: ColdEnvironment::detect(),
    };
    store.insert_cold_run(&run)?;
    let mut doc = ColdDocument { schema_version: COLD_SCHEMA_VERSION, run, scenarios: Vec::new() };
    for (i, scenario) in scenarios.iter().enumerate() {
        let mut rows = Vec::new();
        for id in &ids {
            let runner = runners.of(id)?;
            let mut outcome = Outcome { processes: Vec::new(), library: None, end: None };
            // Until the first process that replies without figures.
            while outcome.end.is_none() && outcome.processes.len() < processes {
                let reply = match &callgrind {
                    None => timed(runner, id, scenario, &data_dir),
                    Some(callgrind) => counted(callgrind, runner, id, scenario, &data_dir),
                };
                match reply {
                    Ok((cold, library)) => {
                        outcome.processes.push(cold);
                        outcome.library = outcome.library.or(library);
                    }
                    Err(end) => outcome.end = Some(end),
                }
            }
            rows.push((id.clone(), outcome));
        }
        let measured = ColdScenario::new(scenario.name(), &phases(scenario.kind), rows);
        if i > 0 {
            output::print("\n");
        }
        output::print(output::cold_table::render(&measured, measure, processes));
        store.record_cold_scenario(&doc.run.id, i, &measured)?;
        doc.scenarios.push(measured);
    }
    output::stderr::line(format!(
        "stored as cold run {} in {}; `tlsbench cold --show {}` prints it again",
        doc.run.id,
        args.db.db.display(),
        doc.run.id
    ));
    export(&args, &doc)?;
    let failed = doc.scenarios.iter().flat_map(|s| &s.rows).filter(|r| r.status == Status::Failed).count();
    Ok(if failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// `cold --show [ID]`: a stored cold run's tables as the run printed them (the latest without
/// ID), exported as a run's are.
fn show(id: Option<&str>, args: &ColdArgs) -> Result<ExitCode> {
    let store = Store::open_existing(&args.db.db)?;
    let id = match id {
        Some(id) => id.to_string(),
        None => store.latest_cold()?,
    };
    let doc = match store.load_cold(&id) {
        Err(StoreError::UnknownColdRun { .. }) if store.has_run(&id, false)? => {
            bail!("`{id}` is a run of `tlsbench run`, not a cold run: `tlsbench show {id}` prints it")
        }
        doc => doc?,
    };
    output::print(output::cold_table::render_all(&doc));
    let (measured, planned) = (doc.scenarios.len(), doc.run.planned_scenarios.len());
    if measured < planned {
        output::stderr::line(format!(
            "note: cold run {id} was interrupted: {measured} of its {planned} scenarios were measured"
        ));
    }
    export(args, &doc)?;
    Ok(ExitCode::SUCCESS)
}

fn export(args: &ColdArgs, doc: &ColdDocument) -> Result<()> {
    if let Some(path) = &args.json {
        export::write_bytes(path, export::cold::json(doc))?;
    }
    if let Some(path) = &args.csv {
        export::write_bytes(path, export::cold::csv(doc))?;
    }
    Ok(())
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
fn timed(runner: &Path, id: &str, scenario: &Scenario, data_dir: &Path) -> Reply {
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
    let output = executor::call_with(runner, &strs(&words), &env, TIMEOUT).map_err(failed)?;
    reply(&output.stdout, output.stderr.as_deref())
}

/// One fresh process per side under callgrind, each counting its side's calls, phase by phase.
fn counted(callgrind: &Callgrind, runner: &Path, id: &str, scenario: &Scenario, data_dir: &Path) -> Reply {
    let dir = tempfile::tempdir().map_err(|e| (Status::Failed, format!("a directory for callgrind's output: {e}")))?;
    let mut library = None;
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
        let output = executor::call(&program, &strs(&args), TIMEOUT).map_err(failed)?;
        library = library.or(reply(&output.stdout, output.stderr.as_deref())?.1);
        sides[slot] = phase_counts(&out, scenario.kind).map_err(|reason| (Status::Failed, reason))?;
    }
    let [client, server] = sides;
    Ok((Cold { process_start_ns: None, client, server }, library))
}

fn failed(e: anyhow::Error) -> (Status, String) {
    (Status::Failed, format!("{e:#}"))
}

/// The phases' counts from callgrind's dumps `OUT.1`, `OUT.2`, ... in the order the runner dumped
/// them (its phases, [`tlsbench_harness::cold::PHASES`]).
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

/// A process's figures with the library its runner reported, or how and why it ended without.
type Reply = Result<(Cold, Option<String>), (Status, String)>;

fn reply(stdout: &str, stderr: Option<&str>) -> Reply {
    let with_stderr = |reason: String| match stderr {
        Some(printed) => format!("{reason} (stderr: {printed})"),
        None => reason,
    };
    match serde_json::from_str::<ColdReply>(stdout).context("the runner printed an unreadable cold reply") {
        Ok(ColdReply::Ok { cold, client_library, server_library, .. }) => {
            // One stack on both sides: one library, whichever side named it.
            let library = [client_library, server_library].into_iter().find(|l| !l.is_empty());
            Ok((cold, library))
        }
        Ok(ColdReply::Unsupported { reason }) => Err((Status::Unsupported, reason)),
        Ok(ColdReply::Failed { reason }) => Err((Status::Failed, with_stderr(reason))),
        Err(e) => Err((Status::Failed, with_stderr(format!("{e:#}")))),
    }
}
