//! `tlsbench compare A B`: two runs matched cell by cell, with the factor of their medians and a
//! verdict that needs both a significant Mann-Whitney U test and a change beyond the noise threshold.

use std::collections::HashMap;
use std::fmt;

use tlsbench_harness::Side;

use crate::key::CellKey;
use crate::order::first_seen;
use crate::results::{CellResult, RunDocument, Status};
use crate::stats::{mann_whitney_p, Figure};

/// A difference is significant when the test's p-value is below this.
pub const ALPHA: f64 = 0.05;

/// The relative change of the median below which a difference is called noise, by measure.
/// Instruction counts repeat to within 0.1% here (rustls's CI holds them to about 0.3%); sync's
/// counts are exact, and held to [`least_change`] instead; the other counts that the code path
/// determines (heap, io) repeat to well within 1%; wall time on a shared machine moves by a few
/// percent between runs, even with interleaving.
pub fn default_threshold(measure: &str) -> f64 {
    match measure {
        "instructions" => 0.003,
        "sync" => 0.0,
        "heap" | "io" => 0.01,
        _ => 0.05,
    }
}

/// The least threshold a cell's history can give it, by measure: below these, run-to-run
/// changes are within what a measure resolves here (instruction counts: about 0.1%).
pub fn history_floor(measure: &str) -> f64 {
    match measure {
        "instructions" => 0.002,
        "sync" => 0.0,
        "heap" | "io" => 0.005,
        _ => 0.01,
    }
}

/// The least change of a median, per handshake or per MB, that is a change, by measure: sync's
/// counts are exact for the work done, but the work moves a little with each handshake's random
/// values (BoringSSL's SHA-256 and P-256 code calls OPENSSL_get_ia32cap, and with it
/// pthread_once, as often as a signature's length and digits say: 605.25 to 606.1 once checks
/// per handshake in six samples of its client), never by one per handshake. A count from or to
/// zero is a change whatever its size: a lock where there was none.
pub fn least_change(measure: &str) -> f64 {
    match measure {
        "sync" => 1.0,
        _ => 0.0,
    }
}

/// The past run-to-run changes a cell needs before its history sets its threshold.
pub const MIN_HISTORY_CHANGES: usize = 5;

/// Where a cell's threshold came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ThresholdFrom {
    /// `--threshold`.
    Given,
    /// The cell's history: the upper fence (Q3 + 1.5 IQR) of its past run-to-run changes, at
    /// least the measure's floor, from this many changes.
    History { changes: usize },
    /// The measure's default: the cell has fewer past changes than `MIN_HISTORY_CHANGES`.
    Default { changes: usize },
}

/// The figures (medians, or the time rates' faster-half means) each cell had in the stored runs,
/// oldest first (a cell as `compare` matches it, its build included): how much it moves from run
/// to run when nothing changed, as rustc-perf and rustls's CI judge a change by the cell's own past.
#[derive(Default)]
pub struct History {
    figures: HashMap<(CellKey, Side, String), Vec<f64>>,
}

impl History {
    /// Adds a run's figures; runs are added oldest first.
    pub fn add(&mut self, doc: &RunDocument) {
        for cell in doc.results.iter().filter(|c| c.status == Status::Ok) {
            if let Some(figure) = cell.figure().filter(|m| *m != 0.0) {
                self.figures.entry(Self::key(cell)).or_default().push(figure);
            }
        }
    }

    fn key(cell: &CellResult) -> (CellKey, Side, String) {
        (cell.key.for_matching(true), cell.side, cell.metric.clone())
    }

    /// The relative changes between the cell's consecutive past figures.
    fn changes(&self, cell: &CellResult) -> Vec<f64> {
        let figures = self.figures.get(&Self::key(cell)).map(Vec::as_slice).unwrap_or_default();
        figures.windows(2).map(|w| (w[1] / w[0] - 1.0).abs()).collect()
    }

    /// The cell's threshold and where it came from: its history's where it has enough, else
    /// its measure's default.
    pub fn threshold(&self, cell: &CellResult) -> (f64, ThresholdFrom) {
        let mut changes = self.changes(cell);
        let n = changes.len();
        if n < MIN_HISTORY_CHANGES {
            return (default_threshold(&cell.key.measure), ThresholdFrom::Default { changes: n });
        }
        changes.sort_by(f64::total_cmp);
        let quantile = |q: f64| {
            let at = q * (n - 1) as f64;
            let (low, high) = (at.floor() as usize, at.ceil() as usize);
            changes[low] + (changes[high] - changes[low]) * (at - low as f64)
        };
        let (q1, q3) = (quantile(0.25), quantile(0.75));
        let fence = q3 + 1.5 * (q3 - q1);
        (fence.max(history_floor(&cell.key.measure)), ThresholdFrom::History { changes: n })
    }
}

/// Whether a measure's verdict rests on its samples' ranges rather than on the test: the counts
/// under callgrind (instructions, sync) and io's per handshake barely vary, so a run takes only a
/// few samples, too few for the test ever to be significant (3 against 3 give p ≥ 0.1); a change
/// is real when the two runs' samples do not overlap at all and the medians differ beyond the
/// threshold.
pub fn judged_by_range(measure: &str) -> bool {
    matches!(measure, "instructions" | "sync" | "io")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    /// No significant difference beyond the threshold.
    Same,
    /// A property neither way of which is better (the roots a trust store held) differs.
    Changed,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "~",
            Verdict::Changed => "changed",
        })
    }
}

/// The outcome of testing B's samples against A's.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// B's figure over A's (the medians', or the time rates' faster-half means).
    pub factor: f64,
    pub p: f64,
    /// The threshold the change was held against, as a fraction.
    pub threshold: f64,
    pub verdict: Verdict,
}

/// Whether B is better or worse than A: the samples must differ significantly (with `by_range`,
/// see [`judged_by_range`]: not overlap at all) AND their `figure`s by more than `threshold` (a
/// fraction); which way is better follows `higher_is_better`. `None` without samples on either
/// side.
pub fn judge(
    a: &[f64],
    b: &[f64],
    figure: Figure,
    higher_is_better: bool,
    threshold: f64,
    by_range: bool,
) -> Option<Judgement> {
    let p = mann_whitney_p(a, b)?;
    let (figure_a, figure_b) = (figure.of(a)?, figure.of(b)?);
    let factor = match (figure_a, figure_b) {
        (a, b) if a == b => 1.0, // also 0 / 0
        (a, b) => b / a,
    };
    let apart = match by_range {
        true => {
            let range =
                |x: &[f64]| x.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
            let ((min_a, max_a), (min_b, max_b)) = (range(a), range(b));
            max_a < min_b || max_b < min_a
        }
        false => p < ALPHA,
    };
    let verdict = match apart && (factor - 1.0).abs() > threshold {
        false => Verdict::Same,
        true if (factor > 1.0) == higher_is_better => Verdict::Better,
        true => Verdict::Worse,
    };
    Some(Judgement { factor, p, threshold, verdict })
}

/// One cell present in both runs.
pub struct Row<'a> {
    pub a: &'a CellResult,
    pub b: &'a CellResult,
    /// Where the threshold of its judgement came from.
    pub threshold_from: ThresholdFrom,
    /// `None` when either cell has no number (failed, unsupported, no samples).
    pub judgement: Option<Judgement>,
}

pub struct Comparison<'a> {
    /// In A's order.
    pub rows: Vec<Row<'a>>,
    pub only_in_a: Vec<&'a CellResult>,
    pub only_in_b: Vec<&'a CellResult>,
    /// Where the time rates were judged beside their shared move ([`judge_beside_shift`]): the
    /// median cell's B/A, which B's samples were divided by.
    pub beside_shift: Option<f64>,
}

impl Comparison<'_> {
    pub fn count(&self, verdict: Verdict) -> usize {
        self.rows.iter().filter(|r| r.judgement.as_ref().is_some_and(|j| j.verdict == verdict)).count()
    }
}

/// The builds a run's cells ran (`release` for a run that chose none), in the order of its cells.
pub fn builds_of(doc: &RunDocument) -> Vec<&str> {
    first_seen(doc.results.iter().map(|c| c.key.build_key()))
}

/// Keeps only the cells of `build` (`compare --build-a`/`--build-b`): so that two build
/// columns of one run, or one column of a run with several, compare as two runs do.
pub fn select_build(doc: &mut RunDocument, build: &str) -> anyhow::Result<()> {
    select(doc, "build", build, CellKey::build_key)
}

/// Keeps only the cells of C compiler `compiler` (`compare --compiler-a`/`--compiler-b`), as
/// [`select_build`] does builds.
pub fn select_compiler(doc: &mut RunDocument, compiler: &str) -> anyhow::Result<()> {
    select(doc, "compiler", compiler, CellKey::compiler_key)
}

fn select(doc: &mut RunDocument, axis: &str, wanted: &str, of: fn(&CellKey) -> &str) -> anyhow::Result<()> {
    let found: Vec<String> = first_seen(doc.results.iter().map(|c| of(&c.key))).into_iter().map(String::from).collect();
    if !found.iter().any(|b| b == wanted) {
        anyhow::bail!("run {} has no cells of {axis} `{wanted}` (its {axis}s: {})", doc.run.id, found.join(", "));
    }
    doc.results.retain(|c| of(&c.key) == wanted);
    Ok(())
}

/// Keeps only the cells with `stack` on a side (`compare --stack-a`/`--stack-b`), and names it
/// `as_stack` in them: so that two stacks (two releases of one library) compare as one stack
/// of two runs does.
pub fn select_stack(doc: &mut RunDocument, stack: &str, as_stack: &str) -> anyhow::Result<()> {
    let stacks = first_seen(doc.results.iter().flat_map(|c| [&c.key.client_stack, &c.key.server_stack]));
    if !stacks.iter().any(|s| *s == stack) {
        let stacks: Vec<&str> = stacks.iter().map(|s| s.as_str()).collect();
        anyhow::bail!("run {} has no cells of stack `{stack}` (its stacks: {})", doc.run.id, stacks.join(", "));
    }
    doc.results.retain(|c| c.key.client_stack == stack || c.key.server_stack == stack);
    for cell in &mut doc.results {
        for side in [&mut cell.key.client_stack, &mut cell.key.server_stack] {
            if side == stack {
                *side = as_stack.to_string();
            }
        }
    }
    Ok(())
}

/// Matches the cells of `a` and `b` by scenario, pair, process, allocator, thread count, build,
/// measure, side and metric and judges each pair of cells; `threshold` (a fraction) replaces every measure's
/// default when given. Where each run measured one build, the build is left out of the match:
/// a run of release's runners against one of native's is the comparison of the two builds.
pub fn compare<'a>(a: &'a RunDocument, b: &'a RunDocument, threshold: Option<f64>) -> Comparison<'a> {
    compare_with_history(a, b, threshold, &History::default())
}

/// [`compare`], each cell held to its own history's threshold where it has enough of it
/// ([`History::threshold`]) and no `threshold` is given.
pub fn compare_with_history<'a>(
    a: &'a RunDocument,
    b: &'a RunDocument,
    threshold: Option<f64>,
    history: &History,
) -> Comparison<'a> {
    // A run of one build and compiler each matches the other's whatever they are.
    let variants =
        |d: &RunDocument| first_seen(d.results.iter().map(|c| (c.key.build_key(), c.key.compiler_key()))).len();
    let by_build = variants(a) > 1 || variants(b) > 1;
    let key = |c: &CellResult| (c.key.for_matching(by_build), c.side, c.metric.clone());
    let mut rows = Vec::new();
    let mut only_in_a = Vec::new();
    for cell_a in &a.results {
        match b.results.iter().find(|cell_b| key(cell_b) == key(cell_a)) {
            Some(cell_b) => {
                let numbers = |c: &CellResult| c.status == Status::Ok && !c.samples.is_empty();
                let (threshold, threshold_from) = match threshold {
                    Some(given) => (given, ThresholdFrom::Given),
                    None => {
                        let (threshold, from) = history.threshold(cell_a);
                        (threshold.max(noise_floor(a, b, cell_a).unwrap_or(0.0)), from)
                    }
                };
                let judgement =
                    (numbers(cell_a) && numbers(cell_b)).then(|| judge_cells(cell_a, cell_b, threshold)).flatten();
                rows.push(Row { a: cell_a, b: cell_b, threshold_from, judgement });
            }
            None => only_in_a.push(cell_a),
        }
    }
    let only_in_b =
        b.results.iter().filter(|cell_b| !a.results.iter().any(|cell_a| key(cell_a) == key(cell_b))).collect();
    Comparison { rows, only_in_a, only_in_b, beside_shift: None }
}

/// The figure a cell's samples are judged by: a time rate's faster-half mean (also for a run stored
/// before tlsbench printed it, whose samples give it as well), else the median.
fn figure(cell: &CellResult) -> Figure {
    match cell.is_time_rate() {
        true => Figure::FasterHalfMean,
        false => Figure::Median,
    }
}

/// The move the time rates share between the runs: the median of their B/A, which is the machine's
/// speed in B against A where many cells share it.
pub struct SharedMove {
    pub median: f64,
    /// B's figure over A's of every time rate judged, in order.
    pub factors: Vec<f64>,
}

/// The time rates' [`SharedMove`]; None without a time rate judged in both runs.
pub fn shared_move(comparison: &Comparison) -> Option<SharedMove> {
    let time_rates = comparison.rows.iter().filter(|r| r.a.is_time_rate());
    let mut factors: Vec<f64> = time_rates.filter_map(|r| Some(r.judgement.as_ref()?.factor)).collect();
    factors.sort_by(f64::total_cmp);
    Some(SharedMove { median: *factors.get(factors.len() / 2)?, factors })
}

/// The fewest time rates whose median B/A is taken as the move they share.
pub const LEAST_FOR_SHIFT: usize = 10;

/// Judges the time rates again beside the move they all share: B's kept samples divided by the
/// median of the rows' B/A before the test, each row held to the threshold it had. What a host
/// that ran slower or faster in B did to every cell is left out, and with it a change that every
/// stack made alike: the rows' factors and figures stay as measured. Err with fewer than
/// [`LEAST_FOR_SHIFT`] time rates judged.
pub fn judge_beside_shift(comparison: &mut Comparison) -> Result<f64, String> {
    let shift = match shared_move(comparison) {
        Some(shared) if shared.factors.len() >= LEAST_FOR_SHIFT => shared.median,
        shared => {
            return Err(format!(
                "--beside-shift needs at least {LEAST_FOR_SHIFT} time rates judged in both runs to find the move \
                 they share; these runs have {}",
                shared.map_or(0, |s| s.factors.len())
            ))
        }
    };
    for row in comparison.rows.iter_mut().filter(|r| r.a.is_time_rate()) {
        let Some(judgement) = &mut row.judgement else { continue };
        let b_kept: Vec<f64> = kept_samples(row.b).iter().map(|x| x / shift).collect();
        let beside = judge(&kept_samples(row.a), &b_kept, figure(row.a), true, judgement.threshold, false);
        if let Some(beside) = beside {
            (judgement.p, judgement.verdict) = (beside.p, beside.verdict);
        }
    }
    comparison.beside_shift = Some(shift);
    Ok(shift)
}

/// The noisier run's noise probe (crate::noise), as a threshold for the time measure's rates: a
/// 20-ms stretch's ± once the slowed ones are set aside, which a difference of medians must
/// exceed to be called (the measure's default is for a quiet machine). None for other cells, or
/// runs stored before the probe.
pub fn noise_floor(a: &RunDocument, b: &RunDocument, cell: &CellResult) -> Option<f64> {
    if !cell.is_time_rate() {
        return None;
    }
    let noise = |d: &RunDocument| d.run.environment.conditions.as_ref()?.noise.as_ref().map(|n| n.kept_spread_percent);
    let floor = noise(a).into_iter().chain(noise(b)).fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    floor.map(|percent| percent / 100.0)
}

/// A cell's samples without those set aside as slowed (`CellResult::slowed`): what its median and
/// interval are of.
fn kept_samples(cell: &CellResult) -> Vec<f64> {
    let kept = cell.samples.iter().enumerate().filter(|(i, _)| !cell.slowed.contains(i));
    kept.map(|(_, &x)| x).collect()
}

/// [`judge`] of two cells of one measure: by range where the measure is judged so, and `~` for a
/// change below the measure's [`least_change`] unless it is from or to zero.
fn judge_cells(a: &CellResult, b: &CellResult, threshold: f64) -> Option<Judgement> {
    let measure = a.key.measure.as_str();
    let (a_kept, b_kept) = (kept_samples(a), kept_samples(b));
    let figure = figure(a);
    let mut judgement = judge(&a_kept, &b_kept, figure, a.better != "lower", threshold, judged_by_range(measure))?;
    let (figure_a, figure_b) = (figure.of(&a_kept)?, figure.of(&b_kept)?);
    let from_or_to_zero = (figure_a == 0.0) != (figure_b == 0.0);
    if (figure_b - figure_a).abs() < least_change(measure) && !from_or_to_zero {
        judgement.verdict = Verdict::Same;
    }
    if a.better == "neither" && judgement.verdict != Verdict::Same {
        judgement.verdict = Verdict::Changed;
    }
    Some(judgement)
}

/// The smallest two-sided p-value the exact test can give for groups of `n1` and `n2`: both
/// extreme splits out of C(n1 + n2, n1). When it is not below [`ALPHA`], no difference can be
/// significant, however large.
pub fn smallest_p(n1: usize, n2: usize) -> f64 {
    let choose = (1..=n1).fold(1.0, |c, i| c * (n2 + i) as f64 / i as f64);
    (2.0 / choose).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    /// Samples around `center` with a spread of `spread` (fraction), in a fixed zig-zag order.
    fn around(center: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n).map(|i| center * (1.0 + spread * ((i % 5) as f64 - 2.0) / 2.0)).collect()
    }

    #[test]
    fn clearly_different_samples_are_better_or_worse_in_the_metric_s_direction() {
        let (a, b) = (around(1000.0, 0.01, 10), around(1200.0, 0.01, 10));
        let higher = judge(&a, &b, Figure::Median, true, 0.05, false).unwrap();
        assert_eq!(higher.verdict, Verdict::Better);
        assert!((higher.factor - 1.2).abs() < 1e-12 && higher.p < 0.001, "{higher:?}");
        assert_eq!(judge(&b, &a, Figure::Median, true, 0.05, false).unwrap().verdict, Verdict::Worse);
        // Where lower is better (bytes, instructions), the same change is the other way round.
        assert_eq!(judge(&a, &b, Figure::Median, false, 0.05, false).unwrap().verdict, Verdict::Worse);
        assert_eq!(judge(&b, &a, Figure::Median, false, 0.05, false).unwrap().verdict, Verdict::Better);
    }

    #[test]
    fn identical_samples_are_the_same() {
        let a = around(1000.0, 0.02, 10);
        let same = judge(&a, &a, Figure::Median, true, 0.05, false).unwrap();
        assert_eq!(same, Judgement { factor: 1.0, p: 1.0, threshold: 0.05, verdict: Verdict::Same });
        // Deterministic counts: every sample equal in both runs.
        assert_eq!(
            judge(&[5000.0; 6], &[5000.0; 6], Figure::Median, false, 0.01, false).unwrap().verdict,
            Verdict::Same
        );
    }

    #[test]
    fn noisy_overlapping_samples_are_the_same_even_when_the_medians_differ_beyond_the_threshold() {
        // Medians 1000 and 1100 (10% apart), but the samples interleave: not significant.
        let a = [700.0, 1300.0, 800.0, 1000.0, 1250.0, 900.0, 1400.0, 600.0];
        let b = [750.0, 1350.0, 1100.0, 850.0, 1450.0, 950.0, 1200.0, 1150.0];
        let noisy = judge(&a, &b, Figure::Median, true, 0.05, false).unwrap();
        assert!(noisy.p > 0.2 && (noisy.factor - 1.0).abs() > 0.05, "{noisy:?}");
        assert_eq!(noisy.verdict, Verdict::Same);
    }

    #[test]
    fn the_threshold_decides_a_small_but_significant_difference() {
        // A consistent 3% gain: significant, but within wall time's 5% noise threshold.
        let (a, b) = (around(1000.0, 0.002, 10), around(1030.0, 0.002, 10));
        let small = judge(&a, &b, Figure::Median, true, default_threshold("time"), false).unwrap();
        assert!(small.p < 0.001, "{small:?}");
        assert_eq!(small.verdict, Verdict::Same);
        // Beyond the 1% of deterministic measures, or a --threshold of 1%.
        assert_eq!(
            judge(&a, &b, Figure::Median, true, default_threshold("instructions"), false).unwrap().verdict,
            Verdict::Better
        );
        assert_eq!(judge(&a, &b, Figure::Median, true, 0.01, false).unwrap().verdict, Verdict::Better);
    }

    #[test]
    fn instruction_counts_are_judged_by_their_ranges_and_a_threshold_of_a_fraction_of_a_percent() {
        let threshold = default_threshold("instructions");
        assert!(threshold < 0.005 && judged_by_range("instructions") && !judged_by_range("time"));
        // Three samples each, 0.5% apart and not overlapping: worse, though p can only be 0.1.
        let (a, b) = ([1_000_000.0, 1_000_100.0, 1_000_050.0], [1_005_000.0, 1_005_200.0, 1_004_900.0]);
        let worse = judge(&a, &b, Figure::Median, false, threshold, true).unwrap();
        assert!(worse.p >= ALPHA, "{worse:?}");
        assert_eq!(worse.verdict, Verdict::Worse);
        assert_eq!(judge(&b, &a, Figure::Median, false, threshold, true).unwrap().verdict, Verdict::Better);
        // The same change judged by the test is ~.
        assert_eq!(judge(&a, &b, Figure::Median, false, threshold, false).unwrap().verdict, Verdict::Same);
        // Overlapping ranges are ~, however far the medians.
        let spread = [990_000.0, 1_010_000.0, 1_020_000.0];
        assert_eq!(judge(&a, &spread, Figure::Median, false, threshold, true).unwrap().verdict, Verdict::Same);
        // Apart but within the threshold: ~.
        let close = [1_001_000.0, 1_001_100.0, 1_001_200.0];
        assert_eq!(judge(&a, &close, Figure::Median, false, threshold, true).unwrap().verdict, Verdict::Same);
    }

    #[test]
    fn io_counts_of_two_samples_are_judged_by_their_ranges() {
        // A quick run's two samples per cell: a signature's byte more or less is no change, one
        // record or tens of bytes more per handshake are, though two against two give p ≥ 0.3.
        let (threshold, by_range) = (default_threshold("io"), judged_by_range("io"));
        let judge = |a: &[f64], b: &[f64]| judge(a, b, Figure::Median, false, threshold, by_range).unwrap().verdict;
        assert_eq!(judge(&[1156.0, 1158.0], &[1157.0, 1159.0]), Verdict::Same);
        assert_eq!(judge(&[1156.0, 1158.0], &[1190.0, 1192.0]), Verdict::Worse);
        assert_eq!(judge(&[4.0, 4.0], &[3.0, 3.0]), Verdict::Better);
    }

    #[test]
    fn a_sync_count_changes_by_a_lock_per_handshake_or_from_none() {
        let cells = |a: &[f64], b: &[f64]| {
            let mut cell = fixture::document().results.remove(0);
            (cell.key.measure, cell.better) = ("sync".into(), "lower".into());
            let (mut cell_a, mut cell_b) = (cell.clone(), cell);
            (cell_a.samples, cell_b.samples) = (a.to_vec(), b.to_vec());
            judge_cells(&cell_a, &cell_b, default_threshold("sync")).unwrap().verdict
        };
        // One more lock per handshake: worse, however many it already took.
        assert_eq!(cells(&[5419.15; 3], &[5420.15; 3]), Verdict::Worse);
        assert_eq!(cells(&[5420.15; 3], &[5419.15; 3]), Verdict::Better);
        // A lock where there was none, even in one handshake of twenty: worse.
        assert_eq!(cells(&[0.0; 3], &[0.05; 3]), Verdict::Worse);
        // Less than one per handshake, as a handshake's random values move it: ~.
        assert_eq!(cells(&[605.65, 605.7, 605.7], &[606.1, 605.75, 605.8]), Verdict::Same);
        assert_eq!(cells(&[565.15; 2], &[565.15; 2]), Verdict::Same);
        assert_eq!(cells(&[0.0; 2], &[0.0; 2]), Verdict::Same);
    }

    #[test]
    fn a_property_that_differs_is_changed_neither_better_nor_worse() {
        let cells = |a: &[f64], b: &[f64]| {
            let mut cell = fixture::document().results.remove(0);
            (cell.key.measure, cell.metric, cell.better) = ("time".into(), "trust_roots".into(), "neither".into());
            let (mut cell_a, mut cell_b) = (cell.clone(), cell);
            (cell_a.samples, cell_b.samples) = (a.to_vec(), b.to_vec());
            judge_cells(&cell_a, &cell_b, 0.05).unwrap().verdict
        };
        assert_eq!(cells(&[145.0; 6], &[120.0; 6]), Verdict::Changed);
        assert_eq!(cells(&[120.0; 6], &[145.0; 6]), Verdict::Changed);
        assert_eq!(cells(&[145.0; 6], &[145.0; 6]), Verdict::Same);
        assert_eq!(crate::results::bracket("roots", "neither"), "roots");
        assert_eq!(crate::results::bracket("1/s", "higher"), "1/s, higher is better");
    }

    #[test]
    fn beside_the_shift_every_cell_shares_only_the_cell_that_moved_apart_is_judged_worse() {
        let mut a = fixture::document();
        let template = a.results.iter().find(|c| c.is_time_rate()).unwrap().clone();
        a.results = (0..12)
            .map(|i| {
                let mut cell = template.clone();
                cell.key.scenario = format!("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_{i}");
                cell.samples = vec![1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0];
                cell
            })
            .collect();
        // The host ran 10% slower in B; the last stack lost 20% of its own besides.
        let mut b = a.clone();
        for (i, cell) in b.results.iter_mut().enumerate() {
            let factor = if i == 11 { 0.9 * 0.8 } else { 0.9 };
            cell.samples.iter_mut().for_each(|x| *x *= factor);
        }
        let mut comparison = compare(&a, &b, None);
        assert_eq!(comparison.count(Verdict::Worse), 12, "as measured, every cell is worse");
        let shift = judge_beside_shift(&mut comparison).unwrap();
        assert!((shift - 0.9).abs() < 1e-9, "{shift}");
        assert_eq!(comparison.count(Verdict::Worse), 1);
        let worse = comparison.rows.iter().find(|r| r.judgement.as_ref().unwrap().verdict == Verdict::Worse).unwrap();
        assert!(worse.a.key.scenario.ends_with("_11"));
        // The factors stay as measured.
        assert!((worse.judgement.as_ref().unwrap().factor - 0.72).abs() < 1e-9);
        // Too few time rates to find a shared move.
        let (mut few_a, mut few_b) = (a.clone(), b.clone());
        few_a.results.truncate(9);
        few_b.results.truncate(9);
        let error = judge_beside_shift(&mut compare(&few_a, &few_b, None)).unwrap_err();
        assert!(error.starts_with("--beside-shift needs at least 10 time rates judged in both runs"), "{error}");
    }

    #[test]
    fn too_few_samples_are_never_significant() {
        assert_eq!(
            judge(&[1000.0, 1001.0], &[2000.0, 2001.0], Figure::Median, true, 0.05, false).unwrap().verdict,
            Verdict::Same
        );
        assert_eq!(smallest_p(2, 2), 1.0 / 3.0);
        assert_eq!(smallest_p(6, 6), 2.0 / 924.0);
        assert!(smallest_p(3, 3) >= ALPHA && smallest_p(4, 4) < ALPHA);
        assert_eq!(judge(&[], &[1.0], Figure::Median, true, 0.05, false), None);
    }

    #[test]
    fn a_cell_with_enough_history_is_held_to_its_own_run_to_run_changes() {
        let run = |median: f64, build: Option<&str>| {
            let mut doc = fixture::document();
            doc.results.truncate(1);
            let cell = &mut doc.results[0];
            (cell.median, cell.key.build) = (Some(median), build.map(String::from));
            doc
        };
        let cell = run(1000.0, None).results.remove(0);
        let mut history = History::default();
        // Four past changes: too few; the measure's default.
        for median in [1000.0, 1020.0, 1000.0, 1020.0, 1000.0] {
            history.add(&run(median, None));
            // Another build's runs are another cell's history.
            history.add(&run(median * 3.0, Some("native")));
        }
        assert_eq!(history.threshold(&cell), (0.05, ThresholdFrom::Default { changes: 4 }));
        // Five: changes of 2% and 1.96% alternate; the fence is Q3 + 1.5 IQR = 2.06%, above
        // time's 1% floor.
        history.add(&run(1020.0, None));
        let (threshold, from) = history.threshold(&cell);
        assert_eq!(from, ThresholdFrom::History { changes: 5 });
        assert!((threshold - 0.0206).abs() < 1e-4, "{threshold}");
        // A steady history gives the floor, not zero.
        let mut steady = History::default();
        (0..8).for_each(|_| steady.add(&run(1000.0, None)));
        assert_eq!(steady.threshold(&cell), (history_floor("time"), ThresholdFrom::History { changes: 7 }));
        // In a comparison, the cell is held to it; a cell without history to its default.
        let (a, b) = (fixture::document(), fixture::document());
        let threshold = |c: &Comparison, i: usize| c.rows[i].judgement.as_ref().unwrap().threshold;
        let by_history = compare_with_history(&a, &b, None, &history);
        assert_eq!(by_history.rows[0].threshold_from, ThresholdFrom::History { changes: 5 });
        assert!((threshold(&by_history, 0) - 0.0206).abs() < 1e-4);
        assert_eq!(compare(&a, &b, None).rows[0].threshold_from, ThresholdFrom::Default { changes: 0 });
        let heap = by_history.rows.iter().position(|r| r.a.key.measure == "heap").unwrap();
        assert_eq!(threshold(&by_history, heap), default_threshold("heap"));
        // --threshold overrides it.
        assert_eq!(compare_with_history(&a, &b, Some(0.1), &history).rows[0].threshold_from, ThresholdFrom::Given);
    }

    #[test]
    fn two_stacks_compare_as_one_stack_of_two_runs() {
        // One run of rustls and of openssl, the other's openssl at another release.
        let mut a = fixture::document();
        let mut b = fixture::document();
        for cell in b.results.iter_mut().filter(|c| c.key.client_stack == "openssl") {
            (cell.key.client_stack, cell.key.server_stack) = ("openssl@3.5".into(), "openssl@3.5".into());
        }
        let openssl_cells = a.results.iter().filter(|c| c.key.client_stack == "openssl").count();
        assert!(openssl_cells > 0);
        select_stack(&mut a, "openssl", "openssl").unwrap();
        select_stack(&mut b, "openssl@3.5", "openssl").unwrap();
        let comparison = compare(&a, &b, None);
        assert_eq!(comparison.rows.len(), openssl_cells);
        assert!(comparison.only_in_a.is_empty() && comparison.only_in_b.is_empty());
        assert!(comparison.rows.iter().all(|r| r.b.key.client_stack == "openssl"));
        let err = select_stack(&mut fixture::document(), "openssl@3.6", "openssl").unwrap_err().to_string();
        assert_eq!(err, "run run-1 has no cells of stack `openssl@3.6` (its stacks: rustls-aws-lc-rs, openssl)");
    }

    #[test]
    fn cells_are_matched_by_scenario_pair_side_and_metric() {
        let a = fixture::document();
        let mut b = fixture::document();
        b.results.remove(4); // the chacha20 server cell
        b.results[0].samples = b.results[0].samples.iter().map(|x| x * 2.0).collect();
        b.results[0].median = b.results[0].median.map(|m| m * 2.0);
        let mut extra = b.results[0].clone();
        extra.side = tlsbench_harness::Side::Client;
        extra.metric = "handshake_bytes".into();
        b.results.push(extra);

        let comparison = compare(&a, &b, None);
        assert_eq!(comparison.rows.len(), 6);
        let first = comparison.rows[0].judgement.as_ref().unwrap();
        assert_eq!((first.factor, first.threshold), (2.0, 0.05));
        // 3 samples against 3 cannot be significant, however far apart.
        assert_eq!(first.verdict, Verdict::Same);
        // The failed openssl cells have nothing to judge.
        assert!(comparison.rows[1].judgement.is_none());
        assert_eq!(comparison.only_in_a.iter().map(|c| &c.key.scenario[..]).collect::<Vec<_>>(), [fixture::CHACHA]);
        assert_eq!(comparison.only_in_b.iter().map(|c| &c.metric[..]).collect::<Vec<_>>(), ["handshake_bytes"]);
        assert_eq!(comparison.count(Verdict::Same), 3);
        // The heap cell is held against the 1% of deterministic measures.
        assert_eq!(comparison.rows[5].judgement.as_ref().unwrap().threshold, 0.01);
        assert_eq!(compare(&a, &b, Some(0.1)).rows[5].judgement.as_ref().unwrap().threshold, 0.1);
    }
}
