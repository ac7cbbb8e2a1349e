//! tlsbench: measures TLS implementations the same way and reports how they compare.

mod cli;
mod compare;
mod environment;
mod executor;
mod export;
mod output;
mod plan;
mod results;
mod run;
mod stacks;
mod stats;
mod store;

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use clap::Parser;
use tlsbench_harness::{pki, Pki, Scenario};

use cli::{Cli, Command, ListWhat, RunArgs};
use results::{RunDocument, RunInfo, Status, SCHEMA_VERSION};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{} (see --help)", one_line(&e.render().to_string()));
            return ExitCode::from(2);
        }
    };
    let outcome = match cli.command {
        Command::Run(args) => run(args),
        Command::List { what, stack } => list(what, stack.as_deref()).map(|()| ExitCode::SUCCESS),
    };
    outcome.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        ExitCode::FAILURE
    })
}

fn run(args: RunArgs) -> Result<ExitCode> {
    let started = SystemTime::now();
    let pairs = match (&args.client, &args.server) {
        (Some(client), Some(server)) => vec![(client.clone(), server.clone())],
        _ => {
            let ids = match args.stacks.is_empty() {
                true => stacks::all_ids().into_iter().map(String::from).collect(),
                false => dedup(args.stacks.clone()),
            };
            ids.into_iter().map(|id| (id.clone(), id)).collect()
        }
    };
    let scenarios = plan::select_scenarios(&args.scenarios)?;
    let data_dir = pki::default_data_dir();
    // Generated here, once, rather than by runners racing each other.
    let keys = dedup(scenarios.iter().map(|s| s.key).collect());
    Pki::load_or_generate(&data_dir, &keys).map_err(anyhow::Error::msg)?;
    let runner_dir = stacks::runner_dir()?;
    let ids = dedup(pairs.iter().flat_map(|(c, s)| [c.clone(), s.clone()]).collect());
    let infos = stacks::discover(&runner_dir, &ids)?;
    let cells = plan::cells(&pairs, &scenarios, &infos);

    let settings = run::Settings {
        samples: args.samples.map(|n| n as usize).unwrap_or(if args.quick { 6 } else { 10 }),
        min_time_ms: args.min_time_ms.unwrap_or(if args.quick { 20 } else { 100 }),
        warmup_ms: args.warmup_ms.unwrap_or(if args.quick { 10 } else { 50 }),
        timeout: Duration::from_secs_f64(args.timeout),
        data_dir,
        runner_dir,
    };
    let mut progress = output::progress::Progress::new(run::planned_samples(&cells, &settings), settings.samples);
    let results = run::measure(&cells, &settings, &mut progress);
    progress.finish();

    let doc = RunDocument {
        schema_version: SCHEMA_VERSION,
        run: RunInfo {
            id: run_id(started),
            started: humantime::format_rfc3339_seconds(started).to_string(),
            tlsbench_version: env!("CARGO_PKG_VERSION").to_string(),
            command_line: std::env::args().collect(),
            environment: environment::detect(),
            stacks: infos,
            samples: settings.samples,
            min_time_ms: settings.min_time_ms,
            warmup_ms: settings.warmup_ms,
        },
        results,
    };
    print!("{}", output::table::render(&doc));
    let exports: [(&Option<_>, &dyn export::Exporter); 3] = [
        (&args.export_json, &export::JsonExporter),
        (&args.export_csv, &export::CsvExporter),
        (&args.export_markdown, &export::MarkdownExporter),
    ];
    for (path, exporter) in exports {
        if let Some(path) = path {
            export::write_to(path, exporter, &doc)?;
        }
    }
    let failed = doc.results.iter().filter(|r| r.status == Status::Failed).count();
    if failed > 0 {
        eprintln!("{failed} result(s) failed; the reasons are listed under the table");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn list(what: ListWhat, stack: Option<&str>) -> Result<()> {
    match (what, stack) {
        (ListWhat::Scenarios, None) => {
            for scenario in Scenario::all() {
                println!("{scenario}");
            }
        }
        (ListWhat::Scenarios, Some(id)) => {
            let info = stacks::discover(&stacks::runner_dir()?, &[id.to_string()])?.remove(0);
            let defaults = Scenario::defaults();
            for scenario in Scenario::all() {
                let support = match info.capabilities.check(id, &scenario) {
                    Ok(()) if defaults.contains(&scenario) => "supported (in the default run)".to_string(),
                    Ok(()) => "supported".to_string(),
                    Err(reason) => format!("unsupported: {reason}"),
                };
                println!("{:<72} {support}", scenario.name());
            }
        }
        (ListWhat::Stacks, Some(_)) => bail!("--stack goes with `tlsbench list scenarios`"),
        (ListWhat::Stacks, None) => {
            let ids: Vec<String> = stacks::all_ids().into_iter().map(String::from).collect();
            let infos = stacks::discover(&stacks::runner_dir()?, &ids).context("listing the stacks")?;
            print!("{}", output::stack_list::render(&infos));
        }
    }
    Ok(())
}

/// A run id that sorts by time: `20261122T031500Z-3fa2`.
fn run_id(started: SystemTime) -> String {
    let stamp: String = humantime::format_rfc3339_seconds(started).to_string().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    format!("{stamp}-{:04x}", fastrand::u16(..))
}

/// Clap's error as one line: its first paragraph (the message and, for a missing argument,
/// the indented lines naming it), without the usage and tips that follow.
fn one_line(rendered: &str) -> String {
    let paragraph: Vec<&str> = rendered.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    paragraph.join(" ")
}

/// Keeps the first occurrence of each item, in order.
fn dedup<T: PartialEq>(items: Vec<T>) -> Vec<T> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}
