//! The runner: a small binary per link family that measures a sample and prints a
//! [`Reply`](crate::protocol::Reply) as JSON: one sample in a fresh process, or sample after
//! sample in a `session` (docs/runner-protocol.md, "Sessions"). The stack ids are resolved here, once;
//! from there on everything is generic over the chosen pair.
//!
//! # The reply channel
//!
//! A runner's standard output carries its reply and nothing else: one JSON document, then a
//! newline. Libraries print, though (Bertie `println!`s in its certificate code, and a C library
//! may `printf` or `write(1, ...)`), and one stray line would make the reply unreadable. So the
//! first thing a runner does, before any library runs, is to keep the descriptor it was given
//! as stdout for the reply alone and to point descriptor 1 at stderr: whatever a library then
//! prints to "stdout" lands on stderr. Here that is [`take_reply_channel`]: `fcntl(1,
//! F_DUPFD_CLOEXEC)` for the reply, then `dup2(2, 1)`. A runner in another language does the
//! same in its own terms (a JVM keeps `System.out`'s descriptor for the reply and sets
//! `System.setOut(System.err)`; a Go runner dups `os.Stdout` and redirects descriptor 1), so the
//! orchestrator keeps reading the reply from the runner's stdout.
//!
//! Stderr is the runner's diagnostics and whatever its libraries print. The orchestrator keeps
//! its last lines with the reason of a cell that fails, and otherwise ignores it.

// The Err of its functions is the reply itself (Reply, NetReply), made once per command and
// never in a measured loop: boxing it would only move it to the heap.
#![allow(clippy::result_large_err)]

use std::fs::File;
use std::io::Write;
use std::marker::PhantomData;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::driver::{self, SampleSpec};
use crate::io::{IoTrace, TraceReply};
use crate::net::plain::{PlainTcp, PLAIN_STACKS};
use crate::net::{LoadSettings, NetReply, NetReport, ServeSettings, Serving, TlsPeer, TlsServer};
use crate::protocol::{Cause, ListReply, Reply, StackInfo, PROTOCOL_VERSION};
use crate::{Capabilities, Contexts, Error, Measure, Pki, Scenario, Side, Stack};
use std::sync::atomic::{AtomicBool, Ordering};

/// The stacks one runner binary links, by id. Declare one with [`family!`](crate::family).
pub trait Family {
    /// Every stack id of the family.
    const STACKS: &'static [&'static str];

    /// The release of the library the family's stacks are at, in a runner of a stack at another
    /// release than the default one (`ID@RELEASE`, e.g. `openssl@3.5`): its stacks are listed
    /// and asked for as `ID@RELEASE`, never as `ID`. None: the default runners'.
    const RELEASE: Option<&'static str> = None;

    /// Calls `visitor` with the stack called `id`, or returns None if the family lacks it.
    fn with_stack<V: StackVisitor>(id: &str, visitor: V) -> Option<V::Output>;
}

/// Something to do with one stack, whatever its type.
pub trait StackVisitor {
    type Output;
    fn visit<T: Stack>(self, stack: &T) -> Self::Output;
}

/// Something to do with a client stack and a server stack, whatever their types.
pub trait PairVisitor {
    type Output;
    fn visit<C: Stack, S: Stack>(self, client: &C, server: &S) -> Self::Output;
}

/// Declares a runner family: `family!(OpenSslFamily { "openssl" => OpenSsl, ... });`, or for a
/// runner of stacks at another release of their library, `family!(Name at "3.5", { ... })`
/// (see [`Family::RELEASE`]).
#[macro_export]
macro_rules! family {
    ($name:ident { $($id:literal => $stack:expr),+ $(,)? }) => {
        $crate::family!(@declare $name, None, { $($id => $stack),+ });
    };
    ($name:ident at $release:expr, { $($id:literal => $stack:expr),+ $(,)? }) => {
        $crate::family!(@declare $name, Some($release), { $($id => $stack),+ });
    };
    (@declare $name:ident, $release:expr, { $($id:literal => $stack:expr),+ }) => {
        pub struct $name;

        impl $crate::runner::Family for $name {
            const STACKS: &'static [&'static str] = &[$($id),+];
            const RELEASE: Option<&'static str> = $release;

            fn with_stack<V: $crate::runner::StackVisitor>(id: &str, visitor: V) -> Option<V::Output> {
                match $crate::runner::local_id::<Self>(id)? {
                    $($id => Some(visitor.visit(&$stack)),)+
                    _ => None,
                }
            }
        }
    };
}

/// The family's own id of the stack asked for as `id`: `id` itself, or in a family of another
/// release, `ID` of `ID@RELEASE` (None for any other id).
pub fn local_id<F: Family>(id: &str) -> Option<&str> {
    match F::RELEASE {
        None => Some(id),
        Some(release) => id.strip_suffix(release)?.strip_suffix('@'),
    }
}

/// The family's stacks as they are listed, for messages.
fn listed_ids<F: Family>() -> String {
    F::STACKS.iter().map(|id| listed_id::<F>(id)).collect::<Vec<_>>().join(", ")
}

/// The id a family's stack is listed and asked for under: `ID`, or `ID@RELEASE`.
fn listed_id<F: Family>(id: &str) -> String {
    match F::RELEASE {
        None => id.to_string(),
        Some(release) => format!("{id}@{release}"),
    }
}

/// Calls `visitor` with the client stack and the server stack named, statically typed.
pub fn with_pair<F: Family, V: PairVisitor>(client: &str, server: &str, visitor: V) -> Result<V::Output, String> {
    let unknown = |id: &str| format!("stack `{id}` is not in this runner (it has: {})", listed_ids::<F>());
    F::with_stack(client, ThenServer::<F, V> { server, visitor, family: PhantomData })
        .ok_or_else(|| unknown(client))?
        .ok_or_else(|| unknown(server))
}

struct ThenServer<'a, F, V> {
    server: &'a str,
    visitor: V,
    family: PhantomData<F>,
}

impl<F: Family, V: PairVisitor> StackVisitor for ThenServer<'_, F, V> {
    type Output = Option<V::Output>;
    fn visit<C: Stack>(self, client: &C) -> Self::Output {
        F::with_stack(self.server, WithClient { client, visitor: self.visitor })
    }
}

struct WithClient<'a, C, V> {
    client: &'a C,
    visitor: V,
}

impl<C: Stack, V: PairVisitor> StackVisitor for WithClient<'_, C, V> {
    type Output = V::Output;
    fn visit<S: Stack>(self, server: &S) -> V::Output {
        self.visitor.visit(self.client, server)
    }
}

#[derive(Parser)]
#[command(about = "tlsbench runner: measures one sample in this process and prints it as JSON")]
enum Command {
    /// Lists this runner's stacks with their library versions and capabilities.
    List,
    /// Measures one sample of one scenario with one client stack and one server stack.
    Sample(SampleArgs),
    /// Measures one side of a split-process pair; the peer runner, reached through the socket
    /// at `--peer-fd`, runs the other side.
    Side(SideArgs),
    /// Records every transport call of both sides in one connection of a scenario the io
    /// measure applies to, and prints the trace.
    Trace(TraceArgs),
    /// Serves connections of one stack (or plain TCP) on a TCP socket until SIGINT or SIGTERM:
    /// replies with where it listens, then, once stopped, with what it measured.
    Serve(ServeArgs),
    /// Runs connections of one client stack (or plain TCP) against a server, bounded in count
    /// and time, and replies with what it measured.
    Load(LoadArgs),
    /// Takes `sample` and `side` requests from stdin, one per line (the command's words,
    /// tab-separated), and replies to each with one line, until the end of stdin.
    Session,
    /// In this fresh process: each side's first context, first handshake, and the warm ones
    /// after it (docs/runner-protocol.md#cold).
    Cold(crate::cold::ColdArgs),
}

/// What both ends of the network mode take.
#[derive(clap::Args)]
struct NetArgs {
    /// A stack of this runner, or `tcp` / `tcp-buffered` (plain TCP).
    #[arg(long)]
    stack: String,
    /// The handshake of each connection (a handshake kind); not for plain TCP.
    #[arg(long)]
    scenario: Option<Scenario>,
    /// A connection whose peer sends nothing this long fails, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    io_timeout_ms: u64,
    /// Where the certificates are cached.
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

#[derive(clap::Args)]
struct ServeArgs {
    #[command(flatten)]
    net: NetArgs,
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: std::net::SocketAddr,
    /// Worker threads [default: one per core].
    #[arg(long)]
    workers: Option<u32>,
    /// The response to each request: bytes, or COUNTxBYTES application writes.
    #[arg(long, default_value = "0")]
    response: crate::net::Page,
}

#[derive(clap::Args)]
struct LoadArgs {
    #[command(flatten)]
    net: NetArgs,
    #[arg(long)]
    connect: std::net::SocketAddr,
    #[arg(long)]
    connections: Option<u64>,
    /// Seconds.
    #[arg(long)]
    duration: Option<f64>,
    #[arg(long, default_value_t = 1)]
    concurrency: u32,
    /// The response the server sends, to check each one (length and digest).
    #[arg(long)]
    response: Option<crate::net::Page>,
}

#[derive(clap::Args)]
struct TraceArgs {
    #[arg(long)]
    client: String,
    #[arg(long)]
    server: String,
    #[arg(long)]
    scenario: Scenario,
    /// Where the certificates are cached.
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

#[derive(clap::Args)]
struct SideArgs {
    #[arg(long, value_parser = parse_side)]
    role: Side,
    #[arg(long)]
    stack: String,
    /// The stack on the other side, in the peer runner: checked against this stack's limits on
    /// its peers ([`crate::PeerLimit`]).
    #[arg(long)]
    peer_stack: String,
    /// An open socket to the peer runner, inherited from the orchestrator.
    #[arg(long)]
    peer_fd: Option<i32>,
    /// Where to meet the peer runner: the server listens on this Unix socket path, the client
    /// connects to it (in a session, whose stdin carries the requests).
    #[arg(long)]
    peer_socket: Option<PathBuf>,
    #[command(flatten)]
    settings: SampleSettings,
}

fn parse_side(text: &str) -> Result<Side, String> {
    match text {
        "client" => Ok(Side::Client),
        "server" => Ok(Side::Server),
        _ => Err(format!("unknown side `{text}` (valid: client, server)")),
    }
}

#[derive(clap::Args)]
struct SampleArgs {
    #[arg(long)]
    client: String,
    #[arg(long)]
    server: String,
    /// Pairs measured side by side, one per thread (the time measure only); the reply carries
    /// each thread's rates and their sums. `--threads 1` is one pair on a thread of its own, as
    /// each of N is; without it, the pair runs on the main thread.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// What those threads share: `own` (each builds its own configs) or `shared` (one client
    /// config and one server config for all, as a multi-threaded server shares its context).
    #[arg(long, default_value_t = Contexts::Own)]
    contexts: Contexts,
    /// The CPUs those threads run on, one each: thread i is pinned to the i-th of the list (round
    /// robin beyond its end), e.g. `0,1` or `0-3`. Without it they run wherever the scheduler puts them.
    #[arg(long, requires = "threads")]
    cpus: Option<crate::pin::CpuList>,
    #[command(flatten)]
    settings: SampleSettings,
}

/// What a sample measures and for how long, in-process or one side of a split pair.
#[derive(clap::Args)]
struct SampleSettings {
    #[arg(long)]
    scenario: Scenario,
    #[arg(long, default_value_t = Measure::Time)]
    measure: Measure,
    /// Each side's measured time must reach this, in milliseconds.
    #[arg(long, default_value_t = 100)]
    min_time_ms: u64,
    #[arg(long, default_value_t = 50)]
    warmup_ms: u64,
    /// Whether to report the CPU time of the timed calls too (from the kernel's context-switch
    /// records, see cpu_time.rs; no system call around the calls).
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    cpu_clock: String,
    /// The measures counted under callgrind (instructions, sync): the side whose library calls
    /// callgrind collects (in a split-process pair, always this process's side).
    #[arg(long, value_parser = parse_side)]
    count_side: Option<Side>,
    /// The measures counted under callgrind: measured iterations (handshakes, or 16 KiB writes
    /// in a transfer), a fixed number so that every sample does the same work.
    #[arg(long, default_value_t = 20)]
    iterations: u64,
    /// The measures counted under callgrind: unmeasured iterations first.
    #[arg(long, default_value_t = 2)]
    warmup_iterations: u64,
    /// Where the certificates are cached.
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

impl SampleSettings {
    /// The scenario's certificates and the sample's length; `own_side` is the side of a
    /// split-process runner.
    fn load(&self, own_side: Option<Side>) -> Result<(Pki, SampleSpec), Reply> {
        let measure = self.measure;
        let spec = match measure {
            Measure::Instructions | Measure::Sync => SampleSpec::Counted {
                warmup: self.warmup_iterations,
                iterations: self.iterations,
                collect: own_side.or(self.count_side).or(self.scenario.kind.context_side()).ok_or_else(|| {
                    Reply::failed(format!(
                        "the {measure} measure counts one side per process: name it with --count-side client|server"
                    ))
                })?,
                measure,
            },
            _ => SampleSpec::timed(Duration::from_millis(self.warmup_ms), Duration::from_millis(self.min_time_ms)),
        };
        if let SampleSpec::Counted { .. } = spec {
            // Off valgrind nothing would be counted, and the orchestrator would read no count.
            if valgrind_requests::valgrind::running_on_valgrind() == 0 {
                return Err(Reply::failed(format!(
                    "the {measure} measure runs under valgrind: \
                     valgrind --tool=callgrind --collect-atstart=no RUNNER ..."
                )));
            }
        }
        if measure == Measure::Sync {
            become_multithreaded();
        }
        let data_dir = self.data_dir.clone().unwrap_or_else(crate::pki::default_data_dir);
        let pki = Pki::load_or_generate(&data_dir, &[self.scenario.key]).map_err(Reply::failed)?;
        // Under callgrind the rates are not taken, so neither is the CPU clock.
        crate::cpu_time::set_enabled(self.cpu_clock == "on" && spec.measure() == Measure::Time);
        Ok((pki, spec))
    }
}

/// Starts a thread and joins it. A server's process has several threads, and from its first
/// one glibc takes its multi-threaded paths for good: a mutex's lock and unlock, and malloc's
/// arena locks, then use atomic instructions that a single-threaded process skips. The sync
/// measure counts what a library does in such a process.
fn become_multithreaded() {
    std::thread::spawn(|| {}).join().expect("an empty thread does not panic");
}

/// The reply for what a measurement returned, with the allocator the process ran on and the
/// build it is.
fn reply(outcome: Result<crate::protocol::SampleReport, Error>) -> Reply {
    match outcome {
        Ok(report) => Reply::Ok(crate::protocol::SampleReport {
            allocator: crate::allocator::in_use(),
            build: Some(crate::build::this().name),
            ..report
        }),
        Err(Error::Unsupported(reason)) => Reply::Unsupported { reason },
        Err(Error::Peer(reason)) => Reply::Failed { reason, cause: Cause::Peer },
        Err(error) => Reply::failed(error.to_string()),
    }
}

/// The whole of a runner binary's `main`.
pub fn main<F: Family>() -> ExitCode {
    // The process's start, for `cold`: before anything else runs.
    let started_ns = crate::cpu_time::monotonic_ns();
    // First of all: nothing a library prints may reach the reply channel.
    let mut replies = match take_reply_channel() {
        Ok(channel) => channel,
        Err(e) => {
            eprintln!("tlsbench runner: setting up the reply channel: {e}");
            return ExitCode::FAILURE;
        }
    };
    let command = Command::parse();
    // A process whose allocator is not the one asked for measures nothing (`list` still answers).
    if let (Err(reason), false) = (crate::allocator::check_requested(), matches!(command, Command::List)) {
        let reply = Reply::failed(reason);
        let json = serde_json::to_string(&reply).expect("serializable");
        let mut reply_once = || writeln!(replies, "{json}").and_then(|()| replies.flush());
        // A session gets the reason for each of its requests, as each comes.
        let written = match command {
            Command::Session => std::io::stdin().lines().map_while(Result::ok).try_for_each(|_| reply_once()),
            _ => reply_once(),
        };
        return match written {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    let reply = match command {
        Command::List => {
            let stacks: Vec<StackInfo> = F::STACKS
                .iter()
                .map(|id| listed_id::<F>(id))
                .filter_map(|id| Some(StackInfo { id: id.clone(), ..F::with_stack(&id, Describe)? }))
                .collect();
            serde_json::to_string(&ListReply {
                protocol_version: PROTOCOL_VERSION,
                stacks,
                build: Some(crate::build::this()),
            })
        }
        Command::Sample(args) => serde_json::to_string(&sample::<F>(&args)),
        Command::Side(args) => serde_json::to_string(&side::<F>(&args)),
        Command::Trace(args) => serde_json::to_string(&trace::<F>(&args)),
        Command::Serve(args) => serde_json::to_string(&serve::<F>(&args, &mut replies)),
        Command::Load(args) => serde_json::to_string(&load::<F>(&args)),
        Command::Session => return session::<F>(std::io::stdin().lock(), &mut replies),
        Command::Cold(args) => serde_json::to_string(&crate::cold::run::<F>(&args, started_ns)),
    };
    match reply.map(|json| writeln!(replies, "{json}").and_then(|()| replies.flush())) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("tlsbench runner: writing the reply: {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("tlsbench runner: encoding the reply: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The reply channel (see the module docs): the descriptor this process was given as stdout,
/// kept for the reply alone, while descriptor 1 becomes a copy of stderr. Called before
/// anything else runs, so nothing has been written to stdout yet.
pub fn take_reply_channel() -> std::io::Result<File> {
    // SAFETY: plain descriptor calls. F_DUPFD_CLOEXEC returns a new descriptor (3 or above, so
    // never 0, 1 or 2) that nothing else in this process knows; we take sole ownership of it.
    let reply = unsafe {
        let fd = libc::fcntl(libc::STDOUT_FILENO, libc::F_DUPFD_CLOEXEC, 3);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        OwnedFd::from_raw_fd(fd)
    };
    // SAFETY: dup2 on the standard descriptors, which stay open for the life of the process;
    // Rust's stdout (nothing buffered yet) and C's stdio keep writing to descriptor 1, now stderr.
    if unsafe { libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(File::from(reply))
}

fn sample<F: Family>(args: &SampleArgs) -> Reply {
    let (pki, spec) = match args.settings.load(None) {
        Ok(loaded) => loaded,
        Err(reply) => return reply,
    };
    let measure = MeasurePair {
        measure: args.settings.measure,
        scenario: &args.settings.scenario,
        pki: &pki,
        spec,
        threads: args.threads.map(|n| n as usize),
        contexts: args.contexts,
        cpus: args.cpus.clone().map(|list| list.0).unwrap_or_default(),
        data_dir: args.settings.data_dir.clone().unwrap_or_else(crate::pki::default_data_dir),
    };
    match with_pair::<F, _>(&args.client, &args.server, measure) {
        Ok(outcome) => reply(outcome),
        Err(reason) => Reply::failed(reason),
    }
}

/// Set by SIGINT or SIGTERM: the server stops accepting and finishes what is in flight.
static STOP_SERVING: AtomicBool = AtomicBool::new(false);

extern "C" fn stop_serving(_: libc::c_int) {
    STOP_SERVING.store(true, Ordering::SeqCst);
}

/// What one end of the network mode runs: a plain TCP baseline, or a TLS stack of this runner
/// with its scenario and certificates.
enum NetTarget {
    Plain(PlainTcp),
    Tls(Scenario, Pki),
}

/// The network mode's target, checked.
fn net_setup(args: &NetArgs) -> Result<NetTarget, NetReply> {
    match (PlainTcp::from_id(&args.stack), &args.scenario) {
        (Some(_), Some(scenario)) => Err(NetReply::Unsupported {
            reason: format!("{} is plain TCP: it has no TLS handshake, so no scenario ({scenario})", args.stack),
        }),
        (Some(plain), None) => Ok(NetTarget::Plain(plain)),
        (None, None) => Err(NetReply::Failed {
            reason: format!("{} is a TLS stack: name its handshake with --scenario", args.stack),
        }),
        (None, Some(scenario)) => {
            crate::net::check_kind(scenario).map_err(|e| NetReply::Unsupported { reason: e.to_string() })?;
            let data_dir = args.data_dir.clone().unwrap_or_else(crate::pki::default_data_dir);
            let pki =
                Pki::load_or_generate(&data_dir, &[scenario.key]).map_err(|reason| NetReply::Failed { reason })?;
            Ok(NetTarget::Tls(*scenario, pki))
        }
    }
}

/// Runs `visitor` with the TLS stack called `id`.
fn with_net_stack<F: Family, V: StackVisitor<Output = Result<NetReport, NetReply>>>(
    id: &str,
    visitor: V,
) -> Result<NetReport, NetReply> {
    F::with_stack(id, visitor).unwrap_or_else(|| {
        Err(NetReply::Failed {
            reason: format!(
                "stack `{id}` is not in this runner (it has: {}, {})",
                listed_ids::<F>(),
                PLAIN_STACKS.join(", ")
            ),
        })
    })
}

/// The reply for what one end measured, named by its scenario.
fn net_reply(outcome: Result<NetReport, NetReply>, scenario: Option<Scenario>) -> NetReply {
    match outcome {
        Ok(mut report) => {
            report.scenario = scenario.map(|s| s.name());
            report.build = Some(crate::build::this().name);
            NetReply::Ok(report)
        }
        Err(reply) => reply,
    }
}

fn serve<F: Family>(args: &ServeArgs, replies: &mut File) -> NetReply {
    let target = match net_setup(&args.net) {
        Ok(setup) => setup,
        Err(reply) => return reply,
    };
    let listener = match std::net::TcpListener::bind(args.listen) {
        Ok(listener) => listener,
        Err(e) => return NetReply::Failed { reason: format!("listening on {}: {e}", args.listen) },
    };
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(signal, stop_serving as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
    let settings = ServeSettings {
        workers: args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32)),
        page: args.response,
        io_timeout: Duration::from_millis(args.net.io_timeout_ms),
    };
    let listening = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let announce = |replies: &mut File, stack: String, library: String| -> Result<(), NetReply> {
        let serving = Serving { listening: listening.clone(), stack, library, workers: settings.workers };
        let line = serde_json::to_string(&serving).expect("serializable");
        writeln!(replies, "{line}")
            .and_then(|()| replies.flush())
            .map_err(|e| NetReply::Failed { reason: format!("writing the reply: {e}") })
    };
    match target {
        NetTarget::Plain(plain) => {
            let outcome = announce(replies, plain.id().into(), plain.library());
            net_reply(outcome.map(|()| crate::net::serve(|| plain, listener, &settings, &STOP_SERVING)), None)
        }
        NetTarget::Tls(scenario, pki) => {
            let announce = &mut |stack, library| announce(replies, stack, library);
            let visitor = ServeStack { scenario: &scenario, pki: &pki, listener, settings: &settings, announce };
            net_reply(with_net_stack::<F, _>(&args.net.stack, visitor), Some(scenario))
        }
    }
}

struct ServeStack<'a> {
    scenario: &'a Scenario,
    pki: &'a Pki,
    listener: std::net::TcpListener,
    settings: &'a ServeSettings,
    announce: &'a mut dyn FnMut(String, String) -> Result<(), NetReply>,
}

impl StackVisitor for ServeStack<'_> {
    type Output = Result<NetReport, NetReply>;
    fn visit<T: Stack>(self, stack: &T) -> Self::Output {
        let unsupported = |e: Error| NetReply::Unsupported { reason: e.to_string() };
        stack.capabilities().check(stack.id(), self.scenario).map_err(unsupported)?;
        let config = stack
            .server_config(self.scenario, self.pki)
            .map_err(|e| NetReply::Failed { reason: format!("server config: {e}") })?;
        (self.announce)(stack.id().to_string(), stack.library())?;
        let make_peer = || TlsServer(TlsPeer::new(stack, &config, Side::Server, self.scenario));
        Ok(crate::net::serve(make_peer, self.listener, self.settings, &STOP_SERVING))
    }
}

fn load<F: Family>(args: &LoadArgs) -> NetReply {
    let target = match net_setup(&args.net) {
        Ok(setup) => setup,
        Err(reply) => return reply,
    };
    let settings = LoadSettings {
        connect: args.connect,
        connections: args.connections,
        duration: args.duration.map(Duration::from_secs_f64),
        concurrency: args.concurrency,
        page: args.response,
        io_timeout: Duration::from_millis(args.net.io_timeout_ms),
    };
    match target {
        NetTarget::Plain(plain) => net_reply(Ok(crate::net::load(&plain, &settings)), None),
        NetTarget::Tls(scenario, pki) => {
            let visitor = LoadStack { scenario: &scenario, pki: &pki, settings: &settings };
            net_reply(with_net_stack::<F, _>(&args.net.stack, visitor), Some(scenario))
        }
    }
}

struct LoadStack<'a> {
    scenario: &'a Scenario,
    pki: &'a Pki,
    settings: &'a LoadSettings,
}

impl StackVisitor for LoadStack<'_> {
    type Output = Result<NetReport, NetReply>;
    fn visit<T: Stack>(self, stack: &T) -> Self::Output {
        let unsupported = |e: Error| NetReply::Unsupported { reason: e.to_string() };
        stack.capabilities().check(stack.id(), self.scenario).map_err(unsupported)?;
        // One session to resume for each connection in flight.
        let in_flight = self.settings.concurrency.max(1) as usize;
        let config = stack
            .client_config_for(self.scenario, self.pki, in_flight)
            .map_err(|e| NetReply::Failed { reason: format!("client config: {e}") })?;
        Ok(crate::net::load(&TlsPeer::new(stack, &config, Side::Client, self.scenario), self.settings))
    }
}

fn trace<F: Family>(args: &TraceArgs) -> TraceReply {
    let data_dir = args.data_dir.clone().unwrap_or_else(crate::pki::default_data_dir);
    let pki = match Pki::load_or_generate(&data_dir, &[args.scenario.key]) {
        Ok(pki) => pki,
        Err(reason) => return TraceReply::Failed { reason },
    };
    match with_pair::<F, _>(&args.client, &args.server, TracePair { scenario: &args.scenario, pki: &pki }) {
        Ok(Ok(trace)) => TraceReply::Ok(IoTrace { build: Some(crate::build::this().name), ..trace }),
        Ok(Err(Error::Unsupported(reason))) => TraceReply::Unsupported { reason },
        Ok(Err(error)) => TraceReply::Failed { reason: error.to_string() },
        Err(reason) => TraceReply::Failed { reason },
    }
}

struct TracePair<'a> {
    scenario: &'a Scenario,
    pki: &'a Pki,
}

impl PairVisitor for TracePair<'_> {
    type Output = Result<IoTrace, Error>;
    fn visit<C: Stack, S: Stack>(self, client: &C, server: &S) -> Self::Output {
        check_pair(client, server, self.scenario)?;
        crate::io::trace(client, server, self.scenario, self.pki)
    }
}

/// Answers the requests of a session (docs/runner-protocol.md, "Sessions") until the end of
/// `requests`: each line the tab-separated words of a `sample` or `side` command, each reply one
/// line. A request that fails or cannot be read gets a `failed` reply; the session goes on.
pub fn session<F: Family>(requests: impl std::io::BufRead, replies: &mut impl Write) -> ExitCode {
    for line in requests.lines() {
        let reply = match line {
            Ok(line) => session_request::<F>(&line),
            Err(e) => Reply::failed(format!("reading the request: {e}")),
        };
        let json = serde_json::to_string(&reply).expect("a reply serializes");
        if let Err(e) = writeln!(replies, "{json}").and_then(|()| replies.flush()) {
            eprintln!("tlsbench runner: writing the reply: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn session_request<F: Family>(line: &str) -> Reply {
    let words: Vec<&str> = line.split('\t').collect();
    if !matches!(words[0], "sample" | "side") {
        return Reply::failed(format!("a session takes sample and side requests (got `{}`)", words[0]));
    }
    match Command::try_parse_from(std::iter::once("runner").chain(words)) {
        Ok(Command::Sample(args)) => sample::<F>(&args),
        Ok(Command::Side(args)) if args.peer_fd.is_some() => {
            Reply::failed("in a session the peer is reached with --peer-socket PATH, not --peer-fd")
        }
        Ok(Command::Side(args)) => side::<F>(&args),
        Ok(_) => unreachable!("only sample and side requests are parsed"),
        // clap's message, without its usage lines.
        Err(e) => Reply::failed(e.to_string().lines().next().unwrap_or_default().trim_start_matches("error: ")),
    }
}

/// How long a side waits for its peer to meet it at `--peer-socket`.
const PEER_WAIT: Duration = Duration::from_secs(30);

/// The socket to the peer runner: the inherited `--peer-fd`, or the connection made at
/// `--peer-socket` (the server listens, the client connects).
fn peer_of(args: &SideArgs) -> Result<UnixStream, String> {
    match (args.peer_fd, &args.peer_socket) {
        // SAFETY: the orchestrator starts this runner with `--peer-fd` naming an open socket that
        // nothing else in this process uses; this takes sole ownership of it.
        (Some(fd), None) => Ok(unsafe { UnixStream::from_raw_fd(fd) }),
        (None, Some(path)) => meet_peer(path, args.role, PEER_WAIT),
        _ => Err("side: give exactly one of --peer-fd and --peer-socket".into()),
    }
}

/// Meets the peer at the Unix socket `path`: the server listens and accepts one connection,
/// then removes the path; the client connects, retrying while the path is not there yet or
/// refuses. Each waits at most `wait`.
fn meet_peer(path: &std::path::Path, role: Side, wait: Duration) -> Result<UnixStream, String> {
    let deadline = std::time::Instant::now() + wait;
    let shown = path.display();
    match role {
        Side::Server => {
            let _ = std::fs::remove_file(path);
            let listener = std::os::unix::net::UnixListener::bind(path)
                .map_err(|e| format!("listening for the peer at {shown}: {e}"))?;
            listener.set_nonblocking(true).map_err(|e| format!("listening for the peer at {shown}: {e}"))?;
            let accepted = loop {
                match listener.accept() {
                    Ok((stream, _)) => break Ok(stream),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && std::time::Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(1))
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        break Err(format!("no peer connected to {shown} within {} s", wait.as_secs()))
                    }
                    Err(e) => break Err(format!("accepting the peer at {shown}: {e}")),
                }
            };
            let _ = std::fs::remove_file(path);
            let stream = accepted?;
            stream.set_nonblocking(false).map_err(|e| format!("the peer's socket: {e}"))?;
            Ok(stream)
        }
        Side::Client => loop {
            match UnixStream::connect(path) {
                Ok(stream) => return Ok(stream),
                Err(e)
                    if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused)
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(e) => return Err(format!("cannot connect to the peer at {shown}: {e}")),
            }
        },
    }
}

fn side<F: Family>(args: &SideArgs) -> Reply {
    let peer = match peer_of(args) {
        Ok(peer) => peer,
        Err(reason) => return Reply::failed(reason),
    };
    let (pki, spec) = match args.settings.load(Some(args.role)) {
        Ok(loaded) => loaded,
        Err(reply) => return reply,
    };
    let measure = MeasureSide {
        side: args.role,
        peer_stack: &args.peer_stack,
        measure: args.settings.measure,
        scenario: &args.settings.scenario,
        pki: &pki,
        spec,
        peer,
    };
    match F::with_stack(&args.stack, measure) {
        Some(outcome) => reply(outcome),
        None => Reply::failed(format!("stack `{}` is not in this runner (it has: {})", args.stack, listed_ids::<F>())),
    }
}

struct MeasureSide<'a> {
    side: Side,
    peer_stack: &'a str,
    measure: Measure,
    scenario: &'a Scenario,
    pki: &'a Pki,
    spec: SampleSpec,
    peer: UnixStream,
}

impl StackVisitor for MeasureSide<'_> {
    type Output = Result<crate::protocol::SampleReport, Error>;
    fn visit<T: Stack>(self, stack: &T) -> Self::Output {
        // As `check_pair` does for its half: the stack's own capabilities first, then its limits
        // on its peers. The peer's runner checks the peer's.
        let capabilities = stack.capabilities();
        capabilities.check(stack.id(), self.scenario)?;
        capabilities.check_peer(self.side, self.peer_stack)?;
        if self.scenario.kind.context_side().is_some() {
            return Err(Error::Unsupported("context scenarios are measured in one process".into()));
        }
        match self.measure {
            Measure::Time | Measure::Instructions | Measure::Sync => {
                crate::split::sample_side(stack, self.side, self.scenario, self.pki, &self.spec, self.peer)
            }
            Measure::Rss => crate::split::memory_side(stack, self.side, self.scenario, self.pki, self.peer),
            other => Err(Error::Unsupported(format!("measure {other} is taken in one process, not split-process"))),
        }
    }
}

/// Whether the pair can do the scenario, with the limits each stack declares on its peers; the
/// drivers check each stack's own capabilities again.
fn check_pair<C: Stack, S: Stack>(client: &C, server: &S, scenario: &Scenario) -> Result<(), Error> {
    crate::check_pair((client.id(), &client.capabilities()), (server.id(), &server.capabilities()), scenario)
}

struct Describe;

impl StackVisitor for Describe {
    type Output = StackInfo;
    fn visit<T: Stack>(self, stack: &T) -> StackInfo {
        // The allocators are the runner's: its malloc can switch when it is tlsbench's.
        let allocators = match crate::allocator::switchable() {
            true => crate::allocator::Allocator::ALL.to_vec(),
            false => Vec::new(),
        };
        // Every stack of a Rust runner can run as several pairs on threads, with their own
        // configs or sharing one of each, pinned one per CPU
        // (`sample --threads N --contexts own|shared --cpus LIST`).
        StackInfo {
            id: stack.id().to_string(),
            library: stack.library(),
            tls_library: Some(stack.tls_library()),
            backend: Some(stack.backend()),
            capabilities: Capabilities {
                allocators,
                threads: true,
                shared_contexts: true,
                pin_threads: true,
                ..stack.capabilities()
            },
        }
    }
}

struct MeasurePair<'a> {
    measure: Measure,
    scenario: &'a Scenario,
    pki: &'a Pki,
    spec: SampleSpec,
    threads: Option<usize>,
    contexts: Contexts,
    cpus: Vec<u32>,
    data_dir: PathBuf,
}

impl PairVisitor for MeasurePair<'_> {
    type Output = Result<crate::protocol::SampleReport, Error>;
    fn visit<C: Stack, S: Stack>(self, client: &C, server: &S) -> Self::Output {
        check_pair(client, server, self.scenario)?;
        driver::check_threads(self.measure, self.threads.unwrap_or(1))?;
        if self.scenario.kind.context_side().is_some() {
            return crate::context::sample(client, server, self.scenario, &self.data_dir, &self.spec, self.measure);
        }
        match (self.measure, self.threads) {
            // On threads of their own, one too: glibc's malloc gives the main thread's heap back
            // to the system (and not the heaps of other threads), which a library that allocates
            // over 128 KiB per connection pays for at every handshake (wolfSSL): one thread and N
            // are measured alike.
            (Measure::Time, Some(threads)) => driver::sample_threads(
                client,
                server,
                self.scenario,
                self.pki,
                &self.spec,
                threads,
                self.contexts,
                &self.cpus,
            ),
            (Measure::Time | Measure::Instructions | Measure::Sync, _) => {
                driver::sample(client, server, self.scenario, self.pki, &self.spec)
            }
            (Measure::Io, _) => crate::io::sample(client, server, self.scenario, self.pki),
            (Measure::Heap, _) => crate::memory::sample(client, server, self.scenario, self.pki),
            (Measure::Rss, _) => {
                Err(Error::Unsupported("measure rss is taken one process per side (split-process)".into()))
            }
            (Measure::Net, _) => {
                Err(Error::Unsupported("measure net is taken over TCP, by the commands serve and load".into()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A family at another release; its stacks are never visited here.
    struct AtRelease;

    impl Family for AtRelease {
        const STACKS: &'static [&'static str] = &["openssl", "rustls-ring"];
        const RELEASE: Option<&'static str> = Some("3.5");

        fn with_stack<V: StackVisitor>(_: &str, _: V) -> Option<V::Output> {
            None
        }
    }

    struct Default;

    impl Family for Default {
        const STACKS: &'static [&'static str] = &["openssl"];

        fn with_stack<V: StackVisitor>(_: &str, _: V) -> Option<V::Output> {
            None
        }
    }

    #[test]
    fn a_family_at_another_release_answers_to_its_ids_with_the_release_only() {
        assert_eq!(local_id::<AtRelease>("openssl@3.5"), Some("openssl"));
        assert_eq!(local_id::<AtRelease>("openssl"), None);
        assert_eq!(local_id::<AtRelease>("openssl@3.6"), None);
        assert_eq!(local_id::<AtRelease>("openssl@13.5"), None);
        assert_eq!(listed_ids::<AtRelease>(), "openssl@3.5, rustls-ring@3.5");
        assert_eq!(local_id::<Default>("openssl"), Some("openssl"));
        assert_eq!(listed_ids::<Default>(), "openssl");
    }

    #[test]
    fn a_failure_that_echoes_the_peer_says_so_and_one_of_its_own_does_not() {
        let json = |error: Error| serde_json::to_string(&reply(Err(error))).unwrap();
        assert_eq!(
            json(Error::Peer("the peer stopped: gate failed: x".into())),
            r#"{"status":"failed","reason":"the peer stopped: gate failed: x","cause":"peer"}"#
        );
        assert_eq!(json(Error::Gate("x".into())), r#"{"status":"failed","reason":"gate failed: x"}"#);
        // A reply from before the field, or one that names its own cause, parses as its own.
        for own in [r#"{"status":"failed","reason":"x"}"#, r#"{"status":"failed","reason":"x","cause":"own"}"#] {
            assert_eq!(serde_json::from_str::<Reply>(own).unwrap(), Reply::failed("x"));
        }
    }
}
