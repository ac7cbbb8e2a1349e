//! The profiles (`tlsbench profile`) the report was given: each one's library shares, top
//! functions and flamegraph.

use std::fmt::Write;

use crate::output::model;
use crate::profile::{render, FunctionRow, Profile};
use crate::report::svg::escape;

/// Each profile (`tlsbench profile`): its library shares, top functions and flamegraph. The
/// flamegraph is an image, so that its script (search, zoom) does not run in this page.
pub(super) fn profiles(profiles: &[Profile]) -> String {
    use base64::Engine;
    if profiles.is_empty() {
        return String::new();
    }
    let mut html = String::from("<section id=\"profiles\">\n<h2>Where the instructions go</h2>\n");
    html += "<p class=\"legend\">One side's library calls counted by callgrind (<code>tlsbench profile</code>): each \
             library's share of its instructions, the functions with the most instructions including what they call \
             (inclusive) and of their own (exclusive), and the flamegraph of the calls. Open the SVG file that \
             <code>tlsbench profile</code> wrote to search and zoom in it.</p>\n";
    for profile in profiles {
        let _ = writeln!(
            html,
            "<section class=\"profile\">\n<h3>{}, {} side: <code>{}</code></h3>\n<p>{}</p>",
            escape(&profile.stack_label()),
            profile.side,
            escape(&profile.scenario),
            escape(&render::heading(profile))
        );
        html += &model::html(&render::classes(profile), None);
        for (title, rows, count) in [
            (
                "Top functions by inclusive instructions \
                 (the process's, the driver's and the adapter's frames left out)",
                &profile.by_inclusive,
                (|r: &FunctionRow| r.inclusive) as fn(&FunctionRow) -> u64,
            ),
            ("Top functions by exclusive instructions", &profile.by_exclusive, |r: &FunctionRow| r.exclusive),
        ] {
            let _ = writeln!(html, "<h4>{title}</h4>");
            html += &model::html(&render::functions(profile, rows, count), None);
        }
        let svg = base64::engine::general_purpose::STANDARD.encode(&profile.svg);
        let _ = writeln!(
            html,
            "<figure><img class=\"flamegraph\" alt=\"flamegraph of {}\" src=\"data:image/svg+xml;base64,{svg}\">\
             <figcaption class=\"notes\">{}</figcaption></figure>",
            escape(&render::heading(profile)),
            escape(&render::flamegraph_note(profile))
        );
        if let Some(note) = render::unnamed_note(profile) {
            let _ = writeln!(html, "<p class=\"notes\">{}</p>", escape(&note));
        }
        if let Some(sync) = &profile.sync {
            for table in render::sync_tables(profile, sync) {
                html += &model::html(&table, None);
            }
        }
        html += "</section>\n";
    }
    html += "</section>\n";
    html
}
