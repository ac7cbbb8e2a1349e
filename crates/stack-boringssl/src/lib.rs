//! tlsbench adapter for BoringSSL (built from source and linked statically by `boring-sys`)
//! through the `boring` crate: one `SslContext` pinned to the scenario per side.

use boring::ssl::{
    ErrorCode, Ssl, SslContext, SslContextBuilder, SslMethod, SslSessionRef, SslSignatureAlgorithm, SslStream,
};
use shared::raw;
use tlsbench_harness::{
    Backend, Capabilities, Connection, Endpoint, Exclusion, Group, LibError, Negotiated, Pki, Scenario, Side, Stack,
    Suite, Version,
};

// trust_store, use_chain_and_key, the server's config, the client's connection, send, receive,
// close and more, shared with stack-openssl: written once against either crate's API.
tlsbench_stack_openssl_shared::shared_adapter_code!(mod shared for boring, boring_sys);

/// BoringSSL, compiled into this binary.
pub struct BoringSsl;

/// A client context, and the session it resumes next: the last one a server gave it.
pub struct ClientConfig {
    ctx: SslContext,
    session: shared::LastSession,
}

impl Stack for BoringSsl {
    type ClientConfig = ClientConfig;
    type ServerConfig = SslContext;
    type Client = BoringSslConnection;
    type Server = BoringSslConnection;

    fn id(&self) -> &'static str {
        "boringssl"
    }

    fn library(&self) -> String {
        // BoringSSL has no release versions: its runtime string is just "BoringSSL". The API
        // version of its headers and the boring-sys release that vendors it say which one it is.
        format!(
            "{} (API version {}, boring-sys {})",
            boring::version::version(),
            boring_sys::BORINGSSL_API_VERSION,
            env!("BORING_SYS_VERSION")
        )
    }

    /// BoringSSL is its own crypto. It has no release versions: the crate that vendors it pins
    /// it, and its headers' API version narrows it.
    fn backend(&self) -> Backend {
        let api = format!("API version {}, static", boring_sys::BORINGSSL_API_VERSION);
        Backend::new(boring::version::version(), format!("boring-sys {}", env!("BORING_SYS_VERSION")), Some(api))
    }

    fn capabilities(&self) -> Capabilities {
        // BoringSSL always offers and accepts the extended master secret in TLS 1.2.
        let exclusions = vec![Exclusion::new(
            "*_default_ed25519_default*",
            "boringssl: its default signature algorithms leave Ed25519 out, so it rejects an Ed25519 certificate",
        )];
        Capabilities { ems_off: false, exclusions, ..Capabilities::everything() }
    }

    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<ClientConfig, LibError> {
        let mut ctx = shared::client_context(context(Side::Client, scenario)?, scenario, pki)?;
        let session = shared::keep_last_session(&mut ctx, scenario.kind);
        Ok(ClientConfig { ctx: ctx.build(), session })
    }

    fn client_config_system(&self, scenario: &Scenario, pki: &Pki) -> Option<Result<ClientConfig, LibError>> {
        let build = || {
            let mut ctx = shared::client_context_system(context(Side::Client, scenario)?, scenario, pki)?;
            let session = shared::keep_last_session(&mut ctx, scenario.kind);
            Ok(ClientConfig { ctx: ctx.build(), session })
        };
        Some(build())
    }

    fn trust_roots(&self, config: &ClientConfig) -> Option<usize> {
        Some(shared::trust_roots(&config.ctx))
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<SslContext, LibError> {
        shared::server_config(context(Side::Server, scenario)?, scenario, pki)
    }

    fn new_client(&self, config: &ClientConfig, io: Endpoint) -> Result<BoringSslConnection, LibError> {
        let mut ssl = shared::client_ssl(&config.ctx)?;
        shared::offer_last_session(&mut ssl, &config.session)?;
        BoringSslConnection::new(ssl, Side::Client, io)
    }

    fn new_server(&self, config: &SslContext, io: Endpoint) -> Result<BoringSslConnection, LibError> {
        let ssl = Ssl::new(config).map_err(LibError::context("creating the server connection"))?;
        BoringSslConnection::new(ssl, Side::Server, io)
    }
}

/// A context builder for one side that allows exactly the scenario's version and, pinned,
/// exactly its cipher suite and group, with session resumption off. With the library's
/// defaults, the rest is BoringSSL's own: its suites, groups and signature algorithms, a
/// server session cache, and two TLS 1.3 tickets after each full handshake.
fn context(side: Side, scenario: &Scenario) -> Result<SslContextBuilder, LibError> {
    // One method for both sides: `boring` has no other (its tls_client and tls_server are
    // deprecated names of this one), where OpenSSL's adapter takes each side's.
    let mut ctx = SslContextBuilder::new(SslMethod::tls()).map_err(LibError::context("creating the context"))?;
    shared::pin_version(&mut ctx, scenario.version)?;
    let Some((_, suite)) = scenario.pins() else { return Ok(ctx) };
    let cipher = suite.openssl_name(scenario.version, scenario.key);
    // Each list applies to its own version only; under the version pin the other list's
    // defaults are neither offered nor accepted, so it is left alone.
    let what = format!("setting the cipher suite {cipher}");
    match scenario.version {
        Version::Tls12 => ctx.set_strict_cipher_list(cipher).map_err(LibError::context(&what))?,
        // The cipher-string language has no say over TLS 1.3 in BoringSSL; this list, by
        // IANA id, is what the client offers and the server accepts (`boring` does not wrap it).
        // SAFETY: the context is live, and the pointer and length describe one valid id; with
        // null flags BoringSSL reads nothing more.
        Version::Tls13 => shared::check(
            unsafe {
                boring_sys::SSL_CTX_set1_tls13_ciphers(ctx.as_ptr(), &tls13_cipher_id(suite), std::ptr::null(), 1)
            },
            &what,
        )?,
    }
    // The same list as OpenSSL's `set_groups_list`, under BoringSSL's older name.
    let groups = shared::groups_list(scenario, side);
    ctx.set_curves_list(&groups).map_err(LibError::context(&format!("setting the groups {groups}")))?;
    // BoringSSL's default list leaves Ed25519 out, so a peer with an Ed25519 key would find no
    // common signature algorithm; this is that default (without SHA-1) plus Ed25519.
    ctx.set_verify_algorithm_prefs(VERIFY_ALGORITHMS)
        .map_err(LibError::context("setting the signature algorithms to verify"))?;
    // One TLS 1.3 ticket per handshake at most (BoringSSL sends two by default), set through
    // boring-sys: `boring` does not wrap SSL_CTX_set_num_tickets.
    let tickets = shared::resumption_only_as_asked(&mut ctx, scenario.kind);
    // SAFETY: the context is live; this only stores a number.
    shared::check(
        unsafe { boring_sys::SSL_CTX_set_num_tickets(ctx.as_ptr(), tickets) },
        "setting the number of TLS 1.3 tickets",
    )?;
    Ok(ctx)
}

/// The signature algorithms each side accepts from its peer, in BoringSSL's default order.
const VERIFY_ALGORITHMS: &[SslSignatureAlgorithm] = &[
    SslSignatureAlgorithm::ECDSA_SECP256R1_SHA256,
    SslSignatureAlgorithm::RSA_PSS_RSAE_SHA256,
    SslSignatureAlgorithm::RSA_PKCS1_SHA256,
    SslSignatureAlgorithm::ECDSA_SECP384R1_SHA384,
    SslSignatureAlgorithm::RSA_PSS_RSAE_SHA384,
    SslSignatureAlgorithm::RSA_PKCS1_SHA384,
    SslSignatureAlgorithm::RSA_PSS_RSAE_SHA512,
    SslSignatureAlgorithm::RSA_PKCS1_SHA512,
    SslSignatureAlgorithm::ED25519,
];

/// A TLS 1.3 cipher suite's IANA id, which is how BoringSSL takes the TLS 1.3 list.
fn tls13_cipher_id(suite: Suite) -> u16 {
    match suite {
        Suite::Aes128Gcm => 0x1301,
        Suite::Aes256Gcm => 0x1302,
        Suite::Chacha20Poly1305 => 0x1303,
    }
}

/// One side of a connection; client and server differ only in the state set on the `Ssl`.
pub struct BoringSslConnection {
    stream: SslStream<Endpoint>,
}

impl BoringSslConnection {
    fn new(ssl: Ssl, side: Side, io: Endpoint) -> Result<Self, LibError> {
        // `boring` sets the side only through its handshake-driving stream builder.
        match side {
            // SAFETY: `ssl` is a live SSL that has not started a handshake.
            Side::Client => unsafe { boring_sys::SSL_set_connect_state(raw(&ssl)) },
            // SAFETY: as above.
            Side::Server => unsafe { boring_sys::SSL_set_accept_state(raw(&ssl)) },
        }
        let stream = SslStream::new(ssl, io).map_err(LibError::context("attaching the transport"))?;
        Ok(Self { stream })
    }
}

impl Connection for BoringSslConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        if self.stream.ssl().is_init_finished() {
            return shared::read_after_handshake(&self.stream);
        }
        match self.stream.do_handshake() {
            Ok(()) if self.stream.ssl().is_server() => shared::flush_tickets(&self.stream).map(|()| true),
            Ok(()) => Ok(true),
            // The transport said WouldBlock: the peer has to move first.
            Err(e) if matches!(e.code(), ErrorCode::WANT_READ | ErrorCode::WANT_WRITE) => Ok(false),
            // The error stack says only "CERTIFICATE_VERIFY_FAILED"; the verify result says why
            // (and is an error of its own, "invalid call", whenever no chain was verified).
            Err(e) => Err(match self.stream.ssl().verify_result() {
                Err(verify) if e.to_string().contains("CERTIFICATE_VERIFY_FAILED") => {
                    LibError::new(format!("{e} (certificate verification: {verify})"))
                }
                _ => LibError::new(e),
            }),
        }
    }

    fn send(&mut self, data: &[u8]) -> Result<(), LibError> {
        shared::send(&mut self.stream, data)
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        shared::receive(&mut self.stream, buf)
    }

    fn close(&mut self) -> Result<(), LibError> {
        shared::close(&mut self.stream)
    }

    fn peer_closed(&mut self) -> Result<bool, LibError> {
        shared::peer_closed(&mut self.stream)
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        let ssl = self.stream.ssl();
        let (version, suite) = shared::version_and_suite(ssl)?;
        // `SSL_get_curve_id`: the group of the key exchange, for TLS 1.2's ECDHE and TLS 1.3.
        let group = match ssl.curve().map(i32::from) {
            Some(boring_sys::SSL_GROUP_X25519) => Group::X25519,
            Some(boring_sys::SSL_GROUP_SECP256R1) => Group::Secp256r1,
            Some(boring_sys::SSL_GROUP_SECP384R1) => Group::Secp384r1,
            Some(boring_sys::SSL_GROUP_X25519_MLKEM768) => Group::X25519Mlkem768,
            other => return Err(LibError::new(format!("negotiated an unexpected group ({other:?})"))),
        };
        let client_cert_verified =
            ssl.is_server().then(|| ssl.peer_certificate().is_some() && ssl.verify_result().is_ok());
        // A TLS 1.2 ticket is part of the connection's session. A TLS 1.3 client that keeps no
        // sessions discards the tickets that arrive, so whether one came is not known there.
        let ticket_received = match (ssl.is_server() || version == Version::Tls13, ssl.session()) {
            (true, _) => None,
            (false, None) => Some(false),
            // SAFETY: the session is live for the borrow of `ssl`, and this only reads it (a
            // `&SslSessionRef` points at the SSL_SESSION itself, as in `raw`).
            (false, Some(session)) => Some(
                unsafe {
                    boring_sys::SSL_SESSION_has_ticket(
                        session as *const SslSessionRef as *const boring_sys::SSL_SESSION,
                    )
                } == 1,
            ),
        };
        Ok(Negotiated {
            version,
            suite,
            group: Some(group),
            resumed: ssl.session_reused(),
            ems: shared::ems(ssl, version),
            client_cert_verified,
            ticket_received,
        })
    }
}

#[cfg(test)]
mod tests {
    use tlsbench_harness::{KeyType, Kind};
    use tlsbench_stack_openssl_shared::testing as shared_tests;

    use super::*;
    use tlsbench_harness::testing::{self, scenario};

    /// A handshake between configs built for two scenarios (see `testing::connect`).
    fn connect(client: &Scenario, server: &Scenario) -> Result<(BoringSslConnection, BoringSslConnection), String> {
        testing::connect(&BoringSsl, &BoringSsl, client, server)
    }

    #[test]
    fn every_supported_scenario_samples_with_positive_values_on_both_sides() {
        // Through the real driver, once each: every gate passes at least once.
        shared_tests::check_every_scenario_but(&BoringSsl, shared_tests::no_ems_or_default_ed25519);
        assert!(BoringSsl.library().starts_with("BoringSSL (API version "), "{}", BoringSsl.library());
    }

    #[test]
    fn close_notify_each_way_after_a_byte_each_way() {
        shared_tests::check_close_notify_each_way(&BoringSsl);
    }

    #[test]
    fn a_server_chain_from_another_ca_fails_verification() {
        let error = shared_tests::check_a_server_chain_from_another_ca_fails_verification(&BoringSsl, "x25519");
        assert!(error.contains("CERTIFICATE_VERIFY_FAILED"), "{error}");
    }

    #[test]
    fn a_certificate_for_another_host_name_fails_verification() {
        let error = shared_tests::check_a_certificate_for_another_host_name_fails_verification(
            &BoringSsl,
            "x25519",
            |config, io| {
                let mut ssl = Ssl::new(&config.ctx).expect("creating the client connection");
                ssl.param_mut().set_host("other.tlsbench.test").expect("setting the host name to verify");
                BoringSslConnection::new(ssl, Side::Client, io)
            },
        );
        assert!(error.contains("CERTIFICATE_VERIFY_FAILED"), "{error}");
    }

    /// The gates accept a group of None, so they alone would not notice a side that stopped
    /// reporting it; this covers every group, key type and version on both sides.
    #[test]
    fn both_sides_report_what_was_negotiated() {
        for &version in Version::ALL {
            for &group in &BoringSsl.capabilities().groups {
                for &key in KeyType::ALL {
                    let suite = Suite::Chacha20Poly1305;
                    // ML-KEM exists in TLS 1.3 only.
                    let Ok(asked) = Scenario::new(Kind::HandshakeFull, version, group, key, suite) else { continue };
                    let (client, server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{asked}: {e}"));
                    let ems = (version == Version::Tls12).then_some(true);
                    let expected = Negotiated {
                        version,
                        suite,
                        group: Some(group),
                        resumed: false,
                        ems,
                        client_cert_verified: None,
                        ticket_received: (version == Version::Tls12).then_some(false),
                    };
                    assert_eq!(client.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: client");
                    let expected = Negotiated { client_cert_verified: Some(false), ticket_received: None, ..expected };
                    assert_eq!(server.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: server");
                }
            }
        }
    }

    #[test]
    fn a_verified_client_certificate_is_reported() {
        shared_tests::check_a_verified_client_certificate_is_reported(&BoringSsl);
    }

    #[test]
    fn ems_off_is_declared_unsupported() {
        let asked = scenario("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems");
        let reason = BoringSsl.capabilities().check("boringssl", &asked).map_err(|e| e.to_string());
        assert_eq!(reason, Err("boringssl: extended master secret cannot be switched off".into()));
    }

    #[test]
    fn tls13_suites_are_pinned_on_both_sides() {
        shared_tests::check_tls13_suites_are_pinned_on_both_sides(&BoringSsl);
    }

    #[test]
    fn the_library_is_boringssl_with_its_api_and_crate_versions() {
        let library = BoringSsl.library();
        assert!(library.starts_with("BoringSSL (API version "), "{library}");
        assert!(library.contains(", boring-sys 5."), "{library}");
    }

    #[test]
    fn data_crosses_in_both_directions() {
        shared_tests::check_data_crosses_in_both_directions(&BoringSsl);
    }
}
