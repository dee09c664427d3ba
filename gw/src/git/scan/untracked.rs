//! The names the index does not hold: an untracked file, or an untracked directory looked
//! into as git looks into one (collapsed to `dir/`, ignored as a whole, or a repository of
//! its own).

use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{AtFlags, FileType, OFlags};
use rustix::io::Errno;

use super::names::Listing;
use super::{Worker, is_gone, join, kind_of, open_dir, text};
use crate::git::status::Untracked;

/// What an untracked directory holds.
enum Inside {
    Nothing,
    /// Only ignored files.
    OnlyIgnored,
    /// An untracked file, or a repository: the ignored files beside them.
    Untracked(Vec<String>),
}

impl Worker<'_> {
    /// An untracked file or directory `path` (`name` in the directory open at `at`).
    pub(super) fn untracked(
        &mut self,
        at: BorrowedFd<'_>,
        name: &[u8],
        path: Vec<u8>,
        is_dir: bool,
        ignored: bool,
    ) -> Result<(), String> {
        let ask = self.shared.ask;
        if ignored {
            // git lists an ignored directory only when it holds a file (it looks, and one
            // it cannot open it leaves out).
            if ask.ignored
                && (!is_dir || open_dir(at, name).is_ok_and(|fd| self.holds_a_file(fd.as_fd())))
            {
                self.found.ignored.push(text(&path, is_dir));
            }
            return Ok(());
        }
        if !is_dir {
            if ask.untracked != Untracked::No {
                self.found.untracked.push(text(&path, false));
            }
            return Ok(());
        }
        let fd = match open_dir(at, name) {
            Ok(fd) => fd,
            Err(e) if is_gone(e) => return Ok(()),
            Err(e) => {
                self.unreadable(&path, true, e);
                return Ok(());
            }
        };
        match self.inside(fd.as_fd(), &path)? {
            Inside::Nothing => {}
            Inside::OnlyIgnored => {
                if ask.ignored {
                    self.found.ignored.push(text(&path, true));
                }
            }
            Inside::Untracked(ignored) => {
                if ask.untracked == Untracked::Normal {
                    self.found.untracked.push(text(&path, true));
                }
                if ask.ignored {
                    self.found.ignored.extend(ignored);
                }
            }
        }
        Ok(())
    }

    /// What the untracked directory `path`, open at `fd`, holds. With every untracked file
    /// asked for, each is listed as found.
    fn inside(&mut self, fd: BorrowedFd<'_>, path: &[u8]) -> Result<Inside, String> {
        let ask = self.shared.ask;
        let every = ask.untracked == Untracked::All;
        let listing = match Listing::read(fd) {
            Ok(l) => l,
            Err(e) => {
                // git warns that it could not open it, and shows nothing of it.
                self.unreadable(path, true, e);
                return Ok(Inside::Nothing);
            }
        };
        if listing.git && self.is_nested_repository(fd) {
            // A repository of its own: git shows it as an untracked directory, unread.
            if every {
                self.found
                    .untracked
                    .push(format!("{}/", String::from_utf8_lossy(path)));
            }
            return Ok(Inside::Untracked(Vec::new()));
        }
        let mut untracked = false;
        let mut ignored = Vec::new();
        // In the listing's order, as git: it stops at the first untracked file, and what
        // it could not open before that it warns of (seed 20270672).
        for n in listing.as_listed() {
            let name = listing.name(n);
            let kind = kind_of(fd, name, n.kind);
            let is_dir = kind == Some(FileType::Directory);
            if !matches!(
                kind,
                Some(FileType::RegularFile | FileType::Symlink | FileType::Directory)
            ) {
                continue;
            }
            let child = join(path, name);
            let text = String::from_utf8_lossy(&child).into_owned();
            if self.excluded(path, fd, &child, is_dir) {
                // As at the top: an ignored directory counts only when it holds a file.
                if !is_dir {
                    ignored.push(text);
                } else if open_dir(fd, name).is_ok_and(|sub| self.holds_a_file(sub.as_fd())) {
                    ignored.push(text + "/");
                }
                continue;
            }
            if !is_dir {
                untracked = true;
                if every {
                    self.found.untracked.push(text);
                } else if !ask.ignored {
                    // Enough to show the directory.
                    return Ok(Inside::Untracked(Vec::new()));
                }
                continue;
            }
            let sub = match open_dir(fd, name) {
                Ok(sub) => sub,
                Err(e) if is_gone(e) => continue,
                Err(e) => {
                    self.unreadable(&child, true, e);
                    continue;
                }
            };
            match self.inside(sub.as_fd(), &child)? {
                Inside::Nothing => {}
                Inside::OnlyIgnored => ignored.push(text + "/"),
                Inside::Untracked(more) => {
                    untracked = true;
                    ignored.extend(more);
                    if !every && !ask.ignored {
                        return Ok(Inside::Untracked(Vec::new()));
                    }
                }
            }
        }
        Ok(if untracked {
            Inside::Untracked(ignored)
        } else if ignored.is_empty() {
            Inside::Nothing
        } else {
            Inside::OnlyIgnored
        })
    }
}

impl Worker<'_> {
    /// Whether a directory above the one being compared (the worktree, or one in
    /// [`Worker::open`]) could be opened only to be searched through, not listed
    /// ([`super::open_dir`]).
    pub(super) fn below_unlistable(&self) -> bool {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            std::iter::once(self.root)
                .chain(self.open.iter().map(|(_, fd)| fd.as_fd()))
                .any(|fd| rustix::fs::fcntl_getfl(fd).is_ok_and(|f| f.contains(OFlags::PATH)))
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        false
    }

    /// Looks into the untracked directory `path` (`name` in the directory open at `at`)
    /// that git reads but does not show, for what it cannot read.
    pub(super) fn look_into_unshown(
        &mut self,
        at: BorrowedFd<'_>,
        name: &[u8],
        path: &[u8],
    ) -> Result<(), String> {
        match open_dir(at, name) {
            Ok(fd) if !self.is_nested_repository(fd.as_fd()) => {
                // What it holds is not shown; only what could not be read counts.
                self.inside(fd.as_fd(), path)?;
            }
            Ok(_) => {}
            Err(e) if is_gone(e) => {}
            Err(e) => self.unreadable(path, true, e),
        }
        Ok(())
    }

    /// Whether the directory open at `fd` is a repository other than this one
    /// ([`is_repository`]): git does not count a `.git` that is, links resolved, this
    /// repository's own git directory (`treat_directory`'s `real_pathdup` comparison); the
    /// directory is looked into then like any other.
    pub(super) fn is_nested_repository(&self, fd: BorrowedFd<'_>) -> bool {
        if !is_repository(fd) {
            return false;
        }
        let same = |a: &rustix::fs::Stat, b: &rustix::fs::Stat| {
            a.st_dev == b.st_dev && a.st_ino == b.st_ino
        };
        match (
            rustix::fs::statat(fd, ".git", AtFlags::empty()),
            rustix::fs::stat(self.repo.git_dir()),
        ) {
            (Ok(theirs), Ok(ours)) => !same(&theirs, &ours),
            _ => true,
        }
    }

    /// Whether the directory open at `fd`, or one below it, holds a file, a symbolic link
    /// or a repository (what makes git list an ignored directory).
    fn holds_a_file(&self, fd: BorrowedFd<'_>) -> bool {
        let Ok(listing) = Listing::read(fd) else {
            return false;
        };
        (listing.git && self.is_nested_repository(fd))
            || listing.names.iter().any(|n| {
                let name = listing.name(n);
                match kind_of(fd, name, n.kind) {
                    Some(FileType::RegularFile | FileType::Symlink) => true,
                    Some(FileType::Directory) => {
                        open_dir(fd, name).is_ok_and(|sub| self.holds_a_file(sub.as_fd()))
                    }
                    _ => false,
                }
            })
    }
}

/// Whether the directory open at `fd` is a repository of its own, as git judges one
/// (`is_nonbare_repository_dir`): its `.git` is a git directory, or a file naming one
/// (`gitdir: …`). A `.git` that only looks like one — a `HEAD` alone, a link or a gitfile
/// leading nowhere — does not make one: the directory is then looked into like any other
/// (`.git` itself is never listed).
pub(super) fn is_repository(fd: BorrowedFd<'_>) -> bool {
    is_git_directory(fd, b".git") || gitfile_target(fd).is_some_and(|t| is_git_directory(fd, &t))
}

/// git's `is_git_directory`: `path` (relative to `at`, links followed) has a valid `HEAD`,
/// and its common directory (itself, or what its `commondir` names) has `objects` and
/// `refs` that may be searched.
fn is_git_directory(at: BorrowedFd<'_>, path: &[u8]) -> bool {
    let Ok(dir) = rustix::fs::openat(
        at,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) else {
        return false;
    };
    if !valid_head(dir.as_fd()) {
        return false;
    }
    let common = match read_small(dir.as_fd(), b"commondir") {
        Some(text) => {
            let named = trim_line_end(&text).to_vec();
            match rustix::fs::openat(
                dir.as_fd(),
                named.as_slice(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(_) => return false,
            }
        }
        None => dir,
    };
    let searchable = |name: &str| {
        rustix::fs::accessat(
            common.as_fd(),
            name,
            rustix::fs::Access::EXEC_OK,
            AtFlags::empty(),
        )
        .is_ok()
    };
    searchable("objects") && searchable("refs")
}

/// git's `validate_headref`: `HEAD` is a link into `refs/`, a symbolic ref (`ref: refs/…`)
/// or an object id.
fn valid_head(dir: BorrowedFd<'_>) -> bool {
    match rustix::fs::statat(dir, "HEAD", AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode as _) == FileType::Symlink => {
            return rustix::fs::readlinkat(dir, "HEAD", Vec::new())
                .is_ok_and(|t| t.as_bytes().starts_with(b"refs/"));
        }
        Ok(_) => {}
        Err(_) => return false,
    }
    let Some(text) = read_small(dir, b"HEAD") else {
        return false;
    };
    if let Some(rest) = text.strip_prefix(b"ref:") {
        let name = rest.trim_ascii_start();
        return name.starts_with(b"refs/");
    }
    let hex = text.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    hex == 40 || hex == 64
}

/// The git directory a `.git` file in the directory open at `fd` names (`gitdir: PATH`, a
/// relative path being relative to that directory), when it is a regular file (links
/// followed, as git's `stat` follows them).
fn gitfile_target(fd: BorrowedFd<'_>) -> Option<Vec<u8>> {
    let st = rustix::fs::statat(fd, ".git", AtFlags::empty()).ok()?;
    if FileType::from_raw_mode(st.st_mode as _) != FileType::RegularFile {
        return None;
    }
    let text = read_small(fd, b".git")?;
    let path = trim_line_end(text.strip_prefix(b"gitdir: ")?);
    (!path.is_empty()).then(|| path.to_vec())
}

/// `text` without the line ends git strips from a gitfile or `commondir`.
fn trim_line_end(text: &[u8]) -> &[u8] {
    let mut end = text.len();
    while end > 0 && matches!(text[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    &text[..end]
}

/// The first 4 KiB of the regular file `name` (relative to `at`, links followed), opened
/// without blocking (a fifo is no such file).
fn read_small(at: BorrowedFd<'_>, name: &[u8]) -> Option<Vec<u8>> {
    let fd = rustix::fs::openat(
        at,
        name,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode as _) != FileType::RegularFile {
        return None;
    }
    let mut buf = vec![0; 4096];
    let mut n = 0;
    loop {
        match rustix::io::read(&fd, &mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => {
                n += k;
                if n == buf.len() {
                    break;
                }
            }
            Err(Errno::INTR) => {}
            Err(_) => return None,
        }
    }
    buf.truncate(n);
    Some(buf)
}
