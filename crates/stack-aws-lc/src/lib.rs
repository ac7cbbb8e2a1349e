//! tlsbench adapter for AWS-LC's own libssl (built from source and linked statically by
//! aws-lc-sys, every symbol prefixed with its release) through the `openssl` crate on AWS-LC:
//! one `SslContext` pinned to the scenario per side. It is all behind the feature `aws-lc`,
//! which crates/runner-aws-lc turns on in a build of its own (see Cargo.toml); or behind the
//! feature `fips`, which crates/runner-fips turns on, for the stack `aws-lc-fips`: the same
//! adapter on AWS-LC's FIPS module (aws-lc-fips-sys), held to FIPS-approved algorithms (fips.rs).
#![cfg(any(feature = "aws-lc", feature = "fips"))]

#[cfg(all(feature = "aws-lc", feature = "fips"))]
compile_error!("the features `aws-lc` and `fips` put the `openssl` crate on two different AWS-LCs: build one");

#[cfg(feature = "fips")]
mod fips;

use std::ffi::CString;

use openssl::ssl::{ErrorCode, Ssl, SslContext, SslContextBuilder, SslMethod, SslSessionRef, SslStream};
use shared::raw;
use tlsbench_harness::{
    Backend, Capabilities, Connection, Endpoint, Exclusion, Group, LibError, Negotiated, Pki, Scenario, Side, Stack,
    Version,
};

// trust_store, use_chain_and_key, the server's config, the client's connection, send, receive,
// close and more, shared with stack-openssl and stack-boringssl: the `openssl` crate's API is
// the same on AWS-LC, and AWS-LC is BoringSSL's descendant where the libraries differ.
tlsbench_stack_openssl_shared::shared_adapter_code!(mod shared for openssl, openssl_sys);

/// AWS-LC's libssl, compiled into this binary: the stack `aws-lc`, or `aws-lc-fips` on the
/// FIPS module (a build links one of them).
pub struct AwsLc;

/// The stack's id, as the build's AWS-LC is the FIPS module or not.
const ID: &str = if cfg!(feature = "fips") { "aws-lc-fips" } else { "aws-lc" };

/// A client context, and the session it resumes next: the last one a server gave it. AWS-LC's
/// sessions cannot change once made (a renewed TLS 1.2 ticket comes in a new session, which
/// reaches the new-session callback), so one session can be offered by several connections.
pub struct ClientConfig {
    ctx: SslContext,
    session: shared::LastSession,
}

impl Stack for AwsLc {
    type ClientConfig = ClientConfig;
    type ServerConfig = SslContext;
    type Client = AwsLcConnection;
    type Server = AwsLcConnection;

    fn id(&self) -> &'static str {
        ID
    }

    /// `AWS-LC 1.73.0 (aws-lc-sys 0.41.0)`, or `AWS-LC FIPS 4.2.0 (aws-lc-fips-sys 0.14.4)`:
    /// AWS-LC's own version string at runtime, and the crate release that vendors and builds it.
    fn library(&self) -> String {
        format!("{} ({})", openssl::version::version(), env!("AWS_LC_SYS_CRATE"))
    }

    /// AWS-LC's libssl runs on AWS-LC's libcrypto, built with it.
    fn backend(&self) -> Backend {
        // `AWS-LC 1.73.0`, or `AWS-LC FIPS 4.2.0` from the FIPS module.
        let version = openssl::version::version();
        let (name, number) = version.rsplit_once(' ').unwrap_or((version, ""));
        // The FIPS stack says whether the module is in FIPS mode (FIPS_mode()), as rustls's does.
        let mode = match (cfg!(feature = "fips"), openssl::fips::enabled()) {
            (true, true) => ", FIPS mode on",
            (true, false) => ", FIPS mode off",
            (false, _) => "",
        };
        Backend::new(name, number, Some(format!("{}, static{mode}", env!("AWS_LC_SYS_CRATE"))))
    }

    fn capabilities(&self) -> Capabilities {
        // AWS-LC, like BoringSSL, always offers and accepts the extended master secret.
        let exclusions = vec![Exclusion::new(
            "*_default_ed25519_default*",
            &format!("{ID}: its default signature algorithms leave Ed25519 out, so it rejects an Ed25519 certificate"),
        )];
        let capabilities = Capabilities { ems_off: false, exclusions, ..Capabilities::everything() };
        #[cfg(feature = "fips")]
        let capabilities = fips::approved_capabilities(capabilities);
        capabilities
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

    fn new_client(&self, config: &ClientConfig, io: Endpoint) -> Result<AwsLcConnection, LibError> {
        let mut ssl = shared::client_ssl(&config.ctx)?;
        shared::offer_last_session(&mut ssl, &config.session)?;
        ssl.set_connect_state();
        AwsLcConnection::new(ssl, io)
    }

    fn new_server(&self, config: &SslContext, io: Endpoint) -> Result<AwsLcConnection, LibError> {
        let mut ssl = Ssl::new(config).map_err(LibError::context("creating the server connection"))?;
        ssl.set_accept_state();
        AwsLcConnection::new(ssl, io)
    }
}

/// A context builder for one side that allows exactly the scenario's version and, pinned,
/// exactly its cipher suite and group, with session resumption off. With the library's
/// defaults, the rest is AWS-LC's own: its suites, groups and signature algorithms, a server
/// session cache, and two TLS 1.3 tickets after each full handshake. On the FIPS module, all of
/// it FIPS-approved (fips.rs).
fn context(side: Side, scenario: &Scenario) -> Result<SslContextBuilder, LibError> {
    // AWS-LC's client and server methods are this one (as BoringSSL's are).
    let mut ctx = SslContextBuilder::new(SslMethod::tls()).map_err(LibError::context("creating the context"))?;
    shared::pin_version(&mut ctx, scenario.version)?;
    #[cfg(feature = "fips")]
    fips::approved_only(&mut ctx, scenario)?;
    let Some((_, suite)) = scenario.pins() else { return Ok(ctx) };
    let cipher = suite.openssl_name(scenario.version, scenario.key);
    // Each list applies to its own version only; under the version pin the other list's
    // defaults are neither offered nor accepted, so it is left alone.
    let what = format!("setting the cipher suite {cipher}");
    match scenario.version {
        Version::Tls12 => ctx.set_cipher_list(cipher).map_err(LibError::context(&what))?,
        // OpenSSL's call for the TLS 1.3 list, which AWS-LC has and the `openssl` crate wraps
        // for OpenSSL only.
        Version::Tls13 => {
            let cipher = CString::new(cipher).map_err(|_| LibError::new(format!("{what}: a NUL in the name")))?;
            // SAFETY: the context is live and the string NUL-terminated; AWS-LC copies what it parses.
            shared::check(unsafe { openssl_sys::SSL_CTX_set_ciphersuites(ctx.as_ptr(), cipher.as_ptr()) }, &what)?;
        }
    }
    let groups = shared::groups_list(scenario, side);
    ctx.set_groups_list(&groups).map_err(LibError::context(&format!("setting the groups {groups}")))?;
    // AWS-LC's default list leaves Ed25519 out (as BoringSSL's does), so a peer with an Ed25519
    // key would find no common signature algorithm; this is that default (without SHA-1) plus
    // Ed25519. The `openssl` crate does not wrap this call.
    // SAFETY: the context is live, and the pointer and length describe the list, which AWS-LC copies.
    shared::check(
        unsafe {
            openssl_sys::SSL_CTX_set_verify_algorithm_prefs(
                ctx.as_ptr(),
                VERIFY_ALGORITHMS.as_ptr(),
                VERIFY_ALGORITHMS.len(),
            )
        },
        "setting the signature algorithms to verify",
    )?;
    let tickets = shared::resumption_only_as_asked(&mut ctx, scenario.kind);
    // One TLS 1.3 ticket per handshake at most (AWS-LC sends two by default); the `openssl`
    // crate wraps SSL_CTX_set_num_tickets for OpenSSL only.
    // SAFETY: the context is live; this only stores a number.
    shared::check(
        unsafe { openssl_sys::SSL_CTX_set_num_tickets(ctx.as_ptr(), tickets) },
        "setting the number of tickets",
    )?;
    Ok(ctx)
}

/// The signature algorithms each side accepts from its peer, in AWS-LC's default order (its
/// `SSL_SIGN_*` code points), then Ed25519.
const VERIFY_ALGORITHMS: &[u16] = &[
    openssl_sys::SSL_SIGN_ECDSA_SECP256R1_SHA256 as u16,
    openssl_sys::SSL_SIGN_RSA_PSS_RSAE_SHA256 as u16,
    openssl_sys::SSL_SIGN_RSA_PKCS1_SHA256 as u16,
    openssl_sys::SSL_SIGN_ECDSA_SECP384R1_SHA384 as u16,
    openssl_sys::SSL_SIGN_RSA_PSS_RSAE_SHA384 as u16,
    openssl_sys::SSL_SIGN_RSA_PKCS1_SHA384 as u16,
    openssl_sys::SSL_SIGN_ECDSA_SECP521R1_SHA512 as u16,
    openssl_sys::SSL_SIGN_RSA_PSS_RSAE_SHA512 as u16,
    openssl_sys::SSL_SIGN_RSA_PKCS1_SHA512 as u16,
    openssl_sys::SSL_SIGN_ED25519 as u16,
];

/// One side of a connection; client and server differ only in the state set on the `Ssl`.
pub struct AwsLcConnection {
    stream: SslStream<Endpoint>,
}

impl AwsLcConnection {
    fn new(ssl: Ssl, io: Endpoint) -> Result<Self, LibError> {
        let stream = SslStream::new(ssl, io).map_err(LibError::context("attaching the transport"))?;
        Ok(Self { stream })
    }

    /// `SSL_is_init_finished`, which the `openssl` crate wraps for OpenSSL only.
    fn handshake_done(&self) -> bool {
        // SAFETY: the SSL is live for the borrow of the stream, and this only reads it.
        unsafe { openssl_sys::SSL_is_init_finished(raw(self.stream.ssl())) == 1 }
    }
}

impl Connection for AwsLcConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        if self.handshake_done() {
            return shared::read_after_handshake(&self.stream);
        }
        match self.stream.do_handshake() {
            Ok(()) if self.stream.ssl().is_server() => shared::flush_tickets(&self.stream).map(|()| true),
            Ok(()) => Ok(true),
            // The transport said WouldBlock: the peer has to move first.
            Err(e) if matches!(e.code(), ErrorCode::WANT_READ | ErrorCode::WANT_WRITE) => Ok(false),
            // The error stack says only "CERTIFICATE_VERIFY_FAILED"; the verify result says why
            // (and is an error of its own, "invalid call", whenever no chain was verified).
            Err(e) if e.to_string().contains("CERTIFICATE_VERIFY_FAILED") => {
                Err(LibError::new(format!("{e} (certificate verification: {})", self.stream.ssl().verify_result())))
            }
            Err(e) => Err(LibError::new(e)),
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
        // `SSL_get_curve_id`: the group of the key exchange (its IANA id), for TLS 1.2's ECDHE
        // and TLS 1.3.
        // SAFETY: `raw(ssl)` is live for the borrow of `ssl`, and this only reads it.
        let group = match i32::from(unsafe { openssl_sys::SSL_get_curve_id(raw(ssl)) }) {
            openssl_sys::SSL_GROUP_X25519 => Group::X25519,
            openssl_sys::SSL_GROUP_SECP256R1 => Group::Secp256r1,
            openssl_sys::SSL_GROUP_SECP384R1 => Group::Secp384r1,
            openssl_sys::SSL_GROUP_X25519_MLKEM768 => Group::X25519Mlkem768,
            other => return Err(LibError::new(format!("negotiated an unexpected group ({other:#06x})"))),
        };
        let client_cert_verified = ssl
            .is_server()
            .then(|| ssl.peer_certificate().is_some() && ssl.verify_result() == openssl::x509::X509VerifyResult::OK);
        // A TLS 1.2 ticket is part of the connection's session. A TLS 1.3 client that keeps no
        // sessions discards the tickets that arrive, so whether one came is not known there.
        let ticket_received = match (ssl.is_server() || version == Version::Tls13, ssl.session()) {
            (true, _) => None,
            (false, None) => Some(false),
            // SAFETY: the session is live for the borrow of `ssl`, and this only reads it (a
            // `&SslSessionRef` points at the SSL_SESSION itself, as in `raw`).
            (false, Some(session)) => Some(
                unsafe {
                    openssl_sys::SSL_SESSION_has_ticket(
                        session as *const SslSessionRef as *const openssl_sys::SSL_SESSION,
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

// The stack on the plain AWS-LC; the FIPS stack's tests are fips_tests.rs, both's
// both_builds_tests.rs.
#[cfg(all(test, not(feature = "fips")))]
mod tests {
    use tlsbench_harness::{KeyType, Kind, Suite};
    use tlsbench_stack_openssl_shared::testing as shared_tests;

    use super::*;
    use tlsbench_harness::testing::{self, scenario};

    /// A handshake between configs built for two scenarios (see `testing::connect`).
    fn connect(client: &Scenario, server: &Scenario) -> Result<(AwsLcConnection, AwsLcConnection), String> {
        testing::connect(&AwsLc, &AwsLc, client, server)
    }

    #[test]
    fn every_supported_scenario_samples_with_positive_values_on_both_sides() {
        // Through the real driver, once each: every gate passes at least once.
        shared_tests::check_every_scenario_but(&AwsLc, shared_tests::no_ems_or_default_ed25519);
    }

    /// The `openssl` crate is on AWS-LC here, not the system's OpenSSL (whose string starts
    /// "OpenSSL 3."): the library is AWS-LC's own string and the aws-lc-sys release under it.
    #[test]
    fn the_library_is_aws_lc_with_its_version_and_crate_release() {
        let library = AwsLc.library();
        let (version, krate) = library.split_once(" (").unwrap_or_else(|| panic!("{library}"));
        let number = version.strip_prefix("AWS-LC ").unwrap_or_else(|| panic!("{library}"));
        assert!(number.split('.').count() == 3 && number.split('.').all(|n| n.parse::<u32>().is_ok()), "{library}");
        assert!(krate.starts_with("aws-lc-sys 0.") && krate.ends_with(')'), "{library}");
        let backend = AwsLc.backend();
        assert_eq!((backend.name.as_str(), backend.version.as_str()), ("AWS-LC", number));
        assert_eq!(backend.detail, Some(format!("{}, static", krate.trim_end_matches(')'))));
    }

    /// Full handshakes in both versions with ECDSA P-256 and RSA-2048 keys (and every other key
    /// and group): both sides report what was negotiated. The gates accept a group of None, so
    /// they alone would not notice a side that stopped reporting it.
    #[test]
    fn both_sides_report_what_was_negotiated() {
        for &version in Version::ALL {
            for &group in &AwsLc.capabilities().groups {
                for &key in KeyType::ALL {
                    let suite = Suite::Chacha20Poly1305;
                    // ML-KEM exists in TLS 1.3 only.
                    let Ok(asked) = Scenario::new(Kind::HandshakeFull, version, group, key, suite) else { continue };
                    crate::both_builds_tests::assert_full_handshake_reports_what_was_asked(&asked);
                }
            }
        }
    }

    #[test]
    fn a_verified_client_certificate_is_reported() {
        shared_tests::check_a_verified_client_certificate_is_reported(&AwsLc);
    }

    #[test]
    fn ems_off_and_ed25519_with_the_defaults_are_declared_unsupported() {
        let reason = |name: &str| AwsLc.capabilities().check("aws-lc", &scenario(name)).map_err(|e| e.to_string());
        assert_eq!(
            reason("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems"),
            Err("aws-lc: extended master secret cannot be switched off".into())
        );
        assert_eq!(
            reason("handshake-full_1.3_default_ed25519_default"),
            Err("aws-lc: its default signature algorithms leave Ed25519 out, so it rejects an Ed25519 certificate"
                .into())
        );
    }

    #[test]
    fn tls13_suites_are_pinned_on_both_sides() {
        shared_tests::check_tls13_suites_are_pinned_on_both_sides(&AwsLc);
    }

    #[test]
    fn close_notify_each_way_after_a_byte_each_way() {
        shared_tests::check_close_notify_each_way(&AwsLc);
    }

    /// Data crosses intact both ways, over AES-256-GCM in both versions.
    #[test]
    fn data_crosses_in_both_directions() {
        for name in ["transfer_1.3_x25519_ecdsa-p256_aes-256-gcm", "transfer_1.2_x25519_rsa-2048_aes-256-gcm"] {
            let asked = scenario(name);
            let (mut client, mut server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(client.negotiated().map(|n| n.suite).map_err(|e| e.0), Ok(Suite::Aes256Gcm), "{name}");
            testing::check_data_crosses(&asked.name(), &mut client, &mut server);
        }
    }
}

#[cfg(all(test, feature = "fips"))]
mod fips_tests;

#[cfg(test)]
mod both_builds_tests;
