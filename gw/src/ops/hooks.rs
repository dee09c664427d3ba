//! Running user commands: global lifecycle hooks and a repository's `.grove.toml` commands.
//!
//! Their output never reaches stdout: it is captured, or streamed line by line through
//! [`Events::output`], which the output layer writes to stderr.

use std::path::Path;
use std::sync::Arc;

use crate::config::{Hook, HookKind, OnFailure};
use crate::duration;
use crate::error::{Code, Error, Result};
use crate::ops::Ctx;
use crate::ops::ports::{Placeholders, Ports, Stack};
use crate::proc::{self, Cmd, Status};
use crate::state::Workspace;

/// What a command run for a workspace is told: the values substituted into a hook's
/// `{placeholders}`, and its environment ([`Vars::environment`]).
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub name: String,
    pub path: String,
    pub branch: String,
    pub source_url: String,
    pub source_ref: String,
    pub source_title: String,
    /// The workspace's slot and ports, or why they could not be laid out.
    pub ports: Ports,
}

impl Vars {
    /// The values of workspace `ws`, with its ports (see [`Stack::of`]). When they cannot
    /// be laid out (a `.grove.toml` or `config.toml` that does not allow it), commands run
    /// without them and a warning says why; a placeholder that needs them fails.
    pub fn of(ctx: &Ctx<'_>, ws: &Workspace) -> Vars {
        let stack = ctx.config().and_then(|c| Stack::of(ctx, &c, ws));
        if let Err(e) = &stack {
            ctx.events.output(
                "warning: ",
                &format!(
                    "workspace `{}`: commands run without GROVE_SLOT and GROVE_PORT_*: {}",
                    ws.name, e.message
                ),
            );
        }
        Vars {
            ports: Some(stack.map(Arc::new).map_err(|e| e.message.clone())),
            ..Vars::recorded(ws)
        }
    }

    /// The values recorded for `ws`, without its ports.
    pub fn recorded(ws: &Workspace) -> Vars {
        let src = ws.source.as_ref();
        Vars {
            name: ws.name.clone(),
            path: ws.path.to_string_lossy().into_owned(),
            branch: ws.branch.clone(),
            source_url: src.map(|s| s.url.clone()).unwrap_or_default(),
            source_ref: src.map(|s| s.reference.clone()).unwrap_or_default(),
            source_title: src.map(|s| s.title.clone()).unwrap_or_default(),
            ports: None,
        }
    }

    /// The environment of a command run for the workspace — in repository `repo`'s
    /// worktree, if given: `GROVE_WORKSPACE`, `GROVE_WORKSPACE_PATH`, `GROVE_BRANCH`,
    /// `GROVE_REPO` and `GROVE_WORKTREE`, then `GROVE_SLOT`, `GROVE_PORT_<REPO>_<NAME>` for
    /// every port of the workspace and `PORT` ([`Stack::env`]). Hooks, `.grove.toml`
    /// commands, `gw run` and `gw env` all take it from here.
    pub fn environment(&self, repo: Option<(&str, &Path)>) -> Vec<(String, String)> {
        let mut vars = vec![
            ("GROVE_WORKSPACE".to_string(), self.name.clone()),
            ("GROVE_WORKSPACE_PATH".to_string(), self.path.clone()),
            ("GROVE_BRANCH".to_string(), self.branch.clone()),
        ];
        if let Some((name, worktree)) = repo {
            vars.push(("GROVE_REPO".into(), name.to_string()));
            vars.push((
                "GROVE_WORKTREE".into(),
                worktree.to_string_lossy().into_owned(),
            ));
        }
        if let Some(Ok(stack)) = &self.ports {
            vars.extend(stack.env(repo.map(|(name, _)| name)));
        }
        vars
    }

    /// Gives `cmd` the grove directory's variables
    /// ([`GroveHome::child_env`](crate::home::GroveHome::child_env)) and the
    /// workspace's ([`Vars::environment`]), none of the latter inherited from gw's own.
    fn set_environment(&self, ctx: &Ctx<'_>, cmd: &mut Cmd, repo: Option<(&str, &Path)>) {
        for k in &ctx.env.inherited_workspace_vars {
            cmd.env_remove(k);
        }
        cmd.envs(ctx.home.child_env()).envs(self.environment(repo));
    }

    /// What a `.grove.toml` command's `{workspace}`, `{slot}` and `{port.<repo>.<name>}`
    /// stand for.
    pub fn placeholders(&self) -> Placeholders<'_> {
        Placeholders {
            workspace: &self.name,
            stack: &self.ports,
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
    vars.set_environment(ctx, &mut cmd, None);
    cmd.timeout(hook.timeout);
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

/// One of a repository's `.grove.toml` commands, its placeholders filled in
/// ([`Vars::placeholders`]), ready to run with `sh -c` in its worktree `cwd`, with the
/// grove directory's variables and the workspace's set. Fails, saying why, when a
/// placeholder cannot be filled.
pub fn repo_command(
    ctx: &Ctx<'_>,
    command: &str,
    repo: &str,
    cwd: &Path,
    vars: &Vars,
) -> std::result::Result<Cmd, String> {
    let command = vars.placeholders().expand(command)?;
    Ok(repo_shell(ctx, &command, repo, cwd, vars))
}

/// `command` as it is (no placeholders: `gw run -- CMD`, typed by the user, whose
/// environment has the same values), run with `sh -c` in repository `repo`'s worktree
/// `cwd` with the grove directory's variables and the workspace's set.
pub fn repo_shell(ctx: &Ctx<'_>, command: &str, repo: &str, cwd: &Path, vars: &Vars) -> Cmd {
    let mut cmd = Cmd::shell(command, cwd);
    vars.set_environment(ctx, &mut cmd, Some((repo, cwd)));
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
        let cmd = match repo_command(ctx, command, repo, cwd, vars) {
            Ok(cmd) => cmd,
            Err(why) => {
                return Err(CommandFailure {
                    command: command.clone(),
                    status: why,
                    tail: String::new(),
                });
            }
        };
        let result = cmd.stream(&mut |_, line| {
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
