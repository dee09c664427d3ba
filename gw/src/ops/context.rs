//! `gw context`: one cheap, read-only call that orients an agent — grove's configuration,
//! the workspaces, and, when the current directory is inside a workspace, that workspace's
//! live state (the same code path as `gw status`, so the two never disagree). It never
//! fetches, never spawns a process per repository, and works when grove is not initialised.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::config::Config;
use crate::ops::Ctx;
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
    let workspace = state.containing(&ctx.env.cwd).map(status::of);
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
        warnings,
        next_actions,
    }
}

fn next_actions(ctx: &Ctx<'_>, initialized: bool, ws: Option<&StatusReport>) -> Vec<NextAction> {
    if !initialized {
        return match init_candidate(&ctx.env.cwd) {
            Some(dir) => vec![NextAction::write(
                "Initialise grove with the directory holding your repositories",
                &["gw", "init", &dir.to_string_lossy(), "--format", "json"],
            )],
            None => Vec::new(),
        };
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
