//! Turning a command's outcome into what the process shows and exits with: a report or an
//! error (text or one JSON envelope), help and parse failures, and the last word on a panic
//! or a signal. One outcome per process ([`once`]).

use super::*;

/// Shows a command's report and returns the process exit code.
pub fn emit(p: &mut Printer, r: &dyn Render, data: Option<DataFormat>) -> u8 {
    let mut once = once();
    *once = true;
    let failure = r.failure();
    let code = failure.map(|e| e.code.exit_code()).unwrap_or(0);
    let result = match p.mode {
        Mode::Json => {
            let warnings: Vec<String> = r.warnings().iter().map(|w| redacted(w)).collect();
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
                    // A failure is an error: its result is shown with secrets hidden too.
                    doc.result = match r
                        .result()
                        .into_raw()
                        .and_then(|raw| envelope::redacted_result(&raw))
                    {
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
                .try_for_each(|w| p.message(Role::Warning, Shown::block(&redacted(&w))));
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
        // The live display off the screen and the terminal as it was, whatever comes next.
        progress::clear_all();
        pick::restore_echo();
        let once = match ONCE.try_lock() {
            Ok(once) => once,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            // The command's output is being written, and may be blocked on a reader that
            // does not read (`gw list | stalled`): end now, without a word more (stdout is
            // mid-document, stderr may be the same pipe). Waiting for the writer would lose
            // the signal.
            Err(std::sync::TryLockError::WouldBlock) => {
                std::process::exit(Code::Cancelled.exit_code().into())
            }
        };
        if *once {
            // Written already: the command is about to exit anyway.
            return;
        }
        let mut p = Printer::stdio(mode, color, None);
        let e = cancelled(sig);
        let code = emit_unlocked(&mut p, &e);
        std::process::exit(code.into());
    })
}

/// The error of a command ended by `sig` before it changed anything: `cancelled`, as a
/// prompt left with Esc says it (the signal is in `details`).
pub fn cancelled(sig: i32) -> Error {
    Error::new(Code::Cancelled, "cancelled")
        .with_details(serde_json::json!({ "signal": crate::proc::signal_name(sig) }))
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
        let note = style::paint(p.color_err, Role::Dim, &Shown::block(&redacted(&e.message)));
        return p.message(Role::Plain, note);
    }
    p.message(Role::Error, Shown::block(&redacted(&e.message)))?;
    if let Some(fix) = &e.fix {
        p.message(Role::Hint, Shown::block(&redacted(fix)))?;
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
pub(super) fn unshowable(e: &io::Error) -> Error {
    Error::internal(format!("cannot show the result as JSON: {e}")).with_fix(
        "A path grove would show is not valid UTF-8; JSON cannot carry it. Rename it, or use the text output",
    )
}

/// Renders the envelope of a successful command into one buffer (see [`write_ok`]).
pub(super) fn render_ok(
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
/// `USAGE` envelope in machine mode. `program` names the command in the fix (`gw`, or
/// `gw list` when the error is about it).
pub fn emit_parse_failure(p: &mut Printer, e: &ParseFailure, program: &str) -> u8 {
    if e.is_help {
        return emit_help(p, &e.rendered);
    }
    if matches!(
        e.kind.as_str(),
        "MissingSubcommand" | "DisplayHelpOnMissingArgumentOrSubcommand"
    ) && let Some(err) = missing_command(&e.rendered)
    {
        // `gw ws` alone: an error saying so and what the commands are, not its whole help
        // as an error (the issue-30 adversary).
        return emit_error(p, &err);
    }
    if p.mode == Mode::Text {
        // Laid out as gw's own errors. The parser's text echoes the arguments, which may
        // hold anything.
        let (message, hints) = parse_failure_text(&e.rendered, program);
        let _ = p.message(Role::Error, Shown::block(&redacted(&message)));
        for h in hints {
            let _ = p.message(Role::Hint, Shown::block(&redacted(&h)));
        }
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
        .with_fix(if program.contains(' ') {
            format!("Run `{program} --help` for usage")
        } else {
            format!("Run `{program} --help` (or `{program} <command> --help`) for usage")
        });
    emit_error(p, &err)
}

/// clap's rendered error as gw shows an error: the message (its first line and the
/// indented lines under it), then hints: clap's tips, and the usage with where to read more
/// (instead of "For more information, try '--help'").
fn parse_failure_text(rendered: &str, program: &str) -> (String, Vec<String>) {
    let mut message: Vec<&str> = Vec::new();
    let mut hints: Vec<String> = Vec::new();
    let mut usage = None;
    let mut in_message = true;
    for line in rendered.lines() {
        let t = line.trim();
        if t.is_empty() {
            in_message = false;
        } else if let Some(m) = t.strip_prefix("error: ") {
            message.push(m);
            in_message = true;
        } else if let Some(tip) = t.strip_prefix("tip: ") {
            hints.push(tip.to_string());
            in_message = false;
        } else if let Some(u) = t.strip_prefix("Usage: ") {
            usage = Some(u);
        } else if t.starts_with("For more information") {
        } else if in_message {
            message.push(line);
        } else {
            hints.push(t.to_string());
        }
    }
    if message.is_empty() {
        message.push("invalid arguments");
    }
    // The command the usage is of: its words up to the first placeholder or option.
    let command = usage
        .map(|u| {
            u.split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| program.to_string());
    hints.push(match usage {
        Some(u) => format!("usage: {u} (`{command} --help` says more)"),
        None => format!("`{command} --help` says more"),
    });
    (message.join("\n"), hints)
}

/// The `USAGE` error of a command group given no command (`gw ws`): clap rendered either
/// the group's help or its missing-subcommand error; either names the group in its usage
/// line and lists the commands.
fn missing_command(rendered: &str) -> Option<Error> {
    let plain = console::strip_ansi_codes(rendered);
    let group = plain
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage: "))?
        .split_whitespace()
        .take_while(|w| !w.starts_with(['[', '<', '-']))
        .collect::<Vec<_>>()
        .join(" ");
    let listed = plain.lines().find_map(|l| {
        let inner = l.trim().strip_prefix("[subcommands: ")?.strip_suffix(']')?;
        Some(inner.split(", ").map(str::to_string).collect::<Vec<_>>())
    });
    let commands = listed.unwrap_or_else(|| {
        plain
            .lines()
            .skip_while(|l| l.trim() != "Commands:")
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter(|l| !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect()
    });
    let commands: Vec<String> = commands.into_iter().filter(|c| c != "help").collect();
    if group.is_empty() || commands.is_empty() {
        return None;
    }
    Some(
        Error::usage(format!(
            "`{group}` needs a command: {}",
            commands.join(", ")
        ))
        .with_fix(format!(
            "Run `{group} <command>` (`{group} --help` says more)"
        )),
    )
}

/// A hint, on a terminal, that the shell's directory `gone` no longer exists and where to go
/// instead: without the shell integration (which would have gone there itself), or with it
/// run in a `subshell`, whose change of directory the shell never sees.
pub fn stranded_hint(
    p: &mut Printer,
    gone: &std::path::Path,
    dest: &std::path::Path,
    subshell: bool,
) {
    if p.mode != Mode::Text || !p.err_is_terminal {
        return;
    }
    let dest = crate::proc::shell_quote(&dest.to_string_lossy());
    let why = if subshell {
        "gw ran in a subshell (a pipeline or `$(…)`), so the shell integration could not move the shell"
    } else {
        "with `eval \"$(gw shell-init)\"`, gw moves the shell itself"
    };
    let _ = p.message(
        Role::Hint,
        crate::shown!(
            "your shell's directory `{}` is gone: `cd {}` ({})",
            gone.display(),
            dest,
            why
        ),
    );
    let _ = p.flush();
}

#[cfg(test)]
mod tests {
    use super::{missing_command, parse_failure_text};

    #[test]
    fn a_group_without_its_command_is_one_error_naming_the_commands() {
        let help = "Manage workspaces (list, show, delete)\n\nUsage: gw ws [OPTIONS] <COMMAND>\n\nCommands:\n  list    List workspaces [alias: ls]\n  show    Show one workspace as recorded\n  delete  Delete workspaces,\n          several at once\n  help    Print this message\n\nOptions:\n  -h, --help  Print help\n";
        let err = missing_command(help).unwrap();
        assert_eq!(err.message, "`gw ws` needs a command: list, show, delete");
        let clap = "error: 'gw ws' requires a subcommand but one was not provided\n  [subcommands: list, show, help]\n\nUsage: gw ws [OPTIONS] <COMMAND>\n";
        assert_eq!(
            missing_command(clap).unwrap().message,
            "`gw ws` needs a command: list, show"
        );
        assert!(missing_command("error: nothing here\n").is_none());
    }

    #[test]
    fn clap_errors_become_an_error_and_hints() {
        let rendered = "error: unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a value, use '-- --bogus'\n\nUsage: gw delete [OPTIONS] [NAMES]...\n\nFor more information, try '--help'.\n";
        let (message, hints) = parse_failure_text(rendered, "gw");
        assert_eq!(message, "unexpected argument '--bogus' found");
        assert_eq!(
            hints,
            [
                "to pass '--bogus' as a value, use '-- --bogus'",
                "usage: gw delete [OPTIONS] [NAMES]... (`gw delete --help` says more)",
            ]
        );
        let missing = "error: the following required arguments were not provided:\n  --to <NEW>\n\nUsage: gw rename --to <NEW> [NAME]\n\nFor more information, try '--help'.\n";
        let (message, hints) = parse_failure_text(missing, "gw");
        assert_eq!(
            message,
            "the following required arguments were not provided:\n  --to <NEW>"
        );
        assert_eq!(hints.len(), 1);
        let (message, hints) = parse_failure_text("", "gw-migrate");
        assert_eq!(message, "invalid arguments");
        assert_eq!(hints, ["`gw-migrate --help` says more"]);
    }
}
