//! `gw doctor [--fix]`: find (and repair what is safe to repair) disagreements between
//! `state.json`, the disk and git.
//!
//! Doctor is a list of independent checks ([`CHECKS`]). Each looks at a [`Checkup`] (the
//! grove directory, the configuration and state as far as they could be read) and returns
//! [`Issue`]s: `{workspace, repo, kind, issue, suggested_action, fixable}`. A fixable issue
//! carries the [`Fix`] that repairs it; `--fix` applies those and reports, per issue,
//! `fixed`, `left` (with the reason) or `failed`. To add a check, write a `fn(&Checkup) ->
//! Vec<Issue>` and list it in `CHECKS`; a new kind of repair is a new `Fix` variant.
//!
//! Doctor never fails because a file is unreadable: a corrupt `config.toml` or
//! `state.json` is itself an issue (naming the file), never fixed and never overwritten.
//!
//! Interrupted operations (journals in `operations/` whose process is gone) are issues too;
//! `--fix` finishes or rolls them back first (`ops::recover`), then checks again and repairs
//! what is left.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::config::Config;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::home::GroveHome;
use crate::ops::recover::{self, Interrupted};
use crate::ops::tx;
use crate::ops::{Ctx, Outcome};
use crate::state::State;

#[derive(Debug, Clone, Copy)]
pub struct DoctorOptions {
    /// Repair what is safe to repair.
    pub fix: bool,
}

/// One problem found.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Issue {
    pub workspace: Option<String>,
    pub repo: Option<String>,
    /// A stable identifier of the kind of issue (`worktree_missing`, …).
    pub kind: &'static str,
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
}

impl Issue {
    fn new(kind: &'static str, issue: impl Into<String>, action: impl Into<String>) -> Issue {
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
}

/// A repair `--fix` knows how to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// `git worktree prune` in a repository: drops registrations whose directory is gone.
    PruneRegistrations { source: PathBuf },
    /// Drops the state entry of a workspace whose directory is gone, after pruning its
    /// repositories' registrations. Branches are kept (`gw prune branches` finds them).
    DropWorkspace { name: String, sources: Vec<PathBuf> },
    /// Drops one repository entry of a workspace, after pruning the source's
    /// registrations when the source exists.
    DropRepo {
        workspace: String,
        repo: String,
        source: Option<PathBuf>,
    },
    /// `git worktree repair <path>` in the source: re-links a worktree that moved.
    Repair { source: PathBuf, path: PathBuf },
    /// Removes a leftover entry of `.trash/` that belongs to no workspace.
    RemoveTrash { path: PathBuf },
    /// Finishes or rolls back an interrupted operation from its journal (`ops::recover`).
    Recover { id: String },
    /// Removes the Go grove's MCP leftovers (grove's `.mcp.json` entries, the
    /// announcements database) with the same code as `gw-migrate --apply`, backups kept.
    McpCleanup,
}

impl Fix {
    /// Whether the repair removes something (a registration, a state entry, bytes).
    fn is_destructive(&self) -> bool {
        match self {
            Fix::PruneRegistrations { .. }
            | Fix::DropWorkspace { .. }
            | Fix::DropRepo { .. }
            | Fix::RemoveTrash { .. }
            | Fix::Recover { .. } => true,
            // Backed up first, and `gw-migrate restore` undoes it.
            Fix::Repair { .. } | Fix::McpCleanup => false,
        }
    }
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
    /// Directories that readable journals (of running or interrupted operations) moved
    /// something into: trash that belongs to an operation, not leftovers.
    pub journaled: Vec<PathBuf>,
}

/// A check: independent of the others, it returns the issues it finds.
pub type Check = fn(&Checkup<'_>) -> Vec<Issue>;

/// Every check, in the order their issues are listed.
pub const CHECKS: &[(&str, Check)] = &[
    ("operations", check_operations),
    ("files", check_files),
    ("workspaces", check_workspaces),
    ("registrations", check_registrations),
    ("trash", check_trash),
    ("mcp_leftovers", check_mcp),
];

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

/// `gw doctor [--fix]`.
pub fn doctor(ctx: &Ctx<'_>, opts: DoctorOptions) -> Result<DoctorReport> {
    let mut issues = with_checkup(ctx, run_checks);
    let mut report = DoctorReport {
        healthy: issues.is_empty(),
        count: issues.len(),
        issues: Vec::new(),
        fixed: 0,
        left: 0,
        failed: 0,
        fix: opts.fix,
        failure: None,
    };
    if opts.fix {
        if issues
            .iter()
            .any(|i| matches!(i.fix, Some(Fix::Recover { .. })))
        {
            // Interrupted operations first: finishing or undoing them changes what the
            // other checks see, so those run again afterwards.
            let mut ops: Vec<Issue> = issues
                .into_iter()
                .filter(|i| i.kind == "interrupted_operation" || i.kind == "journal_unreadable")
                .collect();
            recover(ctx, &mut ops);
            let rest = with_checkup(ctx, run_checks)
                .into_iter()
                .filter(|i| i.kind != "interrupted_operation" && i.kind != "journal_unreadable");
            ops.extend(rest);
            issues = ops;
        }
        // An unreadable journal may describe work on anything: nothing is removed while
        // one exists (recovery is blocked by `recover_all` for the same reason).
        let blocked = issues
            .iter()
            .find(|i| i.kind == "journal_unreadable")
            .map(|i| i.issue.clone());
        apply(ctx, &mut issues, blocked.as_deref());
        for i in &issues {
            match i.outcome {
                Some(Outcome::Fixed) => report.fixed += 1,
                Some(Outcome::Failed) => report.failed += 1,
                _ => report.left += 1,
            }
        }
        report.count = issues.len();
        report.healthy = report.fixed == issues.len();
        if report.failed > 0 {
            let failed: Vec<String> = issues
                .iter()
                .filter(|i| i.outcome == Some(Outcome::Failed))
                .map(|i| format!("{}: {}", i.issue, i.detail.as_deref().unwrap_or("")))
                .collect();
            report.failure = Some(
                Error::new(
                    Code::GitFailed,
                    format!(
                        "could not fix {} of {} issues: {}",
                        report.failed,
                        issues.len(),
                        failed.join("; ")
                    ),
                )
                .with_action(NextAction::read(
                    "Check again",
                    &["gw", "doctor", "--format", "json"],
                )),
            );
        }
    }
    report.issues = issues;
    Ok(report)
}

/// Reads configuration, state and the journals as far as they can be read, and hands
/// them to `f`.
fn with_checkup<T>(ctx: &Ctx<'_>, f: impl FnOnce(&Checkup<'_>) -> T) -> T {
    let (config, config_error) = match Config::load_optional(&ctx.home, ctx.env) {
        Ok(c) => (c, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let (state, state_error) = match ctx.store.load() {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let checkup = Checkup {
        home: &ctx.home,
        config: config.as_ref(),
        config_error,
        state: state.as_ref(),
        state_error,
        interrupted: recover::interrupted(ctx).map_err(|e| e.message.clone()),
        journaled: recover::journaled_paths(ctx),
    };
    f(&checkup)
}

/// Runs every check.
pub fn run_checks(checkup: &Checkup<'_>) -> Vec<Issue> {
    CHECKS
        .iter()
        .flat_map(|(_, check)| check(checkup))
        .collect()
}

// ---- checks ----

/// Operations that were interrupted (their process is gone) and journals that cannot be
/// read. Until they are recovered, commands on their workspaces say `RECOVERY_PENDING`.
fn check_operations(c: &Checkup<'_>) -> Vec<Issue> {
    let found = match &c.interrupted {
        Ok(f) => f,
        Err(e) => {
            return vec![Issue::new(
                "journal_unreadable",
                format!("cannot read the operation journals: {e}"),
                format!(
                    "check `{}` by hand",
                    c.home.root().join("operations").display()
                ),
            )];
        }
    };
    found
        .iter()
        .map(|op| match &op.corrupt {
            Some(why) => Issue::new(
                "journal_unreadable",
                format!("unreadable operation journal: {why}"),
                "move it out of `operations/` by hand once you have checked what it describes (it blocks recovery)",
            ),
            None => {
                let kind = op.kind.as_deref().unwrap_or("operation");
                let ws = op.workspace.as_deref().unwrap_or("?");
                let phase = op.phase.as_deref().unwrap_or("?");
                let i = Issue::new(
                    "interrupted_operation",
                    format!(
                        "an interrupted {kind} of workspace `{ws}` (operation {}, {phase}): {}",
                        op.id,
                        op.steps.join("; ")
                    ),
                    if phase == "committed" {
                        "finish it"
                    } else {
                        "roll it back"
                    },
                )
                .fix(Fix::Recover { id: op.id.clone() });
                match &op.workspace {
                    Some(w) => i.workspace(w),
                    None => i,
                }
            }
        })
        .collect()
}

fn check_files(c: &Checkup<'_>) -> Vec<Issue> {
    let mut out = Vec::new();
    if let Some(e) = &c.config_error {
        out.push(
            Issue::new(
                "config_unreadable",
                e.clone(),
                format!(
                    "fix `{}` by hand (grove never overwrites a file it cannot read)",
                    c.home.config().display()
                ),
            )
            .path(&c.home.config()),
        );
    } else if c.config.is_none() {
        out.push(
            Issue::new(
                "not_initialized",
                format!(
                    "grove is not initialized (no `{}`)",
                    c.home.config().display()
                ),
                "run `gw init <repo-dir>`",
            )
            .path(&c.home.config()),
        );
    }
    if let Some(e) = &c.state_error {
        out.push(
            Issue::new(
                "state_unreadable",
                e.clone(),
                format!(
                    "fix `{}` by hand or restore it from a backup (grove never overwrites a file it cannot read)",
                    c.home.state().display()
                ),
            )
            .path(&c.home.state()),
        );
    }
    out
}

fn check_workspaces(c: &Checkup<'_>) -> Vec<Issue> {
    let Some(state) = c.state else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for ws in &state.workspaces {
        if !fsx::exists(&ws.path) {
            let trash = trash_entries(c)
                .into_iter()
                .filter(|t| belongs_to(t, &ws.path))
                .collect::<Vec<_>>();
            if let Some(t) = trash.first() {
                out.push(
                    Issue::new(
                        "workspace_in_trash",
                        "workspace directory missing; its bytes remain in leftover trash",
                        format!(
                            "restore it with `mv {} {}`, or run `gw delete {}` again",
                            crate::proc::shell_quote(&t.to_string_lossy()),
                            crate::proc::shell_quote(&ws.path.to_string_lossy()),
                            crate::proc::shell_quote(&ws.name)
                        ),
                    )
                    .workspace(&ws.name)
                    .path(t),
                );
            } else {
                out.push(
                    Issue::new(
                        "workspace_dir_missing",
                        format!("workspace directory `{}` is missing", ws.path.display()),
                        "remove the stale state entry and prune git's registrations of its worktrees",
                    )
                    .workspace(&ws.name)
                    .path(&ws.path)
                    .fix(Fix::DropWorkspace {
                        name: ws.name.clone(),
                        sources: ws
                            .repos
                            .iter()
                            .map(|r| r.source_repo.clone())
                            .filter(|s| s.is_dir())
                            .collect(),
                    }),
                );
            }
            continue;
        }
        for r in &ws.repos {
            let issue = |kind, text: String, action: String| {
                Issue::new(kind, text, action)
                    .workspace(&ws.name)
                    .repo(&r.repo_name)
            };
            if !r.source_repo.is_dir() {
                out.push(
                    issue(
                        "source_repo_missing",
                        format!("source repository `{}` is missing", r.source_repo.display()),
                        "remove the stale repo entry (the worktree directory, if any, is left in place)".into(),
                    )
                    .path(&r.source_repo)
                    .fix(Fix::DropRepo {
                        workspace: ws.name.clone(),
                        repo: r.repo_name.clone(),
                        source: None,
                    }),
                );
                continue;
            }
            if !r.worktree_path.is_dir() {
                out.push(
                    issue(
                        "worktree_missing",
                        format!("worktree directory `{}` is missing", r.worktree_path.display()),
                        format!(
                            "remove the stale repo entry and prune its registration (then `gw add-repo {} -r {}` re-creates it)",
                            crate::proc::shell_quote(&ws.name),
                            r.repo_name
                        ),
                    )
                    .path(&r.worktree_path)
                    .fix(Fix::DropRepo {
                        workspace: ws.name.clone(),
                        repo: r.repo_name.clone(),
                        source: Some(r.source_repo.clone()),
                    }),
                );
                continue;
            }
            let source = match git::Repo::open(&r.source_repo) {
                Ok(s) => s,
                Err(e) => {
                    out.push(issue(
                        "source_repo_unreadable",
                        e.to_string(),
                        "check the repository with `git status`".into(),
                    ));
                    continue;
                }
            };
            let want = fsx::canonical(&r.worktree_path);
            let registered = source
                .worktrees()
                .map(|wts| {
                    wts.iter()
                        .any(|w| !w.is_main && fsx::canonical(&w.path) == want)
                })
                .unwrap_or(false);
            if !registered {
                let linked = r.worktree_path.join(".git").is_file();
                let mut i = issue(
                    "worktree_not_registered",
                    format!(
                        "`{}` is not registered as a worktree of `{}`",
                        r.worktree_path.display(),
                        r.source_repo.display()
                    ),
                    if linked {
                        "re-link it with `git worktree repair`".to_string()
                    } else {
                        format!(
                            "it is not a git worktree; move it away and run `gw add-repo {} -r {}`",
                            crate::proc::shell_quote(&ws.name),
                            r.repo_name
                        )
                    },
                )
                .path(&r.worktree_path);
                if linked {
                    i = i.fix(Fix::Repair {
                        source: r.source_repo.clone(),
                        path: r.worktree_path.clone(),
                    });
                }
                out.push(i);
                continue;
            }
            if source.local_branch(&r.branch).is_none() {
                out.push(
                    issue(
                        "branch_missing",
                        format!("the recorded branch {} no longer exists", r.branch),
                        format!(
                            "re-create it with `git -C {} switch -c {}`, or remove the repo with `gw remove-repo {} -r {} --force`",
                            crate::proc::shell_quote(&r.worktree_path.to_string_lossy()),
                            crate::proc::shell_quote(&r.branch),
                            crate::proc::shell_quote(&ws.name),
                            r.repo_name
                        ),
                    )
                    .path(&r.worktree_path),
                );
            }
        }
    }
    out
}

/// Registrations in the source repositories of tracked workspaces that state does not
/// explain: stale ones (their directory is gone) and live ones inside the workspace
/// directory that no workspace records.
fn check_registrations(c: &Checkup<'_>) -> Vec<Issue> {
    let Some(state) = c.state else {
        return Vec::new();
    };
    let recorded: BTreeSet<PathBuf> = state
        .workspaces
        .iter()
        .flat_map(|w| w.repos.iter())
        .map(|r| fsx::canonical(&r.worktree_path))
        .collect();
    // Registrations of recorded worktrees whose directory is gone are reported (and
    // fixed) by `check_workspaces`.
    let recorded_raw: BTreeSet<PathBuf> = state
        .workspaces
        .iter()
        .flat_map(|w| w.repos.iter())
        .map(|r| r.worktree_path.clone())
        .collect();
    let sources: BTreeSet<PathBuf> = state
        .workspaces
        .iter()
        .flat_map(|w| w.repos.iter())
        .map(|r| r.source_repo.clone())
        .filter(|s| s.is_dir())
        .collect();
    let missing_ws: Vec<&Path> = state
        .workspaces
        .iter()
        .filter(|w| !fsx::exists(&w.path))
        .map(|w| w.path.as_path())
        .collect();
    let ws_dir = c.config.map(|c| fsx::canonical(&c.workspace_dir));
    let mut out = Vec::new();
    for source in sources {
        let Ok(repo) = git::Repo::open(&source) else {
            continue;
        };
        let Ok(wts) = repo.worktrees() else { continue };
        let name = source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for wt in wts.into_iter().filter(|w| !w.is_main) {
            if wt.prunable {
                if recorded_raw.contains(&wt.path)
                    || missing_ws.iter().any(|m| wt.path.starts_with(m))
                {
                    continue;
                }
                out.push(
                    Issue::new(
                        "stale_registration",
                        format!(
                            "`{}` is registered as a worktree but its directory is gone",
                            wt.path.display()
                        ),
                        format!(
                            "prune it with `git -C {} worktree prune`",
                            crate::proc::shell_quote(&source.to_string_lossy())
                        ),
                    )
                    .repo(&name)
                    .path(&wt.path)
                    .fix(Fix::PruneRegistrations {
                        source: source.clone(),
                    }),
                );
                continue;
            }
            let canonical = fsx::canonical(&wt.path);
            let inside = ws_dir.as_ref().is_some_and(|d| canonical.starts_with(d));
            if inside && !recorded.contains(&canonical) {
                out.push(
                    Issue::new(
                        "untracked_worktree",
                        format!(
                            "`{}` is a worktree inside the workspace directory that no workspace records",
                            wt.path.display()
                        ),
                        format!(
                            "remove it with `git -C {} worktree remove {}` if it holds nothing you need",
                            crate::proc::shell_quote(&source.to_string_lossy()),
                            crate::proc::shell_quote(&wt.path.to_string_lossy())
                        ),
                    )
                    .repo(&name)
                    .path(&wt.path),
                );
            }
        }
    }
    out
}

fn check_trash(c: &Checkup<'_>) -> Vec<Issue> {
    let workspaces: Vec<(&str, &Path)> = c
        .state
        .map(|s| {
            s.workspaces
                .iter()
                .map(|w| (w.name.as_str(), w.path.as_path()))
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    // Trash an operation recorded is that operation's: it is restored or removed when the
    // operation finishes or is recovered.
    for t in trash_entries(c)
        .into_iter()
        .filter(|t| !c.journaled.contains(t))
    {
        match workspaces.iter().find(|(_, p)| belongs_to(&t, p)) {
            // A missing workspace with bytes in the trash is reported by `check_workspaces`.
            Some((_, p)) if !fsx::exists(p) => {}
            Some((name, _)) => out.push(
                Issue::new(
                    "trash_of_workspace",
                    format!(
                        "leftover trash `{}` may still belong to workspace `{name}`",
                        t.display()
                    ),
                    format!(
                        "look inside, then remove it with `rm -rf {}`",
                        crate::proc::shell_quote(&t.to_string_lossy())
                    ),
                )
                .workspace(name)
                .path(&t),
            ),
            None => out.push(
                Issue::new(
                    "leftover_trash",
                    format!("leftover trash `{}`", t.display()),
                    "remove the quarantined workspace bytes",
                )
                .path(&t)
                .fix(Fix::RemoveTrash { path: t.clone() }),
            ),
        }
    }
    out
}

/// Every entry of every `.trash` directory grove may have used: the workspace dir's, the
/// default one's and those next to each tracked workspace.
fn trash_entries(c: &Checkup<'_>) -> Vec<PathBuf> {
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    dirs.insert(c.home.default_workspace_dir().join(".trash"));
    if let Some(config) = c.config {
        dirs.insert(config.workspace_dir.join(".trash"));
    }
    if let Some(state) = c.state {
        for w in &state.workspaces {
            if let Some(parent) = w.path.parent() {
                dirs.insert(parent.join(".trash"));
            }
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        found.sort();
        out.extend(found);
    }
    out
}

/// A trash entry is named `<workspace basename>-<unique suffix>`.
fn belongs_to(trash: &Path, workspace: &Path) -> bool {
    let (Some(t), Some(w)) = (trash.file_name(), workspace.file_name()) else {
        return false;
    };
    t.to_string_lossy()
        .starts_with(&format!("{}-", w.to_string_lossy()))
}

// ---- repairs ----

/// Leftovers of the Go grove's MCP era (a `grove` entry of another tool is never one):
/// the library decides what is grove's, for doctor and `gw-migrate` alike.
fn check_mcp(c: &Checkup<'_>) -> Vec<Issue> {
    crate::legacy::cleanup::doctor_findings(c.home, c.config, c.state)
        .into_iter()
        .map(|f| {
            let mut i = Issue::new("mcp_leftover", f.issue, f.suggested_action).path(&f.path);
            if let Some(w) = &f.workspace {
                i = i.workspace(w);
            }
            if let Some(r) = &f.repo {
                i = i.repo(r);
            }
            if f.fixable { i.fix(Fix::McpCleanup) } else { i }
        })
        .collect()
}

/// Applies every fixable issue's repair and sets each issue's outcome. With `blocked` (an
/// unreadable journal), destructive repairs are left, naming it.
fn apply(ctx: &Ctx<'_>, issues: &mut [Issue], blocked: Option<&str>) {
    let mut mcp: Option<std::result::Result<crate::legacy::cleanup::Fixed, String>> = None;
    // Git and file repairs first; state edits are then made in one update.
    let mut drops: Vec<usize> = Vec::new();
    for (i, issue) in issues.iter_mut().enumerate() {
        let Some(fix) = issue.fix.clone() else {
            issue.outcome = Some(Outcome::Left);
            issue.detail = Some(format!(
                "not safe to repair automatically; {}",
                issue.suggested_action
            ));
            continue;
        };
        if let Some(why) = blocked.filter(|_| fix.is_destructive())
            && issue.outcome.is_none()
        {
            issue.outcome = Some(Outcome::Left);
            issue.detail = Some(format!(
                "not repaired while an operation journal cannot be read (it may describe this): {why}"
            ));
            continue;
        }
        let result = match &fix {
            Fix::PruneRegistrations { source } => prune(source),
            Fix::DropWorkspace { sources, .. } => {
                drops.push(i);
                sources.iter().try_for_each(|s| prune(s))
            }
            Fix::DropRepo { source, .. } => {
                drops.push(i);
                source.as_deref().map(prune).unwrap_or(Ok(()))
            }
            Fix::Repair { source, path } => {
                git::worktree_repair(source, &[path.as_path()]).map_err(|e| e.to_string())
            }
            // The same removal as the background `gw unlink-trash`, which may still be at it.
            Fix::RemoveTrash { path } => crate::ops::delete::unlink_trash(path)
                .map(|_| ())
                .map_err(|e| e.message.clone()),
            // Done by `recover` before the other fixes.
            Fix::Recover { .. } => continue,
            Fix::McpCleanup => {
                let fixed = mcp.get_or_insert_with(|| {
                    crate::legacy::cleanup::fix(&ctx.home, ctx.env).map_err(|e| e.to_string())
                });
                match fixed {
                    Err(e) => Err(e.clone()),
                    Ok(f) => {
                        let item = f
                            .items
                            .iter()
                            .find(|it| Some(&it.path) == issue.path.as_ref());
                        match item.map(|it| (it.status, it.detail.clone())) {
                            Some((crate::legacy::cleanup::Status::Done, _)) => {
                                if let Some(b) = &f.backup {
                                    issue.detail = Some(format!(
                                        "backup {}; `gw-migrate restore {}` undoes it",
                                        b.path.display(),
                                        b.id
                                    ));
                                }
                                Ok(())
                            }
                            Some((_, detail)) => Err(detail.unwrap_or_else(|| "left alone".into())),
                            None => Err("no longer found".into()),
                        }
                    }
                }
            }
        };
        match result {
            Ok(()) => issue.outcome = Some(Outcome::Fixed),
            Err(e) => {
                issue.outcome = Some(Outcome::Failed);
                issue.detail = Some(e);
                drops.retain(|d| *d != i);
            }
        }
    }
    if drops.is_empty() {
        return;
    }
    let fixes: Vec<Fix> = drops
        .iter()
        .filter_map(|&i| issues[i].fix.clone())
        .collect();
    let names: Vec<&str> = fixes
        .iter()
        .filter_map(|f| match f {
            Fix::DropWorkspace { name, .. } => Some(name.as_str()),
            Fix::DropRepo { workspace, .. } => Some(workspace.as_str()),
            _ => None,
        })
        .collect();
    // Like any other change of these workspaces: under their locks, and not while an
    // interrupted operation on them awaits recovery.
    let updated = tx::lock_workspaces(ctx, &names).and_then(|_locks| {
        ctx.store.update(|st| {
            for f in &fixes {
                match f {
                    Fix::DropWorkspace { name, .. } => {
                        st.remove(name);
                    }
                    Fix::DropRepo {
                        workspace, repo, ..
                    } => {
                        if let Some(w) = st.find_mut(workspace) {
                            w.repos.retain(|r| &r.repo_name != repo);
                        }
                    }
                    _ => {}
                }
            }
            Ok::<_, Error>(())
        })
    });
    if let Err(e) = updated {
        for &i in &drops {
            issues[i].outcome = Some(Outcome::Failed);
            issues[i].detail = Some(format!("cannot update state: {}", e.message));
        }
    }
}

/// Finishes or rolls back every interrupted operation and sets the outcome of each
/// `interrupted_operation` issue; an unreadable journal blocks them all (and is left).
fn recover(ctx: &Ctx<'_>, issues: &mut [Issue]) {
    let recovered = recover::recover_all(ctx);
    for issue in issues.iter_mut() {
        let Some(Fix::Recover { id }) = &issue.fix else {
            continue;
        };
        let (outcome, detail) = match &recovered {
            Err(e) => (Outcome::Failed, Some(e.message.clone())),
            Ok(all) => match all.iter().find(|r| r.id == *id) {
                Some(r) if r.outcome == "left" => (Outcome::Failed, r.detail.clone()),
                Some(r) => (
                    Outcome::Fixed,
                    Some(format!("{}: {}", r.outcome, r.steps.join("; "))),
                ),
                None => match all
                    .iter()
                    .find(|r| r.outcome == "left" && r.workspace.is_none())
                {
                    // A corrupt journal blocked recovery.
                    Some(blocker) => (Outcome::Left, blocker.detail.clone()),
                    // Another process finished it meanwhile.
                    None => (Outcome::Fixed, Some("already recovered".into())),
                },
            },
        };
        issue.outcome = Some(outcome);
        issue.detail = detail;
    }
    for issue in issues.iter_mut().filter(|i| i.fix.is_none()) {
        issue.outcome = Some(Outcome::Left);
        issue.detail = Some(format!(
            "not safe to repair automatically; {}",
            issue.suggested_action
        ));
    }
}

fn prune(source: &Path) -> std::result::Result<(), String> {
    git::worktree_prune(source).map_err(|e| e.to_string())
}
