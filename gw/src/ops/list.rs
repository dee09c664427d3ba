//! `gw list`: the workspaces in `state.json`; with `--status`, a summary of each one's
//! worktrees. Without `--status` no repository is opened.

use std::path::PathBuf;

use serde::Serialize;

use crate::action::NextAction;
use crate::error::Result;
use crate::git;
use crate::ops::Ctx;
use crate::parallel;
use crate::state::{RepoEntry, Workspace};

#[derive(Debug, Serialize)]
pub struct ListReport {
    pub workspaces: Vec<Workspace>,
    pub count: usize,
}

impl ListReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        match self.workspaces.first() {
            Some(ws) => vec![NextAction::read(
                format!("Inspect workspace {}", ws.name),
                &["gw", "status", &ws.name, "--format", "json"],
            )],
            None => vec![NextAction::read(
                "List repositories a workspace can use",
                &["gw", "repos", "--format", "json"],
            )],
        }
    }
}

pub fn list(ctx: &Ctx<'_>) -> Result<ListReport> {
    ctx.config()?;
    let state = ctx.state()?;
    Ok(ListReport {
        count: state.workspaces.len(),
        workspaces: state.workspaces,
    })
}

/// A workspace with its worktrees summarised.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub name: String,
    pub branch: String,
    /// Number of repositories.
    pub repos: usize,
    /// `"2 clean, 1 modified, 1 error"`, or `"empty"`.
    pub status: String,
    pub path: PathBuf,
    pub clean: usize,
    pub modified: usize,
    pub errors: usize,
    pub created_at: String,
}

#[derive(Debug, Serialize)]
pub struct ListStatusReport {
    pub workspaces: Vec<Summary>,
    pub count: usize,
}

/// `gw list --status`: every worktree of every workspace is checked in parallel.
pub fn list_status(ctx: &Ctx<'_>) -> Result<ListStatusReport> {
    ctx.config()?;
    let state = ctx.state()?;
    let all: Vec<&RepoEntry> = state.workspaces.iter().flat_map(|w| &w.repos).collect();
    let dirty: Vec<Option<bool>> = parallel::map(&all, |r| {
        git::Repo::open(&r.worktree_path)
            .and_then(|repo| repo.changes())
            .ok()
            .map(|c| !c.is_clean())
    });
    let mut results = dirty.into_iter();
    let workspaces: Vec<Summary> = state
        .workspaces
        .iter()
        .map(|w| {
            let (mut clean, mut modified, mut errors) = (0, 0, 0);
            for _ in &w.repos {
                match results.next().flatten() {
                    Some(false) => clean += 1,
                    Some(true) => modified += 1,
                    None => errors += 1,
                }
            }
            let mut parts = Vec::new();
            for (n, label) in [(clean, "clean"), (modified, "modified"), (errors, "error")] {
                if n > 0 {
                    parts.push(format!("{n} {label}"));
                }
            }
            Summary {
                name: w.name.clone(),
                branch: w.branch.clone(),
                repos: w.repos.len(),
                status: if parts.is_empty() {
                    "empty".into()
                } else {
                    parts.join(", ")
                },
                path: w.path.clone(),
                clean,
                modified,
                errors,
                created_at: w.created_at.clone(),
            }
        })
        .collect();
    Ok(ListStatusReport {
        count: workspaces.len(),
        workspaces,
    })
}

/// `gw ws show NAME`.
#[derive(Debug, Serialize)]
pub struct ShowReport {
    pub workspace: Workspace,
}

pub fn show(ctx: &Ctx<'_>, name: Option<&str>) -> Result<ShowReport> {
    ctx.config()?;
    let state = ctx.state()?;
    let ws = crate::ops::resolve::workspace(&state, name, &ctx.env.cwd)?;
    Ok(ShowReport {
        workspace: ws.clone(),
    })
}
