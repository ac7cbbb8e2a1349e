//! The terminal back end of the table model (model.rs): plain text that fits a terminal, row
//! labels on the left, then columns under a header of several levels. Adjacent columns that
//! agree on a level's text (and on every level above it) share one heading that spans them, so
//! a scenario is named once above its client and server columns. Columns that do not fit the
//! width go on into a further table under the same row labels; a group (the columns that agree
//! on every level but the last) is cut in two only when it alone does not fit.

use std::ops::Range;

use super::model::{Align, Column, Table};

/// Between the columns of one group, and between the parts of a row label.
const WITHIN_GROUP: &str = "  ";
/// Before each group: the bar shows where a spanning heading ends.
const BETWEEN_GROUPS: &str = " | ";

/// The table's title (wrapped), then its columns in as many tables as it takes, one after
/// another with a blank line between, each line at most `max_width` bytes when a column fits
/// at all, then its notes (wrapped). Bytes bound the columns a line takes (`±` is one column
/// and two bytes), so that byte-counting tools such as mawk's `length` agree that it fits.
pub fn render(table: &Table, max_width: usize) -> String {
    let mut out = table.title.as_deref().map_or_else(String::new, |title| wrap(title, max_width, 2));
    let parts: Vec<String> = render_parts(table, max_width).into_iter().map(|(_, text)| text).collect();
    out += &parts.join("\n");
    for note in &table.notes {
        out += &wrap(note, max_width, 2);
    }
    out
}

/// The tables that hold the columns (without the title and the notes), each with the range of
/// columns it holds. Columns go on into a further table when the line would pass `max_width`;
/// a group (the columns that agree on every level but the last) is cut only when it does not
/// fit on its own.
pub fn render_parts(table: &Table, max_width: usize) -> Vec<(Range<usize>, String)> {
    let labels = Labels::new(table);
    let columns = &table.columns;
    let fits = |range: Range<usize>| labels.bytes + budget(&columns[range]) <= max_width;
    let units = groups(columns).into_iter().flat_map(|group| match fits(group.clone()) {
        true => vec![group],
        false => group.map(|i| i..i + 1).collect(),
    });
    let mut chunks: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    for unit in units {
        if !fits(start..unit.end) && start < unit.start {
            chunks.push(start..unit.start);
            start = unit.start;
        }
    }
    if start < columns.len() || chunks.is_empty() {
        chunks.push(start..columns.len());
    }
    chunks.into_iter().map(|chunk| (chunk.clone(), draw(&labels, &columns[chunk]))).collect()
}

/// The row labels as the terminal shows them: each part padded to its widest, with the parts'
/// headings to go on the header's last line.
struct Labels {
    /// No labels at all: the first column starts the line, without a bar before it.
    none: bool,
    heading: String,
    rows: Vec<String>,
    /// In characters, and the most bytes a label line takes.
    width: usize,
    bytes: usize,
}

impl Labels {
    fn new(table: &Table) -> Labels {
        let parts = table.label_header.len();
        let widths: Vec<usize> = (0..parts)
            .map(|p| table.labels.iter().map(|l| &l[p]).chain([&table.label_header[p]]).map(|t| chars(t)).max())
            .map(|w| w.unwrap_or(0))
            .collect();
        let join = |texts: &[String]| -> String {
            let padded: Vec<String> = texts.iter().zip(&widths).map(|(t, &w)| format!("{t:<w$}")).collect();
            padded.join(WITHIN_GROUP)
        };
        let rows: Vec<String> = table.labels.iter().map(|l| join(l)).collect();
        let heading = join(&table.label_header);
        let width = widths.iter().sum::<usize>() + WITHIN_GROUP.len() * parts.saturating_sub(1);
        let bytes = rows.iter().chain([&heading]).map(|l| width + l.len() - chars(l)).max().unwrap_or(0);
        Labels { none: parts == 0, heading, rows, width, bytes }
    }
}

/// Display width of a text: all tlsbench prints is one column per character.
fn chars(text: &str) -> usize {
    text.chars().count()
}

/// The bytes the widest line of these columns can take after the row labels.
fn budget(columns: &[Column]) -> usize {
    let widths = widths(columns);
    let multibyte = |c: &Column| {
        let texts = c.header.iter().chain(c.cells.iter().map(|cell| &cell.text));
        texts.map(|t| t.len() - chars(t)).max().unwrap_or(0)
    };
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

/// What goes before column `i` on a line after these labels.
fn lead(labels: &Labels, columns: &[Column], i: usize) -> &'static str {
    match labels.none && i == 0 {
        true => "",
        false => separator(columns, i),
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

/// Each column's width in characters: its widest cell or last heading, widened where a heading
/// above spans more text than its columns hold. Levels are settled from the bottom up, so that
/// widening for a heading never narrows what a lower one needed.
fn widths(columns: &[Column]) -> Vec<usize> {
    let mut widths: Vec<usize> = columns
        .iter()
        .map(|c| c.cells.iter().map(|cell| &cell.text).chain(c.header.last()).map(|t| chars(t)).max().unwrap_or(0))
        .collect();
    let levels = columns.first().map_or(0, |c| c.header.len());
    for level in (0..levels.saturating_sub(1)).rev() {
        for span in Table::spans(columns, level) {
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

fn draw(labels: &Labels, columns: &[Column]) -> String {
    let widths = widths(columns);
    let levels = columns.first().map_or(0, |c| c.header.len());
    let label_width = labels.width;
    let mut out = String::new();
    for level in 0..levels {
        let mut line = match level + 1 == levels {
            true => format!("{:<label_width$}", labels.heading),
            false => " ".repeat(label_width),
        };
        for span in Table::spans(columns, level) {
            line += lead(labels, columns, span.start);
            let (text, width) = (&columns[span.start].header[level], span_width(columns, &widths, &span));
            // Headings over one column sit as its cells do; spanning ones start at the left
            // edge of what they span.
            match level + 1 == levels && columns[span.start].align() == Align::Right {
                true => line += &format!("{text:>width$}"),
                false => line += &format!("{text:<width$}"),
            }
        }
        out += line.trim_end();
        out.push('\n');
    }
    for (row, label) in labels.rows.iter().enumerate() {
        let mut line = format!("{label:<label_width$}");
        for (i, (column, width)) in columns.iter().zip(&widths).enumerate() {
            line += lead(labels, columns, i);
            match column.cells.get(row) {
                Some(cell) if cell.align == Align::Left => line += &format!("{:<width$}", cell.text),
                Some(cell) => line += &format!("{:>width$}", cell.text),
                None => line += &" ".repeat(*width),
            }
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
    use crate::output::model::{self, Cell};

    fn column(header: &[&str], cells: &[&str]) -> Column {
        Column {
            header: header.iter().map(|h| h.to_string()).collect(),
            cells: cells.iter().map(|&c| Cell::number(c)).collect(),
        }
    }

    fn table(labels: &[&str], columns: Vec<Column>) -> Table {
        Table {
            label_header: vec![String::new()],
            labels: labels.iter().map(|l| vec![l.to_string()]).collect(),
            columns,
            ..Table::default()
        }
    }

    #[test]
    fn a_heading_spans_the_columns_that_share_it() {
        let columns = vec![
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
        let rendered = render(&table(&["openssl", "rustls-ring"], columns), 120);
        let trimmed: Vec<&str> = expected.lines().skip(1).map(str::trim_end).collect();
        assert_eq!(rendered.lines().collect::<Vec<_>>(), trimmed, "\n{rendered}");
    }

    #[test]
    fn labels_of_several_parts_with_headings_and_text_to_the_left() {
        let mut table = Table::with_header(&["pair", "side"], &["metric", "A"]);
        table.push_row(vec!["openssl".into(), "server".into()], vec![Cell::text("handshakes"), Cell::number("1")]);
        table.push_row(vec!["go".into(), "client".into()], vec![Cell::text("heap"), Cell::number("12,345")]);
        let table = table.with_title("a title");
        let expected = "\
a title
pair     side   | metric           A
openssl  server | handshakes       1
go       client | heap        12,345
";
        assert_eq!(render(&table, 120), expected);
    }

    #[test]
    fn a_table_without_labels_starts_with_its_first_column() {
        let mut table = Table::with_header(&[], &["stack", "library"]);
        table.push_row(Vec::new(), vec![Cell::text("openssl"), Cell::text("OpenSSL 3.0.19")]);
        assert_eq!(render(&table, 120), "stack    library\nopenssl  OpenSSL 3.0.19\n");
    }

    #[test]
    fn columns_past_the_width_go_on_in_another_table_with_whole_groups() {
        let columns: Vec<Column> = (0..12)
            .flat_map(|i| {
                ["client", "server"].map(|side| column(&[&format!("scenario-{i}"), side], &["17,376 ±3.7% *"]))
            })
            .collect();
        let rendered = render(&table(&["stack"], columns), 80);
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
    fn no_line_passes_the_width_when_each_column_fits_with_the_labels() {
        let mut rng = fastrand::Rng::with_seed(7);
        let word = |rng: &mut fastrand::Rng, most: usize| -> String {
            (0..rng.usize(1..=most)).map(|_| if rng.bool() { 'x' } else { '±' }).collect()
        };
        for _ in 0..200 {
            let (levels, rows, count) = (rng.usize(1..=3), rng.usize(1..=4), rng.usize(1..=30));
            let labels: Vec<String> = (0..rows).map(|_| word(&mut rng, 10)).collect();
            let columns: Vec<Column> = (0..count)
                .map(|_| Column {
                    header: (0..levels).map(|_| ["a", "bb", "scenario"][rng.usize(0..3)].to_string()).collect(),
                    cells: (0..rows).map(|_| Cell::number(word(&mut rng, 20))).collect(),
                })
                .collect();
            let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
            let table = table(&labels, columns);
            let parts = render_parts(&table, 80);
            let held: Vec<usize> = parts.iter().flat_map(|(range, _)| range.clone()).collect();
            assert_eq!(held, (0..count).collect::<Vec<_>>(), "every column once, in order");
            let text = render(&table, 80);
            for line in text.lines() {
                assert!(line.len() <= 80, "{} bytes: {line}\n{text}", line.len());
            }
            for cell in table.columns.iter().flat_map(|c| &c.cells) {
                assert!(text.contains(&cell.text), "{}:\n{text}", cell.text);
            }
        }
    }

    #[test]
    fn the_three_back_ends_show_the_same_cells() {
        let table = model::tests::sample();
        let (terminal, md, html) = (render(&table, 120), model::markdown(&table), model::html(&table, Some("results")));
        for column in &table.columns {
            for cell in &column.cells {
                assert!(terminal.contains(&cell.text), "{} in\n{terminal}", cell.text);
                let in_md = cell.text.replace('|', "\\|");
                assert!(md.contains(&in_md), "{} in\n{md}", cell.text);
                assert!(html.contains(&model::escape(&cell.text)), "{} in\n{html}", cell.text);
            }
        }
        for label in table.labels.iter().flatten().chain(&table.label_header) {
            assert!(terminal.contains(label.as_str()) && md.contains(label.as_str()), "{label}");
            assert!(html.contains(&model::escape(label)), "{label}");
        }
        for text in [table.title.as_deref().unwrap(), table.notes[0].as_str()] {
            assert!(terminal.contains(text) && md.contains(text) && html.contains(&model::escape(text)), "{text}");
        }
        // Numbers sit right in all three; a code cell is code where the format has it.
        assert!(md.contains("| --- | ---: | ---: | ---: | --- |"), "{md}");
        assert!(html.contains("<td class=\"num\">1,234 ±1.0%</td>") && html.contains("<code>SSL_do_handshake</code>"));
        assert!(md.contains("`SSL_do_handshake`"), "{md}");
    }

    #[test]
    fn wrap_breaks_at_spaces_and_indents() {
        assert_eq!(wrap("note: aaa bbb ccc", 9, 2), "note: aaa\n  bbb ccc\n");
        assert_eq!(wrap("averyveryverylongword x", 5, 0), "averyveryverylongword\nx\n");
    }
}
