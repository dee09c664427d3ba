//! `gw context`: one cheap, read-only call that orients an agent — grove's configuration,
//! the workspaces, and, when the current directory is inside a workspace, that workspace's
//! live state (the same code path as `gw status`, so the two never disagree). It never
//! fetches, never spawns a process per repository, and works when grove is not initialised.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::config::Config;
use std::sync::Arc;

use crate::ops::Ctx;
use crate::ops::env::{self, EnvVars};
use crate::ops::hooks::Vars;
use crate::ops::ports::Stack;
use crate::ops::status::{self, StatusReport};
use crate::state::State;

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ContextReport {
    pub grove_version: &'static str,
    /// `config.toml` exists.
    pub initialized: bool,
    pub grove_home: PathBuf,
    pub config_path: PathBuf,
    /// Shown lossily when it is not valid UTF-8 (JSON cannot carry it).
    #[serde(serialize_with = "crate::fsx::serialize_lossy")]
    pub cwd: PathBuf,
    pub repo_dirs: Vec<PathBuf>,
    pub repo_dir_count: usize,
    pub workspace_dir: PathBuf,
    /// Preset names, sorted.
    pub presets: Vec<String>,
    pub preset_count: usize,
    /// Workspace names, in creation order.
    pub workspaces: Vec<String>,
    pub workspace_count: usize,
    /// The workspace containing the current directory (the deepest one), with the live
    /// state of each repository; `null` outside any workspace.
    pub workspace: Option<StatusReport>,
    /// The environment a command run here gets from grove (what `gw env` prints, for the
    /// repository whose worktree holds the current directory); `null` outside any
    /// workspace. Without `GROVE_SLOT` and the ports while the workspace has no slot yet.
    pub env: Option<EnvVars>,
    /// Deleted workspaces `gw restore` can bring back (`gw trash` lists them).
    pub trash: crate::ops::trash::TrashSummary,
    #[serde(skip)]
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub next_actions: Vec<NextAction>,
}

pub fn context(ctx: &Ctx<'_>) -> ContextReport {
    let mut warnings = Vec::new();
    let config = match Config::load_optional(&ctx.home, ctx.env) {
        Ok(c) => c,
        Err(e) => {
            warnings.push(format!("{e} (run `gw doctor`)"));
            None
        }
    };
    let state = match ctx.state() {
        Ok(s) => s,
        Err(e) => {
            warnings.push(format!("{} (run `gw doctor`)", e.message));
            State::default()
        }
    };
    let initialized = config.is_some();
    let fallback = Config::new(&ctx.home);
    let c = config.as_ref().unwrap_or(&fallback);
    let here = state.containing(&ctx.env.cwd);
    let workspace = here.map(|ws| status::of(c, ws));
    let env = here.map(|ws| {
        let repo = env::repo_at(ws, &ctx.env.cwd);
        let ports = Stack::recorded(c, ws).map(Arc::new);
        let vars = Vars {
            ports: Some(ports),
            ..Vars::recorded(ws)
        };
        EnvVars(vars.environment(repo.map(|r| (r.repo_name.as_str(), r.worktree_path.as_path()))))
    });
    let next_actions = next_actions(ctx, initialized, workspace.as_ref());
    ContextReport {
        grove_version: env!("CARGO_PKG_VERSION"),
        initialized,
        grove_home: ctx.home.root().to_path_buf(),
        config_path: ctx.home.config(),
        cwd: ctx.env.cwd.clone(),
        repo_dir_count: c.repo_dirs.len(),
        repo_dirs: c.repo_dirs.clone(),
        workspace_dir: c.workspace_dir.clone(),
        preset_count: c.presets.len(),
        presets: c.presets.keys().cloned().collect(),
        workspace_count: state.workspaces.len(),
        workspaces: state.names(),
        workspace,
        env,
        trash: crate::ops::trash::summary(ctx),
        warnings,
        next_actions,
    }
}

fn next_actions(ctx: &Ctx<'_>, initialized: bool, ws: Option<&StatusReport>) -> Vec<NextAction> {
    if !initialized {
        // Where no directory here holds repositories, the argument is a placeholder
        // (`<DIR>`, see docs/agent-cli.md): the agent fills in where the repositories live.
        let dir = init_candidate(&ctx.env.cwd)
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_else(|| INIT_PLACEHOLDER.to_string());
        return vec![NextAction::write(
            "Initialise grove with the directory holding your repositories",
            &["gw", "init", &dir, "--format", "json"],
        )];
    }
    match ws {
        Some(ws) => {
            let mut actions = vec![NextAction::read(
                format!("Inspect workspace {}", ws.workspace),
                &["gw", "status", &ws.workspace, "--format", "json"],
            )];
            actions.extend(ws.next_actions());
            actions
        }
        None => vec![
            NextAction::read("List workspaces", &["gw", "list", "--format", "json"]),
            NextAction::read(
                "List the repositories a workspace can use",
                &["gw", "repos", "--format", "json"],
            ),
        ],
    }
}

/// The argument of the `gw init` next action when no directory can be suggested: to be
/// replaced by the directory that holds the repositories.
pub const INIT_PLACEHOLDER: &str = "<DIR>";

/// A directory worth suggesting to `gw init`: the current directory when it holds git
/// repositories, or its parent when it is itself a repository.
fn init_candidate(cwd: &Path) -> Option<PathBuf> {
    if cwd.join(".git").exists() {
        return cwd.parent().map(Path::to_path_buf);
    }
    let holds_repo = std::fs::read_dir(cwd)
        .ok()?
        .filter_map(|e| e.ok())
        .any(|e| e.path().join(".git").is_dir());
    holds_repo.then(|| cwd.to_path_buf())
}
