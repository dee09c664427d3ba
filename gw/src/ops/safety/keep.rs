//! Keeping what a removal takes, for the trash: a deleted branch's tip under a reference
//! in `refs/grove/trash/`, a worktree's private git directory copied into the trash entry
//! before its registration goes — and removing those again when the entry is purged or
//! restored, or when a restore is undone. Every removal still goes through
//! [`remove::erase`](super::remove).

use std::path::{Path, PathBuf};

use super::remove::{Done, Target, erase, moved};
use crate::error::Result;
use crate::fsx;
use crate::git;
use crate::ops::Ctx;
use crate::ops::tx::hold_repos;
use crate::state::trash;

/// Deletes the branch as [`branch`](super::remove::branch) does, keeping its tip under the
/// reference `keep` (`refs/grove/trash/…`) in the same transaction, so its commits stay
/// reachable while the workspace is in the trash.
pub fn branch_kept(
    ctx: &Ctx<'_>,
    source: &Path,
    name: &str,
    tip: &str,
    keep: &str,
) -> Result<Done> {
    erase(
        ctx,
        &Target::Branch {
            source: source.to_path_buf(),
            branch: name.to_string(),
            tip: tip.to_string(),
            keep: Some(keep.to_string()),
        },
    )
}

/// [`registration`], moving the private git directory of the worktree (its index, HEAD,
/// reflog, config) to `keep` in a trash entry, so `gw restore` can register the worktree
/// again as it was — and keeping reachable what only it held: its HEAD (the commits of a
/// detached HEAD) and its index (staged content, as a tree), under the entry's references,
/// so no `git gc` takes them while the workspace is in the trash. Done again (recovery),
/// what is at `keep` is pinned whether or not the registration was still there.
pub fn registration_kept(ctx: &Ctx<'_>, source: &Path, path: &Path, keep: &Path) -> Result<Done> {
    // `erase` checks `keep` against the territory before anything moves or is read.
    if !source.is_dir() {
        return Ok(Done::Absent);
    }
    let _hold = hold_repos(ctx, &[source])?;
    let done = erase(
        ctx,
        &Target::Registration {
            source: source.to_path_buf(),
            path: path.to_path_buf(),
            keep: Some(keep.to_path_buf()),
        },
    )?;
    if fsx::exists(keep) {
        pin(source, keep)?;
    }
    Ok(done)
}

/// Makes the references that keep what only a kept registration held reachable: its HEAD
/// — the branch's tip under `refs/grove/trash/<id>/<i>` when HEAD is on a branch (a kept
/// branch's, should someone delete it later; a branch the removal deletes has that
/// reference made by its deletion's transaction), `…/head/<i>` when it is detached or on
/// another branch — and, when it holds something
/// HEAD's tree does not (staged content), its index as a tree under `…/index/<i>` (the entry
/// and `i` are where `keep` is). An index that holds a conflict is not kept as a tree.
fn pin(source: &Path, keep: &Path) -> Result<()> {
    let (Some(i), Some(id)) = (
        keep.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse::<usize>().ok()),
        keep.parent()
            .and_then(Path::parent)
            .and_then(|e| trash::Layout::of(e).id()),
    ) else {
        return Ok(());
    };
    let repo = git::Repo::open_again(source)?;
    // The workspace's branch for this repository, as the entry's record says.
    let entry = keep.parent().and_then(Path::parent).unwrap_or(keep);
    let kept = trash::Record::read(&trash::Layout::of(entry).record())
        .ok()
        .flatten()
        .and_then(|r| r.repos.get(i).cloned());
    let branch = kept.as_ref().map(|k| format!("refs/heads/{}", k.branch));
    let (head, head_ref) = match fsx::read_optional(&keep.join("HEAD"))? {
        Some(h) => match h.trim().strip_prefix("ref:").map(str::trim) {
            Some(name) if Some(name) == branch.as_deref() => {
                (repo.reference(name), trash::kept_ref(&id, i))
            }
            Some(name) => (repo.reference(name), trash::pin_ref(&id, "head", i)),
            None => (Some(h.trim().to_string()), trash::pin_ref(&id, "head", i)),
        },
        None => (None, String::new()),
    };
    // Done again (recovery), the branch may be deleted by now: its tip is the one kept.
    let head = head.or_else(|| repo.reference(&head_ref));
    let head_tree = head
        .as_deref()
        .and_then(|h| repo.rev(&format!("{h}^{{tree}}")));
    let index_file = keep.join("index");
    // Hashed in process first: only an index that differs from HEAD's tree is written.
    let index = (fsx::exists(&index_file)
        && repo
            .tree_of_index_file(&index_file)
            .is_none_or(|t| Some(t) != head_tree))
    .then(|| index_tree(source, &repo, &index_file))
    .flatten()
    .filter(|t| Some(t) != head_tree.as_ref());
    // What a merge, cherry-pick or revert in progress was taking in: its conflicts' other
    // side is named only there.
    let merging = ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"]
        .into_iter()
        .filter_map(|f| {
            let oid = fsx::read_optional(&keep.join(f)).ok()??;
            let oid = oid.lines().next()?.trim().to_string();
            repo.rev(&format!("{oid}^{{commit}}"))?;
            Some((
                format!("{}state/{i}/{f}", trash::entry_refs(&id)),
                Some(oid),
            ))
        });
    // A HEAD on the branch the removal deletes, still at the tip it deletes, is kept by
    // that deletion (`branch_kept`, one transaction); until then the branch holds it.
    let kept_by_deletion = kept.as_ref().is_some_and(|k| {
        k.fate == trash::BranchFate::Deleted
            && head_ref == trash::kept_ref(&id, i)
            && k.tip.is_some()
            && head == k.tip
    });
    let head_pin = (!kept_by_deletion).then_some((head_ref, head));
    // The worktree's own references (`refs/bisect/*`, `refs/worktree/*`) live in its
    // private git directory, where no `git gc` of the repository looks any more.
    let own = worktree_refs(&keep.join("refs"))
        .into_iter()
        .filter(|(_, oid)| repo.rev(&format!("{oid}^{{object}}")).is_some())
        .map(|(rel, oid)| {
            (
                format!("{}worktree/{i}/{rel}", trash::entry_refs(&id)),
                Some(oid),
            )
        });
    let pins = head_pin
        .into_iter()
        .chain([(trash::pin_ref(&id, "index", i), index)])
        .chain(merging)
        .chain(own);
    for (name, oid) in pins {
        let Some(oid) = oid else { continue };
        match repo.reference(&name) {
            None => git::ref_create(source, &name, &oid)?,
            Some(at) if at == oid => {}
            Some(at) => return Err(moved(&name, &oid, &at)),
        }
    }
    Ok(())
}

/// The loose references under `dir` (a kept registration's `refs/`): each one's path below
/// it (plain names only) and the object it names; symbolic ones are left out.
fn worktree_refs(dir: &Path) -> Vec<(String, String)> {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let rel = e.path().strip_prefix(dir).ok()?.to_str()?.to_string();
            let oid = fsx::read_optional(e.path()).ok()??.trim().to_string();
            let plain = rel
                .split('/')
                .all(|c| !c.is_empty() && !c.starts_with('.') && !c.ends_with(".lock"));
            (plain && !oid.is_empty() && oid.chars().all(|c| c.is_ascii_hexdigit()))
                .then_some((rel, oid))
        })
        .collect()
}

/// Removes the reference `name` of `source` that kept a tip for a trash entry, while it
/// still points at `oid`.
pub fn kept_ref(ctx: &Ctx<'_>, source: &Path, name: &str, oid: &str) -> Result<Done> {
    erase(
        ctx,
        &Target::KeptRef {
            source: source.to_path_buf(),
            name: name.to_string(),
            oid: oid.to_string(),
        },
    )
}

/// What a restore's copy of a registration is called while it is made, beside the
/// repository's `worktrees/` (`<git dir>/.grove-restore-<admin>`).
pub const STAGING: &str = ".grove-restore-";

/// Removes what a restore killed while copying the registration `admin` back left in the
/// git directory `common`: its staging copy, and the copy's own partial one.
pub fn restore_leftovers(ctx: &Ctx<'_>, common: &Path, admin: &str) -> Result<()> {
    let staging = format!("{STAGING}{admin}");
    let partial = format!(".{staging}.copy-");
    let Ok(dir) = std::fs::read_dir(common) else {
        return Ok(());
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == staging || name.starts_with(&partial) {
            erase(ctx, &Target::RestoreCopy { path: e.path() })?;
        }
    }
    Ok(())
}

/// Undoes a registration `gw restore` made: the private git directory `admin`, while it
/// is still the one of the worktree at `path`.
pub fn restored_registration(ctx: &Ctx<'_>, admin: &Path, path: &Path) -> Result<Done> {
    erase(
        ctx,
        &Target::Restored {
            admin: admin.to_path_buf(),
            path: path.to_path_buf(),
        },
    )
}

/// Whether the private git directory `admin` is the registration of the worktree at
/// `path`: it sits in a `worktrees` directory and its `gitdir` names `path/.git`.
pub fn registration_of(admin: &Path, path: &Path) -> bool {
    let in_worktrees = admin
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "worktrees");
    let names = fsx::read_optional(&admin.join("gitdir"))
        .ok()
        .flatten()
        .map(|t| PathBuf::from(t.trim_end_matches(['\n', '\r'])))
        .is_some_and(|p| {
            let p = if p.is_relative() { admin.join(p) } else { p };
            p.parent()
                .is_some_and(|wt| wt == path || fsx::canonical(wt) == fsx::canonical(path))
        });
    in_worktrees && names
}

/// The tree of the kept index `index`, written into `source`: as it is, or — when it holds
/// conflicts, which no tree can — of a copy without the conflicting paths (their sides are
/// in HEAD and the merge's other commit, kept beside it); `None` when git cannot write it.
fn index_tree(source: &Path, repo: &git::Repo, index: &Path) -> Option<String> {
    let conflicts = repo.conflicts_of_index_file(index);
    if conflicts.is_empty() {
        return git::write_tree(source, index).ok();
    }
    let copy = index.with_file_name("index.grove-pin");
    std::fs::copy(index, &copy).ok()?;
    let tree = git::index_forget(source, &copy, &conflicts)
        .ok()
        .and_then(|()| git::write_tree(source, &copy).ok());
    let _ = fsx::remove_file(&copy);
    tree
}
