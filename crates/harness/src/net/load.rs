//! The load generator: one thread with up to `concurrency` connections in flight, each a new
//! connection from connect to close, until a count or a duration is reached.

use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
use std::rc::Rc;
use std::time::{Duration, Instant};

use xxhash_rust::xxh3::Xxh3;

use super::{
    add_failure, add_failures, one_line, poll, thread_cpu, unix_now, Latency, NetReport, Page, Peer, Socket,
    SocketCounts, REQUEST,
};
use crate::gate::{check_transfer, Tally};
use crate::{Connection, Endpoint, Side};

#[derive(Clone, Debug)]
pub struct LoadSettings {
    pub connect: SocketAddr,
    /// Stop after this many measured connections (None: only the duration bounds it).
    pub connections: Option<u64>,
    /// Stop starting connections after this long (None: only the count bounds it).
    pub duration: Option<Duration>,
    /// Connections in flight at once.
    pub concurrency: u32,
    /// The response the server sends, when known: each one is checked (length and digest).
    pub page: Option<Page>,
    /// A connection whose server sends nothing this long fails.
    pub io_timeout: Duration,
}

impl LoadSettings {
    /// When neither bound is given.
    pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);
}

/// Runs `settings.concurrency` connections at once to warm up (and, when resuming, to give the
/// client a session for each connection in flight: a TLS 1.3 ticket may be used once), then the
/// measured ones. Failed connections are counted and
/// their reasons listed; they never stop the others.
pub fn load<P: Peer>(peer: &P, settings: &LoadSettings) -> NetReport {
    let mut generator = Generator::new(peer, settings);
    let warmup = u64::from(settings.concurrency.max(1));
    generator.run(warmup, settings.concurrency.max(1), Instant::now() + settings.io_timeout * 2);
    peer.measuring();
    let warm_failures = std::mem::take(&mut generator.failures);
    generator.reset();
    let started_unix = unix_now();
    let cpu_start = thread_cpu();
    let started = Instant::now();
    let deadline = match (settings.connections, settings.duration) {
        (_, Some(duration)) => started + duration,
        (Some(_), None) => started + Duration::from_secs(24 * 3600),
        (None, None) => started + LoadSettings::DEFAULT_DURATION,
    };
    generator.run(settings.connections.unwrap_or(u64::MAX), settings.concurrency.max(1), deadline);
    let cpu_end = thread_cpu();
    let ended_unix = unix_now();
    let mut failures = warm_failures;
    for f in std::mem::take(&mut generator.failures) {
        add_failures(&mut failures, f);
    }
    NetReport {
        side: Side::Client,
        stack: peer.id(),
        library: peer.library(),
        scenario: None,
        page: settings.page,
        concurrency: settings.concurrency.max(1),
        negotiated: peer.negotiated(),
        connections: generator.connections,
        resumed: generator.resumed,
        without_request: 0,
        failed: failures.iter().map(|f| f.count).sum(),
        failures,
        started_unix,
        ended_unix,
        cpu_user_seconds: (cpu_end.0 - cpu_start.0).as_secs_f64(),
        cpu_system_seconds: (cpu_end.1 - cpu_start.1).as_secs_f64(),
        sockets: generator.sockets,
        polls: generator.polls,
        handshake_latency: generator.handshake_latency,
        first_byte_latency: generator.first_byte_latency,
        rss_start_bytes: None,
        rss_peak_bytes: None,
        max_open: u64::from(settings.concurrency.max(1)),
        run_id: None,
        build: None,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Connecting,
    Handshake,
    /// The request is sent; reading the response up to the server's close_notify.
    Response,
}

impl Stage {
    fn during(self) -> &'static str {
        match self {
            Stage::Connecting => "while connecting",
            Stage::Handshake => "during the handshake",
            Stage::Response => "during the response",
        }
    }
}

struct Dialled<C> {
    conn: C,
    socket: Rc<Socket>,
    stage: Stage,
    started: Instant,
    last_progress: Instant,
    received: u64,
    digest: Option<Xxh3>,
}

struct Generator<'a, P: Peer> {
    peer: &'a P,
    settings: &'a LoadSettings,
    /// Digest of the expected page, computed once.
    expected: Option<Tally>,
    connections: u64,
    resumed: u64,
    failures: Vec<super::Failure>,
    sockets: SocketCounts,
    polls: u64,
    handshake_latency: Latency,
    first_byte_latency: Latency,
    /// When connections still in flight fail: the run's deadline plus the io timeout.
    hard_stop: Instant,
}

fn still_open(stage: Stage) -> String {
    format!("still open when the load's time ran out ({})", stage.during())
}

impl<'a, P: Peer> Generator<'a, P> {
    fn new(peer: &'a P, settings: &'a LoadSettings) -> Self {
        let expected = settings.page.map(|page| Tally { bytes: page.bytes(), digest: page.digest() });
        Self {
            peer,
            settings,
            expected,
            connections: 0,
            resumed: 0,
            failures: Vec::new(),
            sockets: SocketCounts::default(),
            polls: 0,
            handshake_latency: Latency::default(),
            first_byte_latency: Latency::default(),
            hard_stop: Instant::now(),
        }
    }

    /// Forgets what the warm-up counted.
    fn reset(&mut self) {
        (self.connections, self.resumed, self.polls) = (0, 0, 0);
        self.failures.clear();
        self.sockets = SocketCounts::default();
        self.handshake_latency = Latency::default();
        self.first_byte_latency = Latency::default();
    }

    /// Runs `count` connections, `concurrency` at a time, starting none after `deadline`;
    /// those in flight then get the io timeout to finish.
    fn run(&mut self, count: u64, concurrency: u32, deadline: Instant) {
        let mut live: Vec<Dialled<P::Conn>> = Vec::with_capacity(concurrency as usize);
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(concurrency as usize);
        let mut buf = vec![0u8; 16 * 1024];
        let mut started = 0u64;
        self.hard_stop = deadline + self.settings.io_timeout;
        loop {
            while live.len() < concurrency as usize && started < count && Instant::now() < deadline {
                started += 1;
                match self.dial() {
                    Ok(dialled) => live.push(dialled),
                    Err(reason) => self.end(Err(reason)),
                }
            }
            if live.is_empty() {
                return;
            }
            fds.clear();
            fds.extend(live.iter().map(|d| libc::pollfd {
                fd: d.socket.stream().as_raw_fd(),
                events: if d.stage == Stage::Connecting { libc::POLLOUT } else { libc::POLLIN },
                revents: 0,
            }));
            let wait = self.settings.io_timeout.min(Duration::from_millis(100));
            if let Err(e) = poll(&mut fds, wait, &mut self.polls) {
                for _ in live.drain(..) {
                    self.end(Err(format!("poll: {e}")));
                }
                return;
            }
            let now = Instant::now();
            for i in (0..live.len()).rev() {
                let dialled = &mut live[i];
                let outcome = match fds[i].revents {
                    _ if now > self.hard_stop => Err(still_open(dialled.stage)),
                    0 if now - dialled.last_progress > self.settings.io_timeout => Err(format!(
                        "the server sent nothing for {} s {}",
                        self.settings.io_timeout.as_secs_f64(),
                        dialled.stage.during()
                    )),
                    0 => continue,
                    _ => {
                        dialled.last_progress = now;
                        self.advance(dialled, &mut buf)
                    }
                };
                if let Ok(false) = outcome {
                    continue;
                }
                let dialled = live.swap_remove(i);
                self.end(outcome.map(|_| &*dialled.socket));
            }
        }
    }

    /// A connection has ended: completed on its socket, whose counts it adds (per-connection
    /// figures are of the connections that completed), or failed.
    fn end(&mut self, outcome: Result<&Socket, String>) {
        match outcome {
            Ok(socket) => {
                socket.count_other(1); // the close, as it is dropped
                self.sockets.add(&socket.counts());
                self.connections += 1;
            }
            Err(reason) => add_failure(&mut self.failures, reason),
        }
    }

    /// A new non-blocking socket, connecting (connect returns at once with EINPROGRESS).
    fn dial(&self) -> Result<Dialled<P::Conn>, String> {
        let addr = self.settings.connect;
        let started = Instant::now();
        let domain = match addr {
            SocketAddr::V4(_) => socket2::Domain::IPV4,
            SocketAddr::V6(_) => socket2::Domain::IPV6,
        };
        let raw = socket2::Socket::new(domain, socket2::Type::STREAM.nonblocking().cloexec(), None)
            .map_err(|e| format!("creating a socket: {e}"))?;
        raw.set_tcp_nodelay(true).map_err(|e| format!("setting TCP_NODELAY: {e}"))?;
        match raw.connect(&addr.into()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(format!("connecting to {addr}: {}", one_line(&e.to_string()))),
        }
        // SAFETY: the descriptor is socket2's, handed over whole.
        let stream = unsafe { TcpStream::from_raw_fd(raw.into_raw_fd()) };
        let socket = Rc::new(Socket::new(stream, self.peer.is_tls(), self.settings.io_timeout));
        socket.count_other(3); // socket, setsockopt, connect
        let conn = self.peer.open(Endpoint::socket(socket.clone())).map_err(|e| format!("client connection: {e}"))?;
        Ok(Dialled {
            conn,
            socket,
            stage: Stage::Connecting,
            started,
            last_progress: started,
            received: 0,
            digest: self.expected.map(|_| Xxh3::new()),
        })
    }

    /// Moves a connection on with what its socket says. Ok(true) once it has ended cleanly.
    fn advance(&mut self, dialled: &mut Dialled<P::Conn>, buf: &mut [u8]) -> Result<bool, String> {
        if dialled.stage == Stage::Connecting {
            dialled.socket.count_other(1); // getsockopt(SO_ERROR)
            match dialled.socket.stream().take_error() {
                Ok(None) => {}
                Ok(Some(e)) | Err(e) => {
                    return Err(format!("connecting to {}: {}", self.settings.connect, one_line(&e.to_string())))
                }
            }
            dialled.stage = Stage::Handshake;
        }
        if dialled.stage == Stage::Handshake {
            let done = dialled.conn.handshake().map_err(|e| format!("handshake: {}", one_line(&e.0)))?;
            if !done {
                return self.check_open(dialled);
            }
            self.handshake_latency.record(dialled.started.elapsed());
            dialled
                .conn
                .send(REQUEST)
                .and_then(|()| dialled.conn.flush())
                .map_err(|e| format!("sending the request: {}", one_line(&e.0)))?;
            dialled.stage = Stage::Response;
        }
        // Until the server has closed, then once more: looking for its close_notify, a library
        // may decrypt data that arrived just before it (rustls does), which is the response's.
        let mut closed = false;
        for reads in 1u64.. {
            // A server that streams without end must not hold the generator past its hard stop.
            if reads % 64 == 0 && Instant::now() > self.hard_stop {
                return Err(still_open(dialled.stage));
            }
            let n = dialled.conn.receive(buf).map_err(|e| format!("reading the response: {}", one_line(&e.0)))?;
            if n > 0 {
                if dialled.received == 0 {
                    self.first_byte_latency.record(dialled.started.elapsed());
                }
                dialled.received += n as u64;
                if let Some(digest) = &mut dialled.digest {
                    digest.update(&buf[..n]);
                }
                continue;
            }
            if closed {
                break;
            }
            closed = match self.peer.close_notify() {
                true => dialled
                    .conn
                    .peer_closed()
                    .map_err(|e| format!("reading the server's close_notify: {}", one_line(&e.0)))?,
                false => dialled.socket.at_eof(),
            };
            if !closed {
                return self.check_open(dialled);
            }
        }
        // The gates once the server has said all it will: TLS 1.3 tickets arrive after the
        // handshake, and the client reports whether one did.
        let resumed = self.peer.check(&dialled.conn).map_err(|e| one_line(&e.to_string()))?;
        self.resumed += u64::from(resumed);
        if let (Some(expected), Some(digest)) = (self.expected, &dialled.digest) {
            let received = Tally { bytes: dialled.received, digest: digest.digest128() };
            check_transfer(expected, received).map_err(|e| format!("the response: {e}"))?;
        }
        if self.peer.close_notify() {
            dialled.conn.close().map_err(|e| format!("sending close_notify: {}", one_line(&e.0)))?;
        }
        Ok(true)
    }

    /// Err once the server has closed its end before the connection was done.
    fn check_open(&self, dialled: &Dialled<P::Conn>) -> Result<bool, String> {
        match dialled.socket.at_eof() && (dialled.stage != Stage::Response || self.peer.close_notify()) {
            true => Err(format!(
                "the server closed the connection {} ({} bytes of response)",
                dialled.stage.during(),
                dialled.received
            )),
            false => Ok(false),
        }
    }
}
