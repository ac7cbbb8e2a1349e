//! The network mode: a stack as a server on a real TCP socket ([`serve`]), and a load
//! generator of any client stack against any TLS server ([`load`]). Plain TCP ([`plain`]) is
//! the baseline.
//!
//! Each connection does what a small web server's does: the handshake, a request from the
//! client (`GET / HTTP/1.0` and an empty line, so that any HTTP server answers it), a response
//! of a set size written as a set number of application writes ([`Page`]), and close_notify
//! both ways (for plain TCP: shutdown of each direction). A connection is checked as in memory:
//! the gates after the handshake, and the response's length and digest when the client knows
//! the page.
//!
//! Sockets are non-blocking and each thread runs its connections in an event loop on `poll`,
//! calling into a library only when its socket is readable, as in memory a side gets a turn
//! only when its peer's bytes wait. Every syscall on a connection's socket is counted
//! ([`SocketCounts`]), and each thread counts its polls; CPU time is each thread's own
//! (`getrusage(RUSAGE_THREAD)`), user and system apart.

mod latency;
mod load;
pub mod plain;
mod serve;
mod socket;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use latency::Latency;
pub use load::{load, LoadSettings};
pub use serve::{serve, ServeSettings, Serving};
pub use socket::{RecordCounter, Socket, SocketCounts};

use crate::gate::Gates;
use crate::protocol::{Metric, MetricValue};
use crate::{Connection, Endpoint, Error, Kind, LibError, Measure, Scenario, Side, Stack};

/// What a client sends: a request any HTTP server answers.
pub const REQUEST: &[u8] = b"GET / HTTP/1.0\r\n\r\n";

/// The largest single application write of a page given by its size alone.
pub const PAGE_WRITE_SIZE: usize = 16 * 1024;

/// A response: `writes` application writes of `size` bytes each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub writes: u64,
    pub size: usize,
}

impl Page {
    pub const EMPTY: Page = Page { writes: 0, size: 0 };

    pub fn bytes(&self) -> u64 {
        self.writes * self.size as u64
    }

    /// The bytes of each write: the same deterministic pattern every time.
    pub fn chunk(&self) -> Vec<u8> {
        (0..self.size).map(|i| (i % 251) as u8).collect()
    }

    /// The digest of the whole response, as the client computes it over what it receives.
    pub fn digest(&self) -> u128 {
        let chunk = self.chunk();
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for _ in 0..self.writes {
            hasher.update(&chunk);
        }
        hasher.digest128()
    }
}

/// `0`, `10KiB`, `512KiB`, `100MiB` (written in 16 KiB writes), or `1000x64` (1,000 writes of
/// 64 bytes).
impl FromStr for Page {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let invalid = || {
            format!(
                "`{text}` is not a response size: give bytes (0, 1KiB, 10KiB, 512KiB, 10MiB, 100MiB) or \
                 COUNTxBYTES (1000x64)"
            )
        };
        let bytes = |t: &str| -> Result<u64, String> {
            let (number, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
                Some(i) => t.split_at(i),
                None => (t, ""),
            };
            let factor = match unit {
                "" | "B" => 1,
                "KiB" | "K" | "k" => 1 << 10,
                "MiB" | "M" => 1 << 20,
                "GiB" | "G" => 1 << 30,
                _ => return Err(invalid()),
            };
            number.parse::<u64>().ok().and_then(|n| n.checked_mul(factor)).ok_or_else(invalid)
        };
        match text.split_once('x') {
            Some((count, size)) => {
                let (writes, size) = (count.parse::<u64>().map_err(|_| invalid())?, bytes(size)?);
                match size > 0 && size <= 1 << 20 {
                    true => Ok(Page { writes, size: size as usize }),
                    false => Err(format!("`{text}`: each write must be 1 byte to 1 MiB")),
                }
            }
            None => {
                let total = bytes(text)?;
                let size = (total as usize).min(PAGE_WRITE_SIZE);
                match total % PAGE_WRITE_SIZE as u64 {
                    _ if total == 0 => Ok(Page::EMPTY),
                    0 => Ok(Page { writes: total / PAGE_WRITE_SIZE as u64, size }),
                    _ if total < PAGE_WRITE_SIZE as u64 => Ok(Page { writes: 1, size }),
                    _ => Err(format!(
                        "`{text}`: a response over 16 KiB must be a multiple of 16 KiB (or give COUNTxBYTES)"
                    )),
                }
            }
        }
    }
}

impl fmt::Display for Page {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.writes, self.size) {
            (0, _) => f.write_str("0"),
            (1, size) => f.write_str(&human_bytes(size as u64)),
            (writes, PAGE_WRITE_SIZE) => f.write_str(&human_bytes(writes * PAGE_WRITE_SIZE as u64)),
            (writes, size) => write!(f, "{writes}x{size}"),
        }
    }
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{}MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{}KiB", n >> 10),
        n => n.to_string(),
    }
}

/// How one side makes its connections over sockets and checks each handshake: a TLS stack
/// with its config, or a plain TCP baseline.
pub trait Peer {
    type Conn: Connection;

    fn id(&self) -> String;
    fn library(&self) -> String;
    /// Whether what goes over the socket is TLS (its records are counted).
    fn is_tls(&self) -> bool;
    fn open(&self, io: Endpoint) -> Result<Self::Conn, LibError>;
    /// After the handshake: the gates. Returns whether the connection resumed a session.
    fn check(&self, conn: &Self::Conn) -> Result<bool, Error>;
    /// What the last checked handshake negotiated.
    fn negotiated(&self) -> Option<String>;
    /// The warm-up is over: from now on, a resumption scenario's client must resume.
    fn measuring(&self) {}
    /// Whether the connections send and read close_notify; if not, a response ends with the
    /// end of the TCP stream instead (Bertie has no alerts to close with).
    fn close_notify(&self) -> bool {
        true
    }
}

/// A TLS stack's client or server side with its config.
pub struct TlsPeer<'a, T: Stack, Config> {
    pub stack: &'a T,
    pub config: &'a Config,
    pub side: Side,
    pub scenario: &'a Scenario,
    /// Client side: whether every handshake must resume, once the warm-up has given it
    /// sessions (None during the warm-up: either). Server side: unused; resumption is counted,
    /// not required, since the server cannot tell a warm-up connection from a measured one.
    pub expect_resumed: std::cell::Cell<Option<bool>>,
    pub gates: Gates,
}

impl<'a, T: Stack, Config> TlsPeer<'a, T, Config> {
    pub fn new(stack: &'a T, config: &'a Config, side: Side, scenario: &'a Scenario) -> Self {
        Self { stack, config, side, scenario, expect_resumed: Default::default(), gates: Gates::default() }
    }

    fn check_conn(&self, conn: &impl Connection) -> Result<bool, Error> {
        let got = conn.negotiated().map_err(crate::error::failed(self.side, "negotiated"))?;
        let either = got.resumed && self.scenario.kind.is_resumption();
        let expect_resumed = match self.side {
            Side::Client => self.expect_resumed.get().unwrap_or(either),
            Side::Server => either,
        };
        self.gates.check(self.side, self.scenario, &got, expect_resumed)?;
        Ok(got.resumed)
    }

    /// Stacks without close_notify leave io-profile, the kind that measures it, out of their
    /// capabilities.
    fn sends_close_notify(&self) -> bool {
        self.stack.capabilities().kinds.contains(&crate::Kind::IoProfile)
    }

    fn last_negotiated(&self) -> Option<String> {
        self.gates.negotiated().into_iter().find(|n| n.side == self.side).map(|n| n.negotiated)
    }
}

impl<T: Stack> Peer for TlsPeer<'_, T, T::ClientConfig> {
    type Conn = T::Client;

    fn id(&self) -> String {
        self.stack.id().to_string()
    }
    fn library(&self) -> String {
        self.stack.library()
    }
    fn is_tls(&self) -> bool {
        true
    }
    fn open(&self, io: Endpoint) -> Result<T::Client, LibError> {
        self.stack.new_client(self.config, io)
    }
    fn check(&self, conn: &T::Client) -> Result<bool, Error> {
        self.check_conn(conn)
    }
    fn negotiated(&self) -> Option<String> {
        self.last_negotiated()
    }
    fn measuring(&self) {
        self.expect_resumed.set(Some(self.scenario.kind.is_resumption()));
    }
    fn close_notify(&self) -> bool {
        self.sends_close_notify()
    }
}

/// The server side of a TLS stack: a type of its own, since a stack's client and server
/// configs may be the same type.
pub struct TlsServer<'a, T: Stack>(pub TlsPeer<'a, T, T::ServerConfig>);

impl<T: Stack> Peer for TlsServer<'_, T> {
    type Conn = T::Server;

    fn id(&self) -> String {
        self.0.stack.id().to_string()
    }
    fn library(&self) -> String {
        self.0.stack.library()
    }
    fn is_tls(&self) -> bool {
        true
    }
    fn open(&self, io: Endpoint) -> Result<T::Server, LibError> {
        self.0.stack.new_server(self.0.config, io)
    }
    fn check(&self, conn: &T::Server) -> Result<bool, Error> {
        self.0.check_conn(conn)
    }
    fn negotiated(&self) -> Option<String> {
        self.0.last_negotiated()
    }
    fn close_notify(&self) -> bool {
        self.0.sends_close_notify()
    }
}

impl Peer for plain::PlainTcp {
    type Conn = plain::PlainConnection;

    fn id(&self) -> String {
        plain::PlainTcp::id(*self).to_string()
    }
    fn library(&self) -> String {
        plain::PlainTcp::library(*self)
    }
    fn is_tls(&self) -> bool {
        false
    }
    fn open(&self, io: Endpoint) -> Result<Self::Conn, LibError> {
        Ok(self.connection(io))
    }
    fn check(&self, _: &Self::Conn) -> Result<bool, Error> {
        Ok(false)
    }
    fn negotiated(&self) -> Option<String> {
        None
    }
}

/// Why connections failed, with how many failed for each reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub reason: String,
    pub count: u64,
}

/// Distinct reasons kept in a report; further ones are counted under the last.
const MAX_FAILURE_REASONS: usize = 16;

/// Adds one failed connection under `reason`.
fn add_failure(failures: &mut Vec<Failure>, reason: String) {
    add_failures(failures, Failure { reason, count: 1 });
}

/// Adds `failure.count` failed connections under its reason.
fn add_failures(failures: &mut Vec<Failure>, failure: Failure) {
    if let Some(f) = failures.iter_mut().find(|f| f.reason == failure.reason) {
        f.count += failure.count;
    } else if failures.len() < MAX_FAILURE_REASONS {
        failures.push(failure);
    } else {
        failures.last_mut().expect("full").count += failure.count;
    }
}

/// What one side measured over its connections: the reply of a runner's `serve` (when it
/// stops) and `load`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetReport {
    pub side: Side,
    pub stack: String,
    pub library: String,
    /// The TLS scenario; None for plain TCP.
    pub scenario: Option<String>,
    /// The response asked for (server), or expected (client; None: not checked).
    pub page: Option<Page>,
    /// Client: connections in flight at once. Server: worker threads.
    pub concurrency: u32,
    /// What the last handshake negotiated, as this side saw it.
    pub negotiated: Option<String>,
    /// Connections completed and checked in the measured part.
    pub connections: u64,
    /// Of those, how many resumed a session.
    pub resumed: u64,
    /// Server: of those, how many the client closed after the handshake without a request
    /// (`openssl s_time` without -www does).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub without_request: u64,
    pub failed: u64,
    pub failures: Vec<Failure>,
    /// Unix time, in seconds, when the measured part began and ended (merging several
    /// generators takes the union of their windows). See [`NetReport::connections_per_s`].
    pub started_unix: f64,
    pub ended_unix: f64,
    pub cpu_user_seconds: f64,
    pub cpu_system_seconds: f64,
    /// The syscalls on the measured connections' sockets, and what went through them.
    pub sockets: SocketCounts,
    /// poll(2) calls of this side's event loops (and, on the server, accept4 calls that found
    /// no connection).
    pub polls: u64,
    /// Client: from the start of connect to the handshake's completion. Server: from accept.
    pub handshake_latency: Latency,
    /// Client: from the start of connect to the first byte of the response.
    pub first_byte_latency: Latency,
    /// Server: resident memory before the first connection, and at its peak.
    pub rss_start_bytes: Option<u64>,
    pub rss_peak_bytes: Option<u64>,
    /// Server: the most connections open at once.
    pub max_open: u64,
    /// `tlsbench load --run-id`: the run this is part of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The build the runner is (see [`crate::protocol::SampleReport::build`]); absent from
    /// runners built by their own toolchains (Go's, Java's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

impl NetReport {
    pub fn seconds(&self) -> f64 {
        (self.ended_unix - self.started_unix).max(0.0)
    }

    /// The client's rate is of the connections in its measured window. A server cannot tell a
    /// load generator's warm-up from the rest: its window runs from the first connection's end
    /// to the last's, and its rate counts the connections that ended after the first.
    pub fn connections_per_s(&self) -> Option<f64> {
        let counted = match self.side {
            Side::Client => self.connections,
            Side::Server => self.connections.saturating_sub(1),
        };
        (counted > 0 && self.seconds() > 0.0).then(|| counted as f64 / self.seconds())
    }

    /// `total` per completed connection.
    pub fn per_connection(&self, total: f64) -> Option<f64> {
        (self.connections > 0).then(|| total / self.connections as f64)
    }

    /// Every syscall counted: the sockets' and the event loops'.
    pub fn syscalls(&self) -> u64 {
        self.sockets.syscalls() + self.polls
    }

    /// Adds another generator's partial report of the same workload: counts add up, histograms
    /// merge, the window is the union.
    pub fn merge(&mut self, other: &NetReport) -> Result<(), String> {
        let same = (&self.stack, &self.scenario, self.page, self.side)
            == (&other.stack, &other.scenario, other.page, other.side);
        if !same {
            return Err(format!(
                "cannot merge {} {} with {} {}: not the same stack, scenario, response and side",
                other.stack,
                other.scenario.as_deref().unwrap_or("plain"),
                self.stack,
                self.scenario.as_deref().unwrap_or("plain")
            ));
        }
        self.concurrency += other.concurrency;
        self.connections += other.connections;
        self.resumed += other.resumed;
        self.without_request += other.without_request;
        self.failed += other.failed;
        for failure in &other.failures {
            add_failures(&mut self.failures, failure.clone());
        }
        self.started_unix = self.started_unix.min(other.started_unix);
        self.ended_unix = self.ended_unix.max(other.ended_unix);
        self.cpu_user_seconds += other.cpu_user_seconds;
        self.cpu_system_seconds += other.cpu_system_seconds;
        self.sockets.add(&other.sockets);
        self.polls += other.polls;
        self.handshake_latency.add(&other.handshake_latency)?;
        self.first_byte_latency.add(&other.first_byte_latency)?;
        self.max_open = self.max_open.max(other.max_open);
        Ok(())
    }

    /// This side's numbers as the metrics of the measure `net` (`tlsbench run --transport
    /// tcp`, whose responses are empty: no first byte): the rate over the measured window, the
    /// handshake latencies, and the rest per completed connection. None when no connection
    /// completed.
    pub fn metric_values(&self) -> Option<Vec<MetricValue>> {
        use Metric::*;
        let rate = self.connections_per_s()?;
        let per = |total: f64| total / self.connections as f64;
        let ms = |latency: Option<Duration>| latency.map(|d| d.as_secs_f64() * 1e3);
        let handshake = &self.handshake_latency;
        let value = |metric: Metric| -> Option<f64> {
            Some(match metric {
                ConnectionsPerS => rate,
                HandshakeP50Ms => ms(handshake.percentile(50.0))?,
                HandshakeP90Ms => ms(handshake.percentile(90.0))?,
                HandshakeP99Ms => ms(handshake.percentile(99.0))?,
                HandshakeMaxMs => ms(handshake.max())?,
                CpuUserUsPerConnection => per(self.cpu_user_seconds * 1e6),
                CpuSystemUsPerConnection => per(self.cpu_system_seconds * 1e6),
                ReadCalls => per(self.sockets.reads as f64),
                WriteCalls => per(self.sockets.writes as f64),
                Syscalls => per(self.syscalls() as f64),
                BytesWritten => per(self.sockets.bytes_written as f64),
                RecordsWritten => per(self.sockets.records_written as f64),
                RssPeakBytes => self.rss_peak_bytes? as f64,
                _ => return None,
            })
        };
        let metrics =
            Metric::of(Measure::Net, Kind::HandshakeFull).iter().filter(|m| m.reported_by(Measure::Net, self.side));
        let seconds = self.seconds();
        let values = metrics.filter_map(|&metric| {
            let seconds = if metric == ConnectionsPerS { seconds } else { 0.0 };
            Some(MetricValue { side: self.side, metric, value: value(metric)?, seconds })
        });
        Some(values.collect())
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A runner's reply to `load`, and its last reply to `serve` (after [`Serving`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
#[allow(clippy::large_enum_variant, reason = "one reply per command, never in a measured loop")]
pub enum NetReply {
    Ok(NetReport),
    Unsupported { reason: String },
    Failed { reason: String },
}

/// The scenario kinds the network mode runs: each connection's handshake is the scenario's;
/// what follows it is the response ([`Page`]).
pub fn check_kind(scenario: &Scenario) -> Result<(), Error> {
    match scenario.kind {
        Kind::HandshakeFull | Kind::HandshakeResumeId | Kind::HandshakeResumeTicket => Ok(()),
        other => Err(Error::Unsupported(format!(
            "the network mode runs handshake scenarios (handshake-full, handshake-resume-id, \
             handshake-resume-ticket), not {other}: the response after each handshake is set with --response"
        ))),
    }
}

/// How long a connection may wait for its peer before it fails.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(10);

/// This thread's CPU time so far: (user, system).
fn thread_cpu() -> (Duration, Duration) {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (time(usage.ru_utime), time(usage.ru_stime))
}

fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// One poll(2) over `fds`, retried on EINTR; returns how many are ready.
fn poll(fds: &mut [libc::pollfd], timeout: Duration, polls: &mut u64) -> std::io::Result<usize> {
    loop {
        *polls += 1;
        // SAFETY: `fds` is a valid slice of pollfd for the duration of the call.
        let n = unsafe {
            libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout.as_millis().min(i32::MAX as u128) as i32)
        };
        match n {
            -1 if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => continue,
            -1 => return Err(std::io::Error::last_os_error()),
            n => return Ok(n as usize),
        }
    }
}

/// One line of a library's or the kernel's error: the first line, without trailing punctuation.
fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().trim_end_matches(['.', ':']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_parse_from_sizes_and_write_counts() {
        let page = |t: &str| t.parse::<Page>();
        assert_eq!(page("0"), Ok(Page::EMPTY));
        assert_eq!(page("1KiB"), Ok(Page { writes: 1, size: 1024 }));
        assert_eq!(page("10KiB"), Ok(Page { writes: 1, size: 10240 }));
        assert_eq!(page("512KiB"), Ok(Page { writes: 32, size: PAGE_WRITE_SIZE }));
        assert_eq!(page("100MiB").map(|p| p.bytes()), Ok(100 << 20));
        assert_eq!(page("1000x64"), Ok(Page { writes: 1000, size: 64 }));
        for text in ["0", "1KiB", "10KiB", "512KiB", "10MiB", "1000x64"] {
            assert_eq!(page(text).unwrap().to_string(), text, "prints as parsed");
        }
        assert!(page("ten").unwrap_err().contains("COUNTxBYTES"));
        assert!(page("20KiB").unwrap_err().contains("multiple of 16 KiB"));
        assert!(page("5x0").unwrap_err().contains("1 byte to 1 MiB"));
    }

    #[test]
    fn failures_are_counted_by_reason_and_bounded() {
        let mut failures = Vec::new();
        for i in 0..40 {
            add_failure(&mut failures, format!("reason {}", i % 20));
        }
        assert_eq!(failures.len(), MAX_FAILURE_REASONS);
        assert_eq!(failures.iter().map(|f| f.count).sum::<u64>(), 40, "every failure is counted");
        assert_eq!(failures[0], Failure { reason: "reason 0".into(), count: 2 });
    }
}
