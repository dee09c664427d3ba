//! Parse errors said with the command they are about: a value error points at `gw CMD
//! --help` rather than `gw --help`, and an unknown command word under a command (`gw help
//! craete`, `gw preset ad`) gets a did-you-mean, as `gw craete` does.

use std::ffi::OsString;

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::error::Error;
use crate::ops::names;

/// The words of `args` that name gw's commands (`["preset", "add"]`; `help` in `gw help
/// create` too), and the last command they name. Options and their values are passed over.
fn walk(args: &[OsString]) -> (Vec<String>, clap::Command) {
    let mut cmd = super::args::Cli::command();
    let mut words = Vec::new();
    for w in args.iter().skip(1).filter_map(|a| a.to_str()) {
        if w == "--" {
            break;
        }
        if w.starts_with('-') {
            continue;
        }
        if w == "help" && cmd.has_subcommands() {
            // clap's own `help`: the words after it name commands of this one.
            words.push(w.to_string());
            continue;
        }
        let found = cmd
            .get_subcommands()
            .find(|c| c.get_name() == w || c.get_all_aliases().any(|a| a == w))
            .cloned();
        if let Some(sub) = found {
            words.push(sub.get_name().to_string());
            cmd = sub;
        }
    }
    (words, cmd)
}

/// The command `args` run, as a person types it for its help: `gw preset add`.
pub fn program(args: &[OsString]) -> String {
    let (words, _) = walk(args);
    std::iter::once("gw")
        .chain(words.iter().map(String::as_str).filter(|w| *w != "help"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A word that names no command of the command before it, when one is near: the `USAGE`
/// error with the did-you-mean (clap suggests only for commands it parses, not after
/// `help`).
pub fn unknown_command(e: &clap::Error, args: &[OsString]) -> Option<Error> {
    if e.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    let (_, cmd) = walk(args);
    let known: Vec<String> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect();
    let suggestions = names::nearest(bad, &known);
    if suggestions.is_empty() {
        return None;
    }
    let program = program(args);
    Some(
        Error::usage(format!("`{program}` has no command `{bad}`"))
            .with_fix(names::did_you_mean(
                &suggestions,
                &format!("Run `{program} --help` to see its commands"),
            ))
            .with_details(serde_json::json!({ "command": bad, "suggestions": suggestions })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_command_is_found_past_options_and_help() {
        assert_eq!(
            program(&args(&["gw", "list", "--format", "jsn"])),
            "gw list"
        );
        assert_eq!(
            program(&args(&["gw", "--format", "json", "preset", "add", "x"])),
            "gw preset add"
        );
        assert_eq!(program(&args(&["gw", "help", "craete"])), "gw");
        assert_eq!(
            program(&args(&["gw", "create", "list", "-b", "x"])),
            "gw create"
        );
    }
}
