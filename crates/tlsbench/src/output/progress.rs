//! Progress on stderr: a bar on a terminal, plain lines otherwise (CI logs, pipes).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use crate::results::Status;

pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    rounds: usize,
}

impl Progress {
    pub fn new(total: u64, rounds: usize) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            let style = ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} samples  {msg}")
                .expect("the template is valid")
                .progress_chars("=> ");
            bar.set_style(style);
            bar
        });
        Self { bar, total, done: 0, rounds }
    }

    pub fn sample_done(&mut self, round: usize, label: &str) {
        self.done += 1;
        if let Some(bar) = &self.bar {
            bar.set_message(format!("round {}/{}  {label}", round + 1, self.rounds));
            bar.inc(1);
        }
    }

    pub fn round_done(&self, round: usize) {
        if self.bar.is_none() {
            eprintln!("round {}/{} done ({}/{} samples)", round + 1, self.rounds, self.done, self.total);
        }
    }

    /// A further round of `samples` samples (`--target-ci`).
    pub fn extra_round(&mut self, samples: u64) {
        self.total += samples;
        self.rounds += 1;
        if let Some(bar) = &self.bar {
            bar.set_length(self.total);
        }
    }

    /// A cell that stopped: its `skipped` remaining samples will not be taken.
    pub fn cell_ended(&mut self, label: &str, status: Status, reason: &str, skipped: u64) {
        self.total -= skipped;
        let status = match status {
            Status::Unsupported => "unsupported",
            _ => "failed",
        };
        let line = format!("{status}: {label}: {reason}");
        match &self.bar {
            Some(bar) => {
                bar.set_length(self.total);
                bar.println(line);
            }
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
