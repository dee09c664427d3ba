//! The command-line grammar.

use std::ffi::OsString;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::commands::bug_report::BugReportArgs;
use super::commands::cleanup::{DoctorArgs, PruneArgs};
use super::commands::daily::{AddRepoArgs, RemoveRepoArgs, RenameArgs, ResetArgs, SyncArgs};
use super::commands::plan::{ApplyArgs, PlanArgs};
use super::commands::plugin::PluginArgs;
use super::commands::run::{EnvArgs, RunArgs};
use super::commands::setup::{
    AddDirArgs, CompletionsArgs, InitArgs, PresetArgs, RemoveDirArgs, SchemaArgs, ShellInitArgs,
    UnlinkTrashArgs,
};
use super::commands::trash::{RestoreArgs, TrashArgs, TrashCommand, UndoArgs};
use super::commands::trust::{TrustArgs, TrustCommand};
use super::commands::workspace::{
    ContextArgs, CreateArgs, DeleteArgs, GoArgs, ListArgs, StatusArgs, WsArgs,
};
use super::man::ManArgs;
use crate::output::DataFormat;

/// grove: one directory per feature, with a git worktree of each repository it spans
#[derive(Debug, Parser)]
#[command(
    name = "gw",
    version = crate::VERSION,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// Output format: `text` for people, `json` for programs (one JSON envelope on stdout);
    /// `gw env` also prints `shell` (the text default) and `dotenv`
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "FORMAT",
        help_heading = "Global options"
    )]
    pub format: Option<Format>,

    /// Skip global lifecycle hooks (post_create, pre_delete, on_close)
    #[arg(short = 'n', long, global = true, help_heading = "Global options")]
    pub no_hooks: bool,

    /// Show progress on stderr even when it is not a terminal, and log debug detail to grove.log
    #[arg(short = 'v', long, global = true, help_heading = "Global options")]
    pub verbose: bool,

    /// When to colour output: auto (on a terminal, unless NO_COLOR is set; CLICOLOR_FORCE
    /// or FORCE_COLOR colour it anyway), always or never
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        help_heading = "Global options"
    )]
    pub color: Option<ColorWhen>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    // No doc comments on the values: clap would list them in `--help` only, and `gw --help`
    // is `gw`'s overview (the argument's help says what `shell` and `dotenv` are).
    Shell,
    Dotenv,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Set up grove and add directories that hold your repositories
    Init(InitArgs),
    /// Add a directory to search for repositories
    AddDir(AddDirArgs),
    /// Stop searching a directory for repositories
    RemoveDir(RemoveDirArgs),
    /// List the repositories grove can put in a workspace
    Repos(DataArgs),
    /// Create a workspace: a worktree of each repository on one branch
    Create(CreateArgs),
    /// Show where you are: configuration, workspaces, and the current workspace's live state
    Context(ContextArgs),
    /// Preview a mutating command: every change it would make, and what that depends on
    Plan(PlanArgs),
    /// Execute a saved plan, only if nothing it depends on has changed
    Apply(ApplyArgs),
    /// List workspaces
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// Manage workspaces (list, show, delete)
    Ws(WsArgs),
    /// Show the live state of each repository in a workspace
    Status(StatusArgs),
    /// Print a workspace's path (the shell integration cds into it)
    Go(GoArgs),
    /// Print the shell integration: `gw go` and `gw create` change directory, and no command strands the shell
    ShellInit(ShellInitArgs),
    /// Delete workspaces, their worktrees and the branches grove made
    #[command(visible_alias = "rm")]
    Delete(DeleteArgs),
    /// Manage presets: named lists of repositories
    Preset(PresetArgs),
    /// Print a shell completion script
    #[command(visible_alias = "completion")]
    Completions(CompletionsArgs),
    /// Print the JSON Schemas of machine-mode output (the envelope and each command's result)
    /// and of config.toml and .grove.toml
    Schema(SchemaArgs),
    /// Print the agent skill (SKILL.md) that teaches a coding agent to drive gw
    Skill,
    /// Run each repository's dev processes (.grove.toml `run`) side by side
    Run(RunArgs),
    /// Print the variables grove gives a workspace's commands (slot, ports)
    Env(EnvArgs),
    #[command(hide = true)]
    UnlinkTrash(UnlinkTrashArgs),
    /// Rebase every repository of a workspace onto its base branch
    Sync(SyncArgs),
    /// Put every repository back on the workspace's branch, then sync it
    Reset(ResetArgs),
    /// Add repositories to a workspace
    AddRepo(AddRepoArgs),
    /// Remove repositories from a workspace
    RemoveRepo(RemoveRepoArgs),
    /// Rename a workspace (and move its directory)
    Rename(RenameArgs),
    /// Delete old workspaces (`prune branches`: merged branches)
    Prune(PruneArgs),
    /// Find problems with workspaces; --fix repairs the safe ones
    Doctor(DoctorArgs),
    /// List the deleted workspaces the trash keeps, or empty it
    Trash(TrashArgs),
    /// Bring a deleted workspace back from the trash, exactly as it was
    Restore(RestoreArgs),
    /// Restore the workspace deleted last (what `gw plan undo` shows)
    Undo(UndoArgs),
    /// Manage plugins (list, install, remove, upgrade, search)
    Plugin(PluginArgs),
    /// Gather what a bug report needs (environment, doctor, recent log), secrets redacted
    BugReport(BugReportArgs),
    /// Print gw's manual page, or a command's (roff: `gw man create | man -l -`)
    Man(ManArgs),
    /// Approve the commands of a repository's .grove.toml (setup, run, hooks) as they are now; list or remove approvals
    Trust(TrustArgs),
    /// Any other command runs the plugin `gw-<command>`
    #[command(external_subcommand)]
    External(Vec<OsString>),
}

impl Command {
    /// Whether the command changes anything (workspaces, configuration, plugins): those are
    /// always recorded in `grove.log`, the others only with `-v`.
    pub fn mutates(&self) -> bool {
        use super::commands::cleanup::PruneCommand;
        use super::commands::plugin::PluginCommand;
        use super::commands::setup::PresetCommand;
        use super::commands::workspace::WsCommand;
        match self {
            Command::Init(_)
            | Command::AddDir(_)
            | Command::RemoveDir(_)
            | Command::Create(_)
            | Command::Apply(_)
            | Command::Delete(_)
            | Command::UnlinkTrash(_)
            | Command::Sync(_)
            | Command::Reset(_)
            | Command::AddRepo(_)
            | Command::RemoveRepo(_)
            | Command::Rename(_)
            | Command::Restore(_)
            | Command::Undo(_) => true,
            Command::Trash(t) => !matches!(t.command, Some(TrashCommand::List) | None),
            Command::Ws(ws) => matches!(ws.command, WsCommand::Delete(_)),
            Command::Go(g) => g.delete,
            Command::Preset(p) => {
                matches!(p.command, PresetCommand::Add(_) | PresetCommand::Remove(_))
            }
            Command::Prune(p) => match &p.command {
                Some(PruneCommand::Branches(b)) => b.yes || b.fetch,
                None => p.yes,
            },
            Command::Doctor(d) => d.fix,
            Command::Trust(t) => {
                !matches!(t.command, Some(TrustCommand::List) | None) || t.repo.is_some()
            }
            Command::Plugin(p) => matches!(
                p.command,
                PluginCommand::Install(_) | PluginCommand::Remove(_) | PluginCommand::Upgrade(_)
            ),
            Command::Repos(_)
            | Command::Context(_)
            | Command::Plan(_)
            | Command::List(_)
            | Command::Status(_)
            | Command::ShellInit(_)
            | Command::Completions(_)
            | Command::Schema(_)
            | Command::Skill
            | Command::Run(_)
            | Command::Env(_)
            | Command::BugReport(_)
            | Command::Man(_)
            | Command::External(_) => false,
        }
    }
}

impl Command {
    /// Whether the trash's retention is applied after the command: every mutating command
    /// but the trash's own housekeeping and `gw doctor --fix` (which never purges it).
    pub fn sweeps_trash(&self) -> bool {
        !matches!(
            self,
            Command::UnlinkTrash(_)
                | Command::Doctor(_)
                | Command::Trash(TrashArgs {
                    command: Some(TrashCommand::Tidy(_) | TrashCommand::Empty(_))
                })
        )
    }

    /// Whether `--yes` approves the `.grove.toml` commands the command runs (`gw trust`).
    pub fn approves(&self) -> bool {
        use super::commands::workspace::WsCommand;
        match self {
            Command::Create(a) => a.yes,
            Command::Delete(a) => a.yes,
            Command::Ws(ws) => matches!(&ws.command, WsCommand::Delete(a) if a.yes),
            Command::Sync(a) => a.yes,
            Command::Reset(a) => a.yes,
            Command::AddRepo(a) => a.yes,
            Command::RemoveRepo(a) => a.yes,
            Command::Run(a) => a.yes,
            Command::Prune(p) => p.command.is_none() && p.yes,
            _ => false,
        }
    }

    /// Whether this command's `--yes` would approve a repository's commands: not
    /// `gw delete`'s, which confirms names read with `--stdin` and is refused beside names
    /// given.
    pub fn offers_yes(&self) -> bool {
        match self {
            Command::Create(_)
            | Command::Sync(_)
            | Command::Reset(_)
            | Command::AddRepo(_)
            | Command::RemoveRepo(_)
            | Command::Run(_) => true,
            Command::Prune(p) => p.command.is_none(),
            _ => false,
        }
    }
}

/// The Go grove's data output flags, kept for existing scripts.
#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// Data format: table, json, jsonl, tsv, name or path (bare shapes, as the Go grove printed)
    #[arg(short = 'o', long = "output", value_enum, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,
    /// Legacy bare JSON output (same as `-o json`; prefer `--format json`)
    #[arg(short = 'j', long = "json", conflicts_with = "output")]
    pub json: bool,
}

impl DataArgs {
    pub fn format(&self) -> Option<DataFormat> {
        if self.json {
            return Some(DataFormat::Json);
        }
        self.output.map(|o| match o {
            OutputFormat::Table => DataFormat::Table,
            OutputFormat::Json => DataFormat::Json,
            OutputFormat::Jsonl => DataFormat::Jsonl,
            OutputFormat::Tsv => DataFormat::Tsv,
            OutputFormat::Name => DataFormat::Name,
            OutputFormat::Path => DataFormat::Path,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
    Jsonl,
    Tsv,
    Name,
    Path,
}
