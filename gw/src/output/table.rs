//! Aligned text tables that fit the terminal.
//!
//! Widths are display widths: colour escapes count for nothing and wide characters for
//! two columns (`console::measure_text_width`). On a terminal a table that is too wide has
//! its widest columns truncated with `…`; when that would cut a column marked whole
//! (doctor's issue text) or leave a column too narrow to read, the rows are shown as a
//! list of `Header: value` lines instead. Off a terminal nothing is cut.

use console::{measure_text_width as width, truncate_str};

use super::Shown;
use super::style::{self, Role};

/// Space between columns.
const GAP: usize = 2;
/// A truncated column keeps at least this many columns (or its header's width).
const MIN_COLUMN: usize = 10;

/// A table to render.
pub struct Table<'a> {
    pub headers: &'a [&'static str],
    pub rows: &'a [Vec<Shown>],
    /// Bold headers.
    pub color: bool,
    /// The terminal's width; `None` renders at natural width.
    pub width: Option<usize>,
    /// Columns that must not be truncated (the list layout is used instead).
    pub whole: &'a [usize],
}

impl Table<'_> {
    pub fn render(&self) -> String {
        let cols = self.headers.len();
        let mut natural: Vec<usize> = self.headers.iter().map(|h| width(h)).collect();
        for row in self.rows {
            for (i, cell) in row.iter().enumerate().take(cols) {
                natural[i] = natural[i].max(width(cell.as_str()));
            }
        }
        let widths = match self.width {
            Some(limit) => match fit(&natural, self.headers, self.whole, limit) {
                Some(w) => w,
                None => return self.list(),
            },
            None => natural,
        };
        let mut out = String::new();
        let header: Vec<Shown> = self
            .headers
            .iter()
            .map(|&h| style::paint(self.color, Role::Header, &h.into()))
            .collect();
        line(&mut out, &header, &widths);
        for row in self.rows {
            line(&mut out, row, &widths);
        }
        out
    }

    /// One block per row: the first cell, then `Header: value` for the others.
    fn list(&self) -> String {
        let label = self.headers.iter().skip(1).map(|h| width(h)).max();
        let label = label.unwrap_or(0) + 1;
        let mut out = String::new();
        for (n, row) in self.rows.iter().enumerate() {
            if n > 0 {
                out.push('\n');
            }
            if let Some(first) = row.first() {
                let head = style::paint(self.color, Role::Header, &self.headers[0].into());
                out.push_str(&format!("{head}: {first}\n"));
            }
            let indent = 2 + label + 1;
            let room = self.width.map(|w| w.saturating_sub(indent).max(20));
            for (h, cell) in self.headers.iter().zip(row).skip(1) {
                let name = format!("{h}:");
                let pad = " ".repeat(label.saturating_sub(width(&name)));
                let name = style::paint(self.color, Role::Dim, &Shown::text(&name));
                for (i, part) in wrap(cell.as_str(), room).iter().enumerate() {
                    if i == 0 {
                        out.push_str(&format!("  {name}{pad} {part}\n"));
                    } else {
                        out.push_str(&format!("{}{part}\n", " ".repeat(indent)));
                    }
                }
            }
        }
        out
    }
}

/// `text` in lines of at most `room` columns, broken at spaces (a word longer than a line
/// stays whole).
fn wrap(text: &str, room: Option<usize>) -> Vec<String> {
    let Some(room) = room else {
        return vec![text.to_string()];
    };
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let line = lines.last_mut().expect("one line");
        if !line.is_empty() && width(line) + 1 + width(word) > room {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// Column widths that fit `limit`, narrowing the widest columns first; `None` when no
/// narrowing fits without cutting a `whole` column or going below the minimum.
fn fit(natural: &[usize], headers: &[&str], whole: &[usize], limit: usize) -> Option<Vec<usize>> {
    let total = |w: &[usize]| w.iter().sum::<usize>() + GAP * w.len().saturating_sub(1);
    let mut widths = natural.to_vec();
    while total(&widths) > limit {
        let excess = total(&widths) - limit;
        let floor = |i: usize| MIN_COLUMN.max(width(headers[i])).min(natural[i]);
        let (i, _) = widths
            .iter()
            .enumerate()
            .filter(|&(i, &w)| !whole.contains(&i) && w > floor(i))
            .max_by_key(|&(i, &w)| (w, std::cmp::Reverse(i)))?;
        // Narrow it to the next widest column's width, or by the excess, whichever is less.
        let next = widths
            .iter()
            .enumerate()
            .filter(|&(j, &w)| j != i && w < widths[i])
            .map(|(_, &w)| w)
            .max()
            .unwrap_or(0);
        let step = excess.min(widths[i] - next.max(floor(i))).max(1);
        widths[i] -= step.min(widths[i] - floor(i));
    }
    Some(widths)
}

/// One line of cells, each padded (or truncated with `…`) to its column's width; the last
/// is not padded, so no line ends in spaces.
fn line(out: &mut String, cells: &[Shown], widths: &[usize]) {
    let last = cells.len().min(widths.len()).saturating_sub(1);
    for (i, (cell, &w)) in cells.iter().zip(widths).enumerate() {
        let cell = cell.as_str();
        let shown = if width(cell) > w {
            truncate_str(cell, w, "…")
        } else {
            std::borrow::Cow::Borrowed(cell)
        };
        out.push_str(&shown);
        if i < last {
            out.push_str(&" ".repeat(w - width(&shown) + GAP));
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[&[&str]]) -> Vec<Vec<Shown>> {
        r.iter()
            .map(|r| r.iter().map(Shown::text).collect())
            .collect()
    }

    fn table<'a>(
        h: &'a [&'static str],
        r: &'a [Vec<Shown>],
        color: bool,
        w: Option<usize>,
    ) -> Table<'a> {
        Table {
            headers: h,
            rows: r,
            color,
            width: w,
            whole: &[],
        }
    }

    #[test]
    fn aligns_columns() {
        let r = rows(&[&["a", "main"], &["longer", "x"]]);
        let t = table(&["Name", "Branch"], &r, false, None).render();
        assert_eq!(t, "Name    Branch\na       main\nlonger  x\n");
    }

    #[test]
    fn colour_and_wide_characters_do_not_shift_columns() {
        let bold = style::paint(true, Role::Name, &"feat".into());
        let r = vec![vec![bold, "main".into()], vec!["日本語".into(), "x".into()]];
        let t = table(&["Name", "Branch"], &r, true, None).render();
        let plain = console::strip_ansi_codes(&t);
        let lines: Vec<&str> = plain.lines().collect();
        let col = |l: &str, needle: &str| width(&l[..l.find(needle).unwrap()]);
        assert_eq!(col(lines[0], "Branch"), 8, "{plain}");
        assert_eq!(col(lines[1], "main"), 8, "{plain}");
        assert_eq!(col(lines[2], "x"), 8, "{plain}");
    }

    #[test]
    fn truncates_the_widest_column_to_fit() {
        let r = rows(&[&["ws", "feature/a-very-long-branch-name-indeed", "api, web"]]);
        let t = table(&["Name", "Branch", "Repos"], &r, false, Some(30)).render();
        for l in t.lines() {
            assert!(width(l) <= 30, "{t}");
        }
        assert!(t.contains('…'), "{t}");
        assert!(t.contains("api, web"), "{t}");
    }

    #[test]
    fn switches_to_a_list_when_a_whole_column_does_not_fit() {
        let r = rows(&[&[
            "ws",
            "a long issue that must be read in full, every word of it",
        ]]);
        let t = Table {
            headers: &["Workspace", "Issue"],
            rows: &r,
            color: false,
            width: Some(40),
            whole: &[1],
        }
        .render();
        assert_eq!(
            t,
            "Workspace: ws\n  Issue: a long issue that must be read\n         in full, every word of it\n"
        );
    }
}
