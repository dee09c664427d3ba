//! The `gw doctor` side: every finding is an item of the same [`scan`] over the same
//! [`Scope::install`] that `gw-migrate` runs, so the two report the same files with the
//! same verdicts; `gw doctor --fix` is `gw-migrate --apply` over that scope.

use std::path::PathBuf;

use serde::Serialize;

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
    scan(home, &Scope::install(home, config, state))
        .items
        .iter()
        .filter_map(finding)
        .collect()
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
