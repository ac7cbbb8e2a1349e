//! tlsbench adapter for the system's OpenSSL (libssl 3) through the `openssl` crate: one
//! `SslContext` pinned to the scenario per side, and `SslStream`s over the in-memory transport.

use std::ffi::c_int;
use std::fmt;
use std::ptr;

use openssl::pkey::PKey;
use openssl::ssl::{
    ErrorCode, Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions, SslRef, SslSessionCacheMode, SslStream,
    SslVerifyMode, SslVersion,
};
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::{X509VerifyResult, X509};
use tlsbench_harness::pki::SERVER_NAME;
use tlsbench_harness::{
    Capabilities, Connection, Endpoint, Group, KeyType, LibError, Negotiated, Pki, Scenario, Side, Stack, Suite,
    Version,
};

/// `SSL_get_negotiated_group` is a macro over `SSL_ctrl` in OpenSSL 3.0's `ssl.h`, and
/// openssl-sys declares neither the macro nor this command number.
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;

/// The system's OpenSSL, linked dynamically.
pub struct OpenSsl;

impl Stack for OpenSsl {
    type ClientConfig = SslContext;
    type ServerConfig = SslContext;
    type Client = OpenSslConnection;
    type Server = OpenSslConnection;

    fn id(&self) -> &'static str {
        "openssl"
    }

    fn library(&self) -> String {
        // The runtime library's own string: the loaded libssl may differ from the headers built against.
        openssl::version::version().to_string()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::everything()
    }

    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<SslContext, LibError> {
        let mut ctx = pinned(Side::Client, scenario)?;
        // A fresh store, not the system's default paths: the scenario's root is the only trust anchor.
        let mut roots = X509StoreBuilder::new().map_err(failed("creating the trust store"))?;
        let ca_pem = pki.server(scenario.key).ca_pem.as_bytes();
        let ca = X509::from_pem(ca_pem).map_err(failed("parsing the CA certificate"))?;
        roots.add_cert(ca).map_err(failed("adding the CA certificate to the trust store"))?;
        ctx.set_cert_store(roots.build());
        ctx.set_verify(SslVerifyMode::PEER);
        Ok(ctx.build())
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<SslContext, LibError> {
        let mut ctx = pinned(Side::Server, scenario)?;
        let credentials = pki.server(scenario.key);
        let chain = X509::stack_from_pem(credentials.chain_pem.as_bytes()).map_err(failed("parsing the server chain"))?;
        let mut chain = chain.into_iter();
        let leaf = chain.next().ok_or_else(|| LibError::new("the server chain PEM holds no certificate"))?;
        ctx.set_certificate(&leaf).map_err(failed("setting the server certificate"))?;
        for intermediate in chain {
            ctx.add_extra_chain_cert(intermediate).map_err(failed("adding an intermediate certificate"))?;
        }
        let key = PKey::private_key_from_pem(credentials.key_pem.as_bytes()).map_err(failed("parsing the server key"))?;
        ctx.set_private_key(&key).map_err(failed("setting the server key"))?;
        ctx.check_private_key().map_err(failed("checking the server key against its certificate"))?;
        Ok(ctx.build())
    }

    fn new_client(&self, config: &SslContext, io: Endpoint) -> Result<OpenSslConnection, LibError> {
        let mut ssl = Ssl::new(config).map_err(failed("creating the client connection"))?;
        ssl.set_hostname(SERVER_NAME).map_err(failed("setting the SNI host name"))?;
        // Chain verification alone would accept any name the CA signed.
        ssl.param_mut().set_host(SERVER_NAME).map_err(failed("setting the host name to verify"))?;
        ssl.set_connect_state();
        OpenSslConnection::new(ssl, io)
    }

    fn new_server(&self, config: &SslContext, io: Endpoint) -> Result<OpenSslConnection, LibError> {
        let mut ssl = Ssl::new(config).map_err(failed("creating the server connection"))?;
        ssl.set_accept_state();
        OpenSslConnection::new(ssl, io)
    }
}

/// A context builder for one side that allows exactly the scenario's version, cipher suite and
/// group, with session resumption off.
fn pinned(side: Side, scenario: &Scenario) -> Result<SslContextBuilder, LibError> {
    let method = match side {
        Side::Client => SslMethod::tls_client(),
        Side::Server => SslMethod::tls_server(),
    };
    let mut ctx = SslContextBuilder::new(method).map_err(failed("creating the context"))?;
    let version = match scenario.version {
        Version::Tls12 => SslVersion::TLS1_2,
        Version::Tls13 => SslVersion::TLS1_3,
    };
    ctx.set_min_proto_version(Some(version)).map_err(failed("setting the minimum TLS version"))?;
    ctx.set_max_proto_version(Some(version)).map_err(failed("setting the maximum TLS version"))?;
    let cipher = cipher_name(scenario.version, scenario.key, scenario.suite);
    // Each list applies to its own version only; under the version pin the other list's
    // defaults are neither offered nor accepted, so it is left alone.
    match scenario.version {
        Version::Tls12 => ctx.set_cipher_list(cipher),
        Version::Tls13 => ctx.set_ciphersuites(cipher),
    }
    .map_err(failed(&format!("setting the cipher suite {cipher}")))?;
    let groups = match side {
        Side::Client => scenario.client_groups(),
        Side::Server => std::slice::from_ref(&scenario.group),
    };
    let groups = groups.iter().map(|g| group_name(*g)).collect::<Vec<_>>().join(":");
    ctx.set_groups_list(&groups).map_err(failed(&format!("setting the groups {groups}")))?;
    // A full handshake must measure only the handshake: no session cache on either side, no
    // TLS 1.2 tickets, and no TLS 1.3 NewSessionTicket messages after the handshake.
    ctx.set_session_cache_mode(SslSessionCacheMode::OFF);
    ctx.set_options(SslOptions::NO_TICKET);
    ctx.set_num_tickets(0).map_err(failed("turning TLS 1.3 session tickets off"))?;
    Ok(ctx)
}

fn group_name(group: Group) -> &'static str {
    match group {
        Group::X25519 => "X25519",
        Group::Secp256r1 => "P-256",
    }
}

/// OpenSSL's name for the scenario's cipher suite. TLS 1.2 suites name the signature algorithm,
/// so they depend on the key type; TLS 1.3 suites do not.
fn cipher_name(version: Version, key: KeyType, suite: Suite) -> &'static str {
    match (version, key, suite) {
        (Version::Tls13, _, Suite::Aes128Gcm) => "TLS_AES_128_GCM_SHA256",
        (Version::Tls13, _, Suite::Aes256Gcm) => "TLS_AES_256_GCM_SHA384",
        (Version::Tls13, _, Suite::Chacha20Poly1305) => "TLS_CHACHA20_POLY1305_SHA256",
        (Version::Tls12, KeyType::Rsa2048, Suite::Aes128Gcm) => "ECDHE-RSA-AES128-GCM-SHA256",
        (Version::Tls12, KeyType::Rsa2048, Suite::Aes256Gcm) => "ECDHE-RSA-AES256-GCM-SHA384",
        (Version::Tls12, KeyType::Rsa2048, Suite::Chacha20Poly1305) => "ECDHE-RSA-CHACHA20-POLY1305",
        (Version::Tls12, KeyType::EcdsaP256, Suite::Aes128Gcm) => "ECDHE-ECDSA-AES128-GCM-SHA256",
        (Version::Tls12, KeyType::EcdsaP256, Suite::Aes256Gcm) => "ECDHE-ECDSA-AES256-GCM-SHA384",
        (Version::Tls12, KeyType::EcdsaP256, Suite::Chacha20Poly1305) => "ECDHE-ECDSA-CHACHA20-POLY1305",
    }
}

/// Turns an OpenSSL error into a `LibError` that says which step failed.
fn failed<E: fmt::Display>(what: &str) -> impl FnOnce(E) -> LibError + '_ {
    move |error| LibError::new(format!("{what}: {error}"))
}

/// One side of a connection; client and server differ only in the state set on the `Ssl`.
pub struct OpenSslConnection {
    stream: SslStream<Endpoint>,
}

impl OpenSslConnection {
    fn new(ssl: Ssl, io: Endpoint) -> Result<Self, LibError> {
        let stream = SslStream::new(ssl, io).map_err(failed("attaching the transport"))?;
        Ok(Self { stream })
    }
}

impl Connection for OpenSslConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        match self.stream.do_handshake() {
            Ok(()) => Ok(true),
            // The transport said WouldBlock: the peer has to move first.
            Err(e) if matches!(e.code(), ErrorCode::WANT_READ | ErrorCode::WANT_WRITE) => Ok(false),
            // OpenSSL's error stack says only "certificate verify failed"; the verify result says why.
            Err(e) => Err(match self.stream.ssl().verify_result() {
                X509VerifyResult::OK => LibError::new(e),
                verify => LibError::new(format!("{e} (certificate verification: {verify})")),
            }),
        }
    }

    fn send(&mut self, mut data: &[u8]) -> Result<(), LibError> {
        while !data.is_empty() {
            // The in-memory transport accepts every byte, so OpenSSL never has to wait to
            // write: any error here, WANT_WRITE included, is a failure.
            let n = self.stream.ssl_write(data).map_err(failed("SSL_write"))?;
            data = &data[n..];
        }
        Ok(())
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        match self.stream.ssl_read(buf) {
            Ok(n) => Ok(n),
            // No complete record yet, or the peer closed: nothing more to read now either way.
            Err(e) if matches!(e.code(), ErrorCode::WANT_READ | ErrorCode::ZERO_RETURN) => Ok(0),
            Err(e) => Err(LibError::new(format!("SSL_read: {e}"))),
        }
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        let ssl = self.stream.ssl();
        let version = match ssl.version2() {
            Some(SslVersion::TLS1_2) => Version::Tls12,
            Some(SslVersion::TLS1_3) => Version::Tls13,
            _ => return Err(LibError::new(format!("negotiated an unexpected protocol version: {}", ssl.version_str()))),
        };
        let cipher = ssl.current_cipher().ok_or_else(|| LibError::new("no cipher suite after the handshake"))?.name();
        let suite = Suite::ALL
            .iter()
            .copied()
            .find(|&suite| KeyType::ALL.iter().any(|&key| cipher_name(version, key, suite) == cipher))
            .ok_or_else(|| LibError::new(format!("negotiated an unexpected cipher suite: {cipher}")))?;
        let group = match negotiated_group_nid(ssl) {
            openssl_sys::NID_X25519 => Group::X25519,
            openssl_sys::NID_X9_62_prime256v1 => Group::Secp256r1,
            nid => return Err(LibError::new(format!("negotiated an unexpected group (NID {nid})"))),
        };
        Ok(Negotiated { version, suite, group: Some(group), resumed: ssl.session_reused() })
    }
}

/// `SSL_get_negotiated_group`: the NID of the key-exchange group, on both sides and for both
/// TLS 1.2 (ECDHE) and TLS 1.3 in OpenSSL 3.0.
fn negotiated_group_nid(ssl: &SslRef) -> c_int {
    // A `&SslRef` points at the `SSL` itself (foreign-types' contract, which is all
    // `ForeignTypeRef::as_ptr` does); `openssl` does not re-export that trait.
    let raw = ssl as *const SslRef as *mut openssl_sys::SSL;
    // SAFETY: `raw` is a live SSL for the borrow's duration, and this command only reads it.
    let nid = unsafe { openssl_sys::SSL_ctrl(raw, SSL_CTRL_GET_NEGOTIATED_GROUP, 0, ptr::null_mut()) };
    // NIDs are small positive ints; anything else fails the group match with its value shown.
    c_int::try_from(nid).unwrap_or(-1)
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;
    use std::time::Duration;

    use tlsbench_harness::driver::{sample, SampleSpec};
    use tlsbench_harness::{Kind, Link};

    use super::*;

    /// Certificates generated once for all tests; the PEMs are held in memory, so the directory
    /// can go as soon as they are loaded.
    fn pki() -> &'static Pki {
        static PKI: OnceLock<Pki> = OnceLock::new();
        PKI.get_or_init(|| {
            let dir = tempfile::tempdir().expect("creating a temporary directory");
            Pki::load_or_generate(dir.path()).expect("generating the test certificates")
        })
    }

    fn scenario(name: &str) -> Scenario {
        name.parse().expect("the test's scenario name is valid")
    }

    /// Steps a client built for `client_scenario` against a server built for `server_scenario`
    /// until both complete or one fails.
    fn connect(
        client_scenario: &Scenario,
        server_scenario: &Scenario,
    ) -> Result<(OpenSslConnection, OpenSslConnection), String> {
        let link = Link::new();
        let client_config = OpenSsl.client_config(client_scenario, pki()).map_err(|e| e.0)?;
        let server_config = OpenSsl.server_config(server_scenario, pki()).map_err(|e| e.0)?;
        let mut client = OpenSsl.new_client(&client_config, link.client()).map_err(|e| e.0)?;
        let mut server = OpenSsl.new_server(&server_config, link.server()).map_err(|e| e.0)?;
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

    #[test]
    fn every_scenario_samples_with_positive_values_on_both_sides() {
        let spec = SampleSpec { warmup: Duration::ZERO, min_time: Duration::from_millis(5) };
        for scenario in Scenario::all() {
            let report = sample(&OpenSsl, &OpenSsl, &scenario, pki(), &spec);
            let report = report.unwrap_or_else(|e| panic!("{scenario}: {e}"));
            assert!(report.iterations > 0, "{scenario}: no iterations");
            assert_eq!(report.values.len(), 2, "{scenario}: one value per side");
            for value in &report.values {
                assert!(value.value > 0.0 && value.value.is_finite(), "{scenario}: {value:?}");
            }
            assert!(report.client_library.starts_with("OpenSSL "), "{}", report.client_library);
        }
    }

    #[test]
    fn a_server_chain_from_another_ca_fails_verification() {
        // TLS 1.3 so that the cipher suite does not depend on the key type: the only mismatch
        // is the certificate.
        let client = scenario("handshake-full_1.3_x25519_rsa-2048_aes-128-gcm");
        let server = Scenario { key: KeyType::EcdsaP256, ..client };
        let Err(error) = connect(&client, &server) else { panic!("the client accepted a chain its CA did not sign") };
        assert!(error.starts_with("client: "), "{error}");
        assert!(error.contains("certificate verify failed"), "{error}");
        assert!(error.contains("unable to get local issuer certificate"), "{error}");
    }

    #[test]
    fn a_certificate_for_another_host_name_fails_verification() {
        let asked = scenario("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm");
        let link = Link::new();
        let client_config = OpenSsl.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
        let server_config = OpenSsl.server_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
        // `new_client` with another name to verify: the chain is still good, only the name differs.
        let mut ssl = Ssl::new(&client_config).expect("creating the client connection");
        ssl.param_mut().set_host("other.tlsbench.test").expect("setting the host name to verify");
        ssl.set_connect_state();
        let mut client = OpenSslConnection::new(ssl, link.client()).unwrap_or_else(|e| panic!("{e}"));
        let mut server = OpenSsl.new_server(&server_config, link.server()).unwrap_or_else(|e| panic!("{e}"));
        let error = loop {
            match client.handshake() {
                Err(e) => break e.0,
                Ok(true) => panic!("the client accepted a certificate for another host name"),
                Ok(false) => {
                    server.handshake().unwrap_or_else(|e| panic!("server: {e}"));
                }
            }
        };
        assert!(error.contains("certificate verify failed"), "{error}");
        assert!(error.contains("hostname mismatch"), "{error}");
    }

    /// The gates accept a group of None, so they alone would not notice a side that stopped
    /// reporting it; this covers secp256r1 and x25519 on both sides of both versions.
    #[test]
    fn both_sides_report_the_negotiated_group_version_and_suite() {
        for &version in Version::ALL {
            for &group in Group::ALL {
                for &key in KeyType::ALL {
                    let suite = Suite::Chacha20Poly1305;
                    let asked = Scenario { kind: Kind::HandshakeFull, version, group, key, suite };
                    let (client, server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{asked}: {e}"));
                    let expected = Negotiated { version, suite: asked.suite, group: Some(group), resumed: false };
                    assert_eq!(client.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: client");
                    assert_eq!(server.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: server");
                }
            }
        }
    }

    #[test]
    fn data_crosses_in_both_directions() {
        let asked = scenario("transfer_1.3_x25519_ecdsa-p256_aes-256-gcm");
        let (mut client, mut server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{e}"));
        let mut buf = [0u8; 64];
        assert_eq!(client.receive(&mut buf).map_err(|e| e.0), Ok(0), "nothing sent yet");
        server.send(b"from the server").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(client.receive(&mut buf).map_err(|e| e.0), Ok(15));
        assert_eq!(&buf[..15], b"from the server");
        client.send(b"from the client").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(server.receive(&mut buf).map_err(|e| e.0), Ok(15));
        assert_eq!(&buf[..15], b"from the client");
    }
}
