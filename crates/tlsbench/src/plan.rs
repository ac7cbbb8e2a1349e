//! Planning: which pairs and scenarios a run measures, and which cells a stack cannot do.

use std::time::Duration;

use anyhow::{bail, Result};
use tlsbench_harness::allocator::Allocator;
use tlsbench_harness::{Capabilities, KeyType, Kind, Measure, Scenario};

use crate::builds::{self, Build};
use crate::key::CellKey;
use crate::stacks::Runners;

/// How a run places the two sides of its pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProcessChoice {
    /// In one process where a runner holds both stacks, else split.
    Auto,
    /// Every pair split-process.
    Split,
    /// Every pair both ways, where it can run in one process (to compare the two methods).
    Both,
}

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
}

impl Process {
    pub fn name(self) -> &'static str {
        match self {
            Process::InProcess => "in-process",
            Process::Split => "split-process",
            Process::Tcp => "tcp",
        }
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
    /// The build whose runners measure the cell where the run chose builds (`--build`); None:
    /// release's, unlabelled.
    pub build: Option<Build>,
    /// `Err(reason)` when a stack does not support the scenario; such a cell is never run.
    pub support: Result<(), String>,
}

impl Cell {
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
            build: parsed("build", key.build.as_deref())?,
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
            build: self.build.map(|b| b.name().to_string()),
        }
    }

    /// How long a runner may take for one sample of this cell before it is killed: `timeout`
    /// (the user's `--timeout`, for what every sample does: start, load certificates, set up)
    /// plus a budget for the work this cell plans, so that a user who asks for 10,000 RSA-4096
    /// connections gets them. The budget is proportional to the work:
    /// - memory-N (heap and rss): N handshakes, each budgeted by its key type's cost;
    /// - time: each side's measured time (`min_time`) after its warmup, in turns, with room for
    ///   what happens outside the clocks and for the faster side needing more iterations;
    /// - instructions: valgrind's start and fixed iterations at its pace;
    /// - net: a JIT's warm-up (a Java side warms up before it serves or connects), the load's
    ///   time, then the io timeout twice over (its warm-up connection, and the connection in
    ///   flight when the time is up);
    /// - io and heap of one connection: nothing beyond `timeout`.
    pub fn time_limit(&self, timeout: Duration, min_time: Duration, warmup: Duration) -> Duration {
        let budget = match (self.measure, self.scenario.kind.connections()) {
            (Measure::Net, _) => warmup + min_time + tlsbench_harness::net::DEFAULT_IO_TIMEOUT * 2,
            (Measure::Instructions, _) => crate::instructions::budget(&self.scenario),
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

/// Scenarios whose names match any of the globs (each measure's focused defaults when there
/// are none) and that one of the measures applies to. Each glob must match something: a typo
/// should not silently shrink the run.
pub fn select_scenarios(globs: &[String], measures: &[Measure]) -> Result<Vec<Scenario>> {
    if globs.is_empty() {
        return Ok(crate::output::first_seen(measures.iter().flat_map(|&m| Scenario::defaults_for(m))));
    }
    let all: Vec<Scenario> =
        Scenario::all().into_iter().filter(|s| measures.iter().any(|m| m.applies_to(s.kind))).collect();
    let mut patterns = Vec::new();
    for glob in globs {
        let pattern =
            glob::Pattern::new(glob).map_err(|e| anyhow::anyhow!("scenario glob `{glob}` is malformed: {e}"))?;
        if !all.iter().any(|s| pattern.matches(&s.name())) {
            if let Some(kind) = Scenario::all().iter().find(|s| pattern.matches(&s.name())).map(|s| s.kind) {
                let names =
                    |m: &Measure| format!("{m}: {}", m.kinds().iter().map(|k| k.name()).collect::<Vec<_>>().join(", "));
                bail!(
                    "`{glob}` selects {kind} scenarios, which no measure of this run applies to ({}); add --measure",
                    Measure::ALL.iter().map(names).collect::<Vec<_>>().join("; ")
                );
            }
            bail!(
                "no scenario matches `{glob}` (names are kind_version_group_key_suite[_mtls|_cert-requested][_no-ems], \
                 kinds: {}; e.g. handshake-full_1.3_*; `tlsbench list scenarios` lists all {})",
                Kind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "),
                all.len()
            );
        }
        patterns.push(pattern);
    }
    Ok(all.into_iter().filter(|s| patterns.iter().any(|p| p.matches(&s.name()))).collect())
}

/// The allocator column(s) of a run: none (`[None]`, the runners' default, unlabelled) unless
/// `--allocator` asked for another than glibc's, or for several.
pub fn allocator_axis(chosen: &[Allocator]) -> Vec<Option<Allocator>> {
    let chosen = crate::output::first_seen(chosen.iter().copied());
    match chosen.as_slice() {
        [] | [Allocator::Glibc] => vec![None],
        _ => chosen.into_iter().map(Some).collect(),
    }
}

/// The thread counts of a run's time cells: one pair (`None`) always, since efficiency is
/// against one thread measured in the same run, then each N > 1 asked for, in increasing order.
pub fn thread_axis(chosen: &[u32]) -> Vec<Option<u32>> {
    let mut counts: Vec<u32> = chosen.iter().copied().filter(|&n| n > 1).collect();
    counts.sort_unstable();
    counts.dedup();
    std::iter::once(None).chain(counts.into_iter().map(Some)).collect()
}

/// Whether the stack `id` can be measured as `threads` pairs side by side: its runner says so,
/// and only in one process. Over TCP they are a server's workers, which every runner's `serve`
/// takes.
fn check_threads(id: &str, capabilities: &Capabilities, threads: Option<u32>, process: Process) -> Result<(), String> {
    let Some(threads) = threads else { return Ok(()) };
    match process {
        Process::Tcp => return Ok(()),
        Process::Split => {
            return Err(format!(
                "--threads runs {threads} pairs inside one runner, so it applies to in-process cells; a split-process pair runs \
                 one side per process"
            ))
        }
        Process::InProcess => {}
    }
    match capabilities.threads {
        true => Ok(()),
        false => Err(format!(
            "{id}: its runner measures one pair per sample (no `sample --threads`), so it takes no part in --threads"
        )),
    }
}

/// The build column(s) of a run: none (`[None]`, release's runners, unlabelled) unless
/// `--build` asked for another than release, or for several.
pub fn build_axis(chosen: &[Build]) -> Vec<Option<Build>> {
    let chosen = crate::output::first_seen(chosen.iter().copied());
    match chosen.as_slice() {
        [] | [Build::Release] => vec![None],
        _ => chosen.into_iter().map(Some).collect(),
    }
}

/// Whether the stack `id` has a runner in `build`: Go's and Java's are built by their own
/// toolchains, in release only. (A Rust stack missing from a build was refused before planning.)
fn check_build(id: &str, runners: &Runners, build: Option<Build>) -> Result<(), String> {
    match build {
        None | Some(Build::Release) => Ok(()),
        Some(build) => builds::runtime_only(runners, build, id).map_or(Ok(()), Err),
    }
}

/// Whether the stack `id` can run on `allocator`: its runner says which allocators its malloc
/// can switch to.
fn check_allocator(
    id: &str,
    capabilities: &Capabilities,
    allocator: Option<Allocator>,
    process: Process,
) -> Result<(), String> {
    let Some(allocator) = allocator else { return Ok(()) };
    if capabilities.allocators.is_empty() {
        return Err(format!(
            "{id}: allocates through its language's runtime, not through tlsbench's malloc, so it takes no part in the \
             allocator axis (--allocator)"
        ));
    }
    if !capabilities.allocators.contains(&allocator) {
        return Err(format!("{id}: its runner cannot switch its malloc to {allocator}"));
    }
    if process == Process::Tcp && allocator != Allocator::Glibc {
        return Err(
            "the network mode (--transport tcp) runs each runner on glibc's malloc; --allocator applies in memory"
                .into(),
        );
    }
    Ok(())
}

/// The cells of every measure, scenario it applies to, pair and process model. The process
/// choice is for time; io and heap are taken in one process, where one runner tags each side's
/// calls, rss in one process per side, since a process has one peak, and net over TCP. Support is what the
/// runners' `list` said of each stack, and of the peers each can work with.
#[allow(clippy::too_many_arguments, reason = "one list per axis; a cell key of all axes (issue 25) replaces them")]
pub fn cells(
    pairs: &[(String, String)],
    scenarios: &[Scenario],
    measures: &[Measure],
    runners: &Runners,
    choice: ProcessChoice,
    allocators: &[Option<Allocator>],
    threads: &[Option<u32>],
    builds: &[Option<Build>],
) -> Vec<Cell> {
    let capabilities = |id: &str| &runners.info(id).expect("every planned stack was discovered").capabilities;
    let mut cells = Vec::new();
    for &measure in measures {
        for &scenario in scenarios.iter().filter(|s| measure.applies_to(s.kind)) {
            for (client, server) in pairs {
                let (c, s) = ((client.as_str(), capabilities(client)), (server.as_str(), capabilities(server)));
                let support = tlsbench_harness::check_pair(c, s, &scenario)
                    .and_then(|()| c.1.check_measure(measure))
                    .and_then(|()| s.1.check_measure(measure))
                    .map_err(|e| e.to_string());
                let auto = Process::auto(runners, client, server);
                let processes: &[Process] = match (measure, choice, auto) {
                    (Measure::Rss, _, _) => &[Process::Split],
                    (Measure::Net, _, _) => &[Process::Tcp],
                    (Measure::Io | Measure::Heap, _, _) => &[Process::InProcess],
                    (_, ProcessChoice::Auto, _) => &[auto],
                    (_, ProcessChoice::Split, _) | (_, ProcessChoice::Both, Process::Split | Process::Tcp) => {
                        &[Process::Split]
                    }
                    (_, ProcessChoice::Both, Process::InProcess) => &[Process::InProcess, Process::Split],
                };
                // Threads are an axis of the time measure (see driver::check_threads), and
                // workers of the network mode's.
                let threads = match measure {
                    Measure::Time | Measure::Net => threads,
                    _ => &[None],
                };
                for &process in processes {
                    for &allocator in allocators {
                        for &threads in threads {
                            for &build in builds {
                                let support = support.clone().and_then(|()| match (process, auto) {
                                    (Process::InProcess, Process::Split) => Err(format!(
                                        "measure {measure} is taken with both sides in one process, and no runner holds both {client} and {server}"
                                    )),
                                    _ => Ok(()),
                                });
                                let support = support
                                    .and_then(|()| check_allocator(client, c.1, allocator, process))
                                    .and_then(|()| check_allocator(server, s.1, allocator, process))
                                    .and_then(|()| check_threads(client, c.1, threads, process))
                                    .and_then(|()| check_threads(server, s.1, threads, process))
                                    .and_then(|()| check_build(client, runners, build))
                                    .and_then(|()| check_build(server, runners, build));
                                let (client, server) = (client.clone(), server.clone());
                                cells.push(Cell {
                                    client,
                                    server,
                                    scenario,
                                    measure,
                                    process,
                                    allocator,
                                    threads,
                                    build,
                                    support,
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tlsbench_harness::protocol::StackInfo;
    use tlsbench_harness::{Capabilities, PeerLimit, Side, Version};

    use super::*;
    use crate::stacks::Runner;

    /// Runners as their `list` replies would describe them: each with its stacks.
    fn runners(families: &[(&str, &[(&str, &Capabilities)])]) -> Runners {
        let runner = |(name, stacks): &(&str, &[(&str, &Capabilities)])| Runner {
            path: Path::new("/runners").join(name),
            stacks: stacks.iter().map(|(id, caps)| StackInfo::new(*id, "x", (*caps).clone())).collect(),
            build: None,
        };
        Runners::new(families.iter().map(runner).collect(), Path::new("/runners"))
    }

    #[test]
    fn globs_select_and_a_glob_matching_nothing_is_an_error() {
        let time = [Measure::Time];
        assert_eq!(select_scenarios(&[], &time).unwrap(), Scenario::defaults());
        let some = select_scenarios(
            &["transfer_1.3_*".into(), "handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".into()],
            &time,
        )
        .unwrap();
        let names: Vec<String> = some.iter().map(Scenario::name).collect();
        // Three pinned transfers, one with each library's defaults, and the named handshake.
        assert_eq!(names.len(), 5, "{names:?}");
        assert!(names.contains(&"transfer_1.3_default_ecdsa-p256_default".to_string()), "{names:?}");
        assert!(names.contains(&"handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".to_string()));
        let err = select_scenarios(&["handshake_*".into()], &time).unwrap_err().to_string();
        assert!(err.starts_with("no scenario matches `handshake_*` (names are kind_version_group_key_suite"), "{err}");
        assert!(
            err.contains("kinds: handshake-full, handshake-resume-id, handshake-resume-ticket, transfer, io-profile,"),
            "{err}"
        );
        let err = select_scenarios(&["memory-1000_*".into()], &time).unwrap_err().to_string();
        assert!(err.starts_with("`memory-1000_*` selects memory-1000 scenarios, which no measure of this run applies to (time: handshake-full,"), "{err}");
        assert!(
            err.contains("; rss: memory-100, memory-1000, memory-10000;") && err.ends_with("; add --measure"),
            "{err}"
        );
    }

    #[test]
    fn a_stack_lacking_a_parameter_makes_its_cells_unsupported_with_the_reason() {
        let tls13_only = Capabilities { versions: vec![Version::Tls13], ..Capabilities::everything() };
        let infos = runners(&[(
            "tlsbench-runner-a",
            &[("openssl", &Capabilities::everything()), ("rustls-ring", &tls13_only)],
        )]);
        let scenarios =
            select_scenarios(&["handshake-full_1.?_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
        assert_eq!(scenarios.len(), 2);
        let pairs =
            [("openssl".to_string(), "openssl".to_string()), ("openssl".to_string(), "rustls-ring".to_string())];
        let cells = cells(&pairs, &scenarios, &[Measure::Time], &infos, ProcessChoice::Auto, &[None], &[None], &[None]);
        let unsupported: Vec<_> = cells.iter().filter_map(|c| c.support.clone().err()).collect();
        assert_eq!(unsupported, vec!["rustls-ring: TLS 1.2 not supported".to_string()]);
        assert!(cells.iter().all(|c| c.process == Process::InProcess));
    }

    #[test]
    fn each_allocator_is_a_cell_of_the_stacks_whose_runner_can_switch_to_it() {
        let interposed = Capabilities { allocators: Allocator::ALL.to_vec(), ..Capabilities::everything() };
        let (runtime, all) = (Capabilities::everything(), Capabilities::everything());
        let infos = runners(&[
            ("tlsbench-runner-a", &[("openssl", &interposed)]),
            ("tlsbench-runner-go", &[("go", &runtime)]),
            ("tlsbench-runner-b", &[("bertie", &all)]),
        ]);
        let scenarios =
            select_scenarios(&["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
        let pairs = [
            ("openssl".to_string(), "openssl".to_string()),
            ("go".to_string(), "go".to_string()),
            ("openssl".to_string(), "go".to_string()),
        ];
        // glibc alone is the default: no axis, no label, every stack as before.
        assert_eq!(allocator_axis(&[]), [None]);
        assert_eq!(allocator_axis(&[Allocator::Glibc, Allocator::Glibc]), [None]);
        let plain = cells(
            &pairs,
            &scenarios,
            &[Measure::Time],
            &infos,
            ProcessChoice::Auto,
            &allocator_axis(&[]),
            &[None],
            &[None],
        );
        assert!(plain.iter().all(|c| c.allocator.is_none() && c.support.is_ok()));

        let axis = allocator_axis(&[Allocator::Jemalloc, Allocator::Glibc, Allocator::Jemalloc]);
        assert_eq!(axis, [Some(Allocator::Jemalloc), Some(Allocator::Glibc)]);
        let planned = cells(&pairs, &scenarios, &[Measure::Time], &infos, ProcessChoice::Auto, &axis, &[None], &[None]);
        let support = |client: &str, server: &str, allocator| {
            planned
                .iter()
                .find(|c| c.client == client && c.server == server && c.allocator == Some(allocator))
                .expect("planned")
                .support
                .clone()
        };
        for allocator in [Allocator::Jemalloc, Allocator::Glibc] {
            assert_eq!(support("openssl", "openssl", allocator), Ok(()));
            let runtime = "go: allocates through its language's runtime, not through tlsbench's malloc, so it takes no part in the \
                           allocator axis (--allocator)";
            assert_eq!(support("go", "go", allocator), Err(runtime.into()));
            // Split across runners: each side's runner must switch.
            assert_eq!(support("openssl", "go", allocator), Err(runtime.into()));
        }
        assert_eq!(planned.len(), pairs.len() * axis.len());
        // A runner that declares some allocators and not this one.
        let glibc_only = Capabilities { allocators: vec![Allocator::Glibc], ..Capabilities::everything() };
        assert_eq!(
            check_allocator("x", &glibc_only, Some(Allocator::Mimalloc), Process::InProcess),
            Err("x: its runner cannot switch its malloc to mimalloc".into())
        );
        assert!(check_allocator("x", &interposed, Some(Allocator::Mimalloc), Process::Tcp)
            .unwrap_err()
            .contains("--transport tcp"));
        assert_eq!(check_allocator("x", &interposed, Some(Allocator::Glibc), Process::Tcp), Ok(()));
    }

    #[test]
    fn thread_counts_are_time_cells_of_the_stacks_whose_runner_takes_threads() {
        // One thread is always in the axis: efficiency is against it, in the same run.
        assert_eq!(thread_axis(&[]), [None]);
        assert_eq!(thread_axis(&[1]), [None]);
        assert_eq!(thread_axis(&[4, 2, 1, 2]), [None, Some(2), Some(4)]);

        let threads = Capabilities { threads: true, ..Capabilities::everything() };
        let runtime = Capabilities::everything();
        let infos = runners(&[
            ("tlsbench-runner-a", &[("openssl", &threads), ("rustls-ring", &threads)]),
            ("tlsbench-runner-go", &[("go", &runtime)]),
        ]);
        let scenarios = select_scenarios(
            &["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()],
            &[Measure::Time, Measure::Heap],
        )
        .unwrap();
        let pairs = [
            ("openssl".to_string(), "openssl".to_string()),
            ("go".to_string(), "go".to_string()),
            ("openssl".to_string(), "go".to_string()),
        ];
        let planned = cells(
            &pairs,
            &scenarios,
            &[Measure::Time, Measure::Heap],
            &infos,
            ProcessChoice::Both,
            &[None],
            &thread_axis(&[2]),
            &[None],
        );
        let support = |client: &str, server: &str, process, threads| {
            let found = planned.iter().find(|c| {
                (&c.client[..], &c.server[..], c.process, c.threads, c.measure)
                    == (client, server, process, threads, Measure::Time)
            });
            found.expect("planned").support.clone()
        };
        assert_eq!(support("openssl", "openssl", Process::InProcess, None), Ok(()));
        assert_eq!(support("openssl", "openssl", Process::InProcess, Some(2)), Ok(()));
        assert_eq!(
            support("openssl", "openssl", Process::Split, Some(2)),
            Err("--threads runs 2 pairs inside one runner, so it applies to in-process cells; a split-process pair runs one side per process".into())
        );
        assert_eq!(support("go", "go", Process::Split, None), Ok(()));
        assert!(support("go", "go", Process::Split, Some(2)).unwrap_err().contains("in-process cells"));
        assert!(check_threads("go", &runtime, Some(2), Process::InProcess)
            .unwrap_err()
            .starts_with("go: its runner measures one pair per sample"));
        // Over TCP, threads are the server's workers: every runner serves with several.
        assert_eq!(check_threads("go", &runtime, Some(2), Process::Tcp), Ok(()));
        // Heap is taken with one pair: no thread variants.
        assert!(planned.iter().filter(|c| c.measure == Measure::Heap).all(|c| c.threads.is_none()));
        assert_eq!(planned.iter().filter(|c| c.measure == Measure::Heap).count(), pairs.len());
    }

    #[test]
    fn each_build_is_a_cell_and_a_runtime_stack_is_n_a_outside_release() {
        let all = Capabilities::everything();
        let mut infos =
            runners(&[("tlsbench-runner-a", &[("openssl", &all)]), ("tlsbench-runner-go", &[("go", &all)])]);
        // The Rust runner says its build; Go's says none.
        let built = Runner {
            path: Path::new("/runners/tlsbench-runner-a").into(),
            stacks: infos.info("openssl").into_iter().cloned().collect(),
            build: Some(tlsbench_harness::build::BuildInfo {
                name: "release".into(),
                profile: "release".into(),
                opt_level: "3".into(),
                rustflags: String::new(),
                cflags: String::new(),
                cxxflags: String::new(),
            }),
        };
        let go = infos.all().iter().find(|r| r.path.ends_with("tlsbench-runner-go")).unwrap().clone();
        infos = Runners::new(vec![built, go], Path::new("/runners"));
        let scenarios =
            select_scenarios(&["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
        let pairs = [("openssl".to_string(), "openssl".to_string()), ("go".to_string(), "go".to_string())];
        assert_eq!(build_axis(&[]), [None]);
        assert_eq!(build_axis(&[Build::Release]), [None]);
        let axis = build_axis(&[Build::Release, Build::Native, Build::Release]);
        assert_eq!(axis, [Some(Build::Release), Some(Build::Native)]);
        let planned = cells(&pairs, &scenarios, &[Measure::Time], &infos, ProcessChoice::Auto, &[None], &[None], &axis);
        assert_eq!(planned.len(), pairs.len() * axis.len());
        let support = |id: &str, build| {
            planned.iter().find(|c| c.client == id && c.build == Some(build)).expect("planned").support.clone()
        };
        assert_eq!(support("openssl", Build::Release), Ok(()));
        assert_eq!(support("openssl", Build::Native), Ok(()));
        assert_eq!(support("go", Build::Release), Ok(()));
        let reason = support("go", Build::Native).unwrap_err();
        assert!(reason.starts_with("go: its runner (tlsbench-runner-go) is built by its own toolchain"), "{reason}");
    }

    #[test]
    fn both_process_models_give_each_pair_twice_where_it_can_share_a_process() {
        let all = Capabilities::everything();
        let infos = runners(&[("tlsbench-runner-a", &[("openssl", &all), ("rustls-ring", &all)])]);
        let scenarios =
            select_scenarios(&["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
        let pairs = [("openssl".to_string(), "rustls-ring".to_string())];
        let processes = |choice| {
            cells(&pairs, &scenarios, &[Measure::Time], &infos, choice, &[None], &[None], &[None])
                .iter()
                .map(|c| c.process)
                .collect::<Vec<_>>()
        };
        assert_eq!(processes(ProcessChoice::Auto), [Process::InProcess]);
        assert_eq!(processes(ProcessChoice::Split), [Process::Split]);
        assert_eq!(processes(ProcessChoice::Both), [Process::InProcess, Process::Split]);
    }

    #[test]
    fn each_measure_gets_the_scenarios_it_applies_to_in_its_own_process_model() {
        let all = Capabilities::everything();
        let infos =
            runners(&[("tlsbench-runner-a", &[("openssl", &all)]), ("tlsbench-runner-b", &[("boringssl", &all)])]);
        let measures = [Measure::Time, Measure::Io, Measure::Heap, Measure::Rss];
        let globs = ["*_1.3_x25519_ecdsa-p256_aes-128-gcm".to_string()];
        let scenarios = select_scenarios(&globs, &measures).unwrap();
        let pairs = [("openssl".to_string(), "openssl".to_string()), ("openssl".to_string(), "boringssl".to_string())];
        let cells = cells(&pairs, &scenarios, &measures, &infos, ProcessChoice::Both, &[None], &[None], &[None]);
        let planned = |measure: Measure| {
            let mut kinds: Vec<&str> =
                cells.iter().filter(|c| c.measure == measure).map(|c| c.scenario.kind.name()).collect();
            kinds.dedup();
            kinds
        };
        assert_eq!(planned(Measure::Io), ["handshake-full", "handshake-resume-ticket", "io-profile"]);
        assert_eq!(planned(Measure::Rss), ["memory-100", "memory-1000", "memory-10000"]);
        assert!(cells.iter().filter(|c| c.measure == Measure::Rss).all(|c| c.process == Process::Split));
        let heap_across_families: Vec<_> = cells
            .iter()
            .filter(|c| c.measure == Measure::Heap && c.server == "boringssl")
            .map(|c| c.support.clone())
            .collect();
        assert!(!heap_across_families.is_empty());
        assert!(heap_across_families.iter().all(|s| s
            == &Err(
                "measure heap is taken with both sides in one process, and no runner holds both openssl and boringssl"
                    .into()
            )));
    }

    #[test]
    fn the_net_measure_takes_handshakes_over_tcp_whatever_the_process_choice() {
        let all = Capabilities::everything();
        let infos =
            runners(&[("tlsbench-runner-a", &[("openssl", &all)]), ("tlsbench-runner-b", &[("boringssl", &all)])]);
        let scenarios =
            select_scenarios(&["*_1.3_x25519_ecdsa-p256_aes-128-gcm".to_string()], &[Measure::Net]).unwrap();
        assert!(
            !scenarios.is_empty()
                && scenarios.iter().all(|s| matches!(
                    s.kind,
                    Kind::HandshakeFull | Kind::HandshakeResumeId | Kind::HandshakeResumeTicket
                )),
            "{scenarios:?}"
        );
        let pairs = [("openssl".to_string(), "boringssl".to_string())];
        for choice in [ProcessChoice::Auto, ProcessChoice::Both] {
            let cells = cells(&pairs, &scenarios, &[Measure::Net], &infos, choice, &[None], &[None], &[None]);
            // Across link families too: each side is its own runner.
            assert!(cells.iter().all(|c| c.process == Process::Tcp && c.support.is_ok()));
        }
    }

    #[test]
    fn a_cell_is_given_time_in_proportion_to_its_planned_work_on_top_of_the_timeout() {
        let timeout = Duration::from_secs(120);
        let (min_time, warmup) = (Duration::from_millis(100), Duration::from_millis(50));
        let cell = |measure: Measure, scenario: &str| Cell {
            client: "openssl".into(),
            server: "openssl".into(),
            scenario: scenario.parse().unwrap(),
            measure,
            process: Process::InProcess,
            allocator: None,
            threads: None,
            build: None,
            support: Ok(()),
        };
        let memory = |n: usize, key: &str| cell(Measure::Heap, &format!("memory-{n}_1.3_x25519_{key}_aes-128-gcm"));
        let budget = |c: &Cell| c.time_limit(timeout, min_time, warmup) - timeout;

        // 10,000 RSA-4096 connections get more time than 100 ECDSA ones, and the same time on
        // top of any --timeout: the user's limit still applies.
        let (big, small) = (memory(10_000, "rsa-4096"), memory(100, "ecdsa-p256"));
        assert!(big.time_limit(timeout, min_time, warmup) > small.time_limit(timeout, min_time, warmup));
        for user in [Duration::from_secs(1), Duration::from_secs(600)] {
            assert_eq!(big.time_limit(user, min_time, warmup) - user, budget(&big));
        }
        // In proportion to the connections, and growing with the key's cost.
        for key in ["ecdsa-p256", "ed25519", "ecdsa-p384", "rsa-2048", "rsa-3072", "rsa-4096"] {
            assert_eq!(budget(&memory(10_000, key)), budget(&memory(1_000, key)) * 10, "{key}");
            assert_eq!(budget(&memory(1_000, key)), budget(&memory(100, key)) * 10, "{key}");
            let rss = Cell { measure: Measure::Rss, process: Process::Split, ..memory(1_000, key) };
            assert_eq!(budget(&rss), budget(&memory(1_000, key)), "the same connections, one process per side");
        }
        let costs: Vec<Duration> =
            ["ecdsa-p256", "rsa-2048", "rsa-3072", "rsa-4096"].map(|k| budget(&memory(100, k))).into();
        assert!(costs.windows(2).all(|w| w[0] < w[1]), "{costs:?}");

        // A time sample is given more than both sides' measured time and warmup, and more when
        // they are longer; a one-connection io sample, the --timeout alone.
        let handshakes = cell(Measure::Time, "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
        let long = Duration::from_secs(5);
        assert!(handshakes.time_limit(timeout, long, warmup) > timeout + (long + warmup) * 2);
        assert!(handshakes.time_limit(timeout, long, warmup) > handshakes.time_limit(timeout, min_time, warmup));
        let io = cell(Measure::Io, "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
        assert_eq!(io.time_limit(timeout, long, warmup), timeout);
    }

    #[test]
    fn a_server_that_only_its_own_client_can_complete_makes_its_other_pairs_unsupported_with_the_reason() {
        let reason = "bertie: its server sends the leaf certificate without the intermediate";
        let limit = PeerLimit { side: Side::Server, only: vec!["bertie".into()], reason: reason.into() };
        let bertie =
            Capabilities { versions: vec![Version::Tls13], peer_limits: vec![limit], ..Capabilities::everything() };
        let all = Capabilities::everything();
        let infos = runners(&[("tlsbench-runner-a", &[("openssl", &all), ("bertie", &bertie)])]);
        let scenarios =
            select_scenarios(&["handshake-full_1.?_x25519_ecdsa-p256_aes-128-gcm".into()], &[Measure::Time]).unwrap();
        let ids = ["openssl", "bertie"];
        let pairs: Vec<(String, String)> =
            ids.iter().flat_map(|c| ids.map(|s| (c.to_string(), s.to_string()))).collect();
        let support = |client: &str, server: &str, version: &str| {
            let cells =
                cells(&pairs, &scenarios, &[Measure::Time], &infos, ProcessChoice::Auto, &[None], &[None], &[None]);
            let cell = cells
                .into_iter()
                .find(|c| c.client == client && c.server == server && c.scenario.version.to_string() == version);
            cell.expect("planned").support
        };
        assert_eq!(support("openssl", "bertie", "1.3"), Err(reason.into()));
        assert_eq!(support("bertie", "bertie", "1.3"), Ok(()));
        assert_eq!(support("bertie", "openssl", "1.3"), Ok(()), "a limit of bertie's server, not its client");
        // A scenario the stack cannot do at all names that reason, not the peer's.
        assert_eq!(support("openssl", "bertie", "1.2"), Err("bertie: TLS 1.2 not supported".into()));
    }
}
