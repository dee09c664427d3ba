//! `gw rename`: give a workspace a new name, moving its directory.
//!
//! The directory, git's worktree registrations and the state entry move together or not
//! at all: the directory is renamed, each source repository is told where its worktree
//! went (`git worktree repair`), and the state entry is updated last. If any step fails,
//! the steps already taken are undone in reverse order. `created_at` is kept.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::{Ctx, Outcome, RepoResult, names, resolve};
use crate::state::{RepoEntry, Workspace};

#[derive(Debug, Clone)]
pub struct RenameOptions {
    /// The workspace; the one containing the current directory when `None`.
    pub name: Option<String>,
    pub to: String,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RenameReport {
    /// The old name.
    pub from: String,
    /// The new name.
    pub name: String,
    pub old_path: PathBuf,
    pub path: PathBuf,
    pub branch: String,
    /// When the workspace was created (kept by the rename): RFC 3339, UTC; `null` when the
    /// recorded time cannot be read.
    pub created_at: Option<String>,
    /// Every worktree, `moved`.
    pub repos: Vec<RepoResult>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// The current directory was inside the workspace: where it is now.
    #[serde(skip)]
    pub cwd_moved_to: Option<PathBuf>,
}

impl RenameReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "Inspect the renamed workspace",
            &["gw", "status", &self.name, "--format", "json"],
        )]
    }
}

/// `gw rename [NAME] --to NEW`.
pub fn rename(ctx: &Ctx<'_>, opts: RenameOptions) -> Result<RenameReport> {
    ctx.config()?;
    let state = ctx.state()?;
    let ws = resolve::workspace(&state, opts.name.as_deref(), &ctx.env.cwd)?.clone();
    let to = opts.to.as_str();
    names::check_workspace(to)?;
    if to == ws.name {
        return Err(Error::usage(format!(
            "workspace `{to}` already has that name"
        )));
    }
    if state.find(to).is_some() {
        return Err(exists(
            to,
            format!("a workspace named `{to}` already exists"),
        ));
    }
    let parent = ws.path.parent().ok_or_else(|| {
        Error::internal(format!(
            "workspace path `{}` has no parent",
            ws.path.display()
        ))
    })?;
    let new_path = parent.join(to);
    if fsx::exists(&new_path) {
        return Err(exists(
            to,
            format!("`{}` already exists", new_path.display()),
        ));
    }
    if !ws.path.is_dir() {
        return Err(Error::new(
            Code::WorkspaceNotFound,
            format!(
                "the directory of workspace `{}` is missing: `{}`",
                ws.name,
                ws.path.display()
            ),
        )
        .with_fix("Run `gw doctor` to see what happened to it")
        .with_action(NextAction::read(
            "Diagnose",
            &["gw", "doctor", "--format", "json"],
        )));
    }

    let moved = moved_entries(&ws, &new_path);
    let mut warnings = Vec::new();
    // Worktrees whose registration must follow the move: inside the workspace directory,
    // with a source repository that still exists.
    let to_repair: Vec<(&RepoEntry, &RepoEntry)> = ws
        .repos
        .iter()
        .zip(&moved)
        .filter(|(old, new)| {
            if old.worktree_path == new.worktree_path {
                return false;
            }
            if !old.source_repo.is_dir() {
                warnings.push(format!(
                    "{}: source repository `{}` is missing; its registration was not updated",
                    old.repo_name,
                    old.source_repo.display()
                ));
                return false;
            }
            true
        })
        .collect();

    ctx.events.progress(&format!(
        "moving `{}` to `{}`",
        ws.path.display(),
        new_path.display()
    ));
    fsx::rename(&ws.path, &new_path)?;
    let mut repaired: Vec<&RepoEntry> = Vec::new();
    for (old, new) in &to_repair {
        if let Err(e) = git::worktree_repair(&old.source_repo, &[new.worktree_path.as_path()]) {
            let undo = undo(&ws.path, &new_path, &repaired);
            return Err(Error::from(e)
                .context(format!(
                    "cannot rename `{}`: {} did not accept the move",
                    ws.name, old.repo_name
                ))
                .with_details(
                    serde_json::json!({ "restored": undo.is_empty(), "restore_problems": undo }),
                ));
        }
        repaired.push(old);
    }

    let committed = ctx.store.update(|st| {
        if st.find(to).is_some() {
            return Err(exists(
                to,
                format!("a workspace named `{to}` already exists"),
            ));
        }
        let w = st
            .find_mut(&ws.name)
            .ok_or_else(|| resolve::not_found(&ws.name))?;
        w.name = to.to_string();
        w.path = new_path.clone();
        for r in w.repos.iter_mut() {
            r.worktree_path = moved_path(&r.worktree_path, &ws.path, &new_path);
        }
        Ok(())
    });
    if let Err(e) = committed {
        let undo = undo(&ws.path, &new_path, &repaired);
        let restored = undo.is_empty();
        return Err(e
            .context(format!("cannot rename `{}`", ws.name))
            .with_details(serde_json::json!({ "restored": restored, "restore_problems": undo })));
    }

    let repos: Vec<RepoResult> = moved
        .iter()
        .map(|r| RepoResult {
            repo: r.repo_name.clone(),
            outcome: Outcome::Moved,
            branch: r.branch.clone(),
            path: r.worktree_path.clone(),
            detail: None,
        })
        .collect();
    let cwd_moved_to = ctx
        .env
        .cwd
        .strip_prefix(&ws.path)
        .ok()
        .map(|rel| new_path.join(rel));
    Ok(RenameReport {
        from: ws.name.clone(),
        name: to.to_string(),
        old_path: ws.path.clone(),
        path: new_path,
        branch: ws.branch.clone(),
        created_at: crate::time::created_at_utc(&ws.created_at),
        count: repos.len(),
        repos,
        warnings,
        cwd_moved_to,
    })
}

fn exists(name: &str, message: String) -> Error {
    Error::new(Code::WorkspaceExists, message)
        .with_fix("Choose another name")
        .with_details(serde_json::json!({ "workspace": name }))
}

fn moved_path(p: &Path, from: &Path, to: &Path) -> PathBuf {
    match p.strip_prefix(from) {
        Ok(rel) => to.join(rel),
        Err(_) => p.to_path_buf(),
    }
}

fn moved_entries(ws: &Workspace, to: &Path) -> Vec<RepoEntry> {
    ws.repos
        .iter()
        .map(|r| RepoEntry {
            worktree_path: moved_path(&r.worktree_path, &ws.path, to),
            ..r.clone()
        })
        .collect()
}

/// Moves the directory back and re-points the registrations already repaired. Returns
/// what could not be restored (empty when everything is back).
fn undo(old: &Path, new: &Path, repaired: &[&RepoEntry]) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = fsx::rename(new, old) {
        problems.push(e.to_string());
        return problems;
    }
    for r in repaired {
        if let Err(e) = git::worktree_repair(&r.source_repo, &[r.worktree_path.as_path()]) {
            problems.push(format!("{}: {e}", r.repo_name));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::create::{self, CreateOptions, Selection, SourceFields};
    use crate::ops::testutil::World;

    #[test]
    fn a_rename_that_cannot_be_recorded_moves_nothing() {
        let mut world = World::new(&["api", "web"]);
        let report = create::create(
            &world.ctx(),
            CreateOptions {
                name: Some("a".into()),
                branch: "feat/a".into(),
                selection: Selection::Repos(vec!["api".into(), "web".into()]),
                track: false,
                source: SourceFields::default(),
                replace: false,
                force: false,
            },
        )
        .unwrap();
        let old = report.path.clone();
        let new = old.with_file_name("b");
        world.env.lock_timeout_ms = Some(50);
        let ctx = world.ctx();
        let state_before = ctx.state().unwrap();

        // Another process holds the state lock: the directory and the registrations have
        // already moved when the state update times out, and must move back.
        let held =
            crate::lock::acquire(&ctx.home.state_lock(), crate::lock::DEFAULT_TIMEOUT).unwrap();
        let err = rename(
            &ctx,
            RenameOptions {
                name: Some("a".into()),
                to: "b".into(),
            },
        )
        .unwrap_err();
        drop(held);
        assert_eq!(err.code, Code::Transient, "{}", err.message);
        assert_eq!(err.details.as_ref().unwrap()["restored"], true);
        assert!(old.join("api").is_dir() && !new.exists());
        assert_eq!(ctx.state().unwrap(), state_before);
        for repo in ["api", "web"] {
            let src = git::Repo::open(&world.repos.join(repo)).unwrap();
            let paths: Vec<_> = src
                .worktrees()
                .unwrap()
                .into_iter()
                .filter(|w| !w.is_main)
                .map(|w| (w.path, w.prunable))
                .collect();
            assert_eq!(paths, [(old.join(repo), false)], "{repo}");
            let wt = git::Repo::open(&old.join(repo)).unwrap();
            assert_eq!(wt.head().unwrap().branch.as_deref(), Some("feat/a"));
        }

        // Without the contention it goes through.
        rename(
            &ctx,
            RenameOptions {
                name: Some("a".into()),
                to: "b".into(),
            },
        )
        .unwrap();
        assert!(new.join("api").is_dir() && !old.exists());
    }
}
