//! tlsbench adapter for s2n-tls through the `s2n-tls` crate (its C code with AWS-LC, whose symbols
//! are prefixed): named security policies chosen per scenario, transport through s2n's IO callbacks.

use std::ffi::{c_int, c_void};
use std::io::{ErrorKind, Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::SystemTime;

use s2n_tls::callbacks::{SessionTicket, SessionTicketCallback, VerifyHostNameCallback};
use s2n_tls::config::{self, Config};
use s2n_tls::connection;
use s2n_tls::enums::{Blinding, ClientAuthType, Mode};
use s2n_tls::security::Policy;
use tlsbench_harness::pki::{CLIENT_NAME, SERVER_NAME};
use tlsbench_harness::{
    Backend, Capabilities, ClientAuth, Connection, Endpoint, Exclusion, Group, KeyType, Kind, LibError, Negotiated,
    Pki, Scenario, Stack, Suite, Version,
};

/// s2n-tls, with or without receive buffering (reading ahead of the record it needs).
pub struct S2n {
    recv_buffering: bool,
}

impl S2n {
    /// s2n-tls as it comes: one read per record header and one per record body.
    pub fn new() -> Self {
        Self { recv_buffering: false }
    }

    /// s2n-tls with `s2n_connection_set_recv_buffering`: reads fill a buffer of several records.
    pub fn recv_buffering() -> Self {
        Self { recv_buffering: true }
    }
}

impl Default for S2n {
    fn default() -> Self {
        Self::new()
    }
}

/// A client config, and the ticket it resumes next: the last one a server gave it.
pub struct ClientConfig {
    config: Config,
    ticket: Arc<Mutex<Option<Vec<u8>>>>,
}

/// Why s2n-tls has no TLS 1.2 scenarios with its defaults.
const DEFAULTS_TLS12: &str =
    "s2n-tls: its default policy negotiates TLS 1.3, and only a policy the application names keeps it to TLS 1.2";

/// The security policies of the client and of the server for a scenario. s2n-tls takes only
/// named policies, none of which holds a single suite and group: each pair here was chosen (from
/// s2n-tls 0.3.47's `s2n_security_policies.c`) so that the server's first choice among what it
/// can use is the scenario's suite and group, that an s2n-tls client sends its key share for
/// the scenario's group and offers no other TLS version, and that the two together negotiate
/// exactly the scenario; the gates check every handshake. The policies also list other suites
/// and groups, which an s2n-tls client offers in its ClientHello.
/// Also says why a scenario s2n-tls cannot run within its capabilities' dimensions, which
/// cannot name a combination.
pub fn policies(scenario: &Scenario) -> Result<(&'static str, &'static str), String> {
    if scenario.kind.is_resumption() && scenario.client_auth != ClientAuth::None {
        // s2n-tls neither issues nor accepts tickets when client auth is on (`s2n_resume.c`).
        return Err(format!("s2n-tls: no session resumption with client auth ({})", scenario.client_auth));
    }
    let Some((group, suite)) = scenario.pins() else {
        // What s2n-tls applies when the application names no policy; it negotiates TLS 1.3.
        return match scenario.version {
            Version::Tls13 => Ok(("default", "default")),
            Version::Tls12 => Err(DEFAULTS_TLS12.into()),
        };
    };
    if (scenario.version, group, scenario.key, scenario.client_auth)
        == (Version::Tls12, Group::X25519, KeyType::EcdsaP256, ClientAuth::Required)
    {
        // No TLS 1.2-only policy prefers x25519, and here the peer server also takes P-256 (for
        // the client's certificate): a server that follows the client's order picks P-256.
        return Err("s2n-tls: no TLS 1.2 policy prefers x25519 over the P-256 of the client certificate".into());
    }
    use Group::*;
    use Suite::*;
    use Version::*;
    let pair = match (scenario.version, suite, group, scenario.key.is_rsa()) {
        (Tls12, Aes128Gcm, X25519, _) => ("20240501", "CloudFront-TLS-1-2-2021"),
        (Tls12, Aes128Gcm, Secp256r1, true) => ("ELBSecurityPolicy-FS-1-2-Res-2020-10", "TLS10_20261021_2"),
        (Tls12, Aes128Gcm, Secp256r1, false) => ("ELBSecurityPolicy-FS-1-2-Res-2020-10", "AWS-CRT-SDK-TLSv1.2-2025"),
        (Tls12, Aes256Gcm, X25519, true) => ("20240501", "KMS-TLS-1-0-2021-08"),
        (Tls12, Aes256Gcm, Secp256r1, true) => ("ELBSecurityPolicy-FS-1-2-Res-2020-10", "KMS-FIPS-TLS-1-2-2018-10"),
        // A TLS 1.2 server takes an ECDSA client certificate only on a curve of its policy: P-384 too.
        (Tls12, Aes256Gcm, Secp256r1, false) => ("ELBSecurityPolicy-FS-1-2-Res-2020-10", "CloudFront-Upstream"),
        (Tls12, Aes256Gcm, Secp384r1, _) => ("ELBSecurityPolicy-TLS12-1-2-RFC9151-2024-01", "20251013"),
        (Tls13, Aes128Gcm, X25519, _) => ("AWS-CRT-SDK-TLSv1.3", "AWS-CRT-SDK-TLSv1.3"),
        (Tls13, Aes128Gcm, Secp256r1, _) => {
            ("ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04", "ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04")
        }
        (Tls13, Aes128Gcm, X25519Mlkem768, _) => ("CloudFront-TLS-1-3-2025", "CloudFront-TLS-1-3-2025"),
        (Tls13, Aes256Gcm, X25519, _) => ("AWS-CRT-SDK-TLSv1.3", "20190801"),
        (Tls13, Aes256Gcm, Secp256r1, _) => ("ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04", "20190802"),
        (Tls13, Aes256Gcm, Secp384r1, _) => ("20250211", "20250211"),
        (Tls13, Aes256Gcm, X25519Mlkem768, _) => ("CloudFront-TLS-1-3-2025", "PQ-TLS-1-2-2024-10-09"),
        (version, suite, group, rsa) => {
            let key = if rsa { "an RSA" } else { "an ECDSA" };
            return Err(format!(
                "s2n-tls: no named security policy makes TLS {version} {suite} with {group} \
                 the first choice for {key} key"
            ));
        }
    };
    Ok(pair)
}

/// Which s2n-tls this is: `s2n-tls crate 0.3.47 (commit 998d4bb190)`. s2n-tls has no version
/// string of its own at runtime and s2n-tls-sys vendors no version of the C library, only the
/// commit of s2n-tls its source was published from (see build.rs); the crates are released from
/// s2n-tls's main branch on a schedule of their own, so no C release (v1.7.x) can be named
/// reliably. The crate's version is the release `s2n-tls@0.3.47` names (docs/versions.md).
fn release() -> String {
    match env!("S2N_TLS_SOURCE_COMMIT") {
        "" => format!("s2n-tls crate {}", env!("S2N_TLS_VERSION")),
        commit => format!("s2n-tls crate {} (commit {commit})", env!("S2N_TLS_VERSION")),
    }
}

impl Stack for S2n {
    type ClientConfig = ClientConfig;
    type ServerConfig = Config;
    type Client = S2nConnection;
    type Server = S2nConnection;

    fn id(&self) -> &'static str {
        match self.recv_buffering {
            false => "s2n-tls",
            true => "s2n-tls-recvbuf",
        }
    }

    fn library(&self) -> String {
        match self.recv_buffering {
            false => release(),
            true => format!("{} (recv buffering)", release()),
        }
    }

    fn tls_library(&self) -> String {
        release()
    }

    /// s2n-tls-sys links the AWS-LC of aws-lc-rs (aws-lc-sys): its version as AWS-LC reports it.
    fn backend(&self) -> Backend {
        let via = format!("aws-lc-sys {} via aws-lc-rs {}", env!("AWS_LC_SYS_VERSION"), env!("AWS_LC_RS_VERSION"));
        Backend::new("AWS-LC", aws_lc_rs::awslc_version(), Some(via))
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // No session-ID cache of its own: s2n-tls needs the application's cache callbacks.
            kinds: vec![
                Kind::HandshakeFull,
                Kind::HandshakeResumeTicket,
                Kind::Transfer,
                Kind::IoProfile,
                Kind::Memory100,
                Kind::Memory1000,
                Kind::Memory10000,
                Kind::ContextServer,
                Kind::ContextClient,
                Kind::ContextClientSystem,
            ],
            // No named policy prefers secp384r1 with AES-128-GCM (see `policies`).
            groups: vec![Group::X25519, Group::Secp256r1, Group::X25519Mlkem768],
            // s2n-tls does not take Ed25519 certificates.
            keys: vec![KeyType::Rsa2048, KeyType::Rsa3072, KeyType::Rsa4096, KeyType::EcdsaP256, KeyType::EcdsaP384],
            // No named policy puts ChaCha20-Poly1305 first.
            suites: vec![Suite::Aes128Gcm, Suite::Aes256Gcm],
            // s2n-tls always offers and accepts the extended master secret.
            ems_off: false,
            // Combinations no pair of named policies pins (see `policies`, which refuses them).
            exclusions: vec![
                Exclusion::new("*_1.2_default_*_default*", DEFAULTS_TLS12),
                Exclusion::new("handshake-resume-*_mtls*", "s2n-tls: no session resumption with client auth"),
                Exclusion::new("handshake-resume-*_cert-requested*", "s2n-tls: no session resumption with client auth"),
                Exclusion::new(
                    "*_1.2_x25519_ecdsa-*_aes-256-gcm*",
                    "s2n-tls: no named security policy makes TLS 1.2 aes-256-gcm with x25519 \
                     the first choice for an ECDSA key",
                ),
                Exclusion::new(
                    "*_1.2_x25519_ecdsa-p256_*_mtls*",
                    "s2n-tls: no TLS 1.2 policy prefers x25519 over the P-256 of the client certificate",
                ),
            ],
            ..Capabilities::everything()
        }
    }

    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<ClientConfig, LibError> {
        client_config(scenario, pki, false)
    }

    /// s2n-tls's default: the config loads the system's certificates when it is built
    /// (`s2n_config_load_system_certs`: libcrypto's default paths, which read `SSL_CERT_FILE`).
    fn client_config_system(&self, scenario: &Scenario, pki: &Pki) -> Option<Result<ClientConfig, LibError>> {
        Some(client_config(scenario, pki, true))
    }

    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Config, LibError> {
        let credentials = pki.credentials(scenario.key).map_err(LibError)?;
        let (_, policy) = policies(scenario).map_err(LibError)?;
        let mut builder = builder(policy)?;
        builder
            .load_pem(credentials.chain_pem.as_bytes(), credentials.key_pem.as_bytes())
            .map_err(LibError::context("loading the server chain and key"))?;
        let auth = match scenario.client_auth {
            ClientAuth::None => ClientAuthType::None,
            ClientAuth::Required => ClientAuthType::Required,
            ClientAuth::Requested => ClientAuthType::Optional,
        };
        builder.set_client_auth_type(auth).map_err(LibError::context("setting the client auth type"))?;
        builder.with_system_certs(false).map_err(LibError::context("leaving out the system's CAs"))?;
        if scenario.client_auth != ClientAuth::None {
            builder.trust_pem(credentials.ca_pem.as_bytes()).map_err(LibError::context("trusting the CA"))?;
            // s2n-tls checks a client certificate's names too; the harness issues them to CLIENT_NAME.
            builder
                .set_verify_host_callback(HostName(CLIENT_NAME))
                .map_err(LibError::context("setting the host name check"))?;
        }
        // Tickets only when the scenario resumes from them; s2n-tls has no session cache of its own.
        if scenario.kind == Kind::HandshakeResumeTicket {
            builder.enable_session_tickets(true).map_err(LibError::context("enabling session tickets"))?;
            // The key's value does not matter to a benchmark; its name and length are s2n-tls's rules.
            builder
                .add_session_ticket_key(b"tlsbench", &[7u8; 32], SystemTime::now())
                .map_err(LibError::context("adding the session ticket key"))?;
        }
        builder.build().map_err(LibError::context("building the server config"))
    }

    fn new_client(&self, config: &ClientConfig, io: Endpoint) -> Result<S2nConnection, LibError> {
        let mut connection = S2nConnection::new(Mode::Client, config.config.clone(), io, self.recv_buffering)?;
        connection.conn.set_server_name(SERVER_NAME).map_err(LibError::context("setting the SNI host name"))?;
        if let Some(ticket) = config.ticket.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            connection.conn.set_session_ticket(ticket).map_err(LibError::context("setting the ticket to resume"))?;
        }
        Ok(connection)
    }

    fn new_server(&self, config: &Config, io: Endpoint) -> Result<S2nConnection, LibError> {
        S2nConnection::new(Mode::Server, config.clone(), io, self.recv_buffering)
    }
}

/// A config builder with the named policy.
/// A client config of `scenario`: trusting its CA alone, or the system's store (`system`).
fn client_config(scenario: &Scenario, pki: &Pki, system: bool) -> Result<ClientConfig, LibError> {
    let credentials = pki.credentials(scenario.key).map_err(LibError)?;
    let (policy, _) = policies(scenario).map_err(LibError)?;
    let mut builder = builder(policy)?;
    match system {
        true => {
            builder.with_system_certs(true).map_err(LibError::context("loading the system's CAs"))?;
        }
        false => {
            // Only the scenario's CA: not the system's.
            builder.with_system_certs(false).map_err(LibError::context("leaving out the system's CAs"))?;
            builder.trust_pem(credentials.ca_pem.as_bytes()).map_err(LibError::context("trusting the CA"))?;
        }
    }
    builder
        .set_verify_host_callback(HostName(SERVER_NAME))
        .map_err(LibError::context("setting the host name check"))?;
    if scenario.client_auth == ClientAuth::Required {
        let (chain, key) = (credentials.client_chain_pem.as_bytes(), credentials.client_key_pem.as_bytes());
        builder.load_pem(chain, key).map_err(LibError::context("loading the client chain and key"))?;
    }
    let ticket = Arc::new(Mutex::new(None));
    if scenario.kind == Kind::HandshakeResumeTicket {
        builder.enable_session_tickets(true).map_err(LibError::context("enabling session tickets"))?;
        builder
            .set_session_ticket_callback(KeepTicket(ticket.clone()))
            .map_err(LibError::context("setting the ticket callback"))?;
    }
    let config = builder.build().map_err(LibError::context("building the client config"))?;
    Ok(ClientConfig { config, ticket })
}

fn builder(policy: &str) -> Result<config::Builder, LibError> {
    let policy =
        Policy::from_version(policy).map_err(LibError::context(&format!("finding the security policy {policy}")))?;
    let mut builder = Config::builder();
    builder.set_security_policy(&policy).map_err(LibError::context("setting the security policy"))?;
    Ok(builder)
}

/// Accepts a certificate for exactly one name.
struct HostName(&'static str);

impl VerifyHostNameCallback for HostName {
    fn verify_host_name(&self, host_name: &str) -> bool {
        host_name.eq_ignore_ascii_case(self.0)
    }
}

/// Keeps the last ticket a server sent, for the next connection to resume.
struct KeepTicket(Arc<Mutex<Option<Vec<u8>>>>);

impl SessionTicketCallback for KeepTicket {
    fn on_session_ticket(&self, _: &mut connection::Connection, ticket: &SessionTicket) {
        let mut data = vec![0; ticket.len().unwrap_or(0)];
        // A ticket that cannot be read is not kept; the next handshake is then a full one and fails its gate.
        if !data.is_empty() && ticket.data(&mut data).is_ok() {
            *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(data);
        }
    }
}

/// One side of a connection, over the harness's transport.
pub struct S2nConnection {
    // Declared before `io` so it is dropped first: its callbacks point into `io`.
    conn: connection::Connection,
    /// Boxed so that its address, given to s2n-tls as the callbacks' context, never moves.
    _io: Box<Endpoint>,
    /// Whether `close` sent close_notify: s2n_recv then no longer reads in TLS 1.2.
    sent_close: bool,
    /// This side's mode, and whether its handshake completed, kept here rather than asked of
    /// s2n-tls: `Connection::mode` and `handshake_complete` are public only from crate 0.3.43 on,
    /// and the adapter also builds against older releases (scripts/build-crate.sh s2n-tls).
    mode: Mode,
    handshake_done: bool,
}

impl S2nConnection {
    fn new(mode: Mode, config: Config, io: Endpoint, recv_buffering: bool) -> Result<Self, LibError> {
        let mut conn = connection::Connection::new(mode);
        // s2n-tls's own blinding sleeps 10-30 s after a failure; a failed cell should fail at once.
        conn.set_blinding(Blinding::SelfService).map_err(LibError::context("setting self-service blinding"))?;
        conn.set_config(config).map_err(LibError::context("setting the config"))?;
        if recv_buffering {
            conn.set_receive_buffering(true).map_err(LibError::context("switching receive buffering on"))?;
        }
        let mut io = Box::new(io);
        let context = (&mut *io as *mut Endpoint).cast::<c_void>();
        conn.set_send_callback(Some(send)).map_err(LibError::context("setting the send callback"))?;
        conn.set_receive_callback(Some(receive)).map_err(LibError::context("setting the receive callback"))?;
        // SAFETY: `context` points into the box that `Self` owns beside `conn` and drops after it.
        unsafe { conn.set_send_context(context) }.map_err(LibError::context("setting the send context"))?;
        // SAFETY: as above.
        unsafe { conn.set_receive_context(context) }.map_err(LibError::context("setting the receive context"))?;
        Ok(Self { conn, _io: io, sent_close: false, mode, handshake_done: false })
    }
}

/// s2n-tls's send callback: all of `buf` goes to the in-memory transport, which never blocks.
unsafe extern "C" fn send(context: *mut c_void, buf: *const u8, len: u32) -> c_int {
    // SAFETY: s2n-tls passes the context set in `S2nConnection::new`, a live `Endpoint` that no
    // one else borrows during a library call, and a buffer of `len` readable bytes.
    let (io, buf) = unsafe { (&mut *context.cast::<Endpoint>(), std::slice::from_raw_parts(buf, len as usize)) };
    match io.write(buf) {
        Ok(n) => c_int::try_from(n).unwrap_or(c_int::MAX),
        Err(_) => would_block_or_fail(ErrorKind::Other),
    }
}

/// s2n-tls's receive callback: what the peer has sent so far, or EAGAIN when nothing has arrived.
unsafe extern "C" fn receive(context: *mut c_void, buf: *mut u8, len: u32) -> c_int {
    // SAFETY: as in `send`, with a buffer of `len` writable bytes.
    let (io, buf) = unsafe { (&mut *context.cast::<Endpoint>(), std::slice::from_raw_parts_mut(buf, len as usize)) };
    match io.read(buf) {
        Ok(n) => c_int::try_from(n).unwrap_or(c_int::MAX),
        Err(e) => would_block_or_fail(e.kind()),
    }
}

/// -1 with errno EAGAIN (s2n-tls then reports "blocked") or EIO.
fn would_block_or_fail(kind: ErrorKind) -> c_int {
    let errno = if kind == ErrorKind::WouldBlock { libc::EAGAIN } else { libc::EIO };
    // SAFETY: `__errno_location` returns this thread's errno, always valid to write.
    unsafe { *libc::__errno_location() = errno };
    -1
}

impl Connection for S2nConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        if self.handshake_done {
            // Done: read what the peer sent since, such as a TLS 1.3 session ticket, which
            // s2n-tls processes inside a receive call. No application data flows yet.
            return match self.conn.poll_recv(&mut [0u8; 1]) {
                Poll::Pending | Poll::Ready(Ok(0)) => Ok(true),
                Poll::Ready(Ok(_)) => Err(LibError::new("application data arrived before the handshake's end")),
                Poll::Ready(Err(e)) => Err(LibError::new(format!("reading after the handshake: {e}"))),
            };
        }
        match self.conn.poll_negotiate() {
            Poll::Ready(Ok(_)) => {
                self.handshake_done = true;
                Ok(true)
            }
            Poll::Pending => Ok(false),
            Poll::Ready(Err(e)) => Err(LibError::new(e)),
        }
    }

    fn send(&mut self, mut data: &[u8]) -> Result<(), LibError> {
        while !data.is_empty() {
            // The in-memory transport accepts every byte, so s2n-tls never has to wait to write.
            match self.conn.poll_send(data) {
                Poll::Ready(Ok(n)) => data = &data[n..],
                Poll::Ready(Err(e)) => return Err(LibError::new(format!("s2n_send: {e}"))),
                Poll::Pending => return Err(LibError::new("s2n_send blocked on a transport that never blocks")),
            }
        }
        Ok(())
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        match self.conn.poll_recv(buf) {
            Poll::Ready(Ok(n)) => Ok(n),
            Poll::Pending => Ok(0),
            Poll::Ready(Err(e)) => Err(LibError::new(format!("s2n_recv: {e}"))),
        }
    }

    fn close(&mut self) -> Result<(), LibError> {
        // s2n_shutdown_send writes close_notify and returns without waiting for the peer's.
        match self.conn.poll_shutdown_send() {
            Poll::Ready(Ok(_)) => {
                self.sent_close = true;
                Ok(())
            }
            Poll::Ready(Err(e)) => Err(LibError::new(format!("s2n_shutdown_send: {e}"))),
            Poll::Pending => Err(LibError::new("s2n_shutdown_send blocked on a transport that never blocks")),
        }
    }

    fn peer_closed(&mut self) -> Result<bool, LibError> {
        if self.sent_close {
            // In TLS 1.2 s2n-tls closes the read side with the write side (TLS 1.3 half-closes),
            // so s2n_recv would fail "closed". s2n_shutdown, its close_notify already sent,
            // only reads records until the peer's close_notify: done then, blocked before.
            return match self.conn.poll_shutdown() {
                Poll::Ready(Ok(_)) => Ok(true),
                Poll::Pending => Ok(false),
                Poll::Ready(Err(e)) => Err(LibError::new(format!("s2n_shutdown: {e}"))),
            };
        }
        // s2n_recv returns 0 once close_notify has arrived, and again on every later call.
        match self.conn.poll_recv(&mut [0u8; 1]) {
            Poll::Ready(Ok(0)) => Ok(true),
            Poll::Pending => Ok(false),
            // s2n-tls has no peek: the byte would be lost.
            Poll::Ready(Ok(_)) => Err(LibError::new("application data arrived where close_notify was awaited")),
            Poll::Ready(Err(e)) => Err(LibError::new(format!("s2n_recv: {e}"))),
        }
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        let conn = &self.conn;
        let version = match conn.actual_protocol_version().map_err(LibError::context("reading the protocol version"))? {
            s2n_tls::enums::Version::TLS12 => Version::Tls12,
            s2n_tls::enums::Version::TLS13 => Version::Tls13,
            other => return Err(LibError::new(format!("negotiated an unexpected protocol version: {other:?}"))),
        };
        let cipher = conn.cipher_suite().map_err(LibError::context("reading the cipher suite"))?;
        // s2n-tls names TLS 1.3 suites as the RFC does and TLS 1.2 suites as OpenSSL does.
        let suite = Suite::negotiated(cipher, |key, suite| suite.openssl_name(version, key))?;
        let group = match conn.selected_key_exchange_group().map(str::to_ascii_lowercase).as_deref() {
            Some("x25519") => Some(Group::X25519),
            Some("secp256r1") => Some(Group::Secp256r1),
            Some("secp384r1") => Some(Group::Secp384r1),
            Some("x25519mlkem768") => Some(Group::X25519Mlkem768),
            // A resumed TLS 1.2 session exchanges no key.
            None if version == Version::Tls12 && conn.resumed() => None,
            other => return Err(LibError::new(format!("negotiated an unexpected key-exchange group: {other:?}"))),
        };
        // s2n-tls verifies a client certificate it receives before the handshake can complete.
        let client_cert_verified = (self.mode == Mode::Server).then(|| conn.client_cert_used());
        // s2n-tls always uses the extended master secret in TLS 1.2 but has no call that reports it.
        Ok(Negotiated {
            version,
            suite,
            group,
            resumed: conn.resumed(),
            ems: None,
            client_cert_verified,
            ticket_received: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tlsbench_harness::driver::{sample, SampleSpec};
    use tlsbench_harness::protocol::Metric;

    use super::*;
    use tlsbench_harness::testing::{self, pki, scenario};

    /// A client against a server, through their handshakes, or the error (naming its side).
    fn connect(stack: &S2n, client: ClientConfig, server: &Config) -> Result<(S2nConnection, S2nConnection), String> {
        testing::connect_configs(stack, stack, &client, server)
    }

    fn configs(stack: &S2n, asked: &Scenario) -> (ClientConfig, Config) {
        let client = stack.client_config(asked, pki()).unwrap_or_else(|e| panic!("{asked}: client config: {e}"));
        let server = stack.server_config(asked, pki()).unwrap_or_else(|e| panic!("{asked}: server config: {e}"));
        (client, server)
    }

    #[test]
    fn every_supported_scenario_samples_with_positive_values_on_both_sides() {
        let spec = SampleSpec::timed(Duration::ZERO, Duration::from_micros(1));
        for stack in [S2n::new(), S2n::recv_buffering()] {
            let (mut measured, mut unpinnable, mut failures) = (0, Vec::new(), Vec::new());
            for scenario in Scenario::all()
                .into_iter()
                .filter(|s| tlsbench_harness::Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none())
            {
                if stack.capabilities().check(stack.id(), &scenario).is_err() {
                    continue;
                }
                // The exclusions in `capabilities` must cover every scenario `policies` refuses.
                if policies(&scenario).is_err() {
                    unpinnable.push(scenario);
                    continue;
                }
                let report = match sample(&stack, &stack, &scenario, pki(), &spec) {
                    Ok(report) => report,
                    Err(e) => {
                        failures.push(format!("{}: {scenario}: {e}", stack.id()));
                        continue;
                    }
                };
                assert!(report.iterations > 0, "{scenario}: no iterations");
                assert_eq!(
                    report.values.len(),
                    2 * Metric::of(tlsbench_harness::Measure::Time, scenario.kind)
                        .iter()
                        .filter(|m| !m.is_gc_runtimes_own())
                        .count(),
                    "{scenario}"
                );
                for value in &report.values {
                    assert!(value.is_plausible(), "{scenario}: {value:?}");
                }
                assert_eq!(report.client_library, stack.library());
                measured += 1;
            }
            assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
            // Pinned, and with its defaults TLS 1.3 full handshakes (5 keys x 3 client auths) and transfer.
            assert_eq!(measured, 194 + (5 * 3 + 1), "scenarios measured");
            assert!(
                unpinnable.is_empty(),
                "policies() refuses scenarios the capabilities do not exclude: {unpinnable:?}"
            );
        }
    }

    #[test]
    fn a_combination_no_policy_pins_fails_its_config_with_the_reason() {
        let asked = scenario("transfer_1.2_x25519_ecdsa-p256_aes-256-gcm");
        let Err(error) = S2n::new().client_config(&asked, pki()) else { panic!("a config for an unpinnable scenario") };
        assert_eq!(
            error.0,
            "s2n-tls: no named security policy makes TLS 1.2 aes-256-gcm with x25519 the first choice for an ECDSA key"
        );
    }

    #[test]
    fn declared_gaps_are_unsupported_with_the_reason() {
        let stack = S2n::new();
        for (name, reason) in [
            (
                "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm",
                "s2n-tls: scenario kind handshake-resume-id not supported",
            ),
            (
                "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305",
                "s2n-tls: cipher suite chacha20-poly1305 not supported",
            ),
            ("handshake-full_1.3_secp384r1_ecdsa-p256_aes-256-gcm", "s2n-tls: group secp384r1 not supported"),
            ("handshake-full_1.3_x25519_ed25519_aes-128-gcm", "s2n-tls: key type ed25519 not supported"),
            (
                "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems",
                "s2n-tls: extended master secret cannot be switched off",
            ),
        ] {
            let error = stack.capabilities().check(stack.id(), &scenario(name)).expect_err(name);
            assert_eq!(error.to_string(), reason);
        }
    }

    #[test]
    fn a_server_chain_from_another_ca_fails_verification() {
        let stack = S2n::new();
        let client = scenario("handshake-full_1.3_x25519_rsa-2048_aes-128-gcm");
        let (client_config, _) = configs(&stack, &client);
        let (_, server_config) = configs(&stack, &Scenario { key: KeyType::EcdsaP256, ..client });
        let Err(error) = connect(&stack, client_config, &server_config) else {
            panic!("accepted a chain its CA did not sign")
        };
        assert!(error.starts_with("client: ") && error.contains("Certificate is untrusted"), "{error}");
    }

    #[test]
    fn a_certificate_for_another_host_name_fails_verification() {
        let stack = S2n::new();
        let asked = scenario("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm");
        let (good, server_config) = configs(&stack, &asked);
        // The same config but for the host name: the chain is still good, only the name differs.
        let mut builder = builder(policies(&asked).expect("a pinned scenario").0).expect("a builder");
        builder.with_system_certs(false).expect("no system CAs");
        builder
            .trust_pem(pki().credentials(asked.key).expect("credentials").ca_pem.as_bytes())
            .expect("trusting the CA");
        builder.set_verify_host_callback(HostName("other.tlsbench.test")).expect("setting the host name check");
        let other = ClientConfig { config: builder.build().expect("a config"), ticket: good.ticket.clone() };
        assert!(connect(&stack, good, &server_config).is_ok());
        let Err(error) = connect(&stack, other, &server_config) else {
            panic!("accepted a certificate for another name")
        };
        assert!(
            error.starts_with("client: ") && error.contains("Certificate is not valid for the supplied hostname"),
            "{error}"
        );
    }

    #[test]
    fn both_sides_report_what_was_negotiated() {
        let stack = S2n::recv_buffering();
        for name in [
            "handshake-full_1.2_x25519_rsa-2048_aes-256-gcm",
            "handshake-full_1.2_secp256r1_ecdsa-p384_aes-128-gcm",
            "handshake-full_1.3_secp256r1_rsa-3072_aes-256-gcm",
            "handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm",
        ] {
            let asked = scenario(name);
            let (client, server) = configs(&stack, &asked);
            let (client, server) = connect(&stack, client, &server).unwrap_or_else(|e| panic!("{asked}: {e}"));
            let expected = Negotiated {
                version: asked.version,
                suite: asked.suite().unwrap(),
                group: asked.group(),
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

    #[test]
    fn a_resumption_and_a_verified_client_certificate_are_reported() {
        let stack = S2n::new();
        let asked = scenario("handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm");
        let (client, server) = configs(&stack, &asked);
        let ticket = client.ticket.clone();
        let first = connect(&stack, client, &server).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.0.negotiated().map(|n| n.resumed).map_err(|e| e.0), Ok(false));
        assert!(ticket.lock().expect("not poisoned").is_some(), "no ticket kept");
        let client = ClientConfig { config: configs(&stack, &asked).0.config, ticket };
        let (second, second_server) = connect(&stack, client, &server).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(second.negotiated().map(|n| n.resumed).map_err(|e| e.0), Ok(true));
        assert_eq!(second_server.negotiated().map(|n| n.resumed).map_err(|e| e.0), Ok(true));

        let asked = scenario("handshake-full_1.2_secp256r1_ecdsa-p384_aes-256-gcm_mtls");
        let (client, server) = configs(&stack, &asked);
        let (_, server) = connect(&stack, client, &server).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(server.negotiated().map(|n| n.client_cert_verified).map_err(|e| e.0), Ok(Some(true)));
    }

    #[test]
    fn resumption_with_client_auth_is_refused_with_the_reason() {
        let asked = scenario("handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls");
        assert_eq!(policies(&asked), Err("s2n-tls: no session resumption with client auth (mtls)".to_string()));
    }

    /// One byte each way, then close_notify each way: each side sees the peer's close_notify
    /// once the peer has sent it, and not before.
    #[test]
    fn close_notify_each_way_after_a_byte_each_way() {
        for (stack, name) in [S2n::new(), S2n::recv_buffering()].iter().flat_map(|stack| {
            ["handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm"]
                .map(|name| (stack, name))
        }) {
            let asked = scenario(name);
            let (client, server) = configs(stack, &asked);
            let (mut client, mut server) = connect(stack, client, &server).unwrap_or_else(|e| panic!("{name}: {e}"));
            let name = format!("{} {name}", stack.id());
            tlsbench_harness::testing::check_close_notify(&name, &mut client, &mut server);
        }
    }

    #[test]
    fn data_crosses_in_both_directions_and_the_library_names_itself() {
        for stack in [S2n::new(), S2n::recv_buffering()] {
            let asked = scenario("transfer_1.3_x25519_ecdsa-p256_aes-256-gcm");
            let (client, server) = configs(&stack, &asked);
            let (mut client, mut server) = connect(&stack, client, &server).unwrap_or_else(|e| panic!("{e}"));
            testing::check_data_crosses(&asked.name(), &mut client, &mut server);
        }
        let library = S2n::new().library();
        assert!(library.starts_with(&format!("s2n-tls crate {} (commit ", env!("S2N_TLS_VERSION"))), "{library}");
        let commit = library.rsplit_once(' ').unwrap().1.trim_end_matches(')');
        assert!(commit.len() == 10 && commit.chars().all(|c| c.is_ascii_hexdigit()), "{library}");
        assert_eq!(S2n::recv_buffering().library(), format!("{library} (recv buffering)"));
        assert_eq!(S2n::new().tls_library(), library);
    }
}
