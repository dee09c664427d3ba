//! What a scan finds and what `apply` did: one [`Item`] per file, in a [`Plan`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::paths;
use crate::error::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    McpJson,
    Database,
}

/// What would be (or was) done to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Rewrite the file without grove's entry.
    RemoveEntry,
    /// Move the file into the backup: grove's entry was all it held.
    DeleteFile,
    /// Move a database file into the backup (with the rest of the database, as one unit).
    MoveDatabase,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::RemoveEntry => "remove_entry",
            Action::DeleteFile => "delete_file",
            Action::MoveDatabase => "move_database",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Planned; `apply` would do it (after an interrupted `apply`: not reached).
    Pending,
    Done,
    /// Left alone on purpose; `reason` says why.
    Skipped,
    /// Tried and failed; `detail` says why.
    Failed,
}

/// Why a file is left alone (or failed). Serialised as the snake-case name; these strings
/// are part of gw-migrate's JSON and of `docs/migration.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The `grove` entry belongs to another tool.
    ForeignEntry,
    InvalidJson,
    RootNotObject,
    ServersNotObject,
    DuplicateKeys,
    /// The edit did not give the expected document (a safety net).
    UnverifiableEdit,
    /// git tracks the file (and `--include-tracked` was not given).
    Tracked,
    /// The work tree's `.git` file points to a git directory that no longer exists.
    GitLinkBroken,
    /// The repository belongs to another user (git's "dubious ownership").
    RepositoryNotTrusted,
    /// The repository's index cannot be read.
    IndexUnreadable,
    /// Whether git tracks the file cannot be told for another reason.
    TrackingUnknown,
    /// A symlink whose target lies outside the scanned directories.
    SymlinkOutsideRoots,
    /// The file has several names (hard links).
    HardLinked,
    /// The edited file could not be given back to its owner.
    OwnerNotKept,
    NotSqlite,
    NotRegularFile,
    /// Another process holds the database open.
    InUse,
    Unreadable,
    ChangedSinceScan,
    IoError,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ForeignEntry => "foreign_entry",
            Reason::InvalidJson => "invalid_json",
            Reason::RootNotObject => "root_not_object",
            Reason::ServersNotObject => "servers_not_object",
            Reason::DuplicateKeys => "duplicate_keys",
            Reason::UnverifiableEdit => "unverifiable_edit",
            Reason::Tracked => "tracked",
            Reason::GitLinkBroken => "git_link_broken",
            Reason::RepositoryNotTrusted => "repository_not_trusted",
            Reason::IndexUnreadable => "index_unreadable",
            Reason::TrackingUnknown => "tracking_unknown",
            Reason::SymlinkOutsideRoots => "symlink_outside_roots",
            Reason::HardLinked => "hard_linked",
            Reason::OwnerNotKept => "owner_not_kept",
            Reason::NotSqlite => "not_sqlite",
            Reason::NotRegularFile => "not_regular_file",
            Reason::InUse => "in_use",
            Reason::Unreadable => "unreadable",
            Reason::ChangedSinceScan => "changed_since_scan",
            Reason::IoError => "io_error",
        }
    }

    /// Whether git may hold the file: tracked, or it cannot be told. Such a file is only
    /// edited with `--include-tracked`, and never deleted.
    pub fn maybe_tracked(self) -> bool {
        matches!(
            self,
            Reason::Tracked
                | Reason::GitLinkBroken
                | Reason::RepositoryNotTrusted
                | Reason::IndexUnreadable
                | Reason::TrackingUnknown
        )
    }
}

/// One file that needs attention.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    /// The path found: a `.mcp.json` (possibly a symlink) or a database file.
    #[serde(serialize_with = "crate::fsx::serialize_lossy")]
    pub path: PathBuf,
    /// The file a symlinked `.mcp.json` points to, which is what gets edited.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "paths::lossy_opt"
    )]
    pub target: Option<PathBuf>,
    /// Other `.mcp.json` paths found that are symlinks to the same file. They are kept,
    /// and because of them the file is edited, never deleted.
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "paths::lossy_vec"
    )]
    pub links: Vec<PathBuf>,
    /// A path of this entry is not valid UTF-8; it is shown with U+FFFD in its place.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub path_lossy: bool,
    pub kind: Kind,
    /// The tracked workspace the file belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The repository whose worktree holds the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    pub action: Option<Action>,
    pub status: Status,
    /// Why the file is skipped or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// With `in_use`: the processes holding the database open, where the platform tells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pids: Vec<u32>,
    /// SHA-256 of the file as scanned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The file without grove's entry (`remove_entry`).
    #[serde(skip)]
    pub(super) edited: Option<Vec<u8>>,
    /// The error behind a `failed` status.
    #[serde(skip)]
    pub error: Option<Error>,
}

impl Item {
    pub(super) fn new(path: PathBuf, kind: Kind) -> Item {
        Item {
            path_lossy: paths::is_lossy(&path),
            path,
            target: None,
            links: Vec::new(),
            kind,
            workspace: None,
            repo: None,
            action: None,
            status: Status::Pending,
            reason: None,
            detail: None,
            pids: Vec::new(),
            sha256: None,
            edited: None,
            error: None,
        }
    }

    /// The file that is changed: the symlink's target, else the path itself.
    pub fn file(&self) -> &Path {
        self.target.as_deref().unwrap_or(&self.path)
    }

    pub(super) fn set_target(&mut self, target: PathBuf) {
        self.path_lossy |= paths::is_lossy(&target);
        self.target = Some(target);
    }

    pub(super) fn add_link(&mut self, link: PathBuf) {
        self.path_lossy |= paths::is_lossy(&link);
        self.links.push(link);
    }

    /// Left alone, with why.
    pub(super) fn skip(mut self, reason: Reason, detail: impl Into<Option<String>>) -> Item {
        self.set_skipped(reason, detail);
        self
    }

    pub(super) fn set_skipped(&mut self, reason: Reason, detail: impl Into<Option<String>>) {
        self.status = Status::Skipped;
        self.action = None;
        self.edited = None;
        self.reason = Some(reason);
        self.detail = detail.into();
    }

    pub(super) fn fail(&mut self, reason: Reason, error: Error) {
        let detail = error.message.clone();
        self.fail_with(reason, detail, error);
    }

    pub(super) fn fail_with(&mut self, reason: Reason, detail: String, error: Error) {
        self.status = Status::Failed;
        self.reason = Some(reason);
        self.detail = Some(detail);
        self.error = Some(error);
    }

    /// Needs a person: skipped or failed for a reason other than belonging to another tool.
    pub fn needs_attention(&self) -> bool {
        matches!(self.status, Status::Skipped | Status::Failed)
            && self.reason != Some(Reason::ForeignEntry)
    }

    /// What gw-migrate says of the file, as one word: the action while pending or done,
    /// else the reason. `gw doctor` shows the same word.
    pub fn verdict(&self) -> &'static str {
        match (self.status, self.action, self.reason) {
            (Status::Pending | Status::Done, Some(a), _) => a.as_str(),
            (_, _, Some(r)) => r.as_str(),
            _ => "unknown",
        }
    }
}

/// The outcome of a scan: what would change, and what is left alone.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The directories walked (the workspace directory and extra roots).
    #[serde(serialize_with = "paths::lossy_vec")]
    pub roots: Vec<PathBuf>,
    /// Every directory whose `.mcp.json` files the scan may change (roots, tracked
    /// workspaces and worktrees), as given and resolved: an applied run records them, and
    /// its restore writes nowhere else.
    #[serde(skip)]
    pub within: Vec<PathBuf>,
    /// Tracked workspaces checked.
    pub workspaces: usize,
    /// `.mcp.json` files read.
    pub checked: usize,
    pub items: Vec<Item>,
}

impl Plan {
    pub fn count(&self, status: Status) -> usize {
        self.items.iter().filter(|i| i.status == status).count()
    }
}

/// A backup made by an applied run.
#[derive(Debug, Clone, Serialize)]
pub struct Backup {
    pub id: String,
    #[serde(serialize_with = "crate::fsx::serialize_lossy")]
    pub path: PathBuf,
}
