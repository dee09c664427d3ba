//! The worktree against the index, as `git status` compares them, in one pass per
//! directory: the directory is opened once (through its parents, never through a
//! symbolic link), listed once, and each tracked file in it is `lstat`ed relative to it,
//! so the kernel resolves one path component per file instead of the worktree's whole
//! path. The files listed that the index does not hold are the untracked candidates,
//! matched against the ignore rules ([`ignore`]: gix's patterns, the files read here).
//!
//! Written here rather than taken from gix's status because gix's costs 2.5 times git's
//! user CPU on a repository of 100,000 files (a path stack rebuilt per entry, a binary
//! search of the whole index per file listed), which made `gw status` slower than git.
//!
//! The rules are git's (`ie_match_stat`, `ie_modified`, `treat_path`):
//! - stat data equal (mtime, ctime unless `core.trustctime=false`, inode, uid and gid
//!   unless `core.checkStat=minimal`, size, kind and executable bit unless
//!   `core.fileMode=false`) and the file not racy (modified no earlier than the index's
//!   second) → unchanged, without reading it;
//! - a different size (when the entry's size is known) or kind → changed, without reading;
//! - otherwise the file is hashed as `git add` would store it (clean filters, line ends),
//!   and compared with the entry's blob;
//! - a missing file, or one under a directory that is now a file or a symbolic link →
//!   deleted;
//! - untracked: a directory holding no tracked file is `dir/` when it holds an untracked
//!   file that is not ignored (or is a repository of its own, as git judges one), ignored
//!   as `dir/` when it holds only ignored files, and nothing when empty; `.git` is never
//!   looked into; anything but a regular file, a symbolic link or a directory is passed
//!   over.
//!
//! What cannot be read is an answer, not an error, as it is to git: a directory that cannot
//! be opened or listed, a file that cannot be `lstat`ed or read, a rules file that cannot
//! be read are reported unreadable (git warns) and left out of the comparison as git
//! leaves them out — a file git would have to read and cannot is modified, as git says.
//! The caller judges a worktree with anything unreadable as holding work.
//!
//! Conflicted, skip-worktree and assume-unchanged entries are not compared (git does not
//! either). Submodules, a case-insensitive worktree and `core.symlinks=false` are left to
//! git by the caller.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};

use gix::index::entry::Flags;
use rustix::fs::{AtFlags, FileType, OFlags};
use rustix::io::Errno;

use super::Error;
use super::status::{Ask, Untracked};

mod compare;
mod filters;
mod ignore;
mod names;
pub(super) mod refresh;
mod untracked;

use compare::absent;
#[doc(hidden)]
pub use ignore::ignored_by_rules;
use names::{Dir, Listing, Tracked, directories, key, order};
pub use refresh::fuzz_index;

/// What the comparison found.
#[derive(Default)]
pub(super) struct Found {
    /// Changed tracked files: index position and git's `Y` letter (`M`, `D`, `T`, `A` for
    /// an intent-to-add file that exists), or `U` for a conflict.
    pub changed: Vec<(usize, char)>,
    /// Untracked files, and directories (ending in `/`) collapsed as git collapses them.
    pub untracked: Vec<String>,
    /// Ignored files and directories (ending in `/`), when asked for.
    pub ignored: Vec<String>,
    /// Stat data to write back to the index: entries found unchanged whose files were last
    /// changed long enough ago ([`refresh::fresh_enough`]).
    pub updates: Vec<(usize, gix::index::entry::Stat)>,
    /// Entries whose files have another size than they record: modified to git without
    /// being read, and left so when the index is written back (never smudged).
    pub resized: Vec<usize>,
    /// Paths that could not be read (directories ending in `/`) and why.
    pub unreadable: Vec<(String, String)>,
    /// What else git would warn about (a clean filter that failed).
    pub warnings: Vec<String>,
}

impl Found {
    fn extend(&mut self, other: Found) {
        self.changed.extend(other.changed);
        self.untracked.extend(other.untracked);
        self.ignored.extend(other.ignored);
        self.updates.extend(other.updates);
        self.resized.extend(other.resized);
        self.unreadable.extend(other.unreadable);
        self.warnings.extend(other.warnings);
    }
}

/// Compares the worktree of `repo` with `index` on up to `threads` threads (`sync`, the
/// same repository, gives the threads beside the caller's theirs).
pub(super) fn scan(
    repo: &gix::Repository,
    sync: Option<&gix::ThreadSafeRepository>,
    index: &gix::index::File,
    ask: Ask,
    threads: usize,
) -> Result<Found, Error> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::read(repo.git_dir(), "the repository has no worktree"))?;
    let fail = |e: &dyn std::fmt::Display| Error::read(workdir, e);
    let root = rustix::fs::open(
        workdir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| fail(&e))?;
    let cfg = repo.config_snapshot();
    let minimal = cfg
        .string("core.checkStat")
        .is_some_and(|v| v.to_string().eq_ignore_ascii_case("minimal"));
    let rules = Rules {
        file_mode: cfg.boolean("core.fileMode") != Some(false),
        ctime: !minimal && cfg.boolean("core.trustctime") != Some(false),
        ids: !minimal,
        index_secs: index.timestamp().unix_seconds(),
        started: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
    };
    let dirs = directories(index);
    let threads = match sync {
        Some(_) => threads.clamp(1, dirs.len().max(1)),
        None => 1,
    };
    let shared = Shared {
        sync: sync.filter(|_| threads > 1),
        index,
        dirs: &dirs,
        ask,
        rules,
        next: AtomicUsize::new(0),
    };
    let work = |repo: &gix::Repository| -> Result<Found, String> {
        let mut w = Worker::new(&shared, root.as_fd(), repo);
        while let Some(dir) = shared.dirs.get(shared.next.fetch_add(1, Ordering::Relaxed)) {
            w.dir(dir)?;
        }
        Ok(w.found)
    };
    let results: Vec<Result<Found, String>> = match shared.sync {
        None => vec![work(repo)],
        Some(sync) => std::thread::scope(|s| {
            let others: Vec<_> = (1..threads)
                .map(|_| s.spawn(|| work(&sync.to_thread_local())))
                .collect();
            let mut all = vec![work(repo)];
            for t in others {
                all.push(
                    t.join()
                        .unwrap_or_else(|_| Err("a comparison thread failed".into())),
                );
            }
            all
        }),
    };
    let mut found = Found::default();
    for r in results {
        found.extend(r.map_err(|e| fail(&e))?);
    }
    // Each thread reads the global rules files: one report of each is enough.
    found.unreadable.sort();
    found.unreadable.dedup();
    found.warnings.sort();
    found.warnings.dedup();
    Ok(found)
}

/// What the stat comparison looks at (git's `core.fileMode`, `core.trustctime`,
/// `core.checkStat`), the index's time for the racy-file rule, and when the status began
/// (what may be written back, [`refresh::fresh_enough`]).
#[derive(Clone, Copy)]
struct Rules {
    file_mode: bool,
    ctime: bool,
    ids: bool,
    index_secs: i64,
    started: i64,
}

struct Shared<'a> {
    /// The repository for threads beside the caller's, when there are any.
    sync: Option<&'a gix::ThreadSafeRepository>,
    index: &'a gix::index::File,
    dirs: &'a [Dir],
    ask: Ask,
    rules: Rules,
    /// The next directory for a thread to take.
    next: AtomicUsize,
}

/// One thread's state: the directories it has open, its ignore rules and filters (made
/// when first needed), and what it found.
struct Worker<'r> {
    shared: &'r Shared<'r>,
    root: BorrowedFd<'r>,
    repo: &'r gix::Repository,
    /// Open directories from the worktree down to the last one compared: (path, fd).
    open: Vec<(Vec<u8>, OwnedFd)>,
    ignores: Option<ignore::Ignores>,
    filters: Option<filters::Filters>,
    found: Found,
}

/// Whether each of `paths` — names the index does not hold, relative to the worktree of
/// `repo`, each with whether it is a directory — is ignored, by the rules the scan applies:
/// the `.gitignore` of every directory above it (opened from the worktree down, never
/// through a symbolic link), `info/exclude` and `core.excludesFile`. A directory above it
/// that cannot be opened contributes no rules, as in the scan.
pub(super) fn ignored(
    repo: &gix::Repository,
    index: &gix::index::File,
    paths: &[(&[u8], bool)],
) -> Result<Vec<bool>, Error> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::read(repo.git_dir(), "the repository has no worktree"))?;
    let root = rustix::fs::open(
        workdir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Error::read(workdir, e))?;
    let mut unreadable = Vec::new();
    let mut out = Vec::with_capacity(paths.len());
    for (path, is_dir) in paths {
        let mut rules = ignore::Ignores::new(repo, index, &mut unreadable);
        rules.enter(repo, b"", Some(root.as_fd()), &mut unreadable);
        // The directory above, open; `None` once one could not be opened (nor can those
        // below it).
        let mut above: Option<OwnedFd> = None;
        for (depth, (i, _)) in path
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .enumerate()
        {
            let dir = &path[..i];
            let name = &dir[dir.iter().rposition(|b| *b == b'/').map_or(0, |p| p + 1)..];
            let fd = match (&above, depth) {
                (_, 0) => open_dir(root.as_fd(), name).ok(),
                (Some(at), _) => open_dir(at.as_fd(), name).ok(),
                (None, _) => None,
            };
            rules.enter(repo, dir, fd.as_ref().map(|fd| fd.as_fd()), &mut unreadable);
            above = fd;
        }
        out.push(rules.excluded(path, *is_dir));
    }
    Ok(out)
}

/// A missing path, or one under something that is not a directory (or is a symbolic link).
fn is_gone(e: Errno) -> bool {
    e == Errno::NOENT || e == Errno::NOTDIR || e == Errno::LOOP
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(dir.len() + 1 + name.len());
    if !dir.is_empty() {
        p.extend_from_slice(dir);
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

/// Opens the directory `name` in the directory open at `at`, never through a symbolic link.
/// A directory that may be searched but not listed (mode 111) is still opened, for what is
/// in it: listing it then fails, and says so.
fn open_dir(at: BorrowedFd<'_>, name: &[u8]) -> Result<OwnedFd, Errno> {
    let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(at, name, flags | OFlags::RDONLY, rustix::fs::Mode::empty()) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        Err(Errno::ACCESS) => {
            rustix::fs::openat(at, name, flags | OFlags::PATH, rustix::fs::Mode::empty())
        }
        r => r,
    }
}

/// `path` as text, with a trailing `/` for a directory.
fn text(path: &[u8], dir: bool) -> String {
    let mut s = String::from_utf8_lossy(path).into_owned();
    if dir {
        s.push('/');
    }
    s
}

/// The kind of `name` in the directory open at `fd`, asking the file system when the
/// listing did not say.
fn kind_of(fd: BorrowedFd<'_>, name: &[u8], listed: FileType) -> Option<FileType> {
    if listed != FileType::Unknown {
        return Some(listed);
    }
    rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|st| FileType::from_raw_mode(st.st_mode as _))
}

impl<'r> Worker<'r> {
    fn new(shared: &'r Shared<'r>, root: BorrowedFd<'r>, repo: &'r gix::Repository) -> Self {
        Worker {
            shared,
            root,
            repo,
            open: Vec::new(),
            ignores: None,
            filters: None,
            found: Found::default(),
        }
    }

    /// Opens the directory at `path` one component at a time from the deepest directory
    /// already open above it, never following a symbolic link; it is then the last of
    /// [`Worker::open`] (or the worktree itself, for an empty path).
    fn open(&mut self, path: &[u8]) -> Result<(), Errno> {
        while let Some((p, _)) = self.open.last() {
            if path == p.as_slice() || (path.starts_with(p) && path[p.len()] == b'/') {
                break;
            }
            self.open.pop();
        }
        loop {
            let done = self.open.last().map_or(0, |(p, _)| p.len());
            if done == path.len() {
                return Ok(());
            }
            let start = if done == 0 { 0 } else { done + 1 };
            let end = path[start..]
                .iter()
                .position(|b| *b == b'/')
                .map_or(path.len(), |n| start + n);
            let at = self.open.last().map_or(self.root, |(_, fd)| fd.as_fd());
            let fd = open_dir(at, &path[start..end])?;
            self.open.push((path[..end].to_vec(), fd));
        }
    }

    /// Makes `dir` (open at `fd`) the innermost directory of the ignore rules, entering the
    /// directories above it that are not (their descriptors are in [`Worker::open`]).
    fn rules_at(&mut self, dir: &[u8], fd: BorrowedFd<'_>) {
        let Worker {
            ignores,
            repo,
            shared,
            found,
            open,
            root,
            ..
        } = self;
        let ig = ignores
            .get_or_insert_with(|| ignore::Ignores::new(repo, shared.index, &mut found.unreadable));
        ig.leave_to(dir);
        if ig.at(dir) {
            return;
        }
        loop {
            let next = match ig.innermost() {
                None => &dir[..0],
                Some(above) => {
                    let start = if above.is_empty() { 0 } else { above.len() + 1 };
                    let end = dir[start..]
                        .iter()
                        .position(|b| *b == b'/')
                        .map_or(dir.len(), |n| start + n);
                    &dir[..end]
                }
            };
            let at = if next == dir {
                Some(fd)
            } else if next.is_empty() {
                Some(*root)
            } else {
                open.iter()
                    .find(|(p, _)| p.as_slice() == next)
                    .map(|(_, fd)| fd.as_fd())
            };
            ig.enter(repo, next, at, &mut found.unreadable);
            if next == dir {
                return;
            }
        }
    }

    /// Whether `name`, in the directory `dir` open at `fd` (a directory itself if
    /// `is_dir`), is ignored.
    fn excluded(&mut self, dir: &[u8], fd: BorrowedFd<'_>, path: &[u8], is_dir: bool) -> bool {
        self.rules_at(dir, fd);
        self.ignores
            .as_ref()
            .is_some_and(|ig| ig.excluded(path, is_dir))
    }

    /// Records `path` (a directory if `dir`) as unreadable.
    fn unreadable(&mut self, path: &[u8], dir: bool, why: impl std::fmt::Display) {
        self.found
            .unreadable
            .push((text(path, dir), why.to_string()));
    }

    fn dir(&mut self, dir: &Dir) -> Result<(), String> {
        let ask = self.shared.ask;
        let walk = ask.untracked != Untracked::No || ask.ignored;
        let index = self.shared.index;
        let entries = index.entries();
        match self.open(&dir.path) {
            Ok(()) => {}
            Err(e) if is_gone(e) => {
                // Gone, or no longer a directory: every file the index holds in it is
                // deleted (those further down are their own directories' to report).
                for &i in &dir.files {
                    if let Some(y) = absent(&entries[i]) {
                        self.found.changed.push((i, y));
                    }
                }
                return Ok(());
            }
            Err(e) => {
                // git cannot `lstat` what is in it either: it warns, and reports nothing.
                self.unreadable(&dir.path, true, e);
                return Ok(());
            }
        }
        // Held here while the directory is compared, and put back for its subdirectories.
        let current = if dir.path.is_empty() {
            None
        } else {
            self.open.pop()
        };
        let fd = current.as_ref().map_or(self.root, |(_, fd)| fd.as_fd());
        // git lists nothing below a directory it could not list (it warns of that one): a
        // directory reached through one is compared for its tracked files alone (seed
        // 20271200).
        let walk = walk && !(current.is_some() && self.below_unlistable());
        self.compare_dir(dir, fd, walk)?;
        self.open.extend(current);
        Ok(())
    }

    /// [`Worker::dir`] once the directory is open at `fd`.
    fn compare_dir(&mut self, dir: &Dir, fd: BorrowedFd<'_>, walk: bool) -> Result<(), String> {
        let ask = self.shared.ask;
        let index = self.shared.index;
        let entries = index.entries();
        let listing = if walk {
            match Listing::read(fd) {
                Ok(l) => Some(l),
                Err(e) => {
                    // Its tracked files are still compared, one `lstat` each, as git does;
                    // what else it holds is unknown.
                    self.unreadable(&dir.path, true, e);
                    None
                }
            }
        } else {
            None
        };
        // The files come in the order of their names, as the listing is sorted: one pass
        // over both says which files are there.
        let mut at = 0;
        // The path of the last conflicted entry (a conflict holds up to three, one a stage).
        let mut conflicted: Option<&[u8]> = None;
        for &i in &dir.files {
            let entry = &entries[i];
            let conflict = entry.stage_raw() != 0;
            if !conflict
                && entry
                    .flags
                    .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
            {
                continue;
            }
            let path: &[u8] = entry.path(index).as_ref();
            let name = if dir.path.is_empty() {
                path
            } else {
                &path[dir.path.len() + 1..]
            };
            let listed = listing.as_ref().is_none_or(|l| {
                let k = key(name);
                while l
                    .names
                    .get(at)
                    .is_some_and(|n| order((n.key, l.name(n)), (k, name)).is_lt())
                {
                    at += 1;
                }
                l.names
                    .get(at)
                    .is_some_and(|n| n.key == k && l.name(n) == name)
            });
            // One `lstat` a file, as git: also for a file missing from the listing, whose
            // absence it confirms (in a directory that may be listed but not searched, git
            // cannot tell a file from none, and warns).
            let look = || rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW);
            if conflict {
                // Its letters come from the index's stages. git still looks at the file,
                // and warns when it cannot: what it holds is then unknown, as here.
                self.found.changed.push((i, 'U'));
                if conflicted != Some(path)
                    && let Err(e) = look()
                    && !is_gone(e)
                {
                    self.unreadable(path, false, e);
                }
                conflicted = Some(path);
                continue;
            }
            let stat = match look() {
                Ok(st) if listed => Some(st),
                // Not listed: gone (what a name written otherwise finds is not this file).
                Ok(_) => None,
                Err(e) if is_gone(e) => None,
                Err(e) => {
                    self.unreadable(path, false, e);
                    continue;
                }
            };
            let Some(stat) = stat else {
                if let Some(y) = absent(entry) {
                    self.found.changed.push((i, y));
                }
                continue;
            };
            self.compare(i, entry, path, &stat, fd, name)?;
        }
        let Some(listing) = listing else {
            return Ok(());
        };
        let tracked_name = |t: &Tracked| &entries[t.entry].path(index)[t.start..t.end];
        let mut at = 0;
        for n in &listing.names {
            let name = listing.name(n);
            let kind = kind_of(fd, name, n.kind);
            let is_dir = kind == Some(FileType::Directory);
            while dir
                .names
                .get(at)
                .is_some_and(|t| order((t.key, tracked_name(t)), (n.key, name)).is_lt())
            {
                at += 1;
            }
            // A directory where the index holds a file is shown only file by file (git
            // reports the file deleted and, asked for every untracked file, what the
            // directory holds; it does not collapse it to `dir/`). A file where the index
            // holds a directory is untracked.
            let collapse = ask.untracked != Untracked::All;
            let same_name = || {
                dir.names[at..]
                    .iter()
                    .take_while(|t| t.key == n.key && tracked_name(t) == name)
            };
            if same_name().any(|t| t.dir == is_dir) {
                continue;
            }
            if collapse && same_name().any(|t| !t.dir) {
                // git still looks into it (and warns of what it cannot read) though it
                // shows nothing of it: what it could not read is reported all the same.
                if is_dir && ask.untracked == Untracked::Normal {
                    self.look_into_unshown(fd, name, &join(&dir.path, name))?;
                }
                continue;
            }
            // Asked for every untracked file, a repository where the index holds a file is
            // not looked into, nor shown (git reports the file changed in kind, or deleted).
            if is_dir
                && dir.names[at..]
                    .iter()
                    .take_while(|t| t.key == n.key && tracked_name(t) == name)
                    .any(|t| !t.dir)
                && open_dir(fd, name).is_ok_and(|sub| self.is_nested_repository(sub.as_fd()))
            {
                continue;
            }
            if !matches!(
                kind,
                Some(FileType::RegularFile | FileType::Symlink | FileType::Directory)
            ) {
                continue;
            }
            let path = join(&dir.path, name);
            let ignored = self.excluded(&dir.path, fd, &path, is_dir);
            self.untracked(fd, name, path, is_dir, ignored)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
