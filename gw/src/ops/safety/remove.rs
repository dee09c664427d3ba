//! The removal actions: every removal of a branch, a worktree, a worktree's registration,
//! a tree of files or a worktree's changes goes through [`erase`], which knows what it is
//! removing ([`Target`]) and says what it did. Each public function here is one remover's
//! way in: it judges (with the verdict of `work`/`verdict`), checks again under the
//! repository's lock where another process could have changed things since, and erases.
//!
//! Erasing is the one place a removal happens (`git branch -D`, `git worktree remove`, a
//! recursive delete, `git reset --hard`), so that keeping what is removed instead — a
//! deleted branch's tip under a ref, a worktree moved into the trash — is a change to it
//! alone, and [`restore`] its undo.

use std::path::{Path, PathBuf};

use super::in_git;
use super::verdict::Remover;
use super::work;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::Ctx;
use crate::ops::tx::{Undo, hold_repos, repo_lock};
use crate::state::journal::BranchSource;

/// Something grove removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The branch `branch` of `source`, which must still be at `tip`. With `keep`, a
    /// reference of that name is left at `tip` (made in the same transaction).
    Branch {
        source: PathBuf,
        branch: String,
        tip: String,
        keep: Option<String>,
    },
    /// `source`'s registration of the worktree git recorded at `path`, whose directory is
    /// gone (moved into the trash, or missing). With `keep`, its private git directory is
    /// moved there (copied when that is another file system) rather than erased.
    Registration {
        source: PathBuf,
        path: PathBuf,
        keep: Option<PathBuf>,
    },
    /// A worktree of `source` at `path`: its directory and its registration.
    Worktree { source: PathBuf, path: PathBuf },
    /// A tree of files: what kind says which, and the rule that let it go.
    Tree { path: PathBuf, kind: Tree },
    /// The changes to tracked files of the worktree at `path` (`gw reset --discard`).
    TrackedChanges { path: PathBuf },
    /// A reference under `refs/grove/trash/` of `source` that keeps a deleted branch's tip
    /// for a trash entry, while it still points at `oid`.
    KeptRef {
        source: PathBuf,
        name: String,
        oid: String,
    },
    /// The private git directory `admin` (`<git dir>/worktrees/<id>`) that `gw restore`
    /// made for the worktree at `path`, while it still says it is that worktree's; the
    /// worktree's files are not touched.
    Restored { admin: PathBuf, path: PathBuf },
    /// A copy of a kept registration a restore was making in a repository's git directory
    /// (`<git dir>/.grove-restore-<admin>`, or that copy's own partial one), killed half way.
    RestoreCopy { path: PathBuf },
}

/// Which tree of files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tree {
    /// An entry of a workspace directory's `.trash`: a quarantined workspace or worktree.
    Trash,
    /// A directory holding nothing but empty directories.
    Empty,
    /// A repository this invocation cloned from a git URL, holding nothing of its own.
    Clone,
    /// A worktree directory a checkout cut short left, holding nothing but files of the
    /// commit it was checking out.
    HalfMade,
    /// What a copy into a new worktree made (`.grove.toml` `copy`): a file, a link or a
    /// tree, absent before the copy began, undone with the operation that made it.
    Copied,
}

/// What [`erase`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// It was removed (erased: nothing of it is kept).
    Removed,
    /// It was not there.
    Absent,
}

/// The one place grove removes anything: `target`, which every caller has judged first.
/// Paths are checked against the territory; git runs under the repository's lock.
pub(super) fn erase(ctx: &Ctx<'_>, target: &Target) -> Result<Done> {
    let territory = ctx.territory();
    // A gw run from inside what goes (`gw doctor --fix` from the worktree it rolls back)
    // would be left in a directory that is gone, where gix opens no repository.
    if let Target::Worktree { path, .. } | Target::Tree { path, .. } = target {
        fsx::step_out_of(path);
    }
    match target {
        Target::Branch {
            source,
            branch,
            tip,
            keep,
        } => {
            let _lock = repo_lock(ctx, source)?;
            return in_git::branch(source, branch, tip, keep.as_deref());
        }
        Target::Registration { source, path, keep } => {
            territory.check(path, "remove the worktree registration of")?;
            if let Some(keep) = keep {
                territory.check(keep, "keep a worktree registration at")?;
            }
            if !source.is_dir() {
                return Ok(Done::Absent);
            }
            let _lock = repo_lock(ctx, source)?;
            return in_git::registration(source, path, keep.as_deref());
        }
        Target::Worktree { source, path } => {
            territory.check(path, "remove the worktree")?;
            let _lock = repo_lock(ctx, source)?;
            git::worktree_remove(source, path, true)?;
        }
        Target::Tree { path, kind } => {
            if *kind == Tree::Trash {
                territory.check_trash_entry(path)?;
            } else if *kind == Tree::Copied {
                // What is checked is where the entry is: a copied link is removed itself,
                // wherever it points.
                let parent = path.parent().unwrap_or(path);
                territory.check(parent, "remove a copy in")?;
            } else if *kind != Tree::Clone {
                territory.check(path, "remove")?;
            }
            if *kind == Tree::Copied {
                // A file, a link or a tree; a dangling link is still there to remove.
                if std::fs::symlink_metadata(path).is_err() {
                    return Ok(Done::Absent);
                }
                fsx::remove_entry(path)?;
                return Ok(Done::Removed);
            }
            if !fsx::exists(path) {
                return Ok(Done::Absent);
            }
            // A tree with a read-only directory in it (a Go module cache) stops the plain
            // removal half way; then the permissions are given back and it goes again.
            if fsx::remove_dir_all(path).is_err() {
                fsx::remove_entry(path)?;
            }
        }
        Target::TrackedChanges { path } => {
            territory.check(path, "discard the changes of")?;
            git::discard_changes(path)?;
        }
        Target::KeptRef { source, name, oid } => {
            if !name.starts_with(crate::state::trash::REF_PREFIX) || !source.is_dir() {
                return Ok(Done::Absent);
            }
            let _lock = repo_lock(ctx, source)?;
            match git::Repo::open(source)?.reference(name) {
                None => return Ok(Done::Absent),
                Some(at) if at != *oid => return Err(moved(name, oid, &at)),
                Some(_) => git::ref_delete(source, name, oid)?,
            }
        }
        Target::Restored { admin, path } => {
            territory.check(path, "remove the registration of")?;
            if !fsx::exists(admin) {
                return Ok(Done::Absent);
            }
            if !super::keep::registration_of(admin, path) {
                return Err(Error::new(
                    Code::StateChanged,
                    format!(
                        "`{}` is no longer the registration of `{}`; left as it is",
                        admin.display(),
                        path.display()
                    ),
                ));
            }
            fsx::remove_dir_all(admin)?;
        }
        Target::RestoreCopy { path } => {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let in_git_dir = path.parent().is_some_and(|d| d.join("objects").is_dir());
            if !in_git_dir || !name.trim_start_matches('.').starts_with("grove-restore-") {
                return Err(Error::internal(format!(
                    "refusing to remove `{}`: it is no restore's copy",
                    path.display()
                )));
            }
            fsx::remove_dir_all(path)?;
        }
    }
    Ok(Done::Removed)
}

pub(super) fn moved(branch: &str, tip: &str, at: &str) -> Error {
    Error::new(
        Code::StateChanged,
        format!(
            "branch {branch} moved to {} since it was judged (at {}); it was kept",
            short(at),
            short(tip)
        ),
    )
    .with_fix("Look at what was committed to it; run the command again to judge it anew")
}

fn short(oid: &str) -> &str {
    oid.get(..7).unwrap_or(oid)
}

/// Undoes what [`erase`] did to `target`, when it can: a branch comes back at its tip
/// (unless one of that name exists again elsewhere, which is kept). What was erased of
/// anything else cannot come back; there is nothing to undo for a registration whose
/// directory was gone.
pub fn restore(ctx: &Ctx<'_>, target: &Target) -> Result<Undo> {
    match target {
        Target::Branch {
            source,
            branch,
            tip,
            ..
        } => match git::Repo::open(source)?.local_branch(branch) {
            None => {
                let _lock = repo_lock(ctx, source)?;
                git::branch_create(source, branch, tip)?;
                Ok(Undo::Undone)
            }
            Some(at) if at == *tip => Ok(Undo::Undone),
            Some(at) => Ok(Undo::Kept(format!("branch {branch} exists again, at {at}"))),
        },
        Target::Registration { .. } => Ok(Undo::Undone),
        Target::Worktree { .. }
        | Target::Tree { .. }
        | Target::TrackedChanges { .. }
        | Target::KeptRef { .. }
        | Target::Restored { .. }
        | Target::RestoreCopy { .. } => Ok(Undo::Failed("erased; it cannot be restored".into())),
    }
}

/// Deletes `branch` of `source`, judged to go while at `tip`: refused (`STATE_CHANGED`,
/// and kept) if it moved since.
pub fn branch(ctx: &Ctx<'_>, source: &Path, branch: &str, tip: &str) -> Result<Done> {
    erase(
        ctx,
        &Target::Branch {
            source: source.to_path_buf(),
            branch: branch.to_string(),
            tip: tip.to_string(),
            keep: None,
        },
    )
}

/// Removes `source`'s registration of the worktree git recorded at `path`, whose
/// directory is gone (moved into the trash by the operation that judged it) — that one
/// only, never the registrations of other worktrees (which another process may be moving).
pub fn registration(ctx: &Ctx<'_>, source: &Path, path: &Path) -> Result<Done> {
    erase(
        ctx,
        &Target::Registration {
            source: source.to_path_buf(),
            path: path.to_path_buf(),
            keep: None,
        },
    )
}

/// Removes a stale registration no operation vouches for (`gw doctor --fix`, or one that
/// holds the branch a create needs), unless its private git directory holds work
/// ([`work::of_registration`], judged as [`Remover::DoctorFix`]): a directory that was
/// merely moved comes back with `git worktree repair`, and without its registration it
/// cannot.
pub fn stale_registration(ctx: &Ctx<'_>, source: &Path, path: &Path) -> Result<Done> {
    let held = git::Repo::open(source).ok().and_then(|repo| {
        let wt = repo
            .worktrees()
            .ok()?
            .into_iter()
            .find(|w| !w.is_main && w.path == path)?;
        let work = work::of_registration(&repo, &wt);
        let refused: Vec<String> = work
            .refusal(Remover::DoctorFix, false)
            .iter()
            .map(|h| h.describe())
            .collect();
        (!refused.is_empty()).then_some(refused)
    });
    if let Some(held) = held {
        return Err(Error::new(
            Code::WorktreeDirty,
            format!(
                "the registration of `{}` holds work ({}); left as it is — if the worktree \
                 moved, `git -C {} worktree repair <its new path>`",
                path.display(),
                held.join("; "),
                crate::proc::shell_quote(&source.to_string_lossy())
            ),
        ));
    }
    registration(ctx, source, path)
}

/// `gw doctor --fix` of a worktree no workspace records: removed only when, judged again
/// under the repository's lock, it holds nothing but the files of its commit and no work
/// beyond them. Otherwise the reason it was left.
pub fn unrecorded_worktree(ctx: &Ctx<'_>, source: &Path, path: &Path) -> Result<Done, String> {
    ctx.territory()
        .check(path, "remove the worktree")
        .map_err(|e| e.message.clone())?;
    // Judged and removed while no other gw changes the repository.
    let _hold = hold_repos(ctx, &[source]).map_err(|e| e.message.clone())?;
    if !disposable(path) {
        return Err("it holds files of its own now; left as it is".into());
    }
    erase(
        ctx,
        &Target::Worktree {
            source: source.to_path_buf(),
            path: path.to_path_buf(),
        },
    )
    .map_err(|e| e.message.clone())
}

/// A worktree no workspace records that `gw doctor --fix` may remove: nothing but the
/// files of the commit it has checked out (ignored files count: they are not grove's to
/// call disposable), and no work beyond them.
pub fn disposable(path: &Path) -> bool {
    let Ok(repo) = git::Repo::open(path) else {
        return false;
    };
    work::beyond_files(&repo).is_empty()
        && repo
            .head()
            .ok()
            .and_then(|h| h.oid)
            .is_some_and(|head| repo.holds_only_files_of(&head, path).unwrap_or(false))
}

/// Undoes a worktree an operation added at `path` (with `branch`, obtained as `how`):
/// removes it, and the branch when the operation created it and it holds nothing new. A
/// worktree holding a person's work is kept; one whose checkout was cut short (the command
/// killed, a step interrupted) is not work — every file in it is a file of the commit it
/// was checking out — and goes.
pub fn added_worktree(
    ctx: &Ctx<'_>,
    source: &Path,
    path: &Path,
    branch: &str,
    how: &BranchSource,
) -> Result<Undo> {
    ctx.territory().check(path, "remove the worktree")?;
    // Judged and removed while no other gw changes the repository.
    let _hold = hold_repos(ctx, &[source])?;
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
            let mut work = work::of_worktree(&wt.path);
            if only_checked_out(&wt.path) {
                // A checkout cut short: its missing files are changes, and they are not work.
                work.0
                    .retain(|h| !matches!(h.kind(), work::Kind::Changes | work::Kind::Untracked));
            }
            let refused: Vec<String> = work
                .refusal(Remover::Rollback, false)
                .iter()
                .map(|h| h.describe())
                .collect();
            if !refused.is_empty() {
                return Ok(Undo::Kept(format!(
                    "`{}` holds work: {}",
                    path.display(),
                    refused.join("; ")
                )));
            }
        }
        erase(
            ctx,
            &Target::Worktree {
                source: source.to_path_buf(),
                path: wt.path.clone(),
            },
        )?;
    } else if path.is_dir() && !fsx::remove_empty_dir(path) {
        if !only_checked_out(path) {
            return Ok(Undo::Kept(format!(
                "`{}` exists but is not a worktree of this repository",
                path.display()
            )));
        }
        erase(
            ctx,
            &Target::Tree {
                path: path.to_path_buf(),
                kind: Tree::HalfMade,
            },
        )?;
    }
    let Some(start_oid) = how.created_at_oid() else {
        return Ok(Undo::Undone);
    };
    let Some(tip) = repo.local_branch(branch) else {
        return Ok(Undo::Undone);
    };
    if start_oid.is_some_and(|s| s != tip) {
        return Ok(Undo::Kept(format!("branch {branch} has new commits; kept")));
    }
    // Where it started was not recorded (a journal of an earlier version): delete it only
    // when that loses nothing.
    if start_oid.is_none() && repo.unique_commits(branch).ok() != Some(0) {
        return Ok(Undo::Kept(format!(
            "branch {branch} may hold commits found nowhere else; kept"
        )));
    }
    if git::Repo::open(source)?
        .worktrees()?
        .iter()
        .any(|w| w.branch.as_deref() == Some(branch))
    {
        return Ok(Undo::Kept(format!(
            "branch {branch} is checked out elsewhere; kept"
        )));
    }
    erase(
        ctx,
        &Target::Branch {
            source: source.to_path_buf(),
            branch: branch.to_string(),
            tip,
            keep: None,
        },
    )?;
    Ok(Undo::Undone)
}

/// Undoes a copy into the new worktree at `worktree`: removes each of `entries` (relative to
/// it), which the copy made whole — the step that copied them began only when none of them
/// was there (`tx::precheck`). Each is checked against the territory with its symbolic
/// links resolved, so nothing outside the workspace directory is touched.
pub fn copied(ctx: &Ctx<'_>, worktree: &Path, entries: &[PathBuf]) -> Result<Undo> {
    for entry in entries {
        if !super::territory::is_relative_inside(entry) {
            return Err(Error::new(
                Code::CorruptState,
                format!(
                    "refusing to remove `{}`: not a path inside a worktree",
                    entry.display()
                ),
            ));
        }
        erase(
            ctx,
            &Target::Tree {
                path: worktree.join(entry),
                kind: Tree::Copied,
            },
        )?;
    }
    Ok(Undo::Undone)
}

/// Removes `dir`, a repository this invocation cloned, unless it holds work of its own
/// by now (a person committed in it meanwhile): then it is kept, and why is returned.
pub fn clone(ctx: &Ctx<'_>, dir: &Path) -> Result<Done, String> {
    if let Ok(repo) = git::Repo::open(dir) {
        let held = super::repository::of_repository(&repo, true);
        if !held.is_empty() {
            return Err(format!(
                "the clone `{}` holds work, so it was kept: {}",
                dir.display(),
                held.iter()
                    .map(|h| h.describe())
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    erase(
        ctx,
        &Target::Tree {
            path: dir.to_path_buf(),
            kind: Tree::Clone,
        },
    )
    .map_err(|e| e.message.clone())
}

/// Removes the quarantined workspace or worktree `entry` of a workspace directory's
/// `.trash` (nothing else).
pub fn trash(ctx: &Ctx<'_>, entry: &Path) -> Result<Done> {
    erase(
        ctx,
        &Target::Tree {
            path: entry.to_path_buf(),
            kind: Tree::Trash,
        },
    )
}

/// Removes `path`, a directory inside a workspace directory, when it holds nothing but
/// empty directories (looked at again now).
pub fn empty_tree(ctx: &Ctx<'_>, path: &Path) -> Result<Done, String> {
    if !only_empty_dirs(path) {
        return Err("it is not empty any more; left as it is".into());
    }
    erase(
        ctx,
        &Target::Tree {
            path: path.to_path_buf(),
            kind: Tree::Empty,
        },
    )
    .map_err(|e| e.message.clone())
}

/// A directory with nothing in it but (nested) empty directories.
pub fn only_empty_dirs(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    meta.is_dir()
        && walkdir::WalkDir::new(path)
            .follow_links(false)
            .into_iter()
            .all(|e| e.is_ok_and(|e| e.file_type().is_dir()))
}

/// `gw reset --discard`: throws away the changes to tracked files of the worktree at
/// `path` (index and files back to HEAD; untracked files stay), by request.
pub fn tracked_changes(ctx: &Ctx<'_>, path: &Path) -> Result<Done> {
    erase(
        ctx,
        &Target::TrackedChanges {
            path: path.to_path_buf(),
        },
    )
}
