//! Where one cell of a run stands: how it ended, if it did, and the values of every sample
//! taken, each checked as it comes (the stacks' own libraries, the cell's allocator and build);
//! and its results, one per side and metric.

use anyhow::Context;
use tlsbench_harness::allocator::Allocator;
use tlsbench_harness::protocol::{Metric, MetricValue, SampleReport};
use tlsbench_harness::Side;

use crate::builds;
use crate::plan::{Cell, Process};
use crate::results::{CellResult, Status};
use crate::steady::Warmup;
use crate::store::{StoredCell, StoredRun};
use crate::{stacks, stats};

/// Where one cell stands: how it ended, if it did, and the values of every sample taken.
pub struct CellState {
    pub cell: Cell,
    pub outcome: Result<(), (Status, String)>,
    pub(super) client_library: Option<String>,
    pub(super) server_library: Option<String>,
    /// What the latest sample negotiated, client's view then server's.
    pub(super) negotiated: [Option<String>; 2],
    /// The allocator and version the runners reported (`jemalloc 5.3.1-...`); None where they
    /// allocate through a runtime of their own.
    pub(super) allocator_used: Option<String>,
    /// Samples recorded so far.
    pub(super) taken: usize,
    pub(super) series: Vec<(Side, Metric, Vec<f64>)>,
    /// Which of the cell's processes (forks) took each sample, where they stay up (warm.rs).
    pub(super) forks: Vec<Option<u32>>,
    /// How each of its processes warmed up.
    pub(super) warmups: Vec<Warmup>,
    /// The CPUs each sample's threads were pinned to, in thread order (crate::cores).
    pub(super) cpus: Vec<Option<Vec<u32>>>,
    /// How fast the CPU the sentinel placed each sample on ran around it, as a fraction of full
    /// speed (noise/sentinel.rs); None where it placed none.
    pub(super) cpu_speeds: Vec<Option<f64>>,
}

/// The cells of a stored run as they stood after its last stored sample.
pub fn restore(stored: &StoredRun) -> anyhow::Result<Vec<CellState>> {
    let states = stored.cells.iter().map(CellState::restore).collect::<Result<Vec<_>, String>>();
    states.map_err(anyhow::Error::msg).with_context(|| format!("reading run {}", stored.info.id))
}

impl CellState {
    /// A cell of a new run: nothing taken, unsupported if planning said so.
    pub fn planned(cell: Cell) -> CellState {
        let outcome = cell.support.clone().map_err(|reason| (Status::Unsupported, reason));
        CellState {
            cell,
            outcome,
            client_library: None,
            server_library: None,
            negotiated: [None, None],
            allocator_used: None,
            taken: 0,
            series: Vec::new(),
            forks: Vec::new(),
            warmups: Vec::new(),
            cpus: Vec::new(),
            cpu_speeds: Vec::new(),
        }
    }

    /// A cell of a stored run, with the samples and the outcome stored for it.
    pub fn restore(stored: &StoredCell) -> Result<CellState, String> {
        let cell = Cell::from_key(&stored.key)?;
        let mut state = CellState::planned(cell);
        (state.client_library, state.server_library) = (stored.client_library.clone(), stored.server_library.clone());
        state.allocator_used = stored.allocator_used.clone();
        state.negotiated = stored.negotiated.clone();
        for sample in &stored.samples {
            state.push(&sample.values, sample.fork, sample.cpus.clone(), sample.cpu_speed);
        }
        state.warmups = stored.warmups.clone();
        if stored.status != Status::Ok {
            state.outcome = Err((stored.status, stored.reason.clone().unwrap_or_default()));
        }
        Ok(state)
    }

    /// The cell as the database first stores it: planned, before any sample.
    pub fn as_planned(&self) -> StoredCell {
        let (status, reason) = match &self.outcome {
            Ok(()) => (Status::Ok, None),
            Err((status, reason)) => (*status, Some(reason.clone())),
        };
        StoredCell {
            key: self.cell.key(),
            allocator_used: None,
            status,
            reason,
            client_library: None,
            server_library: None,
            negotiated: [None, None],
            samples: Vec::new(),
            warmups: Vec::new(),
        }
    }

    /// Samples still to take: none once the cell has ended.
    pub fn missing(&self, samples: usize) -> usize {
        match self.outcome {
            Ok(()) => samples.saturating_sub(self.taken),
            Err(_) => 0,
        }
    }

    /// The widest 95% interval of the cell's results, as the table prints it (the farther end,
    /// in % of the figure); None for a cell that has ended or has no samples yet. Contended waits
    /// are left out: a count near 0 that varies with how threads interleave, whose interval in %
    /// of its median no number of samples narrows.
    pub fn widest_ci(&self) -> Option<f64> {
        if self.outcome.is_err() {
            return None;
        }
        let spreads = self
            .series
            .iter()
            .filter(|(_, metric, _)| !metric.is_per_iteration())
            .filter_map(|(_, metric, samples)| self.summary(*metric, samples).map(|(s, _)| s))
            .filter_map(|s| stats::ci_percent(s.figure(), s.ci95));
        spreads.reduce(f64::max)
    }

    /// Whether the cell takes another sample in place of its slowed ones: a time cell some of
    /// whose rates have fewer than `samples` that ran on a CPU at full speed and were not slowed
    /// otherwise, with fewer than `most` taken. A run of fewer than `stats::MIN_SAMPLES_FOR_CI95`
    /// samples (interop's 2) takes none in place of a slowed CPU's: its figures (`summary`) could
    /// never set them aside.
    pub fn replaces_slowed(&self, samples: usize, most: usize) -> bool {
        let enough = match samples >= stats::MIN_SAMPLES_FOR_CI95 {
            true => 0,
            false => usize::MAX,
        };
        let short = |(_, metric, values): &(Side, Metric, Vec<f64>)| {
            let aside = self.set_aside(*metric, values, enough);
            sets_aside_slowed(self.cell.measure, *metric) && values.len() - aside.len() < samples
        };
        self.outcome.is_ok() && self.taken >= samples && self.taken < most && self.series.iter().any(short)
    }

    /// The samples of a series set aside as slowed (indices), for the time measure's rates: those
    /// that ran where no CPU was at full speed (the sentinel's `cpu_speeds`), while at least
    /// `enough` others did; then, of the rest, those slowed below the others (`stats::slowed`).
    fn set_aside(&self, metric: Metric, samples: &[f64], enough: usize) -> Vec<usize> {
        if !sets_aside_slowed(self.cell.measure, metric) {
            return Vec::new();
        }
        let mut aside: Vec<usize> = match self.cpu_speeds.len() == samples.len() {
            true => (0..samples.len())
                .filter(|&i| self.cpu_speeds[i].is_some_and(|speed| speed < crate::noise::FULL_SPEED))
                .collect(),
            false => Vec::new(),
        };
        if samples.len() - aside.len() < enough.max(1) {
            aside.clear();
        }
        let rest: Vec<usize> = (0..samples.len()).filter(|i| !aside.contains(i)).collect();
        let values: Vec<f64> = rest.iter().map(|&i| samples[i]).collect();
        aside.extend(stats::slowed(&values).into_iter().map(|k| rest[k]));
        aside.sort_unstable();
        aside
    }

    /// The summary of one series of samples, with its interval spanning each fork's figure, and
    /// the samples set aside as slowed (indices): the time measure's rates are summarized
    /// without them, by the mean of their faster half (`stats::faster_half`), outliers indexed
    /// into all the samples. Samples whose CPU was slowed are set aside only where at least
    /// `stats::MIN_SAMPLES_FOR_CI95` others ran at full speed: on a machine slowed for most of the
    /// run, the figure is of every sample, and the line under the table says how many were slowed.
    fn summary(&self, metric: Metric, samples: &[f64]) -> Option<(stats::Summary, Vec<usize>)> {
        let noisy = sets_aside_slowed(self.cell.measure, metric);
        let slowed = self.set_aside(metric, samples, stats::MIN_SAMPLES_FOR_CI95);
        let kept: Vec<usize> = (0..samples.len()).filter(|i| !slowed.contains(i)).collect();
        let values: Vec<f64> = kept.iter().map(|&i| samples[i]).collect();
        let mut summary = stats::summarize(&values)?;
        if noisy {
            summary = summary.of_faster_half(&values);
        }
        summary.outliers = summary.outliers.iter().map(|&k| kept[k]).collect();
        if self.forks.len() == samples.len() {
            let forks: Vec<Option<u32>> = kept.iter().map(|&i| self.forks[i]).collect();
            summary = stats::spanning_forks(summary, &values, &forks);
        }
        Some((summary, slowed))
    }

    /// Keeps a sample's values after checking each side reports its own library, and that the
    /// runners ran on the cell's allocator (glibc's where the run chose none); `cpu_speed`: how
    /// fast the CPU the sentinel placed it on ran (noise/sentinel.rs).
    pub(super) fn record(
        &mut self,
        report: &SampleReport,
        fork: Option<u32>,
        cpu_speed: Option<f64>,
    ) -> Result<(), (Status, String)> {
        let asked = self.cell.allocator.unwrap_or(Allocator::Glibc);
        match (&report.allocator, self.cell.allocator) {
            (Some(used), _) if used.name != asked => {
                return Err((
                    Status::Failed,
                    format!("the runner allocated with {used}, the cell asks for {asked}; result refused"),
                ));
            }
            (None, Some(asked)) if !self.cell.process.is_tcp() => {
                return Err((
                    Status::Failed,
                    format!("the runner did not report its allocator, the cell asks for {asked}; result refused"),
                ));
            }
            _ => {}
        }
        crate::trust::check_roots(&report.values).map_err(|reason| (Status::Failed, reason))?;
        self.allocator_used = report.allocator.as_ref().map(ToString::to_string);
        // The directory was checked when the run started; a runner replaced since must not
        // slip its numbers into another build's column.
        if let Some(build) = self.cell.build {
            builds::check_reply(build, report.build.as_deref()).map_err(|reason| (Status::Failed, reason))?;
        }
        for (id, reported, kept) in [
            (&self.cell.client, &report.client_library, &mut self.client_library),
            (&self.cell.server, &report.server_library, &mut self.server_library),
        ] {
            if !stacks::owns(id, reported) {
                return Err((
                    Status::Failed,
                    format!("stack `{id}` reported library `{reported}`, which is not its own; result refused"),
                ));
            }
            if let Some(earlier) = kept.as_ref().filter(|k| *k != reported) {
                return Err((
                    Status::Failed,
                    format!("stack `{id}` changed library between samples: `{earlier}` then `{reported}`"),
                ));
            }
            *kept = Some(reported.clone());
        }
        for (kept, seen) in self.negotiated.iter_mut().zip(report.negotiated_by_side()) {
            if let Some(seen) = seen {
                *kept = Some(seen.to_string());
            }
        }
        self.push(&report.values, fork, crate::cores::pinned_cpus(report), cpu_speed);
        Ok(())
    }

    pub(super) fn push(
        &mut self,
        values: &[MetricValue],
        fork: Option<u32>,
        cpus: Option<Vec<u32>>,
        cpu_speed: Option<f64>,
    ) {
        for value in values {
            match self.series.iter_mut().find(|(side, metric, _)| *side == value.side && *metric == value.metric) {
                Some((_, _, samples)) => samples.push(value.value),
                None => self.series.push((value.side, value.metric, vec![value.value])),
            }
        }
        self.taken += 1;
        self.forks.push(fork);
        self.cpus.push(cpus);
        self.cpu_speeds.push(cpu_speed);
    }

    /// One result per side and metric: the summary of the samples, or the reason there is no
    /// number.
    pub(super) fn results(&self) -> Vec<CellResult> {
        let (measure, metrics) = (self.cell.measure, Metric::of(self.cell.measure, self.cell.scenario.kind));
        let series = |side: Side, metric: Metric| self.series.iter().find(|(s, m, _)| *s == side && *m == metric);
        [Side::Client, Side::Server]
            .into_iter()
            .flat_map(|side| {
                metrics.iter().filter(move |m| m.reported_by(measure, side)).map(move |&metric| (side, metric))
            })
            // A metric its samples lack: a run from before tlsbench took it, or its runner did not.
            .filter(|&(side, metric)| self.taken == 0 || series(side, metric).is_some())
            .filter(|&(_, metric)| self.cell.process == Process::TcpPeak || !crate::peak::METRICS.contains(&metric))
            .map(|(side, metric)| {
                let samples = match &self.outcome {
                    Ok(()) => series(side, metric).map(|(_, _, v)| v.clone()),
                    Err(_) => None,
                };
                let (summary, slowed) = match samples.as_deref().and_then(|values| self.summary(metric, values)) {
                    Some((summary, slowed)) => (Some(summary), slowed),
                    None => (None, Vec::new()),
                };
                let (status, reason) = match &self.outcome {
                    Ok(()) => (Status::Ok, None),
                    Err((status, reason)) => (*status, Some(reason.clone())),
                };
                CellResult {
                    key: self.cell.key(),
                    client_library: self.client_library.clone(),
                    server_library: self.server_library.clone(),
                    scaling_efficiency: None,
                    scaling_efficiency_ci: None,
                    side,
                    metric: metric.name().into(),
                    unit: metric.unit().into(),
                    better: match (metric.is_property(), metric.higher_is_better()) {
                        (true, _) => "neither",
                        (false, true) => "higher",
                        (false, false) => "lower",
                    }
                    .into(),
                    samples: samples.unwrap_or_default(),
                    median: summary.as_ref().map(|s| s.median),
                    faster_half_mean: summary.as_ref().and_then(|s| s.faster_half_mean),
                    ci95: summary.as_ref().map(|s| s.ci95),
                    min: summary.as_ref().map(|s| s.min),
                    max: summary.as_ref().map(|s| s.max),
                    outliers: summary.map(|s| s.outliers).unwrap_or_default(),
                    slowed,
                    status,
                    reason,
                    negotiated: self.negotiated[side as usize].clone(),
                    sample_forks: match self.outcome {
                        Ok(()) => self.forks.iter().copied().collect::<Option<Vec<u32>>>().unwrap_or_default(),
                        Err(_) => Vec::new(),
                    },
                    warmups: self.warmups.clone(),
                    sample_cpus: match self.outcome {
                        Ok(()) => self.cpus.iter().cloned().collect::<Option<Vec<Vec<u32>>>>().unwrap_or_default(),
                        Err(_) => Vec::new(),
                    },
                }
            })
            .collect()
    }
}

/// Whether a series' slowed samples are set aside, and its figure is its faster half's mean: the
/// time measure's rates, which a noisy neighbour slows; counts (instructions, IO, heap) it does
/// not move, and the collector's share or contended waits are not rates.
fn sets_aside_slowed(measure: tlsbench_harness::Measure, metric: Metric) -> bool {
    measure == tlsbench_harness::Measure::Time && metric.higher_is_better() && !metric.is_per_iteration()
}
