//! tlsbench adapter for Bertie, a minimal TLS 1.3 implementation whose client and server take
//! records in and hand records out: this file cuts the transport's bytes into records for it.

use std::io::{ErrorKind, Read, Write};

use bertie::server::ServerDB;
use bertie::tls13crypto::{AeadAlgorithm, Algorithms, HashAlgorithm, KemScheme, SignatureScheme};
use bertie::tls13utils::{AppData, Bytes};
use openssl::pkey::PKey;
use openssl::x509::X509;
use tlsbench_harness::pki::SERVER_NAME;
use tlsbench_harness::{
    Backend, Capabilities, ClientAuth, Connection, Endpoint, Exclusion, Group, KeyType, Kind, LibError, Negotiated,
    Pki, Scenario, Stack, Suite, Version,
};

/// What Bertie's client checks of the server's certificate, said wherever its figures show.
pub const VERIFICATION: &str = "no chain or host name verification";

/// TLS record content types (RFC 8446, section 5.1).
const CHANGE_CIPHER_SPEC: u8 = 20;
const ALERT: u8 = 21;
/// The largest plaintext one record carries.
const MAX_FRAGMENT: usize = 1 << 14;

/// Bertie.
pub struct Bertie;

/// A client's config: the one algorithm set it offers, and the scenario's parameters it stands for.
pub struct ClientConfig {
    algorithms: Algorithms,
    negotiated: Negotiated,
}

/// A server's config: its certificate and key, the one algorithm set it accepts, and what that set is.
pub struct ServerConfig {
    db: ServerDB,
    algorithms: Algorithms,
    negotiated: Negotiated,
}

/// The parts of the configs that Bertie's own calls take, for a bare loop of Bertie's API built
/// on the same configs (the `bertie_overhead` bench of tlsbench-runner-openssl).
impl ClientConfig {
    pub fn algorithms(&self) -> Algorithms {
        self.algorithms
    }
}

impl ServerConfig {
    pub fn algorithms(&self) -> Algorithms {
        self.algorithms
    }

    pub fn db(&self) -> &ServerDB {
        &self.db
    }
}

impl Stack for Bertie {
    type ClientConfig = ClientConfig;
    type ServerConfig = ServerConfig;
    type Client = BertieClient;
    type Server = BertieServer;

    fn id(&self) -> &'static str {
        "bertie"
    }

    fn library(&self) -> String {
        // Bertie as published, with its default features: `secret_integers` cannot be switched
        // off (the crate does not compile without it), and no feature or build setting of
        // Bertie's own benchmarks makes it faster. libcrux chooses its AES-NI and AVX2 paths
        // from the CPU it runs on.
        format!(
            "Bertie {} (libcrux {}, default features; {VERIFICATION})",
            env!("BERTIE_VERSION"),
            env!("LIBCRUX_VERSION")
        )
    }

    fn tls_library(&self) -> String {
        format!("Bertie {}", env!("BERTIE_VERSION"))
    }

    /// libcrux, which reports no version at runtime: the lock file's.
    fn backend(&self) -> Backend {
        Backend::new("libcrux", env!("LIBCRUX_VERSION"), None)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // Bertie issues no session tickets and keeps no sessions: it resumes only from a
            // PSK handed to both sides out of band, which no scenario measures. No io-profile:
            // its states encrypt only application data and read only application data or
            // handshake messages, so it can neither send nor read a close_notify (the adapter
            // keeps the default `close` and `peer_closed`, which fail).
            // No trust store of its own to load: not context-client-system.
            kinds: vec![
                Kind::HandshakeFull,
                Kind::Transfer,
                Kind::Memory100,
                Kind::Memory1000,
                Kind::Memory10000,
                Kind::ContextServer,
                Kind::ContextClient,
            ],
            versions: vec![Version::Tls13],
            groups: vec![Group::X25519, Group::Secp256r1],
            // Its signature schemes: ECDSA P-256 with SHA-256, and RSA-PSS (RSAE) with SHA-256.
            // Its client takes only ECDSA signatures whose r and s are 32 or 33 bytes in DER
            // (`parse_ecdsa_signature`): about one in 128 of another signer's fails the
            // handshake. Bertie's own signatures always pass, so ECDSA stays supported.
            keys: vec![KeyType::Rsa2048, KeyType::Rsa3072, KeyType::Rsa4096, KeyType::EcdsaP256],
            suites: Suite::ALL.to_vec(),
            // No CertificateRequest, no client Certificate.
            client_auth: vec![ClientAuth::None],
            // TLS 1.2 is not implemented, so neither is its extended master secret.
            ems_off: false,
            // The reasons a cell names, ahead of the generic "X not supported".
            exclusions: vec![
                Exclusion::new("*_1.2_*", "bertie: TLS 1.2 not implemented"),
                Exclusion::new("handshake-resume-*", "bertie: issues no session tickets and keeps no sessions"),
                Exclusion::new("io-profile_*", "bertie: close_notify not implemented"),
                Exclusion::new("*_mtls*", "bertie: no client certificates"),
                Exclusion::new("*_cert-requested*", "bertie: no client certificates"),
                Exclusion::new("*_default_*_default*", NO_DEFAULTS),
            ],
            // Its server sends one certificate, the leaf, without the intermediate: a client
            // that verifies the chain (every other stack's) cannot, and rejects it. Only
            // Bertie's own client, which does not verify the chain, completes the handshake.
            peer_limits: vec![tlsbench_harness::PeerLimit {
                side: tlsbench_harness::Side::Server,
                only: vec!["bertie".into()],
                reason: "bertie: its server sends the leaf certificate without the intermediate, so a client that \
                         verifies the chain rejects it (only Bertie's own client, which does not, accepts it)"
                    .into(),
            }],
            measure_limits: Vec::new(),
            min_warmup_ms: 0,
            allocators: Vec::new(),
            threads: false,
            shared_contexts: false,
            pin_threads: false,
        }
    }

    fn client_config(&self, scenario: &Scenario, _: &Pki) -> Result<ClientConfig, LibError> {
        // No trust anchor to give: Bertie's client checks only the server's CertificateVerify
        // signature with the key in the leaf it is sent, and the handshake's Finished MACs.
        let (algorithms, negotiated) = algorithms(scenario)?;
        Ok(ClientConfig { algorithms, negotiated: Negotiated { client_cert_verified: None, ..negotiated } })
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<ServerConfig, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let (algorithms, negotiated) = algorithms(scenario)?;
        // Bertie sends one certificate, the leaf: its peers get no intermediate.
        let leaf = X509::from_pem(credentials.chain_pem.as_bytes())
            .map_err(LibError::context("parsing the leaf certificate"))?;
        let der = leaf.to_der().map_err(LibError::context("encoding the leaf certificate"))?;
        let key = PKey::private_key_from_pem(credentials.key_pem.as_bytes())
            .map_err(LibError::context("parsing the private key"))?;
        // Bertie's signing key is the bare secret: the P-256 scalar, or RSA's private exponent
        // as long as the modulus.
        let secret = match scenario.key {
            KeyType::EcdsaP256 => key.ec_key().and_then(|k| k.private_key().to_vec_padded(32)),
            _ => key.rsa().and_then(|k| k.d().to_vec_padded(k.size() as i32)),
        }
        .map_err(LibError::context("reading the private key's secret"))?;
        let db = ServerDB::new(SERVER_NAME.as_bytes().into(), der.into(), secret.into(), None);
        Ok(ServerConfig { db, algorithms, negotiated: Negotiated { client_cert_verified: Some(false), ..negotiated } })
    }

    fn new_client(&self, config: &ClientConfig, io: Endpoint) -> Result<BertieClient, LibError> {
        let records = Records::new(io);
        Ok(BertieClient { state: None, algorithms: config.algorithms, negotiated: config.negotiated, records })
    }

    fn new_server(&self, config: &ServerConfig, io: Endpoint) -> Result<BertieServer, LibError> {
        let (db, algorithms, negotiated) = (config.db.clone(), config.algorithms, config.negotiated);
        Ok(BertieServer { state: None, db, algorithms, negotiated, records: Records::new(io) })
    }
}

/// Why Bertie has no [`tlsbench_harness::Config::Defaults`].
const NO_DEFAULTS: &str =
    "bertie: has no defaults to measure: each connection takes the one algorithm set the application names";

/// Bertie's one algorithm set for the scenario, and the parameters it amounts to. Bertie does
/// not negotiate: its client offers exactly this set and its server accepts only this set, and a
/// peer that picks anything else fails the handshake (`client_set_params`, `server_init`). So
/// after a completed handshake this set is what was negotiated; Bertie has no call that says it.
fn algorithms(scenario: &Scenario) -> Result<(Algorithms, Negotiated), LibError> {
    let unsupported = || LibError::new(format!("bertie: no algorithm set for {scenario}"));
    let (group, suite) = scenario.pins().ok_or_else(|| LibError::new(NO_DEFAULTS))?;
    let (hash, aead) = match suite {
        Suite::Aes128Gcm => (HashAlgorithm::SHA256, AeadAlgorithm::Aes128Gcm),
        Suite::Aes256Gcm => (HashAlgorithm::SHA384, AeadAlgorithm::Aes256Gcm),
        Suite::Chacha20Poly1305 => (HashAlgorithm::SHA256, AeadAlgorithm::Chacha20Poly1305),
    };
    let signature = match scenario.key {
        KeyType::EcdsaP256 => SignatureScheme::EcdsaSecp256r1Sha256,
        KeyType::Rsa2048 | KeyType::Rsa3072 | KeyType::Rsa4096 => SignatureScheme::RsaPssRsaSha256,
        _ => return Err(unsupported()),
    };
    let kem = match group {
        Group::X25519 => KemScheme::X25519,
        Group::Secp256r1 => KemScheme::Secp256r1,
        _ => return Err(unsupported()),
    };
    if scenario.version != Version::Tls13 {
        return Err(unsupported());
    }
    // No PSK, no 0-RTT.
    let algorithms = Algorithms::new(hash, aead, signature, kem, false, false);
    let negotiated = Negotiated {
        version: Version::Tls13,
        suite,
        group: Some(group),
        resumed: false,
        ems: None,
        client_cert_verified: None,
        ticket_received: None,
    };
    Ok((algorithms, negotiated))
}

/// A Bertie error code (`TLSError` is a `u8`), with the step it came from.
fn bertie_failed(what: &'static str) -> impl FnOnce(u8) -> LibError {
    move |code| LibError::new(format!("bertie: {what} failed with error {code}"))
}

/// What Bertie's client and server do alike once connected; each call consumes the state and
/// returns the next one.
trait Connected: Sized {
    /// One record of application data.
    fn encrypt(self, data: AppData) -> Result<(Bytes, Self), u8>;
    /// The application data of one record; None for a record without any (a session ticket).
    fn decrypt(self, record: &Bytes) -> Result<(Option<AppData>, Self), u8>;
}

impl Connected for bertie::Client {
    fn encrypt(self, data: AppData) -> Result<(Bytes, Self), u8> {
        self.write(data)
    }

    fn decrypt(self, record: &Bytes) -> Result<(Option<AppData>, Self), u8> {
        self.read(record)
    }
}

impl Connected for bertie::Server {
    fn encrypt(self, data: AppData) -> Result<(Bytes, Self), u8> {
        self.write(data)
    }

    fn decrypt(self, record: &Bytes) -> Result<(Option<AppData>, Self), u8> {
        self.read(record)
    }
}

/// The transport cut into whole TLS records, which is what Bertie's calls take, and the
/// application data of the last record until the caller has taken it. Like Bertie's own stream
/// API, it reads the transport only when no whole record has arrived yet.
struct Records {
    io: Endpoint,
    /// What has been read; `received[start..]` is not yet handed out as records.
    received: Vec<u8>,
    start: usize,
    /// The last record's application data, as Bertie hands it out; `plaintext[taken..]` is not
    /// yet handed to the caller.
    plaintext: Vec<u8>,
    taken: usize,
}

impl Records {
    fn new(io: Endpoint) -> Self {
        Self { io, received: Vec::new(), start: 0, plaintext: Vec::new(), taken: 0 }
    }

    /// The next whole record that has arrived, header included. Change cipher spec records are
    /// dropped, as TLS 1.3 says (peers send them for middleboxes); an alert ends the connection.
    fn next(&mut self) -> Result<Option<Bytes>, LibError> {
        loop {
            let pending = &self.received[self.start..];
            // The record's length, header included, once its header has arrived.
            let length = match pending {
                [_, _, _, high, low, ..] => Some(5 + usize::from(u16::from_be_bytes([*high, *low]))),
                _ => None,
            };
            let Some(length) = length.filter(|&length| pending.len() >= length) else {
                if self.read()? {
                    continue;
                }
                return Ok(None);
            };
            let record = &pending[..length];
            self.start += length;
            match record[0] {
                CHANGE_CIPHER_SPEC => continue,
                ALERT => return Err(LibError::new(format!("the peer sent an alert: {:?}", &record[5..]))),
                _ => return Ok(Some(record.into())),
            }
        }
    }

    /// Reads what the transport has after what was already read; false when it has nothing.
    fn read(&mut self) -> Result<bool, LibError> {
        // Only a part of a record is kept: what was handed out goes first.
        self.received.drain(..self.start);
        self.start = 0;
        let mut chunk = [0u8; 16 * 1024];
        match self.io.read(&mut chunk) {
            Ok(n) => {
                self.received.extend_from_slice(&chunk[..n]);
                Ok(n > 0)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(LibError::new(format!("reading the transport: {e}"))),
        }
    }

    fn write(&mut self, bytes: &Bytes) -> Result<(), LibError> {
        self.io.write_all(&bytes.declassify()).map_err(LibError::context("writing the transport"))
    }

    /// Encrypts `data` a record at a time and writes the records.
    fn send<S: Connected>(&mut self, state: &mut Option<S>, data: &[u8]) -> Result<(), LibError> {
        for fragment in data.chunks(MAX_FRAGMENT) {
            let connected = state.take().ok_or_else(|| LibError::new("sending before the handshake"))?;
            let (record, next) =
                connected.encrypt(AppData::new(fragment.into())).map_err(bertie_failed("encrypting"))?;
            *state = Some(next);
            self.write(&record)?;
        }
        Ok(())
    }

    /// Hands out what is left of the last record's data, or else decrypts the next record.
    fn receive<S: Connected>(&mut self, state: &mut Option<S>, buf: &mut [u8]) -> Result<usize, LibError> {
        while self.taken == self.plaintext.len() {
            let Some(record) = self.next()? else { return Ok(0) };
            let connected = state.take().ok_or_else(|| LibError::new("receiving before the handshake"))?;
            let (data, next) = connected.decrypt(&record).map_err(bertie_failed("decrypting"))?;
            *state = Some(next);
            if let Some(data) = data {
                self.plaintext = data.into_raw().declassify();
                self.taken = 0;
            }
        }
        let left = &self.plaintext[self.taken..];
        let n = left.len().min(buf.len());
        buf[..n].copy_from_slice(&left[..n]);
        self.taken += n;
        Ok(n)
    }
}

/// The client side. Bertie's states are values that each call consumes and returns.
pub struct BertieClient {
    /// None before the ClientHello.
    state: Option<bertie::Client>,
    algorithms: Algorithms,
    negotiated: Negotiated,
    records: Records,
}

impl Connection for BertieClient {
    fn handshake(&mut self) -> Result<bool, LibError> {
        let mut state = match self.state.take() {
            Some(state) => state,
            None => {
                let name: Bytes = SERVER_NAME.as_bytes().into();
                let (hello, state) =
                    bertie::Client::connect(self.algorithms, &name, None, None, &mut rand::thread_rng())
                        .map_err(bertie_failed("writing the ClientHello"))?;
                self.records.write(&hello)?;
                state
            }
        };
        while !matches!(state, bertie::Client::Client1(..)) {
            let Some(record) = self.records.next()? else { break };
            let (finished, next) =
                state.read_handshake(&record).map_err(bertie_failed("reading the server's flight"))?;
            state = next;
            if let Some(finished) = finished {
                self.records.write(&finished)?;
            }
        }
        let done = matches!(state, bertie::Client::Client1(..));
        self.state = Some(state);
        Ok(done)
    }

    fn send(&mut self, data: &[u8]) -> Result<(), LibError> {
        self.records.send(&mut self.state, data)
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        self.records.receive(&mut self.state, buf)
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        match self.state {
            Some(bertie::Client::Client1(..)) => Ok(self.negotiated),
            _ => Err(LibError::new("the handshake has not completed")),
        }
    }
}

/// The server side.
pub struct BertieServer {
    /// None before the ClientHello.
    state: Option<bertie::Server>,
    db: ServerDB,
    algorithms: Algorithms,
    negotiated: Negotiated,
    records: Records,
}

impl Connection for BertieServer {
    fn handshake(&mut self) -> Result<bool, LibError> {
        loop {
            match self.state.take() {
                Some(state @ bertie::Server::Server1(..)) => {
                    self.state = Some(state);
                    return Ok(true);
                }
                None => {
                    let Some(hello) = self.records.next()? else { return Ok(false) };
                    let (server_hello, flight, state) =
                        bertie::Server::accept(self.algorithms, self.db.clone(), &hello, &mut rand::thread_rng())
                            .map_err(bertie_failed("answering the ClientHello"))?;
                    self.records.write(&server_hello)?;
                    self.records.write(&flight)?;
                    self.state = Some(state);
                }
                Some(state) => {
                    let Some(finished) = self.records.next()? else {
                        self.state = Some(state);
                        return Ok(false);
                    };
                    let state =
                        state.read_handshake(&finished).map_err(bertie_failed("reading the client's Finished"))?;
                    self.state = Some(state);
                }
            }
        }
    }

    fn send(&mut self, data: &[u8]) -> Result<(), LibError> {
        self.records.send(&mut self.state, data)
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        self.records.receive(&mut self.state, buf)
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        match self.state {
            Some(bertie::Server::Server1(..)) => Ok(self.negotiated),
            _ => Err(LibError::new("the handshake has not completed")),
        }
    }
}

#[cfg(test)]
mod tests {
    use tlsbench_harness::Link;

    use super::*;
    use tlsbench_harness::testing::{self, pki, scenario};

    /// A handshake between configs built for two scenarios (see `testing::connect`).
    fn connect(client: &Scenario, server: &Scenario) -> Result<(BertieClient, BertieServer), String> {
        testing::connect(&Bertie, &Bertie, client, server)
    }

    #[test]
    fn every_supported_scenario_samples_with_positive_values_on_both_sides() {
        // Through the real driver, once each: every gate passes at least once.
        let measured = testing::check_every_supported_scenario(&Bertie, &Bertie);
        // Full handshakes: two groups, four key types, three suites; and the three transfers.
        assert_eq!(measured, 2 * 4 * 3 + 3);
    }

    #[test]
    fn declared_gaps_are_unsupported_with_the_reason() {
        for (name, reason) in [
            ("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", "bertie: TLS 1.2 not implemented"),
            (
                "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm",
                "bertie: issues no session tickets and keeps no sessions",
            ),
            ("io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "bertie: close_notify not implemented"),
            ("handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm", "bertie: group x25519mlkem768 not supported"),
            ("handshake-full_1.3_secp384r1_ecdsa-p256_aes-128-gcm", "bertie: group secp384r1 not supported"),
            ("handshake-full_1.3_x25519_ecdsa-p384_aes-128-gcm", "bertie: key type ecdsa-p384 not supported"),
            ("handshake-full_1.3_x25519_ed25519_aes-128-gcm", "bertie: key type ed25519 not supported"),
            ("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls", "bertie: no client certificates"),
            ("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_cert-requested", "bertie: no client certificates"),
        ] {
            let error = Bertie.capabilities().check("bertie", &scenario(name)).expect_err(name);
            assert_eq!(error.to_string(), reason);
        }
    }

    /// Why io-profile is excluded: after a completed handshake and a byte each way, neither
    /// side can send or read a close_notify, and they say so instead of pretending.
    #[test]
    fn close_notify_is_refused_on_both_sides_after_a_byte_each_way() {
        let asked = scenario("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
        let (mut client, mut server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{e}"));
        let mut buf = [0u8; 16];
        client.send(&[0x5a]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(server.receive(&mut buf).map_err(|e| e.0), Ok(1));
        assert_eq!(buf[0], 0x5a);
        server.send(&[0xa5]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(client.receive(&mut buf).map_err(|e| e.0), Ok(1));
        assert_eq!(buf[0], 0xa5);
        assert_eq!(client.close().map_err(|e| e.0), Err("this adapter does not send close_notify".into()));
        assert_eq!(server.close().map_err(|e| e.0), Err("this adapter does not send close_notify".into()));
        assert_eq!(server.peer_closed().map_err(|e| e.0), Err("this adapter does not read close_notify".into()));
        assert_eq!(client.peer_closed().map_err(|e| e.0), Err("this adapter does not read close_notify".into()));
        let io_profile = scenario("io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm");
        assert!(Bertie.capabilities().check("bertie", &io_profile).is_err());
        let memory = scenario("memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm");
        Bertie.capabilities().check("bertie", &memory).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Bertie's own gap, shown rather than hidden: its client checks the CertificateVerify
    /// signature against the leaf it is sent, but not the chain to a CA or the host name, so a
    /// leaf issued by another CA than the one of the client's scenario passes.
    #[test]
    fn the_client_does_not_verify_the_chain_and_the_library_string_says_so() {
        let asked = scenario("handshake-full_1.3_x25519_rsa-2048_aes-128-gcm");
        let other_ca = Scenario { key: KeyType::Rsa3072, ..asked };
        assert!(connect(&asked, &other_ca).is_ok(), "Bertie now verifies chains: update VERIFICATION and this test");
        assert_eq!(
            Bertie.library(),
            format!(
                "Bertie {} (libcrux {}, default features; no chain or host name verification)",
                env!("BERTIE_VERSION"),
                env!("LIBCRUX_VERSION")
            )
        );
        assert!(Bertie.library().starts_with("Bertie 0.1.0-pre.2 (libcrux 0.0.2-pre.2,"), "{}", Bertie.library());
    }

    #[test]
    fn the_libraries_defaults_are_unsupported_because_bertie_has_none() {
        let defaults = scenario("handshake-full_1.3_default_ecdsa-p256_default");
        let reason = Bertie.capabilities().check(Bertie.id(), &defaults).unwrap_err().to_string();
        assert!(reason.ends_with(NO_DEFAULTS), "{reason}");
        // The adapter refuses it too, should the capabilities ever let it through.
        assert_eq!(algorithms(&defaults).map(drop).map_err(|e| e.0), Err(NO_DEFAULTS.to_string()));
    }

    #[test]
    fn a_server_with_another_algorithm_set_fails_the_handshake() {
        let asked = scenario("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
        for server in [
            scenario("handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305"),
            scenario("handshake-full_1.3_secp256r1_ecdsa-p256_aes-128-gcm"),
        ] {
            let Err(error) = connect(&asked, &server) else { panic!("{server}: Bertie negotiated") };
            assert!(error.starts_with("server: bertie: answering the ClientHello failed"), "{error}");
        }
    }

    #[test]
    fn both_sides_report_the_algorithm_set_after_the_handshake() {
        let asked = scenario("handshake-full_1.3_secp256r1_rsa-4096_aes-256-gcm");
        let (client, server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{e}"));
        let expected = Negotiated {
            version: Version::Tls13,
            suite: asked.suite().unwrap(),
            group: asked.group(),
            resumed: false,
            ems: None,
            client_cert_verified: None,
            ticket_received: None,
        };
        assert_eq!(client.negotiated().map_err(|e| e.0), Ok(expected));
        assert_eq!(
            server.negotiated().map_err(|e| e.0),
            Ok(Negotiated { client_cert_verified: Some(false), ..expected })
        );
        let link = Link::new();
        let config = Bertie.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
        let fresh = Bertie.new_client(&config, link.client()).unwrap_or_else(|e| panic!("{e}"));
        assert!(fresh.negotiated().is_err(), "nothing is negotiated before the handshake");
    }

    #[test]
    fn data_crosses_in_both_directions_across_several_records() {
        let asked = scenario("transfer_1.3_x25519_ecdsa-p256_chacha20-poly1305");
        let (mut client, mut server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{e}"));
        let mut buf = vec![0u8; 64 * 1024];
        assert_eq!(client.receive(&mut buf).map_err(|e| e.0), Ok(0), "nothing sent yet");
        let big: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
        server.send(&big).unwrap_or_else(|e| panic!("{e}"));
        let mut got = Vec::new();
        loop {
            let n = client.receive(&mut buf[..1000]).unwrap_or_else(|e| panic!("{e}"));
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, big);
        client.send(b"from the client").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(server.receive(&mut buf).map_err(|e| e.0), Ok(15));
        assert_eq!(&buf[..15], b"from the client");
    }
}
