//! The CPUs of a run with `--threads` (docs/axes.md, "Threads"): the N threads of a cell pinned
//! one per CPU, the first N the run may use; its one-thread row measured on each CPU the largest
//! N uses, in turn, so that each thread count is compared with one thread on the same CPUs; and
//! each of those CPUs' speed at a fixed loop, measured as the run starts, with a note under the
//! table naming the slower ones.
//!
//! And for `run --transport tcp --peak`: CPU lists as `taskset -c` takes them (`0-3,8`), the split of
//! the CPUs between a server and its load, and reading back which CPUs a started process may
//! run on.

use anyhow::{bail, Result};
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

/// The CPUs of a list such as `0-3,8,10-11` ([`pin::parse_cpus`]) as a set: ascending, without
/// repeats.
pub fn parse_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus: Vec<usize> = pin::parse_cpus(text)?.into_iter().map(|cpu| cpu as usize).collect();
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// A list as `parse_list` reads it, ranges joined: `0-3,8`.
pub fn format_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(match j > i {
            true => format!("{}-{}", cpus[i], cpus[j]),
            false => cpus[i].to_string(),
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPUs this process may run on (sched_getaffinity): what taskset or a container left it.
pub fn allowed() -> Vec<usize> {
    pin::allowed_cpus().into_iter().map(|cpu| cpu as usize).collect()
}

/// The set of `cpus`, for sched_setaffinity.
pub fn set_of(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes within it (pin::parse_cpus bounds CPUs).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        set
    }
}

/// The CPUs the calling thread may run on; None where the system does not say.
pub fn thread_affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: the set is zeroed, then filled by the kernel for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0).then_some(set)
    }
}

/// Puts the calling thread on the CPUs of `set`; whether it could.
pub fn set_thread_affinity(set: &libc::cpu_set_t) -> bool {
    // SAFETY: sched_setaffinity only reads the set.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) == 0 }
}

/// The CPUs process `pid` may run on, as the kernel reports them (`Cpus_allowed_list` of
/// /proc/PID/status); None once it has ended.
pub fn of_process(pid: u32) -> Option<Vec<usize>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let list = status.lines().find_map(|line| line.strip_prefix("Cpus_allowed_list:"))?;
    parse_list(list.trim()).ok()
}

/// Where a server and its load generators run: CPUs of their own each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    pub server: Vec<usize>,
    pub load: Vec<usize>,
}

impl Split {
    /// The split asked for (`--server-cores`, `--load-cores`), checked against the CPUs this
    /// process may use; a list not given is the rest of them. Neither given: a quarter of the
    /// allowed CPUs (at least one) for the server, the rest for the load, since a load
    /// generator verifies what the server signs and starts and ends every connection.
    pub fn choose(server: Option<&str>, load: Option<&str>) -> Result<Split> {
        let allowed = allowed();
        let shown = format_list(&allowed);
        if allowed.len() < 2 {
            bail!(
                "the server's peak needs at least 2 CPUs, one for the server and one for its load; \
                 tlsbench may use CPU {shown} only"
            );
        }
        let list = |flag: &str, text: &str| -> Result<Vec<usize>> {
            let cpus = parse_list(text).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
            if let Some(cpu) = cpus.iter().find(|cpu| !allowed.contains(cpu)) {
                bail!("{flag} {text}: CPU {cpu} is not one tlsbench may use (allowed: {shown})");
            }
            Ok(cpus)
        };
        let rest = |taken: &[usize]| allowed.iter().copied().filter(|c| !taken.contains(c)).collect::<Vec<_>>();
        let (server, load) = match (server, load) {
            (Some(s), Some(l)) => (list("--server-cores", s)?, list("--load-cores", l)?),
            (Some(s), None) => {
                let server = list("--server-cores", s)?;
                let load = rest(&server);
                (server, load)
            }
            (None, Some(l)) => {
                let load = list("--load-cores", l)?;
                (rest(&load), load)
            }
            (None, None) => {
                let server = allowed[..(allowed.len() / 4).max(1)].to_vec();
                let load = rest(&server);
                (server, load)
            }
        };
        if server.is_empty() || load.is_empty() {
            let (empty, other) = match server.is_empty() {
                true => ("the server", "--load-cores"),
                false => ("the load", "--server-cores"),
            };
            bail!("{other} takes every CPU tlsbench may use ({shown}), leaving none for {empty}");
        }
        if let Some(cpu) = server.iter().find(|cpu| load.contains(cpu)) {
            bail!(
                "--server-cores and --load-cores share CPU {cpu}: the server and its load need CPUs of their own \
                 (allowed: {shown})"
            );
        }
        Ok(Split { server, load })
    }

    /// The split a stored run's command line asked for (to resume it), as `choose` gives it.
    pub fn of_command_line(words: &[String]) -> Result<Split> {
        let value = |flag: &str| {
            let with_equals = format!("{flag}=");
            words.iter().enumerate().find_map(|(i, word)| match word.strip_prefix(&with_equals) {
                Some(value) => Some(value.to_string()),
                None => (word == flag).then(|| words.get(i + 1).cloned()).flatten(),
            })
        };
        Split::choose(value("--server-cores").as_deref(), value("--load-cores").as_deref())
    }
}

#[cfg(test)]
mod split_tests {
    use super::*;

    #[test]
    fn lists_read_and_print_as_taskset_writes_them() {
        assert_eq!(parse_list("0-3,8,10-11"), Ok(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_list("3,1,1"), Ok(vec![1, 3]));
        assert_eq!(format_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_list(&[5]), "5");
        // The syntax and its errors: harness::pin's tests.
    }

    #[test]
    fn by_default_the_server_takes_a_quarter_of_the_cpus_and_the_load_the_rest() {
        let allowed = allowed();
        let split = match Split::choose(None, None) {
            Ok(split) => split,
            // On one CPU: the error says what the peak needs.
            Err(e) => {
                assert!(allowed.len() < 2 && e.to_string().contains("needs at least 2 CPUs"), "{allowed:?}: {e}");
                return;
            }
        };
        assert_eq!(split.server, allowed[..(allowed.len() / 4).max(1)]);
        assert_eq!([&split.server[..], &split.load[..]].concat(), allowed, "every CPU, once");
        // One list given: the other is the rest.
        let first = allowed[0].to_string();
        let given = Split::choose(Some(&first), None).unwrap();
        assert_eq!((given.server, given.load), (vec![allowed[0]], allowed[1..].to_vec()));
        let given = Split::choose(None, Some(&first)).unwrap();
        assert_eq!((given.server, given.load), (allowed[1..].to_vec(), vec![allowed[0]]));
        // A stored run's command line gives its split back.
        let words: Vec<String> =
            ["tlsbench", "run", "--server-cores", &first, "--transport", "tcp"].map(String::from).into();
        assert_eq!(Split::of_command_line(&words).unwrap(), Split::choose(Some(&first), None).unwrap());
        let words: Vec<String> = ["tlsbench", "run", &format!("--load-cores={first}")].map(String::from).into();
        assert_eq!(Split::of_command_line(&words).unwrap(), Split::choose(None, Some(&first)).unwrap());
    }

    #[test]
    fn proc_reports_the_cpus_sched_getaffinity_does() {
        let allowed = allowed();
        assert!(!allowed.is_empty());
        assert_eq!(of_process(std::process::id()), Some(allowed));
    }
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
