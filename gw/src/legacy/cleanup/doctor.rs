//! The `gw doctor` side: every finding is an item of the same [`scan`] over the same
//! [`Scope::install`] that `gw-migrate` runs, so the two report the same files with the
//! same verdicts; `gw doctor --fix` is `gw-migrate --apply` over that scope. And one
//! verdict per directory: a directory holding a leftover, or one a backup not yet restored
//! puts files back into, is gw-migrate's to decide, and doctor's own repairs (removing a
//! stray directory or an unrecorded worktree) leave it alone ([`Leftovers::claim`]), so
//! `gw-migrate restore` can always undo what `gw doctor --fix` moved.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::manifest::{self, Standing, State as EntryState};
use super::model::{Action, Backup, Item, Kind, Reason, Status};
use super::scan::{Scope, scan};
use super::{Cancel, Options, migrate};
use crate::config::Config;
use crate::env::Env;
use crate::error::Error;
use crate::home::GroveHome;
use crate::state::State;

/// A leftover as `gw doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub workspace: Option<String>,
    pub repo: Option<String>,
    pub path: PathBuf,
    /// Ends with gw-migrate's verdict in parentheses (`(delete_file)`, `(tracked)`, …).
    pub issue: String,
    pub suggested_action: String,
    /// `gw doctor --fix` cleans it (through [`fix`]); otherwise a person must.
    pub fixable: bool,
}

/// The MCP-era leftovers of the install — the tracked workspaces (`state` when readable),
/// the workspace directory (from `config` when readable) and the grove directory's
/// database — for `gw doctor`. A `grove` entry of another tool is not a finding.
pub fn doctor_findings(
    home: &GroveHome,
    config: Option<&Config>,
    state: Option<&State>,
) -> Vec<Finding> {
    Leftovers::of(home, config, state).findings
}

/// gw-migrate's view of the install, as `gw doctor` takes it: what it finds, and the
/// directories it has a claim on.
#[derive(Debug, Clone, Default)]
pub struct Leftovers {
    pub findings: Vec<Finding>,
    /// A directory (with symlinks resolved) and why it must stay.
    claims: Vec<(PathBuf, String)>,
}

impl Leftovers {
    /// Scans the install ([`doctor_findings`]) and reads the backups not yet restored.
    pub fn of(home: &GroveHome, config: Option<&Config>, state: Option<&State>) -> Leftovers {
        let plan = scan(home, &Scope::install(home, config, state));
        let mut claims = Vec::new();
        for item in &plan.items {
            if item.kind != Kind::McpJson || item.reason == Some(Reason::ForeignEntry) {
                continue;
            }
            let why = if item.status == Status::Pending {
                format!(
                    "it holds `{}`, which gw-migrate cleans with a backup ({}); `gw doctor --fix` does that and leaves the directory",
                    item.path.display(),
                    item.verdict()
                )
            } else {
                format!(
                    "it holds `{}`, a leftover left for you to look at ({})",
                    item.path.display(),
                    item.verdict()
                )
            };
            let names = std::iter::once(&item.path)
                .chain(item.target.iter())
                .chain(&item.links);
            claims.extend(names.map(|p| (dir_of(p), why.clone())));
        }
        for listed in manifest::list(home) {
            if listed.standing == Ok(Standing::Restored) {
                continue;
            }
            let Ok(m) = listed.manifest(home) else {
                continue;
            };
            let moved = m.entries.iter().filter(|l| {
                l.entry.kind == Kind::McpJson
                    && matches!(l.state, EntryState::Done | EntryState::Intended)
            });
            for l in moved {
                let why = format!(
                    "`gw-migrate restore {}` puts `{}` back into it",
                    m.id,
                    l.entry.path.display()
                );
                claims.push((dir_of(&l.entry.file), why.clone()));
                claims.push((dir_of(&l.entry.path), why));
            }
        }
        Leftovers {
            findings: plan.items.iter().filter_map(finding).collect(),
            claims,
        }
    }

    /// Why `dir` (a stray directory or an unrecorded worktree `gw doctor --fix` might
    /// remove) must stay, if it must: it holds a leftover, or a backup not yet restored
    /// puts a file back into it.
    pub fn claim(&self, dir: &Path) -> Option<&str> {
        let dir = crate::fsx::canonical_lenient(dir)?;
        self.claims
            .iter()
            .find(|(p, _)| p.starts_with(&dir))
            .map(|(_, why)| why.as_str())
    }
}

/// The directory holding `path`, with symlinks resolved where it exists.
fn dir_of(path: &Path) -> PathBuf {
    let parent = path.parent().unwrap_or(path);
    crate::fsx::canonical_lenient(parent).unwrap_or_else(|| parent.to_path_buf())
}

/// How `gw doctor` words an item of gw-migrate's.
pub fn finding(item: &Item) -> Option<Finding> {
    let verdict = item.verdict();
    let detail = item
        .detail
        .as_deref()
        .map(|d| format!(": {d}"))
        .unwrap_or_default();
    let name = item
        .path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let links = if item.links.is_empty() {
        String::new()
    } else {
        let l: Vec<String> = item.links.iter().map(|p| p.display().to_string()).collect();
        format!("; the symlinks {} to it are kept", l.join(", "))
    };
    let (issue, suggested_action, fixable) = match (item.kind, item.status, item.reason) {
        (_, _, Some(Reason::ForeignEntry)) => return None,
        (Kind::McpJson, Status::Pending, _) => (
            format!("stale grove entry in .mcp.json (built-in MCP server was removed) ({verdict})"),
            if item.action == Some(Action::DeleteFile) {
                "delete .mcp.json (it only registered grove's MCP server); a backup is kept"
                    .to_string()
            } else {
                format!("remove the grove entry from .mcp.json; a backup is kept{links}")
            },
            true,
        ),
        (Kind::Database, Status::Pending, _) => (
            format!("leftover {name} of the removed MCP announcements store ({verdict})"),
            "move the database files together into the grove directory's migrate-backups"
                .to_string(),
            true,
        ),
        (Kind::McpJson, _, Some(r)) if r.maybe_tracked() => (
            format!("stale grove entry in a .mcp.json that git may track ({verdict}){detail}"),
            "run `gw-migrate --include-tracked --apply`, or remove the entry and commit"
                .to_string(),
            false,
        ),
        (
            Kind::McpJson,
            _,
            Some(
                Reason::InvalidJson
                | Reason::RootNotObject
                | Reason::ServersNotObject
                | Reason::DuplicateKeys
                | Reason::UnverifiableEdit
                | Reason::Unreadable,
            ),
        ) => (
            format!("cannot check .mcp.json for a stale grove entry ({verdict}){detail}"),
            "fix the file by hand, then run `gw-migrate`".to_string(),
            false,
        ),
        (Kind::McpJson, _, _) => (
            format!("stale grove entry in .mcp.json left alone ({verdict}){detail}"),
            "remove the entry by hand, or fix what is named and run `gw-migrate --apply`"
                .to_string(),
            false,
        ),
        (Kind::Database, _, _) => (
            format!("leftover {name} was not moved ({verdict}){detail}"),
            if item.reason == Some(Reason::InUse) {
                "stop the process holding it, then run `gw doctor --fix`".to_string()
            } else {
                "check the file and remove it by hand".to_string()
            },
            false,
        ),
    };
    Some(Finding {
        workspace: item.workspace.clone(),
        repo: item.repo.clone(),
        path: item.path.clone(),
        issue,
        suggested_action,
        fixable,
    })
}

/// What `gw doctor --fix` did.
#[derive(Debug, Clone, Serialize)]
pub struct Fixed {
    /// Every leftover, with its outcome (`done`, `skipped`, `failed`).
    pub items: Vec<Item>,
    /// Where the originals went; `gw-migrate restore <id>` undoes the fix.
    pub backup: Option<Backup>,
}

/// Cleans what [`doctor_findings`] reports as fixable: `gw-migrate --apply` over the same
/// scope (same checks, same lock, same backups).
pub fn fix(home: &GroveHome, env: &Env) -> Result<Fixed, Error> {
    let opts = Options {
        apply: true,
        include_tracked: false,
        roots: Vec::new(),
    };
    let m = migrate(home, env, &opts, &Cancel::never())?;
    Ok(Fixed {
        items: m
            .plan
            .items
            .into_iter()
            .filter(|i| i.reason != Some(Reason::ForeignEntry))
            .collect(),
        backup: m.backup,
    })
}
