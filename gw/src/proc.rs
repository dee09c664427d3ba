//! The one place grove starts processes: git, hooks, plugins and `gw run`'s dev processes.
//!
//! Every [`Cmd`] has an explicit working directory and closes stdin. Output is captured
//! (or handed line by line to a callback), never inherited, so nothing a child prints can
//! reach grove's stdout behind the output layer's back.
//!
//! Several long-running children (`gw run`) share one [`Stop`]: SIGINT, SIGTERM or a
//! deadline turns into a stop request, and each child supervised with it
//! ([`Cmd::supervise`]) has its whole process group terminated, then killed after a grace
//! period.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, mpsc};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// How many trailing output lines are kept for error messages.
const TAIL_LINES: usize = 20;
/// After a child exits, how long to keep reading output that a background grandchild may
/// still be holding open before giving up on it.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);
/// Between SIGTERM and SIGKILL when a timeout fires.
const KILL_GRACE: Duration = Duration::from_millis(500);
/// Between SIGTERM and SIGKILL when a [`Stop`] is requested: long enough for a dev server
/// to shut down cleanly (foreman and overmind wait 5 s too).
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long to wait for SIGKILLed processes to be gone.
const KILL_SETTLE: Duration = Duration::from_secs(2);
/// How often a running child is checked (exit, deadline, stop request).
const TICK: Duration = Duration::from_millis(20);

/// A process to run.
#[derive(Debug, Clone)]
pub struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    cwd: PathBuf,
    envs: Vec<(OsString, OsString)>,
    timeout: Option<Duration>,
    own_group: bool,
    /// Output lines also end at a lone carriage return (see [`Cmd::progress_lines`]).
    split_cr: bool,
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
            timeout: None,
            own_group: false,
            split_cr: false,
        }
    }

    /// Hands [`Cmd::stream`] each carriage-return-terminated piece of output as a line of
    /// its own, as it arrives: git's `--progress` redraws its counters that way.
    pub fn progress_lines(&mut self) -> &mut Cmd {
        self.split_cr = true;
        self
    }

    /// `git` with prompts disabled, so it fails instead of waiting for a password.
    pub fn git(cwd: &Path) -> Cmd {
        let mut cmd = Cmd::new("git", cwd);
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

    /// Kills the process (and its process group) when it runs longer than `d`.
    pub fn envs<K: AsRef<OsStr>, V: AsRef<OsStr>>(
        &mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> &mut Cmd {
        for (k, v) in vars {
            self.env(k, v);
        }
        self
    }

    pub fn timeout(&mut self, d: Option<Duration>) -> &mut Cmd {
        self.timeout = d;
        if d.is_some() {
            self.own_group = true;
        }
        self
    }

    /// Starts the process in a process group of its own.
    pub fn own_group(&mut self) -> &mut Cmd {
        self.own_group = true;
        self
    }

    /// The command line, for messages (`git worktree add …`).
    pub fn display(&self) -> String {
        let mut s = shell_quote(&self.program.to_string_lossy());
        for a in &self.args {
            s.push(' ');
            s.push_str(&shell_quote(&a.to_string_lossy()));
        }
        s
    }

    fn command(&self) -> Command {
        #[allow(clippy::disallowed_methods)]
        let mut c = Command::new(&self.program);
        c.args(&self.args)
            .current_dir(&self.cwd)
            .stdin(Stdio::null());
        for (k, v) in &defaults().env {
            c.env(k, v);
        }
        for (k, v) in &self.envs {
            c.env(k, v);
        }
        if self.own_group {
            c.process_group(0);
        }
        c
    }

    fn spawn_error(&self, source: io::Error) -> Error {
        Error::Spawn {
            program: self.program.to_string_lossy().into_owned(),
            cwd: self.cwd.clone(),
            source,
        }
    }

    /// Runs to completion, capturing stdout and stderr; any exit status is `Ok`.
    pub fn run(&self) -> Result<Output, Error> {
        if self.timeout.is_none() {
            let out = self
                .command()
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .map_err(|e| self.spawn_error(e))?;
            return Ok(Output {
                status: Status::from_exit(out.status),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        self.stream(&mut |_, _| {})
    }

    /// Runs to completion and fails unless the exit status is zero.
    pub fn check(&self) -> Result<Output, Error> {
        let out = self.run()?;
        if out.success() {
            Ok(out)
        } else {
            Err(Error::Failed {
                command: self.display(),
                status: out.status,
                stderr: out.tail(),
            })
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
        let mut cmd = self.clone();
        cmd.own_group = true;
        cmd.drive(
            Watch {
                deadline: self.timeout.map(|t| Instant::now() + t),
                stop: Some((stop, after)),
            },
            &mut |stream, raw| on_line(stream, raw.trim_end_matches(['\n', '\r'])),
        )
    }

    /// Runs the process, handing raw output lines (newline included) to `on_line`, and
    /// ends it (and its group) when `watch` says so.
    fn drive(
        &self,
        watch: Watch<'_>,
        on_line: &mut dyn FnMut(Stream, &str),
    ) -> Result<Status, Error> {
        let mut child = self
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.spawn_error(e))?;
        let target = Target {
            pid: Pid::from_raw(child.id() as i32),
            group: self.own_group,
        };
        let (tx, rx) = mpsc::channel::<(Stream, String)>();
        let readers = [
            child
                .stdout
                .take()
                .map(|s| reader(Stream::Stdout, s, tx.clone(), self.split_cr)),
            child
                .stderr
                .take()
                .map(|s| reader(Stream::Stderr, s, tx.clone(), self.split_cr)),
        ];
        drop(tx);
        // Supervised children are also stopped when they end on their own but leave
        // something running in their group.
        let sweep = watch.stop.is_some();
        let mut open = true;
        let mut leader: Option<Status> = None;
        let mut phase = Phase::Running;
        let mut checked = Instant::now();
        let status = loop {
            if open {
                match rx.recv_timeout(TICK) {
                    Ok((stream, line)) => {
                        on_line(stream, &line);
                        // A chatty child must not starve the checks below.
                        if checked.elapsed() < TICK {
                            continue;
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => open = false,
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                }
            } else if !matches!(phase, Phase::Done { .. }) {
                // The child closed its output but may still be running.
                std::thread::sleep(TICK);
            }
            checked = Instant::now();
            if leader.is_none()
                && let Some(st) = child.try_wait().map_err(|e| self.spawn_error(e))?
            {
                leader = Some(Status::from_exit(st));
            }
            let now = Instant::now();
            phase = match phase {
                Phase::Running => {
                    if let Some(status) = leader {
                        if sweep && target.lingering() {
                            target.signal(Signal::TERM);
                            Phase::Ending {
                                status,
                                kill_at: now + watch.grace(),
                                seen: watch.requests(),
                            }
                        } else {
                            Phase::Done { status, at: now }
                        }
                    } else if watch.deadline.is_some_and(|d| now >= d) {
                        target.signal(Signal::TERM);
                        Phase::Ending {
                            status: Status::TimedOut,
                            kill_at: now + KILL_GRACE,
                            seen: watch.requests(),
                        }
                    } else if watch.stop_requested() {
                        target.signal(Signal::TERM);
                        Phase::Ending {
                            status: Status::Stopped,
                            kill_at: now + watch.grace(),
                            seen: watch.requests(),
                        }
                    } else {
                        Phase::Running
                    }
                }
                Phase::Ending {
                    status,
                    kill_at,
                    seen,
                } => {
                    if leader.is_some() && !target.lingering() {
                        Phase::Done { status, at: now }
                    } else if now >= kill_at || watch.requests() > seen {
                        target.signal(Signal::KILL);
                        if leader.is_none() {
                            let st = child.wait().map_err(|e| self.spawn_error(e))?;
                            leader = Some(Status::from_exit(st));
                        }
                        // SIGKILL is delivered asynchronously; once this returns, nothing
                        // of the group runs any more.
                        let until = Instant::now() + KILL_SETTLE;
                        while target.lingering() && Instant::now() < until {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Phase::Done { status, at: now }
                    } else {
                        Phase::Ending {
                            status,
                            kill_at,
                            seen,
                        }
                    }
                }
                Phase::Done { status, at } => {
                    // A background process may still hold the pipes open; stop waiting
                    // for its output after a moment.
                    if !open || at.elapsed() >= DRAIN_AFTER_EXIT {
                        break status;
                    }
                    Phase::Done { status, at }
                }
            };
        };
        if !open {
            for r in readers.into_iter().flatten() {
                let _ = r.join();
            }
        }
        Ok(status)
    }

    /// Replaces the current process with this command (Unix `exec`). Returns only on error.
    pub fn exec(&self) -> Error {
        let mut c = self.command();
        c.stdin(Stdio::inherit());
        self.spawn_error(c.exec())
    }

    /// Runs with stdin, stdout and stderr inherited and returns the exit status: for
    /// plugins when `exec` is not wanted.
    pub fn run_inherited(&self) -> Result<Status, Error> {
        let mut c = self.command();
        c.stdin(Stdio::inherit());
        let st = c.status().map_err(|e| self.spawn_error(e))?;
        Ok(Status::from_exit(st))
    }

    /// Starts the process detached from grove (own session, no stdio) and does not wait.
    pub fn spawn_detached(&self) -> Result<(), Error> {
        let mut c = self.command();
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        c.spawn().map(|_| ()).map_err(|e| self.spawn_error(e))
    }
}

fn reader<R: Read + Send + 'static>(
    stream: Stream,
    r: R,
    tx: mpsc::Sender<(Stream, String)>,
    split_cr: bool,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut r = BufReader::new(r);
        let mut buf = Vec::new();
        let mut after_cr = false;
        loop {
            buf.clear();
            let read = if split_cr {
                read_until_eol(&mut r, &mut buf)
            } else {
                r.read_until(b'\n', &mut buf)
            };
            // The `\n` of a `\r\n` is not a line of its own.
            if split_cr && std::mem::replace(&mut after_cr, buf.ends_with(b"\r")) && buf == b"\n" {
                continue;
            }
            match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx
                        .send((stream, String::from_utf8_lossy(&buf).into_owned()))
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    })
}

/// Reads up to and including the next `\n` or `\r`.
fn read_until_eol(r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut total = 0;
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(total);
        }
        let (n, done) = match available.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        buf.extend_from_slice(&available[..n]);
        r.consume(n);
        total += n;
        if done {
            return Ok(total);
        }
    }
}

/// What ends a running child besides its own exit.
struct Watch<'a> {
    /// Terminate it after this instant (`Status::TimedOut`).
    deadline: Option<Instant>,
    /// Terminate it on a request beyond the first `usize` ones (`Status::Stopped`).
    stop: Option<(&'a Stop, usize)>,
}

impl Watch<'_> {
    fn stop_requested(&self) -> bool {
        self.stop.is_some_and(|(s, after)| s.requests() > after)
    }

    fn requests(&self) -> usize {
        self.stop.map_or(0, |(s, _)| s.requests())
    }

    fn grace(&self) -> Duration {
        self.stop.map_or(KILL_GRACE, |(s, _)| s.0.grace)
    }
}

/// Where a running child is in its life.
#[derive(Clone, Copy)]
enum Phase {
    Running,
    /// SIGTERM was sent to the group; SIGKILL follows at `kill_at`, or at once when the
    /// stop gets a request beyond `seen`.
    Ending {
        status: Status,
        kill_at: Instant,
        seen: usize,
    },
    /// Ended; only draining what is left in the pipes.
    Done {
        status: Status,
        at: Instant,
    },
}

/// A child to signal: its process group, or the process alone.
struct Target {
    pid: Option<Pid>,
    group: bool,
}

impl Target {
    fn signal(&self, sig: Signal) {
        use rustix::process::{kill_process, kill_process_group};
        let Some(pid) = self.pid else { return };
        let _ = if self.group {
            kill_process_group(pid, sig)
        } else {
            kill_process(pid, sig)
        };
    }

    /// Once the child itself has been reaped: whether anything it started is still
    /// running in its group (never, for a child without a group of its own).
    fn lingering(&self) -> bool {
        match self.pid {
            Some(pid) if self.group => group_alive(pid),
            _ => false,
        }
    }
}

/// Whether process group `pgid` has a member that is not a zombie. Zombies count for
/// `kill(-pgid, 0)`, and where PID 1 does not reap orphans (some containers) they linger,
/// so on Linux the members are looked up in `/proc`.
pub fn group_alive(pgid: Pid) -> bool {
    if rustix::process::test_kill_process_group(pgid).is_err() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    let want = pgid.as_raw_nonzero().get();
    entries.flatten().any(|e| {
        let name = e.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
        let Ok(stat) = std::fs::read(e.path().join("stat")) else {
            return false;
        };
        let stat = String::from_utf8_lossy(&stat);
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            return false;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
        pgrp == Some(want) && state != Some("Z") && state != Some("X")
    })
}

/// `SIGINT`, `SIGTERM`, … for a signal number.
pub fn signal_name(n: i32) -> String {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGKILL, SIGQUIT, SIGTERM};
    match n {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        SIGHUP => "SIGHUP".into(),
        SIGQUIT => "SIGQUIT".into(),
        SIGKILL => "SIGKILL".into(),
        n => format!("signal {n}"),
    }
}

/// Why a [`Stop`] was first requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// SIGINT (Ctrl-C) or SIGTERM; the signal number.
    Signal(i32),
    /// The deadline given to [`Stop::new`] passed.
    Timeout,
}

/// A stop request shared by every process of one run. Requests are counted: the first
/// ends the running processes gracefully, a further one kills what is still ending.
#[derive(Debug, Clone)]
pub struct Stop(Arc<StopState>);

#[derive(Debug)]
struct StopState {
    requests: AtomicUsize,
    reason: OnceLock<StopReason>,
    deadline: Option<Instant>,
    deadline_passed: AtomicBool,
    grace: Duration,
}

impl Stop {
    /// A stop with `grace` between SIGTERM and SIGKILL, requested by itself after
    /// `timeout` (unless something else asked first).
    pub fn new(grace: Duration, timeout: Option<Duration>) -> Stop {
        Stop(Arc::new(StopState {
            requests: AtomicUsize::new(0),
            reason: OnceLock::new(),
            deadline: timeout.map(|t| Instant::now() + t),
            deadline_passed: AtomicBool::new(false),
            grace,
        }))
    }

    pub fn request(&self, reason: StopReason) {
        let _ = self.0.reason.set(reason);
        self.0.requests.fetch_add(1, Ordering::SeqCst);
    }

    /// How many stops have been requested so far (a passed deadline counts once, and only
    /// when nothing was requested before it).
    pub fn requests(&self) -> usize {
        let s = &self.0;
        if let Some(d) = s.deadline
            && Instant::now() >= d
            && !s.deadline_passed.swap(true, Ordering::SeqCst)
            && s.requests.load(Ordering::SeqCst) == 0
        {
            self.request(StopReason::Timeout);
        }
        s.requests.load(Ordering::SeqCst)
    }

    /// Why the first stop was requested, if one was by the last [`Stop::requests`].
    pub fn reason(&self) -> Option<StopReason> {
        self.0.reason.get().copied()
    }

    /// Turns SIGINT and SIGTERM into stop requests until the guard is dropped. A process
    /// group of its own keeps a child from seeing the terminal's Ctrl-C directly, so this
    /// is how it hears of it.
    pub fn on_signals(&self) -> io::Result<SignalGuard> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
        let handle = signals.handle();
        let stop = self.clone();
        let thread = std::thread::spawn(move || {
            for sig in signals.forever() {
                stop.request(StopReason::Signal(sig));
            }
        });
        Ok(SignalGuard {
            handle,
            thread: Some(thread),
        })
    }
}

/// Keeps SIGINT and SIGTERM routed to a [`Stop`]. Dropping it stops listening; the
/// signals then stay caught (and ignored) for the rest of the process, which is about
/// to render its result and exit.
pub struct SignalGuard {
    handle: signal_hook::iterator::Handle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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

/// Settings that keep git away from the host's configuration and identity, for tests that
/// run grove in-process.
pub fn hermetic_env() -> Vec<(String, String)> {
    [
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_CONFIG_SYSTEM", "/dev/null"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_COUNT", "2"),
        ("GIT_CONFIG_KEY_0", "init.defaultBranch"),
        ("GIT_CONFIG_VALUE_0", "main"),
        ("GIT_CONFIG_KEY_1", "advice.detachedHead"),
        ("GIT_CONFIG_VALUE_1", "false"),
        ("GIT_AUTHOR_NAME", "Grove Test"),
        ("GIT_AUTHOR_EMAIL", "test@grove.invalid"),
        ("GIT_COMMITTER_NAME", "Grove Test"),
        ("GIT_COMMITTER_EMAIL", "test@grove.invalid"),
        ("GIT_TERMINAL_PROMPT", "0"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Makes every process this test binary starts hermetic (see [`hermetic_env`]).
#[cfg(test)]
pub fn hermetic() {
    set_defaults(Defaults {
        ssh_command: None,
        env: hermetic_env(),
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
    fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("late");
        let script = format!("(sleep 2; touch {}) & sleep 5", marker.display());
        let start = Instant::now();
        let out = Cmd::shell(&script, dir.path())
            .timeout(Some(Duration::from_millis(200)))
            .run()
            .unwrap();
        assert_eq!(out.status, Status::TimedOut);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "returned promptly"
        );
        std::thread::sleep(Duration::from_millis(2200));
        assert!(
            !marker.exists(),
            "the background child was killed with its group"
        );
    }

    #[test]
    fn background_child_holding_pipes_does_not_hang() {
        let start = Instant::now();
        let out = Cmd::shell("sleep 3 & echo started", &tmp()).run_streaming_for_test();
        assert!(out.success());
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    impl Cmd {
        fn run_streaming_for_test(&self) -> Output {
            self.stream(&mut |_, _| {}).unwrap()
        }
    }

    /// Supervises `script` on a thread; returns its status and the group id it printed
    /// first (`echo $$`), once `ready` appeared in its output.
    fn supervised(
        script: &str,
        stop: &Stop,
        ready: &'static str,
    ) -> (
        std::thread::JoinHandle<Result<Status, Error>>,
        mpsc::Receiver<i32>,
    ) {
        let (tx, rx) = mpsc::channel();
        let cmd = Cmd::shell(&format!("echo $$; {script}"), &tmp());
        let stop = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut pgid = None;
            cmd.supervise(&stop, 0, &mut |_, line| match pgid {
                None => pgid = line.parse::<i32>().ok(),
                Some(id) if line == ready => {
                    let _ = tx.send(id);
                }
                Some(_) => {}
            })
        });
        (handle, rx)
    }

    fn gone(pgid: i32) -> bool {
        !group_alive(Pid::from_raw(pgid).unwrap())
    }

    #[test]
    fn a_stop_ends_the_whole_group() {
        let stop = Stop::new(Duration::from_secs(30), None);
        let (h, rx) = supervised("sleep 100 & echo up; sleep 100", &stop, "up");
        let pgid = rx.recv().unwrap();
        assert!(!gone(pgid));
        stop.request(StopReason::Signal(15));
        assert_eq!(h.join().unwrap().unwrap(), Status::Stopped);
        assert!(gone(pgid), "the background sleep went with its group");
        assert_eq!(stop.reason(), Some(StopReason::Signal(15)));
        // A command supervised after the request does not start.
        let st = Cmd::shell("exit 1", &tmp()).supervise(&stop, 0, &mut |_, _| {});
        assert_eq!(st.unwrap(), Status::Stopped);
        // One that only heeds later requests does.
        let st = Cmd::shell("exit 1", &tmp()).supervise(&stop, 1, &mut |_, _| {});
        assert_eq!(st.unwrap(), Status::Exited(1));
    }

    #[test]
    fn a_group_ignoring_sigterm_is_killed_on_a_second_request() {
        // The grace period is far longer than the test may take: only the second request
        // can end the group this soon.
        let stop = Stop::new(Duration::from_secs(600), None);
        let (h, rx) = supervised("trap '' TERM; echo up; sleep 1000", &stop, "up");
        let pgid = rx.recv().unwrap();
        stop.request(StopReason::Signal(2));
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            !h.is_finished(),
            "SIGTERM is ignored, so it is still ending"
        );
        stop.request(StopReason::Signal(2));
        assert_eq!(h.join().unwrap().unwrap(), Status::Stopped);
        assert!(gone(pgid));
    }

    #[test]
    fn leftovers_are_swept_when_the_leader_exits() {
        let stop = Stop::new(Duration::from_secs(30), None);
        let (h, rx) = supervised("sleep 100 & echo up", &stop, "up");
        let pgid = rx.recv().unwrap();
        assert_eq!(h.join().unwrap().unwrap(), Status::Exited(0));
        assert!(
            gone(pgid),
            "the background sleep did not outlive its leader"
        );
        assert_eq!(stop.requests(), 0);
    }

    #[test]
    fn a_deadline_is_one_request_and_a_chatty_child_still_meets_it() {
        let stop = Stop::new(Duration::from_secs(30), Some(Duration::from_millis(300)));
        let mut lines = 0usize;
        let st = Cmd::shell("while :; do echo line; done", &tmp())
            .supervise(&stop, 0, &mut |_, _| lines += 1)
            .unwrap();
        assert_eq!(st, Status::Stopped);
        assert!(lines > 0);
        assert_eq!(stop.reason(), Some(StopReason::Timeout));
        assert_eq!(stop.requests(), 1);
        // A deadline passing after another request adds nothing.
        let stop = Stop::new(Duration::from_secs(30), Some(Duration::from_millis(1)));
        stop.request(StopReason::Signal(2));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(stop.requests(), 1);
        assert_eq!(stop.reason(), Some(StopReason::Signal(2)));
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("feat-x"), "feat-x");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
