//! Plugins: `gw plugin list|remove|install|upgrade|search`, and running `gw-<name>` for an
//! unknown command.

use std::ffi::OsString;

use clap::{Args, CommandFactory, Subcommand};

use crate::cli::args::{Cli, DataArgs};
use crate::cli::{CmdResult, Out, Ui};
use crate::ops::plugin::InstallOptions;
use crate::ops::{self, Ctx};

use super::plan::EditDryRun;

#[derive(Debug, Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    pub command: PluginCommand,
}

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// List plugins: `gw-<name>` executables in the plugins directory and on PATH
    #[command(visible_alias = "ls")]
    List(DataArgs),
    /// Remove an installed plugin
    #[command(visible_aliases = ["rm", "uninstall"])]
    Remove(PluginRemoveArgs),
    /// Install a plugin from a file, an http(s) URL, a GitHub OWNER/REPO release, or by its registry name
    Install(PluginInstallArgs),
    /// Install plugins again from where they were installed from (all, or the one named)
    Upgrade(PluginUpgradeArgs),
    /// Search the plugin registry shipped with gw (offline)
    Search(PluginSearchArgs),
}

#[derive(Debug, Args)]
pub struct PluginUpgradeArgs {
    /// The plugin to upgrade (default: every installed plugin with a recorded source)
    pub name: Option<String>,
    #[command(flatten)]
    pub dry: EditDryRun,
}

#[derive(Debug, Args)]
pub struct PluginSearchArgs {
    /// Text to look for in names, repositories and descriptions (default: list them all)
    pub term: Option<String>,
    #[command(flatten)]
    pub data: DataArgs,
}

#[derive(Debug, Args)]
pub struct PluginRemoveArgs {
    /// The plugin name (`gw <name>` runs it)
    pub name: String,
    #[command(flatten)]
    pub dry: EditDryRun,
}

#[derive(Debug, Args)]
pub struct PluginInstallArgs {
    /// A local executable or tarball (path or file:// URL), an http(s) URL of one, OWNER/REPO on GitHub, or a name from `gw plugin search`
    pub source: String,
    /// The plugin name (default: from the file name, `gw-<name>`)
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub dry: EditDryRun,
}

pub fn plugin(ctx: &Ctx<'_>, a: PluginArgs) -> CmdResult {
    match a.command {
        PluginCommand::List(d) => Ok(Out::with_data(ops::plugin::list(ctx)?, d.format())),
        PluginCommand::Remove(r) => {
            let dry_run = r.dry.asked("plugin remove")?;
            Ok(Out::new(ops::plugin::remove(ctx, &r.name, dry_run)?))
        }
        PluginCommand::Install(i) => Ok(Out::new(ops::plugin::install(
            ctx,
            InstallOptions {
                dry_run: i.dry.asked("plugin install")?,
                source: i.source,
                name: i.name,
            },
        )?)),
        PluginCommand::Upgrade(u) => {
            let dry_run = u.dry.asked("plugin upgrade")?;
            Ok(Out::new(ops::plugin::upgrade(
                ctx,
                u.name.as_deref(),
                dry_run,
            )?))
        }
        PluginCommand::Search(q) => Ok(Out::with_data(
            ops::plugin::search(ctx, q.term.as_deref())?,
            q.data.format(),
        )),
    }
}

/// `gw <name> …` with no built-in `<name>`: replaces this process with the plugin, or
/// fails with `USAGE` naming the nearest built-in commands.
pub fn external(ctx: &Ctx<'_>, args: Vec<OsString>, ui: Ui) -> CmdResult {
    let mut args = args.into_iter();
    let name = args
        .next()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rest: Vec<OsString> = args.collect();
    Err(ops::plugin::exec(
        ctx,
        &name,
        &rest,
        &builtins(),
        ui.machine,
    ))
}

/// Every built-in command name and visible alias.
fn builtins() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .flat_map(|c| {
            std::iter::once(c.get_name().to_string())
                .chain(c.get_visible_aliases().map(String::from))
        })
        .filter(|n| n != "help")
        .collect()
}
