//! `gw reset`: put every worktree back on the workspace's recorded branch, then sync it.
//!
//! A worktree already on its branch is synced (`ready`). One that wandered to another
//! branch or a detached HEAD is switched back (`switched`) unless it has uncommitted
//! changes, which are never thrown away without `--discard` (`skipped`); `--discard`
//! discards changes to tracked files only (untracked files stay). The switches run in one
//! transaction (`ops::tx`) under the workspace lock: if any of them fails, every switch
//! this invocation made is undone (`rolled_back`), and a reset killed half way is found and
//! undone by `gw doctor --fix`. Repositories already on their branch are synced either way.

use serde::Serialize;

use crate::action::NextAction;
use crate::error::Result;
use crate::git::{self, Changes, Head};
use crate::ops::plan::{self, Change, ChangeKind, Described, PlanDoc, PlanKind};
use crate::ops::safety::{self, Remover, Work};
use crate::ops::sync::{self, RepoSync, SyncReport};
use crate::ops::tx::{self, Tx, Undo};
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

/// How a repository's switch went.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Switched {
    /// Not part of the transaction.
    No,
    Done,
    /// It failed (why); it did not take effect, or was undone.
    Failed(String),
    /// It succeeded and was undone because another switch failed (why).
    RolledBack(String),
    /// It succeeded, and undoing it left it in place (why).
    Kept(String),
}

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
    let name = resolve::name(ctx, opts.name.as_deref())?;
    let locks = tx::lock_workspaces(ctx, &[&name])?;
    let ws = resolve::by_name(&ctx.state()?, &name)?.clone();
    resolve::require_dir(&ws)?;
    let plans = parallel::map(&ws.repos, |r| plan(&ws.name, r, opts.discard));
    let mut fetch = true;
    if let Some(expect) = &opts.expect {
        let now = describe(&ws, &plans);
        plan::verify(
            PlanKind::Reset,
            expect,
            &inputs(&ws.name, opts.discard),
            &now,
        )?;
        // Exactly what the plan described: no fetch moves the bases under it.
        fetch = false;
    }
    let all: Vec<&RepoEntry> = ws.repos.iter().collect();
    sync::require_trust(ctx, "gw reset", &all)?;

    // Switch the wandered worktrees back, in one journaled transaction.
    let mut switched: Vec<Switched> = ws.repos.iter().map(|_| Switched::No).collect();
    let mut failure = None;
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
                if let Err(e) = safety::remove::tracked_changes(ctx, &r.worktree_path) {
                    switched[i] = Switched::Failed(format!("cannot discard changes: {e}"));
                    continue;
                }
            }
            ctx.events
                .progress(&format!("switching {} to {}", r.repo_name, r.branch));
            actions.push(action);
            indices.push(i);
        }
        let results = tx.run_all(actions, true);
        let first_error = results.iter().find_map(|r| r.as_ref().err()).cloned();
        match first_error {
            None => {
                tx.finish()?;
                for i in indices {
                    switched[i] = Switched::Done;
                }
            }
            Some(cause) => {
                // One switch failed: undo every switch this reset made.
                let id = tx.id().to_string();
                let (undone, clean) = tx.rollback();
                let failed_repo = indices
                    .iter()
                    .zip(&results)
                    .find(|(_, r)| r.is_err())
                    .map(|(i, _)| ws.repos[*i].repo_name.clone())
                    .unwrap_or_default();
                for (i, result) in indices.iter().zip(&results) {
                    let name = &ws.repos[*i].repo_name;
                    let undo = undone.iter().find_map(|(a, u)| match a {
                        Action::SwitchBranch { repo, .. } if repo == name => Some(u),
                        _ => None,
                    });
                    switched[*i] = match (result, undo) {
                        (_, Some(Undo::Failed(why))) => {
                            Switched::Failed(format!("undoing the switch failed: {why}"))
                        }
                        (_, Some(Undo::Kept(why))) => Switched::Kept(why.clone()),
                        (Err(e), _) => Switched::Failed(e.message.clone()),
                        (Ok(()), _) => Switched::RolledBack(format!(
                            "switched back, then undone because switching {failed_repo} failed"
                        )),
                    };
                }
                if !clean {
                    failure = Some(
                        tx::recovery_pending(&id, &ws.name, Kind::Reset).with_message(format!(
                            "cannot reset `{}`: {}; undoing the switches failed too",
                            ws.name, cause.message
                        )),
                    );
                }
            }
        }
    }

    // Then sync every repository that is on its branch now (`pre_sync`/`post_sync` run
    // outside the lock; see `sync::sync_repos`).
    let locks = tx::lock_workspaces(ctx, &[&ws.name])?;
    let to_sync: Vec<usize> = (0..ws.repos.len())
        .filter(|&i| match &plans[i] {
            Plan::Sync => true,
            Plan::Switch { .. } => matches!(switched[i], Switched::Done | Switched::No),
            Plan::Done(_) => false,
        })
        .collect();
    let entries: Vec<&RepoEntry> = to_sync.iter().map(|&i| &ws.repos[i]).collect();
    let mut synced: Vec<Option<RepoSync>> = ws.repos.iter().map(|_| None).collect();
    for (i, out) in to_sync
        .into_iter()
        .zip(sync::sync_repos(ctx, locks, &ws, &entries, fetch))
    {
        synced[i] = Some(out);
    }
    let repos: Vec<RepoSync> = ws
        .repos
        .iter()
        .zip(plans)
        .zip(switched)
        .zip(synced)
        .map(|(((r, p), s), synced)| finish(r, p, &s, synced))
        .collect();
    let mut report = sync::report(&ws, repos, "reset");
    if let Some(pending) = failure {
        report.failure = Some(pending);
    }
    Ok(ResetReport(report))
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
    resolve::require_dir(&ws)?;
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
                Change::new(ChangeKind::Skip).repo(&r.repo_name).detail(
                    out.result
                        .detail
                        .clone()
                        .unwrap_or_else(|| out.outcome().as_str().to_string()),
                ),
            ),
            Plan::Sync => d.changes.push(
                Change::new(ChangeKind::Sync)
                    .repo(&r.repo_name)
                    .branch(&r.branch)
                    .detail("rebase onto its base when behind"),
            ),
            Plan::Switch { from, discard, .. } => {
                if *discard {
                    d.changes.push(
                        Change::new(ChangeKind::DiscardChanges)
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
                    Change::new(ChangeKind::SwitchBranch)
                        .repo(&r.repo_name)
                        .branch(&r.branch)
                        .detail(format!(
                            "from {}",
                            from.as_deref().unwrap_or("a detached HEAD")
                        )),
                );
                d.changes.push(
                    Change::new(ChangeKind::Sync)
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
    let inspected: std::result::Result<(git::Repo, Head, Changes), git::Error> =
        git::Repo::open(&r.worktree_path).and_then(|repo| {
            let (head, changes) = (repo.head()?, repo.changes()?);
            Ok((repo, head, changes))
        });
    let (repo, head, changes) = match inspected {
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
    // Switching away from a detached HEAD whose commits no branch, tag or remote has
    // leaves them to the reflog alone, and a later delete takes that with the worktree.
    // What the switch would lose, judged by the kernel: a detached HEAD's commits (the
    // reflog alone would name them; give them a branch first), changes to tracked files
    // (hidden edits included) unless `--discard`.
    let mut work = Work(safety::work::from_changes(changes.clone()));
    work.0.extend(safety::work::hidden(&repo));
    work.0.extend(safety::work::beyond_files(&repo));
    let refused = work.refusal(Remover::ResetSwitch, discard);
    if let Some(held) = refused
        .iter()
        .find(|h| !Remover::ResetSwitch.forcible(h.kind()))
    {
        let dir = crate::proc::shell_quote(&r.worktree_path.to_string_lossy());
        let why = match held.kind() {
            safety::Kind::Unreadable => format!(
                "{} (what it holds is unknown); make it readable, or move it away, before \
                 switching back to {}",
                held.describe(),
                r.branch
            ),
            _ => format!(
                "{}; give them a branch (`git -C {dir} switch -c NAME`) before switching back \
                 to {}",
                held.describe(),
                r.branch
            ),
        };
        return skip(out, why, false);
    }
    if !refused.is_empty() {
        let n = changes.count();
        let why = if n > 0 {
            format!(
                "dirty working tree ({n} uncommitted change{}), {on}",
                if n == 1 { "" } else { "s" }
            )
        } else {
            let what: Vec<String> = refused.iter().map(|h| h.describe()).collect();
            format!("{}, {on}", what.join("; "))
        };
        return skip(out, why, true);
    }
    let discard = discard && !work.lost(Remover::ResetSwitch).is_empty();
    let Some(from_oid) = head.oid else {
        out.set(Outcome::Skipped, Some(format!("{on}, with no commits yet")));
        return Plan::Done(Box::new(out));
    };
    Plan::Switch {
        from: head.branch,
        from_oid,
        discard,
    }
}

/// The repository's outcome: its plan carried out, then `synced` when on its branch.
fn finish(r: &RepoEntry, plan: Plan, switched: &Switched, synced: Option<RepoSync>) -> RepoSync {
    let synced = || synced.expect("every repository on its branch was synced");
    match plan {
        Plan::Done(out) => *out,
        Plan::Sync => {
            let mut synced = synced();
            if matches!(synced.outcome(), Outcome::Rebased | Outcome::UpToDate) {
                synced.result.outcome = Outcome::Ready;
            }
            synced
        }
        Plan::Switch { from, .. } => {
            let from_name = from.clone().unwrap_or_else(|| "detached HEAD".into());
            let not_switched = |outcome: Outcome, detail: String| {
                let mut out = RepoSync::new(r);
                out.switched_from = Some(from.clone());
                if let Some(b) = &from {
                    out.result.branch = b.clone();
                }
                out.actions.push(out.status_action());
                out.set(outcome, Some(detail));
                out
            };
            match switched {
                Switched::Failed(e) => {
                    return not_switched(
                        Outcome::Failed,
                        format!("cannot switch back to {} (on {from_name}): {e}", r.branch),
                    );
                }
                Switched::RolledBack(why) => {
                    return not_switched(Outcome::RolledBack, format!("on {from_name}: {why}"));
                }
                Switched::Kept(why) => {
                    let mut out = not_switched(Outcome::Kept, why.clone());
                    out.result.branch = r.branch.clone();
                    return out;
                }
                Switched::Done | Switched::No => {}
            }
            let mut synced = synced();
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
