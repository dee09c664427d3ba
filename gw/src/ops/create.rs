//! `gw create`: a new workspace with one worktree per repository, all on one branch.
//!
//! Creation is all or nothing: a plan is made and validated first, without changing
//! anything; then worktrees are added (in parallel across repositories); if any step fails,
//! everything this invocation created is undone in reverse order and nothing that existed
//! before (a branch, a directory) is touched. Setup commands and the `post_create` hook run
//! after the workspace is recorded, outside any lock, because they may call `gw`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::action::NextAction;
use crate::config::{Config, HookKind, RepoConfig};
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::blueprint::BlueprintFile;
use crate::ops::hooks::{self, Vars};
use crate::ops::plan::{self, Change, Described, Fact, PlanDoc, PlanKind};
use crate::ops::repos::{self, Chosen};
use crate::ops::tx::{self, Tx, Undo};
use crate::ops::{Ctx, Outcome, RepoResult, delete, names, resolve};
use crate::parallel;
use crate::state::journal::{Action, BranchSource, Kind};
use crate::state::{Blueprint, RepoEntry, SetupRecord, SetupStatus, Source, State, Workspace};

/// Which repositories to put in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// Names or git URLs.
    Repos(Vec<String>),
    Preset(String),
    All,
    /// A blueprint file, as read when the command (or its plan) ran.
    Blueprint(BlueprintFile),
}

/// Where the work comes from; stored on the workspace and passed to hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFields {
    pub url: Option<String>,
    pub provider: Option<String>,
    pub reference: Option<String>,
    pub title: Option<String>,
}

/// The workspace's source: a blueprint's `[source]`, with any `--source-*` flag on top.
fn source_of(opts: &CreateOptions) -> Option<Source> {
    let mut fields = match &opts.selection {
        Selection::Blueprint(b) => b.source.clone(),
        _ => SourceFields::default(),
    };
    let cli = opts.source.clone();
    fields.url = cli.url.or(fields.url);
    fields.provider = cli.provider.or(fields.provider);
    fields.reference = cli.reference.or(fields.reference);
    fields.title = cli.title.or(fields.title);
    fields.into_source()
}

impl SourceFields {
    fn into_source(self) -> Option<Source> {
        if self.url.is_none()
            && self.provider.is_none()
            && self.reference.is_none()
            && self.title.is_none()
        {
            return None;
        }
        Some(Source {
            provider: self.provider.unwrap_or_default(),
            url: self.url.unwrap_or_default(),
            reference: self.reference.unwrap_or_default(),
            title: self.title.unwrap_or_default(),
            extra: Default::default(),
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreateOptions {
    /// The workspace name; derived from the branch when absent.
    pub name: Option<String>,
    pub branch: String,
    pub selection: Selection,
    /// Check out `origin/<branch>` where it exists instead of starting a new branch.
    pub track: bool,
    pub source: SourceFields,
    /// Replace the workspace the current directory is in.
    pub replace: bool,
    /// With `replace`: discard uncommitted changes in the replaced workspace.
    pub force: bool,
    /// `gw apply`: the plan this create must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
}

/// What `gw create` will do, decided before anything changes.
#[derive(Debug, Clone)]
pub struct CreatePlan {
    pub name: String,
    pub path: PathBuf,
    pub branch: String,
    pub workspace_dir: PathBuf,
    pub repos: Vec<RepoPlan>,
    pub source: Option<Source>,
    pub blueprint: Option<Blueprint>,
    pub warnings: Vec<String>,
    /// Repositories cloned from git URLs while planning; a failed create removes them.
    pub cloned: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct RepoPlan {
    pub name: String,
    pub source: PathBuf,
    pub worktree: PathBuf,
    /// Where the branch comes from (and, for a new branch, the commit it starts at).
    pub how: BranchSource,
    /// The branch already existed, so it is not grove's to delete.
    pub preserve_branch: bool,
    /// Stale registrations (their directory gone, in a workspace directory) that hold the
    /// branch: removed first, or git would refuse.
    pub stale: Vec<PathBuf>,
    pub setup: Vec<String>,
}

impl RepoPlan {
    pub(crate) fn describe(&self) -> String {
        match &self.how {
            BranchSource::New { start, .. } => format!("new branch from {start}"),
            BranchSource::Existing => "existing branch checked out".into(),
            BranchSource::Track { remote_ref, .. } => format!("tracking {remote_ref}"),
        }
    }
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CreateReport {
    pub name: String,
    pub path: PathBuf,
    pub branch: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blueprint: Option<Blueprint>,
    pub repos: Vec<RepoResult>,
    pub count: usize,
    /// Setup results per repository (`ready` or `failed`), when any repository has setup.
    pub setup: Vec<SetupResult>,
    /// The workspace this one replaced (`--replace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SetupResult {
    pub repo: String,
    pub status: SetupStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl CreateReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![
            NextAction::read(
                "Inspect the new workspace",
                &["gw", "status", &self.name, "--format", "json"],
            ),
            NextAction::read(
                "Print the workspace path",
                &["gw", "go", &self.name, "--format", "json"],
            ),
        ]
    }
}

/// `gw create`: plan, optionally replace the current workspace, execute, run setup and the
/// `post_create` hook.
pub fn create(ctx: &Ctx<'_>, opts: CreateOptions) -> Result<CreateReport> {
    let config = ctx.config()?;
    names::check_branch(&opts.branch)?;
    let name = workspace_name(&opts);
    names::check_workspace(&name)?;
    // Held from before validation until the workspace is recorded, so that of two
    // processes creating the same name, the second sees the first's result.
    let locks = tx::lock_workspaces(ctx, &[&name])?;
    let state = ctx.state()?;
    let replacing = if opts.replace {
        let current = resolve::workspace(&state, None, &ctx.env.cwd).map_err(|e| {
            Error::usage("--replace must be run from inside the workspace to replace")
                .with_fix("cd into the workspace you want to replace")
                .with_details(serde_json::json!({ "cause": e.message }))
        })?;
        Some(current.clone())
    } else {
        None
    };
    let mut plan = plan(
        ctx,
        &config,
        &state,
        &opts,
        replacing.as_ref().map(|w| w.name.as_str()),
    )?;
    if let Some(expect) = &opts.expect {
        let now = describe(ctx, &config, &plan);
        if let Err(e) = plan::verify(PlanKind::Create, expect, &inputs(&opts), &now) {
            for clone in &plan.cloned {
                let _ = fsx::remove_dir_all(clone);
            }
            return Err(e);
        }
    }
    let mut warnings = Vec::new();
    if let Some(old) = &replacing {
        let deleted = delete::delete(
            ctx,
            delete::DeleteOptions {
                names: vec![old.name.clone()],
                force: opts.force,
                expect: None,
            },
        )?;
        warnings.extend(deleted.warnings.iter().cloned());
        if let Some(e) = deleted.into_error() {
            return Err(e.context(format!("cannot replace `{}`", old.name)));
        }
        // The old workspace's branches and worktrees are gone now; decide again.
        plan = crate::ops::create::plan(ctx, &config, &ctx.state()?, &opts, None).map_err(|e| {
            e.context(format!(
                "workspace `{}` was already deleted, but the new one could not be created",
                old.name
            ))
        })?;
    }
    let mut report = execute(ctx, plan, locks).map_err(|e| match &replacing {
        Some(old) => e.context(format!(
            "workspace `{}` was already deleted, but the new one could not be created",
            old.name
        )),
        None => e,
    })?;
    report.replaced = replacing.map(|w| w.name);
    report.warnings.splice(0..0, warnings);
    let ws = Workspace {
        name: report.name.clone(),
        path: report.path.clone(),
        branch: report.branch.clone(),
        created_at: report.created_at.clone(),
        repos: Vec::new(),
        source: report.source.clone(),
        blueprint: None,
        extra: Default::default(),
    };
    let hook = hooks::run_global(
        ctx,
        config.hooks.get(HookKind::PostCreate),
        HookKind::PostCreate,
        &Vars::of(&ws),
        &ws.path,
    )
    .map_err(|e| {
        let message = format!("workspace `{}` was created, but {}", ws.name, e.message);
        let mut e = e;
        e.message = message;
        e.with_action(NextAction::read(
            "Inspect the workspace",
            &["gw", "status", &ws.name, "--format", "json"],
        ))
    })?;
    report.warnings.extend(hook);
    Ok(report)
}

/// The inputs a plan records: the options, with the workspace name resolved.
fn inputs(opts: &CreateOptions) -> serde_json::Value {
    let mut o = opts.clone();
    o.name = Some(workspace_name(opts));
    serde_json::to_value(o).expect("options serialise")
}

/// `gw plan create`: validates exactly as `gw create` does and describes what it would do.
/// Nothing changes, except that repositories are fetched (and a clone made from a git URL
/// is removed again).
pub fn plan_doc(ctx: &Ctx<'_>, opts: &CreateOptions) -> Result<PlanDoc> {
    if opts.replace {
        return Err(
            Error::usage("`gw plan create` cannot plan --replace").with_fix(
                "Plan the delete of the old workspace and the create of the new one separately",
            ),
        );
    }
    let config = ctx.config()?;
    let state = ctx.state()?;
    let plan = plan(ctx, &config, &state, opts, None)?;
    let described = describe(ctx, &config, &plan);
    for clone in &plan.cloned {
        let _ = fsx::remove_dir_all(clone);
    }
    Ok(plan::document(PlanKind::Create, inputs(opts), described))
}

/// The changes a create plan makes and the facts it depends on.
pub fn describe(ctx: &Ctx<'_>, config: &Config, plan: &CreatePlan) -> Described {
    let mut changes = vec![Change::new("create_workspace_dir").path(&plan.path)];
    let path_state = if fsx::exists(&plan.path) {
        "exists"
    } else {
        "absent"
    };
    let mut facts = vec![
        Fact::new(None, "workspace", "absent"),
        Fact::new(None, "path", path_state),
    ];
    describe_repos(&plan.repos, &plan.branch, &mut changes, &mut facts);
    changes.push(
        Change::new("record_state")
            .path(&plan.path)
            .detail(format!("workspace {}", plan.name)),
    );
    describe_setup(&plan.repos, &mut changes);
    if let Some(hook) = config
        .hooks
        .get(HookKind::PostCreate)
        .filter(|_| !ctx.no_hooks)
    {
        changes.push(Change::new("run_hook").detail(format!("post_create: {}", hook.command)));
    }
    Described {
        workspace: plan.name.clone(),
        changes,
        facts,
        warnings: plan.warnings.clone(),
    }
}

/// The changes and facts of adding a worktree per planned repository (shared with
/// `gw add-repo`).
pub(crate) fn describe_repos(
    repos: &[RepoPlan],
    branch: &str,
    changes: &mut Vec<Change>,
    facts: &mut Vec<Fact>,
) {
    let short = |o: &Option<String>| {
        o.as_deref()
            .map(|o| o.get(..7).unwrap_or(o).to_string())
            .unwrap_or_else(|| "?".into())
    };
    for r in repos {
        let repo = git::Repo::open(&r.source).ok();
        let local = repo.as_ref().and_then(|g| g.local_branch(branch));
        let remote = repo
            .as_ref()
            .and_then(|g| g.remote_branch("origin", branch));
        facts.push(Fact::new(
            Some(&r.name),
            "source",
            r.source.to_string_lossy(),
        ));
        facts.push(Fact::new(
            Some(&r.name),
            format!("branch {branch}"),
            local.unwrap_or_else(|| "absent".into()),
        ));
        facts.push(Fact::new(
            Some(&r.name),
            format!("remote_branch origin/{branch}"),
            remote.unwrap_or_else(|| "absent".into()),
        ));
        facts.push(Fact::new(
            Some(&r.name),
            "worktree_path",
            if fsx::exists(&r.worktree) {
                "exists"
            } else {
                "absent"
            },
        ));
        match &r.how {
            BranchSource::New { start, start_oid } => {
                facts.push(Fact::new(
                    Some(&r.name),
                    format!("start {start}"),
                    start_oid.clone().unwrap_or_default(),
                ));
                changes.push(
                    Change::new("create_branch")
                        .repo(&r.name)
                        .branch(branch)
                        .detail(format!("from {start} at {}", short(start_oid))),
                );
            }
            BranchSource::Track {
                remote_ref,
                start_oid,
            } => changes.push(
                Change::new("track_remote_branch")
                    .repo(&r.name)
                    .branch(branch)
                    .detail(format!("tracking {remote_ref} at {}", short(start_oid))),
            ),
            BranchSource::Existing => {}
        }
        let detail = match r.how {
            BranchSource::Existing => {
                "branch already exists locally; it is checked out, not created"
            }
            _ => "new worktree",
        };
        changes.push(
            Change::new("create_worktree")
                .repo(&r.name)
                .path(&r.worktree)
                .branch(branch)
                .detail(detail),
        );
    }
}

/// One `run_setup_hook` change per setup command.
pub(crate) fn describe_setup(repos: &[RepoPlan], changes: &mut Vec<Change>) {
    for r in repos {
        for cmd in &r.setup {
            changes.push(
                Change::new("run_setup_hook")
                    .repo(&r.name)
                    .path(&r.worktree)
                    .detail(cmd.clone()),
            );
        }
    }
}

/// The workspace name: given, or derived from the branch.
fn workspace_name(opts: &CreateOptions) -> String {
    let from_blueprint = match &opts.selection {
        Selection::Blueprint(b) => b.name.clone(),
        _ => None,
    };
    opts.name
        .clone()
        .or(from_blueprint)
        .unwrap_or_else(|| names::from_branch(&opts.branch))
}

/// Per-repository overrides a blueprint gives: base branch and track mode, by repo name.
fn overrides(selection: &Selection) -> Vec<(String, Option<String>, Option<bool>)> {
    match selection {
        Selection::Blueprint(b) => b
            .repos
            .iter()
            .map(|r| {
                let name = if git::url::is_git_url(&r.repo) {
                    git::url::repo_name(&r.repo).unwrap_or_else(|| r.repo.clone())
                } else {
                    r.repo.clone()
                };
                (name, r.base_branch.clone(), r.track)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Validates the inputs against the current world and decides, per repository, how its
/// worktree will be made. Changes nothing except fetching.
///
/// `ignore` names a workspace whose worktrees do not count as conflicts (the one being
/// replaced).
pub fn plan(
    ctx: &Ctx<'_>,
    config: &Config,
    state: &State,
    opts: &CreateOptions,
    ignore: Option<&str>,
) -> Result<CreatePlan> {
    names::check_branch(&opts.branch)?;
    let name = workspace_name(opts);
    names::check_workspace(&name)?;
    if state.find(&name).is_some() {
        return Err(exists(
            &name,
            format!("a workspace named `{name}` already exists"),
        ));
    }
    let path = config.workspace_dir.join(&name);
    if fsx::exists(&path) {
        return Err(exists(
            &name,
            format!("`{}` already exists", path.display()),
        ));
    }

    let discovery = repos::discover(ctx, config);
    let (entries, blueprint) = match &opts.selection {
        Selection::Repos(r) => (r.clone(), None),
        Selection::Preset(p) => {
            let repos = config
                .presets
                .get(p)
                .ok_or_else(|| preset_not_found(p, config))?;
            let blueprint = Blueprint {
                name: format!("preset:{p}"),
                sha256: preset_hash(p, repos),
            };
            (repos.clone(), Some(blueprint))
        }
        Selection::All => (discovery.names(), None),
        Selection::Blueprint(b) => {
            let identity = Blueprint {
                name: b.path.to_string_lossy().into_owned(),
                sha256: b.sha256.clone(),
            };
            (
                b.repos.iter().map(|r| r.repo.clone()).collect(),
                Some(identity),
            )
        }
    };
    if let Selection::Blueprint(b) = &opts.selection {
        // Unknown repositories are reported with the blueprint line that names them.
        for r in b.repos.iter().filter(|r| !git::url::is_git_url(&r.repo)) {
            if discovery.find(&r.repo).is_none() {
                let e = repos::unknown_repo(&r.repo, &discovery);
                let message = format!(
                    "{} (`{}` line {}, key `repos`)",
                    e.message,
                    b.path.display(),
                    r.line
                );
                let mut e = e;
                e.message = message;
                return Err(e);
            }
        }
    }
    let chosen = repos::resolve(ctx, config, &entries, &discovery)?;
    // A refused create changes nothing: not even a clone it made on the way.
    let mut undo_clones = UndoClones(Some(&chosen));

    let fetch_warnings = fetch_all(ctx, &chosen);

    let ignored: Vec<PathBuf> = ignore
        .and_then(|n| state.find(n))
        .map(|w| {
            w.repos
                .iter()
                .map(|r| fsx::canonical(&r.worktree_path))
                .collect()
        })
        .unwrap_or_default();
    let overrides = overrides(&opts.selection);
    let decided = parallel::map(&chosen, |c| {
        let o = overrides.iter().find(|(n, _, _)| *n == c.name);
        let base = o.and_then(|(_, b, _)| b.as_deref());
        let track = o.and_then(|(_, _, t)| *t).unwrap_or(opts.track);
        plan_repo(
            ctx.territory(),
            c,
            &path,
            &opts.branch,
            track,
            base,
            &ignored,
        )
    });
    let mut repos = Vec::new();
    let mut warnings = fetch_warnings;
    for d in decided {
        let (repo, w) = d?;
        warnings.extend(w);
        repos.push(repo);
    }
    undo_clones.0 = None;
    Ok(CreatePlan {
        name,
        path,
        branch: opts.branch.clone(),
        workspace_dir: config.workspace_dir.clone(),
        repos,
        source: source_of(opts),
        blueprint,
        warnings,
        cloned: chosen
            .iter()
            .filter(|c| c.cloned)
            .map(|c| c.path.clone())
            .collect(),
    })
}

/// Removes the repositories cloned while planning when dropped, unless disarmed (set to
/// `None`) because the plan succeeded.
struct UndoClones<'a>(Option<&'a [Chosen]>);

impl Drop for UndoClones<'_> {
    fn drop(&mut self) {
        if let Some(chosen) = self.0 {
            repos::remove_clones(chosen);
        }
    }
}

fn exists(name: &str, message: String) -> Error {
    Error::new(Code::WorkspaceExists, message)
        .with_fix("Choose another name, or delete the existing workspace first")
        .with_details(serde_json::json!({ "workspace": name }))
        .with_action(NextAction::read(
            "Inspect the existing workspace",
            &["gw", "ws", "show", name, "--format", "json"],
        ))
}

pub fn preset_not_found(name: &str, config: &Config) -> Error {
    let known: Vec<&String> = config.presets.keys().collect();
    Error::new(Code::PresetNotFound, format!("no preset named `{name}`"))
        .with_fix(if known.is_empty() {
            "No presets are defined; create one with `gw preset add NAME -r a,b`".to_string()
        } else {
            format!(
                "Known presets: {}",
                known
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .with_details(serde_json::json!({ "preset": name }))
        .with_action(NextAction::read(
            "List presets",
            &["gw", "preset", "list", "--format", "json"],
        ))
}

/// SHA-256 of a preset's normalised content (`name` and the repository list).
fn preset_hash(name: &str, repos: &[String]) -> String {
    let normalised = serde_json::json!({ "name": name, "repos": repos }).to_string();
    fsx::sha256_hex(normalised.as_bytes())
}

/// Fetches every repository that has an origin, in parallel, except those whose origin is
/// a local repository with nothing new (see `git::Repo::origin_is_current`). A failure is
/// not fatal: local refs are used, and the plan carries on.
pub(crate) fn fetch_all(ctx: &Ctx<'_>, chosen: &[Chosen]) -> Vec<String> {
    let needs_fetch: Vec<bool> = parallel::map(chosen, |c| {
        git::Repo::open(&c.path)
            .ok()
            .is_some_and(|r| r.origin_url().is_some() && !r.origin_is_current())
    });
    let with_remote: Vec<&Chosen> = chosen
        .iter()
        .zip(needs_fetch)
        .filter_map(|(c, fetch)| fetch.then_some(c))
        .collect();
    if with_remote.is_empty() {
        return Vec::new();
    }
    ctx.events
        .progress(&format!("fetching {} repositories", with_remote.len()));
    let results = parallel::map_processes(&with_remote, |c| {
        // Fetch writes refs; serialise with other gw processes working in this repository.
        let _lock = tx::repo_lock(ctx, &c.path)?;
        git::fetch(&c.path).map_err(Error::from)
    });
    with_remote
        .iter()
        .zip(results)
        .filter_map(|(c, r)| {
            r.err()
                .map(|e| format!("{}: fetch failed, using local state: {}", c.name, e.message))
        })
        .collect()
}

pub(crate) fn plan_repo(
    territory: &crate::ops::territory::Territory,
    c: &Chosen,
    root: &Path,
    branch: &str,
    track: bool,
    base_branch: Option<&str>,
    ignored: &[PathBuf],
) -> Result<(RepoPlan, Vec<String>)> {
    let repo = git::Repo::open(&c.path)?;
    let mut warnings = Vec::new();
    let mut stale = Vec::new();
    for wt in repo.worktrees()? {
        if wt.branch.as_deref() != Some(branch) || ignored.contains(&fsx::canonical(&wt.path)) {
            continue;
        }
        if wt.prunable && territory.check(&wt.path, "").is_ok() {
            stale.push(wt.path);
            continue;
        }
        return Err(Error::new(
            Code::WorktreeExists,
            format!(
                "branch `{branch}` already has a worktree in {} at `{}`",
                c.name,
                wt.path.display()
            ),
        )
        .with_fix("Use another branch, or remove that worktree first")
        .with_details(
            serde_json::json!({ "repo": c.name, "branch": branch, "worktree": wt.path }),
        ));
    }
    let repo_config = RepoConfig::load(&c.path)?;
    let base = repo.resolve_base(base_branch.or(repo_config.base_branch.as_deref()));
    let local = repo.local_branch(branch).is_some();
    let remote = repo.remote_branch("origin", branch);
    let start = || match &base {
        Some(b) => b.name.clone(),
        None => "HEAD".to_string(),
    };
    let how = if local {
        BranchSource::Existing
    } else if let (true, Some(oid)) = (track, remote.clone()) {
        BranchSource::Track {
            remote_ref: format!("origin/{branch}"),
            start_oid: Some(oid),
        }
    } else {
        if track {
            warnings.push(format!(
                "{}: remote branch origin/{branch} not found; creating a new branch from {} instead",
                c.name,
                start()
            ));
        }
        if base.is_none() {
            warnings.push(format!(
                "{}: could not resolve a base branch; the new branch starts from HEAD",
                c.name
            ));
        }
        let start_oid = match &base {
            Some(b) => Some(b.oid.clone()),
            None => repo.head()?.oid,
        };
        BranchSource::New {
            start: start(),
            start_oid,
        }
    };
    Ok((
        RepoPlan {
            name: c.name.clone(),
            source: c.path.clone(),
            worktree: root.join(&c.name),
            how,
            preserve_branch: local,
            stale,
            setup: repo_config.setup,
        },
        warnings,
    ))
}

/// Carries out a plan in a transaction. On failure, undoes everything this call created
/// (and only that), and says per repository what happened.
pub fn execute(ctx: &Ctx<'_>, plan: CreatePlan, locks: tx::Locks) -> Result<CreateReport> {
    fsx::create_dir_all(&plan.workspace_dir)?;
    let mut tx = Tx::begin(ctx, locks, Kind::Create, &plan.name, &[])?;
    if ctx.state()?.find(&plan.name).is_some() {
        let _ = tx.finish();
        return Err(exists(
            &plan.name,
            format!("a workspace named `{}` already exists", plan.name),
        ));
    }
    if let Err(e) = tx.run(Action::CreateDir {
        path: plan.path.clone(),
    }) {
        let (_, clean) = tx.rollback();
        return Err(if clean {
            e
        } else {
            e.context("rollback incomplete")
        });
    }
    for r in &plan.repos {
        // A registration whose directory is gone holds the branch; git would refuse.
        for path in &r.stale {
            tx::remove_registration(ctx, &r.source, path)?;
        }
    }
    ctx.events
        .progress(&format!("creating {} worktrees", plan.repos.len()));
    let adds: Vec<Action> = plan
        .repos
        .iter()
        .map(|r| Action::AddWorktree {
            repo: r.name.clone(),
            source: r.source.clone(),
            path: r.worktree.clone(),
            branch: plan.branch.clone(),
            how: r.how.clone(),
        })
        .collect();
    let added = tx.run_all(adds, true);
    if let Some(first) = added.iter().find_map(|r| r.as_ref().err()).cloned() {
        return Err(fail(tx, &plan, &added, first));
    }

    let now = jiff::Timestamp::now();
    let ws = Workspace {
        name: plan.name.clone(),
        path: plan.path.clone(),
        branch: plan.branch.clone(),
        created_at: crate::time::local(now),
        repos: plan
            .repos
            .iter()
            .map(|r| RepoEntry {
                repo_name: r.name.clone(),
                source_repo: r.source.clone(),
                worktree_path: r.worktree.clone(),
                branch: plan.branch.clone(),
                preserve_branch: r.preserve_branch,
                setup: None,
                extra: Default::default(),
            })
            .collect(),
        source: plan.source.clone(),
        blueprint: plan.blueprint.clone(),
        extra: Default::default(),
    };
    if let Err(e) = tx.commit(Action::SetState {
        name: ws.name.clone(),
        before: None,
        after: Some(Box::new(ws.clone())),
    }) {
        return Err(fail(tx, &plan, &added, e));
    }
    tx.finish()?;

    let mut warnings = plan.warnings.clone();
    let setup = run_setup(ctx, &plan.repos, &ws);
    warnings.extend(record_setup(ctx, &ws.name, &setup));
    crate::stats::record(&ctx.home, crate::stats::Event::WorkspaceCreated, &ws);

    let repos: Vec<RepoResult> = plan
        .repos
        .iter()
        .map(|r| RepoResult {
            repo: r.name.clone(),
            outcome: Outcome::Created,
            branch: plan.branch.clone(),
            path: r.worktree.clone(),
            detail: Some(r.describe()),
        })
        .collect();
    Ok(CreateReport {
        name: plan.name,
        path: plan.path,
        branch: plan.branch,
        created_at: crate::time::utc(now),
        source: plan.source,
        blueprint: plan.blueprint,
        count: repos.len(),
        repos,
        setup,
        replaced: None,
        warnings,
    })
}

/// Rolls back after `cause` and builds the error: per repository `created` → `rolled_back`
/// (or `kept`/`failed`), and `RECOVERY_PENDING` when the rollback itself failed.
fn fail(tx: Tx<'_, '_>, plan: &CreatePlan, added: &[Result<()>], cause: Error) -> Error {
    let id = tx.id().to_string();
    let (undone, clean) = tx.rollback();
    let mut repos = Vec::new();
    for (r, res) in plan.repos.iter().zip(added) {
        let undo = undone.iter().find_map(|(a, u)| match a {
            Action::AddWorktree { repo, .. } if *repo == r.name => Some(u),
            _ => None,
        });
        let (outcome, detail) = match (res, undo) {
            (Err(e), Some(Undo::Undone) | None) => (Outcome::Failed, Some(e.message.clone())),
            (Ok(()), Some(Undo::Undone) | None) => (Outcome::RolledBack, None),
            (_, Some(Undo::Kept(why))) => (Outcome::Kept, Some(why.clone())),
            (_, Some(Undo::Failed(why))) => {
                (Outcome::Failed, Some(format!("rollback failed: {why}")))
            }
        };
        repos.push(RepoResult {
            repo: r.name.clone(),
            outcome,
            branch: plan.branch.clone(),
            path: r.worktree.clone(),
            detail,
        });
    }
    // A clone made for this create goes too (one that existed before is never touched).
    for clone in &plan.cloned {
        let _ = fsx::remove_dir_all(clone);
    }
    let details = serde_json::json!({ "workspace": plan.name, "operation": id, "repos": repos });
    let err = cause
        .context(format!("cannot create workspace `{}`", plan.name))
        .with_details(details);
    if clean {
        err
    } else {
        let mut pending = tx::recovery_pending(&id, &plan.name, Kind::Create);
        pending.message = format!(
            "{}; rolling back failed too, so {}",
            err.message, pending.message
        );
        pending.details = err.details.clone();
        pending
    }
}

/// Runs the setup commands of `repos` in their new worktrees, in parallel.
pub(crate) fn run_setup(ctx: &Ctx<'_>, repos: &[RepoPlan], ws: &Workspace) -> Vec<SetupResult> {
    let with_setup: Vec<&RepoPlan> = repos.iter().filter(|r| !r.setup.is_empty()).collect();
    let vars = Vars::of(ws);
    parallel::map(&with_setup, |r| {
        ctx.events.progress(&format!("running setup in {}", r.name));
        match hooks::run_repo_commands(ctx, &r.name, &r.setup, &r.worktree, &vars, true) {
            Ok(()) => SetupResult {
                repo: r.name.clone(),
                status: SetupStatus::Ready,
                detail: None,
            },
            Err(f) => SetupResult {
                repo: r.name.clone(),
                status: SetupStatus::Failed,
                detail: Some(f.summary()),
            },
        }
    })
}

/// Records setup results on the workspace's repositories in state. Returns warnings: one
/// per failed setup, and one if the results could not be recorded.
pub(crate) fn record_setup(ctx: &Ctx<'_>, workspace: &str, setup: &[SetupResult]) -> Vec<String> {
    let mut warnings = Vec::new();
    for s in setup {
        if let Some(d) = s
            .detail
            .as_deref()
            .filter(|_| s.status == SetupStatus::Failed)
        {
            warnings.push(format!("{}: setup failed: {d}", s.repo));
        }
    }
    if setup.is_empty() {
        return warnings;
    }
    let recorded = ctx.store.update(|st| {
        if let Some(w) = st.find_mut(workspace) {
            for s in setup {
                if let Some(r) = w.repos.iter_mut().find(|r| r.repo_name == s.repo) {
                    r.setup = Some(SetupRecord {
                        status: s.status,
                        detail: s.detail.clone(),
                    });
                }
            }
        }
        Ok::<_, Error>(())
    });
    if let Err(e) = recorded {
        warnings.push(format!("could not record setup results: {}", e.message));
    }
    warnings
}
