//! Carrying out one recorded action, and undoing it: the one implementation behind a live
//! operation, its rollback and the recovery of an interrupted one.
//!
//! Every path an action names came from a journal or from state, so each is checked
//! against the workspace directories ([`crate::ops::safety::territory`]) before anything is done
//! at it. Undo never removes what the operation did not create, nor what gained work since:
//! that is kept and said why.

use std::path::{Path, PathBuf};

use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git::{self, Checkout};
use crate::ops::Ctx;
use crate::ops::safety::{keep, remove};
use crate::state::journal::{self, Action, BranchSource, StepStatus};
use crate::state::same_record;
use crate::treecopy::Copied;

use super::locks::repo_lock;
use super::trash;

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

/// Checks, changing nothing, that `action` can still be carried out as it was planned. A
/// step refused here never happened, and is recorded so: undoing the operation leaves what
/// it names alone (a branch another operation made meanwhile is not this one's to delete).
pub fn precheck(ctx: &Ctx<'_>, action: &Action) -> Result<()> {
    if let Action::RestoreBranch { source, branch, .. } = action {
        // One that exists already is not this restore's to make, nor to delete on undo.
        return match git::Repo::open(source)?.local_branch(branch) {
            Some(at) => Err(trash::taken(branch, &at)),
            None => Ok(()),
        };
    }
    if let Action::CopyPaths { path, entries, .. } = action {
        return crate::ops::warm::precheck(ctx, path, entries);
    }
    let Action::AddWorktree {
        repo,
        source,
        branch,
        how,
        ..
    } = action
    else {
        return Ok(());
    };
    let exists = git::Repo::open(source)?.local_branch(branch).is_some();
    match (how, exists) {
        (BranchSource::New { .. } | BranchSource::Track { .. }, true) => {
            let holder = ctx.state().ok().and_then(|st| {
                let source = fsx::canonical(source);
                st.workspaces
                    .iter()
                    .find(|w| {
                        w.repos.iter().any(|r| {
                            r.branch == *branch && fsx::canonical(&r.source_repo) == source
                        })
                    })
                    .map(|w| w.name.clone())
            });
            Err(Error::new(
                Code::BranchConflict,
                format!(
                    "branch `{branch}` was made in {repo} since this command planned to make it{}",
                    holder
                        .map(|h| format!(" (workspace `{h}` holds it)"))
                        .unwrap_or_default()
                ),
            )
            .with_fix("Use another branch, or work in the workspace that holds it"))
        }
        (BranchSource::Existing, false) => Err(Error::new(
            Code::StateChanged,
            format!(
                "branch `{branch}` of {repo} was deleted since this command planned to check it out"
            ),
        )
        .with_fix("Run the command again")),
        _ => Ok(()),
    }
}

/// Carries out one action.
pub fn apply(ctx: &Ctx<'_>, action: &Action) -> Result<()> {
    run(ctx, action).map(|_| ())
}

/// Carries out one action, and says what a copy (`Action::CopyPaths`) copied.
pub fn run(ctx: &Ctx<'_>, action: &Action) -> Result<Option<Copied>> {
    let fault = ctx.faults.as_deref().map(|f| (f, f.next()));
    if let Some((f, i)) = fault {
        f.check(i, false)?;
    }
    let copied = apply_inner(ctx, action)?;
    if let Some((f, i)) = fault {
        f.check(i, true)?;
    }
    Ok(copied)
}

fn apply_inner(ctx: &Ctx<'_>, action: &Action) -> Result<Option<Copied>> {
    let territory = ctx.territory();
    let done: Result<()> = match action {
        Action::CopyPaths {
            repo,
            source,
            path,
            entries,
        } => {
            territory.check(path, "copy into")?;
            return crate::ops::warm::copy(ctx, repo, source, path, entries).map(Some);
        }
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
                return Ok(None);
            }
            let gone: Vec<PathBuf> = git::Repo::open(source)?
                .worktrees()?
                .into_iter()
                .filter(|w| !w.is_main && w.prunable && territory.check(&w.path, "").is_ok())
                .map(|w| w.path)
                .collect();
            gone.iter()
                .try_for_each(|p| remove::registration(ctx, source, p).map(|_| ()))
                .map_err(|e| e.context(repo))
        }
        Action::RemoveRegistration {
            repo,
            source,
            path,
            keep,
        } => match keep {
            Some(keep) => keep::registration_kept(ctx, source, path, keep),
            None => remove::registration(ctx, source, path),
        }
        .map(|_| ())
        .map_err(|e| e.context(repo)),
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
                return Ok(None);
            }
            git::worktree_repair(source, &paths).map_err(|e| Error::from(e).context(repo))
        }
        Action::DeleteBranch {
            repo,
            source,
            branch,
            tip,
            keep,
            ..
        } => match keep {
            Some(keep) => keep::branch_kept(ctx, source, branch, tip, keep),
            None => remove::branch(ctx, source, branch, tip),
        }
        .map(|_| ())
        .map_err(|e| e.context(repo)),
        Action::RecordTrash { entry, record } => trash::record(ctx, entry, record),
        Action::RestoreRegistration {
            repo,
            source,
            kept,
            admin,
            path,
        } => trash::register(ctx, source, kept, admin, path).map_err(|e| e.context(repo)),
        Action::RestoreBranch {
            repo,
            source,
            branch,
            tip,
            config,
        } => trash::branch(ctx, source, branch, tip, config).map_err(|e| e.context(repo)),
        Action::DropTrash { entry, refs } => trash::drop(ctx, entry, refs),
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
            if !same_record(current.as_ref(), before.as_deref()) {
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
            // A new record has no slot yet: `Store::update` gives it the smallest free one.
            match (after, current.is_some()) {
                (Some(w), true) => {
                    st.replace(name, (**w).clone());
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
    };
    done.map(|()| None)
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
        } => remove::added_worktree(ctx, source, path, branch, how)?,
        Action::CopyPaths { path, entries, .. } => remove::copied(ctx, path, entries)?,
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
        } => remove::restore(
            ctx,
            &remove::Target::Branch {
                source: source.clone(),
                branch: branch.clone(),
                tip: tip.clone(),
                keep: None,
            },
        )
        .map_err(|e| e.context(repo))?,
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
        Action::RecordTrash { entry, .. } => trash::unrecord(ctx, entry)?,
        Action::RestoreRegistration {
            source,
            admin,
            path,
            ..
        } => trash::unregister(ctx, source, admin, path)?,
        Action::RestoreBranch {
            source,
            branch,
            tip,
            ..
        } => trash::unbranch(ctx, source, branch, tip)?,
        // Only ever past the commit point, where nothing is undone.
        Action::DropTrash { .. } => Undo::Undone,
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
    let restored =
        |st: &crate::state::State| before.is_none_or(|b| same_record(st.find(&b.name), Some(b)));
    if !same_record(st.find(&key), after) && restored(&st) {
        return Ok(Undo::Undone);
    }
    let mut outcome = Undo::Undone;
    ctx.store.update(|st| {
        let current = st.find(&key).cloned();
        if !same_record(current.as_ref(), after) {
            // Not what this operation left: either it never happened, or someone changed it
            // since. Only the first is safe to ignore.
            if !restored(st) {
                outcome = Undo::Kept(format!(
                    "workspace `{key}` has changed since; left as it is"
                ));
            }
            return Ok::<_, Error>(());
        }
        match (before, after.is_some()) {
            (Some(b), true) if b.name == key => {
                st.replace(&key, b.clone());
            }
            (Some(b), _) => {
                let mut b = b.clone();
                b.slot = b.slot.or(current.and_then(|c| c.slot));
                st.remove(&key);
                if st.find(&b.name).is_none() {
                    st.workspaces.push(b);
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
