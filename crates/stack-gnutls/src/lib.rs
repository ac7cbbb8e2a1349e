//! tlsbench adapter for the system's GnuTLS (3.7) through thin hand-written bindings: a priority
//! string and credentials pinned to the scenario per side, sessions over the in-memory transport.

use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void, CStr, CString};
use std::io::{self, IoSlice, Read, Write};
use std::ptr;
use std::sync::{Arc, Mutex, PoisonError};

use tlsbench_harness::pki::SERVER_NAME;
use tlsbench_harness::{
    Backend, Capabilities, ClientAuth, Connection, Endpoint, Group, Kind, LibError, Negotiated, Pki, Scenario, Side,
    Stack, Suite, Version,
};

/// The system's GnuTLS, linked dynamically.
pub struct GnuTls;

/// One side's settings, shared by all its sessions: GnuTLS keeps pointers to the priority
/// cache and the credentials rather than copies, so each session holds this alive.
pub struct Config(Arc<Shared>);

struct Shared {
    side: Side,
    kind: Kind,
    /// False with the library's defaults (tlsbench's `Config::Defaults`).
    pinned: bool,
    version: Version,
    client_auth: ClientAuth,
    priority: sys::gnutls_priority_t,
    credentials: sys::gnutls_certificate_credentials_t,
    /// The host name clients verify; GnuTLS keeps a pointer to it, not a copy.
    server_name: CString,
    /// Client: the session the next connection resumes, as `gnutls_session_get_data2` packs it.
    session: Mutex<Option<Vec<u8>>>,
    /// Server, ticket scenarios: the key that encrypts tickets (allocated by GnuTLS).
    ticket_key: Option<sys::gnutls_datum_t>,
    /// Server, session-ID scenarios: the session cache behind the `gnutls_db_*` callbacks.
    cache: Mutex<HashMap<Vec<u8>, Vec<u8>>>,
    /// Client, context-client-system: the roots the system's bundle added.
    roots: Option<usize>,
}

// SAFETY: GnuTLS's priority caches and credentials may be shared by sessions on several
// threads once set up, and nothing here changes them after `config`; the ticket key is only
// read. The client's session and the server's cache are behind mutexes; each session stays on
// the thread that made it.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: both were created by GnuTLS in `config` and every session using them is gone
        // (each holds an Rc of this); the ticket key was allocated by GnuTLS's allocator.
        unsafe {
            sys::gnutls_priority_deinit(self.priority);
            sys::gnutls_certificate_free_credentials(self.credentials);
            if let Some(key) = self.ticket_key {
                sys::gnutls_free(key.data.cast());
            }
        }
    }
}

impl Stack for GnuTls {
    type ClientConfig = Config;
    type ServerConfig = Config;
    type Client = GnuTlsConnection;
    type Server = GnuTlsConnection;

    fn id(&self) -> &'static str {
        "gnutls"
    }

    fn library(&self) -> String {
        // SAFETY: with NULL, gnutls_check_version returns the runtime library's static version string.
        let version = unsafe { CStr::from_ptr(sys::gnutls_check_version(ptr::null())) };
        format!("GnuTLS {}", version.to_string_lossy())
    }

    /// GnuTLS's crypto is Nettle (its public-key half, hogweed, on GMP): the versions the
    /// loaded libraries report.
    fn backend(&self) -> Backend {
        // SAFETY: plain getters of the loaded libraries' version numbers and GMP's static string.
        let (major, minor, gmp) =
            unsafe { (sys::nettle_version_major(), sys::nettle_version_minor(), CStr::from_ptr(sys::__gmp_version)) };
        Backend::new("Nettle", format!("{major}.{minor}"), Some(format!("GMP {}", gmp.to_string_lossy())))
    }

    fn capabilities(&self) -> Capabilities {
        // ML-KEM arrived in GnuTLS 3.8.x (with leancrypto); the system's is 3.7.
        let groups = vec![Group::X25519, Group::Secp256r1, Group::Secp384r1];
        Capabilities { groups, ..Capabilities::everything() }
    }

    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Config, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let shared = Shared::new(Side::Client, scenario)?;
        shared.trust(&credentials.ca_pem)?;
        if scenario.client_auth == ClientAuth::Required {
            shared.use_chain_and_key(&credentials.client_chain_pem, &credentials.client_key_pem)?;
        }
        Ok(Config(Arc::new(shared)))
    }

    /// `gnutls_certificate_set_x509_trust_file` on `SSL_CERT_FILE`: GnuTLS's users' call
    /// `gnutls_certificate_set_x509_system_trust` reads the same Debian bundle, but from a path
    /// compiled into the library that no variable moves, so the bundle with the test CA is
    /// loaded the way that call loads its file.
    fn client_config_system(&self, scenario: &Scenario, pki: &Pki) -> Option<Result<Config, LibError>> {
        let build = || {
            let credentials = pki.credentials(scenario.key).map_err(LibError)?;
            let mut shared = Shared::new(Side::Client, scenario)?;
            let file = std::env::var_os("SSL_CERT_FILE")
                .ok_or_else(|| LibError::new("SSL_CERT_FILE is not set: no system bundle to load"))?;
            let file = CString::new(file.into_encoded_bytes()).map_err(LibError::new)?;
            // SAFETY: live credentials and a NUL-terminated path; returns how many it added.
            let added = unsafe {
                sys::gnutls_certificate_set_x509_trust_file(shared.credentials, file.as_ptr(), sys::GNUTLS_X509_FMT_PEM)
            };
            shared.roots = Some(check(added, "loading the system's trust store")? as usize);
            if scenario.client_auth == ClientAuth::Required {
                shared.use_chain_and_key(&credentials.client_chain_pem, &credentials.client_key_pem)?;
            }
            Ok(Config(Arc::new(shared)))
        };
        Some(build())
    }

    fn trust_roots(&self, config: &Config) -> Option<usize> {
        config.0.roots
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Config, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let mut shared = Shared::new(Side::Server, scenario)?;
        shared.use_chain_and_key(&credentials.chain_pem, &credentials.key_pem)?;
        if scenario.client_auth != ClientAuth::None {
            // Also the CA names the server sends in its certificate request.
            shared.trust(&credentials.ca_pem)?;
        }
        if scenario.kind == Kind::HandshakeResumeTicket {
            let mut key = sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 };
            // SAFETY: `key` is a valid out-parameter; GnuTLS allocates its data.
            check(unsafe { sys::gnutls_session_ticket_key_generate(&mut key) }, "generating the ticket key")?;
            shared.ticket_key = Some(key);
        }
        Ok(Config(Arc::new(shared)))
    }

    fn new_client(&self, config: &Config, io: Endpoint) -> Result<GnuTlsConnection, LibError> {
        let connection = GnuTlsConnection::new(config, io)?;
        let session = connection.transport.session;
        let name = &config.0.server_name;
        // SAFETY: `session` is live; GnuTLS copies the SNI name but keeps only a pointer to the
        // name to verify, which lives in the config the connection holds.
        unsafe {
            check(
                sys::gnutls_server_name_set(session, sys::GNUTLS_NAME_DNS, name.as_ptr().cast(), SERVER_NAME.len()),
                "setting the SNI host name",
            )?;
            // Verifies the chain against the trusted CA and the host name during the handshake.
            sys::gnutls_session_set_verify_cert(session, name.as_ptr(), 0);
        }
        if let Some(data) = config.0.session.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            // SAFETY: `session` is live and GnuTLS copies the data.
            check(
                unsafe { sys::gnutls_session_set_data(session, data.as_ptr().cast(), data.len()) },
                "setting the session to resume",
            )?;
        }
        Ok(connection)
    }

    fn new_server(&self, config: &Config, io: Endpoint) -> Result<GnuTlsConnection, LibError> {
        let connection = GnuTlsConnection::new(config, io)?;
        let (session, shared) = (connection.transport.session, &*config.0);
        // SAFETY: `session` is live; the cache and the ticket key live in `shared`, which the
        // connection keeps alive as long as the session.
        unsafe {
            match shared.client_auth {
                ClientAuth::None => {}
                ClientAuth::Requested => sys::gnutls_certificate_server_set_request(session, sys::GNUTLS_CERT_REQUEST),
                ClientAuth::Required => {
                    sys::gnutls_certificate_server_set_request(session, sys::GNUTLS_CERT_REQUIRE);
                    // Without this the server would accept any certificate and leave checking to the caller.
                    sys::gnutls_session_set_verify_cert(session, ptr::null(), 0);
                }
            }
            if let Some(key) = &shared.ticket_key {
                check(sys::gnutls_session_ticket_enable_server(session, key), "enabling session tickets")?;
            }
            if shared.kind == Kind::HandshakeResumeId {
                sys::gnutls_db_set_ptr(session, (&shared.cache as *const Mutex<_>).cast_mut().cast());
                sys::gnutls_db_set_store_function(session, cache_store);
                sys::gnutls_db_set_retrieve_function(session, cache_retrieve);
                sys::gnutls_db_set_remove_function(session, cache_remove);
            }
        }
        Ok(connection)
    }
}

impl Shared {
    /// Settings for one side with exactly the scenario's version, suite and groups, and no
    /// resumption but the scenario's kind.
    fn new(side: Side, scenario: &Scenario) -> Result<Self, LibError> {
        let text = CString::new(priority(side, scenario)).expect("priority strings have no NUL byte");
        let mut priority = ptr::null_mut();
        let mut error_at = ptr::null();
        // SAFETY: valid out-parameters and a NUL-terminated string; `error_at` points into it.
        let ret = unsafe { sys::gnutls_priority_init(&mut priority, text.as_ptr(), &mut error_at) };
        if ret < 0 {
            // SAFETY: on a syntax error `error_at` points into `text`, which is still alive.
            let at = (!error_at.is_null()).then(|| unsafe { CStr::from_ptr(error_at) }.to_string_lossy().into_owned());
            return Err(LibError::new(format!("priority string {text:?}: {} (at {at:?})", strerror(ret))));
        }
        let mut credentials = ptr::null_mut();
        // SAFETY: a valid out-parameter.
        let ret = unsafe { sys::gnutls_certificate_allocate_credentials(&mut credentials) };
        if ret < 0 {
            // SAFETY: created just above and used nowhere else.
            unsafe { sys::gnutls_priority_deinit(priority) };
            return Err(LibError::new(format!("allocating credentials: {}", strerror(ret))));
        }
        Ok(Shared {
            side,
            kind: scenario.kind,
            pinned: scenario.is_pinned(),
            version: scenario.version,
            client_auth: scenario.client_auth,
            priority,
            credentials,
            server_name: CString::new(SERVER_NAME).expect("the server name has no NUL byte"),
            session: Mutex::new(None),
            ticket_key: None,
            cache: Mutex::new(HashMap::new()),
            roots: None,
        })
    }

    /// The scenario's root as the only trust anchor (not the system's store).
    fn trust(&self, ca_pem: &str) -> Result<(), LibError> {
        let ca = datum(ca_pem.as_bytes());
        // SAFETY: live credentials; GnuTLS copies the certificates. Returns how many it added.
        let added =
            unsafe { sys::gnutls_certificate_set_x509_trust_mem(self.credentials, &ca, sys::GNUTLS_X509_FMT_PEM) };
        match check(added, "adding the CA certificate")? {
            1 => Ok(()),
            n => Err(LibError::new(format!("the CA PEM held {n} certificates, expected 1"))),
        }
    }

    /// The leaf, the intermediates after it, and the leaf's PKCS#8 key.
    fn use_chain_and_key(&self, chain_pem: &str, key_pem: &str) -> Result<(), LibError> {
        let (chain, key) = (datum(chain_pem.as_bytes()), datum(key_pem.as_bytes()));
        // SAFETY: live credentials; GnuTLS copies both.
        let ret = unsafe {
            sys::gnutls_certificate_set_x509_key_mem2(
                self.credentials,
                &chain,
                &key,
                sys::GNUTLS_X509_FMT_PEM,
                ptr::null(),
                0,
            )
        };
        check(ret, "setting the certificate chain and key").map(drop)
    }
}

/// GnuTLS's priority string for one side: nothing (`NONE`) but the scenario's version, cipher,
/// (TLS 1.2) key exchange and groups, in the side's order; with the library's defaults, GnuTLS's
/// `NORMAL` with the scenario's version only.
fn priority(side: Side, scenario: &Scenario) -> String {
    let version = match scenario.version {
        Version::Tls12 => "+VERS-TLS1.2",
        Version::Tls13 => "+VERS-TLS1.3",
    };
    let Some(suite) = scenario.suite() else { return format!("NORMAL:-VERS-ALL:{version}") };
    let cipher = match suite {
        Suite::Aes128Gcm => "+AES-128-GCM",
        Suite::Aes256Gcm => "+AES-256-GCM",
        Suite::Chacha20Poly1305 => "+CHACHA20-POLY1305",
    };
    // TLS 1.3 suites carry no key exchange; TLS 1.2's sign with the key's algorithm (ECDSA
    // suites cover Ed25519 keys too).
    let kx = match (scenario.version, scenario.key.is_rsa()) {
        (Version::Tls13, _) => "",
        (Version::Tls12, true) => ":+ECDHE-RSA",
        (Version::Tls12, false) => ":+ECDHE-ECDSA",
    };
    let groups: String = scenario.groups(side).iter().map(|&g| format!(":+GROUP-{}", group_name(g))).collect();
    let ems = if scenario.ems { "" } else { ":%NO_SESSION_HASH" };
    format!("NONE:{version}:{cipher}:+AEAD{kx}:+SIGN-ALL{groups}:+CTYPE-X509:+COMP-NULL{ems}")
}

fn group_name(group: Group) -> &'static str {
    match group {
        Group::X25519 => "X25519",
        Group::Secp256r1 => "SECP256R1",
        Group::Secp384r1 => "SECP384R1",
        // Not in `capabilities`, so never asked for.
        Group::X25519Mlkem768 => "X25519-MLKEM768",
    }
}

/// One side of a connection. GnuTLS's transport pointer points at `transport`, which is boxed
/// so that it stays put when the connection moves.
pub struct GnuTlsConnection {
    transport: Box<Transport>,
    config: Arc<Shared>,
    done: bool,
    /// Server, TLS 1.3 ticket scenarios: whether this handshake's one ticket was sent.
    ticket_sent: bool,
}

/// What the transport callbacks need: the endpoint, and the session to report EAGAIN to.
struct Transport {
    session: sys::gnutls_session_t,
    io: Endpoint,
}

impl GnuTlsConnection {
    fn new(config: &Config, io: Endpoint) -> Result<Self, LibError> {
        let shared = &config.0;
        let mut flags = match shared.side {
            Side::Client => sys::GNUTLS_CLIENT,
            Side::Server => sys::GNUTLS_SERVER,
        } | sys::GNUTLS_NONBLOCK;
        match (shared.pinned, shared.kind) {
            // As shipped: a client asks for tickets; a server issues them only once the
            // application gives it a ticket key, which it has not.
            (false, _) => {}
            // One TLS 1.3 ticket per handshake, sent by `handshake` (GnuTLS would send two).
            (true, Kind::HandshakeResumeTicket) => flags |= sys::GNUTLS_NO_AUTO_SEND_TICKET,
            // Neither asked for (client) nor issued (server).
            (true, _) => flags |= sys::GNUTLS_NO_TICKETS,
        }
        if shared.side == Side::Client && shared.client_auth == ClientAuth::Required {
            // GnuTLS 3.7's client picks its certificate by the TLS 1.2 request's certificate
            // types, where Ed25519 falls under ecdsa_sign (RFC 8422) and GnuTLS does not match
            // it; with one certificate configured, send it (the server still verifies it).
            flags |= sys::GNUTLS_FORCE_CLIENT_CERT;
        }
        let mut session = ptr::null_mut();
        // SAFETY: a valid out-parameter.
        check(unsafe { sys::gnutls_init(&mut session, flags) }, "creating the session")?;
        // From here on, dropping the connection frees the session.
        let connection = GnuTlsConnection {
            transport: Box::new(Transport { session, io }),
            config: shared.clone(),
            done: false,
            ticket_sent: false,
        };
        let transport: *const Transport = &*connection.transport;
        // SAFETY: `session` is live; the priority cache and credentials live in `config`, which
        // the connection holds; `transport` is boxed and outlives the session (see Drop).
        unsafe {
            check(sys::gnutls_priority_set(session, shared.priority), "setting the priorities")?;
            check(
                sys::gnutls_credentials_set(session, sys::GNUTLS_CRD_CERTIFICATE, shared.credentials.cast()),
                "setting the credentials",
            )?;
            sys::gnutls_transport_set_ptr(session, transport.cast_mut().cast());
            sys::gnutls_transport_set_pull_function(session, pull);
            sys::gnutls_transport_set_pull_timeout_function(session, pull_timeout);
            // GnuTLS writes to sockets with writev; one call carries a whole flight.
            sys::gnutls_transport_set_vec_push_function(session, vec_push);
        }
        Ok(connection)
    }

    fn session(&self) -> sys::gnutls_session_t {
        self.transport.session
    }

    /// The handshake's error as GnuTLS names it, with the alert or the verification status
    /// that says why.
    fn handshake_error(&self, ret: c_int) -> LibError {
        let session = self.session();
        let mut message = strerror(ret);
        // SAFETY: `session` is live; the returned names are static strings.
        unsafe {
            if ret == sys::GNUTLS_E_FATAL_ALERT_RECEIVED {
                let name = sys::gnutls_alert_get_name(sys::gnutls_alert_get(session));
                if !name.is_null() {
                    message += &format!(" ({})", CStr::from_ptr(name).to_string_lossy());
                }
            }
            if ret == sys::GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR {
                let status = sys::gnutls_session_get_verify_cert_status(session);
                let mut out = sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 };
                if sys::gnutls_certificate_verification_status_print(status, sys::GNUTLS_CRT_X509, &mut out, 0) >= 0 {
                    message += &format!(
                        " ({})",
                        String::from_utf8_lossy(std::slice::from_raw_parts(out.data, out.size as usize))
                    );
                    sys::gnutls_free(out.data.cast());
                }
            }
        }
        LibError::new(message)
    }
}

impl Drop for GnuTlsConnection {
    fn drop(&mut self) {
        let session = self.session();
        // A client keeps the session (TLS 1.2), or the ticket that arrived after the handshake
        // (TLS 1.3), for the next connection to resume.
        if self.done && self.config.side == Side::Client && self.config.kind.is_resumption() {
            let mut data = sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 };
            // SAFETY: `session` is live; GnuTLS allocates `data`, freed right after the copy.
            unsafe {
                if sys::gnutls_session_get_data2(session, &mut data) >= 0 {
                    let packed = std::slice::from_raw_parts(data.data, data.size as usize).to_vec();
                    *self.config.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(packed);
                    sys::gnutls_free(data.data.cast());
                }
            }
        }
        // SAFETY: the session was created in `new` and is freed once, before its transport.
        unsafe { sys::gnutls_deinit(session) };
    }
}

impl Connection for GnuTlsConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        let session = self.session();
        if self.done {
            // Read what the peer sent since, such as a TLS 1.3 session ticket. No application
            // data is sent before both sides complete, so none can be lost here.
            let mut byte = [0u8; 1];
            // SAFETY: `session` is live and `byte` is writable for its length.
            return match unsafe { sys::gnutls_record_recv(session, byte.as_mut_ptr().cast(), byte.len()) } {
                0 | sys::GNUTLS_E_AGAIN_ISIZE => Ok(true),
                n if n > 0 => {
                    Err(LibError::new("application data arrived before the handshake completed on both sides"))
                }
                n => Err(LibError::new(format!("reading after the handshake: {}", strerror(n as c_int)))),
            };
        }
        // SAFETY: `session` is live.
        match unsafe { sys::gnutls_handshake(session) } {
            0 => {
                self.done = true;
                if self.config.side == Side::Server
                    && self.config.kind == Kind::HandshakeResumeTicket
                    && self.config.version == Version::Tls13
                    && !self.ticket_sent
                {
                    self.ticket_sent = true;
                    // SAFETY: `session` is live and its handshake is complete.
                    check(unsafe { sys::gnutls_session_ticket_send(session, 1, 0) }, "sending the session ticket")?;
                }
                Ok(true)
            }
            // The transport said EAGAIN: the peer has to move first.
            sys::GNUTLS_E_AGAIN | sys::GNUTLS_E_INTERRUPTED => Ok(false),
            ret => Err(self.handshake_error(ret)),
        }
    }

    fn send(&mut self, mut data: &[u8]) -> Result<(), LibError> {
        while !data.is_empty() {
            // SAFETY: `session` is live and `data` is readable for its length. The in-memory
            // transport takes every byte, so GnuTLS never has to wait to write: any error is a failure.
            let n = unsafe { sys::gnutls_record_send(self.session(), data.as_ptr().cast(), data.len()) };
            if n <= 0 {
                return Err(LibError::new(format!("gnutls_record_send: {}", strerror(n as c_int))));
            }
            data = &data[n as usize..];
        }
        Ok(())
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        // SAFETY: `session` is live and `buf` is writable for its length.
        match unsafe { sys::gnutls_record_recv(self.session(), buf.as_mut_ptr().cast(), buf.len()) } {
            // No complete record yet, or the peer closed: nothing more to read now either way.
            0 | sys::GNUTLS_E_AGAIN_ISIZE => Ok(0),
            n if n > 0 => Ok(n as usize),
            n => Err(LibError::new(format!("gnutls_record_recv: {}", strerror(n as c_int)))),
        }
    }

    fn close(&mut self) -> Result<(), LibError> {
        // GNUTLS_SHUT_WR: send close_notify and return, without waiting for the peer's (which
        // GNUTLS_SHUT_RDWR would read for); the session can still read.
        // SAFETY: `session` is live.
        match unsafe { sys::gnutls_bye(self.session(), sys::GNUTLS_SHUT_WR) } {
            0 => Ok(()),
            ret => Err(LibError::new(format!("gnutls_bye: {}", strerror(ret)))),
        }
    }

    fn peer_closed(&mut self) -> Result<bool, LibError> {
        let mut byte = [0u8; 1];
        // SAFETY: `session` is live and `byte` is writable for its length.
        match unsafe { sys::gnutls_record_recv(self.session(), byte.as_mut_ptr().cast(), byte.len()) } {
            // The peer's close_notify: 0 now and on every later call.
            0 => Ok(true),
            sys::GNUTLS_E_AGAIN_ISIZE => Ok(false),
            // GnuTLS has no peek: the byte would be lost.
            n if n > 0 => Err(LibError::new("application data arrived where close_notify was awaited")),
            n => Err(LibError::new(format!("gnutls_record_recv: {}", strerror(n as c_int)))),
        }
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        let session = self.session();
        // SAFETY: `session` is live; these calls only read it.
        let (version, cipher, group, resumed, ems) = unsafe {
            (
                sys::gnutls_protocol_get_version(session),
                sys::gnutls_cipher_get(session),
                sys::gnutls_group_get(session),
                sys::gnutls_session_is_resumed(session) != 0,
                sys::gnutls_session_ext_master_secret_status(session) != 0,
            )
        };
        let version = match version {
            sys::GNUTLS_TLS1_2 => Version::Tls12,
            sys::GNUTLS_TLS1_3 => Version::Tls13,
            v => return Err(LibError::new(format!("negotiated an unexpected protocol version ({v})"))),
        };
        let suite = match cipher {
            sys::GNUTLS_CIPHER_AES_128_GCM => Suite::Aes128Gcm,
            sys::GNUTLS_CIPHER_AES_256_GCM => Suite::Aes256Gcm,
            sys::GNUTLS_CIPHER_CHACHA20_POLY1305 => Suite::Chacha20Poly1305,
            c => return Err(LibError::new(format!("negotiated an unexpected cipher ({c})"))),
        };
        let group = match group {
            sys::GNUTLS_GROUP_X25519 => Group::X25519,
            sys::GNUTLS_GROUP_SECP256R1 => Group::Secp256r1,
            sys::GNUTLS_GROUP_SECP384R1 => Group::Secp384r1,
            g => return Err(LibError::new(format!("negotiated an unexpected group ({g})"))),
        };
        let ems = (version == Version::Tls12).then_some(ems);
        let client_cert_verified = (self.config.side == Side::Server).then(|| self.client_cert_verified());
        Ok(Negotiated { version, suite, group: Some(group), resumed, ems, client_cert_verified, ticket_received: None })
    }
}

impl GnuTlsConnection {
    /// Whether the client sent a certificate and it verifies against the server's trusted CA
    /// (for a resumed session, the certificate of the session it resumed).
    fn client_cert_verified(&self) -> bool {
        let session = self.session();
        let mut count = 0;
        let mut status = 0;
        // SAFETY: `session` is live; valid out-parameters; the list stays owned by GnuTLS.
        unsafe {
            !sys::gnutls_certificate_get_peers(session, &mut count).is_null()
                && count > 0
                && sys::gnutls_certificate_verify_peers2(session, &mut status) == 0
                && status == 0
        }
    }
}

/// A borrowed datum for GnuTLS calls that copy their input.
fn datum(bytes: &[u8]) -> sys::gnutls_datum_t {
    let size = c_uint::try_from(bytes.len()).expect("PEM files are far below 4 GiB");
    sys::gnutls_datum_t { data: bytes.as_ptr().cast_mut(), size }
}

fn strerror(ret: c_int) -> String {
    // SAFETY: gnutls_strerror returns a static string for any code.
    unsafe { CStr::from_ptr(sys::gnutls_strerror(ret)) }.to_string_lossy().into_owned()
}

/// A GnuTLS return value: its non-negative result, or the error naming the step.
fn check(ret: c_int, what: &str) -> Result<c_int, LibError> {
    match ret {
        ret if ret >= 0 => Ok(ret),
        ret => Err(LibError::new(format!("{what}: {}", strerror(ret)))),
    }
}

/// The transport's read side: the endpoint's bytes, or EAGAIN when it has none.
extern "C" fn pull(ptr: *mut c_void, buf: *mut c_void, len: usize) -> isize {
    // SAFETY: `ptr` is the connection's boxed Transport (set in `new`), alive while the session
    // is, and GnuTLS calls no other callback meanwhile; `buf` is writable for `len` bytes.
    let (transport, buf) =
        unsafe { (&mut *ptr.cast::<Transport>(), std::slice::from_raw_parts_mut(buf.cast::<u8>(), len)) };
    match transport.io.read(buf) {
        Ok(n) => n as isize,
        Err(e) => {
            let errno = if e.kind() == io::ErrorKind::WouldBlock { sys::EAGAIN } else { sys::EIO };
            // SAFETY: the session is live (it is calling us).
            unsafe { sys::gnutls_transport_set_errno(transport.session, errno) };
            -1
        }
    }
}

/// The transport's write side: every buffer in one call, as writev would.
extern "C" fn vec_push(ptr: *mut c_void, iov: *const IoSlice<'static>, count: c_int) -> isize {
    // SAFETY: as in `pull`; `IoSlice` is ABI-compatible with `struct iovec` (std's guarantee on
    // Unix), and GnuTLS passes `count` of them, each readable for its length during this call.
    let (transport, bufs) = unsafe { (&mut *ptr.cast::<Transport>(), std::slice::from_raw_parts(iov, count as usize)) };
    match transport.io.write_vectored(bufs) {
        Ok(n) => n as isize,
        Err(_) => {
            // SAFETY: the session is live (it is calling us).
            unsafe { sys::gnutls_transport_set_errno(transport.session, sys::EIO) };
            -1
        }
    }
}

/// Whether data may be there to read: the endpoint cannot tell without reading, so "maybe",
/// and `pull` then answers EAGAIN if there is none (the transport never makes anyone wait).
extern "C" fn pull_timeout(_ptr: *mut c_void, _ms: c_uint) -> c_int {
    1
}

/// The server's session cache (`gnutls_db_*`): the callbacks' pointer is the config's map.
extern "C" fn cache_store(ptr: *mut c_void, key: sys::gnutls_datum_t, data: sys::gnutls_datum_t) -> c_int {
    // SAFETY: `ptr` is the server config's cache (set in `new_server`), alive while its sessions
    // are and not borrowed elsewhere during a GnuTLS call; the datums are readable for their sizes.
    unsafe {
        let cache = &*ptr.cast::<Mutex<HashMap<Vec<u8>, Vec<u8>>>>();
        cache.lock().unwrap_or_else(PoisonError::into_inner).insert(bytes(&key).to_vec(), bytes(&data).to_vec());
    }
    0
}

extern "C" fn cache_retrieve(ptr: *mut c_void, key: sys::gnutls_datum_t) -> sys::gnutls_datum_t {
    // SAFETY: as in `cache_store`. GnuTLS frees the returned data with gnutls_free, so it is
    // allocated with gnutls_malloc.
    unsafe {
        let cache = &*ptr.cast::<Mutex<HashMap<Vec<u8>, Vec<u8>>>>();
        match cache.lock().unwrap_or_else(PoisonError::into_inner).get(bytes(&key)) {
            Some(data) => {
                let copy = sys::gnutls_malloc(data.len()).cast::<u8>();
                if copy.is_null() {
                    return sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 };
                }
                ptr::copy_nonoverlapping(data.as_ptr(), copy, data.len());
                sys::gnutls_datum_t { data: copy, size: data.len() as c_uint }
            }
            None => sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 },
        }
    }
}

extern "C" fn cache_remove(ptr: *mut c_void, key: sys::gnutls_datum_t) -> c_int {
    // SAFETY: as in `cache_store`.
    unsafe {
        let cache = &*ptr.cast::<Mutex<HashMap<Vec<u8>, Vec<u8>>>>();
        cache.lock().unwrap_or_else(PoisonError::into_inner).remove(bytes(&key));
    }
    0
}

/// A datum's bytes. Safety: `d` must be readable for `d.size` bytes (or empty).
unsafe fn bytes(d: &sys::gnutls_datum_t) -> &[u8] {
    match d.size {
        0 => &[],
        // SAFETY: the caller's promise.
        n => unsafe { std::slice::from_raw_parts(d.data, n as usize) },
    }
}

/// The few GnuTLS functions this adapter calls, as declared in `<gnutls/gnutls.h>` (3.7).
#[allow(non_camel_case_types)]
mod sys {
    use std::ffi::{c_char, c_int, c_uint, c_void};
    use std::io::IoSlice;

    pub type gnutls_session_t = *mut c_void;
    pub type gnutls_priority_t = *mut c_void;
    pub type gnutls_certificate_credentials_t = *mut c_void;

    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct gnutls_datum_t {
        pub data: *mut u8,
        pub size: c_uint,
    }

    // gnutls_init_flags_t
    pub const GNUTLS_SERVER: c_uint = 1;
    pub const GNUTLS_CLIENT: c_uint = 1 << 1;
    pub const GNUTLS_NONBLOCK: c_uint = 1 << 3;
    pub const GNUTLS_FORCE_CLIENT_CERT: c_uint = 1 << 9;
    pub const GNUTLS_NO_TICKETS: c_uint = 1 << 10;
    pub const GNUTLS_NO_AUTO_SEND_TICKET: c_uint = 1 << 21;
    // gnutls_credentials_type_t, gnutls_x509_crt_fmt_t, gnutls_server_name_type_t,
    // gnutls_certificate_request_t, gnutls_certificate_type_t
    pub const GNUTLS_CRD_CERTIFICATE: c_int = 1;
    pub const GNUTLS_X509_FMT_PEM: c_int = 1;
    pub const GNUTLS_NAME_DNS: c_int = 1;
    pub const GNUTLS_CERT_REQUEST: c_int = 1;
    pub const GNUTLS_CERT_REQUIRE: c_int = 2;
    pub const GNUTLS_CRT_X509: c_int = 1;
    // gnutls_close_request_t
    pub const GNUTLS_SHUT_WR: c_int = 1;
    // gnutls_protocol_t, gnutls_cipher_algorithm_t, gnutls_group_t
    pub const GNUTLS_TLS1_2: c_int = 4;
    pub const GNUTLS_TLS1_3: c_int = 5;
    pub const GNUTLS_CIPHER_AES_128_GCM: c_int = 10;
    pub const GNUTLS_CIPHER_AES_256_GCM: c_int = 11;
    pub const GNUTLS_CIPHER_CHACHA20_POLY1305: c_int = 23;
    pub const GNUTLS_GROUP_SECP256R1: c_int = 2;
    pub const GNUTLS_GROUP_SECP384R1: c_int = 3;
    pub const GNUTLS_GROUP_X25519: c_int = 6;
    // Error codes.
    pub const GNUTLS_E_AGAIN: c_int = -28;
    pub const GNUTLS_E_AGAIN_ISIZE: isize = GNUTLS_E_AGAIN as isize;
    pub const GNUTLS_E_INTERRUPTED: c_int = -52;
    pub const GNUTLS_E_FATAL_ALERT_RECEIVED: c_int = -12;
    pub const GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR: c_int = -348;
    // From <errno.h>, for gnutls_transport_set_errno.
    pub const EAGAIN: c_int = 11;
    pub const EIO: c_int = 5;

    pub type gnutls_pull_func = extern "C" fn(*mut c_void, *mut c_void, usize) -> isize;
    pub type gnutls_vec_push_func = extern "C" fn(*mut c_void, *const IoSlice<'static>, c_int) -> isize;
    pub type gnutls_pull_timeout_func = extern "C" fn(*mut c_void, c_uint) -> c_int;
    pub type gnutls_db_store_func = extern "C" fn(*mut c_void, gnutls_datum_t, gnutls_datum_t) -> c_int;
    pub type gnutls_db_retr_func = extern "C" fn(*mut c_void, gnutls_datum_t) -> gnutls_datum_t;
    pub type gnutls_db_remove_func = extern "C" fn(*mut c_void, gnutls_datum_t) -> c_int;

    // GnuTLS's crypto libraries, for their versions (the backend).
    #[link(name = "nettle")]
    extern "C" {
        pub fn nettle_version_major() -> c_int;
        pub fn nettle_version_minor() -> c_int;
    }
    #[link(name = "gmp")]
    extern "C" {
        pub static __gmp_version: *const c_char;
    }

    #[link(name = "gnutls")]
    extern "C" {
        pub static gnutls_malloc: unsafe extern "C" fn(usize) -> *mut c_void;
        pub static gnutls_free: unsafe extern "C" fn(*mut c_void);

        pub fn gnutls_check_version(req: *const c_char) -> *const c_char;
        pub fn gnutls_strerror(error: c_int) -> *const c_char;
        pub fn gnutls_init(session: *mut gnutls_session_t, flags: c_uint) -> c_int;
        pub fn gnutls_deinit(session: gnutls_session_t);
        pub fn gnutls_priority_init(
            p: *mut gnutls_priority_t,
            priorities: *const c_char,
            err_pos: *mut *const c_char,
        ) -> c_int;
        pub fn gnutls_priority_deinit(p: gnutls_priority_t);
        pub fn gnutls_priority_set(session: gnutls_session_t, p: gnutls_priority_t) -> c_int;
        pub fn gnutls_certificate_allocate_credentials(res: *mut gnutls_certificate_credentials_t) -> c_int;
        pub fn gnutls_certificate_free_credentials(res: gnutls_certificate_credentials_t);
        pub fn gnutls_certificate_set_x509_trust_file(
            res: gnutls_certificate_credentials_t,
            cafile: *const c_char,
            format: c_int,
        ) -> c_int;
        pub fn gnutls_certificate_set_x509_trust_mem(
            res: gnutls_certificate_credentials_t,
            ca: *const gnutls_datum_t,
            format: c_int,
        ) -> c_int;
        pub fn gnutls_certificate_set_x509_key_mem2(
            res: gnutls_certificate_credentials_t,
            cert: *const gnutls_datum_t,
            key: *const gnutls_datum_t,
            format: c_int,
            pass: *const c_char,
            flags: c_uint,
        ) -> c_int;
        pub fn gnutls_credentials_set(session: gnutls_session_t, kind: c_int, cred: *mut c_void) -> c_int;
        pub fn gnutls_server_name_set(
            session: gnutls_session_t,
            kind: c_int,
            name: *const c_void,
            name_length: usize,
        ) -> c_int;
        pub fn gnutls_session_set_verify_cert(session: gnutls_session_t, hostname: *const c_char, flags: c_uint);
        pub fn gnutls_session_get_verify_cert_status(session: gnutls_session_t) -> c_uint;
        pub fn gnutls_certificate_verification_status_print(
            status: c_uint,
            kind: c_int,
            out: *mut gnutls_datum_t,
            flags: c_uint,
        ) -> c_int;
        pub fn gnutls_certificate_server_set_request(session: gnutls_session_t, req: c_int);
        pub fn gnutls_certificate_get_peers(session: gnutls_session_t, list_size: *mut c_uint)
            -> *const gnutls_datum_t;
        pub fn gnutls_certificate_verify_peers2(session: gnutls_session_t, status: *mut c_uint) -> c_int;
        pub fn gnutls_transport_set_ptr(session: gnutls_session_t, ptr: *mut c_void);
        pub fn gnutls_transport_set_pull_function(session: gnutls_session_t, func: gnutls_pull_func);
        pub fn gnutls_transport_set_pull_timeout_function(session: gnutls_session_t, func: gnutls_pull_timeout_func);
        pub fn gnutls_transport_set_vec_push_function(session: gnutls_session_t, func: gnutls_vec_push_func);
        pub fn gnutls_transport_set_errno(session: gnutls_session_t, err: c_int);
        pub fn gnutls_handshake(session: gnutls_session_t) -> c_int;
        pub fn gnutls_record_send(session: gnutls_session_t, data: *const c_void, size: usize) -> isize;
        pub fn gnutls_record_recv(session: gnutls_session_t, data: *mut c_void, size: usize) -> isize;
        pub fn gnutls_bye(session: gnutls_session_t, how: c_int) -> c_int;
        pub fn gnutls_alert_get(session: gnutls_session_t) -> c_int;
        pub fn gnutls_alert_get_name(alert: c_int) -> *const c_char;
        pub fn gnutls_protocol_get_version(session: gnutls_session_t) -> c_int;
        pub fn gnutls_cipher_get(session: gnutls_session_t) -> c_int;
        pub fn gnutls_group_get(session: gnutls_session_t) -> c_int;
        pub fn gnutls_session_is_resumed(session: gnutls_session_t) -> c_int;
        pub fn gnutls_session_ext_master_secret_status(session: gnutls_session_t) -> c_uint;
        pub fn gnutls_session_get_data2(session: gnutls_session_t, data: *mut gnutls_datum_t) -> c_int;
        pub fn gnutls_session_set_data(session: gnutls_session_t, data: *const c_void, size: usize) -> c_int;
        pub fn gnutls_session_ticket_key_generate(key: *mut gnutls_datum_t) -> c_int;
        pub fn gnutls_session_ticket_enable_server(session: gnutls_session_t, key: *const gnutls_datum_t) -> c_int;
        pub fn gnutls_session_ticket_send(session: gnutls_session_t, nr: c_uint, flags: c_uint) -> c_int;
        pub fn gnutls_db_set_ptr(session: gnutls_session_t, ptr: *mut c_void);
        pub fn gnutls_db_set_store_function(session: gnutls_session_t, func: gnutls_db_store_func);
        pub fn gnutls_db_set_retrieve_function(session: gnutls_session_t, func: gnutls_db_retr_func);
        pub fn gnutls_db_set_remove_function(session: gnutls_session_t, func: gnutls_db_remove_func);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tlsbench_harness::driver::{sample, SampleSpec};
    use tlsbench_harness::{Error, KeyType, Link};

    use super::*;
    use tlsbench_harness::testing::{self, pki, scenario};

    /// A client against a server, through their handshakes, or the error (naming its side).
    fn connect(client_config: &Config, server_config: &Config) -> Result<(GnuTlsConnection, GnuTlsConnection), String> {
        testing::connect_configs(&GnuTls, &GnuTls, client_config, server_config)
    }

    fn configs(client: &Scenario, server: &Scenario) -> (Config, Config) {
        let client = GnuTls.client_config(client, pki()).unwrap_or_else(|e| panic!("client config: {e}"));
        let server = GnuTls.server_config(server, pki()).unwrap_or_else(|e| panic!("server config: {e}"));
        (client, server)
    }

    #[test]
    fn every_supported_scenario_samples_with_positive_values_on_both_sides() {
        // Through the real driver, once each: every gate passes at least once.
        let measured = testing::check_every_supported_scenario(&GnuTls, &GnuTls);
        // Everything but ML-KEM.
        assert!(measured > 1000, "only {measured} scenarios");
        assert!(GnuTls.library().starts_with("GnuTLS 3."), "{}", GnuTls.library());
    }

    #[test]
    fn ml_kem_is_declared_unsupported_with_the_reason() {
        let asked = scenario("handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm");
        let err = sample(&GnuTls, &GnuTls, &asked, pki(), &SampleSpec::timed(Duration::ZERO, Duration::ZERO));
        assert!(
            matches!(&err, Err(Error::Unsupported(reason)) if reason == "gnutls: group x25519mlkem768 not supported"),
            "{err:?}"
        );
    }

    #[test]
    fn a_server_chain_from_another_ca_fails_verification() {
        let client = scenario("handshake-full_1.3_x25519_rsa-2048_aes-128-gcm");
        let server = Scenario { key: KeyType::EcdsaP256, ..client };
        let (client, server) = configs(&client, &server);
        let Err(error) = connect(&client, &server) else { panic!("the client accepted a chain its CA did not sign") };
        assert!(error.starts_with("client: Error in the certificate verification."), "{error}");
        assert!(error.contains("The certificate issuer is unknown."), "{error}");
    }

    #[test]
    fn a_certificate_for_another_host_name_fails_verification() {
        let asked = scenario("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm");
        let (client_config, server_config) = configs(&asked, &asked);
        let link = Link::new();
        let mut client = GnuTls.new_client(&client_config, link.client()).unwrap_or_else(|e| panic!("{e}"));
        let other = CString::new("other.tlsbench.test").expect("no NUL byte");
        // SAFETY: the session is live; GnuTLS copies the name.
        unsafe { sys::gnutls_session_set_verify_cert(client.session(), other.as_ptr(), 0) };
        let mut server = GnuTls.new_server(&server_config, link.server()).unwrap_or_else(|e| panic!("{e}"));
        let stepped = tlsbench_harness::step::handshake_pair(
            &mut client,
            &mut server,
            &link,
            &mut tlsbench_harness::step::Unmetered,
        );
        let Err(Error::Library { side: Side::Client, error, .. }) = stepped else {
            panic!("the client accepted a certificate for another host name, or the server failed: {stepped:?}")
        };
        let error = error.0;
        assert!(error.contains("The name in the certificate does not match the expected."), "{error}");
    }

    /// The gates accept a group of None, so they alone would not notice a side that stopped
    /// reporting it; this covers every group, key type and version on both sides.
    #[test]
    fn both_sides_report_what_was_negotiated() {
        for &version in Version::ALL {
            for &group in &GnuTls.capabilities().groups {
                for &key in KeyType::ALL {
                    let suite = Suite::Chacha20Poly1305;
                    let asked =
                        Scenario::new(Kind::HandshakeFull, version, group, key, suite).expect("a valid scenario");
                    let (client, server) = configs(&asked, &asked);
                    let (client, server) = connect(&client, &server).unwrap_or_else(|e| panic!("{asked}: {e}"));
                    let ems = (version == Version::Tls12).then_some(true);
                    let expected = Negotiated {
                        version,
                        suite,
                        group: Some(group),
                        resumed: false,
                        ems,
                        client_cert_verified: None,
                        ticket_received: None,
                    };
                    assert_eq!(client.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: client");
                    let expected = Negotiated { client_cert_verified: Some(false), ..expected };
                    assert_eq!(server.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: server");
                }
            }
        }
    }

    #[test]
    fn ems_off_a_verified_client_certificate_and_resumption_are_reported() {
        let asked = scenario("handshake-resume-id_1.2_secp384r1_ed25519_aes-256-gcm_mtls_no-ems");
        let (client_config, server_config) = configs(&asked, &asked);
        for resumed in [false, true] {
            let (client, server) = connect(&client_config, &server_config).unwrap_or_else(|e| panic!("{e}"));
            let seen = |n: Result<Negotiated, LibError>| {
                n.map_err(|e| e.0).map(|n| (n.ems, n.client_cert_verified, n.resumed))
            };
            assert_eq!(seen(client.negotiated()), Ok((Some(false), None, resumed)));
            assert_eq!(seen(server.negotiated()), Ok((Some(false), Some(true), resumed)));
        }
    }

    #[test]
    fn a_tls_1_3_ticket_handshake_leaves_exactly_one_ticket_and_a_full_one_none() {
        for (name, ticket) in [
            ("handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", true),
            ("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", false),
        ] {
            let asked = scenario(name);
            let (client_config, server_config) = configs(&asked, &asked);
            let link = Link::new();
            let mut client = GnuTls.new_client(&client_config, link.client()).unwrap_or_else(|e| panic!("{e}"));
            let mut server = GnuTls.new_server(&server_config, link.server()).unwrap_or_else(|e| panic!("{e}"));
            while !(client.handshake().unwrap_or_else(|e| panic!("{e}"))
                & server.handshake().unwrap_or_else(|e| panic!("{e}")))
            {}
            // What is left after both completed: the server's ticket records, one record each.
            let left = link.take_written_by(Side::Server);
            let records = std::iter::successors(Some(0usize), |&at| {
                (at < left.len()).then(|| at + 5 + u16::from_be_bytes([left[at + 3], left[at + 4]]) as usize)
            })
            .take_while(|&at| at < left.len())
            .count();
            assert_eq!(records, usize::from(ticket), "{name}");
        }
    }

    #[test]
    fn data_crosses_in_both_directions() {
        let asked = scenario("transfer_1.3_x25519_ecdsa-p256_aes-256-gcm");
        let (client, server) = configs(&asked, &asked);
        let (mut client, mut server) = connect(&client, &server).unwrap_or_else(|e| panic!("{e}"));
        testing::check_data_crosses(&asked.name(), &mut client, &mut server);
    }

    /// One byte each way, then close_notify each way: each side sees the peer's close_notify
    /// once the peer has sent it, and not before.
    #[test]
    fn close_notify_each_way_after_a_byte_each_way() {
        for name in
            ["handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm"]
        {
            let asked = scenario(name);
            let (client, server) = configs(&asked, &asked);
            let (mut client, mut server) = connect(&client, &server).unwrap_or_else(|e| panic!("{name}: {e}"));
            tlsbench_harness::testing::check_close_notify(name, &mut client, &mut server);
        }
    }
}
