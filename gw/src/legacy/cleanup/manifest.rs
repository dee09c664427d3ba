//! The record of an applied run: `<GW_HOME>/migrate-backups/<id>/manifest.jsonl`, a
//! write-ahead log of JSON lines.
//!
//! Before a file is touched, an `intend` record naming it (path, action, digest before and
//! after, where its copy is) is flushed to disk; after, `done` is appended. So a run killed
//! at any moment leaves a manifest naming every file it may have changed, and `restore` and
//! the next `--apply` find out from each file's digest whether an intended change happened.
//! A line cut short by a kill is ignored (it was never flushed, so nothing acted on it).
//!
//! Paths read back from a manifest are checked before anything acts on them: an absolute
//! file path without `..`, a database file directly in the grove directory, a `.mcp.json`
//! by name, and a copy inside the backup directory.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::database::DATABASE_FILES;
use super::model::{Action, Kind};
use super::paths;
use crate::env::Env;
use crate::error::Error;
use crate::fsx;
use crate::home::GroveHome;
use crate::legacy::mcp;
use crate::lock::{self, Lock};

pub const MANIFEST: &str = "manifest.jsonl";
const VERSION: u32 = 2;

/// One file an applied run set out to change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its number in the run.
    pub n: usize,
    pub kind: Kind,
    pub action: Action,
    /// The path as found.
    #[serde(with = "paths::exact")]
    pub path: PathBuf,
    /// The file changed (a symlink's target, else `path`).
    #[serde(with = "paths::exact")]
    pub file: PathBuf,
    /// The saved copy, relative to the backup directory.
    #[serde(with = "paths::exact")]
    pub backup: PathBuf,
    pub sha256_before: String,
    /// The file's digest after the edit; `None` when it is moved away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gid: Option<u32>,
    /// Entries that move as one unit (the database files) share this number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<usize>,
}

/// One line of the manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Record {
    Begin {
        version: u32,
        id: String,
        created_at: String,
    },
    /// About to change a file (flushed before it is touched).
    Intend(Entry),
    /// The change was made.
    Done { n: usize },
    /// The change was not made (the file is as it was).
    NotDone { n: usize },
    /// The change was made and undone again (a database unit that could not move whole).
    RolledBack { n: usize },
    /// The run ended: on its own, after a signal, or (`interrupted`) as found afterwards.
    Finished {
        at: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        cancelled: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        interrupted: bool,
    },
    /// A restore began.
    Restoring { at: String },
    /// A restore ended; `complete` when every file is back (or was skipped, reported).
    RestoreEnded { at: String, complete: bool },
}

/// Where an entry stands according to the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Intended, with no outcome recorded: the file's digest tells.
    Intended,
    Done,
    NotDone,
    RolledBack,
}

#[derive(Debug, Clone)]
pub struct Logged {
    pub entry: Entry,
    pub state: State,
}

/// A manifest read back.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub id: String,
    pub created_at: String,
    pub entries: Vec<Logged>,
    /// The run ended (or was found interrupted and its record completed).
    pub finished: bool,
    /// A restore began and did not end.
    pub restoring: bool,
    /// When the last complete restore ended.
    pub restored_at: Option<String>,
}

/// Where a run and its restores stand, as the manifest's last record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// The run has not finished its record (it was killed, or is running).
    Unfinished,
    /// The run finished; nothing restored it completely since.
    Finished,
    /// A restore began and did not end (it was killed).
    Restoring,
    /// The last restore put everything back.
    Restored,
}

/// A backup directory, and where it stands (or why its manifest cannot be read).
#[derive(Debug)]
pub struct Listed {
    pub id: String,
    pub dir: PathBuf,
    pub standing: Result<Standing, String>,
}

impl Listed {
    /// The whole manifest.
    pub fn manifest(&self, home: &GroveHome) -> Result<Manifest, String> {
        read(&self.dir, home)
    }
}

/// The backups under the grove directory, oldest first. Only the end of each manifest is
/// read, so listing many large backups stays cheap.
pub fn list(home: &GroveHome) -> Vec<Listed> {
    let base = home.migrate_backups();
    let Ok(entries) = fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut out: Vec<Listed> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let id = e.file_name().to_str()?.to_string();
            let dir = e.path();
            let standing = standing(&dir);
            Some(Listed { id, dir, standing })
        })
        .collect();
    out.sort_by_key(|l| order_key(&l.id));
    out
}

/// Where a backup stands, from the last whole line of its manifest.
fn standing(dir: &Path) -> Result<Standing, String> {
    use std::io::{Read, Seek, SeekFrom};
    let path = dir.join(MANIFEST);
    let mut f = File::open(&path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let len = f
        .metadata()
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?
        .len();
    // A record is well under this; a longer last line is read whole.
    let mut window = 16 * 1024u64;
    loop {
        let from = len.saturating_sub(window);
        let mut tail = Vec::new();
        f.seek(SeekFrom::Start(from))
            .and_then(|_| f.read_to_end(&mut tail))
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        let whole = tail.iter().rposition(|b| *b == b'\n').map_or(0, |i| i);
        let start = tail[..whole]
            .iter()
            .rposition(|b| *b == b'\n')
            .map(|i| i + 1);
        let line = match start {
            Some(st) => &tail[st..whole],
            None if from == 0 => &tail[..whole],
            None => {
                window *= 4;
                continue;
            }
        };
        if line.is_empty() {
            return Err(format!("`{}` is empty", path.display()));
        }
        let record: Record = serde_json::from_slice(line)
            .map_err(|e| format!("`{}`, last line: {e}", path.display()))?;
        return Ok(match record {
            Record::Finished { .. }
            | Record::RestoreEnded {
                complete: false, ..
            } => Standing::Finished,
            Record::RestoreEnded { complete: true, .. } => Standing::Restored,
            Record::Restoring { .. } => Standing::Restoring,
            _ => Standing::Unfinished,
        });
    }
}

/// Removes a backup directory that holds nothing but a manifest without one whole line
/// (its run was killed while beginning it, before it could change anything).
pub fn remove_if_blank(dir: &Path) -> bool {
    let only_manifest = fs::read_dir(dir).is_ok_and(|rd| {
        let names: Vec<_> = rd.filter_map(Result::ok).map(|e| e.file_name()).collect();
        names.len() == 1 && names[0] == MANIFEST
    });
    let blank = fs::read(dir.join(MANIFEST)).is_ok_and(|b| !b.contains(&b'\n'));
    only_manifest && blank && fsx::remove_dir_all(dir).is_ok()
}

/// Ids are `<UTC time>` or `<UTC time>-<n>` for later runs in the same second.
fn order_key(id: &str) -> (String, u32) {
    match id.rsplit_once('-') {
        Some((stamp, n)) if n.bytes().all(|b| b.is_ascii_digit()) => {
            (stamp.to_string(), n.parse().unwrap_or(u32::MAX))
        }
        _ => (id.to_string(), 1),
    }
}

/// Makes a new backup directory: `(id, path)`.
pub fn new_backup_dir(home: &GroveHome) -> Result<(String, PathBuf), Error> {
    let base = home.migrate_backups();
    fsx::create_dir_all(&base)?;
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    for n in 1..10_000 {
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

/// The one lock of `--apply`, `restore` and `gw doctor --fix`: a second run waits for the
/// first (up to `GW_LOCK_TIMEOUT_MS`, 30 s by default), then says `TRANSIENT`.
pub fn lock(home: &GroveHome, env: &Env) -> Result<Lock, Error> {
    let timeout = env
        .lock_timeout_ms
        .map(std::time::Duration::from_millis)
        .unwrap_or(lock::DEFAULT_TIMEOUT);
    Ok(lock::acquire(&home.migrate_lock(), timeout)?)
}

/// Reads a manifest; `Err` says why it cannot be used.
pub fn read(dir: &Path, home: &GroveHome) -> Result<Manifest, String> {
    let path = dir.join(MANIFEST);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!("`{}` is missing", path.display()));
        }
        Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
    };
    // What follows the last line break was never flushed.
    let whole = bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(&bytes[..0], |i| &bytes[..=i]);
    let mut m: Option<Manifest> = None;
    for (i, line) in whole.split(|b| *b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = |why: String| format!("`{}` line {}: {why}", path.display(), i + 1);
        let record: Record = serde_json::from_slice(line).map_err(|e| bad(e.to_string()))?;
        let Some(m) = m.as_mut() else {
            let Record::Begin {
                version,
                id,
                created_at,
            } = record
            else {
                return Err(bad("the manifest does not begin with `begin`".into()));
            };
            if version > VERSION {
                return Err(bad(format!(
                    "written by a newer gw-migrate (manifest version {version})"
                )));
            }
            m = Some(Manifest {
                id,
                created_at,
                entries: Vec::new(),
                finished: false,
                restoring: false,
                restored_at: None,
            });
            continue;
        };
        let mut set = |n: usize, state: State| -> Result<(), String> {
            let e = m
                .entries
                .iter_mut()
                .find(|l| l.entry.n == n)
                .ok_or_else(|| bad(format!("no entry {n}")))?;
            e.state = state;
            Ok(())
        };
        match record {
            Record::Begin { .. } => return Err(bad("a second `begin`".into())),
            Record::Intend(entry) => {
                check_entry(&entry, home).map_err(bad)?;
                m.entries.push(Logged {
                    entry,
                    state: State::Intended,
                });
            }
            Record::Done { n } => set(n, State::Done)?,
            Record::NotDone { n } => set(n, State::NotDone)?,
            Record::RolledBack { n } => set(n, State::RolledBack)?,
            Record::Finished { .. } => m.finished = true,
            Record::Restoring { .. } => m.restoring = true,
            Record::RestoreEnded { at, complete } => {
                m.restoring = false;
                if complete {
                    m.restored_at = Some(at);
                }
            }
        }
    }
    m.ok_or_else(|| format!("`{}` is empty", path.display()))
}

/// Whether grove may act on the paths an entry names.
fn check_entry(e: &Entry, home: &GroveHome) -> Result<(), String> {
    let plain = |p: &Path| p.components().all(|c| matches!(c, Component::Normal(_)));
    let absolute = |p: &Path| {
        p.is_absolute()
            && p.components().all(|c| {
                matches!(
                    c,
                    Component::RootDir | Component::Prefix(_) | Component::Normal(_)
                )
            })
    };
    let first = e.backup.components().next();
    let backup_ok = plain(&e.backup)
        && e.backup.components().count() == 2
        && matches!(first, Some(Component::Normal(d)) if d == "files" || d == "database");
    if !backup_ok {
        return Err(format!(
            "entry {}: the copy `{}` is not inside the backup",
            e.n,
            e.backup.display()
        ));
    }
    if !absolute(&e.path) || !absolute(&e.file) {
        return Err(format!(
            "entry {}: `{}` is not an absolute path",
            e.n,
            e.file.display()
        ));
    }
    let ok = match (e.kind, e.action) {
        (Kind::Database, Action::MoveDatabase) => {
            e.path == e.file
                && e.file.parent().is_some_and(|d| {
                    d == home.root() || fsx::canonical(d) == fsx::canonical(home.root())
                })
                && e.file
                    .file_name()
                    .is_some_and(|n| DATABASE_FILES.iter().any(|d| n == *d))
        }
        (Kind::McpJson, Action::RemoveEntry) => {
            e.sha256_after.is_some() && e.path.file_name() == Some(mcp::FILE_NAME.as_ref())
        }
        (Kind::McpJson, Action::DeleteFile) => {
            e.path == e.file && e.path.file_name() == Some(mcp::FILE_NAME.as_ref())
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "entry {}: `{}` is not a file gw-migrate changes",
            e.n,
            e.file.display()
        ))
    }
}

/// Appends to a manifest.
pub struct Log {
    file: File,
    path: PathBuf,
}

impl Log {
    /// Starts the manifest of a new run in `dir`, durably.
    pub fn create(dir: &Path, id: &str) -> Result<Log, fsx::Error> {
        let path = dir.join(MANIFEST);
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| fsx::Error::new("create", &path, e))?;
        let mut log = Log { file, path };
        log.write(
            &[Record::Begin {
                version: VERSION,
                id: id.to_string(),
                created_at: crate::time::now_utc(),
            }],
            true,
        )?;
        fsx::sync_dir(dir)?;
        Ok(log)
    }

    /// Opens an existing manifest to append to it, first cutting off a last line that a
    /// kill left unfinished.
    pub fn reopen(dir: &Path) -> Result<Log, fsx::Error> {
        let path = dir.join(MANIFEST);
        let p = path.as_path();
        let err = |op| move |e| fsx::Error::new(op, p, e);
        let bytes = fs::read(&path).map_err(err("read"))?;
        let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(err("open"))?;
        if whole < bytes.len() {
            file.set_len(whole as u64).map_err(err("truncate"))?;
        }
        Ok(Log { file, path })
    }

    /// Appends `records` in one write; `durable` flushes them to disk before returning.
    pub fn write(&mut self, records: &[Record], durable: bool) -> Result<(), fsx::Error> {
        if records.is_empty() && !durable {
            return Ok(());
        }
        let mut text = Vec::new();
        for r in records {
            serde_json::to_writer(&mut text, r).expect("a record serialises");
            text.push(b'\n');
        }
        self.file
            .write_all(&text)
            .map_err(|e| fsx::Error::new("write", &self.path, e))?;
        if durable {
            self.file
                .sync_data()
                .map_err(|e| fsx::Error::new("sync", &self.path, e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: usize, home: &GroveHome) -> Entry {
        let file = home.root().join("ws/.mcp.json");
        Entry {
            n,
            kind: Kind::McpJson,
            action: Action::DeleteFile,
            path: file.clone(),
            file,
            backup: PathBuf::from(format!("files/{n:05}.mcp.json")),
            sha256_before: "00".into(),
            sha256_after: None,
            mode: Some(0o644),
            uid: None,
            gid: None,
            unit: None,
        }
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_cut_before_appending() {
        let tmp = tempfile::tempdir().unwrap();
        let home = GroveHome::new(tmp.path().canonicalize().unwrap());
        let (id, dir) = new_backup_dir(&home).unwrap();
        let mut log = Log::create(&dir, &id).unwrap();
        log.write(&[Record::Intend(entry(1, &home))], true).unwrap();
        drop(log);
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.join(MANIFEST))
            .unwrap();
        f.write_all(b"{\"done\": {\"n\"").unwrap();
        let m = read(&dir, &home).unwrap();
        assert_eq!(m.entries.len(), 1);
        assert_eq!(m.entries[0].state, State::Intended);
        let mut log = Log::reopen(&dir).unwrap();
        log.write(&[Record::Done { n: 1 }], true).unwrap();
        let m = read(&dir, &home).unwrap();
        assert_eq!(m.entries[0].state, State::Done);
        assert!(!m.finished);
    }

    #[test]
    fn entries_naming_paths_grove_does_not_act_on_make_the_manifest_unusable() {
        let tmp = tempfile::tempdir().unwrap();
        let home = GroveHome::new(tmp.path().canonicalize().unwrap());
        type Spoil = Box<dyn Fn(&mut Entry)>;
        let bad: Vec<Spoil> = vec![
            Box::new(|e| e.backup = PathBuf::from("files/../../../etc/passwd")),
            Box::new(|e| e.backup = PathBuf::from("/etc/passwd")),
            Box::new(|e| e.backup = PathBuf::from("elsewhere/1.mcp.json")),
            Box::new(|e| {
                e.file = PathBuf::from("/etc/passwd");
                e.path = e.file.clone();
            }),
            Box::new(|e| e.file = e.file.join("../../x/.mcp.json")),
            Box::new(|e| {
                e.kind = Kind::Database;
                e.action = Action::MoveDatabase;
            }),
            Box::new(|e| e.action = Action::RemoveEntry),
        ];
        for (i, spoil) in bad.iter().enumerate() {
            let (id, dir) = new_backup_dir(&home).unwrap();
            let mut e = entry(1, &home);
            spoil(&mut e);
            let mut log = Log::create(&dir, &id).unwrap();
            log.write(&[Record::Intend(e)], true).unwrap();
            let err = read(&dir, &home).unwrap_err();
            assert!(err.contains("entry 1"), "case {i}: {err}");
        }
        let listed = list(&home);
        assert_eq!(listed.len(), bad.len());
        assert!(listed.iter().all(|l| l.manifest(&home).is_err()));
    }

    #[test]
    fn ids_of_one_second_sort_by_their_number() {
        let mut ids = vec![
            "20260101T000000Z-10",
            "20260101T000000Z-2",
            "20260101T000000Z",
        ];
        ids.sort_by_key(|i| order_key(i));
        assert_eq!(
            ids,
            [
                "20260101T000000Z",
                "20260101T000000Z-2",
                "20260101T000000Z-10"
            ]
        );
    }
}
