//! What is said under the tables: the notes on the cells without a number, how wide the
//! intervals came out and what `--target-ci` reached, how the processes warmed up, how busy the
//! server's workers were, and the warnings (too few samples, a noisy machine).

use tlsbench_harness::protocol::Metric;
use tlsbench_harness::{Measure, Side};

use super::format::{is_count, spread};
use super::WIDTH;
use crate::compare::judged_by_range;
use crate::order::first_seen;
use crate::output::columns;
use crate::results::{CellResult, RunDocument, Status};
use crate::stats::MIN_SAMPLES_FOR_CI95;

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
    if let Some(line) = crate::cores::note(doc) {
        out += &columns::wrap(&line, WIDTH, 2);
    }
    for line in [placed(doc), slowed(doc), too_wide(doc)].into_iter().flatten() {
        out += &columns::wrap(&line, WIDTH, 2);
    }
    let env = &doc.run.environment;
    if let Some(warning) = crate::environment::noisy(env.conditions.as_ref(), env.cores, typical_wall_interval(doc)) {
        out += &columns::wrap(&format!("warning: {warning}"), WIDTH, 2);
    }
    out
}

/// How the samples on one CPU met a machine that slowed its CPUs (noise/sentinel.rs): how many
/// counted only the stretches of their loop at full speed, how many ran on the CPU found fastest,
/// and how many found too little at full speed; None where the CPUs' speed hardly varied and
/// every sample was at full speed, or nothing was placed.
fn placed(doc: &RunDocument) -> Option<String> {
    let placed = doc.run.environment.conditions.as_ref()?.sentinel.as_ref()?;
    let slowed = placed.samples - placed.at_full_speed;
    if slowed == 0 && placed.spread_percent < crate::noise::NOISY_PROBES_PERCENT {
        return None;
    }
    let full_speed = format!("{:.0}% of the fastest it reached", crate::noise::FULL_SPEED * 100.0);
    let how = match (placed.judged, placed.samples - placed.judged) {
        (0, all) => format!("{all} ran on the CPU found fastest before each ({full_speed})"),
        (judged, 0) => {
            format!("{judged} counted only the stretches of their loop at full speed ({full_speed}), moving CPU")
        }
        (judged, others) => format!(
            "{judged} counted only the stretches of their loop at full speed ({full_speed}), moving CPU, and \
             {others} ran on the CPU found fastest before each"
        ),
    };
    let slowed = match slowed {
        0 => String::new(),
        n => format!(
            "; {n} of them found too little at full speed: a cell with {} others sets them aside, else its figure is \
             of all its samples",
            crate::stats::MIN_SAMPLES_FOR_CI95
        ),
    };
    Some(format!(
        "the machine slowed its CPUs by turns (a fixed workload's timings varied ±{:.0}%): of the {} time samples \
         on one CPU at a time, {how}{slowed} (docs/sampling.md)",
        placed.spread_percent, placed.samples,
    ))
}

/// The rates' samples a noisy machine slowed and the run set aside (sampling/cell.rs), with what
/// the noise probe saw as the run started; None where none was.
fn slowed(doc: &RunDocument) -> Option<String> {
    let cells: Vec<&CellResult> = doc.results.iter().filter(|r| !r.slowed.is_empty()).collect();
    let samples: usize = cells.iter().map(|r| r.slowed.len()).sum();
    if samples == 0 {
        return None;
    }
    let probe = doc.run.environment.conditions.as_ref().and_then(|c| c.noise.as_ref());
    let seen = probe.map_or(String::new(), |p| {
        format!(" (before the first round, {:.0}% of 20-ms stretches were slowed)", p.slowed_percent)
    });
    Some(format!(
        "slowed by the machine and set aside: {samples} sample value(s) in {} result(s){seen}; each such cell took \
         others in their place, and its figure and interval are of the rest (`slowed` in the JSON export)",
        cells.len()
    ))
}

/// A result whose interval is wider than this cannot be ranked against stacks within as much
/// (environment::NOISY_INTERVAL_PERCENT: beyond it, the run shows the machine's noise).
const RANKABLE_PERCENT: f64 = crate::environment::NOISY_INTERVAL_PERCENT;

/// The wall-time rates whose interval is too wide to rank ([`RANKABLE_PERCENT`]), named (the
/// widest first, up to five), and what narrows them; None where there are none.
fn too_wide(doc: &RunDocument) -> Option<String> {
    let mut wide: Vec<(&CellResult, f64)> = doc
        .results
        .iter()
        .filter(|c| c.is_ok() && !is_count(c) && !c.is_cpu())
        .filter_map(|c| spread(c).filter(|&w| w > RANKABLE_PERCENT).map(|w| (c, w)))
        .collect();
    if wide.is_empty() {
        return None;
    }
    wide.sort_by(|a, b| b.1.total_cmp(&a.1));
    let named: Vec<String> = wide
        .iter()
        .take(5)
        .map(|(c, w)| format!("{} {} {} ±{}", c.key.pair_label(), c.key.scenario, c.side, percent(*w)))
        .collect();
    let more = match wide.len() > named.len() {
        true => format!(" and {} more", wide.len() - named.len()),
        false => String::new(),
    };
    Some(format!(
        "too wide to rank against stacks within {RANKABLE_PERCENT:.0}%: {}{more}; to narrow them: --target-ci 5 \
         (further rounds where the intervals are widest), a longer run (--samples 12), --measure instructions (which \
         the machine does not move) or a quieter machine",
        named.join(", ")
    ))
}

/// How the processes that stayed up warmed up (sampling/warm.rs): per stack, the range of times each
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
        "warm-up: {} ms per sample; the stacks with a JIT or a collector ran in processes that stayed up, warmed up \
         for each scenario until the rate stopped rising: {}",
        doc.run.warmup_ms,
        per_pair.join(", ")
    );
    if !unsettled.is_empty() {
        line += &format!(
            "; still rising at the bound (--warmup-max-ms), measured as they were (^): {} (`warmups` in the JSON)",
            unsettled.join(", ")
        );
    }
    if let Some(lengthened) = gc_lengthened(doc, &cells) {
        line += &format!("; {lengthened}");
    }
    // One process per cell: two processes of a JIT can settle a few percent apart, and nothing in
    // one process's samples shows it.
    if cells.iter().all(|r| r.warmups.iter().all(|w| w.fork == 0)) {
        line += "; one process per cell (--quick takes one, --forks N takes N): its ± does not cover the \
                 spread between processes";
    }
    Some(line)
}

/// Per pair, the cells whose samples were made longer than a warm process's (`--min-time-ms`, at
/// least a warm-up window) for what their collector did in the warm-up (steady::GcSeen):
/// `samples lengthened for the collector: go 2 processes to 140-160 ms (12-20 collections/s,
/// 1.1-2.0% of the time)`.
fn gc_lengthened(doc: &RunDocument, cells: &[&CellResult]) -> Option<String> {
    let label = |r: &CellResult| crate::key::pair_label(&r.key.client_stack, &r.key.server_stack);
    let range = |values: &[f64], decimals: usize| {
        let (low, high) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        match low == high {
            true => format!("{low:.decimals$}"),
            false => format!("{low:.decimals$}-{high:.decimals$}"),
        }
    };
    let per_pair: Vec<String> = first_seen(cells.iter().map(|r| label(r)))
        .into_iter()
        .filter_map(|pair| {
            let seen: Vec<_> = cells
                .iter()
                .filter(|r| label(r) == pair)
                .flat_map(|r| r.warmups.iter().filter_map(|w| w.gc))
                .filter(|gc| gc.sample_ms > doc.run.min_time_ms.max(crate::sampling::warm::WINDOW_MS))
                .collect();
            if seen.is_empty() {
                return None;
            }
            let ms: Vec<f64> = seen.iter().map(|gc| gc.sample_ms as f64).collect();
            let per_s: Vec<f64> = seen.iter().map(|gc| gc.per_s).collect();
            let percent: Vec<f64> = seen.iter().map(|gc| gc.percent).collect();
            Some(format!(
                "{pair} {} to {} ms ({} collections/s, {}% of the time)",
                match seen.len() {
                    1 => "1 process".to_string(),
                    n => format!("{n} processes"),
                },
                range(&ms, 0),
                range(&per_s, 0),
                range(&percent, 1)
            ))
        })
        .collect();
    (!per_pair.is_empty())
        .then(|| format!("samples lengthened for the collector (docs/sampling.md): {}", per_pair.join(", ")))
}

/// `warm-up: 25 ms per sample; jsse, netty-tcnative at least 2000 ms (...)`, when a stack of
/// a run with time cells asks for a longer warm-up than the run's (a JIT's), in a run whose
/// samples each had a process of their own.
fn warmup_floors(doc: &RunDocument) -> Option<String> {
    let timed = |id: &str| {
        doc.results.iter().any(|r| r.key.is_timed() && (r.key.client_stack == id || r.key.server_stack == id))
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

/// The median of the wall-time rates' intervals (the table's ±), if the run has any.
fn typical_wall_interval(doc: &RunDocument) -> Option<f64> {
    let mut widths: Vec<f64> =
        doc.results.iter().filter(|c| c.is_ok() && !is_count(c) && !c.is_cpu()).filter_map(spread).collect();
    widths.sort_by(f64::total_cmp);
    widths.get(widths.len().checked_sub(1)? / 2).copied()
}

/// `intervals of the figures: wall time ±x% typical, ±y% widest (cell); ...`: the median and
/// the widest of the rates' intervals, wall time and CPU time apart (counts are exact), then
/// what `--target-ci` reached or how to ask for narrower ones.
pub fn intervals(doc: &RunDocument) -> Option<String> {
    let rates: Vec<(&CellResult, f64)> =
        doc.results.iter().filter(|c| c.is_ok() && !is_count(c)).filter_map(|c| spread(c).map(|w| (c, w))).collect();
    let mut parts = Vec::new();
    for (clock, cpu) in [("wall time", false), ("CPU time", true)] {
        let mut of: Vec<&(&CellResult, f64)> = rates.iter().filter(|(c, _)| c.is_cpu() == cpu).collect();
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
    let drift = match doc.run.environment.conditions.as_ref().map(|c| c.drift_percent()) {
        Some(drift) if doc.results.iter().any(|r| r.key.measure == Measure::Time.name()) => {
            format!(
                " (rates: each end widened by ±{}, the machine's drift: half its calibration loop's spread)",
                percent(drift)
            )
        }
        _ => String::new(),
    };
    Some(format!("intervals of the figures{drift}: {}; {outcome}", parts.join("; ")))
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
    // A peak's cells say how busy their workers were in a metric of their own.
    let tcp_server = |c: &&CellResult| c.key.process == "tcp" && c.side == Side::Server && c.is_ok();
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
        "server workers busy (CPU per connection × connections per second, per worker): {}. Each load generator \
         starts a connection when its last one closed, and they share the cores with the server: a server below full \
         use waited for its clients or for a core",
        busy.join("; ")
    ))
}

/// A hint when some cell has too few samples for its ± to be a 95% interval.
pub fn few_samples_warning<'a>(results: impl IntoIterator<Item = &'a CellResult>) -> Option<String> {
    // Instruction counts barely vary: a few samples show that they do (compare judges them by
    // their range).
    let few = |c: &CellResult| {
        c.is_ok() && (1..MIN_SAMPLES_FOR_CI95).contains(&c.samples.len()) && !judged_by_range(&c.key.measure)
    };
    results.into_iter().any(few).then(|| {
        format!(
            "some cells have fewer than {MIN_SAMPLES_FOR_CI95} samples: a median's ± is then their whole range, \
             at less than 95% confidence, and a time rate's figure the mean of 1 to 3; use --samples \
             {MIN_SAMPLES_FOR_CI95} or more"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    #[test]
    fn one_line_says_how_wide_the_intervals_are_and_what_the_target_reached() {
        let mut doc = fixture::document();
        // The rates' widths: 0.77% and 1.2% (FULL client and server), 6.7% (CHACHA server);
        // the heap count is exact and left out.
        assert_eq!(
            intervals(&doc).unwrap(),
            format!(
                "intervals of the figures: wall time ±1.2% typical, ±6.7% widest (rustls-aws-lc-rs {} server); \
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
    fn samples_that_found_no_cpu_at_full_speed_are_counted_under_the_table() {
        use crate::noise::SentinelSummary;
        use crate::results::{Calibration, Conditions};
        let mut doc = fixture::document();
        assert_eq!(placed(&doc), None, "no conditions");
        let calibration =
            Calibration { median_ms: 3.0, spread_percent: 2.0, kept_spread_percent: None, max_over_min: 1.1 };
        let summary = |at_full_speed| SentinelSummary {
            samples: 120,
            at_full_speed,
            moved: 50,
            spread_percent: 31.6,
            reference: 41.5,
            judged: 0,
            judged_speed: 0.0,
        };
        let conditions = |sentinel| Conditions {
            load_average_start: 0.1,
            load_average_end: 0.3,
            steal_percent: Some(0.0),
            calibration_before: calibration.clone(),
            calibration_after: calibration.clone(),
            noise: None,
            sentinel,
        };
        let quiet = SentinelSummary { spread_percent: 2.0, ..summary(120) };
        doc.run.environment.conditions = Some(conditions(Some(quiet)));
        assert_eq!(placed(&doc), None, "every sample at full speed, the probes within a few percent");
        doc.run.environment.conditions = Some(conditions(Some(summary(120))));
        assert_eq!(
            placed(&doc).unwrap(),
            "the machine slowed its CPUs by turns (a fixed workload's timings varied ±32%): of the 120 time samples \
             on one CPU at a time, 120 ran on the CPU found fastest before each (85% of the fastest it reached) \
             (docs/sampling.md)",
            "every sample at full speed, on CPUs whose speed varied"
        );
        doc.run.environment.conditions = Some(conditions(Some(SentinelSummary { judged: 100, ..summary(82) })));
        assert_eq!(
            placed(&doc).unwrap(),
            "the machine slowed its CPUs by turns (a fixed workload's timings varied ±32%): of the 120 time samples \
             on one CPU at a time, 100 counted only the stretches of their loop at full speed (85% of the fastest it \
             reached), moving CPU, and 20 ran on the CPU found fastest before each; 38 of them found too little at \
             full speed: a cell with 6 others sets them aside, else its figure is of all its samples (docs/sampling.md)"
        );
        assert!(precision(&doc).replace("\n  ", " ").contains("38 of them found too little at full speed"));
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
                "warm-up: {} ms per sample; rustls-aws-lc-rs at least 2000 ms, openssl at least 5000 ms \
                 (what their runtime needs before its figures settle), and so do their pairs",
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
}
