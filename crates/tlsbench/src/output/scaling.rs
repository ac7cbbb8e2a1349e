//! The scaling of a run with `--threads` (or `--workers`), read from its document's rates per
//! thread (sampling/document.rs): per stack, contexts mode, scenario and side, the rate per
//! thread against the thread count, from the one-thread reference. `run`, `show` and `report`
//! print it after their tables as a compact table of efficiencies, with the run's sync counts
//! beside each row; the HTML report draws it (report/html/scaling.rs) and shows the same table.

use tlsbench_harness::protocol::Metric;
use tlsbench_harness::{Measure, Side};

use super::columns;
use super::format::{format_count, format_efficiency};
use super::model::{Cell, Column, Table};
use super::table::ScenarioNames;
use super::WIDTH;
use crate::key::CellKey;
use crate::order::first_seen;
use crate::results::{CellResult, RunDocument, Status};

/// One stack's rate per thread (per worker) against the thread count, in one scenario and side,
/// with what its threads shared.
pub struct Curve<'a> {
    /// `handshakes_per_s_per_thread`, `connections_per_s_per_worker`, ...
    pub metric: &'a str,
    pub scenario: &'a str,
    pub side: Side,
    /// The pair as its one-thread cell is labelled: `openssl`, `openssl [tcp]`.
    pub stack: String,
    /// What the threads shared, where the run chose it: `own` or `shared`.
    pub contexts: Option<&'a str>,
    /// The one-thread cell's rate: the reference (in both contexts modes' curves).
    pub reference: Option<&'a CellResult>,
    /// The cells of N > 1 threads, in ascending N.
    pub points: Vec<(u32, &'a CellResult)>,
}

impl Curve<'_> {
    /// The stack with what its threads shared: `openssl (shared context)`; `openssl` in a run
    /// that did not choose.
    pub fn label(&self) -> String {
        CellKey { threads: None, ..self.points[0].1.key.clone() }.pair_label()
    }

    /// What N counts: `threads`, or a server's `workers` over TCP.
    pub fn unit(&self) -> &'static str {
        match self.metric.ends_with("_per_worker") {
            true => "workers",
            false => "threads",
        }
    }
}

/// The curves of a document's rates per thread and per worker, in the order of their first
/// N-thread cell; none in a run without threads or workers.
pub fn curves(results: &[CellResult]) -> Vec<Curve<'_>> {
    let per_thread: Vec<&CellResult> =
        results.iter().filter(|r| r.metric.ends_with("_per_thread") || r.metric.ends_with("_per_worker")).collect();
    let mut curves: Vec<Curve> = Vec::new();
    for &cell in &per_thread {
        let Some(n) = cell.key.threads else { continue };
        let variant = cell.key.variant_key();
        let same = |curve: &&mut Curve| {
            (curve.metric, curve.side, curve.contexts) == (&cell.metric[..], cell.side, cell.key.contexts.as_deref())
                && curve.points[0].1.key.variant_key() == variant
        };
        match curves.iter_mut().find(same) {
            Some(curve) => curve.points.push((n, cell)),
            None => {
                let reference = per_thread.iter().copied().find(|r| {
                    r.key.threads.is_none() && (&r.metric, r.side) == (&cell.metric, cell.side) && r.key == variant
                });
                curves.push(Curve {
                    metric: &cell.metric,
                    scenario: &cell.key.scenario,
                    side: cell.side,
                    stack: variant.pair_label(),
                    contexts: cell.key.contexts.as_deref(),
                    reference,
                    points: vec![(n, cell)],
                });
            }
        }
    }
    for curve in &mut curves {
        curve.points.sort_by_key(|(n, _)| *n);
    }
    curves
}

/// The sync counts shown beside each row, with their headings.
const SYNC: [(Metric, &str); 4] = [
    (Metric::MutexLocks, "mutex"),
    (Metric::RwlockReadLocks, "rdlock"),
    (Metric::RwlockWriteLocks, "wrlock"),
    (Metric::AtomicRmw, "atomics"),
];

/// After the run's table, for a run with threads or workers: per rate per thread, a table of
/// its efficiencies, a row per stack (and contexts mode), scenario and side, a column per
/// thread count, with the run's sync counts beside each row; then what they are. Empty for a
/// run without threads or workers.
pub fn render(doc: &RunDocument) -> String {
    let tables = tables(doc);
    if tables.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    for table in tables {
        out += "\n";
        out += &columns::render(&table, WIDTH);
    }
    for line in legend(has_sync(doc)) {
        out += &columns::wrap(&line, WIDTH, 2);
    }
    out
}

/// The scaling tables of a run, one per rate per thread (per worker); none without threads.
pub fn tables(doc: &RunDocument) -> Vec<Table> {
    let curves = curves(&doc.results);
    let sync: Vec<&CellResult> = doc.results.iter().filter(|r| r.key.measure == Measure::Sync.name()).collect();
    let metrics = first_seen(curves.iter().map(|c| c.metric));
    metrics.into_iter().map(|m| table(&curves.iter().filter(|c| c.metric == m).collect::<Vec<_>>(), &sync)).collect()
}

/// Whether the run measured sync, whose counts the scaling tables show.
pub fn has_sync(doc: &RunDocument) -> bool {
    doc.results.iter().any(|r| r.key.measure == Measure::Sync.name())
}

/// What the scaling tables' cells are, and where their sync counts come from.
pub fn legend(has_sync: bool) -> Vec<String> {
    let efficiency = "efficiency: the rate per thread of N threads (per worker of N workers) over one's, same run, \
                      ± the farther end of its interval in points; 100% is perfect scaling";
    let sync = match has_sync {
        true => {
            "sync: lock acquisitions (mutex, rdlock, wrlock) and atomic read-modify-writes per handshake (per MB), \
             one pair's under callgrind (--measure sync), which runs threads one at a time: there are no counts at \
             N threads"
        }
        false => "--measure sync in the same run puts each row's lock and atomic counts (one pair's) beside it",
    };
    vec![efficiency.to_string(), sync.to_string()]
}

/// One metric's curves as a table: a row per stack, scenario, side and contexts mode (the
/// modes of one scenario and side next to each other), a column per thread count with the
/// efficiency, then the sync counts of the row's pair, scenario and side where the run has them.
pub fn table(curves: &[&Curve], sync: &[&CellResult]) -> Table {
    let (metric, unit) = (curves[0].metric, curves[0].unit());
    let stacks = first_seen(curves.iter().map(|c| c.stack.as_str()));
    let scenarios = first_seen(curves.iter().map(|c| c.scenario));
    let modes = first_seen(curves.iter().map(|c| c.contexts));
    let mut rows: Vec<&Curve> = curves.to_vec();
    rows.sort_by_key(|c| {
        (at(&stacks, c.stack.as_str()), at(&scenarios, c.scenario), c.side == Side::Server, at(&modes, c.contexts))
    });
    let names = ScenarioNames::new(&scenarios);
    let mut counts: Vec<u32> = curves.iter().flat_map(|c| c.points.iter().map(|(n, _)| *n)).collect();
    counts.sort_unstable();
    counts.dedup();

    let by_scenario = scenarios.len() > 1;
    let by_mode = modes.iter().any(Option::is_some);
    let label_header = ["stack"]
        .into_iter()
        .chain(by_scenario.then_some("scenario"))
        .chain(["side"])
        .chain(by_mode.then_some("contexts"));
    let mut columns: Vec<Column> = counts
        .iter()
        .map(|n| Column { header: vec!["efficiency".into(), format!("{n} {unit}")], cells: Vec::new() })
        .collect();
    let per = if metric.contains("mb_per_s") { "MB" } else { "handshake" };
    if !sync.is_empty() {
        columns.extend(SYNC.iter().map(|(_, heading)| Column {
            header: vec![format!("sync per {per}, 1 pair"), heading.to_string()],
            cells: Vec::new(),
        }));
    }
    let mut table = Table { label_header: label_header.map(String::from).collect(), columns, ..Table::default() };
    for curve in rows {
        let scenario = &names.headings[at(&scenarios, curve.scenario)];
        let label = [curve.stack.clone()]
            .into_iter()
            .chain(by_scenario.then(|| scenario.join(" ")))
            .chain([curve.side.to_string()])
            .chain(by_mode.then(|| curve.contexts.unwrap_or("-").to_string()));
        let efficiencies = counts.iter().map(|n| {
            let cell = curve.points.iter().find(|(threads, _)| threads == n);
            Cell::number(cell.map_or_else(|| "-".to_string(), |(_, c)| efficiency(c)))
        });
        let sync_counts = SYNC.iter().filter(|_| !sync.is_empty()).map(|(metric, _)| {
            let cell = sync_of(curve, metric.name(), sync);
            Cell::number(cell.map_or_else(|| "-".to_string(), count))
        });
        table.push_row(label.collect(), efficiencies.chain(sync_counts).collect());
    }
    let pattern = names.pattern.map(|p| format!(", scenarios {p}")).unwrap_or_default();
    table.with_title(format!("scaling of {metric}{pattern}"))
}

/// An N-thread cell's efficiency as the table shows it: `92 ±6%`, or why there is none.
fn efficiency(cell: &CellResult) -> String {
    match (cell.status, cell.scaling_efficiency) {
        (Status::Failed, _) => "failed".into(),
        (Status::Unsupported, _) => "n/a".into(),
        (Status::Ok, Some(efficiency)) => format_efficiency(efficiency, cell.scaling_efficiency_ci),
        (Status::Ok, None) => "-".into(),
    }
}

/// A sync cell's count as the table shows it: `5,419`, `605.2`, or why there is none.
fn count(cell: &CellResult) -> String {
    match (cell.status, cell.median) {
        (Status::Failed, _) => "failed".into(),
        (Status::Unsupported, _) => "n/a".into(),
        (Status::Ok, Some(median)) => format_count(median),
        (Status::Ok, None) => "-".into(),
    }
}

/// The sync cell of `metric` for the curve's pair, scenario and side (the same allocator, build
/// and compiler): the one of the curve's process where there is one (in-process or split), else
/// any, as a server's workers over TCP run the library the in-process pair counted.
fn sync_of<'a>(curve: &Curve, metric: &str, sync: &[&'a CellResult]) -> Option<&'a CellResult> {
    let key = &curve.points[0].1.key;
    let matching = |process: bool| {
        sync.iter().copied().find(move |s| {
            let same = |k: &CellKey| CellKey { measure: String::new(), process: String::new(), ..k.variant_key() };
            s.metric == metric
                && s.side == curve.side
                && same(&s.key) == same(key)
                && (!process || s.key.process == key.process)
        })
    };
    matching(true).or_else(|| matching(false))
}

/// Where `item` is among `items` (first seen), to order rows as the run planned them.
fn at<T: PartialEq>(items: &[T], item: T) -> usize {
    items.iter().position(|i| *i == item).unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::results::fixture;

    /// A rate per thread of `stack` in the full handshake, with `threads` and its contexts mode,
    /// and its efficiency (and interval) against one thread where it has one.
    fn per_thread(
        stack: &str,
        side: Side,
        (threads, contexts): (Option<u32>, Option<&str>),
        median: f64,
        efficiency: Option<(f64, [f64; 2])>,
    ) -> CellResult {
        let template = fixture::document().results.remove(0);
        CellResult {
            key: CellKey {
                client_stack: stack.into(),
                server_stack: stack.into(),
                threads,
                contexts: contexts.map(String::from),
                ..template.key.clone()
            },
            side,
            metric: "handshakes_per_s_per_thread".into(),
            samples: vec![median * 0.98, median, median * 1.02],
            median: Some(median),
            ci95: Some([median * 0.98, median * 1.02]),
            min: Some(median * 0.98),
            max: Some(median * 1.02),
            scaling_efficiency: efficiency.map(|(e, _)| e),
            scaling_efficiency_ci: efficiency.map(|(_, ci)| ci),
            ..template
        }
    }

    /// openssl's sync count of `metric` on `side` (one pair, in-process).
    fn sync_count(side: Side, metric: Metric, median: f64) -> CellResult {
        let template = per_thread("openssl", side, (None, None), median, None);
        CellResult {
            key: CellKey { measure: Measure::Sync.name().into(), ..template.key.clone() },
            metric: metric.name().into(),
            unit: metric.unit().into(),
            better: "lower".into(),
            samples: vec![median; 3],
            ci95: Some([median, median]),
            ..template
        }
    }

    /// A run of openssl and rustls-aws-lc-rs at 1, 2 and 4 threads with both contexts modes,
    /// the full handshake's rates per thread (the server's only for rustls), and openssl's
    /// sync counts. openssl's shared context falls to 40% at 4 threads; rustls's 4-thread
    /// shared cell failed.
    pub(crate) fn document() -> RunDocument {
        let mut doc = fixture::document();
        let (own, shared) = (Some("own"), Some("shared"));
        let mut results = Vec::new();
        for side in [Side::Client, Side::Server] {
            results.push(per_thread("openssl", side, (None, None), 2000.0, None));
            for (n, contexts, e, ci) in [
                (2, own, 0.95, [0.90, 0.99]),
                (2, shared, 0.80, [0.74, 0.85]),
                (4, own, 0.91, [0.86, 0.97]),
                (4, shared, 0.40, [0.35, 0.46]),
            ] {
                results.push(per_thread("openssl", side, (Some(n), contexts), 2000.0 * e, Some((e, ci))));
            }
        }
        results.push(per_thread("rustls-aws-lc-rs", Side::Server, (None, None), 6000.0, None));
        for (n, contexts, e) in [(2, own, 1.0), (2, shared, 0.97), (4, own, 0.99)] {
            let cell = per_thread("rustls-aws-lc-rs", Side::Server, (Some(n), contexts), 6000.0 * e, Some((e, [e, e])));
            results.push(cell);
        }
        let failed = per_thread("rustls-aws-lc-rs", Side::Server, (Some(4), shared), 0.0, None);
        results.push(CellResult {
            median: None,
            status: Status::Failed,
            reason: Some("client did a full handshake where resumption was asked".into()),
            ..failed
        });
        for (side, counts) in [(Side::Client, [0.0, 5400.0, 12.0, 12000.0]), (Side::Server, [3.0, 2900.0, 8.0, 612.5])]
        {
            for ((metric, _), count) in SYNC.iter().zip(counts) {
                results.push(sync_count(side, *metric, count));
            }
        }
        doc.results = results;
        doc
    }

    #[test]
    fn a_row_per_stack_side_and_contexts_mode_a_column_per_thread_count_and_the_sync_counts_beside() {
        let text = render(&document());
        let expected = "
scaling of handshakes_per_s_per_thread, scenarios handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm
                                   | efficiency           | sync per handshake, 1 pair
stack             side    contexts | 2 threads  4 threads | mutex  rdlock  wrlock  atomics
openssl           client  own      |    95 ±5%     91 ±6% |     0   5,400      12   12,000
openssl           client  shared   |    80 ±6%     40 ±6% |     0   5,400      12   12,000
openssl           server  own      |    95 ±5%     91 ±6% |     3   2,900       8    612.5
openssl           server  shared   |    80 ±6%     40 ±6% |     3   2,900       8    612.5
rustls-aws-lc-rs  server  own      |   100 ±0%     99 ±0% |     -       -       -        -
rustls-aws-lc-rs  server  shared   |    97 ±0%     failed |     -       -       -        -
efficiency: the rate per thread of N threads (per worker of N workers) over one's, same run, ± the farther end of its
  interval in points; 100% is perfect scaling
sync: lock acquisitions (mutex, rdlock, wrlock) and atomic read-modify-writes per handshake (per MB), one pair's under
  callgrind (--measure sync), which runs threads one at a time: there are no counts at N threads
";
        assert_eq!(text, expected, "\n{text}");
    }
    #[test]
    fn the_run_s_table_and_the_report_end_with_its_scaling_and_a_run_without_threads_has_none() {
        let doc = document();
        let table = crate::output::table::render(&doc);
        assert!(table.ends_with(&render(&doc)), "{table}");
        assert!(table.lines().all(|l| l.chars().count() <= WIDTH), "{table}");
        let plain = fixture::document();
        assert_eq!(render(&plain), "");
        assert!(!crate::output::table::render(&plain).contains("scaling of"));
        // `report` prints it under its tables too.
        assert!(crate::report::Report::new(&doc, None).unwrap().terminal().ends_with(&render(&doc)));
    }

    #[test]
    fn without_sync_or_contexts_the_columns_go_and_the_legend_says_how_to_get_the_counts() {
        let mut doc = document();
        doc.results.retain(|r| r.key.measure != Measure::Sync.name() && r.key.contexts.as_deref() != Some("shared"));
        doc.results.iter_mut().for_each(|r| r.key.contexts = None);
        let text = render(&doc);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[3], "stack             side   | 2 threads  4 threads", "{text}");
        assert_eq!(lines[4], "openssl           client |    95 ±5%     91 ±6%", "{text}");
        assert!(
            text.ends_with(
                "--measure sync in the same run puts each row's lock and atomic counts (one pair's) beside it\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn many_thread_counts_scenarios_and_a_long_label_keep_to_the_width_with_the_counts_beside() {
        // Every stack label a run may print, at 2 to 128 threads, in two scenarios and both
        // modes: the efficiencies and the counts of each row stay beside it, in a table of
        // 120 columns or in its continuation under the same labels.
        let mut doc = document();
        let long = |r: &mut CellResult| {
            r.key.allocator = Some("jemalloc".into());
            r.key.build = Some("native".into());
        };
        let mut more = Vec::new();
        for cell in doc.results.iter().filter(|r| r.key.threads == Some(4)) {
            for n in [8, 16, 32, 64, 128] {
                more.push(CellResult { key: CellKey { threads: Some(n), ..cell.key.clone() }, ..cell.clone() });
            }
        }
        doc.results.extend(more);
        let resumed: Vec<CellResult> = doc
            .results
            .iter()
            .map(|r| {
                let scenario = r.key.scenario.replace("handshake-full", "handshake-resume-ticket");
                CellResult { key: CellKey { scenario, ..r.key.clone() }, ..r.clone() }
            })
            .collect();
        doc.results.extend(resumed);
        doc.results.iter_mut().for_each(long);
        let text = render(&doc);
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        let label = |line: &str| line.split(" | ").next().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        let row = "openssl (jemalloc) [native] handshake-full client shared";
        let rows: Vec<&str> = text.lines().filter(|l| label(l) == row).collect();
        // In each part of the table, the row's figures on its line: efficiencies, then the counts.
        assert_eq!(rows.len(), 4, "{text}");
        assert!(rows[0].ends_with("|    80 ±6%     40 ±6%     40 ±6%"), "{text}");
        assert!(rows[3].ends_with("|     0   5,400      12   12,000"), "{text}");
        for heading in ["128 threads", "atomics", "rdlock"] {
            assert!(text.contains(heading), "{heading}: {text}");
        }
    }

    #[test]
    fn a_server_s_workers_over_tcp_get_their_own_table_with_the_server_s_counts() {
        let mut doc = document();
        for r in doc.results.iter_mut().filter(|r| r.key.measure != Measure::Sync.name()) {
            (r.key.process, r.key.contexts) = ("tcp".into(), None);
            r.metric = "connections_per_s_per_worker".into();
        }
        doc.results.retain(|r| r.side == Side::Server && r.key.contexts.is_none());
        let text = render(&doc);
        assert!(text.contains("scaling of connections_per_s_per_worker"), "{text}");
        assert!(text.contains("stack                   side   | 2 workers  4 workers | mutex"), "{text}");
        // The in-process pair's counts: the same library's server.
        assert!(
            text.contains("openssl [tcp]           server |    95 ±5%     91 ±6% |     3   2,900       8    612.5"),
            "{text}"
        );
    }
}
