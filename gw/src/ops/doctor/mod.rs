//! `gw doctor [--fix]`: find (and repair what is safe to repair) disagreements between
//! `state.json`, the disk and git — everything grove could have made or left behind.
//!
//! Doctor is a list of independent checks ([`CHECKS`], in `checks`). Each looks at a
//! [`Checkup`] — the grove directory, the configuration and state as far as they could be
//! read, the journals, and every source repository grove knows (configured or recorded),
//! each read once — and returns [`Issue`]s: `{workspace, repo, kind, issue,
//! suggested_action, fixable}`. A fixable issue carries the [`Fix`] that repairs it;
//! `--fix` applies those (`fix`) and reports, per issue, `fixed`, `left` (with the reason)
//! or `failed`. To add a check, write a `fn(&Checkup) -> Vec<Issue>` and list it in
//! `CHECKS`; a new kind of repair is a new `Fix` variant. Every check is linear in the
//! number of workspaces and worktrees.
//!
//! Doctor never fails because a file is unreadable: a corrupt `config.toml` or
//! `state.json` is itself an issue (naming the file), never fixed and never overwritten.
//!
//! Interrupted operations (journals in `operations/` whose process is gone) are issues too;
//! `--fix` finishes or rolls them back first (`ops::recover`), then checks again and
//! repairs what is left. An operation whose git processes are still at work is not touched:
//! `--fix` then says `TRANSIENT`, to be run again in a moment.

mod checks;
mod fix;
mod verdict;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::git;
use crate::home::GroveHome;
use crate::ops::recover::{self, Interrupted};
use crate::ops::safety::territory::Territory;
use crate::ops::{Ctx, Outcome};
use crate::parallel;
use crate::state::State;

pub use checks::CHECKS;

#[derive(Debug, Clone, Copy)]
pub struct DoctorOptions {
    /// Repair what is safe to repair.
    pub fix: bool,
}

/// A stable identifier of the kind of an issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum IssueKind {
    InterruptedOperation,
    /// An interrupted operation whose git processes still hold its lock.
    OperationFinishing,
    JournalUnreadable,
    ConfigUnreadable,
    NotInitialized,
    StateUnreadable,
    WorkspaceInTrash,
    WorkspaceDirMissing,
    /// State records a workspace directory outside the workspace directory.
    WorkspaceOutside,
    SourceRepoMissing,
    SourceRepoUnreadable,
    WorktreeMissing,
    WorktreeNotRegistered,
    /// A worktree's `.git` names another worktree's registration.
    WorktreeCrossLinked,
    BranchMissing,
    /// A rebase, merge, … left in progress in a worktree.
    OperationInProgress,
    /// A git lock file that no process holds.
    StaleLock,
    /// A temporary file of one of grove's own writes, left by a killed process.
    StaleTempFile,
    StaleRegistration,
    UntrackedWorktree,
    /// An entry of the workspace directory that no workspace records.
    StrayDirectory,
    TrashOfWorkspace,
    LeftoverTrash,
    /// A retained trash entry whose record cannot be read.
    TrashUnreadable,
    /// A reference under `refs/grove/trash/` whose trash entry is gone.
    OrphanTrashRef,
    McpLeftover,
}

impl std::fmt::Display for IssueKind {
    /// The stable identifier, as in the JSON output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = serde_json::to_value(self).map_err(|_| std::fmt::Error)?;
        f.write_str(v.as_str().unwrap_or_default())
    }
}

/// One problem found.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Issue {
    pub workspace: Option<String>,
    pub repo: Option<String>,
    pub kind: IssueKind,
    pub issue: String,
    pub suggested_action: String,
    /// `gw doctor --fix` can repair it.
    pub fixable: bool,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::legacy::cleanup::paths::lossy_opt"
    )]
    pub path: Option<PathBuf>,
    /// With `--fix`: `fixed`, `left` or `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// With `--fix`: why it was left, or how the fix failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip)]
    pub fix: Option<Fix>,
    /// With `--fix`: an interrupted operation recovery would not act on (`RECOVERY_REFUSED`).
    #[serde(skip)]
    pub refused: bool,
}

impl Issue {
    fn new(kind: IssueKind, issue: impl Into<String>, action: impl Into<String>) -> Issue {
        Issue {
            workspace: None,
            repo: None,
            kind,
            issue: issue.into(),
            suggested_action: action.into(),
            fixable: false,
            path: None,
            outcome: None,
            detail: None,
            fix: None,
            refused: false,
        }
    }

    fn workspace(mut self, name: &str) -> Issue {
        self.workspace = Some(name.to_string());
        self
    }

    fn repo(mut self, name: &str) -> Issue {
        self.repo = Some(name.to_string());
        self
    }

    fn path(mut self, p: &Path) -> Issue {
        self.path = Some(p.to_path_buf());
        self
    }

    fn fix(mut self, fix: Fix) -> Issue {
        self.fixable = true;
        self.fix = Some(fix);
        self
    }

    /// What tells two issues apart across passes of `--fix`.
    fn key(
        &self,
    ) -> (
        IssueKind,
        Option<&PathBuf>,
        Option<&String>,
        Option<&String>,
    ) {
        (
            self.kind,
            self.path.as_ref(),
            self.workspace.as_ref(),
            self.repo.as_ref(),
        )
    }
}

/// A repair `--fix` knows how to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// Removes `source`'s registration of the worktree at `path`, whose directory is gone.
    RemoveRegistration { source: PathBuf, path: PathBuf },
    /// Drops the state entry of a workspace (whose directory is gone, or lies outside the
    /// workspace directory), after removing its worktrees' `registrations` (source, path).
    /// Nothing on disk is touched; branches are kept (`gw prune branches` finds them).
    DropWorkspace {
        name: String,
        registrations: Vec<(PathBuf, PathBuf)>,
    },
    /// Drops one repository entry of a workspace, after removing its registration.
    DropRepo {
        workspace: String,
        repo: String,
        registration: Option<(PathBuf, PathBuf)>,
    },
    /// `git worktree repair <path>` in the source: re-links a worktree that moved.
    Repair { source: PathBuf, path: PathBuf },
    /// Removes a worktree no workspace records that holds nothing but files of its commit.
    RemoveWorktree { source: PathBuf, path: PathBuf },
    /// Removes a directory that holds nothing but empty directories.
    RemoveEmptyDir { path: PathBuf },
    /// Removes a lock or temporary file no process has open.
    RemoveStaleLock { path: PathBuf },
    /// Removes a leftover entry of `.trash/` that belongs to no workspace.
    RemoveTrash { path: PathBuf },
    /// Removes a reference that kept a branch's tip for a trash entry that is gone.
    RemoveKeptRef {
        source: PathBuf,
        name: String,
        oid: String,
    },
    /// Finishes or rolls back an interrupted operation from its journal (`ops::recover`).
    Recover { id: String },
    /// Removes the Go grove's MCP leftovers (grove's `.mcp.json` entries, the
    /// announcements database) with the same code as `gw-migrate --apply`, backups kept.
    McpCleanup,
}

impl Fix {
    /// Whether the repair removes something (a registration, a state entry, bytes).
    fn is_destructive(&self) -> bool {
        !matches!(self, Fix::Repair { .. } | Fix::McpCleanup)
    }
}

/// A source repository, read once for every check.
pub struct Source {
    /// Its registered worktrees, or why they cannot be read.
    pub worktrees: std::result::Result<Vec<git::WorktreeInfo>, String>,
    /// Its registrations by the canonical path of their worktree: the path git recorded.
    pub registered: BTreeMap<PathBuf, PathBuf>,
    /// Its local branches.
    pub branches: BTreeSet<String>,
    /// Its git directory (`.git`), where its lock files would be.
    pub git_dir: Option<PathBuf>,
}

/// What the checks look at.
pub struct Checkup<'a> {
    pub home: &'a GroveHome,
    /// `None` when missing or unreadable (see `config_error`).
    pub config: Option<&'a Config>,
    pub config_error: Option<String>,
    /// `None` when unreadable (see `state_error`); a missing file is an empty state.
    pub state: Option<&'a State>,
    pub state_error: Option<String>,
    /// Interrupted operations (and unreadable journals) in `operations/`; `Err` when the
    /// directory cannot be read.
    pub interrupted: std::result::Result<Vec<Interrupted>, String>,
    /// What readable journals (of running or interrupted operations) made or moved: that
    /// operation's, not leftovers. Canonical.
    pub journaled: BTreeSet<PathBuf>,
    pub territory: &'a Territory,
    /// Every source repository grove knows: configured (found in the repo dirs) and
    /// recorded in state, by path.
    pub sources: BTreeMap<PathBuf, Source>,
    /// The entries of the workspace directories' trash that are not retained (no record):
    /// leftovers of quarantines, or being made or purged.
    pub trash: Vec<PathBuf>,
    /// The retained entries (`gw restore` can bring them back), and unreadable records.
    pub kept: crate::ops::trash::Contents,
    /// The workspace directories as configured, and with symlinks resolved.
    pub roots: Vec<(PathBuf, PathBuf)>,
    /// The Go grove's MCP leftovers, and the directories gw-migrate has a claim on (which
    /// doctor's own repairs leave alone).
    pub leftovers: crate::legacy::cleanup::Leftovers,
}

impl Checkup<'_> {
    /// `path` with symlinks resolved, for comparing paths. One grove made inside a workspace
    /// directory is resolved by that directory's prefix (no system call: doctor compares
    /// tens of thousands of them); any other through the file system.
    pub fn canonical(&self, path: &Path) -> Option<PathBuf> {
        for (raw, canonical) in &self.roots {
            if let Ok(rest) = path.strip_prefix(raw)
                && rest
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
            {
                return Some(canonical.join(rest));
            }
        }
        crate::fsx::canonical_lenient(path)
    }

    /// The registration of `path` in `source`, if it has one: (source, path as git
    /// recorded it).
    pub fn registration(&self, source: &Path, path: &Path) -> Option<(PathBuf, PathBuf)> {
        let s = self.sources.get(source)?;
        let recorded = s.registered.get(&self.canonical(path)?)?;
        Some((source.to_path_buf(), recorded.clone()))
    }
}

/// A check: independent of the others, it returns the issues it finds.
pub type Check = fn(&Checkup<'_>) -> Vec<Issue>;

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DoctorReport {
    /// No issue was found (or, with `--fix`, none is left).
    pub healthy: bool,
    pub issues: Vec<Issue>,
    pub count: usize,
    /// With `--fix`: how many issues were fixed, left alone and failed.
    pub fixed: usize,
    pub left: usize,
    pub failed: usize,
    /// `--fix` was given.
    pub fix: bool,
    /// What the trash holds (no issue: `--fix` never purges it; `gw trash` lists it).
    pub trash: crate::ops::trash::TrashSummary,
    #[serde(skip)]
    pub failure: Option<Error>,
}

impl DoctorReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        if !self.fix && self.issues.iter().any(|i| i.fixable) {
            return vec![NextAction::write(
                "Repair what is safe to repair",
                &["gw", "doctor", "--fix", "--format", "json"],
            )];
        }
        Vec::new()
    }
}

/// How many times `--fix` looks again after fixing: a repair can make another one possible
/// (a stray directory is empty once the worktree in it is removed).
const FIX_PASSES: usize = 3;

/// `gw doctor [--fix]`.
pub fn doctor(ctx: &Ctx<'_>, opts: DoctorOptions) -> Result<DoctorReport> {
    if opts.fix {
        // Right after a command was killed, its git processes may still be finishing: they
        // are waited for, as a lock is, rather than answered with `TRANSIENT` at once.
        recover::wait_for_finishing(ctx);
    }
    let mut issues = with_checkup(ctx, run_checks);
    let mut report = DoctorReport {
        healthy: issues.is_empty(),
        count: issues.len(),
        issues: Vec::new(),
        fixed: 0,
        left: 0,
        failed: 0,
        fix: opts.fix,
        trash: crate::ops::trash::TrashSummary::default(),
        failure: None,
    };
    if opts.fix {
        let finishing = issues
            .iter()
            .any(|i| i.kind == IssueKind::OperationFinishing);
        if issues
            .iter()
            .any(|i| matches!(i.fix, Some(Fix::Recover { .. })))
        {
            // Interrupted operations first: finishing or undoing them changes what the
            // other checks see, so those run again afterwards.
            let mut ops: Vec<Issue> = issues
                .into_iter()
                .filter(|i| is_operation(i.kind))
                .collect();
            fix::recover(ctx, &mut ops);
            let rest = with_checkup(ctx, run_checks)
                .into_iter()
                .filter(|i| !is_operation(i.kind));
            ops.extend(rest);
            issues = ops;
        }
        for pass in 0..FIX_PASSES {
            let fixed_before = count(&issues, Outcome::Fixed);
            fix::apply(ctx, &mut issues);
            if pass + 1 == FIX_PASSES || count(&issues, Outcome::Fixed) == fixed_before {
                break;
            }
            // Look again: what a repair made repairable (a directory emptied by removing the
            // worktree in it) replaces what was left, or is added.
            let mut more = false;
            for issue in with_checkup(ctx, run_checks)
                .into_iter()
                .filter(|i| i.fixable)
            {
                match issues.iter_mut().find(|i| i.key() == issue.key()) {
                    Some(old) if old.fix.is_none() => {
                        *old = issue;
                        more = true;
                    }
                    Some(_) => {}
                    None => {
                        issues.push(issue);
                        more = true;
                    }
                }
            }
            if !more {
                break;
            }
        }
        report.fixed = count(&issues, Outcome::Fixed);
        report.failed = count(&issues, Outcome::Failed);
        report.left = issues.len() - report.fixed - report.failed;
        report.count = issues.len();
        report.healthy = report.fixed == issues.len();
        report.failure = verdict::after_fix(&report, &issues, finishing);
    } else {
        report.failure = verdict::found(&issues);
    }
    report.issues = issues;
    report.trash = crate::ops::trash::summary(ctx);
    Ok(report)
}

fn count(issues: &[Issue], outcome: Outcome) -> usize {
    issues.iter().filter(|i| i.outcome == Some(outcome)).count()
}

fn is_operation(kind: IssueKind) -> bool {
    matches!(
        kind,
        IssueKind::InterruptedOperation
            | IssueKind::OperationFinishing
            | IssueKind::JournalUnreadable
    )
}

/// Reads configuration, state, the journals and every source repository as far as they can
/// be read, and hands them to `f`.
fn with_checkup<T>(ctx: &Ctx<'_>, f: impl FnOnce(&Checkup<'_>) -> T) -> T {
    let (config, config_error) = match Config::load_optional(&ctx.home, ctx.env) {
        Ok(c) => (c, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let (state, state_error) = match ctx.store.load() {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let journaled = recover::journaled_paths(ctx)
        .iter()
        .filter_map(|p| crate::fsx::canonical_lenient(p))
        .collect();
    let roots = config
        .as_ref()
        .map(|c| c.workspace_dir.clone())
        .into_iter()
        .chain([ctx.home.default_workspace_dir()])
        .filter_map(|raw| crate::fsx::canonical_lenient(&raw).map(|c| (raw, c)))
        .collect();
    let checkup = Checkup {
        home: &ctx.home,
        config: config.as_ref(),
        config_error,
        state: state.as_ref(),
        state_error,
        interrupted: recover::interrupted(ctx).map_err(|e| e.message.clone()),
        journaled,
        territory: ctx.territory(),
        sources: sources(ctx, config.as_ref(), state.as_ref()),
        trash: crate::ops::trash::entries(ctx)
            .into_iter()
            .filter(|e| !crate::ops::trash::is_retained(e))
            .collect(),
        kept: crate::ops::trash::contents(ctx),
        roots,
        leftovers: crate::legacy::cleanup::Leftovers::of(
            &ctx.home,
            config.as_ref(),
            state.as_ref(),
        ),
    };
    f(&checkup)
}

/// Reads every source repository grove knows, once, in parallel.
fn sources(
    ctx: &Ctx<'_>,
    config: Option<&Config>,
    state: Option<&State>,
) -> BTreeMap<PathBuf, Source> {
    let paths: Vec<PathBuf> = crate::ops::repos::known_sources(ctx, config, state)
        .into_iter()
        .filter(|p| p.is_dir())
        .collect();
    let read = parallel::map(&paths, |p| match git::Repo::open(p) {
        Ok(repo) => {
            let worktrees = repo.worktrees().map_err(|e| e.to_string());
            let registered = worktrees
                .iter()
                .flatten()
                .filter(|w| !w.is_main)
                .filter_map(|w| Some((crate::fsx::canonical_lenient(&w.path)?, w.path.clone())))
                .collect();
            Source {
                worktrees,
                registered,
                branches: repo
                    .local_branches()
                    .map(|b| b.into_iter().map(|b| b.name).collect())
                    .unwrap_or_default(),
                git_dir: Some(repo.common_dir()),
            }
        }
        Err(e) => Source {
            worktrees: Err(e.to_string()),
            registered: BTreeMap::new(),
            branches: BTreeSet::new(),
            git_dir: None,
        },
    });
    paths.into_iter().zip(read).collect()
}

/// Runs every check.
pub fn run_checks(checkup: &Checkup<'_>) -> Vec<Issue> {
    CHECKS
        .iter()
        .flat_map(|(_, check)| check(checkup))
        .collect()
}
