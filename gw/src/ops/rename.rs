//! `gw rename`: give a workspace a new name, moving its directory.
//!
//! The directory, git's worktree registrations and the state entry move together or not
//! at all, in one transaction (`ops::tx`) holding the locks of both names, and of every
//! source repository from the move until the repairs are done: the directory is renamed,
//! each source repository is told where its worktree went (`git worktree repair`), and
//! the state entry is updated last. If any step fails, the steps already
//! taken are undone in reverse order (and a process killed half way leaves a journal that
//! `gw doctor --fix` rolls back). `created_at` is kept.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::plan::{self, Change, ChangeKind, Described, Fact, PlanDoc, PlanKind};
use crate::ops::tx::{self, Tx};
use crate::ops::{Ctx, Outcome, RepoResult, names, resolve};
use crate::state::journal::{Action, Kind};
use crate::state::{RepoEntry, Workspace};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RenameOptions {
    /// The workspace; the one containing the current directory when `None`.
    pub name: Option<String>,
    pub to: String,
    /// `gw apply`: the plan this rename must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
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
    /// The current directory was inside the workspace: where it is now (the shell
    /// integration goes there).
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
    let (name, to) = names_of(ctx, &opts)?;
    // Both names are locked from validation to commit: nobody creates NEW meanwhile.
    let locks = tx::lock_workspaces(ctx, &[&name, to])?;
    let (ws, new_path) = validate(&ctx.state()?, &name, to)?;
    crate::ops::resolve::require_dir(&ws)?;

    check_worktrees_inside(&ws)?;
    let moved = moved_entries(&ws, &new_path);
    let mut warnings = Vec::new();
    // Worktrees whose registration must follow the move: inside the workspace directory,
    // with a source repository that still exists.
    let mut repairs = Vec::new();
    for (old, new) in ws.repos.iter().zip(&moved) {
        if old.worktree_path == new.worktree_path {
            continue;
        }
        if !old.source_repo.is_dir() {
            warnings.push(format!(
                "{}: source repository `{}` is missing; its registration was not updated",
                old.repo_name,
                old.source_repo.display()
            ));
            continue;
        }
        if !git::is_worktree_of(&old.worktree_path, &old.source_repo) {
            warnings.push(format!(
                "{}: `{}` is not a worktree of `{}`; no registration was updated for it",
                old.repo_name,
                old.worktree_path.display(),
                old.source_repo.display()
            ));
            continue;
        }
        repairs.push(Action::RepairWorktrees {
            repo: old.repo_name.clone(),
            source: old.source_repo.clone(),
            paths: vec![new.worktree_path.clone()],
        });
    }
    let mut after = ws.clone();
    after.name = to.to_string();
    after.path = new_path.clone();
    after.repos = moved.clone();

    if let Some(expect) = &opts.expect {
        let now = describe(&ws, &new_path, &warnings);
        plan::verify(PlanKind::Rename, expect, &inputs(&ws.name, to), &now)?;
    }
    // The paths come from state: both ends must lie in a workspace directory.
    ctx.territory().check(&ws.path, "move")?;
    ctx.territory().check(&new_path, "move a workspace to")?;
    // Between the move and the repairs, git's registrations point at a directory that is
    // gone; no other gw may write these repositories meanwhile (grove never prunes other
    // worktrees' registrations, but a `git worktree add` must not reuse theirs either).
    let sources: Vec<&Path> = repairs
        .iter()
        .filter_map(|a| match a {
            Action::RepairWorktrees { source, .. } => Some(source.as_path()),
            _ => None,
        })
        .collect();
    let _hold = tx::hold_repos(ctx, &sources)?;
    let mut tx = Tx::begin(ctx, locks, Kind::Rename, &ws.name, &[to.to_string()])?;
    ctx.events.progress(&format!(
        "moving `{}` to `{}`",
        ws.path.display(),
        new_path.display()
    ));
    let done = steps(&mut tx, &ws, &after, repairs);
    if let Err(cause) = done {
        let id = tx.id().to_string();
        let (_, clean) = tx.rollback();
        return Err(if clean {
            cause
                .context(format!("cannot rename `{}`; nothing was changed", ws.name))
                .with_details(serde_json::json!({ "restored": true, "operation": id }))
        } else {
            tx::recovery_pending(&id, &ws.name, Kind::Rename)
                .with_message(format!(
                    "cannot rename `{}`: {}; moving it back failed too",
                    ws.name, cause.message
                ))
                .with_details(serde_json::json!({ "restored": false, "operation": id }))
        });
    }
    tx.finish()?;

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
    // The current directory comes from getcwd, with symlinks resolved: compared with the
    // workspace's old path resolved too (its parent exists), not as state records it.
    let cwd = fsx::canonical_lenient(&ctx.env.cwd).unwrap_or_else(|| ctx.env.cwd.clone());
    let old_resolved = fsx::canonical_lenient(&ws.path).unwrap_or_else(|| ws.path.clone());
    let cwd_moved_to = cwd
        .strip_prefix(&old_resolved)
        .or_else(|_| ctx.env.cwd.strip_prefix(&ws.path))
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

/// Every worktree path state records inside the workspace directory must stay inside it
/// with symlinks resolved: the directory moves as a whole, and git is told the worktrees'
/// new places, so a path leading out through a symlink would have grove point git at (and
/// write the `.git` file of) something outside. Checked before anything moves.
fn check_worktrees_inside(ws: &Workspace) -> Result<()> {
    let Some(inside) = fsx::canonical_lenient(&ws.path) else {
        return Ok(());
    };
    for r in ws
        .repos
        .iter()
        .filter(|r| r.worktree_path.starts_with(&ws.path))
    {
        let resolved = fsx::canonical_lenient(&r.worktree_path);
        let escapes = r
            .worktree_path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
            || !resolved
                .as_ref()
                .is_some_and(|c| c.starts_with(&inside) && *c != inside);
        if escapes {
            return Err(Error::new(
                Code::CorruptState,
                format!(
                    "cannot rename `{}`; nothing was changed: the worktree of {} is recorded at `{}`, which leads out of the workspace directory",
                    ws.name,
                    r.repo_name,
                    r.worktree_path.display()
                ),
            )
            .with_fix("Correct the path in state.json by hand, or run `gw doctor` to see what is wrong")
            .with_details(serde_json::json!({ "workspace": ws.name, "repo": r.repo_name, "path": r.worktree_path })));
        }
    }
    Ok(())
}

/// The workspace named `name` and where it would move: refused when `to` is taken, as a
/// workspace or as a directory.
fn validate(state: &crate::state::State, name: &str, to: &str) -> Result<(Workspace, PathBuf)> {
    let ws = resolve::by_name(state, name)?.clone();
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
    Ok((ws, new_path))
}

fn inputs(name: &str, to: &str) -> serde_json::Value {
    serde_json::to_value(RenameOptions {
        name: Some(name.to_string()),
        to: to.to_string(),
        expect: None,
    })
    .expect("options serialise")
}

/// The workspace renamed and its new name, checked before anything is locked.
fn names_of<'o>(ctx: &Ctx<'_>, opts: &'o RenameOptions) -> Result<(String, &'o str)> {
    ctx.config()?;
    let name = resolve::name(ctx, opts.name.as_deref())?;
    let to = opts.to.as_str();
    names::check_workspace(to)?;
    if to == name {
        return Err(Error::usage(format!(
            "workspace `{to}` already has that name"
        )));
    }
    Ok((name, to))
}

/// `gw plan rename`: validates exactly as `gw rename` does and describes what it would do.
pub fn plan_doc(ctx: &Ctx<'_>, opts: &RenameOptions) -> Result<PlanDoc> {
    let (name, to) = names_of(ctx, opts)?;
    let (ws, new_path) = validate(&ctx.state()?, &name, to)?;
    let described = describe(&ws, &new_path, &[]);
    Ok(plan::document(
        PlanKind::Rename,
        inputs(&ws.name, to),
        described,
    ))
}

fn describe(ws: &Workspace, new_path: &Path, warnings: &[String]) -> Described {
    let mut d = Described {
        workspace: ws.name.clone(),
        warnings: warnings.to_vec(),
        ..Described::default()
    };
    d.facts.push(Fact::new(
        None,
        "path",
        if ws.path.is_dir() {
            "exists"
        } else {
            "missing"
        },
    ));
    d.facts.push(Fact::new(
        None,
        "new_path",
        if fsx::exists(new_path) {
            "exists"
        } else {
            "absent"
        },
    ));
    d.changes.push(
        Change::new(ChangeKind::MoveDirectory)
            .path(&ws.path)
            .detail(format!("to {}", new_path.display())),
    );
    for (old, new) in ws.repos.iter().zip(moved_entries(ws, new_path)) {
        if old.worktree_path != new.worktree_path && old.source_repo.is_dir() {
            d.changes.push(
                Change::new(ChangeKind::RepairWorktrees)
                    .repo(&old.repo_name)
                    .path(&new.worktree_path)
                    .detail(format!(
                        "git worktree repair in {}",
                        old.source_repo.display()
                    )),
            );
        }
    }
    d.changes
        .push(Change::new(ChangeKind::UpdateStateEntry).detail(format!(
            "workspace {} becomes {}",
            ws.name,
            new_path.display()
        )));
    d
}

/// The rename's steps: the directory moves, the registrations follow it, and the state
/// entry changes name and paths (the commit point). Undoing the move (`tx::undo_steps`)
/// moves the directory back and points git at the old paths again.
fn steps(
    tx: &mut Tx<'_, '_>,
    ws: &Workspace,
    after: &Workspace,
    repairs: Vec<Action>,
) -> Result<()> {
    tx.run(Action::MoveDir {
        from: ws.path.clone(),
        to: after.path.clone(),
    })?;
    tx.run_all(repairs, true)
        .into_iter()
        .collect::<Result<Vec<()>>>()?;
    tx.commit(Action::SetState {
        name: ws.name.clone(),
        before: Some(Box::new(ws.clone())),
        after: Some(Box::new(after.clone())),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git;
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
                replacing: None,
                copy: None,
                expect: None,
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
                expect: None,
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
                expect: None,
            },
        )
        .unwrap();
        assert!(new.join("api").is_dir() && !old.exists());
    }
}
