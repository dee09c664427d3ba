//! The file operations an applied run and a restore are made of. Every one names the path
//! it failed on; none of them unlinks a file of the user's (a removed file is moved).

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::fsx;
use crate::parallel;

/// Permission bits and owner of a file, kept across an edit and a restore.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Meta {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
}

impl Meta {
    #[cfg(unix)]
    pub fn of(m: &fs::Metadata) -> Meta {
        use std::os::unix::fs::MetadataExt;
        Meta {
            mode: Some(m.mode() & 0o7777),
            uid: Some(m.uid()),
            gid: Some(m.gid()),
        }
    }

    #[cfg(not(unix))]
    pub fn of(_: &fs::Metadata) -> Meta {
        Meta::default()
    }
}

/// The temporary file an applied run (`restore: false`) or a restore writes before it
/// renames it over `file`: named after the run and the entry, so that whoever finds the run
/// interrupted knows exactly which file to remove.
pub(super) fn tmp_for(file: &Path, id: &str, n: usize, restore: bool) -> PathBuf {
    let mut name = OsString::from(".");
    name.push(file.file_name().unwrap_or_default());
    name.push(format!(
        ".gw-migrate-{id}-{n}{}.tmp",
        if restore { ".restore" } else { "" }
    ));
    file.with_file_name(name)
}

/// Removes a temporary file named by [`tmp_for`] if it is there (and a regular file).
pub(super) fn remove_tmp(tmp: &Path) {
    if fs::symlink_metadata(tmp).is_ok_and(|m| m.file_type().is_file()) {
        let _ = fs::remove_file(tmp);
    }
}

/// The digest of a file; `None` when there is no file.
pub(super) fn digest(path: &Path) -> Result<Option<String>, fsx::Error> {
    match fsx::sha256_file(path) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Why a new file could not be written.
#[derive(Debug)]
pub(super) enum WriteError {
    /// It could not be given the owner it must have.
    Owner(io::Error),
    Io(fsx::Error),
}

impl From<fsx::Error> for WriteError {
    fn from(e: fsx::Error) -> WriteError {
        WriteError::Io(e)
    }
}

/// Writes a new file at `path` (which must not exist) from `source`, with `meta`'s owner
/// and mode, flushed to disk. Returns the digest of what was written. With
/// `owner_required`, failing to set the owner is an error (and the file is removed);
/// otherwise it is reported in the second value.
pub(super) fn write_new(
    path: &Path,
    source: &mut dyn Read,
    meta: Meta,
    owner_required: bool,
) -> Result<(String, Option<io::Error>), WriteError> {
    use sha2::{Digest, Sha256};
    let io_err = |op| move |e| WriteError::Io(fsx::Error::new(op, path, e));
    let mut file = File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io_err("create"))?;
    let written = (|| -> Result<(String, Option<io::Error>), WriteError> {
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = source
                .read(&mut buf)
                .map_err(io_err("read the source of"))?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
            file.write_all(&buf[..n]).map_err(io_err("write"))?;
        }
        let owner = set_owner(&file, meta);
        if let Some(e) = &owner
            && owner_required
        {
            return Err(WriteError::Owner(io::Error::new(e.kind(), e.to_string())));
        }
        set_mode(&file, meta).map_err(io_err("set permissions on"))?;
        file.sync_all().map_err(io_err("sync"))?;
        Ok((fsx::to_hex(&h.finalize()), owner))
    })();
    if written.is_err() {
        let _ = fs::remove_file(path);
    }
    written
}

#[cfg(unix)]
fn set_owner(file: &File, meta: Meta) -> Option<io::Error> {
    use std::os::unix::fs::MetadataExt;
    let (Some(uid), Some(gid)) = (meta.uid, meta.gid) else {
        return None;
    };
    let now = file.metadata().ok()?;
    if now.uid() == uid && now.gid() == gid {
        return None;
    }
    std::os::unix::fs::fchown(file, Some(uid), Some(gid)).err()
}

#[cfg(not(unix))]
fn set_owner(_: &File, _: Meta) -> Option<io::Error> {
    None
}

#[cfg(unix)]
fn set_mode(file: &File, meta: Meta) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match meta.mode {
        Some(m) => file.set_permissions(fs::Permissions::from_mode(m)),
        None => Ok(()),
    }
}

#[cfg(not(unix))]
fn set_mode(_: &File, _: Meta) -> io::Result<()> {
    Ok(())
}

/// Flushes files to disk, several at once: the file system commits concurrent flushes
/// together, which on a journalling file system is many times faster than one by one.
pub(super) fn sync_all(paths: &[PathBuf]) -> Vec<Result<(), fsx::Error>> {
    parallel::map_processes(paths, |p| {
        File::open(p)
            .and_then(|f| f.sync_all())
            .map_err(|e| fsx::Error::new("sync", p, e))
    })
}

/// Runs `f` over `items` several at once (for work that mostly waits on the disk).
pub(super) fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    parallel::map_processes(items, f)
}

/// Moves `from` to `to` (a rename, or across file systems a copy that is flushed before
/// `from` is removed).
pub(super) fn move_file(from: &Path, to: &Path) -> Result<(), fsx::Error> {
    match fs::rename(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::CrossesDevices => {
            let tmp = to.with_extension("partial");
            fs::copy(from, &tmp).map_err(|e| fsx::Error::new("copy", from, e))?;
            File::open(&tmp)
                .and_then(|f| f.sync_all())
                .map_err(|e| fsx::Error::new("sync", &tmp, e))?;
            fsx::rename(&tmp, to)?;
            fsx::remove_file(from)
        }
        Err(e) => Err(fsx::Error::new("move", from, e)),
    }
}

/// Renames `from` to `to` unless `to` exists: `Ok(false)` then, and nothing changed.
pub(super) fn rename_new(from: &Path, to: &Path) -> Result<bool, fsx::Error> {
    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(true),
            Err(rustix::io::Errno::EXIST) => return Ok(false),
            // Not offered by this file system: check, then rename.
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
            Err(e) => return Err(fsx::Error::new("rename", from, e.into())),
        }
    }
    if fsx::exists(to) {
        return Ok(false);
    }
    fsx::rename(from, to).map(|()| true)
}
