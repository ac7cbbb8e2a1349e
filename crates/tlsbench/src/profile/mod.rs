//! `tlsbench profile`: where one side's instructions and locks go. The side runs under callgrind
//! as the instructions measure runs it (collection on only inside its library calls); its call
//! graph becomes the top functions, each library's share, a flamegraph, and the functions that
//! take its locks and atomics (locks.rs).

mod folded;
mod libraries;
mod locks;
pub mod render;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use tlsbench_harness::driver::TRANSFER_WRITE_SIZE;
use tlsbench_harness::protocol::Reply;
use tlsbench_harness::{pki, Kind, Measure, Pki, Scenario, Side};

use crate::builds::{self, Build, Built, Compiler};
pub use crate::callgrind_file::CallGraph;
use crate::cli::ProfileArgs;
use crate::instructions::{self, Callgrind};
use crate::runner_command::RunnerCommand;
use crate::runners::Runners;
use crate::{executor, stacks, sync};
pub use libraries::{Class, StackLibraries};
pub use locks::{AtomicRow, SyncProfile, TakerRow};

/// What `profile` found, as written to its JSON file and read back by `report --profile`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub scenario: String,
    pub stack: String,
    pub peer: String,
    pub side: Side,
    /// The profiled side's library, as its runner reports it.
    pub library: String,
    pub iterations: u64,
    /// What one unit of work is (`handshake` or `MB`) and how many were done: the tables'
    /// counts are per unit.
    pub unit: String,
    pub units: f64,
    /// Instructions collected: the side's library calls over the measured iterations.
    pub total: u64,
    pub classes: Vec<ClassShare>,
    pub by_inclusive: Vec<FunctionRow>,
    pub by_exclusive: Vec<FunctionRow>,
    /// Instructions in functions without a name (callgrind shows their address): a shared
    /// library whose symbols are stripped and whose debug symbols are not installed.
    pub unnamed: u64,
    /// Instructions of the calls the flamegraph does not follow (below its cut-off), shown as
    /// one frame under their caller.
    pub flamegraph_pruned: u64,
    /// The flamegraph (inferno's SVG).
    pub svg: String,
    /// The build of the runner (`profile --build`) when it is not release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The C compiler of the runner's C libraries (`profile --compiler`) when it is not gcc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
    /// The side's locks, once checks, atomics and futex calls, and the functions behind them;
    /// absent from profiles written before they were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncProfile>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassShare {
    pub class: Class,
    /// What the class holds for this stack (libssl, rustls, ...).
    pub what: String,
    pub instructions: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionRow {
    pub name: String,
    /// The ELF object's file name (the runner, for what is linked statically).
    pub object: String,
    pub class: Class,
    pub inclusive: u64,
    pub exclusive: u64,
}

/// Who and what a profile is of, besides its call graph.
pub struct Subject {
    pub scenario: Scenario,
    pub stack: String,
    pub peer: String,
    pub side: Side,
    pub library: String,
    pub iterations: u64,
    pub built: Built,
}

impl Profile {
    /// The tables and flamegraph of `graph`, `top` functions per table. A graph that counts
    /// the sync measure's events (`tlsbench profile`'s) also gives the sync tables.
    pub fn new(subject: &Subject, graph: &CallGraph, top: usize) -> Result<Profile> {
        let libraries = StackLibraries::of(&subject.stack)
            .with_context(|| format!("no library table for stack `{}`", subject.stack))?;
        let sync = match graph.event("Ge") {
            Some(_) => Some(SyncProfile::of(graph, top)?),
            None => None,
        };
        // The flamegraph follows the lock functions' chains of callers, which callgrind kept
        // apart; the tables are of functions, whatever chain called them.
        let folded = folded::Folded::from_graph(graph);
        let graph = &graph.merge_contexts(sync::without_context);
        let total = graph.total();
        if total == 0 {
            bail!(
                "callgrind collected no instructions: \
                 the runner did not switch collection on around the {} side's calls",
                subject.side
            );
        }
        let classes: Vec<Class> = graph.functions.iter().map(|f| libraries.classify(f)).collect();
        let shares = Class::ALL
            .iter()
            .map(|&class| ClassShare {
                class,
                what: libraries.what(class).to_string(),
                instructions: graph
                    .functions
                    .iter()
                    .zip(&classes)
                    .filter(|(_, c)| **c == class)
                    .map(|(f, _)| f.exclusive)
                    .sum(),
            })
            .collect();
        let inclusive = graph.inclusive();
        let row = |i: usize| FunctionRow {
            name: graph.functions[i].name.clone(),
            object: graph.functions[i].object.rsplit('/').next().unwrap_or_default().to_string(),
            class: classes[i],
            inclusive: inclusive[i],
            exclusive: graph.functions[i].exclusive,
        };
        // The frames above the side's library calls (main, the driver, the stack adapter) hold
        // all of it or nearly: as rows of the inclusive table they would say nothing.
        let above_the_library = |i: usize| inclusive[i] == total || classes[i] == Class::Harness;
        let top_by = |key: &dyn Fn(usize) -> u64, leave_out: &dyn Fn(usize) -> bool| {
            let mut order: Vec<usize> = (0..graph.functions.len()).filter(|&i| key(i) > 0 && !leave_out(i)).collect();
            order.sort_by(|&a, &b| {
                key(b).cmp(&key(a)).then_with(|| graph.functions[a].name.cmp(&graph.functions[b].name))
            });
            order.into_iter().take(top).map(row).collect::<Vec<_>>()
        };
        let (unit, units) = match subject.scenario.kind {
            Kind::Transfer => ("MB", (subject.iterations * TRANSFER_WRITE_SIZE as u64) as f64 / 1e6),
            _ => ("handshake", subject.iterations as f64),
        };
        let title = format!(
            "{} {} side, {}",
            builds::label(&subject.stack, subject.built),
            subject.side,
            subject.scenario.name()
        );
        Ok(Profile {
            scenario: subject.scenario.name(),
            stack: subject.stack.clone(),
            peer: subject.peer.clone(),
            side: subject.side,
            library: subject.library.clone(),
            iterations: subject.iterations,
            unit: unit.to_string(),
            units,
            total,
            classes: shares,
            by_inclusive: top_by(&|i| inclusive[i], &above_the_library),
            by_exclusive: top_by(&|i| graph.functions[i].exclusive, &|_| false),
            unnamed: graph.functions.iter().filter(|f| f.name.starts_with("0x")).map(|f| f.exclusive).sum(),
            flamegraph_pruned: folded.pruned,
            svg: render::flamegraph(&title, &folded)?,
            build: (subject.built.build != Build::Release).then(|| subject.built.build.name().to_string()),
            compiler: (subject.built.compiler != Compiler::Gcc).then(|| subject.built.compiler.name().to_string()),
            sync,
        })
    }

    /// The profiled stack as `run` labels it: `STACK [BUILD]` in a build other than release,
    /// `STACK [clang]` with a compiler other than gcc.
    pub fn stack_label(&self) -> String {
        let mut label = self.stack.clone();
        for chosen in [&self.build, &self.compiler].into_iter().flatten() {
            label.push_str(&format!(" [{chosen}]"));
        }
        label
    }

    /// Reads a profile written by `tlsbench profile`.
    pub fn read(path: &Path) -> Result<Profile> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read profile {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a profile written by `tlsbench profile`", path.display()))
    }

    /// The tables as the terminal shows them.
    pub fn terminal(&self) -> String {
        render::terminal(self)
    }
}

/// `tlsbench profile`: runs the side, prints its tables, writes its flamegraph and JSON.
pub fn profile(args: ProfileArgs) -> Result<ExitCode> {
    let kinds = Measure::Instructions.kinds();
    if !kinds.contains(&args.scenario.kind) {
        let valid: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        bail!(
            "profile counts instructions, which covers scenarios of kind {} (not {})",
            valid.join(", "),
            args.scenario.kind.name()
        );
    }
    let peer = args.peer.clone().unwrap_or_else(|| args.stack.clone());
    let (client, server) = match args.side {
        Side::Client => (&args.stack, &peer),
        Side::Server => (&peer, &args.stack),
    };
    let built = args.build.built();
    let build = built.build;
    let runners = builds::one(Runners::find()?, built, &[args.stack.clone(), peer.clone()])?;
    let infos = runners.infos(&[args.stack.clone(), peer.clone()])?;
    for info in &infos {
        info.capabilities
            .check_measure(Measure::Instructions)
            .map_err(|reason| anyhow::anyhow!("{} cannot be profiled: {reason}", info.id))?;
    }
    let Some(runner) = runners.for_pair(client, server) else {
        let peers: Vec<&str> =
            stacks::all_ids().into_iter().filter(|p| runners.for_pair(&args.stack, p).is_some()).collect();
        bail!(
            "no runner holds both `{}` and `{peer}`: --peer names a stack that shares a runner with it (valid: {})",
            args.stack,
            peers.join(", ")
        );
    };
    let callgrind = Callgrind::find()?;
    let iterations = args.iterations.unwrap_or_else(|| instructions::iterations(args.scenario.kind));
    let data_dir = pki::default_data_dir();
    Pki::load_or_generate(&data_dir, &[args.scenario.key]).map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    // Scenario names hold dots (1.3): the extensions are appended, not set.
    // Another build's files beside release's, not over them.
    let suffix = builds::file_suffix(built);
    let file = |extension: &str| {
        args.out.join(format!("{}_{}_{}{suffix}.{extension}", args.stack, args.side, args.scenario.name()))
    };
    let out = file("callgrind");

    let scenario = args.scenario.name();
    let settings = instructions::counted(&args.scenario, Measure::Instructions, iterations, Some(args.side), &data_dir);
    let command = RunnerCommand::Sample { client, server, threads: None, contexts: None, cpus: None, settings };
    // The sync measure's events, and each lock function's chains of callers kept apart.
    let mut options: Vec<String> = sync::CALLGRIND_OPTIONS.iter().map(|o| o.to_string()).collect();
    options.extend(sync::separate_callers(locks::CALLER_DEPTH));
    // Every position written whole: the file is also for callgrind_annotate, whose 3.19 reads a
    // relative line number after an instruction's address wrong ("isn't numeric in subtraction").
    options.push("--compress-pos=no".into());
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let (program, argv) = callgrind.command(runner, &command, &out, &options, &[]);
    crate::output::stderr::line(format!(
        "profiling the {} side of {} ({iterations} iterations under callgrind)",
        args.side,
        builds::label(&args.stack, built)
    ));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let output = executor::call(&program, &argv, time_limit(args.scenario.kind, iterations))
        .with_context(|| format!("running {} under callgrind", runner.display()))?;
    let iterations = match serde_json::from_str::<Reply>(&output.stdout) {
        Ok(Reply::Ok(report)) => {
            builds::check_reply(build, report.build.as_deref()).map_err(anyhow::Error::msg)?;
            report.iterations
        }
        Ok(Reply::Unsupported { reason }) => bail!("{scenario} is unsupported by this pair: {reason}"),
        Ok(Reply::Failed { reason, .. } | Reply::NeedsNewProcess { reason }) => {
            bail!("{scenario} failed: {reason}{}", stderr_note(&output))
        }
        Err(e) => bail!("the runner printed an unreadable reply: {e}{}", stderr_note(&output)),
    };

    let text =
        std::fs::read_to_string(&out).with_context(|| format!("reading callgrind's output {}", out.display()))?;
    let graph = CallGraph::parse(&text)?;
    let library = infos.iter().find(|i| i.id == args.stack).map(|i| i.library.clone()).unwrap_or_default();
    let subject = Subject {
        scenario: args.scenario,
        stack: args.stack.clone(),
        peer,
        side: args.side,
        library,
        iterations,
        built,
    };
    let profile = Profile::new(&subject, &graph, args.top)?;
    crate::output::print(profile.terminal());
    let (svg, json) = (file("svg"), file("json"));
    std::fs::write(&svg, &profile.svg).with_context(|| format!("cannot write {}", svg.display()))?;
    std::fs::write(&json, serde_json::to_string_pretty(&profile)?)
        .with_context(|| format!("cannot write {}", json.display()))?;
    crate::output::stderr::line(format!("wrote {}, {} and {}", svg.display(), json.display(), out.display()));
    Ok(ExitCode::SUCCESS)
}

fn stderr_note(output: &executor::Output) -> String {
    output.stderr.as_ref().map(|s| format!(" (stderr: {s})")).unwrap_or_default()
}

/// How long the side may take under callgrind: valgrind's start (reading the runner's debug
/// information), then each iteration at callgrind's pace; RSA and ML-KEM key generation are
/// the slow ones, hence the margin.
fn time_limit(kind: Kind, iterations: u64) -> Duration {
    let per_iteration = match kind {
        Kind::Transfer => Duration::from_millis(200),
        _ => Duration::from_secs(3),
    };
    Duration::from_secs(60) + per_iteration * (iterations + instructions::WARMUP_ITERATIONS) as u32
}
