//! `gw run`: each repository's dev processes, side by side.

use std::time::Duration;

use clap::Args;

use crate::cli::args::Format;
use crate::cli::{CmdResult, Out, Ui};
use crate::duration;
use crate::ops::Ctx;
use crate::ops::env::{self, EnvFormat, EnvOptions};
use crate::ops::run::{self, RunOptions};
use crate::proc;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workspace name (default: the one you are in)
    pub name: Option<String>,
    /// Repositories to run, comma-separated (default: every repository whose .grove.toml defines `run`)
    #[arg(short, long, value_delimiter = ',')]
    pub repos: Vec<String>,
    /// Stop every process after this long (30s, 5m, 1h30m), e.g. for a bounded smoke check
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,
    /// Approve the repositories' `.grove.toml` commands this runs without asking (see `gw trust`)
    #[arg(short, long)]
    pub yes: bool,
    /// Run this command in every repository (or those of -r) instead of their `run`: one
    /// argument is a shell command line (`gw run -- 'echo $PORT'`), several a program and
    /// its arguments
    // Its index is explicit: help.rs re-adds NAME (with completion candidates) after it.
    #[arg(last = true, index = 2, value_name = "CMD")]
    pub command: Vec<String>,
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    match duration::parse_go(s)? {
        d if d.is_zero() => Err("the timeout must be longer than zero".into()),
        d => Ok(d),
    }
}

pub fn run(ctx: &Ctx<'_>, a: RunArgs, ui: Ui) -> CmdResult {
    let name = super::workspace::name_or_pick(ctx, a.name, ui)?;
    let opts = RunOptions {
        name,
        repos: a.repos,
        timeout: a.timeout,
        signals: true,
        grace: proc::STOP_GRACE,
        command: run::command_line(&a.command),
    };
    Ok(Out::new(run::run(ctx, &opts)?))
}

#[derive(Debug, Args)]
pub struct EnvArgs {
    /// Workspace name (default: the one you are in)
    pub name: Option<String>,
    /// The repository whose GROVE_REPO, GROVE_WORKTREE and PORT to include (default: the
    /// one you are in, if any)
    #[arg(short, long, value_name = "REPO")]
    pub repo: Option<String>,
}

/// `gw env`: never a picker (its output is read by `eval` and direnv); `--format dotenv`
/// for `.env` lines.
pub fn env(ctx: &Ctx<'_>, a: EnvArgs, format: Option<Format>) -> CmdResult {
    let opts = EnvOptions {
        name: a.name,
        repo: a.repo,
        format: match format {
            Some(Format::Dotenv) => EnvFormat::Dotenv,
            _ => EnvFormat::Shell,
        },
    };
    Ok(Out::new(env::env(ctx, &opts)?))
}
