//! `trash.json`: what a retained trash entry holds, so `gw restore` can bring the workspace
//! back exactly as it was.
//!
//! A deleted workspace is kept as one entry of its workspace directory's `.trash`:
//!
//! ```text
//! .trash/<name>-<nanos>/
//!     trash.json      this record
//!     workspace/      the workspace directory, every file as it was
//!     git/<i>/        repository i's worktree registration (its index, HEAD and reflog)
//!     size.json       how much the entry holds, once measured
//! ```
//!
//! and, in each source repository, the tip of each branch the delete removed under
//! `refs/grove/trash/<nanos>/<i>`, so git's gc keeps its commits. Nothing in a record is
//! trusted when it is read back: paths are checked against where grove may act before a
//! restore moves anything (`ops::restore`), and the places inside an entry (`git/<i>`, the
//! refs) are derived from the entry and the repository's position, never read from it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsx;
use crate::state::Workspace;

/// The record format version.
pub const VERSION: u32 = 1;

/// The namespace of the kept branch tips in a source repository.
pub const REF_PREFIX: &str = "refs/grove/trash/";

/// Why the workspace went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// `gw delete` (and `gw go --delete`).
    Delete,
    /// `gw prune`.
    Prune,
    /// `gw create --replace`.
    Replace,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Delete => "delete",
            Reason::Prune => "prune",
            Reason::Replace => "replace",
        }
    }
}

/// What happened to a repository's branch when its worktree went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum BranchFate {
    /// Deleted; its tip is kept under the entry's ref.
    Deleted,
    /// Left in place (it existed before grove used it, or deleting it would lose commits).
    Kept,
    /// There was no such branch any more.
    Gone,
}

/// One repository of the deleted workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct KeptRepo {
    pub repo: String,
    pub source: PathBuf,
    /// The name of its worktree registration (`<git dir>/worktrees/<admin>`), kept in the
    /// entry's `git/<i>`; `None` when git had no registration of it.
    pub admin: Option<String>,
    pub branch: String,
    /// Where the branch was when the workspace went (`None`: it did not exist).
    pub tip: Option<String>,
    pub fate: BranchFate,
    /// The branch's `branch.<name>.*` settings (upstream, rebase, description), which
    /// `git branch -D` removes with it: `(key, value)`, e.g. `("merge", "refs/heads/x")`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<(String, String)>,
}

/// `trash.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Record {
    pub version: u32,
    /// The workspace's name when it went.
    pub name: String,
    /// RFC 3339, UTC.
    pub deleted_at: String,
    pub reason: Reason,
    /// The workspace's state entry as it was, slot included.
    pub workspace: Workspace,
    /// In the order of `workspace.repos`: repository `i`'s registration is the entry's
    /// `git/<i>` and its kept tip `refs/grove/trash/<nanos>/<i>`.
    pub repos: Vec<KeptRepo>,
}

/// What is wrong with a record that was read back.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Io(#[from] fsx::Error),
    #[error("corrupt trash record `{}`: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
}

impl Record {
    /// Reads the record at `path` (a regular file within the size cap); `None` when there
    /// is none (an entry of an earlier version, or one still being made).
    pub fn read(path: &Path) -> Result<Option<Record>, Error> {
        let Some(text) = fsx::read_optional(path)? else {
            return Ok(None);
        };
        Record::parse(&text)
            .map(Some)
            .map_err(|detail| Error::Corrupt {
                path: path.to_path_buf(),
                detail,
            })
    }

    /// Parses and checks a record's own consistency (not the world's).
    pub fn parse(text: &str) -> Result<Record, String> {
        let r: Record = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if r.version != VERSION {
            return Err(format!(
                "version {} (this gw reads version {VERSION})",
                r.version
            ));
        }
        if r.name != r.workspace.name {
            return Err(format!(
                "it names workspace `{}` but holds the record of `{}`",
                r.name, r.workspace.name
            ));
        }
        if r.repos.len() != r.workspace.repos.len()
            || r.repos
                .iter()
                .zip(&r.workspace.repos)
                .any(|(k, w)| k.repo != w.repo_name || k.source != w.source_repo)
        {
            return Err("its repositories are not the workspace's".into());
        }
        for k in &r.repos {
            if let Some(a) = &k.admin
                && !plain_name(a)
            {
                return Err(format!("`{a}` is not the name of a worktree registration"));
            }
            if k.fate == BranchFate::Deleted && k.tip.as_deref().is_none_or(|t| !is_oid(t)) {
                return Err(format!("{}: a deleted branch without its tip", k.repo));
            }
        }
        if crate::time::parse_created_at(&r.deleted_at).is_none() {
            return Err(format!("`{}` is not a time", r.deleted_at));
        }
        Ok(r)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("trash records serialise")
    }
}

/// The places inside a retained entry (`.trash/<name>-<nanos>/`), derived from the entry's
/// own path, never read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub entry: PathBuf,
}

impl Layout {
    pub fn of(entry: &Path) -> Layout {
        Layout {
            entry: entry.to_path_buf(),
        }
    }

    /// `trash.json`: the record; an entry without one is not restorable (one being made,
    /// being purged, or quarantined by `gw remove-repo`).
    pub fn record(&self) -> PathBuf {
        self.entry.join("trash.json")
    }

    /// The workspace directory, every file as it was.
    pub fn workspace(&self) -> PathBuf {
        self.entry.join("workspace")
    }

    /// Repository `index`'s worktree registration (its private git directory).
    pub fn registration(&self, index: usize) -> PathBuf {
        self.entry.join("git").join(index.to_string())
    }

    /// `size.json`: how much the entry holds, once measured.
    pub fn size(&self) -> PathBuf {
        self.entry.join("size.json")
    }

    /// The entry's id in its refs: the `<nanos>` of `<name>-<nanos>`.
    pub fn id(&self) -> Option<String> {
        let name = self.entry.file_name()?.to_str()?;
        let (_, nanos) = name.rsplit_once('-')?;
        (!nanos.is_empty() && nanos.bytes().all(|b| b.is_ascii_digit())).then(|| nanos.to_string())
    }
}

/// `size.json`: what an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Size {
    pub bytes: u64,
    pub files: u64,
}

impl Size {
    /// The measure written for `layout`, if any (an unreadable one counts as none).
    pub fn read(layout: &Layout) -> Option<Size> {
        let text = fsx::read_optional(&layout.size()).ok()??;
        serde_json::from_str(&text).ok()
    }

    pub fn write(self, layout: &Layout) -> Result<(), fsx::Error> {
        fsx::write_atomic(
            &layout.size(),
            serde_json::to_string(&self)
                .expect("sizes serialise")
                .as_bytes(),
        )
    }
}

/// A reference a trash entry keeps in a source repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptRef {
    pub repo: String,
    pub source: PathBuf,
    /// Its full name, under [`REF_PREFIX`].
    pub name: String,
    pub oid: String,
}

/// The reference that keeps what repository `index`'s worktree alone held for the entry
/// `id`: `what` is `head` (its HEAD commit) or `index` (its index, as a tree).
pub fn pin_ref(id: &str, what: &str, index: usize) -> String {
    format!("{REF_PREFIX}{id}/{what}/{index}")
}

/// Every reference of the entry `id` in a repository starts with this.
pub fn entry_refs(id: &str) -> String {
    format!("{REF_PREFIX}{id}/")
}

/// The ref that holds repository `index`'s deleted branch tip for the entry `id` (the
/// entry's `<nanos>`).
pub fn kept_ref(id: &str, index: usize) -> String {
    format!("{REF_PREFIX}{id}/{index}")
}

/// A single file name: not empty, no separator or NUL, not `.` or `..` (git names
/// registrations after the worktree's directory, made unique with a number).
fn plain_name(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\', '\0'])
}

fn is_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record() -> Record {
        let ws: Workspace = serde_json::from_value(serde_json::json!({
            "name": "w", "path": "/ws/w", "branch": "feat/w",
            "created_at": "2026-12-04T10:00:00", "slot": 3,
            "repos": [{"repo_name": "api", "source_repo": "/src/api",
                       "worktree_path": "/ws/w/api", "branch": "feat/w"}]
        }))
        .unwrap();
        Record {
            version: VERSION,
            name: "w".into(),
            deleted_at: "2026-12-04T11:00:00Z".into(),
            reason: Reason::Delete,
            workspace: ws,
            repos: vec![KeptRepo {
                repo: "api".into(),
                source: "/src/api".into(),
                admin: Some("api".into()),
                branch: "feat/w".into(),
                tip: Some("a".repeat(40)),
                fate: BranchFate::Deleted,
                config: vec![("remote".into(), "origin".into())],
            }],
        }
    }

    #[test]
    fn round_trips_and_refuses_what_does_not_hold_together() {
        let r = record();
        assert_eq!(Record::parse(&r.to_json()).unwrap(), r);
        let bad = |edit: &dyn Fn(&mut serde_json::Value), want: &str| {
            let mut v = serde_json::to_value(record()).unwrap();
            edit(&mut v);
            let err = Record::parse(&v.to_string()).unwrap_err();
            assert!(err.contains(want), "{want}: {err}");
        };
        bad(&|v| v["version"] = 2.into(), "version 2");
        bad(&|v| v["name"] = "other".into(), "holds the record of `w`");
        bad(
            &|v| v["repos"][0]["admin"] = "../../x".into(),
            "not the name of",
        );
        bad(&|v| v["repos"][0]["admin"] = "..".into(), "not the name of");
        bad(&|v| v["repos"][0]["tip"] = "nope".into(), "without its tip");
        bad(
            &|v| v["repos"][0]["source"] = "/elsewhere".into(),
            "not the workspace's",
        );
        bad(
            &|v| v["repos"] = serde_json::json!([]),
            "not the workspace's",
        );
        bad(&|v| v["deleted_at"] = "soon".into(), "is not a time");
        bad(&|v| v["reason"] = "fire".into(), "unknown variant");
        assert_eq!(kept_ref("123", 0), "refs/grove/trash/123/0");
    }
}
