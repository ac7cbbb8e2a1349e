//! The CPUs of a run with `--threads` (docs/axes.md, "Threads"): the N threads of a cell pinned
//! one per CPU, the first N the run may use; its one-thread row measured on each CPU the largest
//! N uses, in turn, so that each thread count is compared with one thread on the same CPUs; and
//! each of those CPUs' speed at a fixed loop, measured as the run starts, with a note under the
//! table naming the slower ones.

use serde::{Deserialize, Serialize};
use tlsbench_harness::pin;
use tlsbench_harness::protocol::SampleReport;

use crate::environment::{calibration_loop_ms, rounded};
use crate::results::RunDocument;

/// The CPUs a run with `--threads` pins its samples' threads to.
#[derive(Clone, Debug, PartialEq)]
pub struct Pinning {
    /// The CPUs the run may use (tlsbench's own affinity mask: `taskset -c` sets it), ascending.
    pub allowed: Vec<u32>,
    /// Those the largest thread count uses: the one-thread row takes its samples on each in turn.
    pub reference: Vec<u32>,
}

impl Pinning {
    /// The CPUs this process may use, for a run whose largest thread count is `max_threads`;
    /// None where the system does not say.
    pub fn of_this_process(max_threads: u32) -> Option<Pinning> {
        Pinning::new(pin::allowed_cpus(), max_threads)
    }

    pub fn new(allowed: Vec<u32>, max_threads: u32) -> Option<Pinning> {
        let used = allowed.len().min(max_threads.max(1) as usize);
        (used > 0).then(|| Pinning { reference: allowed[..used].to_vec(), allowed })
    }

    /// The CPUs of an N-thread cell's threads, in thread order: the first N allowed, round robin
    /// beyond them (threads beyond the cores share cores).
    pub fn for_threads(&self, n: u32) -> Vec<u32> {
        (0..n as usize).filter_map(|i| pin::cpu_for(&self.allowed, i)).collect()
    }

    /// The CPU of sample `index` of the one-thread row.
    pub fn for_reference_sample(&self, index: usize) -> u32 {
        self.reference[index % self.reference.len()]
    }
}

/// The CPUs a sample's threads ran on, in thread order, as the runner reported them; None for
/// a sample whose threads (or thread) ran wherever the scheduler put them.
pub fn pinned_cpus(report: &SampleReport) -> Option<Vec<u32>> {
    let cpus: Option<Vec<u32>> = report.threads.iter().map(|t| t.cpu).collect();
    cpus.filter(|cpus| !cpus.is_empty())
}

/// One CPU's speed: the calibration loop's median time on it (environment.rs), in ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoreSpeed {
    pub cpu: u32,
    pub loop_ms: f64,
}

/// Rounds over the CPUs, and the loop's repetitions on each CPU per round: about 3 ms each, so
/// 45 ms per CPU, spread over the start of the run so that a moment's noise does not mark a CPU.
const SPEED_ROUNDS: usize = 3;
const SPEED_REPETITIONS: usize = 5;

/// A CPU slower than the fastest by more than this, in %, is named under the table.
pub const SLOWER_PERCENT: f64 = 5.0;

/// Each CPU's speed: the calibration loop timed on a thread pinned to each in turn (not this
/// one, whose mask the runners inherit), the median of its repetitions.
pub fn measure_speeds(cpus: &[u32]) -> Vec<CoreSpeed> {
    let cpus = cpus.to_vec();
    let measured = std::thread::spawn(move || {
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); cpus.len()];
        for _ in 0..SPEED_ROUNDS {
            for (i, &cpu) in cpus.iter().enumerate() {
                // A CPU this thread cannot run on has no speed; the run's pinned samples say why.
                if pin::pin_this_thread(cpu).is_ok() {
                    times[i].extend((0..SPEED_REPETITIONS).map(|_| calibration_loop_ms()));
                }
            }
        }
        cpus.iter()
            .zip(times)
            .filter_map(|(&cpu, times)| Some(CoreSpeed { cpu, loop_ms: rounded(median(times)?, 4) }))
            .collect()
    });
    measured.join().unwrap_or_default()
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// The CPUs slower than the fastest by more than [`SLOWER_PERCENT`], each with how much slower
/// in %, slowest first; and the fastest.
pub fn slower_cpus(speeds: &[CoreSpeed]) -> (Vec<(u32, f64)>, Option<u32>) {
    let Some(fastest) = speeds.iter().min_by(|a, b| a.loop_ms.total_cmp(&b.loop_ms)) else {
        return (Vec::new(), None);
    };
    let mut slower: Vec<(u32, f64)> = speeds
        .iter()
        .map(|s| (s.cpu, 100.0 * (1.0 - fastest.loop_ms / s.loop_ms)))
        .filter(|&(_, percent)| percent > SLOWER_PERCENT)
        .collect();
    slower.sort_by(|a, b| b.1.total_cmp(&a.1));
    (slower, Some(fastest.cpu))
}

/// The note under the table of a run with `--threads`: the CPUs slower than the fastest at a
/// fixed loop, and threads beyond the CPUs, which shared them. None where neither.
pub fn note(doc: &RunDocument) -> Option<String> {
    let speeds = &doc.run.environment.core_speeds;
    let mut parts = Vec::new();
    if let (slower, Some(fastest)) = slower_cpus(speeds) {
        if !slower.is_empty() {
            let named: Vec<String> = slower.iter().map(|(cpu, percent)| format!("{cpu} ({percent:.0}%)")).collect();
            parts.push(format!(
                "CPU {} slower than the fastest (CPU {fastest}) at a fixed loop by more than {SLOWER_PERCENT:.0}%; \
                 each efficiency is against one thread on the CPUs its threads ran on",
                named.join(", ")
            ));
        }
    }
    let threads = doc.results.iter().filter_map(|r| r.key.threads).max();
    match threads {
        Some(n) if !speeds.is_empty() && n as usize > speeds.len() => parts
            .push(format!("{n} threads on {} CPUs: threads beyond the CPUs shared them, round robin", speeds.len())),
        _ => {}
    }
    (!parts.is_empty()).then(|| format!("cores: {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_take_the_first_allowed_cpus_and_the_reference_those_of_the_largest_count() {
        let pinning = Pinning::new(vec![2, 3, 5], 2).unwrap();
        assert_eq!(pinning.reference, [2, 3]);
        assert_eq!(pinning.for_threads(2), [2, 3]);
        assert_eq!(pinning.for_threads(4), [2, 3, 5, 2], "beyond the CPUs, round robin");
        assert_eq!((0..4).map(|k| pinning.for_reference_sample(k)).collect::<Vec<_>>(), [2, 3, 2, 3]);
        assert_eq!(Pinning::new(vec![0, 1], 8).unwrap().reference, [0, 1]);
        assert_eq!(Pinning::new(Vec::new(), 2), None);
    }

    #[test]
    fn the_cpus_slower_than_the_fastest_by_more_than_5_percent_are_named_slowest_first() {
        let speeds = [(0, 3.0), (1, 4.0), (2, 3.1), (3, 3.6)].map(|(cpu, loop_ms)| CoreSpeed { cpu, loop_ms });
        let (slower, fastest) = slower_cpus(&speeds);
        assert_eq!(fastest, Some(0));
        let named: Vec<(u32, i64)> = slower.iter().map(|&(cpu, p)| (cpu, p.round() as i64)).collect();
        assert_eq!(named, [(1, 25), (3, 17)], "CPU 2, 3% slower, is not named");
    }

    #[test]
    fn each_cpu_s_speed_is_measured_on_it() {
        let cpus = pin::allowed_cpus();
        let speeds = measure_speeds(&cpus);
        assert_eq!(speeds.iter().map(|s| s.cpu).collect::<Vec<_>>(), cpus);
        assert!(speeds.iter().all(|s| s.loop_ms > 0.0), "{speeds:?}");
        assert_eq!(pin::allowed_cpus(), cpus, "the calling thread keeps its mask");
    }
}
