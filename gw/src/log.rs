//! `<grove dir>/grove.log`: what grove did, for `gw bug-report` and for people looking back.
//!
//! One line per mutating command (`msg=command`) and per git mutation it ran (`msg=git`),
//! each with the time, the process id, the command line, the repository (git lines), the
//! outcome and the duration. A line starts as the Go grove's do (`2026-05-01 09:30:12 INFO -
//! `, local time), followed by the message and its fields as `key=value` pairs (logfmt:
//! values with spaces, quotes or `=` are double-quoted, with backslash escapes).
//! With `-v`/`--verbose`, read-only commands are logged too (at `DEBUG`), and git lines
//! carry the working directory and, on failure, git's stderr.
//!
//! Like the Go grove's log, the file is rotated when it would grow past 1 MiB: `grove.log`
//! becomes `grove.log.1`, `.1` becomes `.2`, `.2` becomes `.3`, and the oldest is dropped.
//! The process that rotates holds an advisory lock on the full file while it renames, so
//! two `gw` processes never rotate the same file twice.
//!
//! Logging never fails a command and never prints: a log that cannot be opened, written or
//! rotated (a read-only directory, `grove.log` being a directory, a full disk) is skipped.
//! The grove directory is never created for the log: before `gw init` nothing is logged.
//! Secrets in command lines and git output (URL credentials, `*_TOKEN=` values) are
//! redacted before they are written.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use crate::redact;

/// The size past which the log is rotated (the Go grove's 1 MB).
pub const MAX_BYTES: u64 = 1024 * 1024;
/// How many rotated files are kept (`grove.log.1` … `grove.log.3`).
pub const BACKUPS: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
        }
    }
}

/// A log file and what goes into it.
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    verbose: bool,
    max_bytes: u64,
}

static LOG: OnceLock<Log> = OnceLock::new();

/// Starts logging to `path` for the rest of the process (the first call wins). Until it is
/// called (in-process tests), nothing is logged.
pub fn init(path: PathBuf, verbose: bool) {
    let _ = LOG.set(Log::new(path, verbose, MAX_BYTES));
}

/// `-v` was given: debug lines are written too.
pub fn verbose() -> bool {
    LOG.get().is_some_and(|l| l.verbose)
}

/// How a command or a git mutation ended.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    Ok,
    /// It failed: the error code (`GIT_FAILED`, or `exit status 128` for git) and message.
    Failed {
        code: &'a str,
        message: &'a str,
    },
}

/// Records a finished `gw` command: at `INFO` when it `mutates`, else at `DEBUG` (only
/// with `-v`).
pub fn command(argv: &str, outcome: Outcome<'_>, duration: Duration, mutates: bool) {
    if let Some(log) = LOG.get() {
        log.command(argv, outcome, duration, mutates);
    }
}

/// Records a git mutation run in `repo` (`command` is its command line; `stderr` is kept
/// only with `-v`).
pub fn git(command: &str, repo: &Path, outcome: Outcome<'_>, duration: Duration, stderr: &str) {
    if let Some(log) = LOG.get() {
        log.git(command, repo, outcome, duration, stderr);
    }
}

impl Log {
    pub fn new(path: PathBuf, verbose: bool, max_bytes: u64) -> Log {
        Log {
            path,
            verbose,
            max_bytes,
        }
    }

    pub fn command(&self, argv: &str, outcome: Outcome<'_>, duration: Duration, mutates: bool) {
        let level = if mutates { Level::Info } else { Level::Debug };
        let mut fields = vec![("cmd", argv.to_string())];
        push_outcome(&mut fields, outcome);
        fields.push(("duration_ms", duration.as_millis().to_string()));
        self.record(level, "command", &fields);
    }

    pub fn git(
        &self,
        command: &str,
        repo: &Path,
        outcome: Outcome<'_>,
        duration: Duration,
        stderr: &str,
    ) {
        let mut fields = vec![
            ("cmd", command.to_string()),
            ("repo", repo.display().to_string()),
        ];
        push_outcome(&mut fields, outcome);
        fields.push(("duration_ms", duration.as_millis().to_string()));
        if self.verbose && !stderr.trim().is_empty() {
            fields.push(("stderr", crate::proc::tail_lines(stderr, 20)));
        }
        self.record(Level::Info, "git", &fields);
    }

    /// Writes one line, unless it is a debug line and `-v` was not given. Errors are
    /// swallowed: the log must never fail a command.
    pub fn record(&self, level: Level, msg: &str, fields: &[(&str, String)]) {
        if level == Level::Debug && !self.verbose {
            return;
        }
        let line = format_line(&crate::time::now_log(), level, msg, fields);
        let _ = self.append(&line);
    }

    fn open(&self) -> io::Result<File> {
        OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&self.path)
    }

    fn append(&self, line: &str) -> io::Result<()> {
        let mut file = self.open()?;
        let len = file.metadata()?.len();
        if len > 0 && len + line.len() as u64 > self.max_bytes {
            // Rotated by us or by another process: either way, write to the new file. If the
            // rotation failed, keep appending to the full one rather than losing the line.
            if self.rotate(&file).unwrap_or(false) {
                drop(file);
                file = self.open()?;
            }
        }
        file.write_all(line.as_bytes())
    }

    /// Shifts `grove.log` → `.1` → `.2` → `.3` (dropping the oldest), holding a lock on
    /// `full`, the file this process found too large. Returns whether the current file is now
    /// a different one (rotated here or by someone else).
    fn rotate(&self, full: &File) -> io::Result<bool> {
        match full.try_lock() {
            Ok(()) => {}
            // Another process is rotating this very file right now.
            Err(TryLockError::WouldBlock) => return Ok(false),
            Err(TryLockError::Error(e)) => return Err(e),
        }
        let ours = full.metadata()?;
        match std::fs::metadata(&self.path) {
            Ok(now) if now.dev() == ours.dev() && now.ino() == ours.ino() => {}
            // Already rotated by another process between our open and our lock.
            _ => return Ok(true),
        }
        for i in (1..BACKUPS).rev() {
            match std::fs::rename(self.backup(i), self.backup(i + 1)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        std::fs::rename(&self.path, self.backup(1))?;
        Ok(true)
    }

    /// `grove.log.<n>`.
    pub fn backup(&self, n: u32) -> PathBuf {
        backup_path(&self.path, n)
    }
}

/// `grove.log.<n>` next to `path`.
pub fn backup_path(path: &Path, n: u32) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(format!(".{n}"));
    PathBuf::from(s)
}

fn push_outcome(fields: &mut Vec<(&str, String)>, outcome: Outcome<'_>) {
    match outcome {
        Outcome::Ok => fields.push(("outcome", "ok".into())),
        Outcome::Failed { code, message } => {
            fields.push(("outcome", "failed".into()));
            fields.push(("code", code.to_string()));
            fields.push(("error", message.to_string()));
        }
    }
}

/// `<time> <LEVEL> - <msg> pid=… key=value …\n`, values quoted when needed and secrets
/// redacted.
fn format_line(time: &str, level: Level, msg: &str, fields: &[(&str, String)]) -> String {
    let mut line = format!(
        "{time} {} - {msg} pid={}",
        level.as_str(),
        std::process::id()
    );
    for (k, v) in fields {
        line.push(' ');
        line.push_str(k);
        line.push('=');
        line.push_str(&quote(&redact::secrets(v)));
    }
    line.push('\n');
    line
}

/// A logfmt value: bare when it is plain, else double-quoted with escapes.
fn quote(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '"' && c != '=' && c != '\\');
    if plain {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The last `n` lines of the log, oldest first, reading into `grove.log.1` when the current
/// file is shorter. `Ok(empty)` when there is no log yet.
pub fn tail(path: &Path, n: usize) -> io::Result<Vec<String>> {
    let mut lines: Vec<String> = Vec::new();
    for file in [path.to_path_buf(), backup_path(path, 1)] {
        let text = match std::fs::read(&file) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let mut older: Vec<String> = text.lines().map(str::to_string).collect();
        older.append(&mut lines);
        lines = older;
        if lines.len() >= n {
            break;
        }
    }
    let skip = lines.len().saturating_sub(n);
    Ok(lines.split_off(skip))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn read(p: &Path) -> String {
        String::from_utf8(std::fs::read(p).unwrap()).unwrap()
    }

    #[test]
    fn lines_are_logfmt_with_secrets_redacted() {
        let line = format_line(
            "2026-01-02 03:04:05",
            Level::Info,
            "git",
            &[
                (
                    "cmd",
                    "git clone -- https://me:tok@example.com/a.git /x y".into(),
                ),
                ("repo", "/src/api".into()),
                ("outcome", "ok".into()),
                ("error", "say \"hi\"\nthen=go".into()),
            ],
        );
        let pid = std::process::id();
        assert_eq!(
            line,
            format!(
                "2026-01-02 03:04:05 INFO - git pid={pid} \
                 cmd=\"git clone -- https://[REDACTED]@example.com/a.git /x y\" repo=/src/api \
                 outcome=ok error=\"say \\\"hi\\\"\\nthen=go\"\n"
            )
        );
    }

    /// The secrets corpus in every kind of line the log writes: a command line, its
    /// error, a git command line and git's stderr (`-v`).
    #[test]
    fn no_secret_of_the_corpus_reaches_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grove.log");
        let log = Log::new(path.clone(), true, MAX_BYTES * 64);
        let shapes = e2e::secrets::shapes();
        for s in &shapes {
            let t = &s.text;
            log.command(
                &format!("gw add-repo w1 -r {t} --format json"),
                Outcome::Failed {
                    code: "GIT_FAILED",
                    message: &format!("`git clone -- {t} /r/x` failed: fatal: {t}"),
                },
                Duration::from_millis(3),
                true,
            );
            log.git(
                &format!("git -c http.extraHeader={t} fetch"),
                Path::new("/src/api"),
                Outcome::Failed {
                    code: "exit status: 128",
                    message: t,
                },
                Duration::from_millis(3),
                &format!("remote: {t}\nfatal: Authentication failed for '{t}'"),
            );
        }
        let text = read(&path);
        for s in &shapes {
            // As written, and as logfmt quotes it.
            let quoted = quote(&s.secret);
            let quoted = quoted.trim_matches('"');
            assert!(
                !text.contains(&s.secret) && !text.contains(quoted),
                "{:?} is in the log",
                s.secret
            );
        }
        assert_eq!(text.lines().count(), 2 * shapes.len());
    }

    #[test]
    fn rotates_at_the_limit_keeping_three_backups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grove.log");
        let log = Log::new(path.clone(), false, 200);
        let mut written = 0;
        // Enough lines for five rotations.
        while !log.backup(3).exists() || written < 40 {
            log.command(
                &format!("gw create ws{written}"),
                Outcome::Ok,
                Duration::ZERO,
                true,
            );
            written += 1;
            assert!(std::fs::metadata(&path).unwrap().len() <= 200);
        }
        assert!(!log.backup(4).exists(), "three backups at most");
        for n in 1..=3 {
            let text = read(&log.backup(n));
            assert!(text.ends_with('\n') && text.len() <= 200, "{text}");
        }
        // Newest last: the current file holds the last command, .1 the ones before it.
        let last = read(&path);
        assert!(last.contains(&format!("ws{}", written - 1)), "{last}");
        let tail = tail(&path, 1000).unwrap();
        let n = |l: &String| -> usize {
            l.split("cmd=\"gw create ws")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let numbers: Vec<usize> = tail.iter().map(n).collect();
        assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{numbers:?}");
        assert_eq!(*numbers.last().unwrap(), written - 1);
        assert_eq!(super::tail(&path, 2).unwrap().len(), 2);
    }

    #[test]
    fn debug_lines_only_when_verbose() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grove.log");
        Log::new(path.clone(), false, MAX_BYTES).command(
            "gw list",
            Outcome::Ok,
            Duration::ZERO,
            false,
        );
        assert!(!path.exists());
        let v = Log::new(path.clone(), true, MAX_BYTES);
        v.command("gw list", Outcome::Ok, Duration::ZERO, false);
        v.git(
            "git worktree add x",
            Path::new("/r"),
            Outcome::Failed {
                code: "exit status 128",
                message: "fatal: nope",
            },
            Duration::from_millis(12),
            "fatal: nope\n",
        );
        let text = read(&path);
        assert!(
            text.contains(" DEBUG - command pid=") && text.contains("cmd=\"gw list\""),
            "{text}"
        );
        assert!(
            text.contains("outcome=failed code=\"exit status 128\" error=\"fatal: nope\" duration_ms=12 stderr=\"fatal: nope\""),
            "{text}"
        );
    }

    #[test]
    fn an_unwritable_log_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be, and a missing parent directory.
        let path = dir.path().join("grove.log");
        std::fs::create_dir(&path).unwrap();
        Log::new(path, false, 10).command("gw create x", Outcome::Ok, Duration::ZERO, true);
        let missing = dir.path().join("no-such-dir/grove.log");
        Log::new(missing.clone(), false, 10).command(
            "gw create x",
            Outcome::Ok,
            Duration::ZERO,
            true,
        );
        assert!(
            !missing.parent().unwrap().exists(),
            "the directory is never created"
        );
        // A rotation that cannot happen (a directory in the way of .1) keeps appending.
        let path = dir.path().join("other.log");
        std::fs::write(&path, "x".repeat(50)).unwrap();
        std::fs::create_dir(backup_path(&path, 1)).unwrap();
        std::fs::write(backup_path(&path, 1).join("f"), "occupied").unwrap();
        Log::new(path.clone(), false, 60).command("gw create y", Outcome::Ok, Duration::ZERO, true);
        assert!(read(&path).contains("gw create y"));
    }
}
