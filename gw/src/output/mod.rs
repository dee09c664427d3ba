//! The output layer: the only code that writes to stdout or stderr.
//!
//! A command hands its report to [`emit`], which renders it as human text (tables on
//! stdout, messages on stderr, colour as [`ColorChoice`] decides), as
//! one of the Go grove's bare data shapes (`-o json|jsonl|tsv|name|path`, `--json`), or as
//! the versioned JSON envelope (`--format json`). In machine mode stdout carries exactly
//! one envelope and nothing else.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod emit;
mod envelope;
mod events;
pub mod pick;
mod progress;
pub mod render;
mod style;
mod table;
pub mod term;

pub use emit::{
    ParseFailure, cancelled, emit, emit_bytes, emit_error, emit_help, emit_parse_failure,
    exit_on_panic, exit_on_signal, stranded_hint,
};
pub use envelope::{Envelope, ErrorBody, SCHEMA_VERSION, envelope_error, envelope_ok, redacted};
pub use events::StderrEvents;
pub use pick::{quiet_ctrl_c, restore_echo};
pub use style::Role;
pub use term::{Show, Shown};

use std::io::{self, IsTerminal, Write};

use crate::action::NextAction;
use crate::error::{Code, Error};
use crate::shown;

/// `--color`: whether human output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` says never or `CLICOLOR_FORCE`/`FORCE_COLOR` always.
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// The choice in force: `--color` when given, else what the environment says
    /// (`NO_COLOR` wins over `CLICOLOR_FORCE`/`FORCE_COLOR`), else `Auto`.
    pub fn resolve(flag: Option<ColorChoice>, no_color: bool, force: bool) -> ColorChoice {
        match flag {
            Some(c) if c != ColorChoice::Auto => c,
            _ if no_color => ColorChoice::Never,
            _ if force => ColorChoice::Always,
            _ => ColorChoice::Auto,
        }
    }

    /// Whether a stream that is (or is not) a terminal gets colour.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Auto => is_terminal,
            ColorChoice::Always => true,
            ColorChoice::Never => false,
        }
    }
}

/// Human text or the JSON envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Text,
    Json,
}

/// The Go grove's `-o/--output` data formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFormat {
    Table,
    Json,
    Jsonl,
    Tsv,
    Name,
    Path,
}

/// A command's result, serialised exactly once: straight into the envelope on stdout, or
/// (for an error envelope that carries a partial result) into a raw JSON value. It borrows
/// the report, so a large result (a thousand workspaces) is never copied or buffered whole.
pub struct Json<'a>(Box<dyn ToJson + 'a>);

/// Where results are serialised: a concrete buffer type, so that serde_json's many small
/// writes are inlined copies rather than calls through `dyn Write`.
type Out<'w> = io::BufWriter<&'w mut dyn Write>;

/// `Serialize` made object-safe for the one serializer used here.
trait ToJson {
    fn write(&self, w: &mut Out<'_>) -> serde_json::Result<()>;
    fn raw(&self) -> serde_json::Result<Box<serde_json::value::RawValue>>;
    /// Nothing in it can fail to serialise, so it may go to stdout as it is written.
    fn infallible(&self) -> bool {
        false
    }
}

impl<T: serde::Serialize> ToJson for T {
    fn write(&self, w: &mut Out<'_>) -> serde_json::Result<()> {
        serde_json::to_writer(w, self)
    }
    fn raw(&self) -> serde_json::Result<Box<serde_json::value::RawValue>> {
        serde_json::value::to_raw_value(self)
    }
}

/// A result written by hand (see [`Json::written`]).
struct Written<F>(F);

impl<F: Fn(&mut dyn Write) -> io::Result<()>> ToJson for Written<F> {
    fn write(&self, w: &mut Out<'_>) -> serde_json::Result<()> {
        (self.0)(w).map_err(serde_json::Error::io)
    }
    fn raw(&self) -> serde_json::Result<Box<serde_json::value::RawValue>> {
        let mut buf = Vec::new();
        (self.0)(&mut buf).map_err(serde_json::Error::io)?;
        let text = String::from_utf8(buf)
            .map_err(|e| serde_json::Error::io(io::Error::new(io::ErrorKind::InvalidData, e)))?;
        serde_json::value::RawValue::from_string(text)
    }
    fn infallible(&self) -> bool {
        true
    }
}

impl<'a> Json<'a> {
    pub fn of<T: serde::Serialize + 'a>(t: T) -> Json<'a> {
        Json(Box::new(t))
    }

    /// A result that `write` puts out as JSON text itself, for the one result large enough
    /// for serde's per-token overhead to matter (`gw list`). It must write exactly what
    /// serialising the result's type would; a test says so. It must not fail but for the
    /// writer's own errors (it writes text read from JSON): it goes to stdout as it is
    /// written, not whole into a buffer first.
    pub fn written(write: impl Fn(&mut dyn Write) -> io::Result<()> + 'a) -> Json<'a> {
        Json(Box::new(Written(write)))
    }

    pub fn into_raw(self) -> serde_json::Result<Box<serde_json::value::RawValue>> {
        self.0.raw()
    }

    fn write(&self, w: &mut Out<'_>) -> io::Result<()> {
        self.0.write(w).map_err(io::Error::from)
    }

    fn infallible(&self) -> bool {
        self.0.infallible()
    }
}

/// Something a command produced that can be shown.
pub trait Render {
    /// The envelope's `result` object.
    fn result(&self) -> Json<'_>;
    /// Human output: data on stdout, messages on stderr.
    fn text(&self, p: &mut Printer) -> io::Result<()>;
    /// The Go grove's bare shape for `format`; `None` when this command has none.
    fn legacy(&self, _format: DataFormat, _p: &mut Printer) -> Option<io::Result<()>> {
        None
    }
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        Vec::new()
    }
    /// A partial failure: some of the work failed. The envelope then has `ok: false`, this
    /// error, and the `result` showing what happened to each part.
    fn failure(&self) -> Option<&Error> {
        None
    }
}

/// Where output goes and how it looks.
pub struct Printer {
    pub mode: Mode,
    /// stdout is a terminal (a person reads it), not a pipe or a file.
    pub out_is_terminal: bool,
    /// stderr is a terminal.
    pub err_is_terminal: bool,
    /// The width tables fit on stdout: the terminal's, when stdout is one.
    width: Option<usize>,
    /// `COLUMNS`, for help written into a pipe.
    columns: Option<usize>,
    color_out: bool,
    color_err: bool,
    /// stdout and stderr as they are: written only by this file's methods (tidy:
    /// `terminal`), text only as [`Shown`].
    raw_out: Box<dyn Write>,
    raw_err: Box<dyn Write>,
}

/// Where stdout's bytes go. An envelope (machine mode, not a terminal) is written whole, or
/// through a buffer of its own (a listing's), so it goes to the descriptor as it is given:
/// std's line-buffered stdout searched every 64 KiB block a `gw list` wrote for its last
/// newline, a million instructions at 1,000 workspaces (callgrind). Text keeps the line
/// buffer, which writes each line whole.
fn stdout_writer(mode: Mode, is_terminal: bool) -> Box<dyn Write> {
    use std::os::fd::AsFd;
    if mode == Mode::Json
        && !is_terminal
        && let Ok(fd) = io::stdout().as_fd().try_clone_to_owned()
    {
        return Box::new(std::fs::File::from(fd));
    }
    Box::new(io::stdout())
}

impl Printer {
    /// A printer on the process's stdout and stderr. `columns` (`COLUMNS`) is the width
    /// when the terminal's own cannot be read.
    pub fn stdio(mode: Mode, color: ColorChoice, columns: Option<usize>) -> Printer {
        let text = mode == Mode::Text;
        let out_is_terminal = io::stdout().is_terminal();
        let err_is_terminal = io::stderr().is_terminal();
        let width = out_is_terminal.then(|| {
            console::Term::stdout()
                .size_checked()
                .map(|(_, cols)| usize::from(cols))
                .or(columns)
                .unwrap_or(80)
        });
        Printer {
            mode,
            out_is_terminal,
            err_is_terminal,
            width,
            columns,
            color_out: text && color.enabled(out_is_terminal),
            color_err: text && color.enabled(err_is_terminal),
            raw_out: stdout_writer(mode, out_is_terminal),
            raw_err: Box::new(io::stderr()),
        }
    }

    /// The width help is laid out for: the terminal's when stdout is one, else `COLUMNS`,
    /// else 100 (as clap decides).
    pub fn help_width(&self) -> usize {
        self.width.or(self.columns).unwrap_or(100)
    }

    /// Whether messages on stderr are coloured.
    pub fn color_err(&self) -> bool {
        self.color_err
    }

    /// A printer into buffers, for tests.
    pub fn capture(mode: Mode, out: Box<dyn Write>, err: Box<dyn Write>) -> Printer {
        Printer {
            mode,
            out_is_terminal: false,
            err_is_terminal: false,
            width: None,
            columns: None,
            color_out: false,
            color_err: false,
            raw_out: out,
            raw_err: err,
        }
    }

    /// Where JSON and other exact bytes go: the output layer's own writers only (tidy:
    /// `terminal`).
    fn raw_out(&mut self) -> &mut dyn Write {
        &mut *self.raw_out
    }

    /// Writes a line of data to stdout.
    pub fn line(&mut self, s: impl Into<Shown>) -> io::Result<()> {
        let s = s.into();
        writeln!(self.raw_out, "{}", s.as_str())
    }

    /// Writes text to stdout as it is (no newline added).
    pub fn print(&mut self, s: impl Into<Shown>) -> io::Result<()> {
        self.raw_out.write_all(s.into().as_str().as_bytes())
    }

    /// Styles `text` for stdout.
    pub fn paint(&self, role: Role, text: impl Show) -> Shown {
        style::paint(self.color_out, role, &Shown::text(text))
    }

    /// Styles `text` for stderr.
    pub fn paint_err(&self, role: Role, text: impl Show) -> Shown {
        style::paint(self.color_err, role, &Shown::text(text))
    }

    /// A message on stderr (`✓ created …`).
    pub fn message(&mut self, role: Role, text: impl Into<Shown>) -> io::Result<()> {
        let text = text.into();
        let mark = |m: &'static str| style::paint(self.color_err, role, &Shown::from(m));
        let line = match role {
            Role::Success => shown!("{} {}", mark("✓"), text),
            Role::Warning => shown!("{} {}", mark("warning:"), text),
            Role::Error => shown!("{} {}", mark("error:"), text),
            Role::Hint => shown!("{} {}", mark("hint:"), text),
            _ => text,
        };
        writeln!(self.raw_err, "{}", line.as_str())
    }

    /// A program grove generated (a completion script, the shell integration, clap's help
    /// text), written to stdout byte for byte: it is meant for a shell, not escaped.
    pub fn script(&mut self, s: &str) -> io::Result<()> {
        self.raw_out.write_all(s.as_bytes())
    }

    /// A JSON value on stdout, pretty-printed: a legacy data format (`-o json`), exact.
    pub fn json_pretty(&mut self, v: &impl serde::Serialize) -> io::Result<()> {
        let mut s = serde_json::to_string_pretty(v).map_err(io::Error::from)?;
        s.push('\n');
        self.raw_out.write_all(s.as_bytes())
    }

    /// A JSON value on one line of stdout (`-o jsonl`), exact.
    pub fn json_line(&mut self, v: &impl serde::Serialize) -> io::Result<()> {
        let mut s = serde_json::to_string(v).map_err(io::Error::from)?;
        s.push('\n');
        self.raw_out.write_all(s.as_bytes())
    }

    /// An aligned table on stdout, fitted to the terminal.
    pub fn table(&mut self, headers: &[&'static str], rows: &[Vec<Shown>]) -> io::Result<()> {
        self.table_keeping(headers, rows, &[])
    }

    /// Like [`Printer::table`], but the columns `whole` are never truncated: when the table
    /// does not fit without that, each row is shown as a list of `Header: value` lines.
    pub fn table_keeping(
        &mut self,
        headers: &[&'static str],
        rows: &[Vec<Shown>],
        whole: &[usize],
    ) -> io::Result<()> {
        let text = table::Table {
            headers,
            rows,
            color: self.color_out,
            width: self.width,
            whole,
        }
        .render();
        self.raw_out.write_all(text.as_bytes())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.raw_out.flush()?;
        self.raw_err.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::emit::{render_ok, unshowable};
    use super::*;

    #[test]
    fn a_result_that_cannot_be_json_is_an_error_not_half_a_document() {
        use std::os::unix::ffi::OsStrExt;
        let bad = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/\xff"));
        let result = serde_json::json!({"name": "x"});
        assert!(render_ok(&Json::of(&result), &[], &[]).is_ok());
        let e = render_ok(&Json::of(&bad), &[], &[]).unwrap_err();
        assert!(unshowable(&e).message.contains("UTF-8"), "{e}");
    }

    /// A buffer the printer writes into and the test reads back.
    #[derive(Clone, Default)]
    struct Buf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Buf {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
        }
    }

    /// A report that only warns.
    struct Warns(Vec<String>);

    impl Render for Warns {
        fn result(&self) -> Json<'_> {
            Json::of(serde_json::json!({}))
        }
        fn text(&self, _: &mut Printer) -> io::Result<()> {
            Ok(())
        }
        fn warnings(&self) -> Vec<String> {
            self.0.clone()
        }
    }

    /// The secrets corpus in an error's message, fix and details, and in a warning, in
    /// both modes: none is shown.
    #[test]
    fn no_secret_of_the_corpus_is_shown_in_an_error_or_warning() {
        for s in e2e::secrets::shapes() {
            let t = &s.text;
            let e = Error::new(
                Code::GitFailed,
                format!("`git clone -- {t} /r/x` failed: {t}"),
            )
            .with_fix(format!("Check that {t} is reachable"))
            .with_details(serde_json::json!({"url": t, "stderr": [format!("fatal: {t}")]}));
            for mode in [Mode::Text, Mode::Json] {
                let (out, err) = (Buf::default(), Buf::default());
                let mut p = Printer::capture(mode, Box::new(out.clone()), Box::new(err.clone()));
                emit_error(&mut p, &e);
                let mut p = Printer::capture(mode, Box::new(out.clone()), Box::new(err.clone()));
                emit(&mut p, &Warns(vec![format!("cloning {t} again")]), None);
                let shown = format!("{}{}", out.text(), err.text());
                // As written, and as JSON escapes it.
                let escaped = serde_json::to_string(&s.secret).unwrap();
                let escaped = escaped.trim_matches('"');
                assert!(
                    !shown.contains(&s.secret) && !shown.contains(escaped),
                    "{:?} is shown ({mode:?}): {shown}",
                    s.secret
                );
            }
        }
    }

    #[test]
    fn streamed_envelope_is_the_serialised_envelope() {
        let result = serde_json::json!({"name": "a \"quoted\" name", "list": [1, 2], "n": null});
        let actions = vec![NextAction::read(
            "Look",
            &["gw", "list", "--format", "json"],
        )];
        for warnings in [vec![], vec!["careful\nnow".to_string()]] {
            let rendered = render_ok(&Json::of(&result), &warnings, &actions).unwrap();
            let streamed = String::from_utf8(rendered).unwrap();
            let doc = envelope_ok(Json::of(&result), &warnings, &actions).unwrap();
            let expected = format!("{}\n", serde_json::to_string(&doc).unwrap());
            assert_eq!(streamed, expected);
        }
    }
}
