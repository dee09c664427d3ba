//! Starting a process grove neither waits for nor waits to see started: it is forked and
//! left to exec on its own ([`fork::fork_exec`]).

use std::io;
use std::os::fd::AsRawFd;
use std::process::Command;

use super::fork::{self, Exec};

/// Forks and execs `cmd` (its program, arguments, directory and environment changes) in a
/// process group of its own, with stdin, stdout and stderr on `/dev/null`, signals
/// unblocked and SIGPIPE at its default, and returns once forked. The child is never
/// waited for: grove's exit hands it to init.
pub fn spawn(cmd: &Command) -> io::Result<()> {
    let exec = Exec::of(cmd)?;
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    let null = null.as_raw_fd();
    fork::fork_exec(&exec, [null; 3], &[], None)?;
    exec.forget();
    Ok(())
}
