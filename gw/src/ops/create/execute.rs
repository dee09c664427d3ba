//! Carrying out a create plan in a transaction, and the setup that follows.

use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::ops::hooks::{self, Vars};
use crate::ops::tx::{self, Tx, Undo};
use crate::ops::warm::CopyResult;
use crate::ops::{Ctx, Outcome, RepoResult};
use crate::parallel;
use crate::state::journal::{Action, Kind};
use crate::state::{RepoEntry, SetupRecord, SetupStatus, Workspace};

use super::{CreatePlan, CreateReport, RepoPlan, SetupResult, exists};

/// Carries out a plan in a transaction. On failure, undoes everything this call created
/// (and only that), and says per repository what happened.
pub fn execute(ctx: &Ctx<'_>, plan: CreatePlan, locks: tx::Locks) -> Result<CreateReport> {
    fsx::create_dir_all(&plan.workspace_dir)?;
    // Under the workspace's lock, taken before planning: of two processes creating the
    // same name, the second sees the first's result here.
    if ctx.state()?.find(&plan.name).is_some() {
        return Err(exists(
            &plan.name,
            format!("a workspace named `{}` already exists", plan.name),
        ));
    }
    for r in &plan.repos {
        // A registration whose directory is gone holds the branch; git would refuse.
        for path in &r.stale {
            crate::ops::safety::remove::stale_registration(ctx, &r.source, path)?;
        }
    }
    ctx.events.progress(&format!(
        "creating {}",
        crate::ops::count(plan.repos.len(), "worktree", "worktrees")
    ));
    let dir = Action::CreateDir {
        path: plan.path.clone(),
    };
    let adds = plan.repos.iter().map(|r| Action::AddWorktree {
        repo: r.name.clone(),
        source: r.source.clone(),
        path: r.worktree.clone(),
        branch: plan.branch.clone(),
        how: r.how.clone(),
    });
    // The directory, then the worktrees in it, recorded with the journal's first write: one
    // durable write before the checkouts instead of three.
    let first: Vec<Action> = std::iter::once(dir).chain(adds).collect();
    let (mut tx, steps) = Tx::begin_with(ctx, locks, Kind::Create, &plan.name, &[], first)?;
    let (dir, adds) = steps.split_at(1);
    if let Some(Err(e)) = tx.run_intended(dir, false).pop() {
        tx.not_attempted(adds);
        let (_, clean) = tx.rollback();
        return Err(if clean {
            e
        } else {
            e.context("rollback incomplete")
        });
    }
    let added = tx.run_intended(adds, true);
    if let Some(first) = added.iter().find_map(|r| r.as_ref().err()).cloned() {
        return Err(fail(ctx, tx, &plan, &added, first));
    }
    let copied = match copy_all(ctx, &mut tx, &plan.repos) {
        Ok(c) => c,
        Err((results, first)) => return Err(fail(ctx, tx, &plan, &results, first)),
    };

    let now = jiff::Timestamp::now();
    let ws = Workspace {
        name: plan.name.clone(),
        path: plan.path.clone(),
        branch: plan.branch.clone(),
        created_at: crate::time::local(now),
        repos: plan
            .repos
            .iter()
            .map(|r| RepoEntry {
                repo_name: r.name.clone(),
                source_repo: r.source.clone(),
                worktree_path: r.worktree.clone(),
                branch: plan.branch.clone(),
                preserve_branch: r.preserve_branch,
                setup: None,
                extra: Default::default(),
            })
            .collect(),
        source: plan.source.clone(),
        blueprint: plan.blueprint.clone(),
        slot: None,
        extra: Default::default(),
    };
    if let Err(e) = tx.commit(Action::SetState {
        name: ws.name.clone(),
        before: None,
        after: Some(Box::new(ws.clone())),
    }) {
        return Err(fail(ctx, tx, &plan, &added, e));
    }
    tx.finish()?;

    let mut warnings = plan.warnings.clone();
    let setup = run_setup(ctx, &plan.repos, &ws);
    warnings.extend(record_setup(ctx, &ws.name, &setup));
    crate::stats::record(&ctx.home, crate::stats::Event::WorkspaceCreated, &ws);

    let repos: Vec<RepoResult> = plan
        .repos
        .iter()
        .map(|r| RepoResult {
            repo: r.name.clone(),
            outcome: Outcome::Created,
            branch: plan.branch.clone(),
            path: r.worktree.clone(),
            detail: Some(r.describe()),
        })
        .collect();
    Ok(CreateReport {
        name: plan.name,
        path: plan.path,
        branch: plan.branch,
        created_at: crate::time::utc(now),
        source: plan.source,
        blueprint: plan.blueprint,
        count: repos.len(),
        repos,
        setup,
        copied,
        replaced: None,
        warnings,
    })
}

/// Copies each planned repository's `copy` paths into its new worktree (in parallel, one
/// journaled step each). On a failure, the outcome of every repository (the first error
/// of each) and the first error, for the rollback.
#[allow(clippy::type_complexity)]
pub(crate) fn copy_all(
    ctx: &Ctx<'_>,
    tx: &mut Tx<'_, '_>,
    repos: &[RepoPlan],
) -> Result<Vec<CopyResult>, (Vec<Result<()>>, Error)> {
    let copying: Vec<&RepoPlan> = repos
        .iter()
        .filter(|r| !r.copy.entries.is_empty())
        .collect();
    if copying.is_empty() {
        return Ok(Vec::new());
    }
    ctx.events.progress(&format!(
        "copying into {}",
        crate::ops::count(copying.len(), "worktree", "worktrees")
    ));
    let steps: Vec<Action> = copying
        .iter()
        .map(|r| Action::CopyPaths {
            repo: r.name.clone(),
            source: r.source.clone(),
            path: r.worktree.clone(),
            entries: r.copy.paths(),
        })
        .collect();
    let done = tx.run_all(steps, true);
    if let Some(first) = done.iter().find_map(|r| r.as_ref().err()).cloned() {
        let results = repos
            .iter()
            .map(|r| {
                copying
                    .iter()
                    .zip(&done)
                    .find(|(c, _)| c.name == r.name)
                    .map_or(Ok(()), |(_, d)| d.clone())
            })
            .collect();
        return Err((results, first));
    }
    Ok(copying
        .iter()
        .filter_map(|r| {
            let (_, c) = tx.copied().iter().find(|(repo, _)| *repo == r.name)?;
            Some(CopyResult::new(&r.name, r.copy.paths(), c))
        })
        .collect())
}

/// Rolls back after `cause` and builds the error: per repository `created` → `rolled_back`
/// (or `kept`/`failed`), and `RECOVERY_PENDING` when the rollback itself failed.
fn fail(
    ctx: &Ctx<'_>,
    tx: Tx<'_, '_>,
    plan: &CreatePlan,
    added: &[Result<()>],
    cause: Error,
) -> Error {
    let id = tx.id().to_string();
    let (undone, clean) = tx.rollback();
    let mut repos = Vec::new();
    for (r, res) in plan.repos.iter().zip(added) {
        let undo = undone.iter().find_map(|(a, u)| match a {
            Action::AddWorktree { repo, .. } if *repo == r.name => Some(u),
            _ => None,
        });
        let (outcome, detail) = match (res, undo) {
            (Err(e), Some(Undo::Undone) | None) => (Outcome::Failed, Some(e.message.clone())),
            (Ok(()), Some(Undo::Undone) | None) => (Outcome::RolledBack, None),
            (_, Some(Undo::Kept(why))) => (Outcome::Kept, Some(why.clone())),
            (_, Some(Undo::Failed(why))) => {
                (Outcome::Failed, Some(format!("rollback failed: {why}")))
            }
        };
        repos.push(RepoResult {
            repo: r.name.clone(),
            outcome,
            branch: plan.branch.clone(),
            path: r.worktree.clone(),
            detail,
        });
    }
    // A clone made for this create goes too (one that existed before is never touched).
    for clone in &plan.cloned {
        let _ = crate::ops::safety::remove::clone(ctx, clone);
    }
    let rolled_back: Vec<&str> = repos
        .iter()
        .filter(|r| r.outcome == Outcome::RolledBack)
        .map(|r| r.repo.as_str())
        .collect();
    let details = serde_json::json!({ "workspace": plan.name, "operation": id, "repos": repos });
    let err = if cause.code == Code::Cancelled {
        // Said as every cancellation is: what did not happen, and what was undone.
        let undone = match rolled_back.as_slice() {
            [] => String::new(),
            names => format!("; rolled back the worktrees of {}", names.join(", ")),
        };
        cause.with_message(format!(
            "cancelled: workspace `{}` was not created{undone}",
            plan.name
        ))
    } else {
        cause.context(format!("cannot create workspace `{}`", plan.name))
    }
    .with_more_details(details);
    if clean {
        err
    } else {
        let pending = tx::recovery_pending(&id, &plan.name, Kind::Create);
        let message = format!(
            "{}; rolling back failed too, so {}",
            err.message, pending.message
        );
        let details = err.details.clone().unwrap_or_default();
        pending.with_message(message).with_details(details)
    }
}

/// Runs the setup commands of `repos` in their new worktrees, in parallel.
pub(crate) fn run_setup(ctx: &Ctx<'_>, repos: &[RepoPlan], ws: &Workspace) -> Vec<SetupResult> {
    let with_setup: Vec<&RepoPlan> = repos.iter().filter(|r| !r.setup.is_empty()).collect();
    if with_setup.is_empty() {
        return Vec::new();
    }
    let vars = Vars::of(ctx, ws);
    parallel::map(&with_setup, |r| {
        ctx.events.progress(&format!("running setup in {}", r.name));
        match hooks::run_repo_commands(ctx, &r.name, &r.setup, &r.worktree, &vars, true) {
            Ok(()) => SetupResult {
                repo: r.name.clone(),
                status: SetupStatus::Ready,
                detail: None,
            },
            Err(f) => SetupResult {
                repo: r.name.clone(),
                status: SetupStatus::Failed,
                detail: Some(f.summary()),
            },
        }
    })
}

/// Records setup results on the workspace's repositories in state. Returns warnings: one
/// per failed setup, and one if the results could not be recorded.
pub(crate) fn record_setup(ctx: &Ctx<'_>, workspace: &str, setup: &[SetupResult]) -> Vec<String> {
    let mut warnings = Vec::new();
    for s in setup {
        if let Some(d) = s
            .detail
            .as_deref()
            .filter(|_| s.status == SetupStatus::Failed)
        {
            warnings.push(format!("{}: setup failed: {d}", s.repo));
        }
    }
    if setup.is_empty() {
        return warnings;
    }
    let recorded = ctx.store.update(|st| {
        if let Some(w) = st.find_mut(workspace) {
            for s in setup {
                if let Some(r) = w.repos.iter_mut().find(|r| r.repo_name == s.repo) {
                    r.setup = Some(SetupRecord {
                        status: s.status,
                        detail: s.detail.clone(),
                    });
                }
            }
        }
        Ok::<_, Error>(())
    });
    if let Err(e) = recorded {
        warnings.push(format!("could not record setup results: {}", e.message));
    }
    warnings
}
