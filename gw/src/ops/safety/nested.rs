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
/// it up before the shallower places and the other directories are looked at.
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
                if depth == DEPTH {
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
