//! Operations: one use case per module. Each takes plain options and returns a typed
//! report; none of them prints, parses arguments or prompts. Live progress and hook output
//! go through [`Events`], which the output layer implements.

pub mod add_repo;
pub mod apply;
pub mod blueprint;
pub mod bug_report;
pub mod clone;
pub mod context;
pub mod create;
pub mod delete;
pub mod dirs;
pub mod doctor;
pub mod env;
pub mod go;
pub mod hooks;
pub mod init;
pub mod list;
pub mod names;
pub mod plan;
pub mod plugin;
pub mod ports;
pub mod preset;
pub mod prune;
pub mod recover;
pub mod remove_repo;
pub mod rename;
pub mod repos;
pub mod reset;
pub mod resolve;
pub mod restore;
pub mod run;
pub mod safety;
pub mod schema;
pub mod shell_init;
pub mod skill;
pub mod status;
pub mod sync;
pub mod teardown;
#[cfg(test)]
pub(crate) mod testutil;
pub mod trash;
pub mod trust;
pub mod tx;
pub mod warm;

use std::time::Duration;

use crate::config::Config;
use crate::env::Env;
use crate::error::Result;
use crate::home::GroveHome;
use crate::state::{State, Store};

/// Live notifications from a running operation, shown on stderr by the output layer.
pub trait Events: Sync {
    /// A step has started ("fetching api").
    fn progress(&self, message: &str);
    /// Where one repository's work is (fetching, checking out, cloning, rebasing), for the
    /// live per-repository display. Repositories are told apart by name.
    fn task(&self, _repo: &str, _task: Task<'_>) {}
    /// Whether [`Task::Count`]s are shown: when not, git is not asked to count at all.
    fn shows_counts(&self) -> bool {
        false
    }
    /// A line printed by a hook or a repository command, with the prefix that says whose.
    fn output(&self, prefix: &str, line: &str);
    /// A line from one of several processes running side by side (`gw run`), shown the
    /// way foreman and overmind do: the label's name padded to its width, then the line,
    /// each name in a colour of its own on a terminal.
    fn process_output(&self, label: &Label<'_>, line: &str) {
        self.output(&format!("{:<w$} | ", label.name, w = label.width), line);
    }
}

/// What one repository's work has come to (see [`Events::task`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task<'a> {
    /// A step begins: "fetching", "checking out", "cloning", "rebasing onto main".
    Step(&'a str),
    /// git reported how far the step is (`Updating files`, 9000 of 20000).
    Count {
        what: &'a str,
        done: u64,
        total: Option<u64>,
    },
    /// The repository's work is over.
    Done { ok: bool },
}

impl<'a> From<crate::git::Progress<'a>> for Task<'a> {
    fn from(p: crate::git::Progress<'a>) -> Task<'a> {
        Task::Count {
            what: p.what,
            done: p.done,
            total: p.total,
        }
    }
}

/// Runs one repository's step between [`Task::Step`] and [`Task::Done`] events, handing
/// `f` a progress callback for git when the counts are shown (see [`Events::shows_counts`]).
pub(crate) fn task<T, E>(
    ctx: &Ctx<'_>,
    repo: &str,
    step: &str,
    f: impl FnOnce(crate::git::OnProgress<'_>) -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    ctx.events.task(repo, Task::Step(step));
    let mut counts = |p: crate::git::Progress<'_>| ctx.events.task(repo, p.into());
    let r = f(if ctx.events.shows_counts() {
        Some(&mut counts)
    } else {
        None
    });
    ctx.events.task(repo, Task::Done { ok: r.is_ok() });
    r
}

/// `n thing` or `n things`: "1 worktree", "3 worktrees", "1 repository".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Whose output a line is, among several processes running side by side.
#[derive(Debug, Clone, Copy)]
pub struct Label<'a> {
    pub name: &'a str,
    /// Position among the processes; picks the colour.
    pub index: usize,
    /// Width of the longest name, so that the lines align.
    pub width: usize,
}

/// Events that go nowhere, for tests and for callers that do not show progress.
pub struct Quiet;

impl Events for Quiet {
    fn progress(&self, _: &str) {}
    fn output(&self, _: &str, _: &str) {}
}

/// What every operation needs: where grove lives and how to report progress.
pub struct Ctx<'a> {
    pub env: &'a Env,
    pub home: GroveHome,
    pub store: Store,
    pub events: &'a dyn Events,
    /// `--no-hooks`: global lifecycle hooks count as unconfigured.
    pub no_hooks: bool,
    /// How commands of a repository's `.grove.toml` not approved yet may be (see
    /// [`trust::require`]): refused unless the CLI says a person may be asked, or `--yes`.
    pub approval: trust::Approval<'a>,
    /// Fault injection for tests of rollback (see `tx::Faults`); always `None` in `gw`.
    pub faults: Option<std::sync::Arc<tx::Faults>>,
    territory: std::sync::OnceLock<safety::Territory>,
}

impl<'a> Ctx<'a> {
    pub fn new(env: &'a Env, events: &'a dyn Events) -> Ctx<'a> {
        let home = GroveHome::new(&env.grove_home);
        let store = Store::new(&home, tx::lock_timeout(env.lock_timeout_ms));
        Ctx {
            env,
            home,
            store,
            events,
            no_hooks: false,
            approval: trust::Approval::Refuse { yes: false },
            faults: None,
            territory: std::sync::OnceLock::new(),
        }
    }

    /// Where grove may move or delete things: the workspace directories (see
    /// [`safety::territory`]). Read once.
    pub fn territory(&self) -> &safety::Territory {
        self.territory.get_or_init(|| {
            let dir = Config::load(&self.home, self.env)
                .ok()
                .map(|c| c.workspace_dir);
            safety::Territory::new(&self.home, dir.as_deref())
        })
    }

    /// How long to wait for a lock before giving up with `TRANSIENT`.
    pub fn lock_timeout(&self) -> Duration {
        tx::lock_timeout(self.env.lock_timeout_ms)
    }

    /// The configuration; `NOT_INITIALIZED` when there is none.
    pub fn config(&self) -> Result<Config> {
        Ok(Config::load(&self.home, self.env)?)
    }

    pub fn state(&self) -> Result<State> {
        Ok(self.store.load()?)
    }
}

/// What happened to one repository in a command that touches several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// create: the worktree (and possibly its branch) was created.
    Created,
    /// create: the worktree was created, then undone because another step failed.
    RolledBack,
    /// delete: the worktree was removed.
    Removed,
    /// delete: kept, because removing it would lose work or failed.
    Kept,
    /// The step failed for this repository.
    Failed,
    /// sync: rebased onto its base.
    Rebased,
    /// sync: already contains its base.
    UpToDate,
    /// sync, reset: left alone, for the reason in `detail`.
    Skipped,
    /// reset: on the recorded branch and synced.
    Ready,
    /// reset: switched back to the recorded branch and synced.
    Switched,
    /// add-repo: the worktree was added.
    Added,
    /// add-repo: the repository was already in the workspace.
    AlreadyPresent,
    /// remove-repo: the repository was not in the workspace.
    NotFound,
    /// rename: the worktree moved with its workspace.
    Moved,
    /// restore: the worktree came back from the trash.
    Restored,
    /// prune: the workspace (or branch) was deleted.
    Deleted,
    /// doctor --fix: the issue was repaired.
    Fixed,
    /// doctor --fix: the issue was left alone, for the reason in `detail`.
    Left,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Created => "created",
            Outcome::RolledBack => "rolled_back",
            Outcome::Removed => "removed",
            Outcome::Kept => "kept",
            Outcome::Failed => "failed",
            Outcome::Rebased => "rebased",
            Outcome::UpToDate => "up_to_date",
            Outcome::Skipped => "skipped",
            Outcome::Ready => "ready",
            Outcome::Switched => "switched",
            Outcome::Added => "added",
            Outcome::AlreadyPresent => "already_present",
            Outcome::NotFound => "not_found",
            Outcome::Moved => "moved",
            Outcome::Restored => "restored",
            Outcome::Deleted => "deleted",
            Outcome::Fixed => "fixed",
            Outcome::Left => "left",
        }
    }
}

/// One repository's result: `{repo, outcome, branch, path, detail?}`.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RepoResult {
    pub repo: String,
    pub outcome: Outcome,
    pub branch: String,
    pub path: std::path::PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl RepoResult {
    /// A repository that was `removed` from a workspace; `notes` (repo, why) give the detail
    /// of those that left something behind.
    pub(crate) fn removed(r: &crate::state::RepoEntry, notes: &[(String, String)]) -> RepoResult {
        RepoResult {
            repo: r.repo_name.clone(),
            outcome: Outcome::Removed,
            branch: r.branch.clone(),
            path: r.worktree_path.clone(),
            detail: notes
                .iter()
                .find(|(n, _)| *n == r.repo_name)
                .map(|(_, w)| w.clone()),
        }
    }
}
