//! The command line (DESIGN.md, "Command line").

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::stacks;

#[derive(Parser)]
#[command(name = "tlsbench", version, about = "Benchmark and compare TLS implementations with one method")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Measure a matrix of stacks and scenarios, print a table, export the results.
    Run(RunArgs),
    /// List the stacks (with their library versions and what each supports) or the scenarios.
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
    /// A stack to measure against itself; repeat for several. Default: all stacks.
    #[arg(long = "stack", value_name = "ID", value_parser = stacks::parse_id, conflicts_with_all = ["client", "server"])]
    pub stacks: Vec<String>,
    /// The client stack of an interop pair (with --server).
    #[arg(long, value_name = "ID", value_parser = stacks::parse_id, requires = "server")]
    pub client: Option<String>,
    /// The server stack of an interop pair (with --client).
    #[arg(long, value_name = "ID", value_parser = stacks::parse_id, requires = "client")]
    pub server: Option<String>,
    /// Only scenarios whose names match this glob; repeat for several. Default: all.
    #[arg(long = "scenario", value_name = "GLOB")]
    pub scenarios: Vec<String>,
    /// What to measure; repeat for several.
    #[arg(long = "measure", value_name = "M", value_parser = parse_measure, default_value = "time")]
    pub measures: Vec<String>,
    /// Samples per cell [default: 10, or 6 with --quick: the fewest that give a 95% interval].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub samples: Option<u32>,
    /// A short run: fewer and shorter samples (6 of 20 ms per side).
    #[arg(long)]
    pub quick: bool,
    /// Each side's measured time per sample, in ms [default: 100, or 20 with --quick].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub min_time_ms: Option<u64>,
    /// Unmeasured work before each sample, in ms [default: 50, or 10 with --quick].
    #[arg(long, value_name = "MS")]
    pub warmup_ms: Option<u64>,
    /// A runner still going after this many seconds is killed and its cell fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 120.0, value_parser = parse_timeout)]
    pub timeout: f64,
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
}

/// The measures that exist so far.
pub const MEASURES: &[&str] = &["time"];

fn parse_measure(measure: &str) -> Result<String, String> {
    match MEASURES.contains(&measure) {
        true => Ok(measure.to_string()),
        false => Err(format!("unknown measure `{measure}` (valid: {})", MEASURES.join(", "))),
    }
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds.is_finite() => Ok(seconds),
        _ => Err(format!("`{text}` is not a positive number of seconds")),
    }
}
