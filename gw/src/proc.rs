//! The one place grove starts processes: git, hooks and plugins.
//!
//! Every [`Cmd`] has an explicit working directory and closes stdin. Output is captured
//! (or handed line by line to a callback), never inherited, so nothing a child prints can
//! reach grove's stdout behind the output layer's back.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How many trailing output lines are kept for error messages.
const TAIL_LINES: usize = 20;
/// After a child exits, how long to keep reading output that a background grandchild may
/// still be holding open before giving up on it.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);
/// Between SIGTERM and SIGKILL when a timeout fires.
const KILL_GRACE: Duration = Duration::from_millis(500);

/// A process to run.
#[derive(Debug, Clone)]
pub struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    cwd: PathBuf,
    envs: Vec<(OsString, OsString)>,
    timeout: Option<Duration>,
    own_group: bool,
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Exited(i32),
    Signaled(i32),
    TimedOut,
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
        }
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
        let mut child = self
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.spawn_error(e))?;
        let (tx, rx) = mpsc::channel::<(Stream, String)>();
        let readers = [
            child
                .stdout
                .take()
                .map(|s| reader(Stream::Stdout, s, tx.clone())),
            child
                .stderr
                .take()
                .map(|s| reader(Stream::Stderr, s, tx.clone())),
        ];
        drop(tx);
        let deadline = self.timeout.map(|t| Instant::now() + t);
        let (mut stdout, mut stderr) = (String::new(), String::new());
        let mut exited: Option<(Status, Instant)> = None;
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok((stream, line)) => {
                    on_line(stream, line.trim_end_matches(['\n', '\r']));
                    match stream {
                        Stream::Stdout => stdout.push_str(&line),
                        Stream::Stderr => stderr.push_str(&line),
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    if exited.is_none() {
                        let st = child.wait().map_err(|e| self.spawn_error(e))?;
                        exited = Some((Status::from_exit(st), Instant::now()));
                    }
                    break;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if exited.is_none() {
                if let Some(st) = child.try_wait().map_err(|e| self.spawn_error(e))? {
                    exited = Some((Status::from_exit(st), Instant::now()));
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    kill_group(&mut child, self.own_group);
                    let _ = child.wait();
                    exited = Some((Status::TimedOut, Instant::now()));
                }
            }
            if let Some((_, at)) = exited
                && at.elapsed() >= DRAIN_AFTER_EXIT
            {
                // A background process still holds the pipes open; stop waiting for it.
                break;
            }
        }
        for r in readers.into_iter().flatten() {
            if exited.is_some_and(|(_, at)| at.elapsed() < DRAIN_AFTER_EXIT) {
                let _ = r.join();
            }
        }
        let status = exited.map(|(s, _)| s).unwrap_or(Status::Exited(-1));
        Ok(Output {
            status,
            stdout,
            stderr,
        })
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
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut r = BufReader::new(r);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
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

fn kill_group(child: &mut Child, own_group: bool) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    let Some(pid) = Pid::from_raw(child.id() as i32) else {
        return;
    };
    let send = |sig| {
        let _ = if own_group {
            kill_process_group(pid, sig)
        } else {
            kill_process(pid, sig)
        };
    };
    send(Signal::TERM);
    let until = Instant::now() + KILL_GRACE;
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            // The leader is gone; make sure the rest of its group is too.
            if own_group {
                let _ = kill_process_group(pid, Signal::KILL);
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    send(Signal::KILL);
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

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("feat-x"), "feat-x");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
