//! Interactive pickers and prompts, drawn on stderr. They are offered only when both stdin
//! and stderr are terminals and grove is not in machine mode; otherwise the caller gets a
//! `USAGE` error naming the flag that would have supplied the answer.
//!
//! Every picker filters as you type. Esc and Ctrl-C cancel any of them the same quiet way
//! (`CANCELLED`, exit 8, shown to a person as one dimmed word). Ctrl-C needs care: the
//! terminal library reads it as a key and then raises SIGINT, which would end `gw` (see
//! `proc::signals`) with the cursor hidden. So while a prompt is up a signal is only
//! recorded (`Mode::Defer`) and the prompt ends as cancelled; the terminal's `ISIG` is off
//! too, so a Ctrl-C typed before the prompt reads its first key arrives as a key. The terminal is left as it was on every way out: the prompt restores the cursor
//! and the terminal modes when it ends (answered, cancelled or failed), and the panic hook
//! calls [`restore_terminal`].
//!
//! Prompts and items name things read from files and git: they are drawn escaped (`term`).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::termios::{LocalModes, OptionalActions, Termios, tcgetattr, tcsetattr};

use inquire::ui::RenderConfig;
use inquire::{InquireError, MultiSelect, Select, Text};

use super::term::{escape, is_unsafe};
use crate::error::{Code, Error, Result};

/// A prompt is on the screen (so a panic must bring the cursor back).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether prompts are drawn in colour.
static PLAIN: AtomicBool = AtomicBool::new(false);
/// The terminal's modes before the prompt changed them.
static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

/// Whether a person is there to answer.
pub fn interactive(machine: bool) -> bool {
    !machine && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Whether stdout is a terminal (a person reads what is printed there).
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Draws prompts in colour or not (`--color never`, `NO_COLOR`), as stderr's colour says.
pub fn set_color(color: bool) {
    PLAIN.store(!color, Ordering::Relaxed);
    // The pickers' styles ask `console` whether *stdout* takes colour, though they are
    // drawn on stderr: stdout captured (`x="$(gw go)"`) would lose them their colour.
    console::set_colors_enabled(color);
}

/// Shows the cursor again and restores the terminal's modes if a prompt was interrupted
/// by a panic.
pub fn restore_terminal() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        restore_modes();
        let _ = console::Term::stderr().show_cursor();
        let _ = std::io::stderr().write_all(b"\n");
    }
    restore_echo();
}

/// The terminal's modes before [`quiet_ctrl_c`] changed them.
static ECHO_SAVED: Mutex<Option<Termios>> = Mutex::new(None);

/// While gw works at a terminal, Ctrl-C is not echoed as `^C`: the echo lands where the
/// live display's cursor is (at the end of a line as wide as the terminal, so on the next
/// one), which leaves the display a line off and its last frame on the screen, and it
/// puts `^C` before the one line that says the command was cancelled. [`restore_echo`]
/// puts the mode back (the CLI calls it when the command is done, the signal and panic
/// paths on their way out).
pub fn quiet_ctrl_c() {
    let tty = rustix::stdio::stderr();
    if !foreground() {
        return;
    }
    let Ok(modes) = tcgetattr(tty) else { return };
    if !modes.local_modes.contains(LocalModes::ECHOCTL) {
        return;
    }
    let mut quiet = modes.clone();
    quiet.local_modes.remove(LocalModes::ECHOCTL);
    if tcsetattr(tty, OptionalActions::Now, &quiet).is_ok() {
        *ECHO_SAVED.lock().unwrap_or_else(|e| e.into_inner()) = Some(modes);
    }
}

/// Whether gw is in the terminal's foreground: a process in the background (`source <(gw
/// completions zsh)`, a job sent to the background) that changes the terminal's modes is
/// stopped by SIGTTOU, and would wait forever.
fn foreground() -> bool {
    rustix::termios::tcgetpgrp(rustix::stdio::stderr())
        .is_ok_and(|pgrp| pgrp == rustix::process::getpgrp())
}

/// Undoes [`quiet_ctrl_c`] (when gw is still in the foreground).
pub fn restore_echo() {
    let saved = ECHO_SAVED.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(modes) = saved
        && foreground()
        && let Ok(mut now) = tcgetattr(rustix::stdio::stderr())
    {
        now.local_modes
            .insert(modes.local_modes & LocalModes::ECHOCTL);
        let _ = tcsetattr(rustix::stdio::stderr(), OptionalActions::Now, &now);
    }
}

/// Turns off the terminal's `ISIG` (Ctrl-C, Ctrl-Z, Ctrl-\\ as signals) until
/// [`restore_modes`].
fn keys_not_signals() {
    let stdin = std::io::stdin();
    let Ok(modes) = tcgetattr(&stdin) else { return };
    let mut quiet = modes.clone();
    quiet.local_modes.remove(LocalModes::ISIG);
    if tcsetattr(&stdin, OptionalActions::Now, &quiet).is_ok() {
        *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = Some(modes);
    }
}

fn restore_modes() {
    let saved = SAVED.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(modes) = saved {
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &modes);
    }
}

/// The error a cancelled prompt becomes.
pub fn cancelled() -> Error {
    Error::new(Code::Cancelled, "cancelled")
}

/// Runs `f` while a prompt is on screen: signals deferred, Ctrl-C a key, and the terminal
/// restored afterwards.
fn guarded<T>(f: impl FnOnce() -> T) -> T {
    let signals = crate::proc::signals::enter(crate::proc::signals::Mode::Defer);
    keys_not_signals();
    ACTIVE.store(true, Ordering::SeqCst);
    let r = f();
    ACTIVE.store(false, Ordering::SeqCst);
    restore_modes();
    drop(signals);
    r
}

/// Runs one prompt of at most `lines` lines, marking it active while it is on screen.
///
/// Left with Esc or Ctrl-C, the prompt is taken off the screen, so that the one word said
/// is `cancelled`, the same for both: inquire leaves `? Prompt <canceled>` after Esc, and
/// the whole prompt after Ctrl-C, its cursor below it. So before it is drawn, room for it is
/// made below the cursor (the screen scrolls now, if it must, not while it is drawn) and
/// the cursor's place is saved; on the way out it goes back there and clears below.
fn ask<T>(
    lines: usize,
    f: impl FnOnce(RenderConfig<'static>) -> inquire::error::InquireResult<T>,
) -> Result<T> {
    let config = if PLAIN.load(Ordering::Relaxed) {
        RenderConfig::empty()
    } else {
        RenderConfig::default_colored()
    };
    let term = console::Term::stderr();
    let _ = term
        .write_str(&"\n".repeat(lines))
        .and_then(|()| term.move_cursor_up(lines))
        .and_then(|()| term.write_str(SAVE_CURSOR));
    let r = guarded(|| f(config));
    let left = match &r {
        Err(InquireError::OperationCanceled | InquireError::OperationInterrupted) => true,
        Err(InquireError::IO(e)) => e.kind() == std::io::ErrorKind::Interrupted,
        _ => false,
    };
    if left {
        let _ = term
            .write_str(RESTORE_CURSOR)
            .and_then(|()| term.clear_to_end_of_screen());
    }
    r.map_err(|e| match e {
        InquireError::OperationCanceled | InquireError::OperationInterrupted => cancelled(),
        // Ctrl-C, read as a key by the terminal library, which then raised SIGINT.
        InquireError::IO(e) if e.kind() == std::io::ErrorKind::Interrupted => cancelled(),
        other => Error::new(Code::Cancelled, format!("prompt failed: {other}")),
    })
}

/// DECSC and DECRC: the cursor's place, saved and restored by the terminal.
const SAVE_CURSOR: &str = "\x1b7";
const RESTORE_CURSOR: &str = "\x1b8";

/// The most lines a list prompt of `items` draws: the question, the visible items, a
/// line for "no match" or more items, and the help.
fn list_lines(items: usize) -> usize {
    items.clamp(1, page_size()) + 3
}

const FILTER_HELP: &str = "type to filter, ↑↓ to move, enter to choose, esc to cancel";
const MANY_HELP: &str =
    "type to filter, space to select, → all, ← none, enter to accept, esc to cancel";

/// Selection of one item, filtered as you type; the index chosen.
pub fn one(prompt: &str, items: &[String], default: usize) -> Result<usize> {
    let options = Item::all(items);
    let start = default.min(items.len().saturating_sub(1));
    let prompt = escape(prompt);
    ask(list_lines(items.len()), |config| {
        Select::new(&prompt, options)
            .with_render_config(config)
            .with_scorer(&score)
            .with_starting_cursor(start)
            .with_help_message(FILTER_HELP)
            .with_page_size(page_size())
            .prompt()
    })
    .map(|i| i.index)
}

/// Selection of several items, filtered as you type; the indices chosen. Choosing none
/// cancels.
pub fn many(prompt: &str, items: &[String]) -> Result<Vec<usize>> {
    let options = Item::all(items);
    let prompt = escape(prompt);
    let chosen = ask(list_lines(items.len()), |config| {
        MultiSelect::new(&prompt, options)
            .with_render_config(config)
            .with_scorer(&score)
            .with_help_message(MANY_HELP)
            .with_page_size(page_size())
            .prompt()
    })?;
    if chosen.is_empty() {
        Err(cancelled())
    } else {
        Ok(chosen.into_iter().map(|i| i.index).collect())
    }
}

/// A line of text, with a default.
pub fn text(prompt: &str, default: &str) -> Result<String> {
    let prompt = escape(prompt);
    ask(3, |config| {
        let mut input = Text::new(&prompt)
            .with_render_config(config)
            .with_help_message("enter to accept, esc to cancel");
        // A default is typed in as it is; one that cannot be shown is not offered.
        if !default.is_empty() && !default.chars().any(is_unsafe) {
            input = input.with_default(default);
        }
        input.prompt()
    })
}

/// Yes or no, answered with one key (`y`; `n` or Enter for the default, no); Esc or
/// Ctrl-C cancels.
pub fn confirm(prompt: &str) -> Result<bool> {
    use console::Key;
    let term = console::Term::stderr();
    let plain = PLAIN.load(Ordering::Relaxed);
    let paint = |role, text: &'static str| super::style::paint(!plain, role, &text.into());
    let prompt = escape(prompt);
    let answer = guarded(|| -> std::io::Result<Option<bool>> {
        term.write_str(&format!(
            "{} {prompt} {} ",
            paint(super::Role::Success, "?"),
            paint(super::Role::Dim, "(y/N, esc to cancel)")
        ))?;
        loop {
            let (answer, word) = match term.read_key() {
                Ok(Key::Char('y' | 'Y')) => (Some(true), "yes"),
                Ok(Key::Char('n' | 'N') | Key::Enter) => (Some(false), "no"),
                Ok(Key::Escape | Key::CtrlC) => (None, ""),
                // Ctrl-C, read as a key by the terminal library, which then raised SIGINT.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => (None, ""),
                Err(e) => return Err(e),
                Ok(_) => continue,
            };
            term.write_line(word)?;
            return Ok(answer);
        }
    });
    match answer {
        Ok(Some(yes)) => Ok(yes),
        Ok(None) => {
            // The question goes, as a cancelled picker's does.
            let _ = term.clear_last_lines(1);
            Err(cancelled())
        }
        Err(e) => Err(Error::new(Code::Cancelled, format!("prompt failed: {e}"))),
    }
}

/// Shows the `.grove.toml` commands waiting for approval (escaped: they are a
/// repository's text) and asks whether to trust them.
pub fn approve(untrusted: &[crate::ops::trust::Untrusted]) -> Result<bool> {
    let plain = PLAIN.load(Ordering::Relaxed);
    let mut text = String::new();
    for u in untrusted {
        let head = super::style::paint(!plain, super::Role::Name, &super::Shown::text(&u.repo));
        text.push_str(&format!(
            "{head} ({}) has commands in .grove.toml that have not been approved:\n",
            escape(&u.path.to_string_lossy())
        ));
        for (key, commands) in &u.commands {
            for c in commands {
                text.push_str(&format!("  {key}: {}\n", escape(c)));
            }
        }
    }
    let term = console::Term::stderr();
    term.write_str(&text)
        .map_err(|e| Error::new(Code::Cancelled, format!("prompt failed: {e}")))?;
    confirm("Trust these commands (remembered until they change)?")
}

/// How well an item matches what was typed, for the filter (higher first; `None` hides
/// it): a name that starts with it, then one with a word that does (`fix` finds
/// `echo-fix`), then one that contains it, then one holding its letters in order; within
/// each, the list's own order. (inquire's fuzzy scorer put `echo-fix` above `hotel` for
/// `ho`.)
fn score(typed: &str, _: &Item, label: &str, index: usize) -> Option<i64> {
    let typed = typed.trim().to_lowercase();
    let label = label.to_lowercase();
    let rank = if typed.is_empty() || label.starts_with(&typed) {
        4
    } else if label
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| word.starts_with(&typed))
    {
        3
    } else if label.contains(&typed) {
        2
    } else {
        let mut rest = label.chars();
        if !typed.chars().all(|c| rest.any(|l| l == c)) {
            return None;
        }
        1
    };
    Some(rank * 1_000_000 - index as i64)
}

/// A list item that remembers its position.
#[derive(Clone)]
struct Item {
    index: usize,
    label: String,
}

impl Item {
    fn all(items: &[String]) -> Vec<Item> {
        items
            .iter()
            .enumerate()
            .map(|(index, label)| Item {
                index,
                label: escape(label).into_owned(),
            })
            .collect()
    }
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label)
    }
}

/// How many items a list shows at once: most of the terminal's height.
fn page_size() -> usize {
    let rows = console::Term::stderr()
        .size_checked()
        .map(|(rows, _)| usize::from(rows))
        .unwrap_or(24);
    rows.saturating_sub(4).clamp(5, 15)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter's order: what starts with the typed text, then a word that does, then
    /// what contains it, then its letters in order; the list's order within each.
    #[test]
    fn what_starts_with_the_typed_text_comes_first() {
        let names = ["alpha", "echo-fix", "hotel", "photo"];
        let items = Item::all(&names.map(String::from));
        let rank = |typed: &str| {
            let mut scored: Vec<(i64, &str)> = items
                .iter()
                .filter_map(|i| score(typed, i, &i.label, i.index).map(|s| (s, names[i.index])))
                .collect();
            scored.sort_by_key(|s| std::cmp::Reverse(s.0));
            scored.into_iter().map(|(_, n)| n).collect::<Vec<_>>()
        };
        assert_eq!(rank("ho"), ["hotel", "echo-fix", "photo"]);
        assert_eq!(rank("fix"), ["echo-fix"]);
        assert_eq!(rank("HOT"), ["hotel", "photo"]);
        assert_eq!(rank("aph"), ["alpha"]);
        assert_eq!(rank(""), names);
        assert!(rank("zz").is_empty());
    }
}
