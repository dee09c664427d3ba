//! `gw add-repo`: add repositories (names or git URLs) to an existing workspace.
//!
//! Idempotent: a repository already in the workspace is `already_present`. All or nothing
//! for the rest: every new worktree is planned and validated first; if adding any of them
//! fails, everything this invocation added (worktrees, and branches it created) is removed
//! again and state is left untouched, so no half-added repository remains. Setup commands
//! run for the new repositories after they are recorded.

use std::path::PathBuf;

use serde::Serialize;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::create::{self, RepoPlan, SetupResult};
use crate::ops::repos::{self, Chosen};
use crate::ops::{Ctx, Outcome, RepoResult, resolve};
use crate::parallel;
use crate::state::RepoEntry;

#[derive(Debug, Clone)]
pub struct AddRepoOptions {
    /// The workspace; the one containing the current directory when `None`.
    pub name: Option<String>,
    /// Repository names or git URLs.
    pub repos: Vec<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AddRepoReport {
    pub workspace: String,
    pub path: PathBuf,
    pub branch: String,
    /// `added`, `already_present`; after a failure `failed` and `rolled_back`.
    pub repos: Vec<RepoResult>,
    pub count: usize,
    /// Setup results of the added repositories that have setup commands.
    pub setup: Vec<SetupResult>,
    #[serde(skip)]
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub failure: Option<Error>,
}

impl AddRepoReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "Inspect the workspace",
            &["gw", "status", &self.workspace, "--format", "json"],
        )]
    }
}

/// `gw add-repo [NAME] -r …`.
pub fn add_repo(ctx: &Ctx<'_>, opts: AddRepoOptions) -> Result<AddRepoReport> {
    let config = ctx.config()?;
    let state = ctx.state()?;
    let ws = resolve::workspace(&state, opts.name.as_deref(), &ctx.env.cwd)?.clone();
    if !ws.path.is_dir() {
        return Err(Error::new(
            Code::WorkspaceNotFound,
            format!(
                "the directory of workspace `{}` is missing: `{}`",
                ws.name,
                ws.path.display()
            ),
        )
        .with_fix("Run `gw doctor` to see what happened to it")
        .with_action(NextAction::read(
            "Diagnose",
            &["gw", "doctor", "--format", "json"],
        )));
    }
    let discovery = repos::discover(ctx, &config);
    let chosen = repos::resolve(ctx, &config, &opts.repos, &discovery)?;

    let mut results: Vec<RepoResult> = Vec::new();
    let mut new: Vec<Chosen> = Vec::new();
    for c in chosen {
        match ws.repo(&c.name) {
            Some(existing) if fsx::canonical(&existing.source_repo) == fsx::canonical(&c.path) => {
                results.push(RepoResult {
                    repo: c.name.clone(),
                    outcome: Outcome::AlreadyPresent,
                    branch: existing.branch.clone(),
                    path: existing.worktree_path.clone(),
                    detail: None,
                });
            }
            Some(existing) => {
                return Err(Error::new(
                    Code::WorktreeExists,
                    format!(
                        "workspace `{}` already has a repository named `{}`, from `{}`",
                        ws.name,
                        c.name,
                        existing.source_repo.display()
                    ),
                )
                .with_fix("A workspace holds one worktree per repository name")
                .with_details(serde_json::json!({
                    "workspace": ws.name,
                    "repo": c.name,
                    "existing_source": existing.source_repo,
                    "requested_source": c.path,
                })));
            }
            None => new.push(c),
        }
    }
    let mut report = AddRepoReport {
        workspace: ws.name.clone(),
        path: ws.path.clone(),
        branch: ws.branch.clone(),
        repos: results,
        count: 0,
        setup: Vec::new(),
        warnings: Vec::new(),
        failure: None,
    };
    if new.is_empty() {
        report.count = report.repos.len();
        return Ok(report);
    }

    // Plan and validate every new repository before touching any of them.
    create::fetch_all(ctx, &new);
    let mut plans: Vec<RepoPlan> = Vec::new();
    for c in &new {
        let (plan, warnings) = create::plan_repo(c, &ws.path, &ws.branch, false, &[])?;
        if fsx::exists(&plan.worktree) {
            return Err(Error::new(
                Code::WorktreeExists,
                format!(
                    "`{}` already exists; it is not a worktree of workspace `{}`",
                    plan.worktree.display(),
                    ws.name
                ),
            )
            .with_fix("Move it out of the way, then run `gw add-repo` again")
            .with_details(serde_json::json!({ "repo": plan.name, "path": plan.worktree })));
        }
        report.warnings.extend(warnings);
        plans.push(plan);
    }

    ctx.events
        .progress(&format!("adding {} worktrees to {}", plans.len(), ws.name));
    let added = parallel::map(&plans, |p| create::add_worktree(p, &ws.branch));
    if let Some(first) = added.iter().find_map(|r| r.as_ref().err()).cloned() {
        report.repos.extend(rollback(&plans, &added, &ws.branch));
        report.count = report.repos.len();
        report.failure = Some(
            first
                .context(format!("cannot add to workspace `{}`", ws.name))
                .with_fix("Nothing was added: every worktree and branch this command created was removed again")
                .with_details(serde_json::json!({ "workspace": ws.name })),
        );
        return Ok(report);
    }

    let entries: Vec<RepoEntry> = plans
        .iter()
        .map(|p| RepoEntry {
            repo_name: p.name.clone(),
            source_repo: p.source.clone(),
            worktree_path: p.worktree.clone(),
            branch: ws.branch.clone(),
            preserve_branch: p.preserve_branch,
            setup: None,
            extra: Default::default(),
        })
        .collect();
    let committed = ctx.store.update(|st| {
        let w = st
            .find_mut(&ws.name)
            .ok_or_else(|| resolve::not_found(&ws.name))?;
        if let Some(e) = entries.iter().find(|e| w.repo(&e.repo_name).is_some()) {
            return Err(Error::new(
                Code::WorktreeExists,
                format!(
                    "another gw process added `{}` to `{}` meanwhile",
                    e.repo_name, ws.name
                ),
            ));
        }
        w.repos.extend(entries.iter().cloned());
        Ok(())
    });
    if let Err(e) = committed {
        rollback(&plans, &added, &ws.branch);
        return Err(e.context(format!("cannot add to workspace `{}`", ws.name)));
    }

    for p in &plans {
        report.repos.push(RepoResult {
            repo: p.name.clone(),
            outcome: Outcome::Added,
            branch: ws.branch.clone(),
            path: p.worktree.clone(),
            detail: Some(describe(p)),
        });
    }
    report.count = report.repos.len();
    let mut recorded = ws.clone();
    recorded.repos.extend(entries);
    report.setup = create::run_setup(ctx, &plans, &recorded);
    report
        .warnings
        .extend(create::record_setup(ctx, &ws.name, &report.setup));
    Ok(report)
}

fn describe(p: &RepoPlan) -> String {
    match &p.checkout {
        git::Checkout::NewBranch { start } => format!("new branch from {start}"),
        git::Checkout::Existing => "existing branch checked out".into(),
        git::Checkout::Track { remote_ref } => format!("tracking {remote_ref}"),
    }
}

/// Removes what this invocation added (see [`create::undo_repo`]), including what a
/// repository whose own `git worktree add` failed may have left behind.
fn rollback(plans: &[RepoPlan], added: &[Result<()>], branch: &str) -> Vec<RepoResult> {
    plans
        .iter()
        .zip(added)
        .rev()
        .map(|(p, res)| {
            let problems = create::undo_repo(p, branch);
            let (outcome, detail) = match (res, problems.is_empty()) {
                (Err(e), true) => (Outcome::Failed, e.message.clone()),
                (Err(e), false) => (
                    Outcome::Failed,
                    format!("{}; cleanup failed: {}", e.message, problems.join("; ")),
                ),
                (Ok(()), true) => (
                    Outcome::RolledBack,
                    "added, then removed again because another repository failed".into(),
                ),
                (Ok(()), false) => (
                    Outcome::Failed,
                    format!("rollback failed: {}", problems.join("; ")),
                ),
            };
            RepoResult {
                repo: p.name.clone(),
                outcome,
                branch: branch.to_string(),
                path: p.worktree.clone(),
                detail: Some(detail),
            }
        })
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect()
}
