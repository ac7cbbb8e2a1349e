//! The results table printed to stdout, and the cell layout and number formatting that the
//! Markdown export and the HTML report share with it.

use std::collections::HashMap;

use tlsbench_harness::protocol::Metric;
use tlsbench_harness::Side;

use crate::compare::{default_threshold, judged_by_range};
use crate::group::{self, GroupBy};
use crate::output::columns::{self, Column};
use crate::output::first_seen;
use crate::results::{CellResult, RunDocument, Status};
use crate::stats::MIN_SAMPLES_FOR_CI95;

/// Explains the cell notation; printed under every table.
pub const LEGEND: &str = "median ±x%: the farther end of the median's 95% confidence interval, relative to the \
                          median (a count has one only when it is wider than the noise threshold of `tlsbench \
                          compare`); *: some samples are outliers (MAD test), kept in the statistics";

/// Explains the efficiency after a rate per thread, in a run with `--threads`.
pub const EFFICIENCY_LEGEND: &str = "(92 ±6%): scaling efficiency, the rate per thread of N threads (per worker of N \
     workers) over one's, same run, ± the farther end of its interval in points (from both rates' intervals)";

/// The terminal's width that the table keeps to.
pub const WIDTH: usize = 120;

/// The table of a run, for a terminal of [`WIDTH`] columns: one block per metric, a row per
/// pair (stack), a column per scenario and side. The parts of the scenario names that all of a
/// block's columns share are said once, as a glob above the block, and the columns are headed
/// by the rest. Below: the legend, and each distinct reason a cell has no number, numbered as
/// the cells refer to it.
pub fn render(doc: &RunDocument) -> String {
    render_grouped(doc, None)
}

/// [`render`], with each metric's block split by group (`--group-by`): a block per group that
/// has cells of the metric, the group's heading above it.
pub fn render_grouped(doc: &RunDocument, by: Option<GroupBy>) -> String {
    if doc.results.is_empty() {
        return "no results\n".to_string();
    }
    let reasons = Reasons::new(&doc.results);
    let metrics = first_seen(doc.results.iter().map(|c| (&c.metric[..], &c.unit[..], &c.better[..])));
    let groups = by.map(|by| group::split(doc, by));
    let mut out = String::new();
    for (metric, unit, better) in metrics {
        let of_metric = |c: &&CellResult| (&c.metric[..], &c.unit[..]) == (metric, unit);
        let title = format!("{metric} ({unit}, {better} is better)");
        let Some(groups) = &groups else {
            let cells: Vec<&CellResult> = doc.results.iter().filter(of_metric).collect();
            out += &metric_block(&title, &cells, &reasons);
            out.push('\n');
            continue;
        };
        for group in groups {
            let cells: Vec<&CellResult> = group.cells.iter().copied().filter(of_metric).collect();
            if cells.is_empty() {
                continue;
            }
            out += &columns::wrap(&group.heading(), WIDTH, 2);
            out += &metric_block(&title, &cells, &reasons);
            out.push('\n');
        }
    }
    let efficiency = match doc.results.iter().any(|c| c.scaling_efficiency.is_some()) {
        true => format!("; {EFFICIENCY_LEGEND}"),
        false => String::new(),
    };
    out += &columns::wrap(&format!("{LEGEND}{efficiency}; [n]: the reason numbered n below"), WIDTH, 2);
    if let Some(warning) = few_samples_warning(&doc.results) {
        out += &columns::wrap(&format!("warning: {warning}"), WIDTH, 2);
    }
    if let Some(line) = workers_busy(&doc.results) {
        out += &columns::wrap(&line, WIDTH, 2);
    }
    for (i, (status, reason)) in reasons.0.iter().enumerate() {
        out += &columns::wrap(&format!("[{}] {}: {reason}", i + 1, status_word(*status)), WIDTH, 4);
    }
    out += &precision(doc);
    out
}

/// One metric's cells: rows of pairs, columns of (scenario, side).
fn metric_block(title: &str, cells: &[&CellResult], reasons: &Reasons) -> String {
    let labels: Vec<String> = cells.iter().map(|c| c.key.pair_label()).collect();
    let pairs = first_seen(labels.iter().cloned());
    let scenarios = first_seen(cells.iter().map(|c| &c.key.scenario[..]));
    let names = ScenarioNames::new(&scenarios);
    // Each cell's place, found in one pass: a whole-matrix run has thousands of columns.
    let mut placed: HashMap<(&str, Side, &str), &CellResult> = HashMap::new();
    for (cell, label) in cells.iter().zip(&labels) {
        // A repeated cell shows the first, as the exports keep it.
        placed.entry((&cell.key.scenario, cell.side, label)).or_insert(cell);
    }
    let mut columns = Vec::new();
    for (scenario, heading) in scenarios.iter().zip(&names.headings) {
        for side in [Side::Client, Side::Server] {
            let column: Vec<Option<&CellResult>> =
                pairs.iter().map(|pair| placed.get(&(*scenario, side, &pair[..])).copied()).collect();
            if column.iter().all(Option::is_none) {
                continue;
            }
            let header = heading.iter().cloned().chain([side.to_string()]).collect();
            let cells =
                column.into_iter().map(|cell| cell.map_or_else(|| "-".to_string(), |c| reasons.cell_text(c))).collect();
            columns.push(Column { header, cells });
        }
    }
    let heading = match names.pattern {
        Some(pattern) => format!("{title}, scenarios {pattern}"),
        None => title.to_string(),
    };
    columns::wrap(&heading, WIDTH, 2) + &columns::render(&pairs, &columns, WIDTH)
}

/// Short names for the scenarios of one block: what all of them share as a glob, and for each
/// the parts where they differ. Distinct scenarios always differ in some shown part, so no two
/// columns have the same heading.
struct ScenarioNames {
    /// `*_*_x25519_ecdsa-p256_aes-128-gcm`; `None` when the scenarios share nothing.
    pattern: Option<String>,
    /// Per scenario, its differing parts in name order.
    headings: Vec<Vec<String>>,
}

impl ScenarioNames {
    /// Names are `kind_version_group_key_suite` and then optional suffixes (client auth, EMS),
    /// which count as one part, shown as `-` where a scenario has none and others have some.
    fn new(scenarios: &[&str]) -> ScenarioNames {
        const PARTS: usize = 6;
        let parts: Vec<Vec<&str>> = scenarios
            .iter()
            .map(|name| {
                let mut parts: Vec<&str> = name.splitn(PARTS, '_').collect();
                parts.resize(PARTS, "");
                parts
            })
            .collect();
        let shared: Vec<bool> = (0..PARTS).map(|i| parts.iter().all(|p| p[i] == parts[0][i])).collect();
        let headings = parts
            .iter()
            .map(|p| {
                (0..PARTS)
                    .filter(|&i| !shared[i])
                    .map(|i| if p[i].is_empty() { "-" } else { p[i] }.to_string())
                    .collect()
            })
            .collect();
        if !shared.contains(&true) {
            return ScenarioNames { pattern: None, headings };
        }
        let glob = |i: usize| if shared[i] { parts[0][i] } else { "*" };
        let mut pattern = (0..PARTS - 1).map(glob).collect::<Vec<_>>().join("_");
        match (shared[PARTS - 1], parts[0][PARTS - 1]) {
            (true, "") => {}
            (true, suffix) => pattern += &format!("_{suffix}"),
            (false, _) if pattern.ends_with('*') => {}
            (false, _) => pattern += "*",
        }
        ScenarioNames { pattern: Some(pattern), headings }
    }
}

/// The distinct (status, reason) of the cells without a number, in order of first appearance;
/// a cell refers to its reason by its number from 1.
struct Reasons<'a>(Vec<(Status, &'a str)>);

impl<'a> Reasons<'a> {
    fn new(results: &'a [CellResult]) -> Reasons<'a> {
        Reasons(first_seen(results.iter().filter(|c| c.status != Status::Ok).map(|c| (c.status, reason_of(c)))))
    }

    /// `12,345 ±1.2%`, or `n/a[2]` pointing at the reason (no space: as wide as `client`).
    fn cell_text(&self, cell: &CellResult) -> String {
        let text = format_cell(cell);
        match self.0.iter().position(|&(status, reason)| (status, reason) == (cell.status, reason_of(cell))) {
            Some(i) => format!("{text}[{}]", i + 1),
            None => text,
        }
    }
}

fn reason_of(cell: &CellResult) -> &str {
    cell.reason.as_deref().unwrap_or("no reason given")
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Unsupported => "n/a",
    }
}

/// Cells laid out as rows (scenario, side, metric) by columns (pairs), each in order of first
/// appearance so that the table follows the order the run planned.
pub struct Grid<'a> {
    pub pairs: Vec<String>,
    pub rows: Vec<GridRow<'a>>,
}

pub struct GridRow<'a> {
    pub scenario: &'a str,
    pub side: Side,
    pub metric: &'a str,
    /// One per pair; `None` where the pair has no cell in this row.
    pub cells: Vec<Option<&'a CellResult>>,
}

impl<'a> Grid<'a> {
    pub fn new(results: impl IntoIterator<Item = &'a CellResult>) -> Self {
        let results: Vec<&CellResult> = results.into_iter().collect();
        let mut pairs: Vec<String> = Vec::new();
        for cell in &results {
            let label = cell.key.pair_label();
            if !pairs.contains(&label) {
                pairs.push(label);
            }
        }
        let mut rows: Vec<GridRow<'a>> = Vec::new();
        for cell in results {
            let key = (&cell.key.scenario[..], cell.side, &cell.metric[..]);
            let at = match rows.iter().position(|r| (r.scenario, r.side, r.metric) == key) {
                Some(at) => at,
                None => {
                    let cells = vec![None; pairs.len()];
                    rows.push(GridRow { scenario: key.0, side: key.1, metric: key.2, cells });
                    rows.len() - 1
                }
            };
            // Every label was collected above, so `position` always finds it; a repeated cell
            // keeps the first one, as the rows and columns do.
            if let Some(column) = pairs.iter().position(|p| *p == cell.key.pair_label()) {
                rows[at].cells[column].get_or_insert(cell);
            }
        }
        Grid { pairs, rows }
    }
}

/// A cell as shown: a rate as `12,345 ±1.2%`, a count as `8` or `156.5`, with ` *` when it has
/// outliers; `failed` or `n/a`. A count shows its ± only when it is wider than the noise
/// threshold `compare` holds its measure to (an ECDSA signature a byte shorter moves bytes
/// written by 0.1%, noise; a resident size that moves by a tenth is not), so that a noisy
/// count never looks exact.
pub fn format_cell(cell: &CellResult) -> String {
    let median = match (cell.status, cell.median) {
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
    if let Some(efficiency) = cell.scaling_efficiency {
        text += &match cell.scaling_efficiency_ci {
            // The farther end of its interval, in percentage points.
            Some([low, high]) => {
                format!(" ({:.0} ±{:.0}%)", efficiency * 100.0, (efficiency - low).max(high - efficiency) * 100.0)
            }
            None => format!(" ({:.0}%)", efficiency * 100.0),
        };
    }
    text
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

/// One line per distinct (pair, status, reason) among failed and unsupported cells, naming the
/// scenarios it covers: `openssl: failed on s1, s2: reason`.
pub fn notes<'a>(results: impl IntoIterator<Item = &'a CellResult>) -> Vec<String> {
    let mut seen: Vec<(String, &str, &str, Vec<&str>)> = Vec::new();
    for cell in results {
        let status = match cell.status {
            Status::Ok => continue,
            Status::Failed => "failed",
            Status::Unsupported => "unsupported",
        };
        let (pair, reason) = (cell.key.pair_label(), cell.reason.as_deref().unwrap_or("no reason given"));
        match seen.iter_mut().find(|(p, s, r, _)| *p == pair && *s == status && *r == reason) {
            Some((_, _, _, scenarios)) if !scenarios.contains(&&cell.key.scenario[..]) => {
                scenarios.push(&cell.key.scenario)
            }
            Some(_) => {}
            None => seen.push((pair, status, reason, vec![&cell.key.scenario])),
        }
    }
    seen.into_iter()
        .map(|(pair, status, reason, scenarios)| format!("{pair}: {status} on {}: {reason}", scenarios.join(", ")))
        .collect()
}

/// How wide the run's intervals came out, in one line, with the target's outcome if it had one
/// and a warning when the machine was noisy (see [`intervals`] and [`crate::environment::noisy`]).
pub fn precision(doc: &RunDocument) -> String {
    let mut out = String::new();
    if let Some(line) = intervals(doc) {
        out += &columns::wrap(&line, WIDTH, 2);
    }
    if let Some(line) = warmups(doc) {
        out += &columns::wrap(&line, WIDTH, 2);
    }
    let env = &doc.run.environment;
    if let Some(warning) = crate::environment::noisy(env.conditions.as_ref(), env.cores, typical_wall_interval(doc)) {
        out += &columns::wrap(&format!("warning: {warning}"), WIDTH, 2);
    }
    out
}

/// How the processes that stayed up warmed up (warm.rs): per stack, the range of times each
/// took for a cell and how many there were, and those that reached the bound still rising. A
/// run stored before processes stayed up says what each sample's warm-up was instead.
fn warmups(doc: &RunDocument) -> Option<String> {
    // Each cell's warm-ups, once (its results all carry them).
    let mut seen = std::collections::HashSet::new();
    let cells: Vec<&CellResult> = doc
        .results
        .iter()
        .filter(|r| {
            !r.warmups.is_empty()
                && seen.insert((&r.key.scenario, &r.key.client_stack, &r.key.server_stack, &r.key.process))
        })
        .collect();
    if cells.is_empty() {
        return warmup_floors(doc);
    }
    let label = |r: &CellResult| crate::key::pair_label(&r.key.client_stack, &r.key.server_stack);
    let mut per_pair: Vec<String> = Vec::new();
    for pair in first_seen(cells.iter().map(|r| label(r))) {
        let ms: Vec<f64> =
            cells.iter().filter(|r| label(r) == pair).flat_map(|r| r.warmups.iter().map(|w| w.ms)).collect();
        let (low, high) = ms.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &m| (lo.min(m), hi.max(m)));
        // A warm-up per process and scenario: a process serves several scenarios.
        let count = if ms.len() == 1 { "1 warm-up".to_string() } else { format!("{} warm-ups", ms.len()) };
        per_pair.push(format!("{pair} {:.1}-{:.1} s ({count})", low / 1000.0, high / 1000.0));
    }
    // Per pair, how many of its processes were still rising at the bound (the JSON names them).
    let unsettled: Vec<String> = first_seen(cells.iter().map(|r| label(r)))
        .into_iter()
        .filter_map(|pair| {
            let of_pair = cells.iter().filter(|r| label(r) == pair).flat_map(|r| &r.warmups);
            let (rising, all) = of_pair.fold((0, 0), |(rising, all), w| (rising + usize::from(!w.steady), all + 1));
            (rising > 0).then(|| format!("{pair} {rising} of {all}"))
        })
        .collect();
    let mut line = format!(
        "warm-up: {} ms per sample; the stacks with a JIT or a collector ran in processes that stayed up, warmed up for \
         each scenario until the rate stopped rising: {}",
        doc.run.warmup_ms,
        per_pair.join(", ")
    );
    if !unsettled.is_empty() {
        line += &format!(
            "; still rising at the bound (--warmup-max-ms), measured as they were: {} (`warmups` in the JSON)",
            unsettled.join(", ")
        );
    }
    Some(line)
}

/// `warm-up: 25 ms per sample; jsse, netty-tcnative at least 2000 ms (...)`, when a stack of
/// a run with time cells asks for a longer warm-up than the run's (a JIT's), in a run whose
/// samples each had a process of their own.
fn warmup_floors(doc: &RunDocument) -> Option<String> {
    let timed = |id: &str| {
        doc.results.iter().any(|r| r.key.measure == "time" && (r.key.client_stack == id || r.key.server_stack == id))
    };
    let longer: Vec<(&str, u64)> = doc
        .run
        .stacks
        .iter()
        .filter(|s| s.capabilities.min_warmup_ms > doc.run.warmup_ms && timed(&s.id))
        .map(|s| (s.id.as_str(), s.capabilities.min_warmup_ms))
        .collect();
    if longer.is_empty() {
        return None;
    }
    let stacks: Vec<String> = longer.iter().map(|(id, ms)| format!("{id} at least {ms} ms")).collect();
    Some(format!(
        "warm-up: {} ms per sample; {} (what their runtime needs before its figures settle), and so do their pairs",
        doc.run.warmup_ms,
        stacks.join(", ")
    ))
}

/// The table's ±: the width of a cell's interval in % of its median. None for one sample, whose
/// "interval" is the sample itself and says nothing about the spread.
fn spread(cell: &CellResult) -> Option<f64> {
    match cell.samples.len() {
        0 | 1 => None,
        _ => cell.median.zip(cell.ci95).and_then(|(median, ci)| crate::stats::ci_percent(median, ci)),
    }
}

/// The median of the wall-time rates' intervals (the table's ±), if the run has any.
fn typical_wall_interval(doc: &RunDocument) -> Option<f64> {
    let mut widths: Vec<f64> = doc
        .results
        .iter()
        .filter(|c| c.status == Status::Ok && !is_count(c) && !c.metric.starts_with("cpu_"))
        .filter_map(spread)
        .collect();
    widths.sort_by(f64::total_cmp);
    widths.get(widths.len().checked_sub(1)? / 2).copied()
}

/// `95% intervals of the medians: wall time ±x% typical, ±y% widest (cell); ...`: the median and
/// the widest of the rates' intervals, wall time and CPU time apart (counts are exact), then
/// what `--target-ci` reached or how to ask for narrower ones.
pub fn intervals(doc: &RunDocument) -> Option<String> {
    let rates: Vec<(&CellResult, f64)> = doc
        .results
        .iter()
        .filter(|c| c.status == Status::Ok && !is_count(c))
        .filter_map(|c| spread(c).map(|w| (c, w)))
        .collect();
    let mut parts = Vec::new();
    for (clock, cpu) in [("wall time", false), ("CPU time", true)] {
        let mut of: Vec<&(&CellResult, f64)> =
            rates.iter().filter(|(c, _)| c.metric.starts_with("cpu_") == cpu).collect();
        if of.is_empty() {
            continue;
        }
        of.sort_by(|a, b| a.1.total_cmp(&b.1));
        let typical = of[(of.len() - 1) / 2].1;
        let (widest, w) = of[of.len() - 1];
        parts.push(format!(
            "{clock} ±{} typical, ±{} widest ({} {} {})",
            percent(typical),
            percent(*w),
            widest.key.pair_label(),
            widest.key.scenario,
            widest.side
        ));
    }
    if parts.is_empty() {
        return None;
    }
    let widest = rates.iter().map(|(_, w)| *w).fold(0.0, f64::max);
    let outcome = match doc.run.target_ci {
        Some(target) => {
            let wide: Vec<String> = rates
                .iter()
                .filter(|(_, w)| *w > target)
                .map(|(c, w)| {
                    format!(
                        "{} {} {} ±{} ({} samples)",
                        c.key.pair_label(),
                        c.key.scenario,
                        c.side,
                        percent(*w),
                        c.samples.len()
                    )
                })
                .collect();
            match (wide.len(), doc.run.time_budget_s) {
                (0, _) => format!("--target-ci {target}%: every result reached it"),
                (n, budget) => format!(
                    "--target-ci {target}%: {n} of {} results did not reach it within the time budget{}: {}",
                    rates.len(),
                    budget.map(|b| format!(" of {b} s")).unwrap_or_default(),
                    wide.join(", ")
                ),
            }
        }
        None if widest > 2.0 => format!("{} samples per cell: for ±2% use --target-ci 2", doc.run.samples),
        None => format!("{} samples per cell", doc.run.samples),
    };
    Some(format!("95% intervals of the medians: {}; {outcome}", parts.join("; ")))
}

/// A width in %, with one decimal below 10%.
fn percent(x: f64) -> String {
    match x < 10.0 {
        true => format!("{x:.1}%"),
        false => format!("{x:.0}%"),
    }
}

/// Over TCP with `--workers`: how busy each server's workers were, its CPU time per connection
/// times its connections per second over its workers (medians). The load generators share the
/// machine's cores with the server, so a server below full use waited for its clients, and its
/// rate per worker says as much about the load as about the server.
pub fn workers_busy(results: &[CellResult]) -> Option<String> {
    let tcp_server = |c: &&CellResult| c.key.process == "tcp" && c.side == Side::Server && c.status == Status::Ok;
    let same_cell =
        |a: &CellResult, b: &CellResult| (a.key.variant_key(), a.key.threads) == (b.key.variant_key(), b.key.threads);
    if !results.iter().filter(tcp_server).any(|c| c.key.threads.is_some()) {
        return None;
    }
    // Per scenario, in the run's order: "SCENARIO: PAIR 81%, PAIR (2 workers) 62%".
    let mut by_scenario: Vec<(&str, Vec<String>)> = Vec::new();
    for rate in results.iter().filter(tcp_server).filter(|c| c.metric == Metric::ConnectionsPerS.name()) {
        let cpu = |metric: Metric| {
            results
                .iter()
                .filter(tcp_server)
                .find(|c| c.metric == metric.name() && same_cell(c, rate))
                .and_then(|c| c.median)
        };
        let (Some(user), Some(system), Some(median)) =
            (cpu(Metric::CpuUserUsPerConnection), cpu(Metric::CpuSystemUsPerConnection), rate.median)
        else {
            continue;
        };
        let busy = median * (user + system) / 1e6 / f64::from(rate.key.threads.unwrap_or(1));
        let line = format!("{} {}", rate.key.pair_label(), percent(busy * 100.0));
        match by_scenario.iter_mut().find(|(scenario, _)| *scenario == rate.key.scenario) {
            Some((_, lines)) => lines.push(line),
            None => by_scenario.push((&rate.key.scenario, vec![line])),
        }
    }
    let busy: Vec<String> =
        by_scenario.into_iter().map(|(scenario, lines)| format!("{scenario}: {}", lines.join(", "))).collect();
    Some(format!(
        "server workers busy (CPU per connection × connections per second, per worker): {}. Each load generator starts a \
         connection when its last one closed, and they share the cores with the server: a server below full use waited \
         for its clients or for a core",
        busy.join("; ")
    ))
}

/// A hint when some cell has too few samples for its ± to be a 95% interval.
pub fn few_samples_warning<'a>(results: impl IntoIterator<Item = &'a CellResult>) -> Option<String> {
    // Instruction counts barely vary: a few samples show that they do (compare judges them by
    // their range).
    let few = |c: &CellResult| {
        c.status == Status::Ok
            && (1..MIN_SAMPLES_FOR_CI95).contains(&c.samples.len())
            && !judged_by_range(&c.key.measure)
    };
    results.into_iter().any(few).then(|| {
        format!(
            "some cells have fewer than {MIN_SAMPLES_FOR_CI95} samples: their ± is the whole range and covers \
             the median with less than 95% confidence; use --samples {MIN_SAMPLES_FOR_CI95} or more"
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::results::fixture;

    #[test]
    fn one_line_says_how_wide_the_intervals_are_and_what_the_target_reached() {
        let mut doc = fixture::document();
        // The rates' widths: 0.77% and 1.2% (FULL client and server), 6.7% (CHACHA server);
        // the heap count is exact and left out.
        assert_eq!(
            intervals(&doc).unwrap(),
            format!(
                "95% intervals of the medians: wall time ±1.2% typical, ±6.7% widest (rustls-aws-lc-rs {} server); \
                 3 samples per cell: for ±2% use --target-ci 2",
                fixture::CHACHA
            )
        );
        let cpu = CellResult { metric: "cpu_handshakes_per_s".into(), ..doc.results[0].clone() };
        doc.results.push(cpu);
        (doc.run.target_ci, doc.run.time_budget_s) = (Some(2.0), Some(300.0));
        let line = intervals(&doc).unwrap();
        assert!(
            line.contains(&format!(
                "; CPU time ±1.2% typical, ±1.2% widest (rustls-aws-lc-rs {} server); ",
                fixture::FULL
            )),
            "{line}"
        );
        assert!(
            line.ends_with(&format!(
                "--target-ci 2%: 1 of 4 results did not reach it within the time budget of 300 s: rustls-aws-lc-rs {} \
                 server ±6.7% (3 samples)",
                fixture::CHACHA
            )),
            "{line}"
        );
        doc.run.target_ci = Some(7.0);
        assert!(intervals(&doc).unwrap().ends_with("--target-ci 7%: every result reached it"));
    }

    #[test]
    fn a_stack_that_warms_up_longer_than_the_run_is_named_under_the_table() {
        let mut doc = fixture::document();
        assert_eq!(warmups(&doc), None);
        for (stack, ms) in doc.run.stacks.iter_mut().zip([2000, 5000]) {
            stack.capabilities.min_warmup_ms = ms;
        }
        assert_eq!(
            warmups(&doc).unwrap(),
            format!(
                "warm-up: {} ms per sample; rustls-aws-lc-rs at least 2000 ms, openssl at least 5000 ms (what their runtime \
                 needs before its figures settle), and so do their pairs",
                doc.run.warmup_ms
            )
        );
        assert!(precision(&doc).contains("rustls-aws-lc-rs at least 2000 ms"));
        // A stack without time cells in the run took no warm-up.
        doc.results.retain(|r| r.key.client_stack != "openssl" && r.key.server_stack != "openssl");
        assert!(!warmups(&doc).unwrap().contains("openssl"));
        doc.run.warmup_ms = 2000;
        assert_eq!(warmups(&doc), None, "no longer than the run's own");
    }

    #[test]
    fn a_noisy_run_says_so_under_the_table() {
        use crate::results::{Calibration, Conditions};
        let mut doc = fixture::document();
        assert!(!render(&doc).contains("noisy"));
        let calibration = |spread_percent| Calibration { median_ms: 3.0, spread_percent, max_over_min: 1.5 };
        doc.run.environment.conditions = Some(Conditions {
            load_average_start: 0.1,
            load_average_end: 0.3,
            steal_percent: Some(0.0),
            calibration_before: calibration(4.0),
            calibration_after: calibration(45.0),
        });
        let table = render(&doc);
        assert_eq!(table.matches("warning: noisy machine during this run").count(), 1, "{table}");
    }

    use super::*;

    #[test]
    fn grouped_each_metric_has_a_block_per_group_under_its_heading() {
        let doc = fixture::with_backends(fixture::document());
        let text = render_grouped(&doc, Some(GroupBy::Backend));
        let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("backend ")).collect();
        assert_eq!(
            headings,
            [
                "backend AWS-LC 1.66.2: rustls-aws-lc-rs (aws-lc-rs 1.19.0)",
                "backend OpenSSL libcrypto 3.0.19: openssl",
                "backend AWS-LC 1.66.2: rustls-aws-lc-rs (aws-lc-rs 1.19.0)",
            ],
            "{text}"
        );
        // Each block holds its group's rows only; the reasons stay numbered over the whole run.
        let openssl_block =
            text.split("backend OpenSSL libcrypto 3.0.19: openssl\n").nth(1).unwrap().split("\n\n").next().unwrap();
        assert!(
            openssl_block.contains("openssl |") && !openssl_block.contains("rustls-aws-lc-rs |"),
            "{openssl_block}"
        );
        assert!(openssl_block.contains("failed[1]") && openssl_block.contains("n/a[2]"), "{openssl_block}");
        assert!(text.contains("[1] failed: negotiated TLS 1.2, expected TLS 1.3"), "{text}");
        // Ungrouped, as before.
        assert_eq!(render_grouped(&doc, None), render(&doc));
        assert!(!render(&doc).contains("backend "));
    }

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

    #[test]
    fn renders_the_fixture() {
        let expected = "\
handshakes_per_s (1/s, higher is better), scenarios handshake-full_*_*_*_*
                 | 1.3                         | 1.2
                 | x25519                      | secp256r1
                 | ecdsa-p256                  | rsa-2048
                 | aes-128-gcm                 | chacha20-poly1305
                 |        client        server |            server
rustls-aws-lc-rs | 987.6 ±0.8% *  12,345 ±1.2% |       1,500 ±6.7%
openssl          |     failed[1]     failed[1] |            n/a[2]

heap_peak_bytes (B, lower is better), scenarios handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm
                 | server
rustls-aws-lc-rs | 45,678

median ±x%: the farther end of the median's 95% confidence interval, relative to the median (a count has one only when
  it is wider than the noise threshold of `tlsbench compare`); *: some samples are outliers (MAD test), kept in the
  statistics; [n]: the reason numbered n below
warning: some cells have fewer than 6 samples: their ± is the whole range and covers the median with less than 95%
  confidence; use --samples 6 or more
[1] failed: negotiated TLS 1.2, expected TLS 1.3
[2] n/a: openssl: cipher suite chacha20-poly1305 not supported
95% intervals of the medians: wall time ±1.2% typical, ±6.7% widest (rustls-aws-lc-rs
  handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305 server); 3 samples per cell: for ±2% use --target-ci 2
";
        assert_eq!(render(&fixture::document()), expected);
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
    fn scenario_headings_keep_only_what_differs_and_never_repeat() {
        let all: Vec<String> = tlsbench_harness::Scenario::all().iter().map(|s| s.name()).collect();
        let mut rng = fastrand::Rng::with_seed(10);
        for size in [1, 2, 3, 5, 8, 44, all.len()] {
            let mut names = all.clone();
            rng.shuffle(&mut names);
            let chosen: Vec<&str> = names[..size].iter().map(String::as_str).collect();
            let shortened = ScenarioNames::new(&chosen);
            let headings: Vec<String> = shortened.headings.iter().map(|h| h.join(" ")).collect();
            assert_eq!(first_seen(&headings).len(), size, "two columns share a heading: {chosen:?}");
            for (name, heading) in chosen.iter().zip(&shortened.headings) {
                let pattern = shortened.pattern.as_deref().unwrap_or("*");
                let glob = glob::Pattern::new(pattern).expect("the pattern is a glob");
                assert!(glob.matches(name), "{pattern} does not match {name}");
                let parts: Vec<&str> = name.split('_').collect();
                assert!(
                    heading.iter().all(|part| part == "-" || part.split('_').all(|p| parts.contains(&p))),
                    "{heading:?} of {name}"
                );
            }
        }
        let quick = ScenarioNames::new(&[
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
        ]);
        assert_eq!(quick.pattern.as_deref(), Some("*_*_x25519_ecdsa-p256_aes-128-gcm"));
        assert_eq!(quick.headings, [["handshake-full", "1.3"], ["handshake-resume-ticket", "1.2"]]);
        let auth = ScenarioNames::new(&[
            "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls",
        ]);
        assert_eq!(auth.pattern.as_deref(), Some("transfer_1.3_x25519_ecdsa-p256_aes-128-gcm*"));
        assert_eq!(auth.headings, [["-"], ["mtls"]]);
    }

    #[test]
    fn each_reason_is_listed_once_and_its_cells_point_at_it() {
        let mut doc = fixture::document();
        let mut again = doc.results[1].clone();
        (again.key.scenario, again.key.client_stack, again.key.server_stack) =
            (fixture::CHACHA.into(), "gnutls".into(), "gnutls".into());
        doc.results.push(again);
        let text = render(&doc);
        let listed: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
        assert_eq!(listed.len(), 2, "{text}");
        assert!(
            listed[0].starts_with("[1] failed: negotiated TLS 1.2")
                && listed[1].starts_with("[2] n/a: openssl: cipher suite"),
            "{text}"
        );
        assert_eq!(text.matches("failed[1]").count(), 3, "{text}");
        assert_eq!(text.matches("n/a[2]").count(), 1, "{text}");
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
