//! Repositories and worktrees inside a worktree's ignored directories: `git status` does
//! not show them, and they go with the directory.

use std::path::{Path, PathBuf};

use super::work::{self, Held};
use crate::git;

/// How deep below an ignored directory, and how many entries in each and in all,
/// [`search`] looks: a repository or worktree someone made in `scratch/`,
/// `.worktrees/NAME` or `build/a/b/NAME` is found, and a `node_modules` of a hundred
/// thousand files costs a few thousand entries read at most. The search is breadth first
/// and its budget is per directory, so that neither a deep tree nor a large directory uses
/// it up before the shallower places and the other directories are looked at. A directory
/// known to hold no directory is not read at all ([`Leaves`]): a package of files costs
/// one `stat`, and the budget goes to where repositories can be.
pub(super) const DEPTH: usize = 3;
pub(super) const ENTRIES: usize = 5_000;
const ENTRIES_IN_ALL: usize = 50_000;

/// The repositories and worktrees inside the ignored directories of the worktree at
/// `root` (`ignored`, as `git status --ignored` lists them: directories end in `/`) that
/// hold work: a worktree's changes, hidden edits and work beyond its files (its
/// repository lives elsewhere); a repository's all the same and, since its references go
/// with it, its stash and the commits none of its remotes has. One that holds nothing (a
/// tool's clone, as Terraform keeps of git-sourced modules) is not work.
pub(super) fn search(root: &Path, ignored: &[String]) -> Vec<Held> {
    let mut found = Vec::new();
    let mut in_all = ENTRIES_IN_ALL;
    // What `at` is: a repository with its files (`.git` a directory), a worktree (`.git` a
    // file: its repository lives elsewhere), or a bare repository (no files, all its refs).
    let mut check = |at: &Path, what: Found| {
        let path = at.strip_prefix(root).unwrap_or(at).display().to_string();
        let held = match git::Repo::open(at) {
            Ok(repo) if what == Found::Repository => super::repository::of_repository(&repo, true),
            Ok(repo) if what == Found::Bare => super::repository::of_repository(&repo, false),
            Ok(repo) => {
                let mut held = work::of_worktree_files(&repo);
                held.extend(work::beyond_files(&repo));
                held
            }
            Err(e) => vec![Held::Unreadable(format!("cannot be read: {e}"))],
        };
        if !held.is_empty() {
            found.push(Held::Nested {
                path,
                worktree: what == Found::Worktree,
                held,
            });
        }
    };
    for dir in ignored.iter().filter_map(|e| e.strip_suffix('/')) {
        let mut budget = ENTRIES;
        let leaves = Leaves::of(&root.join(dir));
        let mut level: Vec<PathBuf> = vec![root.join(dir)];
        'levels: for depth in 0..=DEPTH {
            let mut below = Vec::new();
            for d in &level {
                if let Ok(meta) = d.join(".git").symlink_metadata() {
                    check(
                        d,
                        if meta.is_dir() {
                            Found::Repository
                        } else {
                            Found::Worktree
                        },
                    );
                } else if looks_bare(d) {
                    // Its objects and refs are all it holds: nothing below to look at.
                    check(d, Found::Bare);
                    continue;
                }
                if depth == DEPTH || leaves.is_leaf(d) {
                    continue;
                }
                let Ok(entries) = std::fs::read_dir(d) else {
                    continue;
                };
                for e in entries.flatten() {
                    if budget == 0 || in_all == 0 {
                        break 'levels;
                    }
                    budget -= 1;
                    in_all -= 1;
                    // A repository's own git directory says nothing more; a link is not
                    // followed.
                    if e.file_name() != ".git" && e.file_type().is_ok_and(|t| t.is_dir()) {
                        below.push(e.path());
                    }
                }
            }
            level = below;
        }
    }
    found
}

/// Directories that hold no directory, told without reading them: where a directory's
/// link count is two plus the number of directories in it (its own name, its `.`, each
/// one's `..`), a count of two says it holds none. That holds on the file systems listed
/// here — not on btrfs (always one), overlay or network file systems, nor on macOS — and
/// only below the directory the search starts from on the same device (nothing mounted in
/// between); elsewhere every directory is read, as `find -noleaf` does.
struct Leaves {
    /// The device of the start, where link counts can be trusted.
    dev: Option<u64>,
}

impl Leaves {
    fn of(start: &Path) -> Leaves {
        Leaves {
            dev: counts_subdirectories(start)
                .then(|| std::fs::symlink_metadata(start).ok())
                .flatten()
                .map(|m| std::os::unix::fs::MetadataExt::dev(&m)),
        }
    }

    fn is_leaf(&self, dir: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        self.dev.is_some_and(|dev| {
            std::fs::symlink_metadata(dir)
                .is_ok_and(|m| m.is_dir() && m.dev() == dev && m.nlink() == 2)
        })
    }
}

/// Whether `path`'s file system counts a directory's links as two plus its directories:
/// ext2/3/4, xfs and tmpfs (GNU find's leaf optimisation trusts these too).
#[cfg(target_os = "linux")]
fn counts_subdirectories(path: &Path) -> bool {
    const EXT: i64 = 0xEF53;
    const XFS: i64 = 0x5846_5342;
    const TMPFS: i64 = 0x0102_1994;
    // `f_type`'s width differs between targets.
    #[allow(clippy::unnecessary_cast)]
    rustix::fs::statfs(path).is_ok_and(|s| [EXT, XFS, TMPFS].contains(&(s.f_type as i64)))
}

#[cfg(not(target_os = "linux"))]
fn counts_subdirectories(_: &Path) -> bool {
    false
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Found {
    Repository,
    Worktree,
    Bare,
}

/// A directory laid out as a git directory (`HEAD`, `objects/`, `refs/`): a bare
/// repository, which has no `.git` to be found by.
fn looks_bare(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::git;

    /// A bare repository in an ignored directory (a local "remote" made for a test, a
    /// mirror) has no `.git`: it was not looked for, and its commits went with the worktree.
    /// A package directory of files is not read: the budget goes to the directories that
    /// can hold a repository, and one below the level of thousands of files is found (on
    /// tmpfs, which counts a directory's links; read whole, the packages used the budget up
    /// and the level below was never looked at).
    #[test]
    #[cfg(target_os = "linux")]
    #[allow(clippy::disallowed_methods)]
    fn directories_of_files_are_not_read_and_a_repository_past_them_is_found() {
        let shm = std::path::Path::new("/dev/shm");
        assert!(shm.is_dir(), "this test needs tmpfs at /dev/shm");
        let tmp = tempfile::tempdir_in(shm).unwrap();
        let root = tmp.path();
        assert!(counts_subdirectories(root));
        let per = ENTRIES / 8;
        for p in 0..10 {
            let pkg = root.join(format!("node_modules/pkg{p:02}"));
            std::fs::create_dir_all(&pkg).unwrap();
            for f in 0..per {
                std::fs::write(pkg.join(format!("m{f}.js")), "").unwrap();
            }
        }
        // Below the packages' level, which read whole uses the budget up.
        let late = root.join("node_modules/@scope/clone");
        std::fs::create_dir_all(&late).unwrap();
        git(&late, &["init", "-q", "-b", "main"]);
        crate::fsx::write_atomic(&late.join("f"), b"only here").unwrap();
        git(&late, &["add", "f"]);
        git(&late, &["commit", "-q", "-m", "only here"]);
        let leaves = Leaves::of(&root.join("node_modules"));
        assert!(leaves.is_leaf(&root.join("node_modules/pkg00")));
        assert!(!leaves.is_leaf(&root.join("node_modules")));
        assert!(!leaves.is_leaf(&late), "it holds `.git`");
        let found = search(root, &["node_modules/".into()]);
        assert!(
            matches!(&found[..], [Held::Nested { path, worktree: false, .. }]
                if path == "node_modules/@scope/clone"),
            "{found:?}"
        );
    }

    #[test]
    fn a_bare_repository_in_an_ignored_directory_is_looked_into() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let bare = root.join("deps/store.git");
        std::fs::create_dir_all(&bare).unwrap();
        git(&bare, &["init", "-q", "--bare", "-b", "main"]);
        assert!(
            search(root, &["deps/".into()]).is_empty(),
            "an empty bare repository holds nothing"
        );
        let clone = root.join("clone");
        git(root, &["init", "-q", "-b", "main", "clone"]);
        crate::fsx::write_atomic(&clone.join("f"), b"only here").unwrap();
        git(&clone, &["add", "f"]);
        git(&clone, &["commit", "-q", "-m", "only here"]);
        git(&clone, &["push", "-q", bare.to_str().unwrap(), "main"]);
        let found = search(root, &["deps/".into()]);
        assert!(
            matches!(&found[..], [Held::Nested { path, worktree: false, held }]
                if path == "deps/store.git"
                    && held.iter().any(|h| matches!(h, Held::LocalCommits { .. }))),
            "{found:?}"
        );
    }
}
