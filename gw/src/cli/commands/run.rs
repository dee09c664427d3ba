//! `gw run`: each repository's dev processes, side by side.

use std::time::Duration;

use clap::Args;

use crate::cli::{CmdResult, Out, Ui};
use crate::duration;
use crate::ops::Ctx;
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
    };
    Ok(Out::new(run::run(ctx, &opts)?))
}
