//! Command-line parsing and dispatch: the only module that knows clap.
//!
//! Machine mode (`--format json`, `GW_FORMAT=json`) is detected before clap parses, so
//! that clap's own errors come back as a `USAGE` envelope. Each command turns its
//! arguments into plain options, resolves anything missing (with a picker when a person is
//! there, else a `USAGE` error naming the flag), calls one operation and hands the report
//! to the output layer.

mod args;
pub(crate) mod commands;
pub mod complete;
mod help;
pub mod man;
mod parse_error;
mod relocate;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::FromArgMatches;

pub use args::Cli;
pub use help::{MAX_WIDTH as MAX_HELP_WIDTH, command, command_at, examples_section, wrap};

use crate::env::Env;
use crate::error::{Error, Result};
use crate::ops::Ctx;
use crate::output::{self, ColorChoice, DataFormat, Mode, Printer, Render, StderrEvents};

/// What a command produced: a report, and the Go grove's data format when one was asked
/// for with `-o`/`--json`.
pub struct Out {
    pub report: Box<dyn Render>,
    pub data: Option<DataFormat>,
    /// Where the shell is to go (`gw go`, `gw create`, the new place of a renamed
    /// workspace the shell is in); see `relocate`.
    pub cd: Option<PathBuf>,
}

impl Out {
    pub fn new(report: impl Render + 'static) -> Out {
        Out {
            report: Box::new(report),
            data: None,
            cd: None,
        }
    }

    pub fn with_data(report: impl Render + 'static, data: Option<DataFormat>) -> Out {
        Out {
            report: Box::new(report),
            data,
            cd: None,
        }
    }

    /// The same output, taking the shell to `cd` (with the shell integration).
    pub fn with_cd(mut self, cd: Option<PathBuf>) -> Out {
        self.cd = cd;
        self
    }
}

/// How the command may interact with whoever ran it.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    /// `--format json`: no prompts, no colour, one envelope on stdout.
    pub machine: bool,
    /// A person is at a terminal and may be asked.
    pub interactive: bool,
    /// stdout is a terminal.
    pub out_is_terminal: bool,
    /// stderr is a terminal and coloured.
    pub err_color: bool,
}

/// Runs `gw` with `args` (including the program name) and returns the exit code.
pub fn run(args: Vec<OsString>, env: Env) -> u8 {
    // A completion request keeps the OS's Ctrl-C and SIGTERM: it changes nothing, and the
    // shell waiting on it may give up on it.
    if let Some(shell) = env.complete.as_deref() {
        return complete_request(&env, shell, &args);
    }
    // Otherwise Ctrl-C and SIGTERM are grove's from the start: one that comes while the
    // arguments are parsed is reported once the watcher has its reporter (below).
    let _ = crate::proc::signals::watch();
    let mut p = match start(&args, &env, "gw") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let machine = p.mode == Mode::Json;
    if env.grove_home.to_str().is_none() {
        // Every path grove records is text (state.json is JSON): it cannot live there.
        let e = Error::usage(format!(
            "the grove directory `{}` is not valid UTF-8",
            env.grove_home.display()
        ))
        .with_fix("Point GW_HOME (or HOME) at a directory whose path is valid UTF-8");
        return output::emit_error(&mut p, &e);
    }
    let color = color_choice(&args, &env);
    let width = p.help_width();
    let matches = match parse(&args, color, width) {
        Ok(m) => m,
        Err(e) => return clap_error(&mut p, e, &args),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return clap_error(&mut p, e, &args),
    };
    crate::proc::set_defaults(crate::proc::Defaults {
        ssh_command: env.ssh_command.clone(),
        env: Vec::new(),
    });
    crate::time::set_tz(env.tz.clone());
    crate::parallel::set_limit(env.threads);
    crate::state::journal::crash_after_writes(env.crash_after_journal_writes);
    // Ctrl-C and SIGTERM: see `proc::signals`. Without the watcher they would end the
    // process as the OS does, which is still safe, only unreported.
    let _ = output::exit_on_signal(p.mode, color);
    let Some(command) = cli.command else {
        // `gw` alone: the everyday commands, as `gh` and `git` give them (`gw help` has
        // the rest).
        let help = help::overview(width).color(clap_color(color)).render_help();
        let help = if p.out_is_terminal && color.enabled(true) {
            help.ansi().to_string()
        } else {
            help.to_string()
        };
        return output::emit_help(&mut p, &help);
    };
    // No `^C` echoed into the live display or before the word `cancelled` (a plugin gets
    // the terminal as it is: gw is replaced by it).
    if p.err_is_terminal && !matches!(command, args::Command::External(_)) {
        output::quiet_ctrl_c();
    }
    let events = StderrEvents::new(cli.verbose, p.color_err());
    // The question about `.grove.toml` commands, with the live display off the screen.
    let ask = |u: &[crate::ops::trust::Untrusted]| {
        events.finish();
        output::pick::approve(u)
    };
    output::pick::set_color(p.color_err());
    let mut ctx = Ctx::new(&env, &events);
    ctx.no_hooks = cli.no_hooks;
    let ui = Ui {
        machine,
        interactive: output::pick::interactive(machine),
        out_is_terminal: p.out_is_terminal,
        err_color: p.color_err(),
    };
    crate::log::init(ctx.home.log(), cli.verbose);
    let mutates = command.mutates();
    let sweeps = mutates && command.sweeps_trash();
    // A repository's `.grove.toml` commands not approved yet: `--yes` approves them, a
    // person at a terminal is asked, anyone else is refused (`UNTRUSTED_COMMANDS`).
    ctx.approval = if command.approves() {
        crate::ops::trust::Approval::Yes
    } else if ui.interactive {
        crate::ops::trust::Approval::Ask(&ask)
    } else {
        crate::ops::trust::Approval::Refuse {
            yes: command.offers_yes(),
        }
    };
    let started = std::time::Instant::now();
    let cwd_was_there = crate::fsx::is_dir(&env.cwd);

    let result = commands::dispatch(&ctx, command, ui, cli.format);
    events.finish();
    output::restore_echo();
    log_command(&args, &result, started.elapsed(), mutates);
    let asked = result.as_ref().ok().and_then(|o| o.cd.clone());
    let code = match result {
        Ok(out) => {
            let code = output::emit(&mut p, out.report.as_ref(), out.data);
            // The process ends right after this: freeing a large report (a thousand
            // workspaces are tens of thousands of allocations) would only delay the exit.
            std::mem::forget(out);
            code
        }
        Err(e) => output::emit_error(&mut p, &cancelled_instead(e)),
    };
    if let Some(dest) = relocate::destination(&ctx, asked) {
        let stranded = cwd_was_there && !crate::fsx::is_dir(&env.cwd);
        relocate::deliver(&ctx, &mut p, &dest, stranded);
    }
    // Retention has no daemon: each mutating command purges what has expired, a bounded
    // number of entries, after its own output.
    if sweeps && crate::proc::signals::requested().is_none() {
        crate::ops::trash::sweep(&ctx);
    }
    code
}

/// A command that failed after SIGINT or SIGTERM asked it to stop failed because of that
/// (a step was interrupted, or it stopped between steps): `CANCELLED`, with what happened
/// in the message — unless something is left for recovery, which matters more. Every
/// cancellation is said the same way, starting with `cancelled`.
fn cancelled_instead(e: Error) -> Error {
    use crate::error::Code;
    match crate::proc::signals::requested() {
        Some(sig) if e.code != Code::RecoveryPending && e.code != Code::Cancelled => {
            let c = output::cancelled(sig);
            let message = format!("{}: {}", c.message, e.message);
            let c = c.with_message(message);
            match e.details.clone() {
                Some(d) => c.with_details(d),
                None => c,
            }
        }
        _ if e.code == Code::Cancelled && !e.message.starts_with("cancelled") => {
            let message = format!("cancelled: {}", e.message);
            e.with_message(message)
        }
        _ => e,
    }
}

/// Records the finished command in `grove.log` (mutating commands always, others with `-v`).
fn log_command(args: &[OsString], result: &CmdResult, took: std::time::Duration, mutates: bool) {
    let argv = std::iter::once("gw".to_string())
        .chain(
            args.iter()
                .skip(1)
                // Each argument's secrets hidden before quoting can split one.
                .map(|a| crate::proc::shell_quote(&crate::redact::secrets(&a.to_string_lossy()))),
        )
        .collect::<Vec<_>>()
        .join(" ");
    let error = match result {
        Ok(out) => out.report.failure(),
        Err(e) => Some(e),
    };
    let outcome = match error {
        None => crate::log::Outcome::Ok,
        Some(e) => crate::log::Outcome::Failed {
            code: e.code.as_str(),
            message: &e.message,
        },
    };
    crate::log::command(&argv, outcome, took, mutates);
}

/// What `gw` and `gw-migrate` do before parsing their arguments: choose text or machine
/// mode, report panics in that mode (`program` names the binary), and refuse an invalid
/// `GW_FORMAT`, in which case the error is shown and its exit code returned. With
/// `GW_TEST_PANIC` set, it then panics, for the tests of that report.
pub fn start(args: &[OsString], env: &Env, program: &'static str) -> Result<Printer, u8> {
    let mode = if machine_mode(args, env.format.as_deref()) {
        Mode::Json
    } else {
        Mode::Text
    };
    let color = color_choice(args, env);
    let mut p = Printer::stdio(mode, color, env.columns);
    if env.exe.is_some() {
        output::exit_on_panic(mode, color, program);
    }
    if let Some(f) = env.format.as_deref()
        && f != "text"
        && f != "json"
    {
        let e = Error::usage(format!("invalid GW_FORMAT value `{f}`"))
            .with_fix("Set GW_FORMAT to `text` or `json`");
        return Err(output::emit_error(&mut p, &e));
    }
    if env.test_panic {
        panic!("GW_TEST_PANIC is set");
    }
    Ok(p)
}

/// Whether `--format` (or `GW_FORMAT`) asks for anything but text (or `gw env`'s `shell`
/// and `dotenv`, which print text). An invalid value switches to machine mode too, so that
/// its rejection is itself an envelope. `gw-migrate` decides the same way.
pub fn machine_mode(args: &[OsString], env_format: Option<&str>) -> bool {
    let mut it = args.iter().skip(1);
    let mut from_args = None;
    while let Some(a) = it.next() {
        let Some(a) = a.to_str() else { continue };
        if a == "--" {
            break;
        }
        if a == "--format" {
            from_args = it.next().and_then(|v| v.to_str()).map(str::to_string);
        } else if let Some(v) = a.strip_prefix("--format=") {
            from_args = Some(v.to_string());
        }
    }
    match from_args.as_deref().or(env_format) {
        Some(f) => !matches!(f, "text" | "shell" | "dotenv"),
        None => false,
    }
}

/// The colour choice in force: `--color` (read before clap parses, like `--format`, so
/// that clap's own errors follow it too), else `NO_COLOR`, `CLICOLOR_FORCE`/`FORCE_COLOR`.
pub fn color_choice(args: &[OsString], env: &Env) -> ColorChoice {
    let mut flag = None;
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let Some(a) = a.to_str() else { continue };
        if a == "--" {
            break;
        }
        let value = if a == "--color" {
            it.next().and_then(|v| v.to_str())
        } else {
            a.strip_prefix("--color=")
        };
        flag = match value {
            Some("always") => Some(ColorChoice::Always),
            Some("never") => Some(ColorChoice::Never),
            Some("auto") => Some(ColorChoice::Auto),
            _ => flag,
        };
    }
    ColorChoice::resolve(flag, env.no_color, env.force_color)
}

fn clap_color(c: ColorChoice) -> clap::ColorChoice {
    match c {
        ColorChoice::Auto => clap::ColorChoice::Auto,
        ColorChoice::Always => clap::ColorChoice::Always,
        ColorChoice::Never => clap::ColorChoice::Never,
    }
}

/// Answers `COMPLETE=SHELL gw -- WORDS…` with candidates, or `COMPLETE=SHELL gw` with the
/// registration script.
fn complete_request(env: &Env, shell: &str, args: &[OsString]) -> u8 {
    let mut p = Printer::stdio(Mode::Text, ColorChoice::Never, None);
    let Some(completer) = complete::shell(shell) else {
        let e = Error::usage(format!("cannot complete for the shell `{shell}`"))
            .with_fix("Set COMPLETE to bash, zsh, fish, nu, elvish or powershell");
        return output::emit_error(&mut p, &e);
    };
    let out = if args.iter().any(|a| a == "--") {
        complete::candidates(env, completer, args)
    } else {
        match complete::script(completer, &completer_path(env)) {
            Ok(s) => s.into_bytes(),
            Err(e) => return output::emit_error(&mut p, &Error::internal(e.to_string())),
        }
    };
    output::emit_bytes(&mut p, &out)
}

/// The `gw` a completion script calls: as it was run (`gw` on the `PATH`, or a path, made
/// absolute).
pub fn completer_path(env: &Env) -> String {
    match env.exe_name.as_deref() {
        Some(p) if p.contains('/') => env
            .resolve_path(std::path::Path::new(p))
            .display()
            .to_string(),
        Some(p) => p.to_string(),
        None => "gw".into(),
    }
}

/// Parses `args`. The command as derived parses exactly as [`command`] does: what that adds
/// (examples, the grouped overview, completion candidates) is only ever rendered or
/// completed. So it is built only when clap has something to show (help, the version, an
/// error), and the arguments are parsed again with it. Building it took an eighth of a
/// `gw list` of 1,000 workspaces (3 of 24 M instructions, callgrind).
fn parse(
    args: &[OsString],
    color: ColorChoice,
    width: usize,
) -> Result<clap::ArgMatches, clap::Error> {
    use clap::CommandFactory;
    // The command tree is built for one parse and lives until the process ends: freeing
    // its thousands of allocations only delays the command (0.2 ms of a delete's 17).
    let cli = Box::leak(Box::new(Cli::command()));
    cli.try_get_matches_from_mut(args).or_else(|_| {
        command_at(width)
            .color(clap_color(color))
            .try_get_matches_from(args)
    })
}

/// A clap error, said of the command it is about (`gw list --help`), with a did-you-mean
/// for a misspelt command word.
fn clap_error(p: &mut Printer, e: clap::Error, args: &[OsString]) -> u8 {
    if let Some(err) = parse_error::unknown_command(&e, args) {
        return output::emit_error(p, &err);
    }
    emit_clap_error(p, &e, &parse_error::program(args))
}

/// Shows a clap error (or its help/version output) through the output layer, which knows
/// nothing of clap. `program` names the binary in the fix.
pub fn emit_clap_error(p: &mut Printer, e: &clap::Error, program: &str) -> u8 {
    use clap::error::ErrorKind;
    let failure = output::ParseFailure {
        kind: format!("{:?}", e.kind()),
        rendered: e.render().to_string(),
        is_help: matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion),
    };
    output::emit_parse_failure(p, &failure, program)
}

/// A `USAGE` error for input that would have been asked for interactively: "missing
/// the repositories to add".
pub fn missing(what: &str, flag: &str) -> Error {
    Error::usage(format!("missing {what}")).with_fix(format!("Pass {flag}"))
}

pub(crate) type CmdResult = Result<Out>;

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    /// The shell integration finds the command after the global options: it must know
    /// each one that takes a value (the word after it is not the command).
    #[test]
    fn the_shell_wrapper_knows_the_global_options_that_take_a_value() {
        use clap::CommandFactory;
        let cli = args::Cli::command();
        let mut valued: Vec<String> = cli
            .get_arguments()
            .filter(|a| a.is_global_set() && a.get_action().takes_values())
            .map(|a| format!("--{}", a.get_long().expect("a long name")))
            .collect();
        valued.sort();
        let mut known = crate::ops::shell_init::GLOBAL_VALUED.to_vec();
        known.sort();
        assert_eq!(valued, known);
        // No global short option takes a value (`-nv` is two flags, never `-n VALUE`).
        assert!(
            cli.get_arguments()
                .filter(|a| a.is_global_set() && a.get_action().takes_values())
                .all(|a| a.get_short().is_none())
        );
    }

    #[test]
    fn detects_machine_mode_before_parsing() {
        assert!(machine_mode(
            &args(&["gw", "list", "--format", "json"]),
            None
        ));
        assert!(machine_mode(&args(&["gw", "--format=json", "list"]), None));
        assert!(machine_mode(
            &args(&["gw", "list", "--format", "yaml"]),
            None
        ));
        assert!(!machine_mode(
            &args(&["gw", "list", "--format", "text"]),
            Some("json")
        ));
        assert!(machine_mode(&args(&["gw", "list"]), Some("json")));
        assert!(!machine_mode(&args(&["gw", "list"]), None));
        assert!(!machine_mode(
            &args(&["gw", "run", "--", "--format", "json"]),
            None
        ));
    }

    #[test]
    fn cli_definition_is_consistent() {
        command().debug_assert();
    }

    /// `gw run NAME -- CMD…`: NAME stays the first positional though the dressed command
    /// re-adds it (with its completion candidates) after CMD.
    #[test]
    fn run_takes_a_name_then_a_command() {
        let m = command()
            .try_get_matches_from(["gw", "run", "w", "--timeout", "1s", "--", "echo", "hi"])
            .unwrap();
        match Cli::from_arg_matches(&m).unwrap().command {
            Some(args::Command::Run(r)) => {
                assert_eq!(r.name.as_deref(), Some("w"));
                assert_eq!(r.command, ["echo", "hi"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            command()
                .try_get_matches_from(["gw", "run", "w", "x"])
                .is_err()
        );
    }

    #[test]
    fn color_flag_wins_over_the_environment() {
        let mut env = Env::for_home(std::path::Path::new("/h"), std::path::Path::new("/"));
        env.no_color = false;
        assert_eq!(
            color_choice(&args(&["gw", "list"]), &env),
            ColorChoice::Auto
        );
        env.force_color = true;
        assert_eq!(
            color_choice(&args(&["gw", "list"]), &env),
            ColorChoice::Always
        );
        env.no_color = true;
        assert_eq!(
            color_choice(&args(&["gw", "list"]), &env),
            ColorChoice::Never
        );
        assert_eq!(
            color_choice(&args(&["gw", "--color", "always", "list"]), &env),
            ColorChoice::Always
        );
        env.no_color = false;
        assert_eq!(
            color_choice(&args(&["gw", "list", "--color=never"]), &env),
            ColorChoice::Never
        );
        assert_eq!(
            color_choice(&args(&["gw", "run", "--", "--color=never"]), &env),
            ColorChoice::Always
        );
    }
}
