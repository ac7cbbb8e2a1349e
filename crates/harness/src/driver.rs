//! The generic drivers: one sample of a scenario for any (client stack, server stack) pair in
//! one process. Each side has its own clock, which runs only inside calls into that side's
//! library; checks, digests and bookkeeping happen outside both clocks.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use xxhash_rust::xxh3::Xxh3;

pub(crate) use crate::clock::{Clock, Clocks};
use crate::error::failed;
use crate::gate::{self, Gates, Tally};
use crate::pin;
use crate::protocol::{sum_threads, CpuSpeed, Metric, MetricValue, SampleReport, ThreadSample};
use crate::speed;
use crate::step;
use crate::{Connection, Contexts, Error, Kind, LibError, Link, Measure, Pki, Scenario, Side, Stack};

/// Application data is written in records of this much plaintext (the TLS maximum).
pub const TRANSFER_WRITE_SIZE: usize = 16 * 1024;
/// A transfer sample moves at least this much plaintext.
pub const TRANSFER_MIN_BYTES: u64 = 64 << 20;

/// How long a sample lasts.
#[derive(Clone, Copy, Debug)]
pub enum SampleSpec {
    /// The time measure: warm up for a while, then measure until each side's clock has run
    /// for a minimum.
    Timed {
        /// Unmeasured work first, so that lazy initialisation and cold caches are not counted.
        warmup: Duration,
        /// Each side's clock must reach this before the sample ends.
        min_time: Duration,
        /// The probe workload's full speed (crate::speed, rounds per microsecond): where given,
        /// the loop of one pair counts only its stretches at full speed (`--full-speed`).
        full_speed: Option<f64>,
    },
    /// The measures counted under callgrind (`measure`: instructions or sync): fixed numbers of
    /// unmeasured and measured iterations (handshakes, or 16 KiB writes in a transfer), so that
    /// every sample does the same work, and callgrind collects only inside the library calls of
    /// the side `collect` (see [`Clock`]).
    Counted { warmup: u64, iterations: u64, collect: Side, measure: Measure },
}

impl SampleSpec {
    pub const fn timed(warmup: Duration, min_time: Duration) -> SampleSpec {
        SampleSpec::Timed { warmup, min_time, full_speed: None }
    }

    /// The gate of a measured loop of one pair: where the spec gives a full speed (see
    /// [`speed::Gate`]).
    fn gate(&self, together: Option<&Together>) -> Option<speed::Gate> {
        match *self {
            SampleSpec::Timed { full_speed: Some(reference), .. } if together.is_none() && reference > 0.0 => {
                Some(speed::Gate::new(reference))
            }
            _ => None,
        }
    }

    /// Whether a gated loop whose stretches all together timed `clocks` has gone on long enough
    /// for stretches at full speed: each side's clock at [`GATE_BOUND`] times its minimum.
    fn gate_bound_reached(&self, clocks: &Clocks) -> bool {
        match *self {
            SampleSpec::Timed { min_time, .. } => {
                clocks.client.elapsed >= GATE_BOUND * min_time && clocks.server.elapsed >= GATE_BOUND * min_time
            }
            SampleSpec::Counted { .. } => true,
        }
    }

    pub fn measure(&self) -> Measure {
        match self {
            SampleSpec::Timed { .. } => Measure::Time,
            SampleSpec::Counted { measure, .. } => *measure,
        }
    }

    /// Whether warm-up goes on after `done` unmeasured iterations begun at `started`.
    pub(crate) fn warming(&self, started: Instant, done: u64) -> bool {
        match *self {
            SampleSpec::Timed { warmup, .. } => started.elapsed() < warmup,
            SampleSpec::Counted { warmup, .. } => done < warmup,
        }
    }

    /// Whether one side's measured clock has done its part.
    pub(crate) fn reached(&self, clock: &Clock) -> bool {
        match *self {
            SampleSpec::Timed { min_time, .. } => clock.elapsed >= min_time,
            SampleSpec::Counted { .. } => true,
        }
    }

    /// Whether the measured part is over after `iterations`, given whether both sides'
    /// clocks have done their part (and, for a transfer, `min_iterations` moved enough bytes).
    pub(crate) fn done(&self, iterations: u64, min_iterations: u64, both_reached: bool) -> bool {
        match *self {
            SampleSpec::Timed { .. } => iterations >= min_iterations && both_reached,
            SampleSpec::Counted { iterations: wanted, .. } => iterations >= wanted,
        }
    }

    /// The measured clock of `side`: it has callgrind collect only if this is the counted side.
    pub(crate) fn clock(&self, side: Side) -> Clock {
        Clock::counting(matches!(*self, SampleSpec::Counted { collect, .. } if collect == side))
    }
}

/// A gated loop (`--full-speed`) goes on for stretches at full speed until each side's clock over
/// every stretch has run this many times its minimum: on a host that slowed each CPU 82% of the
/// time, two CPUs gave one at full speed about a third of the time (crate::speed).
pub const GATE_BOUND: u32 = 6;

/// A transfer moves at least [`TRANSFER_MIN_BYTES`] in a timed sample.
pub(crate) const TRANSFER_MIN_WRITES: u64 = TRANSFER_MIN_BYTES / TRANSFER_WRITE_SIZE as u64;

/// Measures one sample of `scenario` with `client` against `server`.
pub fn sample<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    scenario: &Scenario,
    pki: &Pki,
    spec: &SampleSpec,
) -> Result<SampleReport, Error> {
    check_sample(client, server, scenario, spec.measure(), 1)?;
    let configs = Configs::new(client, server, scenario, pki)?;
    sample_pair(&Pair::new(client, server, &configs, scenario, Link::new()), spec)
}

/// `Unsupported` unless `measure` applies to the scenario, with `threads` pairs side by side,
/// and both stacks can do the scenario: what every sample checks before it builds a [`Pair`].
pub(crate) fn check_sample<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    scenario: &Scenario,
    measure: Measure,
    threads: usize,
) -> Result<(), Error> {
    check_measure(measure, scenario)?;
    check_threads(measure, threads)?;
    client.capabilities().check(client.id(), scenario)?;
    server.capabilities().check(server.id(), scenario)
}

/// `Unsupported` unless `measure` applies to the scenario's kind.
pub fn check_measure(measure: Measure, scenario: &Scenario) -> Result<(), Error> {
    match measure.applies_to(scenario.kind) {
        true => Ok(()),
        false => Err(Error::Unsupported(format!(
            "measure {measure} does not apply to {} scenarios (it applies to: {})",
            scenario.kind,
            measure.kinds().iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// [`sample`] with configs built by the caller: the gates still check against `scenario`, so a
/// test can show that they catch configs that do not match it.
pub fn sample_with_configs<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    client_config: C::ClientConfig,
    server_config: S::ServerConfig,
    scenario: &Scenario,
    spec: &SampleSpec,
) -> Result<SampleReport, Error> {
    let configs = Configs { client: client_config, server: server_config };
    sample_pair(&Pair::new(client, server, &configs, scenario, Link::new()), spec)
}

/// One sample of one pair.
fn sample_pair<C: Stack, S: Stack>(pair: &Pair<'_, C, S>, spec: &SampleSpec) -> Result<SampleReport, Error> {
    let measured = pair.measure(spec, None)?;
    Ok(SampleReport {
        client_library: pair.client.library(),
        server_library: pair.server.library(),
        iterations: measured.iterations,
        values: measured.values(spec, pair.scenario.kind),
        negotiated: pair.gates.negotiated(),
        allocator: None,
        threads: Vec::new(),
        build: None,
        cpu_speed: measured.cpu_speed,
    })
}

/// Measures one sample with `threads` pairs, one per thread, in this process. With
/// [`Contexts::Own`] (the method of rustls-bench's `--threads`) each thread builds its own
/// configs; with [`Contexts::Shared`] every thread's pair borrows one client config and one
/// server config built here, once, and seeded here with a full handshake per thread (see
/// `Pair::seed`), as a server's threads share its context and session cache. Each thread
/// makes its own connections, warms up, then all start their measured loops together; each
/// keeps its own clocks and gates, and goes on until every thread has done its part, so that
/// they run side by side throughout. Thread i runs on `cpus[i % len]` where CPUs are given
/// ([`pin`]). The report carries each thread's rates (and CPU), and their sums as the sample's
/// values. The time measure only: see [`check_threads`].
#[allow(clippy::too_many_arguments)]
pub fn sample_threads<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    scenario: &Scenario,
    pki: &Pki,
    spec: &SampleSpec,
    threads: usize,
    contexts: Contexts,
    cpus: &[u32],
) -> Result<SampleReport, Error> {
    check_sample(client, server, scenario, spec.measure(), threads)?;
    let shared = match contexts {
        Contexts::Shared => {
            let configs = Configs::shared(client, server, scenario, pki, threads)?;
            Pair::new(client, server, &configs, scenario, Link::new()).seed(threads)?;
            Some(configs)
        }
        Contexts::Own => None,
    };
    let together = Together::new(threads);
    let one = || -> Result<(Measured, Gates), Error> {
        let own;
        let pair = match &shared {
            Some(configs) => Pair { seeded: true, ..Pair::new(client, server, configs, scenario, Link::new()) },
            None => {
                own = Configs::new(client, server, scenario, pki)?;
                Pair::new(client, server, &own, scenario, Link::new())
            }
        };
        Ok((pair.measure(spec, Some(&together))?, pair.gates))
    };
    let outcomes: Vec<Result<(Measured, Gates), Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let together = &together;
                scope.spawn(move || {
                    // A thread that fails lets the others stop (or not wait for it to start).
                    let outcome = pin::pin_thread_of(cpus, i).and_then(|()| {
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(one))
                            .unwrap_or_else(|_| Err(Error::Other("a measuring thread panicked".into())))
                    });
                    if outcome.is_err() {
                        together.abandon();
                    }
                    outcome
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a thread's panic is caught")).collect()
    });
    let mut measured = Vec::with_capacity(threads);
    // The first failure is the cause; the others' "another thread failed" follows from it.
    let mut first_error = None;
    for outcome in outcomes {
        match outcome {
            Ok(ok) => measured.push(ok),
            Err(Error::Other(reason)) if reason == ANOTHER_FAILED => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(error) = first_error {
        return Err(error);
    }
    let negotiated = measured.first().map(|(_, gates)| gates.negotiated()).unwrap_or_default();
    let threads: Vec<ThreadSample> = measured
        .iter()
        .enumerate()
        .map(|(i, (m, _))| ThreadSample {
            iterations: m.iterations,
            values: m.values(spec, scenario.kind),
            cpu: pin::cpu_for(cpus, i),
        })
        .collect();
    Ok(SampleReport {
        client_library: client.library(),
        server_library: server.library(),
        iterations: threads.iter().map(|t| t.iterations).sum(),
        values: sum_threads(&threads),
        negotiated,
        allocator: None,
        threads,
        build: None,
        cpu_speed: None,
    })
}

/// `Unsupported` unless `threads` pairs can be measured side by side under `measure`.
pub fn check_threads(measure: Measure, threads: usize) -> Result<(), Error> {
    match (threads, measure) {
        (0, _) => Err(Error::Other("--threads must be at least 1".into())),
        (1, _) | (_, Measure::Time) => Ok(()),
        // Instructions and sync: one callgrind toggle per process, and valgrind runs threads one
        // at a time. Heap and io: per-connection counts, which do not change with threads (and the
        // heap tags and io logs are the process's).
        _ => Err(Error::Unsupported(format!(
            "--threads applies to the time measure (rates that can scale with threads); \
             measure {measure} is taken with one pair"
        ))),
    }
}

const ANOTHER_FAILED: &str = "another thread of the sample failed";

/// The threads of one sample: they start their measured loops together, and end them together.
struct Together {
    threads: usize,
    /// How many threads are ready to measure.
    ready: Mutex<usize>,
    all_ready: Condvar,
    /// Threads whose own clocks have done their part.
    finished: AtomicUsize,
    /// Whether a thread has failed: the measured loops read it without the lock, `start` under it.
    failed: AtomicBool,
}

impl Together {
    fn new(threads: usize) -> Together {
        Together {
            threads,
            ready: Mutex::new(0),
            all_ready: Condvar::new(),
            finished: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
        }
    }

    /// Waits (asleep, not spinning: the others may need this CPU) until every thread is ready.
    fn start(&self) -> Result<(), Error> {
        let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        *ready += 1;
        self.all_ready.notify_all();
        while *ready < self.threads && !self.failed.load(Ordering::Relaxed) {
            ready = self.all_ready.wait(ready).unwrap_or_else(|e| e.into_inner());
        }
        match self.failed.load(Ordering::Relaxed) {
            true => Err(Error::Other(ANOTHER_FAILED.into())),
            false => Ok(()),
        }
    }

    fn abandon(&self) {
        // Under the lock: else a thread in `start` could read the flag, miss the notification
        // and sleep for good.
        let _ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        self.failed.store(true, Ordering::Relaxed);
        self.all_ready.notify_all();
    }

    /// Whether a thread's measured loop ends, given whether its own part is `done` (counted once
    /// in `counted`): when every thread's is, or one thread failed.
    fn over(&self, done: bool, counted: &mut bool) -> Result<bool, Error> {
        if self.failed.load(Ordering::Relaxed) {
            return Err(Error::Other(ANOTHER_FAILED.into()));
        }
        if done && !*counted {
            *counted = true;
            self.finished.fetch_add(1, Ordering::Relaxed);
        }
        Ok(*counted && self.finished.load(Ordering::Relaxed) == self.threads)
    }
}

/// Whether the measured loop ends: alone, when this pair's part is `done`; among threads, see
/// [`Together::over`].
fn over(together: Option<&Together>, done: bool, counted: &mut bool) -> Result<bool, Error> {
    match together {
        None => Ok(done),
        Some(together) => together.over(done, counted),
    }
}

/// One side's rates in a sample, from its own clock: by wall time, and by the thread's CPU time
/// over the same calls (which leaves out the time the thread waited for a CPU). None for the
/// measures counted under callgrind: the count is not known inside the process (callgrind writes
/// it when the process ends, and the orchestrator reads it there), and the clocks ran at
/// valgrind's pace.
pub(crate) fn side_values(
    spec: &SampleSpec,
    side: Side,
    kind: Kind,
    iterations: u64,
    clock: &Clock,
) -> Vec<MetricValue> {
    if let SampleSpec::Counted { .. } = spec {
        return Vec::new();
    }
    let n = iterations as f64;
    let rate = |seconds: f64| match kind {
        Kind::Transfer => n * TRANSFER_WRITE_SIZE as f64 / 1e6 / seconds,
        _ => n / seconds,
    };
    let (wall, cpu) = match kind {
        Kind::Transfer => (Metric::MbPerS, Metric::CpuMbPerS),
        _ => (Metric::HandshakesPerS, Metric::CpuHandshakesPerS),
    };
    let wall_seconds = clock.elapsed.as_secs_f64();
    let mut values = vec![MetricValue { side, metric: wall, value: rate(wall_seconds), seconds: wall_seconds }];
    if let Some(cpu_seconds) = clock.cpu_seconds() {
        values.push(MetricValue { side, metric: cpu, value: rate(cpu_seconds), seconds: cpu_seconds });
    }
    if let Some(waits) = clock.waits().filter(|_| iterations > 0) {
        let (metric, per) = match kind {
            Kind::Transfer => (Metric::ContendedWaitsPerMb, n * TRANSFER_WRITE_SIZE as f64 / 1e6),
            _ => (Metric::ContendedWaitsPerHandshake, n),
        };
        values.push(MetricValue { side, metric, value: waits as f64 / per, seconds: 0.0 });
    }
    values
}

/// What the server sends in a transfer: 1 MiB of random-looking bytes, the same in every run.
pub(crate) fn transfer_payload() -> Vec<u8> {
    let mut payload = vec![0u8; 1 << 20];
    fastrand::Rng::with_seed(0x7152_be4c).fill(&mut payload);
    payload
}

/// Reads what the connection can decrypt now into `inbox`, until it is full or nothing is left.
pub(crate) fn receive_all(conn: &mut impl Connection, inbox: &mut [u8]) -> Result<usize, LibError> {
    let mut filled = 0;
    while filled < inbox.len() {
        match conn.receive(&mut inbox[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// What the measured part of a sample did.
struct Measured {
    iterations: u64,
    clocks: Clocks,
    /// How fast the CPU ran, where the loop was judged at full speed (`--full-speed`).
    cpu_speed: Option<CpuSpeed>,
}

/// A measured loop judged at full speed: `iteration` (a handshake, or a 16 KiB write) again and
/// again, in stretches of about [`speed::PROBE_EVERY`], each counted only where the CPU was at
/// full speed at both of its ends, until the counted ones make a sample (`min_iterations`, and
/// each side's minimum time). Where they have not by [`GATE_BOUND`] times that, every stretch
/// counts, and the reply says so: on a machine slowed throughout, the sample is as it ran.
fn gated(
    spec: &SampleSpec,
    mut judge: speed::Gate,
    min_iterations: u64,
    mut iteration: impl FnMut(&mut Clocks) -> Result<(), Error>,
) -> Result<Measured, Error> {
    let (mut counted, mut all) = (Clocks::measured(spec), Clocks::measured(spec));
    let (mut counted_iterations, mut all_iterations) = (0, 0);
    loop {
        let mut stretch = Clocks::measured(spec);
        let mut n = 0;
        while n == 0 || !judge.due() {
            iteration(&mut stretch)?;
            n += 1;
        }
        if judge.judge() {
            counted.add(&stretch);
            counted_iterations += n;
        }
        all.add(&stretch);
        all_iterations += n;
        if spec.done(counted_iterations, min_iterations, counted.both_reached(spec)) {
            let cpu_speed = judge.finish(true);
            return Ok(Measured { iterations: counted_iterations, clocks: counted, cpu_speed: Some(cpu_speed) });
        }
        if spec.gate_bound_reached(&all) && spec.done(all_iterations, min_iterations, all.both_reached(spec)) {
            let cpu_speed = judge.finish(false);
            return Ok(Measured { iterations: all_iterations, clocks: all, cpu_speed: Some(cpu_speed) });
        }
    }
}

impl Measured {
    /// Both sides' rates.
    fn values(&self, spec: &SampleSpec, kind: Kind) -> Vec<MetricValue> {
        let mut values = side_values(spec, Side::Client, kind, self.iterations, &self.clocks.client);
        values.extend(side_values(spec, Side::Server, kind, self.iterations, &self.clocks.server));
        values
    }
}

impl Clocks {
    /// The measured clocks of both sides.
    fn measured(spec: &SampleSpec) -> Clocks {
        Clocks { client: spec.clock(Side::Client), server: spec.clock(Side::Server) }
    }

    fn both_reached(&self, spec: &SampleSpec) -> bool {
        spec.reached(&self.client) && spec.reached(&self.server)
    }
}

/// A client config and a server config for one scenario: each pair's own, or one of each that
/// the pairs of every thread of a sample borrow ([`Contexts::Shared`]).
pub(crate) struct Configs<C: Stack, S: Stack> {
    pub(crate) client: C::ClientConfig,
    pub(crate) server: S::ServerConfig,
}

impl<C: Stack, S: Stack> Configs<C, S> {
    /// Each stack's config for the scenario.
    pub(crate) fn new(client: &C, server: &S, scenario: &Scenario, pki: &Pki) -> Result<Self, Error> {
        Ok(Configs {
            client: client.client_config(scenario, pki).map_err(failed(Side::Client, "config"))?,
            server: server.server_config(scenario, pki).map_err(failed(Side::Server, "config"))?,
        })
    }

    /// The configs that the pairs of `threads` threads share, their handshakes at once: a client
    /// config with a session to resume for each (see [`Stack::client_config_for`]).
    fn shared(client: &C, server: &S, scenario: &Scenario, pki: &Pki, threads: usize) -> Result<Self, Error> {
        Ok(Configs {
            client: client.client_config_for(scenario, pki, threads).map_err(failed(Side::Client, "config"))?,
            server: server.server_config(scenario, pki).map_err(failed(Side::Server, "config"))?,
        })
    }
}

/// A client stack and a server stack with their configs for one scenario, on one link (the io
/// measure's link logs every call).
pub(crate) struct Pair<'a, C: Stack, S: Stack> {
    pub(crate) client: &'a C,
    pub(crate) server: &'a S,
    pub(crate) configs: &'a Configs<C, S>,
    pub(crate) scenario: &'a Scenario,
    pub(crate) link: Link,
    pub(crate) gates: Gates,
    /// Whether the configs already hold the sessions that the first resumptions resume: shared
    /// configs are seeded once for all their threads, before these start.
    pub(crate) seeded: bool,
}

impl<'a, C: Stack, S: Stack> Pair<'a, C, S> {
    pub(crate) fn new(
        client: &'a C,
        server: &'a S,
        configs: &'a Configs<C, S>,
        scenario: &'a Scenario,
        link: Link,
    ) -> Self {
        Pair { client, server, configs, scenario, link, gates: Gates::default(), seeded: false }
    }

    /// The measured part of a sample of the scenario's kind; `together` with the other threads
    /// of a sample of several.
    fn measure(&self, spec: &SampleSpec, together: Option<&Together>) -> Result<Measured, Error> {
        match self.scenario.kind {
            Kind::Transfer => self.transfer(spec, together),
            _ => self.handshakes(spec, together),
        }
    }

    /// Handshakes, each on new connections, until both clocks reach the minimum. Creating and
    /// dropping the connections is part of each side's cost. A first, unmeasured handshake is
    /// full and leaves the session that the first resumption resumes (unless the configs were
    /// seeded for all their threads); each resumed handshake then leaves the next one (a new
    /// TLS 1.3 ticket, or the same TLS 1.2 session).
    fn handshakes(&self, spec: &SampleSpec, together: Option<&Together>) -> Result<Measured, Error> {
        if !self.seeded {
            self.seed(1)?;
        }
        let resumed = self.scenario.kind.is_resumption();
        let (started, mut warmed) = (Instant::now(), 0);
        while spec.warming(started, warmed) {
            self.checked_handshake(&mut Clocks::default(), resumed)?;
            warmed += 1;
        }
        together.map(Together::start).transpose()?;
        if let Some(judge) = spec.gate(together) {
            return gated(spec, judge, 0, |clocks| self.checked_handshake(clocks, resumed));
        }
        let mut clocks = Clocks::measured(spec);
        let (mut iterations, mut counted) = (0, false);
        while !over(together, spec.done(iterations, 0, clocks.both_reached(spec)), &mut counted)? {
            self.checked_handshake(&mut clocks, resumed)?;
            iterations += 1;
        }
        Ok(Measured { iterations, clocks, cpu_speed: None })
    }

    /// The first, unmeasured handshakes on the pair's configs: `n` full ones, one per thread
    /// that shares the configs, stepped in lockstep so that all begin before any ends. A client
    /// that uses each TLS 1.3 ticket once (rustls's, whose server sends one per handshake) then
    /// holds one for each thread's first resumption, and each resumption leaves the next.
    fn seed(&self, n: usize) -> Result<(), Error> {
        let links: Vec<Link> = (0..n).map(|_| Link::new()).collect();
        let (mut clients, mut servers) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for link in &links {
            let client = self.client.new_client(&self.configs.client, link.client());
            clients.push(client.map_err(failed(Side::Client, "setup"))?);
            let server = self.server.new_server(&self.configs.server, link.server());
            servers.push(server.map_err(failed(Side::Server, "setup"))?);
        }
        step::complete_handshakes(&mut step::InProcess {
            clients: &mut clients,
            servers: &mut servers,
            links: &links,
            progress: &mut vec![step::Progress::default(); n],
            meter: &mut step::Unmetered,
        })?;
        clients.iter().zip(&servers).try_for_each(|(client, server)| self.check(client, server, false))
    }

    fn checked_handshake(&self, clocks: &mut Clocks, resumed: bool) -> Result<(), Error> {
        let (client, server) = self.handshake(clocks)?;
        self.check(&client, &server, resumed)?;
        clocks.client.time(|| drop(client));
        clocks.server.time(|| drop(server));
        Ok(())
    }

    /// New connections on an empty link, through their handshakes (see [`crate::step`]).
    pub(crate) fn handshake(&self, clocks: &mut Clocks) -> Result<(C::Client, S::Server), Error> {
        self.link.clear();
        let mut client = clocks
            .client
            .time(|| self.client.new_client(&self.configs.client, self.link.client()))
            .map_err(failed(Side::Client, "setup"))?;
        let mut server = clocks
            .server
            .time(|| self.server.new_server(&self.configs.server, self.link.server()))
            .map_err(failed(Side::Server, "setup"))?;
        step::handshake_pair(&mut client, &mut server, &self.link, clocks)?;
        Ok((client, server))
    }

    pub(crate) fn check(&self, client: &C::Client, server: &S::Server, resumed: bool) -> Result<(), Error> {
        let negotiated = client.negotiated().map_err(failed(Side::Client, "negotiated parameters"))?;
        self.gates.check(Side::Client, self.scenario, &negotiated, resumed)?;
        let negotiated = server.negotiated().map_err(failed(Side::Server, "negotiated parameters"))?;
        self.gates.check(Side::Server, self.scenario, &negotiated, resumed)
    }

    /// After an unmeasured handshake, the server sends 16 KiB writes and the client receives
    /// each; every byte is checked by length and digest at the end.
    fn transfer(&self, spec: &SampleSpec, together: Option<&Together>) -> Result<Measured, Error> {
        let (mut client, mut server) = self.handshake(&mut Clocks::default())?;
        self.check(&client, &server, false)?;

        let mut stream = Stream {
            payload: transfer_payload(),
            offset: 0,
            inbox: vec![0u8; TRANSFER_WRITE_SIZE],
            sent: Xxh3::new(),
            received: Xxh3::new(),
            sent_bytes: 0,
            received_bytes: 0,
        };

        let (started, mut warmed) = (Instant::now(), 0);
        while spec.warming(started, warmed) {
            stream.send_one(&mut client, &mut server, &mut Clocks::default())?;
            warmed += 1;
        }
        together.map(Together::start).transpose()?;
        let measured = match spec.gate(together) {
            Some(judge) => {
                gated(spec, judge, TRANSFER_MIN_WRITES, |clocks| stream.send_one(&mut client, &mut server, clocks))?
            }
            None => {
                let mut clocks = Clocks::measured(spec);
                let (mut writes, mut counted) = (0u64, false);
                while !over(together, spec.done(writes, TRANSFER_MIN_WRITES, clocks.both_reached(spec)), &mut counted)?
                {
                    stream.send_one(&mut client, &mut server, &mut clocks)?;
                    writes += 1;
                }
                Measured { iterations: writes, clocks, cpu_speed: None }
            }
        };
        // Whatever a library still holds must come out now, outside the clocks.
        while stream.receive(&mut client, &mut Clock::default())? > 0 {}
        gate::check_transfer(
            Tally { bytes: stream.sent_bytes, digest: stream.sent.digest128() },
            Tally { bytes: stream.received_bytes, digest: stream.received.digest128() },
        )?;
        Ok(measured)
    }
}

/// The application data of a transfer and what each side has seen of it.
struct Stream {
    payload: Vec<u8>,
    offset: usize,
    inbox: Vec<u8>,
    sent: Xxh3,
    received: Xxh3,
    sent_bytes: u64,
    received_bytes: u64,
}

impl Stream {
    fn send_one(
        &mut self,
        client: &mut impl Connection,
        server: &mut impl Connection,
        clocks: &mut Clocks,
    ) -> Result<(), Error> {
        let data = &self.payload[self.offset..self.offset + TRANSFER_WRITE_SIZE];
        self.offset = (self.offset + TRANSFER_WRITE_SIZE) % self.payload.len();
        // Digest before sending: between the server's write and the client's read, the records
        // should stay in cache as they would on a real connection's hot path.
        self.sent.update(data);
        self.sent_bytes += data.len() as u64;
        clocks.server.time(|| server.send(data)).map_err(failed(Side::Server, "write"))?;
        self.receive(client, &mut clocks.client)?;
        Ok(())
    }

    /// Drains what the client can decrypt now into the inbox (one timed region), then digests it.
    fn receive(&mut self, client: &mut impl Connection, clock: &mut Clock) -> Result<usize, Error> {
        let filled = clock.time(|| receive_all(client, &mut self.inbox));
        let filled = filled.map_err(failed(Side::Client, "read"))?;
        self.received.update(&self.inbox[..filled]);
        self.received_bytes += filled as u64;
        Ok(filled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_time;
    use crate::step::Meter;

    #[test]
    fn together_starts_when_all_are_ready_and_wakes_the_waiting_when_one_fails() {
        let together = Together::new(3);
        std::thread::scope(|scope| {
            let started: Vec<_> = (0..3).map(|_| scope.spawn(|| together.start().is_ok())).collect();
            assert!(started.into_iter().all(|h| h.join().unwrap()));
        });
        let together = Together::new(3);
        std::thread::scope(|scope| {
            let waiting: Vec<_> = (0..2).map(|_| scope.spawn(|| together.start())).collect();
            together.abandon();
            for h in waiting {
                assert!(matches!(h.join().unwrap(), Err(Error::Other(reason)) if reason == ANOTHER_FAILED));
            }
        });
        assert!(together.over(true, &mut false).is_err(), "the measured loops see it too");
    }

    /// A pthread mutex as the C libraries use one, shared between threads.
    struct PthreadMutex(std::cell::UnsafeCell<libc::pthread_mutex_t>);
    // SAFETY: pthread mutexes are made to be locked from any thread.
    unsafe impl Sync for PthreadMutex {}

    impl PthreadMutex {
        fn new() -> PthreadMutex {
            PthreadMutex(std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER))
        }
        fn lock(&self) {
            // SAFETY: an initialised mutex that outlives its users; each lock is unlocked.
            assert_eq!(unsafe { libc::pthread_mutex_lock(self.0.get()) }, 0);
        }
        fn unlock(&self) {
            // SAFETY: as in lock, by the thread that locked it.
            assert_eq!(unsafe { libc::pthread_mutex_unlock(self.0.get()) }, 0);
        }
    }

    /// Each side's contended waits after `run` made its calls; the CPU ring must be there.
    fn waits(run: impl FnOnce(&mut Clocks)) -> [u64; 2] {
        let mut clocks = Clocks::default();
        run(&mut clocks);
        [&clocks.client, &clocks.server]
            .map(|c| c.waits().unwrap_or_else(|| panic!("no switch records: {:?}", cpu_time::unavailable())))
    }

    /// Runs `contend` on a second thread while this one holds a lock for 50 ms: `hold` takes it
    /// and returns what lets it go, both outside any clock.
    fn while_held<'a, T: Send>(hold: impl FnOnce() -> Box<dyn FnOnce() + 'a>, contend: impl FnOnce() -> T + Send) -> T {
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|scope| {
            let contender = scope.spawn(|| {
                barrier.wait();
                contend()
            });
            let release = hold();
            barrier.wait();
            std::thread::sleep(Duration::from_millis(50));
            release();
            contender.join().unwrap()
        })
    }

    #[test]
    fn a_wait_for_a_pthread_mutex_another_thread_holds_is_counted_on_the_side_whose_call_waited() {
        let (mutex, other) = (PthreadMutex::new(), PthreadMutex::new());
        let [client, server] = while_held(
            || {
                mutex.lock();
                Box::new(|| mutex.unlock())
            },
            || {
                waits(|clocks| {
                    clocks.call(Side::Client, || {
                        mutex.lock();
                        mutex.unlock();
                    });
                    clocks.call(Side::Server, || {
                        other.lock();
                        other.unlock();
                    });
                })
            },
        );
        assert!(client >= 1, "the client's call waited for the held mutex: {client} waits");
        assert_eq!(server, 0, "the server's call took a free mutex");
    }

    #[test]
    fn a_wait_for_a_rust_mutex_another_thread_holds_is_counted() {
        let mutex = std::sync::Mutex::new(());
        let [client, server] = while_held(
            || {
                let guard = mutex.lock().unwrap();
                Box::new(move || drop(guard))
            },
            || {
                waits(|clocks| {
                    clocks.call(Side::Server, || drop(mutex.lock().unwrap()));
                    clocks.call(Side::Client, || ());
                })
            },
        );
        assert!(server >= 1, "std's futex wait is a wait too: {server} waits");
        assert_eq!(client, 0, "the client's call took no lock");
    }

    #[test]
    fn one_thread_alone_never_waits_for_its_locks() {
        let (mutex, rust) = (PthreadMutex::new(), std::sync::Mutex::new(0u64));
        let [client, server] = waits(|clocks| {
            for _ in 0..10_000 {
                clocks.call(Side::Client, || {
                    mutex.lock();
                    mutex.unlock();
                });
                clocks.call(Side::Server, || *rust.lock().unwrap() += 1);
            }
        });
        assert_eq!([client, server], [0, 0]);
    }

    #[test]
    fn a_sleep_outside_the_calls_is_no_wait_of_either_side() {
        let [client, server] = waits(|clocks| {
            clocks.call(Side::Client, || ());
            std::thread::sleep(Duration::from_millis(5));
            clocks.call(Side::Server, || ());
        });
        assert_eq!([client, server], [0, 0]);
    }

    #[test]
    fn contended_waits_are_per_handshake_and_threads_average_them_over_their_iterations() {
        let mut clock = Clock::default();
        clock.time(|| std::thread::sleep(Duration::from_millis(1)));
        clock.time(|| std::thread::sleep(Duration::from_millis(1)));
        let waits = clock.waits().expect("switch records");
        assert!(waits >= 2, "each sleep is a wait: {waits}");
        let spec = SampleSpec::timed(Duration::ZERO, Duration::ZERO);
        let values = side_values(&spec, Side::Client, Kind::HandshakeFull, 4, &clock);
        let per = values.iter().find(|v| v.metric == Metric::ContendedWaitsPerHandshake).expect("reported");
        assert_eq!(per.value, waits as f64 / 4.0);
        let of = |iterations, value| ThreadSample {
            iterations,
            cpu: None,
            values: vec![MetricValue {
                side: Side::Client,
                metric: Metric::ContendedWaitsPerHandshake,
                value,
                seconds: 0.0,
            }],
        };
        // 30 waits over 10 handshakes and 0 over 290: 0.1 per handshake, not 3 + 0.
        assert_eq!(sum_threads(&[of(10, 3.0), of(290, 0.0)])[0].value, 0.1);
    }
}
