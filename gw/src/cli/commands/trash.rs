//! The trash: `gw trash [list|empty]`, `gw restore`, `gw undo`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::plan::{DryRun, PlanCommand, dry_run};
use crate::cli::{CmdResult, Out, Ui};
use crate::error::Error;
use crate::ops::restore::RestoreOptions;
use crate::ops::{self, Ctx};
use crate::output::pick;

#[derive(Debug, Args)]
pub struct TrashArgs {
    #[command(subcommand)]
    pub command: Option<TrashCommand>,
}

#[derive(Debug, Subcommand)]
pub enum TrashCommand {
    /// List the deleted workspaces the trash keeps (the default)
    #[command(visible_alias = "ls")]
    List,
    /// Erase deleted workspaces for good: all, or those deleted longer ago than --older-than
    Empty(EmptyArgs),
    /// Measure an entry and keep the trash within `[trash]` limits (run after a delete)
    #[command(hide = true)]
    Tidy(TidyArgs),
}

#[derive(Debug, Args)]
pub struct EmptyArgs {
    /// Only entries deleted at least this long ago: a number with h, d or w (a bare number is days)
    #[arg(long, value_name = "AGE")]
    pub older_than: Option<String>,
    /// Erase without asking (a person at a terminal is asked; anyone else must pass it)
    #[arg(short, long)]
    pub yes: bool,
    /// Say what would be erased, and erase nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct TidyArgs {
    /// The entry a delete just made
    pub entry: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// A deleted workspace's name (its newest entry), or an entry's id from `gw trash`
    pub name: String,
    /// Bring it back under another name, beside where it was
    #[arg(long = "as", value_name = "NEW")]
    pub as_name: Option<String>,
    #[command(flatten)]
    pub dry: DryRun,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    #[command(flatten)]
    pub dry: DryRun,
}

pub fn trash(ctx: &Ctx<'_>, a: TrashArgs, ui: Ui) -> CmdResult {
    match a.command {
        None | Some(TrashCommand::List) => Ok(Out::new(ops::trash::list(ctx)?)),
        Some(TrashCommand::Empty(e)) => {
            let older = e
                .older_than
                .as_deref()
                .map(crate::duration::parse_age)
                .transpose()
                .map_err(|m| Error::usage(format!("--older-than: {m}")))?;
            // Erasing for good is asked once of a person (as a desktop trash's "Empty"); a
            // script or an agent says it with --yes, as nothing prompts in machine mode.
            if e.dry_run {
                return Ok(Out::new(ops::trash::empty(ctx, older, true)?));
            }
            if !e.yes && !ui.interactive {
                return Err(
                    Error::usage("erasing the trash for good needs --yes").with_fix(
                        "See what it holds with `gw trash`, then run `gw trash empty --yes`",
                    ),
                );
            }
            if ui.interactive && !e.yes {
                let listed = ops::trash::list(ctx)?;
                if listed.count > 0 {
                    let what = match &e.older_than {
                        Some(age) => format!("the deleted workspaces older than {age}"),
                        None => crate::ops::count(
                            listed.count,
                            "deleted workspace",
                            "deleted workspaces",
                        ),
                    };
                    if !pick::confirm(&format!("Erase {what} for good?"))? {
                        return Err(pick::cancelled());
                    }
                }
            }
            Ok(Out::new(ops::trash::empty(ctx, older, false)?))
        }
        Some(TrashCommand::Tidy(t)) => Ok(Out::new(ops::trash::tidy(
            ctx,
            t.entry.map(|p| ctx.env.resolve_path(&p)).as_deref(),
        )?)),
    }
}

pub fn restore_options(a: RestoreArgs) -> RestoreOptions {
    RestoreOptions {
        name: Some(a.name),
        as_name: a.as_name,
        expect: None,
    }
}

pub fn restore(ctx: &Ctx<'_>, a: RestoreArgs, ui: Ui) -> CmdResult {
    if a.dry.asked()? {
        return dry_run(ctx, PlanCommand::Restore(a), ui);
    }
    Ok(Out::new(ops::restore::restore(ctx, restore_options(a))?))
}

pub fn undo_options() -> RestoreOptions {
    RestoreOptions {
        name: None,
        as_name: None,
        expect: None,
    }
}

pub fn undo(ctx: &Ctx<'_>, a: UndoArgs, ui: Ui) -> CmdResult {
    if a.dry.asked()? {
        return dry_run(ctx, PlanCommand::Undo(a), ui);
    }
    Ok(Out::new(ops::restore::restore(ctx, undo_options())?))
}
