//! Next actions: runnable suggestions attached to results and errors.

use serde::Serialize;

use crate::proc::shell_quote;

/// What running a suggested command would do, so an agent can skip destructive ones
/// without parsing the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Read,
    Write,
    Destructive,
}

/// A complete command an agent or a person can run as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct NextAction {
    pub description: String,
    /// The shell line, with every argument quoted where needed.
    pub command: String,
    /// The same command as an argument vector.
    pub argv: Vec<String>,
    pub effect: Effect,
}

impl NextAction {
    pub fn new(effect: Effect, description: impl Into<String>, argv: &[&str]) -> NextAction {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        NextAction {
            description: description.into(),
            command: shell_line(&argv),
            argv,
            effect,
        }
    }

    pub fn read(description: impl Into<String>, argv: &[&str]) -> NextAction {
        NextAction::new(Effect::Read, description, argv)
    }

    pub fn write(description: impl Into<String>, argv: &[&str]) -> NextAction {
        NextAction::new(Effect::Write, description, argv)
    }

    pub fn destructive(description: impl Into<String>, argv: &[&str]) -> NextAction {
        NextAction::new(Effect::Destructive, description, argv)
    }

    /// The command as a person types it: without the `--format json` a program's next
    /// action carries (a person reading text output would get an envelope back).
    pub fn for_people(&self) -> String {
        let mut argv: Vec<&str> = Vec::with_capacity(self.argv.len());
        let mut args = self.argv.iter().map(String::as_str).peekable();
        while let Some(a) = args.next() {
            if a == "--format" && args.peek() == Some(&"json") {
                args.next();
            } else if a != "--format=json" {
                argv.push(a);
            }
        }
        shell_line(&argv)
    }
}

/// Joins an argument vector into a POSIX shell line.
pub fn shell_line<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|a| shell_quote(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_quotes_names() {
        let a = NextAction::read("Inspect", &["gw", "status", "my ws", "--format", "json"]);
        assert_eq!(a.command, "gw status 'my ws' --format json");
        assert_eq!(a.argv, ["gw", "status", "my ws", "--format", "json"]);
        assert_eq!(a.for_people(), "gw status 'my ws'");
        let b = NextAction::read("Run", &["gw", "run", "--", "x", "--format", "text"]);
        assert_eq!(b.for_people(), b.command);
    }
}
