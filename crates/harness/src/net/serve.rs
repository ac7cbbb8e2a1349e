//! A server: worker threads that share one listening socket, each with an event loop over the
//! connections it accepted.

use std::net::TcpListener;
use std::os::fd::{AsRawFd, FromRawFd};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{
    add_failure, add_failures, one_line, poll, thread_cpu, unix_now, Failure, Latency, NetReport, Page, Peer, Socket,
    SocketCounts,
};
use crate::{Connection, Endpoint, Side};

/// How often a worker looks at the stop flag while nothing happens.
const STOP_CHECK: Duration = Duration::from_millis(100);
/// Connections one worker accepts per wake-up before it serves the ones it has.
const ACCEPT_BATCH: usize = 16;

#[derive(Clone, Debug)]
pub struct ServeSettings {
    pub workers: u32,
    pub page: Page,
    /// A connection whose client sends nothing this long fails.
    pub io_timeout: Duration,
}

/// What the runner prints once its server listens.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Serving {
    pub listening: String,
    pub stack: String,
    pub library: String,
    pub workers: u32,
}

/// Serves connections on `listener` with `settings.workers` threads, each with the peer
/// `make_peer` gives it, until `stop` is set; then finishes the connections in flight (each
/// bounded by the io timeout) and reports.
pub fn serve<P: Peer>(
    make_peer: impl Fn() -> P + Sync,
    listener: TcpListener,
    settings: &ServeSettings,
    stop: &AtomicBool,
) -> NetReport {
    listener.set_nonblocking(true).expect("a listening socket can be made non-blocking");
    let rss_start = crate::rss::current().ok();
    let chunk = settings.page.chunk();
    let open = AtomicU64::new(0);
    let max_open = AtomicU64::new(0);
    let shared = Shared { listener: &listener, settings, stop, chunk: &chunk, open: &open, max_open: &max_open };
    let totals: Vec<Totals> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..settings.workers.max(1))
            .map(|_| {
                let (shared, make_peer) = (&shared, &make_peer);
                scope.spawn(move || worker(&make_peer(), shared))
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a server worker panicked")).collect()
    });
    let peer = make_peer();
    let mut report = NetReport {
        side: Side::Server,
        stack: peer.id(),
        library: peer.library(),
        scenario: None,
        page: Some(settings.page),
        concurrency: settings.workers.max(1),
        negotiated: None,
        connections: 0,
        resumed: 0,
        without_request: 0,
        failed: 0,
        failures: Vec::new(),
        started_unix: f64::MAX,
        ended_unix: 0.0,
        cpu_user_seconds: 0.0,
        cpu_system_seconds: 0.0,
        sockets: SocketCounts::default(),
        polls: 0,
        handshake_latency: Latency::default(),
        first_byte_latency: Latency::default(),
        rss_start_bytes: rss_start,
        rss_peak_bytes: crate::rss::peak().ok(),
        max_open: max_open.load(Ordering::Relaxed),
        run_id: None,
        build: None,
    };
    for t in totals {
        report.connections += t.connections;
        report.resumed += t.resumed;
        report.without_request += t.without_request;
        for f in t.failures {
            report.failed += f.count;
            add_failures(&mut report.failures, f);
        }
        if let Some((first, last)) = t.window {
            report.started_unix = report.started_unix.min(first);
            report.ended_unix = report.ended_unix.max(last);
        }
        report.cpu_user_seconds += t.cpu.0.as_secs_f64();
        report.cpu_system_seconds += t.cpu.1.as_secs_f64();
        report.sockets.add(&t.sockets);
        report.polls += t.polls;
        report.handshake_latency.add(&t.handshake_latency).expect("same bounds");
        report.negotiated = report.negotiated.or(t.negotiated);
    }
    if report.started_unix > report.ended_unix {
        (report.started_unix, report.ended_unix) = (0.0, 0.0);
    }
    report
}

struct Shared<'a> {
    listener: &'a TcpListener,
    settings: &'a ServeSettings,
    stop: &'a AtomicBool,
    chunk: &'a [u8],
    open: &'a AtomicU64,
    max_open: &'a AtomicU64,
}

/// One worker's share of the report.
#[derive(Default)]
struct Totals {
    connections: u64,
    resumed: u64,
    without_request: u64,
    failures: Vec<Failure>,
    cpu: (Duration, Duration),
    sockets: SocketCounts,
    polls: u64,
    handshake_latency: Latency,
    /// Unix times of its first accept and its last connection's end.
    window: Option<(f64, f64)>,
    negotiated: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Accepted; the handshake begins when the client hello arrives.
    Handshake,
    /// Reading the request, up to its empty line.
    Request,
    /// The response and close_notify are written; waiting for the client's close.
    Closing,
}

impl Stage {
    fn during(self) -> &'static str {
        match self {
            Stage::Handshake => "during the handshake",
            Stage::Request => "before its request was complete",
            Stage::Closing => "before its close_notify",
        }
    }
}

struct Served<C> {
    conn: C,
    socket: Rc<Socket>,
    stage: Stage,
    accepted: Instant,
    last_progress: Instant,
    /// Whether any of the request has arrived, and its last four bytes so far, to find its
    /// end (an empty line).
    requested: bool,
    request_tail: [u8; 4],
    resumed: bool,
    /// The client closed after the handshake without a request.
    without_request: bool,
}

fn worker<P: Peer>(peer: &P, shared: &Shared) -> Totals {
    let cpu_start = thread_cpu();
    let mut totals = Totals::default();
    let mut live: Vec<Served<P::Conn>> = Vec::new();
    let mut fds: Vec<libc::pollfd> = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let listener_fd = shared.listener.as_raw_fd();
    loop {
        let stopping = shared.stop.load(Ordering::Relaxed);
        if stopping && live.is_empty() {
            break;
        }
        fds.clear();
        fds.extend(live.iter().map(|c| libc::pollfd {
            fd: c.socket.stream().as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }));
        if !stopping {
            fds.push(libc::pollfd { fd: listener_fd, events: libc::POLLIN, revents: 0 });
        }
        if let Err(e) = poll(&mut fds, STOP_CHECK, &mut totals.polls) {
            add_failure(&mut totals.failures, format!("poll: {e}"));
            break;
        }
        // Served in reverse, so that removing one leaves the indices of the rest.
        for i in (0..live.len()).rev() {
            let served = &mut live[i];
            let now = Instant::now();
            let outcome = match fds[i].revents {
                0 if now - served.last_progress > shared.settings.io_timeout => Err(format!(
                    "the client sent nothing for {} s {}",
                    shared.settings.io_timeout.as_secs_f64(),
                    served.stage.during()
                )),
                0 => Ok(false),
                _ => {
                    served.last_progress = now;
                    advance(peer, served, shared, &mut buf, &mut totals)
                }
            };
            if let Ok(false) = outcome {
                continue;
            }
            let served = live.swap_remove(i);
            served.socket.count_other(1); // the close, as it is dropped
            match outcome {
                Ok(_) => {
                    // Per-connection figures are of the connections that completed.
                    totals.sockets.add(&served.socket.counts());
                    totals.connections += 1;
                    totals.resumed += u64::from(served.resumed);
                    totals.without_request += u64::from(served.without_request);
                }
                Err(reason) => add_failure(&mut totals.failures, reason),
            }
            // The window opens at the first completion, not the first accept: the first
            // connection carries the load generator's one-off set-up.
            let now = unix_now();
            match &mut totals.window {
                Some(window) => window.1 = now,
                None => totals.window = Some((now, now)),
            }
            shared.open.fetch_sub(1, Ordering::Relaxed);
        }
        if fds.last().is_some_and(|l| l.fd == listener_fd && l.revents != 0) {
            accept(peer, shared, &mut live, &mut totals);
        }
    }
    let cpu_end = thread_cpu();
    totals.cpu = (cpu_end.0 - cpu_start.0, cpu_end.1 - cpu_start.1);
    totals.negotiated = peer.negotiated();
    totals
}

/// Accepts what waits, up to a batch; another worker may take it first.
fn accept<P: Peer>(peer: &P, shared: &Shared, live: &mut Vec<Served<P::Conn>>, totals: &mut Totals) {
    for _ in 0..ACCEPT_BATCH {
        // SAFETY: accept4 on a listening socket, without the peer's address.
        let fd = unsafe {
            libc::accept4(
                shared.listener.as_raw_fd(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            )
        };
        if fd < 0 {
            // Nothing left (or another worker took it): part of the event loop's cost.
            totals.polls += 1;
            return;
        }
        // SAFETY: accept4 returned a new connected socket that nothing else owns.
        let stream = unsafe { std::net::TcpStream::from_raw_fd(fd) };
        let nodelay = stream.set_nodelay(true);
        let socket = Rc::new(Socket::new(stream, peer.is_tls(), shared.settings.io_timeout));
        socket.count_other(2); // accept4, setsockopt
        let now = Instant::now();
        let open = shared.open.fetch_add(1, Ordering::Relaxed) + 1;
        shared.max_open.fetch_max(open, Ordering::Relaxed);
        let opened = nodelay
            .map_err(|e| format!("setting TCP_NODELAY: {e}"))
            .and_then(|()| peer.open(Endpoint::socket(socket.clone())).map_err(|e| format!("server connection: {e}")));
        match opened {
            Ok(conn) => live.push(Served {
                conn,
                socket,
                stage: Stage::Handshake,
                accepted: now,
                last_progress: now,
                requested: false,
                request_tail: [0; 4],
                resumed: false,
                without_request: false,
            }),
            Err(reason) => {
                add_failure(&mut totals.failures, reason);
                shared.open.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}

/// Moves a connection on with what arrived. Ok(true) once it has ended cleanly.
fn advance<P: Peer>(
    peer: &P,
    served: &mut Served<P::Conn>,
    shared: &Shared,
    buf: &mut [u8],
    totals: &mut Totals,
) -> Result<bool, String> {
    if served.stage == Stage::Handshake {
        let done = served.conn.handshake().map_err(|e| format!("handshake: {}", one_line(&e.0)))?;
        if !done {
            return check_open(served);
        }
        served.resumed = peer.check(&served.conn).map_err(|e| one_line(&e.to_string()))?;
        totals.handshake_latency.record(served.accepted.elapsed());
        served.stage = Stage::Request;
        // The request may have come with the client's last handshake flight.
    }
    if served.stage == Stage::Request {
        let received = loop {
            let n = match served.conn.receive(buf) {
                Ok(0) => break Ok(()),
                Ok(n) => n,
                Err(e) => break Err(e),
            };
            served.requested = true;
            let mut window = [0u8; 4];
            let tail = &buf[..n];
            // The last four bytes of the request so far.
            let keep = 4usize.saturating_sub(tail.len());
            window[..keep].copy_from_slice(&served.request_tail[4 - keep..]);
            window[keep..].copy_from_slice(&tail[tail.len() - (4 - keep)..]);
            served.request_tail = window;
        };
        if !served.requested && served.socket.peer_gone() {
            // The client left after the handshake without a request, as `openssl s_time`
            // does without -www: a connection that only shook hands, not a failure.
            served.without_request = true;
            return Ok(true);
        }
        received.map_err(|e| format!("reading the request: {}", one_line(&e.0)))?;
        if &served.request_tail != b"\r\n\r\n" {
            return check_open(served);
        }
        respond(served, shared, peer.close_notify())
            .map_err(|e| format!("writing the response: {}", one_line(&e.0)))?;
        served.stage = Stage::Closing;
    }
    if !peer.close_notify() {
        // The client's end of the stream is its close.
        return match std::io::Read::read(&mut &*served.socket, buf) {
            Ok(0) => Ok(true),
            Ok(_) => Err("the client sent more after its request".into()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
            Err(_) if served.socket.peer_gone() => Ok(true),
            Err(e) => Err(format!("waiting for the client to close: {e}")),
        };
    }
    match served.conn.peer_closed() {
        Ok(true) => Ok(true),
        // The response and close_notify are written: a client may close its socket without
        // close_notify (as many HTTP clients do), or reset it (`openssl s_time` sets SO_LINGER
        // to 0 so that its closes leave no TIME_WAIT).
        Ok(false) | Err(_) if served.socket.peer_gone() => Ok(true),
        Ok(false) => Ok(false),
        Err(e) => Err(format!("reading the client's close_notify: {}", one_line(&e.0))),
    }
}

/// The page, its close_notify after it (or the end of the TCP stream, without close_notify).
fn respond<C: Connection>(served: &mut Served<C>, shared: &Shared, close_notify: bool) -> Result<(), crate::LibError> {
    for _ in 0..shared.settings.page.writes {
        served.conn.send(shared.chunk)?;
    }
    served.conn.flush()?;
    match close_notify {
        true => served.conn.close(),
        false => served.socket.shutdown_write().map_err(crate::LibError::context("shutdown")),
    }
}

/// Err once the client has closed its end before the connection was done.
fn check_open<C>(served: &Served<C>) -> Result<bool, String> {
    match served.socket.at_eof() {
        true => Err(format!("the client closed the connection {}", served.stage.during())),
        false => Ok(false),
    }
}
