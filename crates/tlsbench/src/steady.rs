//! When a warming process has become steady: its rate over recent windows has stopped rising.
//!
//! A JIT-compiled stack speeds up for seconds after its process starts, by how much and for how
//! long depending on the stack, the scenario and how busy the machine is. So a process warms up
//! in short unrecorded windows (samples of their own) until the rate has stopped rising, within
//! a floor and a bound of time, instead of for a fixed time that is too long for most cells and
//! too short under load (docs/sampling.md).

use std::time::Duration;

/// The fewest windows each of the two medians compared spans. JSSE's 100 ms windows swing by
/// ±20% from one to the next even once warm (measured here: its compiler keeps recompiling), so
/// a median of fewer windows mistakes a swing for a plateau.
pub const SPAN: usize = 4;

/// The least wall time each of the two medians compared spans, for a runtime with a JIT. A
/// JVM's rate rises in steps, flat for a second or two while its compiler works on the next:
/// measured here (Settle, JSSE's full TLS 1.3 handshakes from a cold JVM), flat from 5.4 to 7.0
/// s at half the rate it reached at 25 s, with half a second in which the compiler did almost
/// nothing. Four windows each side of that moment ended warm-ups there (issue 33); two
/// stretches of 1.5 s each see the rise across it. A runtime without a JIT (Go's) compares
/// `SPAN` windows: its rate settles within the first tenth of a second.
pub const SPAN_TIME: Duration = Duration::from_millis(1500);

/// A rise of the recent windows' median over the earlier ones' above this fraction means the
/// process is still warming. Below it, what is left is within a window's noise here.
pub const RISE: f64 = 0.03;

/// A JIT that compiled for more than this fraction of the compared windows' time is still at
/// work, whatever the rate says: a JVM's rate rises in steps, with flat stretches between them
/// while the compiler works on the next (above). It never goes quite quiet: from 15 s on, JSSE's
/// compiler still worked about a fifth of the time (recompiling what the next sample's new
/// contexts deoptimise), and at 60 s too, so the line is drawn above that.
pub const JIT_QUIET: f64 = 0.25;

/// How many of the last windows (which ended at `ends`) each compared median spans for a
/// runtime with a JIT: at least `SPAN`, and enough that the last ones cover `SPAN_TIME`; None
/// while the windows so far cover less than two such stretches.
pub fn span(ends: &[Duration]) -> Option<usize> {
    let n = ends.len();
    let covering = (SPAN..n).find(|&k| ends[n - 1] - ends[n - 1 - k] >= SPAN_TIME)?;
    (2 * covering <= n).then_some(covering)
}

/// How many windows each compared median spans after the windows that ended at `ends`: `SPAN`
/// for a runtime that reports no JIT (an empty `jit_ms`), else [`span`]; a JIT's steps need
/// longer stretches than a collector's noise.
pub fn compared_span(jit_ms: &[f64], ends: &[Duration]) -> Option<usize> {
    match jit_ms.is_empty() {
        true => Some(SPAN),
        false => span(ends),
    }
}

/// Whether the windows' rates (oldest first, one series per side) show a steady process: for
/// every side, the median of the last `span` windows is at most `RISE` above the median of the
/// `span` before them. Fewer than `2 × span` windows are never steady.
pub fn is_steady(series: &[Vec<f64>], span: usize) -> bool {
    !series.is_empty() && series.iter().all(|rates| side_is_steady(rates, span))
}

fn side_is_steady(rates: &[f64], span: usize) -> bool {
    let n = rates.len();
    if n < 2 * span {
        return false;
    }
    let (earlier, recent) = (median(&rates[n - 2 * span..n - span]), median(&rates[n - span..]));
    recent <= earlier * (1.0 + RISE)
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    (sorted[(n - 1) / 2] + sorted[n / 2]) / 2.0
}

/// How one process's warm-up for one cell ended.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Warmup {
    /// Which of the cell's processes (forks) it was.
    pub fork: u32,
    /// How long it warmed up, windows and all.
    pub ms: f64,
    /// The windows it took.
    pub windows: u32,
    /// Whether it became steady (else it reached the bound still rising).
    pub steady: bool,
    /// What its collector did over the warm-up's last windows, and the sample length chosen
    /// from it; None where the runtime reports no collector (or a run from before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc: Option<GcSeen>,
}

/// A collector's work over a warm-up's last windows, as the runners report it per sample
/// (`gc_collections`, `gc_ms`, `measured_ms`), and the sample length it asks for.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GcSeen {
    /// Collections per second of the windows' measured stretches.
    pub per_s: f64,
    /// The collector's time, in % of those stretches.
    pub percent: f64,
    /// Each side's measured time per sample chosen for it (`--min-time-ms` or longer).
    pub sample_ms: u64,
}

/// How much a sample's rate may move with the number of collections that happen to fall in it.
/// Collections arrive about every `period`, each costing `share × period`: a sample of length L
/// holds L / period of them, give or take the square root of that, so its rate moves by about
/// share × √(period / L). At most this fraction needs L ≥ period × (share / NOISE)².
pub const GC_SAMPLE_NOISE: f64 = 0.01;

/// The longest sample a collector may ask for, each side's measured time: beyond it the run's
/// time would go to the collector's few cells.
pub const GC_SAMPLE_MAX_MS: u64 = 500;

impl GcSeen {
    /// From the windows' collections, collector ms and measured ms (their sums), a run's
    /// `min_time_ms`, and how many ms of measured stretch a window of `window_ms` each side took
    /// per `window_ms`: the sample length that holds enough collections, or `min_time_ms`.
    pub fn choose(collections: u64, gc_ms: f64, measured_ms: f64, min_time_ms: u64, stretch_per_side_ms: f64) -> Self {
        let (per_s, share) = match measured_ms > 0.0 {
            true => (collections as f64 * 1000.0 / measured_ms, (gc_ms / measured_ms).clamp(0.0, 1.0)),
            false => (0.0, 0.0),
        };
        let sample_ms = match collections {
            0 => min_time_ms,
            _ => {
                let period_ms = measured_ms / collections as f64;
                let stretch_ms = period_ms * (share / GC_SAMPLE_NOISE).powi(2);
                // A sample's measured stretch runs stretch_per_side_ms per ms of each side's time.
                let side_ms = (stretch_ms / stretch_per_side_ms.max(1.0)).ceil() as u64;
                side_ms.clamp(min_time_ms, GC_SAMPLE_MAX_MS.max(min_time_ms))
            }
        };
        GcSeen { per_s, percent: share * 100.0, sample_ms }
    }
}

/// What the warm-up of a process goes by.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// At least this long, steady or not (`--warmup-ms`, or the stack's `min_warmup_ms`).
    pub floor: Duration,
    /// At most this long (`--warmup-max-ms`): then it is measured as it is, and says so.
    pub bound: Duration,
}

/// Whether a JIT has gone quiet: `jit_ms[i]` is how long the processes' compilers had worked by
/// the end of window i (ms, the runners' `jit_compile_ms`), `ends[i]` when that window ended;
/// quiet when over the last `windows` windows (the stretch whose rates were compared) they
/// worked at most `JIT_QUIET` of the time: a quiet moment inside a busy stretch is not enough.
/// A runtime that reports no JIT (an empty series) is quiet.
pub fn jit_is_quiet(jit_ms: &[f64], ends: &[Duration], windows: usize) -> bool {
    let n = jit_ms.len();
    if n == 0 {
        return true;
    }
    if n <= windows || ends.len() != n {
        return false;
    }
    let worked = jit_ms[n - 1] - jit_ms[n - 1 - windows];
    let span_ms = (ends[n - 1] - ends[n - 1 - windows]).as_secs_f64() * 1000.0;
    worked <= JIT_QUIET * span_ms
}

/// What to do after a window, `elapsed` into the warm-up.
#[derive(Debug, PartialEq)]
pub enum Next {
    Another,
    Done { steady: bool },
}

impl Rule {
    /// `series`: each side's rate per window; `jit_ms` and `ends` as [`jit_is_quiet`] takes them.
    pub fn next(&self, series: &[Vec<f64>], jit_ms: &[f64], ends: &[Duration]) -> Next {
        let elapsed = ends.last().copied().unwrap_or_default();
        let span = compared_span(jit_ms, ends);
        let steady = span.is_some_and(|span| is_steady(series, span) && jit_is_quiet(jit_ms, ends, 2 * span));
        if elapsed >= self.floor && steady {
            return Next::Done { steady: true };
        }
        match elapsed >= self.bound {
            true => Next::Done { steady: false },
            false => Next::Another,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_that_has_stopped_rising_is_steady_and_one_still_rising_is_not() {
        // A JIT's curve: fast growth, then a plateau with noise.
        let warming = [100.0, 180.0, 260.0, 330.0, 390.0, 440.0, 470.0, 490.0];
        assert!(!is_steady(&[warming.to_vec()], SPAN));
        let plateau = [480.0, 505.0, 495.0, 510.0, 490.0, 500.0, 498.0, 503.0];
        assert!(is_steady(&[plateau.to_vec()], SPAN));
        // A slow rise of 5% is still warming, whatever one window says.
        assert!(!is_steady(&[vec![500.0, 500.0, 500.0, 500.0, 525.0, 450.0, 525.0, 525.0]], SPAN));
        // A fall (the machine got busier) is not a rise.
        assert!(is_steady(&[vec![500.0, 500.0, 500.0, 500.0, 400.0, 400.0, 400.0, 400.0]], SPAN));
        // Too few windows to tell.
        assert!(!is_steady(&[plateau[..7].to_vec()], SPAN));
        // Every side must be steady.
        assert!(!is_steady(&[plateau.to_vec(), warming.to_vec()], SPAN));
        assert!(!is_steady(&[], SPAN));
    }

    #[test]
    fn each_compared_stretch_of_a_jit_spans_at_least_span_time_of_windows() {
        let every = |ms: u64, n: u64| (1..=n).map(|i| Duration::from_millis(ms * i)).collect::<Vec<_>>();
        assert_eq!(span(&every(100, 40)), Some(15));
        assert_eq!(span(&every(250, 40)), Some(6));
        assert_eq!(span(&every(1000, 40)), Some(SPAN));
        // Not yet two stretches' worth of windows.
        assert_eq!(span(&every(100, 29)), None);
        assert_eq!(span(&every(100, 30)), Some(15));
    }

    /// A JVM's curve in windows of 100 ms: the rate rises in steps, each after a flat stretch of
    /// `flat` windows in which the compiler works (most of each window), with four windows in the
    /// middle of each stretch in which it does nothing; after the last step the compiler keeps
    /// only a tenth of the time. Returns the rates, the compile times so far and the windows' ends.
    fn stepped(steps: usize, flat: usize, after: usize) -> (Vec<f64>, Vec<f64>, Vec<Duration>) {
        let (mut rates, mut jit, mut ends) = (Vec::new(), Vec::new(), Vec::new());
        let mut compiled = 0.0;
        for step in 0..=steps {
            let windows = if step == steps { after } else { flat };
            for w in 0..windows {
                rates.push(100.0 * (step + 1) as f64 + if w % 2 == 0 { 3.0 } else { -3.0 });
                let quiet_moment = (windows / 2 - 2..windows / 2 + 2).contains(&w);
                compiled += match (step == steps, quiet_moment) {
                    (true, _) => 10.0,
                    (false, true) => 0.0,
                    (false, false) => 90.0,
                };
                jit.push(compiled);
                ends.push(Duration::from_millis(100 * rates.len() as u64));
            }
        }
        (rates, jit, ends)
    }

    #[test]
    fn a_warm_up_ends_on_the_plateau_after_the_last_step_and_not_on_a_step() {
        let rule = Rule { floor: Duration::ZERO, bound: Duration::from_secs(60) };
        // Four steps, 1.6 s flat each: longer than the old rule's eight windows.
        let (rates, jit, ends) = stepped(4, 16, 60);
        let last_step = 4 * 16;
        let done = (1..=rates.len())
            .find(|&n| rule.next(&[rates[..n].to_vec()], &jit[..n], &ends[..n]) != Next::Another)
            .expect("it ends");
        assert!(done > last_step, "ended at window {done}, on a step before the last at {last_step}");
        assert_eq!(rule.next(&[rates[..done].to_vec()], &jit[..done], &ends[..done]), Next::Done { steady: true });
        // Within the plateau's first few seconds: the stretches compared, both after the step.
        assert!(done <= last_step + 2 * 15 + 1, "ended at window {done}");
        // The old rule (four windows against four, the JIT over the last four) ended on the first
        // step's quiet moment.
        let old = (8..=rates.len())
            .find(|&n| is_steady(&[rates[..n].to_vec()], SPAN) && jit_is_quiet(&jit[..n], &ends[..n], SPAN))
            .unwrap();
        assert!(old < 16, "the old rule ended at window {old}");
    }

    #[test]
    fn a_collector_that_costs_much_and_rarely_asks_for_samples_that_hold_several_collections() {
        // Windows of 100 ms each side, 2.5 ms of stretch per ms of a side's time.
        let choose = |collections, gc_ms, measured_ms| GcSeen::choose(collections, gc_ms, measured_ms, 20, 2.5);
        // No collection seen: the run's length.
        assert_eq!(choose(0, 0.0, 3000.0).sample_ms, 20);
        // Cheap collections (0.5% of the time): any sample is within 1% of the mean.
        let cheap = choose(30, 15.0, 3000.0);
        assert_eq!((cheap.sample_ms, cheap.per_s, cheap.percent), (20, 10.0, 0.5));
        // 4% of the time, a collection every 300 ms: 300 × 16 = 4.8 s of stretch, capped.
        assert_eq!(choose(10, 120.0, 3000.0).sample_ms, GC_SAMPLE_MAX_MS);
        // 2% of the time, a collection every 20 ms: 20 × 4 = 80 ms of stretch, 32 ms each side.
        let frequent = choose(150, 60.0, 3000.0);
        assert_eq!(frequent.sample_ms, 32);
        // The more the collector takes, the longer the sample.
        assert!(choose(150, 90.0, 3000.0).sample_ms > frequent.sample_ms);
        // Never shorter than the run's own.
        assert_eq!(GcSeen::choose(150, 60.0, 3000.0, 50, 2.5).sample_ms, 50);
    }

    #[test]
    fn the_rule_keeps_the_floor_and_stops_at_the_bound() {
        let rule = Rule { floor: Duration::from_secs(2), bound: Duration::from_secs(10) };
        let plateau = vec![vec![500.0; 12]];
        let rising: Vec<Vec<f64>> = vec![(1..=20).map(|i| 100.0 * f64::from(i)).collect()];
        let at = |s: u64| [Duration::from_secs(s)];
        assert_eq!(rule.next(&plateau, &[], &at(1)), Next::Another);
        assert_eq!(rule.next(&plateau, &[], &at(2)), Next::Done { steady: true });
        assert_eq!(rule.next(&rising, &[], &at(9)), Next::Another);
        assert_eq!(rule.next(&rising, &[], &at(10)), Next::Done { steady: false });
    }

    #[test]
    fn a_flat_rate_while_the_jit_still_compiles_is_not_steady() {
        // Windows 250 ms apart; a rate that is flat throughout.
        let ends: Vec<Duration> = (1..=13).map(|i| Duration::from_millis(250 * i)).collect();
        let plateau = vec![vec![500.0; 13]];
        let windows = 2 * span(&ends).unwrap();
        // The compiler worked 300 ms per window (more than the window): still compiling.
        let busy: Vec<f64> = (1..=13).map(|i| 300.0 * i as f64).collect();
        assert!(!jit_is_quiet(&busy, &ends, windows));
        // 20 ms per 250 ms window: 8%, quiet.
        let quiet: Vec<f64> = (1..=13).map(|i| 5000.0 + 20.0 * i as f64).collect();
        assert!(jit_is_quiet(&quiet, &ends, windows));
        // Busy, then one quiet window: the stretch as a whole is still busy.
        let mut moment = busy.clone();
        moment[12] = moment[11];
        assert!(!jit_is_quiet(&moment, &ends, windows));
        let rule = Rule { floor: Duration::ZERO, bound: Duration::from_secs(30) };
        assert_eq!(rule.next(&plateau, &busy, &ends), Next::Another);
        assert_eq!(rule.next(&plateau, &quiet, &ends), Next::Done { steady: true });
        // Too few windows to tell; a runtime without a JIT reports none and is quiet.
        assert!(!jit_is_quiet(&quiet[..windows], &ends[..windows], windows));
        assert!(jit_is_quiet(&[], &ends, windows));
    }
}
