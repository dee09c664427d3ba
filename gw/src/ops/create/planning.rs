//! Deciding, before anything changes, how each repository's worktree will be made.

use std::path::{Path, PathBuf};

use crate::config::{Config, RepoConfig};
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::repos::{self, Chosen};
use crate::ops::{Ctx, names, tx};
use crate::parallel;
use crate::state::journal::BranchSource;
use crate::state::{Blueprint, State};

use super::{
    CreateOptions, CreatePlan, RepoPlan, Selection, exists, preset_hash, preset_not_found,
    source_of, workspace_name,
};

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
                return Err(e.with_message(message));
            }
        }
    }
    let chosen = repos::resolve(ctx, config, &entries, &discovery)?;
    // A refused create changes nothing: not even a clone it made on the way.
    let mut undo_clones = UndoClones(ctx, Some(&chosen));

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
    let copy = opts.copy.unwrap_or(config.copy);
    let decided = parallel::map(&chosen, |c| {
        let o = overrides.iter().find(|(n, _, _)| *n == c.name);
        let base = o.and_then(|(_, b, _)| b.as_deref());
        let track = o.and_then(|(_, _, t)| *t).unwrap_or(opts.track);
        plan_repo(
            &Around {
                territory: ctx.territory(),
                state,
                ignored: &ignored,
                copy,
            },
            c,
            &path,
            &opts.branch,
            track,
            base,
        )
    });
    let mut repos = Vec::new();
    let mut warnings = fetch_warnings;
    for d in decided {
        let (repo, w) = d?;
        warnings.extend(w);
        repos.push(repo);
    }
    if opts.copy == Some(true) && repos.iter().all(|r| r.commands.copy.is_empty()) {
        warnings.push(
            "--copy: no repository's `.grove.toml` names paths to `copy`; nothing is copied".into(),
        );
    }
    undo_clones.1 = None;
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
struct UndoClones<'a, 'c>(&'a Ctx<'c>, Option<&'a [Chosen]>);

impl Drop for UndoClones<'_, '_> {
    fn drop(&mut self) {
        if let Some(chosen) = self.1 {
            repos::remove_clones(self.0, chosen);
        }
    }
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
    ctx.events.progress(&format!(
        "fetching {}",
        crate::ops::count(with_remote.len(), "repository", "repositories")
    ));
    let results = parallel::map_processes(&with_remote, |c| {
        crate::ops::task(ctx, &c.name, "fetching", |on| {
            // Fetch writes refs; serialise with other gw processes working in this repository.
            let _lock = tx::repo_lock(ctx, &c.path)?;
            git::fetch(&c.path, on).map_err(Error::from)
        })
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

/// What planning a repository's worktree looks around at: where grove may act, the
/// workspaces in state (to name the one holding a branch), and the worktrees that do not
/// count as conflicts (those of the workspace `--replace` replaces).
pub(crate) struct Around<'a> {
    pub territory: &'a crate::ops::safety::Territory,
    pub state: &'a State,
    pub ignored: &'a [PathBuf],
    /// Copy the `.grove.toml` `copy` paths into the new worktree.
    pub copy: bool,
}

pub(crate) fn plan_repo(
    around: &Around<'_>,
    c: &Chosen,
    root: &Path,
    branch: &str,
    track: bool,
    base_branch: Option<&str>,
) -> Result<(RepoPlan, Vec<String>)> {
    let Around {
        territory,
        state,
        ignored,
        copy,
    } = *around;
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
        // Name the workspace that holds it: two creates of one branch at once, and the
        // loser is told whose it is.
        let canonical = fsx::canonical(&wt.path);
        let holder = state
            .workspaces
            .iter()
            .find(|w| {
                w.repos
                    .iter()
                    .any(|r| fsx::canonical(&r.worktree_path) == canonical)
            })
            .map(|w| w.name.clone());
        return Err(Error::new(
            Code::WorktreeExists,
            format!(
                "branch `{branch}` already has a worktree in {} at `{}`{}",
                c.name,
                wt.path.display(),
                holder
                    .as_deref()
                    .map(|h| format!(" (workspace `{h}` holds it)"))
                    .unwrap_or_default()
            ),
        )
        .with_fix("Use another branch, or remove that worktree (or workspace) first")
        .with_details(serde_json::json!({
            "repo": c.name, "branch": branch, "worktree": wt.path, "workspace": holder,
        })));
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
    let copy = if copy {
        // The commit the new worktree will have checked out decides what room it leaves.
        let commit = match &how {
            BranchSource::New { start_oid, .. } | BranchSource::Track { start_oid, .. } => {
                start_oid.clone()
            }
            BranchSource::Existing => repo.local_branch(branch),
        };
        crate::ops::warm::plan(&c.name, &c.path, &repo_config, commit.as_deref())?
    } else {
        crate::ops::warm::CopyPlan::default()
    };
    Ok((
        RepoPlan {
            name: c.name.clone(),
            source: c.path.clone(),
            worktree: root.join(&c.name),
            how,
            preserve_branch: local,
            stale,
            setup: repo_config.setup.clone(),
            commands: repo_config,
            copy,
        },
        warnings,
    ))
}
