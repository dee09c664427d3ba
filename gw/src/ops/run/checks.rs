//! What `gw run` can tell without running, and how it says what went wrong: a port of a
//! repository about to start that is taken, a command whose program cannot start, the
//! details of a failed or stopped process and the error naming the repositories that failed.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{RunOutcome, RunResult, Tail};
use crate::action::NextAction;
use crate::config::REPO_FILE as FILE_NAME;
use crate::error::{Code, Error, Result};
use crate::listen::Holder;
use crate::ops::ports::{self, Port, Stack};
use crate::proc::{self, Status, Stop, StopReason};
use crate::state::Workspace;

/// `PORT_IN_USE` when a port of a repository about to start is taken, naming who holds
/// it; nothing has started yet.
pub(super) fn check_ports(ws: &Workspace, stack: &Stack, starting: &[&str]) -> Result<()> {
    let theirs: Vec<Port> = stack
        .ports
        .iter()
        .filter(|p| starting.contains(&p.repo.as_str()))
        .cloned()
        .collect();
    let looked = ports::look(&theirs);
    let taken: Vec<(&Port, &[Holder])> = looked
        .iter()
        .filter(|p| p.listening == Some(true))
        .map(|p| (&p.port, p.holders.as_slice()))
        .collect();
    let Some((first, holders)) = taken.first() else {
        return Ok(());
    };
    let who = |holders: &[Holder]| {
        if holders.is_empty() {
            return "a process the system does not name (another user's?)".to_string();
        }
        let named: Vec<String> = holders
            .iter()
            .map(|h| format!("pid {} ({})", h.pid, h.command))
            .collect();
        named.join(", ")
    };
    let mut message = format!(
        "port {} ({}'s `{}`) is taken by {}",
        first.port,
        first.repo,
        first.name,
        who(holders)
    );
    if taken.len() > 1 {
        message.push_str(&format!(", and {} more", taken.len() - 1));
    }
    message.push_str("; nothing was started");
    let details: Vec<serde_json::Value> = taken
        .iter()
        .map(|(p, h)| {
            serde_json::json!({
                "repo": p.repo, "name": p.name, "port": p.port, "var": p.var, "holders": h,
            })
        })
        .collect();
    let pids: Vec<String> = taken
        .iter()
        .flat_map(|(_, h)| h.iter().map(|h| h.pid.to_string()))
        .collect();
    let fix = if pids.is_empty() {
        format!(
            "Stop what listens on port {} (`gw list --ports` shows which of grove's workspaces use which ports), then run again",
            first.port
        )
    } else {
        format!(
            "Stop the process holding it (`kill {}`), or the `gw run` of the workspace it belongs to, then run again",
            pids.join(" ")
        )
    };
    Err(Error::new(Code::PortInUse, message)
        .with_details(serde_json::json!({ "workspace": ws.name, "ports": details }))
        .with_fix(fix)
        .with_action(NextAction::read(
            "See every workspace's ports and what listens on them",
            &["gw", "list", "--ports", "--format", "json"],
        )))
}

pub(super) fn failed_detail(what: &str, status: Status, tail: &Tail) -> String {
    let tail = tail.text();
    if tail.trim().is_empty() {
        format!("{what} failed ({status})")
    } else {
        format!("{what} failed ({status}):\n{tail}")
    }
}

pub(super) fn stopped_detail(stop: &Stop) -> String {
    match stop.reason() {
        Some(StopReason::Signal(n)) if proc::signal_name(n) == "SIGINT" => {
            "stopped by SIGINT (Ctrl-C)".into()
        }
        Some(StopReason::Signal(n)) => format!("stopped by {}", proc::signal_name(n)),
        Some(StopReason::Timeout) => "stopped by the timeout".into(),
        None => "stopped".into(),
    }
}

/// Shell words that are not programs on PATH.
const SHELL_WORDS: &[&str] = &[
    ".", ":", "[", "alias", "bg", "break", "builtin", "case", "cd", "command", "continue",
    "declare", "do", "done", "elif", "else", "esac", "eval", "exec", "exit", "export", "false",
    "fg", "fi", "for", "function", "getopts", "hash", "if", "in", "jobs", "kill", "let", "local",
    "printf", "pwd", "read", "readonly", "return", "select", "set", "shift", "source", "test",
    "then", "time", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias",
    "unset", "until", "wait", "while", "echo",
];

/// Why `command` cannot start, when that is clear without running it: its first word is
/// a plain program name that is not on `path`, or a path that does not exist or is not
/// executable. Anything the shell interprets first (quotes, variables, builtins, …) is
/// left for the shell to judge.
pub(super) fn cannot_start(command: &str, cwd: &Path, path: Option<&OsStr>) -> Option<String> {
    let word = command.split_whitespace().find(|w| !is_assignment(w))?;
    let plain = word
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_./+@%:,".contains(&b));
    if !plain || SHELL_WORDS.contains(&word) {
        return None;
    }
    if word.contains('/') {
        let file = cwd.join(word);
        return match std::fs::metadata(&file) {
            Err(_) => Some(format!("`{word}` does not exist (in {})", cwd.display())),
            Ok(m) if !executable(&m) => Some(format!(
                "`{word}` is not executable: run `chmod +x {}`",
                file.display()
            )),
            Ok(_) => None,
        };
    }
    let found = std::env::split_paths(path?).any(|dir| {
        let dir = if dir.as_os_str().is_empty() {
            cwd.to_path_buf()
        } else {
            dir
        };
        std::fs::metadata(dir.join(word)).is_ok_and(|m| executable(&m))
    });
    (!found).then(|| format!("`{word}` was not found on PATH"))
}

fn executable(m: &std::fs::Metadata) -> bool {
    m.is_file() && m.permissions().mode() & 0o111 != 0
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// `HOOK_FAILED` naming the repositories that failed or did not start.
pub(super) fn failure(ws: &Workspace, repos: &[RunResult], one_command: bool) -> Option<Error> {
    let failed: Vec<&RunResult> = repos.iter().filter(|r| r.outcome.is_failure()).collect();
    let first = failed.first()?;
    let message = if failed.len() == 1 {
        let why = first
            .detail
            .as_deref()
            .and_then(|d| d.lines().next())
            .unwrap_or("")
            .trim_end_matches(':');
        match first.outcome {
            RunOutcome::NotStarted => format!("{} did not start: {why}", first.repo),
            _ => format!("{}: {why}", first.repo),
        }
    } else {
        let names: Vec<&str> = failed.iter().map(|r| r.repo.as_str()).collect();
        format!(
            "{} of {} failed: {}",
            failed.len(),
            crate::ops::count(repos.len(), "repository", "repositories"),
            names.join(", ")
        )
    };
    let names: Vec<&str> = failed.iter().map(|r| r.repo.as_str()).collect();
    Some(
        Error::new(Code::HookFailed, message)
            .with_details(serde_json::json!({ "workspace": ws.name, "repos": names }))
            .with_fix(if one_command {
                "The last lines of each failed process are shown under it (in machine mode: its `detail`)".to_string()
            } else {
                format!(
                    "The last lines of each failed process are shown under it (in machine mode: its `detail`): fix its {FILE_NAME} `run`/`pre_run` command or what it runs"
                )
            }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_only_plain_first_words() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("dev.sh");
        crate::fsx::write_atomic(&script, b"#!/bin/sh\necho hi\n").unwrap();
        let path = Some(OsStr::new("/bin:/usr/bin"));
        let why = cannot_start("./dev.sh --port 3", dir.path(), path).unwrap();
        assert!(why.contains("not executable"), "{why}");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(cannot_start("PORT=3 ./dev.sh", dir.path(), path), None);
        let why = cannot_start("./nope", dir.path(), path).unwrap();
        assert!(why.contains("does not exist"), "{why}");
        let why = cannot_start("no-such-program-gw --x", dir.path(), path).unwrap();
        assert!(why.contains("not found on PATH"), "{why}");
        assert_eq!(cannot_start("sh -c 'exit 0'", dir.path(), path), None);
        // The shell decides about builtins, quoting and expansions.
        for c in [
            "cd app && ./x",
            "\"$HOME/x\"",
            "echo hi",
            "exec ./nope",
            "(sleep 1)",
        ] {
            assert_eq!(cannot_start(c, dir.path(), path), None, "{c}");
        }
        // Without a PATH, bare names are not judged.
        assert_eq!(cannot_start("no-such-program-gw", dir.path(), None), None);
    }
}
