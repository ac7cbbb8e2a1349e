//! rustls 0.23 with the aws-lc-rs or the ring crypto provider. The configs offer exactly the
//! scenario's version, suite and group, and verify the server for real with webpki.

use std::io::{ErrorKind, Read, Write};
use std::ops::DerefMut;
use std::sync::Arc;

use rustls::client::Resumption;
use rustls::crypto::CryptoProvider;
use rustls::server::NoServerSessionStorage;
use rustls::{CipherSuite, ClientConfig, ClientConnection, ConnectionCommon, HandshakeKind, NamedGroup, ProtocolVersion, RootCertStore, ServerConfig, ServerConnection, SideData};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tlsbench_harness::pki::SERVER_NAME;
use tlsbench_harness::{Capabilities, Connection, Endpoint, Group, KeyType, LibError, Negotiated, Pki, Scenario, Stack, Suite, Version};

/// rustls with one crypto provider.
pub struct Rustls {
    id: &'static str,
    provider_name: &'static str,
    provider_version: &'static str,
    provider: fn() -> CryptoProvider,
}

impl Rustls {
    pub fn aws_lc_rs() -> Self {
        let provider = rustls::crypto::aws_lc_rs::default_provider;
        Self { id: "rustls-aws-lc-rs", provider_name: "aws-lc-rs", provider_version: env!("AWS_LC_RS_VERSION"), provider }
    }

    pub fn ring() -> Self {
        let provider = rustls::crypto::ring::default_provider;
        Self { id: "rustls-ring", provider_name: "ring", provider_version: env!("RING_VERSION"), provider }
    }

    /// The provider cut down to the scenario's one suite and the side's groups, in order.
    fn provider_for(&self, scenario: &Scenario, groups: &[Group]) -> Result<Arc<CryptoProvider>, LibError> {
        let mut provider = (self.provider)();
        let suite = cipher_suite(scenario.version, scenario.key, scenario.suite);
        provider.cipher_suites.retain(|s| s.suite() == suite);
        let available = std::mem::take(&mut provider.kx_groups);
        for &group in groups {
            let name = named_group(group);
            let kx = available.iter().find(|g| g.name() == name);
            provider.kx_groups.push(*kx.ok_or_else(|| LibError(format!("the {} provider lacks {name:?}", self.provider_name)))?);
        }
        if provider.cipher_suites.is_empty() {
            return Err(LibError(format!("the {} provider lacks {suite:?}", self.provider_name)));
        }
        Ok(Arc::new(provider))
    }
}

impl Stack for Rustls {
    type ClientConfig = Arc<ClientConfig>;
    type ServerConfig = Arc<ServerConfig>;
    type Client = Tls<ClientConnection>;
    type Server = Tls<ServerConnection>;

    fn id(&self) -> &'static str {
        self.id
    }

    fn library(&self) -> String {
        format!("rustls {} ({} {})", env!("RUSTLS_VERSION"), self.provider_name, self.provider_version)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::everything()
    }

    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Self::ClientConfig, LibError> {
        let mut roots = RootCertStore::empty();
        let ca = CertificateDer::from_pem_slice(pki.server(scenario.key).ca_pem.as_bytes()).map_err(LibError::new)?;
        roots.add(ca).map_err(LibError::new)?;
        let mut config = ClientConfig::builder_with_provider(self.provider_for(scenario, scenario.client_groups())?)
            .with_protocol_versions(&[protocol_version(scenario.version)])
            .map_err(LibError::new)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.resumption = Resumption::disabled();
        Ok(Arc::new(config))
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Self::ServerConfig, LibError> {
        let credentials = pki.server(scenario.key);
        let chain = CertificateDer::pem_slice_iter(credentials.chain_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(LibError::new)?;
        let key = PrivateKeyDer::from_pem_slice(credentials.key_pem.as_bytes()).map_err(LibError::new)?;
        let mut config = ServerConfig::builder_with_provider(self.provider_for(scenario, &[scenario.group])?)
            .with_protocol_versions(&[protocol_version(scenario.version)])
            .map_err(LibError::new)?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(LibError::new)?;
        config.session_storage = Arc::new(NoServerSessionStorage {});
        config.send_tls13_tickets = 0;
        Ok(Arc::new(config))
    }

    fn new_client(&self, config: &Self::ClientConfig, io: Endpoint) -> Result<Self::Client, LibError> {
        let name = ServerName::try_from(SERVER_NAME).map_err(LibError::new)?;
        let conn = ClientConnection::new(config.clone(), name).map_err(LibError::new)?;
        Ok(Tls { conn, io })
    }

    fn new_server(&self, config: &Self::ServerConfig, io: Endpoint) -> Result<Self::Server, LibError> {
        let conn = ServerConnection::new(config.clone()).map_err(LibError::new)?;
        Ok(Tls { conn, io })
    }
}

/// A rustls connection of either side with its transport.
pub struct Tls<C> {
    conn: C,
    io: Endpoint,
}

impl<C: DerefMut<Target = ConnectionCommon<D>>, D: SideData> Tls<C> {
    /// Reads and processes every available record, then writes whatever rustls has queued.
    fn pump(&mut self) -> Result<(), LibError> {
        self.read_available()?;
        self.flush()
    }

    /// Feeds rustls every record the transport holds.
    fn read_available(&mut self) -> Result<(), LibError> {
        loop {
            match self.conn.read_tls(&mut self.io) {
                Ok(0) => return Ok(()),
                Ok(_) => {
                    self.conn.process_new_packets().map_err(LibError::new)?;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(LibError::new(e)),
            }
        }
    }

    fn flush(&mut self) -> Result<(), LibError> {
        while self.conn.wants_write() {
            self.conn.write_tls(&mut self.io).map_err(LibError::new)?;
        }
        Ok(())
    }
}

impl<C: DerefMut<Target = ConnectionCommon<D>>, D: SideData> Connection for Tls<C> {
    fn handshake(&mut self) -> Result<bool, LibError> {
        self.pump()?;
        Ok(!self.conn.is_handshaking())
    }

    fn send(&mut self, data: &[u8]) -> Result<(), LibError> {
        self.conn.writer().write_all(data).map_err(LibError::new)?;
        self.flush()
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        // Records first: a receive mostly follows the peer's write, with nothing decrypted yet.
        self.read_available()?;
        match self.conn.reader().read(buf) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(LibError::new(e)),
        }
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        let version = match self.conn.protocol_version() {
            Some(ProtocolVersion::TLSv1_2) => Version::Tls12,
            Some(ProtocolVersion::TLSv1_3) => Version::Tls13,
            other => return Err(LibError(format!("unexpected protocol version {other:?}"))),
        };
        let negotiated = self.conn.negotiated_cipher_suite().ok_or(LibError("no cipher suite negotiated".into()))?.suite();
        let suite = Suite::ALL
            .iter()
            .copied()
            .find(|&s| KeyType::ALL.iter().any(|&k| cipher_suite(version, k, s) == negotiated))
            .ok_or_else(|| LibError(format!("unexpected cipher suite {negotiated:?}")))?;
        let group = match self.conn.negotiated_key_exchange_group().map(|g| g.name()) {
            None => None,
            Some(name) => Some(
                Group::ALL.iter().copied().find(|&g| named_group(g) == name).ok_or_else(|| LibError(format!("unexpected group {name:?}")))?,
            ),
        };
        let resumed = self.conn.handshake_kind() == Some(HandshakeKind::Resumed);
        Ok(Negotiated { version, suite, group, resumed })
    }
}

fn protocol_version(version: Version) -> &'static rustls::SupportedProtocolVersion {
    match version {
        Version::Tls12 => &rustls::version::TLS12,
        Version::Tls13 => &rustls::version::TLS13,
    }
}

fn named_group(group: Group) -> NamedGroup {
    match group {
        Group::X25519 => NamedGroup::X25519,
        Group::Secp256r1 => NamedGroup::secp256r1,
    }
}

/// The one suite for a scenario: TLS 1.2 suites also name the server key's algorithm.
fn cipher_suite(version: Version, key: KeyType, suite: Suite) -> CipherSuite {
    use CipherSuite::*;
    let rsa = key == KeyType::Rsa2048;
    match (version, suite) {
        (Version::Tls13, Suite::Aes128Gcm) => TLS13_AES_128_GCM_SHA256,
        (Version::Tls13, Suite::Aes256Gcm) => TLS13_AES_256_GCM_SHA384,
        (Version::Tls13, Suite::Chacha20Poly1305) => TLS13_CHACHA20_POLY1305_SHA256,
        (Version::Tls12, Suite::Aes128Gcm) if rsa => TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        (Version::Tls12, Suite::Aes128Gcm) => TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        (Version::Tls12, Suite::Aes256Gcm) if rsa => TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        (Version::Tls12, Suite::Aes256Gcm) => TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        (Version::Tls12, Suite::Chacha20Poly1305) if rsa => TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        (Version::Tls12, Suite::Chacha20Poly1305) => TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tlsbench_harness::driver::{self, SampleSpec};
    use tlsbench_harness::protocol::Metric;

    use super::*;

    const TINY: SampleSpec = SampleSpec { warmup: Duration::ZERO, min_time: Duration::from_millis(2) };

    #[test]
    fn every_scenario_passes_its_gates_with_both_providers() {
        let dir = tempfile::tempdir().unwrap();
        let pki = Pki::load_or_generate(dir.path()).unwrap();
        for stack in [Rustls::aws_lc_rs(), Rustls::ring()] {
            for scenario in Scenario::all() {
                let report = driver::sample(&stack, &stack, &scenario, &pki, &TINY)
                    .unwrap_or_else(|e| panic!("{} {scenario}: {e}", stack.id()));
                assert_eq!(report.values.len(), 2);
                assert!(report.values.iter().all(|v| v.value > 0.0), "{scenario}: {report:?}");
                if scenario.kind == tlsbench_harness::Kind::Transfer {
                    assert!(report.values.iter().all(|v| v.metric == Metric::MbPerS));
                    assert!(report.iterations * 16384 >= driver::TRANSFER_MIN_BYTES);
                }
            }
        }
    }

    #[test]
    fn reports_its_own_version_and_provider() {
        let library = Rustls::ring().library();
        assert!(library.starts_with("rustls 0.23."), "{library}");
        assert!(library.contains("(ring 0.17."), "{library}");
        assert!(Rustls::aws_lc_rs().library().contains("(aws-lc-rs 1."));
    }
}
