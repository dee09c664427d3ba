//! `gw repos`: the repositories grove can put in a workspace, and resolving `-r` names
//! (and git URLs) against them.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::Config;
use crate::discover::{self, Discovery, Repo};
use crate::error::{Code, Error, Result};
use crate::git;
use crate::ops::Ctx;

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ReposReport {
    pub repos: Vec<Repo>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

pub fn discover(ctx: &Ctx<'_>, config: &Config) -> Discovery {
    discover::discover(&ctx.home, &config.repo_dirs, &config.workspace_dir)
}

pub fn repos(ctx: &Ctx<'_>) -> Result<ReposReport> {
    let config = ctx.config()?;
    let d = discover(ctx, &config);
    Ok(ReposReport {
        count: d.repos.len(),
        repos: d.repos,
        warnings: d.warnings,
    })
}

/// A repository chosen for a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub name: String,
    pub path: PathBuf,
}

/// Resolves `-r` entries: names are looked up in discovery; git URLs are cloned into the
/// first repo dir (or an existing clone with the same origin is reused). Duplicates are
/// dropped, keeping the first.
pub fn resolve(
    ctx: &Ctx<'_>,
    config: &Config,
    entries: &[String],
    discovery: &Discovery,
) -> Result<Vec<Chosen>> {
    let mut out: Vec<Chosen> = Vec::new();
    for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        let chosen = if git::url::is_git_url(entry) {
            crate::ops::clone::ensure(ctx, config, entry, discovery)?
        } else {
            let repo = discovery
                .find(entry)
                .ok_or_else(|| unknown_repo(entry, discovery))?;
            Chosen {
                name: repo.name.clone(),
                path: repo.path.clone(),
            }
        };
        if let Some(prev) = out.iter().find(|c| c.name == chosen.name) {
            if prev.path != chosen.path {
                return Err(Error::usage(format!(
                    "two repositories named `{}`: `{}` and `{}`",
                    chosen.name,
                    prev.path.display(),
                    chosen.path.display()
                ))
                .with_fix("A workspace holds one worktree per repository name; pick one of them"));
            }
            continue;
        }
        out.push(chosen);
    }
    if out.is_empty() {
        return Err(
            Error::usage("no repositories given").with_fix("Pass --repos/-r, --preset/-p or --all")
        );
    }
    Ok(out)
}

pub fn unknown_repo(name: &str, discovery: &Discovery) -> Error {
    let names = discovery.names();
    let available = if names.is_empty() {
        "none (run `gw add-dir <path>`)".to_string()
    } else {
        names.join(", ")
    };
    Error::new(Code::RepoNotFound, format!("unknown repo `{name}`"))
        .with_fix(format!("Available: {available}"))
        .with_details(serde_json::json!({ "repo": name, "available": names }))
        .with_action(crate::action::NextAction::read(
            "List repositories",
            &["gw", "repos", "--format", "json"],
        ))
}
