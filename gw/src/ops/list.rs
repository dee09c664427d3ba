//! `gw list`: the workspaces in `state.json`; with `--status`, a summary of each one's
//! worktrees. Without `--status` no repository is opened.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::error::Result;
use crate::git;
use crate::ops::Ctx;
use crate::parallel;
use crate::state::{Blueprint, RepoEntry, Source, Workspace};

/// The workspaces as recorded; `result()` shows them as [`WorkspaceView`]s and `--json`
/// as the Go grove's state objects.
#[derive(Debug)]
pub struct ListReport {
    pub workspaces: Vec<Workspace>,
}

/// `gw list --format json`'s result.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ListView<'a> {
    pub workspaces: Vec<WorkspaceView<'a>>,
    pub count: usize,
}

// It borrows from the state it shows: `gw list` serialises a thousand of these, and
// copying every string first cost as much as reading the state file.
/// A workspace as machine-mode results show it: absolute paths, an RFC 3339 UTC
/// `created_at`, and counts beside lists.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct WorkspaceView<'a> {
    pub name: &'a str,
    pub path: &'a Path,
    pub branch: &'a str,
    /// RFC 3339, UTC; `null` when the recorded time cannot be read (see `unknown`).
    pub created_at: Option<String>,
    pub repos: Vec<RepoView<'a>>,
    pub repo_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'a Source>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blueprint: Option<&'a Blueprint>,
    /// For each field that is `null` because it could not be determined, the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown: BTreeMap<&'static str, String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RepoView<'a> {
    pub repo: &'a str,
    pub branch: &'a str,
    /// The worktree.
    pub path: &'a Path,
    pub source_repo: &'a Path,
    /// The branch existed before the workspace used it; deleting the workspace keeps it.
    pub preserve_branch: bool,
}

impl<'a> WorkspaceView<'a> {
    pub fn of(w: &'a Workspace) -> WorkspaceView<'a> {
        let created_at = crate::time::created_at_utc(&w.created_at);
        let mut unknown = BTreeMap::new();
        if created_at.is_none() {
            unknown.insert(
                "created_at",
                format!("unreadable recorded time {:?}", w.created_at),
            );
        }
        WorkspaceView {
            name: &w.name,
            path: &w.path,
            branch: &w.branch,
            created_at,
            repos: w
                .repos
                .iter()
                .map(|r| RepoView {
                    repo: &r.repo_name,
                    branch: &r.branch,
                    path: &r.worktree_path,
                    source_repo: &r.source_repo,
                    preserve_branch: r.preserve_branch,
                })
                .collect(),
            repo_count: w.repos.len(),
            source: w.source.as_ref(),
            blueprint: w.blueprint.as_ref(),
            unknown,
        }
    }
}

impl ListReport {
    pub fn view(&self) -> ListView<'_> {
        ListView {
            workspaces: self.workspaces.iter().map(WorkspaceView::of).collect(),
            count: self.workspaces.len(),
        }
    }

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
        workspaces: state.workspaces,
    })
}

/// A workspace with its worktrees summarised.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// RFC 3339, UTC; `null` when unreadable.
    pub created_at: Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
                created_at: crate::time::created_at_utc(&w.created_at),
            }
        })
        .collect();
    Ok(ListStatusReport {
        count: workspaces.len(),
        workspaces,
    })
}

/// `gw ws show NAME`: the workspace as recorded.
#[derive(Debug)]
pub struct ShowReport {
    pub workspace: Workspace,
}

/// `gw ws show --format json`'s result.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ShowView<'a> {
    pub workspace: WorkspaceView<'a>,
}

pub fn show(ctx: &Ctx<'_>, name: Option<&str>) -> Result<ShowReport> {
    ctx.config()?;
    let state = ctx.state()?;
    let ws = crate::ops::resolve::workspace(&state, name, &ctx.env.cwd)?;
    Ok(ShowReport {
        workspace: ws.clone(),
    })
}
