//! The HTML report: one self-contained page (inline CSS and SVG, no scripts, nothing fetched)
//! with the run's environment, a bar chart per scenario group and side, and the tables.

use std::fmt::Write;

use super::svg::{escape, Bar, BarChart, Group};
use super::Report;
use crate::output::first_seen;
use crate::output::table::{few_samples_warning, format_cell, notes, LEGEND};
use crate::report::tables::factor_legend;
use crate::results::{CellResult, RunDocument, Status};

const STYLE: &str = "
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1b1f24; background: #fff; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 20px; margin: 32px 0 8px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 16px; margin: 20px 0 6px; } code { font-family: ui-monospace, monospace; font-size: 13px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
figure { margin: 12px 0 24px; } svg.chart { max-width: 100%; height: auto; }
svg text { font: 12px system-ui, sans-serif; fill: #1b1f24; } svg .title { font-size: 14px; font-weight: 600; }
svg .grid { stroke: #e4e8ec; } svg .axis-line { stroke: #57606a; } svg .ci { stroke: #24292f; stroke-width: 1.5; fill: none; }
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
    html += &environment(doc);
    html += &charts(doc);
    // The heap measure's memory-against-connections chart and the io measure's behaviour table
    // go here, as their own sections, once those measures exist.
    html += &tables(report);
    html += "</main>\n</body>\n</html>\n";
    html
}

fn environment(doc: &RunDocument) -> String {
    let (run, env) = (&doc.run, &doc.run.environment);
    let mut html = String::from("<section id=\"environment\">\n<h2>Environment</h2>\n<table>\n");
    let rows = [
        ("started", run.started.clone()),
        ("samples", format!("{} per cell, each at least {} ms per side after {} ms of warmup", run.samples, run.min_time_ms, run.warmup_ms)),
        ("CPU", format!("{} ({} cores)", env.cpu, env.cores)),
        ("kernel", env.kernel.clone()),
        ("compiler", env.rustc.clone()),
        ("allocator", env.allocator.clone()),
        ("ASLR", env.aslr.clone()),
        ("frequency governor", env.governor.clone()),
        ("tlsbench", run.tlsbench_version.clone()),
        ("command line", run.command_line.join(" ")),
    ];
    for (what, value) in rows {
        let _ = writeln!(html, "<tr><th>{what}</th><td>{}</td></tr>", escape(&value));
    }
    html += "</table>\n<table>\n<tr><th>stack</th><th>library</th></tr>\n";
    for stack in &run.stacks {
        let _ = writeln!(html, "<tr><td><code>{}</code></td><td>{}</td></tr>", escape(&stack.id), escape(&stack.library));
    }
    html += "</table>\n</section>\n";
    html
}

/// Per scenario group (the kind: handshake-full, transfer, ...), one chart per metric and side.
fn charts(doc: &RunDocument) -> String {
    let pairs = first_seen(doc.results.iter().map(CellResult::pair_label));
    let kinds = first_seen(doc.results.iter().map(|c| kind(&c.scenario).to_string()));
    let mut html = String::from("<section id=\"charts\">\n<h2>Charts</h2>\n");
    for kind_name in &kinds {
        let cells: Vec<&CellResult> = doc.results.iter().filter(|c| kind(&c.scenario) == kind_name).collect();
        let _ = writeln!(html, "<section class=\"group\" id=\"group-{0}\">\n<h3>{0}</h3>", escape(kind_name));
        for (metric, side) in first_seen(cells.iter().map(|c| (c.metric.clone(), c.side))) {
            let series: Vec<&&CellResult> = cells.iter().filter(|c| c.metric == metric && c.side == side).collect();
            let (unit, better) = (&series[0].unit, &series[0].better);
            let groups = first_seen(series.iter().map(|c| c.scenario.clone()))
                .into_iter()
                .map(|scenario| Group {
                    label: scenario.strip_prefix(&format!("{kind_name}_")).unwrap_or(&scenario).replace('_', " "),
                    bars: series.iter().filter(|c| c.scenario == scenario).map(|c| bar(c, &pairs)).collect(),
                })
                .collect();
            let chart = BarChart {
                title: format!("{kind_name}, {side} side: {metric}"),
                axis: format!("{metric} ({unit}, {better} is better)"),
                series: &pairs,
                groups,
            };
            let _ = writeln!(html, "<figure>{}</figure>", chart.render());
        }
        html += "</section>\n";
    }
    html += "</section>\n";
    html
}

fn bar(cell: &CellResult, pairs: &[String]) -> Bar {
    let pair = cell.pair_label();
    let series = pairs.iter().position(|p| *p == pair).expect("pairs hold every cell's pair");
    let value = match (cell.status, cell.median, cell.ci95) {
        (Status::Ok, Some(median), Some(ci)) => Ok((median, ci)),
        (Status::Ok, _, _) => Err("no samples".into()),
        (Status::Failed, _, _) => Err("failed".into()),
        (Status::Unsupported, _, _) => Err("n/a".into()),
    };
    let detail = match &cell.reason {
        Some(reason) => format!("{}: {reason}", format_cell(cell)),
        None => format!("{} {}", format_cell(cell), cell.unit),
    };
    Bar { series, value, tooltip: format!("{pair}: {detail}") }
}

fn tables(report: &Report) -> String {
    let mut html = String::from("<section id=\"tables\">\n<h2>Tables</h2>\n");
    for table in &report.tables {
        let _ = writeln!(html, "<h3>{}</h3>\n<table class=\"results\">", escape(&table.title()));
        let header: Vec<String> = table.header().iter().map(|h| format!("<th>{}</th>", escape(h))).collect();
        let _ = writeln!(html, "<tr>{}</tr>", header.concat());
        for row in table.rows() {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, cell)| match table.numeric_columns().contains(&i) {
                    true => format!("<td class=\"num\">{}</td>", escape(cell)),
                    false => format!("<td>{}</td>", escape(cell)),
                })
                .collect();
            let _ = writeln!(html, "<tr>{}</tr>", cells.concat());
        }
        html += "</table>\n";
    }
    let _ = writeln!(html, "<p class=\"legend\">{}</p>", escape(LEGEND));
    if let Some(baseline) = report.baseline {
        let _ = writeln!(html, "<p class=\"legend\">{}</p>", escape(&factor_legend(baseline)));
    }
    let notes: Vec<String> = few_samples_warning(&report.doc.results).into_iter().chain(notes(&report.doc.results)).collect();
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

/// The scenario kind: the name up to its first `_`.
fn kind(scenario: &str) -> &str {
    scenario.split('_').next().unwrap_or(scenario)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::table::fixture;

    #[test]
    fn a_self_contained_page_with_environment_charts_and_tables() {
        let doc = fixture::document();
        let report = Report::new(&doc, Some("rustls-aws-lc-rs")).unwrap();
        let html = report.html();
        assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"));
        assert!(html.ends_with("</main>\n</body>\n</html>\n"));
        // Nothing to fetch or run: the only URL is the SVG namespace, which is a name, not a load.
        assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("href=") && !html.contains("@import"));
        assert_eq!(html.matches("http").count(), html.matches("http://www.w3.org/2000/svg").count());
        // Sections in order.
        let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle} missing"));
        assert!(at("<section id=\"environment\">") < at("<section id=\"charts\">") && at("<section id=\"charts\">") < at("<section id=\"tables\">"));
        assert!(html.contains("<tr><th>CPU</th><td>Test CPU @ 3.0GHz (2 cores)</td></tr>"));
        assert!(html.contains("<tr><td><code>openssl</code></td><td>openssl 1.0</td></tr>"));
        // One group (handshake-full); charts: server and client of handshakes_per_s, server of heap.
        assert_eq!(html.matches("<section class=\"group\"").count(), 1);
        assert_eq!(html.matches("<figure><svg").count(), 3);
        assert!(html.contains(">handshake-full, server side: handshakes_per_s</text>"));
        // Bars for rustls's 4 numbers; openssl's cells are text, with the reason on hover.
        assert_eq!(html.matches("<rect class=\"bar\"").count(), 4);
        assert!(html.contains(">failed<title>openssl: failed: negotiated TLS 1.2, expected TLS 1.3</title></text>"), "{html}");
        assert!(html.contains(">n/a<title>openssl: n/a: openssl: cipher suite chacha20-poly1305 not supported</title></text>"));
        assert!(html.contains("<text class=\"label\" x=\"296.0\" y=\"87.5\" text-anchor=\"end\">1.3 x25519 ecdsa-p256 aes-128-gcm</text>"), "{html}");
        // The tables, with the factor column against the baseline.
        assert!(html.contains("<tr><th>scenario</th><th>side</th><th>rustls-aws-lc-rs</th><th>openssl</th><th>openssl/rustls-aws-lc-rs</th></tr>"));
        assert!(html.contains("<td class=\"num\">12,345 ±1.2%</td><td class=\"num\">failed</td><td class=\"num\">-</td></tr>"));
        assert!(html.contains("<li>openssl: failed on handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm: negotiated TLS 1.2, expected TLS 1.3</li>"));
    }
}
