//! Finding the workspace a command is about: by name, or by the current directory.

use std::path::Path;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::ops::{Ctx, names};
use crate::state::{State, Workspace};

/// The workspace named `name`, or when `name` is `None`, the one containing `cwd`
/// (the deepest, when workspaces are nested).
pub fn workspace<'s>(state: &'s State, name: Option<&str>, cwd: &Path) -> Result<&'s Workspace> {
    match name {
        Some(n) => by_name(state, n),
        None => state.containing(cwd).ok_or_else(|| {
            let e = if cwd.exists() {
                Error::new(Code::WorkspaceNotFound, "not inside a workspace")
            } else {
                Error::new(
                    Code::WorkspaceNotFound,
                    format!(
                        "not inside a workspace: the current directory `{}` no longer exists",
                        cwd.display()
                    ),
                )
            };
            e.with_fix("Provide a workspace name or cd into a workspace")
                .with_action(list_action())
        }),
    }
}

/// The name of the workspace a command is about (see [`workspace`]), as the state has it
/// now. Commands lock that name and then read the state again.
pub fn name(ctx: &Ctx<'_>, name: Option<&str>) -> Result<String> {
    Ok(workspace(&ctx.state()?, name, &ctx.env.cwd)?.name.clone())
}

pub fn by_name<'s>(state: &'s State, name: &str) -> Result<&'s Workspace> {
    state
        .find(name)
        .ok_or_else(|| not_found_among(name, &state.names()))
}

/// `WORKSPACE_NOT_FOUND` for `name`, suggesting the nearest of `known` (the workspaces).
pub fn not_found_among(name: &str, known: &[String]) -> Error {
    let suggestions = names::nearest(name, known);
    Error::new(
        Code::WorkspaceNotFound,
        format!("no workspace named `{name}`"),
    )
    .with_fix(names::did_you_mean(
        &suggestions,
        "Run `gw list` to see workspace names",
    ))
    .with_details(serde_json::json!({ "workspace": name, "suggestions": suggestions }))
    .with_action(list_action())
}

pub fn not_found(name: &str) -> Error {
    not_found_among(name, &[])
}

fn list_action() -> NextAction {
    NextAction::read("List workspaces", &["gw", "list", "--format", "json"])
}

/// `REPO_NOT_FOUND`: workspace `ws` has no repository `name` (`-r` of env, run,
/// remove-repo); suggests the nearest of its repositories.
pub fn repo_not_in(ws: &Workspace, name: &str) -> Error {
    let known: Vec<String> = ws.repos.iter().map(|r| r.repo_name.clone()).collect();
    let suggestions = names::nearest(name, &known);
    Error::new(
        Code::RepoNotFound,
        format!("workspace `{}` has no repository `{name}`", ws.name),
    )
    .with_details(serde_json::json!({
        "workspace": ws.name,
        "repo": name,
        "repos": known,
        "suggestions": suggestions,
    }))
    .with_fix(names::did_you_mean(
        &suggestions,
        &format!("Its repositories: {}", known.join(", ")),
    ))
}

/// `WORKSPACE_DIR_MISSING` unless the directory of `ws` exists: a workspace whose directory
/// was removed by hand is not one to go to, show, run, sync or reset; `gw doctor --fix`
/// drops its entry.
pub fn require_dir(ws: &Workspace) -> Result<()> {
    if crate::fsx::is_dir(&ws.path) {
        return Ok(());
    }
    Err(Error::new(
        Code::WorkspaceDirMissing,
        format!(
            "the directory of workspace `{}` is gone: `{}`",
            ws.name,
            ws.path.display()
        ),
    )
    .with_fix("Run `gw doctor` to see what is left of it; `gw doctor --fix` drops the stale entry (then `gw create` can make it again)")
    .with_details(serde_json::json!({ "workspace": ws.name, "path": ws.path }))
    .with_action(NextAction::read(
        "See what is left of it",
        &["gw", "doctor", "--format", "json"],
    ))
    .with_action(NextAction::write(
        "Drop the stale entry",
        &["gw", "doctor", "--fix", "--format", "json"],
    )))
}
