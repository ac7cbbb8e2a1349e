//! Test support for the stack adapters (built always: docs/tests.md): one set of certificates per test
//! binary, a handshake stepped by hand for configs built from different scenarios, and the
//! every-supported-scenario check that each adapter runs against itself and its peers, and the
//! check of its configs shared by threads; and [`Wrapped`], a stack passed on with hooks around
//! its calls, for the test runners that wrap a real stack.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::driver::{self, SampleSpec};
use crate::protocol::{Metric, MetricValue};
use crate::{Connection, Contexts, Endpoint, KeyType, LibError, Link, Measure, Pki, Scenario, Stack};

/// One measured iteration after the seed handshake: every gate passes at least once.
pub const ONCE: SampleSpec = SampleSpec::timed(Duration::ZERO, Duration::from_micros(1));

/// Every key type's certificates, generated once per test binary; the PEMs are held in memory,
/// so the directory goes as soon as they are loaded.
pub fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| {
        let dir = tempfile::tempdir().expect("creating a temporary directory");
        Pki::load_or_generate(dir.path(), KeyType::ALL).expect("generating the test certificates")
    })
}

pub fn scenario(name: &str) -> Scenario {
    name.parse().expect("the test's scenario name is valid")
}

/// A client built for `client_scenario` against a server built for `server_scenario`, stepped
/// until both complete and every byte was read, or one fails (the error names the side).
pub fn connect<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    client_scenario: &Scenario,
    server_scenario: &Scenario,
) -> Result<(C::Client, S::Server), String> {
    let client_config = client.client_config(client_scenario, pki()).map_err(|e| format!("client config: {e}"))?;
    let server_config = server.server_config(server_scenario, pki()).map_err(|e| format!("server config: {e}"))?;
    connect_configs(client, server, &client_config, &server_config)
}

/// [`connect`] with configs the test built itself (e.g. one verifying another host name).
pub fn connect_configs<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    client_config: &C::ClientConfig,
    server_config: &S::ServerConfig,
) -> Result<(C::Client, S::Server), String> {
    let link = Link::new();
    let mut client = client.new_client(client_config, link.client()).map_err(|e| format!("client: {e}"))?;
    let mut server = server.new_server(server_config, link.server()).map_err(|e| format!("server: {e}"))?;
    crate::step::handshake_pair(&mut client, &mut server, &link, &mut crate::step::Unmetered).map_err(|e| match e {
        // As above: the error names the side first.
        crate::Error::Library { side, error, .. } => format!("{side}: {error}"),
        other => other.to_string(),
    })?;
    Ok((client, server))
}

/// Steps `client` and `server` on `link` through a handshake that the client must refuse (e.g.
/// a certificate for another host name); the client's error. Panics if the handshake completes
/// or the server fails first.
pub fn client_refusal(client: &mut impl Connection, server: &mut impl Connection, link: &Link) -> String {
    match crate::step::handshake_pair(client, server, link, &mut crate::step::Unmetered) {
        Err(crate::Error::Library { side: crate::Side::Client, error, .. }) => error.0,
        other => panic!("the client did not refuse the handshake: {other:?}"),
    }
}

/// Runs every scenario both stacks support once through the real driver, checking that it
/// passes its gates with positive numbers and each side's own library; returns how many ran.
pub fn check_every_supported_scenario<C: Stack, S: Stack>(client: &C, server: &S) -> usize {
    let mut measured = 0;
    // The context kinds build contexts and make no handshake of their own (crate::context).
    let handshakes = |s: &Scenario| Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none();
    for scenario in Scenario::all().into_iter().filter(handshakes) {
        let supported = |id, caps: crate::Capabilities| caps.check(id, &scenario).is_ok();
        if !supported(client.id(), client.capabilities()) || !supported(server.id(), server.capabilities()) {
            continue;
        }
        let report = driver::sample(client, server, &scenario, pki(), &ONCE)
            .unwrap_or_else(|e| panic!("{} -> {} {scenario}: {e}", client.id(), server.id()));
        assert!(report.iterations > 0, "{scenario}: no iterations");
        let metrics = Metric::of(Measure::Time, scenario.kind).iter().filter(|m| !m.is_gc_runtimes_own()).count();
        assert_eq!(report.values.len(), 2 * metrics, "{scenario}");
        assert!(report.values.iter().all(MetricValue::is_plausible), "{scenario}: {report:?}");
        assert_eq!((report.client_library, report.server_library), (client.library(), server.library()));
        measured += 1;
    }
    measured
}

/// The resumption scenarios `client` and `server` both support (session IDs and tickets, TLS 1.2
/// and 1.3), on threads that share one client config and one server config, as a multi-threaded
/// client and server do ([`Contexts::Shared`]). For each: a session that one thread's connection
/// made is resumed by another thread's (both sides say so); a sample of two threads on shared
/// configs builds each config once, and every measured handshake of each thread resumes (the
/// gates check each one); and one on their own configs builds each config per thread. Then 64
/// threads on shared configs, more than any client keeps sessions for by default (rustls's 8
/// TLS 1.3 tickets per server, OpenSSL's adapter's 8) and than the machine has cores: every
/// measured handshake of every thread still resumes. Returns how many scenarios ran.
pub fn check_shared_contexts<C: Stack, S: Stack>(client: &C, server: &S) -> usize {
    const THREADS: usize = 2;
    const MANY_THREADS: usize = 64;
    // Long enough for the two threads' handshakes to overlap many times.
    let spec = SampleSpec::timed(Duration::ZERO, Duration::from_millis(20));
    let mut checked = 0;
    for name in [
        "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm",
        "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
        "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm",
    ] {
        let scenario = scenario(name);
        if client.capabilities().check(client.id(), &scenario).is_err()
            || server.capabilities().check(server.id(), &scenario).is_err()
        {
            continue;
        }
        let pair = format!("{} -> {} {name}", client.id(), server.id());
        let client_config = client.client_config(&scenario, pki()).unwrap_or_else(|e| panic!("{pair}: {e}"));
        let server_config = server.server_config(&scenario, pki()).unwrap_or_else(|e| panic!("{pair}: {e}"));
        let connect = || {
            let (c, s) = connect_configs(client, server, &client_config, &server_config)
                .unwrap_or_else(|e| panic!("{pair}: {e}"));
            let resumed = |side, negotiated: Result<crate::Negotiated, crate::LibError>| {
                negotiated.unwrap_or_else(|e| panic!("{pair}: {side} negotiated: {e}")).resumed
            };
            [resumed("client", c.negotiated()), resumed("server", s.negotiated())]
        };
        std::thread::scope(|threads| {
            let first = threads.spawn(connect).join().expect("the first thread's connection");
            assert_eq!(first, [false, false], "{pair}: the first connection is a full handshake");
            let second = threads.spawn(connect).join().expect("the second thread's connection");
            assert_eq!(second, [true, true], "{pair}: another thread's connection resumes the first one's session");
        });

        for (contexts, built) in [(Contexts::Shared, 1), (Contexts::Own, THREADS)] {
            let (client, server) = (Counted::new(client), Counted::new(server));
            let report = driver::sample_threads(&client, &server, &scenario, pki(), &spec, THREADS, contexts, &[])
                .unwrap_or_else(|e| panic!("{pair}, {contexts} contexts: {e}"));
            assert!(report.threads.iter().all(|t| t.iterations > 0), "{pair}, {contexts}: {report:?}");
            assert_eq!(client.built(), [built, 0], "{pair}, {contexts}: client configs built, server configs");
            assert_eq!(server.built(), [0, built], "{pair}, {contexts}: client configs built, server configs");
        }
        // A few handshakes per thread: the first resumptions already need a session per thread.
        let brief = SampleSpec::timed(Duration::ZERO, Duration::from_millis(1));
        let report =
            driver::sample_threads(client, server, &scenario, pki(), &brief, MANY_THREADS, Contexts::Shared, &[])
                .unwrap_or_else(|e| panic!("{pair}, {MANY_THREADS} threads on shared contexts: {e}"));
        assert_eq!(report.threads.len(), MANY_THREADS, "{pair}");
        assert!(report.threads.iter().all(|t| t.iterations > 0), "{pair}, {MANY_THREADS} threads: {report:?}");
        checked += 1;
    }
    checked
}

/// Counts the configs its stack builds (a [`Wrapped`] stack's hooks).
#[derive(Default)]
struct Counted {
    client_configs: AtomicUsize,
    server_configs: AtomicUsize,
}

impl Counted {
    fn new<T: Stack>(stack: &T) -> Wrapped<'_, T, Counted> {
        Wrapped::new(stack, Counted::default())
    }
}

impl<S: Stack> Hooks<S> for Counted {
    type Client = S::Client;
    type Server = S::Server;

    fn on_client_config(&self) {
        self.client_configs.fetch_add(1, Ordering::Relaxed);
    }
    fn on_server_config(&self) {
        self.server_configs.fetch_add(1, Ordering::Relaxed);
    }
    fn new_client(&self, new: impl FnOnce() -> Result<S::Client, LibError>) -> Result<S::Client, LibError> {
        new()
    }
    fn new_server(&self, new: impl FnOnce() -> Result<S::Server, LibError>) -> Result<S::Server, LibError> {
        new()
    }
}

impl<T: Stack> Wrapped<'_, T, Counted> {
    /// How many client configs and server configs it built.
    fn built(&self) -> [usize; 2] {
        [self.hooks.client_configs.load(Ordering::Relaxed), self.hooks.server_configs.load(Ordering::Relaxed)]
    }
}

/// What a [`Wrapped`] stack does around the calls it passes on to its stack: before each config
/// is built, and around each new connection (which it may wrap in a connection of its own).
pub trait Hooks<S: Stack>: Sync {
    type Client: Connection;
    type Server: Connection;

    /// Before each client config (`client_config` and `client_config_for`).
    fn on_client_config(&self) {}
    /// Before each server config.
    fn on_server_config(&self) {}
    /// A new client: `new` makes the stack's own.
    fn new_client(&self, new: impl FnOnce() -> Result<S::Client, LibError>) -> Result<Self::Client, LibError>;
    /// A new server: `new` makes the stack's own.
    fn new_server(&self, new: impl FnOnce() -> Result<S::Server, LibError>) -> Result<Self::Server, LibError>;
}

/// A test's stack: `stack`, every call passed on, with `hooks` around them. Its id, library,
/// backend and capabilities are the stack's: a test runner's wrapped stack is measured as the
/// stack itself.
pub struct Wrapped<'a, S, H> {
    pub stack: &'a S,
    pub hooks: H,
}

impl<'a, S: Stack, H: Hooks<S>> Wrapped<'a, S, H> {
    pub fn new(stack: &'a S, hooks: H) -> Self {
        Wrapped { stack, hooks }
    }
}

impl<S: Stack, H: Hooks<S>> Stack for Wrapped<'_, S, H> {
    type ClientConfig = S::ClientConfig;
    type ServerConfig = S::ServerConfig;
    type Client = H::Client;
    type Server = H::Server;

    fn id(&self) -> &'static str {
        self.stack.id()
    }
    fn library(&self) -> String {
        self.stack.library()
    }
    fn tls_library(&self) -> String {
        self.stack.tls_library()
    }
    fn backend(&self) -> crate::Backend {
        self.stack.backend()
    }
    fn capabilities(&self) -> crate::Capabilities {
        self.stack.capabilities()
    }
    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<S::ClientConfig, LibError> {
        self.hooks.on_client_config();
        self.stack.client_config(scenario, pki)
    }
    fn client_config_for(&self, scenario: &Scenario, pki: &Pki, in_flight: usize) -> Result<S::ClientConfig, LibError> {
        self.hooks.on_client_config();
        self.stack.client_config_for(scenario, pki, in_flight)
    }
    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<S::ServerConfig, LibError> {
        self.hooks.on_server_config();
        self.stack.server_config(scenario, pki)
    }
    fn new_client(&self, config: &S::ClientConfig, io: Endpoint) -> Result<H::Client, LibError> {
        self.hooks.new_client(|| self.stack.new_client(config, io))
    }
    fn new_server(&self, config: &S::ServerConfig, io: Endpoint) -> Result<H::Server, LibError> {
        self.hooks.new_server(|| self.stack.new_server(config, io))
    }
}

/// On connected `client` and `server`: one byte each way, then close_notify each way; each side
/// sees the peer's close_notify once the peer has sent it, and not before (no library answers
/// one by itself), and closed stays closed. `name` labels the failures.
pub fn check_close_notify(name: &str, client: &mut impl Connection, server: &mut impl Connection) {
    let mut buf = [0u8; 16];
    client.send(&[0x5a]).unwrap_or_else(|e| panic!("{name}: client send: {e}"));
    assert_eq!(server.receive(&mut buf).map_err(|e| e.0), Ok(1), "{name}: server receive");
    assert_eq!(buf[0], 0x5a, "{name}");
    server.send(&[0xa5]).unwrap_or_else(|e| panic!("{name}: server send: {e}"));
    assert_eq!(client.receive(&mut buf).map_err(|e| e.0), Ok(1), "{name}: client receive");
    assert_eq!(buf[0], 0xa5, "{name}");

    assert_eq!(server.peer_closed().map_err(|e| e.0), Ok(false), "{name}: the client has not closed yet");
    assert_eq!(client.peer_closed().map_err(|e| e.0), Ok(false), "{name}: the server has not closed yet");
    client.close().unwrap_or_else(|e| panic!("{name}: client close: {e}"));
    assert_eq!(client.peer_closed().map_err(|e| e.0), Ok(false), "{name}: the server has not closed yet");
    let server_saw = (0..3).any(|_| server.peer_closed().unwrap_or_else(|e| panic!("{name}: server peer_closed: {e}")));
    assert!(server_saw, "{name}: the server did not see the client's close_notify");
    assert_eq!(client.peer_closed().map_err(|e| e.0), Ok(false), "{name}: the server has not closed yet");
    server.close().unwrap_or_else(|e| panic!("{name}: server close: {e}"));
    let client_saw = (0..3).any(|_| client.peer_closed().unwrap_or_else(|e| panic!("{name}: client peer_closed: {e}")));
    assert!(client_saw, "{name}: the client did not see the server's close_notify");
    assert_eq!(server.peer_closed().map_err(|e| e.0), Ok(true), "{name}: server");
    assert_eq!(client.peer_closed().map_err(|e| e.0), Ok(true), "{name}: client");
}

/// On connected `client` and `server`: nothing to receive before anything is sent, then a
/// message each way arrives whole. `name` labels the failures.
pub fn check_data_crosses(name: &str, client: &mut impl Connection, server: &mut impl Connection) {
    let mut buf = [0u8; 64];
    assert_eq!(client.receive(&mut buf).map_err(|e| e.0), Ok(0), "{name}: nothing sent yet");
    server.send(b"from the server").unwrap_or_else(|e| panic!("{name}: server send: {e}"));
    assert_eq!(client.receive(&mut buf).map_err(|e| e.0), Ok(15), "{name}: client receive");
    assert_eq!(&buf[..15], b"from the server", "{name}");
    client.send(b"from the client").unwrap_or_else(|e| panic!("{name}: client send: {e}"));
    assert_eq!(server.receive(&mut buf).map_err(|e| e.0), Ok(15), "{name}: server receive");
    assert_eq!(&buf[..15], b"from the client", "{name}");
}
