//! `gw-migrate`: finds and removes what the Go grove's MCP era left behind — grove's entry
//! in `.mcp.json` files and the announcements database — with backups and a restore.
//! Everything it decides comes from `grove::legacy`, the code `gw doctor` uses too.

mod cli;
mod report;

use std::process::ExitCode;

fn main() -> ExitCode {
    let env = grove::env::Env::from_process();
    ExitCode::from(cli::run(std::env::args_os().collect(), env))
}
