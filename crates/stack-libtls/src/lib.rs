//! tlsbench adapter for LibreTLS's libtls API (on the system's OpenSSL) through thin hand-written
//! bindings: one `tls_config` pinned to the scenario per side, contexts over the in-memory transport.

use std::ffi::{c_int, c_void, CStr, CString};
use std::io::{self, Read, Write};
use std::ptr;
use std::sync::Once;
use std::sync::{Arc, Mutex, PoisonError};

use tlsbench_harness::pki::SERVER_NAME;
use tlsbench_harness::{
    Backend, Capabilities, ClientAuth, Connection, Endpoint, Exclusion, Group, Kind, LibError, Negotiated, Pki,
    Scenario, Side, Stack, Suite, Version,
};

/// Why a TLS 1.3 scenario with another suite than AES-256-GCM is unsupported.
const TLS13_SUITE: &str =
    "libtls: TLS 1.3 keeps OpenSSL's default suites, AES-256-GCM first, so no other TLS 1.3 suite can be pinned";

/// LibreTLS's libtls, linked dynamically.
pub struct LibTls;

/// One side's configuration; a server also has its listening context, from which every
/// connection is accepted. Each connection holds this alive, as libtls keeps pointers into it.
pub struct Config(Arc<Shared>);

struct Shared {
    side: Side,
    config: *mut sys::tls_config,
    /// Server: the context `tls_accept_cbs` derives each connection's context from.
    server: *mut sys::tls,
    /// Held around `tls_accept_cbs`, which records its errors in the server context.
    accepting: Mutex<()>,
}

// SAFETY: LibreTLS counts the references to a config under a mutex, and the server context is
// used only under `accepting`; each connection's context stays on the thread that made it.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: both were created by libtls in `Shared::new`; every connection context
        // derived from them is freed (each holds an Rc of this).
        unsafe {
            if !self.server.is_null() {
                sys::tls_free(self.server);
            }
            sys::tls_config_free(self.config);
        }
    }
}

impl Stack for LibTls {
    type ClientConfig = Config;
    type ServerConfig = Config;
    type Client = LibTlsConnection;
    type Server = LibTlsConnection;

    fn id(&self) -> &'static str {
        "libtls"
    }

    fn library(&self) -> String {
        // libtls has no runtime version call; this is the version built against (see build.rs).
        format!("LibreTLS {}", env!("LIBTLS_VERSION"))
    }

    /// LibreTLS runs on the system's OpenSSL: the loaded libcrypto's own version string.
    fn backend(&self) -> Backend {
        // SAFETY: OpenSSL_version(OPENSSL_VERSION) returns a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(sys::OpenSSL_version(0)) }.to_string_lossy().into_owned();
        let number = version.split_whitespace().nth(1).unwrap_or(&version).to_string();
        Backend::new("OpenSSL libcrypto", number, Some("system library".into()))
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // libtls hides what would pin or check the rest: `tls_config_set_ciphers` takes
            // OpenSSL cipher strings for TLS 1.2 only. TLS 1.3 keeps OpenSSL's default suites
            // (AES-256-GCM, ChaCha20-Poly1305, AES-128-GCM), and the server prefers its own order
            // (libtls's default), so libtls with itself negotiates AES-256-GCM, as any server
            // built on libtls does; the gates check it. (With a peer that pins another suite,
            // libtls offers or accepts that one too, but a stack's capabilities cannot say so.)
            // Groups are pinned in both versions (`tls_config_set_ecdhecurves`); libtls 3.7 on
            // OpenSSL 3.0 has no ML-KEM. Sessions are reported on the client only
            // (`tls_conn_session_resumed`), so a server's resumption could not be checked, and
            // the server's sessions (`tls_config_set_session_lifetime`) turn on session IDs and
            // tickets together; EMS cannot be switched off.
            kinds: vec![
                Kind::HandshakeFull,
                Kind::Transfer,
                Kind::IoProfile,
                Kind::Memory100,
                Kind::Memory1000,
                Kind::Memory10000,
                Kind::ContextServer,
                Kind::ContextClient,
                Kind::ContextClientSystem,
            ],
            groups: vec![Group::X25519, Group::Secp256r1, Group::Secp384r1],
            ems_off: false,
            // The reasons, named where a cell says why it is unsupported.
            exclusions: vec![
                Exclusion::new("*_1.3_*_aes-128-gcm*", TLS13_SUITE),
                Exclusion::new("*_1.3_*_chacha20-poly1305*", TLS13_SUITE),
                Exclusion::new(
                    "handshake-resume-*",
                    "libtls: resumption is reported on the client only, so the server's could not be checked",
                ),
                Exclusion::new("*_no-ems", "libtls: extended master secret cannot be switched off"),
            ],
            ..Capabilities::everything()
        }
    }

    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Config, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let shared = Shared::new(Side::Client, scenario)?;
        // The scenario's root as the only trust anchor; the name is verified against the
        // server name given to `tls_connect_cbs`.
        shared.configured(
            |c| unsafe { sys::tls_config_set_ca_mem(c, credentials.ca_pem.as_ptr(), credentials.ca_pem.len()) },
            "setting the CA",
        )?;
        if scenario.client_auth == ClientAuth::Required {
            shared.keypair(&credentials.client_chain_pem, &credentials.client_key_pem)?;
        }
        Ok(Config(Arc::new(shared)))
    }

    /// `tls_config_set_ca_file` on `SSL_CERT_FILE`: a new config's default CA file is a path
    /// compiled into libtls that no variable moves. libtls only reads the file here; it parses
    /// the roots into each connection's context at `tls_connect`, so that cost is the first
    /// handshake's, not the config's (docs/scenarios.md#contexts).
    fn client_config_system(&self, scenario: &Scenario, pki: &Pki) -> Option<Result<Config, LibError>> {
        let build = || {
            let credentials = pki.credentials(scenario.key).map_err(LibError)?;
            let shared = Shared::new(Side::Client, scenario)?;
            let file = std::env::var_os("SSL_CERT_FILE")
                .ok_or_else(|| LibError::new("SSL_CERT_FILE is not set: no system bundle to load"))?;
            let file = std::ffi::CString::new(file.into_encoded_bytes()).map_err(LibError::new)?;
            // SAFETY: a live config and a NUL-terminated path, which libtls reads here.
            shared.configured(|c| unsafe { sys::tls_config_set_ca_file(c, file.as_ptr()) }, "setting the CA file")?;
            if scenario.client_auth == ClientAuth::Required {
                shared.keypair(&credentials.client_chain_pem, &credentials.client_key_pem)?;
            }
            Ok(Config(Arc::new(shared)))
        };
        Some(build())
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Config, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let mut shared = Shared::new(Side::Server, scenario)?;
        shared.keypair(&credentials.chain_pem, &credentials.key_pem)?;
        if scenario.client_auth != ClientAuth::None {
            shared.configured(
                |c| unsafe { sys::tls_config_set_ca_mem(c, credentials.ca_pem.as_ptr(), credentials.ca_pem.len()) },
                "setting the CA",
            )?;
            // SAFETY: a live config. libtls fails the handshake on a certificate that does not
            // verify, in both modes; the optional one lets a client without one through.
            unsafe {
                match scenario.client_auth {
                    ClientAuth::Required => sys::tls_config_verify_client(shared.config),
                    _ => sys::tls_config_verify_client_optional(shared.config),
                }
            }
        }
        // SAFETY: creating a context has no preconditions.
        shared.server = unsafe { sys::tls_server() };
        if shared.server.is_null() {
            return Err(LibError::new("tls_server: out of memory"));
        }
        // SAFETY: both live; libtls builds the server's SSL_CTX from the config here.
        if unsafe { sys::tls_configure(shared.server, shared.config) } != 0 {
            return Err(LibError::new(format!("configuring the server: {}", error(shared.server))));
        }
        Ok(Config(Arc::new(shared)))
    }

    fn new_client(&self, config: &Config, io: Endpoint) -> Result<LibTlsConnection, LibError> {
        // SAFETY: creating a context has no preconditions.
        let ctx = unsafe { sys::tls_client() };
        if ctx.is_null() {
            return Err(LibError::new("tls_client: out of memory"));
        }
        // From here on, dropping the connection frees the context.
        let mut connection =
            LibTlsConnection { ctx, io: Box::new(io), config: config.0.clone(), done: false, early: None };
        let name = CString::new(SERVER_NAME).expect("the server name has no NUL byte");
        let arg: *mut Endpoint = &mut *connection.io;
        // SAFETY: live context and config; libtls copies the server name; `arg` is the boxed
        // endpoint, which outlives the context (see Drop).
        unsafe {
            if sys::tls_configure(ctx, config.0.config) != 0 {
                return Err(LibError::new(format!("configuring the client: {}", error(ctx))));
            }
            if sys::tls_connect_cbs(ctx, read_cb, write_cb, arg.cast(), name.as_ptr()) != 0 {
                return Err(LibError::new(format!("tls_connect_cbs: {}", error(ctx))));
            }
        }
        Ok(connection)
    }

    fn new_server(&self, config: &Config, io: Endpoint) -> Result<LibTlsConnection, LibError> {
        let mut io = Box::new(io);
        let arg: *mut Endpoint = &mut *io;
        let mut ctx = ptr::null_mut();
        // SAFETY: the server context is live (in `config`); `arg` is the boxed endpoint, moved
        // into the connection that owns the new context.
        let _accepting = config.0.accepting.lock().unwrap_or_else(PoisonError::into_inner);
        if unsafe { sys::tls_accept_cbs(config.0.server, &mut ctx, read_cb, write_cb, arg.cast()) } != 0 {
            return Err(LibError::new(format!("tls_accept_cbs: {}", error(config.0.server))));
        }
        Ok(LibTlsConnection { ctx, io, config: config.0.clone(), done: false, early: None })
    }
}

impl Shared {
    /// A config with exactly the scenario's version and, pinned, its TLS 1.2 suite and groups, in
    /// the side's order.
    fn new(side: Side, scenario: &Scenario) -> Result<Self, LibError> {
        static INIT: Once = Once::new();
        // SAFETY: no preconditions; once per process (libtls documents it as idempotent too).
        INIT.call_once(|| unsafe {
            sys::tls_init();
        });
        // SAFETY: no preconditions.
        let config = unsafe { sys::tls_config_new() };
        if config.is_null() {
            return Err(LibError::new("tls_config_new: out of memory"));
        }
        let shared = Shared { side, config, server: ptr::null_mut(), accepting: Mutex::new(()) };
        // SAFETY (the closures): a live config, and NUL-terminated strings libtls copies.
        let protocol = match scenario.version {
            Version::Tls12 => sys::TLS_PROTOCOL_TLSV1_2,
            Version::Tls13 => sys::TLS_PROTOCOL_TLSV1_3,
        };
        shared.configured(|c| unsafe { sys::tls_config_set_protocols(c, protocol) }, "setting the protocol version")?;
        // With the library's defaults, the rest is libtls's own (its "secure" ciphers and curves).
        let Some((_, suite)) = scenario.pins() else { return Ok(shared) };
        // In TLS 1.3 the suites are OpenSSL's defaults: `tls_config_set_ciphers` has no say there.
        if scenario.version == Version::Tls12 {
            let cipher = CString::new(suite.openssl_name(Version::Tls12, scenario.key)).expect("no NUL byte");
            shared.configured(
                |c| unsafe { sys::tls_config_set_ciphers(c, cipher.as_ptr()) },
                "setting the cipher suite",
            )?;
        }
        let groups = scenario.groups(side).iter().map(|&g| g.openssl_name()).collect::<Vec<_>>().join(",");
        let groups = CString::new(groups).expect("no NUL byte");
        shared.configured(|c| unsafe { sys::tls_config_set_ecdhecurves(c, groups.as_ptr()) }, "setting the groups")?;
        Ok(shared)
    }

    /// The chain (leaf, then intermediates) and the leaf's key; libtls copies both.
    fn keypair(&self, chain_pem: &str, key_pem: &str) -> Result<(), LibError> {
        // SAFETY: a live config; both buffers are readable for their lengths.
        self.configured(
            |c| unsafe {
                sys::tls_config_set_keypair_mem(c, chain_pem.as_ptr(), chain_pem.len(), key_pem.as_ptr(), key_pem.len())
            },
            "setting the certificate chain and key",
        )
    }

    /// Runs one `tls_config_*` setter; on failure, the config's own error.
    fn configured(&self, set: impl FnOnce(*mut sys::tls_config) -> c_int, what: &str) -> Result<(), LibError> {
        if set(self.config) == 0 {
            return Ok(());
        }
        // SAFETY: a live config; the message is owned by it and copied at once.
        let message = unsafe { sys::tls_config_error(self.config) };
        let message = if message.is_null() {
            "unknown error".into()
        } else {
            unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned()
        };
        Err(LibError::new(format!("{what}: {message}")))
    }
}

/// One side of a connection. libtls's callback argument points at `io`, which is boxed so that
/// it stays put when the connection moves.
pub struct LibTlsConnection {
    ctx: *mut sys::tls,
    io: Box<Endpoint>,
    config: Arc<Shared>,
    done: bool,
    /// A byte `peer_closed` read instead of a close_notify.
    early: Option<u8>,
}

impl Drop for LibTlsConnection {
    fn drop(&mut self) {
        // SAFETY: the context was created for this connection and is freed once, before `io`.
        unsafe { sys::tls_free(self.ctx) };
    }
}

impl Connection for LibTlsConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        if self.done {
            // Read what the peer sent since (an OpenSSL server's TLS 1.3 tickets, which libtls
            // cannot turn off). No application data is sent before both sides complete.
            let mut byte = [0u8; 1];
            // SAFETY: a live context; `byte` is writable for its length.
            return match unsafe { sys::tls_read(self.ctx, byte.as_mut_ptr().cast(), byte.len()) } {
                0 | sys::TLS_WANT_POLLIN_ISIZE => Ok(true),
                n if n > 0 => {
                    Err(LibError::new("application data arrived before the handshake completed on both sides"))
                }
                _ => Err(LibError::new(format!("reading after the handshake: {}", error(self.ctx)))),
            };
        }
        // SAFETY: a live context.
        match unsafe { sys::tls_handshake(self.ctx) } {
            0 => {
                self.done = true;
                Ok(true)
            }
            // The transport said it would block: the peer has to move first.
            sys::TLS_WANT_POLLIN | sys::TLS_WANT_POLLOUT => Ok(false),
            _ => Err(LibError::new(error(self.ctx))),
        }
    }

    fn send(&mut self, mut data: &[u8]) -> Result<(), LibError> {
        while !data.is_empty() {
            // SAFETY: a live context; `data` is readable for its length. The in-memory transport
            // takes every byte, so libtls never has to wait to write: any error is a failure.
            let n = unsafe { sys::tls_write(self.ctx, data.as_ptr().cast(), data.len()) };
            if n <= 0 {
                return Err(LibError::new(format!("tls_write: {}", error(self.ctx))));
            }
            data = &data[n as usize..];
        }
        Ok(())
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        if let (Some(byte), Some(first)) = (self.early, buf.first_mut()) {
            *first = byte;
            self.early = None;
            return Ok(1);
        }
        // SAFETY: a live context; `buf` is writable for its length.
        match unsafe { sys::tls_read(self.ctx, buf.as_mut_ptr().cast(), buf.len()) } {
            // No complete record yet, or the peer closed: nothing more to read now either way.
            0 | sys::TLS_WANT_POLLIN_ISIZE => Ok(0),
            n if n > 0 => Ok(n as usize),
            _ => Err(LibError::new(format!("tls_read: {}", error(self.ctx)))),
        }
    }

    fn close(&mut self) -> Result<(), LibError> {
        // tls_close calls SSL_shutdown once: it sends close_notify and does not wait for the
        // peer's (it would return TLS_WANT_POLLOUT only if the write blocked, which the
        // in-memory transport never does). A context without a socket closes nothing else.
        // SAFETY: a live context.
        match unsafe { sys::tls_close(self.ctx) } {
            0 => Ok(()),
            _ => Err(LibError::new(format!("tls_close: {}", error(self.ctx)))),
        }
    }

    fn peer_closed(&mut self) -> Result<bool, LibError> {
        if self.early.is_some() {
            return Ok(false);
        }
        let mut byte = [0u8; 1];
        // SAFETY: a live context; `byte` is writable for its length.
        match unsafe { sys::tls_read(self.ctx, byte.as_mut_ptr().cast(), byte.len()) } {
            // SSL_read's ZERO_RETURN: the peer's close_notify, now and on every later call.
            // (libtls also reads 0 for a transport EOF without one, which this transport never gives.)
            0 => Ok(true),
            sys::TLS_WANT_POLLIN_ISIZE => Ok(false),
            // libtls has no peek: on a socket, data may arrive after `receive` found none; the
            // byte is kept for the next `receive`.
            n if n > 0 => {
                self.early = Some(byte[0]);
                Ok(false)
            }
            _ => Err(LibError::new(format!("tls_read: {}", error(self.ctx)))),
        }
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        // SAFETY: a live context whose handshake completed; the strings are static or owned by it.
        let (version, cipher) =
            unsafe { (text(sys::tls_conn_version(self.ctx)), text(sys::tls_conn_cipher(self.ctx))) };
        let version = match version.as_deref() {
            Some("TLSv1.2") => Version::Tls12,
            Some("TLSv1.3") => Version::Tls13,
            v => return Err(LibError::new(format!("negotiated an unexpected protocol version: {v:?}"))),
        };
        let cipher = cipher.ok_or_else(|| LibError::new("no cipher suite after the handshake"))?;
        // libtls reports OpenSSL's names.
        let suite = Suite::negotiated(cipher.as_str(), |key, suite| suite.openssl_name(version, key))?;
        // SAFETY: a live context. With `tls_config_verify_client(_optional)`, libtls fails the
        // handshake on a certificate that does not verify, so one that was provided was verified.
        let client_cert_verified =
            (self.config.side == Side::Server).then(|| unsafe { sys::tls_peer_cert_provided(self.ctx) } == 1);
        // libtls reports neither the group nor EMS; resumption is off (see `capabilities`).
        Ok(Negotiated {
            version,
            suite,
            group: None,
            resumed: false,
            ems: None,
            client_cert_verified,
            ticket_received: None,
        })
    }
}

/// The context's last error, as libtls words it.
fn error(ctx: *mut sys::tls) -> String {
    // SAFETY: a live context; the message is owned by it and copied at once.
    unsafe { text(sys::tls_error(ctx)) }.unwrap_or_else(|| "unknown error".into())
}

/// A C string libtls returned, if any. Safety: NULL or a valid NUL-terminated string.
unsafe fn text(s: *const std::ffi::c_char) -> Option<String> {
    // SAFETY: the caller's promise.
    (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
}

/// The transport's read side: the endpoint's bytes, or TLS_WANT_POLLIN when it has none.
extern "C" fn read_cb(_ctx: *mut sys::tls, buf: *mut c_void, len: usize, arg: *mut c_void) -> isize {
    // SAFETY: `arg` is the connection's boxed endpoint (see `new_client`/`new_server`), alive
    // while its context is; `buf` is writable for `len` bytes.
    let (io, buf) = unsafe { (&mut *arg.cast::<Endpoint>(), std::slice::from_raw_parts_mut(buf.cast::<u8>(), len)) };
    match io.read(buf) {
        Ok(n) => n as isize,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => sys::TLS_WANT_POLLIN_ISIZE,
        Err(_) => -1,
    }
}

/// The transport's write side; the in-memory endpoint takes every byte.
extern "C" fn write_cb(_ctx: *mut sys::tls, buf: *const c_void, len: usize, arg: *mut c_void) -> isize {
    // SAFETY: as in `read_cb`; `buf` is readable for `len` bytes.
    let (io, buf) = unsafe { (&mut *arg.cast::<Endpoint>(), std::slice::from_raw_parts(buf.cast::<u8>(), len)) };
    match io.write(buf) {
        Ok(n) => n as isize,
        Err(_) => -1,
    }
}

/// The few libtls functions this adapter calls, as declared in LibreTLS's `<tls.h>` (3.7).
#[allow(non_camel_case_types)]
mod sys {
    // libtls's libcrypto, for its version (the backend).
    #[link(name = "crypto")]
    extern "C" {
        pub fn OpenSSL_version(t: std::ffi::c_int) -> *const std::ffi::c_char;
    }

    use std::ffi::{c_char, c_int, c_void};

    #[repr(C)]
    pub struct tls {
        _opaque: [u8; 0],
    }
    #[repr(C)]
    pub struct tls_config {
        _opaque: [u8; 0],
    }

    pub const TLS_PROTOCOL_TLSV1_2: u32 = 1 << 3;
    pub const TLS_PROTOCOL_TLSV1_3: u32 = 1 << 4;
    pub const TLS_WANT_POLLIN: c_int = -2;
    pub const TLS_WANT_POLLOUT: c_int = -3;
    pub const TLS_WANT_POLLIN_ISIZE: isize = TLS_WANT_POLLIN as isize;

    pub type tls_read_cb = extern "C" fn(*mut tls, *mut c_void, usize, *mut c_void) -> isize;
    pub type tls_write_cb = extern "C" fn(*mut tls, *const c_void, usize, *mut c_void) -> isize;

    // Linked by build.rs.
    extern "C" {
        pub fn tls_init() -> c_int;
        pub fn tls_error(ctx: *mut tls) -> *const c_char;
        pub fn tls_config_new() -> *mut tls_config;
        pub fn tls_config_free(config: *mut tls_config);
        pub fn tls_config_error(config: *mut tls_config) -> *const c_char;
        pub fn tls_config_set_protocols(config: *mut tls_config, protocols: u32) -> c_int;
        pub fn tls_config_set_ciphers(config: *mut tls_config, ciphers: *const c_char) -> c_int;
        pub fn tls_config_set_ecdhecurves(config: *mut tls_config, curves: *const c_char) -> c_int;
        pub fn tls_config_set_ca_mem(config: *mut tls_config, ca: *const u8, len: usize) -> c_int;
        pub fn tls_config_set_ca_file(config: *mut tls_config, ca_file: *const std::ffi::c_char) -> c_int;
        pub fn tls_config_set_keypair_mem(
            config: *mut tls_config,
            cert: *const u8,
            cert_len: usize,
            key: *const u8,
            key_len: usize,
        ) -> c_int;
        pub fn tls_config_verify_client(config: *mut tls_config);
        pub fn tls_config_verify_client_optional(config: *mut tls_config);
        pub fn tls_client() -> *mut tls;
        pub fn tls_server() -> *mut tls;
        pub fn tls_configure(ctx: *mut tls, config: *mut tls_config) -> c_int;
        pub fn tls_free(ctx: *mut tls);
        pub fn tls_connect_cbs(
            ctx: *mut tls,
            read_cb: tls_read_cb,
            write_cb: tls_write_cb,
            arg: *mut c_void,
            servername: *const c_char,
        ) -> c_int;
        pub fn tls_accept_cbs(
            ctx: *mut tls,
            cctx: *mut *mut tls,
            read_cb: tls_read_cb,
            write_cb: tls_write_cb,
            arg: *mut c_void,
        ) -> c_int;
        pub fn tls_handshake(ctx: *mut tls) -> c_int;
        pub fn tls_read(ctx: *mut tls, buf: *mut c_void, len: usize) -> isize;
        pub fn tls_write(ctx: *mut tls, buf: *const c_void, len: usize) -> isize;
        pub fn tls_close(ctx: *mut tls) -> c_int;
        pub fn tls_peer_cert_provided(ctx: *mut tls) -> c_int;
        pub fn tls_conn_version(ctx: *mut tls) -> *const c_char;
        pub fn tls_conn_cipher(ctx: *mut tls) -> *const c_char;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tlsbench_harness::driver::{sample, SampleSpec};
    use tlsbench_harness::{Error, KeyType, Link};

    use super::*;
    use tlsbench_harness::testing::{self, pki, scenario};

    /// A handshake between configs built for two scenarios (see `testing::connect`).
    fn connect(client: &Scenario, server: &Scenario) -> Result<(LibTlsConnection, LibTlsConnection), String> {
        testing::connect(&LibTls, &LibTls, client, server)
    }

    #[test]
    fn every_supported_scenario_samples_with_positive_values_on_both_sides() {
        // Through the real driver, once each: every gate passes at least once.
        let measured = testing::check_every_supported_scenario(&LibTls, &LibTls);
        // TLS 1.2 full handshakes with EMS on (3 groups x 6 keys x 3 suites x 3 client auths) and
        // transfers; TLS 1.3 full handshakes and the transfer with AES-256-GCM; with its defaults,
        // the full handshakes (6 keys x 3 client auths) and the transfer of each version.
        assert_eq!(measured, (3 * 6 * 3 * 3 + 3) + (3 * 6 * 3 + 1) + 2 * (6 * 3 + 1));
        assert_eq!(LibTls.library(), format!("LibreTLS {}", env!("LIBTLS_VERSION")));
    }

    #[test]
    fn each_declared_gap_is_unsupported_with_its_reason() {
        let spec = SampleSpec::timed(Duration::ZERO, Duration::ZERO);
        for (name, reason) in [
            ("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", TLS13_SUITE),
            ("transfer_1.3_x25519_ecdsa-p256_chacha20-poly1305", TLS13_SUITE),
            ("handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-256-gcm", "libtls: group x25519mlkem768 not supported"),
            (
                "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm",
                "libtls: resumption is reported on the client only, so the server's could not be checked",
            ),
            (
                "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
                "libtls: resumption is reported on the client only, so the server's could not be checked",
            ),
            (
                "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems",
                "libtls: extended master secret cannot be switched off",
            ),
        ] {
            let err = sample(&LibTls, &LibTls, &scenario(name), pki(), &spec);
            assert!(matches!(&err, Err(Error::Unsupported(r)) if r == reason), "{name}: {err:?}");
        }
    }

    #[test]
    fn tls_1_3_suites_cannot_be_pinned_through_libtls() {
        // Why TLS 1.3 is AES-256-GCM only: `tls_config_set_ciphers` refuses TLS 1.3 names.
        // SAFETY: a fresh config, freed at the end; NUL-terminated strings.
        unsafe {
            let config = sys::tls_config_new();
            assert_eq!(sys::tls_config_set_ciphers(config, c"TLS_AES_128_GCM_SHA256".as_ptr()), -1);
            assert_eq!(sys::tls_config_set_ciphers(config, c"ECDHE-ECDSA-AES128-GCM-SHA256".as_ptr()), 0);
            sys::tls_config_free(config);
        }
    }

    #[test]
    fn a_server_chain_from_another_ca_fails_verification() {
        // Both keys sign with the ECDHE-ECDSA suites: the only mismatch is the certificate.
        let client = scenario("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm");
        let server = Scenario { key: KeyType::Ed25519, ..client };
        let Err(error) = connect(&client, &server) else { panic!("the client accepted a chain its CA did not sign") };
        assert!(error.starts_with("client: "), "{error}");
        assert!(error.contains("unable to get local issuer certificate"), "{error}");
    }

    #[test]
    fn both_sides_report_what_was_negotiated_and_a_verified_client_certificate() {
        for &key in KeyType::ALL {
            for client_auth in [ClientAuth::None, ClientAuth::Required, ClientAuth::Requested] {
                let asked = Scenario {
                    client_auth,
                    ..Scenario::new(Kind::HandshakeFull, Version::Tls12, Group::Secp384r1, key, Suite::Aes256Gcm)
                        .expect("valid")
                };
                let (client, server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{asked}: {e}"));
                assert_negotiated(&asked, Suite::Aes256Gcm, &client, &server);
            }
        }
    }

    /// What both sides report after a full handshake of `asked` that negotiated `suite`: libtls
    /// tells no group, extended master secret or ticket; its server tells whether it verified a
    /// client certificate, which it did when one was required.
    fn assert_negotiated(asked: &Scenario, suite: Suite, client: &LibTlsConnection, server: &LibTlsConnection) {
        let expected = Negotiated {
            version: asked.version,
            suite,
            group: None,
            resumed: false,
            ems: None,
            client_cert_verified: None,
            ticket_received: None,
        };
        assert_eq!(client.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: client");
        let expected = Negotiated { client_cert_verified: Some(asked.client_auth == ClientAuth::Required), ..expected };
        assert_eq!(server.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: server");
    }

    /// The group and the cipher suite of the ServerHello that `flight` starts with (RFC 8446,
    /// 4.1.3): the suite as its IANA id, the group from the key share (4.2.8), which says which
    /// group the TLS 1.3 key exchange used; libtls does not report it.
    fn server_hello_suite_and_group(flight: &[u8]) -> (u16, u16) {
        let u16_at = |at: usize| u16::from_be_bytes([flight[at], flight[at + 1]]);
        // Record header (5), handshake header (4), legacy_version (2), random (32).
        assert_eq!((flight[0], flight[5]), (22, 2), "not a ServerHello: {:02x?}", &flight[..6]);
        let session_id = 5 + 4 + 2 + 32;
        let suite_at = session_id + 1 + usize::from(flight[session_id]);
        // Cipher suite (2), compression (1), extensions' length (2).
        let (mut at, end) = (suite_at + 5, suite_at + 5 + usize::from(u16_at(suite_at + 3)));
        while at < end {
            let (kind, len) = (u16_at(at), usize::from(u16_at(at + 2)));
            if kind == 0x0033 {
                return (u16_at(suite_at), u16_at(at + 4));
            }
            at += 4 + len;
        }
        panic!("the ServerHello has no key share");
    }

    /// libtls with itself in TLS 1.3: both sides negotiate AES-256-GCM (OpenSSL's first default
    /// suite) and the scenario's group, with each kind of client auth; the suite and the group
    /// are read off the wire too.
    #[test]
    fn tls_1_3_negotiates_aes_256_gcm_and_the_pinned_group() {
        for (group, group_id) in [(Group::X25519, 0x001d), (Group::Secp256r1, 0x0017), (Group::Secp384r1, 0x0018)] {
            for &client_auth in ClientAuth::ALL {
                let asked =
                    Scenario::new(Kind::HandshakeFull, Version::Tls13, group, KeyType::EcdsaP384, Suite::Aes256Gcm)
                        .expect("valid");
                let asked = Scenario { client_auth, ..asked };
                let link = Link::new();
                let client_config = LibTls.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{asked}: {e}"));
                let server_config = LibTls.server_config(&asked, pki()).unwrap_or_else(|e| panic!("{asked}: {e}"));
                let mut client =
                    LibTls.new_client(&client_config, link.client()).unwrap_or_else(|e| panic!("{asked}: {e}"));
                let mut server =
                    LibTls.new_server(&server_config, link.server()).unwrap_or_else(|e| panic!("{asked}: {e}"));
                assert_eq!(client.handshake().map_err(|e| e.0), Ok(false), "{asked}: the ClientHello");
                assert_eq!(server.handshake().map_err(|e| e.0), Ok(false), "{asked}: the server's flight");
                let flight = link.take_written_by(Side::Server);
                assert_eq!(
                    server_hello_suite_and_group(&flight),
                    (0x1302, group_id),
                    "{asked}: TLS_AES_256_GCM_SHA384"
                );
                link.deliver_to(Side::Client, &flight);
                let mut done = false;
                for _ in 0..8 {
                    let both = [client.handshake(), server.handshake()]
                        .map(|step| step.unwrap_or_else(|e| panic!("{asked}: {e}")));
                    done = both == [true, true] && link.in_flight() == 0;
                    if done {
                        break;
                    }
                }
                assert!(done, "{asked}: the handshake did not complete");
                assert_negotiated(&asked, Suite::Aes256Gcm, &client, &server);
            }
        }
    }

    #[test]
    fn a_tls_1_3_group_the_server_does_not_take_fails_the_handshake() {
        let client = scenario("handshake-full_1.3_secp256r1_ecdsa-p256_aes-256-gcm");
        let server = scenario("handshake-full_1.3_x25519_ecdsa-p256_aes-256-gcm");
        let Err(error) = connect(&client, &server) else { panic!("the server took a group it was not given") };
        assert!(error.starts_with("server: "), "{error}");
        assert!(error.contains("no suitable key share"), "{error}");
    }

    #[test]
    fn data_crosses_in_both_directions() {
        for name in ["transfer_1.2_x25519_ecdsa-p256_chacha20-poly1305", "transfer_1.3_x25519_ecdsa-p256_aes-256-gcm"] {
            let (mut client, mut server) =
                connect(&scenario(name), &scenario(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            testing::check_data_crosses(name, &mut client, &mut server);
        }
    }

    /// One byte each way, then close_notify each way: each side sees the peer's close_notify
    /// once the peer has sent it, and not before.
    #[test]
    fn close_notify_each_way_after_a_byte_each_way() {
        for name in
            ["handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.3_x25519_ecdsa-p256_aes-256-gcm"]
        {
            let asked = scenario(name);
            let (mut client, mut server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{name}: {e}"));
            tlsbench_harness::testing::check_close_notify(name, &mut client, &mut server);
        }
    }
}
