//! Carrying out one recorded action, and undoing it: the one implementation behind a live
//! operation, its rollback and the recovery of an interrupted one.
//!
//! Every path an action names came from a journal or from state, so each is checked
//! against the workspace directories ([`crate::ops::territory`]) before anything is done
//! at it. Undo never removes what the operation did not create, nor what gained work since:
//! that is kept and said why.

use std::path::{Path, PathBuf};

use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git::{self, Checkout};
use crate::ops::Ctx;
use crate::state::journal::{self, Action, BranchSource, StepStatus};

use super::locks::repo_lock;

/// What undoing one step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// Reverted (or it had not happened).
    Undone,
    /// Left in place on purpose; the reason.
    Kept(String),
    /// Undoing failed; the error.
    Failed(String),
}

/// Carries out one action.
pub fn apply(ctx: &Ctx<'_>, action: &Action) -> Result<()> {
    let fault = ctx.faults.as_deref().map(|f| (f, f.next()));
    if let Some((f, i)) = fault {
        f.check(i, false)?;
    }
    apply_inner(ctx, action)?;
    if let Some((f, i)) = fault {
        f.check(i, true)?;
    }
    Ok(())
}

fn apply_inner(ctx: &Ctx<'_>, action: &Action) -> Result<()> {
    let territory = ctx.territory();
    match action {
        Action::CreateDir { path } => {
            territory.check(path, "create the workspace directory")?;
            match fsx::create_dir(path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(Error::new(
                    Code::WorkspaceExists,
                    format!("`{}` already exists", path.display()),
                )
                .with_fix("Choose another name, or remove the directory")),
                Err(e) => Err(e.into()),
            }
        }
        Action::AddWorktree {
            repo,
            source,
            path,
            branch,
            how,
        } => {
            territory.check(path, "add a worktree at")?;
            let checkout = match how {
                BranchSource::New { start, .. } => Checkout::NewBranch {
                    start: start.clone(),
                },
                BranchSource::Existing => Checkout::Existing,
                BranchSource::Track { remote_ref, .. } => Checkout::Track {
                    remote_ref: remote_ref.clone(),
                },
            };
            let _lock = repo_lock(ctx, source)?;
            crate::ops::task(ctx, repo, "checking out", |on| {
                git::worktree_add(source, path, branch, &checkout, on)
            })
            .map_err(|e| Error::from(e).context(repo))
        }
        Action::MoveDir { from, to } => {
            territory.check(from, "move")?;
            territory.check(to, "move a directory to")?;
            if let Some(parent) = to.parent() {
                fsx::create_dir_all(parent)?;
            }
            if fsx::exists(to) {
                return Err(Error::new(
                    Code::WorkspaceExists,
                    format!("`{}` already exists", to.display()),
                ));
            }
            Ok(fsx::rename(from, to)?)
        }
        // Journals of earlier versions recorded a `git worktree prune`. It would drop the
        // registrations of every worktree whose directory is missing — a user's on an
        // unmounted drive, another gw's in the middle of a move — so what it finishes is
        // narrower: the registrations of missing directories inside a workspace directory.
        Action::PruneWorktrees { repo, source } => {
            if !source.is_dir() {
                return Ok(());
            }
            let gone: Vec<PathBuf> = git::Repo::open(source)?
                .worktrees()?
                .into_iter()
                .filter(|w| !w.is_main && w.prunable && territory.check(&w.path, "").is_ok())
                .map(|w| w.path)
                .collect();
            gone.iter()
                .try_for_each(|p| remove_registration(ctx, source, p))
                .map_err(|e| e.context(repo))
        }
        Action::RemoveRegistration { repo, source, path } => {
            remove_registration(ctx, source, path).map_err(|e| e.context(repo))
        }
        Action::RepairWorktrees {
            repo,
            source,
            paths,
        } => {
            for p in paths {
                territory.check(p, "repair the worktree registration of")?;
            }
            let _lock = repo_lock(ctx, source)?;
            // Only `source`'s own worktrees: git repairs the registration a `.git` file
            // names, in whichever repository it is.
            let paths: Vec<&Path> = paths
                .iter()
                .map(PathBuf::as_path)
                .filter(|p| git::is_worktree_of(p, source))
                .collect();
            if paths.is_empty() {
                return Ok(());
            }
            git::worktree_repair(source, &paths).map_err(|e| Error::from(e).context(repo))
        }
        Action::DeleteBranch {
            repo,
            source,
            branch,
            ..
        } => {
            let _lock = repo_lock(ctx, source)?;
            git::branch_delete(source, branch, true).map_err(|e| Error::from(e).context(repo))
        }
        Action::SwitchBranch { repo, path, to, .. } => {
            territory.check(path, "switch the branch of")?;
            git::switch(path, to, false).map_err(|e| Error::from(e).context(repo))
        }
        // `gw sync` runs its rebases itself (a stopped one is aborted at once); the journal
        // only records that one is under way.
        Action::Rebase { repo, .. } => Err(Error::internal(format!(
            "{repo}: a rebase is recorded by `gw sync`, not replayed"
        ))),
        Action::SetState {
            name,
            before,
            after,
        } => ctx.store.update(|st| {
            let current = st.find(name).cloned();
            if current.as_ref() != before.as_deref() {
                return Err(match (&current, before) {
                    (Some(_), None) => Error::new(
                        Code::WorkspaceExists,
                        format!("a workspace named `{name}` already exists"),
                    )
                    .with_fix("Choose another name"),
                    _ => Error::new(
                        Code::StateChanged,
                        format!("workspace `{name}` changed while this command was running"),
                    )
                    .with_fix("Look at it again (`gw status`) and retry"),
                });
            }
            match (after, current.is_some()) {
                (Some(w), true) => {
                    let slot = st.find_mut(name).expect("present: checked above");
                    *slot = (**w).clone();
                }
                (Some(w), false) => st.workspaces.push((**w).clone()),
                (None, _) => {
                    st.remove(name);
                }
            }
            // A rename stores the workspace under a new name; make sure it is free.
            if let Some(w) = after
                && w.name != *name
                && st.workspaces.iter().filter(|x| x.name == w.name).count() > 1
            {
                return Err(Error::new(
                    Code::WorkspaceExists,
                    format!("a workspace named `{}` already exists", w.name),
                ));
            }
            Ok(())
        }),
    }
}

/// Removes `source`'s registration of the worktree git recorded at `path`, whose directory
/// is gone — that one only, never the registrations of other worktrees (which another
/// process may be moving). Done when there is no such registration; refused when the
/// directory exists again; and checked afterwards, so a registration git could not remove
/// (a read-only repository) is a failure, left for recovery to retry.
pub(crate) fn remove_registration(ctx: &Ctx<'_>, source: &Path, path: &Path) -> Result<()> {
    ctx.territory()
        .check(path, "remove the worktree registration of")?;
    if !source.is_dir() {
        return Ok(());
    }
    let _lock = repo_lock(ctx, source)?;
    let registered = || -> Result<bool> {
        Ok(git::Repo::open(source)?
            .worktrees()?
            .iter()
            .any(|w| !w.is_main && w.path == path))
    };
    if !registered()? {
        return Ok(());
    }
    if fsx::exists(path) {
        return Err(Error::new(
            Code::StateChanged,
            format!(
                "`{}` exists again, so its worktree registration was left in `{}`",
                path.display(),
                source.display()
            ),
        )
        .with_fix(
            "Look at what is there; grove removes registrations only of directories it moved away",
        ));
    }
    git::worktree_remove(source, path, true)?;
    if registered()? {
        return Err(Error::new(
            Code::PermissionDenied,
            format!(
                "`git worktree remove` left the registration of `{}` in `{}`",
                path.display(),
                source.display()
            ),
        )
        .with_fix(format!(
            "Check that git may write `{}`, then run `gw doctor --fix`",
            source.join(".git/worktrees").display()
        )));
    }
    Ok(())
}

/// Reverts one action if it happened and it is safe to.
pub fn undo(ctx: &Ctx<'_>, action: &Action) -> Undo {
    match undo_inner(ctx, action) {
        Ok(u) => u,
        Err(e) => Undo::Failed(e.message.clone()),
    }
}

fn undo_inner(ctx: &Ctx<'_>, action: &Action) -> Result<Undo> {
    Ok(match action {
        Action::CreateDir { path } => {
            ctx.territory()
                .check(path, "remove the workspace directory")?;
            if !path.exists() || fsx::remove_empty_dir(path) {
                Undo::Undone
            } else {
                Undo::Kept(format!("`{}` is not empty", path.display()))
            }
        }
        Action::AddWorktree {
            source,
            path,
            branch,
            how,
            ..
        } => undo_add_worktree(ctx, source, path, branch, how)?,
        // Without the later repairs: `undo_steps` passes those.
        Action::MoveDir { from, to } => undo_move(ctx, from, to, &[])?,
        // Removing registrations of directories that are gone leaves nothing to restore.
        Action::PruneWorktrees { .. } | Action::RemoveRegistration { .. } => Undo::Undone,
        // Undone by the move it follows (`undo_steps`), once the directories are back.
        Action::RepairWorktrees { .. } => Undo::Undone,
        // A rebase left in progress (its gw was killed) is aborted: the branch, index and
        // files go back to where they were. One that finished is kept as it is.
        Action::Rebase { repo, path, .. } => {
            ctx.territory().check(path, "abort the rebase in")?;
            let in_progress = git::Repo::open(path)?.head()?.in_progress;
            if in_progress.as_deref() == Some("rebase") {
                git::rebase_abort(path).map_err(|e| Error::from(e).context(repo))?;
            }
            Undo::Undone
        }
        Action::DeleteBranch {
            repo,
            source,
            branch,
            tip,
            ..
        } => {
            let repo_r = git::Repo::open(source)?;
            match repo_r.local_branch(branch) {
                None => {
                    let _lock = repo_lock(ctx, source)?;
                    git::branch_create(source, branch, tip)
                        .map_err(|e| Error::from(e).context(repo))?;
                    Undo::Undone
                }
                Some(at) if at == *tip => Undo::Undone,
                Some(at) => Undo::Kept(format!("branch {branch} exists again, at {at}")),
            }
        }
        Action::SwitchBranch {
            repo,
            path,
            from,
            from_oid,
            to,
        } => {
            ctx.territory().check(path, "switch the branch of")?;
            let r = git::Repo::open(path)?;
            let head = r.head()?;
            if head.branch.as_deref() != Some(to.as_str()) {
                return Ok(Undo::Undone);
            }
            if !r.changes()?.is_clean() {
                return Ok(Undo::Kept(format!(
                    "{repo} has uncommitted changes on {to}"
                )));
            }
            let target = from.clone().unwrap_or_else(|| from_oid.clone());
            git::switch(path, &target, from.is_none()).map_err(|e| Error::from(e).context(repo))?;
            Undo::Undone
        }
        Action::SetState {
            name,
            before,
            after,
        } => undo_state(ctx, name, before.as_deref(), after.as_deref())?,
    })
}

fn undo_state(
    ctx: &Ctx<'_>,
    name: &str,
    before: Option<&crate::state::Workspace>,
    after: Option<&crate::state::Workspace>,
) -> Result<Undo> {
    let key = after
        .map(|w| w.name.clone())
        .unwrap_or_else(|| name.to_string());
    // Reading needs no lock: when the change never happened there is nothing to take the
    // state lock for (it may be the lock that made the change fail).
    let st = ctx.store.load()?;
    if st.find(&key) != after && before.map(|b| st.find(&b.name)) == before.map(Some) {
        return Ok(Undo::Undone);
    }
    let mut outcome = Undo::Undone;
    ctx.store.update(|st| {
        let current = st.find(&key).cloned();
        if current.as_ref() != after {
            // Not what this operation left: either it never happened, or someone changed it
            // since. Only the first is safe to ignore.
            let back = before.map(|b| st.find(&b.name).cloned());
            if back.flatten().as_ref() != before {
                outcome = Undo::Kept(format!(
                    "workspace `{key}` has changed since; left as it is"
                ));
            }
            return Ok::<_, Error>(());
        }
        match (before, after.is_some()) {
            (Some(b), true) if b.name == key => {
                *st.find_mut(&key).expect("present: compared above") = b.clone();
            }
            (Some(b), _) => {
                st.remove(&key);
                if st.find(&b.name).is_none() {
                    st.workspaces.push(b.clone());
                }
            }
            (None, _) => {
                st.remove(&key);
            }
        }
        Ok(())
    })?;
    Ok(outcome)
}

/// Undoes `steps` newest first, updating their status.
///
/// A `RepairWorktrees` step is undone together with the `MoveDir` it follows, not on its
/// own: newest first, the repair comes up while its directories are still at their new
/// place, where re-pointing git is pointless; it is the move back that leaves git's
/// registrations pointing at the wrong place. So undoing a move re-links the worktrees
/// that the later repairs had pointed into it (see [`undo_move`]).
pub fn undo_steps(ctx: &Ctx<'_>, steps: &mut [journal::Step]) -> Vec<(Action, Undo)> {
    let mut out = Vec::new();
    for i in (0..steps.len()).rev() {
        if matches!(
            steps[i].status,
            StepStatus::Undone | StepStatus::Kept | StepStatus::Planned
        ) {
            continue;
        }
        let u = match &steps[i].action {
            Action::MoveDir { from, to } => {
                let relink = relinks(to, &steps[i + 1..]);
                match undo_move(ctx, from, to, &relink) {
                    Ok(u) => u,
                    Err(e) => Undo::Failed(e.message.clone()),
                }
            }
            action => undo(ctx, action),
        };
        let step = &mut steps[i];
        match &u {
            Undo::Undone => {
                step.status = StepStatus::Undone;
                step.error = None;
            }
            Undo::Kept(why) => {
                step.status = StepStatus::Kept;
                step.error = Some(why.clone());
            }
            Undo::Failed(e) => {
                step.status = StepStatus::UndoFailed;
                step.error = Some(e.clone());
            }
        }
        out.push((step.action.clone(), u));
    }
    out
}

/// The worktrees that repairs recorded in `later` (whatever their status: a repair that
/// may have happened counts) pointed git at inside `to`, per source repository.
fn relinks<'s>(to: &Path, later: &'s [journal::Step]) -> Vec<(&'s str, &'s Path, Vec<&'s Path>)> {
    let mut out = Vec::new();
    for step in later {
        if let Action::RepairWorktrees {
            repo,
            source,
            paths,
        } = &step.action
        {
            let inside: Vec<&Path> = paths
                .iter()
                .map(PathBuf::as_path)
                .filter(|p| p.starts_with(to))
                .collect();
            if !inside.is_empty() {
                out.push((repo.as_str(), source.as_path(), inside));
            }
        }
    }
    out
}

/// Moves `to` back to `from`, then points git at the worktrees in their old place again
/// (`relink`: the paths inside `to` that git was told about after the move).
fn undo_move(
    ctx: &Ctx<'_>,
    from: &Path,
    to: &Path,
    relink: &[(&str, &Path, Vec<&Path>)],
) -> Result<Undo> {
    let territory = ctx.territory();
    territory.check(to, "move back")?;
    territory.check(from, "move a directory back to")?;
    if fsx::exists(to) && !fsx::exists(from) {
        fsx::rename(to, from)?;
    }
    // The trash directory may have been made for this move; leave no empty one.
    if let Some(parent) = to
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == crate::home::TRASH))
    {
        fsx::remove_empty_dir(parent);
    }
    for (repo, source, paths) in relink {
        // Only `source`'s worktrees back inside the workspace directory (a path through a
        // symlink may lead out of it): anything else was not a worktree the repair could
        // have moved, and repairing it would write where grove does not act (git repairs
        // the registration a `.git` file names, in any repository), or fail for ever.
        let back: Vec<PathBuf> = paths
            .iter()
            .filter_map(|p| p.strip_prefix(to).ok())
            .map(|rel| from.join(rel))
            .filter(|p| territory.check(p, "").is_ok() && git::is_worktree_of(p, source))
            .collect();
        if back.is_empty() || !source.is_dir() {
            continue;
        }
        let back: Vec<&Path> = back.iter().map(PathBuf::as_path).collect();
        let _lock = repo_lock(ctx, source)?;
        git::worktree_repair(source, &back).map_err(|e| Error::from(e).context(*repo))?;
    }
    Ok(Undo::Undone)
}

/// Removes a worktree this operation added (and the branch, when the operation created it
/// and it did not move). A worktree holding a person's work is kept. One whose checkout was
/// cut short (the command killed, a step interrupted) is not work: every file in it is a
/// file of the commit it was checking out, and it goes.
fn undo_add_worktree(
    ctx: &Ctx<'_>,
    source: &Path,
    path: &Path,
    branch: &str,
    how: &BranchSource,
) -> Result<Undo> {
    ctx.territory().check(path, "remove the worktree")?;
    let repo = git::Repo::open(source)?;
    let canon = fsx::canonical(path);
    let registered = repo
        .worktrees()?
        .into_iter()
        .find(|w| !w.is_main && (w.path == path || fsx::canonical(&w.path) == canon));
    // The commits whose files a checkout of this worktree may have written.
    let commits: Vec<String> = [
        how.created_at_oid().flatten().map(str::to_string),
        repo.local_branch(branch),
    ]
    .into_iter()
    .flatten()
    .collect();
    let only_checked_out = |dir: &Path| {
        commits
            .iter()
            .any(|c| repo.holds_only_files_of(c, dir).unwrap_or(false))
    };
    if let Some(wt) = &registered {
        if wt.path.is_dir() {
            let opened = git::Repo::open(&wt.path);
            // Work beyond the files (a person committed on a detached HEAD there, locked
            // it, started a rebase) is kept whatever the files say.
            let held = opened
                .as_ref()
                .map(crate::ops::teardown::held_work)
                .unwrap_or_default();
            if !held.is_empty() {
                return Ok(Undo::Kept(format!(
                    "`{}` holds work: {}",
                    path.display(),
                    held.join("; ")
                )));
            }
            let clean = opened.and_then(|r| r.changes()).is_ok_and(|c| c.is_clean());
            if !clean && !only_checked_out(&wt.path) {
                return Ok(Undo::Kept(format!(
                    "`{}` has uncommitted changes",
                    path.display()
                )));
            }
        }
        let _lock = repo_lock(ctx, source)?;
        git::worktree_remove(source, &wt.path, true)?;
    } else if path.is_dir() && !fsx::remove_empty_dir(path) {
        if !only_checked_out(path) {
            return Ok(Undo::Kept(format!(
                "`{}` exists but is not a worktree of this repository",
                path.display()
            )));
        }
        fsx::remove_dir_all(path)?;
    }
    if let Some(start_oid) = how.created_at_oid()
        && let Some(tip) = repo.local_branch(branch)
    {
        if start_oid.is_some_and(|s| s != tip) {
            return Ok(Undo::Kept(format!("branch {branch} has new commits; kept")));
        }
        // Where it started was not recorded (a journal of an earlier version): delete it
        // only when that loses nothing.
        if start_oid.is_none() && repo.unique_commits(branch).ok() != Some(0) {
            return Ok(Undo::Kept(format!(
                "branch {branch} may hold commits found nowhere else; kept"
            )));
        }
        if repo
            .worktrees()?
            .iter()
            .any(|w| w.branch.as_deref() == Some(branch))
        {
            return Ok(Undo::Kept(format!(
                "branch {branch} is checked out elsewhere; kept"
            )));
        }
        let _lock = repo_lock(ctx, source)?;
        git::branch_delete(source, branch, true)?;
    }
    Ok(Undo::Undone)
}
