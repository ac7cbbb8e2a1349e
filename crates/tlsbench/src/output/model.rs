//! The one table model of tlsbench: row labels (of one or more parts), then columns under a
//! header of one or more levels, each cell a text with its alignment, with an optional title
//! above and notes below. Every table the tool prints or writes is one of these, drawn by the
//! back end its output needs: the terminal (columns.rs, within a width), Markdown and HTML
//! (here). The back ends agree on every cell's text; they differ only in how they draw it.

use std::ops::Range;

/// Where a cell's text sits in its column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub text: String,
    pub align: Align,
    /// A name from code (a function): HTML and Markdown set it in a monospace font.
    pub code: bool,
}

impl Cell {
    /// Words, left-aligned.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell { text: text.into(), align: Align::Left, code: false }
    }

    /// A number (or what stands in for one: `failed`, `-`), right-aligned.
    pub fn number(text: impl Into<String>) -> Cell {
        Cell { text: text.into(), align: Align::Right, code: false }
    }

    /// The same cell, set as code.
    pub fn code(self) -> Cell {
        Cell { code: true, ..self }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The heading texts from the top level down; every column of a table has as many.
    /// Adjacent columns that agree on a level (and on every level above it) share one heading
    /// that spans them.
    pub header: Vec<String>,
    /// One per row.
    pub cells: Vec<Cell>,
}

impl Column {
    /// How the column's cells sit, and so its last heading: as its first cell (right when empty).
    pub fn align(&self) -> Align {
        self.cells.first().map_or(Align::Right, |c| c.align)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// Said above the table.
    pub title: Option<String>,
    /// The headings of the row labels' parts, over them on the header's last level; empty
    /// texts where the labels need none.
    pub label_header: Vec<String>,
    /// Per row, its label: as many parts as `label_header`.
    pub labels: Vec<Vec<String>>,
    pub columns: Vec<Column>,
    /// Said under the table, one paragraph each.
    pub notes: Vec<String>,
}

impl Table {
    /// A table with no rows yet, labelled by parts headed `label_header`, with a column per
    /// entry of `header`, each headed by one level.
    pub fn with_header(label_header: &[&str], header: &[&str]) -> Table {
        Table {
            label_header: label_header.iter().map(|h| h.to_string()).collect(),
            columns: header.iter().map(|h| Column { header: vec![h.to_string()], cells: Vec::new() }).collect(),
            ..Table::default()
        }
    }

    /// Adds a row: its label's parts and a cell per column.
    pub fn push_row(&mut self, label: Vec<String>, cells: Vec<Cell>) {
        assert_eq!(label.len(), self.label_header.len(), "a label part per label heading");
        assert_eq!(cells.len(), self.columns.len(), "a cell per column");
        self.labels.push(label);
        for (column, cell) in self.columns.iter_mut().zip(cells) {
            column.cells.push(cell);
        }
    }

    pub fn with_title(self, title: impl Into<String>) -> Table {
        Table { title: Some(title.into()), ..self }
    }

    /// How many levels the header has (at least one).
    pub fn levels(&self) -> usize {
        self.columns.first().map_or(1, |c| c.header.len().max(1))
    }

    /// The rows as columns and the columns as rows: each column's header becomes a row's label,
    /// each row's label a column's header. The label headings go (they named the old rows).
    pub fn transposed(&self) -> Table {
        let columns = self
            .labels
            .iter()
            .enumerate()
            .map(|(row, label)| Column {
                header: label.clone(),
                cells: self.columns.iter().map(|c| c.cells[row].clone()).collect(),
            })
            .collect();
        Table {
            title: self.title.clone(),
            label_header: vec![String::new(); self.levels()],
            labels: self.columns.iter().map(|c| c.header.clone()).collect(),
            columns,
            notes: self.notes.clone(),
        }
    }

    /// The runs of adjacent columns among `columns` that agree on levels `0..=level`; at the
    /// last level, each column on its own.
    pub fn spans(columns: &[Column], level: usize) -> Vec<Range<usize>> {
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
}

/// The table in GitHub Markdown: the title as a `##` heading, one header row (a column's
/// levels joined by spaces), numbers right-aligned, the notes as paragraphs under it.
pub fn markdown(table: &Table) -> String {
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut md = match &table.title {
        Some(title) => format!("## {title}\n\n"),
        None => String::new(),
    };
    let header = table.label_header.iter().cloned().chain(table.columns.iter().map(|c| {
        let levels: Vec<&str> = c.header.iter().map(String::as_str).filter(|h| !h.is_empty()).collect();
        markdown_text(&levels.join(" "), false)
    }));
    md += &line(header.collect());
    let rule = table.label_header.iter().map(|_| "---").chain(table.columns.iter().map(|c| match c.align() {
        Align::Left => "---",
        Align::Right => "---:",
    }));
    md += &line(rule.map(String::from).collect());
    for (row, label) in table.labels.iter().enumerate() {
        let label = label.iter().map(|part| markdown_text(part, false));
        let cells = table.columns.iter().map(|c| markdown_text(&c.cells[row].text, c.cells[row].code));
        md += &line(label.chain(cells).collect());
    }
    for note in &table.notes {
        md += &format!("\n{note}\n");
    }
    md
}

fn markdown_text(text: &str, code: bool) -> String {
    let text = text.replace('|', "\\|");
    match code && !text.is_empty() {
        true => format!("`{text}`"),
        false => text,
    }
}

/// The table in HTML: the title as an `<h3>`, a header row per level (a heading spanning the
/// columns that share it; the label headings span all levels; none when every heading is
/// empty), each row's label in heading cells, numbers in `class="num"` cells, the notes as
/// paragraphs of `class="notes"`. `class` is the table's.
pub fn html(table: &Table, class: Option<&str>) -> String {
    let mut html = match &table.title {
        Some(title) => format!("<h3>{}</h3>\n", escape(title)),
        None => String::new(),
    };
    match class {
        Some(class) => html += &format!("<table class=\"{class}\">\n"),
        None => html += "<table>\n",
    }
    let levels = table.levels();
    // A table of headings and values (the environment) has no heading row.
    let headed = table.label_header.iter().chain(table.columns.iter().flat_map(|c| &c.header)).any(|h| !h.is_empty());
    for level in (0..levels).filter(|_| headed) {
        html += "<tr>";
        if level == 0 {
            for heading in &table.label_header {
                match levels {
                    1 => html += &format!("<th>{}</th>", escape(heading)),
                    n => html += &format!("<th rowspan=\"{n}\">{}</th>", escape(heading)),
                }
            }
        }
        for span in Table::spans(&table.columns, level) {
            let column = &table.columns[span.start];
            let text = escape(column.header.get(level).map_or("", String::as_str));
            let leaf = level + 1 == levels;
            html += &match (span.len(), leaf && column.align() == Align::Right) {
                (1, true) => format!("<th class=\"num\">{text}</th>"),
                (1, false) => format!("<th>{text}</th>"),
                (n, _) => format!("<th colspan=\"{n}\">{text}</th>"),
            };
        }
        html += "</tr>\n";
    }
    for (row, label) in table.labels.iter().enumerate() {
        html += "<tr>";
        for part in label {
            html += &format!("<th>{}</th>", escape(part));
        }
        for column in &table.columns {
            let cell = &column.cells[row];
            let text = match cell.code {
                true => format!("<code>{}</code>", escape(&cell.text)),
                false => escape(&cell.text),
            };
            html += &match cell.align {
                Align::Right => format!("<td class=\"num\">{text}</td>"),
                Align::Left => format!("<td>{text}</td>"),
            };
        }
        html += "</tr>\n";
    }
    html += "</table>\n";
    for note in &table.notes {
        html += &format!("<p class=\"notes\">{}</p>\n", escape(note));
    }
    html
}

/// Text as HTML text or attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Rows of stacks, a two-level header, texts with characters each back end treats apart.
    pub(crate) fn sample() -> Table {
        let mut table = Table {
            title: Some("handshakes_per_s (1/s, higher is better)".into()),
            label_header: vec!["stack".into()],
            notes: vec!["a <note> & more".into()],
            ..Table::default()
        };
        let header = |top: &str, side: &str| vec![top.to_string(), side.to_string()];
        table.columns = vec![
            Column { header: header("full", "client"), cells: Vec::new() },
            Column { header: header("full", "server"), cells: Vec::new() },
            Column { header: header("resume", "server"), cells: Vec::new() },
            Column { header: header("", "function"), cells: Vec::new() },
        ];
        for (stack, a, b, c, f) in [
            ("openssl", "1,234 ±1.0%", "failed", "n/a", "SSL_do_handshake"),
            ("rustls <ring>", "987.6 ±0.8% *", "12 | 3", "-", "a|b"),
        ] {
            let cells = vec![Cell::number(a), Cell::number(b), Cell::number(c), Cell::text(f).code()];
            table.push_row(vec![stack.into()], cells);
        }
        table
    }

    #[test]
    fn html_spans_a_shared_heading_and_the_labels_span_the_levels() {
        let html = html(&sample(), None);
        assert!(
            html.contains(
                "<tr><th rowspan=\"2\">stack</th><th colspan=\"2\">full</th><th>resume</th><th></th></tr>\n\
                 <tr><th class=\"num\">client</th><th class=\"num\">server</th><th class=\"num\">server</th>\
                 <th>function</th></tr>\n"
            ),
            "{html}"
        );
        assert!(html.contains("<tr><th>rustls &lt;ring&gt;</th>"), "{html}");
        assert!(html.ends_with("</table>\n<p class=\"notes\">a &lt;note&gt; &amp; more</p>\n"), "{html}");
    }

    #[test]
    fn transposing_twice_gives_the_table_back_but_its_label_headings() {
        let table = Table { label_header: vec![String::new()], ..sample() };
        assert_eq!(table.transposed().transposed(), table);
        let across = table.transposed();
        assert_eq!(across.labels[0], ["full", "client"]);
        assert_eq!(across.columns[1].header, ["rustls <ring>"]);
        assert_eq!(across.columns[1].cells[0].text, "987.6 ±0.8% *");
    }
}
