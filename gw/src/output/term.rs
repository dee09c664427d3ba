//! Text shown to a terminal: [`Shown`].
//!
//! Names and messages that did not come from grove — a directory name, a branch from a
//! ref, a remote URL, a record of a hand-edited `state.json`, an argument echoed in an
//! error, git's stderr — may hold bytes a terminal obeys: ESC starts a sequence that moves
//! the cursor, retitles the window or writes the clipboard (OSC 52), CR overwrites a line,
//! a bidirectional override (U+202E) reorders what is read ("Trojan Source"). Such text
//! reaches the screen only escaped, visibly: `\e`, `\r`, `\x07`, `\u{9b}`, `\u{202e}`.
//!
//! [`Shown`] is text fit for a terminal, and the printer's text methods take nothing else:
//! a string literal is grove's own words, anything else is escaped on its way in
//! ([`Shown::text`], [`Shown::block`], [`shown!`](crate::shown), [`Show`]), and the only
//! control sequences a `Shown` may hold are grove's own colours (`Printer::paint`). JSON
//! (the envelope and `-o json|jsonl`) is written exactly as it is, and so are scripts grove
//! generates and the output of a hook or of `gw run`'s processes (the user's own programs).

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

/// Text fit to be written to a terminal: text from outside grove in it is escaped, and its
/// only control sequences are grove's own colours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shown(String);

impl Shown {
    /// `text` (from outside grove) as one line: every control character, newlines
    /// included, and every bidirectional control escaped.
    pub fn text(text: impl Show) -> Shown {
        let mut out = String::new();
        text.show(&mut out);
        Shown(out)
    }

    /// `text` (from outside grove) that may span lines (an error message with git's
    /// output): like [`Shown::text`], but a newline is kept.
    pub fn block(text: &str) -> Shown {
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            let (body, nl) = match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            };
            escape_into(body, &mut out);
            out.push_str(nl);
        }
        Shown(out)
    }

    /// Grove's own text, possibly coloured. Only this module makes one.
    fn trusted(text: String) -> Shown {
        Shown(text)
    }

    /// Appends `more` (escaped unless it is already a `Shown`).
    pub fn push(&mut self, more: impl Show) {
        more.show(&mut self.0);
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Several shown texts joined by grove's `sep`.
    pub fn join(parts: impl IntoIterator<Item = Shown>, sep: &'static str) -> Shown {
        let mut out = String::new();
        for (i, p) in parts.into_iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            out.push_str(&p.0);
        }
        Shown(out)
    }

    /// `text` in colour, for the output layer's painters.
    pub(super) fn painted(
        prefix: impl fmt::Display,
        text: &Shown,
        suffix: impl fmt::Display,
    ) -> Shown {
        Shown::trusted(format!("{prefix}{}{suffix}", text.0))
    }

    /// The result of [`shown!`](crate::shown): grove's format string, its arguments
    /// escaped by [`Escaped`]. Not to be called by hand (tidy: `terminal`).
    #[doc(hidden)]
    pub fn __formatted(args: fmt::Arguments<'_>) -> Shown {
        Shown::trusted(fmt::format(args))
    }
}

/// A string literal is grove's own words.
impl From<&'static str> for Shown {
    fn from(s: &'static str) -> Shown {
        Shown::trusted(s.to_string())
    }
}

impl From<&Shown> for Shown {
    fn from(s: &Shown) -> Shown {
        s.clone()
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Formats grove's words (the literal) around values from anywhere (the arguments), each
/// argument escaped as [`Show`] says: `shown!("Workspace {} created at {}", name,
/// path.display())`. Arguments are positional (`{}`, `{:<8}`), never captured by name
/// (tidy: `terminal` checks), since a captured value would not be escaped.
#[macro_export]
macro_rules! shown {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        $crate::output::Shown::__formatted(::std::format_args!(
            $fmt $(, $crate::output::term::Escaped(&$arg))*
        ))
    };
}

/// A value that can be put on a terminal: text from outside grove is escaped, a
/// [`Shown`] is kept as it is, numbers are plain.
pub trait Show {
    /// Appends this, escaped, to `out`.
    fn show(&self, out: &mut String);
}

impl Show for str {
    fn show(&self, out: &mut String) {
        escape_into(self, out);
    }
}

impl Show for String {
    fn show(&self, out: &mut String) {
        escape_into(self, out);
    }
}

impl Show for Cow<'_, str> {
    fn show(&self, out: &mut String) {
        escape_into(self, out);
    }
}

impl Show for Path {
    fn show(&self, out: &mut String) {
        escape_into(&self.to_string_lossy(), out);
    }
}

impl Show for PathBuf {
    fn show(&self, out: &mut String) {
        self.as_path().show(out);
    }
}

impl Show for std::path::Display<'_> {
    fn show(&self, out: &mut String) {
        escape_into(&self.to_string(), out);
    }
}

impl Show for Shown {
    fn show(&self, out: &mut String) {
        out.push_str(&self.0);
    }
}

impl<T: Show + ?Sized> Show for &T {
    fn show(&self, out: &mut String) {
        (**self).show(out);
    }
}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Show for $t {
            fn show(&self, out: &mut String) {
                let _ = write!(out, "{self}");
            }
        }
    )*};
}
plain!(u8, u16, u32, u64, usize, i32, i64, f64, bool);

/// An argument of [`shown!`]: its [`Show`]n form, padded as the format asks.
#[doc(hidden)]
pub struct Escaped<'a, T: Show + ?Sized>(pub &'a T);

impl<T: Show + ?Sized> fmt::Display for Escaped<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.0.show(&mut s);
        f.pad(&s)
    }
}

/// Whether `c` must not reach a terminal as it is: a C0 or C1 control character or DEL
/// (ESC, BEL, CR, newline, CSI …), a bidirectional control (embeddings, overrides,
/// isolates, marks: "Trojan Source"), or a line or paragraph separator.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every [unsafe](is_unsafe) character written visibly: `\e` for ESC, `\n`,
/// `\r`, `\t`, `\0`, `\x07` for the other ASCII controls, `\u{9b}` (C1) and `\u{202e}`
/// (bidirectional) for the rest. Borrowed when nothing needed escaping.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !needs_escape(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    escape_into(text, &mut out);
    Cow::Owned(out)
}

fn needs_escape(text: &str) -> bool {
    // Printable ASCII is the common case; anything else is looked at as characters.
    !text.bytes().all(|b| (0x20..0x7f).contains(&b)) && text.chars().any(is_unsafe)
}

fn escape_into(text: &str, out: &mut String) {
    if !needs_escape(text) {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        match c {
            '\x1b' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_are_shown_visibly() {
        let cases = [
            ("plain", "plain"),
            ("ev\x1b]52;c;aGk=\x07x", "ev\\e]52;c;aGk=\\x07x"),
            ("a\rb\nc\td\0", "a\\rb\\nc\\td\\0"),
            ("del\x7f", "del\\x7f"),
            ("csi\u{9b}31m", "csi\\u{9b}31m"),
            ("abc\u{202e}fed", "abc\\u{202e}fed"),
            ("iso\u{2066}x\u{2069}", "iso\\u{2066}x\\u{2069}"),
            ("日本語 – ok", "日本語 – ok"),
            ("back\\slash", "back\\slash"),
        ];
        for (raw, shown) in cases {
            assert_eq!(escape(raw), shown, "{raw:?}");
            assert_eq!(Shown::text(raw).as_str(), shown, "{raw:?}");
        }
        assert!(matches!(escape("plain – text"), Cow::Borrowed(_)));
    }

    #[test]
    fn no_unsafe_character_survives_escaping() {
        // Every code point below U+3000 (controls, C1, bidi, separators, combining marks).
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        let shown = escape(&all);
        assert!(!shown.chars().any(is_unsafe), "{shown:?}");
    }

    #[test]
    fn a_block_keeps_its_lines() {
        assert_eq!(
            Shown::block("git failed:\nfatal: \x1b[2Jbad\r\n").as_str(),
            "git failed:\nfatal: \\e[2Jbad\\r\n"
        );
    }

    #[test]
    fn the_macro_escapes_arguments_and_keeps_shown_ones() {
        let name = "x\x1b[31m";
        let coloured = Shown::painted("\x1b[1m", &Shown::text("bold"), "\x1b[0m");
        let line = crate::shown!(
            "Workspace {} at {} ({}) {:<6}|",
            name,
            Path::new("/w/\u{202e}p"),
            coloured,
            3usize
        );
        assert_eq!(
            line.as_str(),
            "Workspace x\\e[31m at /w/\\u{202e}p (\x1b[1mbold\x1b[0m) 3     |"
        );
        let literal: Shown = "grove's own".into();
        assert_eq!(literal.as_str(), "grove's own");
    }
}
