//! A server's peak over loopback TCP (`tlsbench run --transport tcp --peak`): the server's
//! runner on CPUs of its own, one load generator per load CPU, and the connections each keeps
//! in flight raised step by step until the server is saturated. Each sample is one such search;
//! its values are the step of the highest rate, with how busy the workers were and the
//! connections in flight then (docs/network.md, "A server's peak").

use tlsbench_harness::protocol::{Metric, MetricValue, SampleReport};
use tlsbench_harness::Side;

use crate::cores::{format_list, Split};
use crate::net::{self, Placement, Step};
use crate::output::columns::wrap;
use crate::output::format::format_number;
use crate::output::WIDTH;
use crate::plan::Cell;
use crate::results::{CellResult, Status};
use crate::sample_call::Settings;

/// The metrics only a peak's cells have.
pub const METRICS: [Metric; 2] = [Metric::WorkersBusyPercent, Metric::LoadConcurrency];

/// Connections in flight per load generator, step by step: each doubles the last.
pub const STEPS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The workers are saturated once their CPU time is this share of their time.
pub const BUSY_PERCENT: f64 = 90.0;

/// The rate has stopped rising once a step adds less than this to the one before.
pub const RISE_PERCENT: f64 = 3.0;

/// Why a search stopped raising the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The workers' CPU time reached `BUSY_PERCENT` of their time.
    WorkersBusy,
    /// A step's rate rose less than `RISE_PERCENT` over the step before.
    RateFlat,
    /// The last step was taken with the rate still rising and the workers below saturation.
    NotSaturated,
}

impl Stop {
    pub fn describe(self) -> String {
        match self {
            Stop::WorkersBusy => format!("workers busy (≥ {BUSY_PERCENT}%)"),
            Stop::RateFlat => format!("rate stopped rising (< {RISE_PERCENT}% over the step before)"),
            Stop::NotSaturated => format!("not saturated at {} in flight per generator", STEPS[STEPS.len() - 1]),
        }
    }

    /// The stop of a stored sample, from its peak step's figures: the search stops at the first
    /// step whose workers are busy, and otherwise one step after the peak unless it ran out.
    pub fn of_sample(busy_percent: f64, concurrency: f64) -> Stop {
        match busy_percent >= BUSY_PERCENT {
            true => Stop::WorkersBusy,
            false if concurrency >= f64::from(STEPS[STEPS.len() - 1]) => Stop::NotSaturated,
            false => Stop::RateFlat,
        }
    }
}

/// One step of a search: the load generators' connections in flight each, and what the step
/// measured.
struct Measured {
    concurrency: u32,
    step: Step,
    rate: f64,
    busy_percent: f64,
}

/// The server's workers' CPU time in % of their time: CPU per connection × connections per
/// second / workers, as the table's line on workers says.
fn busy_percent(step: &Step, workers: u32) -> Option<f64> {
    let server = &step.server;
    let cpu = server.per_connection((server.cpu_user_seconds + server.cpu_system_seconds) * 1e6)?;
    Some(cpu * server.connections_per_s()? / 1e6 / f64::from(workers) * 100.0)
}

/// One sample of a peak cell: a search from one connection in flight per generator, doubling,
/// until the workers are busy, the rate stops rising or the steps run out. Its values are each
/// side's at the step of the highest server rate, with the workers' use and the connections
/// in flight then.
pub fn sample(cell: &Cell, settings: &Settings) -> Result<SampleReport, (Status, String)> {
    let split = settings.peak.as_ref().expect("a run of peak cells chose its CPUs");
    let workers = cell.threads.unwrap_or(1);
    let generators = split.load.len() as u32;
    let mut steps: Vec<Measured> = Vec::new();
    let mut stop = Stop::NotSaturated;
    for concurrency in STEPS {
        let step = net::step(cell, settings, &Placement { cpus: Some(split), generators, concurrency })?;
        let no_rate = || (Status::Failed, format!("the server completed no connection at {concurrency} in flight"));
        let rate = step.server.connections_per_s().ok_or_else(no_rate)?;
        let busy_percent = busy_percent(&step, workers).ok_or_else(no_rate)?;
        let previous = steps.last().map(|m| m.rate);
        steps.push(Measured { concurrency, step, rate, busy_percent });
        if busy_percent >= BUSY_PERCENT {
            stop = Stop::WorkersBusy;
            break;
        }
        if previous.is_some_and(|previous| rate < previous * (1.0 + RISE_PERCENT / 100.0)) {
            stop = Stop::RateFlat;
            break;
        }
    }
    eprint!("{}", describe_search(cell, split, &steps, stop));
    let peak = steps.iter().max_by(|a, b| a.rate.total_cmp(&b.rate)).expect("at least one step");
    let mut report = net::sample_report(&peak.step.client, &peak.step.server)?;
    report.values.push(MetricValue {
        side: Side::Server,
        metric: Metric::WorkersBusyPercent,
        value: peak.busy_percent,
        seconds: 0.0,
    });
    report.values.push(MetricValue {
        side: Side::Client,
        metric: Metric::LoadConcurrency,
        value: f64::from(peak.concurrency),
        seconds: 0.0,
    });
    Ok(report)
}

/// What a search did, for stderr: where its runners ran (as the kernel reported their CPUs),
/// each step's rate and workers' use, and why it stopped.
fn describe_search(cell: &Cell, split: &Split, steps: &[Measured], stop: Stop) -> String {
    let cpus = |cpus: &Option<Vec<usize>>| cpus.as_deref().map_or("?".to_string(), format_list);
    let first = &steps[0].step;
    let load = crate::order::first_seen(first.load_cpus.iter().map(cpus));
    let shown: Vec<String> = steps
        .iter()
        .map(|m| format!("{}: {}/s, {:.0}% busy", m.concurrency, format_number(m.rate), m.busy_percent))
        .collect();
    let text = format!(
        "peak of {} [tcp peak], {}: server on CPUs {} ({} worker(s)), {} load generator(s) on CPUs {}; \
         in flight per generator {}; stopped: {}",
        crate::key::pair_label(&cell.client, &cell.server),
        cell.scenario.name(),
        cpus(&first.server_cpus),
        cell.threads.unwrap_or(1),
        split.load.len(),
        load.join(" "),
        shown.join("; "),
        stop.describe()
    );
    wrap(&text, WIDTH, 2)
}

/// Under the table, for a run of peak cells: per cell, the peak rate, the connections in flight
/// per generator and the workers' use then (medians), and why its searches stopped, sample by
/// sample.
pub fn note(results: &[CellResult]) -> Option<String> {
    let peak = |c: &&CellResult| c.key.process == "tcp-peak" && c.is_ok();
    let of = |rate: &CellResult, side: Side, metric: Metric| {
        results.iter().filter(peak).find(|c| c.key == rate.key && c.side == side && c.metric == metric.name())
    };
    let mut parts = Vec::new();
    for rate in results.iter().filter(peak).filter(|c| c.side == Side::Server) {
        if rate.metric != Metric::ConnectionsPerS.name() {
            continue;
        }
        let (Some(busy), Some(concurrency)) =
            (of(rate, Side::Server, Metric::WorkersBusyPercent), of(rate, Side::Client, Metric::LoadConcurrency))
        else {
            continue;
        };
        let (Some(median), Some(busy_median), Some(concurrency_median)) =
            (rate.median, busy.median, concurrency.median)
        else {
            continue;
        };
        let mut stops: Vec<(Stop, usize)> = Vec::new();
        for (&b, &n) in busy.samples.iter().zip(&concurrency.samples) {
            let stop = Stop::of_sample(b, n);
            match stops.iter_mut().find(|(s, _)| *s == stop) {
                Some((_, count)) => *count += 1,
                None => stops.push((stop, 1)),
            }
        }
        let stops: Vec<String> = stops
            .iter()
            .map(|(stop, count)| format!("{} in {count} of {}", stop.describe(), busy.samples.len()))
            .collect();
        parts.push(format!(
            "{} {}: {}/s at {:.0} in flight per generator, workers {:.0}% busy, stopped: {}",
            rate.key.pair_label(),
            rate.key.scenario,
            format_number(median),
            concurrency_median,
            busy_median,
            stops.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "server peaks (the load raised until the workers were busy or the rate stopped rising; medians): {}. \
             A search that stopped with the workers below {BUSY_PERCENT}% busy was held back by its load generators \
             or the machine, not by the server's workers",
            parts.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_sample_tells_why_its_search_stopped() {
        assert_eq!(Stop::of_sample(95.0, 64.0), Stop::WorkersBusy);
        assert_eq!(Stop::of_sample(BUSY_PERCENT, 4.0), Stop::WorkersBusy);
        assert_eq!(Stop::of_sample(40.0, 8.0), Stop::RateFlat);
        assert_eq!(Stop::of_sample(40.0, 64.0), Stop::NotSaturated);
        assert!(Stop::NotSaturated.describe().contains("64 in flight"));
    }
}
