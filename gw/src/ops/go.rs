//! `gw go`: the path of a workspace (for the shell wrapper to `cd` into), or with `--back`
//! the directory holding its source repositories.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::HookKind;
use crate::error::{Code, Error, Result};
use crate::ops::hooks::{self, Vars};
use crate::ops::{Ctx, delete, resolve};

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct GoReport {
    /// The workspace, or `null` for `--back` outside a workspace.
    pub workspace: Option<String>,
    pub path: PathBuf,
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// The shell integration takes the shell there: the path is not printed.
    #[serde(skip)]
    pub integrated: bool,
}

/// The target of `gw go NAME`.
pub fn go(ctx: &Ctx<'_>, name: &str) -> Result<GoReport> {
    ctx.config()?;
    let state = ctx.state()?;
    let ws = resolve::by_name(&state, name)?;
    resolve::require_dir(ws)?;
    Ok(GoReport {
        workspace: Some(ws.name.clone()),
        path: ws.path.clone(),
        warnings: Vec::new(),
        integrated: false,
    })
}

/// Where `gw go --back` can lead: the parent directories of the workspace's source
/// repositories (the workspace named, or the one containing the current directory),
/// de-duplicated. Outside any workspace, the configured repo dirs.
pub fn back_candidates(ctx: &Ctx<'_>, name: Option<&str>) -> Result<Vec<PathBuf>> {
    let config = ctx.config()?;
    let state = ctx.state()?;
    let ws = match name {
        Some(n) => Some(resolve::by_name(&state, n)?),
        None => state.containing(&ctx.env.cwd),
    };
    let mut out: Vec<PathBuf> = Vec::new();
    let parents: Vec<PathBuf> = match ws {
        Some(ws) => ws
            .repos
            .iter()
            .filter_map(|r| r.source_repo.parent().map(PathBuf::from))
            .collect(),
        None => config.repo_dirs.clone(),
    };
    for p in parents {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if out.is_empty() {
        return Err(
            Error::new(Code::RepoNotFound, "no repository directory to go back to")
                .with_fix("Run `gw add-dir <path>` to configure one"),
        );
    }
    Ok(out)
}

/// `gw go -c` on its own.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CloseReport {
    /// The workspace being left, if the current directory is in one.
    pub workspace: Option<String>,
    /// Always `on_close`.
    pub hook: &'static str,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// `gw go -c`: fires the `on_close` hook for the workspace being left.
pub fn close(ctx: &Ctx<'_>) -> Result<Option<String>> {
    let config = ctx.config()?;
    let state = ctx.state()?;
    let Some(hook) = config.hooks.on_close.as_ref().filter(|_| !ctx.no_hooks) else {
        return Err(
            Error::usage("required lifecycle hook not configured: on_close")
                .with_fix("Add `[hooks] on_close = \"…\"` to config.toml"),
        );
    };
    let vars = state
        .containing(&ctx.env.cwd)
        .map(|ws| Vars::of(ctx, ws))
        .unwrap_or_default();
    let cwd = ctx.env.cwd.clone();
    hooks::run_global(ctx, Some(hook), HookKind::OnClose, &vars, &cwd)
}

/// `gw go -d`: deletes the workspace the current directory is in, unless it is `target`.
pub fn delete_current(ctx: &Ctx<'_>, target: Option<&str>, force: bool) -> Result<Vec<String>> {
    let state = ctx.state()?;
    let current = state.containing(&ctx.env.cwd).ok_or_else(|| {
        Error::new(
            Code::WorkspaceNotFound,
            "--delete needs to be run from inside the workspace to delete",
        )
    })?;
    if Some(current.name.as_str()) == target {
        return Err(Error::usage(format!(
            "refusing to delete `{}`: it is the workspace you are going to",
            current.name
        )));
    }
    let report = delete::delete(
        ctx,
        delete::DeleteOptions {
            names: vec![current.name.clone()],
            force,
            purge: false,
            expect: None,
        },
    )?;
    let warnings = report.warnings.clone();
    match report.into_error() {
        Some(e) => Err(e),
        None => Ok(warnings),
    }
}
