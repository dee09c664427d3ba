//! `gw list`: the workspaces in `state.json`; with `--status`, a summary of each one's
//! worktrees. Without `--status` no repository is opened.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::error::Result;
use crate::fsx;
use crate::git;
use crate::ops::Ctx;
use crate::ops::ports::{self, Port, PortStatus, Stack};
use crate::parallel;
use crate::state::listing::{RawStr, RepoRef, WorkspaceRef};
use crate::state::{Blueprint, Listing, RepoEntry, Source, Workspace};

/// The workspaces as recorded, read without copying (see [`Listing`]); `result()` shows
/// them as [`WorkspaceView`]s and `--json` as the Go grove's state objects.
#[derive(Debug)]
pub struct ListReport {
    pub listing: Listing,
    /// The workspace the current directory is in (the deepest), marked in the table.
    pub current: Option<String>,
}

/// `gw list --format json`'s result.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ListView<'a> {
    #[cfg_attr(test, schemars(with = "Vec<WorkspaceView<'static>>"))]
    pub workspaces: Views<'a>,
    pub count: usize,
}

/// The records of a listing, serialised as [`WorkspaceView`]s one at a time (never all
/// built at once).
#[derive(Debug)]
pub struct Views<'a>(&'a [WorkspaceRef<'a>]);

impl Serialize for Views<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(WorkspaceView::of_record))
    }
}

/// A string of a view: borrowed from a workspace record, or still the JSON token it is in
/// `state.json` (written out verbatim).
#[derive(Debug, Clone, Copy)]
pub enum Text<'a> {
    Str(&'a str),
    Path(&'a Path),
    Raw(RawStr<'a>),
}

impl Serialize for Text<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Text::Str(t) => s.serialize_str(t),
            Text::Path(p) => p.serialize(s),
            Text::Raw(r) => r.serialize(s),
        }
    }
}

// Views borrow what they show: `gw list` serialises a thousand of them, and copying every
// string first cost as much as reading the state file.
/// A workspace as machine-mode results show it: absolute paths, an RFC 3339 UTC
/// `created_at`, and counts beside lists.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct WorkspaceView<'a> {
    #[cfg_attr(test, schemars(with = "String"))]
    pub name: Text<'a>,
    #[cfg_attr(test, schemars(with = "PathBuf"))]
    pub path: Text<'a>,
    #[cfg_attr(test, schemars(with = "String"))]
    pub branch: Text<'a>,
    /// RFC 3339, UTC; `null` when the recorded time cannot be read (see `unknown`).
    pub created_at: Option<String>,
    #[cfg_attr(test, schemars(with = "Vec<RepoView<'static>>"))]
    pub repos: Repos<'a>,
    pub repo_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'a Source>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blueprint: Option<&'a Blueprint>,
    /// The workspace's port slot (see `gw list --ports`); absent until it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// For each field that is `null` because it could not be determined, the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown: BTreeMap<&'static str, String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RepoView<'a> {
    #[cfg_attr(test, schemars(with = "String"))]
    pub repo: Text<'a>,
    #[cfg_attr(test, schemars(with = "String"))]
    pub branch: Text<'a>,
    /// The worktree.
    #[cfg_attr(test, schemars(with = "PathBuf"))]
    pub path: Text<'a>,
    #[cfg_attr(test, schemars(with = "PathBuf"))]
    pub source_repo: Text<'a>,
    /// The branch existed before the workspace used it; deleting the workspace keeps it.
    pub preserve_branch: bool,
}

/// A workspace's repositories, serialised as [`RepoView`]s one at a time.
#[derive(Debug, Clone, Copy)]
pub enum Repos<'a> {
    Entries(&'a [RepoEntry]),
    Records(&'a [RepoRef<'a>]),
}

impl Serialize for Repos<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Repos::Entries(e) => s.collect_seq(e.iter().map(|r| RepoView {
                repo: Text::Str(&r.repo_name),
                branch: Text::Str(&r.branch),
                path: Text::Path(&r.worktree_path),
                source_repo: Text::Path(&r.source_repo),
                preserve_branch: r.preserve_branch,
            })),
            Repos::Records(e) => s.collect_seq(e.iter().map(|r| RepoView {
                repo: Text::Raw(r.repo_name),
                branch: Text::Raw(r.branch),
                path: Text::Raw(r.worktree_path),
                source_repo: Text::Raw(r.source_repo),
                preserve_branch: r.preserve_branch,
            })),
        }
    }
}

impl<'a> WorkspaceView<'a> {
    pub fn of(w: &'a Workspace) -> WorkspaceView<'a> {
        WorkspaceView::new(
            Text::Str(&w.name),
            Text::Path(&w.path),
            Text::Str(&w.branch),
            &w.created_at,
            (Repos::Entries(&w.repos), w.repos.len()),
            (w.source.as_ref(), w.blueprint.as_ref()),
            w.slot,
        )
    }

    /// The view of a record borrowed from `state.json`.
    pub fn of_record(w: &'a WorkspaceRef<'a>) -> WorkspaceView<'a> {
        let created_at = w.created_at.map(|c| c.to_str()).unwrap_or_default();
        WorkspaceView::new(
            Text::Raw(w.name),
            Text::Raw(w.path),
            Text::Raw(w.branch),
            &created_at,
            (Repos::Records(&w.repos), w.repos.len()),
            (w.source.as_deref(), w.blueprint.as_deref()),
            w.slot,
        )
    }

    fn new(
        name: Text<'a>,
        path: Text<'a>,
        branch: Text<'a>,
        recorded: &str,
        (repos, repo_count): (Repos<'a>, usize),
        (source, blueprint): (Option<&'a Source>, Option<&'a Blueprint>),
        slot: Option<u32>,
    ) -> WorkspaceView<'a> {
        let created_at = crate::time::created_at_utc(recorded);
        let mut unknown = BTreeMap::new();
        if created_at.is_none() {
            unknown.insert(
                "created_at",
                format!("unreadable recorded time {recorded:?}"),
            );
        }
        WorkspaceView {
            name,
            path,
            branch,
            created_at,
            repos,
            repo_count,
            source,
            blueprint,
            slot,
            unknown,
        }
    }
}

impl ListReport {
    pub fn view(&self) -> ListView<'_> {
        let records = self.listing.records();
        ListView {
            workspaces: Views(records),
            count: records.len(),
        }
    }

    pub fn next_actions(&self) -> Vec<NextAction> {
        match self.listing.records().first() {
            Some(ws) => {
                let name = ws.name.to_str();
                vec![NextAction::read(
                    format!("Inspect workspace {name}"),
                    &["gw", "status", &name, "--format", "json"],
                )]
            }
            None => vec![NextAction::read(
                "List repositories a workspace can use",
                &["gw", "repos", "--format", "json"],
            )],
        }
    }
}

/// `gw list`: reads nothing but the configuration and `state.json`. `mark_current` finds
/// the workspace the current directory is in, which only the table shows.
pub fn list(ctx: &Ctx<'_>, mark_current: bool) -> Result<ListReport> {
    ctx.config()?;
    let listing = ctx.store.listing()?;
    let current = mark_current
        .then(|| containing(&listing, &ctx.env.cwd))
        .flatten();
    Ok(ListReport { listing, current })
}

/// The workspace whose directory holds `cwd` (the deepest one). Paths are compared as
/// recorded, against the directory as given and as resolved, so that a thousand records
/// cost no system call each; only when none matches (a recorded path through a symlink,
/// while the system gives the current directory resolved) are the recorded paths resolved
/// too.
fn containing(listing: &Listing, cwd: &Path) -> Option<String> {
    let resolved = fsx::canonical(cwd);
    let dirs = [cwd, &resolved].map(|d| (d, plain(d.as_os_str().as_bytes())));
    let deepest = |found: &mut dyn Iterator<Item = (usize, String)>| {
        found.max_by_key(|(depth, _)| *depth).map(|(_, name)| name)
    };
    let as_recorded = deepest(&mut listing.records().iter().filter_map(|w| {
        let root = w.path.to_str();
        dirs.iter().any(|&(dir, p)| under(dir, p, &root)).then(|| {
            let depth = Path::new(root.as_ref()).components().count();
            (depth, w.name.to_str().into_owned())
        })
    }));
    as_recorded.or_else(|| {
        deepest(&mut listing.records().iter().filter_map(|w| {
            let root = fsx::canonical(Path::new(w.path.to_str().as_ref()));
            resolved
                .starts_with(&root)
                .then(|| (root.components().count(), w.name.to_str().into_owned()))
        }))
    })
}

/// `dir.starts_with(root)`; `plain_dir` says whether `dir` is [`plain`].
fn under(dir: &Path, plain_dir: bool, root: &str) -> bool {
    let (d, r) = (dir.as_os_str().as_bytes(), root.as_bytes());
    if plain_dir && plain(r) {
        d.starts_with(r) && (d.len() == r.len() || d[r.len()] == b'/')
    } else {
        dir.starts_with(root)
    }
}

/// Whether a path is plain: absolute, without a `.` component or a doubled or trailing
/// separator, as grove records paths and the system gives the current directory. Whether
/// one plain path lies under another is a comparison of bytes; splitting both into
/// components for each of a thousand records cost a tenth of `gw list`.
fn plain(p: &[u8]) -> bool {
    p.first() == Some(&b'/')
        && p.split(|&b| b == b'/')
            .skip(1)
            .all(|c| !c.is_empty() && c != b".")
}

/// A workspace with its worktrees summarised.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Summary {
    pub name: String,
    pub branch: String,
    /// Number of repositories.
    pub repos: usize,
    /// `"2 clean, 1 modified, 1 error"`, or `"empty"`.
    pub status: String,
    pub path: PathBuf,
    pub clean: usize,
    pub modified: usize,
    pub errors: usize,
    /// RFC 3339, UTC; `null` when unreadable.
    pub created_at: Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ListStatusReport {
    pub workspaces: Vec<Summary>,
    pub count: usize,
}

/// `gw list --status`: every worktree of every workspace is checked in parallel.
pub fn list_status(ctx: &Ctx<'_>) -> Result<ListStatusReport> {
    let config = ctx.config()?;
    let state = ctx.state()?;
    let all: Vec<&RepoEntry> = state.workspaces.iter().flat_map(|w| &w.repos).collect();
    // From inside the workspace directory each worktree is read by a short relative path.
    let root = &config.workspace_dir;
    let inside = fsx::Inside::enter(root);
    let dirty: Vec<Option<bool>> = parallel::map(&all, |r| {
        let via = inside
            .as_ref()
            .and_then(|i| i.relative(root, &r.worktree_path));
        git::Repo::open_via(&r.worktree_path, via.unwrap_or(&r.worktree_path))
            .and_then(|repo| repo.changes_shown())
            .ok()
            .map(|c| !c.is_clean())
    });
    drop(inside);
    let mut results = dirty.into_iter();
    let workspaces: Vec<Summary> = state
        .workspaces
        .iter()
        .map(|w| {
            let (mut clean, mut modified, mut errors) = (0, 0, 0);
            for _ in &w.repos {
                match results.next().flatten() {
                    Some(false) => clean += 1,
                    Some(true) => modified += 1,
                    None => errors += 1,
                }
            }
            let mut parts = Vec::new();
            for (n, label) in [(clean, "clean"), (modified, "modified"), (errors, "error")] {
                if n > 0 {
                    parts.push(format!("{n} {label}"));
                }
            }
            Summary {
                name: w.name.clone(),
                branch: w.branch.clone(),
                repos: w.repos.len(),
                status: if parts.is_empty() {
                    "empty".into()
                } else {
                    parts.join(", ")
                },
                path: w.path.clone(),
                clean,
                modified,
                errors,
                created_at: crate::time::created_at_utc(&w.created_at),
            }
        })
        .collect();
    Ok(ListStatusReport {
        count: workspaces.len(),
        workspaces,
    })
}

/// A workspace's ports, each looked at now.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct WorkspacePorts {
    pub name: String,
    pub path: PathBuf,
    /// `null` until the workspace has a slot (see `unknown`).
    pub slot: Option<u32>,
    pub ports: Vec<PortStatus>,
    pub port_count: usize,
    /// For `slot` (and so `ports`) when they cannot be told: why.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown: BTreeMap<&'static str, String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ListPortsReport {
    pub workspaces: Vec<WorkspacePorts>,
    pub count: usize,
}

/// `gw list --ports`: every workspace's slot and ports, and whether something listens on
/// each. Changes nothing: a workspace without a slot yet shows none.
pub fn list_ports(ctx: &Ctx<'_>) -> Result<ListPortsReport> {
    let config = ctx.config()?;
    let state = ctx.state()?;
    let stacks: Vec<std::result::Result<Stack, String>> =
        parallel::map(&state.workspaces, |w| Stack::recorded(&config, w));
    let all: Vec<Port> = stacks
        .iter()
        .flatten()
        .flat_map(|s| s.ports.iter().cloned())
        .collect();
    let mut looked = ports::look(&all).into_iter();
    let workspaces: Vec<WorkspacePorts> = state
        .workspaces
        .iter()
        .zip(stacks)
        .map(|(w, stack)| {
            let (ports, unknown): (Vec<PortStatus>, _) = match stack {
                Ok(s) => (
                    looked.by_ref().take(s.ports.len()).collect(),
                    BTreeMap::new(),
                ),
                Err(why) => (Vec::new(), ports::unknown(w, why)),
            };
            WorkspacePorts {
                name: w.name.clone(),
                path: w.path.clone(),
                slot: w.slot,
                port_count: ports.len(),
                ports,
                unknown,
            }
        })
        .collect();
    Ok(ListPortsReport {
        count: workspaces.len(),
        workspaces,
    })
}

/// `gw ws show NAME`: the workspace as recorded.
#[derive(Debug)]
pub struct ShowReport {
    pub workspace: Workspace,
}

/// `gw ws show --format json`'s result.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ShowView<'a> {
    pub workspace: WorkspaceView<'a>,
}

pub fn show(ctx: &Ctx<'_>, name: Option<&str>) -> Result<ShowReport> {
    ctx.config()?;
    let state = ctx.state()?;
    let ws = crate::ops::resolve::workspace(&state, name, &ctx.env.cwd)?;
    Ok(ShowReport {
        workspace: ws.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_compare_as_their_components_do() {
        let paths = [
            "/", "/a", "/a/", "/a/b", "/ab", "/a//b", "/a/./b", "/a/.", "/a/b/c", "a", "a/b",
            "/a/..", "/a/../b", "/a/b/", "//a", "/a/b.", "/a/.b", "./a",
        ];
        for d in paths {
            for r in paths {
                let dir = Path::new(d);
                assert_eq!(
                    under(dir, plain(d.as_bytes()), r),
                    dir.starts_with(r),
                    "{d} under {r}"
                );
            }
        }
    }
}
