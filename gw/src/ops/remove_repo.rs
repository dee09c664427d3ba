//! `gw remove-repo`: take repositories out of a workspace.
//!
//! Converges: a repository that is not in the workspace is `not_found`, not an error, so
//! a retry after a partial failure finishes the job. Every repository is checked before
//! anything is removed: without `--force`, work the worktree holds refuses with
//! `WORKTREE_DIRTY` — judged by the safety kernel exactly as `gw delete` judges it — and a
//! worktree that is not on the workspace's branch or not registered where state says
//! refuses with `BRANCH_CONFLICT`. Removal runs
//! the `teardown` commands, then, in one transaction (`ops::tx`), quarantines each worktree
//! into `.trash` and drops the repositories from state (a failure before that commit puts
//! everything back), then removes their registrations and deletes the branches under the
//! same rules as `gw delete` (never a `preserve_branch` branch; one holding commits found
//! nowhere else only with `--force`). The quarantined bytes are removed in the background.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::json;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::plan::{self, Change, ChangeKind, Described, PlanDoc, PlanKind};
use crate::ops::safety::{self, Inspection, Remover};
use crate::ops::{Ctx, Outcome, RepoResult, resolve, teardown, trash, tx};
use crate::parallel;
use crate::state::journal::Kind;
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

/// Why a repository may not be removed without `--force`: its worktree cannot be told to
/// be the workspace's.
struct Refusal {
    repo: String,
    reason: String,
}

/// `gw remove-repo [NAME] -r … [--force]`.
pub fn remove_repo(ctx: &Ctx<'_>, opts: RemoveRepoOptions) -> Result<RemoveRepoReport> {
    let (ws, names, targets, inspections) = validate(ctx, &opts)?;
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
        let now = describe(ctx, &ws, &names, &targets, &inspections, opts.force);
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

    for r in &targets {
        if fsx::exists(&r.worktree_path) {
            check_inside(ctx, &ws, r)?;
        }
    }
    report.warnings.extend(teardown::run_hooks(
        ctx,
        &ws,
        &teardown::Hooks::of(&targets, None),
    )?);
    let branches: Vec<&str> = targets.iter().map(|r| r.branch.as_str()).collect();
    let locks = tx::lock_workspaces(ctx, &[&ws.name])?.with_branches(ctx, &branches)?;
    let n = targets.len();
    ctx.events.progress(&format!(
        "removing {n} worktree{} from {}",
        if n == 1 { "" } else { "s" },
        ws.name
    ));
    // Quarantine: each worktree moves into the workspace dir's `.trash` (one rename), so
    // that anything failing before the state commit can put it back.
    let base = ws
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| ws.name.clone());
    let moves = targets
        .iter()
        .map(|r| {
            let to = trash::path_for(&ws.path, &format!("{base}.{}", r.repo_name));
            (r.worktree_path.clone(), to)
        })
        .collect();
    let mut after = ws.clone();
    after
        .repos
        .retain(|r| !targets.iter().any(|t| t.repo_name == r.repo_name));
    let request = teardown::Request {
        keep: None,
        ws: &ws,
        kind: Kind::RemoveRepo,
        targets: &targets,
        inspections: &inspections,
        stray: &[],
        moves,
        after: Some(after),
        force: opts.force,
        remover: Remover::RemoveRepo,
        inspected_under_lock: false,
    };
    let removed = match teardown::remove(ctx, locks, request) {
        Ok(r) => r,
        Err(teardown::Failure::Refused(e)) => return Err(e),
        Err(failure) => {
            let detail = match &failure {
                teardown::Failure::Failed { cause, .. } => cause.message.clone(),
                teardown::Failure::Refused(e) => e.message.clone(),
            };
            for r in &targets {
                report.repos.push(RepoResult {
                    repo: r.repo_name.clone(),
                    outcome: Outcome::Failed,
                    branch: r.branch.clone(),
                    path: r.worktree_path.clone(),
                    detail: Some(detail.clone()),
                });
            }
            report
                .repos
                .sort_by_key(|r| names.iter().position(|n| *n == r.repo));
            report.count = report.repos.len();
            report.failure = Some(failure.error(
                &format!("remove from workspace `{}`", ws.name),
                &ws.name,
                Kind::RemoveRepo,
            ));
            return Ok(report);
        }
    };
    report.warnings.extend(removed.warnings);
    for r in &targets {
        report.repos.push(RepoResult::removed(r, &removed.notes));
    }
    // Keep the order the repositories were named in.
    report
        .repos
        .sort_by_key(|r| names.iter().position(|n| *n == r.repo));
    report.count = report.repos.len();
    Ok(report)
}

/// A worktree is removed only from inside its workspace's directory, which lies in a
/// workspace directory: a path read from state is not trusted.
fn check_inside(ctx: &Ctx<'_>, ws: &Workspace, r: &RepoEntry) -> Result<()> {
    ctx.territory()
        .check(&r.worktree_path, "remove the worktree")?;
    let inside = crate::fsx::canonical_lenient(&r.worktree_path)
        .zip(crate::fsx::canonical_lenient(&ws.path))
        .is_some_and(|(wt, dir)| wt.starts_with(&dir) && wt != dir);
    if inside {
        Ok(())
    } else {
        Err(Error::new(
            Code::CorruptState,
            format!(
                "refusing to remove `{}`: state records it as {}'s worktree in workspace `{}`, \
                 but it is not inside the workspace's directory `{}`",
                r.worktree_path.display(),
                r.repo_name,
                ws.name,
                ws.path.display()
            ),
        )
        .with_fix("Correct state.json by hand; grove removes only what lies in the workspace"))
    }
}

/// What [`validate`] found: the workspace, the repository names asked for, those of them
/// in the workspace, and what each of those holds.
type Validated = (Workspace, Vec<String>, Vec<RepoEntry>, Vec<Inspection>);

/// The workspace, the repository names asked for, those of them in the workspace, and
/// what each of those holds — after refusing (unless `--force`) to remove a worktree
/// holding work (the kernel's verdict, as for `gw delete`: `WORKTREE_DIRTY`) or one that
/// is not the workspace's (not registered where state says, or on another branch:
/// `BRANCH_CONFLICT`).
fn validate(ctx: &Ctx<'_>, opts: &RemoveRepoOptions) -> Result<Validated> {
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
    // A repository grove knows that is not in the workspace is `not_found` (removal
    // converges); a name grove does not know at all is a typo, as it is for add-repo.
    let strangers: Vec<&String> = names
        .iter()
        .filter(|n| !state.workspaces.iter().any(|w| w.repo(n).is_some()))
        .collect();
    if !strangers.is_empty() {
        let found = crate::ops::repos::discover(ctx, &ctx.config()?).names();
        if let Some(typo) = strangers.into_iter().find(|n| !found.contains(n)) {
            return Err(resolve::repo_not_in(&ws, typo));
        }
    }
    let targets: Vec<RepoEntry> = names.iter().filter_map(|n| ws.repo(n).cloned()).collect();
    let inspections = safety::inspect_all(&targets);
    if !opts.force {
        let held: Vec<_> = targets
            .iter()
            .zip(&inspections)
            .map(|(r, i)| (r, i, i.work.refusal(Remover::RemoveRepo, false)))
            .filter(|(_, _, held)| !held.is_empty())
            .collect();
        if !held.is_empty() {
            return Err(safety::refused(&ws.name, &held, &[]));
        }
        let refusals: Vec<Refusal> = parallel::map(&targets, not_the_workspaces)
            .into_iter()
            .flatten()
            .collect();
        if !refusals.is_empty() {
            return Err(refuse(&ws.name, &refusals));
        }
    }
    Ok((ws, names, targets, inspections))
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
    let (ws, names, targets, inspections) = validate(ctx, opts)?;
    let described = describe(ctx, &ws, &names, &targets, &inspections, opts.force);
    Ok(plan::document(
        PlanKind::RemoveRepo,
        inputs(&ws.name, &names, opts.force),
        described,
    ))
}

fn describe(
    ctx: &Ctx<'_>,
    ws: &Workspace,
    names: &[String],
    targets: &[RepoEntry],
    inspections: &[Inspection],
    force: bool,
) -> Described {
    let mut d = Described {
        workspace: ws.name.clone(),
        ..Described::default()
    };
    for n in names.iter().filter(|n| ws.repo(n).is_none()) {
        d.changes.push(
            Change::new(ChangeKind::Skip)
                .repo(n)
                .detail(format!("not in workspace `{}`", ws.name)),
        );
    }
    for (r, i) in targets.iter().zip(inspections) {
        teardown::describe_worktree(r, &r.repo_name, i, Remover::RemoveRepo, &mut d);
        if r.worktree_path.exists() {
            d.changes.push(
                Change::new(ChangeKind::MoveToTrash)
                    .repo(&r.repo_name)
                    .path(&r.worktree_path)
                    .destructive(i.holds_work(Remover::RemoveRepo))
                    .detail("the files are removed in the background"),
            );
        }
    }
    if !targets.is_empty() {
        d.changes.push(
            Change::new(ChangeKind::UpdateStateEntry).detail(format!("workspace {}", ws.name)),
        );
    }
    let mut going = Vec::new();
    for r in targets {
        teardown::describe_completion(ctx, r, &r.repo_name, force, false, &mut going, &mut d);
    }
    d
}

/// Why `r`'s worktree cannot be told to be the workspace's: not registered in its source
/// repository where state says, or on another branch. (What it holds is the kernel's
/// judgement, made before this.)
fn not_the_workspaces(r: &RepoEntry) -> Option<Refusal> {
    let refusal = |reason: String| {
        Some(Refusal {
            repo: r.repo_name.clone(),
            reason,
        })
    };
    if !r.worktree_path.is_dir() || !r.source_repo.is_dir() {
        return None;
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
            return refusal(format!(
                "`{}` is not registered as a worktree of `{}`",
                r.worktree_path.display(),
                r.source_repo.display()
            ));
        }
        Err(e) => return refusal(e.to_string()),
    }
    let head = match git::Repo::open(&r.worktree_path).and_then(|repo| repo.head()) {
        Ok(h) => h,
        Err(e) => return refusal(e.to_string()),
    };
    if head.branch.as_deref() == Some(r.branch.as_str()) {
        return None;
    }
    let on = head
        .branch
        .map(|b| format!("on {b}"))
        .unwrap_or_else(|| "on a detached HEAD".into());
    refusal(format!("{on}, not the workspace's branch {}", r.branch))
}

/// `BRANCH_CONFLICT`: worktrees that cannot be told to be the workspace's.
fn refuse(workspace: &str, refusals: &[Refusal]) -> Error {
    let summary: Vec<String> = refusals
        .iter()
        .map(|r| format!("{} ({})", r.repo, r.reason))
        .collect();
    Error::new(
        Code::BranchConflict,
        format!(
            "refusing to remove from `{workspace}`: {}",
            summary.join("; ")
        ),
    )
    .with_fix(
        "Switch back to the workspace's branch (`gw reset`), or pass --force to remove anyway",
    )
    .with_details(json!({
        "workspace": workspace,
        "repos": refusals.iter().map(|r| json!({
            "repo": r.repo,
            "code": Code::BranchConflict,
            "reason": r.reason,
        })).collect::<Vec<_>>(),
    }))
    .with_action(NextAction::read(
        "See the state of each repository",
        &["gw", "status", workspace, "--format", "json"],
    ))
    .with_action(NextAction::write(
        "Put every worktree back on the workspace's branch",
        &["gw", "reset", workspace, "--format", "json"],
    ))
}
