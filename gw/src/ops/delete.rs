//! `gw delete`: remove workspaces, their worktrees and the branches grove created.
//!
//! Nothing that holds work is destroyed without `--force`: a worktree with uncommitted
//! changes, or a file in the workspace directory outside any worktree, makes the delete
//! refuse with `WORKTREE_DIRTY` — before the hooks run, and again after them; a branch
//! whose commits exist on no other branch or remote is kept (and reported). A branch that
//! existed before grove used it is never deleted. Every named workspace is attempted (until
//! a signal asks to stop); the result says what happened to each. The removal itself is
//! `ops::teardown`'s.

use std::path::PathBuf;

use serde::Serialize;

use crate::action::NextAction;
use crate::config::HookKind;
use crate::error::{Code, Error, Result};
use crate::ops::plan::{self, Change, ChangeKind, Described, Fact, PlanDoc, PlanKind};
use crate::ops::safety::{self, Inspection, Remover};
use crate::ops::teardown;
use crate::ops::{Ctx, Outcome, RepoResult, resolve, trash, tx};
use crate::state::Workspace;
use crate::state::journal::Kind;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DeleteOptions {
    pub names: Vec<String>,
    /// Discard uncommitted changes and delete branches holding unpushed commits.
    pub force: bool,
    /// Erase at once instead of keeping the workspace in the trash for `gw restore`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub purge: bool,
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
    /// The trash entry that keeps it for `gw restore` (`null`: erased, with `--purge` or
    /// `trash.keep = "0"`, or not deleted).
    pub trash: Option<String>,
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
        let mut out = vec![NextAction::read(
            "List the remaining workspaces",
            &["gw", "list", "--format", "json"],
        )];
        for d in &self.deleted {
            if let Some(id) = &d.trash {
                out.push(NextAction::write(
                    format!("Bring workspace {} back from the trash", d.name),
                    &["gw", "restore", id, "--format", "json"],
                ));
            }
        }
        out
    }
}

/// Deletes every named workspace, attempting all of them.
pub fn delete(ctx: &Ctx<'_>, opts: DeleteOptions) -> Result<DeleteReport> {
    delete_as(ctx, opts, Remover::Delete)
}

/// [`delete`], for `remover` (`gw prune`, `gw create --replace` delete through it): what
/// holds work is judged by the kernel as that remover would lose it.
pub fn delete_as(ctx: &Ctx<'_>, opts: DeleteOptions, remover: Remover) -> Result<DeleteReport> {
    let config = ctx.config()?;
    let names = clean_names(&opts.names);
    if names.is_empty() {
        return Err(
            Error::usage("no workspace names given").with_fix("Name the workspaces to delete")
        );
    }
    if let Some(expect) = &opts.expect {
        let now = describe_after(
            ctx,
            &config,
            &names,
            opts.force,
            keeps(&config, opts.purge),
            remover,
            &mut Vec::new(),
        )?;
        plan::verify(
            PlanKind::Delete,
            expect,
            &inputs(&names, opts.force, opts.purge),
            &now,
        )?;
    }
    let mut report = DeleteReport {
        deleted: Vec::new(),
        count: 0,
        warnings: Vec::new(),
        errors: Vec::new(),
    };
    for name in names {
        if let Some(sig) = crate::proc::signals::requested() {
            report
                .errors
                .push(tx::cancelled(sig, &format!("(before deleting `{name}`)")));
            break;
        }
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
                    trash: None,
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
        // A workspace whose directory is already gone has nothing to bring back.
        let keep = keeps(&config, opts.purge) && crate::fsx::exists(&ws.path);
        match delete_one(
            ctx,
            &ws,
            hook,
            remover,
            opts.force,
            keep,
            &mut report.warnings,
        ) {
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
                    trash: None,
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

fn clean_names(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if !out.iter().any(|m| m == n) {
            out.push(n.to_string());
        }
    }
    out
}

fn inputs(names: &[String], force: bool, purge: bool) -> serde_json::Value {
    serde_json::to_value(DeleteOptions {
        names: names.to_vec(),
        force,
        purge,
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
    let described = describe(ctx, &config, &names, opts.force, opts.purge)?;
    Ok(plan::document(
        PlanKind::Delete,
        inputs(&names, opts.force, opts.purge),
        described,
    ))
}

/// What deleting `names` would change, and the facts that depends on.
pub fn describe(
    ctx: &Ctx<'_>,
    config: &crate::config::Config,
    names: &[String],
    force: bool,
    purge: bool,
) -> Result<Described> {
    describe_after(
        ctx,
        config,
        names,
        force,
        keeps(config, purge),
        Remover::Delete,
        &mut Vec::new(),
    )
}

/// Whether a delete keeps what it removes in the trash: unless `--purge`, or
/// `trash.keep = "0"`.
pub fn keeps(config: &crate::config::Config, purge: bool) -> bool {
    !purge && !config.trash.keep.is_zero()
}

/// [`describe`], after earlier deletions of the same command that delete the branches
/// `going` (repository, branch); the branches these delete join them.
pub fn describe_after(
    ctx: &Ctx<'_>,
    config: &crate::config::Config,
    names: &[String],
    force: bool,
    keep: bool,
    remover: Remover,
    going: &mut Vec<(PathBuf, String)>,
) -> Result<Described> {
    let state = ctx.state()?;
    let mut d = Described {
        workspace: names.join(", "),
        ..Described::default()
    };
    // The command deletes the workspaces in turn, so a later one's branch is judged with
    // the earlier ones' gone.
    for name in names {
        let ws = resolve::by_name(&state, name)?;
        let (inspections, stray) = preflight(ws, remover, force)?;
        let multi = names.len() > 1;
        let label = |repo: &str| {
            if multi {
                format!("{name}/{repo}")
            } else {
                repo.to_string()
            }
        };
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
            d.changes.push(
                Change::new(ChangeKind::RunHook).detail(format!("pre_delete: {}", h.command)),
            );
        }
        for (r, i) in ws.repos.iter().zip(&inspections) {
            teardown::describe_worktree(r, &label(&r.repo_name), i, remover, &mut d);
        }
        let dirty = inspections.iter().any(|i| i.holds_work(remover));
        if crate::fsx::exists(&ws.path) {
            ctx.territory().check(&ws.path, "delete")?;
            d.changes.push(
                Change::new(ChangeKind::MoveToTrash)
                    .path(&ws.path)
                    .destructive(dirty || !stray.is_empty())
                    .detail(if keep {
                        format!(
                            "into {}/, kept for {} (`gw restore {}` brings it back)",
                            crate::home::TRASH,
                            crate::duration::format_age(config.trash.keep),
                            crate::proc::shell_quote(name)
                        )
                    } else {
                        format!(
                            "into {}/; the files are removed in the background",
                            crate::home::TRASH
                        )
                    }),
            );
        }
        d.changes
            .push(Change::new(ChangeKind::RemoveStateEntry).detail(format!("workspace {name}")));
        for r in &ws.repos {
            teardown::describe_completion(ctx, r, &label(&r.repo_name), force, keep, going, &mut d);
        }
    }
    Ok(d)
}

/// Inspects every worktree and, unless forced, refuses when `remover` would lose work
/// (the kernel's verdict, `Work::refusal`). Returns the inspections and the files outside
/// any worktree.
fn preflight(
    ws: &Workspace,
    remover: Remover,
    force: bool,
) -> Result<(Vec<Inspection>, Vec<String>)> {
    let inspections = safety::inspect_all(&ws.repos);
    let stray = safety::work::stray_files(ws);
    let refused: Vec<_> = ws
        .repos
        .iter()
        .zip(&inspections)
        .map(|(r, i)| (r, i, i.work.refusal(remover, force)))
        .filter(|(_, _, held)| !held.is_empty())
        .collect();
    let stray_refused = !(stray.is_empty() || force && remover.forcible(safety::Kind::Stray));
    if !refused.is_empty() || stray_refused {
        let stray: &[String] = if stray_refused { &stray } else { &[] };
        return Err(safety::refused(&ws.name, &refused, stray));
    }
    Ok((inspections, stray))
}

fn delete_one(
    ctx: &Ctx<'_>,
    ws: &Workspace,
    hook: Option<&crate::config::Hook>,
    remover: Remover,
    force: bool,
    keep: bool,
    warnings: &mut Vec<String>,
) -> Result<Deletion> {
    // With hooks, the worktrees are inspected before they run (a refusal must not wait for
    // them) and again under the lock; without, once, under the lock.
    let hooks = teardown::Hooks::of(&ws.repos, hook);
    if crate::fsx::exists(&ws.path) {
        ctx.territory().check(&ws.path, "delete")?;
    }
    let branches: Vec<&str> = ws.repos.iter().map(|r| r.branch.as_str()).collect();
    let lock = || tx::lock_workspaces(ctx, &[&ws.name])?.with_branches(ctx, &branches);
    let (locks, (inspections, stray)) = if !hooks.is_empty() {
        let inspected = preflight(ws, remover, force)?;
        warnings.extend(teardown::run_hooks(ctx, ws, &hooks)?);
        (lock()?, inspected)
    } else {
        let locks = lock()?;
        (locks, preflight(ws, remover, force)?)
    };
    ctx.events.progress(&format!("deleting {}", ws.name));
    let base = ws
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| ws.name.clone());
    let entry = trash::path_for(&ws.path, &base);
    let (to, keep) = if keep {
        let reason = match remover {
            Remover::Prune => trash::Reason::Prune,
            Remover::CreateReplace => trash::Reason::Replace,
            _ => trash::Reason::Delete,
        };
        (
            trash::Layout::of(&entry).workspace(),
            Some(teardown::Keep {
                entry: entry.clone(),
                reason,
            }),
        )
    } else {
        (entry.clone(), None)
    };
    let kept = keep.as_ref().map(|_| {
        entry
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let request = teardown::Request {
        ws,
        kind: Kind::Delete,
        targets: &ws.repos,
        inspections: &inspections,
        stray: &stray,
        moves: vec![(ws.path.clone(), to)],
        after: None,
        force,
        remover,
        inspected_under_lock: hooks.is_empty(),
        keep,
    };
    let removed = teardown::remove(ctx, locks, request).map_err(|f| {
        f.error(
            &format!("delete workspace `{}`", ws.name),
            &ws.name,
            Kind::Delete,
        )
    })?;
    warnings.extend(removed.warnings);
    let repos = ws
        .repos
        .iter()
        .map(|r| RepoResult::removed(r, &removed.notes))
        .collect();
    Ok(Deletion {
        name: ws.name.clone(),
        path: ws.path.clone(),
        outcome: WorkspaceOutcome::Deleted,
        repos,
        state_removed: true,
        trash: kept,
        error: None,
    })
}
