//! A run's document from its cells: their results, then, for a run with `--threads` or
//! `--workers`, the rates per thread and the scaling efficiency; and what the run's environment
//! says of its allocators.

use std::collections::HashMap;

use tlsbench_harness::protocol::Metric;
use tlsbench_harness::{Measure, Side};

use super::cell::CellState;
use super::reference::one_thread_reference;
use crate::key::CellKey;
use crate::order::first_seen;
use crate::results::{CellResult, RunDocument, RunInfo, Status, SCHEMA_VERSION};

/// A run's document: its header and the results of every cell, in planned order. Built by
/// this one function for a run that just ended and for a stored one, so that the two are equal.
pub fn document(info: RunInfo, states: &[CellState]) -> RunDocument {
    let mut results: Vec<CellResult> = states.iter().flat_map(CellState::results).collect();
    let drift_percent = info.environment.conditions.as_ref().map_or(0.0, |c| c.drift_percent());
    widen_for_drift(&mut results, drift_percent);
    RunDocument {
        schema_version: SCHEMA_VERSION,
        run: info,
        results: with_contended_waits_of_threads(with_rates_per_thread(results, 1.0 + drift_percent / 100.0)),
    }
}

/// The time measure's contended waits of the cells of several threads, and of the one-thread
/// cells that have such a sibling (about 0, the reference), after the rates and their blocks
/// per thread: they tell why a rate per thread falls short. Other cells' (one pair, with no one
/// to wait for) stay in their samples but are left out of the document, as the rates per thread
/// are.
fn with_contended_waits_of_threads(results: Vec<CellResult>) -> Vec<CellResult> {
    let waits = [Metric::ContendedWaitsPerHandshake.name(), Metric::ContendedWaitsPerMb.name()];
    let (waits, others): (Vec<_>, Vec<_>) = results.into_iter().partition(|r| waits.contains(&r.metric.as_str()));
    let threaded: Vec<CellKey> =
        waits.iter().filter(|r| r.key.threads.is_some()).map(|r| r.key.variant_key()).collect();
    let shown = waits.into_iter().filter(|r| r.key.threads.is_some() || threaded.contains(&r.key.variant_key()));
    others.into_iter().chain(shown).collect()
}

/// The time measure's rates: their 95% intervals of the median widened at each end by the
/// machine's drift (`Conditions::drift_percent`). The samples of a run spread less than two runs'
/// medians move (2026-11-27: [min, max] of 6 samples held the other run's median in 69% of the rate
/// cells, and widened by 1% at each end in 97%); counts do not drift.
fn widen_for_drift(results: &mut [CellResult], drift_percent: f64) {
    // On the ratio scale, as a rate's drift is: a noisy machine's large term cannot take the
    // lower end to zero or below.
    let by = 1.0 + drift_percent / 100.0;
    for result in results.iter_mut().filter(|r| r.is_time_rate()) {
        if let Some([low, high]) = result.ci95 {
            result.ci95 = Some([low / by, high * by]);
        }
    }
}

/// The time measure's rates of a run with `--threads`: after the results, per thread rate
/// metric (`handshakes_per_s_per_thread`, ...), one result per cell of several threads (its
/// aggregate divided by N) and per cell of one thread that has such a sibling (its own rate),
/// the former with its scaling efficiency: its rate per thread over the one-thread rate on the
/// CPUs its threads ran on (reference.rs), medians of the same run. Over TCP (`--workers`), the
/// same for the server's connections per second, per worker (`connections_per_s_per_worker`).
/// Nothing is added to a run without threads or workers. `widen`: the drift's factor on the
/// rates' intervals ([`widen_for_drift`]).
fn with_rates_per_thread(mut results: Vec<CellResult>, widen: f64) -> Vec<CellResult> {
    let is_rate = |r: &CellResult| {
        let time = r.is_time_rate();
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
                let one = one.and_then(|one| one_thread_reference(one, r, widen));
                let times_n = |x: f64| f64::from(n) * x;
                let efficiency = match (r.figure(), one.as_ref().map(|one| one.figure)) {
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
    let unit = if cell.key.is_tcp() { "worker" } else { "thread" };
    CellResult {
        metric: format!("{}_per_{unit}", cell.metric),
        samples: cell.samples.iter().map(|&x| per(x)).collect(),
        median: cell.median.map(per),
        faster_half_mean: cell.faster_half_mean.map(per),
        ci95: cell.ci95.map(|[lo, hi]| [per(lo), per(hi)]),
        min: cell.min.map(per),
        max: cell.max.map(per),
        scaling_efficiency: efficiency,
        scaling_efficiency_ci: efficiency_ci,
        ..cell.clone()
    }
}

/// What the run's environment says of its allocators, from what the runners reported: each
/// allocator with its version, behind tlsbench's interposer; and the stacks whose runtimes
/// allocate on their own.
pub fn allocators_used(states: &[CellState]) -> String {
    let used = first_seen(states.iter().filter_map(|s| s.allocator_used.clone()));
    let runtimes = first_seen(
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

#[cfg(test)]
mod drift_tests {
    use super::*;
    use crate::results::{fixture, Calibration, Conditions};

    fn conditions(before: (f64, f64), after: (f64, f64)) -> Conditions {
        let calibration = |(median_ms, spread_percent)| Calibration {
            median_ms,
            spread_percent,
            kept_spread_percent: None,
            max_over_min: 1.05,
        };
        Conditions {
            load_average_start: 0.5,
            load_average_end: 0.5,
            steal_percent: None,
            calibration_before: calibration(before),
            calibration_after: calibration(after),
            noise: None,
            sentinel: None,
        }
    }

    #[test]
    fn the_drift_is_half_the_calibration_loops_wider_spread() {
        assert!((conditions((2.0, 1.5), (2.04, 2.5)).drift_percent() - 1.25).abs() < 1e-9);
        assert!((conditions((2.0, 3.0), (2.0, 1.0)).drift_percent() - 1.5).abs() < 1e-9);
    }

    #[test]
    fn only_the_time_measures_rates_are_widened_by_the_drift() {
        let mut results = fixture::document().results;
        let before = results.clone();
        widen_for_drift(&mut results, 1.0);
        for (widened, was) in results.iter().zip(&before) {
            match (was.key.measure.as_str(), was.better.as_str(), was.ci95) {
                ("time", "higher", Some([low, high])) => {
                    let [wlow, whigh] = widened.ci95.unwrap();
                    assert!((wlow * 1.01 - low).abs() < 1e-9, "{widened:?}");
                    assert!((whigh - high * 1.01).abs() < 1e-9, "{widened:?}");
                }
                _ => assert_eq!(widened.ci95, was.ci95, "{widened:?}"),
            }
        }
        assert!(before.iter().any(|r| r.key.measure != "time" && r.ci95.is_some()), "the fixture has a count");
        // However large the drift, a rate's lower end stays above zero.
        widen_for_drift(&mut results, 400.0);
        assert!(results.iter().filter_map(|r| r.ci95).all(|[low, _]| low > 0.0));
    }
}
