//! The command line (docs/usage.md, "The command line").

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use tlsbench_harness::net::plain::PLAIN_STACKS;
use tlsbench_harness::net::Page;
use tlsbench_harness::{Measure, Scenario, Side};

use crate::group::GroupBy;
use crate::plan::ProcessChoice;
use crate::{stacks, store};

#[derive(Parser)]
#[command(name = "tlsbench", version, about = "Benchmark and compare TLS implementations with one method")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Measure a matrix of stacks and scenarios, store every sample, print a table, export the results.
    Run(RunArgs),
    /// Every client stack against every server stack: does each pair work, and how fast.
    ///
    /// One matrix per scenario and side, clients down, servers across; --stack chooses the
    /// stacks. Default scenarios: full TLS 1.3 and 1.2 handshakes with x25519, ecdsa-p256 and
    /// aes-128-gcm; 2 short samples per pair (whether it works, and roughly at what rate). Takes
    /// the options of `run`.
    Interop(RunArgs),
    /// List the stored runs, oldest first: stacks, cells, whether each is complete; then cold runs.
    Runs(DbArg),
    /// Print a stored run's table as `run` printed it (the latest run without RUN); export it.
    Show(ShowArgs),
    /// Compare two runs cell by cell: B's figure over A's and whether the difference is real.
    Compare(CompareArgs),
    /// A run's tables across stacks with factors against a baseline; Markdown, or HTML with charts.
    Report(ReportArgs),
    /// The IO of one connection, call by call on both sides.
    ///
    /// Each read (asked, got, or would block) and write with the TLS records in it, by flight,
    /// and the totals.
    Trace(TraceArgs),
    /// Per stack, how it does IO: read and write buffering, record coalescing.
    ///
    /// As measured in io-profile with TLS 1.3 and 1.2, with its IO calls, records and bytes per
    /// side.
    Io(IoArgs),
    /// Where one side's instructions and locks go, under callgrind: top functions, flamegraph.
    ///
    /// That side runs under callgrind: its top functions (by inclusive and exclusive
    /// instructions) and each library's share, and the functions that take its locks and
    /// atomics; writes a flamegraph SVG and the profile as JSON (for `report --profile`).
    Profile(ProfileArgs),
    /// Serve connections of one stack (or plain TCP) on a TCP socket until stopped.
    ///
    /// Stops on Ctrl-C or SIGTERM; prints the address on the first line of stdout, and what the
    /// server measured at the end.
    Serve(ServeArgs),
    /// Load a TLS server with connections of one client stack, bounded in count and time.
    ///
    /// The client stack may be plain TCP; prints connections per second, latency percentiles,
    /// CPU and syscalls per connection.
    Load(LoadArgs),
    /// Several load generators' partial results (`load --run-id`) as one.
    ///
    /// Counts add up, latency histograms merge.
    Merge(MergeArgs),
    /// Fresh processes: each side's first context and handshake against the warm ones after them.
    ///
    /// Per stack (with itself) and handshake scenario, N runners, each in a new process: the
    /// process's start to `main`, each side's context, first and second full handshake (or first
    /// and second resumption), in time or, under callgrind, instructions
    /// (docs/scenarios.md#cold-processes-tlsbench-cold). Each run is stored in the results
    /// database; `cold --show [ID]` prints it again.
    Cold(ColdArgs),
    /// Make this machine noisy on purpose, to try sampling under noise (docs/sampling.md).
    ///
    /// One thread per CPU alternates bursts of cache- and memory-thrashing work with pauses, each
    /// of a random length in its range; stops by itself after --duration. scripts/noisy-host.sh
    /// runs a command under it with the setting that reproduces a noisy cloud VM.
    InjectNoise(NoiseArgs),
    /// How noisy this machine is now: the probe a run takes before its first round.
    ///
    /// A fixed workload timed in 25 stretches of 20 ms: how much they vary, how many a
    /// neighbour slowed, and what that means for a run of 6 samples per cell.
    ProbeNoise,
    /// List the stacks (with their versions and what each supports) or the scenarios.
    List {
        #[arg(value_enum)]
        what: ListWhat,
        /// With `scenarios`: whether this stack supports each one, and if not, why.
        #[arg(long, value_name = "ID", value_parser = stacks::parse_id)]
        stack: Option<String>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ListWhat {
    Stacks,
    Scenarios,
}

#[derive(Args)]
pub struct RunArgs {
    /// A stack to measure against itself; repeat for several [default: every stack some runner
    /// holds, but the GPL-only wolfssl, measured only when named].
    #[arg(
        long = "stack",
        value_name = "ID",
        value_parser = stacks::parse_id,
        conflicts_with_all = ["client", "server"]
    )]
    pub stacks: Vec<String>,
    /// The client stack of an interop pair (with --server).
    #[arg(long, value_name = "ID", value_parser = stacks::parse_id, requires = "server")]
    pub client: Option<String>,
    /// The server stack of an interop pair (with --client).
    #[arg(long, value_name = "ID", value_parser = stacks::parse_id, requires = "client")]
    pub server: Option<String>,
    /// Only scenarios whose names match this glob (`'*'`: all of them); repeat for several
    /// [default: each measure's focused set (docs/scenarios.md); with --quick, the headline
    /// scenarios; in interop, full TLS 1.3 and 1.2 handshakes]. A context kind's bare name
    /// (context-server, context-client, context-client-system: what a process pays before its
    /// first handshake) selects its focused set.
    #[arg(long = "scenario", value_name = "GLOB")]
    pub scenarios: Vec<String>,
    /// What to measure (time, instructions, sync, io, heap, rss; net over TCP); repeat for
    /// several [default: time, or net with --transport tcp]. Each measure takes the scenarios it
    /// applies to: time, instructions and sync handshakes and transfer, io handshakes and
    /// io-profile, heap handshakes and memory-N, rss memory-N, net handshakes.
    #[arg(long = "measure", value_name = "M")]
    pub measures: Vec<Measure>,
    /// Where the two sides talk: in memory (the default), or over a real TCP socket on
    /// loopback, a server runner with one worker and a load generator of one connection at a
    /// time, each sample lasting --min-time-ms (measure net: connections per second, latency,
    /// CPU and syscalls per connection). `tlsbench serve` and `load` take more settings.
    #[arg(long, value_enum, value_name = "T", default_value_t = Transport::Memory)]
    pub transport: Transport,
    /// Samples per cell [default: 20 with the time measure, else 10; 6 with --quick: the fewest
    /// that give a 95% interval; a cell of counts that repeat (instructions, sync, io), 3 (2 with
    /// --quick); in interop, 2].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub samples: Option<u32>,
    /// A short run: fewer and shorter samples (6 of 20 ms per side) and, without --scenario,
    /// the headline scenarios only (full and resumed handshakes, transfer, io-profile, memory-100).
    #[arg(long)]
    pub quick: bool,
    /// Each side's measured time per sample, in ms [default: 50, or 20 with --quick and in
    /// interop; over TCP, the load's time: 1000, or 300 with --quick and in interop].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub min_time_ms: Option<u64>,
    /// Unmeasured work before each sample, in ms [default: 25, or 10 with --quick]. A process
    /// that stays up for many samples (a stack with a JIT or a garbage collector) warms up at
    /// least this long, or its stack's own least, before its first, and then until steady.
    #[arg(long, value_name = "MS")]
    pub warmup_ms: Option<u64>,
    /// The longest a process that stays up warms up before its first sample of a cell, in ms,
    /// should its rate still be rising [default: 30000, 10000 with --quick, 5000 in interop].
    /// How long each took, and whether it became steady, is stored and shown under the table.
    #[arg(long, value_name = "MS")]
    pub warmup_max_ms: Option<u64>,
    /// The processes a cell of a stack with a JIT or a garbage collector takes its time and io
    /// samples from, each warmed up once and asked in turn; the interval spans each one's
    /// figure [default: 2; 1 with --quick and in interop, whose ± then leaves out the spread
    /// between processes]. Other stacks take each sample in a process of its own.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub forks: Option<u32>,
    /// After the samples of --samples, keep taking rounds of samples of the cells whose 95%
    /// intervals are wider than ±PCT% (the table's ±), until all are within it or --time-budget
    /// is spent; e.g. `2%` or `2`.
    #[arg(long, value_name = "PCT", value_parser = parse_target_ci)]
    pub target_ci: Option<f64>,
    /// With --target-ci: the most seconds a run measures, from its first sample [default: 300].
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = parse_seconds,
        allow_negative_numbers = true,
        requires = "target_ci"
    )]
    pub time_budget: Option<f64>,
    /// Seconds a runner is given for one sample beyond the time its planned work is budgeted
    /// (memory-N's connections by key type, --min-time-ms and --warmup-ms); a runner still
    /// going after that is killed and its cell fails.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 120.0,
        value_parser = parse_seconds,
        allow_negative_numbers = true
    )]
    pub timeout: f64,
    /// Where a pair's two sides run: in one runner where one holds both stacks, else one runner
    /// per side (auto); always one runner per side (split); or both ways, to compare them.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = ProcessChoice::Auto)]
    pub process: ProcessChoice,
    /// The allocator the runners' malloc forwards to (glibc, jemalloc, mimalloc), the C
    /// libraries' allocations included; repeat for several: each is a column of the table,
    /// `STACK (ALLOCATOR)` [default: glibc, unlabelled]. Stacks whose runtime allocates apart
    /// from malloc (go, jsse, netty-tcnative) are n/a then.
    #[arg(long = "allocator", value_name = "A")]
    pub allocators: Vec<tlsbench_harness::allocator::Allocator>,
    /// Thread counts for the time measure: N independent pairs, one per thread, in one runner
    /// (rustls-bench's `--threads`); e.g. `--threads 2` or `--threads 2,4`. Asking for N > 1
    /// also measures one thread in the same run (on a thread of its own, as each of the N),
    /// since scaling efficiency is the rate of N threads against N times one thread's. Rows
    /// `STACK (N threads)` give the aggregate rate (the sum of the threads' rates); the
    /// `..._per_thread` blocks give the rate per thread and the efficiency. In-process cells of
    /// Rust runners only: the others are n/a saying why. Other measures are taken with one pair.
    #[arg(
        long = "threads",
        value_name = "N",
        value_delimiter = ',',
        value_parser = clap::value_parser!(u32).range(1..=1024)
    )]
    pub threads: Vec<u32>,
    /// What the threads of --threads N share: own (each thread its own client and server
    /// configs, as rustls-bench does; the default), shared (one server config for all threads'
    /// servers and one client config for all their clients, with the session cache, ticket keys
    /// and saved sessions in them, as a multi-threaded server and client do), or both, each a row
    /// `STACK (N threads, own contexts)`, `STACK (N threads, shared context)` with its scaling
    /// efficiency against the same one thread.
    #[arg(long, value_enum, value_name = "MODE")]
    pub contexts: Option<crate::plan::ContextsChoice>,
    /// Over --transport tcp, the server's worker threads: e.g. `--workers 2` or `--workers 2,4`.
    /// A cell of N workers loads the server with N load generators, one runner each with one
    /// connection at a time (one runner per worker, since a load generator is one thread).
    /// Asking for N > 1 also measures one worker in the same run; the
    /// `connections_per_s_per_worker` block gives the server's rate per worker and its scaling
    /// efficiency against one worker, as --threads does in memory.
    #[arg(
        long = "workers",
        value_name = "N",
        value_delimiter = ',',
        value_parser = clap::value_parser!(u32).range(1..=64)
    )]
    pub workers: Vec<u32>,
    /// Over --transport tcp, each server's peak: the server's runner on CPUs of its own
    /// (--server-cores), one load generator per load CPU on the others (--load-cores), and the
    /// connections each keeps in flight doubled step by step (1, 2, 4 ... 64) until the workers
    /// are busy or the rate stops rising. Each sample is one such search; its cell, `STACK [tcp
    /// peak]`, holds the step of the highest rate, with `workers_busy_percent` and
    /// `load_concurrency` [default samples: 3, or 2 with --quick].
    #[arg(long)]
    pub peak: bool,
    /// The CPUs of the server's runner in a --peak run, as taskset -c takes them (`0-3`);
    /// implies --peak [default: a quarter of the CPUs tlsbench may use, at least one; or those
    /// --load-cores leaves].
    #[arg(long, value_name = "CPUS")]
    pub server_cores: Option<String>,
    /// The CPUs of the load generators in a --peak run (`4-15`), one generator per CPU; implies
    /// --peak [default: the CPUs the server does not take].
    #[arg(long, value_name = "CPUS")]
    pub load_cores: Option<String>,
    /// The build of the runners (scripts/build.sh --build NAME): release (today's), native
    /// (-C target-cpu=native, and -march=native for the C libraries built from source) or lto
    /// (fat LTO, one codegen unit); repeat for several: each is a column of the table,
    /// `STACK [BUILD]` [default: release, unlabelled]. Go's and Java's runners are built by
    /// their own toolchains: n/a in builds other than release.
    #[arg(long = "build", value_enum, value_name = "BUILD")]
    pub builds: Vec<crate::builds::Build>,
    /// The C compiler of the C libraries the runners build from source (scripts/build.sh --cc
    /// NAME): gcc (today's) or clang; repeat for both: each is a column of the table,
    /// `STACK [clang]` [default: gcc, unlabelled]. With --build, each build with each compiler.
    /// Go's and Java's runners: n/a with clang.
    #[arg(long = "compiler", value_enum, value_name = "CC")]
    pub compilers: Vec<crate::builds::Compiler>,
    /// Take the samples a stored run is missing (it was interrupted), with its stacks and settings.
    #[arg(
        long,
        value_name = "RUN",
        conflicts_with_all = [
            "stacks", "client", "server", "scenarios", "measures", "transport", "samples", "quick",
            "min_time_ms", "warmup_ms", "warmup_max_ms", "forks", "target_ci", "time_budget", "timeout",
            "process", "allocators", "threads", "contexts", "workers", "peak", "server_cores", "load_cores",
            "builds", "compilers",
        ]
    )]
    pub resume: Option<String>,
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub exports: ExportArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    Memory,
    Tcp,
}

#[derive(Args)]
pub struct DbArg {
    /// The results database: every run and every sample.
    #[arg(long, value_name = "PATH", default_value = store::DEFAULT_PATH)]
    pub db: PathBuf,
}

/// `--build` and `--compiler` of the commands that run one build's runners (serve, load, trace,
/// io, profile).
#[derive(Args)]
pub struct BuildArg {
    /// The build whose runners to run (scripts/build.sh --build NAME): release, native or lto.
    /// Go's and Java's runners are built by their own toolchains, in release only.
    #[arg(long, value_enum, value_name = "BUILD", default_value_t = crate::builds::Build::Release)]
    pub build: crate::builds::Build,
    /// The C compiler of the C libraries the runners built from source (scripts/build.sh --cc
    /// CC): gcc or clang.
    #[arg(long, value_enum, value_name = "CC", default_value_t = crate::builds::Compiler::Gcc)]
    pub compiler: crate::builds::Compiler,
}

impl BuildArg {
    pub fn built(&self) -> crate::builds::Built {
        crate::builds::Built::new(self.build, self.compiler)
    }
}

#[derive(Args)]
pub struct ExportArgs {
    /// The results document (its schema: docs/results.md).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// One row per cell with its statistics and samples.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// The environment and one table per metric.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Bencher Metric Format JSON (`bencher run --adapter json`).
    #[arg(long, value_name = "FILE")]
    pub export_bencher: Option<PathBuf>,
    /// github-action-benchmark JSON of the metrics where higher is better (tool: customBiggerIsBetter).
    #[arg(long, value_name = "FILE")]
    pub export_github_action: Option<PathBuf>,
    /// github-action-benchmark JSON of the metrics where lower is better (tool: customSmallerIsBetter).
    #[arg(long, value_name = "FILE")]
    pub export_github_action_smaller: Option<PathBuf>,
}

#[derive(Args)]
pub struct ShowArgs {
    /// A run id (`tlsbench runs` lists them) or an exported JSON file [default: the latest run].
    pub run: Option<String>,
    /// Split each metric's table by the stacks' TLS library or crypto backend.
    #[arg(long, value_name = "WHAT")]
    pub group_by: Option<GroupBy>,
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub exports: ExportArgs,
}

#[derive(Args)]
pub struct CompareArgs {
    /// The run compared against: a run id or an exported JSON file.
    pub a: String,
    /// The run judged: a run id or an exported JSON file.
    pub b: String,
    /// Figures closer than this many percent are noise, in every cell [default: each cell's own
    /// threshold from its history, where the database holds 5 or more past run-to-run changes
    /// of its figure (in runs other than B): the upper fence (Q3 + 1.5 IQR) of those changes,
    /// at least a floor per measure (docs/usage.md, "Comparing two runs"); else its measure's:
    /// 0.3 for instructions, 0 for sync (which must also move by one per handshake or MB, or
    /// from or to 0), 1 for heap and io, 5 for time and rss].
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    pub threshold: Option<f64>,
    /// Exit with status 1 when any cell of B is worse than in A.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Only A's cells of this build (`run --build`). Two runs of one build each are matched
    /// cell by cell whatever their builds (release against native: `compare RUN_A RUN_B`);
    /// two builds of one run: `compare RUN RUN --build-a release --build-b native`.
    #[arg(long, value_enum, value_name = "BUILD")]
    pub build_a: Option<crate::builds::Build>,
    /// Only B's cells of this build (see --build-a).
    #[arg(long, value_enum, value_name = "BUILD")]
    pub build_b: Option<crate::builds::Build>,
    /// Only A's cells of this C compiler (`run --compiler`), as --build-a is for builds: two
    /// compilers of one run, `compare RUN RUN --compiler-a gcc --compiler-b clang`.
    #[arg(long, value_enum, value_name = "CC")]
    pub compiler_a: Option<crate::builds::Compiler>,
    /// Only B's cells of this C compiler (see --compiler-a).
    #[arg(long, value_enum, value_name = "CC")]
    pub compiler_b: Option<crate::builds::Compiler>,
    /// Only A's cells of this stack, matched with B's cells of --stack-b as if they were one
    /// stack: two releases of a library in one run, `compare RUN RUN --stack-a openssl
    /// --stack-b openssl@3.5`, or in two runs.
    #[arg(long, value_name = "ID", requires = "stack_b")]
    pub stack_a: Option<String>,
    /// Hold every cell to its measure's default threshold, not to one from its history in the
    /// database (where it has enough of it: see --threshold).
    #[arg(long)]
    pub no_history: bool,
    /// Only B's cells of this stack (see --stack-a).
    #[arg(long, value_name = "ID", requires = "stack_a")]
    pub stack_b: Option<String>,
    /// Judge the time rates beside the move they all share: B's samples divided by the median
    /// cell's B/A (a host that ran slower or faster in B moves every cell so) before the test;
    /// the figures stay as measured. For runs of many cells, 10 time rates at least
    /// (docs/sampling.md#a-noisy-machine).
    #[arg(long)]
    pub beside_shift: bool,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Args)]
pub struct ReportArgs {
    /// A run id or an exported JSON file [default: the latest run].
    pub run: Option<String>,
    /// The stack (or `client -> server` pair) the factor columns divide by.
    #[arg(long, value_name = "STACK")]
    pub baseline: Option<String>,
    /// Split each metric's table by the stacks' TLS library or crypto backend (a baseline gives
    /// factor columns in its own group's tables).
    #[arg(long, value_name = "WHAT")]
    pub group_by: Option<GroupBy>,
    /// Write DIR/index.html: one self-contained page with the environment, charts and tables.
    #[arg(long, value_name = "DIR")]
    pub html: Option<PathBuf>,
    /// Write the tables as Markdown.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// With --html: a profile written by `tlsbench profile` (its .json), shown with its tables
    /// and flamegraph; repeat for several.
    #[arg(long = "profile", value_name = "PROFILE.json", requires = "html")]
    pub profiles: Vec<PathBuf>,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Args)]
pub struct ColdArgs {
    /// A stack, measured with itself; repeat for several (`openssl@1.1.1 --stack openssl@3.5`
    /// for releases) [default: every stack some runner holds, but the GPL-only wolfssl].
    #[arg(long = "stack", value_name = "ID", value_parser = stacks::parse_id)]
    pub stacks: Vec<String>,
    /// A handshake scenario; repeat for several [default: full TLS 1.3 handshakes with ECDSA P-256
    /// and RSA-2048, and the ticket resumption with ECDSA P-256].
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<Scenario>,
    /// Fresh processes per stack and scenario [default: 5, or 3 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub processes: Option<u32>,
    /// 3 processes per stack and scenario.
    #[arg(long)]
    pub quick: bool,
    /// time, or instructions (each side under callgrind, counted phase by phase).
    #[arg(long, default_value_t = Measure::Time)]
    pub measure: Measure,
    /// Measure nothing: print a stored cold run's tables again as the run printed them, the
    /// latest without ID (`tlsbench runs` lists them); --json and --csv export it.
    #[arg(
        long,
        value_name = "ID",
        num_args = 0..=1,
        conflicts_with_all = ["stacks", "scenarios", "processes", "quick", "measure"]
    )]
    pub show: Option<Option<String>>,
    /// Write the run as a JSON document: the run, the machine, every process's figures per side
    /// and phase, with their units (docs/results.md, "Cold runs").
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the run as CSV: one row per scenario, stack, process, side and phase, with its unit.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Args)]
pub struct TraceArgs {
    /// The scenario: a handshake kind (the trace of one handshake after a seed one) or
    /// io-profile (a whole short connection), e.g. io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm.
    #[arg(value_name = "SCENARIO")]
    pub scenario: Scenario,
    /// The stack on both sides.
    #[arg(
        long,
        value_name = "ID",
        value_parser = stacks::parse_id,
        conflicts_with_all = ["client", "server"],
        required_unless_present = "client"
    )]
    pub stack: Option<String>,
    /// The client stack of an interop pair (with --server).
    #[arg(long, value_name = "ID", value_parser = stacks::parse_id, requires = "server")]
    pub client: Option<String>,
    /// The server stack of an interop pair (with --client).
    #[arg(long, value_name = "ID", value_parser = stacks::parse_id, requires = "client")]
    pub server: Option<String>,
    /// Print the trace as the runner's JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub build: BuildArg,
}

#[derive(Args)]
pub struct IoArgs {
    /// A stack to profile against itself; repeat for several [default: every stack some runner
    /// holds, but the GPL-only wolfssl, profiled only when named].
    #[arg(long = "stack", value_name = "ID", value_parser = stacks::parse_id)]
    pub stacks: Vec<String>,
    /// How the libraries are configured: pinned to the scenario's suite and group without
    /// tickets or session cache (as `run` measures them), each library's own defaults (its
    /// tickets, cache, suites and groups), or both.
    #[arg(long, value_enum, default_value_t = Configs::Both)]
    pub config: Configs,
    #[command(flatten)]
    pub build: BuildArg,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Configs {
    Pinned,
    Defaults,
    Both,
}

#[derive(Args)]
pub struct ProfileArgs {
    /// The scenario: a handshake (full or resumed) or a transfer, e.g.
    /// handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm.
    #[arg(value_name = "SCENARIO")]
    pub scenario: Scenario,
    /// The stack whose side is profiled.
    #[arg(long, value_name = "ID", value_parser = stacks::parse_id)]
    pub stack: String,
    /// The side profiled: client or server.
    #[arg(long, value_name = "SIDE", value_parser = parse_side)]
    pub side: Side,
    /// The stack on the other side [default: --stack]; one that the same runner holds.
    #[arg(long, value_name = "ID", value_parser = stacks::parse_id)]
    pub peer: Option<String>,
    /// Measured iterations: handshakes, or 16 KiB writes of a transfer [default: as the
    /// instructions measure, 20 handshakes or 64 writes].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: Option<u64>,
    /// Rows of each function table.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub top: usize,
    /// Where STACK_SIDE_SCENARIO.svg (the flamegraph), .json (for `report --profile`) and
    /// .callgrind (callgrind's output, for callgrind_annotate or KCachegrind) are written;
    /// STACK_SIDE_SCENARIO_BUILD.* in a build other than release.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    #[command(flatten)]
    pub build: BuildArg,
}

fn parse_side(text: &str) -> Result<Side, String> {
    match text {
        "client" => Ok(Side::Client),
        "server" => Ok(Side::Server),
        _ => Err(format!("unknown side `{text}` (valid: client, server)")),
    }
}

#[derive(Args)]
pub struct NetArgs {
    /// A stack (`tlsbench list stacks`), or a plain TCP baseline: `tcp` (a write per
    /// application write) or `tcp-buffered` (one buffered write per response).
    #[arg(long, value_name = "ID", value_parser = parse_net_stack)]
    pub stack: String,
    /// Each connection's handshake: a handshake-full or handshake-resume-* scenario
    /// [default: handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm; none for plain TCP].
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<Scenario>,
    /// A connection whose peer sends nothing for this many seconds fails.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10.0,
        value_parser = parse_seconds,
        allow_negative_numbers = true
    )]
    pub io_timeout: f64,
    #[command(flatten)]
    pub build: BuildArg,
}

#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub net: NetArgs,
    /// Where to listen. Loopback unless you name another address.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Worker threads [default: one per core].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: Option<u32>,
    /// The response to each request: a size (0, 1KiB, 10KiB, 512KiB, 10MiB, 100MiB; written in
    /// 16 KiB writes) or COUNTxBYTES application writes (1000x64).
    #[arg(long, value_name = "SIZE", default_value = "0")]
    pub response: Page,
    /// Where to write what the server measured, as JSON, once it stops.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args)]
pub struct LoadArgs {
    #[command(flatten)]
    pub net: NetArgs,
    /// The server: tlsbench's (`tlsbench serve` prints its address) or any other TLS server
    /// whose certificate chains to tlsbench's CA for server.tlsbench.test.
    #[arg(long, value_name = "ADDR")]
    pub connect: SocketAddr,
    /// Measured connections [default: as many as --duration allows].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub connections: Option<u64>,
    /// Start no connection after this many seconds [default: 10, or 300 with --connections].
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Connections in flight at once (as `openssl s_time`: 1).
    #[arg(long, value_name = "C", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub concurrency: u32,
    /// The server's response, as given to `tlsbench serve --response`: each one is checked
    /// (length and digest). Without it, responses are counted, not checked.
    #[arg(long, value_name = "SIZE")]
    pub response: Option<Page>,
    /// Part of a run of several generators: write this generator's results to --output for
    /// `tlsbench merge`.
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Where to write the results as JSON [default with --run-id: load-RUN_ID-HOST-PID.json].
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args)]
pub struct MergeArgs {
    /// Partial results of `tlsbench load --run-id` (one per generator).
    #[arg(value_name = "PARTIAL", required = true)]
    pub partials: Vec<PathBuf>,
    /// Write the merged results as JSON.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args)]
pub struct NoiseArgs {
    /// The CPUs to inject on, numbers and ranges (`0,1`, `0-3`) [default: every CPU it may use].
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Each burst's length in ms, drawn from MIN-MAX.
    #[arg(long, value_name = "MIN-MAX", default_value = "2-20", value_parser = crate::noise::parse_ms_range)]
    pub on_ms: crate::noise::MsRange,
    /// Each pause's length in ms, drawn from MIN-MAX.
    #[arg(long, value_name = "MIN-MAX", default_value = "5-40", value_parser = crate::noise::parse_ms_range)]
    pub off_ms: crate::noise::MsRange,
    /// The buffer each burst thrashes, per CPU, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub mib: u32,
    /// Stop after this many seconds (at most an hour).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = parse_noise_seconds)]
    pub duration: f64,
    /// Run the bursts only on idle CPU time (SCHED_IDLE): they then slow others only through
    /// the caches and memory they share, never by taking a CPU.
    #[arg(long)]
    pub idle: bool,
    /// The seed of the bursts' and pauses' lengths.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
}

fn parse_noise_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 3600.0 => Ok(s),
        _ => Err(format!("bad duration `{text}` (valid: seconds above 0, at most 3600)")),
    }
}

fn parse_net_stack(id: &str) -> Result<String, String> {
    match PLAIN_STACKS.contains(&id) {
        true => Ok(id.to_string()),
        false => stacks::parse_id(id).map_err(|e| format!("{e}, or plain TCP: {}", PLAIN_STACKS.join(", "))),
    }
}

/// A percentage as a fraction: `2.5` -> 0.025.
fn parse_percent(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(pct) if (0.0..100.0).contains(&pct) => Ok(pct / 100.0),
        _ => Err(format!("`{text}` is not a percentage from 0 to below 100")),
    }
}

/// `--target-ci`: a percentage above 0, with or without `%`; kept in percent.
fn parse_target_ci(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(pct) if pct > 0.0 && pct < 100.0 => Ok(pct),
        _ => Err(format!("`{text}` is not a percentage above 0 and below 100 (e.g. 2%)")),
    }
}

/// The most seconds an option takes: a week, far from where the `Duration`s and deadlines made
/// of it, summed, would overflow.
const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// A number of seconds: from a millisecond (what the runners are given) to [`MAX_SECONDS`].
fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if (0.001..=MAX_SECONDS).contains(&seconds) => Ok(seconds),
        _ => Err(format!("`{text}` is not a number of seconds from 0.001 to {MAX_SECONDS} (a week)")),
    }
}
