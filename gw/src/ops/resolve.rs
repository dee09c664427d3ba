//! Finding the workspace a command is about: by name, or by the current directory.

use std::path::Path;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::ops::Ctx;
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
    state.find(name).ok_or_else(|| not_found(name))
}

pub fn not_found(name: &str) -> Error {
    Error::new(
        Code::WorkspaceNotFound,
        format!("no workspace named `{name}`"),
    )
    .with_fix("Run `gw list` to see workspace names")
    .with_details(serde_json::json!({ "workspace": name }))
    .with_action(list_action())
}

fn list_action() -> NextAction {
    NextAction::read("List workspaces", &["gw", "list", "--format", "json"])
}
