//! `gw remove-repo`: take repositories out of a workspace.
//!
//! Converges: a repository that is not in the workspace is `not_found`, not an error, so
//! a retry after a partial failure finishes the job. Every repository is checked before
//! anything is removed: without `--force`, uncommitted changes (or an operation in
//! progress) refuse with `WORKTREE_DIRTY`, and a worktree that is not on the workspace's
//! branch or not registered where state says refuses with `BRANCH_CONFLICT`. Removal runs
//! the `teardown` commands, then, in one transaction (`ops::tx`), quarantines each worktree
//! into `.trash` and drops the repositories from state (a failure before that commit puts
//! everything back), then prunes git's registrations and deletes the branches under the
//! same rules as `gw delete` (never a `preserve_branch` branch; one holding commits found
//! nowhere else only with `--force`). The quarantined bytes are removed in the background.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::json;

use crate::action::NextAction;
use crate::config::RepoConfig;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::delete::{self, Fate};
use crate::ops::hooks::{self, Vars};
use crate::ops::plan::{self, Change, Described, PlanDoc, PlanKind};
use crate::ops::tx::{self, Tx};
use crate::ops::{Ctx, Outcome, RepoResult, resolve};
use crate::parallel;
use crate::state::journal::{Action, Kind};
use crate::state::{RepoEntry, Workspace};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RemoveRepoOptions {
    pub name: Option<String>,
    /// Repository names (a git URL stands for the repository it names).
    pub repos: Vec<String>,
    /// Discard uncommitted changes, ignore an unexpected branch, and delete branches
    /// holding commits found nowhere else.
    pub force: bool,
    /// `gw apply`: the plan this removal must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
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
    let (ws, names, targets) = validate(ctx, &opts)?;
    // Before the teardown commands run: an interrupted operation on it comes first.
    tx::check_pending(ctx, &[&ws.name])?;
    let mut report = RemoveRepoReport {
        workspace: ws.name.clone(),
        path: ws.path.clone(),
        branch: ws.branch.clone(),
        repos: Vec::new(),
        count: 0,
        warnings: Vec::new(),
        failure: None,
    };
    for n in names.iter().filter(|n| ws.repo(n).is_none()) {
        report.repos.push(RepoResult {
            repo: n.clone(),
            outcome: Outcome::NotFound,
            branch: ws.branch.clone(),
            path: ws.path.join(n),
            detail: Some(format!("not in workspace `{}`", ws.name)),
        });
    }

    if let Some(expect) = &opts.expect {
        let now = describe(&ws, &names, &targets, opts.force);
        plan::verify(
            PlanKind::RemoveRepo,
            expect,
            &inputs(&ws.name, &names, opts.force),
            &now,
        )?;
    }
    if targets.is_empty() {
        report.count = report.repos.len();
        return Ok(report);
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

    let locks = tx::lock_workspaces(ctx, &[&ws.name])?;
    // Teardown ran without the lock (it may run gw); the workspace must be the one checked.
    match ctx.state()?.find(&ws.name) {
        Some(now) if *now == ws => {}
        None => return Err(resolve::not_found(&ws.name)),
        Some(_) => {
            return Err(Error::new(
                Code::StateChanged,
                format!(
                    "workspace `{}` changed while its repositories were checked",
                    ws.name
                ),
            )
            .with_fix("Look at it again (`gw status`) and retry"));
        }
    }
    for r in &targets {
        // A process inside a directory it is about to move would lose its working directory.
        fsx::step_out_of(&r.worktree_path);
    }
    let mut tx = Tx::begin(ctx, locks, Kind::RemoveRepo, &ws.name, &[])?;
    ctx.events.progress(&format!(
        "removing {} from {}",
        crate::ops::count(targets.len(), "worktree", "worktrees"),
        ws.name
    ));
    // Quarantine: each worktree moves into the workspace dir's `.trash` (one rename), so
    // that anything failing before the state commit can put it back.
    let base = ws
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| ws.name.clone());
    let moves: Vec<Action> = targets
        .iter()
        .filter(|r| fsx::exists(&r.worktree_path))
        .map(|r| Action::MoveDir {
            from: r.worktree_path.clone(),
            to: delete::trash_path_for(&ws.path, &format!("{base}.{}", r.repo_name)),
        })
        .collect();
    let trash: Vec<PathBuf> = moves
        .iter()
        .filter_map(|m| match m {
            Action::MoveDir { to, .. } => Some(to.clone()),
            _ => None,
        })
        .collect();
    let moved = tx.run_all(moves, false);
    let mut after = ws.clone();
    after
        .repos
        .retain(|r| !targets.iter().any(|t| t.repo_name == r.repo_name));
    // What completes the removal (git forgets the moved worktrees, then the branches grove
    // created go) is decided now and recorded with the commit point, so that a process
    // killed after it leaves a journal that finishes all of it.
    let mut notes: Vec<(String, String)> = Vec::new();
    let mut deletes = Vec::new();
    let mut n_prunes = 0;
    let committed = match moved.into_iter().find_map(Result::err) {
        Some(e) => Err(e),
        None => {
            let mut then: Vec<Action> = targets
                .iter()
                .filter(|r| r.source_repo.is_dir())
                .map(|r| Action::PruneWorktrees {
                    repo: r.repo_name.clone(),
                    source: r.source_repo.clone(),
                })
                .collect();
            n_prunes = then.len();
            for r in targets.iter().filter(|r| r.source_repo.is_dir()) {
                match delete::branch_fate(r, opts.force) {
                    Fate::Delete(tip) => deletes.push(Action::DeleteBranch {
                        repo: r.repo_name.clone(),
                        source: r.source_repo.clone(),
                        branch: r.branch.clone(),
                        tip,
                    }),
                    Fate::Keep(why) => notes.push((r.repo_name.clone(), why)),
                    Fate::Gone => {}
                }
            }
            then.extend(deletes.iter().cloned());
            tx.commit_with(
                Action::SetState {
                    name: ws.name.clone(),
                    before: Some(Box::new(ws.clone())),
                    after: Some(Box::new(after)),
                },
                then,
            )
        }
    };
    let planned = match committed {
        Ok(p) => p,
        Err(cause) => {
            let id = tx.id().to_string();
            let (_, clean) = tx.rollback();
            for r in &targets {
                report.repos.push(RepoResult {
                    repo: r.repo_name.clone(),
                    outcome: Outcome::Failed,
                    branch: r.branch.clone(),
                    path: r.worktree_path.clone(),
                    detail: Some(cause.message.clone()),
                });
            }
            report
                .repos
                .sort_by_key(|r| names.iter().position(|n| *n == r.repo));
            report.count = report.repos.len();
            report.failure = Some(if clean {
                cause
                    .context(format!(
                        "cannot remove from workspace `{}`; nothing was changed",
                        ws.name
                    ))
                    .with_details(json!({ "workspace": ws.name, "operation": id }))
            } else {
                let mut pending = tx::recovery_pending(&id, &ws.name, Kind::RemoveRepo);
                pending.message = format!(
                    "cannot remove from workspace `{}`: {}; restoring failed too",
                    ws.name, cause.message
                );
                pending
            });
            return Ok(report);
        }
    };

    // Past the commit point: the repositories are gone from state. What is left completes
    // the removal.
    for (repo, why) in &notes {
        report.warnings.push(format!("{repo}: {why}"));
    }
    delete::complete(
        tx,
        &ws.name,
        &planned,
        n_prunes,
        deletes,
        &mut notes,
        &mut report.warnings,
    )?;
    for t in trash.iter().filter(|t| t.exists()) {
        delete::unlink_in_background(ctx, t);
    }
    for r in &targets {
        report.repos.push(RepoResult::removed(r, &notes));
    }
    // Keep the order the repositories were named in.
    report
        .repos
        .sort_by_key(|r| names.iter().position(|n| *n == r.repo));
    report.count = report.repos.len();
    Ok(report)
}

/// The workspace, the repository names asked for, and those of them in the workspace —
/// after refusing (unless `--force`) to remove a dirty worktree or one on another branch.
fn validate(
    ctx: &Ctx<'_>,
    opts: &RemoveRepoOptions,
) -> Result<(Workspace, Vec<String>, Vec<RepoEntry>)> {
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
    let targets: Vec<RepoEntry> = names.iter().filter_map(|n| ws.repo(n).cloned()).collect();
    if !opts.force {
        let refusals: Vec<Refusal> = parallel::map(&targets, check)
            .into_iter()
            .flatten()
            .collect();
        if let Some(first) = refusals.first() {
            return Err(refuse(&ws.name, first.code, &refusals));
        }
    }
    Ok((ws, names, targets))
}

fn inputs(name: &str, names: &[String], force: bool) -> serde_json::Value {
    serde_json::to_value(RemoveRepoOptions {
        name: Some(name.to_string()),
        repos: names.to_vec(),
        force,
        expect: None,
    })
    .expect("options serialise")
}

/// `gw plan remove-repo`: validates exactly as `gw remove-repo` does (refusing a dirty
/// worktree, or one on another branch, unless `--force`) and describes what it would do.
pub fn plan_doc(ctx: &Ctx<'_>, opts: &RemoveRepoOptions) -> Result<PlanDoc> {
    let (ws, names, targets) = validate(ctx, opts)?;
    let described = describe(&ws, &names, &targets, opts.force);
    Ok(plan::document(
        PlanKind::RemoveRepo,
        inputs(&ws.name, &names, opts.force),
        described,
    ))
}

fn describe(ws: &Workspace, names: &[String], targets: &[RepoEntry], force: bool) -> Described {
    let mut d = Described {
        workspace: ws.name.clone(),
        ..Described::default()
    };
    for n in names.iter().filter(|n| ws.repo(n).is_none()) {
        d.changes.push(
            Change::new("skip")
                .repo(n)
                .detail(format!("not in workspace `{}`", ws.name)),
        );
    }
    let inspections = parallel::map(targets, delete::inspect);
    for (r, i) in targets.iter().zip(&inspections) {
        delete::describe_worktree(r, &r.repo_name, i, &mut d);
        let dirty = i.dirty();
        if r.worktree_path.exists() {
            d.changes.push(
                Change::new("move_to_trash")
                    .repo(&r.repo_name)
                    .path(&r.worktree_path)
                    .destructive(dirty)
                    .detail("the files are removed in the background"),
            );
        }
    }
    if !targets.is_empty() {
        d.changes
            .push(Change::new("update_state_entry").detail(format!("workspace {}", ws.name)));
    }
    for r in targets.iter().filter(|r| r.source_repo.is_dir()) {
        d.changes.push(
            Change::new("prune_worktrees")
                .repo(&r.repo_name)
                .path(&r.source_repo),
        );
    }
    for r in targets.iter().filter(|r| r.source_repo.is_dir()) {
        delete::describe_branch(r, &r.repo_name, force, &r.worktree_path, &mut d);
    }
    d
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
