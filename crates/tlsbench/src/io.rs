//! `tlsbench trace` (one connection's IO, call by call) and `tlsbench io` (the behaviour table):
//! both ask a runner holding the pair for the trace of one connection (`runner trace`), which
//! is taken in one process, and show it; the behaviours are derived from the trace by the
//! harness, never declared.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tlsbench_harness::io::{IoTrace, TraceReply};
use tlsbench_harness::{pki, ClientAuth, Group, KeyType, Kind, Pki, Scenario, Suite, Version};

use crate::builds::{self, Build};
use crate::cli::{Configs, IoArgs, TraceArgs};
use crate::order::first_seen;
use crate::output::io_table::{IoRow, Outcome};
use crate::runner_command::{strs, RunnerCommand};
use crate::runners::Runners;
use crate::{executor, output, stacks};

/// A trace is one connection: a runner taking longer is stuck.
const TIMEOUT: Duration = Duration::from_secs(60);

/// `tlsbench trace`: prints the trace of one connection of the pair.
pub fn trace(args: TraceArgs) -> Result<ExitCode> {
    let (client, server) = match (args.stack, args.client, args.server) {
        (Some(stack), _, _) => (stack.clone(), stack),
        (None, Some(client), Some(server)) => (client, server),
        _ => bail!("choose the stacks with --stack ID, or --client ID --server ID"),
    };
    let built = args.build.built();
    let runners = builds::one(Runners::find()?, built, &[client.clone(), server.clone()])?;
    match call_trace(&runners, built.build, &client, &server, &args.scenario)? {
        TraceReply::Ok(trace) if args.json => output::print(format!("{}\n", serde_json::to_string_pretty(&trace)?)),
        TraceReply::Ok(trace) => output::print(output::trace::render(&trace)),
        TraceReply::Unsupported { reason } => bail!("{} is unsupported: {reason}", args.scenario),
        TraceReply::Failed { reason } => bail!("{} failed: {reason}", args.scenario),
    }
    Ok(ExitCode::SUCCESS)
}

/// What `tlsbench io` profiles: io-profile in TLS 1.3 and 1.2 with ECDSA P-256, pinned to x25519
/// and AES-128-GCM, and with each library's defaults, as `configs` says.
pub fn io_scenarios(configs: Configs) -> Vec<Scenario> {
    let mut scenarios = Vec::new();
    for version in [Version::Tls13, Version::Tls12] {
        let pinned = Scenario::new(Kind::IoProfile, version, Group::X25519, KeyType::EcdsaP256, Suite::Aes128Gcm)
            .expect("a valid scenario");
        if configs != Configs::Defaults {
            scenarios.push(pinned);
        }
        if configs != Configs::Pinned {
            scenarios.push(pinned.with_defaults().expect("io-profile exists with the defaults"));
        }
    }
    scenarios
}

/// `tlsbench io`: one table per scenario of [`io_scenarios`], one row per stack. In a build
/// other than release, the stacks taken by default whose runners only release has (Go's,
/// Java's) are rows n/a saying so, as `run` makes their cells; naming one is an error.
pub fn io(args: IoArgs) -> Result<ExitCode> {
    let built = args.build.built();
    let build = built.build;
    let release = Runners::find()?;
    let (ids, release_only): (Vec<String>, Vec<(String, String)>) = match args.stacks.is_empty() {
        true => {
            let (ids, others): (Vec<String>, Vec<String>) = crate::plan::default_stacks::of_a_run(&release)
                .into_iter()
                .partition(|id| built.is_default() || builds::runtime_only(&release, built, id).is_none());
            let reasons = others
                .into_iter()
                .map(|id| (builds::runtime_only(&release, built, &id).expect("partitioned by it"), id))
                .collect();
            (ids, reasons)
        }
        false => (first_seen(args.stacks), Vec::new()),
    };
    let runners = builds::one(release, built, &ids)?;
    let mut failed = 0;
    for (i, scenario) in io_scenarios(args.config).iter().enumerate() {
        let mut rows = Vec::new();
        for id in &ids {
            crate::output::stderr::line(format!("tracing {scenario} {}", builds::label(id, built)));
            let outcome = match call_trace(&runners, build, id, id, scenario) {
                Ok(TraceReply::Ok(trace)) => Outcome::Measured(trace),
                Ok(TraceReply::Unsupported { reason }) => Outcome::Unsupported(reason),
                Ok(TraceReply::Failed { reason }) => Outcome::Failed(reason),
                Err(e) => Outcome::Failed(format!("{e:#}")),
            };
            failed += usize::from(matches!(outcome, Outcome::Failed(_)));
            // The client's flights hold one handshake message each unless it has a certificate
            // to send: the same connection with one tells whether the client coalesces.
            let with_certificate = Scenario { client_auth: ClientAuth::Required, ..*scenario };
            let mtls = match matches!(outcome, Outcome::Measured(_))
                .then(|| call_trace(&runners, build, id, id, &with_certificate))
            {
                Some(Ok(TraceReply::Ok(trace))) => Some(trace),
                _ => None,
            };
            rows.push(IoRow { stack: builds::label(id, built), outcome, mtls });
        }
        for (reason, id) in &release_only {
            rows.push(IoRow {
                stack: builds::label(id, built),
                outcome: Outcome::Unsupported(reason.clone()),
                mtls: None,
            });
        }
        if i > 0 {
            output::print("\n");
        }
        output::print(output::io_table::render(scenario, &rows));
    }
    if failed > 0 {
        crate::output::stderr::line(format!("{failed} trace(s) failed; the reasons are listed under the tables"));
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks the runner holding both stacks for the trace of `scenario`; refuses a trace whose
/// libraries are not the stacks' own or whose runner is not of `build`. The trace names its
/// build when it is not release.
fn call_trace(runners: &Runners, build: Build, client: &str, server: &str, scenario: &Scenario) -> Result<TraceReply> {
    let Some(path) = runners.for_pair(client, server) else {
        bail!("no runner holds both {client} and {server}, and IO is traced with both sides in one process");
    };
    let data_dir = pki::default_data_dir();
    Pki::load_or_generate(&data_dir, &[scenario.key]).map_err(anyhow::Error::msg)?;
    let name = scenario.name();
    let args = RunnerCommand::Trace { client, server, scenario, data_dir: &data_dir }.words();
    let output = executor::call(path, &strs(&args), TIMEOUT)
        .with_context(|| format!("tracing {name} with {client} -> {server}"))?;
    let reply: TraceReply = serde_json::from_str(&output.stdout)
        .with_context(|| format!("runner {} printed an unreadable trace", path.display()))?;
    let TraceReply::Ok(mut trace) = reply else { return Ok(reply) };
    check_libraries(&trace)?;
    builds::check_reply(build, trace.build.as_deref()).map_err(anyhow::Error::msg)?;
    trace.build = (build != Build::Release).then(|| build.name().to_string());
    Ok(TraceReply::Ok(trace))
}

fn check_libraries(trace: &IoTrace) -> Result<()> {
    for (id, library) in [(&trace.client_stack, &trace.client_library), (&trace.server_stack, &trace.server_library)] {
        let stack = stacks::known(id).with_context(|| format!("the runner traced an unknown stack `{id}`"))?;
        if !(stack.owns)(library) {
            bail!("stack `{id}` reports library `{library}`, which is not its own; refusing its trace");
        }
    }
    Ok(())
}
