//! `gw status`: the live state of every worktree in a workspace, read in-process with gix,
//! repositories in parallel.

use std::path::PathBuf;

use serde::Serialize;

use crate::action::NextAction;
use crate::config::RepoConfig;
use crate::error::Result;
use crate::git;
use crate::ops::{Ctx, resolve};
use crate::parallel;
use crate::state::{Blueprint, RepoEntry, SetupRecord, Source, Workspace};

#[derive(Debug, Clone, Serialize)]
pub struct StatusReport {
    pub workspace: String,
    pub path: PathBuf,
    pub branch: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blueprint: Option<Blueprint>,
    pub repos: Vec<RepoStatus>,
    pub count: usize,
}

/// One worktree's live state.
#[derive(Debug, Clone, Serialize)]
pub struct RepoStatus {
    pub repo: String,
    /// The worktree.
    pub path: PathBuf,
    pub source_repo: PathBuf,
    /// The branch checked out now; `null` when HEAD is detached.
    pub branch: Option<String>,
    pub detached: bool,
    /// The branch recorded when the workspace was created.
    pub recorded_branch: String,
    pub head: Option<String>,
    /// An operation in progress (`rebase`, `merge`, …).
    pub in_progress: Option<String>,
    /// `clean`, `dirty`, `missing` or `error`.
    pub state: &'static str,
    /// Number of changed paths (staged, modified, untracked and conflicted).
    pub changed: usize,
    pub staged: usize,
    pub modified: usize,
    pub untracked: usize,
    pub conflicted: usize,
    /// `git status --short` lines.
    pub changes: Vec<String>,
    /// Commits on HEAD not on the base; `null` when it cannot be determined.
    pub ahead: Option<usize>,
    pub behind: Option<usize>,
    pub base_branch: Option<String>,
    pub remote: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<SetupRecord>,
    /// Why the state could not be read.
    pub error: Option<String>,
}

impl StatusReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        let mut actions = Vec::new();
        if let Some(r) = self.repos.iter().find(|r| r.changed > 0) {
            let path = r.path.to_string_lossy();
            actions.push(NextAction::read(
                format!("Show the uncommitted changes in {}", r.repo),
                &["git", "-C", &path, "status"],
            ));
        }
        actions
    }
}

pub fn status(ctx: &Ctx<'_>, name: Option<&str>) -> Result<StatusReport> {
    ctx.config()?;
    let state = ctx.state()?;
    let ws = resolve::workspace(&state, name, &ctx.env.cwd)?;
    Ok(of(ws))
}

/// The status of `ws`, every repository read in parallel.
pub fn of(ws: &Workspace) -> StatusReport {
    let repos = parallel::map(&ws.repos, repo_status);
    StatusReport {
        workspace: ws.name.clone(),
        path: ws.path.clone(),
        branch: ws.branch.clone(),
        source: ws.source.clone(),
        blueprint: ws.blueprint.clone(),
        count: repos.len(),
        repos,
    }
}

pub fn repo_status(r: &RepoEntry) -> RepoStatus {
    let mut s = RepoStatus {
        repo: r.repo_name.clone(),
        path: r.worktree_path.clone(),
        source_repo: r.source_repo.clone(),
        branch: None,
        detached: false,
        recorded_branch: r.branch.clone(),
        head: None,
        in_progress: None,
        state: "error",
        changed: 0,
        staged: 0,
        modified: 0,
        untracked: 0,
        conflicted: 0,
        changes: Vec::new(),
        ahead: None,
        behind: None,
        base_branch: None,
        remote: None,
        setup: r.setup.clone(),
        error: None,
    };
    if !r.worktree_path.is_dir() {
        s.state = "missing";
        s.error = Some("worktree directory is missing".into());
        return s;
    }
    let base = RepoConfig::load(&r.source_repo)
        .ok()
        .and_then(|c| c.base_branch);
    match git::worktree_status(&r.worktree_path, base.as_deref()) {
        Ok(st) => {
            s.branch = st.head.branch;
            s.detached = st.head.detached;
            s.head = st.head.oid;
            s.in_progress = st.head.in_progress;
            s.changed = st.changes.count();
            s.staged = st.changes.staged;
            s.modified = st.changes.modified;
            s.untracked = st.changes.untracked;
            s.conflicted = st.changes.conflicted;
            s.state = if st.changes.is_clean() {
                "clean"
            } else {
                "dirty"
            };
            s.changes = st.changes.lines;
            s.ahead = st.ahead_behind.map(|(a, _)| a);
            s.behind = st.ahead_behind.map(|(_, b)| b);
            s.base_branch = st.base.map(|b| b.name);
            s.remote = st.remote;
        }
        Err(e) => s.error = Some(e.to_string()),
    }
    s
}
