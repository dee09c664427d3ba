//! Starting a process grove neither waits for nor waits to see started.
//!
//! `std::process::Command::spawn` returns only once the child has called `exec` (it
//! waits on a pipe, or the child borrows the parent's memory until then). On a busy
//! machine a new process waits for a core before it gets that far: `gw delete` under load
//! spent 6–23 ms (strace) waiting for its detached `gw trash tidy` to exec. Here the parent
//! forks and goes on; the child execs when it runs. The child does only what is safe
//! between `fork` and `exec` in a process with threads: system calls on values made
//! before the fork.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::process::Command;

/// Forks and execs `cmd` (its program, arguments, directory and environment changes) in a
/// process group of its own, with stdin, stdout and stderr on `/dev/null`, signals
/// unblocked and SIGPIPE at its default, and returns once forked. The program must be
/// named by a path (it is not looked up in `PATH`: that would allocate in the child).
/// The child is never waited for: grove's exit hands it to init.
#[allow(unsafe_code)]
pub fn spawn(cmd: &Command) -> io::Result<()> {
    let program = cmd.get_program();
    if !program.as_bytes().contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a detached program is named by its path",
        ));
    }
    let c = |s: &OsStr| {
        CString::new(s.as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    };
    let prog = c(program)?;
    let argv: Vec<CString> = std::iter::once(Ok(prog.clone()))
        .chain(cmd.get_args().map(c))
        .collect::<io::Result<_>>()?;
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    for (k, v) in cmd.get_envs() {
        env.retain(|(key, _)| key.as_os_str() != k);
        if let Some(v) = v {
            env.push((k.to_os_string(), v.to_os_string()));
        }
    }
    let envp: Vec<CString> = env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.clone();
            kv.push("=");
            kv.push(v);
            c(&kv)
        })
        .collect::<io::Result<_>>()?;
    let cwd = cmd
        .get_current_dir()
        .map(|d| c(d.as_os_str()))
        .transpose()?;
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    let null = std::os::fd::AsRawFd::as_raw_fd(&null);
    let ptrs = |v: &[CString]| {
        v.iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect::<Vec<*const libc::c_char>>()
    };
    let (argv_p, envp_p) = (ptrs(&argv), ptrs(&envp));
    // SAFETY: between fork and exec the child calls only async-signal-safe functions
    // (setpgid, dup2, chdir, sigprocmask, signal, execve, _exit) on values made above,
    // which the fork copied; it allocates nothing, takes no lock and never returns.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                libc::setpgid(0, 0);
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
                if let Some(dir) = &cwd
                    && libc::chdir(dir.as_ptr()) != 0
                {
                    libc::_exit(127);
                }
                libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::execve(prog.as_ptr(), argv_p.as_ptr(), envp_p.as_ptr());
                libc::_exit(127)
            }
            _ => Ok(()),
        }
    }
}
