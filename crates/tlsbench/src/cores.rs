//! CPU lists as `taskset -c` takes them (`0-3,8`), the CPUs this process may use, the split of
//! them between a server and its load (`run --transport tcp --peak`), and reading back which
//! CPUs a started process may run on.

use anyhow::{bail, Result};

/// The CPUs of a list such as `0-3,8,10-11`, ascending and without repeats.
pub fn parse_list(text: &str) -> Result<Vec<usize>, String> {
    let invalid = || format!("`{text}` is not a CPU list: give CPUs and ranges as taskset -c does, e.g. 0-3,8");
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let number = |t: &str| t.trim().parse::<usize>().map_err(|_| invalid());
        let (first, last) = match part.split_once('-') {
            Some((first, last)) => (number(first)?, number(last)?),
            None => (number(part)?, number(part)?),
        };
        if first > last || last >= libc::CPU_SETSIZE as usize {
            return Err(invalid());
        }
        cpus.extend(first..=last);
    }
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
    // SAFETY: the set is zeroed, then filled by the kernel for this process.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        match libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) {
            0 => set,
            _ => return Vec::new(),
        }
    };
    // SAFETY: CPU_ISSET reads the set filled above, within its size.
    (0..libc::CPU_SETSIZE as usize).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) }).collect()
}

/// The set of `cpus`, for sched_setaffinity.
pub fn set_of(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes within it (parse_list bounds CPUs).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        set
    }
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
mod tests {
    use super::*;

    #[test]
    fn lists_read_and_print_as_taskset_writes_them() {
        assert_eq!(parse_list("0-3,8,10-11"), Ok(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_list("3,1,1"), Ok(vec![1, 3]));
        assert_eq!(format_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_list(&[5]), "5");
        for bad in ["", "a", "3-1", "1-", "0,,1", "99999"] {
            let error = parse_list(bad).unwrap_err();
            assert!(error.contains("taskset -c") && error.contains(bad), "{error}");
        }
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
