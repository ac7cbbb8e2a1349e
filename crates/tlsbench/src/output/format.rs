//! How a cell and a number are written, in the table, the matrices, the reports and the
//! exports alike: four significant digits, the interval's farther end, outliers marked, and a
//! count's ± only beyond the noise `compare` allows its measure.

use crate::compare::default_threshold;
use crate::results::{CellResult, Status};

/// Explains the cell notation; printed under every table.
pub const LEGEND: &str = "figure ±x%: the median (a time rate: the mean of its faster half of samples) ± the farther \
                          end of its interval, relative to it (a count shows one only beyond `tlsbench compare`'s \
                          noise threshold); *: some samples are outliers (MAD test), kept in the statistics";

/// The legend, with the mark of a figure measured still warming where some cell of `cells` has it.
pub fn legend<'a>(cells: impl IntoIterator<Item = &'a CellResult>) -> String {
    match cells.into_iter().any(still_rising) {
        true => format!(
            "{LEGEND}; ^: measured before its process's rate stopped rising, at the warm-up's bound \
             (--warmup-max-ms)"
        ),
        false => LEGEND.to_string(),
    }
}

/// Whether a process the cell was measured in reached the warm-up's bound still rising.
fn still_rising(cell: &CellResult) -> bool {
    cell.warmups.iter().any(|w| !w.steady)
}

/// Explains the efficiency after a rate per thread, in a run with `--threads`.
pub const EFFICIENCY_LEGEND: &str = "(92 ±6%): scaling efficiency, the rate per thread of N threads (per worker of N \
     workers) over one's, same run, ± the farther end of its interval in points (from both rates' intervals)";

/// A cell as shown: a rate as `12,345 ±1.2%`, a count as `8` or `156.5`, with ` *` when it has
/// outliers and ` ^` when a process it came from was still warming at the bound; `failed` or
/// `n/a`. A count shows its ± only when it is wider than the noise threshold `compare` holds its
/// measure to (an ECDSA signature a byte shorter moves bytes written by 0.1%, noise; a resident
/// size that moves by a tenth is not), so that a noisy count never looks exact.
pub fn format_cell(cell: &CellResult) -> String {
    let median = match (cell.status, cell.figure()) {
        (Status::Failed, _) => return "failed".to_string(),
        (Status::Unsupported, _) => return "n/a".to_string(),
        (Status::Ok, None) => return "-".to_string(),
        (Status::Ok, Some(median)) => median,
    };
    let count = is_count(cell);
    let mut text = match count {
        true => format_count(median),
        false => format_number(median),
    };
    // A count shows its interval, and its outliers, only beyond compare's noise threshold:
    // instruction counts that differ by 0.01% have "outliers" too.
    let beyond_noise = |spread: &f64| !count || *spread > default_threshold(&cell.key.measure) * 100.0;
    if let Some(spread) = spread(cell).filter(beyond_noise) {
        let decimals = if spread < 10.0 { 1 } else { 0 };
        text += &format!(" ±{spread:.decimals$}%");
    }
    let range = cell.samples.iter().fold([median, median], |[lo, hi], &x| [lo.min(x), hi.max(x)]);
    if !cell.outliers.is_empty() && crate::stats::ci_percent(median, range).is_none_or(|r| beyond_noise(&r)) {
        text += " *";
    }
    // Measured as it was, still warming: the figure is below the process's steady state.
    if still_rising(cell) {
        text += " ^";
    }
    if let Some(efficiency) = cell.scaling_efficiency {
        text += &format!(" ({})", format_efficiency(efficiency, cell.scaling_efficiency_ci));
    }
    text
}

/// A scaling efficiency as a percentage, `92 ±6%`, the ± the farther end of its interval in
/// percentage points; `92%` without an interval.
pub fn format_efficiency(efficiency: f64, interval: Option<[f64; 2]>) -> String {
    match interval {
        Some([low, high]) => {
            format!("{:.0} ±{:.0}%", efficiency * 100.0, (efficiency - low).max(high - efficiency) * 100.0)
        }
        None => format!("{:.0}%", efficiency * 100.0),
    }
}

/// Four significant digits, and whole numbers with `,` grouping from 1,000 up: precision beyond
/// that is noise for a benchmark and makes columns hard to scan.
pub fn format_number(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return x.to_string();
    }
    let decimals = decimals_for(x.abs());
    // Rounding can carry into the next decade (999.96 -> "1000.0"): size on the rounded value.
    let decimals = decimals_for(format!("{:.decimals$}", x.abs()).parse().unwrap_or(x.abs()));
    let text = format!("{x:.decimals$}");
    if decimals > 0 {
        return text;
    }
    let (sign, digits) = text.split_at(usize::from(text.starts_with('-')));
    format!("{sign}{}", group_thousands(digits))
}

/// `1234567` -> `1,234,567`.
pub fn group_thousands(digits: &str) -> String {
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// Whether a cell counts things (calls, records, bytes, allocations) rather than measuring a
/// rate: rates are per second.
pub fn is_count(cell: &CellResult) -> bool {
    !cell.unit.ends_with("/s")
}

/// A count with the decimals it has, up to [`format_number`]'s four significant digits: `8`,
/// `156.5`, `4,554`. A count per connection or handshake is an average and can have a fraction.
pub fn format_count(x: f64) -> String {
    let text = format_number(x);
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

/// Decimals that leave four significant digits for a positive `a`.
fn decimals_for(a: f64) -> usize {
    match a {
        a if a >= 1000.0 => 0,
        a if a >= 100.0 => 1,
        a if a >= 10.0 => 2,
        a if a >= 1.0 => 3,
        a => 3 + (-a.log10()).ceil() as usize,
    }
}

/// The table's ±: the width of a cell's interval in % of its figure. None for one sample, whose
/// "interval" is the sample itself and says nothing about the spread.
pub(super) fn spread(cell: &CellResult) -> Option<f64> {
    match cell.samples.len() {
        0 | 1 => None,
        _ => cell.figure().zip(cell.ci95).and_then(|(figure, ci)| crate::stats::ci_percent(figure, ci)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    #[test]
    fn numbers_have_four_significant_digits() {
        let shown: Vec<String> = [1234.4, 12345.0, 1234567.8, 123.44, 12.344, 1.2344, 0.012344, 999.96, -4321.0, 0.0]
            .into_iter()
            .map(format_number)
            .collect();
        assert_eq!(
            shown,
            ["1,234", "12,345", "1,234,568", "123.4", "12.34", "1.234", "0.01234", "1,000", "-4,321", "0"]
        );
    }

    /// A heap count of the fixture with these samples.
    fn count(samples: &[f64], median: f64, ci95: [f64; 2]) -> CellResult {
        let mut cell = fixture::document().results[6].clone();
        assert_eq!(cell.unit, "B");
        (cell.samples, cell.median, cell.ci95) = (samples.to_vec(), Some(median), Some(ci95));
        cell
    }

    #[test]
    fn counts_have_the_decimals_they_have_and_a_spread_only_when_their_samples_disagree() {
        assert_eq!(format_cell(&count(&[8.0; 6], 8.0, [8.0, 8.0])), "8");
        assert_eq!(format_cell(&count(&[156.5; 6], 156.5, [156.5, 156.5])), "156.5");
        assert_eq!(format_cell(&count(&[152947.0; 6], 152947.0, [152947.0, 152947.0])), "152,947");
        let noisy = count(&[4000.0, 4100.0, 4200.0, 4300.0, 4400.0, 4500.0], 4250.0, [4000.0, 4500.0]);
        assert_eq!(format_cell(&noisy), "4,250 ±5.9%", "beyond heap's 1% noise threshold");
        let signature_byte = count(&[1157.0, 1158.0, 1158.0, 1158.0, 1159.0, 1158.0], 1158.0, [1157.0, 1159.0]);
        assert_eq!(format_cell(&signature_byte), "1,158", "within heap's 1% noise threshold");
        let rss = fixture::with_measure("rss", noisy.clone());
        assert_eq!(format_cell(&rss), "4,250 ±5.9%", "beyond rss's 5%");
        let rss = CellResult { ci95: Some([4100.0, 4400.0]), ..rss };
        assert_eq!(format_cell(&rss), "4,250", "within rss's 5%");
        let rate = &fixture::document().results[0];
        assert!(!is_count(rate) && format_cell(rate).ends_with(" ±1.2%"), "{}", format_cell(rate));
        let steady_rate = CellResult { ci95: Some([12345.0, 12345.0]), ..rate.clone() };
        assert_eq!(format_cell(&steady_rate), "12,345 ±0.0%", "a rate always says its spread");
        let one_sample = CellResult {
            samples: vec![12345.0],
            median: Some(12345.0),
            ci95: Some([12345.0, 12345.0]),
            ..rate.clone()
        };
        assert_eq!(format_cell(&one_sample), "12,345", "one sample has no spread to tell");
    }

    #[test]
    fn interop_pair_and_no_spread_at_zero() {
        let mut cell = fixture::document().results[0].clone();
        cell.key.server_stack = "openssl".into();
        cell.median = Some(0.0);
        assert_eq!(cell.key.pair_label(), "rustls-aws-lc-rs -> openssl");
        assert_eq!(format_cell(&cell), "0");
    }
}
