//! Each side's clock: the wall time inside its library calls, and the thread's CPU time over the
//! same calls (crate::cpu_time); under callgrind, where it collects. Every driver times its
//! sides' calls with these.

use std::time::Duration;

use crate::cpu_time;
use crate::step::Meter;
use crate::Side;

/// Wall time spent inside one side's library calls; under callgrind, also the only place where
/// callgrind collects, if this is the counted side's measured clock. And the thread's CPU time
/// over the same calls (see [`cpu_time`]).
#[derive(Default)]
pub(crate) struct Clock {
    pub(crate) elapsed: Duration,
    /// Whether to switch callgrind's collection on for each call and off after it. The request
    /// is a toggle, so it must come in pairs and never nest (the drivers never nest calls). Off
    /// valgrind it is a few instructions that do nothing; the time measure's clocks never set it.
    collect: bool,
    cpu: CpuTime,
}

/// The CPU time of the timed calls: their wall time less the time the thread was switched out
/// during them; and how often the thread went to sleep during them (see [`Clock::waits`]).
#[derive(Default)]
pub(crate) struct CpuTime {
    on_cpu_ns: u64,
    waits: u64,
    regions: u64,
    /// Whether some call's CPU time is unknown (the kernel lost switch records).
    unknown: bool,
}

impl Clock {
    /// A clock that has callgrind collect inside its calls when `collect` (the `cold` command's).
    pub(crate) fn counting(collect: bool) -> Clock {
        Clock { collect, ..Clock::default() }
    }

    /// Adds the calls `other` timed.
    pub(crate) fn add(&mut self, other: &Clock) {
        self.elapsed += other.elapsed;
        self.cpu.on_cpu_ns += other.cpu.on_cpu_ns;
        self.cpu.waits += other.cpu.waits;
        self.cpu.regions += other.cpu.regions;
        self.cpu.unknown |= other.cpu.unknown;
    }

    /// The nanoseconds timed since the last call, and the clock back at zero.
    pub(crate) fn take_ns(&mut self) -> u64 {
        std::mem::take(&mut self.elapsed).as_nanos() as u64
    }

    #[inline(always)]
    pub(crate) fn time<T>(&mut self, call: impl FnOnce() -> T) -> T {
        let region = if cpu_time::enabled() { cpu_time::begin() } else { None };
        let start = cpu_time::monotonic_ns();
        if self.collect {
            valgrind_requests::callgrind::toggle_collect();
        }
        let out = call();
        if self.collect {
            valgrind_requests::callgrind::toggle_collect();
        }
        let end = cpu_time::monotonic_ns();
        let wall = end.saturating_sub(start);
        self.elapsed += Duration::from_nanos(wall);
        if let Some(region) = region {
            match cpu_time::switches(region, start, end) {
                Some(switches) => {
                    self.cpu.on_cpu_ns += wall.saturating_sub(switches.off_ns);
                    self.cpu.waits += switches.waits;
                }
                None => self.cpu.unknown = true,
            }
            self.cpu.regions += 1;
        }
        out
    }

    /// The CPU seconds of the timed calls; None when the CPU figure was off, refused or lost.
    pub(crate) fn cpu_seconds(&self) -> Option<f64> {
        self.cpu_known().then(|| (self.cpu.on_cpu_ns as f64 / 1e9).max(f64::MIN_POSITIVE))
    }

    /// Contended waits: how often the thread went to sleep inside the timed calls. In the
    /// in-memory transport a library call never waits for I/O, so each is a wait for another
    /// thread: a lock it held (a futex wait, pthread's or Rust's std locks alike), or a kernel
    /// lock of the process (its memory map's). None when the CPU figure is.
    pub(crate) fn waits(&self) -> Option<u64> {
        self.cpu_known().then_some(self.cpu.waits)
    }

    fn cpu_known(&self) -> bool {
        self.cpu.regions > 0 && !self.cpu.unknown
    }
}

/// One side's clock, in a process that runs only that side (split-process).
impl Meter for Clock {
    #[inline(always)]
    fn call<T>(&mut self, _side: Side, call: impl FnOnce() -> T) -> T {
        self.time(call)
    }
}

#[derive(Default)]
pub(crate) struct Clocks {
    pub(crate) client: Clock,
    pub(crate) server: Clock,
}

impl Meter for Clocks {
    #[inline(always)]
    fn call<T>(&mut self, side: Side, call: impl FnOnce() -> T) -> T {
        match side {
            Side::Client => self.client.time(call),
            Side::Server => self.server.time(call),
        }
    }
}

impl Clocks {
    /// Adds the calls `other` timed.
    pub(crate) fn add(&mut self, other: &Clocks) {
        self.client.add(&other.client);
        self.server.add(&other.server);
    }
}
