//! The scaling of a run with `--threads` (or `--workers`): per scenario and side, each rate per
//! thread against the number of threads, a line per stack (dashed for a shared context), one
//! thread's rate dotted across; then the efficiency tables the terminal prints after the run.

use std::fmt::Write;

use tlsbench_harness::Side;

use super::charts::{detail, number};
use crate::order::first_seen;
use crate::output::format::format_number;
use crate::output::model;
use crate::output::scaling::{self, curves, Curve};
use crate::report::svg::{colour, escape, Line, LineChart, Point, Reference, Series};
use crate::results::{CellResult, RunDocument};

pub(super) fn scaling(doc: &RunDocument, pairs: &[String]) -> String {
    let curves = curves(&doc.results);
    if curves.is_empty() {
        return String::new();
    }
    let mut html = String::from("<section id=\"scaling\">\n<h2>Scaling</h2>\n");
    html += "<p class=\"legend\">The rate per thread against the number of threads side by side (per worker of a \
             server's workers over TCP), both on one axis from 0: a line per stack, dashed where the threads shared \
             one context; dotted across, the stack's rate on one thread, which perfect scaling keeps at every \
             count. Whiskers: the figures' intervals. The tables under the charts give each point's \
             efficiency.</p>\n";
    for scenario in first_seen(curves.iter().map(|c| c.scenario)) {
        let _ = writeln!(html, "<section class=\"scaling-group\">\n<h3>{}</h3>", escape(scenario));
        for side in [Side::Client, Side::Server] {
            let of_side: Vec<&Curve> = curves.iter().filter(|c| c.scenario == scenario && c.side == side).collect();
            let figures: Vec<String> = first_seen(of_side.iter().map(|c| c.metric))
                .into_iter()
                .map(|metric| {
                    let of_metric: Vec<&Curve> = of_side.iter().copied().filter(|c| c.metric == metric).collect();
                    format!("<figure>{}</figure>", chart(&of_metric, pairs))
                })
                .collect();
            if !figures.is_empty() {
                let _ = writeln!(html, "<div class=\"row\">{}</div>", figures.concat());
            }
        }
        html += "</section>\n";
    }
    for table in scaling::tables(doc) {
        html += &model::html(&table, Some("scaling"));
    }
    for line in scaling::legend(scaling::has_sync(doc)) {
        let _ = writeln!(html, "<p class=\"legend\">{}</p>", escape(&line));
    }
    html += "</section>\n";
    html
}

/// One metric's curves of one scenario and side: a line per stack and contexts mode through its
/// one-thread reference and its N-thread points, each stack in its page-wide colour.
fn chart(curves: &[&Curve], pairs: &[String]) -> String {
    let first = curves[0];
    let (cell, unit) = (first.points[0].1, first.unit());
    let one = unit.trim_end_matches('s');
    let mut references: Vec<Reference> = Vec::new();
    let mut drawn: Vec<&CellResult> = Vec::new();
    let mut lines = Vec::new();
    for curve in curves {
        let (label, colour) = (curve.label(), colour_of(curve, pairs));
        let mut points = Vec::new();
        if let Some(reference) = curve.reference {
            let tooltip = format!("{}, 1 {one} (the reference): {}", curve.stack, detail(reference));
            points.push(Point { x: 1.0, value: number(reference).ok(), tooltip });
            // Both contexts modes start from the same one-thread cell: its level is drawn once.
            if let (Ok((median, _)), false) = (number(reference), drawn.iter().any(|d| std::ptr::eq(*d, reference))) {
                drawn.push(reference);
                let tooltip = format!(
                    "{}: the rate of 1 {one}, {} {}, 100% efficiency at any count",
                    curve.stack,
                    format_number(median),
                    reference.unit
                );
                references.push(Reference { y: median, colour, tooltip });
            }
        }
        points.extend(curve.points.iter().map(|(n, c)| Point {
            x: f64::from(*n),
            value: number(c).ok(),
            tooltip: format!("{label}, {n} {unit}: {}", detail(c)),
        }));
        lines.push(Line { series: Series { name: label, colour }, points, dashed: curve.contexts == Some("shared") });
    }
    let chart = LineChart {
        title: format!("{} side: {} ({} is better)", first.side, first.metric, cell.better),
        x_axis: format!("{unit} (log scale)"),
        y_axis: format!("{} per {one}", cell.unit),
        lines,
        references,
    };
    chart.render()
}

/// The stack's page-wide colour: that of its one-thread pair, which the bar charts show too.
fn colour_of(curve: &Curve, pairs: &[String]) -> &'static str {
    let found = pairs.iter().position(|p| *p == curve.stack);
    colour(found.or_else(|| pairs.iter().position(|p| *p == curve.points[0].1.key.pair_label())).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use crate::output::scaling::tests::document;
    use crate::report::svg::{colour, Line, LineChart, Point, Reference, Series};
    use crate::report::Report;

    #[test]
    fn per_scenario_and_side_a_line_per_stack_and_contexts_mode_from_the_one_thread_reference() {
        let doc = document();
        let html = Report::new(&doc, None).unwrap().html();
        let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle} missing"));
        assert!(at("<section id=\"charts\">") < at("<section id=\"scaling\">"));
        assert!(at("<section id=\"scaling\">") < at("<section id=\"tables\">"));
        let section = &html[at("<section id=\"scaling\">")..at("<section id=\"tables\">")];
        assert_eq!(section.matches("<section class=\"scaling-group\">").count(), 1, "{section}");
        // Per side one chart of handshakes_per_s_per_thread: openssl's two modes on the client,
        // rustls's too on the server.
        assert_eq!(section.matches("class=\"chart line-chart\"").count(), 2, "{section}");
        let charts: Vec<&str> = section.split("<svg").skip(1).collect();
        assert!(charts[0].contains("aria-label=\"client side: handshakes_per_s_per_thread (higher is better)\""));
        let legend = |chart: &str| -> Vec<String> {
            chart
                .split("<text x=")
                .skip(1)
                .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].into())
                .collect()
        };
        assert_eq!(legend(charts[0]), ["openssl (own contexts)", "openssl (shared context)"]);
        assert_eq!(
            legend(charts[1]),
            [
                "openssl (own contexts)",
                "openssl (shared context)",
                "rustls-aws-lc-rs (own contexts)",
                "rustls-aws-lc-rs (shared context)"
            ]
        );
        // Each line from its one-thread point; the shared context's dashed, in the stack's colour.
        assert_eq!(charts[1].matches("<path class=\"line\"").count(), 4, "{}", charts[1]);
        assert_eq!(charts[1].matches("stroke-dasharray=\"6 4\"").count(), 2, "{}", charts[1]);
        // rustls's shared 4-thread cell failed: its line stops at 2, the point says why not.
        assert!(charts[1].contains("<title>rustls-aws-lc-rs (shared context), 2 threads: 5,820 ±2.0% (97 ±0%) 1/s"));
        assert_eq!(charts[1].matches("<circle class=\"point\"").count(), 3 + 3 + 3 + 2, "{}", charts[1]);
        // One dotted level per stack: both modes share the one-thread cell.
        assert_eq!(charts[1].matches("<path class=\"reference\"").count(), 2, "{}", charts[1]);
        assert!(charts[1].contains("<title>openssl: the rate of 1 thread, 2,000 1/s, 100% efficiency at any count"));
        assert!(charts[1].contains("<title>openssl, 1 thread (the reference): 2,000 ±2.0% 1/s</title>"));
        // The terminal's table, with the sync counts.
        assert!(section.contains("<th colspan=\"4\">sync per handshake, 1 pair</th>"), "{section}");
        assert!(section.contains("<td class=\"num\">40 ±6%</td>"), "{section}");
        // A run without threads has no such section.
        let plain = crate::results::fixture::document();
        assert!(!Report::new(&plain, None).unwrap().html().contains("<section id=\"scaling\">"));
    }

    #[test]
    fn a_dashed_line_is_drawn_dashed_a_little_right_with_hollow_points_and_the_reference_dotted_across() {
        let point = |x: f64, median: f64| Point { x, value: Some((median, [median, median])), tooltip: String::new() };
        let line = |name: &str, dashed, points| Line {
            series: Series { name: name.into(), colour: colour(0) },
            points,
            dashed,
        };
        let chart = LineChart {
            title: "server side: handshakes_per_s_per_thread (higher is better)".into(),
            x_axis: "threads (log scale)".into(),
            y_axis: "1/s per thread".into(),
            lines: vec![
                line("openssl (own contexts)", false, vec![point(1.0, 800.0), point(2.0, 800.0)]),
                line("openssl (shared context)", true, vec![point(1.0, 800.0), point(2.0, 400.0)]),
            ],
            references: vec![Reference { y: 800.0, colour: colour(0), tooltip: "one thread".into() }],
        };
        let svg = chart.render();
        // The reference: dotted across the plot at 800, under the lines; the axis runs 0 to 800.
        let reference = svg.find("<path class=\"reference\"").expect("a reference level");
        assert!(reference < svg.find("<path class=\"line\"").unwrap(), "{svg}");
        assert!(svg[reference..].starts_with(r#"<path class="reference" d="M53.6 56.0H508.0""#), "{svg}");
        assert!(svg.contains(r#"stroke-dasharray="1 3"><title>one thread</title></path>"#), "{svg}");
        // The own line solid through its filled points, the shared one dashed through hollow
        // points 6 px right of them.
        let (stroke, dashed) = (r##"stroke="#0072b2" stroke-width="2""##, r#"stroke-dasharray="6 4""#);
        assert!(svg.contains(&format!(r#"<path class="line" d="M81.6 56.0L480.0 56.0" fill="none" {stroke}/>"#)));
        assert!(svg.contains(&format!(r#"d="M87.6 56.0L486.0 166.0" fill="none" {stroke} {dashed}/>"#)), "{svg}");
        assert!(svg.contains(r##"<circle class="point" cx="480.0" cy="56.0" r="4" fill="#0072b2">"##), "{svg}");
        assert!(svg.contains(&format!(r##"<circle class="point" cx="486.0" cy="166.0" r="4" fill="#fff" {stroke}>"##)));
        // Its legend entry is a dashed stroke, not a filled swatch.
        assert_eq!(svg.matches("<rect class=\"swatch\"").count(), 1, "{svg}");
        assert!(svg.contains("<path class=\"swatch\" d=\"M"), "{svg}");
    }
}
