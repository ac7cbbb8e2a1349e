//! A sample of the measures counted under callgrind, instructions and sync: each side counted by
//! callgrind in a process of its own (instructions.rs: how a runner is run under callgrind, and
//! how its count of instructions is read; sync/: the sync measure's counts).

use std::path::PathBuf;
use std::time::Duration;

use tlsbench_harness::protocol::{Metric, MetricValue, SampleReport};
use tlsbench_harness::{Kind, Measure, Side};

use crate::callgrind_file::CallGraph;
use crate::instructions::{counted, iterations, total, units, Callgrind};
use crate::plan::{Cell, Process};
use crate::results::Status;
use crate::runner_command::{strs, Peer, RunnerCommand};
use crate::sample_call::{allocator_env, merge_sides, reply, reply_of, Settings};
use crate::{executor, sync};

/// One sample: each side counted in its own process under callgrind, both at once. In-process,
/// each of the two processes runs the whole pair and counts one side; split-process, each runs
/// its side, as for time.
pub(super) fn sample(cell: &Cell, settings: &Settings) -> Result<SampleReport, (Status, String)> {
    let failed = |reason: String| (Status::Failed, reason);
    let callgrind = Callgrind::find().map_err(|e| failed(e.to_string()))?;
    let dir = tempfile::tempdir().map_err(|e| failed(format!("a directory for callgrind's output: {e}")))?;
    let out = |side: Side| dir.path().join(format!("{side}.callgrind"));
    let counted = |count_side| {
        counted(&cell.scenario, cell.measure, iterations(cell.scenario.kind), count_side, &settings.data_dir)
    };
    let options: &[&str] = match cell.measure {
        Measure::Sync => &sync::CALLGRIND_OPTIONS,
        _ => &[],
    };
    let limit = cell.time_limit(settings.timeout, Duration::ZERO, Duration::ZERO);
    let runners = settings.runners_for(cell);
    let runner = |id: &str| runners.of(id).map_err(|e| failed(e.to_string()));
    let env = allocator_env(cell);
    // A context kind builds one side's context: only that side is counted.
    if let (Some(side), Process::InProcess) = (cell.scenario.kind.context_side(), cell.process) {
        let both = runner(&cell.client)?;
        let (client, server, settings) = (&cell.client, &cell.server, counted(Some(side)));
        let command = RunnerCommand::Sample { client, server, threads: None, contexts: None, cpus: None, settings };
        let (program, args) = callgrind.command(both, &command, &out(side), options, &env);
        let mut report = reply_of(reply(executor::call(&program, &strs(&args), limit))).map_err(beyond_valgrind)?;
        report.values.retain(|v| v.metric == Metric::TrustRoots);
        let count = total(&out(side)).map_err(|e| failed(format!("{side}: {e:#}")))?;
        report.values.push(per_iteration(side, cell.scenario.kind, report.iterations, count));
        return Ok(report);
    }
    let (client, server) = match cell.process {
        Process::InProcess => {
            let both = runner(&cell.client)?;
            let counting = |side: Side| {
                let (client, server, settings) = (&cell.client, &cell.server, counted(Some(side)));
                let command =
                    RunnerCommand::Sample { client, server, threads: None, contexts: None, cpus: None, settings };
                callgrind.command(both, &command, &out(side), options, &env)
            };
            let (client, server) = (counting(Side::Client), counting(Side::Server));
            let call = |(program, args): &(PathBuf, Vec<String>)| executor::call(program, &strs(args), limit);
            std::thread::scope(|scope| {
                let client = scope.spawn(|| call(&client));
                let server = call(&server);
                (client.join().expect("the client's callgrind thread does not panic"), server)
            })
        }
        Process::Split => {
            let (client_runner, server_runner) = (runner(&cell.client)?, runner(&cell.server)?);
            let side = |role: Side, stack: &str, peer_stack: &str| {
                let settings = counted(None);
                let command = RunnerCommand::Side { role, stack, peer_stack, peer: Peer::Stdin, settings };
                let runner = if role == Side::Client { client_runner } else { server_runner };
                callgrind.command(runner, &command, &out(role), options, &env)
            };
            let (client, server) =
                (side(Side::Client, &cell.client, &cell.server), side(Side::Server, &cell.server, &cell.client));
            let (client_args, server_args) = (strs(&client.1), strs(&server.1));
            executor::call_pair_with((&client.0, &client_args), (&server.0, &server_args), &[], limit)
        }
        Process::Tcp | Process::TcpPeak => unreachable!("the instructions measure is planned in memory only"),
    };
    let mut report = merge_sides(reply(client), reply(server)).map_err(beyond_valgrind)?;
    // The values are the counts, read from callgrind's files.
    // The roots a trust store held stay, for the gate on them.
    report.values.retain(|v| v.metric == Metric::TrustRoots);
    for side in [Side::Client, Side::Server] {
        let values = match cell.measure {
            Measure::Sync => sync_counts(&out(side), side, cell.scenario.kind, report.iterations),
            _ => total(&out(side)).map(|total| vec![per_iteration(side, cell.scenario.kind, report.iterations, total)]),
        };
        report.values.extend(values.map_err(|e| failed(format!("{side}: {e:#}")))?);
    }
    Ok(report)
}

/// A side's sync counts, from callgrind's file.
fn sync_counts(out: &std::path::Path, side: Side, kind: Kind, iterations: u64) -> anyhow::Result<Vec<MetricValue>> {
    use anyhow::Context;
    let text = std::fs::read_to_string(out).with_context(|| format!("reading callgrind's output {}", out.display()))?;
    let counts = sync::Counts::of(&CallGraph::parse(&text)?)?;
    Ok(counts.values(side, kind, iterations))
}

/// A runner killed by SIGILL under valgrind met an instruction that valgrind does not emulate
/// (valgrind raises SIGILL then, with its own words on stderr): the stack cannot be counted on
/// this machine, which is `n/a` with the reason rather than a failure of the stack.
fn beyond_valgrind((status, reason): (Status, String)) -> (Status, String) {
    match status == Status::Failed && reason.contains("(SIGILL)") {
        true => (
            Status::Unsupported,
            format!("valgrind cannot run this stack here (an instruction it does not emulate): {reason}"),
        ),
        false => (status, reason),
    }
}

/// A side's instructions per handshake, or per megabyte of a transfer.
fn per_iteration(side: Side, kind: Kind, iterations: u64, total: u64) -> MetricValue {
    let metric = match kind {
        Kind::Transfer => Metric::InstructionsPerMb,
        Kind::ContextServer | Kind::ContextClient | Kind::ContextClientSystem => Metric::InstructionsPerContext,
        _ => Metric::InstructionsPerHandshake,
    };
    MetricValue { side, metric, value: total as f64 / units(kind, iterations), seconds: 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instruction_valgrind_does_not_emulate_makes_the_cell_n_a() {
        let sigill = concat!(
            "server runner: runner was killed by signal 4 (SIGILL): ",
            "vex amd64->IR: unhandled instruction bytes: 0x62 0xF1",
        );
        let (status, reason) = beyond_valgrind((Status::Failed, sigill.into()));
        assert_eq!(status, Status::Unsupported);
        assert!(reason.starts_with("valgrind cannot run this stack here") && reason.ends_with("0x62 0xF1"), "{reason}");
        let crash = (Status::Failed, "server runner: runner was killed by signal 11 (SIGSEGV)".to_string());
        assert_eq!(beyond_valgrind(crash.clone()), crash);
    }
}
