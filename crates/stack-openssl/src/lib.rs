//! tlsbench adapter for OpenSSL (libssl) through the `openssl` crate: one `SslContext`
//! pinned to the scenario per side, and `SslStream`s over the in-memory transport. The system's
//! libssl 3 in runner-openssl; another release (3.x, 4.x, or 1.1.1), built from source and linked
//! statically, in runner-openssl-static (scripts/build-openssl.sh). What 1.1.1 lacks is gated
//! at runtime on the release linked ([`is_openssl_3`]).

use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::{Arc, Mutex, PoisonError};

use openssl::ssl::{
    ErrorCode, ShutdownState, Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions, SslRef, SslSession,
    SslSessionCacheMode, SslSessionRef, SslStream, SslVersion,
};
use openssl::x509::X509VerifyResult;
use shared::raw;
use tlsbench_harness::{
    Backend, Capabilities, Connection, Endpoint, Exclusion, Group, LibError, Negotiated, Pki, Scenario, Side, Stack,
    Version,
};

// trust_store, use_chain_and_key, the server's config, the client's connection, send, receive,
// close and more, shared with stack-boringssl: written once against either crate's API.
tlsbench_stack_openssl_shared::shared_adapter_code!(mod shared for openssl, openssl_sys);

/// `SSL_get_negotiated_group` is a macro over `SSL_ctrl` in OpenSSL 3.0's `ssl.h`, and
/// openssl-sys declares neither the macro nor this command number.
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;
/// `SSL_get_peer_tmp_key`'s command (1.1.1's `ssl.h`), which openssl-sys wraps only from 3.0 on.
const SSL_CTRL_GET_PEER_TMP_KEY: c_int = 109;
/// What `SSL_get_negotiated_group` returns for a group without a NID (`TLSEXT_nid_unknown`,
/// ORed with the group's TLS code point), as X25519MLKEM768 (0x11EC) is in OpenSSL 3.5.
const NID_X25519MLKEM768: c_int = 0x0100_0000 | 0x11EC;
/// `SSL_OP_NO_EXTENDED_MASTER_SECRET` (`SSL_OP_BIT(0)` in OpenSSL 3.0's `ssl.h`), which the
/// `openssl` crate does not name.
const SSL_OP_NO_EXTENDED_MASTER_SECRET: u64 = 1;

/// OpenSSL: the system's, linked dynamically, or one linked statically (runner-openssl-static).
pub struct OpenSsl;

/// A client context, and the sessions it resumes.
pub struct ClientConfig {
    ctx: SslContext,
    sessions: Arc<Mutex<Sessions>>,
}

/// The sessions servers gave a client. A TLS 1.3 ticket is for one connection (RFC 8446,
/// C.4): when connections in flight shared the last session, a quarter to half of them did full
/// handshakes (TLS 1.3, 4 in flight, against OpenSSL's server and nginx alike). So each
/// connection takes an unused session, the newest first, of up to as many as rustls's client
/// keeps per server, or as many as the config's connections in flight; once none is left (a
/// TLS 1.2 session ID brings no new one), the last. The last alone does not do for many
/// connections at once: when one resumes it and receives a ticket, OpenSSL's client marks the
/// session it offered not resumable (`SSL_CTX_remove_session`), and the others that offer it
/// do full handshakes (16 threads on a shared config did).
struct Sessions {
    unused: VecDeque<SslSession>,
    last: Option<SslSession>,
    /// How many unused sessions it keeps.
    room: usize,
}

const UNUSED_SESSIONS_KEPT: usize = 8;

impl Sessions {
    fn new(in_flight: usize) -> Sessions {
        let room = in_flight.max(UNUSED_SESSIONS_KEPT);
        Sessions { unused: VecDeque::with_capacity(room), last: None, room }
    }

    fn keep(&mut self, session: SslSession) {
        self.unused.push_front(session.clone());
        self.unused.truncate(self.room);
        self.last = Some(session);
    }

    fn take(&mut self) -> Option<SslSession> {
        self.unused.pop_front().or_else(|| self.last.clone())
    }
}

impl Stack for OpenSsl {
    type ClientConfig = ClientConfig;
    type ServerConfig = SslContext;
    type Client = OpenSslConnection;
    type Server = OpenSslConnection;

    fn id(&self) -> &'static str {
        "openssl"
    }

    fn library(&self) -> String {
        // The runtime library's own string: the loaded libssl may differ from the headers built against.
        let version = openssl::version::version();
        // A runner of a maintainer's tree or prefix (scripts/build-openssl.sh PATH) names it:
        // `checkout 1a2b3c4d5e from /src/openssl`, or `install /opt/ossl`.
        match option_env!("TLSBENCH_OPENSSL_SOURCE") {
            Some(source) if !source.is_empty() => format!("{version} ({source})"),
            _ => version.to_string(),
        }
    }

    /// libssl's crypto is the libcrypto beside it: its own version string. A static one says
    /// how it was built: its platform and compiler flags, as it reports them.
    fn backend(&self) -> Backend {
        let detail = if linked_statically() {
            format!("static, {}, {}", openssl::version::platform(), openssl::version::c_flags())
        } else {
            "system library".into()
        };
        Backend::new("OpenSSL libcrypto", openssl_version_number(openssl::version::version()), Some(detail))
    }

    fn capabilities(&self) -> Capabilities {
        let mut groups = vec![Group::X25519, Group::Secp256r1, Group::Secp384r1];
        // ML-KEM arrived in OpenSSL 3.5 (the system's is 3.0).
        if openssl::version::number() >= 0x3050_0000 {
            groups.push(Group::X25519Mlkem768);
        }
        let mut capabilities = Capabilities { groups, ..Capabilities::everything() };
        if !is_openssl_3() {
            capabilities.ems_off = false;
            capabilities.exclusions.push(Exclusion::new(
                "*_no-ems",
                "OpenSSL 1.1.1 cannot switch the extended master secret off \
                 (SSL_OP_NO_EXTENDED_MASTER_SECRET came in 3.0)",
            ));
        }
        capabilities
    }

    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<ClientConfig, LibError> {
        self.client_config_for(scenario, pki, 1)
    }

    fn client_config_for(&self, scenario: &Scenario, pki: &Pki, in_flight: usize) -> Result<ClientConfig, LibError> {
        let mut ctx = shared::client_context(context(Side::Client, scenario)?, scenario, pki)?;
        let sessions = Arc::new(Mutex::new(Sessions::new(in_flight)));
        if scenario.kind.is_resumption() {
            // Keep each new session (the TLS 1.2 session, or the session of each TLS 1.3
            // ticket) for the next connections; OpenSSL's own client cache is not used.
            ctx.set_session_cache_mode(SslSessionCacheMode::CLIENT | SslSessionCacheMode::NO_INTERNAL);
            let kept = sessions.clone();
            ctx.set_new_session_callback(move |_, new| kept.lock().unwrap_or_else(PoisonError::into_inner).keep(new));
        }
        Ok(ClientConfig { ctx: ctx.build(), sessions })
    }

    fn client_config_system(&self, scenario: &Scenario, pki: &Pki) -> Option<Result<ClientConfig, LibError>> {
        let build = || {
            let ctx = shared::client_context_system(context(Side::Client, scenario)?, scenario, pki)?;
            Ok(ClientConfig { ctx: ctx.build(), sessions: Arc::new(Mutex::new(Sessions::new(1))) })
        };
        Some(build())
    }

    fn trust_roots(&self, config: &ClientConfig) -> Option<usize> {
        Some(shared::trust_roots(&config.ctx))
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<SslContext, LibError> {
        shared::server_config(context(Side::Server, scenario)?, scenario, pki)
    }

    fn new_client(&self, config: &ClientConfig, io: Endpoint) -> Result<OpenSslConnection, LibError> {
        let mut ssl = shared::client_ssl(&config.ctx)?;
        let session = config.sessions.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(session) = session {
            // SAFETY: the session comes from a connection of this same context.
            unsafe { ssl.set_session(&session) }.map_err(LibError::context("setting the session to resume"))?;
        }
        ssl.set_connect_state();
        let mut client = OpenSslConnection::new(ssl, io)?;
        client.sessions = Some(config.sessions.clone());
        Ok(client)
    }

    fn new_server(&self, config: &SslContext, io: Endpoint) -> Result<OpenSslConnection, LibError> {
        let mut ssl = Ssl::new(config).map_err(LibError::context("creating the server connection"))?;
        ssl.set_accept_state();
        OpenSslConnection::new(ssl, io)
    }
}

/// A context builder for one side that allows exactly the scenario's version and, pinned,
/// exactly its cipher suite and group, with session resumption off. With the library's
/// defaults, the rest is OpenSSL's own: its suites and groups, a server session cache, and two
/// TLS 1.3 tickets after each full handshake.
fn context(side: Side, scenario: &Scenario) -> Result<SslContextBuilder, LibError> {
    let method = match side {
        Side::Client => SslMethod::tls_client(),
        Side::Server => SslMethod::tls_server(),
    };
    let mut ctx = SslContextBuilder::new(method).map_err(LibError::context("creating the context"))?;
    shared::pin_version(&mut ctx, scenario.version)?;
    let Some((_, suite)) = scenario.pins() else { return Ok(ctx) };
    let cipher = suite.openssl_name(scenario.version, scenario.key);
    // Each list applies to its own version only; under the version pin the other list's
    // defaults are neither offered nor accepted, so it is left alone.
    match scenario.version {
        Version::Tls12 => ctx.set_cipher_list(cipher),
        Version::Tls13 => ctx.set_ciphersuites(cipher),
    }
    .map_err(LibError::context(&format!("setting the cipher suite {cipher}")))?;
    let groups = shared::groups_list(scenario, side);
    ctx.set_groups_list(&groups).map_err(LibError::context(&format!("setting the groups {groups}")))?;
    // Only OpenSSL can switch the extended master secret off (BoringSSL always uses it), from
    // 3.0 on: in 1.1.1 the bit is unused, and its capabilities exclude the scenarios.
    if !scenario.ems {
        ctx.set_options(SslOptions::from_bits_retain(SSL_OP_NO_EXTENDED_MASTER_SECRET));
    }
    let tickets = shared::resumption_only_as_asked(&mut ctx, scenario.kind);
    ctx.set_num_tickets(tickets).map_err(LibError::context("setting the number of TLS 1.3 tickets"))?;
    Ok(ctx)
}

/// One side of a connection; client and server differ only in the state set on the `Ssl`.
pub struct OpenSslConnection {
    stream: SslStream<Endpoint>,
    /// A client's store of sessions to resume.
    sessions: Option<Arc<Mutex<Sessions>>>,
}

impl OpenSslConnection {
    fn new(ssl: Ssl, io: Endpoint) -> Result<Self, LibError> {
        let stream = SslStream::new(ssl, io).map_err(LibError::context("attaching the transport"))?;
        Ok(Self { stream, sessions: None })
    }

    /// After a client's TLS 1.2 handshake that resumed, keeps the connection's session, as a
    /// client that saves `SSL_get1_session` after each connection does. A server that issues a
    /// new ticket when it resumes (rustls, Go, JSSE do; OpenSSL, BoringSSL, GnuTLS and s2n-tls
    /// do not) makes OpenSSL's client retire the session it offered (not resumable any more:
    /// `SSL_CTX_remove_session` in `tls_process_new_session_ticket`, as the client cache mode is
    /// on) and hold the new ticket in a copy, without calling the new-session callback for it
    /// (`ssl_update_cache` skips resumed TLS 1.2 handshakes): with the callback alone, the next
    /// connection would offer a retired session and do a full handshake, every other one. So
    /// in 3.0.19, 3.5.5, 3.6.3 and 4.0.3 (docs/stacks.md; the tests below pin it).
    fn keep_resumed_session(&self) {
        let ssl = self.stream.ssl();
        let Some(sessions) = &self.sessions else { return };
        if ssl.session_reused() && ssl.version2() == Some(SslVersion::TLS1_2) {
            if let Some(session) = ssl.session() {
                sessions.lock().unwrap_or_else(PoisonError::into_inner).keep(session.to_owned());
            }
        }
    }
}

impl Drop for OpenSslConnection {
    // OpenSSL drops a connection's session from the cache, and marks it not resumable, when the
    // connection is freed without a shutdown (`ssl_clear_bad_session`). Connections here end as
    // if closed cleanly, without measuring a close_notify exchange, so sessions stay resumable.
    fn drop(&mut self) {
        self.stream.set_shutdown(ShutdownState::SENT | ShutdownState::RECEIVED);
    }
}

impl Connection for OpenSslConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        if self.stream.ssl().is_init_finished() {
            return shared::read_after_handshake(&self.stream);
        }
        match self.stream.do_handshake() {
            Ok(()) => {
                self.keep_resumed_session();
                Ok(true)
            }
            // The transport said WouldBlock: the peer has to move first.
            Err(e) if matches!(e.code(), ErrorCode::WANT_READ | ErrorCode::WANT_WRITE) => Ok(false),
            // OpenSSL's error stack says only "certificate verify failed"; the verify result says why.
            Err(e) => Err(match self.stream.ssl().verify_result() {
                X509VerifyResult::OK => LibError::new(e),
                verify => LibError::new(format!("{e} (certificate verification: {verify})")),
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
        // As a NID (BoringSSL's `SSL_get_curve_id` is the IANA id).
        let group = match negotiated_group_nid(ssl) {
            None => None,
            Some(openssl_sys::NID_X25519) => Some(Group::X25519),
            Some(openssl_sys::NID_X9_62_prime256v1) => Some(Group::Secp256r1),
            Some(openssl_sys::NID_secp384r1) => Some(Group::Secp384r1),
            Some(NID_X25519MLKEM768) => Some(Group::X25519Mlkem768),
            Some(nid) => return Err(LibError::new(format!("negotiated an unexpected group (NID {nid})"))),
        };
        let client_cert_verified =
            ssl.is_server().then(|| ssl.peer_certificate().is_some() && ssl.verify_result() == X509VerifyResult::OK);
        // A ticket that arrives becomes the connection's session (in TLS 1.3, a new one for each).
        let ticket_received = match (ssl.is_server(), ssl.session()) {
            (true, _) => None,
            (false, None) => Some(false),
            // SAFETY: the session is live for the borrow of `ssl`, and this only reads it.
            (false, Some(session)) => Some(
                unsafe { SSL_SESSION_has_ticket(session as *const SslSessionRef as *const openssl_sys::SSL_SESSION) }
                    == 1,
            ),
        };
        Ok(Negotiated {
            version,
            suite,
            group,
            resumed: ssl.session_reused(),
            ems: shared::ems(ssl, version),
            client_cert_verified,
            ticket_received,
        })
    }
}

/// The NID of the key-exchange group. From 3.0, `SSL_get_negotiated_group`: on both sides and
/// for both TLS 1.2 (ECDHE) and TLS 1.3. OpenSSL 1.1.1 has no such call and keeps no group id
/// after a TLS 1.2 handshake; what it keeps is the peer's ephemeral key (`SSL_get_peer_tmp_key`),
/// whose curve is the group: on both sides in TLS 1.3, and on a TLS 1.2 client after a full
/// handshake. A 1.1.1 TLS 1.2 server frees both keys of its exchange when done, and a resumed
/// TLS 1.2 handshake exchanges none: no group then (None, which the gates accept).
fn negotiated_group_nid(ssl: &SslRef) -> Option<c_int> {
    if !is_openssl_3() {
        return peer_key_curve(ssl);
    }
    // SAFETY: `raw(ssl)` is a live SSL for the borrow's duration, and this command only reads it.
    let nid = unsafe { openssl_sys::SSL_ctrl(raw(ssl), SSL_CTRL_GET_NEGOTIATED_GROUP, 0, ptr::null_mut()) };
    // NIDs are small positive ints; anything else fails the group match with its value shown.
    Some(c_int::try_from(nid).unwrap_or(-1))
}

/// The curve's NID of the peer's ephemeral key, if the connection holds one: X25519's key type is
/// its NID, an EC key's curve is its group's.
fn peer_key_curve(ssl: &SslRef) -> Option<c_int> {
    use openssl_sys::{EVP_PKEY, EVP_PKEY_EC};
    let mut key: *mut EVP_PKEY = ptr::null_mut();
    // SAFETY: a live SSL; on success the library hands over a reference to the key (counted up),
    // which is given back below.
    let held = unsafe {
        openssl_sys::SSL_ctrl(raw(ssl), SSL_CTRL_GET_PEER_TMP_KEY, 0, (&mut key as *mut *mut EVP_PKEY).cast())
    };
    if held != 1 || key.is_null() {
        return None;
    }
    // SAFETY: `key` is a live EVP_PKEY we hold a reference to; the EC_KEY too, from get1.
    unsafe {
        let nid = match openssl_sys::EVP_PKEY_id(key) {
            EVP_PKEY_EC => match openssl_sys::EVP_PKEY_get1_EC_KEY(key) {
                ec if ec.is_null() => 0,
                ec => {
                    let curve = openssl_sys::EC_GROUP_get_curve_name(openssl_sys::EC_KEY_get0_group(ec));
                    openssl_sys::EC_KEY_free(ec);
                    curve
                }
            },
            id => id,
        };
        openssl_sys::EVP_PKEY_free(key);
        Some(nid)
    }
}

/// Whether the OpenSSL linked is 3.0 or later, rather than 1.1.1: the one release line before 3
/// that the adapter builds against (TLS 1.3, `SSL_CTX_set_ciphersuites`, tickets' count).
pub fn is_openssl_3() -> bool {
    openssl::version::number() >= 0x3000_0000
}

extern "C" {
    /// In libssl since 1.1.1; openssl-sys does not declare it.
    fn SSL_SESSION_has_ticket(session: *const openssl_sys::SSL_SESSION) -> c_int;
}

/// Whether libcrypto is part of the same object as this adapter (linked statically into the
/// runner) rather than a shared library loaded beside it.
fn linked_statically() -> bool {
    /// The start of the object (program or shared library) that holds `address`.
    fn object_base(address: *const c_void) -> Option<*mut c_void> {
        // SAFETY: an all-zero Dl_info is valid (null pointers); dladdr only reads the address
        // and fills `info`.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        (unsafe { libc::dladdr(address, &mut info) } != 0).then_some(info.dli_fbase)
    }
    let libcrypto = object_base(openssl_sys::OpenSSL_version as *const c_void);
    libcrypto.is_some() && libcrypto == object_base(linked_statically as *const c_void)
}

/// `3.0.19` of `OpenSSL 3.0.19 27 Jan 2026`, or the whole string if it has no second word.
pub fn openssl_version_number(version: &str) -> String {
    version.split_whitespace().nth(1).unwrap_or(version).to_string()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tlsbench_harness::driver::{self, SampleSpec};
    use tlsbench_harness::{KeyType, Kind, Link, Suite};
    use tlsbench_stack_openssl_shared::testing as shared_tests;

    use super::*;
    use tlsbench_harness::testing::{self, pki, scenario};

    /// A handshake between configs built for two scenarios (see `testing::connect`).
    fn connect(client: &Scenario, server: &Scenario) -> Result<(OpenSslConnection, OpenSslConnection), String> {
        testing::connect(&OpenSsl, &OpenSsl, client, server)
    }

    #[test]
    fn every_supported_scenario_samples_with_positive_values_on_both_sides() {
        // Through the real driver, once each: every gate passes at least once.
        let measured = testing::check_every_supported_scenario(&OpenSsl, &OpenSsl);
        // Everything but ML-KEM; on 1.1.1, also but the no-ems scenarios (854 left).
        let least = if is_openssl_3() { 1000 } else { 850 };
        assert!(measured > least, "only {measured} scenarios");
        assert!(OpenSsl.library().starts_with("OpenSSL "), "{}", OpenSsl.library());
    }

    #[test]
    fn a_server_chain_from_another_ca_fails_verification() {
        let error = shared_tests::check_a_server_chain_from_another_ca_fails_verification(&OpenSsl, "x25519");
        assert!(error.contains("certificate verify failed"), "{error}");
    }

    #[test]
    fn a_certificate_for_another_host_name_fails_verification() {
        let error = shared_tests::check_a_certificate_for_another_host_name_fails_verification(
            &OpenSsl,
            "x25519",
            |config, io| {
                let mut ssl = Ssl::new(&config.ctx).expect("creating the client connection");
                ssl.param_mut().set_host("other.tlsbench.test").expect("setting the host name to verify");
                ssl.set_connect_state();
                OpenSslConnection::new(ssl, io)
            },
        );
        assert!(error.contains("certificate verify failed"), "{error}");
    }

    /// The gates accept a group of None, so they alone would not notice a side that stopped
    /// reporting it; this covers every group, key type and version on both sides.
    #[test]
    fn both_sides_report_what_was_negotiated() {
        for &version in Version::ALL {
            for &group in &OpenSsl.capabilities().groups {
                for &key in KeyType::ALL {
                    let suite = Suite::Chacha20Poly1305;
                    // X25519MLKEM768 (3.5 and later) exists in TLS 1.3 only: no such scenario in 1.2.
                    if group == Group::X25519Mlkem768 && version == Version::Tls12 {
                        continue;
                    }
                    let asked =
                        Scenario::new(Kind::HandshakeFull, version, group, key, suite).expect("a valid scenario");
                    let (client, server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{asked}: {e}"));
                    let ems = (version == Version::Tls12).then_some(true);
                    let expected = Negotiated {
                        version,
                        suite,
                        group: Some(group),
                        resumed: false,
                        ems,
                        client_cert_verified: None,
                        ticket_received: Some(false),
                    };
                    assert_eq!(client.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: client");
                    // 1.1.1's TLS 1.2 server keeps nothing of its key exchange (`negotiated_group_nid`).
                    let group = (is_openssl_3() || version == Version::Tls13).then_some(group);
                    let expected =
                        Negotiated { group, client_cert_verified: Some(false), ticket_received: None, ..expected };
                    assert_eq!(server.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: server");
                }
            }
        }
    }

    #[test]
    fn ems_off_and_a_verified_client_certificate_are_reported() {
        let mut asked = scenario("handshake-full_1.2_secp384r1_ed25519_aes-256-gcm_mtls_no-ems");
        if !is_openssl_3() {
            // 1.1.1 has no option to switch it off: the scenario is unsupported, saying why, and
            // the client certificate is checked with the extended master secret on.
            let refused = OpenSsl.capabilities().check("openssl@1.1.1", &asked).map_err(|e| e.to_string());
            assert_eq!(
                refused,
                Err("OpenSSL 1.1.1 cannot switch the extended master secret off \
                     (SSL_OP_NO_EXTENDED_MASTER_SECRET came in 3.0)"
                    .into())
            );
            asked.ems = true;
        }
        let (client, server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            client.negotiated().map_err(|e| e.0).map(|n| (n.ems, n.client_cert_verified)),
            Ok((Some(asked.ems), None))
        );
        assert_eq!(
            server.negotiated().map_err(|e| e.0).map(|n| (n.ems, n.client_cert_verified)),
            Ok((Some(asked.ems), Some(true)))
        );
    }

    #[test]
    fn close_notify_each_way_after_a_byte_each_way() {
        shared_tests::check_close_notify_each_way(&OpenSsl);
    }

    /// A TLS 1.2 ticket server that issues a new ticket in every handshake it resumes, as
    /// rustls's, Go's and JSSE's do. OpenSSL's own server renews only when its ticket callback
    /// says so (`SSL_TICKET_RETURN_USE_RENEW`), which this one always does.
    fn renewing_server(asked: &Scenario) -> SslContext {
        use openssl_sys::{SSL, SSL_CTX, SSL_SESSION};
        type Generate = extern "C" fn(*mut SSL, *mut c_void) -> c_int;
        type Decrypt = extern "C" fn(*mut SSL, *mut SSL_SESSION, *const u8, usize, c_int, *mut c_void) -> c_int;
        extern "C" {
            /// In libssl since 1.1.1; openssl-sys does not declare it.
            fn SSL_CTX_set_session_ticket_cb(
                ctx: *mut SSL_CTX,
                generate: Option<Generate>,
                decrypt: Option<Decrypt>,
                arg: *mut c_void,
            ) -> c_int;
        }
        // ssl.h's SSL_TICKET_SUCCESS, SSL_TICKET_SUCCESS_RENEW, SSL_TICKET_RETURN_IGNORE_RENEW
        // and SSL_TICKET_RETURN_USE_RENEW (the same from 1.1.1 to 4.0).
        extern "C" fn renew(
            _: *mut SSL,
            _: *mut SSL_SESSION,
            _: *const u8,
            _: usize,
            status: c_int,
            _: *mut c_void,
        ) -> c_int {
            match status {
                5 | 6 => 4,
                // No ticket or one it cannot decrypt: a full handshake, with a new ticket.
                _ => 2,
            }
        }
        let ctx = OpenSsl.server_config(asked, pki()).unwrap_or_else(|e| panic!("{e}"));
        let raw_ctx = &*ctx as *const openssl::ssl::SslContextRef as *mut SSL_CTX;
        // SAFETY: a live context, not yet shared with any connection; the callback keeps no state.
        assert_eq!(unsafe { SSL_CTX_set_session_ticket_cb(raw_ctx, None, Some(renew), ptr::null_mut()) }, 1);
        ctx
    }

    fn is_resumable(session: &SslSessionRef) -> bool {
        extern "C" {
            /// In libssl since 1.1.1; openssl-sys does not declare it.
            fn SSL_SESSION_is_resumable(session: *const openssl_sys::SSL_SESSION) -> c_int;
        }
        // SAFETY: a live session, only read.
        unsafe { SSL_SESSION_is_resumable(session as *const SslSessionRef as *const openssl_sys::SSL_SESSION) == 1 }
    }

    /// One connection of `config`'s client to `server`, offering the session the client's store
    /// gives it; with `callback_only`, the client keeps new sessions from OpenSSL's new-session
    /// callback alone (not the connection's session after a resumed TLS 1.2 handshake).
    fn connect_once(config: &ClientConfig, server: &SslContext, callback_only: bool) -> OpenSslConnection {
        let link = Link::new();
        let mut client = OpenSsl.new_client(config, link.client()).unwrap_or_else(|e| panic!("{e}"));
        if callback_only {
            client.sessions = None;
        }
        let mut server = OpenSsl.new_server(server, link.server()).unwrap_or_else(|e| panic!("{e}"));
        tlsbench_harness::step::handshake_pair(&mut client, &mut server, &link, &mut tlsbench_harness::step::Unmetered)
            .unwrap_or_else(|e| panic!("{e}"));
        client
    }

    /// What OpenSSL's client does, at every release checked (3.0.19, 3.5.5, 3.6.3, 4.0.3), when
    /// a TLS 1.2 handshake resumes from a ticket and the server sends a new one: it retires the
    /// session it offered (`tls_process_new_session_ticket` calls `SSL_CTX_remove_session` on
    /// it when the client cache mode is on, which marks it not resumable) and gives the new one
    /// to no new-session callback (`ssl_update_cache` skips resumed TLS 1.2 handshakes). A client
    /// keeping sessions from the callback alone then resumes every other connection. Should this
    /// fail, the OpenSSL linked behaves otherwise: docs/stacks.md says which releases do this.
    #[test]
    fn a_renewed_tls12_ticket_retires_the_session_offered_and_reaches_no_callback() {
        let asked = scenario("handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm");
        let config = OpenSsl.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
        let kept = |config: &ClientConfig| {
            let sessions = config.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            (sessions.unused.len(), sessions.last.as_ref().map(|s| s.id().to_vec()))
        };
        let server = renewing_server(&asked);
        // The full handshake: the callback keeps its session.
        assert!(!connect_once(&config, &server, true).stream.ssl().session_reused());
        let offered = config.sessions.lock().unwrap_or_else(PoisonError::into_inner).last.clone().expect("a session");
        assert!(is_resumable(&offered));
        // It resumes, and a new ticket arrives in the abbreviated handshake.
        let client = connect_once(&config, &server, true);
        let ssl = client.stream.ssl();
        assert!(ssl.session_reused());
        let renewed = ssl.session().expect("the connection's session");
        assert!(is_resumable(renewed));
        assert_ne!(renewed.id(), offered.id(), "the connection holds a new session, for the new ticket");
        assert!(!is_resumable(&offered), "the session offered is retired");
        // The callback was not called: the store holds nothing but the session it was given.
        assert_eq!(kept(&config), (0, Some(offered.id().to_vec())));
        // So the next connection, offering it, does a full handshake, whose session the
        // callback keeps; and the one after resumes again.
        assert!(!connect_once(&config, &server, true).stream.ssl().session_reused());
        assert!(connect_once(&config, &server, true).stream.ssl().session_reused());

        // A server that does not renew (OpenSSL's by default): the session stays resumable.
        let config = OpenSsl.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
        let server = OpenSsl.server_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
        connect_once(&config, &server, true);
        let offered = config.sessions.lock().unwrap_or_else(PoisonError::into_inner).last.clone().expect("a session");
        for _ in 0..3 {
            assert!(connect_once(&config, &server, true).stream.ssl().session_reused());
        }
        assert!(is_resumable(&offered));
    }

    /// The adapter keeps the connection's session after a resumed TLS 1.2 handshake, as a client
    /// saving `SSL_get1_session` after each connection does: against a server that renews its
    /// ticket every time, every connection resumes, each one checked by the resumption gate.
    #[test]
    fn every_connection_resumes_from_a_server_that_renews_its_tls12_ticket() {
        let spec = SampleSpec::timed(Duration::ZERO, Duration::from_millis(20));
        for name in [
            "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.2_x25519_rsa-2048_aes-256-gcm_mtls",
        ] {
            let asked = scenario(name);
            let config = OpenSsl.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
            let report =
                driver::sample_with_configs(&OpenSsl, &OpenSsl, config, renewing_server(&asked), &asked, &spec)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(report.iterations > 2, "{name}: {} handshakes", report.iterations);
        }
        // Connection by connection, from a full handshake on: with the callback alone, every
        // other one resumes (the cell's gate failed half of its handshakes); keeping the
        // connection's session, all but the first.
        let asked = scenario("handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm");
        let server = renewing_server(&asked);
        for (callback_only, expected) in
            [(true, [false, true, false, true, false, true]), (false, [false, true, true, true, true, true])]
        {
            let config = OpenSsl.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
            let resumed = expected.map(|_| connect_once(&config, &server, callback_only).stream.ssl().session_reused());
            assert_eq!(resumed, expected, "callback only: {callback_only}");
        }
    }

    #[test]
    fn data_crosses_in_both_directions() {
        shared_tests::check_data_crosses_in_both_directions(&OpenSsl);
    }
}
