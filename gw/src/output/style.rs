//! Colour roles: messages name a role, the theme picks the colour.

use anstyle::{AnsiColor, Style};

use super::Shown;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Plain,
    Header,
    Name,
    Success,
    Warning,
    Error,
    Hint,
    Dim,
}

fn style(role: Role) -> Style {
    match role {
        Role::Plain => Style::new(),
        Role::Header => Style::new().bold(),
        Role::Name => Style::new().bold(),
        Role::Success => AnsiColor::Green.on_default().bold(),
        Role::Warning => AnsiColor::Yellow.on_default().bold(),
        Role::Error => AnsiColor::Red.on_default().bold(),
        Role::Hint => AnsiColor::Cyan.on_default(),
        Role::Dim => Style::new().dimmed(),
    }
}

/// `text` in `role`'s style when `color` is on.
pub fn paint(color: bool, role: Role, text: &Shown) -> Shown {
    if !color || role == Role::Plain {
        return text.clone();
    }
    let s = style(role);
    Shown::painted(s.render(), text, s.render_reset())
}

/// Colours that tell side-by-side processes apart (`gw run`), picked by position.
const PALETTE: [AnsiColor; 6] = [
    AnsiColor::Cyan,
    AnsiColor::Yellow,
    AnsiColor::Green,
    AnsiColor::Magenta,
    AnsiColor::Blue,
    AnsiColor::BrightRed,
];

/// `text` in the `n`th palette colour.
pub fn paint_nth(color: bool, n: usize, text: &Shown) -> Shown {
    if !color {
        return text.clone();
    }
    let s = PALETTE[n % PALETTE.len()].on_default();
    Shown::painted(s.render(), text, s.render_reset())
}
