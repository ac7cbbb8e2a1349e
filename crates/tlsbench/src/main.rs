//! tlsbench: measures TLS implementations the same way and reports how they compare.

use std::process::ExitCode;

use clap::Parser;
use tlsbench::cli::Cli;
use tlsbench::output::stderr;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            stderr::line(format!("{} (see --help)", one_line(&e.render().to_string())));
            return ExitCode::from(2);
        }
    };
    let outcome = tlsbench::commands::execute(cli.command);
    outcome.unwrap_or_else(|e| {
        stderr::line(format!("error: {e:#}"));
        ExitCode::FAILURE
    })
}

/// Clap's error as one line, to be wrapped at the width: its first paragraph (the message and,
/// for a missing argument, the indented lines naming it), without the usage and tips that follow.
fn one_line(rendered: &str) -> String {
    let paragraph: Vec<&str> = rendered.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    paragraph.join(" ")
}
