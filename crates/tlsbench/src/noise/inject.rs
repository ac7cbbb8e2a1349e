//! `tlsbench inject-noise`: a noisy host on demand (docs/sampling.md, "A noisy machine"), so that
//! the sampling design is chosen by measuring under noise, not on a quiet machine alone.
//!
//! One thread per CPU, pinned, alternates bursts of work that thrashes caches and memory (random
//! read-modify-writes over a buffer far larger than a core's caches) with pauses, each of a random
//! length in its range: noise that comes and goes within tens of milliseconds, as on a shared cloud
//! VM. A burst takes the CPU from whatever shares it and, on a host whose cores share caches with
//! it, slows the other cores' work while it runs. Bounded by `--duration`; stops by itself.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use tlsbench_harness::pin;

use crate::cli::NoiseArgs;
use crate::output::stderr;

/// A range of milliseconds as `--on-ms` takes it: `MIN-MAX` or one number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MsRange {
    pub min: f64,
    pub max: f64,
}

impl MsRange {
    fn pick(&self, rng: &mut fastrand::Rng) -> Duration {
        Duration::from_secs_f64((self.min + rng.f64() * (self.max - self.min)) / 1e3)
    }
}

/// `2-20` or `5`: milliseconds, finite, at least 0, at most a minute, MIN ≤ MAX.
pub fn parse_ms_range(text: &str) -> Result<MsRange, String> {
    let bad = || format!("bad range `{text}` (valid: MIN-MAX or one number of milliseconds, 0 to 60000)");
    let number = |s: &str| {
        s.trim().parse::<f64>().ok().filter(|x| x.is_finite() && (0.0..=60_000.0).contains(x)).ok_or_else(bad)
    };
    let (min, max) = match text.split_once('-') {
        Some((low, high)) => (number(low)?, number(high)?),
        None => (number(text)?, number(text)?),
    };
    match min <= max {
        true => Ok(MsRange { min, max }),
        false => Err(bad()),
    }
}

/// Runs the injector until `--duration` has passed: prints what it does, then what it did.
pub fn inject(args: NoiseArgs) -> Result<ExitCode> {
    let cpus = match &args.cpus {
        Some(list) => pin::parse_cpus(list).map_err(|e| anyhow::anyhow!("--cpus: {e}"))?,
        None => pin::allowed_cpus(),
    };
    let allowed = pin::allowed_cpus();
    if let Some(cpu) = cpus.iter().find(|cpu| !allowed.contains(cpu)) {
        bail!("--cpus: CPU {cpu} is not one this process may use (valid: {})", pin::list(&allowed));
    }
    if cpus.is_empty() {
        bail!("--cpus: no CPU to inject noise on");
    }
    if args.on_ms.max <= 0.0 {
        bail!("--on-ms: bursts of 0 ms inject nothing (valid: MIN-MAX with MAX above 0)");
    }
    let duration = Duration::from_secs_f64(args.duration);
    stderr::line(format!(
        "injecting noise on CPUs {}: bursts of {}-{} ms thrashing {} MiB each, {}-{} ms apart, for {} s{}",
        pin::list(&cpus),
        args.on_ms.min,
        args.on_ms.max,
        args.mib,
        args.off_ms.min,
        args.off_ms.max,
        args.duration,
        if args.idle { " (SCHED_IDLE: only on idle CPU time)" } else { "" }
    ));
    let busy_ns = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| -> Result<()> {
        let mut threads = Vec::new();
        for (i, &cpu) in cpus.iter().enumerate() {
            let (busy_ns, args) = (&busy_ns, &args);
            threads.push(scope.spawn(move || -> Result<()> {
                pin::pin_this_thread(cpu).map_err(|e| anyhow::anyhow!("{e}"))?;
                if args.idle {
                    idle_policy()?;
                }
                let mut rng = fastrand::Rng::with_seed(args.seed.wrapping_add(i as u64));
                let mut buffer = vec![1u64; args.mib as usize * (1 << 20) / 8];
                let end = started + duration;
                while Instant::now() < end {
                    let burst = args.on_ms.pick(&mut rng).min(end.saturating_duration_since(Instant::now()));
                    let burst_started = Instant::now();
                    thrash(&mut buffer, &mut rng, burst);
                    busy_ns.fetch_add(burst_started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    let pause = args.off_ms.pick(&mut rng).min(end.saturating_duration_since(Instant::now()));
                    std::thread::sleep(pause);
                }
                std::hint::black_box(&buffer);
                Ok(())
            }));
        }
        threads.into_iter().try_for_each(|t| t.join().unwrap_or_else(|_| bail!("an injector thread panicked")))
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let busy = busy_ns.load(Ordering::Relaxed) as f64 / 1e9;
    stderr::line(format!(
        "injected noise for {elapsed:.1} s: bursts ran {:.0}% of the time on each of {} CPUs",
        100.0 * busy / elapsed / cpus.len() as f64,
        cpus.len()
    ));
    Ok(ExitCode::SUCCESS)
}

/// Random read-modify-writes over `buffer` until `burst` has passed: each touches a cache line
/// the last few did not, so the core's caches (and, with a buffer beyond the shared cache, the
/// memory bus) are kept busy.
fn thrash(buffer: &mut [u64], rng: &mut fastrand::Rng, burst: Duration) {
    let started = Instant::now();
    let len = buffer.len();
    while started.elapsed() < burst {
        for _ in 0..4096 {
            let at = rng.usize(..len);
            buffer[at] = buffer[at].wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(at as u64);
        }
    }
}

/// SCHED_IDLE: the thread runs only when nothing else wants its CPU, so it can slow others only
/// through what they share (caches, memory), never by taking the CPU.
fn idle_policy() -> Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; param is a valid sched_param.
    match unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } {
        0 => Ok(()),
        _ => bail!("cannot set SCHED_IDLE: {}", std::io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_min_max_or_one_number() {
        assert_eq!(parse_ms_range("2-20"), Ok(MsRange { min: 2.0, max: 20.0 }));
        assert_eq!(parse_ms_range("5"), Ok(MsRange { min: 5.0, max: 5.0 }));
        assert_eq!(parse_ms_range("0.5-1.5"), Ok(MsRange { min: 0.5, max: 1.5 }));
        for bad in ["20-2", "nan", "-5", "inf", "1-x", "", "70000"] {
            let error = parse_ms_range(bad).unwrap_err();
            assert!(error.contains(&format!("`{bad}`")) && error.contains("MIN-MAX"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_burst_lasts_its_time_and_writes_the_buffer() {
        let mut buffer = vec![1u64; 1 << 16];
        let started = Instant::now();
        thrash(&mut buffer, &mut fastrand::Rng::with_seed(1), Duration::from_millis(5));
        assert!(started.elapsed() >= Duration::from_millis(5));
        assert!(buffer.iter().filter(|&&x| x != 1).count() > 1000, "the burst wrote the buffer");
    }
}
