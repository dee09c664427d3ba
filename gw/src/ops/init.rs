//! `gw init [DIR…]`: create the grove directory and configuration, and add repo dirs.

use std::path::PathBuf;

use serde::Serialize;

use crate::action::NextAction;
use crate::config::Config;
use crate::error::Result;
use crate::fsx;
use crate::ops::{Ctx, dirs};

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct InitReport {
    pub config_path: PathBuf,
    pub repo_dirs: Vec<PathBuf>,
    pub workspace_dir: PathBuf,
    /// How many repositories the repo dirs hold.
    pub repos_found: usize,
    /// The configuration did not exist before.
    pub created: bool,
    /// `--dry-run`: validated, nothing written; the report says what would change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

impl InitReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "List the repositories grove found",
            &["gw", "repos", "--format", "json"],
        )]
    }
}

/// `dry_run`: validates as `gw init` does and reports what it would write, writing nothing.
pub fn init(ctx: &Ctx<'_>, dirs_in: &[PathBuf], dry_run: bool) -> Result<InitReport> {
    let to_add = dirs::check_dirs(ctx, dirs_in)?;
    let existing = Config::load_optional(&ctx.home, ctx.env)?;
    let created = existing.is_none();
    let mut config = existing.unwrap_or_else(|| Config::new(&ctx.home));
    let mut all = config.repo_dirs.clone();
    for d in to_add {
        if !all.contains(&d) {
            all.push(d);
        }
    }
    config.set_repo_dirs(all);
    if !dry_run {
        fsx::create_dir_all(ctx.home.root())?;
        fsx::create_dir_all(&config.workspace_dir)?;
        if created {
            // A new grove trusts no repository's commands yet; a grove directory from before
            // trust (`config.toml` without `trust.json`) is upgraded by the first check instead.
            crate::ops::trust::start(ctx)?;
        }
        config.save()?;
    }
    let d = crate::ops::repos::discover(ctx, &config);
    Ok(InitReport {
        config_path: config.path().to_path_buf(),
        repo_dirs: config.repo_dirs.clone(),
        workspace_dir: config.workspace_dir.clone(),
        repos_found: d.repos.len(),
        created,
        dry_run,
        warnings: d.warnings,
    })
}
