//! The backup directories under the grove directory: making one (private), listing them
//! with where each stands (from the last line of its manifest), removing one a killed run
//! left blank, and the lock every run takes.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::{MANIFEST, Manifest, Record, parse_line, read};
use crate::env::Env;
use crate::error::Error;
use crate::fsx;
use crate::home::GroveHome;
use crate::legacy::cleanup::files;
use crate::lock::{self, Lock};

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
        let record = parse_line(line)
            .map(|(_, _, record)| record)
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
pub(super) fn order_key(id: &str) -> (String, u32) {
    match id.rsplit_once('-') {
        Some((stamp, n)) if n.bytes().all(|b| b.is_ascii_digit()) => {
            (stamp.to_string(), n.parse().unwrap_or(u32::MAX))
        }
        _ => (id.to_string(), 1),
    }
}

/// Makes a new backup directory: `(id, path)`. Backups are private: the directory of
/// backups and each backup are `0700`.
pub fn new_backup_dir(home: &GroveHome) -> Result<(String, PathBuf), Error> {
    let base = home.migrate_backups();
    fsx::create_dir_all(base.parent().unwrap_or(&base))?;
    files::private_dir(&base)?;
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
        match files::new_private_dir(&dir) {
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
