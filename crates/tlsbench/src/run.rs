//! Measuring a planned run: every sample of every cell in its own runner process, cells
//! interleaved in a new random order each round so that machine drift hits all stacks alike.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use tlsbench_harness::protocol::{Metric, Reply, SampleReport};
use tlsbench_harness::Side;

use crate::output::progress::Progress;
use crate::plan::Cell;
use crate::results::{CellResult, Status};
use crate::{executor, stacks, stats};

/// How samples are taken.
#[derive(Clone, Debug)]
pub struct Settings {
    pub samples: usize,
    pub min_time_ms: u64,
    pub warmup_ms: u64,
    /// A runner still going after this is killed and its cell fails.
    pub timeout: Duration,
    pub data_dir: PathBuf,
    pub runner_dir: PathBuf,
}

/// Where one cell stands.
struct CellState<'a> {
    cell: &'a Cell,
    outcome: Result<(), (Status, String)>,
    client_library: Option<String>,
    server_library: Option<String>,
    series: Vec<(Side, Metric, Vec<f64>)>,
}

/// Measures every supported cell `settings.samples` times and returns one result per side.
pub fn measure(cells: &[Cell], settings: &Settings, progress: &mut Progress) -> Vec<CellResult> {
    let mut states: Vec<CellState> = cells
        .iter()
        .map(|cell| CellState {
            cell,
            outcome: cell.support.clone().map_err(|reason| (Status::Unsupported, reason)),
            client_library: None,
            server_library: None,
            series: Vec::new(),
        })
        .collect();
    let mut order: Vec<usize> = (0..states.len()).collect();
    for round in 0..settings.samples {
        fastrand::shuffle(&mut order);
        for &i in &order {
            let state = &mut states[i];
            if state.outcome.is_err() {
                continue;
            }
            let label = format!("{} {}", state.cell.scenario, pair_label(state.cell));
            let outcome = sample(state.cell, settings).and_then(|report| state.record(report));
            progress.sample_done(round, &label);
            if let Err((status, reason)) = &outcome {
                progress.cell_ended(&label, *status, reason, (settings.samples - round - 1) as u64);
            }
            state.outcome = outcome;
        }
        progress.round_done(round);
    }
    states.iter().flat_map(CellState::results).collect()
}

/// The number of runner invocations a run will make.
pub fn planned_samples(cells: &[Cell], settings: &Settings) -> u64 {
    (cells.iter().filter(|c| c.support.is_ok()).count() * settings.samples) as u64
}

fn pair_label(cell: &Cell) -> String {
    match cell.client == cell.server {
        true => cell.client.clone(),
        false => format!("{} -> {}", cell.client, cell.server),
    }
}

/// One sample in a fresh runner process.
fn sample(cell: &Cell, settings: &Settings) -> Result<SampleReport, (Status, String)> {
    let failed = |reason: String| (Status::Failed, reason);
    let runner = stacks::runner_for_pair(&cell.client, &cell.server).expect("planned cells have a runner");
    let runner = stacks::runner_path(&settings.runner_dir, runner).map_err(|e| failed(e.to_string()))?;
    let (scenario, min_time, warmup) =
        (cell.scenario.name(), settings.min_time_ms.to_string(), settings.warmup_ms.to_string());
    let data_dir = settings.data_dir.to_string_lossy();
    let args = [
        "sample", "--client", &cell.client, "--server", &cell.server, "--scenario", &scenario,
        "--min-time-ms", &min_time, "--warmup-ms", &warmup, "--data-dir", &data_dir,
    ];
    let reply = executor::call(&runner, &args, settings.timeout)
        .and_then(|out| serde_json::from_str::<Reply>(&out).context("runner printed an unreadable reply"));
    match reply {
        Ok(Reply::Ok(report)) => Ok(report),
        Ok(Reply::Unsupported { reason }) => Err((Status::Unsupported, reason)),
        Ok(Reply::Failed { reason }) => Err(failed(reason)),
        Err(e) => Err(failed(format!("{e:#}"))),
    }
}

impl CellState<'_> {
    /// Keeps a sample's values after checking each side reports its own library.
    fn record(&mut self, report: SampleReport) -> Result<(), (Status, String)> {
        for (id, reported, kept) in [
            (&self.cell.client, report.client_library, &mut self.client_library),
            (&self.cell.server, report.server_library, &mut self.server_library),
        ] {
            let stack = stacks::known(id).expect("planned stacks are known");
            if !(stack.owns)(&reported) {
                return Err((Status::Failed, format!("stack `{id}` reported library `{reported}`, which is not its own; result refused")));
            }
            if kept.as_ref().is_some_and(|k| *k != reported) {
                return Err((Status::Failed, format!("stack `{id}` changed library between samples: `{}` then `{reported}`", kept.as_ref().unwrap())));
            }
            *kept = Some(reported);
        }
        for value in report.values {
            match self.series.iter_mut().find(|(side, metric, _)| *side == value.side && *metric == value.metric) {
                Some((_, _, samples)) => samples.push(value.value),
                None => self.series.push((value.side, value.metric, vec![value.value])),
            }
        }
        Ok(())
    }

    /// One result per side and metric: the summary of the samples, or the reason there is no
    /// number.
    fn results(&self) -> Vec<CellResult> {
        let metrics = Metric::of(self.cell.scenario.kind);
        [Side::Client, Side::Server]
            .into_iter()
            .flat_map(|side| metrics.iter().map(move |&metric| (side, metric)))
            .map(|(side, metric)| {
                let samples = match &self.outcome {
                    Ok(()) => self.series.iter().find(|(s, m, _)| *s == side && *m == metric).map(|(_, _, v)| v.clone()),
                    Err(_) => None,
                };
                let summary = samples.as_deref().and_then(stats::summarize);
                let (status, reason) = match &self.outcome {
                    Ok(()) => (Status::Ok, None),
                    Err((status, reason)) => (*status, Some(reason.clone())),
                };
                CellResult {
                    scenario: self.cell.scenario.name(),
                    client_stack: self.cell.client.clone(),
                    server_stack: self.cell.server.clone(),
                    client_library: self.client_library.clone(),
                    server_library: self.server_library.clone(),
                    measure: metric.measure().into(),
                    side,
                    metric: metric.name().into(),
                    unit: metric.unit().into(),
                    better: if metric.higher_is_better() { "higher" } else { "lower" }.into(),
                    samples: samples.unwrap_or_default(),
                    median: summary.as_ref().map(|s| s.median),
                    ci95: summary.as_ref().map(|s| s.ci95),
                    min: summary.as_ref().map(|s| s.min),
                    max: summary.as_ref().map(|s| s.max),
                    outliers: summary.map(|s| s.outliers).unwrap_or_default(),
                    status,
                    reason,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use tlsbench_harness::protocol::MetricValue;

    use super::*;

    fn cell() -> Cell {
        Cell {
            client: "rustls-ring".into(),
            server: "openssl".into(),
            scenario: "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap(),
            support: Ok(()),
        }
    }

    fn report(server_library: &str) -> SampleReport {
        let value = |side, value| MetricValue { side, metric: Metric::HandshakesPerS, value, seconds: 0.1 };
        SampleReport {
            client_library: "rustls 0.23.46 (ring 0.17.14)".into(),
            server_library: server_library.into(),
            iterations: 100,
            values: vec![value(Side::Client, 1000.0), value(Side::Server, 2000.0)],
        }
    }

    fn state(cell: &Cell) -> CellState<'_> {
        CellState { cell, outcome: Ok(()), client_library: None, server_library: None, series: Vec::new() }
    }

    #[test]
    fn samples_are_kept_per_side_with_the_libraries() {
        let cell = cell();
        let mut state = state(&cell);
        state.record(report("OpenSSL 3.0.19 27 Jan 2026")).unwrap();
        state.record(report("OpenSSL 3.0.19 27 Jan 2026")).unwrap();
        let results = state.results();
        // Per side: handshakes per second (sampled here) and handshake bytes (not sampled).
        assert_eq!(results.len(), 4);
        assert_eq!((results[0].side, results[0].metric.as_str()), (Side::Client, "handshakes_per_s"));
        assert_eq!(results[0].samples, vec![1000.0, 1000.0]);
        assert_eq!((results[1].metric.as_str(), results[1].measure.as_str()), ("handshake_bytes", "io"));
        assert!(results[1].samples.is_empty() && results[1].median.is_none());
        assert_eq!((results[2].side, results[2].median), (Side::Server, Some(2000.0)));
        assert_eq!(results[2].server_library.as_deref(), Some("OpenSSL 3.0.19 27 Jan 2026"));
        assert_eq!(results[2].pair_label(), "rustls-ring -> openssl");
    }

    #[test]
    fn a_result_from_another_library_is_refused() {
        let cell = cell();
        let mut state = state(&cell);
        // What rust-openssl reports when BoringSSL's symbols captured its calls.
        let (status, reason) = state.record(report("BoringSSL")).unwrap_err();
        assert_eq!(status, Status::Failed);
        assert_eq!(reason, "stack `openssl` reported library `BoringSSL`, which is not its own; result refused");
        state.outcome = Err((status, reason));
        let results = state.results();
        assert!(results.iter().all(|r| r.status == Status::Failed && r.median.is_none() && r.samples.is_empty()));
    }
}
