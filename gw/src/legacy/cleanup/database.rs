//! The announcements database, `messages.db`, and the files SQLite keeps beside it. They
//! are one unit: moved together or not at all, and not while a process holds any of them
//! open (an old `gw mcp-serve` still running would go on writing into the moved files).

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::model::{Action, Item, Kind, Reason};
use crate::fsx;
use crate::home::GroveHome;

/// The announcements database and the files SQLite keeps beside it.
pub const DATABASE_FILES: &[&str] = &[
    "messages.db",
    "messages.db-wal",
    "messages.db-shm",
    "messages.db-journal",
];

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
const WAL_MAGIC: [[u8; 4]; 2] = [[0x37, 0x7f, 0x06, 0x82], [0x37, 0x7f, 0x06, 0x83]];
const JOURNAL_MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

/// The database unit as it is now: the files present and either each one's digest, or
/// what holds the unit back. One check decides the unit at the scan ([`plan`]) and again
/// when it is about to move (`apply`), so a file that appeared, a holder that opened it or
/// a change since the scan is found at either moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unit {
    pub files: Vec<PathBuf>,
    pub verdict: Result<Vec<String>, Blocker>,
}

/// What holds the database unit back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Blocker {
    /// The file that does (`None`: all of them, such as a process holding them open).
    pub at: Option<usize>,
    pub reason: Reason,
    pub detail: String,
    pub pids: Vec<u32>,
}

/// Looks at the database files in the grove directory.
pub(super) fn examine(home: &GroveHome) -> Unit {
    let present: Vec<(PathBuf, fs::Metadata)> = DATABASE_FILES
        .iter()
        .map(|n| home.root().join(n))
        .filter_map(|p| fs::symlink_metadata(&p).ok().map(|m| (p, m)))
        .collect();
    let files: Vec<PathBuf> = present.iter().map(|(p, _)| p.clone()).collect();
    let main = home.messages_db();
    let has_main = files.contains(&main);
    let blocked = |at: Option<usize>, reason, detail| Blocker {
        at,
        reason,
        detail,
        pids: Vec::new(),
    };
    for (i, (path, meta)) in present.iter().enumerate() {
        if let Err((reason, detail)) = check(path, meta, *path == main, has_main) {
            return Unit {
                files,
                verdict: Err(blocked(Some(i), reason, detail)),
            };
        }
    }
    if files.is_empty() {
        return Unit {
            files,
            verdict: Ok(Vec::new()),
        };
    }
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    if let Some(held) = holders(&paths) {
        let mut b = blocked(None, Reason::InUse, held.describe());
        b.pids = held.pids;
        return Unit {
            files,
            verdict: Err(b),
        };
    }
    let mut digests = Vec::new();
    for (i, p) in files.iter().enumerate() {
        match fsx::sha256_file(p) {
            Ok(h) => digests.push(h),
            Err(e) => {
                return Unit {
                    files,
                    verdict: Err(blocked(Some(i), Reason::Unreadable, e.to_string())),
                };
            }
        }
    }
    Unit {
        files,
        verdict: Ok(digests),
    }
}

/// The database files present, as one unit: every one pending `move_database`, or every
/// one skipped (with the reason of the file that holds the unit back).
pub(super) fn plan(home: &GroveHome) -> Vec<Item> {
    let unit = examine(home);
    let mut items: Vec<Item> = unit
        .files
        .iter()
        .map(|p| Item::new(p.clone(), Kind::Database))
        .collect();
    let b = match unit.verdict {
        Ok(digests) => {
            for (item, d) in items.iter_mut().zip(digests) {
                item.sha256 = Some(d);
                item.action = Some(Action::MoveDatabase);
            }
            return items;
        }
        Err(b) => b,
    };
    let name = |i: usize| {
        unit.files
            .get(i)
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, mut item)| {
            item.pids.clone_from(&b.pids);
            match b.at {
                Some(at) if at != i => {
                    let why = format!(
                        "the database files move only together, and {} is left: {}",
                        name(at),
                        b.detail
                    );
                    item.skip(b.reason, Some(why))
                }
                _ => item.skip(b.reason, Some(b.detail.clone())),
            }
        })
        .collect()
}

/// Whether one file can move with the database.
fn check(
    path: &Path,
    meta: &fs::Metadata,
    is_main: bool,
    has_main: bool,
) -> Result<(), (Reason, String)> {
    if !meta.file_type().is_file() {
        return Err((
            Reason::NotRegularFile,
            "not a regular file (a symlink or a directory)".to_string(),
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err((
                Reason::HardLinked,
                format!(
                    "the file has {} names (hard links); move it by hand",
                    meta.nlink()
                ),
            ));
        }
    }
    let head = read_head(path).map_err(|e| (Reason::Unreadable, e.to_string()))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let ok = if is_main {
        // SQLite creates an empty file when a database is opened and never written.
        head.is_empty() || head.starts_with(SQLITE_MAGIC)
    } else if has_main || name.ends_with("-shm") {
        // Beside the database, or the shared-memory index (which has no header).
        true
    } else if name.ends_with("-wal") {
        head.is_empty() || WAL_MAGIC.iter().any(|m| head.starts_with(m))
    } else {
        // A rollback journal: its header, or zeroed by a commit in persistent mode.
        head.is_empty() || head.starts_with(&JOURNAL_MAGIC) || head.iter().take(8).all(|b| *b == 0)
    };
    if ok {
        Ok(())
    } else if is_main {
        Err((
            Reason::NotSqlite,
            "does not start with the SQLite header".to_string(),
        ))
    } else {
        Err((
            Reason::NotSqlite,
            "messages.db is missing and this does not look like a file SQLite kept beside it"
                .to_string(),
        ))
    }
}

/// Up to the first 16 bytes.
fn read_head(path: &Path) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(16);
    fs::File::open(path)?.take(16).read_to_end(&mut head)?;
    Ok(head)
}

/// Processes holding some of the files open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Holders {
    /// Their process ids, where the platform tells (Linux, through `/proc`).
    pub pids: Vec<u32>,
    /// Their command names, in the order of `pids`.
    pub names: Vec<String>,
}

impl Holders {
    fn describe(&self) -> String {
        if self.pids.is_empty() {
            return "another process holds the database open (an old `gw mcp-serve`?); stop it and run again".into();
        }
        let who: Vec<String> = self
            .pids
            .iter()
            .zip(&self.names)
            .map(|(p, n)| {
                if n.is_empty() {
                    format!("pid {p}")
                } else {
                    format!("pid {p} ({n})")
                }
            })
            .collect();
        format!(
            "held open by {} (an old `gw mcp-serve`?); stop it and run again",
            who.join(", ")
        )
    }
}

/// Who holds any of `paths` open: on Linux every process whose descriptors `/proc` shows
/// us; everywhere, a process holding an SQLite lock on the database or its shared memory
/// (probed with a non-blocking lock that is released at once).
pub(super) fn holders(paths: &[&Path]) -> Option<Holders> {
    let wanted: Vec<PathBuf> = paths.iter().map(|p| fsx::canonical(p)).collect();
    let mut found = Holders {
        pids: Vec::new(),
        names: Vec::new(),
    };
    for (pid, name) in proc_holders(&wanted) {
        found.pids.push(pid);
        found.names.push(name);
    }
    if !found.pids.is_empty() || paths.iter().any(|p| locked(p)) {
        Some(found)
    } else {
        None
    }
}

/// Processes with a descriptor open on one of `wanted`, from `/proc/<pid>/fd` (Linux).
fn proc_holders(wanted: &[PathBuf]) -> Vec<(u32, String)> {
    let Ok(procs) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut out = Vec::new();
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        // Our own children (a fork about to run git, in `gw doctor`) hold copies of our
        // descriptors for a moment; they are not holders.
        if pid == me || parent_of(&p.path()) == Some(me) {
            continue;
        }
        let Ok(fds) = fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let holds = fds
            .flatten()
            .filter_map(|fd| fs::read_link(fd.path()).ok())
            .any(|target| wanted.contains(&target));
        if holds {
            let name = fs::read(p.path().join("comm"))
                .map(|c| String::from_utf8_lossy(&c).trim().to_string())
                .unwrap_or_default();
            out.push((pid, name));
        }
    }
    out.sort();
    out
}

/// The parent process id, from `/proc/<pid>/stat` (`pid (comm) state ppid …`).
fn parent_of(proc_dir: &Path) -> Option<u32> {
    let stat = fs::read(proc_dir.join("stat")).ok()?;
    let stat = String::from_utf8_lossy(&stat);
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether another process holds a POSIX (SQLite) lock on `path`: a non-blocking
/// exclusive lock is refused. A lock obtained is released at once.
#[cfg(unix)]
fn locked(path: &Path) -> bool {
    use rustix::fs::{FlockOperation, fcntl_lock};
    let Ok(file) = fs::OpenOptions::new().read(true).write(true).open(path) else {
        return false;
    };
    match fcntl_lock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {
            let _ = fcntl_lock(&file, FlockOperation::NonBlockingUnlock);
            false
        }
        Err(e) => e == rustix::io::Errno::AGAIN || e == rustix::io::Errno::ACCESS,
    }
}

#[cfg(not(unix))]
fn locked(_: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_checks_each_file_by_its_role() {
        let dir = tempfile::tempdir().unwrap();
        let put = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            fsx::write_atomic(&path, bytes).unwrap();
            let meta = fs::symlink_metadata(&path).unwrap();
            (path, meta)
        };
        let (path, meta) = put("messages.db", b"");
        assert!(check(&path, &meta, true, true).is_ok(), "an empty database");
        let (path, meta) = put("messages.db", b"hello, not a database");
        assert_eq!(
            check(&path, &meta, true, true).unwrap_err().0,
            Reason::NotSqlite
        );
        let (path, meta) = put("messages.db-wal", &[0x37, 0x7f, 0x06, 0x82, 0, 0]);
        assert!(check(&path, &meta, false, false).is_ok(), "an orphaned WAL");
        let (path, meta) = put("messages.db-wal", b"junk");
        assert!(check(&path, &meta, false, false).is_err());
        assert!(
            check(&path, &meta, false, true).is_ok(),
            "beside the database"
        );
        let (path, meta) = put("messages.db-journal", &[0; 12]);
        assert!(
            check(&path, &meta, false, false).is_ok(),
            "a zeroed journal"
        );
        assert_eq!(holders(&[path.as_path()]), None, "nobody holds it");
    }
}
