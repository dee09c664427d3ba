//! Starting a process without waiting to see it start.
//!
//! `std::process::Command::spawn` returns only once the child has called `exec` (it
//! waits on a pipe, or the child borrows the parent's memory until then). On a busy
//! machine a new process waits for a core before it gets that far: `gw delete` under load
//! spent 6–23 ms (strace) waiting for its detached `gw trash tidy` to exec, and 5 ms for
//! a `git update-ref` it starts ahead of need. Here the parent forks and goes on; the
//! child execs when it runs. The child does only what is safe between `fork` and `exec`
//! in a process with threads: system calls on values made before the fork.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

/// What the child execs, made before the fork (the child may not allocate): the program
/// found in the child's `PATH` here, its arguments, environment and directory.
pub(super) struct Exec {
    prog: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: Option<CString>,
}

impl Exec {
    /// `cmd`'s program, arguments, directory and environment changes. A program named
    /// without a `/` is looked up in the `PATH` the child gets; `NotFound` when it is in
    /// none of its directories.
    pub(super) fn of(cmd: &Command) -> io::Result<Exec> {
        let c = |s: &OsStr| {
            CString::new(s.as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
        };
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        for (k, v) in cmd.get_envs() {
            env.retain(|(key, _)| key.as_os_str() != k);
            if let Some(v) = v {
                env.push((k.to_os_string(), v.to_os_string()));
            }
        }
        let program = cmd.get_program();
        let prog = if program.as_bytes().contains(&b'/') {
            c(program)?
        } else {
            let path = env
                .iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.clone());
            c(find_in_path(program, path.as_deref())?.as_os_str())?
        };
        let argv = std::iter::once(c(program))
            .chain(cmd.get_args().map(c))
            .collect::<io::Result<_>>()?;
        let envp = env
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
        Ok(Exec {
            prog,
            argv,
            envp,
            cwd,
        })
    }
}

impl Exec {
    /// Leaves what was made for the child allocated. Until it execs, the child shares the
    /// parent's memory copy-on-write: freeing it (hundreds of strings, the environment's)
    /// writes to those pages, and each first write to one is a page fault that copies it.
    pub(super) fn forget(self) {
        std::mem::forget(self);
    }
}

/// The executable file `program` in the first directory of `path` (a `PATH` value) that
/// has one, as `execvp` would find it; an empty entry is the current directory.
fn find_in_path(program: &OsStr, path: Option<&OsStr>) -> io::Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = path.unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    std::env::split_paths(path)
        .map(|dir| {
            if dir.as_os_str().is_empty() {
                Path::new(".").join(program)
            } else {
                dir.join(program)
            }
        })
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("`{}` is in no directory of PATH", program.to_string_lossy()),
            )
        })
}

/// Forks; the child, in a process group of its own, takes `stdio` as its descriptors 0, 1
/// and 2, keeps `keep` open across the exec, unblocks signals, sets SIGPIPE to its default
/// and execs `exec`. When the exec fails it writes its `errno` (4 bytes, native order) to
/// `exec_failed`, when given, and exits 127. Returns the child's pid once forked.
///
/// Every descriptor the parent holds must be close-on-exec but `stdio` and `keep`, which
/// the child gets as they are.
#[allow(unsafe_code)]
pub(super) fn fork_exec(
    exec: &Exec,
    stdio: [RawFd; 3],
    keep: &[RawFd],
    exec_failed: Option<RawFd>,
) -> io::Result<libc::pid_t> {
    let ptrs = |v: &[CString]| {
        v.iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect::<Vec<*const libc::c_char>>()
    };
    let (argv, envp) = (ptrs(&exec.argv), ptrs(&exec.envp));
    // SAFETY: between fork and exec the child calls only async-signal-safe functions
    // (setpgid, dup2, fcntl, chdir, sigprocmask, signal, execve, write, _exit) on values
    // made above, which the fork copied; it allocates nothing, takes no lock and never
    // returns.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                libc::setpgid(0, 0);
                for (fd, from) in stdio.iter().enumerate() {
                    // dup2 leaves the copy without close-on-exec; a descriptor already in
                    // its place only needs the flag cleared.
                    if *from == fd as RawFd {
                        libc::fcntl(fd as RawFd, libc::F_SETFD, 0);
                    } else {
                        libc::dup2(*from, fd as RawFd);
                    }
                }
                for &fd in keep {
                    libc::fcntl(fd, libc::F_SETFD, 0);
                }
                let failed = |code: i32| -> ! {
                    if let Some(fd) = exec_failed {
                        let bytes = code.to_ne_bytes();
                        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
                    }
                    libc::_exit(127)
                };
                if let Some(dir) = &exec.cwd
                    && libc::chdir(dir.as_ptr()) != 0
                {
                    failed(io::Error::last_os_error().raw_os_error().unwrap_or(0));
                }
                libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::execve(exec.prog.as_ptr(), argv.as_ptr(), envp.as_ptr());
                failed(io::Error::last_os_error().raw_os_error().unwrap_or(0))
            }
            pid => Ok(pid),
        }
    }
}

/// An executable file `bin/tool` under `dir` holding `text` (a program for a test's `PATH`).
#[cfg(test)]
#[allow(clippy::disallowed_methods)]
pub(super) fn test_tool(dir: &Path, text: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tool = bin.join("tool");
    std::fs::write(&tool, text).unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    tool
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn a_program_is_found_in_the_path_the_child_gets() {
        let dir = tempfile::tempdir().unwrap();
        let tool = test_tool(dir.path(), "#!/bin/sh\n");
        let bin = dir.path().join("bin");
        std::fs::write(bin.join("plain"), "not executable").unwrap();
        let path = std::env::join_paths([dir.path().join("missing"), bin.clone()]).unwrap();
        assert_eq!(find_in_path(OsStr::new("tool"), Some(&path)).unwrap(), tool);
        let missing = find_in_path(OsStr::new("plain"), Some(&path)).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        #[allow(clippy::disallowed_methods)]
        let mut cmd = Command::new("tool");
        cmd.env("PATH", &path).current_dir(dir.path());
        let exec = Exec::of(&cmd).unwrap();
        assert_eq!(exec.prog.as_bytes(), tool.as_os_str().as_bytes());
        assert_eq!(exec.argv[0].as_bytes(), b"tool");
    }
}
