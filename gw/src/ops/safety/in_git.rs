//! How [`erase`](super::remove) removes what lives in git — a branch, a worktree's
//! registration — under the repository's lock, which the caller holds: checked again
//! first, then as few git processes as it takes.

use std::path::{Path, PathBuf};

use super::remove::{Done, moved};
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;

/// Under the repository's lock: what `git branch -D` does — refused while a worktree has
/// the branch checked out, its `[branch "<name>"]` section removed, then the branch and
/// its reflog — but only while it is at `tip`, and in one transaction with the reference
/// `keep` that keeps the tip (left as it is when it already points there). One git
/// process, where `branch -D` and an `update-ref` took two. When the branch stays (refused,
/// or the transaction failed: another git process holds a lock), `keep` is made alone and
/// the settings are written back, so the trash entry keeps the tip whatever the branch
/// does next, and a branch that stays keeps its settings.
pub(super) fn branch(source: &Path, branch: &str, tip: &str, keep: Option<&str>) -> Result<Done> {
    let repo = git::Repo::open_again(source)?;
    let Some(at) = repo.local_branch(branch) else {
        return Ok(Done::Absent);
    };
    let create = match keep.map(|k| (k, repo.reference(k))) {
        Some((k, None)) => Some(k),
        Some((k, Some(at))) if at != tip => return Err(moved(k, tip, &at)),
        _ => None,
    };
    // The tip is kept even when the branch is not deleted: the deletion's transaction,
    // which makes the reference otherwise, does not happen.
    let kept_alone = |e: Error| -> Error {
        if let Some(k) = create
            && repo.rev(&format!("{tip}^{{commit}}")).is_some()
            && let Err(also) = git::ref_create(source, k, tip).map_err(Error::from)
        {
            let message = format!(
                "{}; keeping its tip failed too: {}",
                e.message, also.message
            );
            return e.with_message(message);
        }
        e
    };
    if at != tip {
        return Err(kept_alone(moved(branch, tip, &at)));
    }
    if let Some(wt) = repo
        .worktrees()?
        .into_iter()
        .find(|w| w.branch.as_deref() == Some(branch))
    {
        return Err(kept_alone(
            Error::new(
                Code::StateChanged,
                format!(
                    "branch {branch} is checked out at `{}`, so it was not deleted",
                    wt.path.display()
                ),
            )
            .with_fix("Switch that worktree to another branch, then run `gw doctor --fix`"),
        ));
    }
    // The settings first: a branch left without them is still deleted by a retry, while
    // settings left behind would be inherited by the next branch of that name.
    let settings = if repo.has_branch_section(branch) {
        let settings = repo.branch_config(branch);
        git::config_remove_section(source, &format!("branch.{branch}"))?;
        settings
    } else {
        Vec::new()
    };
    let full = format!("refs/heads/{branch}");
    let creates: Vec<(&str, &str)> = create.map(|k| (k, tip)).into_iter().collect();
    if let Err(e) = git::refs_transaction(source, &creates, &[(&full, tip)]).map_err(Error::from) {
        for (key, value) in &settings {
            if let Err(also) =
                git::branch_config_add(source, branch, key, value).map_err(Error::from)
            {
                let message = format!(
                    "{}; writing its settings back failed too: {}",
                    e.message, also.message
                );
                return Err(kept_alone(e.with_message(message)));
            }
        }
        return Err(kept_alone(e));
    }
    Ok(Done::Removed)
}

/// Under the repository's lock: done when there is no such registration; refused when
/// the directory exists again; checked afterwards, so a registration git could not remove
/// (a read-only repository) is a failure, left for recovery to retry.
///
/// With `keep` (a trash entry's place for it, not there yet), the private git directory is
/// renamed there: that one rename is the registration's removal, as `git worktree remove`
/// of a directory that is gone deletes nothing else. Across file systems it is copied
/// there (made whole under a temporary name, then renamed) and git removes it.
pub(super) fn registration(source: &Path, path: &Path, keep: Option<&Path>) -> Result<Done> {
    let admin = || -> Result<Option<PathBuf>> {
        Ok(git::Repo::open_again(source)?
            .worktrees()?
            .into_iter()
            .find(|w| !w.is_main && w.path == path)
            .map(|w| w.admin))
    };
    let Some(dir) = admin()? else {
        return Ok(Done::Absent);
    };
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
    if let Some(keep) = keep.filter(|k| !fsx::exists(k)) {
        if let Some(parent) = keep.parent() {
            fsx::create_dir_all(parent)?;
        }
        match fsx::rename(&dir, keep) {
            Ok(()) => return Ok(Done::Removed),
            Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => fsx::copy_tree(&dir, keep)?,
            Err(e) => return Err(e.into()),
        }
    }
    git::worktree_remove(source, path, true)?;
    if admin()?.is_some() {
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
    Ok(Done::Removed)
}
