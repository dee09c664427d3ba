//! Finding leftovers: where to look ([`Scope`]) and what each file found calls for
//! ([`scan`]). Reads only.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use super::database;
use super::model::{Action, Item, Kind, Plan, Reason};
use crate::config::Config;
use crate::env::Env;
use crate::error::Error;
use crate::fsx;
use crate::git::{self, Tracking, Unknown};
use crate::home::GroveHome;
use crate::legacy::mcp::{self, Verdict};
use crate::state::{State, Store};

/// Where to look.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Tracked workspaces: each root and each repository worktree is checked.
    pub state: State,
    /// The workspace directory, walked two levels deep (orphaned workspaces included).
    pub workspace_dir: Option<PathBuf>,
    /// More directories, walked two levels deep.
    pub roots: Vec<PathBuf>,
    /// Check `messages.db` and its sidecars in the grove directory.
    pub database: bool,
    /// Also plan edits of `.mcp.json` files that git tracks (or may track).
    pub include_tracked: bool,
}

impl Scope {
    /// What `gw doctor` and `gw-migrate` (without directories named on its command line)
    /// both look at: the tracked workspaces, the workspace directory and the database. An
    /// unreadable state is no workspace tracked (the workspace directory still holds them);
    /// an unreadable configuration is the default workspace directory.
    pub fn install(home: &GroveHome, config: Option<&Config>, state: Option<&State>) -> Scope {
        Scope {
            state: state.cloned().unwrap_or_default(),
            workspace_dir: Some(
                config.map_or_else(|| home.default_workspace_dir(), |c| c.workspace_dir.clone()),
            ),
            roots: Vec::new(),
            database: true,
            include_tracked: false,
        }
    }

    /// [`Scope::install`] with the configuration and state read from the grove directory
    /// (never written); what could not be read is said in the warnings.
    pub fn load(home: &GroveHome, env: &Env) -> (Scope, Vec<String>) {
        let mut warnings = Vec::new();
        let config = match Config::peek(home, env) {
            Ok(c) => c,
            Err(e) => {
                warnings.push(format!(
                    "{}; scanning the default workspace directory",
                    Error::from(e).message
                ));
                None
            }
        };
        let state = match Store::new(home, std::time::Duration::ZERO).load() {
            Ok(s) => Some(s),
            Err(e) => {
                warnings.push(format!(
                    "{}; tracked workspaces outside the scanned directories are missed",
                    Error::from(e).message
                ));
                None
            }
        };
        (
            Scope::install(home, config.as_ref(), state.as_ref()),
            warnings,
        )
    }
}

/// One path that leads to a `.mcp.json`.
struct Found {
    path: PathBuf,
    link: bool,
    workspace: Option<String>,
    repo: Option<String>,
}

/// Looks for leftovers. Reads only.
///
/// Every path found that leads to the same file is one item: the file is decided once, by
/// what it is, whatever order its names were found in. A file that symlinks point to is
/// edited, never deleted (deleting it would leave the links dangling), and the links are
/// listed with it.
pub fn scan(home: &GroveHome, scope: &Scope) -> Plan {
    let mut candidates: Vec<(PathBuf, Option<String>, Option<String>)> = Vec::new();
    let mut inside: Vec<PathBuf> = Vec::new();
    let mut looked_in: Vec<&Path> = Vec::new();
    for ws in &scope.state.workspaces {
        if !fsx::exists(&ws.path) {
            // Nothing of it to look at (and resolving a missing path costs a system call
            // per component).
            continue;
        }
        candidates.push((ws.path.join(mcp::FILE_NAME), Some(ws.name.clone()), None));
        inside.push(fsx::canonical(&ws.path));
        looked_in.push(&ws.path);
        for r in &ws.repos {
            candidates.push((
                r.worktree_path.join(mcp::FILE_NAME),
                Some(ws.name.clone()),
                Some(r.repo_name.clone()),
            ));
            inside.push(fsx::canonical(&r.worktree_path));
            looked_in.push(&r.worktree_path);
        }
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    roots.extend(scope.workspace_dir.iter().cloned());
    roots.extend(scope.roots.iter().cloned());
    for root in &roots {
        inside.push(fsx::canonical(root));
        candidates.extend(walk(root).into_iter().map(|p| (p, None, None)));
    }
    looked_in.extend(roots.iter().map(PathBuf::as_path));
    let within = within(&looked_in);

    // Group the paths by the file they lead to, in the order first found.
    let mut groups: Vec<(PathBuf, Vec<Found>)> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    for (path, workspace, repo) in candidates {
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let link = meta.file_type().is_symlink();
        // A dangling link has nothing of grove's in it.
        let Ok(file) = fs::canonicalize(&path) else {
            continue;
        };
        if !fs::metadata(&file).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let found = Found {
            path,
            link,
            workspace,
            repo,
        };
        match index.get(&file) {
            Some(&i) => {
                if !groups[i].1.iter().any(|f| f.path == found.path) {
                    groups[i].1.push(found);
                }
            }
            None => {
                index.insert(file.clone(), groups.len());
                groups.push((file, vec![found]));
            }
        }
    }

    let mut plan = Plan {
        roots,
        within,
        workspaces: scope.state.workspaces.len(),
        checked: 0,
        items: Vec::new(),
    };
    for (file, found) in groups {
        plan.checked += 1;
        let item = item_of(file.clone(), &found);
        let outside = item.target.is_some() && !inside.iter().any(|r| file.starts_with(r));
        match plan_file(item, scope.include_tracked) {
            // Reading through the link is harmless; editing a file outside the scanned
            // directories (a dotfiles repository, say) is not gw-migrate's to do.
            Some(item)
                if outside
                    && (item.action.is_some()
                        || item.reason.is_some_and(Reason::maybe_tracked)) =>
            {
                let detail = format!(
                    "holds grove's entry, but points to `{}`, outside the scanned directories; pass that directory to edit it",
                    item.file().display()
                );
                plan.items
                    .push(item.skip(Reason::SymlinkOutsideRoots, Some(detail)));
            }
            Some(_) if outside => {}
            Some(item) => plan.items.push(item),
            None => {}
        }
    }
    if scope.database {
        plan.items.extend(database::plan(home));
    }
    plan
}

/// The directories whose `.mcp.json` files a scan of `looked_in` (workspaces, worktrees and
/// roots) may change, as given and with symlinks resolved, none inside another: what an
/// applied run records, and all that its restore may write into.
fn within(looked_in: &[&Path]) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = Vec::new();
    for p in looked_in {
        // A root may be a `.mcp.json` itself.
        let dir = if p.file_name() == Some(OsStr::new(mcp::FILE_NAME)) {
            p.parent().unwrap_or(p)
        } else {
            p
        };
        all.push(dir.to_path_buf());
        all.push(fsx::canonical(dir));
    }
    all.sort();
    all.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in all {
        if !out.iter().any(|o| p.starts_with(o)) {
            out.push(p);
        }
    }
    out
}

/// The item for one file reached through `found` (at least one path): named by a path
/// that is the file itself when there is one, else by the first symlink found.
fn item_of(file: PathBuf, found: &[Found]) -> Item {
    let primary = found.iter().position(|f| !f.link).unwrap_or(0);
    let first = &found[primary];
    let mut item = Item::new(first.path.clone(), Kind::McpJson);
    if first.link {
        item.set_target(file);
    }
    let named = std::iter::once(first).chain(found.iter());
    for f in named {
        if item.workspace.is_none() {
            item.workspace.clone_from(&f.workspace);
            item.repo.clone_from(&f.repo);
        }
    }
    let mut links: Vec<&PathBuf> = found
        .iter()
        .enumerate()
        .filter(|(i, f)| *i != primary && f.link)
        .map(|(_, f)| &f.path)
        .collect();
    links.sort();
    for l in links {
        item.add_link(l.clone());
    }
    item
}

/// `<root>/.mcp.json`, `<root>/*/.mcp.json` and `<root>/*/*/.mcp.json`: a workspace
/// directory's workspaces and their worktrees. Hidden directories (`.git`, `.trash`) and
/// `node_modules` are skipped, and directory symlinks are not followed. Names are compared
/// as bytes: a directory name need not be UTF-8.
fn walk(root: &Path) -> Vec<PathBuf> {
    let file_name = OsStr::new(mcp::FILE_NAME);
    if root.file_name() == Some(file_name) {
        return vec![root.to_path_buf()];
    }
    walkdir::WalkDir::new(root)
        .max_depth(3)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name();
            e.depth() == 0
                || name == file_name
                || (e.file_type().is_dir()
                    && !name.as_encoded_bytes().starts_with(b".")
                    && name != "node_modules")
        })
        .filter_map(Result::ok)
        .filter(|e| e.depth() > 0 && e.file_name() == file_name)
        .map(|e| e.into_path())
        .collect()
}

/// Reads one `.mcp.json` and decides; `None` when it has nothing of grove's.
fn plan_file(mut item: Item, include_tracked: bool) -> Option<Item> {
    let bytes = match fs::read(item.file()) {
        Ok(b) => b,
        Err(e) => return Some(item.skip(Reason::Unreadable, Some(e.to_string()))),
    };
    item.sha256 = Some(fsx::sha256_hex(&bytes));
    let (edited, only_content) = match mcp::inspect(&bytes) {
        Verdict::Clean => return None,
        Verdict::Foreign { command } => {
            return Some(item.skip(
                Reason::ForeignEntry,
                Some(format!(
                    "the `grove` entry runs `{}`, not grove's `gw mcp-serve`; it belongs to another tool",
                    command.as_deref().unwrap_or("?")
                )),
            ));
        }
        Verdict::Unusable(p) => return Some(item.skip(p.reason(), Some(p.describe()))),
        Verdict::Ours {
            edited,
            only_content,
        } => (edited, only_content),
    };
    if let Some(n) = hard_links(item.file()) {
        return Some(item.skip(
            Reason::HardLinked,
            Some(format!(
                "the file has {n} names (hard links); an edit would give this name a copy of its own and leave the others unchanged, so remove grove's entry by hand"
            )),
        ));
    }
    let mut paths = vec![item.path.clone()];
    paths.extend(item.target.clone());
    let maybe_tracked = match combined_tracking(&paths) {
        Tracking::Untracked => None,
        Tracking::Tracked => Some((
            Reason::Tracked,
            "git tracks this file; pass --include-tracked to edit it (it is never deleted)"
                .to_string(),
        )),
        Tracking::Unknown(u) => Some(unknown(&u)),
    };
    if let Some((reason, detail)) = &maybe_tracked
        && !include_tracked
    {
        return Some(item.skip(*reason, Some(detail.clone())));
    }
    // A symlink is never replaced or removed, nor is a file that symlinks point to.
    let delete =
        only_content && maybe_tracked.is_none() && item.target.is_none() && item.links.is_empty();
    item.action = Some(if delete {
        Action::DeleteFile
    } else {
        Action::RemoveEntry
    });
    item.edited = Some(edited);
    Some(item)
}

/// The number of names of a file that has more than one.
#[cfg(unix)]
fn hard_links(file: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(file)
        .ok()
        .map(|m| m.nlink())
        .filter(|n| *n > 1)
}

#[cfg(not(unix))]
fn hard_links(_: &Path) -> Option<u64> {
    None
}

/// Tracked when any of `paths` is; unknown when any cannot be told; else untracked.
fn combined_tracking(paths: &[PathBuf]) -> Tracking {
    let mut out = Tracking::Untracked;
    for p in paths {
        match git::tracking(p) {
            Tracking::Tracked => return Tracking::Tracked,
            Tracking::Unknown(u) => {
                if out == Tracking::Untracked {
                    out = Tracking::Unknown(u);
                }
            }
            Tracking::Untracked => {}
        }
    }
    out
}

/// Unknown counts as tracked: never delete what git might hold. Each cause has its reason.
fn unknown(u: &Unknown) -> (Reason, String) {
    const THEN: &str = "so whether git tracks this file is unknown and it is kept; pass --include-tracked to edit it (it is never deleted)";
    match u {
        Unknown::BrokenLink { dot_git, gitdir } => (
            Reason::GitLinkBroken,
            format!(
                "`{}` points to `{}`, which does not exist (did the repository move? `git worktree repair` in it re-links the worktree), {THEN}",
                dot_git.display(),
                gitdir.display()
            ),
        ),
        Unknown::NotTrusted { repo } => (
            Reason::RepositoryNotTrusted,
            format!(
                "the repository `{}` belongs to another user (git's \"dubious ownership\") and grove does not read it, {THEN}",
                repo.display()
            ),
        ),
        Unknown::IndexUnreadable { repo, message } => (
            Reason::IndexUnreadable,
            format!(
                "the index of `{}` cannot be read ({message}), {THEN}",
                repo.display()
            ),
        ),
        Unknown::Other { message } => (Reason::TrackingUnknown, format!("{message}, {THEN}")),
    }
}
