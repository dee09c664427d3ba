//! `gw create`: a new workspace with one worktree per repository, all on one branch.
//!
//! Creation is all or nothing: a plan is made and validated first, without changing
//! anything; then worktrees are added (in parallel across repositories); if any step fails,
//! everything this invocation created is undone in reverse order and nothing that existed
//! before (a branch, a directory) is touched. Setup commands and the `post_create` hook run
//! after the workspace is recorded, outside any lock, because they may call `gw`.

mod describe;
mod execute;
mod planning;
mod replace;

pub use describe::describe;
pub(crate) use describe::{describe_repos, describe_setup};
pub use execute::execute;
pub(crate) use execute::{copy_all, record_setup, run_setup};
pub use planning::plan;
pub(crate) use planning::{Around, fetch_all, plan_repo};

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::action::NextAction;

use crate::config::{Config, HookKind, RepoConfig};

use crate::error::{Code, Error, Result};

use crate::fsx;

use crate::ops::blueprint::BlueprintFile;

use crate::ops::hooks::{self, Vars};

use crate::ops::plan::{self, PlanDoc, PlanKind};

use crate::ops::tx::{self};

use crate::ops::{Ctx, RepoResult, delete, names, trust};

use crate::state::journal::BranchSource;

use crate::state::{Blueprint, SetupStatus, Source, Workspace};

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
        // state.json never holds a credential: a URL is recorded without its userinfo.
        let url = self.url.unwrap_or_default();
        Some(Source {
            provider: self.provider.unwrap_or_default(),
            url: crate::redact::url_without_userinfo(&url).into_owned(),
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
    /// With `replace`: the workspace replaced, as a plan records it (`gw create --replace`
    /// itself replaces the one the current directory is in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacing: Option<String>,
    /// `--copy` (`Some(true)`) or `--no-copy`: copy each repository's `.grove.toml` `copy`
    /// paths into its new worktree; `None` takes `[create] copy` from the configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<bool>,
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
    /// The repository's `.grove.toml`, as read while planning: what approval covers.
    pub commands: RepoConfig,
    /// What is copied from the checkout into the new worktree (empty unless asked).
    pub copy: crate::ops::warm::CopyPlan,
}

/// Makes sure the `setup` commands of the repositories in `plans` may run
/// (`trust::require`), before anything is created. `cloned` are the repositories this
/// command cloned: on a refusal they are kept, so that `gw trust PATH` can approve them
/// (and the command, run again, uses them); on any other error they go.
pub(crate) fn require_trust(
    ctx: &Ctx<'_>,
    doing: &str,
    plans: &[RepoPlan],
    cloned: &[PathBuf],
) -> Result<()> {
    let projects: Vec<trust::Project<'_>> = plans
        .iter()
        .filter(|r| !r.setup.is_empty())
        .map(|r| trust::Project {
            name: &r.name,
            path: &r.source,
            config: &r.commands,
            cloned: cloned.contains(&r.source),
        })
        .collect();
    let result = trust::require(ctx, doing, &projects);
    if let Err(e) = &result
        && e.code != Code::UntrustedCommands
    {
        for clone in cloned {
            let _ = crate::ops::safety::remove::clone(ctx, clone);
        }
    }
    result
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
    /// What was copied into each new worktree (`--copy`), per repository that copied.
    pub copied: Vec<crate::ops::warm::CopyResult>,
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
    let locks = tx::lock_workspaces(ctx, &[&name])?.with_branch(ctx, &opts.branch)?;
    let state = ctx.state()?;
    let replacing = replace::replaced(ctx, &state, &opts)?;
    let mut plan = plan(
        ctx,
        &config,
        &state,
        &opts,
        replacing.as_ref().map(|w| w.name.as_str()),
    )?;
    if let Some(expect) = &opts.expect {
        // Both parts must still hold: the removal of the replaced workspace and the creation.
        let verified = replace::describe(ctx, &config, replacing.as_ref(), opts.force, &plan)
            .and_then(|now| plan::verify(PlanKind::Create, expect, &inputs(&opts), &now));
        if let Err(e) = verified {
            for clone in &plan.cloned {
                let _ = crate::ops::safety::remove::clone(ctx, clone);
            }
            return Err(e);
        }
    }
    require_trust(ctx, "gw create", &plan.repos, &plan.cloned)?;
    let mut warnings = Vec::new();
    if let Some(old) = &replacing {
        let deleted = delete::delete_as(
            ctx,
            delete::DeleteOptions {
                names: vec![old.name.clone()],
                force: opts.force,
                purge: false,
                expect: None,
            },
            crate::ops::safety::Remover::CreateReplace,
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
    let hook = config.hooks.get(HookKind::PostCreate);
    // The workspace as recorded (with its slot), unless it cannot be read back.
    let ws = ctx
        .state()
        .ok()
        .and_then(|st| st.find(&report.name).cloned())
        .unwrap_or_else(|| Workspace {
            name: report.name.clone(),
            path: report.path.clone(),
            branch: report.branch.clone(),
            created_at: report.created_at.clone(),
            repos: Vec::new(),
            source: report.source.clone(),
            blueprint: None,
            slot: None,
            extra: Default::default(),
        });
    let vars = match hook {
        Some(_) if !ctx.no_hooks => Vars::of(ctx, &ws),
        _ => Vars::recorded(&ws),
    };
    let hook =
        hooks::run_global(ctx, hook, HookKind::PostCreate, &vars, &ws.path).map_err(|e| {
            let message = format!("workspace `{}` was created, but {}", ws.name, e.message);
            e.with_message(message).with_action(NextAction::read(
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

/// `gw plan create`: validates exactly as `gw create` does and describes what it would do
/// — with `--replace`, the removal of the workspace it replaces first. Nothing changes,
/// except that repositories are fetched (and a clone made from a git URL is removed again).
pub fn plan_doc(ctx: &Ctx<'_>, opts: &CreateOptions) -> Result<PlanDoc> {
    let config = ctx.config()?;
    let state = ctx.state()?;
    let old = replace::replaced(ctx, &state, opts)?;
    let plan = plan(
        ctx,
        &config,
        &state,
        opts,
        old.as_ref().map(|w| w.name.as_str()),
    )?;
    let described = replace::describe(ctx, &config, old.as_ref(), opts.force, &plan);
    for clone in &plan.cloned {
        let _ = crate::ops::safety::remove::clone(ctx, clone);
    }
    // The plan names the workspace it replaces, wherever it is applied from.
    let recorded = CreateOptions {
        replacing: old.map(|w| w.name),
        ..opts.clone()
    };
    Ok(plan::document(
        PlanKind::Create,
        inputs(&recorded),
        described?,
    ))
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
    let known: Vec<String> = config.presets.keys().cloned().collect();
    let suggestions = crate::ops::names::nearest(name, &known);
    Error::new(Code::PresetNotFound, format!("no preset named `{name}`"))
        .with_fix(if known.is_empty() {
            "No presets are defined; create one with `gw preset add NAME -r a,b`".to_string()
        } else {
            crate::ops::names::did_you_mean(
                &suggestions,
                &format!("Known presets: {}", known.join(", ")),
            )
        })
        .with_details(serde_json::json!({ "preset": name, "suggestions": suggestions }))
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
