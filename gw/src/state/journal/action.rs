//! What a journal records: the actions an operation takes, each with its undo (see
//! `ops::tx`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::state::{Workspace, trash};

/// How a worktree gets its branch, as recorded (mirrors `git::Checkout`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum BranchSource {
    /// A new branch at `start` (`start_oid`), created by this operation.
    New {
        start: String,
        start_oid: Option<String>,
    },
    /// A branch that already existed; never deleted on undo.
    Existing,
    /// A new branch tracking `remote_ref` (`start_oid`), created by this operation.
    Track {
        remote_ref: String,
        start_oid: Option<String>,
    },
}

impl BranchSource {
    /// The commit a branch created by this operation started at, or `None` when the branch
    /// is not this operation's to delete.
    pub fn created_at_oid(&self) -> Option<Option<&str>> {
        match self {
            BranchSource::New { start_oid, .. } | BranchSource::Track { start_oid, .. } => {
                Some(start_oid.as_deref())
            }
            BranchSource::Existing => None,
        }
    }
}

/// One change to the world. Each has an undo (see `ops::tx`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// `mkdir` of a directory that did not exist.
    CreateDir { path: PathBuf },
    /// A copy of `entries` (paths relative to both) from the checkout `source` into the new
    /// worktree at `path` (`.grove.toml` `copy`). Every entry was absent from the worktree
    /// when the step began, so undoing it removes them whole.
    CopyPaths {
        repo: String,
        source: PathBuf,
        path: PathBuf,
        entries: Vec<PathBuf>,
    },
    /// `git worktree add` of `branch` at `path` in `source`.
    AddWorktree {
        repo: String,
        source: PathBuf,
        path: PathBuf,
        branch: String,
        how: BranchSource,
    },
    /// A rename of a directory (a workspace into `.trash/`, or to its new name).
    MoveDir { from: PathBuf, to: PathBuf },
    /// `git worktree prune` in `source`. Only in journals of earlier versions (now
    /// [`Action::RemoveRegistration`] removes exactly grove's own); recovery finishes it by
    /// removing the registrations of missing directories inside a workspace directory only.
    PruneWorktrees { repo: String, source: PathBuf },
    /// Removes `source`'s registration of the worktree that was at `path` (as git recorded
    /// it), after the directory moved away. Not undoable; only done after the commit point.
    /// `keep`: where in a trash entry its private git directory (index, HEAD, reflog) is
    /// copied first, so `gw restore` can register the worktree again.
    RemoveRegistration {
        repo: String,
        source: PathBuf,
        path: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keep: Option<PathBuf>,
    },
    /// `git worktree repair` of `paths` in `source` after they moved.
    RepairWorktrees {
        repo: String,
        source: PathBuf,
        paths: Vec<PathBuf>,
    },
    /// Deletion of a branch whose tip was `tip`; undone by recreating it there. `forced`:
    /// `--force` allowed losing commits found on no other branch or remote; without it,
    /// recovery deletes the branch only when its commits still exist elsewhere. `keep`: the
    /// reference (`refs/grove/trash/…`) made at `tip` first, so the commits stay while the
    /// deleted workspace is in the trash.
    DeleteBranch {
        repo: String,
        source: PathBuf,
        branch: String,
        tip: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        forced: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keep: Option<String>,
    },
    /// `git switch` of the worktree at `path` from `from` (a branch, or a commit when
    /// detached) to `to`.
    SwitchBranch {
        repo: String,
        path: PathBuf,
        from: Option<String>,
        from_oid: String,
        to: String,
    },
    /// `git rebase onto` in the worktree at `path` (by `gw sync`): recorded, not carried
    /// out by recovery, which aborts it when it was left in progress.
    Rebase {
        repo: String,
        path: PathBuf,
        onto: String,
    },
    /// Writes the record of a retained trash entry (`entry/trash.json`), making the entry;
    /// undone by removing the record and the entry, once it is empty again.
    RecordTrash {
        entry: PathBuf,
        record: Box<trash::Record>,
    },
    /// Registers the worktree at `path` in `source` again from the private git directory
    /// kept in a trash entry (`kept`), as `.git/worktrees/<admin>`, and links the two.
    /// Undone by removing that registration (the worktree's files are not touched).
    RestoreRegistration {
        repo: String,
        source: PathBuf,
        kept: PathBuf,
        admin: String,
        path: PathBuf,
    },
    /// Creates `branch` at `tip` with its `branch.<name>.*` settings, as a deleted
    /// workspace had it; undone by deleting it while it is still there.
    RestoreBranch {
        repo: String,
        source: PathBuf,
        branch: String,
        tip: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        config: Vec<(String, String)>,
    },
    /// Drops what is left of a trash entry: its record, the references that kept its
    /// branches' tips (each removed only while it still points where it did), and its
    /// files. Not undoable; only done after the commit point.
    DropTrash {
        entry: PathBuf,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        refs: Vec<trash::KeptRef>,
    },
    /// The state entry `name` goes from `before` to `after` (`None`: absent). This is the
    /// commit point of every operation.
    SetState {
        name: String,
        before: Option<Box<Workspace>>,
        after: Option<Box<Workspace>>,
    },
}

impl Action {
    /// The repository this action concerns, if any.
    pub fn repo(&self) -> Option<&str> {
        match self {
            Action::AddWorktree { repo, .. }
            | Action::CopyPaths { repo, .. }
            | Action::PruneWorktrees { repo, .. }
            | Action::RemoveRegistration { repo, .. }
            | Action::RepairWorktrees { repo, .. }
            | Action::DeleteBranch { repo, .. }
            | Action::SwitchBranch { repo, .. }
            | Action::Rebase { repo, .. }
            | Action::RestoreRegistration { repo, .. }
            | Action::RestoreBranch { repo, .. } => Some(repo),
            Action::CreateDir { .. }
            | Action::MoveDir { .. }
            | Action::SetState { .. }
            | Action::RecordTrash { .. }
            | Action::DropTrash { .. } => None,
        }
    }

    /// The source repository this action acts in, if any.
    pub fn source(&self) -> Option<&Path> {
        match self {
            Action::AddWorktree { source, .. }
            | Action::CopyPaths { source, .. }
            | Action::PruneWorktrees { source, .. }
            | Action::RemoveRegistration { source, .. }
            | Action::RepairWorktrees { source, .. }
            | Action::DeleteBranch { source, .. }
            | Action::RestoreRegistration { source, .. }
            | Action::RestoreBranch { source, .. } => Some(source),
            Action::CreateDir { .. }
            | Action::MoveDir { .. }
            | Action::SwitchBranch { .. }
            | Action::Rebase { .. }
            | Action::SetState { .. }
            | Action::RecordTrash { .. }
            | Action::DropTrash { .. } => None,
        }
    }

    /// A short description for reports (`add worktree api at …`).
    pub fn describe(&self) -> String {
        match self {
            Action::CreateDir { path } => format!("create directory {}", path.display()),
            Action::AddWorktree {
                repo, path, branch, ..
            } => {
                format!("add worktree of {repo} on {branch} at {}", path.display())
            }
            Action::CopyPaths {
                repo,
                path,
                entries,
                ..
            } => format!(
                "copy {} of {repo} into {}",
                entries
                    .iter()
                    .map(|e| e.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                path.display()
            ),
            Action::MoveDir { from, to } => format!("move {} to {}", from.display(), to.display()),
            Action::PruneWorktrees { repo, .. } => {
                format!("prune stale worktree registrations of {repo}")
            }
            Action::RemoveRegistration { repo, path, .. } => {
                format!("remove {repo}'s registration of {}", path.display())
            }
            Action::RepairWorktrees { repo, .. } => {
                format!("repair worktree registrations of {repo}")
            }
            Action::DeleteBranch {
                repo, branch, tip, ..
            } => format!("delete branch {branch} of {repo} (at {tip})"),
            Action::SwitchBranch { repo, to, .. } => format!("switch {repo} to {to}"),
            Action::RecordTrash { entry, record } => format!(
                "keep workspace {} in the trash at {}",
                record.name,
                entry.display()
            ),
            Action::RestoreRegistration { repo, path, .. } => {
                format!("register {repo}'s worktree at {} again", path.display())
            }
            Action::RestoreBranch {
                repo, branch, tip, ..
            } => format!("restore branch {branch} of {repo} at {tip}"),
            Action::DropTrash { entry, .. } => {
                format!("drop the trash entry {}", entry.display())
            }
            Action::Rebase { repo, onto, .. } => format!("rebase {repo} onto {onto}"),
            Action::SetState { name, after, .. } => match after {
                Some(_) => format!("record workspace {name}"),
                None => format!("drop workspace {name} from state"),
            },
        }
    }
}
