//! The runner's command line: its commands and their options, and the sample settings they
//! share, read into what a sample measures.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::driver::SampleSpec;
use crate::protocol::Reply;
use crate::{Contexts, Measure, Pki, Scenario, Side};

#[derive(Parser)]
#[command(about = "tlsbench runner: measures one sample in this process and prints it as JSON")]
pub(super) enum Command {
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
pub(super) struct NetArgs {
    /// A stack of this runner, or `tcp` / `tcp-buffered` (plain TCP).
    #[arg(long)]
    pub(super) stack: String,
    /// The handshake of each connection (a handshake kind); not for plain TCP.
    #[arg(long)]
    pub(super) scenario: Option<Scenario>,
    /// A connection whose peer sends nothing this long fails, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub(super) io_timeout_ms: u64,
    /// Where the certificates are cached.
    #[arg(long)]
    pub(super) data_dir: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(super) struct ServeArgs {
    #[command(flatten)]
    pub(super) net: NetArgs,
    #[arg(long, default_value = "127.0.0.1:0")]
    pub(super) listen: std::net::SocketAddr,
    /// Worker threads [default: one per core].
    #[arg(long)]
    pub(super) workers: Option<u32>,
    /// The response to each request: bytes, or COUNTxBYTES application writes.
    #[arg(long, default_value = "0")]
    pub(super) response: crate::net::Page,
}

#[derive(clap::Args)]
pub(super) struct LoadArgs {
    #[command(flatten)]
    pub(super) net: NetArgs,
    #[arg(long)]
    pub(super) connect: std::net::SocketAddr,
    #[arg(long)]
    pub(super) connections: Option<u64>,
    /// Seconds.
    #[arg(long)]
    pub(super) duration: Option<f64>,
    #[arg(long, default_value_t = 1)]
    pub(super) concurrency: u32,
    /// The response the server sends, to check each one (length and digest).
    #[arg(long)]
    pub(super) response: Option<crate::net::Page>,
}

#[derive(clap::Args)]
pub(super) struct TraceArgs {
    #[arg(long)]
    pub(super) client: String,
    #[arg(long)]
    pub(super) server: String,
    #[arg(long)]
    pub(super) scenario: Scenario,
    /// Where the certificates are cached.
    #[arg(long)]
    pub(super) data_dir: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(super) struct SideArgs {
    #[arg(long, value_parser = parse_side)]
    pub(super) role: Side,
    #[arg(long)]
    pub(super) stack: String,
    /// The stack on the other side, in the peer runner: checked against this stack's limits on
    /// its peers ([`crate::PeerLimit`]).
    #[arg(long)]
    pub(super) peer_stack: String,
    /// An open socket to the peer runner, inherited from the orchestrator.
    #[arg(long)]
    pub(super) peer_fd: Option<i32>,
    /// Where to meet the peer runner: the server listens on this Unix socket path, the client
    /// connects to it (in a session, whose stdin carries the requests).
    #[arg(long)]
    pub(super) peer_socket: Option<PathBuf>,
    #[command(flatten)]
    pub(super) settings: SampleSettings,
}

fn parse_side(text: &str) -> Result<Side, String> {
    match text {
        "client" => Ok(Side::Client),
        "server" => Ok(Side::Server),
        _ => Err(format!("unknown side `{text}` (valid: client, server)")),
    }
}

#[derive(clap::Args)]
pub(super) struct SampleArgs {
    #[arg(long)]
    pub(super) client: String,
    #[arg(long)]
    pub(super) server: String,
    /// Pairs measured side by side, one per thread (the time measure only); the reply carries
    /// each thread's rates and their sums. `--threads 1` is one pair on a thread of its own, as
    /// each of N is; without it, the pair runs on the main thread.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(super) threads: Option<u32>,
    /// What those threads share: `own` (each builds its own configs) or `shared` (one client
    /// config and one server config for all, as a multi-threaded server shares its context).
    #[arg(long, default_value_t = Contexts::Own)]
    pub(super) contexts: Contexts,
    /// The CPUs those threads run on, one each: thread i is pinned to the i-th of the list (round
    /// robin beyond its end), e.g. `0,1` or `0-3`. Without it they run wherever the scheduler puts them.
    #[arg(long, requires = "threads")]
    pub(super) cpus: Option<crate::pin::CpuList>,
    #[command(flatten)]
    pub(super) settings: SampleSettings,
}

/// What a sample measures and for how long, in-process or one side of a split pair.
#[derive(clap::Args)]
pub(super) struct SampleSettings {
    #[arg(long)]
    pub(super) scenario: Scenario,
    #[arg(long, default_value_t = Measure::Time)]
    pub(super) measure: Measure,
    /// Each side's measured time must reach this, in milliseconds.
    #[arg(long, default_value_t = 100)]
    pub(super) min_time_ms: u64,
    #[arg(long, default_value_t = 50)]
    pub(super) warmup_ms: u64,
    /// The time measure, one pair: count only the stretches of the measured loop at which the CPU
    /// ran at full speed, this many rounds of the probe workload per microsecond (crate::speed).
    #[arg(long)]
    pub(super) full_speed: Option<f64>,
    /// Whether to report the CPU time of the timed calls too (from the kernel's context-switch
    /// records, see cpu_time.rs; no system call around the calls).
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    pub(super) cpu_clock: String,
    /// The measures counted under callgrind (instructions, sync): the side whose library calls
    /// callgrind collects (in a split-process pair, always this process's side).
    #[arg(long, value_parser = parse_side)]
    pub(super) count_side: Option<Side>,
    /// The measures counted under callgrind: measured iterations (handshakes, or 16 KiB writes
    /// in a transfer), a fixed number so that every sample does the same work.
    #[arg(long, default_value_t = 20)]
    pub(super) iterations: u64,
    /// The measures counted under callgrind: unmeasured iterations first.
    #[arg(long, default_value_t = 2)]
    pub(super) warmup_iterations: u64,
    /// Where the certificates are cached.
    #[arg(long)]
    pub(super) data_dir: Option<PathBuf>,
}

impl SampleSettings {
    /// The scenario's certificates and the sample's length; `own_side` is the side of a
    /// split-process runner.
    pub(super) fn load(&self, own_side: Option<Side>) -> Result<(Pki, SampleSpec), Reply> {
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
            _ => SampleSpec::Timed {
                warmup: Duration::from_millis(self.warmup_ms),
                min_time: Duration::from_millis(self.min_time_ms),
                full_speed: self.full_speed,
            },
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
