//! The adapter code that stack-openssl, stack-boringssl and stack-aws-lc (the `openssl` crate
//! on AWS-LC) share. The `boring` crate mirrors the `openssl` crate's API, name for name, but
//! its types are its own: one generic function could not take both crates'
//! `SslContextBuilder`s without a trait of our own over every call. So
//! this is a macro, [`shared_adapter_code!`], that each adapter calls once: it expands there into
//! a module of plain functions written against that adapter's crate (`openssl::ssl::...` or
//! `boring::ssl::...`), compiled as if the adapter had written them itself.
//!
//! Only what is the same call for call is here. What the libraries do differently (BoringSSL's
//! TLS 1.3 suite list, its signature algorithms and ticket flush, OpenSSL's sessions kept after
//! a resumed TLS 1.2 handshake, each one's group and ticket reporting) stays in its adapter,
//! commented there.
//!
//! [`testing`] holds what the pairs tests of runner-openssl, runner-boringssl and runner-aws-lc
//! share.

pub mod testing;

/// Expands into `mod $name`, the functions both adapters share, written against the crates
/// `$lib` (`openssl` or `boring`) and `$sys` (`openssl_sys` or `boring_sys`) of the adapter that
/// calls it; each uses them as `$name::trust_store` and so on.
///
/// ```ignore
/// tlsbench_stack_openssl_shared::shared_adapter_code!(mod shared for openssl, openssl_sys);
/// ```
#[macro_export]
macro_rules! shared_adapter_code {
    (mod $name:ident for $lib:ident, $sys:ident) => {
        /// What this adapter shares with the others on the same API (expanded from
        /// tlsbench-stack-openssl-shared against this adapter's crate).
        mod $name {
            use tlsbench_harness::pki::{Credentials, SERVER_NAME};
            use tlsbench_harness::{ClientAuth, Endpoint, Kind, LibError, Pki, Scenario, Side, Suite, Version};
            use $lib::error::ErrorStack;
            use $lib::pkey::PKey;
            use $lib::ssl::{
                ErrorCode, ShutdownState, Ssl, SslContext, SslContextBuilder, SslOptions, SslRef, SslSession,
                SslSessionCacheMode, SslStream, SslVerifyMode, SslVersion,
            };
            use $lib::x509::store::{X509Store, X509StoreBuilder};
            use $lib::x509::X509;

            /// A fresh store, not the system's default paths: the scenario's root is the only
            /// trust anchor.
            pub(crate) fn trust_store(credentials: &Credentials) -> Result<X509Store, LibError> {
                let mut roots = X509StoreBuilder::new().map_err(LibError::context("creating the trust store"))?;
                let ca = X509::from_pem(credentials.ca_pem.as_bytes())
                    .map_err(LibError::context("parsing the CA certificate"))?;
                roots.add_cert(ca).map_err(LibError::context("adding the CA certificate to the trust store"))?;
                Ok(roots.build())
            }

            /// The leaf, the intermediates after it, and the leaf's key.
            pub(crate) fn use_chain_and_key(
                ctx: &mut SslContextBuilder,
                chain_pem: &str,
                key_pem: &str,
            ) -> Result<(), LibError> {
                let chain = X509::stack_from_pem(chain_pem.as_bytes())
                    .map_err(LibError::context("parsing the certificate chain"))?;
                let mut chain = chain.into_iter();
                let leaf = chain.next().ok_or_else(|| LibError::new("the chain PEM holds no certificate"))?;
                ctx.set_certificate(&leaf).map_err(LibError::context("setting the certificate"))?;
                for intermediate in chain {
                    ctx.add_extra_chain_cert(intermediate)
                        .map_err(LibError::context("adding an intermediate certificate"))?;
                }
                let key = PKey::private_key_from_pem(key_pem.as_bytes())
                    .map_err(LibError::context("parsing the private key"))?;
                ctx.set_private_key(&key).map_err(LibError::context("setting the private key"))?;
                ctx.check_private_key().map_err(LibError::context("checking the private key against its certificate"))
            }

            /// Exactly the scenario's version: the minimum and the maximum.
            pub(crate) fn pin_version(ctx: &mut SslContextBuilder, version: Version) -> Result<(), LibError> {
                let version = match version {
                    Version::Tls12 => SslVersion::TLS1_2,
                    Version::Tls13 => SslVersion::TLS1_3,
                };
                ctx.set_min_proto_version(Some(version))
                    .map_err(LibError::context("setting the minimum TLS version"))?;
                ctx.set_max_proto_version(Some(version)).map_err(LibError::context("setting the maximum TLS version"))
            }

            /// The groups a pinned side offers (a client) or accepts (a server), in the
            /// colon-separated list both libraries take.
            pub(crate) fn groups_list(scenario: &Scenario, side: Side) -> String {
                scenario.groups(side).iter().map(|g| g.openssl_name()).collect::<Vec<_>>().join(":")
            }

            /// No resumption but the kind the scenario asks for: no session cache (the configs
            /// turn on the side's own), and tickets (on both sides: a client with NO_TICKET does
            /// not ask for a TLS 1.2 ticket) only to resume from them. Returns the number of
            /// TLS 1.3 tickets a server is to send after each handshake, one to resume from or
            /// none, which the adapter sets (`SSL_CTX_set_num_tickets`; `boring` does not wrap it).
            pub(crate) fn resumption_only_as_asked(ctx: &mut SslContextBuilder, kind: Kind) -> usize {
                ctx.set_session_cache_mode(SslSessionCacheMode::OFF);
                match kind {
                    Kind::HandshakeResumeTicket => 1,
                    _ => {
                        ctx.set_options(SslOptions::NO_TICKET);
                        0
                    }
                }
            }

            /// A client context built on `ctx` (the adapter's `context`): the scenario's root
            /// as the only trust anchor, the server's chain verified, and the client's own
            /// chain and key for mutual TLS.
            pub(crate) fn client_context(
                mut ctx: SslContextBuilder,
                scenario: &Scenario,
                pki: &Pki,
            ) -> Result<SslContextBuilder, LibError> {
                let credentials = pki.credentials(scenario.key).map_err(LibError)?;
                ctx.set_cert_store(trust_store(credentials)?);
                client_context_on(ctx, scenario, credentials)
            }

            /// [`client_context`] trusting the system's store instead, as the library's users
            /// load it: `SSL_CTX_set_default_verify_paths` (the file named by `SSL_CERT_FILE`,
            /// else the build's default file, and the default directory, looked up lazily).
            pub(crate) fn client_context_system(
                mut ctx: SslContextBuilder,
                scenario: &Scenario,
                pki: &Pki,
            ) -> Result<SslContextBuilder, LibError> {
                let credentials = pki.credentials(scenario.key).map_err(LibError)?;
                ctx.set_default_verify_paths().map_err(LibError::context("SSL_CTX_set_default_verify_paths"))?;
                client_context_on(ctx, scenario, credentials)
            }

            /// The roots a context's store holds now (what the default paths' file loaded; the
            /// directory's are looked up when needed, and not counted).
            pub(crate) fn trust_roots(ctx: &SslContext) -> usize {
                // Deprecated in `openssl` as unsound across threads; one thread reads it here.
                #[allow(deprecated)]
                ctx.cert_store().objects().len()
            }

            fn client_context_on(
                mut ctx: SslContextBuilder,
                scenario: &Scenario,
                credentials: &Credentials,
            ) -> Result<SslContextBuilder, LibError> {
                ctx.set_verify(SslVerifyMode::PEER);
                if scenario.client_auth == ClientAuth::Required {
                    use_chain_and_key(&mut ctx, &credentials.client_chain_pem, &credentials.client_key_pem)?;
                }
                Ok(ctx)
            }

            /// A server context built on `ctx` (the adapter's `context`): the scenario's chain
            /// and key, the client authentication it asks for, and a session cache for the
            /// session IDs it resumes from.
            pub(crate) fn server_config(
                mut ctx: SslContextBuilder,
                scenario: &Scenario,
                pki: &Pki,
            ) -> Result<SslContext, LibError> {
                let credentials = pki.credentials(scenario.key).map_err(LibError)?;
                use_chain_and_key(&mut ctx, &credentials.chain_pem, &credentials.key_pem)?;
                match scenario.client_auth {
                    ClientAuth::None => {}
                    ClientAuth::Required => {
                        ctx.set_cert_store(trust_store(credentials)?);
                        ctx.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
                    }
                    ClientAuth::Requested => {
                        ctx.set_cert_store(trust_store(credentials)?);
                        ctx.set_verify(SslVerifyMode::PEER);
                    }
                }
                // Required for resuming a session that carries a verified client certificate.
                ctx.set_session_id_context(b"tlsbench").map_err(LibError::context("setting the session ID context"))?;
                // Session IDs need the server's cache; tickets are stateless (see `context`).
                if scenario.kind == Kind::HandshakeResumeId {
                    ctx.set_session_cache_mode(SslSessionCacheMode::SERVER);
                }
                Ok(ctx.build())
            }

            /// A client connection of `ctx` that sends the server's name and verifies it.
            pub(crate) fn client_ssl(ctx: &SslContext) -> Result<Ssl, LibError> {
                let mut ssl = Ssl::new(ctx).map_err(LibError::context("creating the client connection"))?;
                ssl.set_hostname(SERVER_NAME).map_err(LibError::context("setting the SNI host name"))?;
                // Chain verification alone would accept any name the CA signed.
                ssl.param_mut().set_host(SERVER_NAME).map_err(LibError::context("setting the host name to verify"))?;
                Ok(ssl)
            }

            /// `Connection::send`: all of `data`.
            #[inline]
            pub(crate) fn send(stream: &mut SslStream<Endpoint>, mut data: &[u8]) -> Result<(), LibError> {
                while !data.is_empty() {
                    // The in-memory transport accepts every byte, so the library never has to
                    // wait to write: any error here, WANT_WRITE included, is a failure.
                    let n = stream.ssl_write(data).map_err(LibError::context("SSL_write"))?;
                    data = &data[n..];
                }
                Ok(())
            }

            /// `Connection::receive`: what arrived, or 0.
            #[inline]
            pub(crate) fn receive(stream: &mut SslStream<Endpoint>, buf: &mut [u8]) -> Result<usize, LibError> {
                match stream.ssl_read(buf) {
                    Ok(n) => Ok(n),
                    // No complete record yet, or the peer closed: nothing more to read now
                    // either way.
                    Err(e) if matches!(e.code(), ErrorCode::WANT_READ | ErrorCode::ZERO_RETURN) => Ok(0),
                    Err(e) => Err(LibError::new(format!("SSL_read: {e}"))),
                }
            }

            /// `Connection::close`.
            #[inline]
            pub(crate) fn close(stream: &mut SslStream<Endpoint>) -> Result<(), LibError> {
                // The first SSL_shutdown writes close_notify and returns 0 (`Sent`), or 1
                // (`Received`) when the peer's has already arrived; it does not wait for the peer's.
                stream.shutdown().map(drop).map_err(LibError::context("SSL_shutdown"))
            }

            /// The version and cipher suite a finished handshake negotiated (both libraries
            /// name suites alike).
            pub(crate) fn version_and_suite(ssl: &SslRef) -> Result<(Version, Suite), LibError> {
                let version = match ssl.version2() {
                    Some(SslVersion::TLS1_2) => Version::Tls12,
                    Some(SslVersion::TLS1_3) => Version::Tls13,
                    _ => {
                        return Err(LibError::new(format!(
                            "negotiated an unexpected protocol version: {}",
                            ssl.version_str()
                        )))
                    }
                };
                let cipher =
                    ssl.current_cipher().ok_or_else(|| LibError::new("no cipher suite after the handshake"))?.name();
                let suite = Suite::negotiated(cipher, |key, suite| suite.openssl_name(version, key))?;
                Ok((version, suite))
            }

            /// Whether a TLS 1.2 handshake used the extended master secret (None in TLS 1.3).
            pub(crate) fn ems(ssl: &SslRef, version: Version) -> Option<bool> {
                match version {
                    // SAFETY: `raw(ssl)` is a live SSL for the borrow's duration, and this only
                    // reads it.
                    Version::Tls12 => Some(unsafe { $sys::SSL_get_extms_support(raw(ssl)) } == 1),
                    Version::Tls13 => None,
                }
            }

            /// What a peek at the records that arrived found.
            pub(crate) enum Peeked {
                /// Application data, which stays where it is.
                Data,
                /// Nothing to read yet.
                Nothing,
                /// The peer's close_notify.
                Closed,
            }

            /// Peeks at one byte: the library processes the records that arrived (a TLS 1.3
            /// session ticket, a close_notify) and leaves any application data where it is.
            /// Called through the C API: `boring` wraps no SSL_peek.
            pub(crate) fn peek(stream: &SslStream<Endpoint>) -> Result<Peeked, String> {
                let ssl = raw(stream.ssl());
                let mut byte = 0u8;
                // SAFETY: `ssl` is the live SSL of this stream, whose BIO is the stream's
                // transport, and the buffer is one writable byte.
                let ret = unsafe { $sys::SSL_peek(ssl, (&raw mut byte).cast(), 1) };
                if ret > 0 {
                    return Ok(Peeked::Data);
                }
                // SAFETY: `ssl` is live and `ret` is what its last call returned.
                match unsafe { $sys::SSL_get_error(ssl, ret) } {
                    $sys::SSL_ERROR_WANT_READ => Ok(Peeked::Nothing),
                    $sys::SSL_ERROR_ZERO_RETURN => Ok(Peeked::Closed),
                    code => Err(format!("SSL error {code}: {}", ErrorStack::get())),
                }
            }

            /// `Connection::handshake` once the handshake is done: reads what the peer sent
            /// since, such as a TLS 1.3 session ticket.
            pub(crate) fn read_after_handshake(stream: &SslStream<Endpoint>) -> Result<bool, LibError> {
                peek(stream).map(|_| true).map_err(|e| LibError::new(format!("reading after the handshake ({e})")))
            }

            /// `Connection::peer_closed`: whether the peer's close_notify has arrived.
            pub(crate) fn peer_closed(stream: &mut SslStream<Endpoint>) -> Result<bool, LibError> {
                if stream.get_shutdown().contains(ShutdownState::RECEIVED) {
                    return Ok(true);
                }
                match peek(stream) {
                    // Application data first: the close_notify, if any, is behind it.
                    Ok(Peeked::Data | Peeked::Nothing) => Ok(false),
                    Ok(Peeked::Closed) => Ok(true),
                    Err(e) => Err(LibError::new(format!("SSL_peek ({e})"))),
                }
            }

            /// A C call's return value: 1 is success, anything else an error on the stack.
            pub(crate) fn check(ret: std::ffi::c_int, what: &str) -> Result<(), LibError> {
                match ret {
                    1 => Ok(()),
                    _ => Err(LibError::new(format!("{what}: {}", ErrorStack::get()))),
                }
            }

            /// The session a client resumes next: the last one a server gave it, which every
            /// connection offers. For BoringSSL and AWS-LC, whose sessions never change once
            /// made (a renewed TLS 1.2 ticket comes in a new session, which reaches the
            /// new-session callback) and whose servers accept a ticket again; OpenSSL's client
            /// needs one per connection (stack-openssl's `Sessions`).
            pub(crate) type LastSession = std::sync::Arc<std::sync::Mutex<Option<SslSession>>>;

            /// Keeps each new session (the TLS 1.2 session, or the session of each TLS 1.3
            /// ticket) for the next connection when the scenario resumes; the library's own client
            /// cache is not used.
            pub(crate) fn keep_last_session(ctx: &mut SslContextBuilder, kind: Kind) -> LastSession {
                let last = LastSession::default();
                if kind.is_resumption() {
                    ctx.set_session_cache_mode(SslSessionCacheMode::CLIENT | SslSessionCacheMode::NO_INTERNAL);
                    let keep = last.clone();
                    ctx.set_new_session_callback(move |_, new| {
                        *keep.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(new)
                    });
                }
                last
            }

            /// Offers the last session, if there is one, on a new client connection of the
            /// context that kept it.
            pub(crate) fn offer_last_session(ssl: &mut Ssl, last: &LastSession) -> Result<(), LibError> {
                if let Some(session) = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref() {
                    // SAFETY: the session comes from a connection of this same context.
                    unsafe { ssl.set_session(session) }.map_err(LibError::context("setting the session to resume"))?;
                }
                Ok(())
            }

            /// Writes the TLS 1.3 session tickets the server of BoringSSL or AWS-LC queues at
            /// the end of the handshake. It holds them back until the server first writes (so
            /// that a client that never reads cannot stall it); a zero-byte write is the
            /// documented way to send them now, as part of the handshake that a client resumes
            /// from. Nothing is written when nothing is queued.
            #[allow(dead_code)] // OpenSSL's server sends them with the handshake.
            pub(crate) fn flush_tickets(stream: &SslStream<Endpoint>) -> Result<(), LibError> {
                let ssl = raw(stream.ssl());
                // SAFETY: `ssl` is the live SSL of this stream, whose BIO is the stream's
                // transport; a zero length reads nothing from the (dangling but non-null) pointer.
                let ret = unsafe { $sys::SSL_write(ssl, std::ptr::NonNull::<u8>::dangling().as_ptr().cast(), 0) };
                match ret {
                    0.. => Ok(()),
                    _ => Err(LibError::new(format!("sending the session tickets: {}", ErrorStack::get()))),
                }
            }

            /// The `SSL*` behind a reference. A `&SslRef` points at the `SSL` itself
            /// (foreign-types' contract, which is all `ForeignTypeRef::as_ptr` does); neither
            /// crate re-exports that trait.
            pub(crate) fn raw(ssl: &SslRef) -> *mut $sys::SSL {
                ssl as *const SslRef as *mut $sys::SSL
            }
        }
    };
}
