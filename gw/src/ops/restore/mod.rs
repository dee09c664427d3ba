//! `gw restore NAME [--as NEW]` and `gw undo`: a deleted workspace comes back from the
//! trash exactly as it went — its directory with every file, each worktree's registration
//! (index, HEAD, reflog), the branches the delete removed at their recorded tips with their
//! settings, and its state entry.
//!
//! One transaction (`ops::tx`, journal kind `restore`) under the locks of the workspace's
//! names: the directory moves back, the registrations and branches come back, and the state
//! entry is recorded (the commit point); what is left of the entry (its record, the
//! references that kept the tips) goes afterwards. Killed anywhere, `gw doctor --fix`
//! finishes or rolls it back: the workspace is either restored or still in the trash.
//! Everything that could stand in the way — the name or directory taken, a branch made
//! again, a source repository gone — is found first and refused with a code; nothing is
//! half-restored.

mod plan;
mod registration;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::ops::plan::{PlanDoc, PlanKind};
use crate::ops::trash::{self, Kept};
use crate::ops::tx::{self, Tx};
use crate::ops::{Ctx, Outcome, RepoResult, names};
use crate::state::Workspace;
use crate::state::journal::{Action, Kind};
use plan::{describe, plan};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RestoreOptions {
    /// A deleted workspace's name (its newest entry) or an entry's id; `None`: the newest
    /// entry of all (`gw undo`).
    pub name: Option<String>,
    /// The name it comes back under (`--as`), beside where it was.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub as_name: Option<String>,
    /// `gw apply`: the plan this restore must match.
    #[serde(skip)]
    pub expect: Option<crate::ops::plan::Expect>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RestoreReport {
    /// The workspace's name now.
    pub name: String,
    pub path: PathBuf,
    pub branch: String,
    /// The trash entry it came from.
    pub from: String,
    /// Its name when it was deleted.
    pub deleted_name: String,
    pub deleted_at: String,
    /// Every worktree, `restored`; `detail` says what happened to its branch.
    pub repos: Vec<RepoResult>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

impl RestoreReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "Inspect the restored workspace",
            &["gw", "status", &self.name, "--format", "json"],
        )]
    }
}

/// What restoring an entry takes, decided before anything changes.
struct Plan {
    kept: Kept,
    /// The state entry it comes back as.
    after: Workspace,
    /// Before the commit point, in order.
    steps: Vec<Action>,
    /// What happens to each repository's branch (for the report and the plan).
    branches: Vec<String>,
    warnings: Vec<String>,
}

/// `gw restore` / `gw undo`.
pub fn restore(ctx: &Ctx<'_>, opts: RestoreOptions) -> Result<RestoreReport> {
    let config = ctx.config()?;
    // The entry, and the name it comes back under, are found before any lock; both names
    // are then locked, and everything is decided again under the locks.
    let first = find(ctx, &opts)?;
    let target = target_name(&first, &opts)?;
    let locks = tx::lock_workspaces(ctx, &[&first.record.name, &target])?;
    let entry_opts = RestoreOptions {
        name: Some(first.id.clone()),
        ..opts.clone()
    };
    let kept = find(ctx, &entry_opts)?;
    let plan = plan(ctx, &config, &ctx.state()?, kept, opts.as_name.as_deref())?;
    if let Some(expect) = &opts.expect {
        let now = describe(&plan);
        crate::ops::plan::verify(
            PlanKind::Restore,
            expect,
            &inputs(&plan.kept.id, &opts),
            &now,
        )?;
    }
    let sources: Vec<&Path> = plan
        .kept
        .record
        .repos
        .iter()
        .map(|r| r.source.as_path())
        .collect();
    let _hold = tx::hold_repos(ctx, &sources)?;
    let mut tx = Tx::begin(ctx, locks, Kind::Restore, &plan.after.name, &[])?;
    ctx.events
        .progress(&format!("restoring {}", plan.after.name));
    let done = tx
        .run_all(plan.steps.clone(), false)
        .into_iter()
        .find_map(Result::err)
        .map_or_else(
            || {
                tx.commit_with(
                    Action::SetState {
                        name: plan.after.name.clone(),
                        before: None,
                        after: Some(Box::new(plan.after.clone())),
                    },
                    vec![Action::DropTrash {
                        entry: plan.kept.entry.clone(),
                        refs: trash::refs_of(&plan.kept, &trash::known_sources(ctx)),
                    }],
                )
            },
            Err,
        );
    let planned = match done {
        Ok(p) => p,
        Err(cause) => {
            let id = tx.id().to_string();
            let (_, clean) = tx.rollback();
            return Err(if clean {
                cause.context(format!(
                    "cannot restore `{}`; it is still in the trash",
                    plan.kept.record.name
                ))
            } else {
                tx::recovery_pending(&id, &plan.after.name, Kind::Restore).with_message(format!(
                    "cannot restore `{}`: {}; putting it back failed too",
                    plan.kept.record.name, cause.message
                ))
            });
        }
    };
    let mut warnings = plan.warnings.clone();
    if let Some(Err(e)) = tx.run_planned(&planned, false).into_iter().next() {
        let id = tx.abandon();
        warnings.push(format!(
            "the workspace is back; removing what is left of its trash entry failed ({}); \
             `gw doctor --fix` finishes it (operation {id})",
            e.message
        ));
    } else {
        tx.finish()?;
    }
    let repos: Vec<RepoResult> = plan
        .after
        .repos
        .iter()
        .zip(&plan.branches)
        .map(|(r, b)| RepoResult {
            repo: r.repo_name.clone(),
            outcome: Outcome::Restored,
            branch: r.branch.clone(),
            path: r.worktree_path.clone(),
            detail: Some(b.clone()),
        })
        .collect();
    Ok(RestoreReport {
        name: plan.after.name.clone(),
        path: plan.after.path.clone(),
        branch: plan.after.branch.clone(),
        from: plan.kept.id.clone(),
        deleted_name: plan.kept.record.name.clone(),
        deleted_at: plan.kept.record.deleted_at.clone(),
        count: repos.len(),
        repos,
        warnings,
    })
}

/// `gw plan restore` / `gw plan undo`: decides exactly as the restore does, and describes
/// it; the entry is recorded by its id, so applying the plan restores that one.
pub fn plan_doc(ctx: &Ctx<'_>, opts: &RestoreOptions) -> Result<PlanDoc> {
    let config = ctx.config()?;
    let kept = find(ctx, opts)?;
    let id = kept.id.clone();
    let plan = plan(ctx, &config, &ctx.state()?, kept, opts.as_name.as_deref())?;
    Ok(crate::ops::plan::document(
        PlanKind::Restore,
        inputs(&id, opts),
        describe(&plan),
    ))
}

fn inputs(id: &str, opts: &RestoreOptions) -> serde_json::Value {
    serde_json::to_value(RestoreOptions {
        name: Some(id.to_string()),
        as_name: opts.as_name.clone(),
        expect: None,
    })
    .expect("options serialise")
}

/// The entry `opts` names, or the newest.
fn find(ctx: &Ctx<'_>, opts: &RestoreOptions) -> Result<Kept> {
    let contents = trash::contents(ctx);
    let found = match &opts.name {
        Some(n) => trash::find(&contents, n),
        None => trash::newest(&contents),
    };
    // An entry an operation still has (a delete whose cleanup was left for `gw doctor
    // --fix`): that operation comes first.
    let busy = match &opts.name {
        Some(n) if found.is_none() => trash::named(&contents.busy, n),
        _ => found.filter(|k| contents.busy.iter().any(|b| b.entry == k.entry)),
    };
    if let Some(k) = busy {
        tx::check_pending(ctx, &[&k.record.name])?;
        return Err(Error::new(
            Code::Transient,
            format!("the trash entry `{}` is still being written", k.id),
        )
        .with_fix("Run the command again in a moment"));
    }
    if let Some(k) = found {
        return Ok(k.clone());
    }
    let (message, fix) = match &opts.name {
        Some(n) => (
            format!("no deleted workspace named `{n}` is in the trash"),
            "Run `gw trash` to see what can be restored",
        ),
        None => (
            "the trash is empty: there is no deletion to undo".to_string(),
            "Deleted workspaces are kept for `trash.keep` (7 days by default); `gw delete --purge` keeps nothing",
        ),
    };
    Err(Error::new(Code::WorkspaceNotFound, message)
        .with_fix(fix)
        .with_action(NextAction::read(
            "List the trash",
            &["gw", "trash", "--format", "json"],
        )))
}

fn target_name(kept: &Kept, opts: &RestoreOptions) -> Result<String> {
    match &opts.as_name {
        Some(n) => {
            names::check_workspace(n)?;
            Ok(n.clone())
        }
        None => Ok(kept.record.name.clone()),
    }
}
