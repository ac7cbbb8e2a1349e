//! How fast the CPU runs now, and a measured loop that counts only the stretches it ran at full
//! speed (docs/sampling.md, "Inside the sample: the stretches at full speed").
//!
//! On a shared VM a neighbour on the core's sibling hyperthread slows this one's wide arithmetic
//! (a handshake's bignum multiplies) to about half, for tens of milliseconds at a time, most of
//! the time on some hosts (2026-11-30: each vCPU slowed 82% of the time, in stretches of 30 ms).
//! A fixed workload timed between a sample's iterations followed its rate (correlation 0.86 to
//! 0.96 over 120 samples of four cells) where the same workload timed just before and after the
//! sample did not (0.64 to 0.88): the slowdown comes and goes within the sample.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// A CPU timed at this fraction of full speed or more is at full speed: quiet, the workload's
/// timings agree within a few percent; slowed, it ran at 0.45 to 0.8.
pub const FULL_SPEED: f64 = 0.85;

/// How often the measured loop times its CPU: about every this long, between iterations.
pub const PROBE_EVERY: Duration = Duration::from_micros(250);

/// Rounds of the workload per probe: about 1 µs at full speed, under 1% of [`PROBE_EVERY`].
const ROUNDS: u64 = 256;

/// Rounds of the workload per microsecond on this thread's CPU now: a short stretch first (it
/// brings the loop into the caches after a library's code ran), then the faster of two timed
/// stretches, so that an interrupt in one does not make the CPU look slow. The workload is eight
/// independent 64-by-64-bit multiply chains: the execution units that a neighbour on the sibling
/// hyperthread takes (a dependent chain hardly moved while these ran at half speed).
pub fn probe() -> f64 {
    stretch(ROUNDS / 4);
    let fastest = stretch(ROUNDS).min(stretch(ROUNDS));
    ROUNDS as f64 / (fastest.as_secs_f64() * 1e6).max(1e-9)
}

fn stretch(rounds: u64) -> Duration {
    let mut chains = black_box([1u64, 2, 3, 4, 5, 6, 7, 8]);
    let started = Instant::now();
    for _ in 0..rounds {
        for k in 0..8 {
            let product = chains[k] as u128 * 0x9e37_79b9_7f4a_7c15 + chains[(k + 1) & 7] as u128;
            chains[k] = product as u64 ^ (product >> 64) as u64;
        }
    }
    black_box(chains);
    started.elapsed()
}

/// The measured loop's judge: it times the CPU about every [`PROBE_EVERY`], and a stretch of
/// iterations between two probes counts only where both found the CPU at full speed. A probe
/// that finds it slowed moves the thread to the fastest of the CPUs it may use, where there are
/// others. Outside the sides' clocks: the probes cost the sample wall time, not its figures.
pub struct Gate {
    /// Probe speeds at or above this are full speed: [`FULL_SPEED`] of the reference.
    threshold: f64,
    reference: f64,
    /// The CPUs the thread may move among (its mask when the loop began; restored at the end).
    cpus: Vec<u32>,
    last_probe: Instant,
    last_fast: bool,
    /// The probes at the ends of the stretches that counted, and of every stretch.
    counted: Speeds,
    all: Speeds,
    moves: u32,
}

#[derive(Default, Clone, Copy)]
struct Speeds {
    sum: f64,
    /// The stretches judged, one probe at the end of each.
    probes: u32,
}

impl Speeds {
    fn add(&mut self, speed: f64) {
        self.sum += speed;
        self.probes += 1;
    }

    fn mean(&self) -> f64 {
        self.sum / f64::from(self.probes.max(1))
    }
}

impl Gate {
    /// A gate judging against `reference` (the workload's rounds per microsecond at full speed,
    /// as the orchestrator found it); its first probe (and move) comes before the first iteration.
    pub fn new(reference: f64) -> Gate {
        let cpus = crate::pin::allowed_cpus();
        let mut gate = Gate {
            threshold: FULL_SPEED * reference,
            reference,
            cpus,
            last_probe: Instant::now(),
            last_fast: false,
            counted: Speeds::default(),
            all: Speeds::default(),
            moves: 0,
        };
        let speed = gate.probe_or_move();
        gate.last_fast = speed >= gate.threshold;
        gate
    }

    /// Whether the stretch since the last probe is long enough to be judged.
    #[inline]
    pub fn due(&self) -> bool {
        self.last_probe.elapsed() >= PROBE_EVERY
    }

    /// Ends the stretch since the last probe: whether it counts (the CPU was at full speed at both
    /// of its ends).
    pub fn judge(&mut self) -> bool {
        let speed = self.probe_or_move();
        let fast = self.last_fast && speed >= self.threshold;
        self.last_fast = speed >= self.threshold;
        self.all.add(speed);
        if fast {
            self.counted.add(speed);
        }
        fast
    }

    /// What it did: `gated` when the figures are of the full-speed stretches.
    pub fn finish(self, gated: bool) -> crate::protocol::CpuSpeed {
        let of = if gated { self.counted } else { self.all };
        crate::protocol::CpuSpeed {
            gated,
            speed: of.mean() / self.reference,
            full_speed_share: f64::from(self.counted.probes) / f64::from(self.all.probes.max(1)),
            moves: self.moves,
        }
    }

    /// Times this CPU; where it is slowed and there are others, times each of them and stays on
    /// the fastest. Returns the speed where the thread now is.
    fn probe_or_move(&mut self) -> f64 {
        let mut speed = probe();
        if speed < self.threshold && self.cpus.len() > 1 {
            let here = crate::pin::current_cpu();
            let mut fastest = here;
            for &cpu in self.cpus.iter().filter(|&&cpu| Some(cpu) != here) {
                if crate::pin::pin_this_thread(cpu).is_err() {
                    continue;
                }
                let there = probe();
                if there > speed {
                    (speed, fastest) = (there, Some(cpu));
                }
            }
            self.moves += u32::from(fastest != here);
            if let Some(cpu) = fastest {
                let _ = crate::pin::pin_this_thread(cpu);
            }
        }
        self.last_probe = Instant::now();
        speed
    }
}

impl Drop for Gate {
    /// The thread back on every CPU it had.
    fn drop(&mut self) {
        if self.cpus.len() > 1 {
            let _ = crate::pin::pin_this_thread_to(&self.cpus);
        }
    }
}
