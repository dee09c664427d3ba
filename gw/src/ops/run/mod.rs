//! `gw run`: start each repository's dev processes side by side, each in its worktree, and
//! stop them all together.
//!
//! A repository's `.grove.toml` `run` commands (string or list, run in order) start after
//! its `pre_run` commands and are followed by its `post_run` commands. Output goes, line by
//! line, to [`Events::process_output`](crate::ops::Events::process_output). Every process
//! has a process group of its own, so stopping one (Ctrl-C, SIGTERM, `--timeout`) ends
//! everything it started; nothing outlives `gw run`.
//!
//! Each repository gets a thread of its own rather than a slot in `parallel::map`, whose
//! pool is only as large as the core count: every process must run at the same time.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use std::sync::Arc;

use serde::Serialize;

use crate::config::{REPO_FILE as FILE_NAME, RepoConfig};
use crate::duration;
use crate::error::{Error, Result};
use crate::ops::hooks::{Vars, repo_command, repo_shell};
use crate::ops::ports::{Port, Stack};
use crate::ops::{Ctx, Label, resolve, trust};
use crate::proc::{self, Status, Stop, StopReason};
use crate::state::{RepoEntry, Workspace};

mod checks;
use checks::{cannot_start, check_ports, failed_detail, failure, stopped_detail};

/// How many trailing output lines a failure's `detail` keeps.
const DETAIL_LINES: usize = 10;

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The workspace; `None` for the one containing the current directory.
    pub name: Option<String>,
    /// Repositories to run; empty for all of the workspace's.
    pub repos: Vec<String>,
    /// Stop everything after this long.
    pub timeout: Option<Duration>,
    /// Turn SIGINT and SIGTERM into a stop (the CLI does; in-process tests leave the test
    /// process's signals alone).
    pub signals: bool,
    /// Between SIGTERM and SIGKILL when stopping.
    pub grace: Duration,
    /// `gw run -- CMD`: this command line in every repository (of `repos`) instead of
    /// their `.grove.toml` `run`; their ports are not checked.
    pub command: Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RunReport {
    pub workspace: String,
    pub path: PathBuf,
    /// The command `gw run -- CMD` ran in each repository; `null` for their `run`.
    pub command: Option<String>,
    /// The workspace's slot: its ports are the block it selects.
    pub slot: u32,
    /// Every port of the workspace, as its processes were told them.
    pub ports: Vec<Port>,
    pub port_count: usize,
    /// What stopped the processes still running: `signal` (Ctrl-C or SIGTERM) or
    /// `timeout` (`--timeout`); `null` when every process ended on its own.
    pub stopped_by: Option<StopCause>,
    /// One entry per repository of the workspace (or of `-r`), in workspace order.
    pub repos: Vec<RunResult>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// `HOOK_FAILED` when a repository failed or did not start.
    #[serde(skip)]
    pub error: Option<Error>,
}

/// How one repository's `run` went.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RunResult {
    pub repo: String,
    pub outcome: RunOutcome,
    /// The exit code of the `run` command; `null` when it did not exit with one by itself
    /// (not started, skipped, stopped, or killed by a signal).
    pub exit_code: Option<i32>,
    /// How long the `run` command ran, in milliseconds; 0 when it did not start.
    pub duration_ms: u64,
    /// Why, for every outcome but `exited`: for `failed` the command, its status and the
    /// last lines of its output.
    pub detail: Option<String>,
}

/// How a repository's `run` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Exited with status 0 by itself.
    Exited,
    /// Exited with a non-zero status, or was killed by a signal grove did not send.
    Failed,
    /// Never started: `pre_run` failed, the command is missing or not executable, or the
    /// worktree is missing.
    NotStarted,
    /// Stopped by grove: Ctrl-C, SIGTERM or `--timeout`.
    Stopped,
    /// The repository's `.grove.toml` defines no `run`.
    Skipped,
}

impl RunOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Exited => "exited",
            RunOutcome::Failed => "failed",
            RunOutcome::NotStarted => "not_started",
            RunOutcome::Stopped => "stopped",
            RunOutcome::Skipped => "skipped",
        }
    }

    /// Whether this outcome makes the whole run fail.
    pub fn is_failure(self) -> bool {
        matches!(self, RunOutcome::Failed | RunOutcome::NotStarted)
    }
}

/// What stopped the processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StopCause {
    Signal,
    Timeout,
}

impl RunReport {
    pub fn failure(&self) -> Option<&Error> {
        self.error.as_ref()
    }
}

/// Runs the workspace's dev processes (or `opts.command` in each repository) until they
/// have all ended, and reports how each did.
pub fn run(ctx: &Ctx<'_>, opts: &RunOptions) -> Result<RunReport> {
    let config = ctx.config()?;
    // A workspace the Go grove recorded gets its slot here, the first time it runs.
    let state = ctx.store.load_with_slots()?;
    let ws = resolve::workspace(&state, opts.name.as_deref(), &ctx.env.cwd)?;
    resolve::require_dir(ws)?;
    let entries = select(ws, &opts.repos)?;
    let mut jobs = Vec::with_capacity(entries.len());
    // The `.grove.toml` read for each repository (none for `gw run -- CMD`).
    let mut configs = Vec::new();
    for entry in entries {
        let commands = match &opts.command {
            Some(command) => Commands {
                run: vec![command.clone()],
                literal: true,
                ..Commands::default()
            },
            None => {
                let config = RepoConfig::load(&entry.source_repo)?;
                let commands = Commands::of(&config);
                configs.push((entry, config));
                commands
            }
        };
        jobs.push((entry, commands));
    }
    if jobs.iter().all(|(_, c)| c.run.is_empty()) {
        return Err(nothing_to_run(ws, &jobs, !opts.repos.is_empty()));
    }
    // `gw run -- CMD` runs the user's own line and nothing of `.grove.toml`: only the
    // repositories' own commands need approval.
    let projects: Vec<trust::Project<'_>> = configs
        .iter()
        .filter(|(_, c)| !c.run.is_empty())
        .map(|(e, config)| trust::Project::of(e, config))
        .collect();
    trust::require(ctx, "gw run", &projects)?;
    let stack = Stack::of(ctx, &config, ws)?;
    if opts.command.is_none() {
        let starting: Vec<&str> = jobs
            .iter()
            .filter(|(_, c)| !c.run.is_empty())
            .map(|(e, _)| e.repo_name.as_str())
            .collect();
        check_ports(ws, &stack, &starting)?;
    }
    let width = jobs
        .iter()
        .filter(|(_, c)| !c.run.is_empty())
        .map(|(e, _)| e.repo_name.len())
        .max()
        .unwrap_or(0);
    let stop = Stop::new(opts.grace, opts.timeout);
    let _signals = if opts.signals {
        let guard = stop
            .on_signals()
            .map_err(|e| Error::internal(format!("cannot listen for Ctrl-C and SIGTERM: {e}")))?;
        Some(guard)
    } else {
        None
    };
    let ports = stack.ports.clone();
    let slot = stack.slot;
    let vars = Vars {
        ports: Some(Ok(Arc::new(stack))),
        ..Vars::recorded(ws)
    };
    let ran: Vec<Ran> = std::thread::scope(|s| {
        let mut index = 0;
        let handles: Vec<_> = jobs
            .iter()
            .map(|(entry, commands)| {
                if commands.run.is_empty() {
                    return None;
                }
                let label = Label {
                    name: &entry.repo_name,
                    index,
                    width,
                };
                index += 1;
                let (stop, vars) = (&stop, &vars);
                Some(s.spawn(move || run_repo(ctx, vars, entry, commands, label, stop)))
            })
            .collect();
        watch(ctx, &stop, opts.timeout, &handles);
        handles
            .into_iter()
            .zip(&jobs)
            .map(|(h, (entry, _))| match h {
                Some(h) => h
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                None => Ran::skipped(entry),
            })
            .collect()
    });
    let mut warnings = Vec::new();
    let mut repos = Vec::with_capacity(ran.len());
    for r in ran {
        warnings.extend(r.warnings);
        repos.push(r.result);
    }
    let stopped_by = stop.reason().map(|r| match r {
        StopReason::Signal(_) => StopCause::Signal,
        StopReason::Timeout => StopCause::Timeout,
    });
    // Stopped by Ctrl-C or SIGTERM: cancelled (exit 8), so `gw run && deploy` stops too;
    // a failure before it still comes first. The timeout is a bounded success.
    let error = failure(ws, &repos, opts.command.is_some()).or_else(|| match stop.reason() {
        Some(StopReason::Signal(sig)) => Some(
            Error::new(
                crate::error::Code::Cancelled,
                "cancelled: every process was stopped",
            )
            .with_details(serde_json::json!({ "signal": proc::signal_name(sig) })),
        ),
        _ => None,
    });
    Ok(RunReport {
        workspace: ws.name.clone(),
        path: ws.path.clone(),
        command: opts.command.clone(),
        slot,
        port_count: ports.len(),
        ports,
        stopped_by,
        count: repos.len(),
        repos,
        warnings,
        error,
    })
}

/// What runs in one repository: `pre_run`, `run` and `post_run` of its `.grove.toml`, or
/// the one command given to `gw run -- CMD`.
#[derive(Debug, Default)]
struct Commands {
    pre_run: Vec<String>,
    run: Vec<String>,
    post_run: Vec<String>,
    /// The commands run as they are, without placeholders (`gw run -- CMD`: the user's
    /// own line, whose environment has the same values).
    literal: bool,
}

impl Commands {
    fn of(config: &RepoConfig) -> Commands {
        Commands {
            pre_run: config.pre_run.clone(),
            run: config.run.clone(),
            post_run: config.post_run.clone(),
            literal: false,
        }
    }
}

/// The command line `gw run -- ARGS…` runs in each repository: one argument is a shell
/// command line (so `$PORT` is the repository's own), several are a program and its
/// arguments, each passed as it is.
pub fn command_line(args: &[String]) -> Option<String> {
    match args {
        [] => None,
        [one] => Some(one.clone()),
        many => Some(
            many.iter()
                .map(|a| proc::shell_quote(a))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

/// The repositories named in `-r` (in workspace order), or all of them.
fn select<'w>(ws: &'w Workspace, names: &[String]) -> Result<Vec<&'w RepoEntry>> {
    if names.is_empty() {
        return Ok(ws.repos.iter().collect());
    }
    let unknown: Vec<&str> = names
        .iter()
        .filter(|n| !ws.repos.iter().any(|r| &r.repo_name == *n))
        .map(String::as_str)
        .collect();
    if let Some(first) = unknown.first() {
        let mut e = crate::ops::resolve::repo_not_in(ws, first);
        if let Some(d) = e.details.as_mut() {
            d["unknown"] = serde_json::json!(unknown);
        }
        return Err(e);
    }
    Ok(ws
        .repos
        .iter()
        .filter(|r| names.contains(&r.repo_name))
        .collect())
}

fn nothing_to_run(ws: &Workspace, jobs: &[(&RepoEntry, Commands)], chosen: bool) -> Error {
    let files: Vec<PathBuf> = jobs
        .iter()
        .map(|(e, _)| e.source_repo.join(FILE_NAME))
        .collect();
    let whose = if chosen {
        "none of the chosen repositories".to_string()
    } else {
        format!("no repository of workspace `{}`", ws.name)
    };
    let example = files
        .first()
        .map(|f| f.display().to_string())
        .unwrap_or_else(|| FILE_NAME.to_string());
    Error::usage(format!("{whose} defines a `run` command in {FILE_NAME}"))
        .with_details(serde_json::json!({ "workspace": ws.name, "files": files }))
        .with_fix(format!(
            "Add `run = \"<command>\"` (or a list) to the {FILE_NAME} in a repository's main checkout, e.g. {example}"
        ))
}

/// Waits for the repositories' threads, telling the person what happens when a stop is
/// requested.
fn watch<T>(
    ctx: &Ctx<'_>,
    stop: &Stop,
    timeout: Option<Duration>,
    handles: &[Option<std::thread::ScopedJoinHandle<'_, T>>],
) {
    let mut seen = 0;
    while handles.iter().flatten().any(|h| !h.is_finished()) {
        let n = stop.requests();
        if n > seen {
            seen = n;
            let message = match (n, stop.reason()) {
                (1, Some(StopReason::Timeout)) => format!(
                    "{} timeout reached: stopping every process",
                    duration::format_go(timeout.unwrap_or_default())
                ),
                (1, _) => "stopping every process (press Ctrl-C again to kill them now)".into(),
                _ => "killing every process".into(),
            };
            ctx.events.progress(&message);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One repository's result and the warnings its `post_run` left.
struct Ran {
    result: RunResult,
    warnings: Vec<String>,
}

impl Ran {
    fn skipped(entry: &RepoEntry) -> Ran {
        let file = entry.source_repo.join(FILE_NAME);
        Ran::new(
            entry,
            RunOutcome::Skipped,
            None,
            Duration::ZERO,
            Some(format!("no `run` command in {}", file.display())),
        )
    }

    fn new(
        entry: &RepoEntry,
        outcome: RunOutcome,
        exit_code: Option<i32>,
        ran: Duration,
        detail: Option<String>,
    ) -> Ran {
        Ran {
            result: RunResult {
                repo: entry.repo_name.clone(),
                outcome,
                exit_code,
                duration_ms: u64::try_from(ran.as_millis()).unwrap_or(u64::MAX),
                detail,
            },
            warnings: Vec::new(),
        }
    }
}

/// The last lines a command printed (both streams, in the order they were read), and
/// apart its last lines on stderr: the two streams come through two pipes, so a last
/// error line can be read before the output written ahead of it, and fall out of the
/// merged tail (`seq 200; echo FATAL >&2; exit 1`: the issue-30 adversary).
#[derive(Default)]
struct Tail {
    lines: VecDeque<String>,
    errors: VecDeque<String>,
}

/// How many of the last stderr lines a failure's `detail` keeps whatever else came after.
const ERROR_LINES: usize = 3;

impl Tail {
    fn push(&mut self, stream: proc::Stream, line: &str) {
        fn keep(q: &mut VecDeque<String>, max: usize, line: &str) {
            if q.len() == max {
                q.pop_front();
            }
            q.push_back(line.to_string());
        }
        keep(&mut self.lines, DETAIL_LINES, line);
        if stream == proc::Stream::Stderr {
            keep(&mut self.errors, ERROR_LINES, line);
        }
    }

    /// The merged tail, then whichever of the last stderr lines it lost.
    fn text(&self) -> String {
        let mut lines: Vec<&str> = self.lines.iter().map(String::as_str).collect();
        let lost: Vec<&str> = self
            .errors
            .iter()
            .map(String::as_str)
            .filter(|e| !lines.contains(e))
            .collect();
        lines.extend(lost);
        lines.join("\n")
    }
}

/// `pre_run`, `run` and `post_run` of one repository, on its own thread.
fn run_repo(
    ctx: &Ctx<'_>,
    vars: &Vars,
    entry: &RepoEntry,
    config: &Commands,
    label: Label<'_>,
    stop: &Stop,
) -> Ran {
    let repo = entry.repo_name.as_str();
    let cwd = entry.worktree_path.as_path();
    let mut tail = Tail::default();
    let supervise = |command: &str, after: usize, tail: &mut Tail| {
        *tail = Tail::default();
        let cmd = match config.literal {
            true => repo_shell(ctx, command, repo, cwd, vars),
            false => repo_command(ctx, command, repo, cwd, vars)?,
        };
        cmd.supervise(stop, after, &mut |stream, line| {
            ctx.events.process_output(&label, line);
            tail.push(stream, line);
        })
        .map_err(|e| e.to_string())
    };
    let not_started = |why: String| {
        Ran::new(
            entry,
            RunOutcome::NotStarted,
            None,
            Duration::ZERO,
            Some(why),
        )
    };
    if !cwd.is_dir() {
        return not_started(format!("the worktree `{}` is missing", cwd.display()));
    }
    for command in &config.pre_run {
        match supervise(command, 0, &mut tail) {
            Ok(s) if s.success() => {}
            Ok(Status::Stopped) => {
                let why = format!("{} during pre_run `{command}`", stopped_detail(stop));
                return Ran::new(entry, RunOutcome::Stopped, None, Duration::ZERO, Some(why));
            }
            Ok(s) => return not_started(failed_detail(&format!("pre_run `{command}`"), s, &tail)),
            Err(e) => return not_started(format!("pre_run `{command}` could not start: {e}")),
        }
    }
    let started = Instant::now();
    let mut ran = None;
    for (i, command) in config.run.iter().enumerate() {
        // The first command not starting means nothing ran; a later one means the run
        // broke off.
        let broken = if i == 0 {
            RunOutcome::NotStarted
        } else {
            RunOutcome::Failed
        };
        if let Some(why) = cannot_start(command, cwd, ctx.env.path.as_deref()) {
            ran = Some((broken, None, Some(why)));
            break;
        }
        let (outcome, code, detail) = match supervise(command, 0, &mut tail) {
            Ok(s) if s.success() => continue,
            Ok(Status::Stopped | Status::TimedOut) => {
                (RunOutcome::Stopped, None, Some(stopped_detail(stop)))
            }
            Ok(s @ Status::Exited(code)) => (
                RunOutcome::Failed,
                Some(code),
                Some(failed_detail(&format!("`{command}`"), s, &tail)),
            ),
            Ok(s @ Status::Signaled(_)) => (
                RunOutcome::Failed,
                None,
                Some(failed_detail(&format!("`{command}`"), s, &tail)),
            ),
            Err(e) => (broken, None, Some(e.to_string())),
        };
        ran = Some((outcome, code, detail));
        break;
    }
    let elapsed = started.elapsed();
    let (outcome, code, detail) = ran.unwrap_or((RunOutcome::Exited, Some(0), None));
    let ran_for = if outcome == RunOutcome::NotStarted {
        Duration::ZERO
    } else {
        elapsed
    };
    let mut result = Ran::new(entry, outcome, code, ran_for, detail);
    // `post_run` cleans up after `pre_run`, so it runs whatever became of `run`, and only
    // a stop requested after it began ends it.
    let seen = stop.requests();
    for command in &config.post_run {
        match supervise(command, seen, &mut tail) {
            Ok(s) if s.success() => {}
            Ok(Status::Stopped) => {
                let why = format!("{repo}: post_run `{command}` was stopped");
                result.warnings.push(why);
                break;
            }
            Ok(s) => {
                let why = format!("{repo}: post_run `{command}` failed ({s})");
                result.warnings.push(why);
                break;
            }
            Err(e) => {
                result.warnings.push(format!("{repo}: {e}"));
                break;
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::{DETAIL_LINES, Tail};
    use crate::proc::Stream;

    #[test]
    fn the_last_error_line_is_kept_whichever_pipe_was_read_first() {
        let mut tail = Tail::default();
        // Read in this order from the two pipes; written the other way round.
        tail.push(Stream::Stderr, "FATAL: boom");
        for i in 1..=200 {
            tail.push(Stream::Stdout, &i.to_string());
        }
        let text = tail.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), DETAIL_LINES + 1, "{text}");
        assert_eq!(lines[DETAIL_LINES - 1], "200");
        assert_eq!(lines[DETAIL_LINES], "FATAL: boom");

        // Read in order: nothing is said twice.
        let mut tail = Tail::default();
        tail.push(Stream::Stdout, "working");
        tail.push(Stream::Stderr, "FATAL: boom");
        assert_eq!(tail.text(), "working\nFATAL: boom");
    }
}
