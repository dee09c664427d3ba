//! `gw reset`: put every worktree back on the workspace's recorded branch, then sync it.
//!
//! A worktree already on its branch is synced (`ready`). One that wandered to another
//! branch or a detached HEAD is switched back (`switched`) unless it has uncommitted
//! changes, which are never thrown away without `--discard` (`skipped`); `--discard`
//! discards changes to tracked files only (untracked files stay). The switches run in one
//! transaction (`ops::tx`) under the workspace lock, so a reset killed half way is found
//! and undone by `gw doctor --fix`; each repository's switch succeeds or fails on its own.

use serde::Serialize;

use crate::action::NextAction;
use crate::error::Result;
use crate::git::{self, Changes, Head};
use crate::ops::hooks::Vars;
use crate::ops::plan::{self, Change, Described, PlanDoc, PlanKind};
use crate::ops::sync::{self, RepoSync, SyncReport};
use crate::ops::tx::{self, Tx};
use crate::ops::{Ctx, Outcome, resolve};
use crate::parallel;
use crate::state::RepoEntry;
use crate::state::journal::{Action, Kind};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ResetOptions {
    pub name: Option<String>,
    /// Discard changes to tracked files that would block switching back.
    pub discard: bool,
    /// `gw apply`: the plan this reset must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
}

/// Same shape as sync's report: `{workspace, path, branch, repos, count}`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct ResetReport(pub SyncReport);

/// How a repository's switch went: not attempted, done, or failed (why).
type Switched = Option<std::result::Result<(), String>>;

/// What to do with one repository, decided before anything changes.
enum Plan {
    /// On its branch: sync it.
    Sync,
    /// Nothing to do but report (skipped, or failed to inspect).
    Done(Box<RepoSync>),
    /// Switch back from `from` (`None`: detached at `from_oid`), discarding changes first
    /// when `discard`.
    Switch {
        from: Option<String>,
        from_oid: String,
        discard: bool,
    },
}

/// `gw reset [NAME] [--discard]`.
pub fn reset(ctx: &Ctx<'_>, opts: ResetOptions) -> Result<ResetReport> {
    ctx.config()?;
    let name = resolve::workspace(&ctx.state()?, opts.name.as_deref(), &ctx.env.cwd)?
        .name
        .clone();
    let locks = tx::lock_workspaces(ctx, &[&name])?;
    let ws = resolve::by_name(&ctx.state()?, &name)?.clone();
    let plans = parallel::map(&ws.repos, |r| plan(&ws.name, r, opts.discard));
    let mut mode = sync::Mode::REAL;
    if let Some(expect) = &opts.expect {
        let now = describe(&ws, &plans);
        plan::verify(
            PlanKind::Reset,
            expect,
            &inputs(&ws.name, opts.discard),
            &now,
        )?;
        mode.fetch = false;
    }

    // Switch the wandered worktrees back, in one journaled transaction.
    let mut switched: Vec<Switched> = ws.repos.iter().map(|_| None).collect();
    let switches: Vec<(usize, Action)> = ws
        .repos
        .iter()
        .zip(&plans)
        .enumerate()
        .filter_map(|(i, (r, p))| match p {
            Plan::Switch { from, from_oid, .. } => Some((
                i,
                Action::SwitchBranch {
                    repo: r.repo_name.clone(),
                    path: r.worktree_path.clone(),
                    from: from.clone(),
                    from_oid: from_oid.clone(),
                    to: r.branch.clone(),
                },
            )),
            _ => None,
        })
        .collect();
    if switches.is_empty() {
        drop(locks);
    } else {
        let mut tx = Tx::begin(ctx, locks, Kind::Reset, &ws.name, &[])?;
        // `--discard` throws changes away before the switch; by request, so not undoable.
        let mut actions = Vec::new();
        let mut indices = Vec::new();
        for (i, action) in switches {
            let r = &ws.repos[i];
            if let Plan::Switch { discard: true, .. } = plans[i] {
                ctx.events
                    .progress(&format!("discarding changes in {}", r.repo_name));
                if let Err(e) = git::discard_changes(&r.worktree_path) {
                    switched[i] = Some(Err(format!("cannot discard changes: {e}")));
                    continue;
                }
            }
            ctx.events
                .progress(&format!("switching {} to {}", r.repo_name, r.branch));
            actions.push(action);
            indices.push(i);
        }
        for (i, result) in indices.into_iter().zip(tx.run_all(actions, true)) {
            switched[i] = Some(result.map_err(|e| e.message.clone()));
        }
        // Each switch stands on its own: a failed one failed, the others are done.
        tx.finish()?;
    }

    // Then sync every repository that is on its branch now.
    let _locks = tx::lock_workspaces(ctx, &[&ws.name])?;
    let vars = Vars::of(&ws);
    let items: Vec<(&RepoEntry, &Plan, &Switched)> = ws
        .repos
        .iter()
        .zip(&plans)
        .zip(&switched)
        .map(|((r, p), s)| (r, p, s))
        .collect();
    let repos = parallel::map(&items, |(r, p, s)| finish(ctx, r, p, s, &vars, mode));
    Ok(ResetReport(sync::report(&ws, repos, "reset")))
}

fn inputs(name: &str, discard: bool) -> serde_json::Value {
    serde_json::to_value(ResetOptions {
        name: Some(name.to_string()),
        discard,
        expect: None,
    })
    .expect("options serialise")
}

/// `gw plan reset`: decides per repository exactly as `gw reset` does and describes it.
/// (Unlike the sync that follows a reset, the plan does not fetch: what a sync would do
/// after the switch is described as `sync`.)
pub fn plan_doc(ctx: &Ctx<'_>, opts: &ResetOptions) -> Result<PlanDoc> {
    ctx.config()?;
    let ws = resolve::workspace(&ctx.state()?, opts.name.as_deref(), &ctx.env.cwd)?.clone();
    let plans = parallel::map(&ws.repos, |r| plan(&ws.name, r, opts.discard));
    let described = describe(&ws, &plans);
    Ok(plan::document(
        PlanKind::Reset,
        inputs(&ws.name, opts.discard),
        described,
    ))
}

fn describe(ws: &crate::state::Workspace, plans: &[Plan]) -> Described {
    let mut d = Described {
        workspace: ws.name.clone(),
        ..Described::default()
    };
    for (r, p) in ws.repos.iter().zip(plans) {
        sync::worktree_facts(r, &mut d);
        match p {
            Plan::Done(out) => d.changes.push(
                Change::new("skip").repo(&r.repo_name).detail(
                    out.result
                        .detail
                        .clone()
                        .unwrap_or_else(|| out.outcome().as_str().to_string()),
                ),
            ),
            Plan::Sync => d.changes.push(
                Change::new("sync")
                    .repo(&r.repo_name)
                    .branch(&r.branch)
                    .detail("rebase onto its base when behind"),
            ),
            Plan::Switch { from, discard, .. } => {
                if *discard {
                    d.changes.push(
                        Change::new("discard_changes")
                            .repo(&r.repo_name)
                            .path(&r.worktree_path)
                            .destructive(true)
                            .detail("changes to tracked files are thrown away"),
                    );
                    d.warnings.push(format!(
                        "{}: uncommitted changes to tracked files would be destroyed",
                        r.repo_name
                    ));
                }
                d.changes.push(
                    Change::new("switch_branch")
                        .repo(&r.repo_name)
                        .branch(&r.branch)
                        .detail(format!(
                            "from {}",
                            from.as_deref().unwrap_or("a detached HEAD")
                        )),
                );
                d.changes.push(
                    Change::new("sync")
                        .repo(&r.repo_name)
                        .branch(&r.branch)
                        .detail("rebase onto its base when behind"),
                );
            }
        }
    }
    d
}

fn plan(ws: &str, r: &RepoEntry, discard: bool) -> Plan {
    let mut out = RepoSync::new(r);
    if !r.worktree_path.is_dir() || !r.source_repo.is_dir() {
        // Sync reports exactly what is missing.
        return Plan::Sync;
    }
    let inspected: std::result::Result<(Head, Changes), git::Error> =
        git::Repo::open(&r.worktree_path).and_then(|repo| Ok((repo.head()?, repo.changes()?)));
    let (head, changes) = match inspected {
        Ok(x) => x,
        Err(e) => {
            out.set(Outcome::Failed, Some(format!("status check failed: {e}")));
            return Plan::Done(Box::new(out));
        }
    };
    if head.branch.as_deref() == Some(r.branch.as_str()) && head.in_progress.is_none() {
        return Plan::Sync;
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
    let skip = |mut out: RepoSync, why: String, discardable: bool| {
        out.actions.push(out.status_action());
        if discardable {
            out.actions.push(NextAction::destructive(
                "Switch back anyway, discarding changes to tracked files",
                &["gw", "reset", ws, "--discard", "--format", "json"],
            ));
        }
        out.set(Outcome::Skipped, Some(why));
        Plan::Done(Box::new(out))
    };
    if head.in_progress.is_some() {
        let why = format!(
            "{on}; finish or abort it before switching back to {}",
            r.branch
        );
        return skip(out, why, false);
    }
    if !changes.is_clean() && !discard {
        let n = changes.count();
        let why = format!(
            "dirty working tree ({n} uncommitted change{}), {on}",
            if n == 1 { "" } else { "s" }
        );
        return skip(out, why, true);
    }
    let Some(from_oid) = head.oid else {
        out.set(Outcome::Skipped, Some(format!("{on}, with no commits yet")));
        return Plan::Done(Box::new(out));
    };
    Plan::Switch {
        from: head.branch,
        from_oid,
        discard: discard && !changes.is_clean(),
    }
}

/// The repository's outcome: its plan carried out, then synced when on its branch.
fn finish(
    ctx: &Ctx<'_>,
    r: &RepoEntry,
    plan: &Plan,
    switched: &Switched,
    vars: &Vars,
    mode: sync::Mode,
) -> RepoSync {
    match plan {
        Plan::Done(out) => (**out).clone(),
        Plan::Sync => {
            let mut synced = sync::sync_repo(ctx, r, vars, mode);
            if matches!(synced.outcome(), Outcome::Rebased | Outcome::UpToDate) {
                synced.result.outcome = Outcome::Ready;
            }
            synced
        }
        Plan::Switch { from, .. } => {
            let from_name = from.clone().unwrap_or_else(|| "detached HEAD".into());
            if let Some(Err(e)) = switched {
                let mut out = RepoSync::new(r);
                out.switched_from = Some(from.clone());
                if let Some(b) = from {
                    out.result.branch = b.clone();
                }
                out.actions.push(out.status_action());
                out.set(
                    Outcome::Failed,
                    Some(format!(
                        "cannot switch back to {} (on {from_name}): {e}",
                        r.branch
                    )),
                );
                return out;
            }
            let mut synced = sync::sync_repo(ctx, r, vars, mode);
            synced.switched_from = Some(from.clone());
            let sync_detail = synced.result.detail.take().unwrap_or_default();
            match synced.outcome() {
                Outcome::Failed => {
                    synced.result.detail = Some(format!(
                        "switched {from_name} → {}, then sync failed: {sync_detail}",
                        r.branch
                    ));
                }
                Outcome::Skipped => {
                    // Switched back, but not synced: still a switch, with the reason.
                    synced.result.outcome = Outcome::Switched;
                    synced.result.detail = Some(format!(
                        "switched {from_name} → {}; not synced: {sync_detail}",
                        r.branch
                    ));
                }
                _ => {
                    synced.result.outcome = Outcome::Switched;
                    synced.result.detail = Some(format!(
                        "switched {from_name} → {}; {sync_detail}",
                        r.branch
                    ));
                }
            }
            synced
        }
    }
}
