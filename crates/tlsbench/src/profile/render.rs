//! A profile's tables for the terminal and its flamegraph (inferno's SVG).

use anyhow::{Context, Result};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use super::folded::{Folded, PRUNED_FRAME, PRUNE_BELOW};
use super::{FunctionRow, Profile};
use crate::output::format::{format_count, format_number};

/// Function names longer than this are cut in the terminal (Rust's generic names run to
/// hundreds of characters); the JSON and the HTML report keep them whole.
const NAME_WIDTH: usize = 90;

pub fn terminal(profile: &Profile) -> String {
    let mut text = heading(profile);
    text += "\n\nLibrary shares\n";
    text += &classes(profile).to_string();
    text += &format!("\n\nTop functions by inclusive instructions (with what they call; the process's, the driver's and the adapter's frames left out), per {}\n", profile.unit);
    text += &functions(profile, &profile.by_inclusive, |r| r.inclusive).to_string();
    text += &format!("\n\nTop functions by exclusive instructions (their own), per {}\n", profile.unit);
    text += &functions(profile, &profile.by_exclusive, |r| r.exclusive).to_string();
    text += &format!("\n{}\n", flamegraph_note(profile));
    if let Some(note) = unnamed_note(profile) {
        text += &format!("note: {note}\n");
    }
    text
}

/// A hint when a good part of the instructions is in functions known by their address only.
pub fn unnamed_note(profile: &Profile) -> Option<String> {
    // Below this, a few unnamed local functions are not worth a warning.
    const WORTH_A_NOTE: f64 = 0.05;
    (profile.unnamed as f64 > profile.total as f64 * WORTH_A_NOTE).then(|| {
        format!(
            "{}% of the instructions are in functions named by their address (0x...): their library's symbols are \
             stripped; its debug symbols (e.g. Debian's libssl3-dbgsym) name them",
            percent(profile, profile.unnamed)
        )
    })
}

/// What was profiled and the total, in a sentence.
pub fn heading(profile: &Profile) -> String {
    format!(
        "{stack} ({library}), {side} side of {scenario}, peer {peer}: {total} instructions in the {side}'s library calls over \
         {iterations} iterations, {per} per {unit}",
        stack = profile.stack_label(),
        library = profile.library,
        side = profile.side,
        scenario = profile.scenario,
        peer = profile.peer,
        total = format_number(profile.total as f64),
        iterations = profile.iterations,
        per = count(per_unit(profile, profile.total)),
        unit = profile.unit,
    )
}

pub fn flamegraph_note(profile: &Profile) -> String {
    format!(
        "flamegraph: calls under {}% of the total are not followed; they are the frames `{PRUNED_FRAME}` ({}% of the instructions)",
        PRUNE_BELOW * 100.0,
        percent(profile, profile.flamegraph_pruned)
    )
}

/// A count per unit, whole.
pub fn count(x: f64) -> String {
    format_count(x.round())
}

pub fn per_unit(profile: &Profile, instructions: u64) -> f64 {
    instructions as f64 / profile.units
}

pub fn percent(profile: &Profile, instructions: u64) -> String {
    format!("{:.1}", instructions as f64 * 100.0 / profile.total as f64)
}

fn classes(profile: &Profile) -> Table {
    let mut table = table(["library", "what", &format!("instructions / {}", profile.unit), "share"]);
    for share in &profile.classes {
        let per = count(per_unit(profile, share.instructions));
        table.add_row([
            share.class.label().to_string(),
            share.what.clone(),
            per,
            format!("{}%", percent(profile, share.instructions)),
        ]);
    }
    table.add_row(["total".to_string(), String::new(), count(per_unit(profile, profile.total)), "100.0%".to_string()]);
    align_numbers(&mut table, 2);
    table
}

fn functions(profile: &Profile, rows: &[FunctionRow], instructions: fn(&FunctionRow) -> u64) -> Table {
    let mut table = table(["#", "function", "library", &format!("instructions / {}", profile.unit), "share"]);
    for (i, row) in rows.iter().enumerate() {
        table.add_row([
            (i + 1).to_string(),
            cut(&row.name, NAME_WIDTH),
            row.class.label().to_string(),
            count(per_unit(profile, instructions(row))),
            format!("{}%", percent(profile, instructions(row))),
        ]);
    }
    align_numbers(&mut table, 3);
    table
}

fn table<const N: usize>(header: [&str; N]) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(header);
    table
}

/// Right-aligns the columns from `first` on.
fn align_numbers(table: &mut Table, first: usize) {
    let columns = table.column_count();
    for column in first..columns {
        if let Some(column) = table.column_mut(column) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn cut(name: &str, width: usize) -> String {
    match name.char_indices().nth(width) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    }
}

/// The flamegraph of `folded`: deterministic (the same input gives the same SVG), its counts
/// named instructions.
pub fn flamegraph(title: &str, folded: &Folded) -> Result<String> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = "instructions".to_string();
    options.deterministic = true;
    let lines = folded.lines();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
        .context("drawing the flamegraph")?;
    String::from_utf8(svg).context("the flamegraph is not UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_on_a_character() {
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(cut("ab", 3), "ab");
        assert_eq!(cut("ééééé", 2), "éé…");
    }
}
