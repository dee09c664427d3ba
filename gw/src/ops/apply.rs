//! `gw apply PLAN|-`: runs the command a plan was made for, from the plan's recorded
//! inputs, with the plan as its expectation — so it executes only if nothing the plan
//! depends on has changed, and exactly what the plan listed (see `ops::plan`).

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::ops::plan::{self, PlanDoc, PlanKind};
use crate::ops::{Ctx, add_repo, create, delete, prune, remove_repo, rename, reset, restore, sync};

/// What applying a plan produced: the report of the command it ran.
pub enum Applied {
    Create(Box<create::CreateReport>),
    Delete(delete::DeleteReport),
    AddRepo(add_repo::AddRepoReport),
    RemoveRepo(remove_repo::RemoveRepoReport),
    Rename(rename::RenameReport),
    Reset(reset::ResetReport),
    Sync(sync::SyncReport),
    Prune(prune::PruneReport),
    PruneBranches(prune::PruneBranchesReport),
    Restore(restore::RestoreReport),
}

/// Where a plan is read from.
pub enum PlanSource<'a> {
    File(&'a Path),
    Stdin,
}

/// Reads a plan document (at most [`fsx::MAX_DOCUMENT`] bytes).
pub fn read(source: PlanSource<'_>) -> Result<PlanDoc> {
    let text = match source {
        PlanSource::Stdin => fsx::read_limited_from(std::io::stdin().lock(), fsx::MAX_DOCUMENT)
            .map_err(|e| {
                Error::new(
                    Code::PlanInvalid,
                    format!("cannot read the plan from stdin: {e}"),
                )
            })?,
        PlanSource::File(path) => fsx::read_limited(path, fsx::MAX_DOCUMENT)
            .map_err(|e| Error::new(Code::PlanInvalid, format!("cannot read the plan: {e}")))?,
    };
    plan::parse(&text)
}

/// Runs the command of `doc`.
pub fn apply(ctx: &Ctx<'_>, doc: &PlanDoc) -> Result<Applied> {
    let expect = Some(doc.expect());
    Ok(match doc.kind {
        PlanKind::Create => {
            let mut o: create::CreateOptions = inputs(doc)?;
            o.expect = expect;
            Applied::Create(Box::new(create::create(ctx, o).map_err(no_longer_applies)?))
        }
        PlanKind::Delete => {
            let mut o: delete::DeleteOptions = inputs(doc)?;
            o.expect = expect;
            Applied::Delete(delete::delete(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::AddRepo => {
            let mut o: add_repo::AddRepoOptions = inputs(doc)?;
            o.expect = expect;
            Applied::AddRepo(add_repo::add_repo(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::RemoveRepo => {
            let mut o: remove_repo::RemoveRepoOptions = inputs(doc)?;
            o.expect = expect;
            Applied::RemoveRepo(remove_repo::remove_repo(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Rename => {
            let mut o: rename::RenameOptions = inputs(doc)?;
            o.expect = expect;
            Applied::Rename(rename::rename(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Reset => {
            let mut o: reset::ResetOptions = inputs(doc)?;
            o.expect = expect;
            Applied::Reset(reset::reset(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Sync => {
            let mut o: sync::SyncOptions = inputs(doc)?;
            o.expect = expect;
            Applied::Sync(sync::sync(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Prune => {
            let mut o: prune::PruneOptions = inputs(doc)?;
            o.expect = expect;
            Applied::Prune(prune::prune(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::PruneBranches => {
            let mut o: prune::PruneBranchesOptions = inputs(doc)?;
            o.expect = expect;
            Applied::PruneBranches(prune::prune_branches(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Restore => {
            let mut o: restore::RestoreOptions = inputs(doc)?;
            o.expect = expect;
            Applied::Restore(restore::restore(ctx, o).map_err(no_longer_applies)?)
        }
    })
}

fn inputs<T: DeserializeOwned>(doc: &PlanDoc) -> Result<T> {
    serde_json::from_value(doc.inputs.clone()).map_err(|e| {
        Error::new(
            Code::PlanInvalid,
            format!(
                "the plan's inputs are not valid for `{}`: {e}",
                doc.kind.command()
            ),
        )
    })
}

/// A plan was valid when it was made; a conflict or a missing workspace now means the world
/// moved on since.
fn no_longer_applies(e: Error) -> Error {
    match e.code {
        Code::WorkspaceExists
        | Code::WorkspaceNotFound
        | Code::WorktreeExists
        | Code::WorktreeDirty
        | Code::BranchConflict
        | Code::RepoNotFound
        | Code::PresetNotFound
        | Code::NoWorkspaces => {
            let cause = e.code;
            let message = format!(
                "the plan no longer applies, so it was not applied: {}",
                e.message
            );
            let mut changed = Error::new(Code::StateChanged, message)
                .with_fix("Make a new plan, review it, and apply that one")
                .with_details(serde_json::json!({ "cause": cause, "details": e.details.clone() }));
            changed.next_actions = e.next_actions.clone();
            changed
        }
        _ => e,
    }
}
