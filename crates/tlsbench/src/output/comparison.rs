//! What `tlsbench compare` prints: the two runs, one row per matched cell with both medians,
//! B/A, the p-value and the verdict, then what could not be compared and why to doubt it.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use crate::compare::{judged_by_range, smallest_p, Comparison, Verdict, ALPHA};
use crate::key::CellKey;
use crate::output::table::format_cell;
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
        out += &format!("{}\n", table(comparison));
        out += &legend(comparison, threshold);
        out += &summary(comparison);
    }
    for note in notes(a.doc, b.doc, comparison) {
        out += &format!("note: {note}\n");
    }
    if let Some(warning) = few_samples_warning(comparison) {
        out += &format!("warning: {warning}\n");
    }
    out
}

fn table(comparison: &Comparison) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(["scenario", "pair", "side", "metric", "A", "B", "B/A", "p", "verdict"]);
    for row in &comparison.rows {
        let (factor, p, verdict) = match &row.judgement {
            Some(j) => (format!("{:.3}x", j.factor), format_p(j.p), j.verdict.to_string()),
            None => ("-".into(), "-".into(), "-".into()),
        };
        // A row that matched across builds is both builds' (the notes say which is which).
        let pair = match row.a.key.build_key() == row.b.key.build_key() {
            true => row.a.key.pair_label(),
            false => CellKey { build: None, ..row.a.key.clone() }.pair_label(),
        };
        table.add_row([
            row.a.key.scenario.clone(),
            pair,
            row.a.side.to_string(),
            row.a.metric.clone(),
            format_cell(row.a),
            format_cell(row.b),
            factor,
            p,
            verdict,
        ]);
    }
    for i in 4..9 {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
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
            let mut by_measure: Vec<String> = Vec::new();
            for (measure, t) in
                comparison.rows.iter().filter_map(|r| r.judgement.as_ref().map(|j| (&r.a.key.measure, j.threshold)))
            {
                let entry = format!("{measure} {}%", percent(t));
                if !by_measure.contains(&entry) {
                    by_measure.push(entry);
                }
            }
            match by_measure.is_empty() {
                true => "none applied".into(),
                false => by_measure.join(", "),
            }
        }
    };
    let by_range = match comparison.rows.iter().any(|r| r.judgement.is_some() && judged_by_range(&r.a.key.measure)) {
        true => {
            "; instruction counts barely vary, so for them the two runs' samples must not overlap instead of p < 0.05"
        }
        false => "",
    };
    format!(
        "B/A: B's median over A's; p: two-sided Mann-Whitney U test on the samples (exact up to \
         {EXACT_MANN_WHITNEY_MAX} samples in all, normal approximation beyond); verdict: better or worse in the \
         metric's direction when p < {ALPHA} and the medians differ by more than the noise threshold \
         ({thresholds}), else ~{by_range}\n"
    )
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
    measures.sort_by_key(|&m| m != "instructions");
    let count = |measure: Option<&str>| {
        let rows = comparison.rows.iter().filter(|r| measure.is_none_or(|m| r.a.key.measure == m));
        let verdicts: Vec<Verdict> = rows.filter_map(|r| r.judgement.as_ref().map(|j| j.verdict)).collect();
        let n = |v: Verdict| verdicts.iter().filter(|&&x| x == v).count();
        format!("{} better, {} worse, {} ~", n(Verdict::Better), n(Verdict::Worse), n(Verdict::Same))
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
    use crate::output::table::fixture;

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
            c.ci95 = Some([values[0], values[5]]);
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
┌─────────────────────────────────────────────────────────┬──────────────────┬────────┬──────────────────┬───────────────┬───────────────┬────────┬───────┬─────────┐
│ scenario                                                ┆ pair             ┆ side   ┆ metric           ┆             A ┆             B ┆    B/A ┆     p ┆ verdict │
╞═════════════════════════════════════════════════════════╪══════════════════╪════════╪══════════════════╪═══════════════╪═══════════════╪════════╪═══════╪═════════╡
│ handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm        ┆ rustls-aws-lc-rs ┆ server ┆ handshakes_per_s ┆  12,250 ±2.0% ┆   9,250 ±2.7% ┆ 0.755x ┆ 0.002 ┆   worse │
│ handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm        ┆ openssl          ┆ server ┆ handshakes_per_s ┆        failed ┆        failed ┆      - ┆     - ┆       - │
│ handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm        ┆ rustls-aws-lc-rs ┆ client ┆ handshakes_per_s ┆ 987.6 ±0.8% * ┆ 987.6 ±0.8% * ┆ 1.000x ┆ 1.000 ┆       ~ │
│ handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm        ┆ openssl          ┆ client ┆ handshakes_per_s ┆        failed ┆        failed ┆      - ┆     - ┆       - │
│ handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305 ┆ openssl          ┆ server ┆ handshakes_per_s ┆           n/a ┆           n/a ┆      - ┆     - ┆       - │
│ handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm        ┆ rustls-aws-lc-rs ┆ server ┆ heap_peak_bytes  ┆        45,678 ┆        45,678 ┆ 1.000x ┆ 1.000 ┆       ~ │
└─────────────────────────────────────────────────────────┴──────────────────┴────────┴──────────────────┴───────────────┴───────────────┴────────┴───────┴─────────┘
";
        assert!(text.starts_with(expected), "{text}");
        let rest = &text[expected.len()..];
        let expected_rest = "\
B/A: B's median over A's; p: two-sided Mann-Whitney U test on the samples (exact up to 40 samples in all, \
normal approximation beyond); verdict: better or worse in the metric's direction when p < 0.05 and the medians \
differ by more than the noise threshold (time 5%, heap 1%), else ~
summary: time 0 better, 1 worse, 1 ~; heap 0 better, 0 worse, 1 ~, 3 without numbers in A or B
note: only in A: handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305 rustls-aws-lc-rs server handshakes_per_s
note: openssl: A ran openssl 1.0, B ran openssl 1.1
note: the runs differ in kernel: A 6.1.0, B 6.2.0
warning: with 3 and 3 samples no difference can reach p < 0.05, so every verdict is ~; take at least 4 samples \
per cell in each run (--samples)
";
        assert_eq!(rest, expected_rest);
    }
}
