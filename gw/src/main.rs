//! The `gw` binary: everything happens in [`grove::cli::run`].

use std::process::ExitCode;

fn main() -> ExitCode {
    let env = grove::env::Env::from_process();
    ExitCode::from(grove::cli::run(std::env::args_os().collect(), env))
}
