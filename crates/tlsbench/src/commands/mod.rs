//! What each subcommand does: `run` and `interop` (run.rs), the commands on stored runs
//! (stored.rs: runs, show, compare, report) and `list` (list.rs); `trace`, `io`, `profile`,
//! `serve`, `load` and `merge` live beside what they measure (io.rs, profile/, net.rs).

mod list;
mod run;
mod stored;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use anyhow::Result;

use crate::cli::{Command, ExportArgs};
use crate::export;
use crate::results::RunDocument;
pub(crate) use run::run_id;

/// Does what the command line asked: each subcommand's outcome, or the error to print.
pub fn execute(command: Command) -> Result<ExitCode> {
    match command {
        Command::Run(args) => run::run(args, View::Table),
        Command::Interop(args) => run::run(args, View::Matrix),
        Command::Runs(args) => stored::runs(&args.db).map(|()| ExitCode::SUCCESS),
        Command::Show(args) => stored::show(args),
        Command::Compare(args) => stored::compare(args),
        Command::Report(args) => stored::report(args),
        Command::Trace(args) => crate::io::trace(args),
        Command::Io(args) => crate::io::io(args),
        Command::Profile(args) => crate::profile::profile(args),
        Command::Serve(args) => crate::net::serve(args),
        Command::Load(args) => crate::net::load(args),
        Command::Merge(args) => crate::net::merge(args),
        Command::InjectNoise(args) => crate::noise::inject(args),
        Command::ProbeNoise => {
            let probe = crate::noise::probe();
            println!(
                "{} stretches of {:.0} ms: ±{:.1}% (half of p90 - p10), {:.0}% slowed, the rest ±{:.1}%; \
                 over CPU time ±{:.1}%",
                probe.stretches,
                probe.stretch_ms,
                probe.spread_percent,
                probe.slowed_percent,
                probe.kept_spread_percent,
                probe.cpu_spread_percent.unwrap_or(f64::NAN)
            );
            crate::output::print(crate::output::stderr::wrapped(&probe.line(6, 12)));
            Ok(ExitCode::SUCCESS)
        }
        Command::Cold(args) => crate::cold::cold(args),
        Command::List { what, stack } => list::list(what, stack.as_deref()).map(|()| ExitCode::SUCCESS),
    }
}

/// Set by Ctrl-C: the run stops before its next sample.
pub(crate) static STOP: AtomicBool = AtomicBool::new(false);

/// How `run` shows its results.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// One row per scenario and side, one column per pair.
    Table,
    /// Every client against every server: a matrix per scenario and side.
    Matrix,
}

pub(crate) fn write_exports(exports: &ExportArgs, doc: &RunDocument) -> Result<()> {
    let markdown = export::MarkdownExporter::default();
    let (bigger, smaller) = (
        export::GithubActionExporter { higher_is_better: true },
        export::GithubActionExporter { higher_is_better: false },
    );
    let all: [(&Option<PathBuf>, &dyn export::Exporter); 6] = [
        (&exports.export_json, &export::JsonExporter),
        (&exports.export_csv, &export::CsvExporter),
        (&exports.export_markdown, &markdown),
        (&exports.export_bencher, &export::BencherExporter),
        (&exports.export_github_action, &bigger),
        (&exports.export_github_action_smaller, &smaller),
    ];
    for (path, exporter) in all {
        if let Some(path) = path {
            export::write_to(path, exporter, doc)?;
        }
    }
    if let (Some(path), None) = (&exports.export_github_action, &exports.export_github_action_smaller) {
        let lower = doc.results.iter().filter(|c| c.better == "lower" && c.median.is_some()).count();
        if lower > 0 {
            crate::output::stderr::line(format!(
                "note: {} holds the metrics where higher is better; --export-github-action-smaller FILE exports the \
                 {lower} result(s) where lower is better (github-action-benchmark takes one direction per file)",
                path.display()
            ));
        }
    }
    Ok(())
}
