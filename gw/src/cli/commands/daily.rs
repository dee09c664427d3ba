//! Day-to-day operations on a workspace: sync, reset, add-repo, remove-repo, rename.

use clap::Args;

use crate::cli::{CmdResult, Out, Ui, missing};
use crate::error::{Code, Error};
use crate::ops::add_repo::AddRepoOptions;
use crate::ops::remove_repo::RemoveRepoOptions;
use crate::ops::rename::RenameOptions;
use crate::ops::reset::ResetOptions;
use crate::ops::sync::SyncOptions;
use crate::ops::{self, Ctx};
use crate::output::pick;

use super::plan::{DryRun, PlanCommand, dry_run};
use super::workspace::name_or_pick;

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Workspace name (default: the one you are in)
    pub name: Option<String>,
    /// Approve the repositories' `.grove.toml` commands this runs without asking (see `gw trust`)
    #[arg(short, long)]
    pub yes: bool,
    #[command(flatten)]
    pub dry: DryRun,
}

#[derive(Debug, Args)]
pub struct ResetArgs {
    /// Workspace name (default: the one you are in)
    pub name: Option<String>,
    /// Discard changes to tracked files that stop a worktree from switching back
    #[arg(long)]
    pub discard: bool,
    /// Approve the repositories' `.grove.toml` commands this runs without asking (see `gw trust`)
    #[arg(short, long)]
    pub yes: bool,
    #[command(flatten)]
    pub dry: DryRun,
}

#[derive(Debug, Args)]
pub struct AddRepoArgs {
    /// Workspace name (default: the one you are in)
    pub name: Option<String>,
    /// Repositories, comma-separated: names or git URLs (URLs are cloned into the first repo dir)
    #[arg(short, long, value_delimiter = ',')]
    pub repos: Vec<String>,
    /// Approve the repositories' `.grove.toml` commands this runs without asking (see `gw trust`)
    #[arg(short, long)]
    pub yes: bool,
    /// Copy each repository's `.grove.toml` `copy` paths (build caches, dependencies) into
    /// its new worktree, copy-on-write where the file system can (default: `[create] copy`)
    #[arg(long, conflicts_with = "no_copy")]
    pub copy: bool,
    /// Do not copy, whatever `[create] copy` says
    #[arg(long)]
    pub no_copy: bool,
    #[command(flatten)]
    pub dry: DryRun,
}

#[derive(Debug, Args)]
pub struct RemoveRepoArgs {
    /// Workspace name (default: the one you are in)
    pub name: Option<String>,
    /// Repositories to remove, comma-separated
    #[arg(short, long, value_delimiter = ',')]
    pub repos: Vec<String>,
    /// Remove even with uncommitted changes or on another branch, and delete branches holding commits found nowhere else
    #[arg(short, long)]
    pub force: bool,
    /// Do not ask before removing several repositories picked interactively, and approve the
    /// repositories' `.grove.toml` commands this runs without asking (see `gw trust`)
    #[arg(short, long)]
    pub yes: bool,
    #[command(flatten)]
    pub dry: DryRun,
}

#[derive(Debug, Args)]
pub struct RenameArgs {
    /// Workspace name (default: the one you are in)
    pub name: Option<String>,
    /// The new name
    #[arg(long, value_name = "NEW")]
    pub to: String,
    #[command(flatten)]
    pub dry: DryRun,
}

pub fn sync_options(a: SyncArgs) -> SyncOptions {
    SyncOptions {
        name: a.name,
        expect: None,
    }
}

pub fn sync(ctx: &Ctx<'_>, mut a: SyncArgs, ui: Ui) -> CmdResult {
    if a.dry.asked()? {
        return dry_run(ctx, PlanCommand::Sync(a), ui);
    }
    a.name = name_or_pick(ctx, a.name, ui)?;
    Ok(Out::new(ops::sync::sync(ctx, sync_options(a))?))
}

pub fn reset_options(a: ResetArgs) -> ResetOptions {
    ResetOptions {
        name: a.name,
        discard: a.discard,
        expect: None,
    }
}

pub fn reset(ctx: &Ctx<'_>, mut a: ResetArgs, ui: Ui) -> CmdResult {
    if a.dry.asked()? {
        return dry_run(ctx, PlanCommand::Reset(a), ui);
    }
    a.name = name_or_pick(ctx, a.name, ui)?;
    Ok(Out::new(ops::reset::reset(ctx, reset_options(a))?))
}

/// `--copy` / `--no-copy`: asked, refused, or (neither) the configuration's `[create] copy`.
pub fn copy_flag(copy: bool, no_copy: bool) -> Option<bool> {
    match (copy, no_copy) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    }
}

pub fn add_repo_options(ctx: &Ctx<'_>, a: AddRepoArgs, ui: Ui) -> Result<AddRepoOptions, Error> {
    let repos = if !a.repos.is_empty() {
        crate::git::url::rejoin(a.repos)
    } else if ui.interactive {
        pick_repos_to_add(ctx, a.name.as_deref())?
    } else {
        return Err(missing("the repositories to add", "--repos/-r"));
    };
    Ok(AddRepoOptions {
        name: a.name,
        repos,
        copy: copy_flag(a.copy, a.no_copy),
        expect: None,
    })
}

pub fn add_repo(ctx: &Ctx<'_>, mut a: AddRepoArgs, ui: Ui) -> CmdResult {
    if a.dry.asked()? {
        return dry_run(ctx, PlanCommand::AddRepo(a), ui);
    }
    a.name = name_or_pick(ctx, a.name, ui)?;
    let opts = add_repo_options(ctx, a, ui)?;
    Ok(Out::new(ops::add_repo::add_repo(ctx, opts)?))
}

fn pick_repos_to_add(ctx: &Ctx<'_>, name: Option<&str>) -> Result<Vec<String>, Error> {
    let state = ctx.state()?;
    let ws = ops::resolve::workspace(&state, name, &ctx.env.cwd)?;
    let names: Vec<String> = ops::repos::repos(ctx)?
        .repos
        .into_iter()
        .map(|r| r.name)
        .filter(|n| ws.repo(n).is_none())
        .collect();
    if names.is_empty() {
        return Err(Error::new(
            Code::RepoNotFound,
            format!("every repository grove knows is already in `{}`", ws.name),
        )
        .with_fix("Run `gw add-dir <path>` to add a directory holding more repositories"));
    }
    let chosen = pick::many("Add which repositories?", &names)?;
    Ok(chosen.into_iter().map(|i| names[i].clone()).collect())
}

pub fn remove_repo_options(
    ctx: &Ctx<'_>,
    a: RemoveRepoArgs,
    ui: Ui,
) -> Result<RemoveRepoOptions, Error> {
    let repos = if !a.repos.is_empty() {
        a.repos
    } else if ui.interactive {
        let state = ctx.state()?;
        let ws = ops::resolve::workspace(&state, a.name.as_deref(), &ctx.env.cwd)?;
        let names: Vec<String> = ws.repos.iter().map(|r| r.repo_name.clone()).collect();
        if names.is_empty() {
            return Err(Error::usage(format!(
                "workspace `{}` has no repositories",
                ws.name
            )));
        }
        let chosen: Vec<String> = pick::many("Remove which repositories?", &names)?
            .into_iter()
            .map(|i| names[i].clone())
            .collect();
        let question = format!(
            "Remove {} from `{}` (their worktrees and branches)?",
            crate::ops::count(chosen.len(), "repository", "repositories"),
            ws.name
        );
        if chosen.len() > 1 && !a.yes && !pick::confirm(&question)? {
            return Err(pick::cancelled());
        }
        chosen
    } else {
        return Err(missing("the repositories to remove", "--repos/-r"));
    };
    Ok(RemoveRepoOptions {
        name: a.name,
        repos,
        force: a.force,
        expect: None,
    })
}

pub fn remove_repo(ctx: &Ctx<'_>, mut a: RemoveRepoArgs, ui: Ui) -> CmdResult {
    if a.dry.asked()? {
        return dry_run(ctx, PlanCommand::RemoveRepo(a), ui);
    }
    a.name = name_or_pick(ctx, a.name, ui)?;
    let opts = remove_repo_options(ctx, a, ui)?;
    Ok(Out::new(ops::remove_repo::remove_repo(ctx, opts)?))
}

pub fn rename_options(a: RenameArgs) -> RenameOptions {
    RenameOptions {
        name: a.name,
        to: a.to,
        expect: None,
    }
}

pub fn rename(ctx: &Ctx<'_>, mut a: RenameArgs, ui: Ui) -> CmdResult {
    if a.dry.asked()? {
        return dry_run(ctx, PlanCommand::Rename(a), ui);
    }
    a.name = name_or_pick(ctx, a.name, ui)?;
    let report = ops::rename::rename(ctx, rename_options(a))?;
    // The shell in the workspace moves with it.
    let cd = report.cwd_moved_to.clone();
    Ok(Out::new(report).with_cd(cd))
}
