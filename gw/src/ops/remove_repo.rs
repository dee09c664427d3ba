//! `gw remove-repo`: take repositories out of a workspace.
//!
//! Converges: a repository that is not in the workspace is `not_found`, not an error, so
//! a retry after a partial failure finishes the job. Every repository is checked before
//! anything is removed: without `--force`, uncommitted changes (or an operation in
//! progress) refuse with `WORKTREE_DIRTY`, and a worktree that is not on the workspace's
//! branch or not registered where state says refuses with `BRANCH_CONFLICT`. Removal runs
//! the `teardown` commands, removes the worktree and deletes the branch under the same
//! rules as `gw delete` (never a `preserve_branch` branch; one holding commits found
//! nowhere else only with `--force`).

use std::path::PathBuf;

use serde::Serialize;
use serde_json::json;

use crate::action::NextAction;
use crate::config::RepoConfig;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::hooks::{self, Vars};
use crate::ops::{Ctx, Outcome, RepoResult, delete, resolve};
use crate::parallel;
use crate::state::RepoEntry;

#[derive(Debug, Clone)]
pub struct RemoveRepoOptions {
    pub name: Option<String>,
    /// Repository names (a git URL stands for the repository it names).
    pub repos: Vec<String>,
    /// Discard uncommitted changes, ignore an unexpected branch, and delete branches
    /// holding commits found nowhere else.
    pub force: bool,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RemoveRepoReport {
    pub workspace: String,
    pub path: PathBuf,
    pub branch: String,
    /// `removed`, `not_found` or `failed`.
    pub repos: Vec<RepoResult>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub failure: Option<Error>,
}

impl RemoveRepoReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "Inspect the workspace",
            &["gw", "status", &self.workspace, "--format", "json"],
        )]
    }
}

/// Why a repository may not be removed without `--force`.
struct Refusal {
    code: Code,
    repo: String,
    reason: String,
    changes: Vec<String>,
}

/// `gw remove-repo [NAME] -r … [--force]`.
pub fn remove_repo(ctx: &Ctx<'_>, opts: RemoveRepoOptions) -> Result<RemoveRepoReport> {
    ctx.config()?;
    let state = ctx.state()?;
    let ws = resolve::workspace(&state, opts.name.as_deref(), &ctx.env.cwd)?.clone();
    let mut names: Vec<String> = Vec::new();
    for entry in opts
        .repos
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
    {
        let name = if git::url::is_git_url(entry) {
            git::url::repo_name(entry).ok_or_else(|| {
                Error::usage(format!("cannot name a repository after the URL `{entry}`"))
            })?
        } else {
            entry.to_string()
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return Err(Error::usage("no repositories given").with_fix("Pass --repos/-r"));
    }
    let mut report = RemoveRepoReport {
        workspace: ws.name.clone(),
        path: ws.path.clone(),
        branch: ws.branch.clone(),
        repos: Vec::new(),
        count: 0,
        warnings: Vec::new(),
        failure: None,
    };
    let mut targets: Vec<RepoEntry> = Vec::new();
    for n in &names {
        match ws.repo(n) {
            Some(r) => targets.push(r.clone()),
            None => report.repos.push(RepoResult {
                repo: n.clone(),
                outcome: Outcome::NotFound,
                branch: ws.branch.clone(),
                path: ws.path.join(n),
                detail: Some(format!("not in workspace `{}`", ws.name)),
            }),
        }
    }

    if !opts.force {
        let refusals: Vec<Refusal> = parallel::map(&targets, check)
            .into_iter()
            .flatten()
            .collect();
        if let Some(first) = refusals.first() {
            return Err(refuse(&ws.name, first.code, &refusals));
        }
    }

    let vars = Vars::of(&ws);
    for r in &targets {
        if !r.worktree_path.is_dir() || !r.source_repo.is_dir() {
            continue;
        }
        let teardown = RepoConfig::load(&r.source_repo)
            .map(|c| c.teardown)
            .unwrap_or_default();
        if let Err(f) =
            hooks::run_repo_commands(ctx, &r.repo_name, &teardown, &r.worktree_path, &vars, false)
        {
            report
                .warnings
                .push(format!("{}: teardown failed: {}", r.repo_name, f.summary()));
        }
    }
    ctx.events.progress(&format!(
        "removing {} worktrees from {}",
        targets.len(),
        ws.name
    ));
    let removed = parallel::map(&targets, |r| delete::remove_entry(r, opts.force));
    let mut gone: Vec<String> = Vec::new();
    for (result, warning) in removed {
        report.warnings.extend(warning);
        if result.outcome == Outcome::Removed {
            gone.push(result.repo.clone());
        }
        report.repos.push(result);
    }
    // Keep the order the repositories were named in.
    report
        .repos
        .sort_by_key(|r| names.iter().position(|n| *n == r.repo));
    report.count = report.repos.len();
    if !gone.is_empty() {
        ctx.store.update(|st| {
            if let Some(w) = st.find_mut(&ws.name) {
                w.repos.retain(|r| !gone.contains(&r.repo_name));
            }
            Ok::<_, Error>(())
        })?;
    }
    let failed: Vec<&RepoResult> = report
        .repos
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .collect();
    if !failed.is_empty() {
        let summary: Vec<String> = failed
            .iter()
            .map(|r| format!("{}: {}", r.repo, r.detail.as_deref().unwrap_or("failed")))
            .collect();
        report.failure = Some(
            Error::new(
                Code::GitFailed,
                format!(
                    "could not remove {} of {} repositories: {}",
                    failed.len(),
                    targets.len(),
                    summary.join("; ")
                ),
            )
            .with_fix("The failed repositories stay in the workspace; fix the problem and run `gw remove-repo` again")
            .with_details(json!({ "workspace": ws.name, "failed": failed }))
            .with_action(NextAction::read(
                "Inspect the workspace",
                &["gw", "status", &ws.name, "--format", "json"],
            )),
        );
    }
    Ok(report)
}

/// What would stop a safe removal of `r`.
fn check(r: &RepoEntry) -> Option<Refusal> {
    let refusal = |code, reason: String, changes: Vec<String>| {
        Some(Refusal {
            code,
            repo: r.repo_name.clone(),
            reason,
            changes,
        })
    };
    if !r.worktree_path.is_dir() {
        return None;
    }
    if !r.source_repo.is_dir() {
        return refusal(
            Code::WorktreeDirty,
            format!(
                "its source repository `{}` is missing, so git cannot check the worktree",
                r.source_repo.display()
            ),
            Vec::new(),
        );
    }
    let registered = git::Repo::open(&r.source_repo)
        .and_then(|s| s.worktrees())
        .map(|wts| {
            let want = fsx::canonical(&r.worktree_path);
            wts.iter()
                .any(|w| !w.is_main && fsx::canonical(&w.path) == want)
        });
    match registered {
        Ok(true) => {}
        Ok(false) => {
            return refusal(
                Code::BranchConflict,
                format!(
                    "`{}` is not registered as a worktree of `{}`",
                    r.worktree_path.display(),
                    r.source_repo.display()
                ),
                Vec::new(),
            );
        }
        Err(e) => return refusal(Code::WorktreeDirty, e.to_string(), Vec::new()),
    }
    let inspected = git::Repo::open(&r.worktree_path).and_then(|repo| {
        let head = repo.head()?;
        let changes = repo.changes()?;
        Ok((head, changes))
    });
    let (head, changes) = match inspected {
        Ok(x) => x,
        Err(e) => return refusal(Code::WorktreeDirty, e.to_string(), Vec::new()),
    };
    if let Some(op) = head.in_progress {
        return refusal(
            Code::WorktreeDirty,
            format!("a {op} is in progress"),
            changes.lines,
        );
    }
    if !changes.is_clean() {
        let n = changes.count();
        return refusal(
            Code::WorktreeDirty,
            format!("{n} uncommitted change{}", if n == 1 { "" } else { "s" }),
            changes.lines,
        );
    }
    if head.branch.as_deref() != Some(r.branch.as_str()) {
        let on = head
            .branch
            .map(|b| format!("on {b}"))
            .unwrap_or_else(|| "on a detached HEAD".into());
        return refusal(
            Code::BranchConflict,
            format!("{on}, not the workspace's branch {}", r.branch),
            Vec::new(),
        );
    }
    None
}

fn refuse(workspace: &str, code: Code, refusals: &[Refusal]) -> Error {
    let summary: Vec<String> = refusals
        .iter()
        .map(|r| format!("{} ({})", r.repo, r.reason))
        .collect();
    let mut e = Error::new(
        code,
        format!(
            "refusing to remove from `{workspace}`: {}",
            summary.join("; ")
        ),
    )
    .with_fix("Commit or stash the changes and switch back to the workspace's branch (`gw reset`), or pass --force to remove anyway")
    .with_details(json!({
        "workspace": workspace,
        "repos": refusals.iter().map(|r| json!({
            "repo": r.repo,
            "code": r.code,
            "reason": r.reason,
            "changes": r.changes,
        })).collect::<Vec<_>>(),
    }))
    .with_action(NextAction::read(
        "See the state of each repository",
        &["gw", "status", workspace, "--format", "json"],
    ));
    if refusals.iter().any(|r| r.code == Code::BranchConflict) {
        e = e.with_action(NextAction::write(
            "Put every worktree back on the workspace's branch",
            &["gw", "reset", workspace, "--format", "json"],
        ));
    }
    e
}
