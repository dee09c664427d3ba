//! Commands started ahead of the moment they are needed, waiting for their input.
//!
//! A new process costs its start (fork, exec, the loader, git reading its configuration)
//! on the critical path, and on a busy machine a wait for a core as well: `gw delete`
//! under load spent 10 ms of its 50 on the one `git update-ref` that deletes the branch,
//! most of it before git read its first byte. [`start`] forks such a command early — it
//! then waits on its standard input, having changed nothing — and a later run of the same
//! command ([`take`], from `Cmd::run`) hands it its input and collects it. One that is
//! never used is killed before it reads anything. One whose grove dies reads the end of
//! its input, which closes with grove, and exits having changed nothing.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};
use std::sync::Mutex;

use super::fork::{self, Exec};

/// A started command, waiting for its input.
pub(super) struct Started {
    pid: libc::pid_t,
    stdin: File,
    stdout: File,
    stderr: File,
    /// Closed by a successful exec; the child's `errno` when the exec failed.
    exec_failed: File,
}

/// Keeps a command [`start`]ed until it is used or this is dropped; dropped unused, the
/// command is killed (it has read nothing) and waited for.
#[must_use = "dropping it ends the started command"]
pub struct Warm(u64);

impl Drop for Warm {
    fn drop(&mut self) {
        let taken = {
            let mut all = started();
            all.iter()
                .position(|(id, _, _)| *id == self.0)
                .map(|i| all.swap_remove(i).2)
        };
        if let Some(s) = taken {
            s.abandon();
        }
    }
}

fn started() -> std::sync::MutexGuard<'static, Vec<(u64, String, Started)>> {
    static STARTED: Mutex<Vec<(u64, String, Started)>> = Mutex::new(Vec::new());
    STARTED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Forks `cmd` (see [`fork::fork_exec`]) with its standard input, output and error on
/// pipes and `keep` open across the exec, and keeps it under `key` for [`take`]. Returns
/// once forked.
pub(super) fn start(key: String, cmd: &Command, keep: &[RawFd]) -> io::Result<Warm> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let exec = Exec::of(cmd)?;
    let (in_read, in_write) = pipe()?;
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let (failed_read, failed_write) = pipe()?;
    let pid = fork::fork_exec(
        &exec,
        [
            in_read.as_raw_fd(),
            out_write.as_raw_fd(),
            err_write.as_raw_fd(),
        ],
        keep,
        Some(failed_write.as_raw_fd()),
    )?;
    // The child has its own copies of its ends: these close here, so that its output
    // and the exec's outcome end when the child is done with them.
    drop((in_read, out_write, err_write, failed_write));
    exec.forget();
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    started().push((
        id,
        key,
        Started {
            pid,
            stdin: in_write.into(),
            stdout: out_read.into(),
            stderr: err_read.into(),
            exec_failed: failed_read.into(),
        },
    ));
    Ok(Warm(id))
}

/// The command started under `key`, if one is waiting (it is no longer kept).
pub(super) fn take(key: &str) -> Option<Started> {
    let mut all = started();
    let i = all.iter().position(|(_, k, _)| k == key)?;
    Some(all.swap_remove(i).2)
}

/// Whether a command started under `key` is waiting.
#[cfg(test)]
pub(super) fn waiting(key: &str) -> bool {
    started().iter().any(|(_, k, _)| k == key)
}

/// What a finished command left: its exit status, standard output and error.
pub(super) type Finished = (ExitStatus, Vec<u8>, Vec<u8>);

impl Started {
    /// Gives the command `input` (then the end of it), reads its output to the end and
    /// waits for it. `None` when its exec failed (it is waited for, having done nothing):
    /// the run starts the command as a plain run does, which `execvp` may still start (a
    /// script without `#!` runs under `/bin/sh`; a program it cannot run is passed over for
    /// the next in `PATH`), or fails with the error a plain run gets.
    pub(super) fn finish(self, input: &[u8]) -> io::Result<Option<Finished>> {
        let Started {
            pid,
            mut stdin,
            stdout,
            stderr,
            mut exec_failed,
        } = self;
        let mut errno = Vec::new();
        exec_failed.read_to_end(&mut errno)?;
        if errno.len() == 4 {
            let _ = wait(pid);
            return Ok(None);
        }
        // A child that exits without reading it all fails on its own; its status says.
        let _ = stdin.write_all(input);
        drop(stdin);
        // Waited for even when its output could not be read: no child is left a zombie.
        let read = read_both(stdout, stderr);
        let status = wait(pid)?;
        let (out, err) = read?;
        Ok(Some((status, out, err)))
    }

    /// The command is not needed: it is killed before it reads anything (the end of its
    /// input is an empty transaction to git, which runs the `reference-transaction` hook
    /// for it), and waited for.
    fn abandon(self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        drop(self.stdin);
        let _ = wait(self.pid);
    }
}

/// A pipe whose ends close on exec (the child's are given to it as its stdio).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    #[cfg(not(target_vendor = "apple"))]
    return Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?);
    // No `pipe2` there: a process forked by another thread in between may get a copy,
    // which its exec then closes.
    #[cfg(target_vendor = "apple")]
    {
        let (r, w) = rustix::pipe::pipe()?;
        for end in [&r, &w] {
            rustix::io::fcntl_setfd(end, rustix::io::FdFlags::CLOEXEC)?;
        }
        Ok((r, w))
    }
}

fn wait(pid: libc::pid_t) -> io::Result<ExitStatus> {
    let mut status = 0;
    loop {
        // SAFETY: `pid` is a child of this process that nothing else waits for.
        #[allow(unsafe_code)]
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(ExitStatus::from_raw(status));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Reads `out` and `err` to their ends together, so that neither fills its pipe while
/// the other is read.
fn read_both(out: File, err: File) -> io::Result<(Vec<u8>, Vec<u8>)> {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut streams = [(out, Vec::new(), true), (err, Vec::new(), true)];
    let mut chunk = [0u8; 8192];
    while streams.iter().any(|(_, _, open)| *open) {
        let ready: Vec<bool> = {
            let mut fds: Vec<PollFd<'_>> = streams
                .iter()
                .filter(|(_, _, open)| *open)
                .map(|(f, _, _)| PollFd::new(f, PollFlags::IN | PollFlags::HUP))
                .collect();
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            fds.iter().map(|f| !f.revents().is_empty()).collect()
        };
        let open: Vec<usize> = (0..2).filter(|i| streams[*i].2).collect();
        for (i, r) in open.into_iter().zip(ready) {
            if !r {
                continue;
            }
            let (file, buf, open) = &mut streams[i];
            match file.read(&mut chunk) {
                Ok(0) => *open = false,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    let [(_, out, _), (_, err, _)] = streams;
    Ok((out, err))
}

#[cfg(test)]
mod tests {
    use super::super::{Cmd, Status};

    /// A program the exec cannot start as it is — a script without `#!`, which `execvp`
    /// (and so a plain run) hands to `/bin/sh` — still runs when it was prestarted: the
    /// run starts it as a plain run would, the started one having done nothing.
    #[test]
    fn a_prestarted_command_whose_exec_fails_runs_as_a_plain_run_would() {
        let dir = tempfile::tempdir().unwrap();
        let tool = super::super::fork::test_tool(dir.path(), "read x; echo \"ran $x\"\n");
        let bin = tool.parent().unwrap().to_path_buf();
        let path =
            std::env::join_paths([bin.as_path(), "/usr/bin".as_ref(), "/bin".as_ref()]).unwrap();
        let cmd = || {
            let mut c = Cmd::new("tool", dir.path());
            c.finish = true;
            c.env("PATH", &path);
            c
        };
        let plain = cmd().input(b"plain\n".to_vec()).run().unwrap();
        assert_eq!(plain.stdout, "ran plain\n", "{plain:?}");
        let warm = cmd().prestart().unwrap();
        let out = cmd().input(b"warm\n".to_vec()).run().unwrap();
        assert_eq!(out.status, Status::Exited(0), "{out:?}");
        assert_eq!(out.stdout, "ran warm\n");
        drop(warm);
    }
}
