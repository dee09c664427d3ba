//! `gw sync`: rebase every worktree of a workspace onto its base branch.
//!
//! Repositories are processed in parallel. Each one: fetch the source repository (a failure
//! is a warning; local refs are used), skip a dirty worktree, a detached HEAD or an
//! operation in progress, resolve the base, and when the branch is behind run `pre_sync`,
//! `git rebase <base>` and `post_sync`. A rebase that stops is aborted, which puts the
//! branch, index and files back exactly as they were; the repository is then `failed`,
//! with the commands that show and reproduce the conflict as next actions.

mod repo;
use repo::*;

use std::collections::BTreeMap;

use std::path::PathBuf;

use serde::Serialize;

use crate::action::NextAction;

use crate::config::RepoConfig;

use crate::error::{Code, Error, Result};

use crate::git::{self, Rebase};

use crate::ops::hooks::{self, Vars};

use crate::ops::plan::{self, Change, ChangeKind, Described, Fact, PlanDoc, PlanKind};

use crate::ops::tx;

use crate::ops::{Ctx, Outcome, RepoResult, resolve, trust};

use crate::parallel;

use crate::proc::shell_quote;

use crate::state::journal::{Action, Journal, Kind};

use crate::state::{RepoEntry, Workspace};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SyncOptions {
    /// The workspace; the one containing the current directory when `None`.
    pub name: Option<String>,
    /// `gw apply`: the plan this sync must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
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
    let name = resolve::name(ctx, opts.name.as_deref())?;
    // Held while grove itself works, so the worktrees do not move or go away under the
    // rebases (and an interrupted operation on this workspace is recovered first); released
    // while the `pre_sync`/`post_sync` hooks run, since they may call gw.
    let locks = tx::lock_workspaces(ctx, &[&name])?;
    let ws = resolve::by_name(&ctx.state()?, &name)?.clone();
    resolve::require_dir(&ws)?;
    ctx.events.progress(&format!(
        "syncing {} of {}",
        crate::ops::count(ws.repos.len(), "repository", "repositories"),
        ws.name
    ));
    let mut fetch = true;
    if let Some(expect) = &opts.expect {
        let now = describe(ctx, &ws);
        plan::verify(PlanKind::Sync, expect, &inputs(&ws.name), &now)?;
        // The plan's check fetched already; rebase onto exactly what was checked.
        fetch = false;
    }
    let all: Vec<&RepoEntry> = ws.repos.iter().collect();
    require_trust(ctx, "gw sync", &all)?;
    let repos = sync_repos(ctx, locks, &ws, &all, fetch);
    Ok(report(&ws, repos, "sync"))
}

/// Makes sure the `pre_sync`/`post_sync` commands of `repos` may run (`trust::require`)
/// before anything is fetched or rebased.
pub(crate) fn require_trust(ctx: &Ctx<'_>, doing: &str, repos: &[&RepoEntry]) -> Result<()> {
    let configs: Vec<(&RepoEntry, RepoConfig)> = repos
        .iter()
        .filter_map(|r| Some((*r, RepoConfig::load(&r.source_repo).ok()?)))
        .filter(|(_, c)| !c.pre_sync.is_empty() || !c.post_sync.is_empty())
        .collect();
    let projects: Vec<trust::Project<'_>> = configs
        .iter()
        .map(|(r, config)| trust::Project::of(r, config))
        .collect();
    trust::require(ctx, doing, &projects)
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
    resolve::require_dir(&ws)?;
    let described = describe(ctx, &ws);
    Ok(plan::document(PlanKind::Sync, inputs(&ws.name), described))
}

fn describe(ctx: &Ctx<'_>, ws: &Workspace) -> Described {
    let decided = parallel::map(&ws.repos, |r| inspect(ctx, r, true));
    let mut d = Described {
        workspace: ws.name.clone(),
        ..Described::default()
    };
    for (r, stage) in ws.repos.iter().zip(&decided) {
        worktree_facts(r, &mut d);
        let change = match stage {
            Stage::Behind(b) => {
                d.warnings.extend(b.out.warnings.iter().cloned());
                Change::new(ChangeKind::Rebase)
                    .repo(&r.repo_name)
                    .branch(&b.out.result.branch)
                    .path(&r.worktree_path)
                    .detail(format!("onto {} ({} new commits)", b.base, b.behind))
            }
            Stage::Done(out) => {
                d.warnings.extend(out.warnings.iter().cloned());
                Change::new(ChangeKind::Skip).repo(&r.repo_name).detail(
                    out.result
                        .detail
                        .clone()
                        .unwrap_or_else(|| out.outcome().as_str().to_string()),
                )
            }
        };
        d.changes.push(change);
    }
    d
}

/// Syncs `repos` of `ws` (in parallel), holding `locks` (the workspace's) while grove
/// fetches, inspects and rebases, and not while the repositories' `pre_sync`/`post_sync`
/// commands run: those may call gw on this very workspace. After `pre_sync` the lock is
/// taken again and each repository is inspected again before its rebase, since the hook
/// (or another gw process) may have changed it. Never fails as a whole: whatever goes
/// wrong is a repository's outcome.
pub fn sync_repos(
    ctx: &Ctx<'_>,
    locks: tx::Locks,
    ws: &Workspace,
    repos: &[&RepoEntry],
    fetch: bool,
) -> Vec<RepoSync> {
    // Laid out (the ports read) only when a hook runs.
    let vars = std::sync::OnceLock::new();
    let vars = || vars.get_or_init(|| Vars::of(ctx, ws));
    let mut stages = parallel::map(repos, |r| inspect(ctx, r, fetch));
    let hooks_first = stages
        .iter()
        .any(|s| matches!(s, Stage::Behind(b) if !b.config.pre_sync.is_empty()));
    let locks = if hooks_first {
        drop(locks);
        stages = parallel::map_owned(stages, |stage| match stage {
            Stage::Behind(b) if !b.config.pre_sync.is_empty() => pre_sync(ctx, b, vars()),
            other => other,
        });
        // Again under the lock: the workspace must still hold the repository where it
        // was, and the repository is looked at afresh.
        match tx::lock_workspaces(ctx, &[&ws.name]) {
            Ok(l) => {
                let now = ctx.state().ok().and_then(|st| st.find(&ws.name).cloned());
                let items: Vec<(&RepoEntry, Stage)> = repos.iter().copied().zip(stages).collect();
                stages = parallel::map_owned(items, |(r, stage)| match stage {
                    Stage::Behind(b) => {
                        let here = now
                            .as_ref()
                            .and_then(|w| w.repo(&r.repo_name))
                            .is_some_and(|e| e.worktree_path == r.worktree_path);
                        if here {
                            // Keep what the first look found (a failed fetch).
                            let mut again = inspect(ctx, r, false);
                            let out = match &mut again {
                                Stage::Done(out) => out,
                                Stage::Behind(b) => &mut b.out,
                            };
                            out.warnings.splice(0..0, b.out.warnings);
                            again
                        } else {
                            Stage::Done(b.out.done(
                                Outcome::Failed,
                                "the workspace changed while pre_sync ran; nothing was rebased",
                            ))
                        }
                    }
                    done => done,
                });
                Some(l)
            }
            Err(e) => {
                stages = stages
                    .into_iter()
                    .map(|stage| match stage {
                        Stage::Behind(b) => Stage::Done(b.out.done(
                            Outcome::Failed,
                            format!("after pre_sync: {}; nothing was rebased", e.message),
                        )),
                        done => done,
                    })
                    .collect();
                None
            }
        }
    } else {
        Some(locks)
    };
    let rebased = parallel::map_owned(stages, |stage| match stage {
        Stage::Behind(b) => rebase(ctx, &ws.name, b),
        Stage::Done(out) => (out, None),
    });
    drop(locks);
    parallel::map_owned(rebased, |(mut out, post)| {
        if let Some(config) = post
            && let Err(f) = hooks::run_repo_commands(
                ctx,
                &out.result.repo,
                &config.post_sync,
                &out.result.path,
                vars(),
                false,
            )
        {
            out.warnings.push(format!(
                "{}: post_sync failed: {}",
                out.result.repo,
                f.summary()
            ));
        }
        out
    })
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
    let failure = match crate::proc::signals::requested() {
        Some(sig) => Some(crate::ops::tx::cancelled(
            sig,
            "(repositories not rebased yet were left as they were)",
        )),
        None => failure(ws, &repos, command),
    };
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
            "{command} failed in {} of {}: {}",
            failed.len(),
            crate::ops::count(repos.len(), "repository", "repositories"),
            summary.join("; ")
        ),
    )
    .with_fix("Each failed repository says why, with the commands that resolve it (in machine mode: its `detail` and the next actions); nothing was changed in a repository that failed")
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

fn doctor_action() -> NextAction {
    NextAction::read(
        "Diagnose the workspace",
        &["gw", "doctor", "--format", "json"],
    )
}
