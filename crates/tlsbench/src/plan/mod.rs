//! Planning: which pairs and scenarios a run measures, and which cells a stack cannot do. A
//! cell, where its sides run and the time a sample of it may take are cell.rs.

mod cell;
pub mod default_stacks;
#[cfg(test)]
mod tests;

use anyhow::{bail, Result};
use tlsbench_harness::allocator::Allocator;
use tlsbench_harness::{Capabilities, Contexts, Kind, Measure, Scenario};

use crate::builds::{self, Build, Built, Compiler};
use crate::order::first_seen;
use crate::runners::Runners;
pub use cell::{Cell, Process};

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

/// What the threads of `--threads N` share (`--contexts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ContextsChoice {
    /// Each thread its own client and server configs (rustls-bench's method; the default).
    Own,
    /// One server config for all threads' servers and one client config for all their clients,
    /// as a multi-threaded server shares its context (session cache, ticket keys).
    Shared,
    /// Both, each a row of its own, to compare them.
    Both,
}

/// Scenarios whose names match any of the globs (each measure's focused defaults when there
/// are none) and that one of the measures applies to. Each glob must match something: a typo
/// should not silently shrink the run.
pub fn select_scenarios(globs: &[String], measures: &[Measure]) -> Result<Vec<Scenario>> {
    if globs.is_empty() {
        return Ok(first_seen(measures.iter().flat_map(|&m| Scenario::defaults_for(m))));
    }
    let all: Vec<Scenario> =
        Scenario::all().into_iter().filter(|s| measures.iter().any(|m| m.applies_to(s.kind))).collect();
    let (mut patterns, mut focused) = (Vec::new(), Vec::new());
    for glob in globs {
        // A context kind's bare name: its focused set (docs/scenarios.md#contexts).
        if let Some(set) = glob.parse::<Kind>().ok().and_then(Scenario::focused_contexts) {
            if !measures.iter().any(|m| m.applies_to(set[0].kind)) {
                bail!("`{glob}` is measured by time, instructions or heap: add --measure");
            }
            focused.extend(set);
            continue;
        }
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
    Ok(all.into_iter().filter(|s| focused.contains(s) || patterns.iter().any(|p| p.matches(&s.name()))).collect())
}

/// The allocator column(s) of a run: none (`[None]`, the runners' default, unlabelled) unless
/// `--allocator` asked for another than glibc's, or for several.
pub fn allocator_axis(chosen: &[Allocator]) -> Vec<Option<Allocator>> {
    let chosen = first_seen(chosen.iter().copied());
    match chosen.as_slice() {
        [] | [Allocator::Glibc] => vec![None],
        _ => chosen.into_iter().map(Some).collect(),
    }
}

/// The thread counts of a run's time cells, each with what its threads share: one pair
/// (`None`) always, since efficiency is against one thread measured in the same run, then each
/// N > 1 asked for, in increasing order, with their own configs and/or shared ones as `contexts`
/// chose (None: not chosen, their own, unlabelled).
pub fn thread_axis(chosen: &[u32], contexts: Option<ContextsChoice>) -> Vec<(Option<u32>, Option<Contexts>)> {
    let mut counts: Vec<u32> = chosen.iter().copied().filter(|&n| n > 1).collect();
    counts.sort_unstable();
    counts.dedup();
    let contexts: &[Option<Contexts>] = match contexts {
        None => &[None],
        Some(ContextsChoice::Own) => &[Some(Contexts::Own)],
        Some(ContextsChoice::Shared) => &[Some(Contexts::Shared)],
        Some(ContextsChoice::Both) => &[Some(Contexts::Own), Some(Contexts::Shared)],
    };
    let threads = counts.into_iter().flat_map(|n| contexts.iter().map(move |&contexts| (Some(n), contexts)));
    std::iter::once((None, None)).chain(threads).collect()
}

/// Whether the stack `id` can be measured as `threads` pairs side by side, sharing what
/// `contexts` says: its runner says so, and only in one process. Over TCP they are a server's
/// workers, which every runner's `serve` takes.
fn check_threads(
    id: &str,
    capabilities: &Capabilities,
    (threads, contexts): (Option<u32>, Option<Contexts>),
    process: Process,
) -> Result<(), String> {
    let Some(threads) = threads else { return Ok(()) };
    match process {
        Process::Tcp | Process::TcpPeak => return Ok(()),
        Process::Split => {
            return Err(format!(
                "--threads runs {threads} pairs inside one runner, so it applies to in-process cells; \
                 a split-process pair runs one side per process"
            ))
        }
        Process::InProcess => {}
    }
    if !capabilities.threads {
        return Err(format!(
            "{id}: its runner measures one pair per sample (no `sample --threads`), so it takes no part in --threads"
        ));
    }
    match (contexts, capabilities.shared_contexts) {
        (Some(_), false) => Err(format!(
            "{id}: its runner gives each thread its own configs and takes no `sample --contexts` (built before the \
             option: rebuild it), so it takes no part in --contexts"
        )),
        _ => Ok(()),
    }
}

/// The build columns of a run, each builds × compilers: a build, none (release's runners,
/// unlabelled) unless `--build` asked for another than release or for several; a C compiler,
/// none (gcc, unlabelled) unless `--compiler` asked for clang or for both.
pub fn build_axis(builds: &[Build], compilers: &[Compiler]) -> Vec<(Option<Build>, Option<Compiler>)> {
    fn axis<T: Copy + PartialEq + std::hash::Hash + Eq + Default>(chosen: &[T]) -> Vec<Option<T>> {
        let chosen = first_seen(chosen.iter().copied());
        match chosen.as_slice() {
            [] => vec![None],
            [only] if *only == T::default() => vec![None],
            _ => chosen.into_iter().map(Some).collect(),
        }
    }
    let compilers = axis(compilers);
    axis(builds).into_iter().flat_map(|build| compilers.iter().map(move |&compiler| (build, compiler))).collect()
}

/// Whether the stack `id` has a runner in the build: Go's and Java's are built by their own
/// toolchains, in release with gcc only. (A Rust stack missing from a build was refused before
/// planning.)
fn check_build(id: &str, runners: &Runners, build: Option<Build>, compiler: Option<Compiler>) -> Result<(), String> {
    let built = Built::new(build.unwrap_or_default(), compiler.unwrap_or_default());
    match built.is_default() {
        true => Ok(()),
        false => builds::runtime_only(runners, built, id).map_or(Ok(()), Err),
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
    if process.is_tcp() && allocator != Allocator::Glibc {
        return Err(
            "the network mode (--transport tcp) runs each runner on glibc's malloc; --allocator applies in memory"
                .into(),
        );
    }
    Ok(())
}

/// The cells of every measure, scenario it applies to, pair and process model. The process
/// choice is for time; io and heap are taken in one process, where one runner tags each side's
/// calls, rss in one process per side (a context's in one), since a process has one peak, and net
/// over TCP. Support is what the runners' `list` said of each stack, and of the peers each can work
/// with.
#[allow(clippy::too_many_arguments, reason = "one list per axis; a cell key of all axes (issue 25) replaces them")]
pub fn cells(
    pairs: &[(String, String)],
    scenarios: &[Scenario],
    measures: &[Measure],
    runners: &Runners,
    choice: ProcessChoice,
    allocators: &[Option<Allocator>],
    threads: &[(Option<u32>, Option<Contexts>)],
    builds: &[(Option<Build>, Option<Compiler>)],
) -> Vec<Cell> {
    let capabilities = |id: &str| &runners.info(id).expect("every planned stack was discovered").capabilities;
    let mut cells = Vec::new();
    for &measure in measures {
        for &scenario in scenarios.iter().filter(|s| measure.applies_to(s.kind)) {
            for (client, server) in pairs {
                // A context is one stack's: measured with itself as the gate's peer, in one process.
                if scenario.kind.context_side().is_some() && client != server {
                    continue;
                }
                let (c, s) = ((client.as_str(), capabilities(client)), (server.as_str(), capabilities(server)));
                let support = tlsbench_harness::check_pair(c, s, &scenario)
                    .and_then(|()| c.1.check_measure(measure))
                    .and_then(|()| s.1.check_measure(measure))
                    .map_err(|e| e.to_string());
                let auto = Process::auto(runners, client, server);
                let processes: &[Process] = match (measure, choice, auto) {
                    // One stack's context, under any measure: one process (rss: a fresh one per sample).
                    _ if scenario.kind.context_side().is_some() => &[Process::InProcess],
                    (Measure::Rss, _, _) => &[Process::Split],
                    (Measure::Net, _, _) => &[Process::Tcp],
                    (Measure::Io | Measure::Heap, _, _) => &[Process::InProcess],
                    (_, ProcessChoice::Auto, _) => &[auto],
                    (_, ProcessChoice::Split, _)
                    | (_, ProcessChoice::Both, Process::Split | Process::Tcp | Process::TcpPeak) => &[Process::Split],
                    (_, ProcessChoice::Both, Process::InProcess) => &[Process::InProcess, Process::Split],
                };
                // Threads are an axis of the time measure (see driver::check_threads), and
                // workers of the network mode's.
                let threads = match measure {
                    Measure::Time | Measure::Net => threads,
                    _ => &[(None, None)],
                };
                for &process in processes {
                    for &allocator in allocators {
                        for &(threads, contexts) in threads {
                            for &(build, compiler) in builds {
                                let support = support.clone().and_then(|()| match (process, auto) {
                                    (Process::InProcess, Process::Split) => Err(format!(
                                        "measure {measure} is taken with both sides in one process, \
                                         and no runner holds both {client} and {server}"
                                    )),
                                    _ => Ok(()),
                                });
                                let support = support
                                    .and_then(|()| check_allocator(client, c.1, allocator, process))
                                    .and_then(|()| check_allocator(server, s.1, allocator, process))
                                    .and_then(|()| check_threads(client, c.1, (threads, contexts), process))
                                    .and_then(|()| check_threads(server, s.1, (threads, contexts), process))
                                    .and_then(|()| check_build(client, runners, build, compiler))
                                    .and_then(|()| check_build(server, runners, build, compiler));
                                let (client, server) = (client.clone(), server.clone());
                                cells.push(Cell {
                                    client,
                                    server,
                                    scenario,
                                    measure,
                                    process,
                                    allocator,
                                    threads,
                                    contexts,
                                    build,
                                    compiler,
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
