//! A profile's tables for the terminal and its flamegraph (inferno's SVG).

use super::folded::{Folded, PRUNED_FRAME, PRUNE_BELOW};
use super::{FunctionRow, Profile, SyncProfile};
use crate::output::format::{format_count, format_number};
use crate::output::model::{Cell, Table};
use crate::output::{columns, WIDTH};
use anyhow::{Context, Result};

/// Function names longer than this are cut in the terminal (Rust's generic names run to
/// hundreds of characters), so that a row fits [`WIDTH`]; the JSON and the HTML report keep
/// them whole.
const NAME_WIDTH: usize = 62;

pub fn terminal(profile: &Profile) -> String {
    let mut text = columns::wrap(&heading(profile), WIDTH, 2);
    text += "\n";
    text += &columns::render(&classes(profile).with_title("Library shares"), WIDTH);
    let inclusive = format!(
        "Top functions by inclusive instructions (with what they call; the process's, the driver's and the adapter's \
         frames left out), per {}",
        profile.unit
    );
    let exclusive = format!("Top functions by exclusive instructions (their own), per {}", profile.unit);
    for (title, rows, instructions) in [
        (inclusive, &profile.by_inclusive, (|r: &FunctionRow| r.inclusive) as fn(&FunctionRow) -> u64),
        (exclusive, &profile.by_exclusive, |r: &FunctionRow| r.exclusive),
    ] {
        text += "\n";
        text += &columns::render(&cut_names(functions(profile, rows, instructions)).with_title(title), WIDTH);
    }
    text += &columns::wrap(&flamegraph_note(profile), WIDTH, 2);
    if let Some(note) = unnamed_note(profile) {
        text += &columns::wrap(&format!("note: {note}"), WIDTH, 2);
    }
    if let Some(sync) = &profile.sync {
        for table in sync_tables(profile, sync) {
            text += "\n";
            text += &columns::render(&cut_names(table), WIDTH);
        }
    }
    text
}

/// The side's locks, once checks, atomics and futex calls per unit, the functions that take the
/// most locks and those that execute the most atomics: for the terminal and the report.
pub fn sync_tables(profile: &Profile, sync: &SyncProfile) -> [Table; 3] {
    let per = |what: &str| format!("{what} / {}", profile.unit);
    let mut counts = Table::with_header(&["sync"], &[&per("count")]);
    let kinds = sync.locks().map(|(lock, n)| (format!("{} locks", lock.label()), n));
    let kinds = kinds.into_iter().map(|(label, n)| (label.replace("once locks", "once checks"), n));
    for (label, n) in kinds.chain([("atomic rmw".into(), sync.atomic_rmw), ("futex calls".into(), sync.futex_calls)]) {
        counts.push_row(vec![label], vec![Cell::number(fraction(n as f64 / profile.units))]);
    }
    let counts = counts.with_title(format!(
        "Locks, once checks, atomic read-modify-write instructions (outside the allocator) and futex calls, per {}",
        profile.unit
    ));
    let mut takers = Table::with_header(&["#"], &["function", "lock", &per("locks"), "via"]);
    for (i, row) in sync.takers.iter().enumerate() {
        let cells = vec![
            Cell::text(&row.function).code(),
            Cell::text(row.lock.label()),
            Cell::number(fraction(row.count as f64 / profile.units)),
            Cell::text(row.via.join(" < ")).code(),
        ];
        takers.push_row(vec![(i + 1).to_string()], cells);
    }
    let takers = takers.with_title(format!(
        "Functions that take the most locks: the first named caller above the lock functions and their wrappers \
         (via: the frames between, nearest the lock first), per {}",
        profile.unit
    ));
    let mut atomics = Table::with_header(&["#"], &["function", "object", &per("atomics")]);
    for (i, row) in sync.atomics.iter().enumerate() {
        let cells = vec![
            Cell::text(&row.function).code(),
            Cell::text(&row.object),
            Cell::number(fraction(row.count as f64 / profile.units)),
        ];
        atomics.push_row(vec![(i + 1).to_string()], cells);
    }
    let atomics = atomics.with_title(format!(
        "Functions that execute the most atomic read-modify-write instructions (their own; the allocator's left \
         out), per {}",
        profile.unit
    ));
    [counts, takers, atomics]
}

/// A count per unit with up to two decimals: sync counts are small, and a fraction of a lock per
/// handshake is a lock every few handshakes.
fn fraction(x: f64) -> String {
    let x = (x * 100.0).round() / 100.0;
    match x.fract() == 0.0 {
        true => format_count(x),
        false => format!("{x:.2}"),
    }
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
        "{stack} ({library}), {side} side of {scenario}, peer {peer}: {total} instructions in the {side}'s library \
         calls over {iterations} iterations, {per} per {unit}",
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
        "flamegraph: calls under {}% of the total are not followed; \
         they are the frames `{PRUNED_FRAME}` ({}% of the instructions)",
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

/// Each library's share of the instructions, and the total: for the terminal and the report.
pub fn classes(profile: &Profile) -> Table {
    let per = format!("instructions / {}", profile.unit);
    let mut table = Table::with_header(&["library"], &["what", &per, "share"]);
    let shares = profile.classes.iter().map(|s| (s.class.label(), s.what.as_str(), s.instructions));
    for (label, what, instructions) in shares.chain([("total", "", profile.total)]) {
        let (per, share) = (count(per_unit(profile, instructions)), format!("{}%", percent(profile, instructions)));
        table.push_row(vec![label.to_string()], vec![Cell::text(what), Cell::number(per), Cell::number(share)]);
    }
    table
}

/// The functions of `rows` with their `instructions` (inclusive or exclusive), ranked, their
/// names whole: for the terminal and the report.
pub fn functions(profile: &Profile, rows: &[FunctionRow], instructions: fn(&FunctionRow) -> u64) -> Table {
    let per = format!("instructions / {}", profile.unit);
    let mut table = Table::with_header(&["#"], &["function", "library", &per, "share"]);
    for (i, row) in rows.iter().enumerate() {
        let cells = vec![
            Cell::text(&row.name).code(),
            Cell::text(row.class.label()),
            Cell::number(count(per_unit(profile, instructions(row)))),
            Cell::number(format!("{}%", percent(profile, instructions(row)))),
        ];
        table.push_row(vec![(i + 1).to_string()], cells);
    }
    table
}

/// The functions table with each name cut at [`NAME_WIDTH`] for the terminal.
fn cut_names(mut table: Table) -> Table {
    for cell in &mut table.columns[0].cells {
        cell.text = cut(&cell.text, NAME_WIDTH);
    }
    table
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
    use crate::profile::Class;

    /// A profile of long generic names, as Rust's are, in every library class.
    fn profile() -> Profile {
        let classes = [Class::Tls, Class::Crypto, Class::Allocator, Class::Libc, Class::Harness, Class::Other];
        let name =
            |i: usize| format!("<rustls::conn::ConnectionCommon<T>>::process_new_packets::{i}::{}", "x".repeat(200));
        let rows: Vec<FunctionRow> = (0..12)
            .map(|i| FunctionRow {
                name: name(i),
                object: "runner".into(),
                class: classes[i % classes.len()],
                inclusive: 1_234_567_890 / (i as u64 + 1),
                exclusive: 123_456_789 / (i as u64 + 1),
            })
            .collect();
        Profile {
            scenario: "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".into(),
            stack: "rustls-aws-lc-rs".into(),
            peer: "rustls-aws-lc-rs".into(),
            side: tlsbench_harness::Side::Server,
            library: "rustls 0.23.46".into(),
            iterations: 20,
            unit: "handshake".into(),
            units: 20.0,
            total: 2_000_000_000,
            classes: classes
                .iter()
                .map(|&class| super::super::ClassShare {
                    class,
                    what: "libcrypto.so.3".into(),
                    instructions: 1_000_000,
                })
                .collect(),
            by_inclusive: rows.clone(),
            by_exclusive: rows,
            unnamed: 0,
            flamegraph_pruned: 0,
            svg: String::new(),
            build: None,
            compiler: None,
            sync: None,
        }
    }

    #[test]
    fn the_tables_fit_the_width_with_every_function_ranked_once() {
        let profile = profile();
        let text = terminal(&profile);
        // Every line, the heading and the notes as well as the tables' rows.
        for line in text.lines() {
            assert!(line.len() <= WIDTH, "{} bytes: {line}\n{text}", line.len());
        }
        let rows: Vec<&str> = text.lines().filter(|l| l.contains(" | ")).collect();
        // One table each (none went on into a second): shares with the total, then 12 and 12.
        assert_eq!(rows.len(), (1 + 6 + 1) + 2 * (1 + 12), "{text}");
        assert!(rows.iter().any(|l| l.starts_with("total ") && l.ends_with("100.0%")), "{text}");
        assert!(rows.iter().any(|l| l.starts_with("12 ") && l.contains("process_new_packets::11::")), "{text}");
        // The report's tables keep the names whole.
        let html = crate::output::model::html(&functions(&profile, &profile.by_inclusive, |r| r.inclusive), None);
        assert!(html.contains(&crate::output::model::escape(&profile.by_inclusive[0].name)));
    }

    #[test]
    fn the_sync_tables_give_counts_per_unit_and_the_takers_with_their_paths() {
        use crate::profile::{AtomicRow, TakerRow};
        use crate::sync::Lock;
        let mut profile = profile();
        profile.sync = Some(SyncProfile {
            mutex_locks: 0,
            rwlock_read_locks: 108_383,
            rwlock_write_locks: 2_020,
            once_checks: 10_220,
            atomic_rmw: 242_770,
            futex_calls: 0,
            takers: vec![TakerRow {
                function: "RAND_get0_public".into(),
                lock: Lock::RwlockRead,
                count: 1_001,
                via: vec!["CRYPTO_THREAD_read_lock".into(), "0x000000000022edb0".into()],
            }],
            atomics: vec![AtomicRow {
                function: "EVP_MD_up_ref".into(),
                object: "libcrypto.so.3".into(),
                count: 2_280,
            }],
        });
        let text = terminal(&profile);
        for line in text.lines() {
            assert!(line.len() <= WIDTH, "{} bytes: {line}\n{text}", line.len());
        }
        // 20 handshakes: counts per handshake, a fraction kept where there is one.
        let row =
            |label: &str| text.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("{label}: {text}"));
        assert!(row("rwlock read locks ").ends_with(" 5419.15"), "{text}");
        assert!(row("once checks ").ends_with(" 511"), "{text}");
        assert!(row("atomic rmw ").ends_with(" 12138.50"), "{text}");
        assert!(row("futex calls ").ends_with(" 0"), "{text}");
        let taker = text.lines().find(|l| l.contains("RAND_get0_public")).unwrap();
        assert!(
            taker.contains("RAND_get0_public") && taker.contains("rwlock read") && taker.contains(" 50.05 "),
            "{text}"
        );
        assert!(taker.ends_with("CRYPTO_THREAD_read_lock < 0x000000000022edb0"), "{text}");
        assert!(text.contains("EVP_MD_up_ref") && text.contains(" 114"), "{text}");
    }

    #[test]
    fn long_names_are_cut_on_a_character() {
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(cut("ab", 3), "ab");
        assert_eq!(cut("ééééé", 2), "éé…");
    }
}
