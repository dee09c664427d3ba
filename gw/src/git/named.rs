//! The paths of a checkout that a `.grove.toml` `copy` names, and how git sees each
//! (`Repo::named`): ignored, or untracked — a tracked path is never grove's to copy. Decided
//! as git decides: the index says what is tracked, the status scan's ignore rules what is
//! ignored. And whether a commit's files leave room for such a path in a new worktree
//! (`Repo::room_for`).
//!
//! The patterns are matched one component at a time from the top of the checkout, listing
//! only the directories a pattern's glob components ask about (a cache of a hundred
//! thousand files is never walked to find it), and never through a symbolic link: a
//! directory reached through one could be anywhere.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use gix::bstr::{BStr, ByteSlice};

use super::{Error, Repo};

/// How git sees a named path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// An ignore rule covers it (or a directory above it).
    Ignored,
    /// Neither tracked nor ignored.
    Untracked,
}

/// A path of the checkout a pattern named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Relative to the checkout.
    pub path: PathBuf,
    /// The `copy` entry that named it.
    pub pattern: String,
    pub standing: Standing,
}

/// What the patterns named.
#[derive(Debug, Default)]
pub struct Matches {
    /// Ignored or untracked: what may be copied, sorted, none inside another.
    pub named: Vec<Named>,
    /// Tracked (or a directory holding tracked files), with the pattern that named each.
    pub tracked: Vec<(PathBuf, String)>,
    /// Passed over, and why (a symbolic link on the way to it).
    pub passed_over: Vec<(PathBuf, String)>,
}

impl Repo {
    /// The paths of this checkout that `patterns` (checked `copy` entries) name, and how
    /// git sees each.
    pub fn named(&self, patterns: &[String]) -> Result<Matches, Error> {
        let root = self
            .repo
            .workdir()
            .ok_or_else(|| Error::read(self.path(), "the repository has no checkout"))?
            .to_path_buf();
        let mut m = Matches::default();
        let mut found: Vec<(PathBuf, bool, String)> = Vec::new();
        for pattern in patterns {
            expand(&root, pattern, &mut found, &mut m.passed_over)?;
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found.dedup_by(|b, a| b.0.starts_with(&a.0));
        let index = self
            .repo
            .index_or_empty()
            .map_err(|e| Error::read(self.path(), e))?;
        let mut candidates = Vec::new();
        for (path, is_dir, pattern) in found {
            let key = path.as_os_str().as_bytes();
            let mut prefix = key.to_vec();
            prefix.push(b'/');
            let tracked = index.entry_by_path(key.as_bstr()).is_some()
                || (is_dir && index.prefixed_entries(prefix.as_bstr()).is_some());
            if tracked {
                m.tracked.push((path, pattern));
            } else {
                candidates.push((path, is_dir, pattern));
            }
        }
        let asked: Vec<(&[u8], bool)> = candidates
            .iter()
            .map(|(p, d, _)| (p.as_os_str().as_bytes(), *d))
            .collect();
        let ignored = super::scan::ignored(&self.repo, &index, &asked)?;
        m.named = candidates
            .into_iter()
            .zip(ignored)
            .map(|((path, _, pattern), ignored)| Named {
                path,
                pattern,
                standing: if ignored {
                    Standing::Ignored
                } else {
                    Standing::Untracked
                },
            })
            .collect();
        Ok(m)
    }

    /// Whether a worktree of `commit` leaves room for `path`: the commit has nothing at it,
    /// and the directory it goes in is a directory of the commit (or the top).
    pub fn room_for(&self, commit: &str, path: &Path) -> Result<bool, Error> {
        let read = |e: &dyn std::fmt::Display| Error::read(self.path(), e);
        let id = gix::ObjectId::from_hex(commit.as_bytes()).map_err(|e| read(&e))?;
        let tree = self
            .repo
            .find_commit(id)
            .map_err(|e| read(&e))?
            .tree()
            .map_err(|e| read(&e))?;
        if tree
            .lookup_entry_by_path(path)
            .map_err(|e| read(&e))?
            .is_some()
        {
            return Ok(false);
        }
        match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            None => Ok(true),
            Some(parent) => Ok(tree
                .lookup_entry_by_path(parent)
                .map_err(|e| read(&e))?
                .is_some_and(|e| e.mode().is_tree())),
        }
    }
}

/// Adds to `found` the paths of `root` that `pattern` names (relative, whether each is a
/// directory, and the pattern), and to `passed_over` those a symbolic link stood in the way
/// of.
fn expand(
    root: &Path,
    pattern: &str,
    found: &mut Vec<(PathBuf, bool, String)>,
    passed_over: &mut Vec<(PathBuf, String)>,
) -> Result<(), Error> {
    let dirs_only = pattern.ends_with('/');
    let parts: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
    let mut current = vec![PathBuf::new()];
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = Vec::new();
        for dir in &current {
            for name in names_in(root, dir, part)? {
                let rel = dir.join(&name);
                let meta = match std::fs::symlink_metadata(root.join(&rel)) {
                    Ok(m) => m,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(Error::read(&root.join(&rel), e)),
                };
                let ft = meta.file_type();
                if last {
                    if !dirs_only || ft.is_dir() {
                        found.push((rel, ft.is_dir(), pattern.to_string()));
                    }
                } else if ft.is_dir() {
                    next.push(rel);
                } else if ft.is_symlink() {
                    passed_over.push((
                        rel,
                        format!(
                            "`{pattern}` goes through a symbolic link here; grove does not follow one"
                        ),
                    ));
                }
            }
        }
        current = next;
    }
    Ok(())
}

/// The names in `root/dir` that the pattern component `part` matches: itself when it has
/// no glob characters, else the entries listed there that match (never `.git`), sorted.
fn names_in(root: &Path, dir: &Path, part: &str) -> Result<Vec<OsString>, Error> {
    if !part.contains(['*', '?', '[']) {
        return Ok(vec![OsString::from(part)]);
    }
    let at = root.join(dir);
    let entries = match std::fs::read_dir(&at) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::read(&at, e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let name = entry.map_err(|e| Error::read(&at, e))?.file_name();
        let bytes = name.as_bytes();
        let matches = gix::glob::wildmatch(
            BStr::new(part.as_bytes()),
            BStr::new(bytes),
            gix::glob::wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
        );
        if bytes != b".git" && matches {
            names.push(OsString::from_vec(bytes.to_vec()));
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = crate::proc::Cmd::git(dir).args(args).check();
        assert!(out.is_ok(), "git {args:?}: {out:?}");
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn named_paths_are_sorted_into_ignored_untracked_and_tracked() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        write(&root.join(".gitignore"), "node_modules/\n/target\n*.log\n");
        write(&root.join("packages/a/.gitignore"), "dist/\n");
        write(&root.join("packages/a/index.js"), "1");
        write(&root.join("packages/b/index.js"), "2");
        write(&root.join("package.json"), "{}");
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "one"]);
        write(&root.join("node_modules/x/index.js"), "x");
        write(&root.join("target/debug/app"), "bin");
        write(&root.join("packages/a/dist/out.js"), "out");
        write(&root.join("packages/a/node_modules/y.js"), "y");
        write(&root.join("packages/b/dist/out.js"), "not ignored in b");
        write(&root.join(".env.local"), "SECRET=1");
        write(&root.join("outside/dist/z.js"), "z");
        std::os::unix::fs::symlink(root.join("outside"), root.join("packages/c")).unwrap();
        let repo = Repo::open(&root).unwrap();
        let patterns: Vec<String> = [
            "node_modules",
            "node_modules/x",
            "target/",
            "packages/*/dist",
            "packages/*/node_modules",
            ".env.local",
            "package.json",
            "missing",
            "package.json/",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let m = repo.named(&patterns).unwrap();
        let got: Vec<(String, Standing)> = m
            .named
            .iter()
            .map(|n| (n.path.display().to_string(), n.standing))
            .collect();
        assert_eq!(
            got,
            [
                (".env.local".to_string(), Standing::Untracked),
                ("node_modules".to_string(), Standing::Ignored),
                ("packages/a/dist".to_string(), Standing::Ignored),
                ("packages/a/node_modules".to_string(), Standing::Ignored),
                ("packages/b/dist".to_string(), Standing::Untracked),
                ("target".to_string(), Standing::Ignored),
            ]
        );
        assert_eq!(
            m.tracked,
            [(PathBuf::from("package.json"), "package.json".to_string())]
        );
        assert_eq!(m.passed_over.len(), 2, "{:?}", m.passed_over);
        assert!(
            m.passed_over
                .iter()
                .all(|(p, _)| p == Path::new("packages/c"))
        );

        // A directory holding a tracked file is tracked.
        let m = repo.named(&["packages/a".to_string()]).unwrap();
        assert_eq!(m.tracked.len(), 1);
        assert!(m.named.is_empty());

        let head = repo.head().unwrap().oid.unwrap();
        assert!(repo.room_for(&head, Path::new("node_modules")).unwrap());
        assert!(repo.room_for(&head, Path::new("packages/a/dist")).unwrap());
        assert!(!repo.room_for(&head, Path::new("package.json")).unwrap());
        assert!(
            !repo.room_for(&head, Path::new("packages/x/dist")).unwrap(),
            "its directory is not in the commit"
        );
        assert!(
            !repo.room_for(&head, Path::new("package.json/x")).unwrap(),
            "under a file"
        );
    }
}
