//! What happens to a branch: the one rule for a workspace's branch when its worktree goes
//! — used by the plans of `gw delete` and `gw remove-repo` and by their execution alike,
//! so what `gw apply` does is what the plan showed, and judged again by recovery — and
//! the one for a branch `gw prune branches` would delete.
//!
//! A workspace's branch goes only when grove created it (not `preserve_branch`), the
//! workspace's worktree is registered in that repository, no other worktree has it checked
//! out, and — unless forced — its commits exist on another branch or a remote.
//! When that cannot be told, it is kept.

use std::path::PathBuf;

use super::territory::Territory;
use crate::fsx;
use crate::git;
use crate::ops::plan::{Change, ChangeKind, Described, Fact};
use crate::state::RepoEntry;

/// What happens to the branch of a worktree that goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// Delete it; it points at `tip`. `unique`: its commits found on no other branch or
    /// remote (lost by deleting it, which only `--force` does); `None` when they could not
    /// be counted (only with `--force`).
    Delete { tip: String, unique: Option<usize> },
    /// Keep it, for this reason.
    Keep(String),
    /// It existed before the workspace: never grove's to delete.
    Preserved,
    /// It does not exist (any more).
    Gone,
}

impl Fate {
    /// Deleting loses commits (or may: they could not be counted).
    pub fn destructive(&self) -> bool {
        matches!(self, Fate::Delete { unique, .. } if *unique != Some(0))
    }
}

/// The fate of `r`'s branch when its worktree (at `r.worktree_path`, which does not count
/// as "checked out elsewhere") goes.
pub fn fate(r: &RepoEntry, force: bool, territory: &Territory) -> Fate {
    fate_beside(r, force, territory, &[])
}

/// The fate of `r`'s branch when the branches `going` of its repository go too, in the
/// same command before it: a plan of several deletions judges each branch as the command
/// will, after the ones before it are gone.
pub fn fate_beside(r: &RepoEntry, force: bool, territory: &Territory, going: &[&str]) -> Fate {
    if r.preserve_branch {
        return Fate::Preserved;
    }
    let branch = &r.branch;
    // Only a worktree inside a workspace directory can be the workspace's; a path edited to
    // name one of the user's own worktrees elsewhere says nothing about whose branch it is.
    if territory.check(&r.worktree_path, "").is_err() {
        return Fate::Keep(format!(
            "kept branch {branch}: `{}` is not inside the workspace directory",
            r.worktree_path.display()
        ));
    }
    let repo = match git::Repo::open_again(&r.source_repo) {
        Ok(repo) => repo,
        Err(e) => return Fate::Keep(format!("kept branch {branch}: {e}")),
    };
    let Some(tip) = repo.local_branch(branch) else {
        return Fate::Gone;
    };
    let own = fsx::canonical(&r.worktree_path);
    let is_own = |w: &git::WorktreeInfo| {
        !w.is_main && (w.path == r.worktree_path || fsx::canonical(&w.path) == own)
    };
    match repo.worktrees() {
        Ok(wts) => {
            // The branch is the workspace's only if its worktree is this repository's: a
            // `source_repo` edited to name another repository must not cost that one a
            // branch.
            if !wts.iter().any(is_own) {
                return Fate::Keep(format!(
                    "kept branch {branch}: `{}` is not registered as a worktree of `{}`, so \
                     the branch cannot be told to be the workspace's",
                    r.worktree_path.display(),
                    r.source_repo.display()
                ));
            }
            if let Some(wt) = wts.iter().find(|w| {
                w.branch.as_deref() == Some(branch.as_str())
                    && !w.prunable
                    && w.path != r.worktree_path
                    && fsx::canonical(&w.path) != own
            }) {
                return Fate::Keep(format!(
                    "kept branch {branch}: it is checked out at {}",
                    wt.path.display()
                ));
            }
        }
        Err(e) => {
            return Fate::Keep(format!(
                "kept branch {branch}: cannot tell where it is checked out: {e}"
            ));
        }
    }
    match repo.unique_commits_without(branch, going) {
        Ok(0) => Fate::Delete {
            tip,
            unique: Some(0),
        },
        Ok(n) if force => Fate::Delete {
            tip,
            unique: Some(n),
        },
        Ok(n) => Fate::Keep(format!(
            "kept branch {branch}: {n} commit{} only on it (delete with `git -C {} branch -D {branch}`)",
            if n == 1 { " exists" } else { "s exist" },
            crate::proc::shell_quote(&r.source_repo.to_string_lossy()),
        )),
        Err(_) if force => Fate::Delete { tip, unique: None },
        Err(e) => Fate::Keep(format!(
            "kept branch {branch}: cannot tell whether it holds commits found nowhere else: {e}"
        )),
    }
}

/// Why completing a recorded deletion of `branch` (recorded at `tip`, now at `at`) keeps
/// it after all: it moved since; the operation's own state change does not record it as
/// the workspace's (grove-created) branch in this repository (`recorded`: canonical
/// source and branch); or — unless the operation was forced — its commits no longer all
/// exist elsewhere. The rule of [`fate`], judged again by recovery.
pub fn keep_on_completion(
    repo: &git::Repo,
    branch: &str,
    at: &str,
    tip: &str,
    forced: bool,
    recorded: &[(PathBuf, String)],
) -> Option<String> {
    if at != tip {
        return Some(format!("it moved to {at}"));
    }
    let source = fsx::canonical_lenient(repo.path());
    if !recorded
        .iter()
        .any(|(s, b)| Some(s) == source.as_ref() && b == branch)
    {
        return Some("the operation does not record it as the workspace's branch".into());
    }
    if forced {
        return None;
    }
    match repo.unique_commits(branch) {
        Ok(0) => None,
        Ok(n) => Some(format!(
            "{n} commit{} only on it",
            if n == 1 { " exists" } else { "s exist" }
        )),
        Err(e) => Some(format!(
            "cannot tell whether its commits exist elsewhere: {e}"
        )),
    }
}

/// The fate of `branch` (at `tip`), a `gw prune branches` candidate of `repo` against
/// `base` (`origin/main`, say). It goes when deleting it loses nothing: its commits are on
/// another branch or a remote, or its changes are in `base` already (squash-merged, or
/// rebased upstream). A branch holding commits that are on no remote and whose changes
/// are not in `base` is kept unless `force`.
pub fn of_candidate(
    repo: &git::Repo,
    branch: &str,
    tip: &str,
    base: &git::Base,
    force: bool,
) -> Fate {
    let unique = match repo.unique_commits(branch) {
        Ok(n) => n,
        Err(_) if force => {
            return Fate::Delete {
                tip: tip.to_string(),
                unique: None,
            };
        }
        Err(e) => {
            return Fate::Keep(format!(
                "kept: cannot tell whether it holds commits found nowhere else: {e}"
            ));
        }
    };
    if unique == 0 || repo.changes_are_in(&base.oid, tip) {
        return Fate::Delete {
            tip: tip.to_string(),
            unique: Some(0),
        };
    }
    if force {
        return Fate::Delete {
            tip: tip.to_string(),
            unique: Some(unique),
        };
    }
    Fate::Keep(format!(
        "kept: {unique} commit{} on no other branch or remote, and {} not in {} \
         (delete it with --force)",
        if unique == 1 { " is" } else { "s are" },
        if unique == 1 {
            "its change is"
        } else {
            "their changes are"
        },
        base.name
    ))
}

/// The plan's view of `fate`: the branch's tip as a fact, and the change (`delete_branch`,
/// destructive when commits are lost, or `keep_branch` and why), with a warning for lost
/// commits.
pub fn describe(r: &RepoEntry, label: &str, fate: &Fate, d: &mut Described) {
    let tip = match fate {
        Fate::Delete { tip, .. } => Some(tip.clone()),
        Fate::Gone => None,
        Fate::Keep(_) | Fate::Preserved => git::Repo::open(&r.source_repo)
            .ok()
            .and_then(|g| g.local_branch(&r.branch)),
    };
    d.facts.push(Fact::new(
        Some(label),
        format!("branch {}", r.branch),
        tip.unwrap_or_else(|| "absent".into()),
    ));
    let keep = |why: &str| {
        Change::new(ChangeKind::KeepBranch)
            .repo(label)
            .branch(&r.branch)
            .detail(why)
    };
    match fate {
        Fate::Gone => {}
        Fate::Preserved => d.changes.push(keep("it existed before the workspace")),
        Fate::Keep(why) => d.changes.push(keep(why)),
        Fate::Delete { tip, unique } => {
            match unique {
                Some(0) => {}
                Some(n) => d.warnings.push(format!(
                    "{label}: {n} commit(s) that exist only on {} would be lost",
                    r.branch
                )),
                None => d.warnings.push(format!(
                    "{label}: {} is deleted although its commits could not be checked for ones found nowhere else",
                    r.branch
                )),
            }
            d.changes.push(
                Change::new(ChangeKind::DeleteBranch)
                    .repo(label)
                    .branch(&r.branch)
                    .destructive(fate.destructive())
                    .detail(format!("at {}", tip.get(..7).unwrap_or(tip))),
            );
        }
    }
}
