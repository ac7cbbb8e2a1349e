//! Measuring a planned run: every sample of every cell in its own runner process, cells
//! interleaved in a new random order each round so that machine drift hits all stacks alike.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use tlsbench_harness::allocator::{self, Allocator};
use tlsbench_harness::protocol::{Metric, MetricValue, Reply, SampleReport};
use tlsbench_harness::{Measure, Side};

use crate::builds::{self, Build};
use crate::key::CellKey;
use crate::output::progress::Progress;
use crate::plan::{Cell, Process};
use crate::results::{CellResult, RunDocument, RunInfo, Status, SCHEMA_VERSION};
use crate::steady::Warmup;
use crate::store::{StoredCell, StoredRun};
use crate::{executor, stacks, stats};

/// How samples are taken.
#[derive(Clone, Debug)]
pub struct Settings {
    pub samples: usize,
    pub min_time_ms: u64,
    pub warmup_ms: u64,
    /// The user's `--timeout`: what a sample is given beyond its planned work (see
    /// [`Cell::time_limit`]); a runner still going after that is killed and its cell fails.
    pub timeout: Duration,
    pub data_dir: PathBuf,
    /// Release's runners: every cell's but those of another build.
    pub runners: stacks::Runners,
    /// The runners of each other build the run measures (`--build`), each checked to be it.
    pub builds: Vec<(Build, stacks::Runners)>,
    /// `--target-ci`: further rounds for the cells still wider than it.
    pub target: Option<Target>,
    /// `--forks`: the processes a cell with a warming runtime takes its samples from (warm.rs).
    pub forks: usize,
    /// `--warmup-max-ms`: the longest a process of such a cell warms up before it is measured.
    pub warmup_max: Duration,
}

impl Settings {
    /// The runners that measure `cell`: its build's.
    pub fn runners_for(&self, cell: &Cell) -> &stacks::Runners {
        match cell.build {
            None | Some(Build::Release) => &self.runners,
            Some(build) => self
                .builds
                .iter()
                .find(|(b, _)| *b == build)
                .map(|(_, r)| r)
                .expect("the runners of every planned build were found"),
        }
    }

    /// The warm-up within one sample of `cell`: the run's for a process that stays up (it warmed
    /// up once, warm.rs), else the least a new process needs ([`Settings::warmup_floor`]).
    pub fn warmup_ms(&self, cell: &Cell) -> u64 {
        if crate::warm::uses_sessions(cell, self) {
            // A process that stays up warms up once, for at least --warmup-ms (warm.rs); its
            // samples only re-prime its caches after other cells' samples.
            return self.warmup_ms.min(SESSION_SAMPLE_WARMUP_MS);
        }
        self.warmup_floor(cell)
    }

    /// The least warm-up of a new process of `cell`: the run's, or longer where a stack of the
    /// pair needs more before its figures settle (a JIT: its `list` entry says how long).
    pub fn warmup_floor(&self, cell: &Cell) -> u64 {
        let floor = |id: &str| self.runners.info(id).map_or(0, |info| info.capabilities.min_warmup_ms);
        self.warmup_ms.max(floor(&cell.client)).max(floor(&cell.server))
    }
}

/// The most a sample of a process that stays up warms up (docs/sampling.md).
const SESSION_SAMPLE_WARMUP_MS: u64 = 25;

/// After the fixed rounds, cells whose intervals are wider than `ci_percent` get further
/// samples until none is, or until the run has measured for `budget`.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub ci_percent: f64,
    pub budget: Duration,
}

/// What adaptive sampling does next.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Another round, of these cells (positions in the plan).
    Round(Vec<usize>),
    /// Every cell is within the target.
    Reached,
    /// The budget is spent; these cells are still wider than the target.
    BudgetSpent(Vec<usize>),
}

/// The next step of adaptive sampling after `elapsed` of measuring.
pub fn next(states: &[CellState], target: &Target, elapsed: Duration) -> Next {
    let wide: Vec<usize> =
        (0..states.len()).filter(|&i| states[i].widest_ci().is_some_and(|w| w > target.ci_percent)).collect();
    match (wide.is_empty(), elapsed >= target.budget) {
        (true, _) => Next::Reached,
        (false, true) => Next::BudgetSpent(wide),
        (false, false) => Next::Round(wide),
    }
}

/// Where one cell stands: how it ended, if it did, and the values of every sample taken.
pub struct CellState {
    pub cell: Cell,
    pub outcome: Result<(), (Status, String)>,
    client_library: Option<String>,
    server_library: Option<String>,
    /// What the latest sample negotiated, client's view then server's.
    negotiated: [Option<String>; 2],
    /// The allocator and version the runners reported (`jemalloc 5.3.1-...`); None where they
    /// allocate through a runtime of their own.
    allocator_used: Option<String>,
    /// Samples recorded so far.
    taken: usize,
    series: Vec<(Side, Metric, Vec<f64>)>,
    /// Which of the cell's processes (forks) took each sample, where they stay up (warm.rs).
    forks: Vec<Option<u32>>,
    /// How each of its processes warmed up.
    warmups: Vec<Warmup>,
}

/// Where each sample and each cell's end go as they happen (the results database), so that a
/// run stopped at any point keeps everything measured before.
pub trait Recorder {
    /// Sample `index` (from 0) of cell `cell` (its position in the plan), taken by its process
    /// `fork` where its processes stay up.
    fn sample(&mut self, cell: usize, index: usize, report: &SampleReport, fork: Option<u32>) -> anyhow::Result<()>;
    /// How one of the cell's processes warmed up.
    fn warmed(&mut self, cell: usize, warmup: &Warmup) -> anyhow::Result<()>;
    fn ended(&mut self, cell: usize, status: Status, reason: &str) -> anyhow::Result<()>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Every cell has all its samples, or has ended.
    Complete,
    /// `stop` was set: what was measured is recorded, the rest is missing.
    Interrupted,
}

/// Takes every missing sample of every cell that has not ended, round by round, until each has
/// `settings.samples`; then, with a target, further rounds of the cells still wider than it
/// (see [`next`]). Stops before the next sample once `stop` is set.
pub fn measure(
    states: &mut [CellState],
    settings: &Settings,
    progress: &mut Progress,
    recorder: &mut dyn Recorder,
    stop: &AtomicBool,
) -> anyhow::Result<Finish> {
    let started = Instant::now();
    let cells: Vec<(usize, &Cell)> =
        states.iter().enumerate().filter(|(_, s)| s.missing(settings.samples) > 0).map(|(i, s)| (i, &s.cell)).collect();
    // Scenarios whose processes that stay up would be too many at once take their rounds one
    // batch after the other, each batch's processes ended before the next's start.
    for batch in crate::warm::batches(&cells, settings) {
        let pool = &mut crate::sessions::Pool::new()?;
        warm_up_first(states, &batch, settings, pool, progress, recorder)?;
        for round in 0..settings.samples {
            // A resumed cell may already have this round's sample.
            let due: Vec<usize> = batch.iter().copied().filter(|&i| states[i].taken <= round).collect();
            if take_round(states, due, round, settings, pool, progress, recorder, stop)? == Finish::Interrupted {
                return Ok(Finish::Interrupted);
            }
        }
    }
    let Some(target) = &settings.target else { return Ok(Finish::Complete) };
    let pool = &mut crate::sessions::Pool::new()?;
    let mut round = settings.samples;
    loop {
        match next(states, target, started.elapsed()) {
            Next::Round(cells) => {
                progress.extra_round(cells.len() as u64);
                if take_round(states, cells, round, settings, pool, progress, recorder, stop)? == Finish::Interrupted {
                    return Ok(Finish::Interrupted);
                }
                round += 1;
            }
            Next::Reached | Next::BudgetSpent(_) => return Ok(Finish::Complete),
        }
    }
}

/// How progress names a cell: `SCENARIO PAIR (VARIANT) [BUILD]`, and where its sides ran.
fn progress_label(cell: &Cell) -> String {
    let key = cell.key();
    format!("{} {}", key.scenario, key.pair_label())
}

/// Warms up the processes that stay up before the first round (warm.rs), recording each
/// warm-up, or the end of a cell whose processes failed.
fn warm_up_first(
    states: &mut [CellState],
    positions: &[usize],
    settings: &Settings,
    pool: &mut crate::sessions::Pool,
    progress: &mut Progress,
    recorder: &mut dyn Recorder,
) -> anyhow::Result<()> {
    let cells: Vec<(usize, &Cell)> = positions.iter().map(|&i| (i, &states[i].cell)).collect();
    for (i, outcome) in crate::warm::warm_up_first(&cells, settings, pool) {
        let state = &mut states[i];
        match outcome {
            Ok(warmup) => {
                state.warmups.push(warmup);
                recorder.warmed(i, &warmup)?;
            }
            Err((status, reason)) if state.outcome.is_ok() => {
                progress.cell_ended(
                    &progress_label(&state.cell),
                    status,
                    &reason,
                    state.missing(settings.samples) as u64,
                );
                recorder.ended(i, status, &reason)?;
                state.outcome = Err((status, reason));
            }
            Err(_) => {}
        }
    }
    Ok(())
}

/// One sample of each of `cells` that has not ended, in a new random order: so the processes
/// that stay up (warm.rs) are asked in turn too, and drift spreads over every cell.
#[allow(clippy::too_many_arguments)]
fn take_round(
    states: &mut [CellState],
    mut cells: Vec<usize>,
    round: usize,
    settings: &Settings,
    pool: &mut crate::sessions::Pool,
    progress: &mut Progress,
    recorder: &mut dyn Recorder,
    stop: &AtomicBool,
) -> anyhow::Result<Finish> {
    fastrand::shuffle(&mut cells);
    for i in cells {
        let state = &mut states[i];
        if state.outcome.is_err() {
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            return Ok(Finish::Interrupted);
        }
        let label = progress_label(&state.cell);
        let index = state.taken;
        // Runners are outside the terminal's process group (executor.rs): Ctrl-C lets this
        // sample finish, and the check above stops before the next one.
        let (fork, taken) = match crate::warm::uses_sessions(&state.cell, settings) {
            true => {
                let fork = crate::warm::fork_of(index, settings);
                (Some(fork), crate::warm::sample(&state.cell, fork, settings, pool))
            }
            false => (None, sample(&state.cell, settings).map(|report| (report, None))),
        };
        if let Ok((_, Some(warmup))) = &taken {
            state.warmups.push(*warmup);
            recorder.warmed(i, warmup)?;
        }
        let outcome = taken
            .and_then(|(report, _)| aggregate_threads(&state.cell, report))
            .and_then(|report| state.record(&report, fork).map(|()| report));
        progress.sample_done(round, &label);
        match outcome {
            Ok(report) => recorder.sample(i, index, &report, fork)?,
            Err((status, reason)) => {
                progress.cell_ended(&label, status, &reason, settings.samples.saturating_sub(index + 1) as u64);
                recorder.ended(i, status, &reason)?;
                state.outcome = Err((status, reason));
            }
        }
    }
    progress.round_done(round);
    Ok(Finish::Complete)
}

/// The number of runner invocations still to make: every missing sample of the cells that
/// have not ended.
pub fn planned_samples(states: &[CellState], settings: &Settings) -> u64 {
    states.iter().map(|s| s.missing(settings.samples)).sum::<usize>() as u64
}

/// A run's document: its header and the results of every cell, in planned order. Built by
/// this one function for a run that just ended and for a stored one, so that the two are equal.
pub fn document(info: RunInfo, states: &[CellState]) -> RunDocument {
    let results = states.iter().flat_map(CellState::results).collect();
    RunDocument { schema_version: SCHEMA_VERSION, run: info, results: with_rates_per_thread(results) }
}

/// The time measure's rates of a run with `--threads`: after the results, per thread rate
/// metric (`handshakes_per_s_per_thread`, ...), one result per cell of several threads (its
/// aggregate divided by N) and per cell of one thread that has such a sibling (its own rate),
/// the former with its scaling efficiency: its rate per thread over the one-thread cell's rate,
/// medians of the same run. Over TCP (`--workers`), the same for the server's connections per
/// second, per worker (`connections_per_s_per_worker`). Nothing is added to a run without
/// threads or workers.
fn with_rates_per_thread(mut results: Vec<CellResult>) -> Vec<CellResult> {
    let is_rate = |r: &CellResult| {
        let time = r.key.measure == Measure::Time.name() && r.better == "higher";
        // The load generators' rate is the server's, seen from the other end: not per worker.
        let net = r.key.measure == Measure::Net.name()
            && r.metric == Metric::ConnectionsPerS.name()
            && r.side == Side::Server;
        time || net
    };
    let one_thread: HashMap<_, &CellResult> =
        results.iter().filter(|r| is_rate(r) && r.key.threads.is_none()).map(|r| (key_of(r), r)).collect();
    let has_threads: Vec<_> = results.iter().filter(|r| is_rate(r) && r.key.threads.is_some()).map(key_of).collect();
    // In the order of the results they come from, so that blocks and rows keep the run's order.
    let mut added = Vec::new();
    for r in results.iter().filter(|r| is_rate(r)) {
        match r.key.threads {
            None if has_threads.contains(&key_of(r)) => added.push(per_thread(r, 1, None, None)),
            None => {}
            Some(n) => {
                let one = one_thread.get(&key_of(r)).copied().filter(|one| one.status == Status::Ok);
                let times_n = |x: f64| f64::from(n) * x;
                let efficiency = match (r.median, one.and_then(|one| one.median)) {
                    (Some(aggregate), Some(one)) if one > 0.0 => Some(aggregate / times_n(one)),
                    _ => None,
                };
                let interval = match (r.ci95, one.and_then(|one| one.ci95)) {
                    (Some([low, high]), Some([one_low, one_high])) if one_low > 0.0 => {
                        Some([low / times_n(one_high), high / times_n(one_low)])
                    }
                    _ => None,
                };
                added.push(per_thread(r, n, efficiency, interval));
            }
        }
    }
    results.extend(added);
    results
}

/// A cell's result as its variants share it: all but the thread count.
fn key_of(r: &CellResult) -> (CellKey, Side, &str) {
    (r.key.variant_key(), r.side, &r.metric)
}

/// The rate per thread (per worker, over TCP) of a cell of `n` threads: each sample's aggregate
/// divided by n.
fn per_thread(cell: &CellResult, n: u32, efficiency: Option<f64>, efficiency_ci: Option<[f64; 2]>) -> CellResult {
    let per = |x: f64| x / f64::from(n);
    let unit = if cell.key.process == Process::Tcp.name() { "worker" } else { "thread" };
    CellResult {
        metric: format!("{}_per_{unit}", cell.metric),
        samples: cell.samples.iter().map(|&x| per(x)).collect(),
        median: cell.median.map(per),
        ci95: cell.ci95.map(|[lo, hi]| [per(lo), per(hi)]),
        min: cell.min.map(per),
        max: cell.max.map(per),
        scaling_efficiency: efficiency,
        scaling_efficiency_ci: efficiency_ci,
        ..cell.clone()
    }
}

/// A sample of `--threads N` as the cell keeps it: the runner must have reported N threads,
/// each of which measured; the sample's values are the sums of the threads' rates (computed
/// here, from the threads' own).
pub(crate) fn aggregate_threads(cell: &Cell, report: SampleReport) -> Result<SampleReport, (Status, String)> {
    let Some(n) = cell.threads else { return Ok(report) };
    // A server's workers share its counts: its rate is already theirs together.
    if cell.process == Process::Tcp {
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

/// The cells of a stored run as they stood after its last stored sample.
pub fn restore(stored: &StoredRun) -> anyhow::Result<Vec<CellState>> {
    let states = stored.cells.iter().map(CellState::restore).collect::<Result<Vec<_>, String>>();
    states.map_err(anyhow::Error::msg).with_context(|| format!("reading run {}", stored.info.id))
}

/// One sample: in one fresh runner holding both stacks, split over two runners, one per
/// side, or over TCP.
fn sample(cell: &Cell, settings: &Settings) -> Result<SampleReport, (Status, String)> {
    if cell.process == Process::Tcp {
        return crate::net::sample(cell, settings);
    }
    if cell.measure == Measure::Instructions {
        return crate::instructions::sample(cell, settings);
    }
    let failed = |reason: String| (Status::Failed, reason);
    let runners = settings.runners_for(cell);
    let runner = |id: &str| runners.of(id).map_err(|e| failed(e.to_string()));
    let warmup_ms = settings.warmup_ms(cell);
    let common = sample_settings(cell, settings, settings.min_time_ms, warmup_ms);
    let common: Vec<&str> = common.iter().map(String::as_str).collect();
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
        let (client, server) = (cell.client.as_str(), cell.server.as_str());
        let side = |role, stack, peer| {
            [&["side", "--role", role, "--stack", stack, "--peer-stack", peer, "--peer-fd", "0"][..], &common].concat()
        };
        let (client_args, server_args) = (side("client", client, server), side("server", server, client));
        let (client, server) =
            executor::call_pair_with((client_runner, &client_args), (server_runner, &server_args), &env, limit);
        return merge_sides(reply(client), reply(server));
    };
    let threads = cell.threads.map(|n| n.to_string());
    let threads: &[&str] = match &threads {
        Some(n) => &["--threads", n],
        None => &[],
    };
    let args = [&["sample", "--client", &cell.client, "--server", &cell.server][..], threads, &common].concat();
    reply_of(reply(executor::call_with(both, &args, &env, limit)))
}

/// The sample settings of a sample of `cell` (docs/runner-protocol.md), one word each.
pub(crate) fn sample_settings(cell: &Cell, settings: &Settings, min_time_ms: u64, warmup_ms: u64) -> Vec<String> {
    let (scenario, min_time, warmup) = (cell.scenario.name(), min_time_ms.to_string(), warmup_ms.to_string());
    let data_dir = settings.data_dir.to_string_lossy();
    let words = [
        "--scenario",
        &scenario,
        "--measure",
        cell.measure.name(),
        "--min-time-ms",
        &min_time,
        "--warmup-ms",
        &warmup,
        "--data-dir",
        &data_dir,
    ];
    words.into_iter().map(str::to_string).collect()
}

/// A sample reply as the cell takes it: its report, or how the cell ends.
pub(crate) fn reply_of(reply: Result<Reply, String>) -> Result<SampleReport, (Status, String)> {
    match reply {
        Ok(Reply::Ok(report)) => Ok(report),
        Ok(Reply::Unsupported { reason }) => Err((Status::Unsupported, reason)),
        // A refusal that asks for a new process is taken up in warm.rs; anywhere else it fails.
        Ok(Reply::Failed { reason } | Reply::NeedsNewProcess { reason }) | Err(reason) => Err((Status::Failed, reason)),
    }
}

/// The variable that sets a cell's runners on its allocator: always set, so that one left in
/// the user's environment cannot put a cell of glibc's column on another allocator.
pub(crate) fn allocator_env(cell: &Cell) -> [(&'static str, &'static str); 1] {
    [(allocator::ENV, cell.allocator.unwrap_or(Allocator::Glibc).name())]
}

/// The runner's reply. A failed one, and one that cannot be read, carry the last lines the
/// runner's libraries printed (its stderr), which often say why.
pub(crate) fn reply(output: anyhow::Result<executor::Output>) -> Result<Reply, String> {
    let output = output.map_err(|e| format!("{e:#}"))?;
    let with_stderr = |reason: String| match &output.stderr {
        Some(printed) => format!("{reason} (stderr: {printed})"),
        None => reason,
    };
    match serde_json::from_str::<Reply>(&output.stdout) {
        Ok(Reply::Failed { reason }) => Ok(Reply::Failed { reason: with_stderr(reason) }),
        Ok(reply) => Ok(reply),
        Err(e) => Err(with_stderr(format!("runner printed an unreadable reply: {e}"))),
    }
}

/// One report from the two sides of a split-process sample. When a side fails, its own reason
/// wins over its peer's echo of it ("the peer stopped", "went away"); two reasons of their own
/// (one side's unreadable reply, and the other's word on the garbled message it was sent) are
/// both given.
pub(crate) fn merge_sides(
    client: Result<Reply, String>,
    server: Result<Reply, String>,
) -> Result<SampleReport, (Status, String)> {
    let reason = |side: &str, result: &Result<Reply, String>| match result {
        Ok(Reply::Ok(_)) => None,
        Ok(Reply::Unsupported { reason }) => Some((Status::Unsupported, reason.clone())),
        Ok(Reply::Failed { reason } | Reply::NeedsNewProcess { reason }) | Err(reason) => {
            Some((Status::Failed, format!("{side} runner: {reason}")))
        }
    };
    match (client, server) {
        // A side whose runner allocates through its runtime reports none (a run without the axis).
        (Ok(Reply::Ok(client)), Ok(Reply::Ok(server)))
            if client.allocator.is_some() && server.allocator.is_some() && client.allocator != server.allocator =>
        {
            Err((
                Status::Failed,
                format!(
                    "the sides ran on different allocators: {} on the client, {} on the server",
                    describe(&client.allocator),
                    describe(&server.allocator)
                ),
            ))
        }
        (Ok(Reply::Ok(client)), Ok(Reply::Ok(server))) if client.iterations == server.iterations => Ok(SampleReport {
            client_library: client.client_library,
            server_library: server.server_library,
            iterations: client.iterations,
            values: client.values.into_iter().chain(server.values).collect(),
            // Each side's own view, from the process that ran it.
            negotiated: client
                .negotiated
                .into_iter()
                .filter(|n| n.side == Side::Client)
                .chain(server.negotiated.into_iter().filter(|n| n.side == Side::Server))
                .collect(),
            allocator: client.allocator.or(server.allocator),
            threads: Vec::new(),
            build: client.build.or(server.build),
        }),
        (Ok(Reply::Ok(client)), Ok(Reply::Ok(server))) => Err((
            Status::Failed,
            format!(
                "the sides disagree on the work: {} iterations on the client, {} on the server",
                client.iterations, server.iterations
            ),
        )),
        (client, server) => {
            let echoes_peer =
                |r: &(Status, String)| r.1.contains("the peer stopped") || r.1.contains("the peer runner went away");
            Err(match (reason("client", &client), reason("server", &server)) {
                (Some(c), Some(s)) if echoes_peer(&c) && !echoes_peer(&s) => s,
                (Some(c), Some(s)) if !echoes_peer(&c) && !echoes_peer(&s) && c.0 == s.0 => {
                    (c.0, format!("{}; {}", c.1, s.1))
                }
                (Some(c), _) => c,
                (None, Some(s)) => s,
                (None, None) => unreachable!("at least one side did not reply Ok"),
            })
        }
    }
}

/// An allocator a runner reported, or that it reported none.
fn describe(allocator: &Option<allocator::AllocatorInUse>) -> String {
    allocator.as_ref().map_or_else(|| "none reported".to_string(), ToString::to_string)
}

/// What the run's environment says of its allocators, from what the runners reported: each
/// allocator with its version, behind tlsbench's interposer; and the stacks whose runtimes
/// allocate on their own.
pub fn allocators_used(states: &[CellState]) -> String {
    let used = crate::output::first_seen(states.iter().filter_map(|s| s.allocator_used.clone()));
    let runtimes = crate::output::first_seen(
        states
            .iter()
            .filter(|s| s.taken > 0 && s.allocator_used.is_none())
            .flat_map(|s| [s.cell.client.clone(), s.cell.server.clone()]),
    );
    let mut parts = Vec::new();
    if !used.is_empty() {
        parts.push(format!("{}, behind tlsbench's malloc interposer", used.join(", ")));
    }
    if !runtimes.is_empty() {
        parts.push(format!("{}: their runtime's own", runtimes.join(", ")));
    }
    match parts.is_empty() {
        true => "none reported (no sample was taken)".to_string(),
        false => parts.join("; "),
    }
}

impl CellState {
    /// A cell of a new run: nothing taken, unsupported if planning said so.
    pub fn planned(cell: Cell) -> CellState {
        let outcome = cell.support.clone().map_err(|reason| (Status::Unsupported, reason));
        CellState {
            cell,
            outcome,
            client_library: None,
            server_library: None,
            negotiated: [None, None],
            allocator_used: None,
            taken: 0,
            series: Vec::new(),
            forks: Vec::new(),
            warmups: Vec::new(),
        }
    }

    /// A cell of a stored run, with the samples and the outcome stored for it.
    pub fn restore(stored: &StoredCell) -> Result<CellState, String> {
        let cell = Cell::from_key(&stored.key)?;
        let mut state = CellState::planned(cell);
        (state.client_library, state.server_library) = (stored.client_library.clone(), stored.server_library.clone());
        state.allocator_used = stored.allocator_used.clone();
        state.negotiated = stored.negotiated.clone();
        for sample in &stored.samples {
            state.push(&sample.values, sample.fork);
        }
        state.warmups = stored.warmups.clone();
        if stored.status != Status::Ok {
            state.outcome = Err((stored.status, stored.reason.clone().unwrap_or_default()));
        }
        Ok(state)
    }

    /// The cell as the database first stores it: planned, before any sample.
    pub fn as_planned(&self) -> StoredCell {
        let (status, reason) = match &self.outcome {
            Ok(()) => (Status::Ok, None),
            Err((status, reason)) => (*status, Some(reason.clone())),
        };
        StoredCell {
            key: self.cell.key(),
            allocator_used: None,
            status,
            reason,
            client_library: None,
            server_library: None,
            negotiated: [None, None],
            samples: Vec::new(),
            warmups: Vec::new(),
        }
    }

    /// Samples still to take: none once the cell has ended.
    pub fn missing(&self, samples: usize) -> usize {
        match self.outcome {
            Ok(()) => samples.saturating_sub(self.taken),
            Err(_) => 0,
        }
    }

    /// The widest 95% interval of the cell's results, as the table prints it (the farther end,
    /// in % of the median); None for a cell that has ended or has no samples yet.
    pub fn widest_ci(&self) -> Option<f64> {
        if self.outcome.is_err() {
            return None;
        }
        let spreads = self
            .series
            .iter()
            .filter_map(|(_, _, samples)| stats::summarize(samples))
            .filter_map(|s| stats::ci_percent(s.median, s.ci95));
        spreads.reduce(f64::max)
    }

    /// Keeps a sample's values after checking each side reports its own library, and that the
    /// runners ran on the cell's allocator (glibc's where the run chose none).
    fn record(&mut self, report: &SampleReport, fork: Option<u32>) -> Result<(), (Status, String)> {
        let asked = self.cell.allocator.unwrap_or(Allocator::Glibc);
        match (&report.allocator, self.cell.allocator) {
            (Some(used), _) if used.name != asked => {
                return Err((
                    Status::Failed,
                    format!("the runner allocated with {used}, the cell asks for {asked}; result refused"),
                ));
            }
            (None, Some(asked)) if self.cell.process != Process::Tcp => {
                return Err((
                    Status::Failed,
                    format!("the runner did not report its allocator, the cell asks for {asked}; result refused"),
                ));
            }
            _ => {}
        }
        self.allocator_used = report.allocator.as_ref().map(ToString::to_string);
        // The directory was checked when the run started; a runner replaced since must not
        // slip its numbers into another build's column.
        if let Some(build) = self.cell.build {
            builds::check_reply(build, report.build.as_deref()).map_err(|reason| (Status::Failed, reason))?;
        }
        for (id, reported, kept) in [
            (&self.cell.client, &report.client_library, &mut self.client_library),
            (&self.cell.server, &report.server_library, &mut self.server_library),
        ] {
            if !stacks::owns(id, reported) {
                return Err((
                    Status::Failed,
                    format!("stack `{id}` reported library `{reported}`, which is not its own; result refused"),
                ));
            }
            if let Some(earlier) = kept.as_ref().filter(|k| *k != reported) {
                return Err((
                    Status::Failed,
                    format!("stack `{id}` changed library between samples: `{earlier}` then `{reported}`"),
                ));
            }
            *kept = Some(reported.clone());
        }
        for (kept, seen) in self.negotiated.iter_mut().zip(report.negotiated_by_side()) {
            if let Some(seen) = seen {
                *kept = Some(seen.to_string());
            }
        }
        self.push(&report.values, fork);
        Ok(())
    }

    fn push(&mut self, values: &[MetricValue], fork: Option<u32>) {
        for value in values {
            match self.series.iter_mut().find(|(side, metric, _)| *side == value.side && *metric == value.metric) {
                Some((_, _, samples)) => samples.push(value.value),
                None => self.series.push((value.side, value.metric, vec![value.value])),
            }
        }
        self.taken += 1;
        self.forks.push(fork);
    }

    /// One result per side and metric: the summary of the samples, or the reason there is no
    /// number.
    fn results(&self) -> Vec<CellResult> {
        let (measure, metrics) = (self.cell.measure, Metric::of(self.cell.measure, self.cell.scenario.kind));
        let series = |side: Side, metric: Metric| self.series.iter().find(|(s, m, _)| *s == side && *m == metric);
        [Side::Client, Side::Server]
            .into_iter()
            .flat_map(|side| {
                metrics.iter().filter(move |m| m.reported_by(measure, side)).map(move |&metric| (side, metric))
            })
            // A metric its samples lack: a run from before tlsbench took it, or its runner did not.
            .filter(|&(side, metric)| self.taken == 0 || series(side, metric).is_some())
            .map(|(side, metric)| {
                let samples = match &self.outcome {
                    Ok(()) => series(side, metric).map(|(_, _, v)| v.clone()),
                    Err(_) => None,
                };
                let summary = samples.as_deref().and_then(stats::summarize).map(|summary| match &samples {
                    Some(values) if self.forks.len() == values.len() => {
                        stats::spanning_forks(summary, values, &self.forks)
                    }
                    _ => summary,
                });
                let (status, reason) = match &self.outcome {
                    Ok(()) => (Status::Ok, None),
                    Err((status, reason)) => (*status, Some(reason.clone())),
                };
                CellResult {
                    key: self.cell.key(),
                    client_library: self.client_library.clone(),
                    server_library: self.server_library.clone(),
                    scaling_efficiency: None,
                    scaling_efficiency_ci: None,
                    side,
                    metric: metric.name().into(),
                    unit: metric.unit().into(),
                    better: if metric.higher_is_better() { "higher" } else { "lower" }.into(),
                    samples: samples.unwrap_or_default(),
                    median: summary.as_ref().map(|s| s.median),
                    ci95: summary.as_ref().map(|s| s.ci95),
                    min: summary.as_ref().map(|s| s.min),
                    max: summary.as_ref().map(|s| s.max),
                    outliers: summary.map(|s| s.outliers).unwrap_or_default(),
                    status,
                    reason,
                    negotiated: self.negotiated[side as usize].clone(),
                    sample_forks: match self.outcome {
                        Ok(()) => self.forks.iter().copied().collect::<Option<Vec<u32>>>().unwrap_or_default(),
                        Err(_) => Vec::new(),
                    },
                    warmups: self.warmups.clone(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use tlsbench_harness::protocol::MetricValue;

    use super::*;

    fn cell() -> Cell {
        Cell {
            client: "rustls-ring".into(),
            server: "openssl".into(),
            scenario: "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap(),
            measure: tlsbench_harness::Measure::Time,
            process: Process::InProcess,
            allocator: None,
            threads: None,
            build: None,
            support: Ok(()),
        }
    }

    fn report(server_library: &str) -> SampleReport {
        let value = |side, value| MetricValue { side, metric: Metric::HandshakesPerS, value, seconds: 0.1 };
        SampleReport {
            client_library: "rustls 0.23.46 (ring 0.17.14)".into(),
            server_library: server_library.into(),
            iterations: 100,
            values: vec![value(Side::Client, 1000.0), value(Side::Server, 2000.0)],
            negotiated: Vec::new(),
            allocator: None,
            threads: Vec::new(),
            build: None,
        }
    }

    #[test]
    fn samples_are_kept_per_side_with_the_libraries() {
        let mut state = CellState::planned(cell());
        state.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None).unwrap();
        state.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None).unwrap();
        assert_eq!(state.missing(3), 1);
        let results = state.results();
        // Per side: handshakes per second.
        assert_eq!(results.len(), 2);
        assert_eq!(
            (results[0].side, results[0].metric.as_str(), results[0].key.measure.as_str()),
            (Side::Client, "handshakes_per_s", "time")
        );
        assert_eq!(results[0].samples, vec![1000.0, 1000.0]);
        assert_eq!((results[1].side, results[1].median), (Side::Server, Some(2000.0)));
        assert_eq!(results[1].server_library.as_deref(), Some("OpenSSL 3.0.19 27 Jan 2026"));
        assert_eq!(results[1].key.pair_label(), "rustls-ring -> openssl");
    }

    #[test]
    fn split_sides_merge_into_one_report_and_a_failure_names_its_own_cause() {
        let side = |r: SampleReport, keep: Side| SampleReport {
            values: r.values.into_iter().filter(|v| v.side == keep).collect(),
            ..r
        };
        let client = side(SampleReport { server_library: String::new(), ..report("") }, Side::Client);
        let server =
            side(SampleReport { client_library: String::new(), ..report("OpenSSL 3.0.19 27 Jan 2026") }, Side::Server);
        let merged = merge_sides(Ok(Reply::Ok(client.clone())), Ok(Reply::Ok(server.clone()))).unwrap();
        assert_eq!(
            (merged.client_library.as_str(), merged.server_library.as_str()),
            ("rustls 0.23.46 (ring 0.17.14)", "OpenSSL 3.0.19 27 Jan 2026")
        );
        assert_eq!(merged.values.len(), 2);

        let uneven = SampleReport { iterations: 99, ..server.clone() };
        let (_, reason) = merge_sides(Ok(Reply::Ok(client.clone())), Ok(Reply::Ok(uneven))).unwrap_err();
        assert_eq!(reason, "the sides disagree on the work: 100 iterations on the client, 99 on the server");

        let gate = Ok(Reply::Failed {
            reason: "gate failed: server negotiated group secp256r1, the scenario asks for x25519".into(),
        });
        let echo = Ok(Reply::Failed { reason: "the peer stopped: gate failed: server negotiated ...".into() });
        let (status, reason) = merge_sides(echo, gate).unwrap_err();
        assert_eq!(
            (status, reason.as_str()),
            (
                Status::Failed,
                "server runner: gate failed: server negotiated group secp256r1, the scenario asks for x25519"
            )
        );
        let (_, reason) =
            merge_sides(Err("runner was killed by signal 9 (SIGKILL)".into()), Ok(Reply::Ok(server))).unwrap_err();
        assert_eq!(reason, "client runner: runner was killed by signal 9 (SIGKILL)");
    }

    #[test]
    fn a_failed_or_unreadable_reply_keeps_what_the_runner_printed_on_stderr() {
        let output = |stdout: &str, stderr: Option<&str>| {
            Ok(executor::Output { stdout: stdout.into(), stderr: stderr.map(String::from) })
        };
        let printed = Some("Got pk [4, 1, 2] | verif key extraction error 3");
        let failed = r#"{"status":"failed","reason":"client handshake failed: InvalidSignature"}"#;
        assert_eq!(
            reply(output(failed, printed)),
            Ok(Reply::Failed {
                reason: "client handshake failed: InvalidSignature (stderr: Got pk [4, 1, 2] | verif key extraction error 3)".into()
            })
        );
        assert_eq!(
            reply(output(failed, None)),
            Ok(Reply::Failed { reason: "client handshake failed: InvalidSignature".into() })
        );
        let unsupported = r#"{"status":"unsupported","reason":"x: TLS 1.2 not supported"}"#;
        assert_eq!(
            reply(output(unsupported, printed)),
            Ok(Reply::Unsupported { reason: "x: TLS 1.2 not supported".into() })
        );
        let garbled = reply(output("Got pk [4, 1, 2]\n{}", printed)).unwrap_err();
        assert!(garbled.starts_with("runner printed an unreadable reply: "), "{garbled}");
        assert!(garbled.ends_with(" (stderr: Got pk [4, 1, 2] | verif key extraction error 3)"), "{garbled}");
    }

    #[test]
    fn a_stored_run_rebuilds_the_same_document() {
        use crate::output::table::fixture;
        use crate::store::StoredSample;

        let other = Cell { scenario: "handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".parse().unwrap(), ..cell() };
        let (mut ok, mut failed) = (CellState::planned(cell()), CellState::planned(other));
        let mut stored: Vec<StoredCell> = [&ok, &failed].map(CellState::as_planned).to_vec();
        for state in [&mut ok, &mut failed] {
            state.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None).unwrap();
        }
        ok.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None).unwrap();
        failed.outcome = Err((Status::Failed, "runner was killed by signal 9 (SIGKILL)".into()));
        // What the database holds after those samples and that end.
        let sample = StoredSample { iterations: 100, values: report("").values, fork: None };
        stored[0].samples = vec![sample.clone(), sample.clone()];
        stored[1].samples = vec![sample];
        stored[1].status = Status::Failed;
        stored[1].reason = Some("runner was killed by signal 9 (SIGKILL)".into());
        for cell in &mut stored {
            cell.client_library = Some("rustls 0.23.46 (ring 0.17.14)".into());
            cell.server_library = Some("OpenSSL 3.0.19 27 Jan 2026".into());
        }

        let info = fixture::document().run;
        let live = document(info.clone(), &[ok, failed]);
        let run = StoredRun { info: info.clone(), timeout: Duration::from_secs(1), cells: stored };
        let restored = restore(&run).unwrap();
        assert_eq!(restored.iter().map(|s| s.missing(3)).collect::<Vec<_>>(), [1, 0]);
        assert_eq!(document(info, &restored), live);
    }

    /// A cell whose client and server samples are `values` (one sample each), wall time and
    /// CPU time alike.
    fn sampled(values: &[f64]) -> CellState {
        let mut state = CellState::planned(cell());
        for &value in values {
            let values: Vec<MetricValue> = [Side::Client, Side::Server]
                .into_iter()
                .flat_map(|side| {
                    [Metric::HandshakesPerS, Metric::CpuHandshakesPerS].map(|metric| MetricValue {
                        side,
                        metric,
                        value,
                        seconds: 0.1,
                    })
                })
                .collect();
            state.push(&values, None);
        }
        state
    }

    #[test]
    fn target_ci_takes_rounds_of_the_wide_cells_until_all_are_within_it() {
        let target = Target { ci_percent: 2.0, budget: Duration::from_secs(60) };
        // 10 samples: the interval is [x_(2), x_(9)]. Tight: ±0.5%; wide: ±10%.
        let tight = [100.0, 99.0, 101.0, 100.5, 99.5, 100.0, 100.2, 99.8, 100.0, 100.1];
        let wide = [100.0, 90.0, 110.0, 89.0, 111.0, 100.0, 95.0, 105.0, 100.0, 100.0];
        let states = [sampled(&tight), sampled(&wide), sampled(&tight), sampled(&wide)];
        assert_eq!(states[0].widest_ci(), Some(0.5));
        assert_eq!(states[1].widest_ci(), Some(10.0));
        assert_eq!(next(&states, &target, Duration::from_secs(10)), Next::Round(vec![1, 3]));
        assert_eq!(next(&states[..1], &target, Duration::from_secs(10)), Next::Reached);
        // Met even after the budget: nothing is left to say.
        assert_eq!(next(&states[..1], &target, Duration::from_secs(600)), Next::Reached);
    }

    #[test]
    fn target_ci_stops_at_the_budget_and_names_the_cells_still_wide() {
        let target = Target { ci_percent: 2.0, budget: Duration::from_secs(60) };
        let wide = [100.0, 90.0, 110.0, 89.0, 111.0, 100.0, 95.0, 105.0, 100.0, 100.0];
        let mut ended = sampled(&wide);
        ended.outcome = Err((Status::Failed, "runner was killed by signal 9 (SIGKILL)".into()));
        let states = [sampled(&wide), ended, CellState::planned(cell())];
        // A cell that ended, or has no samples, gets no further round.
        assert_eq!(next(&states, &target, Duration::from_secs(59)), Next::Round(vec![0]));
        assert_eq!(next(&states, &target, Duration::from_secs(60)), Next::BudgetSpent(vec![0]));
    }

    #[test]
    fn a_metric_the_samples_lack_is_left_out_of_the_results() {
        // A sample of a runner without the CPU clock, or of a run stored before it was taken.
        let mut state = CellState::planned(cell());
        state.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None).unwrap();
        let metrics: Vec<String> = state.results().into_iter().map(|r| r.metric).collect();
        assert_eq!(metrics, ["handshakes_per_s", "handshakes_per_s"]);
        // Before any sample, every metric of the measure has its place.
        assert_eq!(CellState::planned(cell()).results().len(), 4);
    }

    #[test]
    fn a_result_from_another_allocator_is_refused_and_the_environment_says_what_ran() {
        use tlsbench_harness::allocator::AllocatorInUse;
        let used = |name, version: &str| Some(AllocatorInUse { name, version: version.into() });
        let with = |allocator| SampleReport { allocator, ..report("OpenSSL 3.0.19 27 Jan 2026") };
        let jemalloc_cell = || CellState::planned(Cell { allocator: Some(Allocator::Jemalloc), ..cell() });

        let mut state = jemalloc_cell();
        state.record(&with(used(Allocator::Jemalloc, "5.3.1")), None).unwrap();
        assert_eq!(state.results()[0].key.pair_label(), "rustls-ring -> openssl (jemalloc)");
        assert_eq!(state.results()[0].key.allocator.as_deref(), Some("jemalloc"));
        let (status, reason) = jemalloc_cell().record(&with(used(Allocator::Glibc, "2.36")), None).unwrap_err();
        assert_eq!(
            (status, reason.as_str()),
            (Status::Failed, "the runner allocated with glibc 2.36, the cell asks for jemalloc; result refused")
        );
        // A runner from before the allocator axis says nothing: not taken as jemalloc.
        let (_, reason) = jemalloc_cell().record(&with(None), None).unwrap_err();
        assert_eq!(reason, "the runner did not report its allocator, the cell asks for jemalloc; result refused");
        // Without the axis, glibc's is expected from a runner that reports.
        let (_, reason) =
            CellState::planned(cell()).record(&with(used(Allocator::Mimalloc, "3.3.2")), None).unwrap_err();
        assert_eq!(reason, "the runner allocated with mimalloc 3.3.2, the cell asks for glibc; result refused");

        let mut glibc = CellState::planned(cell());
        glibc.record(&with(used(Allocator::Glibc, "2.36")), None).unwrap();
        let mut runtime = CellState::planned(Cell { client: "go".into(), server: "go".into(), ..cell() });
        runtime
            .record(
                &SampleReport {
                    client_library: "Go crypto/tls go1.26".into(),
                    server_library: "Go crypto/tls go1.26".into(),
                    ..with(None)
                },
                None,
            )
            .unwrap();
        assert_eq!(
            allocators_used(&[state, glibc, runtime, CellState::planned(cell())]),
            "jemalloc 5.3.1, glibc 2.36, behind tlsbench's malloc interposer; go: their runtime's own"
        );
        assert_eq!(allocators_used(&[CellState::planned(cell())]), "none reported (no sample was taken)");

        // The two sides of a split pair must have run on the same allocator.
        let (_, reason) = merge_sides(
            Ok(Reply::Ok(with(used(Allocator::Jemalloc, "5.3.1")))),
            Ok(Reply::Ok(with(used(Allocator::Glibc, "2.36")))),
        )
        .unwrap_err();
        assert_eq!(
            reason,
            "the sides ran on different allocators: jemalloc 5.3.1 on the client, glibc 2.36 on the server"
        );
        // A runtime's side (Go's, Java's) reports none: the other side's is the pair's.
        let merged =
            merge_sides(Ok(Reply::Ok(with(None))), Ok(Reply::Ok(with(used(Allocator::Glibc, "2.36"))))).unwrap();
        assert_eq!(merged.allocator, used(Allocator::Glibc, "2.36"));
    }

    #[test]
    fn a_sample_of_threads_is_the_sum_of_its_threads_and_each_must_have_measured() {
        use tlsbench_harness::protocol::ThreadSample;
        let two = Cell { threads: Some(2), ..cell() };
        let thread = |client: f64, server: f64, iterations| ThreadSample {
            iterations,
            values: vec![
                MetricValue { side: Side::Client, metric: Metric::HandshakesPerS, value: client, seconds: 0.1 },
                MetricValue { side: Side::Server, metric: Metric::HandshakesPerS, value: server, seconds: 0.2 },
            ],
        };
        // The runner's own sums are not taken on trust.
        let reported = SampleReport {
            threads: vec![thread(900.0, 1800.0, 90), thread(700.0, 1500.0, 70)],
            ..report("OpenSSL 3.0.19 27 Jan 2026")
        };
        let kept = aggregate_threads(&two, reported.clone()).unwrap();
        assert_eq!(kept.iterations, 160);
        let value = |side| kept.values.iter().find(|v| v.side == side).unwrap().value;
        assert_eq!((value(Side::Client), value(Side::Server)), (900.0 + 700.0, 1800.0 + 1500.0));

        let one_thread = SampleReport { threads: vec![thread(900.0, 1800.0, 90)], ..reported.clone() };
        assert_eq!(
            aggregate_threads(&two, one_thread).unwrap_err(),
            (Status::Failed, "the runner reported 1 thread(s)' results, the cell asks for 2; result refused".into())
        );
        let idle = SampleReport { threads: vec![thread(900.0, 1800.0, 90), thread(0.0, 0.0, 0)], ..reported.clone() };
        assert_eq!(aggregate_threads(&two, idle).unwrap_err().1, "thread 2 of 2 measured no iteration; result refused");
        // A cell of one pair keeps the report as it is.
        assert_eq!(aggregate_threads(&cell(), report("x")).unwrap(), report("x"));
    }

    #[test]
    fn a_run_with_threads_gives_rates_per_thread_and_efficiency_against_one_thread() {
        // Two threads: the client scales perfectly, the server's rate per thread falls.
        let measured = |threads, client_factor: f64, server_factor: f64| {
            let mut state = CellState::planned(Cell { threads, ..cell() });
            for (client, server) in [(1000.0, 2000.0), (1010.0, 2020.0), (990.0, 1980.0)] {
                let value = |side, value| MetricValue { side, metric: Metric::HandshakesPerS, value, seconds: 0.1 };
                let values =
                    vec![value(Side::Client, client * client_factor), value(Side::Server, server * server_factor)];
                state.record(&SampleReport { values, ..report("OpenSSL 3.0.19 27 Jan 2026") }, None).unwrap();
            }
            state
        };
        let (one, two) = (measured(None, 1.0, 1.0), measured(Some(2), 2.0, 1.5));
        let doc = document(fixture_info(), &[one, two]);
        let find = |metric: &str, side, threads| {
            doc.results
                .iter()
                .find(|r| r.metric == metric && r.side == side && r.key.threads == threads)
                .unwrap_or_else(|| panic!("{metric} {side:?} {threads:?}"))
        };
        assert_eq!(
            find("handshakes_per_s", Side::Server, Some(2)).key.pair_label(),
            "rustls-ring -> openssl (2 threads)"
        );
        assert_eq!(find("handshakes_per_s", Side::Server, Some(2)).median, Some(3000.0));
        let per_thread = find("handshakes_per_s_per_thread", Side::Server, Some(2));
        assert_eq!((per_thread.median, per_thread.samples.len()), (Some(1500.0), 3));
        assert_eq!(per_thread.scaling_efficiency, Some(0.75));
        // Its interval: the two thread's lowest over one thread's highest, and the other way.
        let [low, high] = per_thread.scaling_efficiency_ci.expect("both rates have an interval");
        assert!((low - 2970.0 / 4040.0).abs() < 1e-12 && (high - 3030.0 / 3960.0).abs() < 1e-12, "{low} {high}");
        assert_eq!(find("handshakes_per_s_per_thread", Side::Client, Some(2)).scaling_efficiency, Some(1.0));
        // One thread's row of the per-thread block: its own rate, the reference, no efficiency.
        let reference = find("handshakes_per_s_per_thread", Side::Server, None);
        assert_eq!((reference.median, reference.scaling_efficiency), (Some(2000.0), None));
        assert!(
            crate::output::table::render(&doc).contains("1,500 ±1.0% (75 ±2%)"),
            "{}",
            crate::output::table::render(&doc)
        );
        // A run without threads gains nothing.
        assert!(document(fixture_info(), &[measured(None, 1.0, 1.0)])
            .results
            .iter()
            .all(|r| !r.metric.ends_with("_per_thread")));
    }

    #[test]
    fn a_server_of_workers_gets_its_rate_per_worker_its_efficiency_and_how_busy_it_was() {
        // One worker: 500 connections/s at 1,200 µs of CPU each; two: 800/s at 1,250 µs.
        let measured = |threads, rate: f64, cpu_user: f64| {
            let mut state =
                CellState::planned(Cell { measure: Measure::Net, process: Process::Tcp, threads, ..cell() });
            for jitter in [1.0, 1.01, 0.99] {
                let value = |side, metric, value| MetricValue { side, metric, value, seconds: 1.0 };
                let values = [Side::Client, Side::Server].into_iter().flat_map(|side| {
                    [
                        value(side, Metric::ConnectionsPerS, rate * jitter),
                        value(side, Metric::CpuUserUsPerConnection, cpu_user),
                        value(side, Metric::CpuSystemUsPerConnection, 200.0),
                    ]
                });
                state
                    .record(&SampleReport { values: values.collect(), ..report("OpenSSL 3.0.19 27 Jan 2026") }, None)
                    .unwrap();
            }
            state
        };
        // The server's runner reports its workers' counts together: kept as they are.
        let tcp = Cell { process: Process::Tcp, threads: Some(2), ..cell() };
        assert_eq!(aggregate_threads(&tcp, report("x")).unwrap(), report("x"));

        let doc = document(fixture_info(), &[measured(None, 500.0, 1000.0), measured(Some(2), 800.0, 1050.0)]);
        let per_worker: Vec<&CellResult> =
            doc.results.iter().filter(|r| r.metric == "connections_per_s_per_worker").collect();
        // The server's only: the load generators' rate is the same connections seen from the client.
        assert!(per_worker.iter().all(|r| r.side == Side::Server), "{per_worker:?}");
        let two = per_worker.iter().find(|r| r.key.threads == Some(2)).expect("two workers' row");
        assert_eq!((two.median, two.scaling_efficiency), (Some(400.0), Some(0.8)));
        assert_eq!(two.key.pair_label(), "rustls-ring -> openssl (2 workers) [tcp]");
        assert!(doc.results.iter().all(|r| !r.metric.ends_with("_per_thread")));
        // Busy: 500/s × 1,200 µs = 60% of one worker; 800/s × 1,250 µs over two = 50%.
        let busy =
            crate::output::table::workers_busy(&doc.results).expect("a run with workers says how busy they were");
        assert!(busy.contains("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm: rustls-ring -> openssl [tcp] 60%, rustls-ring -> openssl (2 workers) [tcp] 50%"), "{busy}");
        assert!(
            crate::output::table::render(&doc).contains("400.0 ±1.0% (80 ±2%)"),
            "{}",
            crate::output::table::render(&doc)
        );
        // Without workers, no such line.
        assert_eq!(
            crate::output::table::workers_busy(&document(fixture_info(), &[measured(None, 500.0, 1000.0)]).results),
            None
        );
    }

    #[test]
    fn each_build_scales_against_its_own_one_thread_cell() {
        use crate::builds::Build;
        let measured = |build, threads, factor: f64| {
            let mut state = CellState::planned(Cell { build: Some(build), threads, ..cell() });
            for rate in [1000.0, 1010.0, 990.0] {
                let values = vec![MetricValue {
                    side: Side::Server,
                    metric: Metric::HandshakesPerS,
                    value: rate * factor,
                    seconds: 0.1,
                }];
                state
                    .record(
                        &SampleReport {
                            values,
                            build: Some(build.name().into()),
                            ..report("OpenSSL 3.0.19 27 Jan 2026")
                        },
                        None,
                    )
                    .unwrap();
            }
            state
        };
        // native's one thread is twice release's; each build's two threads scale perfectly.
        let cells = [
            measured(Build::Release, None, 1.0),
            measured(Build::Release, Some(2), 2.0),
            measured(Build::Native, None, 2.0),
            measured(Build::Native, Some(2), 4.0),
        ];
        let doc = document(fixture_info(), &cells);
        for build in ["release", "native"] {
            let per_thread = doc
                .results
                .iter()
                .find(|r| {
                    r.metric == "handshakes_per_s_per_thread"
                        && r.key.threads == Some(2)
                        && r.key.build.as_deref() == Some(build)
                })
                .unwrap();
            assert_eq!(per_thread.scaling_efficiency, Some(1.0), "{build}");
        }
    }

    fn fixture_info() -> RunInfo {
        crate::output::table::fixture::document().run
    }

    #[test]
    fn a_result_from_another_library_is_refused() {
        let mut state = CellState::planned(cell());
        // What rust-openssl reports when BoringSSL's symbols captured its calls.
        let (status, reason) = state.record(&report("BoringSSL"), None).unwrap_err();
        assert_eq!(status, Status::Failed);
        assert_eq!(reason, "stack `openssl` reported library `BoringSSL`, which is not its own; result refused");
        state.outcome = Err((status, reason));
        let results = state.results();
        assert!(results.iter().all(|r| r.status == Status::Failed && r.median.is_none() && r.samples.is_empty()));
        assert_eq!(state.missing(3), 0);
    }
}
