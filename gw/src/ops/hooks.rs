//! Running user commands: global lifecycle hooks and a repository's `.grove.toml` commands.
//!
//! Their output never reaches stdout: it is captured, or streamed line by line through
//! [`Events::output`], which the output layer writes to stderr.

use std::path::Path;

use crate::config::{Hook, HookKind, OnFailure};
use crate::duration;
use crate::error::{Code, Error, Result};
use crate::home::GroveHome;
use crate::ops::Ctx;
use crate::proc::{self, Cmd, Status};
use crate::state::Workspace;

/// Values substituted into a hook's `{placeholders}`.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub name: String,
    pub path: String,
    pub branch: String,
    pub source_url: String,
    pub source_ref: String,
    pub source_title: String,
}

impl Vars {
    pub fn of(ws: &Workspace) -> Vars {
        let src = ws.source.as_ref();
        Vars {
            name: ws.name.clone(),
            path: ws.path.to_string_lossy().into_owned(),
            branch: ws.branch.clone(),
            source_url: src.map(|s| s.url.clone()).unwrap_or_default(),
            source_ref: src.map(|s| s.reference.clone()).unwrap_or_default(),
            source_title: src.map(|s| s.title.clone()).unwrap_or_default(),
        }
    }

    /// Replaces `{name}`, `{path}`, `{branch}`, `{source_url}`, `{source_ref}` and
    /// `{source_title}` with the value in single quotes, or with nothing when empty.
    pub fn expand(&self, command: &str) -> String {
        let pairs = [
            ("{name}", &self.name),
            ("{path}", &self.path),
            ("{branch}", &self.branch),
            ("{source_url}", &self.source_url),
            ("{source_ref}", &self.source_ref),
            ("{source_title}", &self.source_title),
        ];
        let mut out = command.to_string();
        for (key, value) in pairs {
            let quoted = if value.is_empty() {
                String::new()
            } else {
                format!("'{}'", value.replace('\'', r"'\''"))
            };
            out = out.replace(key, &quoted);
        }
        out
    }
}

/// Runs the global hook `kind` if it is configured (and `--no-hooks` was not given).
///
/// `Ok(None)`: not configured or succeeded. `Ok(Some(warning))`: failed with
/// `on_failure = "warn"`. `Err(HOOK_FAILED)`: failed with `on_failure = "abort"`.
pub fn run_global(
    ctx: &Ctx<'_>,
    hook: Option<&Hook>,
    kind: HookKind,
    vars: &Vars,
    cwd: &Path,
) -> Result<Option<String>> {
    let Some(hook) = hook.filter(|_| !ctx.no_hooks) else {
        return Ok(None);
    };
    let label = kind.key();
    let command = vars.expand(&hook.command);
    let cwd = if cwd.is_dir() {
        cwd
    } else {
        ctx.env.home.as_path()
    };
    let mut cmd = Cmd::shell(&command, cwd);
    cmd.envs(ctx.home.child_env())
        .env("GROVE_WORKSPACE", &vars.name)
        .env("GROVE_WORKSPACE_PATH", &vars.path)
        .env("GROVE_BRANCH", &vars.branch)
        .timeout(hook.timeout);
    let prefix = format!("[{label}] ");
    if hook.stream {
        ctx.events.progress(&format!("running {label} hook"));
    }
    let out = cmd.stream(&mut |_, line| {
        if hook.stream {
            ctx.events.output(&prefix, line);
        }
    })?;
    if out.success() {
        return Ok(None);
    }
    if !hook.stream {
        // Captured output is shown only when the hook failed.
        for line in out.stdout.lines().chain(out.stderr.lines()) {
            ctx.events.output(&prefix, line);
        }
    }
    let why = match out.status {
        Status::TimedOut => format!(
            "timed out after {}",
            duration::format_go(hook.timeout.unwrap_or_default())
        ),
        s => s.to_string(),
    };
    let message = format!("{label} hook failed ({why})");
    match hook.on_failure {
        OnFailure::Warn => Ok(Some(message)),
        OnFailure::Abort => Err(Error::new(Code::HookFailed, message)
            .with_details(serde_json::json!({
                "hook": label,
                "command": command,
                "output": out.tail(),
            }))
            .with_fix(format!(
                "Fix the `{label}` hook in config.toml, or rerun with --no-hooks to skip it"
            ))),
    }
}

/// Why a repository command failed: the command and the last lines of its output.
#[derive(Debug, Clone)]
pub struct CommandFailure {
    pub command: String,
    pub status: String,
    pub tail: String,
}

impl CommandFailure {
    pub fn summary(&self) -> String {
        let tail = self.tail.trim();
        if tail.is_empty() {
            format!("`{}` failed ({})", self.command, self.status)
        } else {
            format!("`{}` failed ({}):\n{}", self.command, self.status, tail)
        }
    }
}

/// One of a repository's `.grove.toml` commands, ready to run with `sh -c` in its
/// worktree `cwd`, with `GROVE_WORKSPACE`, `GROVE_WORKSPACE_PATH`, `GROVE_BRANCH`,
/// `GROVE_REPO`, `GROVE_WORKTREE` and the grove directory's variables
/// ([`GroveHome::child_env`]) set.
pub fn repo_command(home: &GroveHome, command: &str, repo: &str, cwd: &Path, vars: &Vars) -> Cmd {
    let mut cmd = Cmd::shell(command, cwd);
    cmd.envs(home.child_env())
        .env("GROVE_WORKSPACE", &vars.name)
        .env("GROVE_WORKSPACE_PATH", &vars.path)
        .env("GROVE_BRANCH", &vars.branch)
        .env("GROVE_REPO", repo)
        .env("GROVE_WORKTREE", cwd);
    cmd
}

/// Runs a repository's commands (`setup`, `teardown`, …) one after another in `cwd`,
/// stopping at the first failure. With `stream`, output lines go to `Events::output`
/// prefixed `[<repo>] `.
pub fn run_repo_commands(
    ctx: &Ctx<'_>,
    repo: &str,
    commands: &[String],
    cwd: &Path,
    vars: &Vars,
    stream: bool,
) -> std::result::Result<(), CommandFailure> {
    let prefix = format!("[{repo}] ");
    for command in commands {
        let result = repo_command(&ctx.home, command, repo, cwd, vars).stream(&mut |_, line| {
            if stream {
                ctx.events.output(&prefix, line);
            }
        });
        match result {
            Ok(out) if out.success() => {}
            Ok(out) => {
                return Err(CommandFailure {
                    command: command.clone(),
                    status: out.status.to_string(),
                    tail: proc::tail_lines(&format!("{}{}", out.stdout, out.stderr), 10),
                });
            }
            Err(e) => {
                return Err(CommandFailure {
                    command: command.clone(),
                    status: e.to_string(),
                    tail: String::new(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_quoted_and_empty_is_nothing() {
        let v = Vars {
            name: "feat-x".into(),
            path: "/w/it's".into(),
            branch: "feat/x".into(),
            ..Vars::default()
        };
        assert_eq!(
            v.expand("echo {name} {path} [{source_url}]"),
            r"echo 'feat-x' '/w/it'\''s' []"
        );
        let out = Cmd::shell(&v.expand("printf '%s|' {path} {branch}"), Path::new("/"))
            .check()
            .unwrap();
        assert_eq!(out.stdout, "/w/it's|feat/x|");
    }
}
