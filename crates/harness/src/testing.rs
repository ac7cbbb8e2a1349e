//! Test support for the stack adapters (feature `testing`): one set of certificates per test
//! binary, a handshake stepped by hand for configs built from different scenarios, and the
//! every-supported-scenario check that each adapter runs against itself and its peers.

use std::sync::OnceLock;
use std::time::Duration;

use crate::driver::{self, SampleSpec};
use crate::protocol::Metric;
use crate::{Connection, KeyType, Link, Measure, Pki, Scenario, Stack};

/// One measured iteration after the seed handshake: every gate passes at least once.
pub const ONCE: SampleSpec = SampleSpec { warmup: Duration::ZERO, min_time: Duration::from_micros(1) };

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
    let link = Link::new();
    let client_config = client.client_config(client_scenario, pki()).map_err(|e| format!("client config: {e}"))?;
    let server_config = server.server_config(server_scenario, pki()).map_err(|e| format!("server config: {e}"))?;
    let mut client = client.new_client(&client_config, link.client()).map_err(|e| format!("client: {e}"))?;
    let mut server = server.new_server(&server_config, link.server()).map_err(|e| format!("server: {e}"))?;
    for _ in 0..16 {
        let client_done = client.handshake().map_err(|e| format!("client: {e}"))?;
        let server_done = server.handshake().map_err(|e| format!("server: {e}"))?;
        // Bytes left over would be post-handshake messages, such as a session ticket.
        if client_done && server_done && link.in_flight() == 0 {
            return Ok((client, server));
        }
    }
    Err(format!("the handshake did not complete in 16 steps ({} bytes in flight)", link.in_flight()))
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
        assert_eq!(report.values.len(), 2 * Metric::of(Measure::Time, scenario.kind).len(), "{scenario}");
        assert!(report.values.iter().all(|v| v.value > 0.0 && v.value.is_finite()), "{scenario}: {report:?}");
        assert_eq!((report.client_library, report.server_library), (client.library(), server.library()));
        measured += 1;
    }
    measured
}
