//! Threads pinned to CPUs: a sample of `--threads N --cpus LIST` runs thread i on `LIST[i % len]`,
//! one thread per core, so that the orchestrator can measure one thread on each of the same cores
//! and compare like with like (docs/axes.md, "Threads").

use crate::Error;

/// The CPU that thread `index` of a sample runs on: `cpus[index % cpus.len()]`; None without CPUs
/// (the thread runs wherever the scheduler puts it).
pub fn cpu_for(cpus: &[u32], index: usize) -> Option<u32> {
    (!cpus.is_empty()).then(|| cpus[index % cpus.len()])
}

/// Pins the calling thread (not its process) to CPU `cpu`: the other threads keep their masks.
pub fn pin_this_thread(cpu: u32) -> Result<(), Error> {
    pin_this_thread_to(&[cpu])
}

/// Pins the calling thread (not its process) to the CPUs `cpus`.
pub fn pin_this_thread_to(cpus: &[u32]) -> Result<(), Error> {
    let bits = 8 * std::mem::size_of::<libc::cpu_set_t>();
    if let Some(&cpu) = cpus.iter().find(|&&cpu| cpu as usize >= bits) {
        return Err(Error::Other(format!("CPU {cpu} is beyond the {bits} CPUs a CPU set holds")));
    }
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes within it (checked above).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; the set is a valid cpu_set_t of the size given.
    match unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } {
        0 => Ok(()),
        _ => Err(Error::Other(format!(
            "cannot pin a thread to CPU {}: {} (this process may use CPUs {})",
            list(cpus),
            std::io::Error::last_os_error(),
            list(&allowed_cpus())
        ))),
    }
}

/// Pins the calling thread to the CPU of thread `index` ([`cpu_for`]); nothing without CPUs.
pub fn pin_thread_of(cpus: &[u32], index: usize) -> Result<(), Error> {
    match cpu_for(cpus, index) {
        Some(cpu) => pin_this_thread(cpu),
        None => Ok(()),
    }
}

/// The CPUs the calling thread may run on (its affinity mask: `taskset -c 0-3` sets it for a
/// process and everything it starts), in ascending order; empty where the system does not say.
pub fn allowed_cpus() -> Vec<u32> {
    // SAFETY: as in pin_this_thread; the kernel fills the set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Vec::new();
    }
    let bits = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET reads within the set for every cpu below its size.
    (0..bits).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) }).map(|cpu| cpu as u32).collect()
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: no arguments; -1 on failure.
    u32::try_from(unsafe { libc::sched_getcpu() }).ok()
}

/// A list of CPUs as `--cpus` (and `taskset -c`) takes it: numbers and ranges, comma-separated
/// (`0,1`, `0-3,8`), in the order given; each below the CPUs a CPU set holds (CPU_SETSIZE).
pub fn parse_cpus(text: &str) -> Result<Vec<u32>, String> {
    let bad = || {
        format!(
            "`{text}` is not a CPU list (valid: CPU numbers and ranges, comma-separated, \
             as taskset -c takes them, e.g. 0,1 or 0-3,8)"
        )
    };
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let number = |s: &str| s.trim().parse::<u32>().map_err(|_| bad());
        let (first, last) = match part.split_once('-') {
            Some((first, last)) => (number(first)?, number(last)?),
            None => (number(part)?, number(part)?),
        };
        if first > last || last as usize >= libc::CPU_SETSIZE as usize {
            return Err(bad());
        }
        cpus.extend(first..=last);
    }
    Ok(cpus)
}

/// A CPU list as a command-line value ([`parse_cpus`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<u32>);

impl std::str::FromStr for CpuList {
    type Err = String;

    fn from_str(text: &str) -> Result<CpuList, String> {
        parse_cpus(text).map(CpuList)
    }
}

/// CPUs as `--cpus` takes them: `0,1,2`.
pub fn list(cpus: &[u32]) -> String {
    cpus.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_beyond_the_cpus_take_them_round_robin() {
        let cpus = [4, 6];
        assert_eq!((0..5).map(|i| cpu_for(&cpus, i)).collect::<Vec<_>>(), [4, 6, 4, 6, 4].map(Some));
        assert_eq!(cpu_for(&[], 3), None);
    }

    #[test]
    fn a_cpu_list_takes_numbers_and_ranges_and_names_what_is_valid_when_bad() {
        assert_eq!(parse_cpus("0,1").unwrap(), [0, 1]);
        assert_eq!(parse_cpus("0-3,8").unwrap(), [0, 1, 2, 3, 8]);
        assert_eq!(list(&parse_cpus("2-4").unwrap()), "2,3,4");
        // In the order given, repeats kept: thread i runs on the i-th.
        assert_eq!(parse_cpus("3,1,1").unwrap(), [3, 1, 1]);
        for bad in ["", "a", "3-1", "1-", "1,,2", "-1", "99999"] {
            let error = parse_cpus(bad).unwrap_err();
            assert!(error.contains(&format!("`{bad}` is not a CPU list")), "{bad}: {error}");
            assert!(error.contains("valid: CPU numbers and ranges") && error.contains("taskset -c"), "{error}");
        }
    }

    #[test]
    fn a_thread_pinned_to_a_cpu_runs_there_and_the_process_keeps_its_mask() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        let last = *allowed.last().unwrap();
        let (mask, cpu) = std::thread::spawn(move || {
            pin_this_thread(last).unwrap();
            (allowed_cpus(), current_cpu())
        })
        .join()
        .unwrap();
        assert_eq!((mask, cpu), (vec![last], Some(last)));
        assert_eq!(allowed_cpus(), allowed, "the other threads keep theirs");
    }

    #[test]
    fn a_cpu_beyond_the_set_is_refused_naming_the_cpus_allowed() {
        let error = std::thread::spawn(|| pin_this_thread(100_000).unwrap_err()).join().unwrap().to_string();
        assert!(error.contains("beyond"), "{error}");
        let outside = allowed_cpus().last().unwrap() + 1;
        let error = std::thread::spawn(move || pin_this_thread(outside).unwrap_err()).join().unwrap().to_string();
        assert!(error.contains("this process may use CPUs"), "{error}");
    }
}
