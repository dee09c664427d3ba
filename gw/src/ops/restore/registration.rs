//! A worktree's way back: whether its kept registration can be registered again, and as
//! what. The entry is a directory a person or a program may have edited, so everything
//! that would let a restore reach past the worktree it brings back is refused first: a
//! symbolic link on the way to the worktree or in its kept registration, a `.git` or a
//! `commondir` naming another repository, a registration name its submodules need taken.

use std::path::{Component, Path, PathBuf};

use super::plan::real_dir;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::trash::Kept;
use crate::state::journal::Action;
use crate::state::trash::pin_ref;

/// A worktree of an entry on its way back.
pub(super) struct Worktree<'a> {
    pub kept: &'a Kept,
    /// Its repository's position in the record.
    pub i: usize,
    pub source: &'a git::Repo,
    /// Where it is in the entry (`workspace/<rel>`).
    pub in_entry: &'a Path,
    /// Where it was, and where it goes.
    pub was: &'a Path,
    pub path: &'a Path,
    /// It comes back under another name (`--as`).
    pub moved: bool,
}

/// What bringing a worktree back takes.
#[derive(Default)]
pub(super) struct Found {
    pub register: Option<Action>,
    /// The branch its HEAD is on, made again from the entry's kept HEAD.
    pub branch: Option<Action>,
    pub warnings: Vec<String>,
}

fn corrupt(repo: &str, what: String) -> Error {
    Error::new(Code::CorruptState, format!("{repo}: {what}"))
        .with_fix("Look at the entry (`gw trash --format json`): it is not as the delete left it")
}

/// Decides the registration step of `w`, or why there can be none.
pub(super) fn step(w: &Worktree<'_>) -> Result<Found> {
    let kr = &w.kept.record.repos[w.i];
    let repo = kr.repo.as_str();
    let mut found = Found::default();
    // A worktree already gone when the workspace was deleted comes back as gone.
    if std::fs::symlink_metadata(w.in_entry).is_err() {
        found.warnings.push(format!(
            "{repo}: its worktree was already missing when the workspace was deleted; `gw doctor` will say so"
        ));
        return Ok(found);
    }
    // Every directory on the way from `workspace/` to the worktree is one of the entry's own.
    let base = w.kept.layout().workspace();
    let rel = w.in_entry.strip_prefix(&base).unwrap_or(w.in_entry);
    let mut at = base.clone();
    for c in rel.components() {
        let Component::Normal(name) = c else {
            return Err(corrupt(
                repo,
                format!("`{}` is no place in the entry", rel.display()),
            ));
        };
        at.push(name);
        if !real_dir(&at) {
            return Err(corrupt(
                repo,
                format!(
                    "`{}` in the trash entry is not a directory of its own",
                    at.display()
                ),
            ));
        }
    }
    let Some(admin) = &kr.admin else {
        return Ok(found);
    };
    let gitfile = w.in_entry.join(".git");
    if !std::fs::symlink_metadata(&gitfile).is_ok_and(|m| m.is_file()) {
        return Err(corrupt(repo, "its worktree's `.git` is not a file".into()));
    }
    // The record is a file: its `source` and `admin` must be what the worktree's own `.git`
    // link (read as it was, at its old place) named.
    let want = w.source.common_dir().join("worktrees").join(admin);
    let named = git::linked_admin(&gitfile, w.was);
    if named.and_then(|n| fsx::canonical_lenient(&n)) != fsx::canonical_lenient(&want) {
        return Err(corrupt(
            repo,
            format!(
                "the record names `{}` as its registration, which its worktree's `.git` does not",
                want.display()
            ),
        ));
    }
    let kept = w.kept.layout().registration(w.i);
    check_kept(repo, &kept, &want, w.source)?;
    let free = free_admin(w.source, admin);
    // A submodule's git directory lives in the registration's `modules/`, named by the
    // submodule's `.git` and naming the submodule's worktree by its path (`core.worktree`):
    // under another registration name or at another place it would be another worktree's.
    if fsx::exists(&kept.join("modules")) {
        if free != *admin {
            return Err(Error::new(
                Code::WorktreeExists,
                format!(
                    "{repo}: another worktree of `{}` has taken the registration name `{admin}`, which this worktree's submodules name",
                    kr.source.display()
                ),
            )
            .with_fix("Remove or move that worktree (`git worktree list` shows it), then restore"));
        }
        if w.moved {
            return Err(Error::usage(format!(
                "{repo}: its submodules name their worktrees by the workspace's path; it can come back only where it was"
            ))
            .with_fix("Restore it under its own name (free that name first)"));
        }
    }
    found.branch = head_branch(w, &kept)?;
    found.register = Some(Action::RestoreRegistration {
        repo: kr.repo.clone(),
        source: kr.source.clone(),
        kept,
        admin: free,
        path: w.path.to_path_buf(),
    });
    Ok(found)
}

/// The kept registration is the recorded repository's: a directory of its own with no
/// symbolic link in it, whose `commondir` names that repository's git directory.
fn check_kept(repo: &str, kept: &Path, want: &Path, source: &git::Repo) -> Result<()> {
    if !real_dir(kept) {
        return Err(Error::new(
            Code::CorruptState,
            format!("{repo}: the trash entry does not hold its worktree's registration"),
        )
        .with_fix(
            "Run `gw doctor --fix` (an interrupted delete may still be finishing), then retry",
        ));
    }
    if walkdir::WalkDir::new(kept)
        .follow_links(false)
        .into_iter()
        .any(|e| e.map_or(true, |e| e.path_is_symlink()))
    {
        return Err(corrupt(
            repo,
            "its kept registration holds a symbolic link".into(),
        ));
    }
    let common = fsx::read_optional(&kept.join("commondir"))?
        .map(|t| PathBuf::from(t.trim_end_matches(['\n', '\r'])))
        .map(|c| {
            if c.is_relative() {
                git::lexical(&want.join(c))
            } else {
                c
            }
        });
    if common.and_then(|c| fsx::canonical_lenient(&c))
        != fsx::canonical_lenient(&source.common_dir())
    {
        return Err(corrupt(
            repo,
            "its kept registration belongs to another repository (`commondir`)".into(),
        ));
    }
    Ok(())
}

/// When the kept HEAD is on another branch than the workspace's: that branch must not be
/// checked out elsewhere, and when it is gone it is made again from the kept HEAD.
fn head_branch(w: &Worktree<'_>, kept: &Path) -> Result<Option<Action>> {
    let kr = &w.kept.record.repos[w.i];
    let head = fsx::read_optional(&kept.join("HEAD"))?.unwrap_or_default();
    let head = head.trim();
    let Some(other) = head
        .strip_prefix("ref:")
        .map(str::trim)
        .and_then(|r| r.strip_prefix("refs/heads/"))
        .filter(|b| *b != kr.branch)
    else {
        return check_detached(&kr.repo, head, w.source).map(|()| None);
    };
    if let Some(wt) = w
        .source
        .worktrees()?
        .into_iter()
        .find(|x| !x.prunable && x.branch.as_deref() == Some(other))
    {
        return Err(Error::new(
            Code::BranchConflict,
            format!(
                "{}: its worktree was on branch {other}, which is checked out at `{}` now",
                kr.repo,
                wt.path.display()
            ),
        )
        .with_fix("Switch that worktree to another branch, then restore"));
    }
    if w.source.local_branch(other).is_some() {
        return Ok(None);
    }
    let pinned = w
        .kept
        .layout()
        .id()
        .and_then(|id| w.source.reference(&pin_ref(&id, "head", w.i)));
    match pinned {
        Some(tip) => Ok(Some(Action::RestoreBranch {
            repo: kr.repo.clone(),
            source: kr.source.clone(),
            branch: other.to_string(),
            tip,
            config: Vec::new(),
        })),
        None => Err(corrupt(
            &kr.repo,
            format!("its worktree was on branch {other}, which is gone, and nothing kept its tip"),
        )),
    }
}

/// A detached HEAD's commit must still be there: a worktree without its HEAD is none.
fn check_detached(repo: &str, head: &str, source: &git::Repo) -> Result<()> {
    if head.starts_with("ref:") || head.is_empty() {
        return Ok(());
    }
    if source.rev(&format!("{head}^{{commit}}")).is_none() {
        return Err(Error::new(
            Code::CorruptState,
            format!(
                "{repo}: its worktree's HEAD, commit {}, is gone from the repository",
                head.get(..7).unwrap_or(head)
            ),
        )
        .with_fix("Nothing can bring it back; `gw trash empty` erases the entry"));
    }
    Ok(())
}

/// `admin`, or `admin1`, `admin2`… when another worktree of `source` has that name now.
fn free_admin(source: &git::Repo, admin: &str) -> String {
    let dir = source.common_dir().join("worktrees");
    std::iter::once(admin.to_string())
        .chain((1..).map(|n| format!("{admin}{n}")))
        .find(|a| !fsx::exists(&dir.join(a)))
        .expect("some name is free")
}
