//! When a warming process has become steady: its rate over recent windows has stopped rising.
//!
//! A JIT-compiled stack speeds up for seconds after its process starts, by how much and for how
//! long depending on the stack, the scenario and how busy the machine is. So a process warms up
//! in short unrecorded windows (samples of their own) until the rate has stopped rising, within
//! a floor and a bound of time, instead of for a fixed time that is too long for most cells and
//! too short under load (docs/sampling.md).

use std::time::Duration;

/// How many windows each of the two medians compared spans: about a second of a JIT's warm-up
/// each. JSSE's 100 ms windows swing by ±20% from one to the next even once warm (measured here:
/// its compiler keeps recompiling), so a median of fewer windows mistakes a swing for a plateau.
pub const SPAN: usize = 4;

/// A rise of the recent windows' median over the earlier ones' above this fraction means the
/// process is still warming. Below it, what is left is within a window's noise here.
pub const RISE: f64 = 0.03;

/// A JIT that compiled for more than this fraction of the last `SPAN` windows' time is still
/// at work, whatever the rate says: a JVM's rate rises in steps, with flat stretches between
/// them while the compiler works on the next (measured here: JSSE's handshakes were flat from 4
/// to 6 s into a cold JVM at half their rate at 25 s, its compiler busy more than a core-second
/// per second). It never goes quite quiet: from 15 s on, JSSE's compiler still worked about a
/// fifth of the time (recompiling what the next sample's new contexts deoptimise), and at 60 s
/// too, so the line is drawn above that.
pub const JIT_QUIET: f64 = 0.25;

/// Whether the windows' rates (oldest first, one series per side) show a steady process: for
/// every side, the median of the last `SPAN` windows is at most `RISE` above the median of the
/// `SPAN` before them. Fewer than `2 × SPAN` windows are never steady.
pub fn is_steady(series: &[Vec<f64>]) -> bool {
    !series.is_empty() && series.iter().all(|rates| side_is_steady(rates))
}

fn side_is_steady(rates: &[f64]) -> bool {
    let n = rates.len();
    if n < 2 * SPAN {
        return false;
    }
    let (earlier, recent) = (median(&rates[n - 2 * SPAN..n - SPAN]), median(&rates[n - SPAN..]));
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
}

/// What the warm-up of a process goes by.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// At least this long, steady or not (`--warmup-ms`, or the stack's `min_warmup_ms`).
    pub floor: Duration,
    /// At most this long (`--warmup-max-ms`): then it is measured as it is, and says so.
    pub bound: Duration,
    /// Each side's measured time in one window.
    pub window: Duration,
}

/// Whether a JIT has gone quiet: `jit_ms[i]` is how long the processes' compilers had worked by
/// the end of window i (ms, the runners' `jit_compile_ms`), `ends[i]` when that window ended;
/// quiet when over the last `SPAN` windows they worked at most `JIT_QUIET` of the time. A
/// runtime that reports no JIT (an empty series) is quiet.
pub fn jit_is_quiet(jit_ms: &[f64], ends: &[Duration]) -> bool {
    let n = jit_ms.len();
    if n == 0 {
        return true;
    }
    if n <= SPAN || ends.len() != n {
        return false;
    }
    let worked = jit_ms[n - 1] - jit_ms[n - 1 - SPAN];
    let span_ms = (ends[n - 1] - ends[n - 1 - SPAN]).as_secs_f64() * 1000.0;
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
        if elapsed >= self.floor && is_steady(series) && jit_is_quiet(jit_ms, ends) {
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
        assert!(!is_steady(&[warming.to_vec()]));
        let plateau = [480.0, 505.0, 495.0, 510.0, 490.0, 500.0, 498.0, 503.0];
        assert!(is_steady(&[plateau.to_vec()]));
        // A slow rise of 5% is still warming, whatever one window says.
        assert!(!is_steady(&[vec![500.0, 500.0, 500.0, 500.0, 525.0, 450.0, 525.0, 525.0]]));
        // A fall (the machine got busier) is not a rise.
        assert!(is_steady(&[vec![500.0, 500.0, 500.0, 500.0, 400.0, 400.0, 400.0, 400.0]]));
        // Too few windows to tell.
        assert!(!is_steady(&[plateau[..7].to_vec()]));
        // Every side must be steady.
        assert!(!is_steady(&[plateau.to_vec(), warming.to_vec()]));
        assert!(!is_steady(&[]));
    }

    #[test]
    fn the_rule_keeps_the_floor_and_stops_at_the_bound() {
        let rule =
            Rule { floor: Duration::from_secs(2), bound: Duration::from_secs(10), window: Duration::from_millis(100) };
        let plateau = vec![vec![500.0; 8]];
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
        let ends: Vec<Duration> = (1..=8).map(|i| Duration::from_millis(250 * i)).collect();
        let plateau = vec![vec![500.0; 8]];
        // The compiler worked 300 ms per window (more than the window): still compiling.
        let busy: Vec<f64> = (1..=8).map(|i| 300.0 * i as f64).collect();
        assert!(!jit_is_quiet(&busy, &ends));
        // 20 ms per 250 ms window: 8%, quiet.
        let quiet: Vec<f64> = (1..=8).map(|i| 5000.0 + 20.0 * i as f64).collect();
        assert!(jit_is_quiet(&quiet, &ends));
        let rule = Rule { floor: Duration::ZERO, bound: Duration::from_secs(30), window: Duration::from_millis(100) };
        assert_eq!(rule.next(&plateau, &busy, &ends), Next::Another);
        assert_eq!(rule.next(&plateau, &quiet, &ends), Next::Done { steady: true });
        // Too few windows to tell; a runtime without a JIT reports none and is quiet.
        assert!(!jit_is_quiet(&quiet[..SPAN], &ends[..SPAN]));
        assert!(jit_is_quiet(&[], &ends));
    }
}
