//! Copying trees of files from one checkout into another: copy-on-write clones where the
//! file system makes them (`FICLONE` on Linux btrfs and XFS, `clonefile` on macOS APFS,
//! through the `reflink-copy` crate), a plain copy of the bytes otherwise, on several
//! threads either way. Never a hard link: a build in one worktree must not change another's
//! files.
//!
//! What is kept: each regular file's bytes, mode and times; each symbolic link as a link
//! (its target as written, never followed); each directory's mode and times. Not kept:
//! owners (the files are yours), extended attributes, and hard links between files (each
//! becomes a file of its own). FIFOs, sockets and devices are passed over and counted.
//!
//! Safety: everything is opened relative to a directory already open (`openat`), never
//! following a symbolic link, so the walk cannot leave the source tree however its
//! directories are linked; nothing is created over anything that exists (`O_EXCL`,
//! `mkdirat`). A copy that fails or is stopped leaves what it made so far: its caller
//! records the copy before it starts and removes it (through the safety kernel) on undo.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timestamps};
use rustix::io::Errno;

use crate::fsx::Error;

/// What a copy copied (or, measured, would copy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Tally {
    /// Regular files.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Symbolic links (copied as links).
    pub symlinks: u64,
    /// Directories, the copied ones themselves included.
    pub dirs: u64,
    /// FIFOs, sockets and devices, passed over.
    pub skipped: u64,
}

/// What copying did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    pub tally: Tally,
    /// At least one file was a copy-on-write clone (the file system makes them, and they
    /// were used for every file but those it refused).
    pub reflink: bool,
}

/// How a copy runs.
pub struct Options<'a> {
    /// Threads to copy on (at least one).
    pub threads: usize,
    /// Asked between files: `true` stops the copy (it then fails with `Interrupted`).
    pub stop: &'a (dyn Fn() -> bool + Sync),
    /// Told how far the copy is (files and bytes so far), every few hundred files.
    pub progress: &'a (dyn Fn(&Tally) + Sync),
}

/// Copies each of `entries` (paths relative to both roots) from `from` to `to`. Each
/// entry's directory must exist in `to` (and be reached without a symbolic link) and the
/// entry itself must not.
pub fn copy(
    from: &Path,
    to: &Path,
    entries: &[PathBuf],
    opts: &Options<'_>,
) -> Result<Copied, Error> {
    let run = Run::new(from, Some(to), opts);
    run.entries(entries)?;
    Ok(Copied {
        tally: run.tally(),
        reflink: run.reflink.load(Ordering::Relaxed) == YES,
    })
}

/// What copying `entries` from `from` would copy, walking them as [`copy`] does.
pub fn measure(from: &Path, entries: &[PathBuf], threads: usize) -> Result<Tally, Error> {
    let opts = Options {
        threads,
        stop: &|| false,
        progress: &|_| {},
    };
    let run = Run::new(from, None, &opts);
    run.entries(entries)?;
    Ok(run.tally())
}

const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// An entry's directory open on each side (the destination's when copying), and its name.
type Opened = (Arc<OwnedFd>, Option<Arc<OwnedFd>>, CString);

/// One directory to copy: its name in a parent already open on each side.
struct Job {
    from_parent: Arc<OwnedFd>,
    to_parent: Option<Arc<OwnedFd>>,
    name: CString,
    /// Relative to the roots, for errors and for the directory's metadata.
    rel: PathBuf,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    busy: usize,
}

/// A copy (or a measurement, without `to`) in progress.
struct Run<'a> {
    from: &'a Path,
    to: Option<&'a Path>,
    opts: &'a Options<'a>,
    queue: Mutex<Queue>,
    wake: Condvar,
    failed: AtomicBool,
    error: Mutex<Option<Error>>,
    files: AtomicU64,
    bytes: AtomicU64,
    symlinks: AtomicU64,
    dirs: AtomicU64,
    skipped: AtomicU64,
    reflink: AtomicU8,
    /// Each directory made: its path relative to `to`, mode and times, set once everything
    /// in it is there.
    made: Mutex<Vec<(PathBuf, u32, Timestamps)>>,
}

impl<'a> Run<'a> {
    fn new(from: &'a Path, to: Option<&'a Path>, opts: &'a Options<'a>) -> Run<'a> {
        Run {
            from,
            to,
            opts,
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            files: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            symlinks: AtomicU64::new(0),
            dirs: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            reflink: AtomicU8::new(UNKNOWN),
            made: Mutex::new(Vec::new()),
        }
    }

    fn tally(&self) -> Tally {
        Tally {
            files: self.files.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            symlinks: self.symlinks.load(Ordering::Relaxed),
            dirs: self.dirs.load(Ordering::Relaxed),
            skipped: self.skipped.load(Ordering::Relaxed),
        }
    }

    /// Copies every entry, its directories on the run's threads, then gives the
    /// directories made their modes and times (deepest first).
    fn entries(&self, entries: &[PathBuf]) -> Result<(), Error> {
        let from_root = Arc::new(open_root(self.from)?);
        let to_root = self.to.map(open_root).transpose()?.map(Arc::new);
        for rel in entries {
            let (from_parent, to_parent, name) = self.parents(&from_root, to_root.as_ref(), rel)?;
            let kind =
                rustix::fs::statat(&*from_parent, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| self.err("read", rel, e))?;
            match FileType::from_raw_mode(kind.st_mode as _) {
                FileType::Directory => self.push(vec![Job {
                    from_parent,
                    to_parent,
                    name,
                    rel: rel.clone(),
                }]),
                ft => self.leaf(
                    from_parent.as_fd(),
                    to_parent.as_deref().map(AsFd::as_fd),
                    &name,
                    ft,
                    rel,
                )?,
            }
        }
        let threads = self.opts.threads.max(1);
        std::thread::scope(|s| {
            for _ in 1..threads {
                s.spawn(|| self.work());
            }
            self.work();
        });
        if let Some(e) = self.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(e);
        }
        self.finish_dirs()
    }

    /// The directories of `rel` open on each side (reached without a symbolic link), and
    /// its last component.
    fn parents(
        &self,
        from_root: &Arc<OwnedFd>,
        to_root: Option<&Arc<OwnedFd>>,
        rel: &Path,
    ) -> Result<Opened, Error> {
        let mut from = from_root.clone();
        let mut to = to_root.cloned();
        let parts: Vec<&OsStr> = rel.iter().collect();
        let Some((last, dirs)) = parts.split_last() else {
            return Err(self.err("copy", rel, Errno::INVAL));
        };
        for part in dirs {
            let c = cstring(part);
            from = Arc::new(open_dir(from.as_fd(), &c).map_err(|e| self.err("open", rel, e))?);
            if let Some(t) = &to {
                to = Some(Arc::new(
                    open_dir(t.as_fd(), &c).map_err(|e| self.err("open", rel, e))?,
                ));
            }
        }
        Ok((from, to, cstring(last)))
    }

    fn push(&self, jobs: Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.jobs.extend(jobs);
        self.wake.notify_all();
    }

    /// Takes directories off the queue until none is left and no thread is busy (one may
    /// still add some), or the run failed.
    fn work(&self) {
        loop {
            let job = {
                let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    if self.failed.load(Ordering::Relaxed) {
                        q.jobs.clear();
                    }
                    if let Some(job) = q.jobs.pop() {
                        q.busy += 1;
                        break Some(job);
                    }
                    if q.busy == 0 {
                        break None;
                    }
                    q = self.wake.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            let Some(job) = job else {
                self.wake.notify_all();
                return;
            };
            let children = self.dir(&job).unwrap_or_else(|e| {
                self.fail(e);
                Vec::new()
            });
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            q.busy -= 1;
            q.jobs.extend(children);
            self.wake.notify_all();
        }
    }

    fn fail(&self, e: Error) {
        self.failed.store(true, Ordering::Relaxed);
        self.error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(e);
    }

    fn stopped(&self, rel: &Path) -> Result<(), Error> {
        if self.failed.load(Ordering::Relaxed) || (self.opts.stop)() {
            return Err(Error::new(
                "copy",
                &self.shown(rel),
                io::Error::new(io::ErrorKind::Interrupted, "stopped"),
            ));
        }
        Ok(())
    }

    /// Copies the directory `job` names: makes it, copies its files and links, and returns
    /// its subdirectories as jobs.
    fn dir(&self, job: &Job) -> Result<Vec<Job>, Error> {
        self.stopped(&job.rel)?;
        let rel = &job.rel;
        let from =
            open_dir(job.from_parent.as_fd(), &job.name).map_err(|e| self.err("open", rel, e))?;
        let st = rustix::fs::fstat(&from).map_err(|e| self.err("read", rel, e))?;
        let to = match &job.to_parent {
            None => None,
            Some(parent) => {
                rustix::fs::mkdirat(
                    parent.as_fd(),
                    job.name.as_c_str(),
                    Mode::from_raw_mode(0o700),
                )
                .map_err(|e| self.err("create the directory", rel, e))?;
                let fd =
                    open_dir(parent.as_fd(), &job.name).map_err(|e| self.err("open", rel, e))?;
                self.made.lock().unwrap_or_else(|e| e.into_inner()).push((
                    rel.clone(),
                    st.st_mode as u32 & 0o7777,
                    times(&st),
                ));
                Some(fd)
            }
        };
        self.dirs.fetch_add(1, Ordering::Relaxed);
        let from = Arc::new(from);
        let to = to.map(Arc::new);
        let mut children = Vec::new();
        let mut reader = rustix::io::dup(&*from)
            .and_then(rustix::fs::Dir::new)
            .map_err(|e| self.err("list", rel, e))?;
        while let Some(entry) = reader.read() {
            let entry = entry.map_err(|e| self.err("list", rel, e))?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let child = rel.join(OsStr::from_bytes(name.to_bytes()));
            let mut ft = entry.file_type();
            if ft == FileType::Unknown {
                let st = rustix::fs::statat(&*from, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| self.err("read", &child, e))?;
                ft = FileType::from_raw_mode(st.st_mode as _);
            }
            if ft == FileType::Directory {
                children.push(Job {
                    from_parent: from.clone(),
                    to_parent: to.clone(),
                    name: name.to_owned(),
                    rel: child,
                });
            } else {
                self.leaf(
                    from.as_fd(),
                    to.as_deref().map(AsFd::as_fd),
                    name,
                    ft,
                    &child,
                )?;
            }
        }
        Ok(children)
    }

    /// Copies what is not a directory: a file, a symbolic link, or (passed over) anything
    /// else.
    fn leaf(
        &self,
        from: BorrowedFd<'_>,
        to: Option<BorrowedFd<'_>>,
        name: &CStr,
        ft: FileType,
        rel: &Path,
    ) -> Result<(), Error> {
        match ft {
            FileType::RegularFile => self.file(from, to, name, rel),
            FileType::Symlink => {
                if let Some(to) = to {
                    let target = rustix::fs::readlinkat(from, name, Vec::new())
                        .map_err(|e| self.err("read the link", rel, e))?;
                    rustix::fs::symlinkat(target.as_c_str(), to, name)
                        .map_err(|e| self.err("create the link", rel, e))?;
                    let st = rustix::fs::statat(from, name, AtFlags::SYMLINK_NOFOLLOW)
                        .map_err(|e| self.err("read", rel, e))?;
                    // A link's own times; a file system that cannot set them keeps the link.
                    let _ = rustix::fs::utimensat(to, name, &times(&st), AtFlags::SYMLINK_NOFOLLOW);
                }
                self.symlinks.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            _ => {
                self.skipped.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
        }
    }

    fn file(
        &self,
        from: BorrowedFd<'_>,
        to: Option<BorrowedFd<'_>>,
        name: &CStr,
        rel: &Path,
    ) -> Result<(), Error> {
        let size = match to {
            None => {
                let st = rustix::fs::statat(from, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| self.err("read", rel, e))?;
                st.st_size as u64
            }
            Some(to) => self.copy_file(from, to, name, rel)?,
        };
        let files = self.files.fetch_add(1, Ordering::Relaxed) + 1;
        self.bytes.fetch_add(size, Ordering::Relaxed);
        if files.is_multiple_of(256) {
            self.stopped(rel)?;
            (self.opts.progress)(&self.tally());
        }
        Ok(())
    }

    /// Copies the file `name` (its bytes, mode and times) into `to`; returns its size.
    fn copy_file(
        &self,
        from: BorrowedFd<'_>,
        to: BorrowedFd<'_>,
        name: &CStr,
        rel: &Path,
    ) -> Result<u64, Error> {
        let src = rustix::fs::openat(
            from,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| self.err("open", rel, e))?;
        let st = rustix::fs::fstat(&src).map_err(|e| self.err("read", rel, e))?;
        let size = st.st_size as u64;
        {
            let src = std::fs::File::from(src);
            let mode = st.st_mode as u32 & 0o7777;
            let cloned = size > 0
                && self.reflink.load(Ordering::Relaxed) != NO
                && self.clone_file(&src, rel)?;
            if !cloned {
                let dst = rustix::fs::openat(
                    to,
                    name,
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::EXCL
                        | OFlags::NOFOLLOW
                        | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o600),
                )
                .map_err(|e| self.err("create", rel, e))?;
                let mut dst = std::fs::File::from(dst);
                if size > 0 {
                    io::copy(&mut &src, &mut dst)
                        .map_err(|e| Error::new("copy", &self.shown(rel), e))?;
                }
                rustix::fs::fchmod(&dst, Mode::from_raw_mode(mode as _))
                    .map_err(|e| self.err("set the mode of", rel, e))?;
                rustix::fs::futimens(&dst, &times(&st))
                    .map_err(|e| self.err("set the times of", rel, e))?;
            }
        }
        Ok(size)
    }

    /// Clones `src` to `rel` in the destination, when the file system makes clones: `false`
    /// when it does not (then nothing was created, and no later file tries again).
    fn clone_file(&self, src: &std::fs::File, rel: &Path) -> Result<bool, Error> {
        let path = self.shown(rel);
        match reflink_copy::reflink_file_to_path(src, &path) {
            Ok(()) => {
                self.reflink.store(YES, Ordering::Relaxed);
                let st = rustix::fs::fstat(src).map_err(|e| self.err("read", rel, e))?;
                rustix::fs::utimensat(
                    rustix::fs::CWD,
                    &path,
                    &times(&st),
                    AtFlags::SYMLINK_NOFOLLOW,
                )
                .map_err(|e| self.err("set the times of", rel, e))?;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                Err(Error::new("create", &path, e))
            }
            Err(_) => {
                // The first refusal decides for the rest; once clones were made, a file that
                // cannot be cloned (another file system mounted inside) is copied.
                let _ = self.reflink.compare_exchange(
                    UNKNOWN,
                    NO,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                Ok(false)
            }
        }
    }

    /// Gives every directory made its mode and times, deepest first (so that a directory
    /// made read-only does not stop the ones in it).
    fn finish_dirs(&self) -> Result<(), Error> {
        let Some(to) = self.to else {
            return Ok(());
        };
        let mut made = std::mem::take(&mut *self.made.lock().unwrap_or_else(|e| e.into_inner()));
        made.sort_by_key(|(rel, _, _)| std::cmp::Reverse(rel.components().count()));
        for (rel, mode, t) in made {
            let path = to.join(&rel);
            let fd = rustix::fs::open(
                &path,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| self.err("open", &rel, e))?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode as _))
                .map_err(|e| self.err("set the mode of", &rel, e))?;
            rustix::fs::futimens(&fd, &t).map_err(|e| self.err("set the times of", &rel, e))?;
        }
        Ok(())
    }

    /// Where `rel` is, for a message: in the destination, or in the source when measuring.
    fn shown(&self, rel: &Path) -> PathBuf {
        self.to.unwrap_or(self.from).join(rel)
    }

    fn err(&self, op: &'static str, rel: &Path, e: Errno) -> Error {
        Error::new(op, &self.shown(rel), e.into())
    }
}

fn open_root(path: &Path) -> Result<OwnedFd, Error> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::new("open", path, e.into()))
}

/// Opens the directory `name` in the one open at `at`, never through a symbolic link.
fn open_dir(at: BorrowedFd<'_>, name: &CStr) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        at,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn cstring(part: &OsStr) -> CString {
    // A path component read from the file system holds no NUL.
    CString::new(part.as_bytes()).unwrap_or_default()
}

fn times(st: &rustix::fs::Stat) -> Timestamps {
    Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: st.st_atime as _,
            tv_nsec: st.st_atime_nsec as _,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: st.st_mtime as _,
            tv_nsec: st.st_mtime_nsec as _,
        },
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    use super::*;

    fn write(path: &Path, text: &str, mode: u32) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn opts<'a>(stop: &'a (dyn Fn() -> bool + Sync)) -> Options<'a> {
        Options {
            threads: 3,
            stop,
            progress: &|_| {},
        }
    }

    /// Every entry under `root`: (relative path, kind, mode, mtime, content or target).
    fn listing(root: &Path) -> Vec<(PathBuf, String, u32, i64, Vec<u8>)> {
        let mut out: Vec<_> = walkdir::WalkDir::new(root)
            .min_depth(1)
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                let m = std::fs::symlink_metadata(e.path()).unwrap();
                let (kind, data) = if m.file_type().is_symlink() {
                    (
                        "link",
                        std::fs::read_link(e.path())
                            .unwrap()
                            .into_os_string()
                            .into_vec(),
                    )
                } else if m.is_dir() {
                    ("dir", Vec::new())
                } else if m.is_file() {
                    ("file", std::fs::read(e.path()).unwrap())
                } else {
                    ("other", Vec::new())
                };
                let mtime = if kind == "link" { 0 } else { m.mtime() };
                let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
                (rel, kind.to_string(), m.mode() & 0o7777, mtime, data)
            })
            .collect();
        out.sort();
        out
    }

    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn copies_bytes_modes_times_and_links_into_new_files() {
        let tmp = tempfile::tempdir().unwrap();
        let (src, dst) = (tmp.path().join("src"), tmp.path().join("dst"));
        let nm = src.join("node_modules");
        write(&nm.join("a/index.js"), "module.exports = 1;\n", 0o644);
        write(&nm.join("a/bin/run"), "#!/bin/sh\n", 0o755);
        write(&nm.join("b/secret"), "s", 0o600);
        write(&nm.join("b/empty"), "", 0o444);
        for i in 0..700 {
            write(
                &nm.join(format!("c/d{}/f{i}.js", i % 7)),
                &"x".repeat(i),
                0o644,
            );
        }
        std::fs::create_dir_all(nm.join(".bin")).unwrap();
        std::os::unix::fs::symlink("../a/bin/run", nm.join(".bin/run")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", nm.join(".bin/outside")).unwrap();
        // POSIX's `mkfifo`: rustix has no `mknodat` on Apple's systems.
        crate::proc::Cmd::new("mkfifo", &nm)
            .arg("fifo")
            .check()
            .unwrap();
        std::fs::set_permissions(nm.join("b"), std::fs::Permissions::from_mode(0o555)).unwrap();
        write(&src.join(".env.local"), "KEY=1\n", 0o640);
        write(&src.join("pkg/x/dist/out.js"), "out", 0o644);
        std::fs::create_dir_all(dst.join("pkg/x")).unwrap();
        let entries: Vec<PathBuf> = ["node_modules", ".env.local", "pkg/x/dist"]
            .iter()
            .map(PathBuf::from)
            .collect();

        let measured = measure(&src, &entries, 2).unwrap();
        let progress = AtomicU64::new(0);
        let copied = copy(
            &src,
            &dst,
            &entries,
            &Options {
                threads: 3,
                stop: &|| false,
                progress: &|t| progress.store(t.files, Ordering::Relaxed),
            },
        )
        .unwrap();
        assert_eq!(copied.tally, measured);
        assert_eq!(copied.tally.files, 706);
        assert_eq!(copied.tally.symlinks, 2);
        assert_eq!(copied.tally.skipped, 1, "the fifo");
        assert_eq!(
            copied.tally.bytes,
            (0..700).sum::<u64>() + 20 + 10 + 1 + 6 + 3
        );
        assert!(progress.load(Ordering::Relaxed) >= 512, "progress was told");
        let mut want = listing(&src);
        want.retain(|(p, _, _, _, _)| {
            !p.ends_with("fifo") && *p != Path::new("pkg") && *p != Path::new("pkg/x")
        });
        let mut got = listing(&dst);
        got.retain(|(p, _, _, _, _)| *p != Path::new("pkg") && *p != Path::new("pkg/x"));
        assert_eq!(got, want);
        // New files, not links to the old ones: writing one leaves the source alone.
        let (a, b) = (nm.join("a/index.js"), dst.join("node_modules/a/index.js"));
        assert_ne!(
            std::fs::metadata(&a).unwrap().ino(),
            std::fs::metadata(&b).unwrap().ino()
        );
        assert_eq!(std::fs::metadata(&a).unwrap().nlink(), 1);
        std::fs::write(&b, "changed").unwrap();
        assert_eq!(
            std::fs::read_to_string(&a).unwrap(),
            "module.exports = 1;\n"
        );
        std::fs::set_permissions(nm.join("b"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(
            dst.join("node_modules/b"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }

    #[test]
    fn never_over_anything_and_never_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let (src, dst) = (tmp.path().join("src"), tmp.path().join("dst"));
        write(&src.join("target/app"), "new", 0o644);
        write(&dst.join("target/app"), "mine", 0o644);
        let never = || false;
        let e = copy(&src, &dst, &[PathBuf::from("target")], &opts(&never)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert_eq!(
            std::fs::read_to_string(dst.join("target/app")).unwrap(),
            "mine"
        );
        write(&src.join(".env"), "new", 0o644);
        write(&dst.join(".env"), "mine", 0o644);
        let e = copy(&src, &dst, &[PathBuf::from(".env")], &opts(&never)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert_eq!(std::fs::read_to_string(dst.join(".env")).unwrap(), "mine");

        // A directory on the way that is a link, on either side, is not gone through.
        write(&tmp.path().join("elsewhere/dist/x"), "x", 0o644);
        std::fs::create_dir_all(src.join("pkg")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), src.join("pkg/a")).unwrap();
        std::fs::create_dir_all(dst.join("pkg/a")).unwrap();
        assert!(copy(&src, &dst, &[PathBuf::from("pkg/a/dist")], &opts(&never)).is_err());
        assert!(!dst.join("pkg/a/dist").exists());
        write(&src.join("pkg/b/dist/y"), "y", 0o644);
        std::os::unix::fs::symlink(tmp.path().join("out"), dst.join("pkg/b")).unwrap();
        std::fs::create_dir_all(tmp.path().join("out")).unwrap();
        assert!(copy(&src, &dst, &[PathBuf::from("pkg/b/dist")], &opts(&never)).is_err());
        assert!(
            !tmp.path().join("out/dist").exists(),
            "nothing written through the link"
        );
    }

    #[test]
    fn a_stopped_copy_fails_as_interrupted() {
        let tmp = tempfile::tempdir().unwrap();
        let (src, dst) = (tmp.path().join("src"), tmp.path().join("dst"));
        for i in 0..2000 {
            write(&src.join(format!("cache/d{}/f{i}", i % 10)), "x", 0o644);
        }
        std::fs::create_dir_all(&dst).unwrap();
        let stop = || true;
        let e = copy(&src, &dst, &[PathBuf::from("cache")], &opts(&stop)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted, "{e}");
        let copied = walkdir::WalkDir::new(dst.join("cache"))
            .into_iter()
            .filter(|e| e.as_ref().is_ok_and(|e| e.file_type().is_file()))
            .count();
        assert!(copied < 2000, "stopped early: {copied}");
    }
}
