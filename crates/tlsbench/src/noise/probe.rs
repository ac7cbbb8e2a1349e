//! How noisy the machine is, measured before a run's first round: a fixed workload timed in
//! stretches as long as the quick comparison's samples (20 ms), as a TLS sample would see it.
//! The workload goes through the caches (lookups in a table the size of a core's L2 share, and
//! multiplies, as a handshake's arithmetic and tables do), since neighbours on a shared host slow
//! that where a loop in registers hardly moves (environment.rs, NOISY_INTERVAL_PERCENT).

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::environment::rounded;
use crate::stats;

/// The probe's stretches: as long as a quick sample's side, enough of them for a p10 and a p90
/// and a share of slowed ones, half a second in all.
const STRETCH: Duration = Duration::from_millis(20);
const STRETCHES: usize = 25;
/// The table the workload looks up: 1 MiB, beyond L1, within a core's L2.
const TABLE_WORDS: usize = 1 << 17;

/// What the probe saw: how much 20-ms stretches of a fixed workload moved, and how many a
/// neighbour slowed ([`stats::slowed`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoiseProbe {
    pub stretch_ms: f64,
    pub stretches: usize,
    /// Half the spread (p90 - p10) of the stretches' rates, in % of their median: the ± of one
    /// stretch.
    pub spread_percent: f64,
    /// The share of stretches set aside as slowed, in %.
    pub slowed_percent: f64,
    /// [`NoiseProbe::spread_percent`] of the stretches kept.
    pub kept_spread_percent: f64,
    /// The same spread of the stretches' rates over the thread's CPU time: where it is much
    /// narrower than the wall time's, the machine takes the CPU from the run rather than slowing
    /// it on the CPU, and the cpu_* rates are the figures to compare. Absent from older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_spread_percent: Option<f64>,
    /// The stretches' rates over wall time, in the order taken (rounds of the workload per
    /// second): what a cell's figure and interval would be of samples like them. Absent from older
    /// runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<f64>,
}

/// Times the workload in [`STRETCHES`] stretches of [`STRETCH`] (about half a second).
pub fn probe() -> NoiseProbe {
    let table: Vec<u64> = (0..TABLE_WORDS as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    // One stretch first, unrecorded: the first touches of the table and the code.
    stretch_rate(&table);
    let (rates, cpu_rates): (Vec<f64>, Vec<f64>) = (0..STRETCHES).map(|_| stretch_rate(&table)).unzip();
    of_rates(&rates, &cpu_rates)
}

/// The probe's figures from its stretches' rates over wall time and over CPU time.
pub fn of_rates(rates: &[f64], cpu_rates: &[f64]) -> NoiseProbe {
    let kept = stats::kept(rates);
    NoiseProbe {
        cpu_spread_percent: Some(rounded(half_spread_percent(cpu_rates), 2)),
        stretch_ms: STRETCH.as_secs_f64() * 1e3,
        stretches: rates.len(),
        spread_percent: rounded(half_spread_percent(rates), 2),
        slowed_percent: rounded(100.0 * (rates.len() - kept.len()) as f64 / rates.len() as f64, 1),
        kept_spread_percent: rounded(half_spread_percent(&kept), 2),
        rates: rates.iter().map(|r| r.round()).collect(),
    }
}

/// Half of (p90 - p10) in % of the median.
pub(super) fn half_spread_percent(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    50.0 * (at(0.9) - at(0.1)) / at(0.5)
}

/// Rounds of the workload per second over one stretch, of wall time and of the thread's CPU time.
fn stretch_rate(table: &[u64]) -> (f64, f64) {
    let (started, cpu_started) = (Instant::now(), tlsbench_harness::cpu_time::thread_cpu_ns());
    let (mut rounds, mut x) = (0u64, black_box(0x2545_f491_4f6c_dd1du64));
    while started.elapsed() < STRETCH {
        for _ in 0..256 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(table[(x >> 40) as usize % table.len()]);
            x ^= x >> 29;
        }
        rounds += 1;
    }
    black_box(x);
    let cpu_s = tlsbench_harness::cpu_time::thread_cpu_ns().saturating_sub(cpu_started) as f64 / 1e9;
    (rounds as f64 / started.elapsed().as_secs_f64(), rounds as f64 / cpu_s.max(1e-9))
}

impl NoiseProbe {
    /// The line a run prints before its first round: what the machine allows.
    pub fn line(&self, samples: usize, most: usize) -> String {
        let resolution = self.resolution_percent(samples);
        let slowed = match self.slowed_percent > 0.0 {
            true => format!(
                ", {:.0}% of them slowed by a neighbour: a cell's slowed samples are set aside and taken again \
                 (up to {most} per cell)",
                self.slowed_percent
            ),
            false => String::new(),
        };
        let cpu = match self.takes_the_cpu() {
            Some(cpu) => format!(
                "; over CPU time they vary ±{cpu:.1}%: the machine takes the CPU from the run, and the cpu_* rates \
                 are the figures to compare"
            ),
            None => String::new(),
        };
        let told = match resolution < 100.0 {
            true => format!("wall-time differences under about {resolution:.0}% cannot be told apart"),
            false => "no wall-time difference can be told apart".into(),
        };
        format!(
            "this machine now: {:.0}-ms stretches of a fixed workload vary ±{:.1}%{slowed}{cpu}; with {samples} \
             samples per cell, {told}{}",
            self.stretch_ms,
            self.spread_percent,
            if resolution > QUIET_RESOLUTION_PERCENT {
                " (a quieter machine, --target-ci or --measure instructions tell smaller ones)"
            } else {
                ""
            }
        )
    }

    /// The CPU-time stretches' spread where the wall time's is noisy (above the quiet
    /// resolution's half) and at least twice it: the CPU was taken, not slowed.
    pub fn takes_the_cpu(&self) -> Option<f64> {
        let cpu = self.cpu_spread_percent?;
        (self.spread_percent > QUIET_RESOLUTION_PERCENT / 2.0 && self.spread_percent > 2.0 * cpu).then_some(cpu)
    }

    /// The smallest difference two cells' intervals can tell apart, in %: twice what one
    /// interval spans, 1% of drift at each end beside the typical interval of a time rate's figure
    /// (`stats::faster_half`) of `samples` of the stretches, drawn at random (a fixed seed) as a
    /// cell's samples are taken across rounds. A probe stored without its rates: the kept
    /// stretches' ± for the interval, as the median's was.
    pub fn resolution_percent(&self, samples: usize) -> f64 {
        let Some(reach) = typical_reach_percent(&self.rates, samples) else {
            return 2.0 * (self.kept_spread_percent + 1.0);
        };
        2.0 * (reach + 1.0)
    }
}

/// The median, over draws of `samples` of `rates` each, of the figure's interval as the table
/// prints it (the farther end, in % of the faster half's mean); None without enough rates.
fn typical_reach_percent(rates: &[f64], samples: usize) -> Option<f64> {
    const DRAWS: usize = 101;
    if samples < 2 || rates.len() < samples {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(42);
    let mut reaches: Vec<f64> = (0..DRAWS)
        .filter_map(|_| {
            let mut pool = rates.to_vec();
            rng.shuffle(&mut pool);
            let (mean, interval) = stats::faster_half(&pool[..samples])?;
            stats::ci_percent(mean, interval)
        })
        .collect();
    reaches.sort_by(f64::total_cmp);
    reaches.get(reaches.len() / 2).copied()
}

/// At or below this, the machine is as quiet as this kind of machine gets: no advice.
const QUIET_RESOLUTION_PERCENT: f64 = 8.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_machine_says_only_what_it_allows() {
        let rates: Vec<f64> = (0..25).map(|i| 1000.0 + (i % 5) as f64 * 5.0).collect();
        let probe = of_rates(&rates, &rates);
        assert_eq!((probe.slowed_percent, probe.stretches), (0.0, 25));
        assert_eq!(
            probe.line(6, 8),
            "this machine now: 20-ms stretches of a fixed workload vary ±1.0%; with 6 samples per cell, \
             wall-time differences under about 4% cannot be told apart"
        );
    }

    #[test]
    fn a_noisy_machine_names_the_slowed_share_and_the_remedies() {
        // A fifth of the stretches 30% slower, the rest within ±2%.
        let rates: Vec<f64> =
            (0..25).map(|i| if i % 5 == 0 { 700.0 } else { 1000.0 + (i % 4) as f64 * 10.0 - 15.0 }).collect();
        let probe = of_rates(&rates, &rates);
        assert_eq!(probe.slowed_percent, 20.0);
        assert!(probe.spread_percent > 10.0 && probe.kept_spread_percent < 2.0, "{probe:?}");
        let line = probe.line(6, 12);
        assert!(line.contains("vary ±"), "{line}");
        assert!(line.contains("20% of them slowed by a neighbour"), "{line}");
        assert!(line.contains("set aside and taken again (up to 12 per cell)"), "{line}");
        assert!(!line.contains("a quieter machine"), "the kept stretches are quiet: {line}");
        // Where even the kept stretches spread, it says what tells smaller differences.
        let wide: Vec<f64> = (0..25).map(|i| 1000.0 + (i % 5) as f64 * 30.0).collect();
        assert!(of_rates(&wide, &wide)
            .line(6, 12)
            .ends_with("(a quieter machine, --target-ci or --measure instructions tell smaller ones)"));
    }

    #[test]
    fn what_a_noisy_machine_allows_is_of_the_faster_half_as_a_cell_reports_it() {
        // Each stretch loses a random share, up to 30%: spread evenly, few are set aside as slowed,
        // and the kept stretches vary ±15%; a cell's faster half varies much less.
        let wall: Vec<f64> = (0..25).map(|i| 1000.0 * (1.0 - 0.05 * ((i * 3) % 7) as f64)).collect();
        let probe = of_rates(&wall, &wall);
        let as_the_median = 2.0 * (probe.kept_spread_percent + 1.0);
        let resolution = probe.resolution_percent(6);
        assert!(resolution < as_the_median / 1.5 && resolution > 2.0, "{resolution} against {as_the_median}");
        // More samples per cell narrow it; a probe stored without its stretches says what it said.
        assert!(probe.resolution_percent(12) < resolution, "{probe:?}");
        let stored = NoiseProbe { rates: Vec::new(), ..probe };
        assert_eq!(stored.resolution_percent(6), as_the_median);
    }

    #[test]
    fn a_machine_that_takes_the_cpu_points_to_the_cpu_time_rates() {
        // Wall time loses a random share of each stretch; the thread's CPU time does not.
        let wall: Vec<f64> = (0..25).map(|i| 1000.0 * (1.0 - 0.05 * (i % 7) as f64)).collect();
        let cpu: Vec<f64> = (0..25).map(|i| 1000.0 + (i % 3) as f64 * 5.0).collect();
        let probe = of_rates(&wall, &cpu);
        assert!(probe.takes_the_cpu().is_some_and(|c| c < 1.0), "{probe:?}");
        let line = probe.line(6, 12);
        assert!(line.contains("the machine takes the CPU from the run, and the cpu_* rates are the figures"), "{line}");
        // Slowed alike over both clocks: not taken, slowed; nothing said of the cpu_* rates.
        assert_eq!(of_rates(&wall, &wall).takes_the_cpu(), None);
    }
}
