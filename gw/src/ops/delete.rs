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
use crate::ops::plan::{self, Change, Described, Fact, PlanDoc, PlanKind};
use crate::ops::tx::{self, Tx};
use crate::ops::{Ctx, Outcome, RepoResult, resolve};
use crate::parallel;
use crate::state::journal::{Action, Kind};
use crate::state::{RepoEntry, Workspace};

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DeleteOptions {
    pub names: Vec<String>,
    /// Discard uncommitted changes and delete branches holding unpushed commits.
    pub force: bool,
    /// `gw apply`: the plan this delete must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Deletion {
    pub name: String,
    pub path: PathBuf,
    pub outcome: WorkspaceOutcome,
    pub repos: Vec<RepoResult>,
    /// The state entry was removed. False when something failed and the entry was kept
    /// so the delete can be retried.
    pub state_removed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<DeletionError>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceOutcome {
    Deleted,
    /// Not (fully) deleted; see `error` and the repositories' outcomes.
    Failed,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    if let Some(expect) = &opts.expect {
        let now = describe(ctx, &config, &names, opts.force)?;
        plan::verify(PlanKind::Delete, expect, &inputs(&names, opts.force), &now)?;
    }
    let mut report = DeleteReport {
        deleted: Vec::new(),
        count: 0,
        warnings: Vec::new(),
        errors: Vec::new(),
    };
    for name in names {
        let state = ctx.state()?;
        // An interrupted operation on this name comes first, even when it already dropped
        // the workspace from state (a delete killed after its commit point).
        let found = tx::check_pending(ctx, &[&name])
            .and_then(|()| resolve::by_name(&state, &name).cloned());
        let ws = match found {
            Ok(ws) => ws,
            Err(e) => {
                report.deleted.push(Deletion {
                    name: name.clone(),
                    path: PathBuf::new(),
                    outcome: WorkspaceOutcome::Failed,
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
                if d.state_removed {
                    crate::stats::record(&ctx.home, crate::stats::Event::WorkspaceDeleted, &ws);
                }
                if d.outcome == WorkspaceOutcome::Failed {
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
                    outcome: WorkspaceOutcome::Failed,
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
pub(crate) struct Inspection {
    exists: bool,
    source_exists: bool,
    changes: Option<Vec<String>>,
    error: Option<String>,
}

impl Inspection {
    /// Uncommitted changes were found.
    pub(crate) fn dirty(&self) -> bool {
        self.changes.as_ref().is_some_and(|c| !c.is_empty())
    }
}

pub(crate) fn inspect(r: &RepoEntry) -> Inspection {
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

fn clean_names(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if !out.iter().any(|m| m == n) {
            out.push(n.to_string());
        }
    }
    out
}

fn inputs(names: &[String], force: bool) -> serde_json::Value {
    serde_json::to_value(DeleteOptions {
        names: names.to_vec(),
        force,
        expect: None,
    })
    .expect("options serialise")
}

/// `gw plan delete`: validates exactly as `gw delete` does (a workspace with uncommitted
/// work is refused unless `--force`, as the delete would be) and describes what it would do.
pub fn plan_doc(ctx: &Ctx<'_>, opts: &DeleteOptions) -> Result<PlanDoc> {
    let config = ctx.config()?;
    let names = clean_names(&opts.names);
    if names.is_empty() {
        return Err(
            Error::usage("no workspace names given").with_fix("Name the workspaces to delete")
        );
    }
    let described = describe(ctx, &config, &names, opts.force)?;
    Ok(plan::document(
        PlanKind::Delete,
        inputs(&names, opts.force),
        described,
    ))
}

/// What deleting `names` would change, and the facts that depends on.
pub fn describe(
    ctx: &Ctx<'_>,
    config: &crate::config::Config,
    names: &[String],
    force: bool,
) -> Result<Described> {
    let state = ctx.state()?;
    let mut d = Described {
        workspace: names.join(", "),
        ..Described::default()
    };
    for name in names {
        let ws = resolve::by_name(&state, name)?;
        let inspections = preflight(ws, force)?;
        let multi = names.len() > 1;
        let label = |repo: &str| {
            if multi {
                format!("{name}/{repo}")
            } else {
                repo.to_string()
            }
        };
        let stray = stray_files(ws);
        let ws_label = if multi { Some(name.as_str()) } else { None };
        d.facts.push(Fact::new(
            ws_label,
            "path",
            if ws.path.is_dir() {
                "exists"
            } else {
                "missing"
            },
        ));
        if !stray.is_empty() {
            d.facts
                .push(Fact::new(ws_label, "stray_files", stray.join("\n")));
            d.warnings.push(format!(
                "{name}: files outside any worktree would be deleted: {}",
                stray.join(", ")
            ));
        }
        if let Some(h) = config
            .hooks
            .get(HookKind::PreDelete)
            .filter(|_| !ctx.no_hooks)
        {
            d.changes
                .push(Change::new("run_hook").detail(format!("pre_delete: {}", h.command)));
        }
        for (r, i) in ws.repos.iter().zip(&inspections) {
            describe_worktree(r, &label(&r.repo_name), i, &mut d);
        }
        let dirty = inspections.iter().any(Inspection::dirty);
        if ws.path.is_dir() {
            d.changes.push(
                Change::new("move_to_trash")
                    .path(&ws.path)
                    .destructive(dirty || !stray.is_empty())
                    .detail(format!(
                        "into {TRASH}/; the files are removed in the background"
                    )),
            );
        }
        d.changes
            .push(Change::new("remove_state_entry").detail(format!("workspace {name}")));
        let mut pruned: Vec<&Path> = Vec::new();
        for r in ws.repos.iter().filter(|r| r.source_repo.is_dir()) {
            if !pruned.contains(&r.source_repo.as_path()) {
                pruned.push(&r.source_repo);
                d.changes.push(
                    Change::new("prune_worktrees")
                        .repo(&label(&r.repo_name))
                        .path(&r.source_repo),
                );
            }
        }
        for r in ws.repos.iter().filter(|r| r.source_repo.is_dir()) {
            describe_branch(r, &label(&r.repo_name), force, &ws.path, &mut d);
        }
    }
    Ok(d)
}

/// The facts of a worktree that is about to go (HEAD, the branch checked out, uncommitted
/// changes) and its teardown commands; uncommitted changes become a warning.
pub(crate) fn describe_worktree(r: &RepoEntry, label: &str, i: &Inspection, d: &mut Described) {
    let (head, live) = match git::Repo::open(&r.worktree_path).and_then(|g| g.head()) {
        Ok(h) => (
            h.oid.unwrap_or_default(),
            h.branch.unwrap_or_else(|| "(detached)".into()),
        ),
        Err(_) => ("missing".into(), "missing".into()),
    };
    d.facts.push(Fact::new(Some(label), "head", head));
    d.facts.push(Fact::new(Some(label), "checked_out", live));
    let changes = i.changes.clone().unwrap_or_default();
    let listed = if changes.is_empty() {
        "(none)".to_string()
    } else {
        changes.join("\n")
    };
    d.facts.push(Fact::new(Some(label), "changes", listed));
    if !changes.is_empty() {
        d.warnings.push(format!(
            "{label}: {} uncommitted change{} would be destroyed: {}",
            changes.len(),
            if changes.len() == 1 { "" } else { "s" },
            changes.join(", ")
        ));
    }
    if i.exists && i.source_exists {
        let teardown = RepoConfig::load(&r.source_repo)
            .map(|c| c.teardown)
            .unwrap_or_default();
        for cmd in teardown {
            d.changes.push(
                Change::new("run_teardown_hook")
                    .repo(label)
                    .path(&r.worktree_path)
                    .detail(cmd),
            );
        }
    }
}

/// What happens to the branch of `r` when its worktree goes: deleted (destructive when it
/// holds commits found nowhere else), or kept and why. `own` is the directory holding the
/// worktree being removed, which does not count as "checked out elsewhere".
pub(crate) fn describe_branch(
    r: &RepoEntry,
    label: &str,
    force: bool,
    own: &Path,
    d: &mut Described,
) {
    let repo = git::Repo::open(&r.source_repo).ok();
    let tip = repo.as_ref().and_then(|g| g.local_branch(&r.branch));
    d.facts.push(Fact::new(
        Some(label),
        format!("branch {}", r.branch),
        tip.clone().unwrap_or_else(|| "absent".into()),
    ));
    let (Some(repo), Some(tip)) = (repo, tip) else {
        return;
    };
    let keep = |d: &mut Described, why: String| {
        d.changes.push(
            Change::new("keep_branch")
                .repo(label)
                .branch(&r.branch)
                .detail(why),
        )
    };
    if r.preserve_branch {
        return keep(d, "it existed before the workspace".into());
    }
    let own = fsx::canonical(own);
    if let Ok(wts) = repo.worktrees()
        && let Some(wt) = wts.iter().find(|w| {
            w.branch.as_deref() == Some(r.branch.as_str())
                && !w.prunable
                && !fsx::canonical(&w.path).starts_with(&own)
        })
    {
        return keep(d, format!("it is checked out at {}", wt.path.display()));
    }
    let unique = repo.unique_commits(&r.branch).unwrap_or(0);
    if unique > 0 && !force {
        return keep(
            d,
            format!(
                "{unique} commit{} only on it",
                if unique == 1 { " exists" } else { "s exist" }
            ),
        );
    }
    if unique > 0 {
        d.warnings.push(format!(
            "{label}: {unique} commit(s) that exist only on {} would be lost",
            r.branch
        ));
    }
    d.changes.push(
        Change::new("delete_branch")
            .repo(label)
            .branch(&r.branch)
            .destructive(unique > 0)
            .detail(format!("at {}", tip.get(..7).unwrap_or(&tip))),
    );
}

/// Inspects every worktree and, unless forced, refuses when deleting would lose work.
fn preflight(ws: &Workspace, force: bool) -> Result<Vec<Inspection>> {
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
    Ok(inspections)
}

fn delete_one(
    ctx: &Ctx<'_>,
    ws: &Workspace,
    hook: Option<&crate::config::Hook>,
    force: bool,
    warnings: &mut Vec<String>,
) -> Result<Deletion> {
    let inspections = preflight(ws, force)?;

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

    // A process inside the directory it is about to move loses its working directory.
    fsx::step_out_of(&ws.path);
    let locks = tx::lock_workspaces(ctx, &[&ws.name])?;
    let mut tx = Tx::begin(ctx, locks, Kind::Delete, &ws.name, &[])?;
    // Hooks ran without the lock; make sure they left the workspace we checked.
    match ctx.state()?.find(&ws.name) {
        Some(now) if now == ws => {}
        now => {
            let _ = tx.finish();
            return Err(match now {
                None => resolve::not_found(&ws.name),
                Some(_) => Error::new(
                    Code::StateChanged,
                    format!(
                        "workspace `{}` changed after the pre-delete checks",
                        ws.name
                    ),
                )
                .with_fix("Look at it again (`gw status`) and retry the delete"),
            });
        }
    }
    ctx.events.progress(&format!("deleting {}", ws.name));
    let trash = trash_path(ws);
    if ws.path.exists()
        && let Err(e) = tx.run(Action::MoveDir {
            from: ws.path.clone(),
            to: trash.clone(),
        })
    {
        return Err(rolled_back(tx, ws, e));
    }
    // What completes the delete is decided now and recorded with the commit point, so
    // that a process killed after it leaves a journal that finishes all of it: git forgets
    // the moved worktrees, then the branches grove created go.
    let mut prunes: Vec<Action> = Vec::new();
    for r in ws.repos.iter().filter(|r| r.source_repo.is_dir()) {
        if !prunes
            .iter()
            .any(|p| matches!(p, Action::PruneWorktrees { source, .. } if *source == r.source_repo))
        {
            prunes.push(Action::PruneWorktrees {
                repo: r.repo_name.clone(),
                source: r.source_repo.clone(),
            });
        }
    }
    let mut notes: Vec<(String, String)> = Vec::new();
    let mut deletes = Vec::new();
    for r in ws.repos.iter().filter(|r| r.source_repo.is_dir()) {
        match branch_fate(r, force) {
            Fate::Delete(tip) => deletes.push(Action::DeleteBranch {
                repo: r.repo_name.clone(),
                source: r.source_repo.clone(),
                branch: r.branch.clone(),
                tip,
            }),
            Fate::Keep(why) => {
                warnings.push(format!("{}: {why}", r.repo_name));
                notes.push((r.repo_name.clone(), why));
            }
            Fate::Gone => {}
        }
    }
    let n_prunes = prunes.len();
    let then: Vec<Action> = prunes.into_iter().chain(deletes.iter().cloned()).collect();
    let planned = match tx.commit_with(
        Action::SetState {
            name: ws.name.clone(),
            before: Some(Box::new(ws.clone())),
            after: None,
        },
        then,
    ) {
        Ok(p) => p,
        Err(e) => return Err(rolled_back(tx, ws, e)),
    };

    // Past the commit point: the workspace is gone from state. What is left completes it.
    complete(
        tx, &ws.name, &planned, n_prunes, deletes, &mut notes, warnings,
    )?;
    if trash.exists() {
        unlink_in_background(ctx, &trash);
    }
    let repos = ws
        .repos
        .iter()
        .map(|r| RepoResult::removed(r, &notes))
        .collect();
    Ok(Deletion {
        name: ws.name.clone(),
        path: ws.path.clone(),
        outcome: WorkspaceOutcome::Deleted,
        repos,
        state_removed: true,
        error: None,
    })
}

/// Rolls a failed delete back (the workspace directory returns) and explains.
fn rolled_back(tx: Tx<'_, '_>, ws: &Workspace, cause: Error) -> Error {
    let id = tx.id().to_string();
    let (_, clean) = tx.rollback();
    if clean {
        cause.context(format!(
            "cannot delete workspace `{}`; nothing was changed",
            ws.name
        ))
    } else {
        let mut pending = tx::recovery_pending(&id, &ws.name, Kind::Delete);
        pending.message = format!(
            "cannot delete workspace `{}`: {}; restoring it failed too",
            ws.name, cause.message
        );
        pending
    }
}

/// `<parent>/.trash/<name>-<nanos>`: same file system as the workspace, so moving it there
/// is one rename however many files it holds.
fn trash_path(ws: &Workspace) -> PathBuf {
    let base = ws
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| ws.name.clone());
    trash_path_for(&ws.path, &base)
}

/// `<parent of path>/.trash/<base>-<nanos>`.
pub(crate) fn trash_path_for(path: &Path, base: &str) -> PathBuf {
    let parent = path.parent().unwrap_or(Path::new("/"));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    parent.join(TRASH).join(format!("{base}-{nanos}"))
}

/// The directory quarantined workspaces wait in until their bytes are removed.
pub const TRASH: &str = ".trash";

/// Past the commit point of a removal: runs the planned worktree prunes (the first
/// `n_prunes` of `planned`) and then the branch deletions (`deletes`, the rest), and
/// finishes the journal, or leaves it for `gw doctor --fix` when anything failed. A branch
/// that could not be deleted becomes a note (repo, why) and a warning.
pub(crate) fn complete(
    mut tx: Tx<'_, '_>,
    workspace: &str,
    planned: &[usize],
    n_prunes: usize,
    deletes: Vec<Action>,
    notes: &mut Vec<(String, String)>,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let (prune_steps, delete_steps) = planned.split_at(n_prunes);
    let mut complete = tx
        .run_planned(prune_steps, true)
        .into_iter()
        .all(|r| r.is_ok());
    for (action, result) in deletes.into_iter().zip(tx.run_planned(delete_steps, true)) {
        if let (Action::DeleteBranch { repo, branch, .. }, Err(e)) = (action, result) {
            complete = false;
            let why = format!("could not delete branch {branch}: {}", e.message);
            warnings.push(format!("{repo}: {why}"));
            notes.push((repo, why));
        }
    }
    if complete {
        tx.finish()
    } else {
        let id = tx.abandon();
        warnings.push(format!(
            "some cleanup of `{workspace}` is left for `gw doctor --fix` (operation {id})"
        ));
        Ok(())
    }
}

/// Removes `trash` in a detached `gw unlink-trash` process, so a huge tree does not hold
/// up the command; falls back to removing it here.
pub(crate) fn unlink_in_background(ctx: &Ctx<'_>, trash: &Path) {
    if let Some(exe) = &ctx.env.exe {
        let mut cmd = crate::proc::Cmd::new(exe, ctx.home.root());
        cmd.arg("unlink-trash").arg(trash);
        if cmd.spawn_detached().is_ok() {
            return;
        }
    }
    let _ = unlink_trash(trash);
}

/// `gw unlink-trash`'s result.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct UnlinkReport {
    pub removed: PathBuf,
}

/// `gw unlink-trash PATH` (hidden): removes a quarantined workspace. Refuses anything that
/// is not directly inside a `.trash` directory.
pub fn unlink_trash(path: &Path) -> Result<UnlinkReport> {
    let in_trash = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == TRASH);
    if !in_trash {
        return Err(Error::usage(format!(
            "refusing to remove `{}`: it is not inside a `{TRASH}` directory",
            path.display()
        )));
    }
    let mut last = None;
    for _ in 0..10 {
        match fsx::remove_dir_all(path) {
            Ok(()) => {
                return Ok(UnlinkReport {
                    removed: path.to_path_buf(),
                });
            }
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Err(last.expect("ten attempts failed").into())
}

pub(crate) enum Fate {
    /// Delete it; it points at this commit.
    Delete(String),
    /// Keep it, for this reason.
    Keep(String),
    /// Nothing to do (preserved, or already gone).
    Gone,
}

/// Whether the branch of `r` can go: grove created it, it is checked out nowhere, and (unless
/// forced) its commits exist on another branch or a remote.
pub(crate) fn branch_fate(r: &RepoEntry, force: bool) -> Fate {
    if r.preserve_branch {
        return Fate::Gone;
    }
    let repo = match git::Repo::open(&r.source_repo) {
        Ok(repo) => repo,
        Err(e) => return Fate::Keep(format!("kept branch {}: {e}", r.branch)),
    };
    let Some(tip) = repo.local_branch(&r.branch) else {
        return Fate::Gone;
    };
    let branch = &r.branch;
    if let Ok(wts) = repo.worktrees()
        && let Some(wt) = wts
            .iter()
            .find(|w| w.branch.as_deref() == Some(branch.as_str()) && !w.prunable)
    {
        return Fate::Keep(format!(
            "kept branch {branch}: it is checked out at {}",
            wt.path.display()
        ));
    }
    if !force {
        match repo.unique_commits(branch) {
            Ok(0) => {}
            Ok(n) => {
                return Fate::Keep(format!(
                    "kept branch {branch}: {n} commit{} only on it (delete with `git -C {} branch -D {branch}`)",
                    if n == 1 { " exists" } else { "s exist" },
                    crate::proc::shell_quote(&r.source_repo.to_string_lossy()),
                ));
            }
            Err(e) => {
                return Fate::Keep(format!(
                    "kept branch {branch}: cannot tell whether it holds unique commits: {e}"
                ));
            }
        }
    }
    Fate::Delete(tip)
}
