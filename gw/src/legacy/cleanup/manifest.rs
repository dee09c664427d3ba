//! The record of an applied run: `<GW_HOME>/migrate-backups/<id>/manifest.jsonl`, a
//! write-ahead log of JSON lines.
//!
//! Before a file is touched, an `intend` record naming it (path, action, digest before and
//! after, where its copy is) is flushed to disk; after, `done` is appended. So a run killed
//! at any moment leaves a manifest naming every file it may have changed, and `restore` and
//! the next `--apply` find out from each file's digest whether an intended change happened.
//! A line cut short by a kill is ignored (it was never flushed, so nothing acted on it).
//!
//! Every line seals its record: `{"record": …, "chain": "<hex>"}`, where `chain` is the
//! SHA-256 of the previous line's `chain`, a line break and the record's text. An edited,
//! removed, reordered or repeated line breaks the chain, so an edit is detected, not
//! trusted. A manifest is used only when the user running gw-migrate owns it and its
//! directory and nobody else can write them (a manifest another user can write could name
//! any file).
//!
//! Nothing a manifest says is taken on faith; each record is checked before anything acts on
//! any of them ([`read`]): the copy is the one path the record's number and kind derive
//! inside the backup; a file is absolute, without `..`, and either a database file directly
//! in the grove directory or a `.mcp.json` inside the directories the run scanned (named in
//! `begin`), or, for an edit made through a symlink, the file the link led to, inside them
//! too; a mode has no bits beyond `0o777`; the records come in the order a run writes them.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::database::DATABASE_FILES;
use super::model::{Action, Kind};
use super::paths;
use crate::fsx;
use crate::home::GroveHome;
use crate::legacy::mcp;

pub const MANIFEST: &str = "manifest.jsonl";
const VERSION: u32 = 3;

mod backups;
pub use backups::{Listed, Standing, list, lock, new_backup_dir, remove_if_blank};

/// One file an applied run set out to change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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

/// The record of one line of the manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Record {
    Begin {
        version: u32,
        id: String,
        created_at: String,
        /// The directories the run scanned (as given and with symlinks resolved): every
        /// `.mcp.json` it may change lies inside one of them.
        #[serde(with = "paths::exact::list")]
        roots: Vec<PathBuf>,
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
    /// The directories the run scanned (see [`Record::Begin`]).
    pub roots: Vec<PathBuf>,
    pub entries: Vec<Logged>,
    /// The run ended (or was found interrupted and its record completed).
    pub finished: bool,
    /// A restore began and did not end.
    pub restoring: bool,
    /// When the last complete restore ended.
    pub restored_at: Option<String>,
    /// The chain digest of the last line, which the next line continues.
    chain: String,
}

/// The chain digest of a line: over the previous line's and the record's text.
fn chain(prev: &str, record: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(prev.as_bytes());
    h.update(b"\n");
    h.update(record.as_bytes());
    fsx::to_hex(&h.finalize())
}

/// One line as written: a record and the chain digest that seals it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    #[serde(borrow)]
    record: &'a RawValue,
    chain: String,
}

/// A line's chain digest, the text of its record, and the record. A line of an earlier
/// manifest (a bare record) is named as such.
fn parse_line(line: &[u8]) -> Result<(String, &str, Record), String> {
    match serde_json::from_slice::<Line<'_>>(line) {
        Ok(l) => {
            let text = l.record.get();
            let record: Record = serde_json::from_str(text).map_err(|e| e.to_string())?;
            Ok((l.chain, text, record))
        }
        Err(e) => Err(if serde_json::from_slice::<Record>(line).is_ok() {
            "written by an earlier gw-migrate, whose records carry no digest; restore its files by hand from the backup's `files/` and `database/`".to_string()
        } else {
            e.to_string()
        }),
    }
}

/// Whether the user running gw-migrate may trust `path`: it owns it and nobody else can
/// write it.
#[cfg(unix)]
fn owned(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta =
        fs::symlink_metadata(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let me = rustix::process::geteuid().as_raw();
    if meta.file_type().is_symlink() {
        return Err(format!("`{}` is a symbolic link", path.display()));
    }
    if meta.uid() != me {
        return Err(format!(
            "`{}` belongs to uid {}, not to the user running gw-migrate (uid {me}); a manifest another user can write could name any file, so only its owner restores it",
            path.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "`{}` can be written by other users (mode {:o}); a manifest they can write could name any file",
            path.display(),
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn owned(_: &Path) -> Result<(), String> {
    Ok(())
}

/// Reads a manifest; `Err` says why it cannot be used. Every line's digest and every record
/// is checked ([`check_entry`], and the order a run writes records in) before the manifest
/// is returned, so nothing acts on a part of a manifest that is wrong elsewhere.
pub fn read(dir: &Path, home: &GroveHome) -> Result<Manifest, String> {
    let path = dir.join(MANIFEST);
    owned(dir)?;
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!("`{}` is missing", path.display()));
        }
        Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
    };
    owned(&path)?;
    // What follows the last line break was never flushed.
    let whole = bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(&bytes[..0], |i| &bytes[..=i]);
    let mut m: Option<Manifest> = None;
    let mut prev = String::new();
    let lines = whole.strip_suffix(b"\n").unwrap_or(whole);
    for (i, line) in lines.split(|b| *b == b'\n').enumerate() {
        if whole.is_empty() {
            break;
        }
        let bad = |why: String| format!("`{}` line {}: {why}", path.display(), i + 1);
        let (sealed, text, record) = parse_line(line).map_err(bad)?;
        if sealed != chain(&prev, text) {
            return Err(bad(
                "the line does not match its digest: the manifest was changed after gw-migrate wrote it".into(),
            ));
        }
        prev = sealed;
        let Some(m) = m.as_mut() else {
            let Record::Begin {
                version,
                id,
                created_at,
                roots,
            } = record
            else {
                return Err(bad("the manifest does not begin with `begin`".into()));
            };
            if version > VERSION {
                return Err(bad(format!(
                    "written by a newer gw-migrate (manifest version {version})"
                )));
            }
            if version < VERSION {
                return Err(bad(format!(
                    "manifest version {version} is not one this gw-migrate reads"
                )));
            }
            if dir.file_name() != Some(id.as_ref()) {
                return Err(bad(format!(
                    "it is the manifest of backup `{id}`, in the directory of another"
                )));
            }
            if let Some(r) = roots.iter().find(|r| !absolute(r)) {
                return Err(bad(format!(
                    "the scanned directory `{}` is not an absolute path",
                    r.display()
                )));
            }
            m.replace(Manifest {
                id,
                created_at,
                roots,
                entries: Vec::new(),
                finished: false,
                restoring: false,
                restored_at: None,
                chain: String::new(),
            });
            continue;
        };
        m.apply(record, home).map_err(bad)?;
    }
    let mut m = m.ok_or_else(|| format!("`{}` is empty", path.display()))?;
    m.chain = prev;
    Ok(m)
}

impl Manifest {
    /// Takes in the record that follows, if a run could have written it there.
    fn apply(&mut self, record: Record, home: &GroveHome) -> Result<(), String> {
        let outcome = |m: &mut Manifest, n: usize, state: State| -> Result<(), String> {
            if m.finished {
                return Err(format!("an outcome of entry {n} after the run finished"));
            }
            let e = m
                .entries
                .iter_mut()
                .find(|l| l.entry.n == n)
                .ok_or_else(|| format!("an outcome of entry {n}, which was never intended"))?;
            // Each entry has one outcome, but a change made may be undone once.
            let next = matches!(
                (e.state, state),
                (State::Intended, _) | (State::Done, State::RolledBack)
            );
            if !next {
                return Err(format!(
                    "entry {n} is {:?} and cannot become {state:?}",
                    e.state
                ));
            }
            e.state = state;
            Ok(())
        };
        match record {
            Record::Begin { .. } => return Err("a second `begin`".into()),
            Record::Intend(entry) => {
                if self.finished {
                    return Err(format!("entry {} after the run finished", entry.n));
                }
                if entry.n != self.entries.len() + 1 {
                    return Err(format!(
                        "entry {} where entry {} comes",
                        entry.n,
                        self.entries.len() + 1
                    ));
                }
                check_entry(&entry, home, &self.roots)?;
                let unit_start = self
                    .entries
                    .iter()
                    .find(|l| l.entry.kind == Kind::Database)
                    .map_or(entry.n, |l| l.entry.n);
                if entry.kind == Kind::Database && entry.unit != Some(unit_start) {
                    return Err(format!(
                        "entry {}: a database file outside the database's unit",
                        entry.n
                    ));
                }
                if let Some(other) = self.entries.iter().find(|l| l.entry.file == entry.file) {
                    return Err(format!(
                        "entries {} and {} name the same file",
                        other.entry.n, entry.n
                    ));
                }
                self.entries.push(Logged {
                    entry,
                    state: State::Intended,
                });
            }
            Record::Done { n } => outcome(self, n, State::Done)?,
            Record::NotDone { n } => outcome(self, n, State::NotDone)?,
            Record::RolledBack { n } => outcome(self, n, State::RolledBack)?,
            Record::Finished { .. } if self.finished => return Err("a second `finished`".into()),
            Record::Finished { .. } => self.finished = true,
            Record::Restoring { .. } if !self.finished || self.restoring => {
                return Err("a restore began before the run finished, or inside another".into());
            }
            Record::Restoring { .. } => self.restoring = true,
            Record::RestoreEnded { .. } if !self.restoring => {
                return Err("a restore ended that never began".into());
            }
            Record::RestoreEnded { at, complete } => {
                self.restoring = false;
                if complete {
                    self.restored_at = Some(at);
                }
            }
        }
        Ok(())
    }
}

/// An absolute path of plain names (no `.` or `..`).
fn absolute(p: &Path) -> bool {
    p.is_absolute()
        && p.components().all(|c| {
            matches!(
                c,
                Component::RootDir | Component::Prefix(_) | Component::Normal(_)
            )
        })
}

/// Whether `p` lies inside one of `roots` (compared by name: both are absolute paths of
/// plain names).
pub(super) fn inside(p: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| p != r && p.starts_with(r))
}

/// Where an entry's copy is kept in the backup: derived from its number and kind, never
/// read from the manifest.
pub(super) fn copy_of(n: usize, kind: Kind, path: &Path) -> PathBuf {
    match kind {
        Kind::McpJson => PathBuf::from("files").join(format!("{n:05}.mcp.json")),
        Kind::Database => PathBuf::from("database").join(path.file_name().unwrap_or_default()),
    }
}

/// Whether grove may act on the paths an entry names, and restore the mode it records.
fn check_entry(e: &Entry, home: &GroveHome, roots: &[PathBuf]) -> Result<(), String> {
    let n = e.n;
    if e.backup != copy_of(n, e.kind, &e.path) {
        return Err(format!(
            "entry {n}: the copy `{}` is not where gw-migrate keeps it (`{}`)",
            e.backup.display(),
            copy_of(n, e.kind, &e.path).display()
        ));
    }
    if !absolute(&e.path) || !absolute(&e.file) {
        return Err(format!(
            "entry {n}: `{}` is not an absolute path of plain names",
            if absolute(&e.path) { &e.file } else { &e.path }.display()
        ));
    }
    let digest =
        |d: &str| d.len() == 64 && d.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !digest(&e.sha256_before) || e.sha256_after.as_deref().is_some_and(|d| !digest(d)) {
        return Err(format!("entry {n}: a digest is not a SHA-256"));
    }
    if cfg!(unix) {
        match (e.mode, e.uid, e.gid) {
            (Some(m), Some(_), Some(_)) if m & !0o777 == 0 => {}
            (Some(m), _, _) => {
                return Err(format!(
                    "entry {n}: the mode {m:o} is not one gw-migrate records (it never restores setuid, setgid or sticky bits)"
                ));
            }
            _ => return Err(format!("entry {n}: the mode or owner is missing")),
        }
    }
    let is_mcp = |p: &Path| p.file_name() == Some(mcp::FILE_NAME.as_ref());
    let ok = match (e.kind, e.action) {
        (Kind::Database, Action::MoveDatabase) => {
            e.path == e.file
                && e.sha256_after.is_none()
                && e.unit.is_some()
                && e.file.parent().is_some_and(|d| {
                    d == home.root() || fsx::canonical(d) == fsx::canonical(home.root())
                })
                && e.file
                    .file_name()
                    .is_some_and(|n| DATABASE_FILES.iter().any(|d| n == *d))
        }
        (Kind::McpJson, Action::RemoveEntry) => {
            // Edited in place, or through a symlink: then `file` is where it led.
            e.sha256_after.is_some()
                && e.unit.is_none()
                && is_mcp(&e.path)
                && inside(&e.path, roots)
                && inside(&e.file, roots)
        }
        (Kind::McpJson, Action::DeleteFile) => {
            e.path == e.file
                && e.sha256_after.is_none()
                && e.unit.is_none()
                && is_mcp(&e.path)
                && inside(&e.path, roots)
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "entry {n}: `{}` is not a file gw-migrate changes (a `.mcp.json` inside the directories it scanned, or the database in the grove directory)",
            e.file.display()
        ))
    }
}

/// Appends to a manifest, sealing each line.
pub struct Log {
    file: File,
    path: PathBuf,
    /// The chain digest of the last line written.
    chain: String,
    /// A write failed and could not be taken back: the manifest is not appended to again.
    broken: bool,
}

impl Log {
    /// Starts the manifest of a new run in `dir`, durably; `roots` are the directories the
    /// run scans.
    pub fn create(dir: &Path, id: &str, roots: &[PathBuf]) -> Result<Log, fsx::Error> {
        let path = dir.join(MANIFEST);
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| fsx::Error::new("create", &path, e))?;
        let mut log = Log {
            file,
            path,
            chain: String::new(),
            broken: false,
        };
        log.write(
            &[Record::Begin {
                version: VERSION,
                id: id.to_string(),
                created_at: crate::time::now_utc(),
                roots: roots.to_vec(),
            }],
            true,
        )?;
        fsx::sync_dir(dir)?;
        Ok(log)
    }

    /// Opens the manifest `m` was read from (in `dir`) to append to it, first cutting off a
    /// last line that a kill left unfinished.
    pub fn reopen(dir: &Path, m: &Manifest) -> Result<Log, fsx::Error> {
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
        Ok(Log {
            file,
            path,
            chain: m.chain.clone(),
            broken: false,
        })
    }

    /// Appends `records` in one write; `durable` flushes them to disk before returning. A
    /// write that fails is taken back (the file is cut to where it was), so the lines on
    /// disk always continue the chain.
    pub fn write(&mut self, records: &[Record], durable: bool) -> Result<(), fsx::Error> {
        if records.is_empty() && !durable {
            return Ok(());
        }
        if self.broken {
            return Err(fsx::Error::new(
                "append to",
                &self.path,
                io::Error::other("an earlier write failed and could not be taken back"),
            ));
        }
        let mut text = Vec::new();
        let mut chain = self.chain.clone();
        for r in records {
            let record = serde_json::to_string(r).expect("a record serialises");
            chain = self::chain(&chain, &record);
            text.extend_from_slice(b"{\"record\":");
            text.extend_from_slice(record.as_bytes());
            text.extend_from_slice(b",\"chain\":\"");
            text.extend_from_slice(chain.as_bytes());
            text.extend_from_slice(b"\"}\n");
        }
        let before = self.file.metadata().map(|m| m.len());
        if let Err(e) = self.file.write_all(&text) {
            let taken_back = before.is_ok_and(|len| self.file.set_len(len).is_ok());
            self.broken = !taken_back;
            return Err(fsx::Error::new("write", &self.path, e));
        }
        self.chain = chain;
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
        let file = home.root().join(format!("ws/{n}/.mcp.json"));
        Entry {
            n,
            kind: Kind::McpJson,
            action: Action::DeleteFile,
            path: file.clone(),
            file,
            backup: PathBuf::from(format!("files/{n:05}.mcp.json")),
            sha256_before: "0".repeat(64),
            sha256_after: None,
            mode: Some(0o644),
            uid: Some(1000),
            gid: Some(1000),
            unit: None,
        }
    }

    fn roots(home: &GroveHome) -> Vec<PathBuf> {
        vec![home.root().join("ws")]
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_cut_before_appending() {
        let tmp = tempfile::tempdir().unwrap();
        let home = GroveHome::new(tmp.path().canonicalize().unwrap());
        let (id, dir) = new_backup_dir(&home).unwrap();
        let mut log = Log::create(&dir, &id, &roots(&home)).unwrap();
        log.write(&[Record::Intend(entry(1, &home))], true).unwrap();
        drop(log);
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.join(MANIFEST))
            .unwrap();
        f.write_all(b"{\"record\": {\"done\": {\"n\"").unwrap();
        let m = read(&dir, &home).unwrap();
        assert_eq!(m.entries.len(), 1);
        assert_eq!(m.entries[0].state, State::Intended);
        let mut log = Log::reopen(&dir, &m).unwrap();
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
            Box::new(|e| e.backup = PathBuf::from("files/00002.mcp.json")),
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
            // An edit may name the file a symlink led to, but only inside the roots.
            Box::new(|e| {
                e.action = Action::RemoveEntry;
                e.sha256_after = Some("1".repeat(64));
                e.file = PathBuf::from("/etc/passwd");
            }),
            Box::new(|e| {
                e.path = PathBuf::from("/tmp/elsewhere/.mcp.json");
                e.file = e.path.clone();
            }),
            Box::new(|e| e.mode = Some(0o4755)),
            Box::new(|e| e.mode = Some(0o1644)),
            Box::new(|e| e.uid = None),
            Box::new(|e| e.sha256_before = "not a digest".into()),
            Box::new(|e| e.unit = Some(1)),
        ];
        for (i, spoil) in bad.iter().enumerate() {
            let (id, dir) = new_backup_dir(&home).unwrap();
            let mut e = entry(1, &home);
            spoil(&mut e);
            let mut log = Log::create(&dir, &id, &roots(&home)).unwrap();
            log.write(&[Record::Intend(e)], true).unwrap();
            let err = read(&dir, &home).unwrap_err();
            assert!(err.contains("entry 1"), "case {i}: {err}");
        }
        let listed = list(&home);
        assert_eq!(listed.len(), bad.len());
        assert!(listed.iter().all(|l| l.manifest(&home).is_err()));
        // The same entry, unspoiled, is read.
        let (id, dir) = new_backup_dir(&home).unwrap();
        let mut log = Log::create(&dir, &id, &roots(&home)).unwrap();
        log.write(&[Record::Intend(entry(1, &home))], true).unwrap();
        assert_eq!(read(&dir, &home).unwrap().entries.len(), 1);
    }

    #[test]
    fn an_edited_reordered_or_repeated_line_breaks_the_chain() {
        let tmp = tempfile::tempdir().unwrap();
        let home = GroveHome::new(tmp.path().canonicalize().unwrap());
        let (id, dir) = new_backup_dir(&home).unwrap();
        let mut log = Log::create(&dir, &id, &roots(&home)).unwrap();
        let records = [
            Record::Intend(entry(1, &home)),
            Record::Intend(entry(2, &home)),
            Record::Done { n: 1 },
            Record::NotDone { n: 2 },
        ];
        log.write(&records, true).unwrap();
        let path = dir.join(MANIFEST);
        let good = String::from_utf8(fsx::read_bytes(&path).unwrap()).unwrap();
        let m = read(&dir, &home).unwrap();
        assert_eq!(
            m.entries.iter().map(|l| l.state).collect::<Vec<_>>(),
            [State::Done, State::NotDone]
        );
        let lines: Vec<&str> = good.lines().collect();
        let edited = good.replace("\"mode\":420", "\"mode\":436");
        let swapped = [lines[0], lines[2], lines[1], lines[3], lines[4]].join("\n") + "\n";
        let repeated = [lines[0], lines[1], lines[1], lines[2]].join("\n") + "\n";
        let dropped = [lines[0], lines[2], lines[3]].join("\n") + "\n";
        for (what, text) in [
            ("edited", edited),
            ("swapped", swapped),
            ("repeated", repeated),
            ("dropped", dropped),
        ] {
            fsx::write_atomic(&path, text.as_bytes()).unwrap();
            let err = read(&dir, &home).unwrap_err();
            assert!(err.contains("digest"), "{what}: {err}");
        }
    }

    #[test]
    fn records_out_of_the_order_a_run_writes_them_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let home = GroveHome::new(tmp.path().canonicalize().unwrap());
        let at = || "2026-01-01T00:00:00Z".to_string();
        let cases: Vec<(&str, Vec<Record>)> = vec![
            ("entry 2 first", vec![Record::Intend(entry(2, &home))]),
            (
                "two outcomes",
                vec![
                    Record::Intend(entry(1, &home)),
                    Record::Done { n: 1 },
                    Record::NotDone { n: 1 },
                ],
            ),
            ("an outcome of nothing", vec![Record::Done { n: 1 }]),
            (
                "an entry after the end",
                vec![
                    Record::Finished {
                        at: at(),
                        cancelled: false,
                        interrupted: false,
                    },
                    Record::Intend(entry(1, &home)),
                ],
            ),
            (
                "a restore before the end",
                vec![Record::Restoring { at: at() }],
            ),
            (
                "an end of no restore",
                vec![
                    Record::Finished {
                        at: at(),
                        cancelled: false,
                        interrupted: false,
                    },
                    Record::RestoreEnded {
                        at: at(),
                        complete: true,
                    },
                ],
            ),
        ];
        for (what, records) in cases {
            let (id, dir) = new_backup_dir(&home).unwrap();
            let mut log = Log::create(&dir, &id, &roots(&home)).unwrap();
            log.write(&records, true).unwrap();
            assert!(read(&dir, &home).is_err(), "{what}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_manifest_others_can_write_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let home = GroveHome::new(tmp.path().canonicalize().unwrap());
        let (id, dir) = new_backup_dir(&home).unwrap();
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        Log::create(&dir, &id, &roots(&home)).unwrap();
        read(&dir, &home).unwrap();
        let path = dir.join(MANIFEST);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
        let err = read(&dir, &home).unwrap_err();
        assert!(err.contains("other users"), "{err}");
    }

    #[test]
    fn ids_of_one_second_sort_by_their_number() {
        let mut ids = vec![
            "20260101T000000Z-10",
            "20260101T000000Z-2",
            "20260101T000000Z",
        ];
        ids.sort_by_key(|i| backups::order_key(i));
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
