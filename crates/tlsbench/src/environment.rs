//! What the run ran on, read from the system where it tells; and what the machine did while
//! the run measured (load, steal, a calibration loop), with the warning when that was noisy.

use std::fs;
use std::hint::black_box;
use std::time::Instant;

use crate::noise::NoiseProbe;
use crate::results::{Calibration, Conditions, Environment};

pub fn detect() -> Environment {
    let read = |path: &str| fs::read_to_string(path).ok().map(|s| s.trim().to_string());
    let cpu = read("/proc/cpuinfo")
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let aslr = match read("/proc/sys/kernel/randomize_va_space").as_deref() {
        Some("0") => "off".to_string(),
        Some("1") => "on (conservative)".to_string(),
        Some("2") => "on (full)".to_string(),
        other => other.unwrap_or("unknown").to_string(),
    };
    Environment {
        cpu,
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        kernel: read("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        rustc: env!("TLSBENCH_RUSTC_VERSION").to_string(),
        // Filled in from the runners' replies as the run ends (`run::allocators_used`).
        allocator: "none reported yet".into(),
        // Set by the run from its runners' `list` replies (`describe_builds`).
        builds: None,
        aslr,
        governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").unwrap_or_else(|| "unavailable".into()),
        conditions: None,
        // Measured by a run with --threads as it starts (cores.rs).
        core_speeds: Vec::new(),
    }
}

/// The machine's state when a run starts measuring, to compare with its state at the end.
pub struct Watch {
    load_average: f64,
    cpu_times: Option<CpuTimes>,
    calibration: Calibration,
    noise: NoiseProbe,
}

impl Watch {
    /// Reads the machine's state and probes its noise (crate::noise: half a second).
    pub fn start() -> Watch {
        let noise = crate::noise::probe();
        Watch { load_average: load_average(), cpu_times: CpuTimes::read(), calibration: calibrate(), noise }
    }

    /// How noisy the machine was as the run started.
    pub fn noise(&self) -> &NoiseProbe {
        &self.noise
    }

    pub fn finish(self) -> Conditions {
        let steal_percent = match (self.cpu_times, CpuTimes::read()) {
            (Some(start), Some(end)) if end.total > start.total => Some(rounded(
                100.0 * end.steal.saturating_sub(start.steal) as f64 / (end.total - start.total) as f64,
                3,
            )),
            _ => None,
        };
        Conditions {
            load_average_start: self.load_average,
            load_average_end: load_average(),
            steal_percent,
            calibration_before: self.calibration,
            calibration_after: calibrate(),
            noise: Some(self.noise),
            sentinel: None,
        }
    }
}

/// The 1-minute load average (0 where /proc/loadavg cannot be read).
fn load_average() -> f64 {
    let text = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().next().and_then(|l| l.parse().ok()).unwrap_or(0.0)
}

/// The aggregate CPU line of /proc/stat, in clock ticks.
struct CpuTimes {
    total: u64,
    steal: u64,
}

impl CpuTimes {
    fn read() -> Option<CpuTimes> {
        CpuTimes::parse(&fs::read_to_string("/proc/stat").ok()?)
    }

    /// The first line of /proc/stat's text, `cpu` and its times; None where it is not that.
    fn parse(stat: &str) -> Option<CpuTimes> {
        let fields: Vec<u64> = stat
            .lines()
            .next()?
            .strip_prefix("cpu ")?
            .split_whitespace()
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        // user nice system idle iowait irq softirq steal (guest time is inside user and nice).
        let steal = *fields.get(7)?;
        Some(CpuTimes { total: fields.iter().take(8).sum(), steal })
    }
}

/// How often the calibration loop is timed, and its length in iterations (about 3 ms on the
/// 2-core AMD EPYC KVM guest tlsbench is developed on): enough repetitions for a p10 and a p90,
/// short enough that the two calibrations add well under a second to a run.
const CALIBRATION_RUNS: usize = 21;
const CALIBRATION_ITERATIONS: u64 = 1_500_000;

/// Times a fixed, CPU-bound loop (a multiply-xorshift chain, no memory traffic) `CALIBRATION_RUNS` times.
pub fn calibrate() -> Calibration {
    let mut times: Vec<f64> = (0..CALIBRATION_RUNS).map(|_| calibration_loop_ms()).collect();
    times.sort_by(f64::total_cmp);
    calibration_of(&times)
}

/// The calibration loop, timed once, in ms: also what measures each core's speed (cores.rs).
pub fn calibration_loop_ms() -> f64 {
    let start = Instant::now();
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64);
    for i in 0..CALIBRATION_ITERATIONS {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i);
        x ^= x >> 29;
    }
    black_box(x);
    start.elapsed().as_secs_f64() * 1e3
}

/// The summary of sorted loop times in ms.
fn calibration_of(sorted: &[f64]) -> Calibration {
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    let median = at(0.5);
    // The loops a neighbour slowed set aside, as a cell's slowed samples are (stats::slowed):
    // what is left is the machine's drift, which the run's intervals are widened by.
    let rates: Vec<f64> = sorted.iter().map(|t| 1.0 / t).collect();
    let kept = crate::stats::kept(&rates);
    let kept_at = |q: f64| 1.0 / kept[((kept.len() - 1) as f64 * q).round() as usize];
    Calibration {
        median_ms: rounded(median, 4),
        spread_percent: rounded(100.0 * (at(0.9) - at(0.1)) / median, 2),
        kept_spread_percent: Some(rounded(100.0 * (kept_at(0.9) - kept_at(0.1)) / kept_at(0.5), 2)),
        max_over_min: rounded(sorted[sorted.len() - 1] / sorted[0], 3),
    }
}

/// `x` to `decimals` places: more would be noise, and short decimals read back from JSON as the
/// same numbers (serde_json may misread the last bit of a 17-digit one).
pub(crate) fn rounded(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// The conditions as (what, value) lines for the reports' environment: load, steal, and the
/// calibration loop before and after.
pub fn describe(conditions: &Conditions) -> Vec<(&'static str, String)> {
    let calibration = |c: &Calibration| {
        format!(
            "median {:.2} ms, spread {:.1}% (p90 - p10), max/min {:.2}",
            c.median_ms, c.spread_percent, c.max_over_min
        )
    };
    let noise = conditions.noise.as_ref().map(|n| {
        (
            "noise probe",
            format!(
                "{} stretches of {:.0} ms before the first round: ±{:.1}% (half of p90 - p10), {:.0}% slowed, \
                 the rest ±{:.1}%",
                n.stretches, n.stretch_ms, n.spread_percent, n.slowed_percent, n.kept_spread_percent
            ),
        )
    });
    let mut lines = vec![
        (
            "load average",
            format!("{:.2} at the start, {:.2} at the end", conditions.load_average_start, conditions.load_average_end),
        ),
        (
            "steal",
            conditions.steal_percent.map_or("unknown".to_string(), |s| format!("{s:.2}% of CPU time over the run")),
        ),
        (
            "calibration loop",
            format!(
                "before: {}; after: {}",
                calibration(&conditions.calibration_before),
                calibration(&conditions.calibration_after)
            ),
        ),
    ];
    lines.extend(noise);
    lines
}

/// Above this spread of the calibration loop, the machine was noisy: on the development VM the
/// loop's (p90 - p10) / median was 3 to 5% when nothing else ran, and 50 to 100% during a build.
pub const NOISY_CALIBRATION_SPREAD: f64 = 10.0;
/// Above this share of stolen time, the hypervisor ran other guests on this machine's CPUs
/// often enough to show in a sample of 100 ms.
pub const NOISY_STEAL_PERCENT: f64 = 1.0;

/// Above this median interval of the wall-time rates, the run itself shows the noise, whatever
/// the machine's own signs said: quiet here, the calibration loop (all in registers) moved by 3%
/// while neighbours on the host moved TLS figures, which go through caches and memory, by ±30%.
pub const NOISY_INTERVAL_PERCENT: f64 = 10.0;

/// One line saying why the run was noisy, or None when nothing was: the calibration loop's
/// spread, steal time, a load average above the cores the run could use (the run itself keeps
/// about one busy), or the typical interval of its wall-time rates.
pub fn noisy(conditions: Option<&Conditions>, cores: usize, typical_interval: Option<f64>) -> Option<String> {
    let mut why = Vec::new();
    if let Some(conditions) = conditions {
        why.extend(machine_signs(conditions, cores));
    }
    if let Some(typical) = typical_interval.filter(|&t| t > NOISY_INTERVAL_PERCENT) {
        why.push(format!(
            "the wall-time rates' intervals are ±{typical:.0}% typical (quiet: below {NOISY_INTERVAL_PERCENT}%)"
        ));
    }
    (!why.is_empty()).then(|| {
        format!(
            "noisy machine during this run: {}; wall-time figures and their ± move with it \
             (the cpu_* metrics leave out time spent waiting for a CPU)",
            why.join(", ")
        )
    })
}

fn machine_signs(conditions: &Conditions, cores: usize) -> Vec<String> {
    let mut why = Vec::new();
    let (before, after) = (&conditions.calibration_before, &conditions.calibration_after);
    if before.spread_percent.max(after.spread_percent) > NOISY_CALIBRATION_SPREAD {
        why.push(format!(
            "a fixed loop's time spread {:.0}% before and {:.0}% after the run \
             (quiet: below {NOISY_CALIBRATION_SPREAD}%)",
            before.spread_percent, after.spread_percent
        ));
    }
    if let Some(steal) = conditions.steal_percent.filter(|&s| s > NOISY_STEAL_PERCENT) {
        why.push(format!("the hypervisor stole {steal:.1}% of CPU time"));
    }
    let load = conditions.load_average_start.max(conditions.load_average_end);
    if load > cores as f64 {
        why.push(format!("the load average reached {load:.1} on {cores} cores"));
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(spread_percent: f64) -> Calibration {
        Calibration {
            median_ms: 3.0,
            spread_percent,
            kept_spread_percent: None,
            max_over_min: 1.0 + spread_percent / 100.0,
        }
    }

    fn conditions(spread: f64, steal: Option<f64>, load: f64) -> Conditions {
        Conditions {
            load_average_start: 0.2,
            load_average_end: load,
            steal_percent: steal,
            calibration_before: calibration(3.0),
            calibration_after: calibration(spread),
            noise: None,
            sentinel: None,
        }
    }

    #[test]
    fn a_quiet_run_gets_no_warning() {
        assert_eq!(noisy(Some(&conditions(4.0, Some(0.1), 1.1)), 2, Some(3.5)), None);
        assert_eq!(noisy(Some(&conditions(4.0, None, 1.1)), 2, None), None);
        assert_eq!(noisy(None, 2, Some(9.0)), None);
    }

    #[test]
    fn a_noisy_run_gets_one_line_naming_each_cause() {
        let spread = noisy(Some(&conditions(38.0, Some(0.0), 1.0)), 2, Some(2.0)).unwrap();
        assert_eq!(
            spread,
            "noisy machine during this run: a fixed loop's time spread 3% before and 38% after the run \
             (quiet: below 10%); wall-time figures and their ± move with it \
             (the cpu_* metrics leave out time spent waiting for a CPU)"
        );
        let all = noisy(Some(&conditions(38.0, Some(2.5), 3.4)), 2, Some(31.0)).unwrap();
        assert!(!all.contains('\n'));
        for cause in [
            "spread 3% before and 38% after",
            "the hypervisor stole 2.5% of CPU time",
            "the load average reached 3.4 on 2 cores",
            "the wall-time rates' intervals are ±31% typical (quiet: below 10%)",
        ] {
            assert!(all.contains(cause), "{all}");
        }
        assert!(noisy(Some(&conditions(4.0, Some(1.5), 0.5)), 2, None).unwrap().contains("stole 1.5%"));
        assert!(noisy(Some(&conditions(4.0, None, 2.5)), 2, None)
            .unwrap()
            .contains("load average reached 2.5 on 2 cores"));
        // A quiet-looking machine whose figures still moved: a stored run from before the
        // conditions were kept, or neighbours the guest cannot see.
        assert!(noisy(None, 2, Some(24.0)).unwrap().contains("±24% typical"));
    }

    #[test]
    fn calibration_spread_is_p90_minus_p10_over_the_median() {
        let times: Vec<f64> = (1..=21).map(f64::from).collect();
        let c = calibration_of(&times);
        assert_eq!((c.median_ms, c.max_over_min), (11.0, 21.0));
        assert_eq!(c.spread_percent, 145.45); // 100 (19 - 3) / 11
    }

    #[test]
    fn steal_is_read_from_the_aggregate_cpu_line_of_proc_stat() {
        // user nice system idle iowait irq softirq steal, then guest times (inside user and nice).
        let stat = "cpu  100 5 50 800 10 0 2 30 7 0\ncpu0 50 2 25 400 5 0 1 15 3 0\nintr 1 2\n";
        let times = CpuTimes::parse(stat).unwrap();
        assert_eq!((times.total, times.steal), (997, 30));
        // A kernel without a steal field, or another file, gives no figure rather than a wrong one.
        assert!(CpuTimes::parse("cpu  100 5 50 800 10 0 2\n").is_none());
        assert!(CpuTimes::parse("cpu0 100 5 50 800 10 0 2 30\n").is_none());
        assert!(CpuTimes::parse("").is_none());
    }

    #[test]
    fn a_run_on_linux_records_its_steal() {
        // /proc/stat is there, and the two calibrations take CPU ticks between the two reads.
        let conditions = Watch::start().finish();
        assert!(conditions.steal_percent.is_some(), "{conditions:?}");
    }
}
