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
    /// A file's owner and permission bits (without setuid, setgid and sticky bits, which
    /// gw-migrate never gives a file).
    #[cfg(unix)]
    pub fn of(m: &fs::Metadata) -> Meta {
        use std::os::unix::fs::MetadataExt;
        Meta {
            mode: Some(m.mode() & 0o777),
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

/// How [`write_new`] treats a file's owner and the disk.
#[derive(Debug, Clone, Copy)]
pub(super) struct Writing {
    /// Failing to give the file `meta`'s owner is an error (and the file is removed);
    /// otherwise it is reported.
    pub owner_required: bool,
    /// Flush the file to disk before returning (else the caller flushes it, with others).
    pub sync: bool,
}

/// Writes a new file at `path` (which must not exist) from `source`, with `meta`'s owner
/// and mode (created readable by its owner alone until then). Returns the digest of what
/// was written, and why the owner could not be set when that was not required.
pub(super) fn write_new(
    path: &Path,
    source: &mut dyn Read,
    meta: Meta,
    how: Writing,
) -> Result<(String, Option<io::Error>), WriteError> {
    use sha2::{Digest, Sha256};
    let io_err = |op| move |e| WriteError::Io(fsx::Error::new(op, path, e));
    let mut options = File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(io_err("create"))?;
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
            && how.owner_required
        {
            return Err(WriteError::Owner(io::Error::new(e.kind(), e.to_string())));
        }
        set_mode(&file, meta).map_err(io_err("set permissions on"))?;
        if how.sync {
            file.sync_all().map_err(io_err("sync"))?;
        }
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

/// Sets the permission bits `meta` records, never a setuid, setgid or sticky bit.
#[cfg(unix)]
fn set_mode(file: &File, meta: Meta) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match meta.mode {
        Some(m) => file.set_permissions(fs::Permissions::from_mode(m & 0o777)),
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

/// Makes `dir` (a directory of grove's) readable by its owner alone: created `0700`, or
/// narrowed to it.
pub(super) fn private_dir(dir: &Path) -> Result<(), fsx::Error> {
    match new_private_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let meta =
                    fs::symlink_metadata(dir).map_err(|e| fsx::Error::new("read", dir, e))?;
                if !meta.is_dir() {
                    return Err(fsx::Error::new(
                        "use",
                        dir,
                        io::Error::other("not a directory"),
                    ));
                }
                if meta.permissions().mode() & 0o077 != 0 {
                    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                        .map_err(|e| fsx::Error::new("set permissions on", dir, e))?;
                }
            }
            Ok(())
        }
        other => other,
    }
}

/// Creates the directory `dir` (its parent must exist), readable by its owner alone.
pub(super) fn new_private_dir(dir: &Path) -> Result<(), fsx::Error> {
    let mut b = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir).map_err(|e| fsx::Error::new("create", dir, e))
}

/// Exchanges the files at `a` and `b` in one step (both must exist): `Ok(false)` when the
/// platform or file system cannot, and nothing changed.
fn exchange(a: &Path, b: &Path) -> Result<bool, fsx::Error> {
    #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => Ok(true),
            Err(
                rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::NOTSUP,
            ) => Ok(false),
            Err(e) => Err(fsx::Error::new("exchange", b, e.into())),
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
    {
        let _ = (a, b);
        Ok(false)
    }
}

/// What [`swap_in`] did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Swapped {
    /// The new file is in place; what it replaced was exactly what was expected.
    Done,
    /// The file had changed (or is gone): it is as it was, and the new file is removed.
    Changed,
    /// The file changed while it was out of place and back: a version of it written in
    /// that moment is kept at this path, beside it.
    Kept(PathBuf),
}

/// Puts `tmp` (whose digest is `ours`) in place of `file` only if `file` holds `expected`,
/// losing no edit made meanwhile: the two are exchanged in one step, then what came out is
/// compared with `expected`, and on a difference they are exchanged back. So an edit that
/// lands after the last look and before the swap is never overwritten (where the file
/// system cannot exchange, the look comes right before a rename, the nearest there is).
pub(super) fn swap_in(
    tmp: &Path,
    file: &Path,
    expected: &str,
    ours: &str,
) -> Result<Swapped, fsx::Error> {
    let swapped = match exchange(tmp, file) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            remove_tmp(tmp);
            return Ok(Swapped::Changed);
        }
        Err(e) => return Err(e),
    };
    if !swapped {
        if digest(file)?.as_deref() == Some(expected) {
            fsx::rename(tmp, file)?;
            return Ok(Swapped::Done);
        }
        remove_tmp(tmp);
        return Ok(Swapped::Changed);
    }
    // `tmp` now holds what was in place.
    if digest(tmp).is_ok_and(|d| d.as_deref() == Some(expected)) {
        remove_tmp(tmp);
        return Ok(Swapped::Done);
    }
    match exchange(tmp, file) {
        Ok(true) => Ok(match settle(tmp, file, &[ours], None, None) {
            Settled::Kept(kept) => Swapped::Kept(kept),
            _ => Swapped::Changed,
        }),
        // Cannot happen where the first exchange worked; if it does, nothing is lost.
        failed => {
            let kept = keep(tmp);
            let why = format!(
                "the file changed while gw-migrate swapped it, and could not be swapped back ({}); the version that was in place is kept at `{}`",
                failed.err().map(|e| e.to_string()).unwrap_or_default(),
                kept.display()
            );
            Err(fsx::Error::new(
                "exchange back",
                file,
                io::Error::other(why),
            ))
        }
    }
}

/// Renames a temporary file that holds a version of a file found nowhere else to a name of
/// its own beside it (`….kept`, numbered if taken), so that nothing removing temporary
/// files ever removes it; returns where it is (`tmp` itself if even that failed).
fn keep(tmp: &Path) -> PathBuf {
    let name = tmp.file_name().unwrap_or_default().to_string_lossy();
    let base = name.strip_suffix(".tmp").unwrap_or(&name).to_string();
    for n in 1..100 {
        let kept = tmp.with_file_name(if n == 1 {
            format!("{base}.kept")
        } else {
            format!("{base}.kept-{n}")
        });
        if rename_new(tmp, &kept).unwrap_or(false) {
            return kept;
        }
    }
    tmp.to_path_buf()
}

/// What [`settle`] found in a temporary file.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Settled {
    /// Nothing, or a version gw-migrate wrote or the backup keeps: removed.
    Removed,
    /// A version of the file written while it was swapped out: back in place, instead of
    /// gw-migrate's.
    PutBack,
    /// Such a version, kept beside the file at this path (the file holds something else).
    Kept(PathBuf),
}

/// Settles a temporary file left beside `file` (by a run or a restore that stopped, or by a
/// swap that raced an edit): removed when it holds one of the `derivable` versions (what
/// gw-migrate wrote, or a version kept in the backup), or when `file` still holds
/// `unswapped`, the version in place before any exchange (then the temporary file is
/// gw-migrate's own, perhaps cut short by a kill while it was written); otherwise it holds
/// a version of the file written while it was out of place, which goes back in place if
/// `file` holds the version `placed` that gw-migrate swapped in (`Some`), else is kept under
/// a name of its own ([`keep`]).
pub(super) fn settle(
    tmp: &Path,
    file: &Path,
    derivable: &[&str],
    placed: Option<&str>,
    unswapped: Option<&str>,
) -> Settled {
    if !fs::symlink_metadata(tmp).is_ok_and(|m| m.file_type().is_file()) {
        return Settled::Removed;
    }
    let held = digest(tmp).ok().flatten();
    if held.as_deref().is_some_and(|d| derivable.contains(&d)) {
        remove_tmp(tmp);
        return Settled::Removed;
    }
    // Not exchanged yet: what is in place is what was there, so the temporary file holds
    // nothing but gw-migrate's own writing.
    if let Some(unswapped) = unswapped
        && digest(file).ok().flatten().as_deref() == Some(unswapped)
    {
        remove_tmp(tmp);
        return Settled::Removed;
    }
    if let Some(placed) = placed
        && digest(file).ok().flatten().as_deref() == Some(placed)
    {
        match exchange(tmp, file) {
            // What gw-migrate had put in place is now the temporary file.
            Ok(true) => {
                return match settle(tmp, file, &[placed], None, None) {
                    Settled::Removed => Settled::PutBack,
                    other => other,
                };
            }
            // What is in place is gw-migrate's own version: replacing it loses nothing.
            Ok(false) if fsx::rename(tmp, file).is_ok() => return Settled::PutBack,
            _ => {}
        }
    }
    Settled::Kept(keep(tmp))
}
