//! `gw delete`: remove workspaces, their worktrees and the branches grove created.
//!
//! Nothing that holds work is destroyed without `--force`: a worktree with uncommitted
//! changes, or a file in the workspace directory outside any worktree, makes the delete
//! refuse with `WORKTREE_DIRTY`; a branch whose commits exist on no other branch or remote
//! is kept (and reported). A branch that existed before grove used it is never deleted.
//! Every named workspace is attempted; the result says what happened to each.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::config::{HookKind, RepoConfig};
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::hooks::{self, Vars};
use crate::ops::{Ctx, Outcome, RepoResult, resolve};
use crate::parallel;
use crate::state::{RepoEntry, Workspace};

#[derive(Debug, Clone)]
pub struct DeleteOptions {
    pub names: Vec<String>,
    /// Discard uncommitted changes and delete branches holding unpushed commits.
    pub force: bool,
}

#[derive(Debug, Serialize)]
pub struct DeleteReport {
    pub deleted: Vec<Deletion>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub errors: Vec<Error>,
}

/// What happened to one workspace.
#[derive(Debug, Serialize)]
pub struct Deletion {
    pub name: String,
    pub path: PathBuf,
    /// `deleted`, or `failed` (see `error`).
    pub outcome: &'static str,
    pub repos: Vec<RepoResult>,
    /// The state entry was removed. False when something failed and the entry was kept
    /// so the delete can be retried.
    pub state_removed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<DeletionError>,
}

#[derive(Debug, Serialize)]
pub struct DeletionError {
    pub code: Code,
    pub message: String,
}

impl DeleteReport {
    /// The first failure, carrying the per-workspace results, when any workspace failed.
    pub fn into_error(self) -> Option<Error> {
        let mut errors = self.errors.into_iter();
        let first = errors.next()?;
        Some(first)
    }

    pub fn failure(&self) -> Option<&Error> {
        self.errors.first()
    }

    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "List the remaining workspaces",
            &["gw", "list", "--format", "json"],
        )]
    }
}

/// Deletes every named workspace, attempting all of them.
pub fn delete(ctx: &Ctx<'_>, opts: DeleteOptions) -> Result<DeleteReport> {
    let config = ctx.config()?;
    let mut names: Vec<String> = Vec::new();
    for n in opts
        .names
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
    {
        if !names.iter().any(|m| m == n) {
            names.push(n.to_string());
        }
    }
    if names.is_empty() {
        return Err(
            Error::usage("no workspace names given").with_fix("Name the workspaces to delete")
        );
    }
    let mut report = DeleteReport {
        deleted: Vec::new(),
        count: 0,
        warnings: Vec::new(),
        errors: Vec::new(),
    };
    for name in names {
        let state = ctx.state()?;
        let ws = match resolve::by_name(&state, &name) {
            Ok(ws) => ws.clone(),
            Err(e) => {
                report.deleted.push(Deletion {
                    name: name.clone(),
                    path: PathBuf::new(),
                    outcome: "failed",
                    repos: Vec::new(),
                    state_removed: false,
                    error: Some(DeletionError {
                        code: e.code,
                        message: e.message.clone(),
                    }),
                });
                report.errors.push(e);
                continue;
            }
        };
        let hook = config.hooks.get(HookKind::PreDelete);
        match delete_one(ctx, &ws, hook, opts.force, &mut report.warnings) {
            Ok(d) => {
                if d.outcome == "failed" {
                    let failed: Vec<&RepoResult> = d
                        .repos
                        .iter()
                        .filter(|r| r.outcome == Outcome::Failed)
                        .collect();
                    let e = Error::new(
                        Code::GitFailed,
                        format!(
                            "workspace `{}` was not fully deleted: {}",
                            ws.name,
                            failed.iter().map(|r| format!("{}: {}", r.repo, r.detail.as_deref().unwrap_or("failed"))).collect::<Vec<_>>().join("; ")
                        ),
                    )
                    .with_fix("Fix the problem and run `gw delete` again; the workspace entry was kept for the repositories that remain");
                    report.errors.push(e);
                }
                report.deleted.push(d);
            }
            Err(e) => {
                report.deleted.push(Deletion {
                    name: ws.name.clone(),
                    path: ws.path.clone(),
                    outcome: "failed",
                    repos: Vec::new(),
                    state_removed: false,
                    error: Some(DeletionError {
                        code: e.code,
                        message: e.message.clone(),
                    }),
                });
                report.errors.push(e);
            }
        }
    }
    report.count = report.deleted.len();
    if report.errors.len() > 1 {
        let all: Vec<_> = report
            .deleted
            .iter()
            .filter_map(|d| d.error.as_ref().map(|e| (d.name.clone(), e.code)))
            .collect();
        let first = &mut report.errors[0];
        if first.details.is_none() {
            first.details = Some(
                serde_json::json!({ "failed": all.iter().map(|(n, c)| serde_json::json!({"workspace": n, "code": c})).collect::<Vec<_>>() }),
            );
        }
    }
    Ok(report)
}

/// Per-repository facts gathered before anything is removed.
struct Inspection {
    exists: bool,
    source_exists: bool,
    changes: Option<Vec<String>>,
    error: Option<String>,
}

fn inspect(r: &RepoEntry) -> Inspection {
    let exists = r.worktree_path.is_dir();
    let source_exists = r.source_repo.is_dir();
    if !exists {
        return Inspection {
            exists,
            source_exists,
            changes: None,
            error: None,
        };
    }
    match git::Repo::open(&r.worktree_path).and_then(|repo| repo.changes()) {
        Ok(c) => Inspection {
            exists,
            source_exists,
            changes: Some(c.lines),
            error: None,
        },
        Err(e) => Inspection {
            exists,
            source_exists,
            changes: None,
            error: Some(e.to_string()),
        },
    }
}

/// Files in the workspace directory that belong to no worktree.
fn stray_files(ws: &Workspace) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(&ws.path) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !ws.repos.iter().any(|r| r.worktree_path == e.path()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn delete_one(
    ctx: &Ctx<'_>,
    ws: &Workspace,
    hook: Option<&crate::config::Hook>,
    force: bool,
    warnings: &mut Vec<String>,
) -> Result<Deletion> {
    let inspections = parallel::map(&ws.repos, inspect);
    if !force {
        let mut dirty = Vec::new();
        for (r, i) in ws.repos.iter().zip(&inspections) {
            if let Some(e) = &i.error {
                dirty.push(serde_json::json!({ "repo": r.repo_name, "changes": [], "error": e }));
            } else if let Some(c) = i.changes.as_ref().filter(|c| !c.is_empty()) {
                dirty.push(serde_json::json!({ "repo": r.repo_name, "changes": c }));
            } else if i.exists && !i.source_exists {
                dirty.push(serde_json::json!({ "repo": r.repo_name, "changes": [], "error": "source repository is missing" }));
            }
        }
        let stray = stray_files(ws);
        if !dirty.is_empty() || !stray.is_empty() {
            let mut parts: Vec<String> = dirty
                .iter()
                .map(|d| {
                    let n = d["changes"].as_array().map(|a| a.len()).unwrap_or(0);
                    match d.get("error").and_then(|e| e.as_str()) {
                        Some(e) => format!("{} ({e})", d["repo"].as_str().unwrap_or("?")),
                        None => format!(
                            "{} ({n} uncommitted change{})",
                            d["repo"].as_str().unwrap_or("?"),
                            if n == 1 { "" } else { "s" }
                        ),
                    }
                })
                .collect();
            if !stray.is_empty() {
                parts.push(format!("files outside any worktree: {}", stray.join(", ")));
            }
            return Err(Error::new(
                Code::WorktreeDirty,
                format!(
                    "workspace `{}` has work that would be lost: {}",
                    ws.name,
                    parts.join("; ")
                ),
            )
            .with_fix("Commit or stash the changes, or pass --force to discard them")
            .with_details(
                serde_json::json!({ "workspace": ws.name, "repos": dirty, "stray_files": stray }),
            )
            .with_action(NextAction::read(
                "See what would be lost",
                &["gw", "status", &ws.name, "--format", "json"],
            )));
        }
    }

    if let Some(w) = hooks::run_global(ctx, hook, HookKind::PreDelete, &Vars::of(ws), &ws.path)? {
        warnings.push(w);
    }
    let vars = Vars::of(ws);
    for (r, i) in ws.repos.iter().zip(&inspections) {
        if !i.exists || !i.source_exists {
            continue;
        }
        let teardown = RepoConfig::load(&r.source_repo)
            .map(|c| c.teardown)
            .unwrap_or_default();
        if let Err(f) =
            hooks::run_repo_commands(ctx, &r.repo_name, &teardown, &r.worktree_path, &vars, false)
        {
            warnings.push(format!("{}: teardown failed: {}", r.repo_name, f.summary()));
        }
    }

    ctx.events.progress(&format!(
        "removing {} worktrees of {}",
        ws.repos.len(),
        ws.name
    ));
    let pairs: Vec<(&RepoEntry, &Inspection)> = ws.repos.iter().zip(&inspections).collect();
    let results = parallel::map(&pairs, |(r, i)| remove_repo(r, i, force));
    let mut repos = Vec::new();
    let mut removed_names = Vec::new();
    for ((r, _), (result, warning)) in pairs.iter().zip(results) {
        warnings.extend(warning);
        if result.outcome == Outcome::Removed {
            removed_names.push(r.repo_name.clone());
        }
        repos.push(result);
    }
    let all_removed = removed_names.len() == ws.repos.len();
    if all_removed && force {
        fsx::remove_dir_all(&ws.path)?;
    } else if all_removed && !fsx::remove_empty_dir(&ws.path) && ws.path.exists() {
        warnings.push(format!("kept `{}`: it is not empty", ws.path.display()));
    }
    ctx.store.update(|st| {
        if all_removed {
            st.remove(&ws.name);
        } else if let Some(w) = st.find_mut(&ws.name) {
            w.repos.retain(|r| !removed_names.contains(&r.repo_name));
        }
        Ok::<_, Error>(())
    })?;
    Ok(Deletion {
        name: ws.name.clone(),
        path: ws.path.clone(),
        outcome: if all_removed { "deleted" } else { "failed" },
        repos,
        state_removed: all_removed,
        error: None,
    })
}

/// Removes one repository's worktree and, when grove created it and no work would be
/// lost, its branch. Returns the result and an optional warning.
fn remove_repo(r: &RepoEntry, i: &Inspection, force: bool) -> (RepoResult, Option<String>) {
    let result = |outcome, detail: Option<String>| RepoResult {
        repo: r.repo_name.clone(),
        outcome,
        branch: r.branch.clone(),
        path: r.worktree_path.clone(),
        detail,
    };
    if !i.source_exists {
        if i.exists {
            // Only reachable with --force: the worktree cannot be removed through git.
            if let Err(e) = fsx::remove_dir_all(&r.worktree_path) {
                return (result(Outcome::Failed, Some(e.to_string())), None);
            }
        }
        return (
            result(
                Outcome::Removed,
                Some("source repository is missing".into()),
            ),
            None,
        );
    }
    if i.exists
        && let Err(e) = git::worktree_remove(&r.source_repo, &r.worktree_path, force)
    {
        return (result(Outcome::Failed, Some(e.to_string())), None);
    }
    let _ = git::worktree_prune(&r.source_repo);
    let warning = if r.preserve_branch {
        None
    } else {
        delete_branch(&r.source_repo, &r.repo_name, &r.branch, force)
    };
    (result(Outcome::Removed, warning.clone()), warning)
}

/// Deletes a branch grove created unless that would lose commits (without `force`) or it is
/// checked out elsewhere. Returns a warning when the branch was kept.
fn delete_branch(source: &Path, repo: &str, branch: &str, force: bool) -> Option<String> {
    let Ok(r) = git::Repo::open(source) else {
        return None;
    };
    r.local_branch(branch)?;
    if let Ok(wts) = r.worktrees()
        && let Some(wt) = wts.iter().find(|w| w.branch.as_deref() == Some(branch))
    {
        return Some(format!(
            "{repo}: kept branch {branch}: it is checked out at {}",
            wt.path.display()
        ));
    }
    if !force {
        match r.unique_commits(branch) {
            Ok(0) => {}
            Ok(n) => {
                return Some(format!(
                    "{repo}: kept branch {branch}: {n} commit{} only on it (delete with `git -C {} branch -D {branch}`)",
                    if n == 1 { " exists" } else { "s exist" },
                    crate::proc::shell_quote(&source.to_string_lossy()),
                ));
            }
            Err(e) => {
                return Some(format!(
                    "{repo}: kept branch {branch}: cannot tell whether it holds unique commits: {e}"
                ));
            }
        }
    }
    match git::branch_delete(source, branch, true) {
        Ok(()) => None,
        Err(e) => Some(format!("{repo}: could not delete branch {branch}: {e}")),
    }
}
