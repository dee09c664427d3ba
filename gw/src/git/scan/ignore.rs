//! The ignore rules, as git applies them to the names the index does not hold: the
//! `.gitignore` of each directory from the worktree down (deeper files first, later lines
//! first), then `info/exclude`, then `core.excludesFile`; a directory a rule excludes
//! excludes everything in it (git does not look for rules, or re-included names, inside).
//!
//! Patterns are parsed and matched by gix; the files are read here, relative to the
//! directory the scan has open, and only when they are regular files: a fifo named
//! `.gitignore` would block git forever, and is no rules file to grove (nor a socket, nor a
//! device). A rules file that cannot be read is left out, as git leaves it out, and
//! reported unreadable (git warns).

use std::os::fd::BorrowedFd;
use std::path::PathBuf;

use gix::bstr::BStr;
use gix::glob::pattern::Case;
use rustix::fs::{FileType, OFlags};
use rustix::io::Errno;

type List = gix::glob::search::pattern::List<gix::ignore::search::Ignore>;

/// The rules in force for one directory and those above it.
pub(super) struct Ignores {
    parse: gix::ignore::search::Ignore,
    /// `core.excludesFile`, then `info/exclude` (later lists win).
    globals: Vec<List>,
    /// From the worktree down to the directory whose names are being matched.
    levels: Vec<Level>,
    /// `.gitignore` files marked skip-worktree in the index, by path: git reads their
    /// staged content when the file is not in the worktree.
    skipped: Vec<(Vec<u8>, gix::ObjectId)>,
}

struct Level {
    dir: Vec<u8>,
    list: Option<List>,
    /// A rule above excludes this directory (and so everything in it).
    excluded: bool,
}

/// A rules file read, or why not.
pub(super) enum Read {
    Absent,
    Found(Vec<u8>),
    /// Could not be read (permission, a symbolic link git will not follow): left out.
    Unreadable(String),
}

/// Reads the rules file `name` in the directory open at `dir`, never opening anything but a
/// regular file for reading, never following a symbolic link.
pub(super) fn read_rules(dir: BorrowedFd<'_>, name: &str) -> Read {
    read_regular(dir, name, false)
}

/// Reads the file `path` (relative to `at`) if it is a regular file: opened without
/// blocking (a fifo with no writer opens at once, and is then passed over), following a
/// symbolic link only when `follow`.
fn read_regular(at: BorrowedFd<'_>, path: impl rustix::path::Arg, follow: bool) -> Read {
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    let fd = match rustix::fs::openat(at, path, flags, rustix::fs::Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT | Errno::NOTDIR) => return Read::Absent,
        // A socket does not open at all.
        Err(Errno::NXIO | Errno::OPNOTSUPP) => return Read::Absent,
        Err(e) => return Read::Unreadable(e.to_string()),
    };
    match rustix::fs::fstat(&fd) {
        Ok(st) if FileType::from_raw_mode(st.st_mode as _) == FileType::RegularFile => {}
        // A directory, a fifo, a device: not a rules file.
        Ok(_) => return Read::Absent,
        Err(e) => return Read::Unreadable(e.to_string()),
    }
    let mut bytes = Vec::new();
    match std::io::Read::read_to_end(&mut std::fs::File::from(fd), &mut bytes) {
        Ok(_) => Read::Found(bytes),
        Err(e) => Read::Unreadable(e.to_string()),
    }
}

impl Ignores {
    /// The global rules of `repo`, and the skip-worktree `.gitignore` files of `index`;
    /// `unreadable` hears of a global rules file that could not be read.
    pub(super) fn new(
        repo: &gix::Repository,
        index: &gix::index::File,
        unreadable: &mut Vec<(String, String)>,
    ) -> Ignores {
        let parse = gix::ignore::search::Ignore::default();
        let excludes_file = match repo.config_snapshot().trusted_path("core.excludesFile") {
            Ok(Some(p)) => Some(p),
            _ => crate::env::git_user_file("ignore"),
        };
        let info = repo.common_dir().join("info").join("exclude");
        let mut globals = Vec::new();
        for path in excludes_file.into_iter().chain([info]) {
            if let Some(list) = read_global(&path, parse, unreadable) {
                globals.push(list);
            }
        }
        let skipped = index
            .entries()
            .iter()
            .filter(|e| {
                e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE) && e.stage_raw() == 0 && {
                    let p: &[u8] = e.path(index).as_ref();
                    p == b".gitignore" || p.ends_with(b"/.gitignore")
                }
            })
            .map(|e| (e.path(index).to_vec(), e.id))
            .collect();
        Ignores {
            parse,
            globals,
            levels: Vec::new(),
            skipped,
        }
    }

    /// Whether the innermost directory entered is `dir`.
    pub(super) fn at(&self, dir: &[u8]) -> bool {
        self.levels.last().is_some_and(|l| l.dir == dir)
    }

    /// Leaves every directory that is not `dir` or above it.
    pub(super) fn leave_to(&mut self, dir: &[u8]) {
        while let Some(l) = self.levels.last() {
            if is_within(dir, &l.dir) {
                break;
            }
            self.levels.pop();
        }
    }

    /// The innermost directory entered (`None` before the worktree's own).
    pub(super) fn innermost(&self) -> Option<&[u8]> {
        self.levels.last().map(|l| l.dir.as_slice())
    }

    /// Enters `dir`, a child of the innermost directory (or the worktree, first), open at
    /// `fd`: reads its `.gitignore` unless a rule above excludes it.
    pub(super) fn enter(
        &mut self,
        repo: &gix::Repository,
        dir: &[u8],
        fd: Option<BorrowedFd<'_>>,
        unreadable: &mut Vec<(String, String)>,
    ) {
        self.enter_with(dir, |ignores, source| {
            match fd.map_or(Read::Absent, |fd| read_rules(fd, ".gitignore")) {
                Read::Found(bytes) => Some(bytes),
                Read::Absent => ignores.staged(repo, source),
                Read::Unreadable(why) => {
                    unreadable.push((String::from_utf8_lossy(source).into_owned(), why));
                    None
                }
            }
        });
    }

    /// Enters `dir` as [`Ignores::enter`] does, its `.gitignore` (at `source`, the second
    /// argument) read by `read` unless a rule above excludes the directory.
    fn enter_with(&mut self, dir: &[u8], read: impl FnOnce(&Ignores, &[u8]) -> Option<Vec<u8>>) {
        let excluded = !dir.is_empty()
            && (self.levels.iter().any(|l| l.excluded) || self.matching(dir, true) == Some(true));
        let mut list = None;
        if !excluded {
            let source = join(dir, b".gitignore");
            list = read(self, &source).and_then(|b| {
                List::from_bytes(
                    &b,
                    path_of(&source),
                    Some(std::path::Path::new("")),
                    self.parse,
                )
                .ok()
            });
        }
        self.levels.push(Level {
            dir: dir.to_vec(),
            list,
            excluded,
        });
    }

    /// The staged content of a skip-worktree `.gitignore` at `path`.
    fn staged(&self, repo: &gix::Repository, path: &[u8]) -> Option<Vec<u8>> {
        let (_, id) = self.skipped.iter().find(|(p, _)| p == path)?;
        repo.find_object(*id).ok().map(|o| o.data.clone())
    }

    /// Whether `path` (in the innermost directory entered; a directory when `is_dir`) is
    /// ignored.
    pub(super) fn excluded(&self, path: &[u8], is_dir: bool) -> bool {
        self.levels.iter().any(|l| l.excluded) || self.matching(path, is_dir) == Some(true)
    }

    /// The last rule matching `path`: `Some(true)` when it excludes, `Some(false)` when it
    /// is a negation.
    fn matching(&self, path: &[u8], is_dir: bool) -> Option<bool> {
        let path = BStr::new(path);
        let basename = path.iter().rposition(|b| *b == b'/').map(|p| p + 1);
        let lists = self
            .levels
            .iter()
            .rev()
            .filter_map(|l| l.list.as_ref())
            .chain(self.globals.iter().rev());
        for list in lists {
            if let Some(i) = gix::ignore::search::pattern_idx_matching_relative_path(
                list,
                path,
                basename,
                Some(is_dir),
                Case::Sensitive,
            ) {
                return Some(!list.patterns[i].pattern.is_negative());
            }
        }
        None
    }
}

/// Whether `path` (a directory when `is_dir`) is ignored under `exclude` (as
/// `info/exclude`) and `rules` (as the worktree's `.gitignore`), each directory above it
/// entered as the walk enters it (none of them holding a `.gitignore`). For the
/// `gitignore` fuzz target (`fuzz/`): the walk reads its rules from the directories it
/// opens.
#[doc(hidden)]
pub fn ignored_by_rules(exclude: &[u8], rules: &[u8], path: &[u8], is_dir: bool) -> bool {
    let parse = gix::ignore::search::Ignore::default();
    let info = PathBuf::from("info/exclude");
    let mut ignores = Ignores {
        parse,
        globals: List::from_bytes(exclude, info, None, parse)
            .ok()
            .into_iter()
            .collect(),
        levels: Vec::new(),
        skipped: Vec::new(),
    };
    ignores.enter_with(b"", |_, _| Some(rules.to_vec()));
    for (i, _) in path.iter().enumerate().filter(|(_, b)| **b == b'/') {
        ignores.enter_with(&path[..i], |_, _| None);
    }
    ignores.excluded(path, is_dir)
}

/// A global rules file (git follows symbolic links to these).
fn read_global(
    path: &std::path::Path,
    parse: gix::ignore::search::Ignore,
    unreadable: &mut Vec<(String, String)>,
) -> Option<List> {
    match read_regular(rustix::fs::CWD, path, true) {
        Read::Found(bytes) => List::from_bytes(&bytes, path.to_path_buf(), None, parse).ok(),
        Read::Absent => None,
        Read::Unreadable(why) => {
            unreadable.push((path.display().to_string(), why));
            None
        }
    }
}

/// Whether `path` is `dir` or inside it (the worktree, `""`, holds everything).
pub(super) fn is_within(path: &[u8], dir: &[u8]) -> bool {
    dir.is_empty() || path == dir || (path.starts_with(dir) && path.get(dir.len()) == Some(&b'/'))
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    super::join(dir, name)
}

fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::ignored_by_rules as ignored;

    #[test]
    fn the_rules_decide_as_the_walk_decides() {
        let rules = b"/build/*\n!/build/keep.txt\nnode_modules/\n*.log\n!important.log\n";
        assert!(ignored(b"", rules, b"build/x.o", false));
        assert!(!ignored(b"", rules, b"build/keep.txt", false));
        assert!(!ignored(b"", rules, b"src/build/x.o", false), "anchored");
        // A directory a rule excludes excludes everything in it, negations included.
        assert!(ignored(b"", rules, b"a/node_modules", true));
        assert!(
            !ignored(b"", rules, b"a/node_modules", false),
            "only a directory"
        );
        assert!(ignored(b"", rules, b"a/node_modules/important.log", false));
        assert!(!ignored(b"", rules, b"a/important.log", false));
        assert!(ignored(b"", rules, b"a/b/debug.log", false));
        // info/exclude, below the worktree's rules.
        assert!(ignored(b"*.o\n", b"", b"src/x.o", false));
        assert!(!ignored(b"*.o\n", b"!x.o\n", b"src/x.o", false));
    }
}
