//! Measuring a planned run: every sample of every cell in its own runner process, cells
//! interleaved in a new random order each round so that machine drift hits all stacks alike.
//!
//! This file is the schedule: the rounds, and the further rounds of `--target-ci`. Beside it:
//! cell.rs (where each cell stands), one_shot.rs (a sample from processes of its own), warm.rs
//! and sessions.rs (from processes that stay up, and their pool), callgrind.rs (the instructions
//! measure's sample), document.rs (the run's document from its cells). How a runner is asked
//! and its reply read is ../sample_call.rs, shared with TCP cells, which net.rs samples.

mod callgrind;
mod cell;
mod document;
mod one_shot;
mod reference;
mod sessions;
#[cfg(test)]
mod tests;
pub mod warm;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tlsbench_harness::protocol::SampleReport;

use crate::noise::Sentinel;
use crate::output::progress::Progress;
use crate::plan::{Cell, Process};
use crate::results::Status;
use crate::sample_call::{Settings, Target};
use crate::steady::Warmup;

pub use cell::{restore, CellState};
pub use document::{allocators_used, document};

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

/// Where each sample and each cell's end go as they happen (the results database), so that a
/// run stopped at any point keeps everything measured before.
pub trait Recorder {
    /// Sample `index` (from 0) of cell `cell` (its position in the plan), taken by its process
    /// `fork` where its processes stay up, on a CPU that ran at `cpu_speed` of full speed where
    /// the sentinel placed it (noise/sentinel.rs).
    fn sample(
        &mut self,
        cell: usize,
        index: usize,
        report: &SampleReport,
        fork: Option<u32>,
        cpu_speed: Option<f64>,
    ) -> anyhow::Result<()>;
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
/// (see [`next`]). Stops before the next sample once `stop` is set. `sentinel` chooses the CPU
/// of each sample it can place ([`placed_by_sentinel`]).
pub fn measure(
    states: &mut [CellState],
    settings: &Settings,
    progress: &mut Progress,
    recorder: &mut dyn Recorder,
    stop: &AtomicBool,
    sentinel: &mut Option<Sentinel>,
) -> anyhow::Result<Finish> {
    let started = Instant::now();
    let cells: Vec<(usize, &Cell)> = states
        .iter()
        .enumerate()
        .filter(|(_, s)| s.missing(settings.samples_for(&s.cell)) > 0)
        .map(|(i, s)| (i, &s.cell))
        .collect();
    // Scenarios whose processes that stay up would be too many at once take their rounds one
    // batch after the other, each batch's processes ended before the next's start.
    for batch in warm::batches(&cells, settings) {
        let pool = &mut sessions::Pool::new()?;
        warm_up_first(states, &batch, settings, pool, progress, recorder)?;
        let rounds = batch.iter().map(|&i| settings.samples_for(&states[i].cell)).max().unwrap_or(0);
        for round in 0..rounds {
            // A resumed cell may already have this round's sample; the one-thread row of a run
            // with --threads may take more rounds than the others (Settings::samples_for).
            let due: Vec<usize> = batch
                .iter()
                .copied()
                .filter(|&i| states[i].taken <= round && round < settings.samples_for(&states[i].cell))
                .collect();
            if take_round(states, due, round, settings, pool, progress, recorder, stop, sentinel)?
                == Finish::Interrupted
            {
                return Ok(Finish::Interrupted);
            }
        }
        // Cells some of whose rates a noisy machine slowed take samples in their place, round by
        // round, while their processes are still up (docs/sampling.md, "A noisy machine").
        for round in rounds.. {
            let most = |i: usize| settings.samples_for(&states[i].cell) + settings.replacements;
            let due: Vec<usize> = batch
                .iter()
                .copied()
                .filter(|&i| states[i].replaces_slowed(settings.samples_for(&states[i].cell), most(i)))
                .collect();
            if due.is_empty() {
                break;
            }
            progress.extra_round(due.len() as u64);
            if take_round(states, due, round, settings, pool, progress, recorder, stop, sentinel)?
                == Finish::Interrupted
            {
                return Ok(Finish::Interrupted);
            }
        }
    }
    let Some(target) = &settings.target else { return Ok(Finish::Complete) };
    let pool = &mut sessions::Pool::new()?;
    let mut round = settings.samples;
    loop {
        match next(states, target, started.elapsed()) {
            Next::Round(cells) => {
                progress.extra_round(cells.len() as u64);
                if take_round(states, cells, round, settings, pool, progress, recorder, stop, sentinel)?
                    == Finish::Interrupted
                {
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
    pool: &mut sessions::Pool,
    progress: &mut Progress,
    recorder: &mut dyn Recorder,
) -> anyhow::Result<()> {
    let cells: Vec<(usize, &Cell)> = positions.iter().map(|&i| (i, &states[i].cell)).collect();
    for (i, outcome) in warm::warm_up_first(&cells, settings, pool, progress) {
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
                    state.missing(settings.samples_for(&state.cell)) as u64,
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
    pool: &mut sessions::Pool,
    progress: &mut Progress,
    recorder: &mut dyn Recorder,
    stop: &AtomicBool,
    sentinel: &mut Option<Sentinel>,
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
        // A pair in a runner that judges its own loop moves among the CPUs itself, against the
        // sentinel's reference; other samples on one CPU run where the sentinel places them.
        let full_speed = match judges_own_loop(&state.cell, settings) {
            true => sentinel.as_mut().map(|sentinel| {
                sentinel.refresh();
                sentinel.reference()
            }),
            false => None,
        };
        let placement = match full_speed.is_none() && placed_by_sentinel(&state.cell, settings) {
            true => sentinel.as_mut().map(Sentinel::place),
            false => None,
        };
        let cpu = placement.map(|p| p.cpu);
        let (fork, taken) = match settings.uses_sessions(&state.cell) {
            true => {
                let fork = warm::fork_of(index, settings);
                (Some(fork), warm::sample(&state.cell, fork, settings, pool, cpu, full_speed))
            }
            false => {
                (None, one_shot::sample(&state.cell, index, settings, cpu, full_speed).map(|report| (report, None)))
            }
        };
        let speed = match (placement, &taken, sentinel.as_mut()) {
            (Some(placement), _, Some(sentinel)) => Some(sentinel.placed(placement)),
            (None, Ok((report, _)), Some(sentinel)) => full_speed.zip(report.cpu_speed).map(|(reference, judged)| {
                sentinel.judged(&judged, reference);
                judged.speed
            }),
            _ => None,
        };
        if let Ok((_, Some(warmup))) = &taken {
            state.warmups.push(*warmup);
            recorder.warmed(i, warmup)?;
        }
        let outcome = taken
            .and_then(|(report, _)| one_shot::aggregate_threads(&state.cell, report))
            .and_then(|report| state.record(&report, fork, speed).map(|()| report));
        progress.sample_done(round, &label);
        match outcome {
            Ok(report) => recorder.sample(i, index, &report, fork, speed)?,
            Err((status, reason)) => {
                let left = settings.samples_for(&state.cell).saturating_sub(index + 1) as u64;
                progress.cell_ended(&label, status, &reason, left);
                recorder.ended(i, status, &reason)?;
                state.outcome = Err((status, reason));
            }
        }
    }
    progress.round_done(round);
    Ok(Finish::Complete)
}

/// Whether a sample of `cell` runs on one CPU that the sentinel chooses (noise/sentinel.rs): a
/// time sample on one thread, in a process of its own or split over two that take turns on one
/// CPU. An in-process pair that stays up is left where the kernel puts it, beside its runtime's
/// own threads (a JIT's compiler, a collector).
fn placed_by_sentinel(cell: &Cell, settings: &Settings) -> bool {
    let one_cpu = match cell.process {
        Process::Split => true,
        Process::InProcess => !settings.uses_sessions(cell),
        Process::Tcp | Process::TcpPeak => false,
    };
    cell.measure == tlsbench_harness::Measure::Time && cell.threads.is_none() && !settings.on_a_thread(cell) && one_cpu
}

/// Whether a sample of `cell` is a time sample of one pair on one thread in one runner process (of
/// its own, or one that stays up) that judges its measured loop at full speed itself
/// (`--full-speed`, tlsbench_harness::speed): its stretches in which the CPU was slowed do not
/// count, and it moves its thread to the faster CPU (only that thread: a runtime's own threads
/// stay where the kernel puts them).
fn judges_own_loop(cell: &Cell, settings: &Settings) -> bool {
    let runner = settings.runners_for(cell).runner_for_pair(&cell.client, &cell.server);
    cell.process == Process::InProcess
        && cell.measure == tlsbench_harness::Measure::Time
        && cell.threads.is_none()
        && !settings.on_a_thread(cell)
        && runner.is_some_and(|runner| runner.full_speed)
}

/// The number of runner invocations still to make: every missing sample of the cells that
/// have not ended.
pub fn planned_samples(states: &[CellState], settings: &Settings) -> u64 {
    states.iter().map(|s| s.missing(settings.samples_for(&s.cell))).sum::<usize>() as u64
}
