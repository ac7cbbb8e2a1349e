//! The one-thread rate that an N-thread cell's rate per thread is compared with (its scaling
//! efficiency, document.rs). In a run with `--threads` the one-thread row's samples are pinned to
//! each CPU of the largest N in turn, and the N threads one per CPU (crate::cores): the reference
//! is then the mean, over the CPUs the N threads ran on, of each CPU's one-thread figure (its
//! median, or a time rate's faster-half mean), so that a machine's unequal cores cancel out.
//! Without pinned samples (a run from before, a runner that does not pin), it is the one-thread
//! figure, as it was.

use crate::results::CellResult;
use crate::stats;

/// The reference rate and its 95% interval.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Reference {
    pub figure: f64,
    pub ci95: Option<[f64; 2]>,
}

/// The reference of `threads` (a cell of N threads) in `one` (its one-thread row, same side and
/// metric); `widen` is the factor by which the run widened its rates' intervals for drift (the
/// one-thread row's own interval is widened already). None without a one-thread figure.
pub(super) fn one_thread_reference(one: &CellResult, threads: &CellResult, widen: f64) -> Option<Reference> {
    let as_it_was = Reference { figure: one.figure()?, ci95: one.ci95 };
    let kind = match one.faster_half_mean {
        Some(_) => stats::Figure::FasterHalfMean,
        None => stats::Figure::Median,
    };
    let thread_cpus: Vec<u32> = threads.sample_cpus.iter().flatten().copied().collect();
    if thread_cpus.is_empty() || one.sample_cpus.len() != one.samples.len() {
        return Some(as_it_was);
    }
    // Each one-thread sample with the one CPU it ran on.
    let on_cpu: Vec<(u32, f64)> = one
        .samples
        .iter()
        .zip(&one.sample_cpus)
        .filter_map(|(&value, cpus)| match cpus[..] {
            [cpu] => Some((cpu, value)),
            _ => None,
        })
        .collect();
    let cpu_figure = |cpu: u32| {
        let values: Vec<f64> = on_cpu.iter().filter(|(c, _)| *c == cpu).map(|(_, v)| *v).collect();
        kind.of(&values)
    };
    // A CPU the threads ran on without a one-thread sample (a run stopped early): as it was.
    let Some(figures) = thread_cpus.iter().map(|&cpu| cpu_figure(cpu)).collect::<Option<Vec<f64>>>() else {
        return Some(as_it_was);
    };
    let reference = figures.iter().sum::<f64>() / figures.len() as f64;
    // The interval from the one-thread samples' spread with each CPU's level taken out: each
    // sample over its CPU's figure, times the reference.
    let normalized: Vec<f64> = on_cpu
        .iter()
        .filter_map(|&(cpu, value)| cpu_figure(cpu).filter(|&m| m > 0.0).map(|m| value / m * reference))
        .collect();
    let ci95 = kind.interval(&normalized).map(|[low, high]| [low / widen, high * widen]);
    Some(Reference { figure: reference, ci95 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    /// A rate result with these samples, each pinned to the CPUs given (none: not pinned).
    fn result(samples: &[f64], cpus: &[&[u32]]) -> CellResult {
        let summary = stats::summarize(samples).unwrap();
        CellResult {
            samples: samples.to_vec(),
            median: Some(summary.median),
            ci95: Some(summary.ci95),
            sample_cpus: cpus.iter().map(|c| c.to_vec()).collect(),
            ..fixture::document().results[0].clone()
        }
    }

    #[test]
    fn the_reference_is_the_mean_of_each_cpu_s_one_thread_median_over_the_cpus_the_threads_ran_on() {
        // CPU 1 runs at 3/4 of CPU 0's speed; the one-thread median over both (1,000) is neither.
        let one = result(
            &[1000.0, 750.0, 1010.0, 740.0, 990.0, 760.0, 1000.0, 750.0],
            &[&[0], &[1], &[0], &[1], &[0], &[1], &[0], &[1]],
        );
        let two = result(&[1750.0, 1740.0], &[&[0, 1], &[0, 1]]);
        let reference = one_thread_reference(&one, &two, 1.0).unwrap();
        assert_eq!(reference.figure, (1000.0 + 750.0) / 2.0);
        // Two threads on CPU 0 alone (threads beyond the CPUs): CPU 0's median counts twice.
        let both_on_0 = result(&[1900.0], &[&[0, 0]]);
        assert_eq!(one_thread_reference(&one, &both_on_0, 1.0).unwrap().figure, 1000.0);
        // The interval holds the reference, narrower than the one-thread samples' own, which
        // spans both CPUs' levels.
        let [low, high] = reference.ci95.unwrap();
        assert!(low < 875.0 && 875.0 < high, "{low} {high}");
        let [one_low, one_high] = one.ci95.unwrap();
        assert!(high - low < (one_high - one_low) / 4.0, "{low} {high} against {one_low} {one_high}");
        // Widened for drift as the run's other intervals.
        let [wide_low, wide_high] = one_thread_reference(&one, &two, 1.02).unwrap().ci95.unwrap();
        assert!((wide_low * 1.02 - low).abs() < 1e-9 && (wide_high - high * 1.02).abs() < 1e-9);
    }

    #[test]
    fn without_pinned_samples_or_a_sample_on_each_cpu_the_reference_is_the_one_thread_median() {
        let pinned_one = result(&[1000.0, 750.0, 1010.0], &[&[0], &[1], &[0]]);
        let unpinned_one = result(&[1000.0, 750.0, 1010.0], &[]);
        let pinned_two = result(&[1750.0], &[&[0, 1]]);
        let unpinned_two = result(&[1750.0], &[]);
        let on_2_and_3 = result(&[1750.0], &[&[2, 3]]);
        for (one, two) in [(&unpinned_one, &pinned_two), (&pinned_one, &unpinned_two), (&pinned_one, &on_2_and_3)] {
            let reference = one_thread_reference(one, two, 1.0).unwrap();
            assert_eq!(reference, Reference { figure: 1000.0, ci95: one.ci95 }, "{:?} {:?}", one.sample_cpus, two);
        }
        let none = CellResult { median: None, ..unpinned_one };
        assert_eq!(one_thread_reference(&none, &pinned_two, 1.0), None);
    }
}
