//! The command-line grammar.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::output::DataFormat;

/// grove: one directory per feature, with a git worktree of each repository it spans
#[derive(Debug, Parser)]
#[command(name = "gw", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    /// Output format: `text` for people, `json` for programs (one JSON envelope on stdout)
    #[arg(long, global = true, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// Skip global lifecycle hooks (post_create, pre_delete, on_close)
    #[arg(short = 'n', long, global = true)]
    pub no_hooks: bool,

    /// Show progress on stderr even when it is not a terminal
    #[arg(short = 'v', long, global = true)]
    pub verbose: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
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
    /// Create a workspace: a worktree of each repository, all on one branch
    Create(CreateArgs),
    /// List workspaces
    #[command(visible_alias = "ls")]
    List(ListArgs),
    /// Manage workspaces (list, show, delete)
    Ws(WsArgs),
    /// Show the live state of each repository in a workspace
    Status(StatusArgs),
    /// Print a workspace's path (the shell integration cds into it)
    Go(GoArgs),
    /// Print the shell integration that lets `gw go` and `gw create` change directory
    ShellInit(ShellInitArgs),
    /// Delete workspaces, their worktrees and the branches grove created
    #[command(visible_alias = "rm")]
    Delete(DeleteArgs),
    /// Manage presets: named lists of repositories
    Preset(PresetArgs),
    /// Print a shell completion script
    Completions(CompletionsArgs),
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

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Directories that hold git repositories
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AddDirArgs {
    /// A directory that holds git repositories
    pub path: PathBuf,
}

#[derive(Debug, Args)]
pub struct RemoveDirArgs {
    /// The directory to stop searching (picked interactively when omitted)
    pub path: Option<PathBuf>,
}

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
    /// Use the repositories of a preset
    #[arg(short, long, conflicts_with = "all")]
    pub preset: Option<String>,
    /// Use every repository grove can find
    #[arg(long)]
    pub all: bool,
    /// Check out origin/<branch> where it exists instead of starting a new branch
    #[arg(long)]
    pub track: bool,
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
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Summarise each workspace's worktrees (clean, modified, error)
    #[arg(short, long)]
    pub status: bool,
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
pub struct ShellInitArgs {
    /// bash, zsh, fish or nu (default: from $SHELL)
    #[arg(long)]
    pub shell: Option<String>,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Workspaces to delete (picked interactively when omitted)
    pub names: Vec<String>,
    /// Read workspace names from stdin, one per line (needs --yes)
    #[arg(long, conflicts_with = "names")]
    pub stdin: bool,
    /// Confirm deleting the workspaces read from stdin
    #[arg(short, long)]
    pub yes: bool,
    /// Discard uncommitted changes, and delete branches holding commits found nowhere else
    #[arg(short, long)]
    pub force: bool,
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
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish, powershell or nushell
    pub shell: String,
}
