//! Statistics of one cell's samples (DESIGN.md, "Measures"): the median, a distribution-free 95%
//! confidence interval of it, the range, and the samples a MAD test flags as outliers.

/// What the results document reports for one series of samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub median: f64,
    /// `[low, high]`; below 95% coverage when there are 5 samples or fewer (see [`summarize`]).
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
    Some(Summary { median, ci95, min: sorted[0], max: sorted[n - 1], outliers: outliers(samples, median) })
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

/// Indices of the samples whose modified z-score `0.6745 (x - median) / MAD` exceeds the threshold.
///
/// When the MAD is 0, at least half the samples equal the median (typical of deterministic
/// measures such as instruction counts) and every other sample would score infinity, however
/// small its difference; so nothing is flagged rather than everything.
fn outliers(samples: &[f64], median: f64) -> Vec<usize> {
    let mut deviations: Vec<f64> = samples.iter().map(|x| (x - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let mad = median_of_sorted(&deviations);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_samples() {
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn one_sample() {
        let s = summarize(&[7.0]).unwrap();
        assert_eq!(s, Summary { median: 7.0, ci95: [7.0, 7.0], min: 7.0, max: 7.0, outliers: vec![] });
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
}
