//! `gw add-repo`: add repositories (names or git URLs) to an existing workspace.
//!
//! Idempotent: a repository already in the workspace is `already_present`. All or nothing
//! for the rest: under the workspace lock, every new worktree is planned and validated
//! first; the worktrees are then added in one transaction (`ops::tx`), and if adding any of
//! them fails, everything this invocation added (worktrees, branches it created, clones of
//! git URLs) is removed again and state is left untouched, so no half-added repository
//! remains. Setup commands run for the new repositories after they are recorded.

use std::path::PathBuf;

use serde::Serialize;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::ops::create::{self, RepoPlan, SetupResult};
use crate::ops::plan::{self, Change, ChangeKind, Described, Fact, PlanDoc, PlanKind};
use crate::ops::repos::{self, Chosen};
use crate::ops::tx::{self, Tx, Undo};
use crate::ops::{Ctx, Outcome, RepoResult, resolve};
use crate::state::journal::{Action, Kind};
use crate::state::{RepoEntry, Workspace};

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct AddRepoOptions {
    /// The workspace; the one containing the current directory when `None`.
    pub name: Option<String>,
    /// Repository names or git URLs.
    pub repos: Vec<String>,
    /// `--copy`/`--no-copy` (see `CreateOptions::copy`); `None` takes `[create] copy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<bool>,
    /// `gw apply`: the plan this add must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
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
    /// What was copied into each new worktree (`--copy`), per repository that copied.
    pub copied: Vec<crate::ops::warm::CopyResult>,
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
    let name = resolve::name(ctx, opts.name.as_deref())?;
    // Held from validation to the state commit, so a concurrent change of this workspace
    // waits for this one.
    let locks = tx::lock_workspaces(ctx, &[&name])?;
    let ws = resolve::by_name(&ctx.state()?, &name)?.clone();
    let locks = locks.with_branch(ctx, &ws.branch)?;
    crate::ops::resolve::require_dir(&ws)?;
    let discovery = repos::discover(ctx, &config);
    let chosen = repos::resolve(ctx, &config, &opts.repos, &discovery)?;
    let copy = opts.copy.unwrap_or(config.copy);
    let planned = plan(ctx, &ws, &chosen, copy);
    let (results, new, plans, warnings) = match planned {
        Ok(p) => p,
        Err(e) => {
            // A refused add changes nothing: not even a clone it made on the way.
            repos::remove_clones(ctx, &chosen);
            return Err(e);
        }
    };
    if let Some(expect) = &opts.expect {
        let now = describe(&ws, &results, &plans, &warnings);
        if let Err(e) = plan::verify(
            PlanKind::AddRepo,
            expect,
            &inputs(&ws.name, &opts.repos, opts.copy),
            &now,
        ) {
            repos::remove_clones(ctx, &chosen);
            return Err(e);
        }
    }
    let cloned: Vec<std::path::PathBuf> = chosen
        .iter()
        .filter(|c| c.cloned)
        .map(|c| c.path.clone())
        .collect();
    create::require_trust(ctx, "gw add-repo", &plans, &cloned)?;
    let mut report = AddRepoReport {
        workspace: ws.name.clone(),
        path: ws.path.clone(),
        branch: ws.branch.clone(),
        count: results.len(),
        repos: results,
        setup: Vec::new(),
        copied: Vec::new(),
        warnings,
        failure: None,
    };
    if plans.is_empty() {
        return Ok(report);
    }

    for p in &plans {
        // A registration whose directory is gone holds the branch; git would refuse.
        for path in &p.stale {
            crate::ops::safety::remove::stale_registration(ctx, &p.source, path)?;
        }
    }
    let mut tx = Tx::begin(ctx, locks, Kind::AddRepo, &ws.name, &[])?;
    ctx.events.progress(&format!(
        "adding {} to {}",
        crate::ops::count(plans.len(), "worktree", "worktrees"),
        ws.name
    ));
    let adds: Vec<Action> = plans
        .iter()
        .map(|p| Action::AddWorktree {
            repo: p.name.clone(),
            source: p.source.clone(),
            path: p.worktree.clone(),
            branch: ws.branch.clone(),
            how: p.how.clone(),
        })
        .collect();
    let mut added = tx.run_all(adds, true);
    let mut failed = added.iter().find_map(|r| r.as_ref().err()).cloned();
    if failed.is_none() {
        match create::copy_all(ctx, &mut tx, &plans) {
            Ok(c) => report.copied = c,
            Err((results, first)) => {
                added = results;
                failed = Some(first);
            }
        }
    }
    let after = with_entries(&ws, &plans);
    let committed = match failed {
        Some(e) => Err(e),
        None => tx.commit(Action::SetState {
            name: ws.name.clone(),
            before: Some(Box::new(ws.clone())),
            after: Some(Box::new(after.clone())),
        }),
    };
    if let Err(cause) = committed {
        let failure = fail(tx, &ws, &plans, &added, cause, &mut report.repos);
        // Clones made for this add go too, unless a worktree of theirs had to be kept.
        let unused: Vec<Chosen> = new
            .into_iter()
            .filter(|c| !fsx::exists(&ws.path.join(&c.name)))
            .collect();
        repos::remove_clones(ctx, &unused);
        report.count = report.repos.len();
        report.failure = Some(failure);
        return Ok(report);
    }
    tx.finish()?;

    for p in &plans {
        report.repos.push(RepoResult {
            repo: p.name.clone(),
            outcome: Outcome::Added,
            branch: ws.branch.clone(),
            path: p.worktree.clone(),
            detail: Some(p.describe()),
        });
    }
    report.count = report.repos.len();
    report.setup = create::run_setup(ctx, &plans, &after);
    report
        .warnings
        .extend(create::record_setup(ctx, &ws.name, &report.setup));
    Ok(report)
}

fn inputs(name: &str, repos: &[String], copy: Option<bool>) -> serde_json::Value {
    serde_json::to_value(AddRepoOptions {
        name: Some(name.to_string()),
        repos: repos.to_vec(),
        copy,
        expect: None,
    })
    .expect("options serialise")
}

/// `gw plan add-repo`: validates exactly as `gw add-repo` does and describes what it would
/// do. A clone made from a git URL while planning is removed again.
pub fn plan_doc(ctx: &Ctx<'_>, opts: &AddRepoOptions) -> Result<PlanDoc> {
    let config = ctx.config()?;
    let state = ctx.state()?;
    let ws = resolve::workspace(&state, opts.name.as_deref(), &ctx.env.cwd)?.clone();
    let discovery = repos::discover(ctx, &config);
    let chosen = repos::resolve(ctx, &config, &opts.repos, &discovery)?;
    let planned = plan(ctx, &ws, &chosen, opts.copy.unwrap_or(config.copy));
    repos::remove_clones(ctx, &chosen);
    let (results, _, plans, warnings) = planned?;
    let described = describe(&ws, &results, &plans, &warnings);
    Ok(plan::document(
        PlanKind::AddRepo,
        inputs(&ws.name, &opts.repos, opts.copy),
        described,
    ))
}

fn describe(
    ws: &Workspace,
    present: &[RepoResult],
    plans: &[RepoPlan],
    warnings: &[String],
) -> Described {
    let mut d = Described {
        workspace: ws.name.clone(),
        warnings: warnings.to_vec(),
        ..Described::default()
    };
    d.facts.push(Fact::new(
        None,
        "repos",
        ws.repos
            .iter()
            .map(|r| r.repo_name.clone())
            .collect::<Vec<_>>()
            .join(","),
    ));
    for r in present {
        d.changes.push(
            Change::new(ChangeKind::Skip)
                .repo(&r.repo)
                .detail("already in the workspace"),
        );
    }
    create::describe_repos(plans, &ws.branch, &mut d.changes, &mut d.facts);
    if !plans.is_empty() {
        d.changes.push(
            Change::new(ChangeKind::UpdateStateEntry).detail(format!("workspace {}", ws.name)),
        );
    }
    create::describe_setup(plans, &mut d.changes);
    d
}

type Planned = (Vec<RepoResult>, Vec<Chosen>, Vec<RepoPlan>, Vec<String>);

/// Sorts the chosen repositories into already present and new, and plans the new ones.
/// Changes nothing but fetching.
fn plan(ctx: &Ctx<'_>, ws: &Workspace, chosen: &[Chosen], copy: bool) -> Result<Planned> {
    let mut results = Vec::new();
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
            None => new.push(c.clone()),
        }
    }
    if new.is_empty() {
        return Ok((results, new, Vec::new(), Vec::new()));
    }
    let mut warnings = create::fetch_all(ctx, &new);
    let state = ctx.state()?;
    let state = &state;
    let mut plans = Vec::new();
    for c in &new {
        let (plan, w) = create::plan_repo(
            &create::Around {
                territory: ctx.territory(),
                state,
                ignored: &[],
                copy,
            },
            c,
            &ws.path,
            &ws.branch,
            false,
            None,
        )?;
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
        warnings.extend(w);
        plans.push(plan);
    }
    Ok((results, new, plans, warnings))
}

/// `ws` with the planned repositories added.
fn with_entries(ws: &Workspace, plans: &[RepoPlan]) -> Workspace {
    let mut after = ws.clone();
    after.repos.extend(plans.iter().map(|p| RepoEntry {
        repo_name: p.name.clone(),
        source_repo: p.source.clone(),
        worktree_path: p.worktree.clone(),
        branch: ws.branch.clone(),
        preserve_branch: p.preserve_branch,
        setup: None,
        extra: Default::default(),
    }));
    after
}

/// Rolls the transaction back after `cause`, adds each new repository's outcome to
/// `results` (`rolled_back`, `failed`, or `kept` when undoing would lose work) and returns
/// the error: `RECOVERY_PENDING` when the rollback itself failed.
fn fail(
    tx: Tx<'_, '_>,
    ws: &Workspace,
    plans: &[RepoPlan],
    added: &[Result<()>],
    cause: Error,
    results: &mut Vec<RepoResult>,
) -> Error {
    let id = tx.id().to_string();
    let (undone, clean) = tx.rollback();
    for (p, res) in plans.iter().zip(added) {
        let undo = undone.iter().find_map(|(a, u)| match a {
            Action::AddWorktree { repo, .. } if *repo == p.name => Some(u),
            _ => None,
        });
        let (outcome, detail) = match (res, undo) {
            (Err(e), Some(Undo::Undone) | None) => (Outcome::Failed, e.message.clone()),
            (Ok(()), Some(Undo::Undone) | None) => (
                Outcome::RolledBack,
                "added, then removed again because another step failed".into(),
            ),
            (_, Some(Undo::Kept(why))) => (Outcome::Kept, why.clone()),
            (_, Some(Undo::Failed(why))) => (Outcome::Failed, format!("rollback failed: {why}")),
        };
        results.push(RepoResult {
            repo: p.name.clone(),
            outcome,
            branch: ws.branch.clone(),
            path: p.worktree.clone(),
            detail: Some(detail),
        });
    }
    let err = cause
        .context(format!("cannot add to workspace `{}`", ws.name))
        .with_fix(
            "Nothing was added: every worktree and branch this command created was removed again",
        )
        .with_more_details(serde_json::json!({ "workspace": ws.name, "operation": id }));
    if clean {
        err
    } else {
        let pending = tx::recovery_pending(&id, &ws.name, Kind::AddRepo);
        let message = format!(
            "{}; rolling back failed too, so {}",
            err.message, pending.message
        );
        pending.with_message(message)
    }
}
