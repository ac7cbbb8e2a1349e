//! What `tlsbench compare` prints: the two runs, one row per matched cell with both figures,
//! B/A, the p-value and the verdict, then what could not be compared and why to doubt it.

use crate::compare::{
    history_floor, judged_by_range, least_change, smallest_p, Comparison, ThresholdFrom, Verdict, ALPHA,
    MIN_HISTORY_CHANGES,
};
use crate::key::CellKey;
use crate::order::first_seen;
use crate::output::format::format_cell;
use crate::output::model::{Cell, Table};
use crate::output::{columns, WIDTH};
use crate::results::{CellResult, RunDocument};
use crate::stats::EXACT_MANN_WHITNEY_MAX;

/// A compared run and how the user named it (a run id or a file).
pub struct Named<'a> {
    pub name: &'a str,
    pub doc: &'a RunDocument,
}

pub fn render(a: &Named, b: &Named, comparison: &Comparison, threshold: Option<f64>) -> String {
    let mut out = String::new();
    for (letter, run) in [("A", a), ("B", b)] {
        let info = &run.doc.run;
        let source = match run.name == info.id {
            true => String::new(),
            false => format!("{}: ", run.name),
        };
        out += &format!(
            "{letter}: {source}run {} (started {}, {} samples per cell)\n",
            info.id, info.started, info.samples
        );
    }
    if comparison.rows.is_empty() {
        out += "no cell is in both runs\n";
    } else {
        // A table per scenario, under its name: the scenario as a column made lines of 150.
        for scenario in first_seen(comparison.rows.iter().map(|r| &r.a.key.scenario)) {
            out += &columns::render(&table(comparison, scenario).with_title(scenario.as_str()), WIDTH);
            out.push('\n');
        }
        out += &wrap(&legend(comparison, threshold));
        out += &summary(comparison);
    }
    for note in notes(a.doc, b.doc, comparison) {
        out += &wrap(&format!("note: {note}"));
    }
    for warning in [common_shift_warning(comparison), few_samples_warning(comparison)].into_iter().flatten() {
        out += &wrap(&format!("warning: {warning}"));
    }
    out
}

/// A paragraph in 120 columns, its later lines indented.
fn wrap(text: &str) -> String {
    columns::wrap(text.trim_end(), WIDTH, 2)
}

fn table(comparison: &Comparison, scenario: &str) -> Table {
    let mut table = Table::with_header(&["pair"], &["side", "metric", "A", "B", "B/A", "p", "verdict"]);
    for row in comparison.rows.iter().filter(|r| r.a.key.scenario == scenario) {
        let (factor, p, verdict) = match &row.judgement {
            Some(j) => (format!("{:.3}x", j.factor), format_p(j.p), j.verdict.to_string()),
            None => ("-".into(), "-".into(), "-".into()),
        };
        // A row that matched across builds is both builds' (the notes say which is which).
        let pair = match row.a.key.build_key() == row.b.key.build_key() {
            true => row.a.key.pair_label(),
            false => CellKey { build: None, ..row.a.key.clone() }.pair_label(),
        };
        let numbers = [format_cell(row.a), format_cell(row.b), factor, p, verdict].map(Cell::number);
        let words = [Cell::text(row.a.side.to_string()), Cell::text(&row.a.metric)];
        table.push_row(vec![pair], words.into_iter().chain(numbers).collect());
    }
    table
}

fn format_p(p: f64) -> String {
    match p < 0.001 {
        true => "<0.001".into(),
        false => format!("{p:.3}"),
    }
}

/// How a verdict is reached, with the thresholds that applied to these cells.
fn legend(comparison: &Comparison, threshold: Option<f64>) -> String {
    let thresholds = match threshold {
        Some(t) => format!("{}%, from --threshold", percent(t)),
        None => {
            let judged: Vec<(&str, f64, ThresholdFrom)> = comparison
                .rows
                .iter()
                .filter_map(|r| r.judgement.as_ref().map(|j| (r.a.key.measure.as_str(), j.threshold, r.threshold_from)))
                .collect();
            let measures = first_seen(judged.iter().map(|(measure, _, _)| *measure));
            let by_measure: Vec<String> = measures
                .iter()
                .map(|&measure| {
                    let of = |history: bool| -> Vec<f64> {
                        let cells = judged.iter().filter(|(m, _, from)| {
                            *m == measure && matches!(from, ThresholdFrom::History { .. }) == history
                        });
                        cells.map(|(_, t, _)| *t).collect()
                    };
                    let (defaults, histories) = (of(false), of(true));
                    let mut text = match defaults.first() {
                        Some(t) => format!("{measure} {}%", percent(*t)),
                        None => measure.to_string(),
                    };
                    if least_change(measure) > 0.0 {
                        text += &format!(
                            " and at least {} per handshake or MB, unless from or to 0",
                            least_change(measure)
                        );
                    }
                    if !histories.is_empty() {
                        let lo = histories.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = histories.iter().copied().fold(0.0, f64::max);
                        let range = match lo == hi {
                            true => format!("{}%", percent2(lo)),
                            false => format!("{}-{}%", percent2(lo), percent2(hi)),
                        };
                        let separator = if defaults.is_empty() { " " } else { ", " };
                        let floor = percent(history_floor(measure));
                        text += &format!("{separator}{range} from history ({} cells, floor {floor}%)", histories.len());
                    }
                    text
                })
                .collect();
            match by_measure.is_empty() {
                true => "none applied".into(),
                false => by_measure.join("; "),
            }
        }
    };
    let from_history = comparison.rows.iter().any(|r| matches!(r.threshold_from, ThresholdFrom::History { .. }));
    let history = match from_history {
        true => format!(
            "; a threshold from history is the upper fence (Q3 + 1.5 IQR) of the cell's past run-to-run changes in \
             this database, at least its measure's floor, for a cell with {MIN_HISTORY_CHANGES} or more (others: the \
             measure's default; --no-history: all)"
        ),
        false => String::new(),
    };
    let by_range = match comparison.rows.iter().any(|r| r.judgement.is_some() && judged_by_range(&r.a.key.measure)) {
        true => {
            "; counts under callgrind (instructions, sync) barely vary, so for them the two runs' samples must not \
             overlap instead of p < 0.05"
        }
        false => "",
    };
    format!(
        "B/A: B's figure over A's (a time rate's the mean of its faster half, others' the median); p: two-sided \
         Mann-Whitney U test on the samples (exact up to {EXACT_MANN_WHITNEY_MAX} samples in all, normal \
         approximation beyond); verdict: better or worse in the metric's direction when p < {ALPHA} and the figures \
         differ by more than the noise threshold \
         ({thresholds}), else ~{history}{by_range}\n"
    )
}

/// A threshold from a history, to two decimals of a percent.
fn percent2(fraction: f64) -> String {
    format!("{:.2}", fraction * 100.0)
}

fn percent(fraction: f64) -> String {
    let pct = fraction * 100.0;
    // Whole percentages print without decimals; 2.5% keeps its one.
    match (pct - pct.round()).abs() < 1e-9 {
        true => format!("{}", pct.round()),
        false => format!("{pct}"),
    }
}

/// The verdicts counted; by measure when there are several, instruction counts first, since
/// they are the numbers that a noisy machine does not move.
fn summary(comparison: &Comparison) -> String {
    let unjudged = comparison.rows.iter().filter(|r| r.judgement.is_none()).count();
    let mut measures: Vec<&str> = Vec::new();
    for row in comparison.rows.iter().filter(|r| r.judgement.is_some()) {
        if !measures.contains(&row.a.key.measure.as_str()) {
            measures.push(&row.a.key.measure);
        }
    }
    measures.sort_by_key(|&m| !matches!(m, "instructions" | "sync"));
    let count = |measure: Option<&str>| {
        let rows = comparison.rows.iter().filter(|r| measure.is_none_or(|m| r.a.key.measure == m));
        let verdicts: Vec<Verdict> = rows.filter_map(|r| r.judgement.as_ref().map(|j| j.verdict)).collect();
        let n = |v: Verdict| verdicts.iter().filter(|&&x| x == v).count();
        let changed = match n(Verdict::Changed) {
            0 => String::new(),
            changed => format!(", {changed} changed"),
        };
        format!("{} better, {} worse, {} ~{changed}", n(Verdict::Better), n(Verdict::Worse), n(Verdict::Same))
    };
    let mut line = match measures.len() > 1 {
        true => format!(
            "summary: {}",
            measures.iter().map(|&m| format!("{m} {}", count(Some(m)))).collect::<Vec<_>>().join("; ")
        ),
        false => format!("summary: {}", count(None)),
    };
    if unjudged > 0 {
        line += &format!(", {unjudged} without numbers in A or B");
    }
    line + "\n"
}

/// Cells in only one run; libraries and machines that differ between the runs.
fn notes(a: &RunDocument, b: &RunDocument, comparison: &Comparison) -> Vec<String> {
    let describe = |c: &CellResult| format!("{} {} {} {}", c.key.scenario, c.key.pair_label(), c.side, c.metric);
    let mut notes: Vec<String> = Vec::new();
    for (letter, cells) in [("A", &comparison.only_in_a), ("B", &comparison.only_in_b)] {
        notes.extend(cells.iter().map(|c| format!("only in {letter}: {}", describe(c))));
    }
    for stack_a in &a.run.stacks {
        if let Some(stack_b) = b.run.stacks.iter().find(|s| s.id == stack_a.id && s.library != stack_a.library) {
            notes.push(format!("{}: A ran {}, B ran {}", stack_a.id, stack_a.library, stack_b.library));
        }
    }
    let (builds_a, builds_b) = (crate::compare::builds_of(a), crate::compare::builds_of(b));
    if builds_a != builds_b {
        notes.push(format!("the runs differ in build: A {}, B {}", builds_a.join(", "), builds_b.join(", ")));
    }
    let (env_a, env_b) = (&a.run.environment, &b.run.environment);
    let noise = |env: &crate::results::Environment| env.conditions.as_ref().and_then(|c| c.noise.clone());
    if let (Some(noise_a), Some(noise_b)) = (noise(env_a), noise(env_b)) {
        let floor = noise_a.kept_spread_percent.max(noise_b.kept_spread_percent);
        if floor > crate::compare::default_threshold("time") * 100.0 {
            notes.push(format!(
                "noise as each run started: A's 20-ms stretches ±{:.1}% ({:.0}% slowed), B's ±{:.1}% ({:.0}% slowed): \
                 time rates are held to at least ±{floor:.1}%, the noisier's once slowed stretches are set aside",
                noise_a.spread_percent, noise_a.slowed_percent, noise_b.spread_percent, noise_b.slowed_percent
            ));
        }
    }
    notes.extend(machine_speed(a, b, comparison));
    notes.extend(counted_speed(a, b, comparison));
    if let Some(shift) = comparison.beside_shift {
        notes.push(format!(
            "--beside-shift: the time rates are judged on B's samples divided by {shift:.3}, the median of their \
             B/A (the move they share); B and B/A are as measured, and a change every stack made alike is not judged"
        ));
    }
    if let (Some(runners_a), Some(runners_b)) = (&env_a.builds, &env_b.builds) {
        if runners_a != runners_b {
            notes.push(format!("A's runners: {runners_a}; B's: {runners_b}"));
        }
    }
    let machine = [
        ("cpu", env_a.cpu.clone(), env_b.cpu.clone()),
        ("cores", env_a.cores.to_string(), env_b.cores.to_string()),
        ("kernel", env_a.kernel.clone(), env_b.kernel.clone()),
        ("rustc", env_a.rustc.clone(), env_b.rustc.clone()),
        ("governor", env_a.governor.clone(), env_b.governor.clone()),
    ];
    for (what, value_a, value_b) in machine {
        if value_a != value_b {
            notes.push(format!("the runs differ in {what}: A {value_a}, B {value_b}"));
        }
    }
    notes
}

/// How far the machine's speed moved between the runs, beside how far the time rates did: each
/// run times a fixed loop before and after it (environment.rs), so a host slower in B than in A
/// (a busier neighbour on its caches, a lower clock) shows in the loop too; a shift that every
/// cell shares, and the loop with them, is the machine's, not the stacks'. None under 1% both.
fn machine_speed(a: &RunDocument, b: &RunDocument, comparison: &Comparison) -> Option<String> {
    let loop_ms = |d: &RunDocument| {
        let c = d.run.environment.conditions.as_ref()?;
        Some((c.calibration_before.median_ms + c.calibration_after.median_ms) / 2.0)
    };
    let speed = loop_ms(a)? / loop_ms(b)?;
    let rates = crate::compare::shared_move(comparison).map(|shared| shared.median);
    let moved = |x: f64| (x - 1.0).abs() >= 0.01;
    if !moved(speed) && !rates.is_some_and(moved) {
        return None;
    }
    let rates = match rates {
        Some(median) if (median / speed - 1.0).abs() < 0.02 => format!(
            ", and its time rates' median cell at {median:.3}x A's: the same shift, which is the machine's, not the \
             stacks'"
        ),
        Some(median) => format!(
            ", and its time rates' median cell at {median:.3}x A's: the loop did not move as the cells did, so it \
             does not tell whether the machine did"
        ),
        None => String::new(),
    };
    Some(format!(
        "the machine's speed: B ran the fixed loop timed before and after each run at {speed:.3}x A's speed{rates}"
    ))
}

/// How fast the CPUs ran where the samples were measured, in each run: runners that judge their
/// own loop count only its stretches at full speed (tlsbench_harness::speed), and the speed of
/// those stretches is stored (`conditions.sentinel.judged_speed`). A host whose full speed itself
/// moved between the runs (2026-11-30: 1.052x, with every cell at 1.069x) moves every cell so.
/// None where a run has no such speed, or it and the rates moved under 1%.
fn counted_speed(a: &RunDocument, b: &RunDocument, comparison: &Comparison) -> Option<String> {
    let speed = |d: &RunDocument| {
        let sentinel = d.run.environment.conditions.as_ref()?.sentinel.as_ref()?;
        (sentinel.judged_speed > 0.0).then_some(sentinel.judged_speed)
    };
    let speed = speed(b)? / speed(a)?;
    let rates = crate::compare::shared_move(comparison).map(|shared| shared.median);
    let moved = |x: f64| (x - 1.0).abs() >= 0.01;
    if !moved(speed) && !rates.is_some_and(moved) {
        return None;
    }
    let rates = match rates {
        Some(median) => format!(", and its time rates' median cell at {median:.3}x A's"),
        None => String::new(),
    };
    Some(format!(
        "the CPUs' speed where the samples were measured: B's stretches at full speed ran a fixed workload at \
         {speed:.3}x A's speed{rates} (a host's full speed moves every cell of the stacks measured on it)"
    ))
}

/// Many time rates that moved together, the same way and by more than half the time measure's
/// threshold: what a machine that ran slower or faster in B does to every cell (on a shared host
/// for minutes at a time, measured 2026-11-29: every cell 10% slower three minutes later), which
/// the verdicts cannot tell from the stacks' own changes.
fn common_shift_warning(comparison: &Comparison) -> Option<String> {
    let shared = crate::compare::shared_move(comparison)?;
    let (median, factors) = (shared.median, shared.factors);
    if factors.len() < crate::compare::LEAST_FOR_SHIFT || comparison.beside_shift.is_some() {
        return None;
    }
    let same_way = factors.iter().filter(|&&f| (f < 1.0) == (median < 1.0)).count();
    let share = same_way as f64 / factors.len() as f64;
    if (median - 1.0).abs() <= crate::compare::default_threshold("time") / 2.0 || share < 0.8 {
        return None;
    }
    Some(format!(
        "B's time rates moved together: the median of {} cells is {median:.3}x A's, {:.0}% of them {}; a machine \
         that ran {} in B (a busier host, another clock) moves every cell so, and the time verdicts cannot tell that \
         from the stacks' own changes: judge them beside it (--beside-shift), run both again on a quieter machine, \
         or compare --measure instructions",
        factors.len(),
        share * 100.0,
        if median < 1.0 { "lower" } else { "higher" },
        if median < 1.0 { "slower" } else { "faster" },
    ))
}

/// A hint when some compared cells have too few samples for any difference to be significant.
fn few_samples_warning(comparison: &Comparison) -> Option<String> {
    let (n1, n2) = comparison
        .rows
        .iter()
        .filter(|r| r.judgement.is_some() && !judged_by_range(&r.a.key.measure))
        .map(|r| (r.a.samples.len(), r.b.samples.len()))
        .find(|&(n1, n2)| smallest_p(n1, n2) >= ALPHA)?;
    let enough = (1..).find(|&n| smallest_p(n, n) < ALPHA).expect("p falls below any alpha as n grows");
    Some(format!(
        "with {n1} and {n2} samples no difference can reach p < {ALPHA}, so every verdict is ~; \
         take at least {enough} samples per cell in each run (--samples)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::results::fixture;

    #[test]
    fn renders_a_comparison() {
        let a = fixture::document();
        let mut b = fixture::document();
        b.run.id = "run-2".into();
        b.run.stacks[1].library = "openssl 1.1".into();
        b.run.environment.kernel = "6.2.0".into();
        // Six samples each, so that a clear difference can be significant.
        let six = |c: &mut CellResult, values: [f64; 6]| {
            c.samples = values.to_vec();
            c.median = Some((values[2] + values[3]) / 2.0);
            let (mean, interval) = crate::stats::faster_half(&values).unwrap();
            (c.faster_half_mean, c.ci95) = (Some(mean), Some(interval));
            c.outliers = vec![];
        };
        let mut a = a;
        six(&mut a.results[0], [12000.0, 12100.0, 12200.0, 12300.0, 12400.0, 12500.0]);
        six(&mut b.results[0], [9000.0, 9100.0, 9200.0, 9300.0, 9400.0, 9500.0]);
        b.results.remove(4);
        let comparison = compare(&a, &b, None);
        let text = render(&Named { name: "run-1", doc: &a }, &Named { name: "b.json", doc: &b }, &comparison, None);
        let expected = "\
A: run run-1 (started 2025-01-02T03:04:05Z, 3 samples per cell)
B: b.json: run run-2 (started 2025-01-02T03:04:05Z, 3 samples per cell)
handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm
pair             | side    metric                        A              B     B/A      p  verdict
rustls-aws-lc-rs | server  handshakes_per_s   12,400 ±1.6%    9,400 ±2.1%  0.758x  0.002    worse
openssl          | server  handshakes_per_s         failed         failed       -      -        -
rustls-aws-lc-rs | client  handshakes_per_s  987.6 ±0.8% *  987.6 ±0.8% *  1.000x  1.000        ~
openssl          | client  handshakes_per_s         failed         failed       -      -        -
rustls-aws-lc-rs | server  heap_peak_bytes          45,678         45,678  1.000x  1.000        ~

handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305
pair    | side    metric              A    B  B/A  p  verdict
openssl | server  handshakes_per_s  n/a  n/a    -  -        -

";
        assert!(text.starts_with(expected), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
        let rest = &text[expected.len()..];
        let expected_rest = "\
B/A: B's figure over A's (a time rate's the mean of its faster half, others' the median); p: two-sided Mann-Whitney U
  test on the samples (exact up to 40 samples in all, normal approximation beyond); verdict: better or worse in the
  metric's direction when p < 0.05 and the figures differ by more than the noise threshold (time 5%; heap 1%), else ~
summary: time 0 better, 1 worse, 1 ~; heap 0 better, 0 worse, 1 ~, 3 without numbers in A or B
note: only in A: handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305 rustls-aws-lc-rs server handshakes_per_s
note: openssl: A ran openssl 1.0, B ran openssl 1.1
note: the runs differ in kernel: A 6.1.0, B 6.2.0
warning: with 3 and 3 samples no difference can reach p < 0.05, so every verdict is ~; take at least 4 samples per cell
  in each run (--samples)
";
        assert_eq!(rest, expected_rest);
    }

    /// A run's conditions: the fixed loop at `loop_ms` before and after it, and `sentinel`.
    fn conditions(loop_ms: f64, sentinel: Option<crate::noise::SentinelSummary>) -> crate::results::Conditions {
        let calibration = crate::results::Calibration {
            median_ms: loop_ms,
            spread_percent: 1.0,
            kept_spread_percent: None,
            max_over_min: 1.01,
        };
        crate::results::Conditions {
            load_average_start: 0.5,
            load_average_end: 0.5,
            steal_percent: None,
            calibration_before: calibration.clone(),
            calibration_after: calibration,
            noise: None,
            sentinel,
        }
    }

    /// What `compare` prints for runs `a` and `b`, unwrapped.
    fn compared(a: &RunDocument, b: &RunDocument) -> String {
        let comparison = compare(a, b, None);
        unwrapped(&render(&Named { name: "a", doc: a }, &Named { name: "b", doc: b }, &comparison, None))
    }

    #[test]
    fn a_slower_machine_in_b_is_named_beside_the_time_rates_median_move() {
        let conditions = |loop_ms: f64| conditions(loop_ms, None);
        let (mut a, mut b) = (fixture::document(), fixture::document());
        a.run.environment.conditions = Some(conditions(2.80));
        b.run.environment.conditions = Some(conditions(2.80));
        assert!(!compared(&a, &b).contains("the machine's speed"), "the same speed: no note");
        b.run.environment.conditions = Some(conditions(2.856));
        for cell in b.results.iter_mut().filter(|c| c.is_time_rate()) {
            cell.samples.iter_mut().for_each(|x| *x *= 0.98);
        }
        let said = compared(&a, &b);
        assert!(
            said.contains(
                "B ran the fixed loop timed before and after each run at 0.980x A's speed, and its time \
                 rates' median cell at 0.980x A's: the same shift, which is the machine's"
            ),
            "{said}"
        );
        // Runs stored before the conditions were kept say nothing of it.
        b.run.environment.conditions = None;
        assert!(!compared(&a, &b).contains("the machine's speed"));
    }

    #[test]
    fn the_speed_of_the_stretches_counted_is_set_beside_the_time_rates_move() {
        let conditions = |judged_speed: f64| {
            let sentinel = crate::noise::SentinelSummary {
                samples: 40,
                at_full_speed: 40,
                judged: 40,
                judged_speed,
                reference: 230.0,
                ..Default::default()
            };
            conditions(2.8, Some(sentinel))
        };
        let (mut a, mut b) = (fixture::document(), fixture::document());
        a.run.environment.conditions = Some(conditions(215.0));
        b.run.environment.conditions = Some(conditions(215.0));
        assert!(!compared(&a, &b).contains("where the samples were measured"), "the same speed: no note");
        b.run.environment.conditions = Some(conditions(225.75));
        for cell in b.results.iter_mut().filter(|c| c.is_time_rate()) {
            cell.samples.iter_mut().for_each(|x| *x *= 1.05);
        }
        let said = compared(&a, &b);
        assert!(
            said.contains(
                "B's stretches at full speed ran a fixed workload at 1.050x A's speed, and its time rates' median \
                 cell at 1.050x A's"
            ),
            "{said}"
        );
        // A run whose samples no runner judged says nothing of it.
        b.run.environment.conditions = Some(conditions(0.0));
        assert!(!compared(&a, &b).contains("where the samples were measured"));
    }

    #[test]
    fn time_rates_that_all_moved_one_way_are_named_as_the_machine_s_move() {
        let mut a = fixture::document();
        let template = a.results.iter().find(|c| c.is_time_rate()).unwrap().clone();
        a.results = (0..12)
            .map(|i| {
                let mut cell = template.clone();
                cell.key.scenario = format!("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_{i}");
                cell.samples = vec![1000.0 + i as f64, 1010.0, 990.0, 1005.0, 995.0, 1000.0];
                cell
            })
            .collect();
        let shifted = |factor: f64| {
            let mut b = a.clone();
            b.results.iter_mut().for_each(|c| c.samples.iter_mut().for_each(|x| *x *= factor));
            b
        };
        let warned = |b: &RunDocument| common_shift_warning(&compare(&a, b, None));
        let slower = warned(&shifted(0.90)).expect("every cell 10% slower");
        assert!(
            slower.starts_with(
                "B's time rates moved together: the median of 12 cells is 0.900x A's, 100% of them \
             lower; a machine that ran slower in B"
            ),
            "{slower}"
        );
        // Within half the threshold, or cells that moved both ways: no warning.
        assert_eq!(warned(&shifted(0.98)), None);
        let mut mixed = shifted(0.90);
        mixed.results.iter_mut().take(4).for_each(|c| c.samples.iter_mut().for_each(|x| *x *= 1.3));
        assert_eq!(warned(&mixed), None, "8 of 12 lower is not together");
    }

    /// The words of a rendered text, one space apart (its lines are wrapped at 120 columns).
    fn unwrapped(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn the_legend_says_which_cells_were_held_to_their_history() {
        let (a, b) = (fixture::document(), fixture::document());
        let mut history = crate::compare::History::default();
        for _ in 0..6 {
            history.add(&a);
        }
        let comparison = crate::compare::compare_with_history(&a, &b, None, &history);
        let text = render(&Named { name: "run-1", doc: &a }, &Named { name: "run-1", doc: &b }, &comparison, None);
        let legend =
            unwrapped(&text.lines().skip_while(|l| !l.starts_with("B/A:")).take(6).collect::<Vec<_>>().join(" "));
        // Every judged cell has 5 past changes of 0: each is held to its measure's floor.
        assert!(
            legend.contains("(time 1.00% from history (3 cells, floor 1%); heap 0.50% from history (1 cells,"),
            "{text}"
        );
        assert!(legend.contains("a threshold from history is the upper fence"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
    }
}
