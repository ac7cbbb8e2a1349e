//! The context kinds (docs/scenarios.md#contexts): one operation builds one side's context as
//! the drivers build the contexts of their handshakes, the key type's certificate files read
//! and parsed each time, and drops it. Measured under time, instructions (callgrind collects
//! inside the operations), heap (what one live context holds) and rss (what a process's resident
//! memory grows by per context held, over [`RSS_CONTEXTS`] of them). After the measured part, one
//! full handshake from the last context built against a fresh context of the pair's other stack,
//! with the gates of handshake-full, shows that what was measured works: for the system's trust
//! store, that the store loaded holds the test CA and verified the server's chain.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::driver::{check_sample, Clock, Clocks, Configs, Pair, SampleSpec};
use crate::error::failed;
use crate::heap;
use crate::protocol::{Metric, MetricValue, SampleReport, MIN_TRUST_ROOTS};
use crate::{Error, Kind, Link, Measure, Pki, Scenario, Side, Stack};

/// Where the orchestrator points the runner at the system's bundle with the test CA appended.
pub const CERT_FILE_VAR: &str = "SSL_CERT_FILE";

/// How many contexts the rss measure builds and holds: enough that pages half filled at either end
/// are a small share of the growth, few enough for the heaviest (OpenSSL 3.0 holds about 700 KB
/// for the system's store).
pub const RSS_CONTEXTS: usize = 100;

/// The handshake whose contexts a scenario builds: a context kind's is a full one, with its
/// name's parts; a handshake scenario's is its own.
pub fn handshake_of(scenario: &Scenario) -> Scenario {
    match scenario.kind.context_side() {
        Some(_) => Scenario { kind: Kind::HandshakeFull, ..*scenario },
        None => *scenario,
    }
}

/// Builds the server's context of `scenario` inside `clock`, reading the certificates from
/// `data_dir` inside it too.
pub(crate) fn server_context<S: Stack>(
    server: &S,
    scenario: &Scenario,
    data_dir: &Path,
    clock: &mut Clock,
) -> Result<S::ServerConfig, Error> {
    let handshake = handshake_of(scenario);
    clock.time(|| {
        let pki = Pki::load_or_generate(data_dir, &[scenario.key]).map_err(Error::Other)?;
        server.server_config(&handshake, &pki).map_err(failed(Side::Server, "config"))
    })
}

/// Builds the client's context of `scenario` inside `clock`: with the one test CA, or with the
/// system's trust store for context-client-system.
pub(crate) fn client_context<C: Stack>(
    client: &C,
    scenario: &Scenario,
    data_dir: &Path,
    clock: &mut Clock,
) -> Result<C::ClientConfig, Error> {
    let handshake = handshake_of(scenario);
    let system = scenario.kind == Kind::ContextClientSystem;
    clock.time(|| {
        let pki = Pki::load_or_generate(data_dir, &[scenario.key]).map_err(Error::Other)?;
        match system {
            false => client.client_config(&handshake, &pki).map_err(failed(Side::Client, "config")),
            true => match client.client_config_system(&handshake, &pki) {
                Some(config) => config.map_err(failed(Side::Client, "config with the system's trust store")),
                None => Err(Error::Unsupported(format!("{}: no system trust store to load", client.id()))),
            },
        }
    })
}

/// One sample of a context scenario with `client` and `server` in this process.
pub fn sample<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    scenario: &Scenario,
    data_dir: &Path,
    spec: &SampleSpec,
    measure: Measure,
) -> Result<SampleReport, Error> {
    let side = scenario.kind.context_side().expect("a context kind");
    check_sample(client, server, scenario, measure, 1)?;
    if let SampleSpec::Counted { collect, .. } = spec {
        if *collect != side {
            return Err(Error::Unsupported(format!("{} builds the {side}'s context: count the {side}", scenario.kind)));
        }
    }
    if scenario.kind == Kind::ContextClientSystem {
        match std::env::var_os(CERT_FILE_VAR) {
            Some(path) if Path::new(&path).is_file() => {}
            _ => {
                return Err(Error::Other(format!(
                    "context-client-system needs {CERT_FILE_VAR}: the system's bundle with the test CA appended \
                     (tlsbench writes it as DATA_DIR/pki-v2/system-bundle.pem and sets the variable)"
                )))
            }
        }
    }
    let mut contexts = Contexts { client, server, scenario, data_dir: data_dir.to_path_buf(), client_cfg: None };
    let mut server_cfg = None;
    let (iterations, mut values) = match measure {
        Measure::Heap => (1, contexts.heap(side, &mut server_cfg)?),
        Measure::Rss => (RSS_CONTEXTS as u64, contexts.rss(side, &mut server_cfg)?),
        _ => contexts.operations(side, spec, &mut server_cfg)?,
    };
    let roots = contexts.client_cfg.as_ref().and_then(|config| client.trust_roots(config));
    let gates = contexts.gate(server_cfg)?;
    if let Some(roots) = roots {
        if scenario.kind == Kind::ContextClientSystem && (roots as f64) < MIN_TRUST_ROOTS {
            return Err(Error::Gate(format!(
                "the system's trust store held {roots} roots (fewer than {MIN_TRUST_ROOTS}): is {CERT_FILE_VAR} read?"
            )));
        }
        if scenario.kind == Kind::ContextClientSystem {
            values.push(MetricValue { side, metric: Metric::TrustRoots, value: roots as f64, seconds: 0.0 });
        }
    }
    Ok(SampleReport {
        client_library: client.library(),
        server_library: server.library(),
        iterations,
        values,
        negotiated: gates,
        allocator: None,
        threads: Vec::new(),
        build: None,
        cpu_speed: None,
    })
}

struct Contexts<'a, C: Stack, S: Stack> {
    client: &'a C,
    server: &'a S,
    scenario: &'a Scenario,
    data_dir: PathBuf,
    /// The last client context built, kept for the gate's handshake.
    client_cfg: Option<C::ClientConfig>,
}

impl<C: Stack, S: Stack> Contexts<'_, C, S> {
    /// One operation on `side` inside `clock`: the previous context dropped, a new one built.
    fn operation(
        &mut self,
        side: Side,
        clock: &mut Clock,
        server_cfg: &mut Option<S::ServerConfig>,
    ) -> Result<(), Error> {
        match side {
            Side::Server => {
                clock.time(|| drop(server_cfg.take()));
                *server_cfg = Some(server_context(self.server, self.scenario, &self.data_dir, clock)?);
            }
            Side::Client => {
                clock.time(|| drop(self.client_cfg.take()));
                self.client_cfg = Some(client_context(self.client, self.scenario, &self.data_dir, clock)?);
            }
        }
        Ok(())
    }

    /// Time and instructions: warm-up operations, then measured ones until the side's clock has
    /// done its part.
    fn operations(
        &mut self,
        side: Side,
        spec: &SampleSpec,
        server_cfg: &mut Option<S::ServerConfig>,
    ) -> Result<(u64, Vec<MetricValue>), Error> {
        let (started, mut warmed) = (Instant::now(), 0);
        let mut unmeasured = Clock::default();
        // At least one: the first context of a process pays for the library's initialisation.
        while warmed == 0 || spec.warming(started, warmed) {
            self.operation(side, &mut unmeasured, server_cfg)?;
            warmed += 1;
        }
        let mut clock = spec.clock(side);
        let mut iterations = 0;
        while !spec.done(iterations, 1, spec.reached(&clock)) {
            self.operation(side, &mut clock, server_cfg)?;
            iterations += 1;
        }
        let mut values = Vec::new();
        if let SampleSpec::Timed { .. } = spec {
            let n = iterations as f64;
            let wall = clock.elapsed.as_secs_f64();
            values.push(MetricValue { side, metric: Metric::ContextsPerS, value: n / wall, seconds: wall });
            if let Some(cpu) = clock.cpu_seconds() {
                values.push(MetricValue { side, metric: Metric::CpuContextsPerS, value: n / cpu, seconds: cpu });
            }
        }
        Ok((iterations, values))
    }

    /// Heap: one unmeasured operation (the library's lazy initialisation), then one context
    /// built under the side's tag and held: what it holds, its peak, its allocations.
    fn heap(&mut self, side: Side, server_cfg: &mut Option<S::ServerConfig>) -> Result<Vec<MetricValue>, Error> {
        self.operation(side, &mut Clock::default(), server_cfg)?;
        drop(server_cfg.take());
        drop(self.client_cfg.take());
        heap::enable().map_err(Error::Other)?;
        let base = heap::usage(side);
        heap::reset_peak(side);
        heap::tagged(side, || self.operation(side, &mut Clock::default(), server_cfg))?;
        let built = heap::usage(side);
        if heap::lost() > 0 {
            return Err(Error::Other(format!("the heap table overflowed: {} blocks were not counted", heap::lost())));
        }
        let value = |metric, value| MetricValue { side, metric, value, seconds: 0.0 };
        Ok(vec![
            value(Metric::HeapContextBytes, built.held as f64 - base.held as f64),
            value(Metric::HeapContextPeakBytes, built.peak as f64 - base.held as f64),
            value(Metric::AllocationsPerContext, (built.allocations - base.allocations) as f64),
        ])
    }

    /// Rss: one unmeasured operation (the library's lazy initialisation, its tables), then the
    /// peak resident size reset and [`RSS_CONTEXTS`] contexts built and held: the peak's growth
    /// per context. The runner is a process of its own for each sample (the orchestrator's
    /// one-shot), so pages freed by earlier cells do not hide the growth.
    fn rss(&mut self, side: Side, server_cfg: &mut Option<S::ServerConfig>) -> Result<Vec<MetricValue>, Error> {
        use crate::rss;
        if heap::enabled() {
            return Err(Error::Other(
                "rss is measured in a process that has not recorded its heap (heap::enable)".into(),
            ));
        }
        self.operation(side, &mut Clock::default(), server_cfg)?;
        drop(server_cfg.take());
        drop(self.client_cfg.take());
        let (mut servers, mut clients) = (Vec::with_capacity(RSS_CONTEXTS), Vec::with_capacity(RSS_CONTEXTS));
        let before = rss::reset_peak().map_err(Error::Other)?;
        for _ in 0..RSS_CONTEXTS {
            self.operation(side, &mut Clock::default(), server_cfg)?;
            servers.extend(server_cfg.take());
            clients.extend(self.client_cfg.take());
        }
        let peak = rss::peak().map_err(Error::Other)?;
        // The last one built is the gate's.
        (*server_cfg, self.client_cfg) = (servers.pop(), clients.pop());
        let per_context = (peak as f64 - before as f64) / RSS_CONTEXTS as f64;
        Ok(vec![MetricValue { side, metric: Metric::RssContextBytes, value: per_context, seconds: 0.0 }])
    }

    /// One full handshake from the last context built, against a fresh context of the other
    /// side (built outside every clock), with the gates of handshake-full: what each side
    /// negotiated.
    fn gate(&mut self, server_cfg: Option<S::ServerConfig>) -> Result<Vec<crate::protocol::SideNegotiated>, Error> {
        let handshake = handshake_of(self.scenario);
        let mut unmeasured = Clock::default();
        let server = match server_cfg {
            Some(config) => config,
            None => server_context(self.server, self.scenario, &self.data_dir, &mut unmeasured)?,
        };
        let client = match self.client_cfg.take() {
            Some(config) => config,
            None => client_context(self.client, &handshake, &self.data_dir, &mut unmeasured)?,
        };
        let configs = Configs::<C, S> { client, server };
        let pair = Pair::new(self.client, self.server, &configs, &handshake, Link::new());
        let (c, s) = pair.handshake(&mut Clocks::default()).map_err(|e| gate_failed(&handshake, e))?;
        pair.check(&c, &s, false).map_err(|e| gate_failed(&handshake, e))?;
        Ok(pair.gates.negotiated())
    }
}

fn gate_failed(handshake: &Scenario, error: Error) -> Error {
    Error::Gate(format!("the handshake ({handshake}) from the last context built did not complete: {error}"))
}
