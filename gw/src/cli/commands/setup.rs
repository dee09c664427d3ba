//! Setting grove up: init, repo dirs, repos, presets, shell integration, completions.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::cli::args::DataArgs;
use crate::cli::{CmdResult, Out, Ui, missing};
use crate::error::Error;
use crate::ops::{self, Ctx};
use crate::output::pick;
use crate::output::render::Script;

use super::plan::EditDryRun;

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Directories that hold git repositories
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub dry: EditDryRun,
}

#[derive(Debug, Args)]
pub struct AddDirArgs {
    /// A directory that holds git repositories
    pub path: PathBuf,
    #[command(flatten)]
    pub dry: EditDryRun,
}

#[derive(Debug, Args)]
pub struct RemoveDirArgs {
    /// The directory to stop searching (picked interactively when omitted)
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub dry: EditDryRun,
}

#[derive(Debug, Args)]
pub struct ShellInitArgs {
    /// bash, zsh, fish or nu (default: the shell that runs gw, else $SHELL)
    #[arg(value_name = "SHELL", value_parser = ["bash", "zsh", "fish", "nu", "nushell"])]
    pub shell_arg: Option<String>,
    /// The same as SHELL (kept for existing setups)
    #[arg(long, value_name = "SHELL", conflicts_with = "shell_arg", value_parser = ["bash", "zsh", "fish", "nu", "nushell"])]
    pub shell: Option<String>,
}

#[derive(Debug, Args)]
pub struct PresetArgs {
    #[command(subcommand)]
    pub command: PresetCommand,
}

#[derive(Debug, Subcommand)]
pub enum PresetCommand {
    /// Save a preset
    Add(PresetAddArgs),
    /// List presets
    #[command(visible_alias = "ls")]
    List(DataArgs),
    /// Show a preset
    Show(PresetShowArgs),
    /// Remove a preset
    #[command(visible_alias = "rm")]
    Remove(PresetNameArgs),
}

#[derive(Debug, Args)]
pub struct PresetAddArgs {
    /// Preset name (letters, digits, `_` and `-`)
    pub name: Option<String>,
    /// Repositories, comma-separated
    #[arg(short, long, value_delimiter = ',')]
    pub repos: Vec<String>,
    #[command(flatten)]
    pub dry: EditDryRun,
}

#[derive(Debug, Args)]
pub struct PresetShowArgs {
    pub name: String,
    #[command(flatten)]
    pub data: DataArgs,
}

#[derive(Debug, Args)]
pub struct PresetNameArgs {
    /// Preset name (picked interactively when omitted)
    pub name: Option<String>,
    #[command(flatten)]
    pub dry: EditDryRun,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, nu (nushell), elvish or powershell
    #[arg(value_parser = ["bash", "zsh", "fish", "nu", "nushell", "elvish", "powershell"])]
    pub shell: String,
}

pub fn init(ctx: &Ctx<'_>, a: InitArgs) -> CmdResult {
    let dry_run = a.dry.asked("init")?;
    Ok(Out::new(ops::init::init(ctx, &a.dirs, dry_run)?))
}

pub fn add_dir(ctx: &Ctx<'_>, a: AddDirArgs) -> CmdResult {
    let dry_run = a.dry.asked("add-dir")?;
    Ok(Out::new(ops::dirs::add_dir(ctx, &a.path, dry_run)?))
}

pub fn remove_dir(ctx: &Ctx<'_>, a: RemoveDirArgs, ui: Ui) -> CmdResult {
    let dry_run = a.dry.asked("remove-dir")?;
    let path = match a.path {
        Some(p) => p,
        None => {
            if !ui.interactive {
                return Err(missing("the directory to remove", "PATH"));
            }
            let dirs = ops::dirs::configured(ctx)?;
            if dirs.is_empty() {
                return Err(Error::usage("no repo dirs are configured"));
            }
            let items: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            dirs[pick::one("Remove which repo dir?", &items, 0)?].clone()
        }
    };
    Ok(Out::new(ops::dirs::remove_dir(ctx, &path, dry_run)?))
}

pub fn repos(ctx: &Ctx<'_>, a: DataArgs) -> CmdResult {
    Ok(Out::with_data(ops::repos::repos(ctx)?, a.format()))
}

pub fn shell_init(ctx: &Ctx<'_>, a: ShellInitArgs) -> CmdResult {
    let shell = a.shell_arg.or(a.shell).unwrap_or_else(|| {
        ops::shell_init::detect(ctx.env.parent_shell().as_deref(), ctx.env.shell.as_deref())
    });
    Ok(Out::new(ops::shell_init::shell_init(&shell)?))
}

pub fn preset_add(ctx: &Ctx<'_>, a: PresetAddArgs, ui: Ui) -> CmdResult {
    let dry_run = a.dry.asked("preset add")?;
    let name = match a.name {
        Some(n) => n,
        None if ui.interactive => pick::text("Preset name", "")?,
        None => return Err(missing("a preset name", "NAME")),
    };
    let repos = if !a.repos.is_empty() {
        a.repos
    } else if ui.interactive {
        let all = ops::repos::repos(ctx)?.repos;
        let names: Vec<String> = all.iter().map(|r| r.name.clone()).collect();
        pick::many("Repositories in the preset", &names)?
            .into_iter()
            .map(|i| names[i].clone())
            .collect()
    } else {
        return Err(missing("the preset's repositories", "--repos/-r"));
    };
    Ok(Out::new(ops::preset::add(ctx, &name, &repos, dry_run)?))
}

pub fn preset_list(ctx: &Ctx<'_>, a: DataArgs) -> CmdResult {
    Ok(Out::with_data(ops::preset::list(ctx)?, a.format()))
}

pub fn preset_show(ctx: &Ctx<'_>, a: PresetShowArgs) -> CmdResult {
    Ok(Out::with_data(
        ops::preset::show(ctx, &a.name)?,
        a.data.format(),
    ))
}

pub fn preset_remove(ctx: &Ctx<'_>, a: PresetNameArgs, ui: Ui) -> CmdResult {
    let dry_run = a.dry.asked("preset remove")?;
    let name = match a.name {
        Some(n) => n,
        None if ui.interactive => {
            let names: Vec<String> = ops::preset::list(ctx)?
                .presets
                .into_iter()
                .map(|p| p.name)
                .collect();
            if names.is_empty() {
                return Err(Error::usage("there are no presets"));
            }
            names[pick::one("Remove which preset?", &names, 0)?].clone()
        }
        None => return Err(missing("a preset name", "NAME")),
    };
    Ok(Out::new(ops::preset::remove(ctx, &name, dry_run)?))
}

/// Remove a quarantined workspace's files (run in the background by `gw delete`)
#[derive(Debug, Args)]
pub struct UnlinkTrashArgs {
    pub path: PathBuf,
}

pub fn unlink_trash(ctx: &Ctx<'_>, a: UnlinkTrashArgs) -> CmdResult {
    Ok(Out::new(ops::trash::unlink(ctx, &a.path)?))
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// A schema name (`envelope`, or a command such as `status`); lists them all when omitted
    pub name: Option<String>,
}

pub fn schema(a: SchemaArgs) -> CmdResult {
    Ok(Out::new(ops::schema::schema(a.name.as_deref())?))
}

pub fn skill() -> CmdResult {
    Ok(Out::new(ops::skill::skill()))
}

pub fn completions(ctx: &Ctx<'_>, a: CompletionsArgs) -> CmdResult {
    let shell = crate::cli::complete::shell(&a.shell).ok_or_else(|| {
        Error::usage(format!("unsupported shell `{}`", a.shell))
            .with_fix("Use one of: bash, zsh, fish, nu, elvish, powershell")
    })?;
    let completer = crate::cli::completer_path(ctx.env);
    let script = crate::cli::complete::script(shell, &completer)
        .map_err(|e| Error::internal(format!("cannot write the completion script: {e}")))?;
    Ok(Out::new(Script {
        shell: shell.name().to_string(),
        script,
    }))
}
