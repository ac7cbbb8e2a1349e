//! Plain-text tables that fit a terminal: row labels on the left, then columns under a header of
//! several levels. Adjacent columns that agree on a level's text (and on every level above it)
//! share one heading that spans them, so a scenario is named once above its client and server
//! columns. Columns that do not fit the width go on into a further table under the same row
//! labels; a group (the columns that agree on every level but the last) is never cut in two.

use std::ops::Range;

/// Between the columns of one group.
const WITHIN_GROUP: &str = "  ";
/// Before each group: the bar shows where a spanning heading ends.
const BETWEEN_GROUPS: &str = " | ";

pub struct Column {
    /// The heading texts from the top level down; every column has as many.
    pub header: Vec<String>,
    /// One text per row label, right-aligned.
    pub cells: Vec<String>,
}

/// The tables, one after another with a blank line between, each line at most `max_width`
/// bytes when a group fits at all. Bytes bound the columns a line takes (`±` is one column and
/// two bytes), so that byte-counting tools such as mawk's `length` agree that it fits.
pub fn render(labels: &[String], columns: &[Column], max_width: usize) -> String {
    let label_width = labels.iter().map(|l| chars(l)).max().unwrap_or(0);
    let mut chunks: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    for group in groups(columns) {
        let fits = label_width + budget(&columns[start..group.end]) <= max_width;
        if !fits && start < group.start {
            chunks.push(start..group.start);
            start = group.start;
        }
    }
    if start < columns.len() {
        chunks.push(start..columns.len());
    }
    let tables: Vec<String> = chunks.into_iter().map(|chunk| table(labels, label_width, &columns[chunk])).collect();
    tables.join("\n")
}

/// Display width of a text: all tlsbench prints is one column per character.
fn chars(text: &str) -> usize {
    text.chars().count()
}

/// The bytes the widest line of these columns can take after the row labels.
fn budget(columns: &[Column]) -> usize {
    let widths = widths(columns);
    let multibyte = |c: &Column| c.header.iter().chain(&c.cells).map(|t| t.len() - chars(t)).max().unwrap_or(0);
    let separators: usize = (0..columns.len()).map(|i| separator(columns, i).len()).sum();
    widths.iter().sum::<usize>() + columns.iter().map(multibyte).sum::<usize>() + separators
}

/// Columns `i - 1` and `i` belong to one group when they agree on every level but the last.
fn same_group(columns: &[Column], i: usize) -> bool {
    fn upper(c: &Column) -> &[String] {
        &c.header[..c.header.len().saturating_sub(1)]
    }
    i > 0 && upper(&columns[i - 1]) == upper(&columns[i])
}

/// What goes before column `i`.
fn separator(columns: &[Column], i: usize) -> &'static str {
    if same_group(columns, i) {
        WITHIN_GROUP
    } else {
        BETWEEN_GROUPS
    }
}

fn groups(columns: &[Column]) -> Vec<Range<usize>> {
    let mut groups: Vec<Range<usize>> = Vec::new();
    for i in 0..columns.len() {
        match groups.last_mut() {
            Some(group) if same_group(columns, i) => group.end = i + 1,
            _ => groups.push(i..i + 1),
        }
    }
    groups
}

/// The runs of adjacent columns that agree on levels `0..=level`; at the last level, each
/// column on its own.
fn spans(columns: &[Column], level: usize) -> Vec<Range<usize>> {
    let last = columns.first().map_or(0, |c| c.header.len().saturating_sub(1));
    let mut spans: Vec<Range<usize>> = Vec::new();
    for i in 0..columns.len() {
        let joins = level < last && i > 0 && columns[i - 1].header[..=level] == columns[i].header[..=level];
        match spans.last_mut() {
            Some(span) if joins => span.end = i + 1,
            _ => spans.push(i..i + 1),
        }
    }
    spans
}

/// Each column's width in characters: its widest cell or last heading, widened where a heading
/// above spans more text than its columns hold. Levels are settled from the bottom up, so that
/// widening for a heading never narrows what a lower one needed.
fn widths(columns: &[Column]) -> Vec<usize> {
    let mut widths: Vec<usize> =
        columns.iter().map(|c| c.cells.iter().chain(c.header.last()).map(|t| chars(t)).max().unwrap_or(0)).collect();
    let levels = columns.first().map_or(0, |c| c.header.len());
    for level in (0..levels.saturating_sub(1)).rev() {
        for span in spans(columns, level) {
            let held = span_width(columns, &widths, &span);
            let heading = chars(&columns[span.start].header[level]);
            if heading > held {
                widths[span.end - 1] += heading - held;
            }
        }
    }
    widths
}

/// The characters from the first column of `span` to the end of its last.
fn span_width(columns: &[Column], widths: &[usize], span: &Range<usize>) -> usize {
    let inner_separators: usize = (span.start + 1..span.end).map(|i| separator(columns, i).len()).sum();
    span.clone().map(|i| widths[i]).sum::<usize>() + inner_separators
}

fn table(labels: &[String], label_width: usize, columns: &[Column]) -> String {
    let widths = widths(columns);
    let levels = columns.first().map_or(0, |c| c.header.len());
    let mut out = String::new();
    for level in 0..levels {
        let mut line = " ".repeat(label_width);
        for span in spans(columns, level) {
            line += separator(columns, span.start);
            let (text, width) = (&columns[span.start].header[level], span_width(columns, &widths, &span));
            // Headings over one column sit over its right-aligned numbers; spanning ones start
            // at the left edge of what they span.
            match level + 1 == levels {
                true => line += &format!("{text:>width$}"),
                false => line += &format!("{text:<width$}"),
            }
        }
        out += line.trim_end();
        out.push('\n');
    }
    for (row, label) in labels.iter().enumerate() {
        let mut line = format!("{label:<label_width$}");
        for (i, (column, width)) in columns.iter().zip(&widths).enumerate() {
            line += separator(columns, i);
            line += &format!("{:>width$}", column.cells.get(row).map_or("", String::as_str));
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word stays
/// whole), the lines after the first indented by `indent` spaces.
pub fn wrap(text: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !line.trim().is_empty() && chars(&line) + 1 + chars(word) > width {
            out += &line;
            out.push('\n');
            line = " ".repeat(indent);
        }
        if !line.trim().is_empty() {
            line.push(' ');
        }
        line += word;
    }
    out += &line;
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(header: &[&str], cells: &[&str]) -> Column {
        Column {
            header: header.iter().map(|h| h.to_string()).collect(),
            cells: cells.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn a_heading_spans_the_columns_that_share_it() {
        let labels = vec!["openssl".to_string(), "rustls-ring".to_string()];
        let columns = [
            column(&["handshake-full", "1.3", "client"], &["1,234 ±1.0%", "9"]),
            column(&["handshake-full", "1.3", "server"], &["5", "6"]),
            column(&["handshake-full", "1.2", "client"], &["7", "8"]),
            column(&["handshake-resume-ticket", "1.3", "client"], &["1", "22"]),
        ];
        let expected = "
            | handshake-full               | handshake-resume-ticket
            | 1.3                 | 1.2    | 1.3
            |      client  server | client |                  client
openssl     | 1,234 ±1.0%       5 |      7 |                       1
rustls-ring |           9       6 |      8 |                      22
";
        let rendered = render(&labels, &columns, 120);
        let trimmed: Vec<&str> = expected.lines().skip(1).map(str::trim_end).collect();
        assert_eq!(rendered.lines().collect::<Vec<_>>(), trimmed, "\n{rendered}");
    }

    #[test]
    fn columns_past_the_width_go_on_in_another_table_with_whole_groups() {
        let labels = vec!["stack".to_string()];
        let columns: Vec<Column> = (0..12)
            .flat_map(|i| {
                ["client", "server"].map(|side| column(&[&format!("scenario-{i}"), side], &["17,376 ±3.7% *"]))
            })
            .collect();
        let rendered = render(&labels, &columns, 80);
        let tables: Vec<&str> = rendered.split("\n\n").collect();
        assert!(tables.len() > 1, "{rendered}");
        for line in rendered.lines() {
            assert!(line.len() <= 80, "{} bytes: {line}", line.len());
        }
        for i in 0..12 {
            let name = format!("scenario-{i}");
            let holding = tables.iter().filter(|t| t.split_whitespace().any(|word| word == name)).count();
            assert_eq!(holding, 1, "scenario-{i} in one table, both sides:\n{rendered}");
        }
        assert_eq!(rendered.matches("server").count(), 12);
    }

    #[test]
    fn wrap_breaks_at_spaces_and_indents() {
        assert_eq!(wrap("note: aaa bbb ccc", 9, 2), "note: aaa\n  bbb ccc\n");
        assert_eq!(wrap("averyveryverylongword x", 5, 0), "averyveryverylongword\nx\n");
    }
}
