//! Samples from runners that stay up: the time and io samples of a cell with a stack whose
//! runtime warms up (a JIT, a garbage collector: its `min_warmup_ms`) come from `--forks`
//! processes, each warmed up once for the cell until steady (steady.rs) and then asked for
//! sample after sample (docs/sampling.md). Every other sample is a process of its own (run.rs).

use std::time::{Duration, Instant};

use tlsbench_harness::protocol::{Metric, SampleReport};
use tlsbench_harness::{Measure, Side};

use crate::plan::{Cell, Process};
use crate::results::Status;
use crate::run::{self, Settings};
use crate::sessions::{Key, Pool, Role, Session};
use crate::steady::{self, Warmup};

/// Whether `cell`'s samples come from runners that stay up.
pub fn uses_sessions(cell: &Cell, settings: &Settings) -> bool {
    let warms_up = |id: &str| settings.runners.info(id).is_some_and(|info| info.capabilities.min_warmup_ms > 0);
    matches!(cell.measure, Measure::Time | Measure::Io)
        && cell.process != Process::Tcp
        && cell.build.is_none_or(|b| b == crate::builds::Build::Release)
        && (warms_up(&cell.client) || warms_up(&cell.server))
}

/// The fork (process) that takes sample `index` of a cell: they take turns.
pub fn fork_of(index: usize, settings: &Settings) -> u32 {
    (index % settings.forks.max(1)) as u32
}

/// One sample of cell `position` from its fork's processes, which are warmed up first if they
/// have not been for this cell (their warm-up is returned then). A process whose sample failed
/// is ended: it may be half-way through a sample.
pub fn sample(
    position: usize,
    cell: &Cell,
    fork: u32,
    settings: &Settings,
    pool: &mut Pool,
) -> Result<(SampleReport, Option<Warmup>), (Status, String)> {
    let failed = |reason: String| (Status::Failed, reason);
    let runners = &settings.runners;
    let env = run::allocator_env(cell);
    let key = |runner: &std::path::Path, role| Key {
        runner: runner.to_path_buf(),
        role,
        scenario: cell.scenario.name(),
        allocator: env[0].1,
        fork: fork as usize,
    };
    let keys = match runners.for_pair(&cell.client, &cell.server).filter(|_| cell.process == Process::InProcess) {
        Some(both) => vec![key(both, Role::Pair { client: cell.client.clone(), server: cell.server.clone() })],
        None => {
            let runner = |id: &str| runners.of(id).map_err(|e| failed(e.to_string()));
            vec![
                key(runner(&cell.server)?, Role::Side { side: Side::Server, stack: cell.server.clone() }),
                key(runner(&cell.client)?, Role::Side { side: Side::Client, stack: cell.client.clone() }),
            ]
        }
    };
    let mut sessions = Vec::new();
    for key in &keys {
        match pool.take(key, &env) {
            Ok(session) => sessions.push(session),
            Err(e) => return Err(failed(format!("{e:#}"))),
        }
    }
    let outcome = warm_then_sample(position, cell, fork, settings, pool, &mut sessions);
    // A process whose sample failed is not asked again; the others go back to the pool.
    if outcome.is_ok() {
        for (key, session) in keys.into_iter().zip(sessions) {
            pool.put(key, session);
        }
    }
    outcome
}

fn warm_then_sample(
    position: usize,
    cell: &Cell,
    fork: u32,
    settings: &Settings,
    pool: &mut Pool,
    sessions: &mut [Session],
) -> Result<(SampleReport, Option<Warmup>), (Status, String)> {
    let warmup = match cell.measure == Measure::Time && !sessions.iter().all(|s| s.warmed.contains(&position)) {
        true => Some(warm_up(cell, fork, settings, pool, sessions)?),
        false => None,
    };
    for session in sessions.iter_mut() {
        session.warmed.insert(position);
    }
    // A split pair is measured on one CPU, as one-shot split pairs are (executor.rs); its
    // warm-up ran unpinned, so that a JIT's compiler threads had a CPU of their own.
    let split = sessions.len() == 2;
    let cpu = crate::executor::first_allowed_cpu();
    if split {
        sessions.iter().for_each(|s| s.pin(cpu));
    }
    let report = ask(cell, settings, pool, sessions, settings.min_time_ms, settings.warmup_ms);
    if split {
        sessions.iter().for_each(|s| s.pin(None));
    }
    Ok((report?, warmup))
}

/// Warms the processes up for `cell` in unrecorded windows until their rates are steady, or
/// until the bound.
fn warm_up(cell: &Cell, fork: u32, settings: &Settings, pool: &mut Pool, sessions: &mut [Session]) -> Result<Warmup, (Status, String)> {
    let rule = steady::Rule {
        floor: Duration::from_millis(settings.warmup_floor(cell)),
        bound: settings.warmup_max.max(Duration::from_millis(settings.warmup_floor(cell))),
        window: Duration::from_millis(settings.min_time_ms.max(WINDOW_MS)),
    };
    let started = Instant::now();
    let mut series: Vec<Vec<f64>> = Vec::new();
    let mut windows = 0;
    loop {
        let report = ask(cell, settings, pool, sessions, rule.window.as_millis() as u64, 0)?;
        windows += 1;
        let rates: Vec<f64> = [Side::Client, Side::Server].iter().filter_map(|&side| rate(&report, side)).collect();
        series.resize(rates.len(), Vec::new());
        for (kept, rate) in series.iter_mut().zip(rates) {
            kept.push(rate);
        }
        if let steady::Next::Done { steady } = rule.next(&series, started.elapsed()) {
            return Ok(Warmup { fork, ms: started.elapsed().as_secs_f64() * 1000.0, windows, steady });
        }
    }
}

/// How long a server whose client failed may take to reply (with its own reason, or its
/// peer's echo) before it is killed.
const PEER_GONE: Duration = Duration::from_secs(5);

/// The shortest window of a warm-up, each side's measured time: shorter ones are mostly noise.
const WINDOW_MS: u64 = 100;

/// A side's rate in a time sample (handshakes or MB per second).
fn rate(report: &SampleReport, side: Side) -> Option<f64> {
    report.values.iter().find(|v| v.side == side && matches!(v.metric, Metric::HandshakesPerS | Metric::MbPerS)).map(|v| v.value)
}

/// One sample of `cell` from `sessions` (one process, or the server's then the client's).
fn ask(
    cell: &Cell,
    settings: &Settings,
    pool: &mut Pool,
    sessions: &mut [Session],
    min_time_ms: u64,
    warmup_ms: u64,
) -> Result<SampleReport, (Status, String)> {
    let failed = |reason: String| (Status::Failed, reason);
    let common = run::sample_settings(cell, settings, min_time_ms, warmup_ms);
    let common: Vec<&str> = common.iter().map(String::as_str).collect();
    let limit = cell.time_limit(settings.timeout, Duration::from_millis(min_time_ms), Duration::from_millis(warmup_ms));
    let deadline = Instant::now() + limit;
    match sessions {
        [one] => {
            let words = [&["sample", "--client", &cell.client, "--server", &cell.server][..], &common].concat();
            one.send(&words).map_err(|e| failed(format!("{e:#}")))?;
            run::reply_of(run::reply(one.receive(deadline, limit)))
        }
        [server, client] => {
            let socket = pool.socket_path();
            let socket = socket.to_string_lossy();
            let (client_stack, server_stack) = (cell.client.as_str(), cell.server.as_str());
            let server_words = ["side", "--role", "server", "--stack", server_stack, "--peer-stack", client_stack, "--peer-socket", &socket];
            let client_words = ["side", "--role", "client", "--stack", client_stack, "--peer-stack", server_stack, "--peer-socket", &socket];
            server.send(&[&server_words[..], &common].concat()).map_err(|e| failed(format!("{e:#}")))?;
            client.send(&[&client_words[..], &common].concat()).map_err(|e| failed(format!("{e:#}")))?;
            let client_reply = run::reply(client.receive(deadline, limit));
            // A server whose client failed cannot finish its sample: it has a moment to say so.
            let server_deadline = match client_reply {
                Ok(tlsbench_harness::protocol::Reply::Ok(_)) => deadline,
                _ => deadline.min(Instant::now() + PEER_GONE),
            };
            let server_reply = run::reply(server.receive(server_deadline, limit));
            run::merge_sides(client_reply, server_reply)
        }
        _ => unreachable!("a cell has one process or two"),
    }
}
