//! `gw trash` (list): what the trash holds, when each entry went and why, its size, its
//! repositories and branches, and when retention lets it go; and the summary `gw context`
//! and `gw doctor` give.

use std::path::PathBuf;

use serde::Serialize;

use super::kept::{self, Kept};
use super::retention;
use crate::action::NextAction;
use crate::error::Result;
use crate::ops::Ctx;
use crate::state::trash::{BranchFate, Reason};

/// `gw trash`'s result.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TrashReport {
    /// Newest first.
    pub entries: Vec<TrashEntry>,
    pub count: usize,
    /// What the measured entries hold, in bytes on disk.
    pub bytes: u64,
    /// `trash.keep`, in seconds.
    pub keep_secs: u64,
    /// `trash.max_size`, in bytes.
    pub max_size: u64,
    /// Entries whose record cannot be read: `gw doctor` reports them.
    pub corrupt: Vec<CorruptEntry>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CorruptEntry {
    pub path: PathBuf,
    pub error: String,
}

/// One deleted workspace in the trash.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TrashEntry {
    /// The entry's name (`<workspace>-<nanos>`): `gw restore ID` restores this one when a
    /// name has several.
    pub id: String,
    /// The workspace's name when it went.
    pub name: String,
    /// RFC 3339, UTC.
    pub deleted_at: String,
    pub reason: Reason,
    /// When retention lets it go (RFC 3339, UTC); `null` when its time cannot be read.
    pub expires_at: Option<String>,
    /// Where the workspace was.
    pub workspace_path: PathBuf,
    /// The entry itself.
    pub path: PathBuf,
    /// Bytes on disk, once measured (`null` until then).
    pub bytes: Option<u64>,
    pub files: Option<u64>,
    pub repos: Vec<TrashRepo>,
    /// Repositories whose source repository is gone: the entry cannot be restored.
    pub sources_gone: Vec<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TrashRepo {
    pub repo: String,
    pub branch: String,
    /// What the delete did to the branch: `deleted` (its tip kept under
    /// `refs/grove/trash/`), `kept` (left in place), `gone` (there was none).
    pub fate: BranchFate,
    pub tip: Option<String>,
    pub source: PathBuf,
}

impl TrashReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        let mut out = Vec::new();
        if let Some(newest) = self.entries.first() {
            out.push(NextAction::write(
                format!("Restore workspace {}", newest.name),
                &["gw", "restore", &newest.id, "--format", "json"],
            ));
            out.push(NextAction::destructive(
                "Erase everything in the trash",
                &["gw", "trash", "empty", "--yes", "--format", "json"],
            ));
        }
        out
    }
}

fn entry(k: &Kept, keep: std::time::Duration) -> TrashEntry {
    let expires_at = k.deleted.and_then(|d| {
        let keep = jiff::SignedDuration::try_from(keep).ok()?;
        d.checked_add(keep).ok().map(crate::time::utc)
    });
    TrashEntry {
        id: k.id.clone(),
        name: k.record.name.clone(),
        deleted_at: k.record.deleted_at.clone(),
        reason: k.record.reason,
        expires_at,
        workspace_path: k.record.workspace.path.clone(),
        path: k.entry.clone(),
        bytes: k.size.map(|s| s.bytes),
        files: k.size.map(|s| s.files),
        repos: k
            .record
            .repos
            .iter()
            .map(|r| TrashRepo {
                repo: r.repo.clone(),
                branch: r.branch.clone(),
                fate: r.fate,
                tip: r.tip.clone(),
                source: r.source.clone(),
            })
            .collect(),
        sources_gone: sources_gone(k),
    }
}

/// The repositories of `k` whose source repository is not there any more.
pub fn sources_gone(k: &Kept) -> Vec<String> {
    k.record
        .repos
        .iter()
        .filter(|r| !r.source.join(".git").exists())
        .map(|r| r.repo.clone())
        .collect()
}

/// `gw trash` / `gw trash list`.
pub fn list(ctx: &Ctx<'_>) -> Result<TrashReport> {
    let config = ctx.config()?;
    let contents = kept::contents(ctx);
    let mut entries: Vec<TrashEntry> = contents
        .kept
        .iter()
        .map(|k| entry(k, config.trash.keep))
        .collect();
    entries.reverse();
    Ok(TrashReport {
        count: entries.len(),
        bytes: entries
            .iter()
            .filter_map(|e| e.bytes)
            .fold(0u64, u64::saturating_add),
        entries,
        keep_secs: config.trash.keep.as_secs(),
        max_size: config.trash.max_size,
        corrupt: contents
            .corrupt
            .into_iter()
            .map(|(path, error)| CorruptEntry { path, error })
            .collect(),
    })
}

/// What `gw context` and `gw doctor` say of the trash.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TrashSummary {
    /// Deleted workspaces that can be restored.
    pub count: usize,
    /// What the measured entries hold, in bytes on disk.
    pub bytes: u64,
    /// When the oldest entry went (RFC 3339, UTC).
    pub oldest: Option<String>,
    /// The newest entry's workspace name: what `gw undo` restores.
    pub newest: Option<String>,
    /// Entries whose source repository is gone (they cannot be restored).
    pub sources_gone: Vec<String>,
}

pub fn summary(ctx: &Ctx<'_>) -> TrashSummary {
    let contents = kept::contents(ctx);
    TrashSummary {
        count: contents.kept.len(),
        bytes: contents
            .kept
            .iter()
            .filter_map(|k| k.size.map(|s| s.bytes))
            .fold(0u64, u64::saturating_add),
        oldest: contents.kept.first().map(|k| k.record.deleted_at.clone()),
        newest: contents.kept.last().map(|k| k.record.name.clone()),
        sources_gone: contents
            .kept
            .iter()
            .filter(|k| !sources_gone(k).is_empty())
            .map(|k| k.id.clone())
            .collect(),
    }
}

/// `retention::ago` for the text table.
pub fn age(k: &TrashEntry, now: jiff::Timestamp) -> String {
    crate::time::parse_created_at(&k.deleted_at)
        .map(|t| retention::ago(now, t))
        .unwrap_or_else(|| "?".into())
}
