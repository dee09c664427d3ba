//! `gw add-dir` and `gw remove-dir`: the directories grove searches for repositories.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::discover;
use crate::error::{Error, Result};
use crate::ops::Ctx;

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DirReport {
    /// The directory added or removed.
    pub dir: PathBuf,
    pub outcome: DirOutcome,
    pub repo_dirs: Vec<PathBuf>,
    /// Repositories found in `dir` (for `add-dir`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repos_found: Option<usize>,
    /// `--dry-run`: validated, nothing written; the report says what would change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DirOutcome {
    Added,
    AlreadyPresent,
    Removed,
}

/// Resolves each path and checks that it is an existing directory.
pub fn check_dirs(ctx: &Ctx<'_>, dirs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    dirs.iter()
        .map(|d| {
            let abs = ctx.env.resolve_path(d);
            if abs.is_dir() {
                Ok(abs)
            } else {
                Err(
                    Error::usage(format!("repo dir `{}` does not exist", abs.display()))
                        .with_fix("Pass an existing directory that holds your git repositories")
                        .with_details(serde_json::json!({ "dir": abs })),
                )
            }
        })
        .collect()
}

/// `gw add-dir`; `dry_run`: validated the same, nothing written.
pub fn add_dir(ctx: &Ctx<'_>, dir: &Path, dry_run: bool) -> Result<DirReport> {
    let mut config = ctx.config()?;
    let dir = check_dirs(ctx, &[dir.to_path_buf()])?.remove(0);
    let outcome = if config.repo_dirs.contains(&dir) {
        DirOutcome::AlreadyPresent
    } else {
        let mut all = config.repo_dirs.clone();
        all.push(dir.clone());
        config.set_repo_dirs(all);
        if !dry_run {
            config.save()?;
        }
        DirOutcome::Added
    };
    let found = discover::discover(&ctx.home, std::slice::from_ref(&dir), &config.workspace_dir);
    Ok(DirReport {
        dir,
        outcome,
        repo_dirs: config.repo_dirs.clone(),
        repos_found: Some(found.repos.len()),
        dry_run,
    })
}

/// `gw remove-dir`; `dry_run`: validated the same, nothing written.
pub fn remove_dir(ctx: &Ctx<'_>, dir: &Path, dry_run: bool) -> Result<DirReport> {
    let mut config = ctx.config()?;
    let abs = ctx.env.resolve_path(dir);
    let before = config.repo_dirs.clone();
    if !before.contains(&abs) {
        return Err(
            Error::usage(format!("`{}` is not a configured repo dir", abs.display())).with_fix(
                format!(
                    "Configured: {}",
                    before
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
        );
    }
    config.set_repo_dirs(before.into_iter().filter(|d| *d != abs).collect());
    if !dry_run {
        config.save()?;
    }
    Ok(DirReport {
        dir: abs,
        outcome: DirOutcome::Removed,
        repo_dirs: config.repo_dirs.clone(),
        repos_found: None,
        dry_run,
    })
}

/// The configured repo dirs, for pickers.
pub fn configured(ctx: &Ctx<'_>) -> Result<Vec<PathBuf>> {
    Ok(ctx.config()?.repo_dirs)
}
