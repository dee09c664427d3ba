//! The repairs of `gw doctor --fix`.

use super::{Fix, Issue, IssueKind};
use crate::error::Error;
use crate::fsx;
use crate::git;
use crate::ops::recover::{self, RecoveryOutcome};
use crate::ops::safety::remove;
use crate::ops::{Ctx, Outcome, tx};

/// Applies every fixable issue's repair not applied yet and sets each issue's outcome.
/// While a journal cannot be read, destructive repairs are left (it may describe them).
pub(super) fn apply(ctx: &Ctx<'_>, issues: &mut [Issue]) {
    let blocked = issues
        .iter()
        .find(|i| i.kind == IssueKind::JournalUnreadable)
        .map(|i| i.issue.clone());
    let mut mcp: Option<std::result::Result<crate::legacy::cleanup::Fixed, String>> = None;
    // Git and file repairs first; state edits are then made in one update.
    let mut drops: Vec<usize> = Vec::new();
    for (i, issue) in issues.iter_mut().enumerate() {
        if issue.outcome.is_some() {
            continue;
        }
        let Some(fix) = issue.fix.clone() else {
            issue.outcome = Some(Outcome::Left);
            issue.detail = Some(format!(
                "not safe to repair automatically; {}",
                issue.suggested_action
            ));
            continue;
        };
        if let Some(why) = blocked.as_deref().filter(|_| fix.is_destructive()) {
            issue.outcome = Some(Outcome::Left);
            issue.detail = Some(format!(
                "not repaired while an operation journal cannot be read (it may describe this): {why}"
            ));
            continue;
        }
        let result = match &fix {
            Fix::RemoveRegistration { source, path } => remove_registration(ctx, source, path),
            Fix::DropWorkspace { registrations, .. } => {
                drops.push(i);
                registrations
                    .iter()
                    .try_for_each(|(s, p)| remove_registration(ctx, s, p))
            }
            Fix::DropRepo { registration, .. } => {
                drops.push(i);
                match registration {
                    Some((s, p)) => remove_registration(ctx, s, p),
                    None => Ok(()),
                }
            }
            Fix::Repair { source, path } => repair(ctx, source, path),
            Fix::RemoveWorktree { source, path } => {
                remove::unrecorded_worktree(ctx, source, path).map(|_| ())
            }
            Fix::RemoveEmptyDir { path } => remove::empty_tree(ctx, path).map(|_| ()),
            Fix::RemoveStaleLock { path } => match fsx::open_by_any_process(path) {
                Some(false) => fsx::remove_file(path).map_err(|e| e.to_string()),
                _ => Err("a process has it open now; it is in use".into()),
            },
            // The same removal as the background `gw unlink-trash`, which may still be at it.
            Fix::RemoveTrash { path } => crate::ops::trash::unlink(ctx, path)
                .map(|_| ())
                .map_err(|e| e.message.clone()),
            Fix::RemoveKeptRef { source, name, oid } => {
                crate::ops::safety::keep::kept_ref(ctx, source, name, oid)
                    .map(|_| ())
                    .map_err(|e| e.message.clone())
            }
            // Done by `recover` before the other fixes.
            Fix::Recover { .. } => continue,
            Fix::McpCleanup => {
                let fixed = mcp.get_or_insert_with(|| {
                    crate::legacy::cleanup::fix(&ctx.home, ctx.env).map_err(|e| e.to_string())
                });
                mcp_outcome(fixed, issue)
            }
        };
        match result {
            Ok(()) => issue.outcome = Some(Outcome::Fixed),
            Err(e) => {
                issue.outcome = Some(Outcome::Failed);
                issue.detail = Some(e);
                drops.retain(|d| *d != i);
            }
        }
    }
    drop_entries(ctx, issues, &drops);
}

/// Points `source`'s registration at the worktree that moved to `path` — only a worktree
/// inside the workspace directory whose `.git` file names a registration of `source`'s.
fn repair(ctx: &Ctx<'_>, source: &std::path::Path, path: &std::path::Path) -> Result<(), String> {
    ctx.territory()
        .check(path, "repair the worktree registration of")
        .map_err(|e| e.message.clone())?;
    if !git::is_worktree_of(path, source) {
        return Err(format!(
            "`{}` is not a worktree of `{}`; left as it is",
            path.display(),
            source.display()
        ));
    }
    let _lock = tx::repo_lock(ctx, source).map_err(|e| e.message.clone())?;
    git::worktree_repair(source, &[path]).map_err(|e| e.to_string())
}

/// Removes `source`'s registration of the missing worktree that was at `path` — unless its
/// private git directory is now the only place of work (the kernel's judgement).
fn remove_registration(
    ctx: &Ctx<'_>,
    source: &std::path::Path,
    path: &std::path::Path,
) -> Result<(), String> {
    remove::stale_registration(ctx, source, path)
        .map(|_| ())
        .map_err(|e| e.message.clone())
}

fn mcp_outcome(
    fixed: &std::result::Result<crate::legacy::cleanup::Fixed, String>,
    issue: &mut Issue,
) -> Result<(), String> {
    match fixed {
        Err(e) => Err(e.clone()),
        Ok(f) => {
            let item = f
                .items
                .iter()
                .find(|it| Some(&it.path) == issue.path.as_ref());
            match item.map(|it| (it.status, it.detail.clone())) {
                Some((crate::legacy::cleanup::Status::Done, _)) => {
                    if let Some(b) = &f.backup {
                        issue.detail = Some(format!(
                            "backup {}; `gw-migrate restore {}` undoes it",
                            b.path.display(),
                            b.id
                        ));
                    }
                    Ok(())
                }
                Some((_, detail)) => Err(detail.unwrap_or_else(|| "left alone".into())),
                None => Err("no longer found".into()),
            }
        }
    }
}

/// Drops the state entries of `drops` (workspaces and repositories) in one update, under the
/// workspaces' locks, like any other change of them.
fn drop_entries(ctx: &Ctx<'_>, issues: &mut [Issue], drops: &[usize]) {
    if drops.is_empty() {
        return;
    }
    let fixes: Vec<Fix> = drops
        .iter()
        .filter_map(|&i| issues[i].fix.clone())
        .collect();
    let names: Vec<&str> = fixes
        .iter()
        .filter_map(|f| match f {
            Fix::DropWorkspace { name, .. } => Some(name.as_str()),
            Fix::DropRepo { workspace, .. } => Some(workspace.as_str()),
            _ => None,
        })
        .collect();
    let updated = tx::lock_workspaces(ctx, &names).and_then(|_locks| {
        ctx.store.update(|st| {
            for f in &fixes {
                match f {
                    Fix::DropWorkspace { name, .. } => {
                        st.remove(name);
                    }
                    Fix::DropRepo {
                        workspace, repo, ..
                    } => {
                        if let Some(w) = st.find_mut(workspace) {
                            w.repos.retain(|r| &r.repo_name != repo);
                        }
                    }
                    _ => {}
                }
            }
            Ok::<_, Error>(())
        })
    });
    if let Err(e) = updated {
        for &i in drops {
            issues[i].outcome = Some(Outcome::Failed);
            issues[i].detail = Some(format!("cannot update state: {}", e.message));
        }
    }
}

/// Finishes or rolls back every interrupted operation and sets the outcome of each
/// operation issue. A recovery that kept something (it holds work) is `left`, not
/// `fixed`: what it kept is reported on its own. An unreadable journal blocks them all.
pub(super) fn recover(ctx: &Ctx<'_>, issues: &mut [Issue]) {
    let recovered = recover::recover_all(ctx);
    for issue in issues.iter_mut() {
        let Some(Fix::Recover { id }) = &issue.fix else {
            continue;
        };
        let (outcome, detail) = match &recovered {
            Err(e) => (Outcome::Failed, Some(e.message.clone())),
            Ok(all) => match all.iter().find(|r| r.id == *id) {
                Some(r) => {
                    let steps = r.steps.join("; ");
                    issue.refused = r.refused;
                    match r.outcome {
                        RecoveryOutcome::Left => (Outcome::Failed, r.detail.clone()),
                        RecoveryOutcome::Kept => (
                            Outcome::Left,
                            Some(format!(
                                "recovered, but some of it was kept because it holds work: {steps}"
                            )),
                        ),
                        RecoveryOutcome::RolledBack => {
                            (Outcome::Fixed, Some(format!("rolled back: {steps}")))
                        }
                        RecoveryOutcome::Completed => {
                            (Outcome::Fixed, Some(format!("completed: {steps}")))
                        }
                    }
                }
                None => match all
                    .iter()
                    .find(|r| r.outcome == RecoveryOutcome::Left && r.workspace.is_none())
                {
                    // A corrupt journal blocked recovery.
                    Some(blocker) => {
                        issue.refused = blocker.refused;
                        (Outcome::Left, blocker.detail.clone())
                    }
                    // Another process finished it meanwhile.
                    None => (Outcome::Fixed, Some("already recovered".into())),
                },
            },
        };
        issue.outcome = Some(outcome);
        issue.detail = detail;
    }
    for issue in issues.iter_mut().filter(|i| i.fix.is_none()) {
        issue.outcome = Some(Outcome::Left);
        issue.detail = Some(format!(
            "not safe to repair automatically; {}",
            issue.suggested_action
        ));
    }
}
