//! The operation journal: `<GW_HOME>/operations/<id>.json`.
//!
//! Before a mutating command changes anything it records what it is about to do; after each
//! change it records that it did. A process that dies leaves its journal behind, and
//! `gw doctor --fix` finishes or undoes the work from it. While an operation runs, its
//! process holds a lock on `<id>.lock`; a journal whose lock can be taken belongs to a
//! process that is gone.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod action;

pub use action::{Action, BranchSource};

use crate::fsx;
use crate::home::GroveHome;

/// The journal format version.
pub const VERSION: u32 = 1;

/// What kind of command wrote the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Create,
    Delete,
    AddRepo,
    RemoveRepo,
    Rename,
    Reset,
    Sync,
    /// `gw prune branches`: no workspace (its journal's `workspace` is empty).
    PruneBranches,
    /// `gw restore` (and `gw undo`): a workspace comes back from the trash.
    Restore,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Create => "create",
            Kind::Delete => "delete",
            Kind::AddRepo => "add_repo",
            Kind::RemoveRepo => "remove_repo",
            Kind::Rename => "rename",
            Kind::Reset => "reset",
            Kind::Sync => "sync",
            Kind::PruneBranches => "prune_branches",
            Kind::Restore => "restore",
        }
    }
}

/// Where a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Recorded with the commit point: a step that completes the operation and has not
    /// been started. Recovery carries it out; a rollback (which never happens past the
    /// commit point) would have nothing to undo.
    Planned,
    /// Recorded before the change; it may or may not have happened.
    Intended,
    /// The change happened.
    Done,
    /// The change was undone (or found not to have happened).
    Undone,
    /// Undoing it failed; see `error`.
    UndoFailed,
    /// Left in place on purpose (it holds work, or was never ours); see `error`.
    Kept,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    #[serde(flatten)]
    pub action: Action,
    pub status: StepStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where the operation as a whole is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Changing things; a failure rolls back.
    Running,
    /// Past the commit point; what is left only completes the operation.
    Committed,
    /// Undoing after a failure.
    RollingBack,
}

/// The journal of one operation, as written to disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    pub id: String,
    pub kind: Kind,
    /// The workspace the operation is about (the old name, for a rename).
    pub workspace: String,
    /// Other workspace names it touches (the new name, for a rename).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    pub pid: u32,
    pub started_at: String,
    pub updated_at: String,
    pub phase: Phase,
    pub steps: Vec<Step>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Io(#[from] fsx::Error),
    #[error("corrupt operation journal `{}`: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
}

/// A running operation's journal: the record and the lock that says its process is alive.
pub struct Journal {
    dir: PathBuf,
    pub record: Record,
    lock: File,
    writes: u32,
}

fn dir(home: &GroveHome) -> PathBuf {
    home.operations()
}

fn new_id(kind: Kind, workspace: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let now = jiff::Timestamp::now();
    let safe: String = workspace
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        now.strftime("%Y%m%dT%H%M%S%.9f")
            .to_string()
            .replace('.', ""),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed),
        kind.as_str(),
        safe
    )
}

impl Journal {
    /// Starts a journal for an operation on `workspace` and writes it.
    pub fn begin(
        home: &GroveHome,
        kind: Kind,
        workspace: &str,
        also: &[String],
    ) -> Result<Journal, Error> {
        Journal::begin_with(home, kind, workspace, also, Vec::new()).map(|(j, _)| j)
    }

    /// Like [`Journal::begin`], with `actions` recorded as intended in the same (first)
    /// write; returns their step indices.
    pub fn begin_with(
        home: &GroveHome,
        kind: Kind,
        workspace: &str,
        also: &[String],
        actions: Vec<Action>,
    ) -> Result<(Journal, Vec<usize>), Error> {
        let dir = dir(home);
        fsx::create_dir_all(&dir)?;
        let id = new_id(kind, workspace);
        let lock = fsx::open_lock_file(&dir.join(format!("{id}.lock")))?;
        lock.try_lock().map_err(|e| {
            let io = match e {
                TryLockError::Error(e) => e,
                TryLockError::WouldBlock => std::io::Error::other("already locked"),
            };
            fsx::Error::new("lock", &dir.join(format!("{id}.lock")), io)
        })?;
        let now = crate::time::now_utc();
        let mut journal = Journal {
            dir,
            record: Record {
                version: VERSION,
                id,
                kind,
                workspace: workspace.to_string(),
                also: also.to_vec(),
                pid: std::process::id(),
                started_at: now.clone(),
                updated_at: now,
                phase: Phase::Running,
                steps: Vec::new(),
            },
            lock,
            writes: 0,
        };
        let indices = journal.intend(actions)?;
        Ok((journal, indices))
    }

    pub fn id(&self) -> &str {
        &self.record.id
    }

    /// The lock this process holds while the operation runs.
    pub fn lock(&self) -> &File {
        &self.lock
    }

    fn path(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.record.id))
    }

    /// Writes the record durably.
    pub fn write(&mut self) -> Result<(), Error> {
        self.record.updated_at = crate::time::now_utc();
        let text = serialise(&self.path(), &self.record)?;
        fsx::write_atomic(&self.path(), text.as_bytes())?;
        self.writes += 1;
        crash_point(self.writes);
        Ok(())
    }

    /// Records `actions` as intended (one durable write) and returns their step indices.
    pub fn intend(&mut self, actions: Vec<Action>) -> Result<Vec<usize>, Error> {
        let first = self.record.steps.len();
        for action in actions {
            self.record.steps.push(Step {
                action,
                status: StepStatus::Intended,
                error: None,
            });
        }
        self.write()?;
        Ok((first..self.record.steps.len()).collect())
    }

    /// Sets the status of steps (no write; call [`Journal::write`]).
    pub fn mark(&mut self, index: usize, status: StepStatus, error: Option<String>) {
        let step = &mut self.record.steps[index];
        step.status = status;
        step.error = error;
    }

    /// The operation is complete: its journal and lock file go away.
    pub fn finish(self) -> Result<(), Error> {
        fsx::remove_file(&self.path())?;
        fsx::remove_file(&self.dir.join(format!("{}.lock", self.record.id)))?;
        Ok(())
    }
}

/// A journal found on disk.
pub struct Found {
    pub path: PathBuf,
    pub record: Result<Record, String>,
    /// No live process holds its lock: the operation was interrupted.
    pub interrupted: bool,
    /// Held while this process recovers it (so two doctors do not both recover it).
    pub lock: Option<File>,
}

impl Found {
    pub fn id(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Every journal in `operations/`, oldest first. With `take_locks`, the locks of interrupted
/// operations are taken and kept in the result.
pub fn scan(home: &GroveHome, take_locks: bool) -> Result<Vec<Found>, Error> {
    let dir = dir(home);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let mut record = match fsx::read_optional(&path)? {
            None => continue,
            Some(text) => parse(&path, &text),
        };
        // The lock is opened, never created: an operation that finished meanwhile has
        // removed it, and must not be taken for an interrupted one.
        let lock_path = path.with_extension("lock");
        let (interrupted, lock) = match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&lock_path)
        {
            Ok(f) => match f.try_lock() {
                Ok(()) => {
                    // Its process is gone. What it wrote last is what counts: read it
                    // again, now that nobody can write it any more.
                    match fsx::read_optional(&path)? {
                        None => continue,
                        Some(text) => record = parse(&path, &text),
                    }
                    (true, if take_locks { Some(f) } else { None })
                }
                Err(_) => (false, None),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !fsx::exists(&path) {
                    continue;
                }
                // A journal without its lock file (removed by hand): nobody holds it. To
                // recover it, take a new one.
                let taken = take_locks
                    .then(|| fsx::open_lock_file(&lock_path).ok())
                    .flatten()
                    .filter(|f| f.try_lock().is_ok());
                (true, taken)
            }
            Err(_) => (true, None),
        };
        out.push(Found {
            path,
            record,
            interrupted,
            lock,
        });
    }
    Ok(out)
}

/// Reads the journal at `path` from its text (public for the fuzz targets).
#[doc(hidden)]
pub fn parse(path: &Path, text: &str) -> Result<Record, String> {
    let record: Record = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if record.version != VERSION {
        return Err(format!("unsupported journal version {}", record.version));
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if record.id != stem {
        return Err(format!(
            "the id inside ({}) does not match the file name",
            record.id
        ));
    }
    Ok(record)
}

/// Rewrites a recovered journal (durably).
pub fn rewrite(path: &Path, record: &Record) -> Result<(), Error> {
    let text = serialise(path, record)?;
    fsx::write_atomic(path, text.as_bytes())?;
    Ok(())
}

/// A record as JSON; a path that is not UTF-8 cannot be written (nothing grove makes has
/// one: its paths come from configuration and names, which are text).
#[doc(hidden)]
pub fn serialise(path: &Path, record: &Record) -> Result<String, Error> {
    serde_json::to_string_pretty(record).map_err(|e| {
        Error::Io(fsx::Error::new(
            "write",
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
        ))
    })
}

/// Removes the lock files in `operations/` left without their journal — an operation
/// killed between the two removals of [`Journal::finish`] — whose process (the pid in the
/// id) is gone and which nobody holds (a child of the operation still at work keeps it).
/// A lock whose process lives is left: it may be making its journal. Returns how many went.
pub fn remove_orphan_locks(home: &GroveHome) -> usize {
    let dir = dir(home);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let mut removed = 0;
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        let Some(id) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".lock"))
        else {
            continue;
        };
        let pid = id.split('-').nth(1).and_then(|p| p.parse::<i32>().ok());
        let alive = pid
            .and_then(rustix::process::Pid::from_raw)
            .is_none_or(|p| {
                matches!(
                    rustix::process::test_kill_process(p),
                    Ok(()) | Err(rustix::io::Errno::PERM)
                )
            });
        if alive || fsx::exists(&path.with_extension("json")) {
            continue;
        }
        let Ok(lock) = std::fs::OpenOptions::new().write(true).open(&path) else {
            continue;
        };
        if lock.try_lock().is_ok()
            && !fsx::exists(&path.with_extension("json"))
            && fsx::remove_file(&path).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Removes a recovered journal and its lock file.
pub fn remove(path: &Path) -> Result<(), Error> {
    fsx::remove_file(path)?;
    fsx::remove_file(&path.with_extension("lock"))?;
    Ok(())
}

/// Crash testing: after its `n`th journal write the process kills itself with SIGKILL
/// (`GW_CRASH_AFTER_JOURNAL_WRITES=N`, read by `Env` and set here once at start-up). In
/// every build, so that the crash tests run against the binary that ships.
pub fn crash_after_writes(n: Option<u32>) {
    let _ = CRASH_AFTER.set(n);
}

static CRASH_AFTER: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();

fn crash_point(writes: u32) {
    if CRASH_AFTER.get().copied().flatten() == Some(writes) {
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock left without its journal by a process that is gone goes; one whose process
    /// lives (it may be writing its journal), one with its journal, and one someone holds
    /// stay.
    #[test]
    #[allow(clippy::disallowed_methods)]
    fn a_lock_left_without_its_journal_by_a_process_gone_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let home = GroveHome::new(tmp.path());
        let ops = dir(&home);
        std::fs::create_dir_all(&ops).unwrap();
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        let me = std::process::id();
        let lock =
            |pid: u32, seq: u32| ops.join(format!("20261206T000000-{pid}-{seq}-sync-x.lock"));
        for (pid, seq) in [(gone_pid, 0), (me, 1), (gone_pid, 2), (gone_pid, 3)] {
            std::fs::write(lock(pid, seq), "").unwrap();
        }
        std::fs::write(lock(gone_pid, 2).with_extension("json"), "{}").unwrap();
        let held = std::fs::File::open(lock(gone_pid, 3)).unwrap();
        held.lock().unwrap();
        assert_eq!(remove_orphan_locks(&home), 1);
        assert!(!lock(gone_pid, 0).exists(), "gone, without its journal");
        assert!(lock(me, 1).exists(), "its process lives");
        assert!(lock(gone_pid, 2).exists(), "its journal is there");
        assert!(lock(gone_pid, 3).exists(), "held");
        drop(held);
        assert_eq!(remove_orphan_locks(&home), 1);
    }

    #[test]
    fn journal_round_trip_and_liveness() {
        let tmp = tempfile::tempdir().unwrap();
        let home = GroveHome::new(tmp.path());
        let mut j = Journal::begin(&home, Kind::Create, "feat x", &[]).unwrap();
        let idx = j
            .intend(vec![Action::CreateDir {
                path: "/w/feat".into(),
            }])
            .unwrap();
        j.mark(idx[0], StepStatus::Done, None);
        j.write().unwrap();
        let found = scan(&home, false).unwrap();
        assert_eq!(found.len(), 1);
        assert!(!found[0].interrupted, "our own lock is held");
        let rec = found[0].record.as_ref().unwrap();
        assert_eq!(rec.steps[0].status, StepStatus::Done);
        assert!(rec.id.ends_with("-create-feat-x"), "{}", rec.id);
        let id = j.id().to_string();
        drop(j);
        let found = scan(&home, true).unwrap();
        assert!(
            found[0].interrupted,
            "a dropped journal counts as interrupted"
        );
        assert_eq!(found[0].id(), id);
        remove(&found[0].path).unwrap();
        assert!(scan(&home, false).unwrap().is_empty());
    }

    #[test]
    fn corrupt_and_mismatched_journals_are_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let home = GroveHome::new(tmp.path());
        fsx::write_atomic(&dir(&home).join("bad.json"), b"{not json").unwrap();
        let j = Journal::begin(&home, Kind::Delete, "w", &[]).unwrap();
        let text = fsx::read(&j.path()).unwrap();
        fsx::write_atomic(&dir(&home).join("renamed.json"), text.as_bytes()).unwrap();
        let found = scan(&home, false).unwrap();
        let errors: Vec<_> = found
            .iter()
            .filter_map(|f| f.record.as_ref().err())
            .collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        j.finish().unwrap();
    }
}
