//! Charts as inline SVG. Hand-written: no fonts to load, nothing to fetch.
//! - [`BarChart`]: horizontal grouped bars, one group per scenario, one bar per stack, a whisker
//!   for the 95% confidence interval.
//! - [`LineChart`]: a value against a count on a log scale (bytes per connection against the
//!   number of connections, a rate per thread against the threads), one line per stack, with
//!   levels of reference across it (one thread's rate).

use std::fmt::Write;

use crate::output::format::format_number;
pub use crate::output::model::escape;

/// In the order stacks appear: Okabe & Ito's eight colour-blind-safe colours, then eight of Paul
/// Tol's that differ from them, so that every stack tlsbench knows (a run that names them all)
/// has a colour of its own. Past sixteen pairs colours repeat, and each bar's label names its pair.
pub const PALETTE: [&str; 16] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#999999", "#000000", // Okabe & Ito
    "#882255", "#117733", "#332288", "#ddcc77", "#aa4499", "#44aa99", "#661100", "#999933", // Tol
];

/// A stack as a chart draws it: its legend entry and its colour, which the page keeps the same
/// in every chart.
#[derive(Clone)]
pub struct Series {
    pub name: String,
    pub colour: &'static str,
}

pub struct BarChart {
    pub title: String,
    /// The axis label: metric and unit.
    pub axis: String,
    /// The legend: one entry per series (stack) that has a bar.
    pub series: Vec<Series>,
    pub groups: Vec<Group>,
}

/// One scenario: its label and a bar per series that has a cell in it.
pub struct Group {
    pub label: String,
    pub bars: Vec<Bar>,
}

pub struct Bar {
    /// Index into the chart's series.
    pub series: usize,
    /// `Ok((median, ci95))`, or `Err(text)` such as `failed` where there is no number.
    pub value: Result<(f64, [f64; 2]), String>,
    /// Shown on hover.
    pub tooltip: String,
}

/// The width of the bars' area; the chart is as wide as its labels need besides.
const PLOT: f64 = 720.0;
const BAR: f64 = 14.0;
const BAR_GAP: f64 = 3.0;
const GROUP_GAP: f64 = 12.0;
const TOP: f64 = 56.0; // title and legend
const AXIS: f64 = 40.0; // tick labels and axis label under the plot
/// Room right of the longest bar for its value, before its pair's name.
const VALUE_ROOM: f64 = 80.0;
/// A generous estimate of the width of one character at 12px in a sans-serif font (digits and
/// lowercase letters), so that the longest scenario label fits left of the bars.
const CHAR_WIDTH: f64 = 7.2;

impl BarChart {
    pub fn render(&self) -> String {
        let longest = self.groups.iter().map(|g| g.label.chars().count()).max().unwrap_or(0);
        let left = (longest as f64 * CHAR_WIDTH + 16.0).max(100.0);
        // Wide enough for the legend too, which is one line from the plot's left edge.
        let legend: f64 = self.series.iter().map(|s| legend_entry_width(&s.name)).sum();
        // Each bar's label is its value and its pair's name: colours alone cannot tell pairs apart.
        let longest_name = self.series.iter().map(|s| s.name.chars().count()).max().unwrap_or(0);
        let value_room = VALUE_ROOM + longest_name as f64 * CHAR_WIDTH;
        let (plot, width) = (PLOT, (left + PLOT + value_room).max(left + legend));
        let top_value = self
            .groups
            .iter()
            .flat_map(|g| &g.bars)
            .filter_map(|b| b.value.as_ref().ok())
            .map(|(m, [_, hi])| m.max(*hi))
            .fold(0.0, f64::max);
        let (step, axis_max) = ticks(top_value);
        let x = |value: f64| left + value / axis_max * plot;
        let plot_height: f64 =
            self.groups.iter().map(|g| g.bars.len() as f64 * (BAR + BAR_GAP) - BAR_GAP + GROUP_GAP).sum::<f64>()
                + GROUP_GAP;
        let height = TOP + plot_height + AXIS;

        let mut svg = String::new();
        let _ = write!(svg, r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" "#);
        let _ = write!(svg, r#"width="{width}" height="{height}" role="img" aria-label="{}">"#, escape(&self.title));
        let _ = write!(svg, r#"<text class="title" x="0" y="18">{}</text>"#, escape(&self.title));
        let mut legend_x = left;
        for series in &self.series {
            svg += &legend_entry(series, legend_x, 30.0);
            legend_x += legend_entry_width(&series.name);
        }
        // Grid lines and tick labels.
        let bottom = TOP + plot_height;
        let parts = (axis_max / step).round() as usize;
        for i in 0..=parts {
            let tick = i as f64 * step;
            let tx = x(tick);
            let _ = write!(svg, r#"<line class="grid" x1="{tx:.1}" y1="{TOP}" x2="{tx:.1}" y2="{bottom}"/>"#);
            let _ = write!(
                svg,
                r#"<text class="tick" x="{tx:.1}" y="{}" text-anchor="middle">{}</text>"#,
                bottom + 14.0,
                format_tick(tick, step)
            );
        }
        let _ = write!(
            svg,
            r#"<text class="axis" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            left + plot / 2.0,
            bottom + 32.0,
            escape(&self.axis)
        );

        let mut y = TOP + GROUP_GAP;
        for group in &self.groups {
            let group_height = group.bars.len() as f64 * (BAR + BAR_GAP) - BAR_GAP;
            let _ = write!(
                svg,
                r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 8.0,
                y + group_height / 2.0 + 4.0,
                escape(&group.label)
            );
            for bar in &group.bars {
                let middle = y + BAR / 2.0;
                match &bar.value {
                    Ok((median, [low, high])) => {
                        let _ = write!(
                            svg,
                            r#"<rect class="bar" x="{left:.1}" y="{y:.1}" width="{:.1}" height="{BAR}" fill="{}">"#,
                            x(*median) - left,
                            self.series[bar.series].colour
                        );
                        let _ = write!(svg, "<title>{}</title></rect>", escape(&bar.tooltip));
                        let (lx, hx) = (x(*low), x(*high));
                        let (cap_top, cap_bottom) = (middle - BAR / 3.0, middle + BAR / 3.0);
                        let _ = write!(svg, r#"<path class="ci" d="M{lx:.1} {middle:.1}H{hx:.1}"#);
                        let _ = write!(svg, "M{lx:.1} {cap_top:.1}V{cap_bottom:.1}");
                        let _ = write!(svg, r#"M{hx:.1} {cap_top:.1}V{cap_bottom:.1}"/>"#);
                        let _ = write!(
                            svg,
                            r#"<text class="value" x="{:.1}" y="{:.1}">{} {}</text>"#,
                            x(median.max(*high)) + 6.0,
                            middle + 4.0,
                            format_number(*median),
                            escape(&self.series[bar.series].name)
                        );
                    }
                    Err(text) => {
                        let _ = write!(
                            svg,
                            r#"<text class="missing" x="{:.1}" y="{:.1}" fill="{}">{} {}<title>{}</title></text>"#,
                            left + 6.0,
                            middle + 4.0,
                            self.series[bar.series].colour,
                            escape(text),
                            escape(&self.series[bar.series].name),
                            escape(&bar.tooltip)
                        );
                    }
                }
                y += BAR + BAR_GAP;
            }
            y += GROUP_GAP - BAR_GAP;
        }
        let _ = write!(svg, r#"<line class="axis-line" x1="{left:.1}" y1="{TOP}" x2="{left:.1}" y2="{bottom}"/>"#);
        svg += "</svg>";
        svg
    }
}

/// One line per series through its points; the x axis is logarithmic, the y axis starts at 0.
pub struct LineChart {
    pub title: String,
    /// The axis labels: what is counted along x, and the metric and unit along y.
    pub x_axis: String,
    pub y_axis: String,
    pub lines: Vec<Line>,
    /// Drawn across the plot under the lines.
    pub references: Vec<Reference>,
}

pub struct Line {
    pub series: Series,
    /// In ascending x.
    pub points: Vec<Point>,
    /// Dashed, and so is its legend entry: a second line of the same series (a stack's
    /// threads with a shared context beside those with their own).
    pub dashed: bool,
}

/// A level across the plot, dotted in its series' colour: a line's reference (one thread's rate
/// per thread, which perfect scaling keeps at every count).
pub struct Reference {
    pub y: f64,
    pub colour: &'static str,
    /// Shown on hover.
    pub tooltip: String,
}

pub struct Point {
    pub x: f64,
    /// `Some((median, ci95))`; `None` where the cell has no number, which breaks the line there
    /// rather than bridging the gap as if the values between were known.
    pub value: Option<(f64, [f64; 2])>,
    /// Shown on hover.
    pub tooltip: String,
}

/// The line chart's size: small enough for two side by side on the page.
const LINE_WIDTH: f64 = 520.0;
const LINE_PLOT_HEIGHT: f64 = 220.0;
/// Room inside the plot left and right of the outermost points.
const LINE_PAD: f64 = 28.0;
const POINT_RADIUS: f64 = 4.0;
/// How far right of its count a dashed line's points are drawn.
const DODGE: f64 = 6.0;

impl LineChart {
    pub fn render(&self) -> String {
        let values: Vec<(f64, [f64; 2])> = self.lines.iter().flat_map(|l| &l.points).filter_map(|p| p.value).collect();
        let references = self.references.iter().map(|r| r.y);
        let (step, axis_max) =
            ticks(values.iter().map(|(m, [_, hi])| m.max(*hi)).chain(references).fold(0.0, f64::max));
        let y_ticks: Vec<f64> = (0..=(axis_max / step).round() as usize).map(|i| i as f64 * step).collect();
        // Left of the plot: the rotated y-axis label and the widest tick label.
        let widest = y_ticks.iter().map(|t| format_tick(*t, step).chars().count()).max().unwrap_or(1);
        let left = 24.0 + widest as f64 * CHAR_WIDTH + 8.0;
        let plot_width = LINE_WIDTH - left - 12.0;

        // The legend, wrapped into rows as wide as the chart.
        let mut legend = String::new();
        let (mut legend_x, mut legend_y) = (left, 30.0);
        for line in &self.lines {
            let entry = legend_entry_width(&line.series.name);
            if legend_x > left && legend_x + entry > LINE_WIDTH {
                (legend_x, legend_y) = (left, legend_y + 18.0);
            }
            legend += &match line.dashed {
                true => dashed_legend_entry(&line.series, legend_x, legend_y),
                false => legend_entry(&line.series, legend_x, legend_y),
            };
            legend_x += entry;
        }
        let top = legend_y + 26.0;
        let bottom = top + LINE_PLOT_HEIGHT;
        let height = bottom + AXIS;

        let mut xs: Vec<f64> = self.lines.iter().flat_map(|l| &l.points).map(|p| p.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let (low, high) = (xs.first().map_or(1.0, |x| x.log10()), xs.last().map_or(1.0, |x| x.log10()));
        let x = |value: f64| match high > low {
            true => left + LINE_PAD + (value.log10() - low) / (high - low) * (plot_width - 2.0 * LINE_PAD),
            false => left + plot_width / 2.0,
        };
        let y = |value: f64| bottom - value / axis_max * LINE_PLOT_HEIGHT;

        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart line-chart" viewBox="0 0 {LINE_WIDTH} {height}" "#
        );
        let _ =
            write!(svg, r#"width="{LINE_WIDTH}" height="{height}" role="img" aria-label="{}">"#, escape(&self.title));
        let _ = write!(svg, r#"<text class="title" x="0" y="18">{}</text>"#, escape(&self.title));
        svg += &legend;
        let right = left + plot_width;
        for tick in &y_ticks {
            let ty = y(*tick);
            let _ = write!(svg, r#"<line class="grid" x1="{left:.1}" y1="{ty:.1}" x2="{right:.1}" y2="{ty:.1}"/>"#);
            let _ = write!(
                svg,
                r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 6.0,
                ty + 4.0,
                format_tick(*tick, step)
            );
        }
        for tick in &xs {
            let tx = x(*tick);
            let _ = write!(svg, r#"<line class="grid" x1="{tx:.1}" y1="{top:.1}" x2="{tx:.1}" y2="{bottom:.1}"/>"#);
            let _ = write!(
                svg,
                r#"<text class="tick" x="{tx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                bottom + 14.0,
                format_tick(*tick, *tick)
            );
        }
        let _ = write!(
            svg,
            r#"<text class="axis" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            left + plot_width / 2.0,
            bottom + 32.0,
            escape(&self.x_axis)
        );
        let middle = (top + bottom) / 2.0;
        let _ = write!(svg, r#"<text class="axis" x="14" y="{middle:.1}" text-anchor="middle" "#);
        let _ = write!(svg, r#"transform="rotate(-90 14 {middle:.1})">{}</text>"#, escape(&self.y_axis));
        let _ = write!(svg, r#"<path class="axis-line" d="M{left:.1} {top:.1}V{bottom:.1}H{right:.1}" fill="none"/>"#);
        for reference in &self.references {
            let (ry, colour) = (y(reference.y), reference.colour);
            let _ = write!(svg, r#"<path class="reference" d="M{left:.1} {ry:.1}H{right:.1}" fill="none" "#);
            let _ = write!(svg, r#"stroke="{colour}" stroke-width="1.5" stroke-dasharray="1 3">"#);
            let _ = write!(svg, "<title>{}</title></path>", escape(&reference.tooltip));
        }

        for line in &self.lines {
            let colour = line.series.colour;
            // A dashed line is its series' second: its points a little right, hollow, so that
            // where the two meet neither hides the other's marker and whisker.
            let x = |value: f64| x(value) + if line.dashed { DODGE } else { 0.0 };
            let fill = match line.dashed {
                true => format!(r##"fill="#fff" stroke="{colour}" stroke-width="2""##),
                false => format!(r#"fill="{colour}""#),
            };
            // The line first, so that the points are drawn over it.
            let mut path = String::new();
            let mut joined = false;
            for point in &line.points {
                match point.value {
                    Some((median, _)) => {
                        let _ = write!(path, "{}{:.1} {:.1}", if joined { "L" } else { "M" }, x(point.x), y(median));
                        joined = true;
                    }
                    None => joined = false,
                }
            }
            if path.contains('L') {
                let dash = if line.dashed { r#" stroke-dasharray="6 4""# } else { "" };
                let _ = write!(
                    svg,
                    r#"<path class="line" d="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>"#
                );
            }
            for point in &line.points {
                let Some((median, [ci_low, ci_high])) = point.value else { continue };
                let (px, py) = (x(point.x), y(median));
                // A whisker only where the interval reaches beyond the point's marker.
                let (wy_low, wy_high) = (y(ci_low), y(ci_high));
                if wy_low - wy_high > 2.0 * POINT_RADIUS {
                    let (cap_left, cap_right) = (px - POINT_RADIUS, px + POINT_RADIUS);
                    let _ = write!(svg, r#"<path class="whisker" d="M{px:.1} {wy_low:.1}V{wy_high:.1}"#);
                    let _ = write!(svg, "M{cap_left:.1} {wy_low:.1}H{cap_right:.1}");
                    let _ = write!(svg, "M{cap_left:.1} {wy_high:.1}H{cap_right:.1}");
                    let _ = write!(svg, r#"" fill="none" stroke="{colour}" stroke-width="1.5"/>"#);
                }
                let _ = write!(svg, r#"<circle class="point" cx="{px:.1}" cy="{py:.1}" r="{POINT_RADIUS}" {fill}>"#);
                let _ = write!(svg, "<title>{}</title></circle>", escape(&point.tooltip));
            }
        }
        svg += "</svg>";
        svg
    }
}

/// A swatch and the name, from (`x`, `y`) at the swatch's top left.
fn legend_entry(series: &Series, x: f64, y: f64) -> String {
    format!(
        r#"<rect class="swatch" x="{x}" y="{y}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text>"#,
        series.colour,
        x + 16.0,
        y + 10.0,
        escape(&series.name)
    )
}

/// A dashed stroke for a swatch, as [`legend_entry`] lays it out.
fn dashed_legend_entry(series: &Series, x: f64, y: f64) -> String {
    let (colour, middle) = (series.colour, y + 6.0);
    format!(
        r#"<path class="swatch" d="M{x} {middle}h12" stroke="{colour}" stroke-width="3" stroke-dasharray="4 2"/>{}"#,
        format_args!(r#"<text x="{}" y="{}">{}</text>"#, x + 16.0, y + 10.0, escape(&series.name))
    )
}

/// A swatch, the name, and a gap before the next entry.
fn legend_entry_width(name: &str) -> f64 {
    16.0 + name.chars().count() as f64 * CHAR_WIDTH + 20.0
}

pub fn colour(series: usize) -> &'static str {
    PALETTE[series % PALETTE.len()]
}

/// A tick step of 1, 2 or 5 times a power of ten that cuts the axis into 4 to 10 parts, and the
/// axis end: the first tick at or above `max`. An empty chart gets an axis of 0 to 1.
fn ticks(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (0.2, 1.0);
    }
    // The largest round step of at most a quarter of the range; the slack absorbs rounding
    // in log10 and powf so that a quarter that is itself round (2, 50) is chosen.
    let rough = max / 4.0 * (1.0 + 1e-9);
    let magnitude = 10f64.powf(rough.log10().floor());
    let step = [5.0, 2.0, 1.0].into_iter().map(|m| m * magnitude).find(|s| *s <= rough).unwrap_or(magnitude);
    (step, (max / step - 1e-9).ceil() * step)
}

/// A tick label with as many decimals as the step has, and `,` grouping from 1,000 up:
/// `0.4`, `50`, `12,000`.
pub fn format_tick(tick: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    match decimals {
        0 if tick >= 1000.0 => format_number(tick.round()),
        _ => format!("{tick:.decimals$}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(names: &[&str]) -> Vec<Series> {
        names.iter().enumerate().map(|(i, name)| Series { name: name.to_string(), colour: colour(i) }).collect()
    }

    fn chart(series: Vec<Series>) -> BarChart {
        let bar =
            |series, value: Result<(f64, [f64; 2]), String>| Bar { series, value, tooltip: format!("bar {series}") };
        BarChart {
            title: "handshake-full: server".into(),
            axis: "handshakes_per_s (1/s)".into(),
            series,
            groups: vec![
                Group {
                    label: "1.3 x25519".into(),
                    bars: vec![bar(0, Ok((800.0, [780.0, 820.0]))), bar(1, Ok((400.0, [390.0, 410.0])))],
                },
                Group {
                    label: "1.2 <rsa>".into(),
                    bars: vec![bar(0, Ok((1000.0, [990.0, 1010.0]))), bar(1, Err("failed".into()))],
                },
            ],
        }
    }

    #[test]
    fn bars_whiskers_and_missing_cells() {
        let svg = chart(series(&["rustls", "openssl"])).render();
        assert!(
            svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 950.4 194""#),
            "{svg}"
        );
        assert!(svg.ends_with("</svg>"));
        assert_eq!(svg.matches(r#"<rect class="bar""#).count(), 3);
        assert_eq!(svg.matches(r#"<path class="ci""#).count(), 3);
        // The label column fits "1.3 x25519" (10 characters) but is at least 100 px wide; the plot
        // is 720 px for an axis of 0 to 1,200 (steps of 200): 0.6 px per unit.
        assert!(
            svg.contains(concat!(
                r##"<rect class="bar" x="100.0" y="68.0" width="480.0" height="14" fill="#0072b2">"##,
                "<title>bar 0</title></rect>"
            )),
            "{svg}"
        );
        assert!(svg.contains(r#"<path class="ci" d="M568.0 75.0H592.0M568.0 70.3V79.7M592.0 70.3V79.7"/>"#), "{svg}");
        // Each bar is labelled with its value and its pair, whose colour may not be told apart.
        assert!(svg.contains(r#"<text class="value" x="598.0" y="79.0">800.0 rustls</text>"#), "{svg}");
        assert!(
            svg.contains(concat!(
                r##"<text class="missing" x="106.0" y="139.0" fill="#e69f00">failed openssl"##,
                "<title>bar 1</title></text>"
            )),
            "{svg}"
        );
        // Labels are escaped, and ticks run from 0 to the axis end.
        assert!(svg.contains(">1.2 &lt;rsa&gt;</text>"));
        assert!(
            svg.contains(r#"text-anchor="middle">0</text>"#) && svg.contains(r#"text-anchor="middle">1,200</text>"#)
        );
    }

    #[test]
    fn every_stack_tlsbench_knows_has_a_colour_no_other_has() {
        let stacks = crate::stacks::KNOWN.len();
        let colours: std::collections::HashSet<&str> = (0..stacks).map(colour).collect();
        assert_eq!(colours.len(), stacks, "{stacks} stacks, {} colours", PALETTE.len());
    }

    #[test]
    fn lines_on_a_log_axis_break_where_a_point_has_no_number() {
        let point = |x: f64, value: Option<(f64, [f64; 2])>| Point { x, value, tooltip: format!("at {x}") };
        let [a, b] = <[Series; 2]>::try_from(series(&["rustls", "openssl"])).ok().unwrap();
        let chart = LineChart {
            title: "client side: heap_per_connection_bytes".into(),
            x_axis: "connections (log scale)".into(),
            y_axis: "B per connection".into(),
            lines: vec![
                Line {
                    series: a,
                    points: vec![
                        point(100.0, Some((200.0, [200.0, 200.0]))),
                        point(1000.0, Some((400.0, [100.0, 700.0]))),
                        point(10000.0, Some((600.0, [600.0, 600.0]))),
                    ],
                    dashed: false,
                },
                Line {
                    series: b,
                    points: vec![
                        point(100.0, Some((500.0, [500.0, 500.0]))),
                        point(1000.0, None),
                        point(10000.0, Some((800.0, [800.0, 800.0]))),
                    ],
                    dashed: false,
                },
            ],
            references: Vec::new(),
        };
        let svg = chart.render();
        assert!(
            svg.starts_with(
                r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart line-chart" viewBox="0 0 520 316""#
            ),
            "{svg}"
        );
        assert!(svg.ends_with("</svg>"));
        // Left of the plot: the y label and "800"; 454.4 px of plot, the outer points 28 px in, so
        // on a log axis 1,000 is halfway. The y axis runs 0 to 800 over 220 px up from y = 276.
        assert!(
            svg.contains(concat!(
                r#"<path class="line" d="M81.6 221.0L280.8 166.0L480.0 111.0" "#,
                r##"fill="none" stroke="#0072b2" stroke-width="2"/>"##
            )),
            "{svg}"
        );
        // openssl has no number at 1,000: two points and no line between them.
        assert_eq!(svg.matches(r#"<path class="line""#).count(), 1);
        assert_eq!(svg.matches(r#"<circle class="point""#).count(), 5);
        assert!(
            svg.contains(
                r##"<circle class="point" cx="480.0" cy="56.0" r="4" fill="#e69f00"><title>at 10000</title></circle>"##
            ),
            "{svg}"
        );
        // A whisker only where the interval is wider than the marker.
        assert_eq!(svg.matches(r#"<path class="whisker""#).count(), 1);
        assert!(svg.contains(r#"d="M280.8 248.5V83.5M276.8 248.5H284.8M276.8 83.5H284.8""#), "{svg}");
        // Ticks at the counts present, grouped; the legend names each line.
        assert!(
            svg.contains(r#"text-anchor="middle">100</text>"#) && svg.contains(r#"text-anchor="middle">10,000</text>"#),
            "{svg}"
        );
        assert!(svg.contains(r#"text-anchor="end">800</text>"#) && svg.contains(">openssl</text>"), "{svg}");
    }

    #[test]
    fn a_line_chart_of_one_count_puts_it_in_the_middle() {
        let line = Line {
            series: series(&["rustls"]).remove(0),
            points: vec![Point { x: 1000.0, value: Some((10.0, [10.0, 10.0])), tooltip: String::new() }],
            dashed: false,
        };
        let chart = LineChart {
            title: "t".into(),
            x_axis: "x".into(),
            y_axis: "y".into(),
            lines: vec![line],
            references: Vec::new(),
        };
        let svg = chart.render();
        assert_eq!(svg.matches(r#"<circle class="point""#).count(), 1);
        assert_eq!(svg.matches(r#"<path class="line""#).count(), 0);
        // Ticks 0 to 10 in steps of 2 ("10" is two characters wide): left 46.4, plot 461.6 px.
        assert!(svg.contains(r#"<circle class="point" cx="277.2""#), "{svg}");
    }

    #[test]
    fn tick_labels_have_the_step_s_decimals() {
        assert_eq!([0.0, 50.0, 300.0, 12000.0].map(|t| format_tick(t, 50.0)), ["0", "50", "300", "12,000"]);
        assert_eq!([0.0, 0.2, 3.0 * 0.2].map(|t| format_tick(t, 0.2)), ["0.0", "0.2", "0.6"]);
        assert_eq!(format_tick(0.05, 0.05), "0.05");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(1010.0), (200.0, 1200.0));
        assert_eq!(ticks(12345.0), (2000.0, 14000.0));
        assert_eq!(ticks(8.0), (2.0, 8.0));
        assert_eq!(ticks(450.0), (100.0, 500.0));
        assert_eq!(ticks(0.0), (0.2, 1.0));
    }
}
