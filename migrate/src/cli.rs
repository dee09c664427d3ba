//! The command line: `gw-migrate [--apply] [--grove-dir DIR] [--include-tracked] [ROOT…]`
//! and `gw-migrate restore [ID]`, with `--format json` giving grove's envelope.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use grove::env::Env;
use grove::error::{Error, Result};
use grove::home::GroveHome;
use grove::legacy::cleanup::{self, Cancel, Options};
use grove::output::{self, Printer, Render};

use crate::report::{MigrateReport, RestoreView};

/// gw-migrate's help, laid out as gw's: one description (the same for `-h` and `--help`),
/// the command's options, the global options under their own heading, and examples.
const ABOUT: &str = "Find and remove what the Go grove's MCP era left behind: grove's entry in \
`.mcp.json` files and the old announcements database. Reports only, unless --apply is given.

Scans the tracked workspaces (roots and every worktree), the workspace directory (orphaned \
workspaces included) and any ROOT given. Only an entry named `grove` that runs `gw mcp-serve` \
is removed; everything else in a file stays byte for byte. What is changed is backed up under \
<grove dir>/migrate-backups/, and `gw-migrate restore` puts it back.";

const EXAMPLES: &[(&str, &str)] = &[
    ("gw-migrate", "What would change (nothing is changed)"),
    ("gw-migrate --apply", "Change it, keeping a backup"),
    (
        "gw-migrate restore",
        "Put back what the last --apply changed",
    ),
    (
        "gw-migrate ~/src --format json",
        "Also scan ~/src; one JSON envelope on stdout",
    ),
];

#[derive(Debug, Parser)]
#[command(name = "gw-migrate", version = grove::VERSION, about = ABOUT, long_about = None)]
struct Cli {
    /// Output format: `text` for people, `json` for programs (one JSON envelope on stdout)
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "FORMAT",
        help_heading = "Global options"
    )]
    format: Option<Format>,

    /// The grove directory (default: $GW_HOME, else ~/.grove)
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        help_heading = "Global options"
    )]
    grove_dir: Option<PathBuf>,

    #[command(flatten)]
    scan: ScanArgs,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Debug, Args)]
struct ScanArgs {
    /// Make the changes (default: only report what would change)
    #[arg(long)]
    apply: bool,
    /// Only report what would change, as without --apply (the default)
    #[arg(long, conflicts_with = "apply")]
    dry_run: bool,
    /// Also edit `.mcp.json` files that git tracks (never deleted, only edited)
    #[arg(long)]
    include_tracked: bool,
    /// More directories to scan, two levels deep
    #[arg(value_name = "ROOT")]
    roots: Vec<PathBuf>,
}

impl ScanArgs {
    /// The first scan argument given, if any (none of them goes with `restore`).
    fn given(&self) -> Option<String> {
        if self.apply {
            Some("--apply".into())
        } else if self.dry_run {
            Some("--dry-run".into())
        } else if self.include_tracked {
            Some("--include-tracked".into())
        } else {
            self.roots.first().map(|r| r.to_string_lossy().into_owned())
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Put back what an applied run changed (default: the newest run not yet restored)
    Restore {
        /// The backup id (a directory name under <grove dir>/migrate-backups)
        id: Option<String>,
        /// Change nothing: show what would be put back and what left alone
        #[arg(long)]
        dry_run: bool,
        /// (Not for restore: its dry run is shown, not saved as a plan)
        #[arg(long, value_name = "FILE", hide = true)]
        out: Option<PathBuf>,
    },
}

/// Runs `gw-migrate` with `args` (including the program name); returns the exit code.
pub fn run(args: Vec<OsString>, mut env: Env) -> u8 {
    let mut p = match grove::cli::start(&args, &env, "gw-migrate") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let cli = match command(p.help_width())
        .try_get_matches_from(&args)
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(c) => c,
        Err(e) => return clap_error(&mut p, e),
    };
    let _ = cli.format;
    if let Some(dir) = &cli.grove_dir {
        env.grove_home = env.resolve_path(dir);
    }
    match execute(&env, cli) {
        Ok(report) => output::emit(&mut p, report.as_ref(), None),
        Err(e) => output::emit_error(&mut p, &e),
    }
}

fn execute(env: &Env, cli: Cli) -> Result<Box<dyn Render>> {
    let home = GroveHome::new(&env.grove_home);
    let mut base_argv = Vec::new();
    if let Some(dir) = &cli.grove_dir {
        base_argv.push("--grove-dir".to_string());
        base_argv.push(env.resolve_path(dir).to_string_lossy().into_owned());
    }
    let changes =
        cli.scan.apply || matches!(cli.command, Some(Command::Restore { dry_run: false, .. }));
    // SIGINT and SIGTERM finish the file at hand, complete the manifest and stop.
    let cancel = if changes {
        Cancel::on_signals()
            .map_err(|e| Error::internal(format!("cannot listen for SIGINT and SIGTERM: {e}")))?
    } else {
        Cancel::never()
    };
    if let Some(Command::Restore { id, dry_run, out }) = cli.command {
        if let Some(flag) = cli.scan.given() {
            return Err(
                Error::usage(format!("`{flag}` does not go with `restore`"))
                    .with_fix("Run `gw-migrate restore [ID]` alone (`gw-migrate restore [ID] --dry-run` to see what it would do); to scan a directory named `restore`, write it as `./restore`"),
            );
        }
        if out.is_some() {
            return Err(Error::usage(
                "`gw-migrate restore` makes no plan for --out to save: `gw plan` and `gw apply` cover grove's workspace commands",
            )
            .with_fix("Drop --out: `gw-migrate restore [ID] --dry-run` shows what would change, and the same command without --dry-run makes the change"));
        }
        let report = cleanup::restore(&home, env, id.as_deref(), &cancel, dry_run)?;
        return Ok(Box::new(RestoreView { report, base_argv }));
    }

    let mut roots = Vec::new();
    for r in &cli.scan.roots {
        let abs = env.resolve_path(r);
        if !abs.exists() {
            return Err(Error::usage(format!("`{}` does not exist", abs.display()))
                .with_fix("Pass directories that exist"));
        }
        roots.push(abs);
    }
    let opts = Options {
        apply: cli.scan.apply,
        include_tracked: cli.scan.include_tracked,
        roots: roots.clone(),
    };
    let done = cleanup::migrate(&home, env, &opts, &cancel)?;
    let mut argv = base_argv;
    if cli.scan.include_tracked {
        argv.push("--include-tracked".into());
    }
    let roots_argv: Vec<String> = roots
        .iter()
        .map(|r| r.to_string_lossy().into_owned())
        .collect();
    Ok(MigrateReport {
        applied: cli.scan.apply,
        grove_dir: home.root().to_path_buf(),
        plan: done.plan,
        backup: done.backup,
        warnings: done.warnings,
        stopped: done.stopped,
        argv,
        roots_argv,
    }
    .into_render())
}

/// The grammar, its help laid out for `width` columns as gw's is.
fn command(width: usize) -> clap::Command {
    let width = width.clamp(40, grove::cli::MAX_HELP_WIDTH);
    Cli::command()
        .term_width(width)
        .after_help(grove::cli::examples_section(EXAMPLES, width))
}

fn clap_error(p: &mut Printer, e: clap::Error) -> u8 {
    grove::cli::emit_clap_error(p, &e, "gw-migrate")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn restore_and_roots_parse() {
        let c = Cli::try_parse_from(["gw-migrate", "restore", "20260101T000000Z"]).unwrap();
        assert!(matches!(
            c.command,
            Some(Command::Restore { id: Some(_), .. })
        ));
        let c = Cli::try_parse_from(["gw-migrate", "--apply", "/a", "/b"]).unwrap();
        assert!(c.scan.apply && c.command.is_none());
        assert_eq!(c.scan.roots.len(), 2);
        // `restore` is the subcommand after the global options too; a scan flag with it is
        // refused when it runs, and `./restore` is a directory.
        let c = Cli::try_parse_from(["gw-migrate", "--grove-dir", "/g", "restore"]).unwrap();
        assert!(matches!(c.command, Some(Command::Restore { id: None, .. })));
        let c = Cli::try_parse_from(["gw-migrate", "--format", "json", "restore", "X"]).unwrap();
        assert!(matches!(
            c.command,
            Some(Command::Restore { id: Some(_), .. })
        ));
        let c = Cli::try_parse_from(["gw-migrate", "--apply", "restore"]).unwrap();
        assert_eq!(c.scan.given().as_deref(), Some("--apply"));
        let c = Cli::try_parse_from(["gw-migrate", "--apply", "./restore"]).unwrap();
        assert!(c.command.is_none());
        assert_eq!(c.scan.roots, [PathBuf::from("./restore")]);
    }
}
