//! The trash: `gw trash [list|empty]`, `gw restore`, `gw undo`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::cli::{CmdResult, Out};
use crate::error::Error;
use crate::ops::restore::RestoreOptions;
use crate::ops::{self, Ctx};

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
}

pub fn trash(ctx: &Ctx<'_>, a: TrashArgs) -> CmdResult {
    match a.command {
        None | Some(TrashCommand::List) => Ok(Out::new(ops::trash::list(ctx)?)),
        Some(TrashCommand::Empty(e)) => {
            let older = e
                .older_than
                .as_deref()
                .map(crate::duration::parse_age)
                .transpose()
                .map_err(|m| Error::usage(format!("--older-than: {m}")))?;
            Ok(Out::new(ops::trash::empty(ctx, older)?))
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

pub fn restore(ctx: &Ctx<'_>, a: RestoreArgs) -> CmdResult {
    Ok(Out::new(ops::restore::restore(ctx, restore_options(a))?))
}

pub fn undo_options() -> RestoreOptions {
    RestoreOptions {
        name: None,
        as_name: None,
        expect: None,
    }
}

pub fn undo(ctx: &Ctx<'_>) -> CmdResult {
    Ok(Out::new(ops::restore::restore(ctx, undo_options())?))
}
