//! Aligned text tables.

/// Renders rows under bold headers, columns padded to the widest cell.
pub fn render(headers: &[&str], rows: &[Vec<String>], color: bool) -> String {
    let cols = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| width(h)).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(cols) {
            widths[i] = widths[i].max(width(cell));
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<String>, out: &mut String| {
        let last = cells.len().saturating_sub(1);
        for (i, cell) in cells.iter().enumerate() {
            out.push_str(cell);
            if i < last {
                let pad = widths[i] - width(cell) + 2;
                out.push_str(&" ".repeat(pad));
            }
        }
        out.push('\n');
    };
    let header_cells: Vec<String> = headers
        .iter()
        .map(|h| {
            if color {
                super::style::paint(true, super::Role::Header, h)
            } else {
                h.to_string()
            }
        })
        .collect();
    // Painting adds invisible bytes; pad by the visible width.
    let mut header = String::new();
    for (i, (cell, h)) in header_cells.iter().zip(headers).enumerate() {
        header.push_str(cell);
        if i + 1 < cols {
            header.push_str(&" ".repeat(widths[i] - width(h) + 2));
        }
    }
    out.push_str(&header);
    out.push('\n');
    for row in rows {
        line(row.clone(), &mut out);
    }
    out
}

fn width(s: &str) -> usize {
    s.chars().count()
}

#[cfg(test)]
mod tests {
    #[test]
    fn aligns_columns() {
        let t = super::render(
            &["Name", "Branch"],
            &[
                vec!["a".into(), "main".into()],
                vec!["longer".into(), "x".into()],
            ],
            false,
        );
        assert_eq!(t, "Name    Branch\na       main\nlonger  x\n");
    }
}
