//! `gw plan <command> …` and `gw apply PLAN|-`.
//!
//! `gw plan` takes exactly the arguments of the command it plans (the same `Args`
//! structs), never prompts, and prints the plan document. `gw apply` reads a plan (or a
//! saved `gw plan` envelope), and runs the command from the plan's recorded inputs with the
//! plan as its expectation: it executes only if nothing the plan depends on has changed.

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde::de::DeserializeOwned;

use super::cleanup::PruneArgs;
use super::daily::{self, AddRepoArgs, RemoveRepoArgs, RenameArgs, ResetArgs, SyncArgs};
use super::workspace::{self, CreateArgs, DeleteArgs};
use crate::cli::{CmdResult, Out, Ui};
use crate::error::{Code, Error};
use crate::fsx;
use crate::ops::plan::{self, PlanDoc, PlanKind};
use crate::ops::prune::PruneOptions;
use crate::ops::{self, Ctx};

/// Preview a mutating command: what it would change, and what that depends on
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Also write the plan document to FILE (for `gw apply FILE`)
    #[arg(long, value_name = "FILE", global = true)]
    pub out: Option<PathBuf>,
    #[command(subcommand)]
    pub command: PlanCommand,
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Plan `gw create`
    Create(CreateArgs),
    /// Plan `gw delete`
    Delete(DeleteArgs),
    /// Plan `gw add-repo`
    AddRepo(AddRepoArgs),
    /// Plan `gw remove-repo`
    RemoveRepo(RemoveRepoArgs),
    /// Plan `gw rename`
    Rename(RenameArgs),
    /// Plan `gw reset`
    Reset(ResetArgs),
    /// Plan `gw sync`
    Sync(SyncArgs),
    /// Plan `gw prune --yes` (the workspaces it would delete)
    Prune(PruneArgs),
}

pub fn plan(ctx: &Ctx<'_>, a: PlanArgs, ui: Ui) -> CmdResult {
    // A plan never asks: anything missing is a USAGE error naming the flag.
    let ui = Ui {
        interactive: false,
        ..ui
    };
    let doc = match a.command {
        PlanCommand::Create(c) => {
            ops::create::plan_doc(ctx, &workspace::create_options(ctx, c, ui)?)?
        }
        PlanCommand::Delete(c) => {
            ops::delete::plan_doc(ctx, &workspace::delete_options(ctx, c, ui)?)?
        }
        PlanCommand::AddRepo(c) => {
            ops::add_repo::plan_doc(ctx, &daily::add_repo_options(ctx, c, ui)?)?
        }
        PlanCommand::RemoveRepo(c) => {
            ops::remove_repo::plan_doc(ctx, &daily::remove_repo_options(ctx, c, ui)?)?
        }
        PlanCommand::Rename(c) => ops::rename::plan_doc(ctx, &daily::rename_options(c))?,
        PlanCommand::Reset(c) => ops::reset::plan_doc(ctx, &daily::reset_options(c))?,
        PlanCommand::Sync(c) => ops::sync::plan_doc(ctx, &daily::sync_options(c))?,
        PlanCommand::Prune(c) => {
            if c.command.is_some() {
                return Err(Error::usage("`gw prune branches` cannot be planned")
                    .with_fix("Plan `gw prune` instead"));
            }
            ops::prune::plan_doc(
                ctx,
                &PruneOptions {
                    min_age: c.min_age,
                    yes: true,
                    expect: None,
                },
            )?
        }
    };
    let mut saved = None;
    if let Some(out) = a.out {
        let path = ctx.env.resolve_path(&out);
        let text = serde_json::to_string_pretty(&doc).expect("plans serialise");
        fsx::write_atomic(&path, text.as_bytes())?;
        saved = Some(path);
    }
    Ok(Out::new(crate::output::render::Planned { doc, saved }))
}

/// Execute a plan made by `gw plan`, if nothing it depends on has changed
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// A plan document or a saved `gw plan --format json` envelope; `-` reads stdin
    pub plan: String,
}

pub fn apply(ctx: &Ctx<'_>, a: ApplyArgs) -> CmdResult {
    let text = if a.plan == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| {
            Error::new(
                Code::PlanInvalid,
                format!("cannot read the plan from stdin: {e}"),
            )
        })?;
        s
    } else {
        fsx::read(&ctx.env.resolve_path(std::path::Path::new(&a.plan)))
            .map_err(|e| Error::new(Code::PlanInvalid, format!("cannot read the plan: {e}")))?
    };
    let doc = plan::parse(&text)?;
    let expect = Some(doc.expect());
    let out = match doc.kind {
        PlanKind::Create => {
            let mut o: ops::create::CreateOptions = inputs(&doc)?;
            o.expect = expect;
            Out::new(ops::create::create(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Delete => {
            let mut o: ops::delete::DeleteOptions = inputs(&doc)?;
            o.expect = expect;
            Out::new(ops::delete::delete(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::AddRepo => {
            let mut o: ops::add_repo::AddRepoOptions = inputs(&doc)?;
            o.expect = expect;
            Out::new(ops::add_repo::add_repo(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::RemoveRepo => {
            let mut o: ops::remove_repo::RemoveRepoOptions = inputs(&doc)?;
            o.expect = expect;
            Out::new(ops::remove_repo::remove_repo(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Rename => {
            let mut o: ops::rename::RenameOptions = inputs(&doc)?;
            o.expect = expect;
            Out::new(ops::rename::rename(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Reset => {
            let mut o: ops::reset::ResetOptions = inputs(&doc)?;
            o.expect = expect;
            Out::new(ops::reset::reset(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Sync => {
            let mut o: ops::sync::SyncOptions = inputs(&doc)?;
            o.expect = expect;
            Out::new(ops::sync::sync(ctx, o).map_err(no_longer_applies)?)
        }
        PlanKind::Prune => {
            let mut o: PruneOptions = inputs(&doc)?;
            o.expect = expect;
            Out::new(ops::prune::prune(ctx, o).map_err(no_longer_applies)?)
        }
    };
    Ok(out)
}

fn inputs<T: DeserializeOwned>(doc: &PlanDoc) -> Result<T, Error> {
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
