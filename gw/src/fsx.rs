//! File-system helpers whose errors name the path they failed on.
//!
//! Writes that replace a file are atomic: a temporary file in the same directory is
//! written, flushed to disk, renamed over the target, and the directory is synced, so a
//! reader sees either the old or the new content and never a half-written file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// An I/O error together with what was being done and to which path.
#[derive(Debug, thiserror::Error)]
#[error("cannot {op} `{}`: {source}", path.display())]
pub struct Error {
    pub op: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl Error {
    pub fn new(op: &'static str, path: &Path, source: io::Error) -> Error {
        Error {
            op,
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn kind(&self) -> io::ErrorKind {
        self.source.kind()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

fn ctx<T>(op: &'static str, path: &Path, r: io::Result<T>) -> Result<T> {
    r.map_err(|e| Error::new(op, path, e))
}

/// The largest file grove reads as one of its own (`state.json`, `config.toml`, a journal,
/// `trust.json`, a repository's `.grove.toml`, …): far more than any real one holds, far
/// less than would exhaust memory.
pub const MAX_FILE: u64 = 64 * 1024 * 1024;

/// Opens `path` to read it whole: it must be a regular file (a symbolic link to one is
/// followed) of at most `limit` bytes. A FIFO, a device or a socket is refused
/// (`InvalidData`) without blocking or reading it (it is opened non-blocking, then looked
/// at), and so is a larger file (`FileTooLarge`) before anything is read; a directory is
/// `IsADirectory`. `Ok(None)` when it does not exist.
/// Every whole-file read of grove's goes through here.
pub fn open_regular(path: &Path, limit: u64) -> io::Result<Option<(File, u64)>> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    let t = meta.file_type();
    if t.is_dir() {
        // As reading it would say.
        return Err(io::Error::from(io::ErrorKind::IsADirectory));
    }
    let what = if t.is_file() {
        None
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    };
    if let Some(what) = what {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is {what}, not a regular file"),
        ));
    }
    if meta.len() > limit {
        return Err(too_large(limit));
    }
    Ok(Some((file, meta.len())))
}

fn too_large(limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("it is larger than {} MiB", limit / (1024 * 1024)),
    )
}

/// Reads the rest of `file` (at most `limit` bytes: one that grew past it since it was
/// looked at is refused) as UTF-8.
fn read_bounded(file: File, len: u64, limit: u64) -> io::Result<String> {
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Reads a file as UTF-8; `Ok(None)` when it does not exist. Only a regular file of at
/// most [`MAX_FILE`] bytes is read ([`open_regular`]).
pub fn read_optional(path: &Path) -> Result<Option<String>> {
    let read = || -> io::Result<Option<String>> {
        match open_regular(path, MAX_FILE)? {
            Some((file, len)) => read_bounded(file, len, MAX_FILE).map(Some),
            None => Ok(None),
        }
    };
    read().map_err(|e| Error::new("read", path, e))
}

/// A file's text held in memory (see [`read_text_optional`]).
#[derive(Debug, Default)]
pub struct Text(Backing);

#[derive(Debug)]
enum Backing {
    Heap(String),
    /// `len` bytes of valid UTF-8 at `start` in an anonymous mapping.
    Mapped {
        map: memmap2::MmapMut,
        start: usize,
        len: usize,
    },
}

impl Default for Backing {
    fn default() -> Backing {
        Backing::Heap(String::new())
    }
}

impl Text {
    /// The text. A mapped one is checked as UTF-8 again on each call (tens of microseconds
    /// a megabyte; it is called once or twice), since only safe code may make a `str`.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Backing::Heap(s) => s,
            Backing::Mapped { map, start, len } => {
                std::str::from_utf8(&map[*start..start + len]).expect("validated when read")
            }
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(Backing::Heap(s))
    }
}

/// Files from this size on are read into a huge page.
const HUGE_READ: usize = 512 * 1024;
const HUGE_PAGE: usize = 2 * 1024 * 1024;

/// Reads a file as UTF-8; `Ok(None)` when it does not exist. A large file (the `state.json`
/// of a thousand workspaces is a megabyte) is read into an anonymous mapping that the kernel
/// is asked to back with transparent huge pages: faulting in a megabyte of fresh 4 KiB pages
/// one at a time cost more than parsing it. Where huge pages are not offered, this is an
/// ordinary read into ordinary pages.
pub fn read_text_optional(path: &Path) -> Result<Option<Text>> {
    use std::io::Read;
    let read = || -> io::Result<Text> {
        let Some((mut file, len)) = open_regular(path, MAX_FILE)? else {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        };
        let len = len as usize;
        // Transparent huge pages are Linux's.
        if len < HUGE_READ || cfg!(not(target_os = "linux")) {
            // Bytes first, then checked, so that text that is not UTF-8 is refused with the
            // message `read_optional` and the mapped path give (where the bad byte is).
            return read_bounded(file, len as u64, MAX_FILE).map(|s| Text(Backing::Heap(s)));
        }
        let span = len.div_ceil(HUGE_PAGE) * HUGE_PAGE;
        let mut map = memmap2::MmapMut::map_anon(span + HUGE_PAGE)?;
        let start = map.as_ptr().align_offset(HUGE_PAGE);
        // Advice only: without it the read still works, page by page.
        #[cfg(target_os = "linux")]
        let _ = map.advise_range(memmap2::Advice::HugePage, start, span);
        let mut more = [0; 1];
        let whole = match file.read_exact(&mut map[start..start + len]) {
            Ok(()) => file.read(&mut more)? == 0,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => false,
            Err(e) => return Err(e),
        };
        if !whole {
            // It changed size while being read: read it again, as it is now.
            let Some((file, len)) = open_regular(path, MAX_FILE)? else {
                return Err(io::Error::from(io::ErrorKind::NotFound));
            };
            return read_bounded(file, len, MAX_FILE).map(|s| Text(Backing::Heap(s)));
        }
        std::str::from_utf8(&map[start..start + len])
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        Ok(Text(Backing::Mapped { map, start, len }))
    };
    match read() {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::new("read", path, e)),
    }
}

/// Reads a file as UTF-8.
pub fn read(path: &Path) -> Result<String> {
    read_optional(path)?.ok_or_else(|| {
        Error::new(
            "read",
            path,
            io::Error::new(io::ErrorKind::NotFound, "no such file"),
        )
    })
}

/// Replaces `path` with `contents` atomically and durably, keeping an existing file's mode.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    write_atomic_as(path, contents, None, true)
}

/// Like [`write_atomic`], and the file gets permission bits `mode` (e.g. `0o755` for an
/// executable) before it appears under its name.
pub fn write_atomic_mode(path: &Path, contents: &[u8], mode: u32) -> Result<()> {
    write_atomic_as(path, contents, Some(mode), true)
}

/// Like [`write_atomic`] without the `fsync`s: a reader still sees the old file or the new
/// one, never half of one, but a power cut may lose the change (and on ext4, a rename over
/// an existing file writes its data out first, so it is not left empty). For files whose
/// last change costs nothing to lose: a cache, the usage log. Each `fsync` is a wait, and
/// the first after a checkout a long one (it commits the file system's journal of every
/// file the checkout wrote).
pub fn write_atomic_lazily(path: &Path, contents: &[u8]) -> Result<()> {
    write_atomic_as(path, contents, None, false)
}

fn write_atomic_as(path: &Path, contents: &[u8], mode: Option<u32>, durable: bool) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = ctx(
        "create a temporary file in",
        dir,
        tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir),
    )?;
    let permissions = match mode {
        Some(m) => Some(fs::Permissions::from_mode(m)),
        None => fs::metadata(path).ok().map(|m| m.permissions()),
    };
    if let Some(perm) = permissions {
        ctx(
            "set permissions on",
            tmp.path(),
            fs::set_permissions(tmp.path(), perm),
        )?;
    }
    let tmp_path = tmp.path().to_path_buf();
    ctx("write", &tmp_path, tmp.as_file_mut().write_all(contents))?;
    if durable {
        ctx("sync", &tmp_path, tmp.as_file().sync_all())?;
    }
    tmp.persist(path)
        .map_err(|e| Error::new("replace", path, e.error))?;
    if durable { sync_dir(dir) } else { Ok(()) }
}

/// The most grove reads of a document a person hands it (a plan, a blueprint): far more
/// than any real one, far less than `/dev/zero`.
pub const MAX_DOCUMENT: u64 = 16 * 1024 * 1024;

/// Reads a file as UTF-8, refusing one larger than `limit` bytes, or that is not a
/// regular file (`/dev/zero`, a FIFO), without reading it ([`open_regular`]).
pub fn read_limited(path: &Path, limit: u64) -> Result<String> {
    let read = || -> io::Result<String> {
        match open_regular(path, limit)? {
            Some((file, len)) => read_bounded(file, len, limit),
            None => Err(io::Error::new(io::ErrorKind::NotFound, "no such file")),
        }
    };
    read().map_err(|e| Error::new("read", path, e))
}

/// Reads UTF-8 text from `r`, refusing more than `limit` bytes.
pub fn read_limited_from(r: impl Read, limit: u64) -> io::Result<String> {
    let mut bytes = Vec::new();
    r.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {} MiB", limit / (1024 * 1024)),
        ));
    }
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Reads a whole file as bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    ctx("read", path, fs::read(path))
}

/// Flushes a directory's entries (a rename inside it) to disk.
pub fn sync_dir(dir: &Path) -> Result<()> {
    ctx(
        "sync directory",
        dir,
        File::open(dir).and_then(|d| d.sync_all()),
    )
}

pub fn create_dir_all(path: &Path) -> Result<()> {
    ctx("create directory", path, fs::create_dir_all(path))
}

/// Creates exactly one directory; fails when it already exists.
pub fn create_dir(path: &Path) -> Result<()> {
    ctx("create directory", path, fs::create_dir(path))
}

pub fn remove_dir_all(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => ctx("remove", path, r),
    }
}

/// Removes whatever is at `path` — a file, a symbolic link (not what it points to) or a
/// whole directory tree — first giving its owner write and search permission on every
/// directory in it (a copied cache may hold read-only ones, which would stop the removal
/// half way). Nothing there is fine.
pub fn remove_entry(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return ctx("read", path, Err(e)),
    };
    if !meta.is_dir() {
        return remove_file(path);
    }
    for entry in walkdir::WalkDir::new(path).follow_links(false) {
        let Ok(entry) = entry else { continue };
        let Ok(m) = entry.metadata() else { continue };
        if m.is_dir() && m.permissions().mode() & 0o300 != 0o300 {
            let mode = m.permissions().mode() | 0o700;
            let _ = fs::set_permissions(entry.path(), fs::Permissions::from_mode(mode));
        }
    }
    remove_dir_all(path)
}

/// Removes a directory only when it is empty; `Ok(false)` when it was not empty or absent.
pub fn remove_empty_dir(path: &Path) -> bool {
    fs::remove_dir(path).is_ok()
}

pub fn remove_file(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => ctx("remove", path, r),
    }
}

/// Copies the directory `from` to `to` (which must not exist), made under a temporary
/// name beside it and renamed into place, so `to` is either whole or absent: files with
/// their permission bits, symbolic links as links (never followed), directories; anything
/// else (a fifo, a socket) is left out. For small trees (a worktree's private git
/// directory), on one thread.
pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    use std::os::unix::fs::{PermissionsExt, symlink};
    fn copy(from: &Path, to: &Path) -> io::Result<()> {
        fs::create_dir(to)?;
        for e in fs::read_dir(from)? {
            let e = e?;
            let (src, dst) = (e.path(), to.join(e.file_name()));
            let kind = e.file_type()?;
            if kind.is_dir() {
                copy(&src, &dst)?;
            } else if kind.is_symlink() {
                symlink(fs::read_link(&src)?, &dst)?;
            } else if kind.is_file() {
                fs::copy(&src, &dst)?;
            }
        }
        let mode = fs::symlink_metadata(from)?.permissions().mode();
        fs::set_permissions(to, fs::Permissions::from_mode(mode))
    }
    let name = to
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = to.with_file_name(format!(".{name}.copy-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let made = copy(from, &tmp).and_then(|()| fs::rename(&tmp, to));
    if made.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    ctx("copy", from, made)
}

pub fn rename(from: &Path, to: &Path) -> Result<()> {
    ctx("rename", from, fs::rename(from, to))
}

/// Opens (creating if needed) a file for locking; never truncates it.
pub fn open_lock_file(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    ctx(
        "open",
        path,
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path),
    )
}

/// Moves the process out of `dir` (to its parent) when its current directory is inside it,
/// before `dir` is removed.
///
/// gix resolves every repository it opens against the process's current directory and
/// fails once that directory is gone, which happens when a command run from inside a
/// workspace deletes it (`gw create --replace`, `gw delete` of several names).
pub fn step_out_of(dir: &Path) {
    let Some(parent) = dir.parent() else { return };
    let inside = match std::env::current_dir() {
        Ok(cwd) => canonical(&cwd).starts_with(canonical(dir)),
        Err(_) => true,
    };
    if inside {
        let _ = std::env::set_current_dir(parent);
    }
}

/// The process's working directory, moved into a directory until this is dropped.
///
/// Reading many files of one tree is cheaper by relative paths: the kernel resolves every
/// path component by component, and an absolute path deep in a home directory is mostly
/// the same leading components again (git, too, works from inside the worktree). The
/// working directory is one per process, so only one `Inside` exists at a time; others
/// wait for it.
pub struct Inside {
    previous: PathBuf,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl Inside {
    /// Moves into `dir`; `None` (and nothing changed) when that is not possible.
    pub fn enter(dir: &Path) -> Option<Inside> {
        static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let previous = std::env::current_dir().ok()?;
        std::env::set_current_dir(dir).ok()?;
        Some(Inside {
            previous,
            _turn: turn,
        })
    }

    /// `path` relative to the directory moved into, when it is inside it.
    pub fn relative<'p>(&self, dir: &Path, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(dir)
            .ok()
            .filter(|rel| !rel.as_os_str().is_empty())
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        let _ = std::env::set_current_dir(&self.previous);
    }
}

/// Whether some process has the file at `path` open: `Some(true)` or `Some(false)` where
/// the system says (Linux: every process's open files, in `/proc`), `None` where it cannot
/// be told. A lock file no process has open is one its writer left behind when it died.
pub fn open_by_any_process(path: &Path) -> Option<bool> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let want = canonical(path);
    let procs = fs::read_dir("/proc").ok()?;
    for p in procs.flatten() {
        let name = p.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if fs::read_link(fd.path()).is_ok_and(|t| t == want) {
                return Some(true);
            }
        }
    }
    Some(false)
}

/// Serialises a path as text, with any bytes that are not UTF-8 replaced (`U+FFFD`): for
/// paths grove shows but did not make, such as the current directory.
pub fn serialize_lossy<S: serde::Serializer>(
    path: &Path,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

/// The SHA-256 of `bytes`, in lowercase hex: how grove names contents (plans, backups,
/// blueprints) and lock files.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    to_hex(&Sha256::digest(bytes))
}

/// The SHA-256 of a file's content (read in blocks, so a large file is not held in
/// memory), in lowercase hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut f = ctx("open", path, File::open(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = ctx("read", path, f.read(&mut buf))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(to_hex(&h.finalize()))
}

/// Bytes as lowercase hex digits.
pub fn to_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `path` with every symlink resolved even when it does not exist (yet, or any more): the
/// longest existing ancestor canonicalised, the rest appended. `None` for a relative path
/// or one with `..`.
pub fn canonical_lenient(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        return None;
    }
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = fs::canonicalize(existing) {
            let mut out = c;
            out.extend(rest.iter().rev());
            return Some(out);
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

/// Resolves symlinks; falls back to the path itself when it cannot be resolved.
pub fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether `path` exists without following a final symlink.
pub fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

pub fn is_dir(path: &Path) -> bool {
    path.is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn large_and_small_texts_read_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        assert!(read_text_optional(&path).unwrap().is_none());
        // Either side of the huge-page threshold, and across a page boundary, with
        // multi-byte characters.
        for len in [
            0,
            10,
            HUGE_READ - 1,
            HUGE_READ,
            HUGE_PAGE + 3,
            3 * HUGE_PAGE,
        ] {
            let text: String = "ab\u{e9}\u{1F333}\n".chars().cycle().take(len).collect();
            write_atomic(&path, text.as_bytes()).unwrap();
            let read = read_text_optional(&path).unwrap().unwrap();
            assert_eq!(read.as_str(), text, "{len} characters");
            assert_eq!(read_optional(&path).unwrap().unwrap(), text);
        }
        let mut bad = vec![b'a'; HUGE_READ + 1];
        bad[HUGE_READ] = 0xff;
        write_atomic(&path, &bad).unwrap();
        let e = read_text_optional(&path).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
    }

    #[test]
    fn atomic_write_replaces_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/f.json");
        write_atomic(&p, b"one").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(read(&p).unwrap(), "two");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let leftovers: Vec<_> = fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn sha256_of_bytes_and_of_a_file_agree() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        write_atomic(&p, &big).unwrap();
        assert_eq!(sha256_file(&p).unwrap(), sha256_hex(&big));
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_file(&dir.path().join("none")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_alike_by_every_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        write_atomic(&small, b"[{\"name\":\"\xff\"}]").unwrap();
        let mut big = vec![b' '; HUGE_READ + 10];
        big[HUGE_READ + 2] = 0xff;
        let big_path = dir.path().join("big");
        write_atomic(&big_path, &big).unwrap();
        for path in [&small, &big_path] {
            let text = read_text_optional(path).unwrap_err().to_string();
            let plain = read_optional(path).unwrap_err().to_string();
            assert_eq!(text, plain);
            assert!(text.contains("invalid utf-8 sequence"), "{text}");
        }
    }

    #[test]
    fn errors_name_the_path() {
        let err = read(Path::new("/nonexistent/grove/file")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/grove/file"), "{err}");
        assert_eq!(
            read_optional(Path::new("/nonexistent/grove/file")).unwrap(),
            None
        );
    }
}
