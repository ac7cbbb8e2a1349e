//! rustls 0.23 with the aws-lc-rs or the ring crypto provider. The configs offer exactly the
//! scenario's version, suite and group, and verify the peer's certificates for real with webpki.

use std::io::{ErrorKind, Read, Write};
use std::ops::DerefMut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rustls::client::{Resumption, Tls12Resumption};
use rustls::crypto::CryptoProvider;
use rustls::server::{NoServerSessionStorage, ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::{
    CipherSuite, ClientConfig, ClientConnection, ConnectionCommon, HandshakeKind, NamedGroup, ProtocolVersion,
    RootCertStore, ServerConfig, ServerConnection, SideData,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tlsbench_harness::pki::Credentials;
use tlsbench_harness::pki::SERVER_NAME;
use tlsbench_harness::{
    Backend, Capabilities, ClientAuth, Connection, Endpoint, Group, KeyType, Kind, LibError, Negotiated, Pki, Scenario,
    Side, Stack, Suite, Version,
};

mod sessions;

/// Sessions a client keeps: one suffices, as every handshake goes to the same server.
const SESSION_CACHE_SIZE: usize = 16;

/// Sessions a server keeps for session-ID resumption: rustls's default, a session for each of
/// up to 256 clients (or threads sharing the server's config) that resume at once.
const SERVER_SESSION_CACHE_SIZE: usize = 256;

/// The TLS 1.3 tickets rustls's in-memory store keeps per server.
const RUSTLS_TICKETS_PER_SERVER: usize = 8;

/// The rustls release this build links; from a local checkout, its version and commit
/// (`0.23.46+1a2b3c4d5e`, semver's build metadata), the label its runner is listed under.
fn release() -> String {
    match env!("TLSBENCH_RUSTLS_COMMIT") {
        "" => env!("RUSTLS_VERSION").to_string(),
        commit => format!("{}+{commit}", env!("RUSTLS_VERSION")),
    }
}

/// ` from PATH` for a build from a local checkout, else nothing.
fn checkout_path() -> String {
    match env!("TLSBENCH_RUSTLS_CHECKOUT") {
        "" => String::new(),
        path => format!(" from {path}"),
    }
}

/// rustls with one crypto provider.
pub struct Rustls {
    id: &'static str,
    provider_name: &'static str,
    provider_version: &'static str,
    provider: fn() -> CryptoProvider,
    ticketer: fn() -> Result<Arc<dyn rustls::server::ProducesTickets>, rustls::Error>,
    /// Whether the configs must be FIPS-approved (rustls's own `fips()` check), or fail.
    fips: bool,
}

/// The roots of the last system store loaded (context-client-system's gate): rustls's config
/// does not tell them.
static LAST_SYSTEM_ROOTS: AtomicUsize = AtomicUsize::new(0);

impl Rustls {
    pub fn aws_lc_rs() -> Self {
        Self {
            id: "rustls-aws-lc-rs",
            provider_name: "aws-lc-rs",
            provider_version: env!("AWS_LC_RS_VERSION"),
            provider: rustls::crypto::aws_lc_rs::default_provider,
            ticketer: rustls::crypto::aws_lc_rs::Ticketer::new,
            fips: false,
        }
    }

    /// aws-lc-rs on AWS-LC's FIPS module, with the FIPS-approved suites and groups only (no
    /// ChaCha20-Poly1305, no X25519 alone).
    #[cfg(feature = "fips")]
    pub fn aws_lc_rs_fips() -> Self {
        Self {
            id: "rustls-aws-lc-rs-fips",
            provider_name: "aws-lc-rs",
            provider_version: env!("AWS_LC_RS_VERSION"),
            provider: rustls::crypto::default_fips_provider,
            ticketer: rustls::crypto::aws_lc_rs::Ticketer::new,
            fips: true,
        }
    }

    pub fn ring() -> Self {
        Self {
            id: "rustls-ring",
            provider_name: "ring",
            provider_version: env!("RING_VERSION"),
            provider: rustls::crypto::ring::default_provider,
            ticketer: rustls::crypto::ring::Ticketer::new,
            fips: false,
        }
    }

    /// A FIPS stack's config must be FIPS-approved as rustls sees it: every algorithm of the
    /// provider approved, and AWS-LC in FIPS mode (its power-on self-tests passed).
    fn check_fips(&self, config_is_fips: bool) -> Result<(), LibError> {
        match self.fips && !config_is_fips {
            true => Err(LibError(format!("{}: the config is not in FIPS mode (rustls's fips() is false)", self.id))),
            false => Ok(()),
        }
    }

    /// The provider cut down to the scenario's one suite and the side's groups, in order; with
    /// the library's defaults, the provider as it comes.
    fn provider_for(&self, scenario: &Scenario, groups: &[Group]) -> Result<Arc<CryptoProvider>, LibError> {
        let mut provider = (self.provider)();
        let Some(pinned) = scenario.suite() else { return Ok(Arc::new(provider)) };
        let suite = cipher_suite(scenario.version, scenario.key, pinned);
        provider.cipher_suites.retain(|s| s.suite() == suite);
        let available = std::mem::take(&mut provider.kx_groups);
        for &group in groups {
            let name = named_group(group);
            let kx = available.iter().find(|g| g.name() == name);
            provider
                .kx_groups
                .push(*kx.ok_or_else(|| LibError(format!("the {} provider lacks {name:?}", self.provider_name)))?);
        }
        if provider.cipher_suites.is_empty() {
            return Err(LibError(format!("the {} provider lacks {suite:?}", self.provider_name)));
        }
        Ok(Arc::new(provider))
    }

    /// The client config of [`Stack::client_config_for`], trusting `roots`.
    fn client_config_with(
        &self,
        scenario: &Scenario,
        pki: &Pki,
        in_flight: usize,
        roots: RootCertStore,
    ) -> Result<Arc<ClientConfig>, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let builder = ClientConfig::builder_with_provider(self.provider_for(scenario, &scenario.groups(Side::Client))?)
            .with_protocol_versions(&[protocol_version(scenario.version)])
            .map_err(LibError::new)?
            .with_root_certificates(roots);
        let mut config = match scenario.client_auth {
            ClientAuth::Required => {
                let (chain, key) = chain_and_key(&credentials.client_chain_pem, &credentials.client_key_pem)?;
                builder.with_client_auth_cert(chain, key).map_err(LibError::new)?
            }
            ClientAuth::None | ClientAuth::Requested => builder.with_no_client_auth(),
        };
        config.resumption = match scenario.kind {
            Kind::HandshakeResumeId => {
                Resumption::in_memory_sessions(SESSION_CACHE_SIZE).tls12_resumption(Tls12Resumption::SessionIdOnly)
            }
            Kind::HandshakeResumeTicket if in_flight > RUSTLS_TICKETS_PER_SERVER => {
                Resumption::store(Arc::new(sessions::TicketPerConnection::new(SESSION_CACHE_SIZE, in_flight)))
            }
            Kind::HandshakeResumeTicket => Resumption::in_memory_sessions(SESSION_CACHE_SIZE),
            Kind::HandshakeFull
            | Kind::Transfer
            | Kind::IoProfile
            | Kind::Memory100
            | Kind::Memory1000
            | Kind::Memory10000
            | Kind::ContextServer
            | Kind::ContextClient
            | Kind::ContextClientSystem => Resumption::disabled(),
        };
        self.check_fips(config.fips())?;
        Ok(Arc::new(config))
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
        let fips = if self.fips { ", FIPS" } else { "" };
        let (provider, version) = (self.provider_name, self.provider_version);
        format!("{} ({provider} {version}{fips}){}", self.tls_library(), checkout_path())
    }

    fn tls_library(&self) -> String {
        format!("rustls {}", release())
    }

    /// ring reports no version at runtime (the lock file's); AWS-LC does, and says whether it
    /// is the FIPS module in FIPS mode (its power-on self-tests passed). aws-lc-rs's `fips`
    /// feature swaps the module for the whole binary, so this asks AWS-LC, not the stack.
    fn backend(&self) -> Backend {
        if self.provider_name == "ring" {
            return Backend::new("ring", self.provider_version, None);
        }
        let via = format!("{} {}", self.provider_name, self.provider_version);
        match (aws_lc_rs::try_fips_mode(), self.fips) {
            (Ok(()), _) => {
                Backend::new("AWS-LC FIPS", aws_lc_rs::awslc_version(), Some(format!("{via}, FIPS mode on")))
            }
            (Err(_), true) => Backend::new("AWS-LC", aws_lc_rs::awslc_version(), Some(format!("{via}, FIPS mode off"))),
            (Err(_), false) => Backend::new("AWS-LC", aws_lc_rs::awslc_version(), Some(via)),
        }
    }

    fn capabilities(&self) -> Capabilities {
        // rustls always negotiates the extended master secret in TLS 1.2.
        // The provider's own groups and suites: ring has no ML-KEM, the FIPS provider only the
        // FIPS-approved ones.
        let provider = (self.provider)();
        let groups =
            Group::ALL.iter().copied().filter(|&g| provider.kx_groups.iter().any(|kx| kx.name() == named_group(g)));
        let suite_in = |s: Suite| {
            provider.cipher_suites.iter().any(|cs| cs.suite() == cipher_suite(Version::Tls13, KeyType::EcdsaP256, s))
        };
        let suites = Suite::ALL.iter().copied().filter(|&s| suite_in(s));
        Capabilities {
            groups: groups.collect(),
            suites: suites.collect(),
            ems_off: false,
            ..Capabilities::everything()
        }
    }

    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Self::ClientConfig, LibError> {
        self.client_config_for(scenario, pki, 1)
    }

    /// rustls-native-certs, as rustls's users load the system's store: it reads `SSL_CERT_FILE`
    /// (else the platform's bundle); the certificates rustls cannot parse are skipped, as
    /// `add_parsable_certificates` does for its users.
    fn client_config_system(&self, scenario: &Scenario, pki: &Pki) -> Option<Result<Self::ClientConfig, LibError>> {
        let load = || {
            let loaded = rustls_native_certs::load_native_certs();
            if let Some(error) = loaded.errors.first() {
                return Err(LibError::new(format!("loading the system's certificates: {error}")));
            }
            let mut roots = RootCertStore::empty();
            roots.add_parsable_certificates(loaded.certs);
            LAST_SYSTEM_ROOTS.store(roots.len(), Ordering::Relaxed);
            self.client_config_with(scenario, pki, 1, roots)
        };
        Some(load())
    }

    /// rustls's config does not tell its roots: the count of the last system store loaded.
    fn trust_roots(&self, _config: &Self::ClientConfig) -> Option<usize> {
        Some(LAST_SYSTEM_ROOTS.load(Ordering::Relaxed)).filter(|&n| n > 0)
    }

    /// With more connections in flight than rustls's own store keeps tickets for a server (8),
    /// a store of the adapter's with one for each (see [`sessions`]).
    fn client_config_for(
        &self,
        scenario: &Scenario,
        pki: &Pki,
        in_flight: usize,
    ) -> Result<Self::ClientConfig, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        self.client_config_with(scenario, pki, in_flight, roots(credentials)?)
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Self::ServerConfig, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let provider = self.provider_for(scenario, &scenario.groups(Side::Server))?;
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots(credentials)?), provider.clone());
        let builder = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[protocol_version(scenario.version)])
            .map_err(LibError::new)?;
        let builder = match scenario.client_auth {
            ClientAuth::None => builder.with_no_client_auth(),
            ClientAuth::Required => builder.with_client_cert_verifier(verifier.build().map_err(LibError::new)?),
            ClientAuth::Requested => {
                builder.with_client_cert_verifier(verifier.allow_unauthenticated().build().map_err(LibError::new)?)
            }
        };
        let (chain, key) = chain_and_key(&credentials.chain_pem, &credentials.key_pem)?;
        let mut config = builder.with_single_cert(chain, key).map_err(LibError::new)?;
        self.check_fips(config.fips())?;
        if !scenario.is_pinned() {
            // As shipped: a session cache of its own, and TLS 1.3 tickets that refer to it.
            return Ok(Arc::new(config));
        }
        // Resumption only as the scenario resumes: a cache for session IDs, a ticketer for
        // tickets (one TLS 1.3 ticket per handshake, which the next handshake uses).
        config.session_storage = Arc::new(NoServerSessionStorage {});
        config.send_tls13_tickets = 0;
        match scenario.kind {
            Kind::HandshakeResumeId => {
                config.session_storage = ServerSessionMemoryCache::new(SERVER_SESSION_CACHE_SIZE)
            }
            Kind::HandshakeResumeTicket => {
                config.ticketer = (self.ticketer)().map_err(LibError::new)?;
                config.send_tls13_tickets = 1;
            }
            Kind::HandshakeFull
            | Kind::Transfer
            | Kind::IoProfile
            | Kind::Memory100
            | Kind::Memory1000
            | Kind::Memory10000
            | Kind::ContextServer
            | Kind::ContextClient
            | Kind::ContextClientSystem => {}
        }
        Ok(Arc::new(config))
    }

    fn new_client(&self, config: &Self::ClientConfig, io: Endpoint) -> Result<Self::Client, LibError> {
        let name = ServerName::try_from(SERVER_NAME).map_err(LibError::new)?;
        let conn = ClientConnection::new(config.clone(), name).map_err(LibError::new)?;
        Ok(Tls { conn, io, plaintext_over_limit: false })
    }

    fn new_server(&self, config: &Self::ServerConfig, io: Endpoint) -> Result<Self::Server, LibError> {
        let conn = ServerConnection::new(config.clone()).map_err(LibError::new)?;
        Ok(Tls { conn, io, plaintext_over_limit: false })
    }
}

fn roots(credentials: &Credentials) -> Result<RootCertStore, LibError> {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(credentials.ca_pem.as_bytes()).map_err(LibError::new)?)
        .map_err(LibError::new)?;
    Ok(roots)
}

fn chain_and_key(
    chain_pem: &str,
    key_pem: &str,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), LibError> {
    let chain =
        CertificateDer::pem_slice_iter(chain_pem.as_bytes()).collect::<Result<Vec<_>, _>>().map_err(LibError::new)?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(LibError::new)?;
    Ok((chain, key))
}

/// rustls's default limit on decrypted data it holds; over it, `read_tls` takes no more.
const RECEIVED_PLAINTEXT_LIMIT: usize = 16 * 1024;

/// A rustls connection of either side with its transport.
pub struct Tls<C> {
    conn: C,
    io: Endpoint,
    /// rustls holds more decrypted data than its limit: read no records until it is taken.
    plaintext_over_limit: bool,
}

/// What differs between the sides in what a connection reports.
pub trait Role {
    /// Server side: whether the client presented a certificate (which the verifier checked).
    fn client_cert_verified(&self) -> Option<bool>;

    /// Client side: whether a session ticket arrived (rustls counts TLS 1.3's only).
    fn ticket_received(&self, version: Version) -> Option<bool>;
}

impl Role for ClientConnection {
    fn client_cert_verified(&self) -> Option<bool> {
        None
    }

    fn ticket_received(&self, version: Version) -> Option<bool> {
        (version == Version::Tls13).then(|| self.tls13_tickets_received() > 0)
    }
}

impl Role for ServerConnection {
    fn ticket_received(&self, _: Version) -> Option<bool> {
        None
    }

    fn client_cert_verified(&self) -> Option<bool> {
        // rustls keeps the client's chain only once its verifier accepted it.
        Some(self.peer_certificates().is_some())
    }
}

impl<C: DerefMut<Target = ConnectionCommon<D>>, D: SideData> Tls<C> {
    /// Reads and processes every available record, then writes whatever rustls has queued.
    fn pump(&mut self) -> Result<(), LibError> {
        self.read_available()?;
        self.flush()
    }

    /// Feeds rustls every record the transport holds, as long as rustls takes them: it takes
    /// none while it holds more decrypted data than its limit (on a socket, many small records
    /// can arrive at once).
    fn read_available(&mut self) -> Result<(), LibError> {
        if self.plaintext_over_limit {
            let state = self.conn.process_new_packets().map_err(LibError::new)?;
            self.plaintext_over_limit = state.plaintext_bytes_to_read() > RECEIVED_PLAINTEXT_LIMIT;
            if self.plaintext_over_limit {
                return Ok(());
            }
        }
        loop {
            match self.conn.read_tls(&mut self.io) {
                Ok(0) => return Ok(()),
                Ok(_) => {
                    let state = self.conn.process_new_packets().map_err(LibError::new)?;
                    if state.plaintext_bytes_to_read() > RECEIVED_PLAINTEXT_LIMIT {
                        self.plaintext_over_limit = true;
                        return Ok(());
                    }
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

impl<C: DerefMut<Target = ConnectionCommon<D>> + Role, D: SideData> Connection for Tls<C> {
    fn handshake(&mut self) -> Result<bool, LibError> {
        // A client's first turn has its hello to write and nothing to read yet: an application
        // on a socket writes it and waits until the socket is readable.
        let turn = match self.conn.wants_write() {
            true => self.flush(),
            false => self.pump(),
        };
        match turn {
            Ok(()) => Ok(!self.conn.is_handshaking()),
            // The peer's last flight came, then a reset as the transport read on (`openssl
            // s_time` resets each connection once its handshake is done): the handshake is
            // complete, and the next read finds the connection closed.
            Err(_) if !self.conn.is_handshaking() => Ok(true),
            Err(e) => Err(e),
        }
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

    fn close(&mut self) -> Result<(), LibError> {
        self.conn.send_close_notify();
        self.flush()
    }

    fn peer_closed(&mut self) -> Result<bool, LibError> {
        // Once the close_notify is processed, read_tls reads no more (Ok(0)).
        self.read_available()?;
        Ok(self.conn.process_new_packets().map_err(LibError::new)?.peer_has_closed())
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        let version = match self.conn.protocol_version() {
            Some(ProtocolVersion::TLSv1_2) => Version::Tls12,
            Some(ProtocolVersion::TLSv1_3) => Version::Tls13,
            other => return Err(LibError(format!("unexpected protocol version {other:?}"))),
        };
        let negotiated =
            self.conn.negotiated_cipher_suite().ok_or(LibError("no cipher suite negotiated".into()))?.suite();
        let suite = Suite::negotiated(negotiated, |key, suite| cipher_suite(version, key, suite))?;
        let group = match self.conn.negotiated_key_exchange_group().map(|g| g.name()) {
            None => None,
            Some(name) => Some(
                Group::ALL
                    .iter()
                    .copied()
                    .find(|&g| named_group(g) == name)
                    .ok_or_else(|| LibError(format!("unexpected group {name:?}")))?,
            ),
        };
        let resumed = self.conn.handshake_kind() == Some(HandshakeKind::Resumed);
        // rustls does not say whether TLS 1.2 used EMS; it always does (see capabilities).
        let (client_cert_verified, ticket_received) =
            (self.conn.client_cert_verified(), self.conn.ticket_received(version));
        Ok(Negotiated { version, suite, group, resumed, ems: None, client_cert_verified, ticket_received })
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
        Group::Secp384r1 => NamedGroup::secp384r1,
        Group::X25519Mlkem768 => NamedGroup::X25519MLKEM768,
    }
}

/// The one suite for a scenario: TLS 1.2 suites also name the server key's algorithm.
fn cipher_suite(version: Version, key: KeyType, suite: Suite) -> CipherSuite {
    use CipherSuite::*;
    let rsa = key.is_rsa();
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
    use tlsbench_harness::Measure;

    use super::*;

    /// One measured iteration after the seed handshake: enough to pass every gate once.
    const ONCE: SampleSpec = SampleSpec::timed(Duration::ZERO, Duration::from_micros(1));

    #[test]
    fn every_supported_scenario_passes_its_gates_with_both_providers() {
        let dir = tempfile::tempdir().unwrap();
        let pki = Pki::load_or_generate(dir.path(), KeyType::ALL).unwrap();
        for stack in [Rustls::aws_lc_rs(), Rustls::ring()] {
            let mut measured = 0;
            for scenario in Scenario::all()
                .into_iter()
                .filter(|s| Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none())
            {
                if stack.capabilities().check(stack.id(), &scenario).is_err() {
                    continue;
                }
                let report = driver::sample(&stack, &stack, &scenario, &pki, &ONCE)
                    .unwrap_or_else(|e| panic!("{} {scenario}: {e}", stack.id()));
                assert!(report.values.iter().all(|v| v.is_plausible()), "{scenario}: {report:?}");
                if scenario.kind == Kind::Transfer {
                    let transfer_metrics = [Metric::MbPerS, Metric::CpuMbPerS, Metric::ContendedWaitsPerMb];
                    assert!(report.values.iter().all(|v| transfer_metrics.contains(&v.metric)));
                    assert!(report.iterations * 16384 >= driver::TRANSFER_MIN_BYTES);
                }
                measured += 1;
            }
            // Everything but EMS off (and, for ring, ML-KEM).
            assert!(measured > 600, "{} measured only {measured} scenarios", stack.id());
        }
    }

    /// One byte each way, then close_notify each way; each side sees the peer's only once it
    /// was sent.
    #[test]
    fn close_notify_each_way_with_both_providers_in_both_versions() {
        let dir = tempfile::tempdir().unwrap();
        let pki = Pki::load_or_generate(dir.path(), &[KeyType::EcdsaP256]).unwrap();
        for stack in [Rustls::aws_lc_rs(), Rustls::ring()] {
            for name in
                ["handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm"]
            {
                let scenario: Scenario = name.parse().unwrap();
                let link = tlsbench_harness::Link::new();
                let mut client =
                    stack.new_client(&stack.client_config(&scenario, &pki).unwrap(), link.client()).unwrap();
                let mut server =
                    stack.new_server(&stack.server_config(&scenario, &pki).unwrap(), link.server()).unwrap();
                tlsbench_harness::step::handshake_pair(
                    &mut client,
                    &mut server,
                    &link,
                    &mut tlsbench_harness::step::Unmetered,
                )
                .unwrap_or_else(|e| panic!("{} {name}: the handshake did not complete: {e}", stack.id()));

                let mut buf = [0u8; 16];
                client.send(&[0x5a]).unwrap();
                assert_eq!(server.receive(&mut buf).unwrap(), 1);
                assert_eq!(buf[0], 0x5a);
                server.send(&[0xa5]).unwrap();
                assert_eq!(client.receive(&mut buf).unwrap(), 1);
                assert_eq!(buf[0], 0xa5);

                assert!(!server.peer_closed().unwrap(), "{name}: the client has not closed yet");
                assert!(!client.peer_closed().unwrap(), "{name}: the server has not closed yet");
                client.close().unwrap();
                assert!(link.in_flight() > 0, "{name}: the client's close_notify is on the wire");
                assert!(!client.peer_closed().unwrap(), "{name}: the server has not closed yet");
                assert!(
                    (0..3).any(|_| server.peer_closed().unwrap()),
                    "{name}: the server sees the client's close_notify"
                );
                assert_eq!(link.in_flight(), 0, "{name}: rustls answers no close_notify by itself");
                assert!(!client.peer_closed().unwrap(), "{name}: the server has not closed yet");
                server.close().unwrap();
                assert!(
                    (0..3).any(|_| client.peer_closed().unwrap()),
                    "{name}: the client sees the server's close_notify"
                );
                assert!(server.peer_closed().unwrap() && client.peer_closed().unwrap(), "{name}: closed stays closed");
            }
        }
    }

    #[test]
    fn ring_has_no_ml_kem_and_rustls_cannot_switch_ems_off() {
        let mlkem: Scenario = "handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm".parse().unwrap();
        let err = Rustls::ring().capabilities().check("rustls-ring", &mlkem).unwrap_err();
        assert_eq!(err.to_string(), "rustls-ring: group x25519mlkem768 not supported");
        Rustls::aws_lc_rs().capabilities().check("rustls-aws-lc-rs", &mlkem).unwrap();
        let no_ems: Scenario = "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems".parse().unwrap();
        let err = Rustls::aws_lc_rs().capabilities().check("rustls-aws-lc-rs", &no_ems).unwrap_err();
        assert_eq!(err.to_string(), "rustls-aws-lc-rs: extended master secret cannot be switched off");
    }

    #[test]
    fn reports_its_own_version_and_provider() {
        let library = Rustls::ring().library();
        assert!(library.starts_with("rustls 0.23."), "{library}");
        assert!(library.contains("(ring 0.17."), "{library}");
        assert!(Rustls::aws_lc_rs().library().contains("(aws-lc-rs 1."));
    }

    /// One TLS library on two backends: ring, and the AWS-LC that aws-lc-rs runs (its version
    /// as AWS-LC reports it), not in FIPS mode in a build without the `fips` feature.
    #[test]
    fn reports_one_tls_library_and_each_provider_s_backend() {
        let (ring, aws) = (Rustls::ring(), Rustls::aws_lc_rs());
        assert_eq!(ring.tls_library(), aws.tls_library());
        assert!(ring.library().starts_with(&format!("{} (", ring.tls_library())), "{}", ring.library());
        assert_eq!(ring.backend(), Backend::new("ring", env!("RING_VERSION"), None));
        let backend = aws.backend();
        assert_eq!(backend.version, aws_lc_rs::awslc_version());
        assert!(!backend.version.is_empty() && backend.version.chars().next().unwrap().is_ascii_digit(), "{backend}");
        #[cfg(not(feature = "fips"))]
        assert_eq!(
            backend,
            Backend::new(
                "AWS-LC",
                aws_lc_rs::awslc_version(),
                Some(format!("aws-lc-rs {}", env!("AWS_LC_RS_VERSION")))
            )
        );
    }

    /// The FIPS stack (`--features fips`): AWS-LC's FIPS module in FIPS mode, configs that
    /// rustls calls FIPS-approved, and every scenario it takes passes its gates.
    #[cfg(feature = "fips")]
    #[test]
    fn the_fips_stack_runs_aws_lc_s_fips_module_in_fips_mode() {
        let stack = Rustls::aws_lc_rs_fips();
        let backend = stack.backend();
        assert_eq!(backend.name, "AWS-LC FIPS", "{backend}");
        assert!(backend.detail.as_deref().is_some_and(|d| d.ends_with(", FIPS mode on")), "{backend}");
        let dir = tempfile::tempdir().unwrap();
        let pki = Pki::load_or_generate(dir.path(), KeyType::ALL).unwrap();
        let mut measured = 0;
        for scenario in
            Scenario::all().into_iter().filter(|s| Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none())
        {
            if stack.capabilities().check(stack.id(), &scenario).is_err() {
                continue;
            }
            assert!(stack.client_config(&scenario, &pki).unwrap().fips(), "{scenario}");
            assert!(stack.server_config(&scenario, &pki).unwrap().fips(), "{scenario}");
            driver::sample(&stack, &stack, &scenario, &pki, &ONCE).unwrap_or_else(|e| panic!("{scenario}: {e}"));
            measured += 1;
        }
        assert!(measured > 100, "measured only {measured} scenarios");
        // Not FIPS-approved, so not offered: ChaCha20-Poly1305 and X25519.
        let chacha: Scenario = "handshake-full_1.3_secp256r1_ecdsa-p256_chacha20-poly1305".parse().unwrap();
        assert!(stack.capabilities().check(stack.id(), &chacha).is_err());
    }
}
