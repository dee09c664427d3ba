//! `gw status`: the live state of every worktree in a workspace, read in-process with gix,
//! repositories in parallel.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::config::{Config, RepoConfig};
use crate::error::Result;
use crate::fsx;
use crate::git;
use crate::ops::ports::{self, PortStatus, Stack};
use crate::ops::{Ctx, resolve};
use crate::parallel;
use crate::state::{Blueprint, RepoEntry, SetupStatus, Source, Workspace};

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// The workspace's port slot; `null` until it has one (see `unknown`).
    pub slot: Option<u32>,
    /// Each repository's named ports in this workspace and whether something listens on
    /// them (the variables `gw env` prints).
    pub ports: Vec<PortStatus>,
    pub port_count: usize,
    /// For `slot` (and so `ports`) when they cannot be told: why.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown: BTreeMap<&'static str, String>,
}

/// One worktree's live state.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    pub state: RepoState,
    /// Number of changed paths (staged, modified, untracked and conflicted).
    pub changed: usize,
    pub staged: usize,
    pub modified: usize,
    pub untracked: usize,
    pub conflicted: usize,
    /// `git status --short` lines.
    pub changes: Vec<String>,
    /// Paths that could not be read (a directory that cannot be opened or listed, a file
    /// that cannot be read): git warns and leaves them out of `changes`; what they hold is
    /// unknown, so the worktree is not `clean` and `gw delete` keeps it without `--force`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<UnreadablePath>,
    /// What git would warn about while answering (a clean filter that could not run, its
    /// file compared unfiltered).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Commits on HEAD not on the base; `null` when it cannot be determined.
    pub ahead: Option<usize>,
    pub behind: Option<usize>,
    pub base_branch: Option<String>,
    pub remote: Option<String>,
    /// Whether the repository's `.grove.toml` setup commands succeeded when the workspace
    /// was created.
    pub preparation: Preparation,
    /// Why the state could not be read.
    pub error: Option<String>,
    /// For each field that is `null` because it could not be determined, the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown: BTreeMap<&'static str, String>,
}

/// A path that could not be read, relative to the worktree (a directory ends in `/`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct UnreadablePath {
    pub path: String,
    pub reason: String,
}

/// What a worktree looks like right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RepoState {
    /// No uncommitted changes.
    Clean,
    /// Staged, modified, conflicted or untracked files, or paths that could not be read.
    Dirty,
    /// The worktree directory does not exist.
    Missing,
    /// The worktree could not be read (see `error`).
    Error,
}

/// How a repository's setup commands ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PrepStatus {
    Ready,
    Failed,
    /// No setup commands, or none recorded.
    None,
}

/// The recorded result of a repository's setup commands.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Preparation {
    pub status: PrepStatus,
    /// For `failed`: the command and the last lines of its output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Preparation {
    fn of(r: &RepoEntry) -> Preparation {
        match &r.setup {
            Some(s) if s.status == SetupStatus::Ready => Preparation {
                status: PrepStatus::Ready,
                detail: None,
            },
            Some(s) => Preparation {
                status: PrepStatus::Failed,
                detail: s.detail.clone(),
            },
            None => Preparation {
                status: PrepStatus::None,
                detail: None,
            },
        }
    }
}

impl StatusReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        let mut actions = Vec::new();
        if self.repos.iter().any(|r| r.behind.is_some_and(|b| b > 0)) {
            actions.push(NextAction::write(
                "Rebase the repositories that are behind their base",
                &["gw", "sync", &self.workspace, "--format", "json"],
            ));
        }
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
    let config = ctx.config()?;
    let state = ctx.state()?;
    let ws = resolve::workspace(&state, name, &ctx.env.cwd)?;
    resolve::require_dir(ws)?;
    Ok(of(&config, ws))
}

/// The status of `ws`, every repository read in parallel, and its ports (`config` says
/// where they are).
pub fn of(config: &Config, ws: &Workspace) -> StatusReport {
    // From inside the workspace directory each worktree is read by a short relative path.
    let inside = fsx::Inside::enter(&ws.path);
    let repos = parallel::map(&ws.repos, |r| {
        let via = inside
            .as_ref()
            .and_then(|i| i.relative(&ws.path, &r.worktree_path));
        repo_status(r, via)
    });
    drop(inside);
    let (ports, unknown) = match Stack::recorded(config, ws) {
        Ok(stack) => (ports::look(&stack.ports), BTreeMap::new()),
        Err(why) => (Vec::new(), ports::unknown(ws, why)),
    };
    StatusReport {
        workspace: ws.name.clone(),
        path: ws.path.clone(),
        branch: ws.branch.clone(),
        source: ws.source.clone(),
        blueprint: ws.blueprint.clone(),
        count: repos.len(),
        repos,
        slot: ws.slot,
        port_count: ports.len(),
        ports,
        unknown,
    }
}

/// The live state of one worktree, reached through `via` when given (a path relative to
/// the current directory, see `fsx::Inside`).
pub fn repo_status(r: &RepoEntry, via: Option<&Path>) -> RepoStatus {
    let mut s = RepoStatus {
        repo: r.repo_name.clone(),
        path: r.worktree_path.clone(),
        source_repo: r.source_repo.clone(),
        branch: None,
        detached: false,
        recorded_branch: r.branch.clone(),
        head: None,
        in_progress: None,
        state: RepoState::Error,
        changed: 0,
        staged: 0,
        modified: 0,
        untracked: 0,
        conflicted: 0,
        changes: Vec::new(),
        unreadable: Vec::new(),
        warnings: Vec::new(),
        ahead: None,
        behind: None,
        base_branch: None,
        remote: None,
        preparation: Preparation::of(r),
        error: None,
        unknown: BTreeMap::new(),
    };
    let unknown_all = |s: &mut RepoStatus, why: &str| {
        for f in ["head", "ahead", "behind", "base_branch"] {
            s.unknown.insert(f, why.to_string());
        }
    };
    if !r.worktree_path.is_dir() {
        s.state = RepoState::Missing;
        s.error = Some("worktree directory is missing".into());
        unknown_all(&mut s, "the worktree directory is missing");
        return s;
    }
    let base = RepoConfig::load(&r.source_repo)
        .ok()
        .and_then(|c| c.base_branch);
    let via = via.unwrap_or(&r.worktree_path);
    match git::worktree_status(&r.worktree_path, via, base.as_deref()) {
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
                RepoState::Clean
            } else {
                RepoState::Dirty
            };
            s.changes = st.changes.lines;
            s.unreadable = st
                .changes
                .unreadable
                .into_iter()
                .map(|u| UnreadablePath {
                    path: u.path,
                    reason: u.reason,
                })
                .collect();
            s.warnings = st.changes.warnings;
            s.ahead = st.ahead_behind.map(|(a, _)| a);
            s.behind = st.ahead_behind.map(|(_, b)| b);
            if s.head.is_none() {
                s.unknown
                    .insert("head", "the branch has no commits yet".into());
            }
            match &st.base {
                None => {
                    let why = match &base {
                        Some(b) => format!(
                            "the configured base branch `{b}` exists neither on origin nor locally"
                        ),
                        None => {
                            "no origin/HEAD, origin/main, origin/master, main or master".to_string()
                        }
                    };
                    s.unknown.insert("base_branch", why.clone());
                    s.unknown.insert("ahead", format!("no base branch: {why}"));
                    s.unknown.insert("behind", format!("no base branch: {why}"));
                }
                Some(_) if s.ahead.is_none() => {
                    s.unknown.insert("ahead", "HEAD has no commits".into());
                    s.unknown.insert("behind", "HEAD has no commits".into());
                }
                Some(_) => {}
            }
            s.base_branch = st.base.map(|b| b.name);
            s.remote = st.remote;
        }
        Err(e) => {
            unknown_all(&mut s, &e.to_string());
            s.error = Some(e.to_string());
        }
    }
    s
}
