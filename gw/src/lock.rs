//! Cross-process advisory file locks with a bounded wait.
//!
//! A lock is an OS file lock (`flock`) on a file that is never deleted, so a process that
//! dies releases it automatically. The holder writes its pid into the file so that a
//! waiter that gives up can say who held it.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::fsx;

/// The default bounded wait for any lock.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(25);

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Io(#[from] fsx::Error),
    #[error("timed out after {} waiting for the lock `{}`{}", seconds(*waited), path.display(), holder.map(|p| format!(" held by pid {p}")).unwrap_or_default())]
    Timeout {
        path: PathBuf,
        waited: Duration,
        holder: Option<u32>,
    },
}

/// A wait as people say it: `0.3s`, `2.5s`, `30s`.
fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(10) {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}s", d.as_secs())
    }
}

/// Takes an exclusive lock on `path`, waiting at most `timeout`.
pub fn acquire(path: &Path, timeout: Duration) -> Result<Lock, Error> {
    let mut file = fsx::open_lock_file(path)?;
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) => {
                if start.elapsed() >= timeout {
                    return Err(Error::Timeout {
                        path: path.to_path_buf(),
                        waited: start.elapsed(),
                        holder: holder_pid(&mut file),
                    });
                }
                std::thread::sleep(POLL);
            }
            Err(TryLockError::Error(e)) => return Err(fsx::Error::new("lock", path, e).into()),
        }
    }
    // Best effort: record who holds the lock for anyone who times out waiting.
    let _ = file
        .set_len(0)
        .and_then(|_| file.seek(SeekFrom::Start(0)))
        .and_then(|_| write!(file, "{}", std::process::id()));
    Ok(Lock { _file: file })
}

fn holder_pid(file: &mut File) -> Option<u32> {
    let mut s = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut s).ok()?;
    s.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_times_out_and_names_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        let held = acquire(&p, DEFAULT_TIMEOUT).unwrap();
        let err = acquire(&p, Duration::from_millis(60)).unwrap_err();
        match err {
            Error::Timeout { holder, .. } => assert_eq!(holder, Some(std::process::id())),
            other => panic!("unexpected {other}"),
        }
        drop(held);
        acquire(&p, Duration::from_millis(60)).unwrap();
    }

    #[test]
    fn a_wait_is_said_to_a_tenth_of_a_second() {
        assert_eq!(seconds(Duration::from_millis(300)), "0.3s");
        assert_eq!(seconds(Duration::from_millis(2540)), "2.5s");
        assert_eq!(seconds(Duration::from_secs(30)), "30s");
    }
}
