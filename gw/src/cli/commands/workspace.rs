//! The workspace lifecycle: create, list, show, status, go, delete.

use std::io::Read;

use clap::{Args, Subcommand};

use crate::cli::args::DataArgs;
use crate::cli::{CmdResult, Out, Ui, missing};
use crate::error::{Code, Error};
use crate::ops::create::{CreateOptions, Selection, SourceFields};
use crate::ops::delete::DeleteOptions;
use crate::ops::{self, Ctx};
use crate::output::{DataFormat, pick};

use super::plan::{DryRun, PlanCommand, dry_run};

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Workspace name (default: derived from the branch)
    pub name: Option<String>,
    /// Branch to create or check out in every repository
    #[arg(short, long)]
    pub branch: Option<String>,
    /// Repositories, comma-separated: names or git URLs (URLs are cloned into the first repo dir)
    #[arg(short, long, value_delimiter = ',', conflicts_with_all = ["preset", "all"])]
    pub repos: Vec<String>,
    /// A blueprint file naming the repositories (and optionally per-repo base branch and
    /// track mode, a default name and source fields)
    // The value is optional for clap so that the Go grove's `-f` (its `--force`) reaches
    // `blueprint_path`, which explains the change; conflicts are checked there too.
    #[arg(short = 'f', long, value_name = "FILE", num_args = 0..=1)]
    pub file: Option<Option<std::path::PathBuf>>,
    /// Use the repositories of a preset
    #[arg(short, long, conflicts_with = "all")]
    pub preset: Option<String>,
    /// Use every repository grove can find
    #[arg(long)]
    pub all: bool,
    /// Check out origin/<branch> where it exists instead of starting a new branch
    #[arg(long)]
    pub track: bool,
    /// Copy each repository's `.grove.toml` `copy` paths (build caches, dependencies) into
    /// its new worktree, copy-on-write where the file system can (default: `[create] copy`)
    #[arg(long, conflicts_with = "no_copy")]
    pub copy: bool,
    /// Do not copy, whatever `[create] copy` says
    #[arg(long)]
    pub no_copy: bool,
    /// Approve the repositories' `.grove.toml` commands this runs without asking (see `gw trust`)
    #[arg(short, long)]
    pub yes: bool,
    /// Replace the workspace you are in (it is deleted first)
    #[arg(long)]
    pub replace: bool,
    /// With --replace: do not ask, and discard uncommitted changes in the replaced workspace
    #[arg(long, requires = "replace")]
    pub force: bool,
    /// Where the work comes from: a URL (pull request, issue, …)
    #[arg(long, value_name = "URL")]
    pub source_url: Option<String>,
    /// Where the work comes from: the provider (github, linear, …)
    #[arg(long, value_name = "NAME")]
    pub source_provider: Option<String>,
    /// Where the work comes from: a reference (PR number, issue key, …)
    #[arg(long, value_name = "REF")]
    pub source_ref: Option<String>,
    /// Where the work comes from: a title
    #[arg(long, value_name = "TITLE")]
    pub source_title: Option<String>,
    #[command(flatten)]
    pub dry: DryRun,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Summarise each workspace's worktrees (clean, modified, error)
    #[arg(short, long, conflicts_with = "ports")]
    pub status: bool,
    /// Show each workspace's slot and ports, and whether something listens on them
    #[arg(long)]
    pub ports: bool,
    #[command(flatten)]
    pub data: DataArgs,
}

#[derive(Debug, Args)]
pub struct WsArgs {
    #[command(subcommand)]
    pub command: WsCommand,
}

#[derive(Debug, Subcommand)]
pub enum WsCommand {
    /// List workspaces
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// Show one workspace as recorded
    Show(ShowArgs),
    /// Delete workspaces
    #[command(visible_alias = "rm")]
    Delete(DeleteArgs),
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Workspace name (default: the one you are in)
    pub name: Option<String>,
    #[command(flatten)]
    pub data: DataArgs,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Workspace name (default: the one you are in)
    pub name: Option<String>,
    #[command(flatten)]
    pub data: DataArgs,
}

#[derive(Debug, Args)]
pub struct GoArgs {
    /// Workspace name (picked interactively when omitted)
    pub name: Option<String>,
    /// Go back to the directory holding the workspace's source repositories
    #[arg(short, long)]
    pub back: bool,
    /// Delete the workspace you are leaving
    #[arg(short, long)]
    pub delete: bool,
    /// Run the on_close hook (e.g. to close the terminal tab)
    #[arg(short = 'c', long)]
    pub close_tab: bool,
    /// With --delete: discard uncommitted changes in the workspace you are leaving
    #[arg(short, long, requires = "delete")]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Workspaces to delete (picked interactively when omitted)
    pub names: Vec<String>,
    /// Read workspace names from stdin, one per line (needs --yes)
    #[arg(long, conflicts_with = "names")]
    pub stdin: bool,
    /// Do not ask before deleting several workspaces picked interactively (required with
    /// --stdin, not with names), and approve the repositories' `.grove.toml` teardown
    /// commands without asking (see `gw trust`)
    #[arg(short, long)]
    pub yes: bool,
    /// Discard uncommitted changes, and delete branches holding commits found nowhere else
    #[arg(short, long)]
    pub force: bool,
    /// Erase at once: do not keep the workspace in the trash for `gw restore`
    #[arg(long)]
    pub purge: bool,
    #[command(flatten)]
    pub dry: DryRun,
}

/// Turns `gw create` arguments into options, asking for what is missing when a person is
/// there (shared with `gw plan create`, which never asks). `--replace`'s confirmation is
/// `create`'s: a plan deletes nothing.
pub fn create_options(ctx: &Ctx<'_>, a: CreateArgs, ui: Ui) -> Result<CreateOptions, Error> {
    let branch = match a.branch {
        Some(b) => b,
        None if ui.interactive => pick::text("Branch", a.name.as_deref().unwrap_or(""))?,
        None => return Err(missing("a branch", "--branch/-b")),
    };
    let file = a.file.map(|f| blueprint_path(ctx, f)).transpose()?;
    if file.is_some() && (!a.repos.is_empty() || a.preset.is_some() || a.all) {
        return Err(Error::usage(
            "--file/-f names the repositories itself; it cannot be used with --repos, --preset or --all",
        )
        .with_fix("Pass either a blueprint file or a repository selection"));
    }
    let selection = if let Some(f) = file {
        Selection::Blueprint(ops::blueprint::load(&f)?)
    } else if let Some(p) = a.preset {
        Selection::Preset(p)
    } else if a.all {
        Selection::All
    } else if !a.repos.is_empty() {
        Selection::Repos(crate::git::url::rejoin(a.repos))
    } else if ui.interactive {
        pick_repos(ctx)?
    } else {
        return Err(missing(
            "the repositories",
            "--repos/-r, --preset/-p, --file/-f or --all",
        ));
    };
    Ok(CreateOptions {
        name: a.name,
        branch,
        selection,
        track: a.track,
        source: SourceFields {
            url: a.source_url,
            provider: a.source_provider,
            reference: a.source_ref,
            title: a.source_title,
        },
        replace: a.replace,
        force: a.force,
        replacing: None,
        copy: crate::cli::commands::daily::copy_flag(a.copy, a.no_copy),
        expect: None,
    })
}

/// The blueprint file of `-f`/`--file`. The Go grove's `gw create … -f` meant `--force`, so a
/// bare `-f`, or one followed by something that is not a file, is a `USAGE` error saying so.
fn blueprint_path(
    ctx: &Ctx<'_>,
    f: Option<std::path::PathBuf>,
) -> Result<std::path::PathBuf, Error> {
    let fix = "On `gw create`, `-f` is `--file` (a blueprint). To skip the `--replace` confirmation, as the Go grove's `-f` did, pass `--force`; for a blueprint, pass `-f FILE` with an existing file";
    let Some(f) = f else {
        return Err(Error::usage("-f/--file needs a blueprint file")
            .with_fix(fix)
            .with_details(serde_json::json!({ "flag": "-f", "value": null })));
    };
    let path = ctx.env.resolve_path(&f);
    if !path.is_file() {
        return Err(Error::usage(format!(
            "-f/--file `{}`: {}",
            f.display(),
            if path.exists() {
                "not a file"
            } else {
                "no such file"
            }
        ))
        .with_fix(fix)
        .with_details(serde_json::json!({ "flag": "-f", "value": f })));
    }
    Ok(path)
}

pub fn create(ctx: &Ctx<'_>, a: CreateArgs, ui: Ui) -> CmdResult {
    if a.dry.asked()? {
        return dry_run(ctx, PlanCommand::Create(a), ui);
    }
    let opts = create_options(ctx, a, ui)?;
    // A plan of it needs no confirmation: applying the plan is one.
    if opts.replace && !opts.force {
        if !ui.interactive {
            return Err(Error::usage("--replace deletes the workspace you are in")
                .with_fix("Pass --force to confirm (it also discards uncommitted changes there)"));
        }
        if !pick::confirm("Delete the workspace you are in and replace it?")? {
            return Err(Error::new(Code::Cancelled, "cancelled"));
        }
    }
    let report = ops::create::create(ctx, opts)?;
    // The shell integration goes into the new workspace (not in machine mode).
    let cd = (!ui.machine).then(|| report.path.clone());
    Ok(Out::new(report).with_cd(cd))
}

/// Presets first, then "pick manually…" over every repository.
fn pick_repos(ctx: &Ctx<'_>) -> Result<Selection, Error> {
    let presets = ops::preset::list(ctx)?.presets;
    if !presets.is_empty() {
        let mut items: Vec<String> = presets
            .iter()
            .map(|p| format!("{}  ({})", p.name, p.repos.join(", ")))
            .collect();
        items.push("Pick manually…".into());
        let i = pick::one("Repositories", &items, 0)?;
        if i < presets.len() {
            return Ok(Selection::Preset(presets[i].name.clone()));
        }
    }
    let repos = ops::repos::repos(ctx)?.repos;
    if repos.is_empty() {
        return Err(Error::new(Code::RepoNotFound, "no repositories found")
            .with_fix("Run `gw add-dir <path>` to add a directory holding repositories"));
    }
    let names: Vec<String> = repos.iter().map(|r| r.name.clone()).collect();
    let chosen = pick::many("Repositories (space to select, enter to accept)", &names)?;
    Ok(Selection::Repos(
        chosen.into_iter().map(|i| names[i].clone()).collect(),
    ))
}

/// Show where you are: grove's configuration, the workspaces, and the current workspace's state
#[derive(Debug, Args)]
pub struct ContextArgs {}

pub fn context(ctx: &Ctx<'_>, _a: ContextArgs) -> CmdResult {
    Ok(Out::new(ops::context::context(ctx)))
}

pub fn list(ctx: &Ctx<'_>, a: ListArgs, ui: Ui) -> CmdResult {
    let format = a.data.format();
    if a.status {
        Ok(Out::with_data(ops::list::list_status(ctx)?, format))
    } else if a.ports {
        Ok(Out::with_data(ops::list::list_ports(ctx)?, format))
    } else {
        // Only the table marks the workspace you are in.
        let table = !ui.machine && matches!(format, None | Some(DataFormat::Table));
        Ok(Out::with_data(ops::list::list(ctx, table)?, format))
    }
}

pub fn show(ctx: &Ctx<'_>, a: ShowArgs, ui: Ui) -> CmdResult {
    let name = name_or_pick(ctx, a.name, ui)?;
    Ok(Out::with_data(
        ops::list::show(ctx, name.as_deref())?,
        a.data.format(),
    ))
}

pub fn status(ctx: &Ctx<'_>, a: StatusArgs, ui: Ui) -> CmdResult {
    let name = name_or_pick(ctx, a.name, ui)?;
    Ok(Out::with_data(
        ops::status::status(ctx, name.as_deref())?,
        a.data.format(),
    ))
}

pub fn go(ctx: &Ctx<'_>, a: GoArgs, ui: Ui) -> CmdResult {
    let mut warnings = Vec::new();
    if a.close_tab {
        warnings.extend(ops::go::close(ctx)?);
        if a.name.is_none() && !a.back && !a.delete {
            let workspace = ctx
                .state()?
                .containing(&ctx.env.cwd)
                .map(|w| w.name.clone());
            return Ok(Out::new(ops::go::CloseReport {
                workspace,
                hook: "on_close",
                warnings,
            }));
        }
    }
    let mut report = if a.back {
        let candidates = ops::go::back_candidates(ctx, a.name.as_deref())?;
        let path = if candidates.len() == 1 {
            candidates[0].clone()
        } else if ui.interactive {
            let items: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
            candidates[pick::one("Go back to", &items, 0)?].clone()
        } else {
            return Err(
                Error::usage("the workspace's repositories live in several directories")
                    .with_details(serde_json::json!({ "candidates": candidates }))
                    .with_fix("cd into one of them directly"),
            );
        };
        ops::go::GoReport {
            workspace: None,
            path,
            warnings: Vec::new(),
            integrated: false,
        }
    } else {
        let name = match a.name {
            Some(n) => n,
            None => pick_workspace(ctx, ui)?,
        };
        ops::go::go(ctx, &name)?
    };
    if a.delete {
        warnings.extend(ops::go::delete_current(
            ctx,
            report.workspace.as_deref(),
            a.force,
        )?);
    }
    report.warnings = warnings;
    // With the shell integration, in text mode at a terminal, the shell goes there and
    // nothing is printed; without it, or when stdout is not a terminal (`$(gw go NAME)`
    // through the integration's function), the path is printed too.
    report.integrated = ctx.env.cd_file.is_some() && !ui.machine && ui.out_is_terminal;
    let cd = (!ui.machine).then(|| report.path.clone());
    Ok(Out::new(report).with_cd(cd))
}

/// The workspace a command is about: `name` when given; else, for a person at a terminal
/// outside any workspace, one picked from the list; else `None` (the command then uses the
/// workspace the current directory is in, or says that it is not in one).
pub fn name_or_pick(ctx: &Ctx<'_>, name: Option<String>, ui: Ui) -> Result<Option<String>, Error> {
    if name.is_some() || !ui.interactive {
        return Ok(name);
    }
    let state = ctx.state()?;
    if state.containing(&ctx.env.cwd).is_some() || state.workspaces.is_empty() {
        return Ok(None);
    }
    pick_workspace(ctx, ui).map(Some)
}

fn pick_workspace(ctx: &Ctx<'_>, ui: Ui) -> Result<String, Error> {
    ctx.config()?;
    let state = ctx.state()?;
    if state.workspaces.is_empty() {
        return Err(Error::new(Code::NoWorkspaces, "there are no workspaces")
            .with_fix("Create one with `gw create NAME -b BRANCH -r REPOS`"));
    }
    if !ui.interactive {
        return Err(missing("a workspace name", "NAME"));
    }
    let current = state.containing(&ctx.env.cwd).map(|w| w.name.clone());
    let items: Vec<String> = state
        .workspaces
        .iter()
        .map(|w| {
            if Some(&w.name) == current.as_ref() {
                format!("{} (current)", w.name)
            } else {
                w.name.clone()
            }
        })
        .collect();
    Ok(state.workspaces[pick::one("Workspace", &items, 0)?]
        .name
        .clone())
}

/// Turns `gw delete` arguments into options (shared with `gw plan delete`).
pub fn delete_options(ctx: &Ctx<'_>, a: DeleteArgs, ui: Ui) -> Result<DeleteOptions, Error> {
    // Names on the command line are asked for already; --yes confirms the others.
    if a.yes && !a.stdin && !a.names.is_empty() {
        return Err(Error::usage(
            "--yes confirms names read with --stdin or picked interactively, not names given",
        )
        .with_fix("Drop --yes"));
    }
    let names = if a.stdin {
        if !a.yes {
            return Err(
                Error::usage("deleting names read from stdin needs confirmation")
                    .with_fix("Pass --yes with --stdin"),
            );
        }
        let mut input = String::new();
        std::io::stdin()
            .read_to_string(&mut input)
            .map_err(|e| Error::usage(format!("cannot read stdin: {e}")))?;
        let names: Vec<String> = input
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        if names.is_empty() {
            return Err(Error::usage("no workspace names on stdin"));
        }
        names
    } else if !a.names.is_empty() {
        a.names
    } else {
        let state = ctx.state()?;
        if state.workspaces.is_empty() {
            return Err(Error::new(
                Code::NoWorkspaces,
                "there are no workspaces to delete",
            ));
        }
        if !ui.interactive {
            return Err(missing(
                "the workspaces to delete",
                "NAME… (or --stdin --yes)",
            ));
        }
        let names = state.names();
        let chosen: Vec<String> = pick::many("Delete which workspaces?", &names)?
            .into_iter()
            .map(|i| names[i].clone())
            .collect();
        // Several at once from a picker are easy to select by mistake: ask once.
        let question = format!(
            "Delete {} and their branches?",
            crate::ops::count(chosen.len(), "workspace", "workspaces")
        );
        if chosen.len() > 1 && !a.yes && !pick::confirm(&question)? {
            return Err(pick::cancelled());
        }
        chosen
    };
    Ok(DeleteOptions {
        names,
        force: a.force,
        purge: a.purge,
        expect: None,
    })
}

pub fn delete(ctx: &Ctx<'_>, a: DeleteArgs, ui: Ui) -> CmdResult {
    if a.dry.asked()? {
        return dry_run(ctx, PlanCommand::Delete(a), ui);
    }
    let opts = delete_options(ctx, a, ui)?;
    Ok(Out::new(ops::delete::delete(ctx, opts)?))
}
