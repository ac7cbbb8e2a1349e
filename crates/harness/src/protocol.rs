//! What a runner prints on stdout for the orchestrator: one JSON document per invocation, and
//! nothing else on stdout (what its libraries print goes to stderr: see [`crate::runner`], "The
//! reply channel"). docs/runner-protocol.md is the whole protocol, for runners in any language.

use serde::{Deserialize, Serialize};

use crate::{Backend, Capabilities, Kind, Measure, Side};

/// The version of the runner protocol (docs/runner-protocol.md) that this harness speaks. The
/// orchestrator uses only runners whose `list` reply names the same version; bump it with any
/// change a runner must follow (commands, flags, replies, relay messages).
pub const PROTOCOL_VERSION: u32 = 4;

/// `runner list`: the protocol version the runner speaks and the stacks its family holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListReply {
    pub protocol_version: u32,
    pub stacks: Vec<StackInfo>,
    /// The build the runner is (`scripts/build.sh --build NAME`); absent from runners that
    /// scripts/build.sh does not build with flags of its own (Go's, Java's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<crate::build::BuildInfo>,
    /// Whether its `sample` takes `--full-speed` (crate::speed): the Rust runners', the Go
    /// runner's (amd64) and the Java runner's (through crates/speed-ffi) do.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_speed: bool,
}

/// One stack a runner holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StackInfo {
    pub id: String,
    /// The library name and version the running code reports.
    pub library: String,
    /// The TLS library without its backend, e.g. `rustls 0.23.46`; absent from runners (and
    /// stored runs) from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_library: Option<String>,
    /// The crypto library the stack runs on; absent as `tls_library` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<Backend>,
    pub capabilities: Capabilities,
}

impl StackInfo {
    /// A stack with no TLS library or backend named apart from its library string.
    pub fn new(id: impl Into<String>, library: impl Into<String>, capabilities: Capabilities) -> StackInfo {
        StackInfo { id: id.into(), library: library.into(), tls_library: None, backend: None, capabilities }
    }
}

/// `runner sample`: the outcome of one sample of one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Reply {
    Ok(SampleReport),
    Unsupported {
        reason: String,
    },
    Failed {
        reason: String,
        /// Whose failure it is: [`Cause::Peer`] when it only echoes the peer runner of a split
        /// pair stopping or going away; absent (own) otherwise, and in replies from before it.
        #[serde(default, skip_serializing_if = "Cause::is_own")]
        cause: Cause,
    },
    /// In a session: this process cannot take the request, because an earlier request fixed a
    /// setting process-wide that this one needs otherwise (a JVM's TLS system properties); a new
    /// process of the same runner can (docs/runner-protocol.md, "Sessions").
    #[serde(rename = "needs_new_process")]
    NeedsNewProcess {
        reason: String,
    },
}

impl Reply {
    /// A failure of this runner's own (not an echo of its peer's).
    pub fn failed(reason: impl Into<String>) -> Reply {
        Reply::Failed { reason: reason.into(), cause: Cause::Own }
    }
}

/// Why a side failed: on its own, or because its peer runner stopped (and said why in an abort)
/// or went away. When both sides of a split pair fail, the orchestrator reports the side whose
/// failure is its own rather than the other's echo of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cause {
    #[default]
    Own,
    Peer,
}

impl Cause {
    pub fn is_own(&self) -> bool {
        *self == Cause::Own
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleReport {
    pub client_library: String,
    pub server_library: String,
    /// Handshakes done, or 16 KiB records sent, in the measured part of the sample.
    pub iterations: u64,
    pub values: Vec<MetricValue>,
    /// What the sample's handshakes negotiated, as each side saw it; a runner may leave it out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub negotiated: Vec<SideNegotiated>,
    /// The allocator the runner's process allocated with (its malloc forwards to it), with the
    /// version its code reports; absent where the runner cannot switch allocators (a runtime's
    /// own, or libc's without tlsbench's interposer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocator: Option<crate::allocator::AllocatorInUse>,
    /// `sample --threads N` (N > 1): each thread's own pair, in thread order; `iterations` and
    /// `values` are then their sums (the aggregate). Empty for one pair on one thread.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadSample>,
    /// The name of the build the runner is (see [`ListReply::build`]); absent as there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// How fast the CPU ran in the measured loop, where the request gave `--full-speed`: the loop
    /// then counted only its stretches at full speed (crate::speed). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_speed: Option<CpuSpeed>,
}

/// What a measured loop judged at full speed did (`--full-speed`, crate::speed).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuSpeed {
    /// Whether the figures are of the stretches at full speed alone; false: too few were before
    /// the loop's bound, and the figures are of every stretch.
    pub gated: bool,
    /// The CPU's mean speed around the stretches the figures are of, a fraction of full speed.
    pub speed: f64,
    /// Of all the loop's stretches, the share at full speed.
    pub full_speed_share: f64,
    /// How often the loop moved to a faster CPU.
    pub moves: u32,
}

/// What one thread's pair did in a sample of several threads: its iterations and its own
/// clocks' rates, as a one-thread sample reports them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadSample {
    pub iterations: u64,
    pub values: Vec<MetricValue>,
    /// The CPU the thread was pinned to (`sample --threads N --cpus LIST`); absent where it ran
    /// wherever the scheduler put it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u32>,
}

/// The aggregate of threads' values: per side and metric, the sum of their rates (and of their
/// measured seconds), in the order the first thread reports them; for a count per handshake or
/// per MB ([`Metric::is_per_iteration`]), the count over all the threads' iterations.
pub fn sum_threads(threads: &[ThreadSample]) -> Vec<MetricValue> {
    let mut sums: Vec<MetricValue> = Vec::new();
    let weight = |metric: Metric, iterations: u64| if metric.is_per_iteration() { iterations as f64 } else { 1.0 };
    for thread in threads {
        for value in &thread.values {
            let weighted = value.value * weight(value.metric, thread.iterations);
            match sums.iter_mut().find(|s| (s.side, s.metric) == (value.side, value.metric)) {
                Some(sum) => {
                    sum.value += weighted;
                    sum.seconds += value.seconds;
                }
                None => sums.push(MetricValue { value: weighted, ..*value }),
            }
        }
    }
    let iterations: u64 = threads.iter().map(|t| t.iterations).sum();
    for sum in sums.iter_mut().filter(|s| s.metric.is_per_iteration() && iterations > 0) {
        sum.value /= iterations as f64;
    }
    sums
}

impl SampleReport {
    /// What each side negotiated, client's view then server's; None where the runner left it out.
    pub fn negotiated_by_side(&self) -> [Option<&str>; 2] {
        [Side::Client, Side::Server]
            .map(|side| self.negotiated.iter().find(|n| n.side == side).map(|n| n.negotiated.as_str()))
    }
}

/// One side's view of what its handshakes negotiated, e.g. `1.3 aes-256-gcm x25519, ticket received`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideNegotiated {
    pub side: Side,
    pub negotiated: String,
}

/// One number of one side in one sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    pub side: Side,
    pub metric: Metric,
    pub value: f64,
    /// The side's measured time behind the value, in seconds (0 for counts).
    pub seconds: f64,
}

impl MetricValue {
    /// Whether the value can be a measurement: finite, above 0 for a rate (the measured stretch
    /// did work), 0 or more for a count (a side may wait for no other thread).
    pub fn is_plausible(&self) -> bool {
        let least_ok = if self.metric.higher_is_better() { self.value > 0.0 } else { self.value >= 0.0 };
        self.value.is_finite() && least_ok
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Metric {
    // time
    HandshakesPerS,
    /// Megabytes (10^6 bytes) of plaintext per second: sent on the sending side, received on
    /// the receiving side.
    MbPerS,
    /// The same two rates by the side's thread CPU time over the same calls instead of wall
    /// time: it leaves out the time the thread waited while other work had the CPU.
    CpuHandshakesPerS,
    CpuMbPerS,
    /// A garbage-collected runtime's collector time over the sample's measured stretch, in % of
    /// that stretch's wall time: the JVM's collection (pause) time, Go's GC CPU time (with one P,
    /// time taken from the measured goroutine). The process's, so in one process both sides
    /// report the same value.
    GcPercent,
    /// Contended waits: times the side's thread went to sleep inside its library calls (a wait
    /// for a lock another thread held), per handshake or per megabyte of plaintext, from the
    /// kernel's context-switch records (docs/measures.md#contended-waits). The Rust harness's only.
    ContendedWaitsPerHandshake,
    ContendedWaitsPerMb,
    // instructions: in the side's library calls, counted by callgrind
    InstructionsPerHandshake,
    /// Per megabyte (10^6 bytes) of plaintext: sent on the sending side, received on the
    /// receiving side.
    InstructionsPerMb,
    // sync: in the side's library calls, counted by callgrind, per handshake or per megabyte of
    // plaintext (docs/measures.md#sync)
    /// Calls to lock a mutex (pthread_mutex_lock and trylock, pthread_spin_lock and trylock),
    /// and acquisitions of Rust's std::sync::Mutex.
    MutexLocks,
    /// Calls to lock a reader-writer lock for reading (pthread_rwlock_rdlock and its try, timed
    /// and clock variants), and reads of Rust's std::sync::RwLock.
    RwlockReadLocks,
    /// The same for writing.
    RwlockWriteLocks,
    /// Calls to pthread_once: a check that something is initialised, after the first.
    OnceChecks,
    /// Atomic read-modify-write instructions: x86's LOCK-prefixed instructions and XCHG with
    /// memory (callgrind's `Ge` event), those inside the lock functions included.
    AtomicRmw,
    /// futex system calls: a lock or once that had to wait or wake another thread.
    FutexCalls,
    // io: per handshake, or per connection in io-profile. A read that found nothing (would
    // block) is a call too.
    ReadCalls,
    /// Read calls that found nothing (would block; on a socket, EAGAIN), also in `ReadCalls`.
    EmptyReadCalls,
    WriteCalls,
    IoCalls,
    /// TLS records this side wrote, parsed from the record headers.
    RecordsWritten,
    /// Bytes this side wrote, record headers included.
    BytesWritten,
    // heap, handshake kinds: bytes this side held, counted from its own allocations only.
    /// Held by this side's config once built (and, when resuming, its session store).
    HeapConfigBytes,
    /// The most held at once while one connection was created and completed its handshake,
    /// above the config.
    HeapPeakBytes,
    /// Held by one idle connection after its handshake, above the config.
    HeapRetainedBytes,
    /// Held by the connection after it sent and received 16 KiB, above the config.
    HeapAfterTransferBytes,
    AllocationsPerHandshake,
    FreesPerHandshake,
    /// Bytes a garbage-collected runtime (the JVM, Go's) allocated on its managed heap for this
    /// side, per handshake: allocation, not bytes held, and not comparable byte for byte with
    /// what malloc is asked for (a C library under it allocates apart).
    RuntimeAllocBytesPerHandshake,
    /// Objects a garbage-collected runtime allocated for this side, per handshake.
    RuntimeAllocationsPerHandshake,
    // heap, memory-N
    /// Held per connection with N connections open and idle.
    HeapPerConnectionBytes,
    /// The most held at once while the N connections did their handshakes, per connection.
    HeapPeakPerConnectionBytes,
    /// A garbage-collected runtime's (Go's, the JVM's) live heap after a full collection with the N
    /// connections held, less that without them, per connection: the objects the connections keep
    /// reachable, as the runtime sizes them (size classes, object headers), not malloc's requested
    /// bytes, and without what a C library under the runtime allocates apart (netty-tcnative's
    /// BoringSSL).
    GcLiveHeapPerConnectionBytes,
    // rss, memory-N: this side's process (split-process)
    /// The process's peak resident memory.
    RssPeakBytes,
    /// The growth of the process's peak resident memory from before the connections were
    /// opened, per connection.
    RssPerConnectionBytes,
    // net: over a real TCP socket, per completed connection unless a rate. It also reports
    // ReadCalls, WriteCalls, BytesWritten and RecordsWritten per connection, and the server's
    // RssPeakBytes.
    /// Connections completed per second of the side's measured window.
    ConnectionsPerS,
    /// Handshake latency percentiles: the client's from the start of connect, the server's
    /// from accept.
    HandshakeP50Ms,
    HandshakeP90Ms,
    HandshakeP99Ms,
    HandshakeMaxMs,
    /// CPU time of the side's threads per connection (getrusage), user and system apart.
    CpuUserUsPerConnection,
    CpuSystemUsPerConnection,
    /// Every syscall on the connection's socket and of the event loop (poll), per connection.
    Syscalls,
    // net, a server's peak (`run --transport tcp --peak`): at the step of the highest rate.
    /// The server's workers' CPU time over its measured window, in % of the workers' time:
    /// CPU per connection × connections per second / workers.
    WorkersBusyPercent,
    /// The connections each load generator kept in flight (its `load --concurrency`).
    LoadConcurrency,
    // the context kinds (docs/scenarios.md#contexts): the measured side only
    /// Contexts built and dropped per second of the side's clock (files read and parsed each time).
    ContextsPerS,
    /// The same by the side's thread CPU time.
    CpuContextsPerS,
    /// Instructions to build and drop one context.
    InstructionsPerContext,
    /// Held by one live context once built.
    HeapContextBytes,
    /// The most held at once while one context was built.
    HeapContextPeakBytes,
    /// Allocations made building one context.
    AllocationsPerContext,
    /// Bytes a garbage-collected runtime allocated on its managed heap per context built.
    RuntimeAllocBytesPerContext,
    /// The growth of the process's peak resident memory while it built and held
    /// `context::RSS_CONTEXTS` contexts, per context.
    RssContextBytes,
    /// context-client-system: the roots the last context's trust store held, where the library
    /// tells; the orchestrator fails a cell below [`MIN_TRUST_ROOTS`].
    TrustRoots,
}

/// The fewest roots a system trust store may hold: Debian's bundle holds about 140, so fewer
/// means the store (or `SSL_CERT_FILE`) was not what the runner loaded.
pub const MIN_TRUST_ROOTS: f64 = 100.0;

impl Metric {
    /// The metrics a measure reports for each side of a scenario of `kind`.
    pub fn of(measure: Measure, kind: Kind) -> &'static [Metric] {
        use Metric::*;
        const IO: &[Metric] = &[ReadCalls, EmptyReadCalls, WriteCalls, IoCalls, RecordsWritten, BytesWritten];
        match (measure, kind) {
            (Measure::Time, Kind::ContextServer | Kind::ContextClient | Kind::ContextClientSystem) => {
                &[ContextsPerS, CpuContextsPerS, GcPercent, TrustRoots]
            }
            (Measure::Instructions, Kind::ContextServer | Kind::ContextClient | Kind::ContextClientSystem) => {
                &[InstructionsPerContext, TrustRoots]
            }
            (Measure::Heap, Kind::ContextServer | Kind::ContextClient | Kind::ContextClientSystem) => &[
                HeapContextBytes,
                HeapContextPeakBytes,
                AllocationsPerContext,
                RuntimeAllocBytesPerContext,
                TrustRoots,
            ],
            (Measure::Time, Kind::Transfer) => &[MbPerS, CpuMbPerS, GcPercent, ContendedWaitsPerMb],
            (Measure::Time, _) => &[HandshakesPerS, CpuHandshakesPerS, GcPercent, ContendedWaitsPerHandshake],
            (Measure::Instructions, Kind::Transfer) => &[InstructionsPerMb],
            (Measure::Instructions, _) => &[InstructionsPerHandshake],
            (Measure::Sync, _) => &[MutexLocks, RwlockReadLocks, RwlockWriteLocks, OnceChecks, AtomicRmw, FutexCalls],
            (Measure::Io, _) => IO,
            (Measure::Heap, kind) if kind.connections().is_some() => &[
                HeapPerConnectionBytes,
                HeapPeakPerConnectionBytes,
                AllocationsPerHandshake,
                GcLiveHeapPerConnectionBytes,
            ],
            (Measure::Heap, _) => &[
                HeapConfigBytes,
                HeapPeakBytes,
                HeapRetainedBytes,
                HeapAfterTransferBytes,
                AllocationsPerHandshake,
                FreesPerHandshake,
                RuntimeAllocBytesPerHandshake,
                RuntimeAllocationsPerHandshake,
            ],
            (Measure::Rss, Kind::ContextServer | Kind::ContextClient | Kind::ContextClientSystem) => {
                &[RssContextBytes, TrustRoots]
            }
            (Measure::Rss, _) => &[RssPeakBytes, RssPerConnectionBytes],
            (Measure::Net, _) => &[
                ConnectionsPerS,
                HandshakeP50Ms,
                HandshakeP90Ms,
                HandshakeP99Ms,
                HandshakeMaxMs,
                CpuUserUsPerConnection,
                CpuSystemUsPerConnection,
                ReadCalls,
                WriteCalls,
                Syscalls,
                BytesWritten,
                RecordsWritten,
                RssPeakBytes,
                WorkersBusyPercent,
                LoadConcurrency,
            ],
        }
    }

    /// Whether `side` reports this metric under `measure`: over TCP only the server's
    /// resident memory and its workers' use are taken, and only the load's concurrency.
    pub fn reported_by(self, measure: Measure, side: Side) -> bool {
        match (measure, self) {
            (Measure::Net, Metric::RssPeakBytes | Metric::WorkersBusyPercent) => side == Side::Server,
            (Measure::Net, Metric::LoadConcurrency) => side == Side::Client,
            _ => true,
        }
    }

    pub fn name(self) -> &'static str {
        use Metric::*;
        match self {
            HandshakesPerS => "handshakes_per_s",
            MbPerS => "mb_per_s",
            CpuHandshakesPerS => "cpu_handshakes_per_s",
            CpuMbPerS => "cpu_mb_per_s",
            GcPercent => "gc_percent",
            ContendedWaitsPerHandshake => "contended_waits_per_handshake",
            ContendedWaitsPerMb => "contended_waits_per_mb",
            InstructionsPerHandshake => "instructions_per_handshake",
            InstructionsPerMb => "instructions_per_mb",
            MutexLocks => "mutex_locks",
            RwlockReadLocks => "rwlock_read_locks",
            RwlockWriteLocks => "rwlock_write_locks",
            OnceChecks => "once_checks",
            AtomicRmw => "atomic_rmw",
            FutexCalls => "futex_calls",
            ReadCalls => "read_calls",
            EmptyReadCalls => "empty_read_calls",
            WriteCalls => "write_calls",
            IoCalls => "io_calls",
            RecordsWritten => "records_written",
            BytesWritten => "bytes_written",
            HeapConfigBytes => "heap_config_bytes",
            HeapPeakBytes => "heap_peak_bytes",
            HeapRetainedBytes => "heap_retained_bytes",
            HeapAfterTransferBytes => "heap_after_transfer_bytes",
            AllocationsPerHandshake => "allocations_per_handshake",
            FreesPerHandshake => "frees_per_handshake",
            RuntimeAllocBytesPerHandshake => "runtime_alloc_bytes_per_handshake",
            RuntimeAllocationsPerHandshake => "runtime_allocations_per_handshake",
            HeapPerConnectionBytes => "heap_per_connection_bytes",
            HeapPeakPerConnectionBytes => "heap_peak_per_connection_bytes",
            GcLiveHeapPerConnectionBytes => "gc_live_heap_per_connection_bytes",
            RssPeakBytes => "rss_peak_bytes",
            RssPerConnectionBytes => "rss_per_connection_bytes",
            ConnectionsPerS => "connections_per_s",
            HandshakeP50Ms => "handshake_p50_ms",
            HandshakeP90Ms => "handshake_p90_ms",
            HandshakeP99Ms => "handshake_p99_ms",
            HandshakeMaxMs => "handshake_max_ms",
            CpuUserUsPerConnection => "cpu_user_us_per_connection",
            CpuSystemUsPerConnection => "cpu_system_us_per_connection",
            Syscalls => "syscalls",
            WorkersBusyPercent => "workers_busy_percent",
            LoadConcurrency => "load_concurrency",
            ContextsPerS => "contexts_per_s",
            CpuContextsPerS => "cpu_contexts_per_s",
            InstructionsPerContext => "instructions_per_context",
            HeapContextBytes => "heap_context_bytes",
            HeapContextPeakBytes => "heap_context_peak_bytes",
            AllocationsPerContext => "allocations_per_context",
            RuntimeAllocBytesPerContext => "runtime_alloc_bytes_per_context",
            RssContextBytes => "rss_context_bytes",
            TrustRoots => "trust_roots",
        }
    }

    pub fn unit(self) -> &'static str {
        use Metric::*;
        match self {
            HandshakesPerS | CpuHandshakesPerS | ConnectionsPerS | ContextsPerS | CpuContextsPerS => "1/s",
            TrustRoots => "roots",
            MbPerS | CpuMbPerS => "MB/s",
            GcPercent | WorkersBusyPercent => "%",
            LoadConcurrency => "connections",
            ContendedWaitsPerHandshake | ContendedWaitsPerMb => "waits",
            ReadCalls | EmptyReadCalls | WriteCalls | IoCalls | Syscalls | FutexCalls => "calls",
            MutexLocks | RwlockReadLocks | RwlockWriteLocks => "locks",
            OnceChecks => "checks",
            AtomicRmw => "atomics",
            HandshakeP50Ms | HandshakeP90Ms | HandshakeP99Ms | HandshakeMaxMs => "ms",
            CpuUserUsPerConnection | CpuSystemUsPerConnection => "µs",
            RecordsWritten => "records",
            InstructionsPerHandshake | InstructionsPerMb | InstructionsPerContext => "instructions",
            AllocationsPerHandshake | RuntimeAllocationsPerHandshake | AllocationsPerContext => "allocations",
            FreesPerHandshake => "frees",
            BytesWritten
            | RuntimeAllocBytesPerHandshake
            | HeapConfigBytes
            | HeapPeakBytes
            | HeapRetainedBytes
            | HeapAfterTransferBytes
            | HeapPerConnectionBytes
            | HeapPeakPerConnectionBytes
            | GcLiveHeapPerConnectionBytes
            | RssPeakBytes
            | RssPerConnectionBytes
            | HeapContextBytes
            | HeapContextPeakBytes
            | RuntimeAllocBytesPerContext
            | RssContextBytes => "B",
        }
    }

    /// The measure (docs/measures.md) a metric belongs to.
    pub fn measure(self) -> Measure {
        Measure::ALL
            .iter()
            .copied()
            .find(|&m| m.kinds().iter().any(|&k| Metric::of(m, k).contains(&self)))
            .expect("every metric belongs to a measure")
    }

    /// Whether only a garbage-collected runtime's runner (Go's, the JVM's) reports it: the Rust
    /// harness's stacks never do.
    pub fn is_gc_runtimes_own(self) -> bool {
        use Metric::*;
        matches!(
            self,
            GcPercent
                | GcLiveHeapPerConnectionBytes
                | RuntimeAllocBytesPerHandshake
                | RuntimeAllocationsPerHandshake
                | RuntimeAllocBytesPerContext
        )
    }

    /// Whether the value is a count per iteration (per handshake, or per MB of a transfer's
    /// writes) among the time measure's rates: threads' values of it are averaged over their
    /// iterations, not summed.
    pub fn is_per_iteration(self) -> bool {
        matches!(self, Metric::ContendedWaitsPerHandshake | Metric::ContendedWaitsPerMb)
    }

    /// Whether the value is a property of what was measured rather than a cost or a speed, so
    /// that neither way is better: the roots a trust store held.
    pub fn is_property(self) -> bool {
        self == Metric::TrustRoots
    }

    /// Whether a larger value is better: for rates.
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            Metric::HandshakesPerS
                | Metric::MbPerS
                | Metric::CpuHandshakesPerS
                | Metric::CpuMbPerS
                | Metric::ConnectionsPerS
                | Metric::ContextsPerS
                | Metric::CpuContextsPerS
        )
    }
}
