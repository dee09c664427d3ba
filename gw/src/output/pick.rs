//! Interactive pickers and prompts, drawn on stderr. They are offered only when both stdin
//! and stderr are terminals and grove is not in machine mode; otherwise the caller gets a
//! `USAGE` error naming the flag that would have supplied the answer.

use std::io::IsTerminal;

use dialoguer::console::Term;
use dialoguer::theme::ColorfulTheme;
use dialoguer::{Confirm, FuzzySelect, Input, MultiSelect};

use crate::error::{Code, Error, Result};

/// Whether a person is there to answer.
pub fn interactive(machine: bool) -> bool {
    !machine && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Whether stdout is a terminal (a person reads what is printed there).
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

fn cancelled() -> Error {
    Error::new(Code::Cancelled, "cancelled")
}

fn failed(e: dialoguer::Error) -> Error {
    Error::new(Code::Cancelled, format!("prompt failed: {e}"))
}

/// Type-to-filter selection of one item; the index chosen.
pub fn one(prompt: &str, items: &[String], default: usize) -> Result<usize> {
    FuzzySelect::with_theme(&ColorfulTheme::default())
        .with_prompt(prompt)
        .items(items)
        .default(default.min(items.len().saturating_sub(1)))
        .interact_on_opt(&Term::stderr())
        .map_err(failed)?
        .ok_or_else(cancelled)
}

/// Selection of several items (space toggles, enter accepts); the indices chosen.
pub fn many(prompt: &str, items: &[String]) -> Result<Vec<usize>> {
    let chosen = MultiSelect::with_theme(&ColorfulTheme::default())
        .with_prompt(prompt)
        .items(items)
        .interact_on_opt(&Term::stderr())
        .map_err(failed)?
        .ok_or_else(cancelled)?;
    if chosen.is_empty() {
        Err(cancelled())
    } else {
        Ok(chosen)
    }
}

/// A line of text, with a default.
pub fn text(prompt: &str, default: &str) -> Result<String> {
    let theme = ColorfulTheme::default();
    let mut input = Input::<String>::with_theme(&theme).with_prompt(prompt);
    if !default.is_empty() {
        input = input.default(default.to_string());
    }
    input.interact_text_on(&Term::stderr()).map_err(failed)
}

/// Yes or no; no by default.
pub fn confirm(prompt: &str) -> Result<bool> {
    Confirm::with_theme(&ColorfulTheme::default())
        .with_prompt(prompt)
        .default(false)
        .interact_on_opt(&Term::stderr())
        .map_err(failed)?
        .ok_or_else(cancelled)
}
