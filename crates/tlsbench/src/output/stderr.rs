//! What goes to stderr (errors, warnings, notes, progress lines), wrapped to [`WIDTH`] columns as
//! the tables are: an error that names every valid stack, or a reason a runner gave, is longer
//! than a terminal's line.

use super::{columns, WIDTH};

/// `text` with each line longer than [`WIDTH`] wrapped at spaces: its continuation lines are
/// indented two more than the line itself. Shorter lines are kept as they are; a word longer
/// than the width (a long path) is not cut.
pub fn wrapped(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.chars().count() <= WIDTH {
            out += line;
            out.push('\n');
            continue;
        }
        // An indented line keeps its indentation, up to half the width.
        let indent = (line.len() - line.trim_start_matches(' ').len()).min(WIDTH / 2);
        let margin = " ".repeat(indent);
        for part in columns::wrap(&line[indent..], WIDTH - indent, 2).lines() {
            out += &margin;
            out += part;
            out.push('\n');
        }
    }
    if text.ends_with('\n') && !text.is_empty() {
        // `lines` drops the last newline's empty line, which the caller asked for.
        out.push('\n');
    }
    out
}

/// Writes `text` and a newline to stderr, wrapped ([`wrapped`]): `eprintln!` for lines that may
/// be long.
pub fn line(text: impl std::fmt::Display) {
    eprint!("{}", wrapped(&text.to_string()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_wraps_at_the_width_with_its_continuations_indented() {
        let words: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
        let text = format!("error: {}", words.join(" "));
        let out = wrapped(&text);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 1, "{out}");
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(lines[0].starts_with("error: word0 "), "{out}");
        assert!(lines[1..].iter().all(|l| l.starts_with("  word")), "{out}");
        // No word lost or cut.
        assert_eq!(out.split_whitespace().collect::<Vec<_>>().join(" "), text);
    }

    #[test]
    fn short_lines_line_breaks_and_indentation_are_kept() {
        let text = "\nstopping  here\n  tlsbench run --stack A";
        assert_eq!(wrapped(text), "\nstopping  here\n  tlsbench run --stack A\n");
        let long = format!("  {}", "ab ".repeat(60));
        let out = wrapped(&long);
        assert!(out.lines().all(|l| l.starts_with("  ab") || l.starts_with("    ab")), "{out}");
        assert!(out.lines().skip(1).all(|l| l.starts_with("    ab")), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
    }
}
