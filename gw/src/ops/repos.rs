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

/// The source repositories grove knows: every one a workspace in `state` uses, and every
/// one found in the configured repository directories. Only in these does grove act on
/// what a file (a journal) names, and doctor looks for what grove left in them.
pub fn known_sources(
    ctx: &Ctx<'_>,
    config: Option<&Config>,
    state: Option<&crate::state::State>,
) -> std::collections::BTreeSet<PathBuf> {
    let mut paths: std::collections::BTreeSet<PathBuf> = state
        .iter()
        .flat_map(|s| s.workspaces.iter())
        .flat_map(|w| w.repos.iter())
        .map(|r| r.source_repo.clone())
        .collect();
    if let Some(config) = config {
        paths.extend(discover(ctx, config).repos.into_iter().map(|r| r.path));
    }
    paths
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
    /// Cloned from a git URL by this invocation, so undoing the command removes it.
    pub cloned: bool,
}

/// Removes the clones this invocation made (undoing a failed command), each unless it
/// holds work of its own by now (the kernel's judgement).
pub fn remove_clones(ctx: &Ctx<'_>, chosen: &[Chosen]) {
    for c in chosen.iter().filter(|c| c.cloned) {
        let _ = crate::ops::safety::remove::clone(ctx, &c.path);
    }
}

/// Resolves `-r` entries: names are looked up in discovery; git URLs are cloned into the
/// first repo dir (or an existing clone with the same origin is reused). Duplicates are
/// dropped, keeping the first. Every name is checked before anything is cloned, and a
/// failure removes the clones made so far, so a failed resolution changes nothing.
pub fn resolve(
    ctx: &Ctx<'_>,
    config: &Config,
    entries: &[String],
    discovery: &Discovery,
) -> Result<Vec<Chosen>> {
    let entries: Vec<&str> = entries
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .collect();
    if let Some(unknown) = entries
        .iter()
        .find(|e| !git::url::is_git_url(e) && discovery.find(e).is_none())
    {
        return Err(unknown_repo(unknown, discovery));
    }
    let mut cloned: Vec<Chosen> = Vec::new();
    let resolved = resolve_entries(ctx, config, &entries, discovery, &mut cloned);
    if resolved.is_err() {
        remove_clones(ctx, &cloned);
    }
    resolved
}

fn resolve_entries(
    ctx: &Ctx<'_>,
    config: &Config,
    entries: &[&str],
    discovery: &Discovery,
    cloned: &mut Vec<Chosen>,
) -> Result<Vec<Chosen>> {
    let mut out: Vec<Chosen> = Vec::new();
    for &entry in entries {
        let chosen = if git::url::is_git_url(entry) {
            let c = crate::ops::clone::ensure(ctx, config, entry, discovery)?;
            if c.cloned {
                cloned.push(c.clone());
            }
            c
        } else {
            let repo = discovery
                .find(entry)
                .ok_or_else(|| unknown_repo(entry, discovery))?;
            Chosen {
                name: repo.name.clone(),
                path: repo.path.clone(),
                cloned: false,
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
    let suggestions = crate::ops::names::nearest(name, &names);
    Error::new(Code::RepoNotFound, format!("unknown repo `{name}`"))
        .with_fix(crate::ops::names::did_you_mean(
            &suggestions,
            &format!("Available: {available}"),
        ))
        .with_details(serde_json::json!({
            "repo": name,
            "available": names,
            "suggestions": suggestions,
        }))
        .with_action(crate::action::NextAction::read(
            "List repositories",
            &["gw", "repos", "--format", "json"],
        ))
}
