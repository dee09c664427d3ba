//! `gw reset`: put every worktree back on the workspace's recorded branch, then sync it.
//!
//! A worktree already on its branch is synced (`ready`). One that wandered to another
//! branch or a detached HEAD is switched back (`switched`) unless it has uncommitted
//! changes, which are never thrown away without `--discard` (`skipped`); `--discard`
//! discards changes to tracked files only, as `git switch --discard-changes` does.

use serde::Serialize;

use crate::action::NextAction;
use crate::error::Result;
use crate::git;
use crate::ops::hooks::Vars;
use crate::ops::sync::{self, RepoSync, SyncReport};
use crate::ops::{Ctx, Outcome, resolve};
use crate::parallel;
use crate::state::RepoEntry;

#[derive(Debug, Clone)]
pub struct ResetOptions {
    pub name: Option<String>,
    /// Discard changes to tracked files that would block switching back.
    pub discard: bool,
}

/// Same shape as sync's report: `{workspace, path, branch, repos, count}`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct ResetReport(pub SyncReport);

/// `gw reset [NAME] [--discard]`.
pub fn reset(ctx: &Ctx<'_>, opts: ResetOptions) -> Result<ResetReport> {
    ctx.config()?;
    let state = ctx.state()?;
    let ws = resolve::workspace(&state, opts.name.as_deref(), &ctx.env.cwd)?;
    let vars = Vars::of(ws);
    let repos = parallel::map(&ws.repos, |r| {
        reset_repo(ctx, &ws.name, r, &vars, opts.discard)
    });
    let report = sync::report(ws, repos, "reset");
    Ok(ResetReport(report))
}

fn reset_repo(ctx: &Ctx<'_>, ws: &str, r: &RepoEntry, vars: &Vars, discard: bool) -> RepoSync {
    let mut out = RepoSync::new(r);
    if !r.worktree_path.is_dir() || !r.source_repo.is_dir() {
        // Sync reports exactly what is missing.
        return sync::sync_repo(ctx, r, vars);
    }
    let inspected = git::Repo::open(&r.worktree_path).and_then(|repo| {
        let head = repo.head()?;
        let changes = repo.changes()?;
        Ok((head, changes))
    });
    let (head, changes) = match inspected {
        Ok(x) => x,
        Err(e) => {
            out.set(Outcome::Failed, Some(format!("status check failed: {e}")));
            return out;
        }
    };
    if head.branch.as_deref() == Some(r.branch.as_str()) && head.in_progress.is_none() {
        let mut synced = sync::sync_repo(ctx, r, vars);
        if matches!(synced.outcome(), Outcome::Rebased | Outcome::UpToDate) {
            synced.result.outcome = Outcome::Ready;
        }
        return synced;
    }
    let on = match (&head.branch, &head.in_progress) {
        (Some(b), Some(op)) => format!("on {b}, {op} in progress"),
        (Some(b), None) => format!("on {b}"),
        (None, _) => "on a detached HEAD".to_string(),
    };
    out.switched_from = Some(head.branch.clone());
    if let Some(b) = &head.branch {
        out.result.branch = b.clone();
    }
    if head.in_progress.is_some() {
        out.actions.push(out.status_action());
        out.set(
            Outcome::Skipped,
            Some(format!(
                "{on}; finish or abort it before switching back to {}",
                r.branch
            )),
        );
        return out;
    }
    if !changes.is_clean() && !discard {
        out.actions.push(out.status_action());
        out.actions.push(NextAction::destructive(
            "Switch back anyway, discarding changes to tracked files",
            &["gw", "reset", ws, "--discard", "--format", "json"],
        ));
        let n = changes.count();
        out.set(
            Outcome::Skipped,
            Some(format!(
                "dirty working tree ({n} uncommitted change{}), {on}",
                if n == 1 { "" } else { "s" }
            )),
        );
        return out;
    }
    ctx.events
        .progress(&format!("switching {} to {}", r.repo_name, r.branch));
    if let Err(e) = git::switch(&r.worktree_path, &r.branch, discard) {
        out.actions.push(out.status_action());
        out.set(
            Outcome::Failed,
            Some(format!("cannot switch back to {} ({on}): {e}", r.branch)),
        );
        return out;
    }
    let from = head
        .branch
        .clone()
        .unwrap_or_else(|| "detached HEAD".into());
    let mut synced = sync::sync_repo(ctx, r, vars);
    synced.switched_from = Some(head.branch);
    let sync_detail = synced.result.detail.take().unwrap_or_default();
    match synced.outcome() {
        Outcome::Failed => {
            synced.result.detail = Some(format!(
                "switched {from} → {}, then sync failed: {sync_detail}",
                r.branch
            ));
        }
        Outcome::Skipped => {
            // Switched back, but not synced: still a switch, with the reason.
            synced.result.outcome = Outcome::Switched;
            synced.result.detail = Some(format!(
                "switched {from} → {}; not synced: {sync_detail}",
                r.branch
            ));
        }
        _ => {
            synced.result.outcome = Outcome::Switched;
            synced.result.detail = Some(format!("switched {from} → {}; {sync_detail}", r.branch));
        }
    }
    synced
}
