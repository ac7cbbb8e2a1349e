//! Which CPU to measure on: before each time sample of a stack compiled ahead of time, every CPU
//! the run may use is timed on a short fixed workload, and the sample runs on the fastest; that
//! CPU is timed again after it, and a sample that ran where no CPU was at full speed is set
//! aside as slowed (sampling/cell.rs).
//!
//! On a shared 2-vCPU VM (2026-11-30), each vCPU ran slower for seconds at a time, independently
//! of the other: a neighbour on its core's sibling hyperthread, which takes the execution units
//! that wide arithmetic (a handshake's bignum multiplies) needs, while a dependent chain in
//! registers (the calibration loop, environment.rs) hardly moves. So the workload is eight
//! independent multiply chains: timed before each sample, it followed the handshakes' rate
//! (correlation 0.78 over two minutes; the chain 0.38), and the 6-sample figures of the samples
//! it found at full speed spread ±2.5% where all samples' spread ±9.6% (docs/sampling.md).

use std::time::Duration;

use serde::{Deserialize, Serialize};
/// A CPU timed at this fraction of the run's reference speed or more is at full speed.
pub use tlsbench_harness::speed::FULL_SPEED;

/// The reference speed is this quantile of every probe so far: the CPUs' full speed where they
/// ran at it at least a tenth of the time.
const REFERENCE_QUANTILE: f64 = 0.9;

/// The probes taken of each CPU when the run starts, so that the first samples have a reference:
/// [`FIRST_PROBE_EVERY`] apart, so that they meet the stretches at full speed of a CPU slowed
/// most of the time (each tens of milliseconds long, 2026-11-30).
const FIRST_PROBES: usize = 25;
const FIRST_PROBE_EVERY: Duration = Duration::from_millis(4);

/// The run's probes and what they chose.
pub struct Sentinel {
    cpus: Vec<usize>,
    speeds: Vec<f64>,
    summary: SentinelSummary,
    /// The absolute speeds of the counted stretches of the judged samples, summed.
    judged_speed_sum: f64,
    judged_at_full_speed: u32,
}

/// What the sentinel did over a run, stored with its conditions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SentinelSummary {
    /// The samples placed on a CPU.
    pub samples: u32,
    /// Of those, the samples whose CPU was at full speed ([`FULL_SPEED`]).
    pub at_full_speed: u32,
    /// The samples placed on another CPU than the first, because the first was slower.
    pub moved: u32,
    /// Half the spread (p90 - p10) of the probes' speeds, in % of their median.
    pub spread_percent: f64,
    /// The full speed the samples were judged against, at the run's end ([`REFERENCE_QUANTILE`]
    /// of every probe): rounds of the workload per microsecond. Absent from older runs.
    #[serde(default)]
    pub reference: f64,
    /// Of `samples`, those whose runner judged its own loop (`--full-speed`): it counted only the
    /// stretches of its loop at full speed, moving to the faster CPU itself. Absent from older runs.
    #[serde(default)]
    pub judged: u32,
    /// The CPUs' mean speed over the stretches those samples counted, in the workload's rounds per
    /// microsecond: the speed the run's figures were measured at, which `compare` sets beside the
    /// figures' move. 0 where none was judged.
    #[serde(default)]
    pub judged_speed: f64,
}

impl Sentinel {
    /// A sentinel over the CPUs this process may use; None where there are fewer than two or the
    /// system does not say (no choice to make).
    pub fn new() -> Option<Sentinel> {
        let cpus = crate::cores::allowed();
        if cpus.len() < 2 {
            return None;
        }
        let mut sentinel = Sentinel {
            cpus,
            speeds: Vec::new(),
            summary: SentinelSummary::default(),
            judged_speed_sum: 0.0,
            judged_at_full_speed: 0,
        };
        for _ in 0..FIRST_PROBES {
            sentinel.probe_all();
            std::thread::sleep(FIRST_PROBE_EVERY);
        }
        Some(sentinel)
    }

    /// Times every CPU, and returns the one to measure on: the fastest.
    pub fn place(&mut self) -> Placement {
        let probed = self.probe_all();
        let (cpu, before) = choice(&probed);
        self.summary.moved += u32::from(cpu != self.cpus[0]);
        Placement { cpu, before }
    }

    /// After the sample placed at `placement`: times its CPU again, and returns how fast the CPU
    /// ran around the sample, the slower of before and after, as a fraction of the run's
    /// reference speed ([`FULL_SPEED`] or more: at full speed).
    pub fn placed(&mut self, placement: Placement) -> f64 {
        let after = speed_on(placement.cpu);
        self.speeds.extend(after);
        let reference = reference(&self.speeds);
        let speed = match reference > 0.0 {
            true => after.map_or(placement.before, |after| after.min(placement.before)) / reference,
            false => 1.0,
        };
        self.summary.samples += 1;
        self.summary.at_full_speed += u32::from(speed >= FULL_SPEED);
        speed
    }

    /// Times every CPU, for the reference only: before a sample whose runner judges its own loop
    /// at full speed ([`Sentinel::reference`]) and moves among the CPUs itself.
    pub fn refresh(&mut self) {
        self.probe_all();
    }

    /// The full speed the samples are judged against: the probe workload's rounds per
    /// microsecond at [`REFERENCE_QUANTILE`] of every probe so far (`--full-speed`).
    pub fn reference(&self) -> f64 {
        reference(&self.speeds)
    }

    /// After a sample whose runner judged its own loop against `reference`: what it reported.
    pub fn judged(&mut self, judged: &tlsbench_harness::protocol::CpuSpeed, reference: f64) {
        self.summary.samples += 1;
        self.summary.judged += 1;
        self.summary.at_full_speed += u32::from(judged.speed >= FULL_SPEED);
        self.summary.moved += u32::from(judged.moves > 0);
        if judged.gated {
            self.judged_speed_sum += judged.speed * reference;
            self.judged_at_full_speed += 1;
        }
    }

    /// What the probes so far say of the CPUs' speed, for the line a run prints first: None where
    /// they vary less than [`NOISY_PROBES_PERCENT`]. The noise probe's workload there is a dependent
    /// chain, which a neighbour on the sibling hyperthread hardly slows (2026-11-30: its 20-ms
    /// stretches ±3.9% while these probes varied ±36%), so this is said beside it.
    pub fn varying(&self) -> Option<String> {
        let spread = self.summary().spread_percent;
        (spread >= NOISY_PROBES_PERCENT).then(|| {
            format!(
                "its CPUs' speed at wide multiplies varies ±{spread:.0}% (a neighbour slows them by turns): a time \
                 sample on one CPU at a time counts only the stretches of its loop at full speed, or runs on the \
                 faster CPU (docs/sampling.md)"
            )
        })
    }

    /// Whether any probe so far found a CPU below full speed.
    pub fn saw_slowed(&self) -> bool {
        let reference = reference(&self.speeds);
        self.speeds.iter().any(|&speed| speed < FULL_SPEED * reference)
    }

    pub fn summary(&self) -> SentinelSummary {
        SentinelSummary {
            spread_percent: match self.speeds.is_empty() {
                true => 0.0,
                false => crate::environment::rounded(super::probe::half_spread_percent(&self.speeds), 2),
            },
            reference: crate::environment::rounded(reference(&self.speeds), 3),
            judged_speed: match self.judged_at_full_speed {
                0 => 0.0,
                n => crate::environment::rounded(self.judged_speed_sum / f64::from(n), 3),
            },
            ..self.summary.clone()
        }
    }

    fn probe_all(&mut self) -> Vec<(usize, f64)> {
        let probed: Vec<(usize, f64)> = self.cpus.iter().filter_map(|&cpu| Some((cpu, speed_on(cpu)?))).collect();
        self.speeds.extend(probed.iter().map(|&(_, speed)| speed));
        probed
    }
}

/// The probes varying by this much (half their spread, %) or more: a machine that slows its
/// CPUs; quiet, they agree within a few percent.
pub const NOISY_PROBES_PERCENT: f64 = 10.0;

/// Where a sample runs, and how fast its CPU was just before it.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    pub cpu: usize,
    before: f64,
}

/// The fastest of the probed CPUs (CPU, speed); the first where none could be timed.
pub fn choice(probed: &[(usize, f64)]) -> (usize, f64) {
    probed.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or((0, 0.0))
}

/// The reference speed of every probe so far ([`REFERENCE_QUANTILE`]).
pub fn reference(speeds: &[f64]) -> f64 {
    let mut sorted = speeds.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(((sorted.len().max(1) - 1) as f64 * REFERENCE_QUANTILE).round() as usize).copied().unwrap_or(0.0)
}

/// This thread on `cpu` alone, timed on the workload that a measured loop judges itself by
/// (tlsbench_harness::speed::probe: rounds per microsecond), then back on the CPUs it had; None
/// where the thread could not be moved.
fn speed_on(cpu: usize) -> Option<f64> {
    let before = crate::cores::thread_affinity()?;
    crate::cores::set_thread_affinity(&crate::cores::set_of(&[cpu])).then_some(())?;
    let speed = tlsbench_harness::speed::probe();
    crate::cores::set_thread_affinity(&before);
    Some(speed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_cpu_is_chosen() {
        assert_eq!(choice(&[(0, 50.0), (1, 90.0)]), (1, 90.0));
        assert_eq!(choice(&[(0, 60.0), (1, 50.0)]), (0, 60.0));
        assert_eq!(choice(&[(3, 60.0)]), (3, 60.0));
    }

    #[test]
    fn the_reference_is_the_full_speed_the_cpus_reach_a_tenth_of_the_time() {
        // Slowed most of the time, at full speed (100) now and then.
        let mut speeds = vec![55.0; 80];
        speeds.extend([100.0; 20]);
        assert_eq!(reference(&speeds), 100.0);
        // One lucky probe does not set it.
        let mut speeds = vec![80.0; 99];
        speeds.push(130.0);
        assert_eq!(reference(&speeds), 80.0);
        assert_eq!(reference(&[]), 0.0);
    }

    #[test]
    fn the_cpus_speed_is_said_first_only_where_it_varies() {
        let sentinel = |speeds: Vec<f64>| Sentinel {
            cpus: vec![0, 1],
            speeds,
            summary: SentinelSummary::default(),
            judged_speed_sum: 0.0,
            judged_at_full_speed: 0,
        };
        assert_eq!(sentinel(vec![100.0, 99.0, 101.0, 98.0, 100.0]).varying(), None);
        // Slowed to about half by turns: half the p10-to-p90 spread, in % of the median.
        let mut speeds = vec![50.0; 60];
        speeds.extend([100.0; 40]);
        assert_eq!(
            sentinel(speeds).varying().unwrap(),
            "its CPUs' speed at wide multiplies varies ±50% (a neighbour slows them by turns): a time sample on one \
             CPU at a time counts only the stretches of its loop at full speed, or runs on the faster CPU \
             (docs/sampling.md)"
        );
    }

    #[test]
    fn a_probe_times_the_workload_on_each_cpu_it_may_use() {
        let Some(mut sentinel) = Sentinel::new() else {
            eprintln!("skipped: fewer than two CPUs to choose from");
            return;
        };
        let placement = sentinel.place();
        assert!(sentinel.cpus.contains(&placement.cpu));
        let speed = sentinel.placed(placement);
        assert!(speed > 0.0 && speed.is_finite(), "{speed}");
        let summary = sentinel.summary();
        assert_eq!(summary.samples, 1);
        assert_eq!(summary.at_full_speed, u32::from(speed >= FULL_SPEED));
        assert!(sentinel.speeds.iter().all(|&s| s > 0.0), "{:?}", sentinel.speeds);
        assert_eq!(sentinel.speeds.len(), (FIRST_PROBES + 1) * sentinel.cpus.len() + 1);
    }
}
