//! Finding and removing the Go grove's MCP leftovers, with backups that can be restored.
//!
//! [`scan`] looks at every place the Go grove wrote a `.mcp.json` (tracked workspaces and
//! their worktrees, the workspace directory including orphaned directories, extra roots)
//! and at `messages.db` with its sidecars, and returns a [`Plan`]: one [`Item`] per file
//! that needs attention, changing nothing. [`apply`] carries out exactly that plan: every
//! file is re-read and must still have the content that was scanned; what is edited is
//! first copied, and what is removed is moved (never unlinked), into
//! `<GW_HOME>/migrate-backups/<id>/` with a manifest of paths and SHA-256 digests.
//! [`restore`] checks those digests before putting anything back.
//!
//! `gw-migrate` calls these directly; `gw doctor` uses [`doctor_findings`] and [`fix`],
//! which run the same scan and apply over the tracked workspaces and the database.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::mcp::{self, Verdict};
use crate::error::{Code, Error};
use crate::fsx;
use crate::home::GroveHome;
use crate::state::State;

/// Where backups go, under the grove directory.
pub const BACKUPS_DIR: &str = "migrate-backups";
const MANIFEST: &str = "manifest.json";
const MANIFEST_VERSION: u32 = 1;
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// The announcements database and the files SQLite keeps beside it.
pub const DATABASE_FILES: &[&str] = &[
    "messages.db",
    "messages.db-wal",
    "messages.db-shm",
    "messages.db-journal",
];

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
    /// Move a database file into the backup.
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
    /// Planned; `apply` would do it.
    Pending,
    Done,
    /// Left alone on purpose; `reason` says why.
    Skipped,
    /// Tried and failed; `detail` says why.
    Failed,
}

/// One file that needs attention.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    /// The path found: a `.mcp.json` (possibly a symlink) or a database file.
    pub path: PathBuf,
    /// The file a symlinked `.mcp.json` points to, which is what gets edited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
    pub kind: Kind,
    /// The tracked workspace the file belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The repository whose worktree holds the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    pub action: Option<Action>,
    pub status: Status,
    /// Why the file is skipped or failed: `foreign_entry`, `invalid_json`,
    /// `root_not_object`, `servers_not_object`, `duplicate_keys`, `tracked`,
    /// `symlink_outside_roots`, `not_sqlite`, `not_regular_file`,
    /// `unreadable`, `changed_since_scan`, `io_error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// SHA-256 of the file as scanned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(skip)]
    edited: Option<Vec<u8>>,
    /// The error behind a `failed` status.
    #[serde(skip)]
    pub error: Option<Error>,
}

impl Item {
    fn new(path: PathBuf, kind: Kind) -> Item {
        Item {
            path,
            target: None,
            kind,
            workspace: None,
            repo: None,
            action: None,
            status: Status::Pending,
            reason: None,
            detail: None,
            sha256: None,
            edited: None,
            error: None,
        }
    }

    /// The file that is changed: the symlink's target, else the path itself.
    pub fn file(&self) -> &Path {
        self.target.as_deref().unwrap_or(&self.path)
    }

    fn skip(mut self, reason: &'static str, detail: impl Into<Option<String>>) -> Item {
        self.status = Status::Skipped;
        self.reason = Some(reason);
        self.detail = detail.into();
        self
    }

    /// Needs a person: skipped for a reason other than belonging to another tool.
    pub fn needs_attention(&self) -> bool {
        matches!(self.status, Status::Skipped | Status::Failed)
            && self.reason != Some("foreign_entry")
    }
}

/// Where to look.
#[derive(Debug, Clone)]
pub struct Scope<'a> {
    /// Tracked workspaces: each root and each repository worktree is checked.
    pub state: &'a State,
    /// The workspace directory, walked two levels deep (orphaned workspaces included).
    pub workspace_dir: Option<PathBuf>,
    /// More directories, walked two levels deep.
    pub roots: Vec<PathBuf>,
    /// Check `messages.db` and its sidecars in the grove directory.
    pub database: bool,
    /// Also plan edits of `.mcp.json` files that git tracks.
    pub include_tracked: bool,
}

/// The outcome of a scan: what would change, and what is left alone.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The directories walked (the workspace directory and extra roots).
    pub roots: Vec<PathBuf>,
    /// Tracked workspaces checked.
    pub workspaces: usize,
    /// Files read.
    pub checked: usize,
    pub items: Vec<Item>,
}

impl Plan {
    pub fn count(&self, status: Status) -> usize {
        self.items.iter().filter(|i| i.status == status).count()
    }
}

/// Looks for leftovers. Reads only.
pub fn scan(home: &GroveHome, scope: &Scope<'_>) -> Plan {
    let mut candidates: Vec<(PathBuf, Option<String>, Option<String>)> = Vec::new();
    let mut inside: Vec<PathBuf> = Vec::new();
    for ws in &scope.state.workspaces {
        candidates.push((ws.path.join(mcp::FILE_NAME), Some(ws.name.clone()), None));
        inside.push(fsx::canonical(&ws.path));
        for r in &ws.repos {
            candidates.push((
                r.worktree_path.join(mcp::FILE_NAME),
                Some(ws.name.clone()),
                Some(r.repo_name.clone()),
            ));
            inside.push(fsx::canonical(&r.worktree_path));
        }
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    roots.extend(scope.workspace_dir.iter().cloned());
    roots.extend(scope.roots.iter().cloned());
    for root in &roots {
        inside.push(fsx::canonical(root));
        candidates.extend(walk(root).into_iter().map(|p| (p, None, None)));
    }

    let mut plan = Plan {
        roots,
        workspaces: scope.state.workspaces.len(),
        checked: 0,
        items: Vec::new(),
    };
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for (path, workspace, repo) in candidates {
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let mut item = Item::new(path.clone(), Kind::McpJson);
        item.workspace = workspace;
        item.repo = repo;
        let mut outside = false;
        if meta.file_type().is_symlink() {
            // A dangling link has nothing of grove's in it.
            let Ok(target) = fs::canonicalize(&path) else {
                continue;
            };
            if !seen.insert(target.clone()) {
                continue;
            }
            outside = !inside.iter().any(|r| target.starts_with(r));
            item.target = Some(target);
        } else if !seen.insert(fsx::canonical(&path)) {
            continue;
        }
        if !fs::metadata(item.file()).is_ok_and(|m| m.is_file()) {
            continue;
        }
        plan.checked += 1;
        match plan_file(item, scope.include_tracked) {
            // Reading through the link is harmless; editing a file outside the scanned
            // directories (a dotfiles repository, say) is not gw-migrate's to do.
            Some(mut item)
                if outside && (item.action.is_some() || item.reason == Some("tracked")) =>
            {
                let detail = format!(
                    "holds grove's entry, but points to `{}`, outside the scanned directories; pass that directory to edit it",
                    item.file().display()
                );
                item.action = None;
                item.edited = None;
                plan.items
                    .push(item.skip("symlink_outside_roots", Some(detail)));
            }
            Some(_) if outside => {}
            Some(item) => plan.items.push(item),
            None => {}
        }
    }
    if scope.database {
        plan.items.extend(plan_database(home));
    }
    plan
}

/// `<root>/.mcp.json`, `<root>/*/.mcp.json` and `<root>/*/*/.mcp.json`: a workspace
/// directory's workspaces and their worktrees. Hidden directories (`.git`, `.trash`) and
/// `node_modules` are skipped, and directory symlinks are not followed.
fn walk(root: &Path) -> Vec<PathBuf> {
    if root.file_name().is_some_and(|n| n == mcp::FILE_NAME) {
        return vec![root.to_path_buf()];
    }
    walkdir::WalkDir::new(root)
        .max_depth(3)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0
                || name == mcp::FILE_NAME
                || (e.file_type().is_dir() && !name.starts_with('.') && name != "node_modules")
        })
        .filter_map(Result::ok)
        .filter(|e| e.depth() > 0 && e.file_name() == mcp::FILE_NAME)
        .map(|e| e.into_path())
        .collect()
}

/// Reads one `.mcp.json` and decides; `None` when it has nothing of grove's.
fn plan_file(mut item: Item, include_tracked: bool) -> Option<Item> {
    let bytes = match fs::read(item.file()) {
        Ok(b) => b,
        Err(e) => return Some(item.skip("unreadable", Some(e.to_string()))),
    };
    item.sha256 = Some(sha256(&bytes));
    match mcp::inspect(&bytes) {
        Verdict::Clean => None,
        Verdict::Foreign { command } => Some(item.skip(
            "foreign_entry",
            Some(format!(
                "the `grove` entry runs `{}`, not grove's `gw mcp-serve`; it belongs to another tool",
                command.as_deref().unwrap_or("?")
            )),
        )),
        Verdict::Unusable(p) => Some(item.skip(p.code(), Some(p.describe()))),
        Verdict::Ours {
            edited,
            only_content,
        } => {
            let tracked = match tracked(&item) {
                Ok(t) => t,
                Err(e) => {
                    // Unknown counts as tracked: never delete what git might hold.
                    item.detail = Some(format!("cannot tell whether git tracks it: {e}"));
                    true
                }
            };
            if tracked && !include_tracked {
                return Some(item.skip(
                    "tracked",
                    Some("git tracks this file; pass --include-tracked to edit it".to_string()),
                ));
            }
            // A symlink is never replaced or removed: its target is edited in place.
            let delete = only_content && !tracked && item.target.is_none();
            item.action = Some(if delete {
                Action::DeleteFile
            } else {
                Action::RemoveEntry
            });
            item.edited = Some(edited);
            Some(item)
        }
    }
}

fn tracked(item: &Item) -> Result<bool, crate::git::Error> {
    Ok(crate::git::is_tracked(&item.path)?
        || (item.target.is_some() && crate::git::is_tracked(item.file())?))
}

/// `messages.db` and its sidecars, moved together once the main file is known to be SQLite.
fn plan_database(home: &GroveHome) -> Vec<Item> {
    let main = home.messages_db();
    let mut out = Vec::new();
    let mut main_ok = false;
    for name in DATABASE_FILES {
        let path = home.root().join(name);
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let mut item = Item::new(path.clone(), Kind::Database);
        if !meta.file_type().is_file() {
            out.push(item.skip(
                "not_regular_file",
                Some("not a regular file (a symlink or a directory)".to_string()),
            ));
            continue;
        }
        if path == main {
            match read_head(&path) {
                Ok(head) if head == *SQLITE_MAGIC => main_ok = true,
                Ok(_) => {
                    out.push(item.skip(
                        "not_sqlite",
                        Some("does not start with the SQLite header".to_string()),
                    ));
                    continue;
                }
                Err(e) => {
                    out.push(item.skip("unreadable", Some(e.to_string())));
                    continue;
                }
            }
        } else if !main_ok {
            out.push(item.skip(
                "not_sqlite",
                Some("messages.db is missing or not an SQLite database".to_string()),
            ));
            continue;
        }
        match file_sha256(&path) {
            Ok(h) => item.sha256 = Some(h),
            Err(e) => {
                out.push(item.skip("unreadable", Some(e.to_string())));
                continue;
            }
        }
        item.action = Some(Action::MoveDatabase);
        out.push(item);
    }
    out
}

fn read_head(path: &Path) -> io::Result<[u8; 16]> {
    let mut head = [0u8; 16];
    let mut f = fs::File::open(path)?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(head)
}

// ---- apply ----

/// A backup made by [`apply`].
#[derive(Debug, Clone, Serialize)]
pub struct Backup {
    pub id: String,
    pub path: PathBuf,
}

/// The record of one applied run, `<backup>/manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub version: u32,
    pub id: String,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_at: Option<String>,
    pub entries: Vec<Entry>,
}

/// One file changed by an applied run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub kind: Kind,
    pub action: Action,
    /// The path as found.
    pub path: PathBuf,
    /// The file changed (the symlink's target, else `path`).
    pub file: PathBuf,
    /// The saved copy, relative to the backup directory.
    pub backup: PathBuf,
    pub sha256_before: String,
    /// The file's digest after the edit; `None` when it was moved away.
    pub sha256_after: Option<String>,
    /// Unix permission bits of the original.
    pub mode: Option<u32>,
}

/// Carries out every pending item of `plan`, recording each outcome in the item. Creates a
/// backup only when there is something to do. Fails only when the backup cannot be made.
pub fn apply(home: &GroveHome, plan: &mut Plan) -> Result<Option<Backup>, Error> {
    if !plan.items.iter().any(|i| i.status == Status::Pending) {
        return Ok(None);
    }
    let (id, dir) = new_backup_dir(home)?;
    let mut manifest = Manifest {
        version: MANIFEST_VERSION,
        id: id.clone(),
        created_at: crate::time::now_utc(),
        restored_at: None,
        entries: Vec::new(),
    };
    write_manifest(&dir, &manifest)?;
    for (n, item) in plan
        .items
        .iter_mut()
        .filter(|i| i.status == Status::Pending)
        .enumerate()
    {
        match apply_one(item, &dir, n + 1) {
            Ok(entry) => {
                item.status = Status::Done;
                manifest.entries.push(entry);
                // Written after every file, so an interrupted run can still be restored.
                if let Err(e) = write_manifest(&dir, &manifest) {
                    item.status = Status::Failed;
                    item.reason = Some("io_error");
                    item.detail = Some(format!("done, but the manifest was not saved: {e}"));
                    item.error = Some(e.into());
                }
            }
            Err(Outcome::Changed) => {
                item.status = Status::Skipped;
                item.reason = Some("changed_since_scan");
                item.detail = Some("the file changed after it was scanned; run again".into());
            }
            Err(Outcome::Failed(e)) => {
                item.status = Status::Failed;
                item.reason = Some("io_error");
                item.detail = Some(e.to_string());
                item.error = Some(e.into());
            }
        }
    }
    if manifest.entries.is_empty() {
        // Nothing was changed: no backup to restore.
        let _ = fsx::remove_dir_all(&dir);
        return Ok(None);
    }
    Ok(Some(Backup { id, path: dir }))
}

enum Outcome {
    Changed,
    Failed(fsx::Error),
}

impl From<fsx::Error> for Outcome {
    fn from(e: fsx::Error) -> Outcome {
        Outcome::Failed(e)
    }
}

fn apply_one(item: &Item, dir: &Path, n: usize) -> Result<Entry, Outcome> {
    let file = item.file().to_path_buf();
    let action = item.action.expect("a pending item has an action");
    let before = item.sha256.clone().expect("a pending item was hashed");
    let current = read_bytes(&file)?;
    if sha256(&current) != before {
        return Err(Outcome::Changed);
    }
    let mode = mode_of(&file);
    let backup = match item.kind {
        Kind::McpJson => PathBuf::from("files").join(format!("{n:04}.mcp.json")),
        Kind::Database => PathBuf::from("database").join(item.path.file_name().unwrap_or_default()),
    };
    let saved = dir.join(&backup);
    let sha256_after = match action {
        Action::RemoveEntry => {
            let edited = item.edited.as_deref().expect("an edit was planned");
            fsx::create_dir_all(saved.parent().expect("backup paths have a parent"))?;
            fsx::write_atomic(&saved, &current)?;
            replace_if_unchanged(&file, &before, edited)?;
            Some(sha256(edited))
        }
        Action::DeleteFile | Action::MoveDatabase => {
            move_if_unchanged(&file, &before, &saved)?;
            None
        }
    };
    Ok(Entry {
        kind: item.kind,
        action,
        path: item.path.clone(),
        file,
        backup,
        sha256_before: before,
        sha256_after,
        mode,
    })
}

fn new_backup_dir(home: &GroveHome) -> Result<(String, PathBuf), Error> {
    let base = home.root().join(BACKUPS_DIR);
    fsx::create_dir_all(&base)?;
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    for n in 1..1000 {
        let id = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = base.join(&id);
        match fsx::create_dir(&dir) {
            Ok(()) => return Ok((id, dir)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(Error::internal(format!(
        "cannot choose a new backup directory in `{}`",
        base.display()
    )))
}

fn write_manifest(dir: &Path, m: &Manifest) -> Result<(), fsx::Error> {
    let mut text = serde_json::to_string_pretty(m).expect("a manifest serialises");
    text.push('\n');
    fsx::write_atomic(&dir.join(MANIFEST), text.as_bytes())
}

/// Replaces `path` with `contents` atomically, keeping its permissions, but only if it
/// still has the digest `expected` right before the rename.
fn replace_if_unchanged(path: &Path, expected: &str, contents: &[u8]) -> Result<(), Outcome> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    fn io<'a>(op: &'static str, p: &'a Path) -> impl FnOnce(io::Error) -> fsx::Error + 'a {
        move |e| fsx::Error::new(op, p, e)
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io("create a temporary file in", dir))?;
    let tmp_path = tmp.path().to_path_buf();
    tmp.as_file_mut()
        .write_all(contents)
        .map_err(io("write", &tmp_path))?;
    tmp.as_file().sync_all().map_err(io("sync", &tmp_path))?;
    let meta = fs::metadata(path).map_err(io("read", path))?;
    fs::set_permissions(&tmp_path, meta.permissions())
        .map_err(io("set permissions on", &tmp_path))?;
    if sha256(&read_bytes(path)?) != expected {
        return Err(Outcome::Changed);
    }
    tmp.persist(path)
        .map_err(|e| fsx::Error::new("replace", path, e.error))?;
    fsx::sync_dir(dir)?;
    Ok(())
}

/// Moves `from` to `to` (copy and remove across file systems), if `from` still has the
/// digest `expected`.
fn move_if_unchanged(from: &Path, expected: &str, to: &Path) -> Result<(), Outcome> {
    if sha256(&read_bytes(from)?) != expected {
        return Err(Outcome::Changed);
    }
    move_file(from, to)?;
    Ok(())
}

fn move_file(from: &Path, to: &Path) -> Result<(), fsx::Error> {
    fsx::create_dir_all(to.parent().expect("a destination has a parent"))?;
    match fs::rename(from, to) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::CrossesDevices => {
            fs::copy(from, to).map_err(|e| fsx::Error::new("copy", from, e))?;
            fs::File::open(to)
                .and_then(|f| f.sync_all())
                .map_err(|e| fsx::Error::new("sync", to, e))?;
            fsx::remove_file(from)?;
        }
        Err(e) => return Err(fsx::Error::new("move", from, e)),
    }
    if let Some(d) = to.parent() {
        fsx::sync_dir(d)?;
    }
    if let Some(d) = from.parent() {
        fsx::sync_dir(d)?;
    }
    Ok(())
}

// ---- restore ----

/// What `restore` did to one file.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    pub path: PathBuf,
    pub kind: Kind,
    /// The action being undone.
    pub action: Action,
    /// `restored`, `already_restored`, `conflict` (then nothing was restored), `failed`,
    /// or `pending` (not reached after a failure).
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The result of `restore`.
#[derive(Debug, Clone, Serialize)]
pub struct RestoreReport {
    pub id: String,
    pub backup: PathBuf,
    pub files: Vec<Restored>,
    /// When some file changed since the run, nothing is restored and this is set.
    #[serde(skip)]
    pub failure: Option<Error>,
}

/// The backups under the grove directory, oldest first: `(id, manifest)`.
pub fn backups(home: &GroveHome) -> Vec<(String, Manifest)> {
    let base = home.root().join(BACKUPS_DIR);
    let Ok(entries) = fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Manifest)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let id = e.file_name().to_str()?.to_string();
            let text = fsx::read_optional(&e.path().join(MANIFEST)).ok()??;
            let m: Manifest = serde_json::from_str(&text).ok()?;
            Some((id, m))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Puts back what the run `id` (default: the newest one not yet restored) changed. Every
/// file is checked first — the backup copy must have its recorded digest, and the current
/// file must be exactly what the run left — and if anything differs, nothing is restored.
pub fn restore(home: &GroveHome, id: Option<&str>) -> Result<RestoreReport, Error> {
    let all = backups(home);
    let base = home.root().join(BACKUPS_DIR);
    let known = || {
        let ids: Vec<&str> = all.iter().map(|(i, _)| i.as_str()).collect();
        if ids.is_empty() {
            "There are no backups; `gw-migrate --apply` makes one".to_string()
        } else {
            format!("Known backups: {}", ids.join(", "))
        }
    };
    let (id, mut manifest) = match id {
        Some(id) => all.iter().find(|(i, _)| i == id).cloned().ok_or_else(|| {
            Error::usage(format!("no migrate backup `{id}` in `{}`", base.display()))
                .with_fix(known())
        })?,
        None => all
            .iter()
            .rev()
            .find(|(_, m)| m.restored_at.is_none())
            .cloned()
            .ok_or_else(|| {
                Error::usage(format!(
                    "no migrate backup left to restore in `{}`",
                    base.display()
                ))
                .with_fix(known())
            })?,
    };
    let dir = base.join(&id);
    let mut report = RestoreReport {
        id: id.clone(),
        backup: dir.clone(),
        files: Vec::new(),
        failure: None,
    };
    // Check everything before changing anything.
    let mut todo = Vec::new();
    for e in manifest.entries.iter().rev() {
        let (status, detail) = check_restore(&dir, e);
        report.files.push(Restored {
            path: e.path.clone(),
            kind: e.kind,
            action: e.action,
            status,
            detail,
        });
        if status == "pending" {
            todo.push(e.clone());
        }
    }
    let conflicts = report
        .files
        .iter()
        .filter(|f| f.status == "conflict")
        .count();
    if conflicts > 0 {
        report.failure = Some(
            Error::new(
                Code::StateChanged,
                format!(
                    "{conflicts} file{} changed since the migration; nothing was restored",
                    if conflicts == 1 { "" } else { "s" }
                ),
            )
            .with_fix(
                "Look at the files marked `conflict`, resolve them by hand, and run restore again",
            ),
        );
        return Ok(report);
    }
    for (f, e) in report
        .files
        .iter_mut()
        .filter(|f| f.status == "pending")
        .zip(&todo)
    {
        match put_back(&dir, e) {
            Ok(()) => f.status = "restored",
            Err(err) => {
                f.status = "failed";
                f.detail = Some(err.to_string());
                report.failure.get_or_insert_with(|| Error::from(err));
            }
        }
    }
    if report.failure.is_none() {
        manifest.restored_at = Some(crate::time::now_utc());
        write_manifest(&dir, &manifest)?;
    }
    Ok(report)
}

/// `("pending", None)`, `("already_restored", None)` or `("conflict", why)`.
fn check_restore(dir: &Path, e: &Entry) -> (&'static str, Option<String>) {
    let saved = dir.join(&e.backup);
    match fs::read(&saved) {
        Ok(b) if sha256(&b) == e.sha256_before => {}
        Ok(_) => {
            return (
                "conflict",
                Some(format!(
                    "the backup copy `{}` does not match its recorded digest",
                    saved.display()
                )),
            );
        }
        Err(err) => {
            return (
                "conflict",
                Some(format!(
                    "cannot read the backup copy `{}`: {err}",
                    saved.display()
                )),
            );
        }
    }
    let current = match fs::read(&e.file) {
        Ok(b) => Some(sha256(&b)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return ("conflict", Some(format!("cannot read it: {err}"))),
    };
    match (current, &e.sha256_after) {
        (Some(c), _) if c == e.sha256_before => ("already_restored", None),
        (Some(c), Some(after)) if &c == after => ("pending", None),
        (None, None) => ("pending", None),
        (Some(_), _) => (
            "conflict",
            Some("the file changed after the migration".to_string()),
        ),
        (None, Some(_)) => (
            "conflict",
            Some("the file was removed after the migration".to_string()),
        ),
    }
}

fn put_back(dir: &Path, e: &Entry) -> Result<(), fsx::Error> {
    let saved = dir.join(&e.backup);
    match e.action {
        Action::RemoveEntry => {
            let bytes = read_bytes(&saved)?;
            fsx::write_atomic(&e.file, &bytes)
        }
        Action::DeleteFile | Action::MoveDatabase => {
            move_file(&saved, &e.file)?;
            set_mode(&e.file, e.mode)
        }
    }
}

// ---- gw doctor ----

/// A leftover as `gw doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub workspace: Option<String>,
    pub repo: Option<String>,
    pub path: PathBuf,
    pub issue: String,
    pub suggested_action: String,
    /// `gw doctor --fix` cleans it (through [`fix`]); otherwise a person must.
    pub fixable: bool,
}

/// What doctor looks at: every tracked workspace root and worktree, and the database.
fn doctor_scope(state: &State) -> Scope<'_> {
    Scope {
        state,
        workspace_dir: None,
        roots: Vec::new(),
        database: true,
        include_tracked: false,
    }
}

/// The MCP-era leftovers of the tracked workspaces and the grove directory, for
/// `gw doctor`. A `grove` entry of another tool is not a finding.
pub fn doctor_findings(home: &GroveHome, state: &State) -> Vec<Finding> {
    scan(home, &doctor_scope(state))
        .items
        .iter()
        .filter_map(finding)
        .collect()
}

fn finding(item: &Item) -> Option<Finding> {
    let (issue, suggested_action, fixable) = match (item.kind, item.status, item.reason) {
        (_, _, Some("foreign_entry")) => return None,
        (Kind::McpJson, Status::Pending, _) => (
            "stale grove entry in .mcp.json (built-in MCP server was removed)".to_string(),
            if item.action == Some(Action::DeleteFile) {
                "delete .mcp.json (it only registered grove's MCP server); a backup is kept"
            } else {
                "remove the grove entry from .mcp.json; a backup is kept"
            }
            .to_string(),
            true,
        ),
        (Kind::Database, Status::Pending, _) => (
            format!(
                "leftover {} of the removed MCP announcements store",
                item.path.file_name().unwrap_or_default().to_string_lossy()
            ),
            "move it into the grove directory's migrate-backups".to_string(),
            true,
        ),
        (Kind::McpJson, _, Some("tracked")) => (
            "stale grove entry in a .mcp.json that git tracks".to_string(),
            "run `gw-migrate --include-tracked --apply`, or remove the entry and commit"
                .to_string(),
            false,
        ),
        (Kind::McpJson, _, _) => (
            format!(
                "cannot check .mcp.json for a stale grove entry: {}",
                item.detail.as_deref().unwrap_or("unreadable")
            ),
            "fix the file by hand, then run `gw-migrate`".to_string(),
            false,
        ),
        (Kind::Database, _, _) => (
            format!(
                "leftover {} was not moved: {}",
                item.path.file_name().unwrap_or_default().to_string_lossy(),
                item.detail.as_deref().unwrap_or("unexpected file")
            ),
            "check the file and remove it by hand".to_string(),
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

/// Cleans what [`doctor_findings`] reports as fixable, with the code `gw-migrate --apply`
/// uses (same checks, same backups).
pub fn fix(home: &GroveHome, state: &State) -> Result<Fixed, Error> {
    let mut plan = scan(home, &doctor_scope(state));
    plan.items.retain(|i| i.reason != Some("foreign_entry"));
    let backup = apply(home, &mut plan)?;
    Ok(Fixed {
        items: plan.items,
        backup,
    })
}

// ---- helpers ----

fn read_bytes(path: &Path) -> Result<Vec<u8>, fsx::Error> {
    fs::read(path).map_err(|e| fsx::Error::new("read", path, e))
}

pub(crate) fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn file_sha256(path: &Path) -> io::Result<String> {
    let mut f = fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(unix)]
fn mode_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(_: &Path) -> Option<u32> {
    None
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: Option<u32>) -> Result<(), fsx::Error> {
    use std::os::unix::fs::PermissionsExt;
    match mode {
        Some(m) => fs::set_permissions(path, fs::Permissions::from_mode(m))
            .map_err(|e| fsx::Error::new("set permissions on", path, e)),
        None => Ok(()),
    }
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: Option<u32>) -> Result<(), fsx::Error> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proc::Cmd;
    use crate::state::{RepoEntry, Workspace};
    use std::os::unix::fs::PermissionsExt;

    /// What the Go grove wrote at a workspace root.
    const GO_FILE: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"feat-x\"\n      ],\n      \"command\": \"gw\"\n    }\n  }\n}";
    const WITH_KEEPER: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\", \"--workspace\", \"feat-x\"]},\n    \"keeper\": {\"command\": \"keeper-mcp\"}\n  }\n}\n";
    const KEEPER_ONLY: &str =
        "{\n  \"mcpServers\": {\n    \"keeper\": {\"command\": \"keeper-mcp\"}\n  }\n}\n";
    const FOREIGN: &str =
        "{\"mcpServers\": {\"grove\": {\"command\": \"grove\", \"args\": [\"serve\"]}}}\n";
    const CRLF: &str = "\u{feff}{\r\n  // the project's servers\r\n  \"mcpServers\": {\r\n    \"docs\": {\"command\": \"docs\"},\r\n    \"grove\": {\"command\": \"/usr/local/bin/gw\", \"args\": [\"mcp-serve\", \"-w\", \"x\"]}\r\n  }\r\n}\r\n";
    const CRLF_AFTER: &str = "\u{feff}{\r\n  // the project's servers\r\n  \"mcpServers\": {\r\n    \"docs\": {\"command\": \"docs\"}\r\n  }\r\n}\r\n";

    struct World {
        _tmp: tempfile::TempDir,
        root: PathBuf,
        home: GroveHome,
        wd: PathBuf,
    }

    impl World {
        fn new() -> World {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().canonicalize().unwrap();
            let home = GroveHome::new(root.join("home/.grove"));
            let wd = home.default_workspace_dir();
            fsx::create_dir_all(&wd).unwrap();
            World {
                _tmp: tmp,
                root,
                home,
                wd,
            }
        }

        fn scope<'a>(&self, state: &'a State) -> Scope<'a> {
            Scope {
                state,
                workspace_dir: Some(self.wd.clone()),
                roots: Vec::new(),
                database: true,
                include_tracked: false,
            }
        }
    }

    fn put(path: &Path, text: impl AsRef<[u8]>) {
        fsx::create_dir_all(path.parent().unwrap()).unwrap();
        fsx::write_atomic(path, text.as_ref()).unwrap();
    }

    fn read(path: &Path) -> String {
        String::from_utf8(fs::read(path).unwrap()).unwrap()
    }

    fn workspace(name: &str, path: &Path, repos: &[&str]) -> Workspace {
        Workspace {
            name: name.into(),
            path: path.to_path_buf(),
            branch: format!("feat/{name}"),
            created_at: String::new(),
            repos: repos
                .iter()
                .map(|r| RepoEntry {
                    repo_name: r.to_string(),
                    source_repo: PathBuf::from("/src").join(r),
                    worktree_path: path.join(r),
                    branch: format!("feat/{name}"),
                    preserve_branch: false,
                    setup: None,
                    extra: Default::default(),
                })
                .collect(),
            source: None,
            blueprint: None,
            extra: Default::default(),
        }
    }

    fn find<'a>(plan: &'a Plan, path: &Path) -> &'a Item {
        plan.items
            .iter()
            .find(|i| i.path == path)
            .unwrap_or_else(|| panic!("no item for {}: {:#?}", path.display(), plan.items))
    }

    fn database(home: &GroveHome) {
        let mut db = SQLITE_MAGIC.to_vec();
        db.extend_from_slice(&[7; 4080]);
        put(&home.messages_db(), db);
        put(&home.root().join("messages.db-wal"), b"wal bytes");
        put(&home.root().join("messages.db-shm"), b"shm bytes");
    }

    #[test]
    fn migrates_every_leftover_then_restores_it_byte_for_byte() {
        let w = World::new();
        let ws_root = w.wd.join("feat-x");
        let state = State {
            workspaces: vec![workspace("feat-x", &ws_root, &["api", "web"])],
        };
        let root_file = ws_root.join(".mcp.json");
        let api_file = ws_root.join("api/.mcp.json");
        let web_file = ws_root.join("web/.mcp.json");
        let orphan = w.wd.join("old-ws/.mcp.json");
        let orphan_wt = w.wd.join("old-ws/api/.mcp.json");
        let extra = w.root.join("elsewhere/proj/.mcp.json");
        let invalid = w.wd.join("bad/.mcp.json");
        let dupes = w.wd.join("dupes/.mcp.json");
        let array = w.wd.join("array/.mcp.json");
        let hidden = w.wd.join(".trash/gone/.mcp.json");
        let originals = [
            (&root_file, GO_FILE),
            (&api_file, WITH_KEEPER),
            (&web_file, KEEPER_ONLY),
            (&orphan, GO_FILE),
            (&orphan_wt, FOREIGN),
            (&extra, CRLF),
            (&invalid, "{\"mcpServers\": {\"grove\": "),
            (
                &dupes,
                "{\"mcpServers\": {\"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]}, \"grove\": {}}}",
            ),
            (&array, "[{\"mcpServers\": {}}]"),
            (&hidden, GO_FILE),
        ];
        for (p, text) in &originals {
            put(p, text);
        }
        database(&w.home);
        let db_before = fs::read(w.home.messages_db()).unwrap();
        let mut scope = w.scope(&state);
        scope.roots.push(w.root.join("elsewhere"));

        let mut plan = scan(&w.home, &scope);
        let expect = |p: &Path, action: Option<Action>, status: Status, reason: Option<&str>| {
            let i = find(&plan, p);
            assert_eq!(
                (i.action, i.status, i.reason),
                (action, status, reason),
                "{}: {i:#?}",
                p.display()
            );
        };
        expect(&root_file, Some(Action::DeleteFile), Status::Pending, None);
        expect(&api_file, Some(Action::RemoveEntry), Status::Pending, None);
        expect(&orphan, Some(Action::DeleteFile), Status::Pending, None);
        expect(&orphan_wt, None, Status::Skipped, Some("foreign_entry"));
        expect(&extra, Some(Action::RemoveEntry), Status::Pending, None);
        expect(&invalid, None, Status::Skipped, Some("invalid_json"));
        expect(&dupes, None, Status::Skipped, Some("duplicate_keys"));
        expect(&array, None, Status::Skipped, Some("root_not_object"));
        expect(
            &w.home.messages_db(),
            Some(Action::MoveDatabase),
            Status::Pending,
            None,
        );
        assert!(
            plan.items
                .iter()
                .all(|i| i.path != web_file && i.path != hidden)
        );
        assert_eq!(find(&plan, &api_file).workspace.as_deref(), Some("feat-x"));
        assert_eq!(find(&plan, &api_file).repo.as_deref(), Some("api"));
        assert_eq!(plan.count(Status::Pending), 7, "{:#?}", plan.items);
        for (p, text) in &originals {
            assert_eq!(read(p), *text, "a scan changes nothing");
        }

        let backup = apply(&w.home, &mut plan).unwrap().expect("a backup");
        assert_eq!(plan.count(Status::Done), 7);
        assert!(!root_file.exists() && !orphan.exists());
        assert_eq!(read(&api_file), KEEPER_ONLY);
        assert_eq!(read(&extra), CRLF_AFTER);
        assert_eq!(read(&orphan_wt), FOREIGN, "another tool's entry survives");
        assert_eq!(read(&hidden), GO_FILE, "hidden directories are not walked");
        for name in DATABASE_FILES.iter().take(3) {
            assert!(!w.home.root().join(name).exists());
            assert!(backup.path.join("database").join(name).is_file());
        }
        assert_eq!(
            fs::read(backup.path.join("database/messages.db")).unwrap(),
            db_before
        );
        let manifest: Manifest = serde_json::from_str(&read(&backup.path.join(MANIFEST))).unwrap();
        assert_eq!(manifest.entries.len(), 7);
        let api = manifest
            .entries
            .iter()
            .find(|e| e.path == api_file)
            .unwrap();
        assert_eq!(api.sha256_before, sha256(WITH_KEEPER.as_bytes()));
        assert_eq!(
            api.sha256_after.as_deref(),
            Some(sha256(KEEPER_ONLY.as_bytes()).as_str())
        );

        let again = scan(&w.home, &scope);
        assert_eq!(again.count(Status::Pending), 0, "{:#?}", again.items);

        let restored = restore(&w.home, None).unwrap();
        assert!(restored.failure.is_none(), "{restored:#?}");
        assert_eq!(restored.id, backup.id);
        assert!(restored.files.iter().all(|f| f.status == "restored"));
        for (p, text) in &originals {
            assert_eq!(read(p), *text, "{} restored", p.display());
        }
        assert_eq!(fs::read(w.home.messages_db()).unwrap(), db_before);
        assert_eq!(read(&w.home.root().join("messages.db-wal")), "wal bytes");
        let err = restore(&w.home, None).unwrap_err();
        assert_eq!(err.code, Code::Usage, "nothing left to restore");

        let mut third = scan(&w.home, &scope);
        assert_eq!(
            third.count(Status::Pending),
            7,
            "restored leftovers are found again"
        );
        let second = apply(&w.home, &mut third).unwrap().unwrap();
        assert_ne!(second.id, backup.id);
        assert_eq!(read(&api_file), KEEPER_ONLY);
    }

    #[test]
    fn symlinks_are_followed_only_inside_the_roots() {
        let w = World::new();
        let state = State::default();
        let inside_target = w.wd.join("shared/servers.json");
        put(&inside_target, GO_FILE);
        let outside_target = w.root.join("dotfiles/mcp.json");
        put(&outside_target, GO_FILE);
        fsx::create_dir_all(&w.wd.join("a")).unwrap();
        fsx::create_dir_all(&w.wd.join("b")).unwrap();
        fsx::create_dir_all(&w.wd.join("c")).unwrap();
        std::os::unix::fs::symlink(&inside_target, w.wd.join("a/.mcp.json")).unwrap();
        std::os::unix::fs::symlink(&outside_target, w.wd.join("b/.mcp.json")).unwrap();
        std::os::unix::fs::symlink(w.root.join("nowhere"), w.wd.join("c/.mcp.json")).unwrap();
        let unrelated = w.root.join("dotfiles/other.json");
        put(&unrelated, KEEPER_ONLY);
        fsx::create_dir_all(&w.wd.join("d")).unwrap();
        std::os::unix::fs::symlink(&unrelated, w.wd.join("d/.mcp.json")).unwrap();

        let mut plan = scan(&w.home, &w.scope(&state));
        let inside = find(&plan, &w.wd.join("a/.mcp.json"));
        assert_eq!(inside.target.as_deref(), Some(inside_target.as_path()));
        assert_eq!(
            inside.action,
            Some(Action::RemoveEntry),
            "a link's target is edited, never removed"
        );
        let outside = find(&plan, &w.wd.join("b/.mcp.json"));
        assert_eq!(outside.reason, Some("symlink_outside_roots"));
        assert_eq!(outside.action, None);
        for nothing_of_grove in ["c/.mcp.json", "d/.mcp.json"] {
            assert!(
                plan.items
                    .iter()
                    .all(|i| i.path != w.wd.join(nothing_of_grove)),
                "{nothing_of_grove}: a dangling link, or a file without grove's entry, is not reported"
            );
        }

        apply(&w.home, &mut plan).unwrap();
        let link = w.wd.join("a/.mcp.json");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(read(&inside_target), "{\n  \"mcpServers\": {}\n}");
        assert_eq!(read(&outside_target), GO_FILE);
    }

    #[test]
    fn read_only_files_keep_their_mode() {
        let w = World::new();
        let state = State::default();
        let p = w.wd.join("ws/.mcp.json");
        put(&p, WITH_KEEPER);
        fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
        let mut plan = scan(&w.home, &w.scope(&state));
        let backup = apply(&w.home, &mut plan).unwrap().unwrap();
        assert_eq!(find(&plan, &p).status, Status::Done);
        assert_eq!(read(&p), KEEPER_ONLY);
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o444
        );
        restore(&w.home, Some(&backup.id)).unwrap();
        assert_eq!(read(&p), WITH_KEEPER);
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o444
        );
    }

    #[test]
    fn git_tracked_files_need_include_tracked_and_are_never_deleted() {
        let w = World::new();
        let state = State::default();
        let repo = w.wd.join("ws/api");
        fsx::create_dir_all(&repo).unwrap();
        Cmd::git(&repo).args(["init", "-q"]).check().unwrap();
        let tracked = repo.join(".mcp.json");
        put(&tracked, GO_FILE);
        Cmd::git(&repo).args(["add", ".mcp.json"]).check().unwrap();
        let untracked = w.wd.join("ws/web/.mcp.json");
        put(&untracked, GO_FILE);
        Cmd::git(&w.wd.join("ws/web"))
            .args(["init", "-q"])
            .check()
            .unwrap();

        let plan = scan(&w.home, &w.scope(&state));
        assert_eq!(find(&plan, &tracked).reason, Some("tracked"));
        assert_eq!(find(&plan, &untracked).action, Some(Action::DeleteFile));

        let mut scope = w.scope(&state);
        scope.include_tracked = true;
        let mut plan = scan(&w.home, &scope);
        assert_eq!(find(&plan, &tracked).action, Some(Action::RemoveEntry));
        apply(&w.home, &mut plan).unwrap();
        assert_eq!(read(&tracked), "{\n  \"mcpServers\": {}\n}");
        assert!(!untracked.exists());
    }

    #[test]
    fn a_file_changed_after_the_scan_is_left_alone() {
        let w = World::new();
        let state = State::default();
        let p = w.wd.join("ws/.mcp.json");
        put(&p, WITH_KEEPER);
        let mut plan = scan(&w.home, &w.scope(&state));
        let changed = WITH_KEEPER.replace("keeper-mcp", "keeper-mcp-2");
        put(&p, &changed);
        let backup = apply(&w.home, &mut plan).unwrap();
        assert!(backup.is_none(), "nothing changed, so no backup");
        let item = find(&plan, &p);
        assert_eq!(
            (item.status, item.reason),
            (Status::Skipped, Some("changed_since_scan"))
        );
        assert_eq!(read(&p), changed);
        assert!(backups(&w.home).is_empty());
    }

    #[test]
    fn a_database_without_the_sqlite_header_stays() {
        let w = World::new();
        let state = State::default();
        put(&w.home.messages_db(), b"not a database at all");
        put(&w.home.root().join("messages.db-journal"), b"j");
        let mut plan = scan(&w.home, &w.scope(&state));
        assert_eq!(
            find(&plan, &w.home.messages_db()).reason,
            Some("not_sqlite")
        );
        assert_eq!(
            find(&plan, &w.home.root().join("messages.db-journal")).reason,
            Some("not_sqlite")
        );
        assert!(apply(&w.home, &mut plan).unwrap().is_none());
        assert!(w.home.messages_db().exists());
    }

    #[test]
    fn restore_refuses_when_a_file_changed_since() {
        let w = World::new();
        let state = State::default();
        let a = w.wd.join("a/.mcp.json");
        let b = w.wd.join("b/.mcp.json");
        put(&a, WITH_KEEPER);
        put(&b, GO_FILE);
        let mut plan = scan(&w.home, &w.scope(&state));
        apply(&w.home, &mut plan).unwrap().unwrap();
        put(&a, "{\"mcpServers\": {\"mine\": {}}}");
        let r = restore(&w.home, None).unwrap();
        assert_eq!(r.failure.as_ref().map(|e| e.code), Some(Code::StateChanged));
        let conflict = r.files.iter().find(|f| f.path == a).unwrap();
        assert_eq!(conflict.status, "conflict");
        assert!(!b.exists(), "nothing is restored when one file conflicts");
        let err = restore(&w.home, Some("no-such-id")).unwrap_err();
        assert_eq!(err.code, Code::Usage);
    }

    #[test]
    fn doctor_reports_and_fixes_tracked_workspaces_and_the_database() {
        let w = World::new();
        let ws_root = w.wd.join("feat-x");
        let state = State {
            workspaces: vec![workspace("feat-x", &ws_root, &["api"])],
        };
        put(&ws_root.join(".mcp.json"), GO_FILE);
        put(&ws_root.join("api/.mcp.json"), WITH_KEEPER);
        put(&w.wd.join("orphan/.mcp.json"), GO_FILE);
        put(&w.root.join("other/.mcp.json"), FOREIGN);
        database(&w.home);

        let findings = doctor_findings(&w.home, &state);
        let paths: Vec<&Path> = findings.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(
            paths,
            [
                ws_root.join(".mcp.json").as_path(),
                ws_root.join("api/.mcp.json").as_path(),
                w.home.messages_db().as_path(),
                w.home.root().join("messages.db-wal").as_path(),
                w.home.root().join("messages.db-shm").as_path(),
            ]
        );
        assert!(findings.iter().all(|f| f.fixable));
        assert_eq!(findings[1].repo.as_deref(), Some("api"));
        assert_eq!(
            findings[0].issue,
            "stale grove entry in .mcp.json (built-in MCP server was removed)"
        );

        let fixed = fix(&w.home, &state).unwrap();
        assert!(fixed.items.iter().all(|i| i.status == Status::Done));
        assert!(fixed.backup.is_some());
        assert!(doctor_findings(&w.home, &state).is_empty());
        assert_eq!(
            read(&w.wd.join("orphan/.mcp.json")),
            GO_FILE,
            "doctor looks at tracked workspaces only"
        );
        assert_eq!(read(&ws_root.join("api/.mcp.json")), KEEPER_ONLY);
    }
}
