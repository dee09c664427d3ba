//! `gw trust [REPO] | list | add REPO | remove REPO`: approving repositories'
//! `.grove.toml` commands.

use clap::{Args, Subcommand};

use crate::cli::{CmdResult, Out};
use crate::ops::{self, Ctx};

use super::plan::EditDryRun;

/// Approve the commands of a repository's .grove.toml (setup, run, hooks) as they are now
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TrustArgs {
    #[command(subcommand)]
    pub command: Option<TrustCommand>,
    /// The repository to approve: a name from `gw repos` or a path (without one: the list)
    pub repo: Option<String>,
    #[command(flatten)]
    pub dry: EditDryRun,
}

#[derive(Debug, Subcommand)]
pub enum TrustCommand {
    /// List the approved repositories, and whether their commands changed since
    List,
    /// Approve a repository's .grove.toml commands as they are now
    Add(TrustRepoArgs),
    /// Forget an approval: the repository's commands are asked about again
    Remove(TrustRepoArgs),
}

#[derive(Debug, Args)]
pub struct TrustRepoArgs {
    /// A name from `gw repos`, or a path
    pub repo: String,
    #[command(flatten)]
    pub dry: EditDryRun,
}

pub fn trust(ctx: &Ctx<'_>, a: TrustArgs) -> CmdResult {
    Ok(match (a.command, a.repo) {
        (Some(TrustCommand::Add(r)), _) => {
            Out::new(ops::trust::add(ctx, &r.repo, r.dry.asked("trust add")?)?)
        }
        (None, Some(repo)) => Out::new(ops::trust::add(ctx, &repo, a.dry.asked("trust")?)?),
        (Some(TrustCommand::Remove(r)), _) => Out::new(ops::trust::remove(
            ctx,
            &r.repo,
            r.dry.asked("trust remove")?,
        )?),
        (Some(TrustCommand::List), _) | (None, None) => {
            if a.dry.dry_run || a.dry.out.is_some() {
                return Err(crate::error::Error::usage(
                    "`gw trust` without a repository lists the approvals, which changes nothing",
                )
                .with_fix("Name the repository: `gw trust add REPO --dry-run`"));
            }
            Out::new(ops::trust::list(ctx)?)
        }
    })
}
