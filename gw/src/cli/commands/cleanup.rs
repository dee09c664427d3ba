//! Cleaning up: prune (workspaces and branches) and doctor.

use clap::{Args, Subcommand};

use crate::cli::args::DataArgs;
use crate::cli::{CmdResult, Out, Ui};
use crate::ops::doctor::DoctorOptions;
use crate::ops::prune::{PruneBranchesOptions, PruneOptions};
use crate::ops::{self, Ctx};

use super::plan::{DryRun, PlanCommand, dry_run};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PruneArgs {
    #[command(subcommand)]
    pub command: Option<PruneCommand>,
    /// Only workspaces created at least this long ago: a number with h, d or w (a bare number is days; default 7d)
    #[arg(long, value_name = "AGE")]
    pub min_age: Option<String>,
    /// Delete the candidates (without it, only list them), approving the repositories'
    /// `.grove.toml` teardown commands without asking (see `gw trust`)
    #[arg(short, long)]
    pub yes: bool,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub dry: DryRun,
}

#[derive(Debug, Subcommand)]
pub enum PruneCommand {
    /// Delete local branches merged into their base that no worktree or workspace uses
    Branches(PruneBranchesArgs),
}

#[derive(Debug, Args)]
pub struct PruneBranchesArgs {
    /// Also branches whose upstream branch was deleted (force-deleted)
    #[arg(long)]
    pub gone: bool,
    /// Run `git fetch --prune` in every repository first
    #[arg(long)]
    pub fetch: bool,
    /// Delete also branches holding commits on no remote whose changes are not in the base
    #[arg(short, long)]
    pub force: bool,
    /// Delete the candidates (without it, only list them)
    #[arg(short, long)]
    pub yes: bool,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub dry: DryRun,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Repair what is safe to repair, and say what was left and why
    #[arg(long)]
    pub fix: bool,
    /// Repair nothing: report what --fix would do (what `gw doctor` alone does)
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub data: DataArgs,
}

/// Turns `gw prune branches` arguments into options (shared with `gw plan prune branches`).
pub fn prune_branches_options(b: &PruneBranchesArgs) -> PruneBranchesOptions {
    PruneBranchesOptions {
        gone: b.gone,
        fetch: b.fetch,
        yes: b.yes,
        force: b.force,
        expect: None,
    }
}

pub fn prune(ctx: &Ctx<'_>, a: PruneArgs, ui: Ui) -> CmdResult {
    let dry = match &a.command {
        Some(PruneCommand::Branches(b)) => &b.dry,
        None => &a.dry,
    };
    if dry.asked()? {
        return dry_run(ctx, PlanCommand::Prune(a), ui);
    }
    match a.command {
        Some(PruneCommand::Branches(b)) => Ok(Out::with_data(
            ops::prune::prune_branches(ctx, prune_branches_options(&b))?,
            b.data.format(),
        )),
        None => Ok(Out::with_data(
            ops::prune::prune(
                ctx,
                PruneOptions {
                    min_age: a.min_age,
                    yes: a.yes,
                    expect: None,
                },
            )?,
            a.data.format(),
        )),
    }
}

pub fn doctor(ctx: &Ctx<'_>, a: DoctorArgs) -> CmdResult {
    Ok(Out::with_data(
        ops::doctor::doctor(
            ctx,
            DoctorOptions {
                fix: a.fix && !a.dry_run,
            },
        )?,
        a.data.format(),
    ))
}
