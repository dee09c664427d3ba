//! The one place grove starts processes: git, hooks, plugins and `gw run`'s dev processes.
//!
//! Every [`Cmd`] has an explicit working directory. Output is captured (or handed line by
//! line to a callback), never inherited, so nothing a child prints can reach grove's
//! stdout behind the output layer's back.
//!
//! Every child grove waits for is the leader of a process group of its own, so a Ctrl-C
//! at the terminal (or a signal to grove's group) reaches grove alone, which decides what
//! happens to its children ([`signals`]). On Linux each but git also gets SIGTERM when
//! grove dies, however it dies; git finishes what it started (see [`Cmd::git`]). While an
//! operation runs, every child keeps its journal's lock open ([`inherit_lock`]): the lock,
//! and so the operation, stays held while anything the operation started is still at
//! work, even after grove itself was killed.
//!
//! Several long-running children (`gw run`) share one [`Stop`]: SIGINT, SIGTERM or a
//! deadline turns into a stop request, and each child supervised with it
//! ([`Cmd::supervise`]) has its whole process group terminated, then killed after a grace
//! period.

mod detach;
mod drive;
mod fork;
pub mod signals;
mod stop;
mod warm;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use drive::group_alive;
pub use stop::{STOP_GRACE, SignalGuard, Stop, StopReason, signal_name};
pub use warm::Warm;

use drive::Watch;

/// How many trailing output lines are kept for error messages.
const TAIL_LINES: usize = 20;
/// A process to run.
#[derive(Debug, Clone)]
pub struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    cwd: PathBuf,
    envs: Vec<(OsString, OsString)>,
    /// Inherited variables the child does not get.
    removed: Vec<OsString>,
    timeout: Option<Duration>,
    /// Output lines also end at a lone carriage return (see [`Cmd::progress_lines`]).
    split_cr: bool,
    /// Once started, let it finish even when grove dies or is told to stop: git. A git
    /// command ended half way by a signal leaves its lock files (`config.lock`,
    /// `packed-refs.new`, …: 2 of 300 `git branch -D` given SIGTERM did), which block the
    /// repository until someone removes them; one that finishes leaves nothing.
    finish: bool,
    /// What the child reads on its standard input (a few KiB at most: it is written whole
    /// before the output is read); `None`: an empty one.
    input: Option<Vec<u8>>,
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Exited(i32),
    Signaled(i32),
    TimedOut,
    /// Ended by a [`Stop`] request (or not started because one came first).
    Stopped,
}

impl Status {
    fn from_exit(s: ExitStatus) -> Status {
        match (s.code(), s.signal()) {
            (Some(c), _) => Status::Exited(c),
            (None, Some(sig)) => Status::Signaled(sig),
            (None, None) => Status::Exited(-1),
        }
    }

    pub fn success(self) -> bool {
        self == Status::Exited(0)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Exited(c) => write!(f, "exit status {c}"),
            Status::Signaled(s) => write!(f, "killed by signal {s}"),
            Status::TimedOut => write!(f, "timed out"),
            Status::Stopped => write!(f, "stopped"),
        }
    }
}

/// What a finished process printed and how it ended.
#[derive(Debug, Clone)]
pub struct Output {
    pub status: Status,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// The last lines of stderr (or of stdout when stderr is empty), for error messages.
    pub fn tail(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        tail_lines(text, TAIL_LINES)
    }
}

/// Which stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot run `{program}` in `{}`: {source}", cwd.display())]
    Spawn {
        program: String,
        cwd: PathBuf,
        source: io::Error,
    },
    #[error("`{command}` failed ({status}){}", fmt_tail(.stderr))]
    Failed {
        command: String,
        status: Status,
        stderr: String,
    },
}

impl Error {
    /// `command` failed with `status`, saying `stderr`. The error is shown, logged and
    /// reported: a credential in the command line (a clone URL) or in the program's output
    /// never goes with it (`redact`).
    pub fn failed(command: &str, status: Status, stderr: &str) -> Error {
        Error::Failed {
            command: crate::redact::secrets(command).into_owned(),
            status,
            stderr: crate::redact::secrets(stderr).into_owned(),
        }
    }
}

/// The one line of a failed command's stderr that goes into its (one-line) error
/// message: the first `fatal:` or `error:` line, where git states the reason, else the
/// last non-empty line. The whole stderr stays in [`Error::Failed`].
fn fmt_tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let reason = lines
        .iter()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or(lines.last());
    match reason {
        Some(l) => format!(": {l}"),
        None => String::new(),
    }
}

impl Cmd {
    pub fn new(program: impl AsRef<OsStr>, cwd: &Path) -> Cmd {
        Cmd {
            program: program.as_ref().to_os_string(),
            args: Vec::new(),
            cwd: cwd.to_path_buf(),
            envs: Vec::new(),
            removed: Vec::new(),
            timeout: None,
            split_cr: false,
            finish: false,
            input: None,
        }
    }

    /// Hands [`Cmd::stream`] each carriage-return-terminated piece of output as a line of
    /// its own, as it arrives: git's `--progress` redraws its counters that way.
    pub fn progress_lines(&mut self) -> &mut Cmd {
        self.split_cr = true;
        self
    }

    /// Gives the child `bytes` to read on its standard input. They are written whole when
    /// it starts, so they must fit in a pipe's buffer (64 KiB on Linux; 16 KiB allowed).
    pub fn input(&mut self, bytes: Vec<u8>) -> &mut Cmd {
        debug_assert!(bytes.len() <= 16 * 1024, "input larger than a pipe holds");
        self.input = Some(bytes);
        self
    }

    /// `git` with prompts disabled, so it fails instead of waiting for a password.
    pub fn git(cwd: &Path) -> Cmd {
        let mut cmd = Cmd::new("git", cwd);
        cmd.finish = true;
        cmd.env("GIT_TERMINAL_PROMPT", "0");
        if let Some(ssh) = defaults().ssh_command.as_deref() {
            cmd.env("GIT_SSH_COMMAND", ssh);
        }
        cmd
    }

    /// A shell command line, run with `sh -c`.
    pub fn shell(script: &str, cwd: &Path) -> Cmd {
        let mut cmd = Cmd::new("sh", cwd);
        cmd.arg("-c").arg(script);
        cmd
    }

    pub fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut Cmd {
        self.args.push(a.as_ref().to_os_string());
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    pub fn env(&mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> &mut Cmd {
        self.envs
            .push((k.as_ref().to_os_string(), v.as_ref().to_os_string()));
        self
    }

    /// Leaves the inherited variable `k` out of the child's environment (a later
    /// [`Cmd::env`] sets it again).
    pub fn env_remove(&mut self, k: impl AsRef<OsStr>) -> &mut Cmd {
        self.removed.push(k.as_ref().to_os_string());
        self
    }

    pub fn envs<K: AsRef<OsStr>, V: AsRef<OsStr>>(
        &mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> &mut Cmd {
        for (k, v) in vars {
            self.env(k, v);
        }
        self
    }

    /// Kills the process (and its process group) when it runs longer than `d`.
    pub fn timeout(&mut self, d: Option<Duration>) -> &mut Cmd {
        self.timeout = d;
        self
    }

    /// The command line, for messages and the log (`git worktree add …`): each argument's
    /// secrets hidden (`redact`) before it is quoted, so that quoting cannot split one.
    pub fn display(&self) -> String {
        let mut s = shell_quote(&self.program.to_string_lossy());
        for a in &self.args {
            s.push(' ');
            s.push_str(&shell_quote(&crate::redact::secrets(&a.to_string_lossy())));
        }
        s
    }

    /// The command as std builds it: arguments, directory, environment.
    fn base(&self) -> Command {
        #[allow(clippy::disallowed_methods)]
        let mut c = Command::new(&self.program);
        c.args(&self.args).current_dir(&self.cwd);
        for k in crate::env::SHELL_INTEGRATION {
            c.env_remove(k);
        }
        for k in &self.removed {
            c.env_remove(k);
        }
        for (k, v) in &defaults().env {
            c.env(k, v);
        }
        for (k, v) in &self.envs {
            c.env(k, v);
        }
        c
    }

    /// Starts a child grove waits for: the leader of a process group of its own, with
    /// SIGTERM when grove dies (Linux), stdin empty, both outputs piped, and — while an
    /// operation runs — its journal lock open (see [`inherit_lock`]).
    fn spawn(&self) -> Result<std::process::Child, Error> {
        let mut c = self.base();
        c.stdin(match self.input {
            Some(_) => Stdio::piped(),
            None => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
        let locks = inherited()
            .iter()
            .map(|(_, f)| f.try_clone())
            .collect::<io::Result<Vec<File>>>()
            .map_err(|e| self.spawn_error(e))?;
        in_child(&mut c, &locks, !self.finish);
        // `locks` stay open in grove until the child has its own copies.
        let mut child = c.spawn().map_err(|e| self.spawn_error(e))?;
        if let (Some(bytes), Some(mut stdin)) = (&self.input, child.stdin.take()) {
            // A child that exits without reading it all fails on its own; its status says.
            let _ = io::Write::write_all(&mut stdin, bytes);
        }
        Ok(child)
    }

    fn spawn_error(&self, source: io::Error) -> Error {
        Error::Spawn {
            program: self.program.to_string_lossy().into_owned(),
            cwd: self.cwd.clone(),
            source,
        }
    }

    /// Runs to completion, capturing stdout and stderr; any exit status is `Ok`. A command
    /// given input that was [prestarted](Cmd::prestart) is given it and collected (started
    /// again here when the prestarted one's exec failed).
    pub fn run(&self) -> Result<Output, Error> {
        if self.timeout.is_some() {
            return self.stream(&mut |_, _| {});
        }
        if let Some(input) = &self.input
            && let Some(started) = warm::take(&self.warm_key())
            && let Some((status, stdout, stderr)) =
                started.finish(input).map_err(|e| self.spawn_error(e))?
        {
            return Ok(Output {
                status: Status::from_exit(status),
                stdout: String::from_utf8_lossy(&stdout).into_owned(),
                stderr: String::from_utf8_lossy(&stderr).into_owned(),
            });
        }
        let child = self.spawn()?;
        let _tracked = signals::track(child.id(), !self.finish);
        let out = child.wait_with_output().map_err(|e| self.spawn_error(e))?;
        Ok(Output {
            status: Status::from_exit(out.status),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// Runs to completion and fails unless the exit status is zero.
    pub fn check(&self) -> Result<Output, Error> {
        let out = self.run()?;
        if out.success() {
            Ok(out)
        } else {
            Err(Error::failed(&self.display(), out.status, &out.tail()))
        }
    }

    /// Runs to completion, handing each output line to `on_line` as it arrives (on the
    /// calling thread). The full output is also returned.
    pub fn stream(&self, on_line: &mut dyn FnMut(Stream, &str)) -> Result<Output, Error> {
        let (mut stdout, mut stderr) = (String::new(), String::new());
        let watch = Watch {
            deadline: self.timeout.map(|t| Instant::now() + t),
            stop: None,
        };
        let status = self.drive(watch, &mut |stream, raw| {
            on_line(stream, raw.trim_end_matches(['\n', '\r']));
            match stream {
                Stream::Stdout => stdout.push_str(raw),
                Stream::Stderr => stderr.push_str(raw),
            }
        })?;
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }

    /// Runs a long-lived process in a process group of its own, handing each output line
    /// to `on_line` (nothing is kept: a dev server may print for hours).
    ///
    /// A request on `stop` beyond the first `after` ones ends it: SIGTERM to the whole
    /// group, then SIGKILL after the stop's grace period, or at once on yet another
    /// request; the status is then [`Status::Stopped`]. When such a request came before
    /// the start, the process is not started at all. When the process ends on its own,
    /// whatever it left behind in its group is ended the same way, so nothing outlives it.
    pub fn supervise(
        &self,
        stop: &Stop,
        after: usize,
        on_line: &mut dyn FnMut(Stream, &str),
    ) -> Result<Status, Error> {
        if stop.requests() > after {
            return Ok(Status::Stopped);
        }
        self.drive(
            Watch {
                deadline: self.timeout.map(|t| Instant::now() + t),
                stop: Some((stop, after)),
            },
            &mut |stream, raw| on_line(stream, raw.trim_end_matches(['\n', '\r'])),
        )
    }

    /// Starts this command now, for a later [`Cmd::run`] of the same command (program,
    /// arguments, directory and environment) with [input](Cmd::input) to take: it is
    /// forked without waiting for its exec ([`warm`]), and waits for that input, having
    /// changed nothing. Dropped unused, the returned guard kills it (it has read nothing)
    /// and waits for it. Only for a command that reads all its input before it acts and
    /// finishes once started (git), started by the operation that runs it, while that
    /// operation holds its lock: the child keeps the locks held now ([`inherit_lock`]).
    pub fn prestart(&self) -> Result<Warm, Error> {
        debug_assert!(self.finish && self.timeout.is_none());
        let locks = inherited()
            .iter()
            .map(|(_, f)| f.try_clone())
            .collect::<io::Result<Vec<File>>>()
            .map_err(|e| self.spawn_error(e))?;
        let keep: Vec<std::os::fd::RawFd> =
            locks.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect();
        // `locks` stay open here until the child has its own copies.
        warm::start(self.warm_key(), &self.base(), &keep).map_err(|e| self.spawn_error(e))
    }

    /// What makes two commands the same for [`Cmd::prestart`].
    fn warm_key(&self) -> String {
        format!(
            "{:?}",
            (
                &self.program,
                &self.args,
                &self.cwd,
                &self.envs,
                &self.removed,
                &defaults().env,
            )
        )
    }

    /// Replaces the current process with this command (Unix `exec`), which inherits
    /// grove's stdin, stdout and stderr. Returns only on error.
    pub fn exec(&self) -> Error {
        self.spawn_error(self.base().exec())
    }

    /// Starts the process detached from grove and does not wait: a process group of its
    /// own (so neither a Ctrl-C at the terminal nor grove's exit ends it), no stdio, and
    /// no lock of grove's.
    /// It is forked and left to exec on its own ([`detach::spawn`]): grove does not wait
    /// for it to start, which on a busy machine can take a scheduling period.
    pub fn spawn_detached(&self) -> Result<(), Error> {
        detach::spawn(&self.base()).map_err(|e| self.spawn_error(e))
    }
}

/// Children started while this is held keep a duplicate of `lock` open (an operation's
/// journal lock), and so do their own children, which inherit it. A file lock belongs to
/// the open file, not to a process, so it stays held while anything the operation started
/// is still at work, and the operation is not taken for interrupted — even after grove
/// itself was killed. While several are held (rebases of `gw sync` side by side), children
/// keep them all: an operation then counts as running a little longer, never shorter.
pub fn inherit_lock(lock: &File) -> io::Result<InheritGuard> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let dup = lock.try_clone()?;
    inherited().push((id, dup));
    Ok(InheritGuard(id))
}

/// Ends what [`inherit_lock`] started when dropped.
#[must_use]
pub struct InheritGuard(u64);

impl Drop for InheritGuard {
    fn drop(&mut self) {
        inherited().retain(|(id, _)| *id != self.0);
    }
}

fn inherited() -> std::sync::MutexGuard<'static, Vec<(u64, File)>> {
    static INHERITED: Mutex<Vec<(u64, File)>> = Mutex::new(Vec::new());
    INHERITED.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the child does between fork and exec: keep `locks` open across exec (std opens
/// every file close-on-exec), and — `die_with_grove`, on Linux — ask for SIGTERM when
/// grove dies.
///
/// The parent-death signal comes when the thread that started the child ends — grove's
/// thread waiting for it, so in practice when grove dies, however it dies. Git is not
/// given one (see [`Cmd::git`]): it finishes, holding `lock`, which tells recovery it is
/// still at work.
#[allow(unsafe_code)]
fn in_child(c: &mut Command, locks: &[File], die_with_grove: bool) {
    use std::os::fd::{AsRawFd, BorrowedFd};
    let locks: Vec<i32> = locks.iter().map(AsRawFd::as_raw_fd).collect();
    #[cfg(target_os = "linux")]
    let parent = rustix::process::getpid();
    // The parent-death signal is Linux's; elsewhere children outlive a killed grove.
    #[cfg(not(target_os = "linux"))]
    let _ = die_with_grove;
    // SAFETY: the closure runs in the child between fork and exec. It allocates nothing
    // (`locks` was built before), takes no lock and only makes system calls (fcntl, prctl,
    // getppid, kill), which are async-signal-safe. Each of `locks` is a descriptor the
    // parent keeps open until `spawn` returns, so it is open in the child.
    unsafe {
        c.pre_exec(move || {
            for &fd in &locks {
                rustix::io::fcntl_setfd(BorrowedFd::borrow_raw(fd), rustix::io::FdFlags::empty())?;
            }
            #[cfg(target_os = "linux")]
            if die_with_grove {
                use rustix::process::{Signal, getpid, getppid, kill_process};
                rustix::process::set_parent_process_death_signal(Some(Signal::TERM))?;
                // grove died before the signal was armed: act as if it had fired.
                if getppid() != Some(parent) {
                    let _ = kill_process(getpid(), Signal::TERM);
                }
            }
            Ok(())
        });
    }
}

/// Process-wide defaults for spawned commands, set once from the environment.
#[derive(Debug, Default, Clone)]
pub struct Defaults {
    /// `GIT_SSH_COMMAND` to pass to git (None keeps the user's own).
    pub ssh_command: Option<String>,
    /// Extra environment for every process (tests use it to keep git hermetic).
    pub env: Vec<(String, String)>,
}

static DEFAULTS: std::sync::OnceLock<Defaults> = std::sync::OnceLock::new();

/// Lowers this process's CPU priority to the lowest (`nice 19`), for housekeeping that
/// must not slow anything else down; where it cannot, nothing changes.
pub fn lower_priority() {
    let _ = rustix::process::setpriority_process(None, 19);
}

/// Sets process-wide defaults; the first call wins.
pub fn set_defaults(d: Defaults) {
    let _ = DEFAULTS.set(d);
}

fn defaults() -> &'static Defaults {
    DEFAULTS.get_or_init(|| Defaults {
        ssh_command: Some("ssh -o BatchMode=yes".into()),
        env: Vec::new(),
    })
}

/// Makes every process this test binary starts hermetic (`e2e::HERMETIC_GIT`).
#[cfg(test)]
pub fn hermetic() {
    set_defaults(Defaults {
        ssh_command: None,
        env: e2e::HERMETIC_GIT
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    });
}

/// The last `n` lines of `text`.
pub fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Quotes `s` for a POSIX shell when it contains anything beyond a safe set.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> PathBuf {
        std::env::temp_dir()
    }

    /// A command that finishes once started (as git does), reading its input first.
    fn finishing(script: &str, dir: &Path) -> Cmd {
        let mut cmd = Cmd::shell(script, dir);
        cmd.finish = true;
        cmd
    }

    /// A prestarted command runs only once a run of the same command gives it its input:
    /// that run gets its output and status. A different command is not it, and starts its
    /// own.
    #[test]
    fn a_prestarted_command_is_the_one_a_later_identical_run_gives_its_input() {
        let dir = tempfile::tempdir().unwrap();
        let script = "read x; echo \"$x\" > seen; echo \"out $x\"; echo err >&2; exit 3";
        let warm = finishing(script, dir.path()).prestart().unwrap();
        let other = finishing("cat; echo other", dir.path())
            .input(b"in".to_vec())
            .run()
            .unwrap();
        assert_eq!(other.stdout, "inother\n", "another command starts its own");
        let key = finishing(script, dir.path()).warm_key();
        assert!(warm::waiting(&key));
        let out = finishing(script, dir.path())
            .input(b"given\n".to_vec())
            .run()
            .unwrap();
        assert_eq!(out.status, Status::Exited(3));
        assert_eq!(out.stdout, "out given\n");
        assert_eq!(out.stderr, "err\n");
        assert_eq!(
            crate::fsx::read(&dir.path().join("seen")).unwrap(),
            "given\n"
        );
        assert!(!warm::waiting(&key), "the run took the started one");
        drop(warm);
        // Once used it is not there to be used again: the next run is a new process.
        let again = finishing(script, dir.path())
            .input(b"twice\n".to_vec())
            .run()
            .unwrap();
        assert_eq!(again.stdout, "out twice\n");
    }

    /// One never used is killed when its guard goes (git would run its
    /// `reference-transaction` hook for an empty input), and waited for: once the guard is
    /// gone, it can do nothing more.
    #[test]
    fn a_prestarted_command_not_used_is_ended_before_it_reads_anything() {
        let dir = tempfile::tempdir().unwrap();
        // Given the end of its input instead, it would write what it read (nothing).
        let script = "read x; echo \"read: $x\" > seen";
        let warm = finishing(script, dir.path()).prestart().unwrap();
        drop(warm);
        assert!(!dir.path().join("seen").exists());
    }

    /// A prestarted child is the leader of a group of its own and keeps the operation's
    /// lock open, as every child of an operation does; an exec that fails is the run's
    /// spawn error, as a plain run's would be.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_prestarted_command_keeps_the_operations_lock_and_reports_a_failed_exec() {
        let dir = tempfile::tempdir().unwrap();
        let lock = File::create(dir.path().join("op.lock")).unwrap();
        let guard = inherit_lock(&lock).unwrap();
        let script = "read x; cut -d' ' -f5 /proc/$$/stat; ls -l /proc/$$/fd";
        let warm = finishing(script, dir.path()).prestart().unwrap();
        let mut run = finishing(script, dir.path());
        run.input(b"\n".to_vec());
        assert!(warm::waiting(&run.warm_key()));
        let out = run.run().unwrap();
        assert!(
            !warm::waiting(&run.warm_key()),
            "the run took the started one"
        );
        drop((warm, guard));
        let mut lines = out.stdout.lines();
        let pgid: i32 = lines.next().unwrap().trim().parse().unwrap();
        assert_ne!(pgid, rustix::process::getpgrp().as_raw_nonzero().get());
        assert!(lines.any(|l| l.ends_with("/op.lock")), "{}", out.stdout);

        let mut missing = Cmd::new(dir.path().join("no-such-program"), dir.path());
        missing.finish = true;
        let warm = missing.prestart().unwrap();
        assert!(warm::waiting(&missing.warm_key()));
        let err = missing.clone().input(b"x".to_vec()).run().unwrap_err();
        assert!(!warm::waiting(&missing.warm_key()));
        assert!(
            matches!(&err, Error::Spawn { source, .. } if source.kind() == io::ErrorKind::NotFound),
            "{err:?}"
        );
        drop(warm);
    }

    #[test]
    fn a_failure_message_is_one_line_with_the_reason() {
        let stderr = "Cloning into 'x'...\nfatal: 'x' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\n";
        assert_eq!(
            fmt_tail(stderr),
            ": fatal: 'x' does not appear to be a git repository"
        );
        assert_eq!(
            fmt_tail("warming up\nsomething broke\n\n"),
            ": something broke"
        );
        assert_eq!(fmt_tail(" \n"), "");
    }

    /// A detached child runs in its directory with its environment changes, its own
    /// process group, stdio on /dev/null and no signal blocked — without grove waiting.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_detached_child_runs_as_told_in_a_group_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut cmd = Cmd::new("/bin/sh", dir.path());
        cmd.args([
            "-c",
            "{ pwd -P; echo \"$GW_T_SET/${HOME-unset}\"; cut -d' ' -f5 /proc/$$/stat; \
             grep SigBlk /proc/self/status 2>/dev/null || echo none; \
             read x && echo \"read $x\" || echo eof; } > out.tmp 2>&1; mv out.tmp out",
        ])
        .env("GW_T_SET", "set")
        .env_remove("GW_T_GONE")
        .env_remove("HOME");
        cmd.spawn_detached().unwrap();
        // Waits for the child (no time asserted: it ends on its own).
        while !out.exists() {
            std::thread::sleep(Duration::from_millis(10));
        }
        let text = crate::fsx::read(&out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            dir.path().canonicalize().unwrap().to_str().unwrap()
        );
        assert_eq!(lines[1], "set/unset");
        let pgid: i32 = lines[2].trim().parse().unwrap();
        assert_ne!(pgid, rustix::process::getpgrp().as_raw_nonzero().get());
        assert_eq!(lines[3], "SigBlk:\t0000000000000000", "{text}");
        assert_eq!(lines[4], "eof", "stdin is /dev/null");
        // A program found in no directory of PATH is refused before anything starts.
        assert!(
            Cmd::new("gw-no-such-program", dir.path())
                .spawn_detached()
                .is_err()
        );
    }

    #[test]
    fn captures_both_streams_and_status() {
        let out = Cmd::shell("echo out; echo err >&2; exit 3", &tmp())
            .run()
            .unwrap();
        assert_eq!(out.status, Status::Exited(3));
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        let err = Cmd::shell("echo boom >&2; exit 1", &tmp())
            .check()
            .unwrap_err();
        assert!(err.to_string().contains("boom"), "{err}");
    }

    #[test]
    fn streams_lines_in_order() {
        let mut seen = Vec::new();
        let out = Cmd::shell("echo a; echo b >&2; echo c", &tmp())
            .stream(&mut |s, l| seen.push((s, l.to_string())))
            .unwrap();
        assert!(out.success());
        let stdout: Vec<_> = seen
            .iter()
            .filter(|(s, _)| *s == Stream::Stdout)
            .map(|(_, l)| l.as_str())
            .collect();
        assert_eq!(stdout, ["a", "c"]);
        assert!(seen.contains(&(Stream::Stderr, "b".to_string())));
    }

    #[test]
    fn children_lead_their_own_group_and_hold_an_inherited_lock() {
        let dir = tempfile::tempdir().unwrap();
        let lock_path = dir.path().join("op.lock");
        let lock = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .unwrap();
        lock.try_lock().unwrap();
        // The child's process group is its own pid.
        let out = Cmd::shell("cut -d' ' -f5 /proc/$$/stat; echo $$", &tmp())
            .run()
            .unwrap();
        let mut ids = out.stdout.split_whitespace();
        assert_eq!(ids.next(), ids.next(), "{}", out.stdout);
        // While the guard lives, children keep the lock open: a background grandchild keeps
        // it held after grove let go of its own handle.
        let guard = inherit_lock(&lock).unwrap();
        let out = Cmd::shell("cat; sleep 30 >/dev/null 2>&1 & echo $!", &tmp())
            .run()
            .unwrap();
        let grandchild: i32 = out.stdout.trim().parse().expect("stdin is empty: a pid");
        drop(guard);
        drop(lock);
        let other = File::options().read(true).open(&lock_path).unwrap();
        assert!(
            other.try_lock().is_err(),
            "the grandchild still holds the lock"
        );
        // Without a guard, children hold nothing.
        let pid = rustix::process::Pid::from_raw(grandchild).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
        drop(other);
        let free = || {
            let f = File::options().read(true).open(&lock_path).unwrap();
            f.try_lock().is_ok()
        };
        while !free() {
            std::thread::yield_now();
        }
        let out = Cmd::shell("sleep 30 >/dev/null 2>&1 & echo $!", &tmp())
            .run()
            .unwrap();
        assert!(free(), "nothing holds the lock now");
        let grandchild: i32 = out.stdout.trim().parse().unwrap();
        let pid = rustix::process::Pid::from_raw(grandchild).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("feat-x"), "feat-x");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
