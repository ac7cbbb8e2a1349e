//! Statistics of samples (docs/methodology.md, "Statistics"): one cell's median, a
//! distribution-free 95% confidence interval of it, the range and the MAD outliers; and the
//! Mann-Whitney U test of two (docs/usage.md, "Comparing two runs").

/// What the results document reports for one series of samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub median: f64,
    /// The series' figure where it is not the median: the mean of the faster half
    /// ([`faster_half`]), for the rates a noisy machine slows.
    pub faster_half_mean: Option<f64>,
    /// `[low, high]` of the figure; below 95% coverage when there are 5 samples or fewer (see
    /// [`summarize`]); of the faster half's mean as [`faster_half`] gives it.
    pub ci95: [f64; 2],
    pub min: f64,
    pub max: f64,
    /// Indices into the samples, in their original order.
    pub outliers: Vec<usize>,
}

/// A modified z-score (Iglewicz & Hoaglin) above this is an outlier: 3.5 is the cut-off they
/// recommend, loose enough that normally distributed data almost never trips it.
pub const OUTLIER_THRESHOLD: f64 = 3.5;

/// The 0.75 quantile of the standard normal: MAD / 0.6745 estimates the standard deviation of
/// normal data, so scaling by it makes the modified z-score read like an ordinary z-score.
const MAD_TO_Z: f64 = 0.6745;

/// The fewest samples whose `[min, max]` covers the median with at least 95% (1 - 2^(1-n));
/// with fewer, the reported interval is `[min, max]` at a lower coverage.
pub const MIN_SAMPLES_FOR_CI95: usize = 6;

/// The confidence interval must miss the true median with at most this probability.
const ALPHA: f64 = 0.05;

/// Summarizes the samples; `None` when there are none.
///
/// The confidence interval is `[x_(j), x_(n+1-j)]` (1-based order statistics) with the largest
/// `j` whose coverage, from the binomial distribution with p = 0.5, is still at least 95%. It
/// assumes nothing about the distribution, which timing samples rarely are (skewed, multimodal).
/// With 5 samples or fewer no pair of order statistics reaches 95% (even `[min, max]` covers
/// only 1 - 2^(1-n), 93.75% at n = 5), so the interval is then `[min, max]` at that lower coverage.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = median_of_sorted(&sorted);
    let ci95 = match ci_rank(n) {
        Some(j) => [sorted[j - 1], sorted[n - j]],
        None => [sorted[0], sorted[n - 1]],
    };
    Some(Summary {
        median,
        faster_half_mean: None,
        ci95,
        min: sorted[0],
        max: sorted[n - 1],
        outliers: outliers(samples, median),
    })
}

impl Summary {
    /// The figure a table prints: the faster half's mean where there is one, else the median.
    pub fn figure(&self) -> f64 {
        self.faster_half_mean.unwrap_or(self.median)
    }

    /// Which figure it is.
    pub fn kind(&self) -> Figure {
        match self.faster_half_mean {
            Some(_) => Figure::FasterHalfMean,
            None => Figure::Median,
        }
    }

    /// The summary with the faster half's mean as its figure, and its interval ([`faster_half`]).
    pub fn of_faster_half(self, samples: &[f64]) -> Summary {
        match faster_half(samples) {
            Some((mean, interval)) => Summary { faster_half_mean: Some(mean), ci95: interval, ..self },
            None => self,
        }
    }
}

/// What a series' figure is: its median, or the mean of its faster half ([`faster_half`]: the
/// time measure's rates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    Median,
    FasterHalfMean,
}

impl Figure {
    /// The figure of `samples`; `None` without samples.
    pub fn of(self, samples: &[f64]) -> Option<f64> {
        match self {
            Figure::Median => summarize(samples).map(|s| s.median),
            Figure::FasterHalfMean => faster_half(samples).map(|(mean, _)| mean),
        }
    }

    /// The figure's interval; `None` without samples.
    pub fn interval(self, samples: &[f64]) -> Option<[f64; 2]> {
        match self {
            Figure::Median => summarize(samples).map(|s| s.ci95),
            Figure::FasterHalfMean => faster_half(samples).map(|(_, interval)| interval),
        }
    }
}

/// The figure of a series that a noisy machine slows (the time measure's rates; docs/sampling.md,
/// "The faster half"), and its interval; `None` without samples.
///
/// The figure is the mean of the faster half: the samples at or above the median (with an odd
/// count, the median among them). Noise on a shared machine only slows a sample, each by a share
/// of its own, so slowed samples that reach the middle move a median from one run to the next;
/// the faster half is the machine's speed between the bursts. The interval lies about that mean,
/// as far as the farther of the fastest sample and the fastest of the slower half. It is not
/// distribution-free like the median's: it was chosen by how often it held the next run's figure
/// (docs/sampling.md), and is widened for the machine's drift as the median's was.
pub fn faster_half(samples: &[f64]) -> Option<(f64, [f64; 2])> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let half = &sorted[n / 2..];
    let mean = half.iter().sum::<f64>() / half.len() as f64;
    let reach = match n {
        1 => 0.0,
        _ => (mean - sorted[n / 2 - 1]).max(sorted[n - 1] - mean),
    };
    Some((mean, [mean - reach, mean + reach]))
}

/// `summary` of samples taken by several processes (`forks`, parallel to `samples`; None for a
/// process of its own) with its interval widened to span each fork's figure (its median, or its
/// faster half's mean where that is the summary's figure): samples of one
/// process share its state (its JIT's code, its heap's layout), so a difference between
/// processes widens the interval rather than hiding in it (JMH reports its forks likewise).
pub fn spanning_forks(mut summary: Summary, samples: &[f64], forks: &[Option<u32>]) -> Summary {
    let mut ids: Vec<u32> = forks.iter().flatten().copied().collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() < 2 {
        return summary;
    }
    for id in ids {
        let of_fork: Vec<f64> = samples.iter().zip(forks).filter(|(_, f)| **f == Some(id)).map(|(v, _)| *v).collect();
        // The fork's own figure, of the summary's kind.
        if let Some(figure) = summary.kind().of(&of_fork) {
            summary.ci95 = [summary.ci95[0].min(figure), summary.ci95[1].max(figure)];
        }
    }
    summary
}

/// How wide an interval is, as the table prints it: the larger distance from the median to
/// either end, in % of the median; `None` when the median is 0 and a relative width means nothing.
pub fn ci_percent(median: f64, [low, high]: [f64; 2]) -> Option<f64> {
    let spread = (median - low).max(high - median) / median.abs() * 100.0;
    spread.is_finite().then_some(spread)
}

/// The median of a sorted, non-empty slice: the two middle indices coincide when the length is
/// odd, and `(x + x) / 2` is exactly `x`.
fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    (sorted[(n - 1) / 2] + sorted[n / 2]) / 2.0
}

/// The 1-based rank `j` of the lower end of the 95% interval for `n` samples, or `None` when
/// even `j = 1` covers less than 95%.
///
/// The interval misses the median when fewer than `j` samples fall below it or fewer than `j`
/// above it: probability `2 * P(B <= j - 1)` with `B ~ Binomial(n, 1/2)`. The probabilities are
/// summed in log space so that `2^-n` cannot underflow to zero for large `n`.
fn ci_rank(n: usize) -> Option<usize> {
    let ln_half_pow_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0; // ln C(n, i), built up as C(n, i) = C(n, i - 1) * (n - i + 1) / i
    let mut below = 0.0; // P(B <= i)
    let mut rank = None;
    for i in 0..n / 2 {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64 / i as f64).ln();
        }
        below += (ln_choose + ln_half_pow_n).exp();
        if 2.0 * below > ALPHA {
            break;
        }
        rank = Some(i + 1);
    }
    rank
}

/// The median absolute deviation of `values` from their `median`.
fn mad(values: &[f64], median: f64) -> f64 {
    let mut deviations: Vec<f64> = values.iter().map(|x| (x - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    median_of_sorted(&deviations)
}

/// Indices of the samples whose modified z-score `0.6745 (x - median) / MAD` exceeds the threshold.
///
/// When the MAD is 0, at least half the samples equal the median (typical of deterministic
/// measures such as instruction counts) and every other sample would score infinity, however
/// small its difference; so nothing is flagged rather than everything.
fn outliers(samples: &[f64], median: f64) -> Vec<usize> {
    let mad = mad(samples, median);
    if mad == 0.0 {
        return Vec::new();
    }
    samples
        .iter()
        .enumerate()
        .filter(|(_, x)| (MAD_TO_Z * (*x - median) / mad).abs() > OUTLIER_THRESHOLD)
        .map(|(i, _)| i)
        .collect()
}

/// A rate this far below the median of its series (in %), and an outlier below it, is
/// [`slowed`]: quiet, samples of one cell spread ±2 to 4% here; slowed by a noisy neighbour, they
/// fell 25 to 35% (docs/sampling.md, "A noisy machine").
pub const SLOWED_BELOW_PERCENT: f64 = 5.0;

/// Indices of the rates slowed by the machine rather than by what they measure: below the
/// median by more than [`SLOWED_BELOW_PERCENT`] and by a modified z-score above
/// [`OUTLIER_THRESHOLD`]. Noise on a shared machine (another tenant on the caches, memory or
/// CPU) only ever slows a sample, so only the low side is looked at. With a MAD of 0 (at least
/// half the rates equal) the percentage alone decides.
pub fn slowed(rates: &[f64]) -> Vec<usize> {
    if rates.len() < 3 {
        return Vec::new();
    }
    let mut sorted = rates.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = median_of_sorted(&sorted);
    let mad = mad(rates, median);
    let far_below = |x: f64| x < median * (1.0 - SLOWED_BELOW_PERCENT / 100.0);
    let outlier = |x: f64| mad == 0.0 || MAD_TO_Z * (median - x) / mad > OUTLIER_THRESHOLD;
    (0..rates.len()).filter(|&i| far_below(rates[i]) && outlier(rates[i])).collect()
}

/// `rates` without the [`slowed`] ones, in their order.
pub fn kept(rates: &[f64]) -> Vec<f64> {
    let slowed = slowed(rates);
    rates.iter().enumerate().filter(|(i, _)| !slowed.contains(i)).map(|(_, &x)| x).collect()
}

/// Up to this many samples in all, [`mann_whitney_p`] computes the exact distribution: at 40
/// it takes about a million additions, and from about 20 per group the normal approximation it
/// uses beyond is within a few percent of the exact p-value.
pub const EXACT_MANN_WHITNEY_MAX: usize = 40;

/// The two-sided p-value of the Mann-Whitney U (Wilcoxon rank-sum) test that `a` and `b` come
/// from the same distribution; `None` when either is empty.
///
/// Ties get their mean rank. Up to [`EXACT_MANN_WHITNEY_MAX`] samples in all, the p-value is
/// exact: the share of all ways to split the pooled ranks into groups of these sizes whose rank
/// sum lies at least as far from its mean as the observed one (the permutation distribution,
/// exact with ties too). Beyond, it is the normal approximation with the tie correction of the
/// variance and a continuity correction of 1/2.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (n1, n) = (a.len(), a.len() + b.len());
    let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Twice the mean ranks, so that every rank and rank sum is a whole number: a tie group over
    // the 1-based ranks i..=j has mean rank (i + j) / 2.
    let mut ranks2 = vec![0usize; n];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < n {
        let j = (i..n).take_while(|&k| pooled[k].0 == pooled[i].0).last().unwrap_or(i);
        ranks2[i..=j].fill(i + j + 2);
        ties.push(j - i + 1);
        i = j + 1;
    }
    let observed: usize = ranks2.iter().zip(&pooled).filter(|(_, (_, in_a))| *in_a).map(|(r, _)| r).sum();
    let mean = n1 * (n + 1); // twice the rank sum's mean under the null hypothesis
    let p = match n <= EXACT_MANN_WHITNEY_MAX {
        true => exact_rank_sum_p(&ranks2, n1, observed.abs_diff(mean), mean),
        false => normal_rank_sum_p(n1, n - n1, &ties, observed.abs_diff(mean) as f64 / 2.0),
    };
    Some(p.min(1.0))
}

/// `counts[k][s]`: the number of ways to pick `k` of the ranks seen so far with doubled rank sum
/// `s`; the p-value is the share of the `n1`-subsets at least `distance` from `mean`.
fn exact_rank_sum_p(ranks2: &[usize], n1: usize, distance: usize, mean: usize) -> f64 {
    let max_sum: usize = ranks2.iter().sum();
    let mut counts = vec![vec![0f64; max_sum + 1]; n1 + 1];
    counts[0][0] = 1.0;
    for &rank in ranks2 {
        // Downwards in k, so that each rank is picked at most once.
        for k in (1..=n1).rev() {
            let (lower, upper) = counts.split_at_mut(k);
            for s in rank..=max_sum {
                upper[0][s] += lower[k - 1][s - rank];
            }
        }
    }
    let total: f64 = counts[n1].iter().sum();
    let extreme: f64 =
        counts[n1].iter().enumerate().filter(|(s, _)| s.abs_diff(mean) >= distance).map(|(_, c)| c).sum();
    extreme / total
}

/// The normal approximation: `distance` is |W - E[W]| of the rank sum W.
fn normal_rank_sum_p(n1: usize, n2: usize, ties: &[usize], distance: f64) -> f64 {
    let (n1, n2, n) = (n1 as f64, n2 as f64, (n1 + n2) as f64);
    let tie_term: f64 = ties.iter().map(|&t| (t * t * t - t) as f64).sum::<f64>() / (n * (n - 1.0));
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - tie_term);
    if variance <= 0.0 {
        return 1.0; // every sample equal
    }
    let z = ((distance - 0.5).max(0.0)) / variance.sqrt();
    erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function, to a relative error below 1.2e-7 (the Chebyshev fit of
/// Numerical Recipes' `erfcc`): plenty for a p-value compared with 0.05.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807
                            + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_interval_of_several_processes_spans_each_ones_median() {
        // Three forks, one of which settled 25% above the others: the pooled interval of 21
        // samples stops short of its median (130); the spanned one reaches it.
        let fork = |center: f64| [-5.0, -4.0, -2.0, 0.0, 2.0, 4.0, 5.0].map(|d| center + d);
        let samples: Vec<f64> = [fork(100.0), fork(105.0), fork(130.0)].concat();
        let forks: Vec<Option<u32>> = (0..3).flat_map(|f| [Some(f); 7]).collect();
        let pooled = summarize(&samples).unwrap();
        assert!(pooled.ci95[0] > 100.0 && pooled.ci95[1] < 130.0, "{:?}", pooled.ci95);
        let spanned = spanning_forks(pooled.clone(), &samples, &forks);
        assert_eq!((spanned.median, spanned.ci95), (pooled.median, [100.0, 130.0]));
        // One process, or samples of their own processes: the interval is the pooled one.
        assert_eq!(spanning_forks(pooled.clone(), &samples, &[Some(0); 21]), pooled);
        assert_eq!(spanning_forks(pooled.clone(), &samples, &[None; 21]), pooled);
        // A faster half's summary spans each fork's faster-half mean: where two of three forks
        // settled at 130, the pooled interval lies about them, and the third's (102.75: its
        // samples at or above its median, 100, 102, 104 and 105) is below it.
        let samples: Vec<f64> = [fork(100.0), fork(130.0), fork(130.0)].concat();
        let faster = summarize(&samples).unwrap().of_faster_half(&samples);
        assert!(faster.ci95[0] > 110.0, "{:?}", faster.ci95);
        let spanned = spanning_forks(faster.clone(), &samples, &forks);
        assert_eq!(spanned.ci95, [102.75, faster.ci95[1]]);
    }

    use super::*;

    /// Six samples of a quiet machine, spread ±1%.
    const QUIET: [f64; 6] = [99.0, 99.5, 100.0, 100.2, 100.5, 101.0];

    #[test]
    fn the_faster_half_is_the_mean_of_the_samples_at_or_above_the_median() {
        let (mean, interval) = faster_half(&QUIET).unwrap();
        assert!((mean - (100.2 + 100.5 + 101.0) / 3.0).abs() < 1e-12);
        // About the mean, as far as the farther of the slower half's fastest (100) and the fastest.
        let reach = mean - 100.0;
        assert!((interval[0] - 100.0).abs() < 1e-12 && (interval[1] - (mean + reach)).abs() < 1e-12, "{interval:?}");
        // An odd count: the median is in the faster half.
        assert_eq!(faster_half(&[3.0, 1.0, 2.0]).unwrap(), (2.5, [1.0, 4.0]));
        assert_eq!(faster_half(&[7.0]).unwrap(), (7.0, [7.0, 7.0]));
        assert_eq!(faster_half(&[]), None);
        assert_eq!(Figure::FasterHalfMean.of(&QUIET), Some(mean));
        assert_eq!(Figure::Median.of(&QUIET), Some(100.1));
    }

    #[test]
    fn samples_a_noisy_neighbour_slowed_hardly_move_the_faster_half() {
        // Any two of the six slowed, each by 5 to 35% (the noisy VM's slowed samples lost 25 to
        // 35%; the injector's a random share): the figure stays within the quiet samples' spread
        // of the quiet figure, below it, and its interval holds the quiet figure.
        let (quiet, _) = faster_half(&QUIET).unwrap();
        for first in 0..6 {
            for second in first..6 {
                for (slow_first, slow_second) in [(0.95, 0.65), (0.8, 0.8), (0.65, 0.9), (0.7, 1.0)] {
                    let mut samples = QUIET;
                    samples[first] *= slow_first;
                    samples[second] *= slow_second;
                    let (mean, [low, high]) = faster_half(&samples).unwrap();
                    assert!(mean <= quiet && quiet / mean - 1.0 < 0.01, "{samples:?}: {mean} against {quiet}");
                    assert!(low <= quiet && quiet <= high, "{samples:?}: [{low}, {high}] against {quiet}");
                }
            }
        }
    }

    #[test]
    fn no_samples() {
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn one_sample() {
        let s = summarize(&[7.0]).unwrap();
        assert_eq!(
            s,
            Summary { median: 7.0, faster_half_mean: None, ci95: [7.0, 7.0], min: 7.0, max: 7.0, outliers: vec![] }
        );
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(summarize(&[3.0, 1.0, 2.0]).unwrap().median, 2.0);
        assert_eq!(summarize(&[4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
    }

    #[test]
    fn ci_of_ten_is_second_and_ninth() {
        // Shuffled 1..=10: coverage of [x_(2), x_(9)] is 1 - 2 * 11/1024 = 97.9%; [x_(3), x_(8)]
        // would only be 89.1%.
        let s = summarize(&[5.0, 9.0, 1.0, 10.0, 3.0, 7.0, 2.0, 8.0, 4.0, 6.0]).unwrap();
        assert_eq!(s.ci95, [2.0, 9.0]);
        assert_eq!((s.min, s.max, s.median), (1.0, 10.0, 5.5));
    }

    #[test]
    fn ci_ranks() {
        // Up to 5 samples nothing reaches 95%; 6 is the first n where [min, max] does.
        assert_eq!((1..MIN_SAMPLES_FOR_CI95).map(ci_rank).collect::<Vec<_>>(), vec![None; 5]);
        assert_eq!(ci_rank(MIN_SAMPLES_FOR_CI95), Some(1));
        assert_eq!(ci_rank(10), Some(2));
        // Published tables of the sign-test interval: n = 20 -> j = 6, n = 100 -> j = 40.
        assert_eq!(ci_rank(20), Some(6));
        assert_eq!(ci_rank(100), Some(40));
        // Large n must not underflow into an empty sum.
        assert!(ci_rank(2000).is_some());
    }

    #[test]
    fn small_n_falls_back_to_range() {
        let s = summarize(&[2.0, 1.0, 3.0]).unwrap();
        assert_eq!(s.ci95, [1.0, 3.0]);
    }

    #[test]
    fn flags_an_obvious_outlier() {
        let s = summarize(&[10.0, 10.2, 9.9, 10.1, 9.8, 10.0, 50.0, 10.1]).unwrap();
        assert_eq!(s.outliers, vec![6]);
    }

    #[test]
    fn no_outliers_when_all_equal() {
        assert_eq!(summarize(&[4.0; 8]).unwrap().outliers, Vec::<usize>::new());
    }

    #[test]
    fn no_outliers_when_mad_is_zero() {
        // Most samples identical, one differs: the MAD is 0, so nothing is flagged.
        assert_eq!(summarize(&[4.0, 4.0, 4.0, 4.0, 5.0]).unwrap().outliers, Vec::<usize>::new());
    }

    #[test]
    fn mann_whitney_exact_p_values() {
        // Reference values from scipy.stats.mannwhitneyu(a, b, method="exact").
        // Complete separation of 6 and 6: 2 of the C(12, 6) = 924 splits are as extreme.
        let low = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let high = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
        assert_eq!(mann_whitney_p(&low, &high), Some(2.0 / 924.0));
        assert_eq!(mann_whitney_p(&high, &low), Some(2.0 / 924.0));
        // 3 and 3 can never reach 5%: at best 2 of C(6, 3) = 20.
        assert_eq!(mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), Some(0.1));
        assert_eq!(mann_whitney_p(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0]), Some(0.2));
        assert_eq!(mann_whitney_p(&[], &[1.0]), None);
    }

    #[test]
    fn mann_whitney_with_ties() {
        // Identical deterministic samples: no evidence of any difference.
        assert_eq!(mann_whitney_p(&[100.0; 5], &[100.0; 5]), Some(1.0));
        // Two constant groups that differ separate completely: 2 of C(8, 4) = 70.
        assert_eq!(mann_whitney_p(&[100.0; 4], &[101.0; 4]), Some(2.0 / 70.0));
        // Mean ranks [1, 3, 3, 3, 5, 6]: enumerating the 20 splits of them, 6 have a rank sum at
        // least as far from its mean (10.5) as a's 7.
        assert_eq!(mann_whitney_p(&[1.0, 2.0, 2.0], &[2.0, 3.0, 4.0]), Some(0.3));
    }

    #[test]
    fn mann_whitney_normal_approximation_beyond_the_exact_limit() {
        // scipy.stats.mannwhitneyu(range(25), range(5, 30), method="asymptotic"): U = 200,
        // p = 0.029692860930829464 (tie and continuity corrections, like here).
        let x: Vec<f64> = (0..25).map(f64::from).collect();
        let y: Vec<f64> = (5..30).map(f64::from).collect();
        let p = mann_whitney_p(&x, &y).unwrap();
        assert!((p - 0.029692860930829464).abs() < 1e-6, "{p}");
        let far: Vec<f64> = (100..125).map(f64::from).collect();
        assert!(mann_whitney_p(&x, &far).unwrap() < 1e-8);
        assert_eq!(mann_whitney_p(&[3.0; 30], &[3.0; 30]), Some(1.0));
    }
}

#[cfg(test)]
mod slowed_tests {
    use super::*;

    /// Two cells' 20-ms samples on a noisy cloud VM (issue 42): openssl's and rustls's servers.
    const OPENSSL: [f64; 6] = [2_616.0, 2_532.0, 3_954.0, 3_749.0, 4_004.0, 3_798.0];
    const RUSTLS: [f64; 6] = [10_895.0, 7_900.0, 10_685.0, 11_024.0, 10_774.0, 11_160.0];

    #[test]
    fn the_samples_a_neighbour_slowed_are_set_aside() {
        assert_eq!(slowed(&OPENSSL), vec![0, 1]);
        assert_eq!(slowed(&RUSTLS), vec![1]);
        // What is kept spreads as a quiet machine's samples do: within ±4% of its median.
        for rates in [&OPENSSL[..], &RUSTLS[..]] {
            let kept = summarize(&kept(rates)).unwrap();
            assert!(ci_percent(kept.median, [kept.min, kept.max]).unwrap() < 4.0, "{kept:?}");
        }
    }

    #[test]
    fn slow_outliers_do_not_move_the_median_of_what_is_kept() {
        let clean = [100.0, 101.0, 99.5, 100.5, 99.0, 100.2, 100.8, 99.7];
        let reference = summarize(&clean).unwrap().median;
        // Up to a third of the samples slowed by 20 to 40%, wherever they fall.
        for slow in [vec![1], vec![0, 5], vec![2, 3, 7]] {
            let mut rates = clean.to_vec();
            for (k, &i) in slow.iter().enumerate() {
                rates[i] *= 0.8 - 0.1 * k as f64;
            }
            assert_eq!(slowed(&rates), slow);
            let median = summarize(&kept(&rates)).unwrap().median;
            assert!((median / reference - 1.0).abs() < 0.005, "{slow:?}: {median} against {reference}");
        }
    }

    #[test]
    fn a_quiet_cell_and_fast_samples_keep_everything() {
        // Spread within the quiet range: nothing is 5% below the median.
        assert!(slowed(&[100.0, 97.0, 103.0, 96.5, 101.0, 99.0]).is_empty());
        // A fast sample is never set aside: noise does not speed a sample up.
        assert!(slowed(&[100.0, 100.5, 99.5, 100.2, 150.0, 99.8]).is_empty());
        // Too few to tell.
        assert!(slowed(&[100.0, 50.0]).is_empty());
        // A 4% dip is an outlier by its z-score, but within the quiet spread: kept.
        assert!(slowed(&[100.0, 100.1, 99.9, 100.0, 96.0, 100.05]).is_empty());
    }
}
