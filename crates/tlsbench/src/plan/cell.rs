//! One cell of a plan: a pair, a scenario, a measure and the run's other axes, where its two
//! sides run, its key as stored, and how long a sample of it may take.

use std::time::Duration;

use tlsbench_harness::allocator::Allocator;
use tlsbench_harness::{Contexts, KeyType, Measure, Scenario};

use crate::builds::{Build, Built, Compiler};
use crate::key::CellKey;
use crate::runners::Runners;

/// Where the two sides of a cell run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names, reason = "in-process is the model's name in every output")]
pub enum Process {
    /// One runner, one thread, both sides.
    InProcess,
    /// One runner per side, the bytes relayed between them.
    Split,
    /// A server runner and a load generator runner on a loopback TCP socket (measure net).
    Tcp,
    /// The server's peak over loopback TCP: the server on CPUs of its own, load generators on
    /// the others, their connections in flight raised until the server is saturated (peak.rs).
    TcpPeak,
}

impl Process {
    pub fn name(self) -> &'static str {
        match self {
            Process::InProcess => "in-process",
            Process::Split => "split-process",
            Process::Tcp => "tcp",
            Process::TcpPeak => "tcp-peak",
        }
    }

    /// Over a real TCP socket: either way of loading a server.
    pub fn is_tcp(self) -> bool {
        matches!(self, Process::Tcp | Process::TcpPeak)
    }

    /// In one process if some runner holds both stacks.
    pub fn auto(runners: &Runners, client: &str, server: &str) -> Process {
        match runners.for_pair(client, server) {
            Some(_) => Process::InProcess,
            None => Process::Split,
        }
    }
}

/// One (pair, scenario, measure) to measure, and whether both stacks declared support for it.
#[derive(Clone, Debug)]
pub struct Cell {
    pub client: String,
    pub server: String,
    pub scenario: Scenario,
    pub measure: Measure,
    pub process: Process,
    /// The allocator the runners run on where the run chose allocators (`--allocator`); None:
    /// glibc's in the Rust runners, unlabelled, and each runtime's own elsewhere.
    pub allocator: Option<Allocator>,
    /// The pairs measured side by side, one per thread (`--threads`), when more than one; over
    /// TCP, the server's workers (`--workers`), each with a load generator of its own. None: one
    /// pair, or one worker, as without the axis.
    pub threads: Option<u32>,
    /// What those threads share where the run chose it (`--contexts`): their own configs, or
    /// one server config and one client config. None: their own, unlabelled; and on one thread
    /// or over TCP.
    pub contexts: Option<Contexts>,
    /// The build whose runners measure the cell where the run chose builds (`--build`); None:
    /// release's, unlabelled.
    pub build: Option<Build>,
    /// The C compiler of those runners' C libraries where the run chose compilers
    /// (`--compiler`); None: gcc's, unlabelled.
    pub compiler: Option<Compiler>,
    /// `Err(reason)` when a stack does not support the scenario; such a cell is never run.
    pub support: Result<(), String>,
}

impl Cell {
    /// The build and C compiler of the runners that measure it.
    pub fn built(&self) -> Built {
        Built::new(self.build.unwrap_or_default(), self.compiler.unwrap_or_default())
    }

    /// The planned cell of a stored key (to resume a run): `Err` names the axis this tlsbench
    /// cannot read back.
    pub fn from_key(key: &CellKey) -> Result<Cell, String> {
        fn parsed<T: std::str::FromStr<Err: std::fmt::Display>>(
            axis: &str,
            value: Option<&str>,
        ) -> Result<Option<T>, String> {
            value.map(str::parse).transpose().map_err(|e| format!("stored {axis}: {e}"))
        }
        let process = match key.process.as_str() {
            "in-process" => Process::InProcess,
            "split-process" => Process::Split,
            "tcp" => Process::Tcp,
            "tcp-peak" => Process::TcpPeak,
            other => return Err(format!("stored process model `{other}`")),
        };
        Ok(Cell {
            client: key.client_stack.clone(),
            server: key.server_stack.clone(),
            scenario: key.scenario.parse().map_err(|e| format!("stored scenario: {e}"))?,
            measure: key.measure.parse().map_err(|e| format!("stored measure: {e}"))?,
            process,
            allocator: parsed("allocator", key.allocator.as_deref())?,
            threads: key.threads,
            contexts: parsed("contexts", key.contexts.as_deref())?,
            build: parsed("build", key.build.as_deref())?,
            compiler: parsed("compiler", key.compiler.as_deref())?,
            support: Ok(()),
        })
    }

    /// The cell's identity as stored and exported.
    pub fn key(&self) -> CellKey {
        CellKey {
            scenario: self.scenario.name(),
            client_stack: self.client.clone(),
            server_stack: self.server.clone(),
            measure: self.measure.name().into(),
            process: self.process.name().into(),
            allocator: self.allocator.map(|a| a.name().to_string()),
            threads: self.threads,
            contexts: self.contexts.map(|c| c.name().to_string()),
            build: self.build.map(|b| b.name().to_string()),
            compiler: self.compiler.map(|c| c.name().to_string()),
        }
    }

    /// How long a runner may take for one sample of this cell before it is killed: `timeout`
    /// (the user's `--timeout`, for what every sample does: start, load certificates, set up)
    /// plus a budget for the work this cell plans, so that a user who asks for 10,000 RSA-4096
    /// connections gets them. The budget is proportional to the work:
    /// - memory-N (heap and rss): N handshakes, each budgeted by its key type's cost;
    /// - time: each side's measured time (`min_time`) after its warmup, in turns, with room for
    ///   what happens outside the clocks and for the faster side needing more iterations;
    /// - instructions and sync: valgrind's start and fixed iterations at its pace;
    /// - net: a JIT's warm-up (a Java side warms up before it serves or connects), the load's
    ///   time, then the io timeout twice over (its warm-up connection, and the connection in
    ///   flight when the time is up);
    /// - io and heap of one connection: nothing beyond `timeout`.
    pub fn time_limit(&self, timeout: Duration, min_time: Duration, warmup: Duration) -> Duration {
        let budget = match (self.measure, self.scenario.kind.connections()) {
            (Measure::Net, _) => warmup + min_time + tlsbench_harness::net::DEFAULT_IO_TIMEOUT * 2,
            (Measure::Instructions | Measure::Sync, _) => crate::instructions::budget(&self.scenario),
            (_, Some(connections)) => connection_budget(self.scenario.key) * connections as u32,
            // N pairs on threads may share fewer cores: up to N times as long.
            (Measure::Time, None) => (min_time + warmup) * 2 * TIME_SAMPLE_SLACK * self.threads.unwrap_or(1),
            (_, None) => Duration::ZERO,
        };
        timeout + budget
    }
}

/// How many times its measured time a time sample may take: both sides' clocks run in turn and
/// each must reach the minimum, so the side with the cheaper calls does more iterations, and
/// the harness's own work (digests, checks, relays) runs outside the clocks.
const TIME_SAMPLE_SLACK: u32 = 10;

/// What one connection of memory-N may cost, both sides and the heap accounting included: about
/// twice the slowest stack's cost with `key`, led by the server's signature. Measured here
/// (memory-1000, heap, 2 shared cores): Bertie is the slowest with RSA, at 10, 29 and 66 ms per
/// connection for RSA-2048, -3072 and -4096 (the others take 5 to 10 ms with RSA-4096); with
/// ECDSA P-256 every stack takes 1 to 2.5 ms.
fn connection_budget(key: KeyType) -> Duration {
    let ms = match key {
        KeyType::EcdsaP256 | KeyType::Ed25519 => 5,
        KeyType::EcdsaP384 => 10,
        KeyType::Rsa2048 => 20,
        KeyType::Rsa3072 => 60,
        KeyType::Rsa4096 => 130,
    };
    Duration::from_millis(ms)
}
