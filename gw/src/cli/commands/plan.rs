//! `gw plan <command> …` and `gw apply PLAN|-`.
//!
//! `gw plan` takes exactly the arguments of the command it plans (the same `Args`
//! structs), never prompts, and prints the plan document. `gw apply` reads a plan (or a
//! saved `gw plan` envelope), and runs the command from the plan's recorded inputs with the
//! plan as its expectation: it executes only if nothing the plan depends on has changed.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::cleanup::PruneArgs;
use super::daily::{self, AddRepoArgs, RemoveRepoArgs, RenameArgs, ResetArgs, SyncArgs};
use super::trash::{self, RestoreArgs};
use super::workspace::{self, CreateArgs, DeleteArgs};
use crate::cli::{CmdResult, Out, Ui};
use crate::error::Error;
use crate::fsx;
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
    /// Plan `gw prune --yes` (the workspaces it would delete), or `gw prune branches --yes`
    Prune(PruneArgs),
    /// Plan `gw restore`
    Restore(RestoreArgs),
    /// Plan `gw undo`: which deleted workspace it would restore, and how
    Undo,
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
        PlanCommand::Prune(c) => match &c.command {
            Some(super::cleanup::PruneCommand::Branches(b)) => {
                ops::prune::branches_plan_doc(ctx, &super::cleanup::prune_branches_options(b))?
            }
            None => ops::prune::plan_doc(
                ctx,
                &PruneOptions {
                    min_age: c.min_age,
                    yes: true,
                    expect: None,
                },
            )?,
        },
        PlanCommand::Restore(c) => ops::restore::plan_doc(ctx, &trash::restore_options(c))?,
        PlanCommand::Undo => ops::restore::plan_doc(ctx, &trash::undo_options())?,
    };
    let mut saved = None;
    if let Some(out) = a.out {
        let path = ctx.env.resolve_path(&out);
        let text = serde_json::to_string_pretty(&doc).expect("plans serialise");
        if crate::redact::has_url_userinfo(&text) {
            // grove writes no credential to disk; the plan's inputs hold a URL's.
            return Err(Error::usage(format!(
                "the plan holds a URL with credentials, which grove does not write to disk (`{}`)",
                path.display()
            ))
            .with_fix("Let git's credential helper supply them and pass the URL without, or pipe the plan: `gw plan … --format json | gw apply -`"));
        }
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
    use ops::apply::{Applied, PlanSource};
    let path = ctx.env.resolve_path(std::path::Path::new(&a.plan));
    let source = if a.plan == "-" {
        PlanSource::Stdin
    } else {
        PlanSource::File(&path)
    };
    let doc = ops::apply::read(source)?;
    Ok(match ops::apply::apply(ctx, &doc)? {
        Applied::Create(r) => Out::new(*r),
        Applied::Delete(r) => Out::new(r),
        Applied::AddRepo(r) => Out::new(r),
        Applied::RemoveRepo(r) => Out::new(r),
        Applied::Rename(r) => Out::new(r),
        Applied::Reset(r) => Out::new(r),
        Applied::Sync(r) => Out::new(r),
        Applied::Prune(r) => Out::new(r),
        Applied::PruneBranches(r) => Out::new(r),
        Applied::Restore(r) => Out::new(r),
    })
}
