//! A sample from runner processes of its own (one-shot): one runner holding both stacks, or one
//! per side of a split pair; a TCP cell's (net.rs) and those of the measures counted under
//! callgrind (callgrind.rs) are taken by their own modules. And a sample of `--threads N` as the cell
//! keeps it.

use std::time::Duration;

use tlsbench_harness::protocol::SampleReport;
use tlsbench_harness::{Measure, Side};

use crate::executor;
use crate::plan::{Cell, Process};
use crate::results::Status;
use crate::runner_command::{strs, Peer, RunnerCommand};
use crate::sample_call::{allocator_env, merge_sides, reply, reply_of, sample_settings, Settings};

/// Sample `index` of `cell`: in one fresh runner holding both stacks, split over two runners,
/// one per side, or over TCP. `cpu`: the one CPU a pair on one thread runs on (the sentinel's
/// choice, noise/sentinel.rs); None: a split pair's first, anywhere for one process.
/// `full_speed`: the runner counts only the stretches of its loop at that speed (`--full-speed`).
pub(super) fn sample(
    cell: &Cell,
    index: usize,
    settings: &Settings,
    cpu: Option<usize>,
    full_speed: Option<f64>,
) -> Result<SampleReport, (Status, String)> {
    match cell.process {
        Process::Tcp => return crate::net::sample(cell, settings),
        Process::TcpPeak => return crate::peak::sample(cell, settings),
        Process::InProcess | Process::Split => {}
    }
    if matches!(cell.measure, Measure::Instructions | Measure::Sync) {
        return super::callgrind::sample(cell, settings);
    }
    let failed = |reason: String| (Status::Failed, reason);
    let runners = settings.runners_for(cell);
    let runner = |id: &str| runners.of(id).map_err(|e| failed(e.to_string()));
    let warmup_ms = settings.warmup_ms(cell);
    let limit = cell.time_limit(
        settings.timeout,
        Duration::from_millis(settings.min_time_ms),
        Duration::from_millis(warmup_ms),
    );
    let env = allocator_env(cell);
    let both = runners.for_pair(&cell.client, &cell.server).filter(|_| cell.process == Process::InProcess);
    let Some(both) = both else {
        let (client_runner, server_runner) = (runner(&cell.client)?, runner(&cell.server)?);
        // The socket to the peer is each runner's stdin.
        let side = |role, stack, peer_stack| {
            let settings = sample_settings(cell, settings, settings.min_time_ms, warmup_ms);
            RunnerCommand::Side { role, stack, peer_stack, peer: Peer::Stdin, settings }.words()
        };
        let client_args = side(Side::Client, &cell.client, &cell.server);
        let server_args = side(Side::Server, &cell.server, &cell.client);
        let (client_args, server_args) = (strs(&client_args), strs(&server_args));
        let (client, server) =
            executor::call_pair_on((client_runner, &client_args), (server_runner, &server_args), &env, limit, cpu);
        return merge_sides(reply(client), reply(server));
    };
    let threads = cell.threads.or(settings.on_a_thread(cell).then_some(1));
    let cpus = settings.cpus_for(cell, index);
    let settings = sample_settings(cell, settings, settings.min_time_ms, warmup_ms)
        .judged_at(full_speed.filter(|_| threads.is_none()));
    let args = RunnerCommand::Sample {
        client: &cell.client,
        server: &cell.server,
        threads,
        contexts: cell.contexts,
        cpus: cpus.as_deref(),
        settings,
    };
    let args = args.words();
    let args = strs(&args);
    let cpu = cpu.filter(|_| threads.is_none());
    let report = reply_of(reply(executor::call_on_cpu(both, &args, &env, limit, cpu)))?;
    match cpus {
        Some(asked) if crate::cores::pinned_cpus(&report).as_ref() != Some(&asked) => Err((
            Status::Failed,
            format!(
                "the runner's threads ran on CPUs {:?}, the sample asked for {asked:?}; result refused",
                report.threads.iter().map(|t| t.cpu).collect::<Vec<_>>()
            ),
        )),
        _ => Ok(report),
    }
}

/// A sample of `--threads N` as the cell keeps it: the runner must have reported N threads,
/// each of which measured; the sample's values are the sums of the threads' rates (computed
/// here, from the threads' own).
pub(super) fn aggregate_threads(cell: &Cell, report: SampleReport) -> Result<SampleReport, (Status, String)> {
    let Some(n) = cell.threads else { return Ok(report) };
    // A server's workers share its counts: its rate is already theirs together.
    if cell.process.is_tcp() {
        return Ok(report);
    }
    let failed = |reason: String| Err((Status::Failed, reason));
    if report.threads.len() != n as usize {
        return failed(format!(
            "the runner reported {} thread(s)' results, the cell asks for {n}; result refused",
            report.threads.len()
        ));
    }
    if let Some(i) = report.threads.iter().position(|t| t.iterations == 0) {
        return failed(format!("thread {} of {n} measured no iteration; result refused", i + 1));
    }
    let values = tlsbench_harness::protocol::sum_threads(&report.threads);
    let iterations = report.threads.iter().map(|t| t.iterations).sum();
    Ok(SampleReport { values, iterations, ..report })
}
