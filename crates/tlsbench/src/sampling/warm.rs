//! Samples from runners that stay up: the time and io samples of a cell with a stack whose
//! runtime warms up (a JIT, a garbage collector: its `min_warmup_ms`) come from `--forks`
//! processes, each warmed up once for the cell until steady (steady.rs) and then asked for
//! sample after sample (docs/sampling.md). Every other sample is a process of its own (one_shot.rs).

use std::time::{Duration, Instant};

use tlsbench_harness::protocol::{Metric, Reply, SampleReport};
use tlsbench_harness::{Measure, Side};

use super::sessions::{Key, Pool, Role, Session, Sockets, LIVE_PROCESSES};
use crate::executor::Output;
use crate::output::progress::Progress;
use crate::plan::{Cell, Process};
use crate::results::Status;
use crate::runner_command::{strs, Peer, RunnerCommand};
use crate::sample_call::{self, Settings};
use crate::steady::{self, GcSeen, Warmup};

/// The fork (process) that takes sample `index` of a cell: they take turns.
pub fn fork_of(index: usize, settings: &Settings) -> u32 {
    (index % settings.forks.max(1)) as u32
}

/// The processes of fork `fork` of `cell` (at slot 0): one holding both stacks, or the
/// server's side then the client's.
fn keys(cell: &Cell, fork: u32, settings: &Settings) -> Result<Vec<Key>, (Status, String)> {
    let runners = &settings.runners;
    let key = |runner: &std::path::Path, role| Key {
        runner: runner.to_path_buf(),
        role,
        allocator: sample_call::allocator_env(cell)[0].1,
        fork: fork as usize,
        slot: 0,
    };
    Ok(match runners.for_pair(&cell.client, &cell.server).filter(|_| cell.process == Process::InProcess) {
        Some(both) => vec![key(both, Role::Pair { client: cell.client.clone(), server: cell.server.clone() })],
        None => {
            let runner = |id: &str| runners.of(id).map_err(|e| (Status::Failed, e.to_string()));
            vec![
                key(runner(&cell.server)?, Role::Side { side: Side::Server, stack: cell.server.clone() }),
                key(runner(&cell.client)?, Role::Side { side: Side::Client, stack: cell.client.clone() }),
            ]
        }
    })
}

/// Takes the sessions of `keys` from the pool, starting those not up. A process of stacks
/// compiled ahead of time (the peer side of a JIT stack) is warm from its start.
fn take(keys: &[Key], cell: &Cell, settings: &Settings, pool: &mut Pool) -> Result<Vec<Session>, (Status, String)> {
    let env = sample_call::allocator_env(cell);
    let warm_from_start = |key: &Key| match &key.role {
        Role::Pair { client, server } => !settings.warms_up(client) && !settings.warms_up(server),
        Role::Side { stack, .. } => !settings.warms_up(stack),
    };
    keys.iter()
        .map(|key| {
            let mut session = pool.take(key, &env).map_err(|e| (Status::Failed, format!("{e:#}")))?;
            session.always_warm |= warm_from_start(key);
            Ok(session)
        })
        .collect()
}

/// Why a request to a cell's processes gave no sample.
enum Miss {
    /// How the cell ends.
    Cell(Status, String),
    /// The process at this index of the cell's refused its scenario (`needs_new_process`).
    Refused(usize),
}

impl From<(Status, String)> for Miss {
    fn from((status, reason): (Status, String)) -> Miss {
        Miss::Cell(status, reason)
    }
}

/// Runs `work` on the processes of fork `fork` of `cell`, taken from the pool (started there if
/// not up) and given back to it while they are fit: one whose request failed is ended, as it
/// may be half-way through a sample. A process that refused the scenario goes back (it serves
/// its own), and the scenario moves to the next process of that key.
fn with_processes<T>(
    cell: &Cell,
    fork: u32,
    settings: &Settings,
    pool: &mut Pool,
    mut work: impl FnMut(&mut [Session], &Sockets) -> Result<T, Miss>,
) -> Result<T, (Status, String)> {
    let scenario = cell.scenario.name();
    loop {
        let keys: Vec<Key> = keys(cell, fork, settings)?.into_iter().map(|key| pool.slot(key, &scenario)).collect();
        let mut sessions = take(&keys, cell, settings, pool)?;
        let outcome = work(&mut sessions, &pool.sockets);
        let refused = match outcome {
            Ok(value) => Ok(value),
            Err(Miss::Cell(status, reason)) => return Err((status, reason)),
            Err(Miss::Refused(index)) => Err(keys[index].clone()),
        };
        for (key, session) in keys.into_iter().zip(sessions) {
            pool.put(key, session);
        }
        match refused {
            Ok(value) => return Ok(value),
            Err(key) => pool.refused(&key, &scenario).map_err(|e| (Status::Failed, format!("{e:#}")))?,
        }
    }
}

/// One sample of `cell` from its fork's processes, which are warmed up for its scenario first
/// if they have not been (their warm-up is returned then: a process started after one failed).
/// `cpu`: where a split pair is measured (the sentinel's choice); None: the first CPU.
pub fn sample(
    cell: &Cell,
    fork: u32,
    settings: &Settings,
    pool: &mut Pool,
    cpu: Option<usize>,
    full_speed: Option<f64>,
) -> Result<(SampleReport, Option<Warmup>), (Status, String)> {
    with_processes(cell, fork, settings, pool, |sessions, sockets| {
        let warmup = match needs_warm_up(cell, sessions) {
            // A mid-run restart: its warm-up is shown under the table, not as it goes.
            true => Some(warm_up(cell, fork, settings, sockets, sessions, &|_, _| {})?),
            false => None,
        };
        Ok((measure(cell, settings, sockets, sessions, cpu, full_speed)?, warmup))
    })
}

/// A time sample's processes warm up once for each scenario, the first time they serve it: a
/// side that stays up for split pairs is warm for every peer after it.
fn needs_warm_up(cell: &Cell, sessions: &[Session]) -> bool {
    let scenario = cell.scenario.name();
    cell.measure == Measure::Time && !sessions.iter().all(|s| s.is_warm_for(&scenario))
}

/// The measured sample. A split pair is measured on one CPU, as one-shot split pairs are
/// (executor.rs); its warm-up ran unpinned, so that a JIT's compiler threads had a CPU of
/// their own. A pair in one process judges its loop at `full_speed` where given (its runner
/// moves its thread itself).
fn measure(
    cell: &Cell,
    settings: &Settings,
    sockets: &Sockets,
    sessions: &mut [Session],
    cpu: Option<usize>,
    full_speed: Option<f64>,
) -> Result<SampleReport, Miss> {
    let split = sessions.len() == 2;
    if split {
        let cpu = cpu.or_else(crate::executor::first_allowed_cpu);
        sessions.iter().for_each(|s| s.pin(cpu));
    }
    // A rate's sample lasts at least a warm-up window: the length at which the process was found
    // steady (a JIT's 20 ms samples moved by ±20% from one to the next, issue 33); longer where
    // its warm-up chose a length for its collector. io's counts per handshake are the same
    // whatever the JIT or the collector did meanwhile, so its samples take the run's length.
    let scenario = cell.scenario.name();
    let chosen = sessions.iter().filter_map(|s| s.sample_ms.get(&scenario).copied()).max();
    let min_time_ms = match cell.measure {
        Measure::Io => settings.min_time_ms,
        _ => chosen.unwrap_or(0).max(settings.min_time_ms).max(WINDOW_MS),
    };
    let report = ask(cell, settings, sockets, sessions, min_time_ms, settings.warmup_ms(cell), full_speed);
    if split {
        sessions.iter().for_each(|s| s.pin(None));
    }
    report.map(|(report, _)| report)
}

/// The cells (positions) in batches of whole scenarios whose processes that stay up number at
/// most `LIVE_PROCESSES` together (a scenario with more is a batch of its own); every batch
/// in a run that needs no more than that at all. Each scenario is counted as if it had
/// processes of its own, as it has where every one needs other process-wide settings.
pub fn batches(cells: &[(usize, &Cell)], settings: &Settings) -> Vec<Vec<usize>> {
    let forks = settings.forks.min(settings.samples).max(1) as u32;
    let mut scenarios: Vec<(String, Vec<usize>, std::collections::HashSet<Key>)> = Vec::new();
    for &(position, cell) in cells {
        let name = cell.scenario.name();
        let index = match scenarios.iter().position(|(s, _, _)| *s == name) {
            Some(index) => index,
            None => {
                scenarios.push((name, Vec::new(), Default::default()));
                scenarios.len() - 1
            }
        };
        let (_, positions, keys) = &mut scenarios[index];
        positions.push(position);
        if settings.uses_sessions(cell) {
            keys.extend((0..forks).filter_map(|fork| self::keys(cell, fork, settings).ok()).flatten());
        }
    }
    let mut batches: Vec<(Vec<usize>, usize)> = Vec::new();
    for (_, positions, keys) in scenarios {
        match batches.last_mut().filter(|(_, live)| live + keys.len() <= LIVE_PROCESSES) {
            Some((batch, live)) => {
                batch.extend(positions);
                *live += keys.len();
            }
            None => batches.push((positions, keys.len())),
        }
    }
    batches
        .into_iter()
        .map(|(mut batch, _)| {
            batch.sort_unstable();
            batch
        })
        .collect()
}

/// A process's warm-up for a cell, or how the cell ends.
pub type WarmupOutcome = Result<Warmup, (Status, String)>;

/// Before the first round: warms up every process the time cells in `cells` (positions and
/// cells) take samples from, so that the rounds only measure. One at a time: a JIT warming up
/// keeps both of this machine's cores busy (its compiler threads beside the measured one), so
/// two at a time take as long and each is less warm at the bound. Returns the cells' warm-ups
/// or why they failed.
pub fn warm_up_first(
    cells: &[(usize, &Cell)],
    settings: &Settings,
    pool: &mut Pool,
    progress: &Progress,
) -> Vec<(usize, WarmupOutcome)> {
    let forks = settings.forks.min(settings.samples).max(1) as u32;
    let cells: Vec<&(usize, &Cell)> =
        cells.iter().filter(|(_, c)| c.measure == Measure::Time && settings.uses_sessions(c)).collect();
    if !cells.is_empty() {
        crate::output::stderr::line(format!(
            "warming up the processes of {} cells until steady (docs/sampling.md)",
            cells.len()
        ));
    }
    let mut outcomes = Vec::new();
    for &&(position, cell) in &cells {
        let label = super::progress_label(cell);
        for fork in 0..forks {
            let shown = |elapsed, steady| progress.warming(&label, fork, forks, elapsed, steady);
            let warmed =
                with_processes(cell, fork, settings, pool, |sessions, sockets| match needs_warm_up(cell, sessions) {
                    true => warm_up(cell, fork, settings, sockets, sessions, &shown).map(Some),
                    false => Ok(None),
                });
            if let Ok(Some(warmup)) = &warmed {
                progress.warmed(&label, warmup, forks);
            }
            if let Some(outcome) = warmed.transpose() {
                outcomes.push((position, outcome));
            }
        }
    }
    outcomes
}

/// Warms the processes up for `cell` in unrecorded windows until their rates are steady and
/// their JITs quiet, or until the bound; they are then warm for it.
fn warm_up(
    cell: &Cell,
    fork: u32,
    settings: &Settings,
    sockets: &Sockets,
    sessions: &mut [Session],
    shown: &dyn Fn(Duration, bool),
) -> Result<Warmup, Miss> {
    let floor = Duration::from_millis(settings.warmup_floor(cell));
    let rule = steady::Rule { floor, bound: settings.warmup_max.max(floor) };
    let started = Instant::now();
    let (mut series, mut jit_ms, mut ends): (Vec<Vec<f64>>, Vec<f64>, Vec<Duration>) =
        (Vec::new(), Vec::new(), Vec::new());
    // Each window's runtime report, and its length each side.
    let mut windows: Vec<(Runtime, u64)> = Vec::new();
    loop {
        // A JIT's windows last at least WINDOW_MS: its rate swings over shorter ones. A runtime
        // without one (Go's) settles within the first tenth of a second, and its windows take the
        // run's length. The first window tells which: a JIT reports its compile time with it.
        let window_ms = match jit_ms.is_empty() {
            true => settings.min_time_ms,
            false => settings.min_time_ms.max(WINDOW_MS),
        };
        let (report, runtime) = ask(cell, settings, sockets, sessions, window_ms, 0, None)?;
        ends.push(started.elapsed());
        jit_ms.extend(runtime.jit_compile_ms);
        windows.push((runtime, window_ms));
        let rates: Vec<f64> = [Side::Client, Side::Server].iter().filter_map(|&side| rate(&report, side)).collect();
        series.resize(rates.len(), Vec::new());
        for (kept, rate) in series.iter_mut().zip(rates) {
            kept.push(rate);
        }
        let span = steady::compared_span(&jit_ms, &ends);
        shown(started.elapsed(), span.is_some_and(|span| steady::is_steady(&series, span)));
        if let steady::Next::Done { steady } = rule.next(&series, &jit_ms, &ends) {
            // The collector over the stretches the rule compared (the process as it now is).
            let last = span.map_or(windows.len(), |span| 2 * span).min(windows.len());
            let shortest = settings.min_time_ms.max(WINDOW_MS);
            let gc = gc_seen(&windows[windows.len() - last..], shortest);
            for session in sessions.iter_mut() {
                session.warm_for.insert(cell.scenario.name());
                if let Some(gc) = gc {
                    session.sample_ms.insert(cell.scenario.name(), gc.sample_ms);
                }
            }
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            return Ok(Warmup { fork, ms, windows: ends.len() as u32, steady, gc });
        }
    }
}

/// The collector's work over `windows` (each with its length each side) and the sample length
/// it asks for ([`GcSeen::choose`]); None where the runtime reported none.
fn gc_seen(windows: &[(Runtime, u64)], min_time_ms: u64) -> Option<GcSeen> {
    let reported: Vec<&(Runtime, u64)> = windows.iter().filter(|(r, _)| r.measured_ms.is_some()).collect();
    if reported.is_empty() {
        return None;
    }
    let collections = reported.iter().filter_map(|(r, _)| r.gc_collections).sum();
    let gc_ms = reported.iter().filter_map(|(r, _)| r.gc_ms).sum();
    let measured_ms: f64 = reported.iter().filter_map(|(r, _)| r.measured_ms).sum();
    let window_ms: u64 = reported.iter().map(|(_, ms)| ms).sum();
    let stretch_per_side_ms = measured_ms / window_ms.max(1) as f64;
    Some(GcSeen::choose(collections, gc_ms, measured_ms, min_time_ms, stretch_per_side_ms))
}

/// How long a server whose client failed may take to reply (with its own reason, or its
/// peer's echo) before it is killed.
const PEER_GONE: Duration = Duration::from_secs(5);

/// The shortest window of a JIT's warm-up, each side's measured time: shorter ones are mostly
/// noise. A warm process's time samples are at least this long too, whatever its runtime.
pub const WINDOW_MS: u64 = 100;

/// A side's rate in a time sample (handshakes, MB or contexts per second): the context kinds'
/// measured side has one, the other none.
pub(super) fn rate(report: &SampleReport, side: Side) -> Option<f64> {
    let rates = [Metric::HandshakesPerS, Metric::MbPerS, Metric::ContextsPerS];
    report.values.iter().find(|v| v.side == side && rates.contains(&v.metric)).map(|v| v.value)
}

/// What a runner of a JIT or a collector says of its runtime beside a sample: how long its JIT
/// had compiled when it replied (`jit_compile_ms`), and its collector's work over the measured
/// part (`gc_collections`, `gc_ms`, `measured_ms`), where it said.
#[derive(Clone, Copy, Debug, Default, serde::Deserialize)]
struct Runtime {
    jit_compile_ms: Option<f64>,
    gc_collections: Option<u64>,
    gc_ms: Option<f64>,
    measured_ms: Option<f64>,
}

impl Runtime {
    fn of(output: &anyhow::Result<Output>) -> Runtime {
        let parsed = output.as_ref().ok().and_then(|o| serde_json::from_str::<Runtime>(&o.stdout).ok());
        parsed.unwrap_or_default()
    }

    /// Two processes' (a split pair's): their JITs' times and their collectors' work add up;
    /// their measured stretches are the same stretch.
    fn and(self, other: Runtime) -> Runtime {
        let add = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a + b).or(a).or(b);
        Runtime {
            jit_compile_ms: add(self.jit_compile_ms, other.jit_compile_ms),
            gc_collections: self
                .gc_collections
                .zip(other.gc_collections)
                .map(|(a, b)| a + b)
                .or(self.gc_collections)
                .or(other.gc_collections),
            gc_ms: add(self.gc_ms, other.gc_ms),
            measured_ms: match (self.measured_ms, other.measured_ms) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

/// One sample of `cell` from `sessions` (one process, or the server's then the client's), with
/// what their runtimes said beside it (see [`Runtime`]).
fn ask(
    cell: &Cell,
    settings: &Settings,
    sockets: &Sockets,
    sessions: &mut [Session],
    min_time_ms: u64,
    warmup_ms: u64,
    full_speed: Option<f64>,
) -> Result<(SampleReport, Runtime), Miss> {
    let failed = |reason: String| Miss::Cell(Status::Failed, reason);
    let refused = |reply: &Result<Reply, String>| matches!(reply, Ok(Reply::NeedsNewProcess { .. }));
    let sample_settings = || sample_call::sample_settings(cell, settings, min_time_ms, warmup_ms);
    let limit = cell.time_limit(settings.timeout, Duration::from_millis(min_time_ms), Duration::from_millis(warmup_ms));
    let deadline = Instant::now() + limit;
    match sessions {
        [one] => {
            let (client, server) = (&cell.client, &cell.server);
            let words = RunnerCommand::Sample {
                client,
                server,
                threads: None,
                contexts: None,
                cpus: None,
                settings: sample_settings().judged_at(full_speed),
            }
            .words();
            one.send(&strs(&words)).map_err(|e| failed(format!("{e:#}")))?;
            let output = one.receive(deadline, limit);
            let runtime = Runtime::of(&output);
            let reply = sample_call::reply(output);
            if refused(&reply) {
                return Err(Miss::Refused(0));
            }
            Ok((sample_call::reply_of(reply)?, runtime))
        }
        [server, client] => {
            let socket = sockets.path();
            let side = |role, stack, peer_stack| {
                let peer = Peer::Socket(&socket);
                RunnerCommand::Side { role, stack, peer_stack, peer, settings: sample_settings() }.words()
            };
            let server_words = side(Side::Server, &cell.server, &cell.client);
            let client_words = side(Side::Client, &cell.client, &cell.server);
            server.send(&strs(&server_words)).map_err(|e| failed(format!("{e:#}")))?;
            client.send(&strs(&client_words)).map_err(|e| failed(format!("{e:#}")))?;
            let client_output = client.receive(deadline, limit);
            let client_runtime = Runtime::of(&client_output);
            let client_reply = sample_call::reply(client_output);
            // A server whose client failed cannot finish its sample: it has a moment to say so.
            let server_deadline = match client_reply {
                Ok(Reply::Ok(_)) => deadline,
                _ => deadline.min(Instant::now() + PEER_GONE),
            };
            let server_output = server.receive(server_deadline, limit);
            let runtime = client_runtime.and(Runtime::of(&server_output));
            let server_reply = sample_call::reply(server_output);
            // The side that refused, not its peer's echo (the peer gets an abort).
            match (refused(&server_reply), refused(&client_reply)) {
                (true, _) => Err(Miss::Refused(0)),
                (_, true) => Err(Miss::Refused(1)),
                _ => Ok((sample_call::merge_sides(client_reply, server_reply)?, runtime)),
            }
        }
        _ => unreachable!("a cell has one process or two"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window of `ms` each side whose measured stretch is twice that, with `collections` in it
    /// taking 4% of the stretch.
    fn window(ms: u64, collections: u64) -> (Runtime, u64) {
        let measured = 2.0 * ms as f64;
        let runtime = Runtime {
            jit_compile_ms: None,
            gc_collections: Some(collections),
            gc_ms: Some(0.04 * measured),
            measured_ms: Some(measured),
        };
        (runtime, ms)
    }

    #[test]
    fn a_jit_s_short_first_window_does_not_lengthen_the_collector_s_samples() {
        // A collection every 50 ms of stretch at 4%: 800 ms of stretch, 400 ms each side.
        let even: Vec<_> = (0..8).map(|_| window(100, 4)).collect();
        assert_eq!(gc_seen(&even, 100).unwrap().sample_ms, 400);
        // A JIT's first window takes the run's 7 ms (it has not said yet that it is a JIT). Taken
        // as long as the others, it would make the stretch per ms look shorter (458 ms each side).
        let first_short: Vec<_> = std::iter::once(window(7, 0)).chain((0..7).map(|_| window(100, 4))).collect();
        let chosen = gc_seen(&first_short, 100).unwrap().sample_ms;
        assert!((396..=408).contains(&chosen), "{chosen} ms each side");
    }
}
