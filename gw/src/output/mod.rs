//! The output layer: the only code that writes to stdout or stderr.
//!
//! A command hands its report to [`emit`], which renders it as human text (tables on
//! stdout, messages on stderr, colour as [`ColorChoice`] decides), as
//! one of the Go grove's bare data shapes (`-o json|jsonl|tsv|name|path`, `--json`), or as
//! the versioned JSON envelope (`--format json`). In machine mode stdout carries exactly
//! one envelope and nothing else.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod envelope;
mod events;
pub mod pick;
mod progress;
pub mod render;
mod style;
mod table;
pub mod term;

pub use envelope::{Envelope, ErrorBody, SCHEMA_VERSION, envelope_error, envelope_ok};
pub use events::StderrEvents;
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
    color_out: bool,
    color_err: bool,
    /// stdout and stderr as they are: written only by this file's methods (tidy:
    /// `terminal`), text only as [`Shown`].
    raw_out: Box<dyn Write>,
    raw_err: Box<dyn Write>,
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
            color_out: text && color.enabled(out_is_terminal),
            color_err: text && color.enabled(err_is_terminal),
            raw_out: Box::new(io::stdout()),
            raw_err: Box::new(io::stderr()),
        }
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

/// Shows a command's report and returns the process exit code.
pub fn emit(p: &mut Printer, r: &dyn Render, data: Option<DataFormat>) -> u8 {
    let mut once = once();
    *once = true;
    let failure = r.failure();
    let code = failure.map(|e| e.code.exit_code()).unwrap_or(0);
    let result = match p.mode {
        Mode::Json => {
            let warnings = r.warnings();
            for w in &warnings {
                let _ = p.message(Role::Warning, Shown::block(w));
            }
            let doc = match failure {
                None => {
                    let result = r.result();
                    if result.infallible() {
                        let written = write_ok(p.raw_out(), &result, &warnings, &r.next_actions());
                        return finish(p, written).unwrap_or(code);
                    }
                    // Rendered whole before anything is written: a result that cannot be
                    // shown (a path that is not UTF-8) is an error, not half a document.
                    let result = match render_ok(&result, &warnings, &r.next_actions()) {
                        Ok(doc) => p.raw_out().write_all(&doc),
                        Err(e) => return emit_unlocked(p, &unshowable(&e)),
                    };
                    return finish(p, result).unwrap_or(code);
                }
                Some(e) => {
                    let mut doc = envelope_error(e);
                    doc.result = match r.result().into_raw() {
                        Ok(raw) => Some(raw),
                        Err(e) => return emit_unlocked(p, &unshowable(&e.into())),
                    };
                    doc.warnings = warnings;
                    // The error's actions first; the report's add what they lack.
                    for a in r.next_actions() {
                        if !doc.next_actions.contains(&a) {
                            doc.next_actions.push(a);
                        }
                    }
                    doc
                }
            };
            write_json(p, &doc)
        }
        Mode::Text => {
            let shown = match data {
                Some(f) if f != DataFormat::Table => r.legacy(f, p).unwrap_or_else(|| r.text(p)),
                _ => r.text(p),
            };
            let warnings = r
                .warnings()
                .into_iter()
                .try_for_each(|w| p.message(Role::Warning, Shown::block(&w)));
            let failed = match failure {
                Some(e) => text_error(p, e),
                None => Ok(()),
            };
            shown.and(warnings).and(failed)
        }
    };
    finish(p, result).unwrap_or(code)
}

/// Makes a panic anywhere in the process (any thread) end it like any other failure: the
/// panic message on stderr, then an `INTERNAL` error (the envelope in machine mode) and its
/// exit code. Release builds abort on a panic instead of unwinding, so this hook is where a
/// panic is reported, in every build alike. Nothing is rolled back on the way out: an
/// interrupted operation is left to recovery, as after `kill -9`.
pub fn exit_on_panic(mode: Mode, color: ColorChoice, program: &'static str) {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // A picker or a progress display may have hidden the cursor.
        pick::restore_terminal();
        default(info);
        let payload = info.payload();
        let what = (payload.downcast_ref::<&str>().copied())
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("unknown panic");
        // A panic while the output is being written leaves no room for an envelope.
        match ONCE.try_lock() {
            Ok(once) if !*once => drop(once),
            _ => std::process::exit(1),
        }
        let mut p = Printer::stdio(mode, color, None);
        let e = Error::internal(format!("{program} panicked: {what}"));
        std::process::exit(emit_error(&mut p, &e).into());
    }));
}

/// Reports SIGINT or SIGTERM (`CANCELLED`: the envelope in machine mode, one line for a
/// person) and ends the process with its exit code — unless the command's own output is
/// already written, in which case the command is about to exit anyway. The operations
/// decide when a signal may end the process this way (`proc::signals`).
pub fn exit_on_signal(mode: Mode, color: ColorChoice) -> std::io::Result<()> {
    static SETTINGS: std::sync::OnceLock<(Mode, ColorChoice)> = std::sync::OnceLock::new();
    let _ = SETTINGS.set((mode, color));
    crate::proc::signals::install(|sig| {
        let (mode, color) = SETTINGS
            .get()
            .copied()
            .unwrap_or((Mode::Text, ColorChoice::Never));
        let once = once();
        if *once {
            return;
        }
        let mut p = Printer::stdio(mode, color, None);
        let e = cancelled(sig);
        let code = emit_unlocked(&mut p, &e);
        std::process::exit(code.into());
    })
}

/// The error of a command ended by `sig` before it changed anything.
pub fn cancelled(sig: i32) -> Error {
    Error::new(
        Code::Cancelled,
        format!("cancelled by {}", crate::proc::signal_name(sig)),
    )
}

static ONCE: std::sync::Mutex<bool> = std::sync::Mutex::new(false);

/// Held while the process's one document (or one error) is written; `true` once it was.
fn once() -> std::sync::MutexGuard<'static, bool> {
    ONCE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Shows an error and returns the process exit code.
pub fn emit_error(p: &mut Printer, e: &Error) -> u8 {
    let mut once = once();
    *once = true;
    emit_unlocked(p, e)
}

fn emit_unlocked(p: &mut Printer, e: &Error) -> u8 {
    let result = match p.mode {
        Mode::Json => write_json(p, &envelope_error(e)),
        Mode::Text => text_error(p, e),
    };
    finish(p, result).unwrap_or(e.code.exit_code())
}

fn text_error(p: &mut Printer, e: &Error) -> io::Result<()> {
    if e.code == Code::Cancelled {
        // Like gh: a prompt left with Esc or Ctrl-C is not an error worth shouting about.
        let note = style::paint(p.color_err, Role::Dim, &Shown::block(&e.message));
        return p.message(Role::Plain, note);
    }
    p.message(Role::Error, Shown::block(&e.message))?;
    if let Some(fix) = &e.fix {
        p.message(Role::Hint, Shown::block(fix))?;
    }
    if e.code == Code::Internal {
        p.message(Role::Hint, "this is a bug in gw, please report it")?;
    }
    Ok(())
}

/// Writes an envelope compactly (one line, cheap to produce and to read for a program;
/// `jq` pretty-prints) through a large buffer: stdout's own is a line buffer of 1 KiB,
/// which would turn a megabyte-sized `gw list` result into a thousand writes.
fn write_json(p: &mut Printer, doc: &Envelope) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(64 * 1024, p.raw_out());
    serde_json::to_writer(&mut w, doc).map_err(io::Error::from)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// The error shown instead of a result that cannot be written as JSON.
fn unshowable(e: &io::Error) -> Error {
    Error::internal(format!("cannot show the result as JSON: {e}")).with_fix(
        "A path grove would show is not valid UTF-8; JSON cannot carry it. Rename it, or use the text output",
    )
}

/// Renders the envelope of a successful command into one buffer (see [`write_ok`]).
fn render_ok(
    result: &Json<'_>,
    warnings: &[String],
    next_actions: &[NextAction],
) -> io::Result<Vec<u8>> {
    let mut doc = Vec::with_capacity(64 * 1024);
    write_ok(&mut doc, result, warnings, next_actions)?;
    Ok(doc)
}

/// Writes the envelope of a successful command to `out`, the result serialised straight
/// into it. Produces exactly what serialising [`envelope_ok`]'s [`Envelope`] would.
fn write_ok(
    out: &mut dyn Write,
    result: &Json<'_>,
    warnings: &[String],
    next_actions: &[NextAction],
) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(64 * 1024, out);
    write!(
        w,
        "{{\"ok\":true,\"schemaVersion\":{SCHEMA_VERSION},\"result\":"
    )?;
    result.write(&mut w)?;
    if !warnings.is_empty() {
        w.write_all(b",\"warnings\":")?;
        serde_json::to_writer(&mut w, warnings).map_err(io::Error::from)?;
    }
    w.write_all(b",\"next_actions\":")?;
    serde_json::to_writer(&mut w, next_actions).map_err(io::Error::from)?;
    w.write_all(b"}\n")?;
    w.flush()
}

/// Flushes the output. Output that could not be written (a full disk) is a failure: the
/// exit code to use instead (1), after a line on stderr. A closed stdout (`gw list | head
/// -1`) is not an error worth reporting.
fn finish(p: &mut Printer, result: io::Result<()>) -> Option<u8> {
    let result = result.and_then(|_| p.flush());
    match result {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            let _ = writeln!(io::stderr(), "error: cannot write output: {e}");
            Some(Code::Internal.exit_code())
        }
        _ => None,
    }
}

/// Writes bytes to stdout as they are (completion scripts and candidates).
pub fn emit_bytes(p: &mut Printer, bytes: &[u8]) -> u8 {
    let result = p.raw_out.write_all(bytes);
    finish(p, result);
    0
}

/// Writes help or version text (clap's own) to stdout in text mode, or as an envelope.
pub fn emit_help(p: &mut Printer, text: &str) -> u8 {
    let mut once = once();
    *once = true;
    let result = match p.mode {
        Mode::Json => {
            let help = Json::of(render::Help {
                help: text.to_string(),
            });
            render_ok(&help, &[], &[]).and_then(|doc| p.raw_out().write_all(&doc))
        }
        Mode::Text => p.script(text),
    };
    finish(p, result).unwrap_or(0)
}

/// An argument-parsing failure, as the CLI layer hands it over: what kind it is (clap's
/// name for it), the text the parser rendered, and whether it is really help or version
/// text to show.
pub struct ParseFailure {
    pub kind: String,
    pub rendered: String,
    pub is_help: bool,
}

/// Shows a parse error (or help/version output): the parser's own text in text mode, a
/// `USAGE` envelope in machine mode. `program` names the binary in the fix.
pub fn emit_parse_failure(p: &mut Printer, e: &ParseFailure, program: &str) -> u8 {
    if e.is_help {
        return emit_help(p, &e.rendered);
    }
    if p.mode == Mode::Text {
        // The parser's text echoes the arguments, which may hold anything.
        let shown = Shown::block(e.rendered.trim_end());
        let _ = p.message(Role::Plain, shown);
        let _ = p.flush();
        return Code::Usage.exit_code();
    }
    let message = e
        .rendered
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    let err = Error::usage(message)
        .with_details(serde_json::json!({ "kind": e.kind, "help": e.rendered }))
        .with_fix(format!(
            "Run `{program} --help` (or `{program} <command> --help`) for usage"
        ));
    emit_error(p, &err)
}

#[cfg(test)]
mod tests {
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
