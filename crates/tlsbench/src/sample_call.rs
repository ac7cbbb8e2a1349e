//! Asking a runner for one sample and reading its reply: how the run takes its samples
//! ([`Settings`]), a sample's words and environment on the runner's command line, the reply
//! read with what the runner printed on stderr, and the replies of a split pair's two sides
//! merged into one. Every way of taking a sample uses it: the rounds, the processes that stay up
//! and the instructions measure (sampling/), and TCP cells (net.rs); it uses none of them, so
//! that they depend on it and not on the scheduler.

use std::path::PathBuf;
use std::time::Duration;

use tlsbench_harness::allocator::{self, Allocator};
use tlsbench_harness::protocol::{Cause, Reply, SampleReport};
use tlsbench_harness::{Measure, Side};

use crate::builds::Built;
use crate::executor;
use crate::plan::{Cell, Process};
use crate::results::Status;
use crate::runner_command::{SampleSettings, Work};
use crate::runners::Runners;

/// How samples are taken.
#[derive(Clone, Debug)]
pub struct Settings {
    pub samples: usize,
    /// The samples of a cell whose counts repeat (the measures `compare` judges by their range:
    /// instructions, sync, io): a few show that they do.
    pub count_samples: usize,
    pub min_time_ms: u64,
    pub warmup_ms: u64,
    /// The user's `--timeout`: what a sample is given beyond its planned work (see
    /// [`Cell::time_limit`]); a runner still going after that is killed and its cell fails.
    pub timeout: Duration,
    pub data_dir: PathBuf,
    /// Release's runners: every cell's but those of another build or C compiler.
    pub runners: Runners,
    /// The runners of each other build the run measures (`--build`, `--compiler`), each
    /// checked to be it.
    pub builds: Vec<(Built, Runners)>,
    /// `--target-ci`: further rounds for the cells still wider than it.
    pub target: Option<Target>,
    /// `--forks`: the processes a cell with a warming runtime takes its samples from
    /// (sampling/warm.rs).
    pub forks: usize,
    /// `--warmup-max-ms`: the longest a process of such a cell warms up before it is measured.
    pub warmup_max: Duration,
    /// Whether the run measures `--threads N`: then its one-thread time cells run their pair on
    /// a thread of its own too, as each of the N threads does ([`Settings::on_a_thread`]). Not
    /// `pinning.is_some()`: where the system does not say which CPUs tlsbench may use, the
    /// threads run unpinned, and the one-thread row still runs on a thread of its own.
    pub threaded: bool,
    /// In such a run, the CPUs its threads are pinned to (crate::cores): an N-thread cell's to
    /// the first N, the one-thread row's samples to each CPU of the largest N in turn.
    pub pinning: Option<crate::cores::Pinning>,
    /// Where a run of a server's peak (`--peak`) runs the server and its load: CPUs of their own.
    pub peak: Option<crate::cores::Split>,
    /// The samples a time cell may take beyond its own in place of those a noisy machine slowed
    /// (`stats::slowed`); set from the noise probe before the first round (crate::noise).
    pub replacements: usize,
}

impl Settings {
    /// The runners that measure `cell`: its build's, with its C compiler.
    pub fn runners_for(&self, cell: &Cell) -> &Runners {
        let built = cell.built();
        match built.is_default() {
            true => &self.runners,
            false => self
                .builds
                .iter()
                .find(|(b, _)| *b == built)
                .map(|(_, r)| r)
                .expect("the runners of every planned build were found"),
        }
    }

    /// Whether `cell`, the one-thread row of a run with `--threads N`, runs its pair on a thread
    /// of its own (`sample --threads 1`) rather than on the runner's main thread, so that its
    /// rate and the N threads' compare like with like (the main thread's heap alone is trimmed:
    /// see the runner's `MeasurePair`). Only where the runner takes threads.
    pub fn on_a_thread(&self, cell: &Cell) -> bool {
        let takes_threads = |id: &str| self.runners_for(cell).info(id).is_some_and(|info| info.capabilities.threads);
        self.threaded
            && cell.threads.is_none()
            && cell.measure == tlsbench_harness::Measure::Time
            && cell.process == crate::plan::Process::InProcess
            && takes_threads(&cell.client)
            && takes_threads(&cell.server)
    }

    /// The samples `cell` takes before further rounds: the run's (a count's, for a measure whose
    /// counts repeat), and in a run with `--threads` at least one on each CPU of the one-thread
    /// reference for its one-thread row.
    pub fn samples_for(&self, cell: &Cell) -> usize {
        if crate::compare::judged_by_range(cell.measure.name()) {
            return self.count_samples;
        }
        match &self.pinning {
            Some(pinning) if cell.threads.is_none() && self.cpus_for(cell, 0).is_some() => {
                self.samples.max(pinning.reference.len())
            }
            _ => self.samples,
        }
    }

    /// The CPUs sample `index` of `cell` pins its threads to, in thread order (`sample --cpus`):
    /// in a run with `--threads`, for a cell of N threads or its one-thread row, where the runner
    /// pins threads; None otherwise (wherever the scheduler puts them).
    pub fn cpus_for(&self, cell: &Cell, index: usize) -> Option<Vec<u32>> {
        let pinning = self.pinning.as_ref()?;
        let pins = |id: &str| self.runners_for(cell).info(id).is_some_and(|info| info.capabilities.pin_threads);
        if cell.measure != Measure::Time
            || cell.process != Process::InProcess
            || !pins(&cell.client)
            || !pins(&cell.server)
        {
            return None;
        }
        match cell.threads {
            Some(n) => Some(pinning.for_threads(n)),
            None if self.on_a_thread(cell) => Some(vec![pinning.for_reference_sample(index)]),
            None => None,
        }
    }

    /// Whether stack `id`'s runtime warms up (its `min_warmup_ms`).
    pub fn warms_up(&self, id: &str) -> bool {
        self.runners.info(id).is_some_and(|info| info.capabilities.min_warmup_ms > 0)
    }

    /// Whether `cell`'s samples come from runners that stay up (sampling/warm.rs).
    pub fn uses_sessions(&self, cell: &Cell) -> bool {
        matches!(cell.measure, Measure::Time | Measure::Io)
            && !cell.process.is_tcp()
            && cell.built().is_default()
            && (self.warms_up(&cell.client) || self.warms_up(&cell.server))
    }

    /// The warm-up within one sample of `cell`: the run's for a process that stays up (it warmed
    /// up once, sampling/warm.rs), else the least a new process needs
    /// ([`Settings::warmup_floor`]).
    pub fn warmup_ms(&self, cell: &Cell) -> u64 {
        if self.uses_sessions(cell) {
            // A process that stays up warms up once, for at least --warmup-ms (sampling/warm.rs);
            // its samples only re-prime its caches after other cells' samples.
            return self.warmup_ms.min(SESSION_SAMPLE_WARMUP_MS);
        }
        self.warmup_floor(cell)
    }

    /// The least warm-up of a new process of `cell`: the run's, or longer where a stack of the
    /// pair needs more before its figures settle (a JIT: its `list` entry says how long).
    pub fn warmup_floor(&self, cell: &Cell) -> u64 {
        let floor = |id: &str| self.runners.info(id).map_or(0, |info| info.capabilities.min_warmup_ms);
        self.warmup_ms.max(floor(&cell.client)).max(floor(&cell.server))
    }
}

/// The most a sample of a process that stays up warms up (docs/sampling.md).
const SESSION_SAMPLE_WARMUP_MS: u64 = 25;

/// After the fixed rounds, cells whose intervals are wider than `ci_percent` get further
/// samples until none is, or until the run has measured for `budget`.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub ci_percent: f64,
    pub budget: Duration,
}

/// The sample settings of a timed sample of `cell` (docs/runner-protocol.md).
pub(crate) fn sample_settings<'a>(
    cell: &'a Cell,
    settings: &'a Settings,
    min_time_ms: u64,
    warmup_ms: u64,
) -> SampleSettings<'a> {
    SampleSettings {
        scenario: &cell.scenario,
        measure: cell.measure,
        work: Work::Timed { min_time_ms, warmup_ms, full_speed: None },
        data_dir: &settings.data_dir,
    }
}

/// A sample reply as the cell takes it: its report, or how the cell ends.
pub(crate) fn reply_of(reply: Result<Reply, String>) -> Result<SampleReport, (Status, String)> {
    match reply {
        Ok(Reply::Ok(report)) => Ok(report),
        Ok(Reply::Unsupported { reason }) => Err((Status::Unsupported, reason)),
        // A refusal that asks for a new process is taken up in sampling/warm.rs; anywhere else it
        // fails.
        Ok(Reply::Failed { reason, .. } | Reply::NeedsNewProcess { reason }) | Err(reason) => {
            Err((Status::Failed, reason))
        }
    }
}

/// The variable that sets a cell's runners on its allocator: always set, so that one left in
/// the user's environment cannot put a cell of glibc's column on another allocator.
/// And the trust store's bundle where the run has one (`crate::trust`).
pub(crate) fn allocator_env(cell: &Cell) -> Vec<(&'static str, &'static str)> {
    let mut env = vec![(allocator::ENV, cell.allocator.unwrap_or(Allocator::Glibc).name())];
    env.extend(crate::trust::runner_env());
    env
}

/// The runner's reply. A failed one, and one that cannot be read, carry the last lines the
/// runner's libraries printed (its stderr), which often say why.
pub(crate) fn reply(output: anyhow::Result<executor::Output>) -> Result<Reply, String> {
    let output = output.map_err(|e| format!("{e:#}"))?;
    let with_stderr = |reason: String| match &output.stderr {
        Some(printed) => format!("{reason} (stderr: {printed})"),
        None => reason,
    };
    match serde_json::from_str::<Reply>(&output.stdout) {
        Ok(Reply::Failed { reason, cause }) => Ok(Reply::Failed { reason: with_stderr(reason), cause }),
        Ok(reply) => Ok(reply),
        Err(e) => Err(with_stderr(format!("runner printed an unreadable reply: {e}"))),
    }
}

/// One report from the two sides of a split-process sample. When a side fails, its own reason
/// wins over its peer's echo of it (a failed reply with `cause: peer`: "the peer stopped",
/// "went away"); two reasons of their own (one side's unreadable reply, and the other's word on
/// the garbled message it was sent) are both given.
pub(crate) fn merge_sides(
    client: Result<Reply, String>,
    server: Result<Reply, String>,
) -> Result<SampleReport, (Status, String)> {
    // The outcome of a side that did not reply Ok, and whether it only echoes its peer's.
    let reason = |side: &str, result: &Result<Reply, String>| match result {
        Ok(Reply::Ok(_)) => None,
        Ok(Reply::Unsupported { reason }) => Some((Status::Unsupported, reason.clone(), Cause::Own)),
        Ok(Reply::Failed { reason, cause }) => Some((Status::Failed, format!("{side} runner: {reason}"), *cause)),
        Ok(Reply::NeedsNewProcess { reason }) | Err(reason) => {
            Some((Status::Failed, format!("{side} runner: {reason}"), Cause::Own))
        }
    };
    match (client, server) {
        // A side whose runner allocates through its runtime reports none (a run without the axis).
        (Ok(Reply::Ok(client)), Ok(Reply::Ok(server)))
            if client.allocator.is_some() && server.allocator.is_some() && client.allocator != server.allocator =>
        {
            Err((
                Status::Failed,
                format!(
                    "the sides ran on different allocators: {} on the client, {} on the server",
                    describe(&client.allocator),
                    describe(&server.allocator)
                ),
            ))
        }
        (Ok(Reply::Ok(client)), Ok(Reply::Ok(server))) if client.iterations == server.iterations => Ok(SampleReport {
            client_library: client.client_library,
            server_library: server.server_library,
            iterations: client.iterations,
            values: client.values.into_iter().chain(server.values).collect(),
            // Each side's own view, from the process that ran it.
            negotiated: client
                .negotiated
                .into_iter()
                .filter(|n| n.side == Side::Client)
                .chain(server.negotiated.into_iter().filter(|n| n.side == Side::Server))
                .collect(),
            allocator: client.allocator.or(server.allocator),
            threads: Vec::new(),
            build: client.build.or(server.build),
            // A split pair's loops are not judged at full speed (see `sampling::one_shot`).
            cpu_speed: None,
        }),
        (Ok(Reply::Ok(client)), Ok(Reply::Ok(server))) => Err((
            Status::Failed,
            format!(
                "the sides disagree on the work: {} iterations on the client, {} on the server",
                client.iterations, server.iterations
            ),
        )),
        (client, server) => {
            let echoes_peer = |r: &(Status, String, Cause)| r.2 == Cause::Peer;
            let (status, reason, _) = match (reason("client", &client), reason("server", &server)) {
                (Some(c), Some(s)) if echoes_peer(&c) && !echoes_peer(&s) => s,
                (Some(c), Some(s)) if !echoes_peer(&c) && !echoes_peer(&s) && c.0 == s.0 => {
                    (c.0, format!("{}; {}", c.1, s.1), Cause::Own)
                }
                (Some(c), _) => c,
                (None, Some(s)) => s,
                (None, None) => unreachable!("at least one side did not reply Ok"),
            };
            Err((status, reason))
        }
    }
}

/// An allocator a runner reported, or that it reported none.
fn describe(allocator: &Option<allocator::AllocatorInUse>) -> String {
    allocator.as_ref().map_or_else(|| "none reported".to_string(), ToString::to_string)
}

#[cfg(test)]
pub(crate) mod tests {
    use tlsbench_harness::protocol::{Metric, MetricValue};

    use super::*;

    /// A sample of rates on both sides (sampling's tests take it too).
    pub(crate) fn report(server_library: &str) -> SampleReport {
        let value = |side, value| MetricValue { side, metric: Metric::HandshakesPerS, value, seconds: 0.1 };
        SampleReport {
            client_library: "rustls 0.23.46 (ring 0.17.14)".into(),
            server_library: server_library.into(),
            iterations: 100,
            values: vec![value(Side::Client, 1000.0), value(Side::Server, 2000.0)],
            negotiated: Vec::new(),
            allocator: None,
            threads: Vec::new(),
            build: None,
            cpu_speed: None,
        }
    }

    #[test]
    fn split_sides_merge_into_one_report_and_a_failure_names_its_own_cause() {
        let side = |r: SampleReport, keep: Side| SampleReport {
            values: r.values.into_iter().filter(|v| v.side == keep).collect(),
            ..r
        };
        let client = side(SampleReport { server_library: String::new(), ..report("") }, Side::Client);
        let server =
            side(SampleReport { client_library: String::new(), ..report("OpenSSL 3.0.19 27 Jan 2026") }, Side::Server);
        let merged = merge_sides(Ok(Reply::Ok(client.clone())), Ok(Reply::Ok(server.clone()))).unwrap();
        assert_eq!(
            (merged.client_library.as_str(), merged.server_library.as_str()),
            ("rustls 0.23.46 (ring 0.17.14)", "OpenSSL 3.0.19 27 Jan 2026")
        );
        assert_eq!(merged.values.len(), 2);

        let uneven = SampleReport { iterations: 99, ..server.clone() };
        let (_, reason) = merge_sides(Ok(Reply::Ok(client.clone())), Ok(Reply::Ok(uneven))).unwrap_err();
        assert_eq!(reason, "the sides disagree on the work: 100 iterations on the client, 99 on the server");

        let gate_failed = "gate failed: server negotiated group secp256r1, the scenario asks for x25519";
        let gate = || Ok(Reply::failed(gate_failed));
        let peer = |reason: &str| Ok(Reply::Failed { reason: reason.into(), cause: Cause::Peer });
        let (status, reason) = merge_sides(peer("the peer stopped: gate failed: server ..."), gate()).unwrap_err();
        assert_eq!((status, reason), (Status::Failed, format!("server runner: {gate_failed}")));
        // The side whose reply says its failure is its peer's loses, whichever side and whatever its words.
        let (_, reason) =
            merge_sides(gate(), peer("the peer runner went away: Broken pipe (os error 32)")).unwrap_err();
        assert_eq!(reason, format!("client runner: {gate_failed}"));
        let (_, reason) = merge_sides(peer("stopped at the peer's word"), gate()).unwrap_err();
        assert_eq!(reason, format!("server runner: {gate_failed}"));
        // The words alone make no echo: two failures of their own are both given.
        let quoted = Ok(Reply::failed("client handshake failed: alert: the peer stopped: x"));
        let (_, reason) = merge_sides(quoted, gate()).unwrap_err();
        assert_eq!(
            reason,
            format!("client runner: client handshake failed: alert: the peer stopped: x; server runner: {gate_failed}")
        );
        // Both echoes (each side saw the other go): the client's.
        let (_, reason) = merge_sides(peer("the peer runner went away: a"), peer("the peer stopped: b")).unwrap_err();
        assert_eq!(reason, "client runner: the peer runner went away: a");
        let (_, reason) =
            merge_sides(Err("runner was killed by signal 9 (SIGKILL)".into()), Ok(Reply::Ok(server))).unwrap_err();
        assert_eq!(reason, "client runner: runner was killed by signal 9 (SIGKILL)");
    }

    #[test]
    fn a_failed_or_unreadable_reply_keeps_what_the_runner_printed_on_stderr() {
        let output = |stdout: &str, stderr: Option<&str>| {
            Ok(executor::Output { stdout: stdout.into(), stderr: stderr.map(String::from) })
        };
        let printed = Some("Got pk [4, 1, 2] | verif key extraction error 3");
        let failed = r#"{"status":"failed","reason":"client handshake failed: InvalidSignature"}"#;
        assert_eq!(
            reply(output(failed, printed)),
            Ok(Reply::failed(
                "client handshake failed: InvalidSignature (stderr: Got pk [4, 1, 2] | verif key extraction error 3)"
            ))
        );
        assert_eq!(reply(output(failed, None)), Ok(Reply::failed("client handshake failed: InvalidSignature")));
        // The cause stays beside the reason.
        let echo = r#"{"status":"failed","reason":"the peer stopped: x","cause":"peer"}"#;
        assert_eq!(
            reply(output(echo, printed)),
            Ok(Reply::Failed {
                reason: "the peer stopped: x (stderr: Got pk [4, 1, 2] | verif key extraction error 3)".into(),
                cause: Cause::Peer
            })
        );
        let unsupported = r#"{"status":"unsupported","reason":"x: TLS 1.2 not supported"}"#;
        assert_eq!(
            reply(output(unsupported, printed)),
            Ok(Reply::Unsupported { reason: "x: TLS 1.2 not supported".into() })
        );
        let garbled = reply(output("Got pk [4, 1, 2]\n{}", printed)).unwrap_err();
        assert!(garbled.starts_with("runner printed an unreadable reply: "), "{garbled}");
        assert!(garbled.ends_with(" (stderr: Got pk [4, 1, 2] | verif key extraction error 3)"), "{garbled}");
    }

    #[test]
    fn the_two_sides_of_a_split_pair_must_have_run_on_the_same_allocator() {
        use tlsbench_harness::allocator::AllocatorInUse;
        let used = |name, version: &str| Some(AllocatorInUse { name, version: version.into() });
        let with = |allocator| SampleReport { allocator, ..report("OpenSSL 3.0.19 27 Jan 2026") };
        let (_, reason) = merge_sides(
            Ok(Reply::Ok(with(used(Allocator::Jemalloc, "5.3.1")))),
            Ok(Reply::Ok(with(used(Allocator::Glibc, "2.36")))),
        )
        .unwrap_err();
        assert_eq!(
            reason,
            "the sides ran on different allocators: jemalloc 5.3.1 on the client, glibc 2.36 on the server"
        );
        // A runtime's side (Go's, Java's) reports none: the other side's is the pair's.
        let merged =
            merge_sides(Ok(Reply::Ok(with(None))), Ok(Reply::Ok(with(used(Allocator::Glibc, "2.36"))))).unwrap();
        assert_eq!(merged.allocator, used(Allocator::Glibc, "2.36"));
    }
}
