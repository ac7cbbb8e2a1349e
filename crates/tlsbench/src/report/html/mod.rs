//! The HTML report: one self-contained page (inline CSS and SVG, no scripts, nothing fetched)
//! with the run's environment, a bar chart per scenario group and side, the memory measures
//! against the number of connections, the rates per thread against the number of threads, the
//! io measure's counts, and the tables. This file is the
//! page, its environment and its tables; each other section has a file of its own.

mod charts;
mod io;
mod memory;
mod profiles;
mod scaling;

use std::fmt::Write;

use super::svg::escape;
use super::Report;
use crate::order::first_seen;
use crate::output::format::legend;
use crate::output::model::{self, Cell, Column, Table};
use crate::output::notes::{few_samples_warning, notes};
use crate::report::tables::factor_legend;
use crate::results::RunDocument;

const STYLE: &str = "
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1b1f24; background: #fff; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 20px; margin: 32px 0 8px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 16px; margin: 20px 0 6px; } code { font-family: ui-monospace, monospace; font-size: 13px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
figure { margin: 12px 0 24px; } svg.chart { max-width: 100%; height: auto; } \
img.flamegraph { max-width: 100%; height: auto; }
h4 { font-size: 14px; margin: 14px 0 4px; } th.num { text-align: right; }
.row { display: flex; flex-wrap: wrap; gap: 0 24px; } .row figure { margin: 8px 0 12px; }
svg text { font: 12px system-ui, sans-serif; fill: #1b1f24; } svg .title { font-size: 14px; font-weight: 600; }
svg .grid { stroke: #e4e8ec; } svg .axis-line { stroke: #57606a; } \
svg .ci { stroke: #24292f; stroke-width: 1.5; fill: none; }
svg .tick, svg .value { fill: #57606a; } svg .missing { font-style: italic; }
.legend, .notes { color: #57606a; font-size: 13px; }
";

pub fn page(report: &Report) -> String {
    let doc = report.doc;
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>tlsbench run {id}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <h1>tlsbench run <code>{id}</code></h1>\n",
        id = escape(&doc.run.id)
    );
    // Each pair's colour, the same in every chart: by its place among all the run's pairs.
    let pairs = first_seen(doc.results.iter().map(|c| c.key.pair_label()));
    html += &environment(doc);
    html += &charts::charts(doc, &pairs);
    html += &memory::memory(doc, &pairs);
    html += &scaling::scaling(doc, &pairs);
    html += &io::io(doc);
    html += &profiles::profiles(&report.profiles);
    html += &tables(report);
    html += "</main>\n</body>\n</html>\n";
    html
}

/// What one sample is: a time for the timed measures, fixed iterations for those counted under
/// callgrind.
fn sample_length(doc: &RunDocument) -> String {
    let run = &doc.run;
    let (counted, timed) =
        (doc.results.iter().any(|c| c.key.is_counted()), doc.results.iter().any(|c| !c.key.is_counted()));
    let counted = counted.then(|| {
        use crate::instructions::{HANDSHAKES, TRANSFER_WRITES, WARMUP_ITERATIONS};
        format!(
            "{HANDSHAKES} handshakes or {TRANSFER_WRITES} writes of 16 KiB under callgrind after \
             {WARMUP_ITERATIONS} unmeasured (instructions, sync)"
        )
    });
    let timed = timed.then(|| format!("at least {} ms per side after {} ms of warmup", run.min_time_ms, run.warmup_ms));
    [timed, counted].into_iter().flatten().collect::<Vec<_>>().join("; ")
}

fn environment(doc: &RunDocument) -> String {
    let (run, env) = (&doc.run, &doc.run.environment);
    let mut html = String::from("<section id=\"environment\">\n<h2>Environment</h2>\n");
    let rows = [
        ("started", run.started.clone()),
        ("samples", format!("{} per cell, each {}", run.samples, sample_length(doc))),
        ("CPU", format!("{} ({} cores)", env.cpu, env.cores)),
        ("kernel", env.kernel.clone()),
        ("compiler", env.rustc.clone()),
        ("allocator", env.allocator.clone()),
        ("builds", env.builds.clone().unwrap_or_else(|| "not recorded (a run from before builds were)".into())),
        ("ASLR", env.aslr.clone()),
        ("frequency governor", env.governor.clone()),
        ("tlsbench", run.tlsbench_version.clone()),
        ("command line", run.command_line.join(" ")),
    ];
    let conditions = env.conditions.as_ref().map(crate::environment::describe).unwrap_or_default();
    let mut values = Table {
        label_header: vec![String::new()],
        columns: vec![Column { header: vec![String::new()], cells: Vec::new() }],
        ..Table::default()
    };
    for (what, value) in rows.into_iter().chain(conditions) {
        values.push_row(vec![what.to_string()], vec![Cell::text(value)]);
    }
    let mut stacks = Table::with_header(&[], &["stack", "library"]);
    for stack in &run.stacks {
        stacks.push_row(Vec::new(), vec![Cell::text(&stack.id).code(), Cell::text(&stack.library)]);
    }
    html += &model::html(&values, None);
    html += &model::html(&stacks, None);
    html += "</section>\n";
    html
}

fn tables(report: &Report) -> String {
    let mut html = String::from("<section id=\"tables\">\n<h2>Tables</h2>\n");
    for table in &report.tables {
        html += &table.html();
    }
    let _ = writeln!(html, "<p class=\"legend\">{}</p>", escape(&legend(&report.doc.results)));
    if let Some(baseline) = report.baseline {
        let _ = writeln!(html, "<p class=\"legend\">{}</p>", escape(&factor_legend(baseline)));
    }
    let notes: Vec<String> =
        few_samples_warning(&report.doc.results).into_iter().chain(notes(&report.doc.results)).collect();
    if !notes.is_empty() {
        html += "<ul class=\"notes\">\n";
        for note in notes {
            let _ = writeln!(html, "<li>{}</li>", escape(&note));
        }
        html += "</ul>\n";
    }
    html += "</section>\n";
    html
}

#[cfg(test)]
mod tests {
    use tlsbench_harness::Side;

    use super::*;
    use crate::key::CellKey;
    use crate::results::{fixture, CellResult, Status};

    #[test]
    fn the_environment_says_what_a_sample_is_for_each_kind_of_measure() {
        let mut doc = fixture::document();
        assert_eq!(sample_length(&doc), "at least 100 ms per side after 50 ms of warmup");
        doc.results[0].key.measure = "instructions".into();
        let both = sample_length(&doc);
        assert!(
            both.starts_with("at least 100 ms per side")
                && both.ends_with("under callgrind after 2 unmeasured (instructions, sync)"),
            "{both}"
        );
        doc.results.iter_mut().for_each(|c| c.key.measure = "instructions".into());
        assert!(sample_length(&doc).starts_with("20 handshakes or 64 writes of 16 KiB"), "{}", sample_length(&doc));
    }

    #[test]
    fn a_self_contained_page_with_environment_charts_and_tables() {
        let doc = fixture::document();
        let report = Report::new(&doc, Some("rustls-aws-lc-rs")).unwrap();
        let html = report.html();
        assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"));
        assert!(html.ends_with("</main>\n</body>\n</html>\n"));
        // Nothing to fetch or run: the only URL is the SVG namespace, which is a name, not a load.
        assert!(
            !html.contains("<script") && !html.contains("src=") && !html.contains("href=") && !html.contains("@import")
        );
        assert_eq!(html.matches("http").count(), html.matches("http://www.w3.org/2000/svg").count());
        // Sections in order.
        let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle} missing"));
        assert!(
            at("<section id=\"environment\">") < at("<section id=\"charts\">")
                && at("<section id=\"charts\">") < at("<section id=\"tables\">")
        );
        assert!(html.contains("<tr><th>CPU</th><td>Test CPU @ 3.0GHz (2 cores)</td></tr>"));
        assert!(html.contains("<tr><td><code>openssl</code></td><td>openssl 1.0</td></tr>"));
        // One group (handshake-full); charts: server and client of handshakes_per_s, server of heap.
        assert_eq!(html.matches("<section class=\"group\"").count(), 1);
        assert_eq!(html.matches("<figure><svg").count(), 3);
        assert!(html.contains(">handshake-full, server side: handshakes_per_s</text>"));
        // Bars for rustls's 4 numbers; openssl's cells are text, with the reason on hover.
        assert_eq!(html.matches("<rect class=\"bar\"").count(), 4);
        assert!(
            html.contains(">failed openssl<title>openssl: failed: negotiated TLS 1.2, expected TLS 1.3</title></text>"),
            "{html}"
        );
        assert!(html.contains(
            ">n/a openssl<title>openssl: n/a: openssl: cipher suite chacha20-poly1305 not supported</title></text>"
        ));
        assert!(
            html.contains(
                "<text class=\"label\" x=\"296.0\" y=\"87.5\" text-anchor=\"end\">\
                 1.3 x25519 ecdsa-p256 aes-128-gcm</text>"
            ),
            "{html}"
        );
        // The tables, with the factor column against the baseline.
        let header =
            ["rustls-aws-lc-rs", "openssl", "openssl/rustls-aws-lc-rs"].map(|h| format!("<th class=\"num\">{h}</th>"));
        assert!(html.contains(&format!("<tr><th>scenario</th><th>side</th>{}</tr>", header.concat())), "{html}");
        assert!(html
            .contains("<td class=\"num\">12,345 ±1.2%</td><td class=\"num\">failed</td><td class=\"num\">-</td></tr>"));
        assert!(html.contains(
            "<li>openssl: failed on handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm: \
             negotiated TLS 1.2, expected TLS 1.3</li>"
        ));
    }

    /// A cell of `measure`'s `metric` with one number (`None`: failed), from the fixture's first.
    fn measured(
        scenario: &str,
        stack: &str,
        process: &str,
        side: Side,
        measure: &str,
        metric: &str,
        value: Option<f64>,
    ) -> CellResult {
        let template = fixture::document().results.remove(0);
        CellResult {
            key: CellKey {
                scenario: scenario.into(),
                client_stack: stack.into(),
                server_stack: stack.into(),
                measure: measure.into(),
                process: process.into(),
                ..template.key.clone()
            },
            side,
            metric: metric.into(),
            unit: if measure == "io" { "1".into() } else { "B".into() },
            better: "lower".into(),
            samples: value.into_iter().collect(),
            median: value,
            ci95: value.map(|v| [v, v]),
            min: value,
            max: value,
            outliers: vec![],
            status: if value.is_some() { Status::Ok } else { Status::Failed },
            reason: value.is_none().then(|| "runner exited with signal 9".into()),
            ..template
        }
    }

    #[test]
    fn memory_against_connections_and_the_io_counts_have_their_own_sections() {
        let mut doc = fixture::document();
        doc.results.clear();
        let (heap, rss) = ("heap_per_connection_bytes", "rss_per_connection_bytes");
        for (n, rustls, openssl) in [(100, 7_800.0, 55_100.0), (1000, 7_761.0, 54_685.0)] {
            let scenario = format!("memory-{n}_1.3_x25519_ecdsa-p256_aes-128-gcm");
            for side in [Side::Client, Side::Server] {
                doc.results.push(measured(
                    &scenario,
                    "rustls-aws-lc-rs",
                    "in-process",
                    side,
                    "heap",
                    heap,
                    Some(rustls),
                ));
                doc.results.push(measured(&scenario, "openssl", "in-process", side, "heap", heap, Some(openssl)));
                // openssl's rss runner died at 1,000: the table says so, the line stops at 100.
                doc.results.push(measured(
                    &scenario,
                    "openssl",
                    "split-process",
                    side,
                    "rss",
                    rss,
                    (n == 100).then_some(56_000.0),
                ));
            }
        }
        let io_profile = "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm";
        for (metric, client, server) in [
            ("read_calls", 6.0, 7.0),
            ("write_calls", 4.0, 3.0),
            ("io_calls", 10.0, 10.0),
            ("records_written", 5.0, 5.0),
            ("bytes_written", 338.0, 1207.0),
        ] {
            doc.results.push(measured(
                io_profile,
                "rustls-aws-lc-rs",
                "in-process",
                Side::Client,
                "io",
                metric,
                Some(client),
            ));
            doc.results.push(measured(
                io_profile,
                "rustls-aws-lc-rs",
                "in-process",
                Side::Server,
                "io",
                metric,
                Some(server),
            ));
        }
        let html = Report::new(&doc, None).unwrap().html();
        let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle} missing"));
        // No bar charts of memory-N (they are drawn against N); the io-profile kind gets its bars.
        assert!(!html.contains("<section class=\"group\" id=\"group-memory-"));
        assert!(
            at("<section id=\"charts\">") < at("<section id=\"memory\">")
                && at("<section id=\"memory\">") < at("<section id=\"io\">")
        );
        assert!(at("<section id=\"io\">") < at("<section id=\"tables\">"));
        // One memory group, per side a heap chart and an rss chart: 4 line charts.
        assert_eq!(html.matches("<section class=\"memory-group\">").count(), 1);
        assert!(html.contains("<h3>memory-N_1.3_x25519_ecdsa-p256_aes-128-gcm</h3>"));
        assert_eq!(html.matches("class=\"chart line-chart\"").count(), 4);
        assert!(html.contains(">client side: heap_per_connection_bytes (lower is better)</text>"), "{html}");
        // heap: two pairs with a line each per side; rss: openssl's one point per side, no line.
        assert_eq!(html.matches("<path class=\"line\"").count(), 4);
        assert!(html.contains("<title>openssl, 1,000 connections: 54,685 B</title>"), "{html}");
        assert!(html.contains("<title>openssl [split], 100 connections: 56,000 B</title>"), "{html}");
        // The table: N as columns under each metric; the failed cell says so.
        assert!(
            html.contains(
                "<th colspan=\"2\">heap_per_connection_bytes (B) at N connections</th>\
                 <th colspan=\"2\">rss_per_connection_bytes (B) at N connections</th>"
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "<tr><th>openssl</th><th>client</th><td class=\"num\">55,100</td><td class=\"num\">54,685</td>\
                 <td class=\"num\">56,000</td><td class=\"num\">failed</td></tr>"
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "<tr><th>rustls-aws-lc-rs</th><th>server</th><td class=\"num\">7,800</td><td class=\"num\">7,761</td>\
                 <td class=\"num\">-</td><td class=\"num\">-</td></tr>"
            ),
            "{html}"
        );
        // The io table: both sides' counts in the columns' order.
        assert!(html.contains(&format!("<h3><code>{io_profile}</code></h3>")));
        let row = ["6", "4", "10", "5", "338", "7", "3", "10", "5", "1,207"]
            .map(|n| format!("<td class=\"num\">{n}</td>"))
            .concat();
        assert!(html.contains(&format!("<tr><th>rustls-aws-lc-rs</th>{row}</tr>")), "{html}");
    }
}
