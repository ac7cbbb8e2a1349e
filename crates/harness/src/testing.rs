//! Test support for the stack adapters (feature `testing`): one set of certificates per test
//! binary, a handshake stepped by hand for configs built from different scenarios, and the
//! every-supported-scenario check that each adapter runs against itself and its peers.

use std::sync::OnceLock;
use std::time::Duration;

use crate::driver::{self, SampleSpec};
use crate::protocol::Metric;
use crate::{Connection, KeyType, Link, Measure, Pki, Scenario, Stack};

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

/// Runs every scenario both stacks support once through the real driver, checking that it
/// passes its gates with positive numbers and each side's own library; returns how many ran.
pub fn check_every_supported_scenario<C: Stack, S: Stack>(client: &C, server: &S) -> usize {
    let mut measured = 0;
    for scenario in Scenario::all().into_iter().filter(|s| Measure::Time.applies_to(s.kind)) {
        let supported = |id, caps: crate::Capabilities| caps.check(id, &scenario).is_ok();
        if !supported(client.id(), client.capabilities()) || !supported(server.id(), server.capabilities()) {
            continue;
        }
        let report = driver::sample(client, server, &scenario, pki(), &ONCE)
            .unwrap_or_else(|e| panic!("{} -> {} {scenario}: {e}", client.id(), server.id()));
        assert!(report.iterations > 0, "{scenario}: no iterations");
        let metrics = Metric::of(Measure::Time, scenario.kind).iter().filter(|m| !m.is_gc_runtimes_own()).count();
        assert_eq!(report.values.len(), 2 * metrics, "{scenario}");
        assert!(report.values.iter().all(|v| v.value > 0.0 && v.value.is_finite()), "{scenario}: {report:?}");
        assert_eq!((report.client_library, report.server_library), (client.library(), server.library()));
        measured += 1;
    }
    measured
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
