//! A small table model rendered as aligned terminal text (`comfy-table`), Markdown, HTML or
//! CSV (`csv`). Markdown and HTML are written here: comfy-table's Markdown preset does not
//! right-align number columns.
//!
//! Pure: every renderer writes into any [`Write`].

use std::io::{self, Write};

/// How a column's cells line up in text output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Padded on the right (names, codes).
    Left,
    /// Padded on the left (numbers).
    Right,
}

/// Rows of already formatted cells under a header.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Column headers and their alignment.
    pub columns: Vec<(String, Align)>,
    /// Rows; each has one cell per column.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns and no rows.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        Table {
            columns: columns.iter().map(|(h, a)| (h.to_string(), *a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells render empty, extra cells are dropped).
    pub fn push(&mut self, mut row: Vec<String>) {
        row.resize(self.columns.len(), String::new());
        self.rows.push(row);
    }

    /// Columns padded to their widest cell, separated by two spaces, no trailing blanks
    /// (laid out by `comfy-table` without borders; widths are display widths).
    pub fn write_text(&self, w: &mut impl Write) -> io::Result<()> {
        let mut t = comfy_table::Table::new();
        t.load_preset(comfy_table::presets::NOTHING)
            .set_content_arrangement(comfy_table::ContentArrangement::Disabled)
            .set_header(self.columns.iter().map(|c| c.0.as_str()));
        for row in &self.rows {
            t.add_row(row);
        }
        let last = self.columns.len().saturating_sub(1);
        for (i, (column, (_, align))) in t.column_iter_mut().zip(&self.columns).enumerate() {
            column.set_padding((0, if i == last { 0 } else { 2 }));
            column.set_cell_alignment(match align {
                Align::Left => comfy_table::CellAlignment::Left,
                Align::Right => comfy_table::CellAlignment::Right,
            });
        }
        for line in t.lines() {
            writeln!(w, "{}", line.trim_end())?;
        }
        Ok(())
    }

    /// A GitHub-flavoured Markdown table (numbers right-aligned, `|` escaped).
    pub fn write_markdown(&self, w: &mut impl Write) -> io::Result<()> {
        let esc = |s: &str| s.replace('|', "\\|");
        let head: Vec<String> = self.columns.iter().map(|c| esc(&c.0)).collect();
        writeln!(w, "| {} |", head.join(" | "))?;
        let rule: Vec<&str> = self
            .columns
            .iter()
            .map(|c| match c.1 {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        writeln!(w, "|{}|", rule.join("|"))?;
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| esc(c)).collect();
            writeln!(w, "| {} |", cells.join(" | "))?;
        }
        Ok(())
    }

    /// An HTML `<table>` (numbers right-aligned through the `num` class, text escaped).
    pub fn write_html(&self, w: &mut impl Write) -> io::Result<()> {
        let class = |a: Align| match a {
            Align::Left => "",
            Align::Right => " class=\"num\"",
        };
        writeln!(w, "<table>\n<thead><tr>")?;
        for (head, align) in &self.columns {
            write!(w, "<th{}>{}</th>", class(*align), html_escape(head))?;
        }
        writeln!(w, "</tr></thead>\n<tbody>")?;
        for row in &self.rows {
            write!(w, "<tr>")?;
            for (cell, (_, align)) in row.iter().zip(&self.columns) {
                write!(w, "<td{}>{}</td>", class(*align), html_escape(cell))?;
            }
            writeln!(w, "</tr>")?;
        }
        writeln!(w, "</tbody>\n</table>")
    }

    /// RFC 4180 CSV with a header row.
    pub fn write_csv(&self, w: &mut impl Write) -> io::Result<()> {
        let head: Vec<String> = self.columns.iter().map(|c| c.0.clone()).collect();
        write_csv_rows(
            w,
            std::iter::once(head.as_slice()).chain(self.rows.iter().map(Vec::as_slice)),
        )
    }
}

/// Text with `&`, `<`, `>` and `"` escaped for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(ch),
        }
    }
    out
}

/// Writes CSV records (the `csv` crate): a field is quoted only where it holds a comma, a
/// quote or a line break, and each record ends in `\n`.
pub fn write_csv_rows<'a>(
    w: &mut impl Write,
    rows: impl IntoIterator<Item = &'a [String]>,
) -> io::Result<()> {
    let mut out = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(w);
    for row in rows {
        out.write_record(row)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(&[("NAME", Align::Left), ("REQ/S", Align::Right)]);
        t.push(vec!["express".into(), "5405".into()]);
        t.push(vec!["a|b, \"c\"".into(), "12".into()]);
        t
    }

    fn text(f: impl Fn(&Table, &mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&sample(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_pads_left_and_right_aligned_columns() {
        let got = text(|t, w| t.write_text(w));
        assert_eq!(got, "NAME      REQ/S\nexpress    5405\na|b, \"c\"     12\n");
    }

    #[test]
    fn markdown_escapes_pipes_and_right_aligns_numbers() {
        let got = text(|t, w| t.write_markdown(w));
        assert_eq!(
            got,
            "| NAME | REQ/S |\n|---|---:|\n| express | 5405 |\n| a\\|b, \"c\" | 12 |\n"
        );
    }

    #[test]
    fn csv_quotes_commas_and_doubles_quotes() {
        let got = text(|t, w| t.write_csv(w));
        assert_eq!(got, "NAME,REQ/S\nexpress,5405\n\"a|b, \"\"c\"\"\",12\n");
    }
}
