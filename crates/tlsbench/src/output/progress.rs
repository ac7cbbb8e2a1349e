//! Progress on stderr: a bar on a terminal, plain lines otherwise (CI logs, pipes).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::results::Status;
use crate::steady::Warmup;

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

    /// A process warming up for a cell (`process` of `processes`): after each of its windows,
    /// how long it has warmed, and whether its rate has stopped rising. On a terminal only: a
    /// log gets the line of [`Progress::warmed`].
    pub fn warming(&self, label: &str, process: u32, processes: u32, elapsed: Duration, rate_steady: bool) {
        if let Some(bar) = &self.bar {
            let state = if rate_steady { "rate steady" } else { "rising" };
            bar.set_message(format!(
                "warming up {label} (process {}/{processes}): {:.1} s, {state}",
                process + 1,
                elapsed.as_secs_f64()
            ));
            bar.tick();
        }
    }

    /// How a process's warm-up for a cell ended (`processes` per cell).
    pub fn warmed(&self, label: &str, warmup: &Warmup, processes: u32) {
        let line = warmed_line(label, warmup, processes);
        match &self.bar {
            Some(bar) => bar.println(super::stderr::wrapped(&line).trim_end()),
            None => super::stderr::line(&line),
        }
    }

    pub fn round_done(&self, round: usize) {
        if self.bar.is_none() {
            super::stderr::line(format!(
                "round {}/{} done ({}/{} samples)",
                round + 1,
                self.rounds,
                self.done,
                self.total
            ));
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
                bar.println(super::stderr::wrapped(&line).trim_end());
            }
            None => super::stderr::line(&line),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// How a process warmed up for a cell, within 120 columns: a long pair's label puts the outcome
/// on a line of its own.
fn warmed_line(label: &str, warmup: &Warmup, processes: u32) -> String {
    let end = match warmup.steady {
        true => "steady",
        false => "still rising at the bound",
    };
    let head = format!("warmed up {label}");
    let tail = format!(
        "process {}/{processes}: {:.1} s, {} windows, {end}",
        warmup.fork + 1,
        warmup.ms / 1000.0,
        warmup.windows
    );
    match head.chars().count() + 2 + tail.chars().count() <= 120 {
        true => format!("{head}, {tail}"),
        false => format!("{head}\n  {tail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warm_up_line_fits_120_columns_and_a_long_label_wraps() {
        let warmup = Warmup { fork: 0, ms: 10_100.0, windows: 42, steady: false, gc: None };
        let steady = Warmup { ms: 2_600.0, windows: 8, steady: true, ..warmup };
        let short = warmed_line("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm go", &steady, 1);
        assert_eq!(
            short,
            "warmed up handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm go, process 1/1: 2.6 s, 8 windows, steady"
        );
        let pair =
            "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm rustls-aws-lc-rs -> netty-tcnative [split]";
        let long = warmed_line(pair, &warmup, 2);
        assert_eq!(long.lines().count(), 2, "{long}");
        assert!(long.lines().all(|l| l.chars().count() <= 120), "{long}");
        assert!(long.ends_with("\n  process 1/2: 10.1 s, 42 windows, still rising at the bound"), "{long}");
    }
}
