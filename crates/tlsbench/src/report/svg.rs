//! Horizontal grouped bar charts as inline SVG: one group per scenario, one bar per stack, a
//! whisker for the 95% confidence interval. Hand-written: no fonts to load, nothing to fetch.

use std::fmt::Write;

use crate::output::table::format_number;

/// Colour-blind-safe (Okabe & Ito), in the order stacks appear; repeats after eight stacks.
pub const PALETTE: [&str; 8] = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#999999", "#000000"];

pub struct BarChart<'a> {
    pub title: String,
    /// The axis label: metric and unit.
    pub axis: String,
    /// The legend: one entry per series (stack), coloured by index in [`PALETTE`].
    pub series: &'a [String],
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
/// Room right of the longest bar for its value.
const VALUE_ROOM: f64 = 80.0;
/// A generous estimate of the width of one character at 12px in a sans-serif font (digits and
/// lowercase letters), so that the longest scenario label fits left of the bars.
const CHAR_WIDTH: f64 = 7.2;

impl BarChart<'_> {
    pub fn render(&self) -> String {
        let longest = self.groups.iter().map(|g| g.label.chars().count()).max().unwrap_or(0);
        let left = (longest as f64 * CHAR_WIDTH + 16.0).max(100.0);
        // Wide enough for the legend too, which is one line from the plot's left edge.
        let legend: f64 = self.series.iter().map(|name| legend_entry_width(name)).sum();
        let (plot, width) = (PLOT, (left + PLOT + VALUE_ROOM).max(left + legend));
        let top_value = self.groups.iter().flat_map(|g| &g.bars).filter_map(|b| b.value.as_ref().ok()).map(|(m, [_, hi])| m.max(*hi)).fold(0.0, f64::max);
        let (step, axis_max) = ticks(top_value);
        let x = |value: f64| left + value / axis_max * plot;
        let plot_height: f64 = self.groups.iter().map(|g| g.bars.len() as f64 * (BAR + BAR_GAP) - BAR_GAP + GROUP_GAP).sum::<f64>() + GROUP_GAP;
        let height = TOP + plot_height + AXIS;

        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{}">"#,
            escape(&self.title)
        );
        let _ = write!(svg, r#"<text class="title" x="0" y="18">{}</text>"#, escape(&self.title));
        let mut legend_x = left;
        for (i, name) in self.series.iter().enumerate() {
            let _ = write!(
                svg,
                r#"<rect class="swatch" x="{legend_x}" y="30" width="12" height="12" fill="{}"/><text x="{}" y="40">{}</text>"#,
                colour(i),
                legend_x + 16.0,
                escape(name)
            );
            legend_x += legend_entry_width(name);
        }
        // Grid lines and tick labels.
        let bottom = TOP + plot_height;
        let parts = (axis_max / step).round() as usize;
        for i in 0..=parts {
            let tick = i as f64 * step;
            let tx = x(tick);
            let _ = write!(
                svg,
                r#"<line class="grid" x1="{tx:.1}" y1="{TOP}" x2="{tx:.1}" y2="{bottom}"/><text class="tick" x="{tx:.1}" y="{}" text-anchor="middle">{}</text>"#,
                bottom + 14.0,
                format_tick(tick, step)
            );
        }
        let _ = write!(svg, r#"<text class="axis" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#, left + plot / 2.0, bottom + 32.0, escape(&self.axis));

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
                            r#"<rect class="bar" x="{left:.1}" y="{y:.1}" width="{:.1}" height="{BAR}" fill="{}"><title>{}</title></rect>"#,
                            x(*median) - left,
                            colour(bar.series),
                            escape(&bar.tooltip)
                        );
                        let (lx, hx) = (x(*low), x(*high));
                        let (cap_top, cap_bottom) = (middle - BAR / 3.0, middle + BAR / 3.0);
                        let _ = write!(
                            svg,
                            r#"<path class="ci" d="M{lx:.1} {middle:.1}H{hx:.1}M{lx:.1} {cap_top:.1}V{cap_bottom:.1}M{hx:.1} {cap_top:.1}V{cap_bottom:.1}"/>"#
                        );
                        let _ = write!(svg, r#"<text class="value" x="{:.1}" y="{:.1}">{}</text>"#, x(median.max(*high)) + 6.0, middle + 4.0, format_number(*median));
                    }
                    Err(text) => {
                        let _ = write!(
                            svg,
                            r#"<text class="missing" x="{:.1}" y="{:.1}" fill="{}">{}<title>{}</title></text>"#,
                            left + 6.0,
                            middle + 4.0,
                            colour(bar.series),
                            escape(text),
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
fn format_tick(tick: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    match decimals {
        0 if tick >= 1000.0 => format_number(tick.round()),
        _ => format!("{tick:.decimals$}"),
    }
}

/// Text as XML character data or attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&#39;",
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(series: &[String]) -> BarChart<'_> {
        let bar = |series, value: Result<(f64, [f64; 2]), String>| Bar { series, value, tooltip: format!("bar {series}") };
        BarChart {
            title: "handshake-full: server".into(),
            axis: "handshakes_per_s (1/s)".into(),
            series,
            groups: vec![
                Group { label: "1.3 x25519".into(), bars: vec![bar(0, Ok((800.0, [780.0, 820.0]))), bar(1, Ok((400.0, [390.0, 410.0])))] },
                Group { label: "1.2 <rsa>".into(), bars: vec![bar(0, Ok((1000.0, [990.0, 1010.0]))), bar(1, Err("failed".into()))] },
            ],
        }
    }

    #[test]
    fn bars_whiskers_and_missing_cells() {
        let series = ["rustls".to_string(), "openssl".to_string()];
        let svg = chart(&series).render();
        assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 900 194""#), "{svg}");
        assert!(svg.ends_with("</svg>"));
        assert_eq!(svg.matches(r#"<rect class="bar""#).count(), 3);
        assert_eq!(svg.matches(r#"<path class="ci""#).count(), 3);
        // The label column fits "1.3 x25519" (10 characters) but is at least 100 px wide; the plot
        // is 720 px for an axis of 0 to 1,200 (steps of 200): 0.6 px per unit.
        assert!(svg.contains(r##"<rect class="bar" x="100.0" y="68.0" width="480.0" height="14" fill="#0072b2"><title>bar 0</title></rect>"##), "{svg}");
        assert!(svg.contains(r#"<path class="ci" d="M568.0 75.0H592.0M568.0 70.3V79.7M592.0 70.3V79.7"/>"#), "{svg}");
        assert!(svg.contains(r#"<text class="value" x="598.0" y="79.0">800.0</text>"#), "{svg}");
        assert!(svg.contains(r##"<text class="missing" x="106.0" y="139.0" fill="#e69f00">failed<title>bar 1</title></text>"##), "{svg}");
        // Labels are escaped, and ticks run from 0 to the axis end.
        assert!(svg.contains(">1.2 &lt;rsa&gt;</text>"));
        assert!(svg.contains(r#"text-anchor="middle">0</text>"#) && svg.contains(r#"text-anchor="middle">1,200</text>"#));
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
