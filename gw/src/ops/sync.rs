//! `gw sync`: rebase every worktree of a workspace onto its base branch.
//!
//! Repositories are processed in parallel. Each one: fetch the source repository (a failure
//! is a warning; local refs are used), skip a dirty worktree, a detached HEAD or an
//! operation in progress, resolve the base, and when the branch is behind run `pre_sync`,
//! `git rebase <base>` and `post_sync`. A rebase that stops is aborted, which puts the
//! branch, index and files back exactly as they were; the repository is then `failed`,
//! with the commands that show and reproduce the conflict as next actions.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::action::NextAction;
use crate::config::RepoConfig;
use crate::error::{Code, Error, Result};
use crate::git::{self, Rebase};
use crate::ops::hooks::{self, Vars};
use crate::ops::plan::{self, Change, Described, Fact, PlanDoc, PlanKind};
use crate::ops::tx;
use crate::ops::{Ctx, Outcome, RepoResult, resolve};
use crate::parallel;
use crate::proc::shell_quote;
use crate::state::{RepoEntry, Workspace};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SyncOptions {
    /// The workspace; the one containing the current directory when `None`.
    pub name: Option<String>,
    /// `gw apply`: the plan this sync must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
}

/// How far `sync_repo` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    /// Fetch the source repository first.
    pub fetch: bool,
    /// Decide only: report `rebased` for a repository that would be rebased, without
    /// running hooks or git.
    pub dry: bool,
}

impl Mode {
    pub const REAL: Mode = Mode {
        fetch: true,
        dry: false,
    };
}

/// One repository's sync (also used by `gw reset`): `{repo, outcome, branch, path,
/// detail?, base, commits, switched_from?}`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RepoSync {
    #[serde(flatten)]
    pub result: RepoResult,
    /// The base the branch was compared with and rebased onto (`origin/main`).
    pub base: Option<String>,
    /// Commits of the base the branch did not have before: what the rebase brought in
    /// (0 when up to date, `null` when not determined).
    pub commits: Option<usize>,
    /// reset: the branch the worktree was on before it was switched back (`null` for a
    /// detached HEAD).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switched_from: Option<Option<String>>,
    /// For each field that is `null` because it could not be determined, the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown: BTreeMap<&'static str, String>,
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// Commands that help with this repository (shown when it failed or was skipped).
    #[serde(skip)]
    pub actions: Vec<NextAction>,
}

impl RepoSync {
    pub fn new(r: &RepoEntry) -> RepoSync {
        RepoSync {
            result: RepoResult {
                repo: r.repo_name.clone(),
                outcome: Outcome::Skipped,
                branch: r.branch.clone(),
                path: r.worktree_path.clone(),
                detail: None,
            },
            base: None,
            commits: None,
            switched_from: None,
            unknown: BTreeMap::new(),
            warnings: Vec::new(),
            actions: Vec::new(),
        }
    }

    pub fn outcome(&self) -> Outcome {
        self.result.outcome
    }

    pub fn set(&mut self, outcome: Outcome, detail: impl Into<Option<String>>) {
        self.result.outcome = outcome;
        self.result.detail = detail.into();
    }

    fn done(mut self, outcome: Outcome, detail: impl Into<String>) -> RepoSync {
        self.set(outcome, Some(detail.into()));
        self
    }

    /// `git -C <worktree> status`, the first thing to look at when something is off.
    pub fn status_action(&self) -> NextAction {
        let path = self.result.path.to_string_lossy();
        NextAction::read(
            format!("Inspect {}", self.result.repo),
            &["git", "-C", &path, "status"],
        )
    }
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SyncReport {
    pub workspace: String,
    pub path: PathBuf,
    pub branch: String,
    pub repos: Vec<RepoSync>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub failure: Option<Error>,
}

impl SyncReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        let mut actions: Vec<NextAction> = self
            .repos
            .iter()
            .flat_map(|r| r.actions.iter().cloned())
            .collect();
        actions.push(NextAction::read(
            "Inspect the workspace",
            &["gw", "status", &self.workspace, "--format", "json"],
        ));
        actions
    }
}

/// `gw sync [NAME]`.
pub fn sync(ctx: &Ctx<'_>, opts: SyncOptions) -> Result<SyncReport> {
    ctx.config()?;
    let name = resolve::workspace(&ctx.state()?, opts.name.as_deref(), &ctx.env.cwd)?
        .name
        .clone();
    // Held throughout, so the worktrees do not move or go away under the rebases (and an
    // interrupted operation on this workspace is recovered first).
    let _locks = tx::lock_workspaces(ctx, &[&name])?;
    let ws = resolve::by_name(&ctx.state()?, &name)?.clone();
    let vars = Vars::of(&ws);
    ctx.events.progress(&format!(
        "syncing {} repositories of {}",
        ws.repos.len(),
        ws.name
    ));
    let mut mode = Mode::REAL;
    if let Some(expect) = &opts.expect {
        let now = describe(ctx, &ws);
        plan::verify(PlanKind::Sync, expect, &inputs(&ws.name), &now)?;
        // The plan's check fetched already; rebase onto exactly what was checked.
        mode.fetch = false;
    }
    let repos = parallel::map(&ws.repos, |r| sync_repo(ctx, r, &vars, mode));
    Ok(report(&ws, repos, "sync"))
}

fn inputs(name: &str) -> serde_json::Value {
    serde_json::to_value(SyncOptions {
        name: Some(name.to_string()),
        expect: None,
    })
    .expect("options serialise")
}

/// `gw plan sync`: fetches and decides per repository exactly as `gw sync` does, and
/// describes what it would do.
pub fn plan_doc(ctx: &Ctx<'_>, opts: &SyncOptions) -> Result<PlanDoc> {
    ctx.config()?;
    let ws = resolve::workspace(&ctx.state()?, opts.name.as_deref(), &ctx.env.cwd)?.clone();
    let described = describe(ctx, &ws);
    Ok(plan::document(PlanKind::Sync, inputs(&ws.name), described))
}

fn describe(ctx: &Ctx<'_>, ws: &Workspace) -> Described {
    let vars = Vars::of(ws);
    let decided = parallel::map(&ws.repos, |r| {
        sync_repo(
            ctx,
            r,
            &vars,
            Mode {
                fetch: true,
                dry: true,
            },
        )
    });
    let mut d = Described {
        workspace: ws.name.clone(),
        ..Described::default()
    };
    for (r, s) in ws.repos.iter().zip(&decided) {
        worktree_facts(r, &mut d);
        d.warnings.extend(s.warnings.iter().cloned());
        let change = match s.outcome() {
            Outcome::Rebased => Change::new("rebase")
                .repo(&r.repo_name)
                .branch(&s.result.branch)
                .path(&r.worktree_path)
                .detail(format!(
                    "onto {} ({} new commits)",
                    s.base.as_deref().unwrap_or("?"),
                    s.commits.unwrap_or(0)
                )),
            other => Change::new("skip").repo(&r.repo_name).detail(
                s.result
                    .detail
                    .clone()
                    .unwrap_or_else(|| other.as_str().to_string()),
            ),
        };
        d.changes.push(change);
    }
    d
}

/// The facts a sync or reset of `r` depends on: HEAD, the branch checked out, uncommitted
/// changes, and where the base is.
pub(crate) fn worktree_facts(r: &RepoEntry, d: &mut Described) {
    let label = Some(r.repo_name.as_str());
    let Ok(repo) = git::Repo::open(&r.worktree_path) else {
        d.facts.push(Fact::new(label, "worktree", "missing"));
        return;
    };
    let head = repo.head().unwrap_or_default();
    d.facts.push(Fact::new(
        label,
        "head",
        head.oid.unwrap_or_else(|| "(none)".into()),
    ));
    d.facts.push(Fact::new(
        label,
        "checked_out",
        head.branch.unwrap_or_else(|| "(detached)".into()),
    ));
    let changes = repo.changes().map(|c| {
        if c.is_clean() {
            "(none)".to_string()
        } else {
            c.short()
        }
    });
    d.facts.push(Fact::new(
        label,
        "changes",
        changes.unwrap_or_else(|e| format!("unreadable: {e}")),
    ));
    let configured = RepoConfig::load(&r.source_repo)
        .ok()
        .and_then(|c| c.base_branch);
    if let Some(base) = repo.resolve_base(configured.as_deref()) {
        d.facts
            .push(Fact::new(label, format!("base {}", base.name), base.oid));
    }
    d.facts.push(Fact::new(
        label,
        format!("branch {}", r.branch),
        repo.local_branch(&r.branch)
            .unwrap_or_else(|| "absent".into()),
    ));
}

/// Builds the report of a sync or reset: warnings for skipped repositories and, when any
/// failed, the failure that makes the command exit non-zero.
pub fn report(ws: &Workspace, mut repos: Vec<RepoSync>, command: &str) -> SyncReport {
    for r in repos.iter_mut() {
        // A repository that stopped early has no base or count: say why.
        let why = format!(
            "not determined: {}",
            r.result
                .detail
                .as_deref()
                .unwrap_or(r.result.outcome.as_str())
        );
        if r.base.is_none() {
            r.unknown.insert("base", why.clone());
        }
        if r.commits.is_none() {
            r.unknown.insert("commits", why);
        }
    }
    let mut warnings = Vec::new();
    for r in &repos {
        warnings.extend(r.warnings.iter().cloned());
        if r.outcome() == Outcome::Skipped {
            warnings.push(format!(
                "{}: skipped: {}",
                r.result.repo,
                r.result.detail.as_deref().unwrap_or("")
            ));
        }
    }
    let failure = failure(ws, &repos, command);
    SyncReport {
        workspace: ws.name.clone(),
        path: ws.path.clone(),
        branch: ws.branch.clone(),
        count: repos.len(),
        repos,
        warnings,
        failure,
    }
}

fn failure(ws: &Workspace, repos: &[RepoSync], command: &str) -> Option<Error> {
    let failed: Vec<&RepoSync> = repos
        .iter()
        .filter(|r| r.outcome() == Outcome::Failed)
        .collect();
    if failed.is_empty() {
        return None;
    }
    let summary: Vec<String> = failed
        .iter()
        .map(|r| {
            format!(
                "{}: {}",
                r.result.repo,
                r.result.detail.as_deref().unwrap_or("failed")
            )
        })
        .collect();
    let mut e = Error::new(
        Code::GitFailed,
        format!(
            "{command} failed in {} of {} repositories: {}",
            failed.len(),
            repos.len(),
            summary.join("; ")
        ),
    )
    .with_fix("See each repository's detail; nothing was changed in a repository that failed")
    .with_details(serde_json::json!({
        "workspace": ws.name,
        "failed": failed.iter().map(|r| serde_json::json!({
            "repo": r.result.repo,
            "detail": r.result.detail,
        })).collect::<Vec<_>>(),
    }));
    for r in &failed {
        for a in &r.actions {
            e = e.with_action(a.clone());
        }
    }
    Some(e.with_action(NextAction::read(
        "Inspect the workspace",
        &["gw", "status", &ws.name, "--format", "json"],
    )))
}

/// Syncs one worktree. Never panics and never returns an error: everything that goes wrong
/// is this repository's outcome.
pub fn sync_repo(ctx: &Ctx<'_>, r: &RepoEntry, vars: &Vars, mode: Mode) -> RepoSync {
    let mut out = RepoSync::new(r);
    let name = r.repo_name.as_str();
    if !r.worktree_path.is_dir() {
        out.actions.push(doctor_action());
        return out.done(Outcome::Failed, "worktree directory is missing");
    }
    if !r.source_repo.is_dir() {
        out.actions.push(doctor_action());
        return out.done(Outcome::Failed, "source repository is missing");
    }
    let has_origin = git::Repo::open(&r.source_repo)
        .ok()
        .and_then(|s| s.origin_url())
        .is_some();
    if has_origin && mode.fetch {
        ctx.events.progress(&format!("fetching {name}"));
        // Fetch writes refs; serialise with other gw processes working in this repository.
        let fetched = tx::repo_lock(ctx, &r.source_repo)
            .and_then(|_lock| git::fetch(&r.source_repo).map_err(Error::from));
        if let Err(e) = fetched {
            out.warnings.push(format!(
                "{name}: fetch failed, using local state: {}",
                e.message
            ));
        }
    }
    let config = match RepoConfig::load(&r.source_repo) {
        Ok(c) => c,
        Err(e) => return out.done(Outcome::Failed, e.to_string()),
    };
    let repo = match git::Repo::open(&r.worktree_path) {
        Ok(repo) => repo,
        Err(e) => return out.done(Outcome::Failed, format!("status check failed: {e}")),
    };
    let head = match repo.head() {
        Ok(h) => h,
        Err(e) => return out.done(Outcome::Failed, format!("status check failed: {e}")),
    };
    if let Some(b) = &head.branch {
        out.result.branch = b.clone();
    }
    if let Some(op) = &head.in_progress {
        out.actions.push(out.status_action());
        return out.done(Outcome::Skipped, format!("a {op} is in progress"));
    }
    if head.detached {
        out.actions.push(out.status_action());
        return out.done(
            Outcome::Skipped,
            format!("HEAD is detached (`gw reset` puts it back on {})", r.branch),
        );
    }
    match repo.changes() {
        Ok(c) if c.is_clean() => {}
        Ok(c) => {
            out.actions.push(out.status_action());
            let n = c.count();
            return out.done(
                Outcome::Skipped,
                format!(
                    "dirty working tree ({n} uncommitted change{})",
                    if n == 1 { "" } else { "s" }
                ),
            );
        }
        Err(e) => return out.done(Outcome::Failed, format!("status check failed: {e}")),
    }
    let Some(base) = repo.resolve_base(config.base_branch.as_deref()) else {
        return out.done(Outcome::Skipped, "could not determine the base branch");
    };
    out.base = Some(base.name.clone());
    let Some(head_oid) = head.oid.as_deref() else {
        return out.done(Outcome::Skipped, "the branch has no commits yet");
    };
    let behind = match repo.ahead_behind(head_oid, &base.oid) {
        Ok((_, behind)) => behind,
        Err(e) => {
            return out.done(
                Outcome::Skipped,
                format!("cannot determine ahead/behind: {e}"),
            );
        }
    };
    drop(repo);
    if behind == 0 {
        out.commits = Some(0);
        return out.done(Outcome::UpToDate, format!("up to date with {}", base.name));
    }
    if mode.dry {
        out.commits = Some(behind);
        return out.done(
            Outcome::Rebased,
            format!("would rebase onto {} ({behind} new commits)", base.name),
        );
    }

    if let Err(f) =
        hooks::run_repo_commands(ctx, name, &config.pre_sync, &r.worktree_path, vars, false)
    {
        return out.done(
            Outcome::Failed,
            format!("pre_sync failed, nothing was rebased: {}", f.summary()),
        );
    }
    ctx.events
        .progress(&format!("rebasing {name} onto {}", base.name));
    // The rebase moves the branch ref (shared with the source repository): hold its lock.
    let lock = match tx::repo_lock(ctx, &r.source_repo) {
        Ok(l) => l,
        Err(e) => return out.done(Outcome::Failed, e.message.clone()),
    };
    let rebased = git::rebase(&r.worktree_path, &base.name);
    let rebased = match rebased {
        // A rebase that stopped is aborted at once, still under the lock.
        Ok(Rebase::Stopped { conflicts, output }) => {
            let aborted = git::rebase_abort(&r.worktree_path);
            Ok((Rebase::Stopped { conflicts, output }, Some(aborted)))
        }
        other => other.map(|r| (r, None)),
    };
    drop(lock);
    match rebased {
        Ok((Rebase::Done, _)) => {
            out.commits = Some(behind);
            if let Err(f) = hooks::run_repo_commands(
                ctx,
                name,
                &config.post_sync,
                &r.worktree_path,
                vars,
                false,
            ) {
                out.warnings
                    .push(format!("{name}: post_sync failed: {}", f.summary()));
            }
            out.done(
                Outcome::Rebased,
                format!(
                    "rebased onto {} ({behind} new commit{})",
                    base.name,
                    if behind == 1 { "" } else { "s" }
                ),
            )
        }
        Ok((Rebase::Stopped { conflicts, output }, aborted)) => {
            let why = if conflicts.is_empty() {
                output.lines().last().unwrap_or("git stopped").to_string()
            } else {
                format!("conflicts in {}", conflicts.join(", "))
            };
            let path = r.worktree_path.to_string_lossy().into_owned();
            out.actions.push(out.status_action());
            out.actions.push(NextAction::write(
                format!(
                    "Rebase {name} by hand to resolve the conflicts (`git rebase --abort` undoes it)"
                ),
                &["git", "-C", &path, "rebase", &base.name],
            ));
            match aborted.unwrap_or(Ok(())) {
                Ok(()) => out.done(
                    Outcome::Failed,
                    format!(
                        "rebase onto {} failed and was aborted, the worktree is unchanged: {why}",
                        base.name
                    ),
                ),
                Err(e) => out.done(
                    Outcome::Failed,
                    format!(
                        "rebase onto {} failed ({why}) and could not be aborted: {e}; run `git -C {} rebase --abort`",
                        base.name,
                        shell_quote(&path)
                    ),
                ),
            }
        }
        Err(e) => out.done(Outcome::Failed, format!("cannot run git rebase: {e}")),
    }
}

fn doctor_action() -> NextAction {
    NextAction::read(
        "Diagnose the workspace",
        &["gw", "doctor", "--format", "json"],
    )
}
