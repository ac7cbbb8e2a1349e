//! tlsbench adapter for wolfSSL through its native API (the `wolfssl-sys` crate's bindings, not
//! wolfSSL's OpenSSL compatibility layer): a context per side pinned to the scenario, and
//! connections over the harness's transport through wolfSSL's IO callbacks.
//!
//! wolfSSL is GPL-only, so everything here is behind the feature `wolfssl`: without it (a
//! workspace build) this crate is empty and wolfSSL is not compiled.
#![cfg(feature = "wolfssl")]

use std::ffi::{c_char, c_int, c_ulong, c_void, CStr, CString};
use std::io::{ErrorKind, Read, Write};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tlsbench_harness::pki::SERVER_NAME;
use tlsbench_harness::{
    Backend, Capabilities, ClientAuth, Connection, Endpoint, Exclusion, Group, KeyType, Kind, LibError, Negotiated,
    Pki, Scenario, Side, Stack, Suite, Version,
};
use wolfssl_sys as sys;

/// What wolfssl-sys's build of wolfSSL leaves out (its build.rs runs configure without these
/// options), each the reason of the cells it makes unsupported.
const NO_TICKETS: &str = "wolfssl: wolfssl-sys builds wolfSSL without session tickets (no --enable-session-ticket), \
                          so it has no TLS 1.2 tickets and no TLS 1.3 resumption";
const NO_ED25519: &str = "wolfssl: wolfssl-sys builds wolfSSL without Ed25519 (no --enable-ed25519)";
const DEFAULTS_TLS12: &str = "wolfssl: as shipped, its TLS 1.2 client lists secp521r1 first, a group tlsbench's \
                              scenarios do not name, and a server that follows the client's order (OpenSSL's) \
                              negotiates it";
const NO_EMS_REPORT: &str = "wolfssl: wolfSSL does not report whether TLS 1.2 used the extended master secret, \
                             so a cell with it switched off could not be checked";

/// wolfSSL 5.9 as the `wolfssl-sys` crate vendors and builds it (statically, with its own
/// configure options: see [`WolfSsl::library`]).
pub struct WolfSsl;

/// One side's settings: a wolfSSL context, shared by all the side's connections (wolfSSL
/// counts its references, so a connection keeps it alive too).
pub struct Config(Arc<Shared>);

struct Shared {
    ctx: *mut sys::WOLFSSL_CTX,
    side: Side,
    kind: Kind,
    client_auth: ClientAuth,
    /// Client, session-ID scenarios: the session the next connection resumes.
    session: Mutex<Option<Session>>,
    /// Server, pinned TLS 1.2: the groups each connection takes (see `new_server`).
    groups: Vec<c_int>,
    /// Client: the host name each connection verifies, made once.
    server_name: CString,
}

// SAFETY: a WOLFSSL_CTX, once set up, may be shared by connections on several threads (wolfSSL
// locks its reference count and session cache; this build is not SINGLE_THREADED), and nothing
// here changes it after `context`. The client's session is behind a mutex.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: created in `context`; each connection holds its own reference (wolfSSL_new),
        // so this frees it only once the last one is gone.
        unsafe { sys::wolfSSL_CTX_free(self.ctx) };
    }
}

/// A session wolfSSL allocated (`wolfSSL_get1_session`), freed when replaced or dropped.
struct Session(*mut sys::WOLFSSL_SESSION);

// SAFETY: a session is only read by wolfSSL_set_session (which copies it), under the mutex.
unsafe impl Send for Session {}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: the reference wolfSSL_get1_session gave, released once.
        unsafe { sys::wolfSSL_SESSION_free(self.0) };
    }
}

impl WolfSsl {
    /// The options wolfssl-sys gave wolfSSL's configure (`--enable-tls13`, ...), as the library
    /// reports them (wolfSSL_configure_args), without the build's own paths and compiler flags.
    pub fn configure_options() -> Vec<String> {
        // SAFETY: returns a static string (or NULL when the build kept no record of it).
        let args = unsafe { sys::wolfSSL_configure_args() };
        if args.is_null() {
            return Vec::new();
        }
        // SAFETY: non-NULL, NUL-terminated and static.
        let args = unsafe { CStr::from_ptr(args) }.to_string_lossy();
        args.split_whitespace()
            .map(|arg| arg.trim_matches('\''))
            .filter(|arg| (arg.starts_with("--enable-") || arg.starts_with("--disable-")) && !arg.contains('/'))
            .map(String::from)
            .collect()
    }
}

/// wolfSSL's runtime version, e.g. `5.9.4`.
fn version() -> String {
    // SAFETY: returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(sys::wolfSSL_lib_version()) }.to_string_lossy().into_owned()
}

impl Stack for WolfSsl {
    type ClientConfig = Config;
    type ServerConfig = Config;
    type Client = WolfSslConnection;
    type Server = WolfSslConnection;

    fn id(&self) -> &'static str {
        "wolfssl"
    }

    /// `wolfSSL 5.9.4 (wolfssl-sys 5.3.0; configure: --disable-oldtls ...)`: the build's feature
    /// set is its configure options, which wolfssl-sys chooses.
    fn library(&self) -> String {
        let crate_version = sys::build_info().crate_version;
        format!(
            "wolfSSL {} (wolfssl-sys {crate_version}; configure: {})",
            version(),
            WolfSsl::configure_options().join(" ")
        )
    }

    fn tls_library(&self) -> String {
        format!("wolfSSL {}", version())
    }

    /// wolfCrypt, wolfSSL's own crypto, in the same static library.
    fn backend(&self) -> Backend {
        Backend::new("wolfCrypt", version(), Some("static, inside wolfSSL".into()))
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // Session IDs from wolfSSL's own session cache; no tickets (NO_TICKETS).
            kinds: vec![
                Kind::HandshakeFull,
                Kind::HandshakeResumeId,
                Kind::Transfer,
                Kind::IoProfile,
                Kind::Memory100,
                Kind::Memory1000,
                Kind::Memory10000,
            ],
            keys: vec![KeyType::Rsa2048, KeyType::Rsa3072, KeyType::Rsa4096, KeyType::EcdsaP256, KeyType::EcdsaP384],
            ems_off: false,
            exclusions: vec![
                Exclusion::new("handshake-resume-ticket_*", NO_TICKETS),
                Exclusion::new("*_ed25519_*", NO_ED25519),
                Exclusion::new("*_no-ems", NO_EMS_REPORT),
                Exclusion::new("*_1.2_default_*", DEFAULTS_TLS12),
            ],
            ..Capabilities::everything()
        }
    }

    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Config, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let shared = Shared::new(Side::Client, scenario)?;
        let ctx = shared.ctx;
        trust(ctx, &credentials.ca_pem)?;
        // SAFETY: `ctx` is live and not yet shared; wolfSSL copies the SNI name.
        unsafe {
            sys::wolfSSL_CTX_set_verify(ctx, sys::WOLFSSL_VERIFY_PEER as c_int, None);
            check(
                sys::wolfSSL_CTX_UseSNI(
                    ctx,
                    sys::WOLFSSL_SNI_HOST_NAME as u8,
                    SERVER_NAME.as_ptr().cast(),
                    SERVER_NAME.len() as u16,
                ),
                "setting the SNI host name",
            )?;
        }
        if scenario.client_auth == ClientAuth::Required {
            use_chain_and_key(ctx, &credentials.client_chain_pem, &credentials.client_key_pem)?;
        }
        Ok(Config(Arc::new(shared)))
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Config, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let mut shared = Shared::new(Side::Server, scenario)?;
        let ctx = shared.ctx;
        if scenario.version == Version::Tls12 {
            shared.groups = scenario.groups(Side::Server).into_iter().map(group_id).collect();
        }
        use_chain_and_key(ctx, &credentials.chain_pem, &credentials.key_pem)?;
        let verify = match scenario.client_auth {
            ClientAuth::None => sys::WOLFSSL_VERIFY_NONE,
            ClientAuth::Requested => sys::WOLFSSL_VERIFY_PEER,
            ClientAuth::Required => sys::WOLFSSL_VERIFY_PEER | sys::WOLFSSL_VERIFY_FAIL_IF_NO_PEER_CERT,
        };
        if scenario.client_auth != ClientAuth::None {
            trust(ctx, &credentials.ca_pem)?;
        }
        // SAFETY: `ctx` is live and not yet shared.
        unsafe { sys::wolfSSL_CTX_set_verify(ctx, verify as c_int, None) };
        if let (Version::Tls12, Some(group)) = (scenario.version, scenario.group()) {
            // Of the groups it shares with the client, a TLS 1.2 server takes the first whose size
            // is its ephemeral key size (32 bytes by default), so P-384 needs 48 (a client
            // certificate's P-256 may be shared too). In TLS 1.3 the key share decides.
            let size = match group {
                Group::Secp384r1 => 48,
                _ => 32,
            };
            // SAFETY: `ctx` is live and not yet shared.
            check(unsafe { sys::wolfSSL_CTX_SetTmpEC_DHE_Sz(ctx, size) }, "setting the ECDHE key size")?;
        }
        Ok(Config(Arc::new(shared)))
    }

    fn new_client(&self, config: &Config, io: Endpoint) -> Result<WolfSslConnection, LibError> {
        let connection = WolfSslConnection::new(config, io)?;
        let ssl = connection.ssl;
        let name = config.0.server_name.as_ptr();
        // SAFETY: `ssl` is live; wolfSSL copies the name it is to verify.
        check(unsafe { sys::wolfSSL_check_domain_name(ssl, name) }, "setting the host name to verify")?;
        if let Some(session) = config.0.session.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            // SAFETY: `ssl` is live and the session is alive under the lock; wolfSSL copies it.
            check(unsafe { sys::wolfSSL_set_session(ssl, session.0) }, "setting the session to resume")?;
        }
        Ok(connection)
    }

    fn new_server(&self, config: &Config, io: Endpoint) -> Result<WolfSslConnection, LibError> {
        let connection = WolfSslConnection::new(config, io)?;
        let groups = &config.0.groups;
        if !groups.is_empty() {
            // A TLS 1.2 server intersects the client's groups with its connection's own, not
            // with its context's (which only TLS 1.3's key share follows): without these it
            // would take any group the client lists.
            // SAFETY: `ssl` is live; wolfSSL only reads the groups (its `int*` is not const).
            let ret =
                unsafe { sys::wolfSSL_set_groups(connection.ssl, groups.as_ptr().cast_mut(), groups.len() as c_int) };
            check(ret, "setting the connection's groups")?;
        }
        Ok(connection)
    }
}

impl Shared {
    /// A context for one side with exactly the scenario's version, suite and groups, and no
    /// resumption but the scenario's kind.
    fn new(side: Side, scenario: &Scenario) -> Result<Self, LibError> {
        init()?;
        // SAFETY: the method constructors return static tables; wolfSSL_CTX_new takes one.
        let ctx = unsafe {
            let method = match (side, scenario.version) {
                (Side::Client, Version::Tls12) => sys::wolfTLSv1_2_client_method(),
                (Side::Client, Version::Tls13) => sys::wolfTLSv1_3_client_method(),
                (Side::Server, Version::Tls12) => sys::wolfTLSv1_2_server_method(),
                (Side::Server, Version::Tls13) => sys::wolfTLSv1_3_server_method(),
            };
            sys::wolfSSL_CTX_new(method)
        };
        if ctx.is_null() {
            return Err(LibError::new("wolfSSL_CTX_new failed"));
        }
        // From here on, dropping `shared` frees the context.
        let shared = Shared {
            ctx,
            side,
            kind: scenario.kind,
            client_auth: scenario.client_auth,
            session: Mutex::new(None),
            groups: Vec::new(),
            server_name: CString::new(SERVER_NAME).expect("the server name has no NUL byte"),
        };
        // SAFETY: `ctx` is live and not yet shared; the callbacks are valid for any connection
        // whose IO contexts `WolfSslConnection::new` sets.
        unsafe {
            sys::wolfSSL_CTX_SetIORecv(ctx, Some(receive_callback));
            sys::wolfSSL_CTX_SetIOSend(ctx, Some(send_callback));
        }
        if let Some((group, suite)) = scenario.pins() {
            let ciphers = CString::new(cipher_name(scenario.version, scenario.key, suite)).expect("no NUL byte");
            let mut groups: Vec<c_int> = scenario.groups(side).into_iter().map(group_id).collect();
            debug_assert_eq!(groups[0], group_id(group));
            // SAFETY: `ctx` is live; wolfSSL copies the list and the groups.
            unsafe {
                check(sys::wolfSSL_CTX_set_cipher_list(ctx, ciphers.as_ptr()), "setting the cipher suite")?;
                // The supported groups in both versions and, in TLS 1.3, the client's key share:
                // the first one.
                check(
                    sys::wolfSSL_CTX_set_groups(ctx, groups.as_mut_ptr(), groups.len() as c_int),
                    "setting the groups",
                )?;
                // wolfSSL's session cache (process-wide) stores every session of a context with
                // the cache on, a client's too: on only where the server resumes from it.
                if !(side == Side::Server && scenario.kind == Kind::HandshakeResumeId) {
                    sys::wolfSSL_CTX_set_session_cache_mode(ctx, sys::WOLFSSL_SESS_CACHE_OFF as _);
                }
            }
        }
        Ok(shared)
    }
}

/// wolfSSL's global state (its RNG's and session cache's locks), set up once per process.
fn init() -> Result<(), LibError> {
    static INIT: OnceLock<c_int> = OnceLock::new();
    // SAFETY: wolfSSL_Init may be called once before anything else; OnceLock makes it once.
    let ret = *INIT.get_or_init(|| unsafe { sys::wolfSSL_Init() });
    check(ret, "wolfSSL_Init").map(drop)
}

/// The scenario's root as the only trust anchor (wolfSSL has no default store).
fn trust(ctx: *mut sys::WOLFSSL_CTX, ca_pem: &str) -> Result<(), LibError> {
    // SAFETY: `ctx` is live and not yet shared; wolfSSL copies the certificate.
    let ret = unsafe {
        sys::wolfSSL_CTX_load_verify_buffer(ctx, ca_pem.as_ptr(), ca_pem.len() as _, sys::WOLFSSL_FILETYPE_PEM as c_int)
    };
    check(ret, "adding the CA certificate").map(drop)
}

/// The leaf, the intermediates after it, and the leaf's PKCS#8 key.
fn use_chain_and_key(ctx: *mut sys::WOLFSSL_CTX, chain_pem: &str, key_pem: &str) -> Result<(), LibError> {
    // SAFETY: `ctx` is live and not yet shared; wolfSSL copies both.
    unsafe {
        check(
            sys::wolfSSL_CTX_use_certificate_chain_buffer(ctx, chain_pem.as_ptr(), chain_pem.len() as _),
            "setting the certificate chain",
        )?;
        check(
            sys::wolfSSL_CTX_use_PrivateKey_buffer(
                ctx,
                key_pem.as_ptr(),
                key_pem.len() as _,
                sys::WOLFSSL_FILETYPE_PEM as c_int,
            ),
            "setting the private key",
        )?;
    }
    Ok(())
}

/// wolfSSL's name of a suite, which its cipher lists take and `wolfSSL_get_cipher_name`
/// reports: OpenSSL's in TLS 1.2, its own (`TLS13-...`) in TLS 1.3.
fn cipher_name(version: Version, key: KeyType, suite: Suite) -> &'static str {
    match (version, suite) {
        (Version::Tls13, Suite::Aes128Gcm) => "TLS13-AES128-GCM-SHA256",
        (Version::Tls13, Suite::Aes256Gcm) => "TLS13-AES256-GCM-SHA384",
        (Version::Tls13, Suite::Chacha20Poly1305) => "TLS13-CHACHA20-POLY1305-SHA256",
        (Version::Tls12, _) => suite.openssl_name(version, key),
    }
}

/// wolfSSL's id of a group (the IANA code point).
fn group_id(group: Group) -> c_int {
    (match group {
        Group::X25519 => sys::WOLFSSL_ECC_X25519,
        Group::Secp256r1 => sys::WOLFSSL_ECC_SECP256R1,
        Group::Secp384r1 => sys::WOLFSSL_ECC_SECP384R1,
        Group::X25519Mlkem768 => sys::WOLFSSL_X25519MLKEM768,
    }) as c_int
}

/// The text of a wolfSSL error code, with the code.
fn error_text(code: c_int) -> String {
    // SAFETY: returns a static string for any code; wolfSSL takes the code back as an int.
    let text = unsafe { CStr::from_ptr(sys::wolfSSL_ERR_reason_error_string(code as c_ulong)) };
    format!("{} ({code})", text.to_string_lossy())
}

/// A wolfSSL setup call's result: WOLFSSL_SUCCESS, or the error naming the step.
fn check(ret: c_int, what: &str) -> Result<(), LibError> {
    match ret == sys::WOLFSSL_SUCCESS as c_int {
        true => Ok(()),
        false => Err(LibError::new(format!("{what}: {}", error_text(ret)))),
    }
}

/// One side of a connection. wolfSSL's IO contexts point at `io`, which is boxed so that it
/// stays put when the connection moves.
pub struct WolfSslConnection {
    ssl: *mut sys::WOLFSSL,
    io: Box<Endpoint>,
    config: Arc<Shared>,
    done: bool,
}

/// What one call on a connection came to, by `wolfSSL_get_error`.
enum Outcome {
    /// The peer has to move first (the transport said it would block).
    WouldBlock,
    /// The peer's close_notify has arrived.
    Closed,
    Failed(String),
}

impl WolfSslConnection {
    fn new(config: &Config, io: Endpoint) -> Result<Self, LibError> {
        // SAFETY: the context is live and set up; the connection takes a reference to it.
        let ssl = unsafe { sys::wolfSSL_new(config.0.ctx) };
        if ssl.is_null() {
            return Err(LibError::new("wolfSSL_new failed"));
        }
        let mut connection = WolfSslConnection { ssl, io: Box::new(io), config: config.0.clone(), done: false };
        let io: *mut Endpoint = &mut *connection.io;
        // SAFETY: `ssl` is live; `io` is boxed and outlives it (see Drop).
        unsafe {
            sys::wolfSSL_SetIOReadCtx(ssl, io.cast());
            sys::wolfSSL_SetIOWriteCtx(ssl, io.cast());
        }
        Ok(connection)
    }

    /// What a call that did not succeed came to: `ret` is its return value.
    fn outcome(&self, ret: c_int) -> Outcome {
        // SAFETY: `ssl` is live.
        let error = unsafe { sys::wolfSSL_get_error(self.ssl, ret) };
        match error as u32 {
            sys::WOLFSSL_ERROR_WANT_READ | sys::WOLFSSL_ERROR_WANT_WRITE => Outcome::WouldBlock,
            sys::WOLFSSL_ERROR_ZERO_RETURN => Outcome::Closed,
            _ => Outcome::Failed(error_text(error)),
        }
    }

    /// Reads what arrived after the handshake into one byte: true once the peer has closed.
    /// No application data flows here, so none can be lost.
    fn read_nothing(&mut self, what: &str) -> Result<bool, LibError> {
        let mut byte = 0u8;
        // SAFETY: `ssl` is live and `byte` is writable for one byte.
        let ret = unsafe { sys::wolfSSL_read(self.ssl, (&mut byte as *mut u8).cast(), 1) };
        if ret > 0 {
            return Err(LibError::new(format!("application data arrived {what}")));
        }
        match self.outcome(ret) {
            Outcome::WouldBlock => Ok(false),
            Outcome::Closed => Ok(true),
            Outcome::Failed(e) => Err(LibError::new(format!("wolfSSL_read: {e}"))),
        }
    }
}

impl Drop for WolfSslConnection {
    fn drop(&mut self) {
        // A client keeps the session of its handshake for the next connection to resume.
        if self.done && self.config.side == Side::Client && self.config.kind == Kind::HandshakeResumeId {
            // SAFETY: `ssl` is live; the session returned is a new reference, owned by `Session`.
            let session = unsafe { sys::wolfSSL_get1_session(self.ssl) };
            if !session.is_null() {
                *self.config.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(Session(session));
            }
        }
        // SAFETY: created in `new`, freed once, before its boxed transport.
        unsafe { sys::wolfSSL_free(self.ssl) };
    }
}

impl Connection for WolfSslConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        if self.done {
            self.read_nothing("before the handshake completed on both sides")?;
            return Ok(true);
        }
        // SAFETY: `ssl` is live; wolfSSL_negotiate connects or accepts by the context's side.
        let ret = unsafe { sys::wolfSSL_negotiate(self.ssl) };
        if ret == sys::WOLFSSL_SUCCESS as c_int {
            self.done = true;
            return Ok(true);
        }
        match self.outcome(ret) {
            Outcome::WouldBlock => Ok(false),
            Outcome::Closed => Err(LibError::new("the peer closed during the handshake")),
            Outcome::Failed(e) => Err(LibError::new(e)),
        }
    }

    fn send(&mut self, mut data: &[u8]) -> Result<(), LibError> {
        while !data.is_empty() {
            let len = data.len().min(c_int::MAX as usize) as c_int;
            // SAFETY: `ssl` is live and `data` is readable for `len` bytes. The in-memory
            // transport takes every byte, so wolfSSL never has to wait to write.
            let n = unsafe { sys::wolfSSL_write(self.ssl, data.as_ptr().cast(), len) };
            if n <= 0 {
                let error = match self.outcome(n) {
                    Outcome::WouldBlock => "blocked on a transport that never blocks".into(),
                    Outcome::Closed => "the peer closed".into(),
                    Outcome::Failed(e) => e,
                };
                return Err(LibError::new(format!("wolfSSL_write: {error}")));
            }
            data = &data[n as usize..];
        }
        Ok(())
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        let len = buf.len().min(c_int::MAX as usize) as c_int;
        // SAFETY: `ssl` is live and `buf` is writable for `len` bytes.
        let n = unsafe { sys::wolfSSL_read(self.ssl, buf.as_mut_ptr().cast(), len) };
        if n > 0 {
            return Ok(n as usize);
        }
        match self.outcome(n) {
            // No complete record yet, or the peer closed: nothing more to read now either way.
            Outcome::WouldBlock | Outcome::Closed => Ok(0),
            Outcome::Failed(e) => Err(LibError::new(format!("wolfSSL_read: {e}"))),
        }
    }

    fn close(&mut self) -> Result<(), LibError> {
        // The first wolfSSL_shutdown writes close_notify and returns without waiting for the
        // peer's: WOLFSSL_SHUTDOWN_NOT_DONE, or WOLFSSL_SUCCESS when the peer's had arrived.
        // SAFETY: `ssl` is live.
        match unsafe { sys::wolfSSL_shutdown(self.ssl) } as u32 {
            sys::WOLFSSL_SHUTDOWN_NOT_DONE | sys::WOLFSSL_SUCCESS => Ok(()),
            _ => Err(LibError::new(format!("wolfSSL_shutdown: {}", error_text(self.last_error())))),
        }
    }

    fn peer_closed(&mut self) -> Result<bool, LibError> {
        // Once this side has sent its own close_notify, wolfSSL_read no longer says that the
        // peer's had arrived; wolfSSL's shutdown state still does.
        // SAFETY: `ssl` is live.
        let state = unsafe { sys::wolfSSL_get_shutdown(self.ssl) } as u32;
        if state & sys::WOLFSSL_RECEIVED_SHUTDOWN != 0 {
            return Ok(true);
        }
        self.read_nothing("where close_notify was awaited")
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        let ssl = self.ssl;
        // SAFETY: `ssl` is live; these calls only read it and return static strings or NULL.
        let (version, cipher, curve, resumed) = unsafe {
            let curve = sys::wolfSSL_get_curve_name(ssl);
            (
                sys::wolfSSL_version(ssl),
                CStr::from_ptr(sys::wolfSSL_get_cipher_name(ssl)).to_string_lossy(),
                (!curve.is_null()).then(|| CStr::from_ptr(curve).to_string_lossy()),
                sys::wolfSSL_session_reused(ssl) == 1,
            )
        };
        let version = match version as u32 {
            sys::TLS1_2_VERSION => Version::Tls12,
            sys::TLS1_3_VERSION => Version::Tls13,
            v => return Err(LibError::new(format!("negotiated an unexpected protocol version ({v:#06x})"))),
        };
        let suite = Suite::negotiated(cipher.as_ref(), |key, suite| cipher_name(version, key, suite))?;
        let group = match curve.as_deref() {
            Some("X25519") => Some(Group::X25519),
            Some("SECP256R1") => Some(Group::Secp256r1),
            Some("SECP384R1") => Some(Group::Secp384r1),
            Some("X25519MLKEM768") => Some(Group::X25519Mlkem768),
            // A resumed TLS 1.2 session exchanges no key.
            None if version == Version::Tls12 && resumed => None,
            other => return Err(LibError::new(format!("negotiated an unexpected key-exchange group: {other:?}"))),
        };
        // This build keeps no peer certificate (no KEEP_PEER_CERT or SESSION_CERTS), so the
        // server cannot show one: what it reports is its verify mode's contract. With
        // WOLFSSL_VERIFY_FAIL_IF_NO_PEER_CERT a handshake completes only with a client
        // certificate that verified against the CA (or, resumed, a session that had one).
        let client_cert_verified =
            (self.config.side == Side::Server).then_some(self.done && self.config.client_auth == ClientAuth::Required);
        Ok(Negotiated { version, suite, group, resumed, ems: None, client_cert_verified, ticket_received: None })
    }
}

impl WolfSslConnection {
    /// The error of the connection's last failed call.
    fn last_error(&self) -> c_int {
        // SAFETY: `ssl` is live; with 0, wolfSSL_get_error returns the error it recorded.
        unsafe { sys::wolfSSL_get_error(self.ssl, 0) }
    }
}

/// wolfSSL's receive callback: what the peer has sent so far, or WANT_READ when nothing has
/// arrived; at the end of a socket's stream, CONN_CLOSE.
unsafe extern "C" fn receive_callback(_: *mut sys::WOLFSSL, buf: *mut c_char, len: c_int, io: *mut c_void) -> c_int {
    // SAFETY: `io` is the connection's boxed Endpoint (set in `WolfSslConnection::new`), alive
    // while the connection is and borrowed by no one else during a wolfSSL call; `buf` is
    // writable for `len` bytes.
    let (io, buf) =
        unsafe { (&mut *io.cast::<Endpoint>(), std::slice::from_raw_parts_mut(buf.cast::<u8>(), len.max(0) as usize)) };
    match io.read(buf) {
        Ok(0) if !buf.is_empty() => sys::IOerrors_WOLFSSL_CBIO_ERR_CONN_CLOSE,
        Ok(n) => n as c_int,
        Err(e) if e.kind() == ErrorKind::WouldBlock => sys::IOerrors_WOLFSSL_CBIO_ERR_WANT_READ,
        Err(_) => sys::IOerrors_WOLFSSL_CBIO_ERR_GENERAL,
    }
}

/// wolfSSL's send callback: all of `buf` to the transport.
unsafe extern "C" fn send_callback(_: *mut sys::WOLFSSL, buf: *mut c_char, len: c_int, io: *mut c_void) -> c_int {
    // SAFETY: as in `receive_callback`, with `buf` readable for `len` bytes.
    let (io, buf) =
        unsafe { (&mut *io.cast::<Endpoint>(), std::slice::from_raw_parts(buf.cast::<u8>(), len.max(0) as usize)) };
    match io.write(buf) {
        Ok(n) => n as c_int,
        Err(e) if e.kind() == ErrorKind::WouldBlock => sys::IOerrors_WOLFSSL_CBIO_ERR_WANT_WRITE,
        Err(_) => sys::IOerrors_WOLFSSL_CBIO_ERR_GENERAL,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tlsbench_harness::driver::{sample, SampleSpec};
    use tlsbench_harness::step::{handshake_pair, Unmetered};
    use tlsbench_harness::testing::{self, pki, scenario};
    use tlsbench_harness::transport::{IoEvent, Record};
    use tlsbench_harness::{Error, Link};

    use super::*;

    /// Handshake message types (RFC 8446, 4).
    const CLIENT_HELLO: u8 = 1;
    const SERVER_HELLO: u8 = 2;

    fn configs(client: &Scenario, server: &Scenario) -> (Config, Config) {
        let client = WolfSsl.client_config(client, pki()).unwrap_or_else(|e| panic!("client config: {e}"));
        let server = WolfSsl.server_config(server, pki()).unwrap_or_else(|e| panic!("server config: {e}"));
        (client, server)
    }

    /// A client against a server, through their handshakes, or the error (naming its side).
    fn connect(client: &Config, server: &Config) -> Result<(WolfSslConnection, WolfSslConnection), String> {
        testing::connect_configs(&WolfSsl, &WolfSsl, client, server)
    }

    #[test]
    fn every_supported_scenario_samples_with_positive_values_on_both_sides() {
        // Through the real driver, once each: every gate passes at least once (transfers check
        // the bytes' count and digest).
        let measured = testing::check_every_supported_scenario(&WolfSsl, &WolfSsl);
        // Everything but tickets, Ed25519 and EMS off.
        assert!(measured > 400, "only {measured} scenarios");
    }

    #[test]
    fn the_library_string_names_wolfssl_its_release_and_its_configure_options() {
        let library = WolfSsl.library();
        assert!(library.starts_with("wolfSSL 5."), "{library}");
        assert!(library.contains("(wolfssl-sys 5."), "{library}");
        let options = WolfSsl::configure_options();
        for option in ["--enable-tls13", "--enable-curve25519", "--enable-mlkem=yes,all", "--disable-oldtls"] {
            assert!(options.iter().any(|o| o == option), "{option} in {options:?}");
        }
        // Neither the build's paths nor its compiler flags.
        assert!(!library.contains('/') && !library.contains("CFLAGS"), "{library}");
        assert!(library.ends_with(&format!("configure: {})", options.join(" "))), "{library}");
        assert_eq!(WolfSsl.tls_library(), format!("wolfSSL {}", version()));
    }

    #[test]
    fn what_this_build_lacks_is_unsupported_with_the_reason() {
        for (name, reason) in [
            ("handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", NO_TICKETS),
            ("handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm", NO_TICKETS),
            ("handshake-full_1.3_x25519_ed25519_aes-128-gcm", NO_ED25519),
            ("handshake-resume-id_1.2_secp256r1_ed25519_aes-128-gcm_mtls", NO_ED25519),
            ("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems", NO_EMS_REPORT),
            ("handshake-full_1.2_default_rsa-2048_default", DEFAULTS_TLS12),
        ] {
            let asked = scenario(name);
            let err = sample(&WolfSsl, &WolfSsl, &asked, pki(), &SampleSpec::timed(Duration::ZERO, Duration::ZERO));
            assert!(matches!(&err, Err(Error::Unsupported(r)) if r == reason), "{name}: {err:?}");
        }
    }

    #[test]
    fn a_server_chain_from_another_ca_fails_verification() {
        let client = scenario("handshake-full_1.3_x25519_rsa-2048_aes-128-gcm");
        let server = Scenario { key: KeyType::EcdsaP256, ..client };
        let (client, server) = configs(&client, &server);
        let Err(error) = connect(&client, &server) else { panic!("the client accepted a chain its CA did not sign") };
        assert!(error.starts_with("client: ASN no signer error to confirm failure (-188)"), "{error}");
    }

    #[test]
    fn a_certificate_for_another_host_name_fails_verification() {
        for name in
            ["handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm"]
        {
            let asked = scenario(name);
            let (client_config, server_config) = configs(&asked, &asked);
            let link = Link::new();
            let mut client = WolfSsl.new_client(&client_config, link.client()).unwrap_or_else(|e| panic!("{e}"));
            let other = CString::new("other.tlsbench.test").expect("no NUL byte");
            // SAFETY: the connection is live; wolfSSL replaces the name to verify with a copy.
            check(unsafe { sys::wolfSSL_check_domain_name(client.ssl, other.as_ptr()) }, "another name").unwrap();
            let mut server = WolfSsl.new_server(&server_config, link.server()).unwrap_or_else(|e| panic!("{e}"));
            let error = testing::client_refusal(&mut client, &mut server, &link);
            assert_eq!(error, "peer subject name mismatch (-322)", "{name}");
        }
    }

    /// What `negotiated` says of a server that requires a client certificate rests on
    /// wolfSSL's verify mode: without a certificate, or with one the CA did not sign, there is
    /// no handshake.
    #[test]
    fn a_server_that_requires_a_client_certificate_completes_only_with_one_that_verifies() {
        let required = scenario("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls");
        for (client, what) in [
            (Scenario { client_auth: ClientAuth::None, ..required }, "no certificate"),
            (Scenario { key: KeyType::Rsa2048, ..required }, "a certificate from another CA"),
        ] {
            let client = WolfSsl.client_config(&client, pki()).unwrap_or_else(|e| panic!("{e}"));
            // The client trusts the server's CA (not the one of its own certificate).
            let server_ca = &pki().credentials(KeyType::EcdsaP256).unwrap().ca_pem;
            trust(client.0.ctx, server_ca).unwrap();
            let server = WolfSsl.server_config(&required, pki()).unwrap_or_else(|e| panic!("{e}"));
            let result = connect(&client, &server);
            let Err(error) = result else { panic!("the server completed with {what}") };
            assert!(error.starts_with("server: "), "{what}: {error}");
        }
        let (client, server) = configs(&required, &required);
        let (_, server) = connect(&client, &server).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(server.negotiated().map(|n| n.client_cert_verified).map_err(|e| e.0), Ok(Some(true)));
    }

    /// The gates accept a group of None, so they alone would not notice a side that stopped
    /// reporting it; this covers every group, key type and version on both sides.
    #[test]
    fn both_sides_report_what_was_negotiated() {
        for &version in Version::ALL {
            for &group in Group::ALL {
                for &key in &WolfSsl.capabilities().keys {
                    let suite = Suite::Chacha20Poly1305;
                    let Ok(asked) = Scenario::new(Kind::HandshakeFull, version, group, key, suite) else { continue };
                    let (client, server) = configs(&asked, &asked);
                    let (client, server) = connect(&client, &server).unwrap_or_else(|e| panic!("{asked}: {e}"));
                    let expected = Negotiated {
                        version,
                        suite,
                        group: Some(group),
                        resumed: false,
                        ems: None,
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

    /// A TLS 1.2 client that lists another group first (as s2n-tls's policies do, leaving the
    /// choice to the server) still gets the scenario's, the only one the server takes.
    #[test]
    fn a_tls_1_2_server_takes_only_its_own_group_whatever_the_client_lists_first() {
        for (name, other) in [
            ("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", Group::Secp256r1),
            ("handshake-full_1.2_secp256r1_rsa-2048_aes-128-gcm", Group::X25519),
            ("handshake-full_1.2_secp384r1_ecdsa-p256_aes-128-gcm_mtls", Group::Secp256r1),
        ] {
            let asked = scenario(name);
            let (client_config, server_config) = configs(&asked, &asked);
            let group = asked.group().unwrap();
            let mut groups = [group_id(other), group_id(group)];
            // SAFETY: the context is live and not yet used by a connection; wolfSSL copies the list.
            let ret = unsafe { sys::wolfSSL_CTX_set_groups(client_config.0.ctx, groups.as_mut_ptr(), 2) };
            check(ret, "setting the client's groups").unwrap();
            let (client, server) = connect(&client_config, &server_config).unwrap_or_else(|e| panic!("{name}: {e}"));
            for (side, negotiated) in [("client", client.negotiated()), ("server", server.negotiated())] {
                assert_eq!(negotiated.map(|n| n.group).map_err(|e| e.0), Ok(Some(group)), "{name}: {side}");
            }
        }
    }

    #[test]
    fn a_session_id_resumes_on_both_sides_after_one_full_handshake() {
        let asked = scenario("handshake-resume-id_1.2_secp384r1_rsa-2048_aes-256-gcm_mtls");
        let (client_config, server_config) = configs(&asked, &asked);
        for resumed in [false, true, true] {
            let (client, server) = connect(&client_config, &server_config).unwrap_or_else(|e| panic!("{e}"));
            let seen =
                |n: Result<Negotiated, LibError>| n.map_err(|e| e.0).map(|n| (n.resumed, n.client_cert_verified));
            assert_eq!(seen(client.negotiated()), Ok((resumed, None)));
            assert_eq!(seen(server.negotiated()), Ok((resumed, Some(true))));
        }
        // A full handshake's server keeps no session, so nothing resumes.
        let full = scenario("handshake-full_1.2_secp384r1_rsa-2048_aes-256-gcm");
        let (client_config, server_config) = configs(&full, &full);
        for _ in 0..2 {
            let (client, server) = connect(&client_config, &server_config).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(client.negotiated().map(|n| n.resumed).map_err(|e| e.0), Ok(false));
            assert_eq!(server.negotiated().map(|n| n.resumed).map_err(|e| e.0), Ok(false));
        }
    }

    /// The client's key share is for the scenario's group: one ClientHello, and the server
    /// answers with one ServerHello (a HelloRetryRequest would be a second).
    #[test]
    fn a_tls_1_3_handshake_takes_one_client_hello_for_every_group() {
        for &group in Group::ALL {
            let asked = Scenario::new(Kind::HandshakeFull, Version::Tls13, group, KeyType::EcdsaP256, Suite::Aes128Gcm)
                .expect("a valid scenario");
            let (client_config, server_config) = configs(&asked, &asked);
            let link = Link::with_io_log();
            let mut client = WolfSsl.new_client(&client_config, link.client()).unwrap_or_else(|e| panic!("{e}"));
            let mut server = WolfSsl.new_server(&server_config, link.server()).unwrap_or_else(|e| panic!("{e}"));
            handshake_pair(&mut client, &mut server, &link, &mut Unmetered).unwrap_or_else(|e| panic!("{asked}: {e}"));
            let log = link.take_io_log();
            let count = |side: Side, message: u8| {
                let records = log.iter().filter_map(|event| match event {
                    IoEvent::Write { side: s, records, .. } if *s == side => Some(records),
                    _ => None,
                });
                let handshake = records.flatten().filter(|r| r.content_type == Record::HANDSHAKE);
                handshake.flat_map(|r| r.messages.iter().flatten()).filter(|&&m| m == message).count()
            };
            assert_eq!((count(Side::Client, CLIENT_HELLO), count(Side::Server, SERVER_HELLO)), (1, 1), "{asked}");
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
            testing::check_close_notify(name, &mut client, &mut server);
        }
    }
}
