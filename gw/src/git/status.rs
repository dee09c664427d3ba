//! Uncommitted changes: what `git status` shows, computed in-process where that is as fast
//! as git, and by git itself where the repository relies on something grove does not read
//! (a sparse index, files outside sparse-checkout patterns, submodules, a case-insensitive
//! worktree, a file-system monitor, a large untracked cache).
//!
//! In-process, the worktree is compared with the index by [`scan`] on the threads
//! [`crate::parallel::share`] leaves this repository (all the cores for one repository, one
//! each when a fan-out already runs a repository per core), and HEAD is compared with the
//! index on another.

use std::collections::BTreeMap;

use super::read::{Changes, Repo, Unreadable};
use super::scan;
use super::staged::staged_changes;
use super::{Error, read::err};
use crate::proc::Cmd;

/// Which untracked files to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Untracked {
    /// None (`status.showUntrackedFiles=no`).
    No,
    /// Directories holding only untracked files collapsed to `dir/` (git's default).
    #[default]
    Normal,
    /// Every untracked file (`status.showUntrackedFiles=all`).
    All,
}

/// What a status asks for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ask {
    pub untracked: Untracked,
    /// Also list ignored files (directories collapsed, with a trailing `/`).
    pub ignored: bool,
}

/// At this many tracked files, a repository where the user turned on git's file-system
/// monitor or untracked cache is read by git, which then looks only at what changed since
/// its last run.
const LARGE: usize = 20_000;

impl Repo {
    /// The untracked files `git status` would list here: `status.showUntrackedFiles`, read
    /// as git reads it: `no`, `normal` or `all`, or a boolean — a key without a value is
    /// true (`normal`), an empty value false (`no`). Anything else git refuses; this shows
    /// the default then.
    pub(super) fn untracked_as_configured(&self) -> Untracked {
        let cfg = self.repo.config_snapshot();
        // `string` passes over a key without a value; this sees it.
        match cfg.plumbing().string_implicit("status.showUntrackedFiles") {
            None | Some(None) => Untracked::Normal,
            Some(Some(v)) => match v.to_ascii_lowercase().as_slice() {
                b"no" | b"false" | b"off" | b"0" | b"" => Untracked::No,
                b"all" => Untracked::All,
                _ => Untracked::Normal,
            },
        }
    }

    pub(super) fn status_of(&self, ask: Ask) -> Result<(Changes, Vec<String>), Error> {
        let index = self.read_index()?;
        if self.needs_git(&index) {
            let Some(fifo) = self.fifo_rules(&index) else {
                return self.status_by_git(ask);
            };
            // git would open the fifo as a rules file and wait for a writer forever: grove
            // answers itself, and what the rules would have said is unknown.
            let (mut changes, ignored) = self.status_in_process(&index, ask)?;
            changes.unreadable.push(Unreadable {
                path: fifo,
                reason: "a fifo where git reads rules (git would wait on it forever)".into(),
            });
            changes.unreadable.sort();
            return Ok((changes, ignored));
        }
        self.status_in_process(&index, ask)
    }

    /// The first `.gitignore` or `.gitattributes` that is a fifo in a directory the index
    /// holds files in or below (a rules file git opens while comparing them, or when its
    /// walk enters the directory), or in a submodule's, relative to the worktree.
    fn fifo_rules(&self, index: &gix::index::File) -> Option<String> {
        let workdir = self.repo.workdir()?;
        let mut dirs: Vec<&[u8]> = vec![b""];
        let mut previous: &[u8] = b"";
        for e in index.entries() {
            let path: &[u8] = e.path(index).as_ref();
            // Every directory above the entry (`a` and `a/b` of `a/b/c.txt`), each once: the
            // entries are sorted, so those it shares with the previous entry are listed.
            let common = path
                .iter()
                .zip(previous)
                .take_while(|(a, b)| a == b)
                .count();
            for (slash, b) in path.iter().enumerate().skip(common) {
                if *b == b'/' {
                    dirs.push(&path[..slash]);
                }
            }
            previous = path;
        }
        dirs.sort_unstable();
        dirs.dedup();
        let found = dirs.iter().find_map(|dir| {
            [".gitignore", ".gitattributes"]
                .into_iter()
                .find_map(|name| {
                    let rel = if dir.is_empty() {
                        name.to_string()
                    } else {
                        format!("{}/{name}", String::from_utf8_lossy(dir))
                    };
                    let dir = gix::path::from_byte_slice(dir).ok()?;
                    let meta = workdir.join(dir).join(name).symlink_metadata().ok()?;
                    std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()).then_some(rel)
                })
        });
        // git runs a status in each submodule, which opens that repository's rules files
        // as its own walk does (seed 20270520: a fifo `.gitignore` there blocked it).
        found.or_else(|| {
            index
                .entries()
                .iter()
                .filter(|e| e.mode.is_submodule())
                .find_map(|e| {
                    let rel = e.path(index);
                    let dir = workdir.join(gix::path::from_bstr(rel).ok()?);
                    // A real directory (a symbolic link could lead back here), holding a
                    // repository of its own (a `.git`: gix does not search upwards).
                    if !dir.symlink_metadata().ok()?.is_dir()
                        || dir.join(".git").symlink_metadata().is_err()
                    {
                        return None;
                    }
                    let sub = Repo::open(&dir).ok()?;
                    let fifo = sub.fifo_rules(&sub.read_index().ok()?)?;
                    Some(format!("{rel}/{fifo}"))
                })
        })
    }

    /// The index, read without verifying its checksum (git does not either, outside
    /// `git fsck`: hashing a large index costs more than reading it); a missing index is an
    /// empty one.
    fn read_index(&self) -> Result<gix::index::File, Error> {
        let path = self.repo.index_path();
        match gix::index::File::at(&path, self.repo.object_hash(), true, Default::default()) {
            Ok(index) => Ok(index),
            Err(_) => {
                // Missing, or unreadable: gix's own reading says which, with its error.
                let index = self.repo.index_or_empty().map_err(err(self.path()))?;
                Ok((**index).clone())
            }
        }
    }

    /// Whether git itself should read this repository's status: a sparse index (gix cannot
    /// compare one), files outside the sparse-checkout patterns (git compares them, gix skips
    /// them), or a large repository whose file-system monitor or untracked cache only git
    /// uses (below [`LARGE`], gix reads it faster than git starts).
    fn needs_git(&self, index: &gix::index::File) -> bool {
        if index.is_sparse() || self.files_outside_sparse_patterns(index) {
            return true;
        }
        let cfg = self.repo.config_snapshot();
        if cfg.boolean("core.ignoreCase") == Some(true)
            || cfg.boolean("core.symlinks") == Some(false)
            || index.entries().iter().any(|e| e.mode.is_submodule())
            || self.gitdir_includes_differ()
        {
            // A case-insensitive worktree, symbolic links checked out as files, submodules:
            // git compares them as the user's git does.
            return true;
        }
        if index.entries().len() < LARGE {
            return false;
        }
        let fsmonitor = cfg
            .string("core.fsmonitor")
            .is_some_and(|v| !matches!(v.to_string().as_str(), "" | "false" | "0"));
        fsmonitor || cfg.boolean("core.untrackedCache") == Some(true)
    }

    /// Whether this is a linked worktree under an `includeIf "gitdir:…"` condition: gix
    /// matches such a condition against the repository's git directory, git against the
    /// worktree's own (`.git/worktrees/<name>`), so the configuration gix reads here may not
    /// be git's (`core.fileMode=false` or an excludes file on one side only would hide
    /// changes from a delete).
    fn gitdir_includes_differ(&self) -> bool {
        if self.repo.git_dir() == self.repo.common_dir() {
            return false;
        }
        let cfg = self.repo.config_snapshot();
        cfg.plumbing()
            .sections_by_name("includeIf")
            .is_some_and(|mut sections| {
                sections.any(|s| {
                    s.header()
                        .subsection_name()
                        .is_some_and(|n| n.starts_with(b"gitdir:") || n.starts_with(b"gitdir/i:"))
                })
            })
    }

    /// A sparse checkout where a file marked skip-worktree (outside the patterns) exists:
    /// git compares such a file as tracked (and clears the mark), gix skips it, so an edit
    /// made there would go unseen — and be deleted with the worktree.
    fn files_outside_sparse_patterns(&self, index: &gix::index::File) -> bool {
        let cfg = self.repo.config_snapshot();
        if cfg.boolean("core.sparseCheckout") != Some(true)
            || cfg.boolean("sparse.expectFilesOutsideOfPatterns") == Some(true)
        {
            return false;
        }
        let Some(workdir) = self.repo.workdir() else {
            return false;
        };
        index.entries().iter().any(|e| {
            e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE)
                && gix::path::from_bstr(e.path(index))
                    .is_ok_and(|p| workdir.join(p).symlink_metadata().is_ok())
        })
    }

    fn status_in_process(
        &self,
        index: &gix::index::File,
        ask: Ask,
    ) -> Result<(Changes, Vec<String>), Error> {
        let repo = &self.repo;
        let path = self.path();
        let cfg = repo.config_snapshot();
        // A thread each for at least `ENTRIES_PER_THREAD` entries: below that a thread costs
        // more than it saves, most of all on a busy machine, where a new thread waits for
        // a core (`gw delete` of one 2,000-file repository under load waited 9 ms for one).
        const ENTRIES_PER_THREAD: usize = 4000;
        let threads = if cfg.boolean("core.preloadIndex") == Some(false) {
            1
        } else {
            crate::parallel::share().min(1 + index.entries().len() / ENTRIES_PER_THREAD)
        };
        let head_tree = repo.head_tree_id_or_empty().map_err(err(path))?.detach();
        // HEAD is compared with the index entry by entry unless the tree the index's entries
        // make is HEAD's tree (hashed from the entries: the index's own cache tree is not
        // trusted — a tool that rewrote entries without invalidating it would hide staged work
        // from a delete).
        let (staged, found) = if threads > 1 {
            // One handle for every thread: the scan's and HEAD-vs-index's.
            let sync = repo.clone().into_sync();
            let (staged, found) = std::thread::scope(|s| {
                let staged = s.spawn(|| staged_changes(&sync.to_thread_local(), head_tree, index));
                // The scan first, then the join: joined first, the two ran one after the other.
                let found = scan::scan(repo, Some(&sync), index, ask, threads);
                (staged.join(), found)
            });
            let found = found?;
            let staged = staged
                .map_err(|_| Error::read(path, "the comparison of HEAD and the index failed"))??;
            (staged, found)
        } else {
            let staged = staged_changes(repo, head_tree, index)?;
            (staged, scan::scan(repo, None, index, ask, 1)?)
        };
        let mut by_path: BTreeMap<String, Slot> = BTreeMap::new();
        let entries = index.entries();
        for (i, y) in found.changed {
            let slot = by_path
                .entry(entries[i].path(index).to_string())
                .or_default();
            if y == 'U' {
                // Which stages the index holds decides git's letters for the conflict.
                slot.stages |= 1 << (entries[i].stage_raw().clamp(1, 3) - 1);
            } else {
                slot.xy.1 = y;
            }
        }
        for file in found.untracked {
            by_path.entry(file).or_default().untracked = true;
        }
        for (file, x) in staged {
            let slot = by_path.entry(file).or_default();
            slot.xy.0 = x;
        }
        // Best effort, like git: a locked index, or one changed since, just means the next
        // status compares those files again.
        let _ = scan::refresh::write(index, &found.updates, &found.resized);
        let mut ignored = found.ignored;
        ignored.sort();
        let mut changes = changes_from(by_path);
        changes.unreadable = found
            .unreadable
            .into_iter()
            .map(|(path, reason)| Unreadable { path, reason })
            .collect();
        changes.warnings = found.warnings;
        Ok((changes, ignored))
    }

    /// `git status --porcelain=v2`, for repositories gix cannot read as fast or at all.
    fn status_by_git(&self, ask: Ask) -> Result<(Changes, Vec<String>), Error> {
        let mut cmd = Cmd::git(self.path());
        cmd.args(["status", "--porcelain=v2", "-z", "--no-renames"]);
        cmd.arg(match ask.untracked {
            Untracked::No => "--untracked-files=no",
            Untracked::Normal => "--untracked-files=normal",
            Untracked::All => "--untracked-files=all",
        });
        if ask.ignored {
            cmd.arg("--ignored=traditional");
        }
        let out = cmd.check()?;
        let (by_path, mut ignored) = parse_porcelain_v2(&out.stdout);
        ignored.sort();
        let mut changes = changes_from(by_path);
        changes.unreadable = unreadable_in_warnings(&out.stderr);
        Ok((changes, ignored))
    }
}

/// What git's warnings on stderr say it could not read: a directory it could not open
/// (`warning: could not open directory 'd/': Permission denied`), a path it could not
/// `lstat` (`d/f: Permission denied`), a rules file it could not access.
fn unreadable_in_warnings(stderr: &str) -> Vec<Unreadable> {
    stderr
        .lines()
        .filter_map(|line| {
            let quoted = |rest: &str| {
                let rest = rest.strip_prefix('\'')?;
                let (path, why) = rest.split_once("': ")?;
                Some(Unreadable {
                    path: path.to_string(),
                    reason: why.to_string(),
                })
            };
            if let Some(rest) = line.strip_prefix("warning: could not open directory ") {
                quoted(rest)
            } else if let Some(rest) = line.strip_prefix("warning: unable to access ") {
                quoted(rest)
            } else {
                let (path, why) = line.rsplit_once(": ")?;
                (why == "Permission denied" && !path.starts_with("warning:")).then(|| Unreadable {
                    path: path.to_string(),
                    reason: why.to_string(),
                })
            }
        })
        .collect()
}

/// What changed at one path: its index entry against HEAD and the worktree (`X`, `Y` as
/// `git status --short` shows them, blank when unchanged), the stages of a conflict (bit
/// `n - 1` for stage `n`; git's letters, `UU`, `AA`, `DU`…, come from which are there), and
/// whether an untracked file is there too (a path whose deletion is staged can hold a new,
/// untracked file: two lines).
#[derive(Debug, Clone, Copy)]
struct Slot {
    xy: (char, char),
    stages: u8,
    untracked: bool,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            xy: (' ', ' '),
            stages: 0,
            untracked: false,
        }
    }
}

/// git's short-status letters for a conflict whose index holds `stages` (see [`Slot`]).
fn conflict_letters(stages: u8) -> (char, char) {
    match stages {
        0b001 => ('D', 'D'),
        0b010 => ('A', 'U'),
        0b100 => ('U', 'A'),
        0b011 => ('U', 'D'),
        0b101 => ('D', 'U'),
        0b110 => ('A', 'A'),
        _ => ('U', 'U'),
    }
}

/// Counts and short-status lines from what changed at each path.
fn changes_from(by_path: BTreeMap<String, Slot>) -> Changes {
    let mut c = Changes::default();
    for (path, slot) in by_path {
        let (x, y) = if slot.stages != 0 {
            conflict_letters(slot.stages)
        } else {
            slot.xy
        };
        match (x, y) {
            (' ', ' ') => {}
            _ if slot.stages != 0 => c.conflicted += 1,
            _ => {
                if x != ' ' {
                    c.staged += 1;
                }
                if y != ' ' {
                    c.modified += 1;
                }
            }
        }
        if (x, y) != (' ', ' ') {
            c.lines.push(format!("{x}{y} {path}"));
        }
        if slot.untracked {
            c.untracked += 1;
            c.lines.push(format!("?? {path}"));
        }
    }
    c
}

/// Reads `git status --porcelain=v2 -z --no-renames` output: each changed path's `(X, Y)`
/// (a conflict as the stages its letters name), and the ignored paths.
fn parse_porcelain_v2(out: &str) -> (BTreeMap<String, Slot>, Vec<String>) {
    let mut by_path: BTreeMap<String, Slot> = BTreeMap::new();
    let mut ignored = Vec::new();
    let letter = |c: char| if c == '.' { ' ' } else { c };
    for record in out.split('\0').filter(|r| !r.is_empty()) {
        let Some((kind, rest)) = record.split_once(' ') else {
            continue;
        };
        match kind {
            "?" => by_path.entry(rest.to_string()).or_default().untracked = true,
            "!" => ignored.push(rest.to_string()),
            // `1 XY sub mH mI mW hH hI path`
            "1" => {
                let fields: Vec<&str> = rest.splitn(8, ' ').collect();
                if let [xy, .., path] = fields.as_slice()
                    && fields.len() == 8
                {
                    let mut xy = xy.chars();
                    let (x, y) = (xy.next().unwrap_or('.'), xy.next().unwrap_or('.'));
                    by_path.entry(path.to_string()).or_default().xy = (letter(x), letter(y));
                }
            }
            // `u XY sub m1 m2 m3 mW h1 h2 h3 path`
            "u" => {
                let fields: Vec<&str> = rest.splitn(10, ' ').collect();
                if let [xy, .., path] = fields.as_slice()
                    && fields.len() == 10
                {
                    let mut letters = xy.chars();
                    let stages = match (letters.next(), letters.next()) {
                        (Some('D'), Some('D')) => 0b001,
                        (Some('A'), Some('U')) => 0b010,
                        (Some('U'), Some('A')) => 0b100,
                        (Some('U'), Some('D')) => 0b011,
                        (Some('D'), Some('U')) => 0b101,
                        (Some('A'), Some('A')) => 0b110,
                        _ => 0b111,
                    };
                    by_path.entry(path.to_string()).or_default().stages = stages;
                }
            }
            _ => {}
        }
    }
    (by_path, ignored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::index_tree::index_tree;
    use crate::ops::testutil::git;

    /// A repository in a new temporary directory, with one commit of `a.txt`.
    fn repo_with_a_commit() -> (tempfile::TempDir, std::path::PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        crate::fsx::write_atomic(&dir.join("a.txt"), b"a\n").unwrap();
        git(&dir, &["add", "a.txt"]);
        git(&dir, &["commit", "-q", "-m", "one"]);
        (tmp, dir)
    }

    #[test]
    fn a_staged_change_is_seen_even_when_the_cache_tree_still_names_head() {
        let (_tmp, dir) = repo_with_a_commit();
        // A writer that changes an entry and leaves the index's cache tree as it was (gix's
        // own index writer does): the file is staged, and the worktree matches it.
        crate::fsx::write_atomic(&dir.join("a.txt"), b"staged\n").unwrap();
        let id = git(&dir, &["hash-object", "-w", "a.txt"]);
        let repo = Repo::open(&dir).unwrap();
        let mut index = repo.read_index().unwrap();
        assert!(index.tree().is_some_and(|t| t.num_entries.is_some()));
        let meta = gix::index::fs::Metadata::from_path_no_follow(&dir.join("a.txt")).unwrap();
        let entry = &mut index.entries_mut()[0];
        entry.id = gix::ObjectId::from_hex(id.trim().as_bytes()).unwrap();
        entry.stat = gix::index::entry::Stat::from_fs(&meta).unwrap();
        index.write(Default::default()).unwrap();
        assert_eq!(git(&dir, &["status", "--porcelain"]).trim_end(), "M  a.txt");

        let changes = Repo::open(&dir).unwrap().changes().unwrap();
        assert_eq!(changes.lines, ["M  a.txt"]);
        assert_eq!(changes.staged, 1);
    }

    #[test]
    fn the_tree_the_index_makes_is_the_tree_git_writes() {
        let (_tmp, dir) = repo_with_a_commit();
        let write = |rel: &str, text: &str| {
            let p = dir.join(rel);
            crate::fsx::create_dir_all(p.parent().unwrap()).unwrap();
            crate::fsx::write_atomic(&p, text.as_bytes()).unwrap();
        };
        // Names whose order differs between paths and tree entries if done wrong.
        for rel in [
            "a.b", "a/x", "a/y/z", "a-b/c", "a0", "b", "c d/e f", "z/é.txt",
        ] {
            write(rel, rel);
        }
        write(
            "run.sh",
            "#!/bin/sh
",
        );
        git(&dir, &["update-index", "--add", "--chmod=+x", "run.sh"]);
        std::os::unix::fs::symlink("a.b", dir.join("link")).unwrap();
        git(&dir, &["add", "-A"]);
        let commit = git(&dir, &["rev-parse", "HEAD"]);
        git(
            &dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{},sub", commit.trim()),
            ],
        );
        let repo = Repo::open(&dir).unwrap();
        let ours = index_tree(&repo.read_index().unwrap()).unwrap();
        assert_eq!(ours.to_string(), git(&dir, &["write-tree"]).trim());

        git(&dir, &["commit", "-q", "-m", "two"]);
        let head = git(&dir, &["rev-parse", "HEAD^{tree}"]);
        assert_eq!(
            index_tree(&repo.read_index().unwrap()).unwrap().to_string(),
            head.trim()
        );
        // An index whose tree is written already needs no `git write-tree`; one with staged
        // content the repository does not hold as a tree yet does.
        let index = repo.repo.index_path();
        assert_eq!(repo.written_tree_of(&index).as_deref(), Some(head.trim()));
        write("staged.txt", "staged");
        git(&dir, &["add", "staged.txt"]);
        assert_eq!(repo.written_tree_of(&index), None);
        let tree = crate::git::write_tree(&dir, &index).unwrap();
        assert_eq!(repo.written_tree_of(&index), Some(tree.clone()));
        // Hashed again from its file (once known, by the checksum it ends with): never the
        // tree of the index as it was before.
        assert_eq!(repo.tree_of_index_file(&index), Some(tree));
        git(&dir, &["rm", "-q", "--cached", "staged.txt"]);
        assert_eq!(
            repo.tree_of_index_file(&index).as_deref(),
            Some(head.trim())
        );
        // An intent-to-add entry has no place in a tree.
        write("later.txt", "later");
        git(&dir, &["add", "-N", "later.txt"]);
        assert_eq!(index_tree(&repo.read_index().unwrap()), None);
        assert_eq!(repo.written_tree_of(&index), None);
    }

    /// An hour ago: old enough for refreshed stat data to be written back.
    fn an_hour_ago() -> std::time::SystemTime {
        std::time::SystemTime::now() - std::time::Duration::from_secs(3600)
    }

    #[test]
    fn the_write_back_keeps_the_index_version_and_every_extension() {
        let (_tmp, dir) = repo_with_a_commit();
        crate::fsx::write_atomic(&dir.join("b.txt"), b"b\n").unwrap();
        git(&dir, &["add", "b.txt"]);
        git(&dir, &["config", "core.untrackedCache", "true"]);
        git(
            &dir,
            &["update-index", "--untracked-cache", "--index-version", "4"],
        );
        git(&dir, &["status", "--porcelain"]);
        let repo = Repo::open(&dir).unwrap();
        let before = repo.read_index().unwrap();
        assert!(before.untracked().is_some());
        assert_eq!(before.version(), gix::index::Version::V4);
        // Stale stat data, same content: a refresh to write back.
        crate::ops::testutil::set_modified(&dir.join("a.txt"), an_hour_ago());
        assert_eq!(repo.changes().unwrap().lines, ["A  b.txt"]);
        let after = repo.read_index().unwrap();
        assert_ne!(
            after.entries()[0].stat,
            before.entries()[0].stat,
            "written back"
        );
        assert_eq!(after.version(), gix::index::Version::V4);
        assert!(after.untracked().is_some(), "git's untracked cache is kept");
        // git reads it, checksum and all, and sees what it saw.
        git(&dir, &["fsck", "--no-dangling", "--no-progress"]);
        assert_eq!(git(&dir, &["status", "--porcelain"]).trim(), "A  b.txt");
    }

    #[test]
    fn a_split_index_is_not_written_back() {
        let (_tmp, dir) = repo_with_a_commit();
        git(&dir, &["config", "core.splitIndex", "true"]);
        git(&dir, &["update-index", "--split-index"]);
        let bytes = || std::fs::read(dir.join(".git/index")).unwrap();
        let before = bytes();
        assert!(before.windows(4).any(|w| w == b"link"));
        crate::ops::testutil::set_modified(&dir.join("a.txt"), an_hour_ago());
        assert!(Repo::open(&dir).unwrap().changes().unwrap().is_clean());
        assert_eq!(bytes(), before, "the index is left as git wrote it");
    }

    #[test]
    fn refreshed_stat_data_is_not_written_over_an_index_someone_changed_since() {
        let (_tmp, dir) = repo_with_a_commit();
        let repo = Repo::open(&dir).unwrap();
        let read = repo.read_index().unwrap();
        let mut stat = read.entries()[0].stat;
        stat.mtime.secs -= 10;
        // Someone stages a file after this status read the index (the new index can share
        // the old one's second: the check must not rest on the time alone).
        crate::fsx::write_atomic(&dir.join("b.txt"), b"b\n").unwrap();
        git(&dir, &["add", "b.txt"]);
        assert!(scan::refresh::write(&read, &[(0, stat)], &[]).is_err());
        let staged = git(&dir, &["diff", "--cached", "--name-only"]);
        assert_eq!(staged.trim(), "b.txt", "the staged file is still staged");

        // Unchanged since it was read, the index is written.
        let read = repo.read_index().unwrap();
        scan::refresh::write(&read, &[(0, stat)], &[]).unwrap();
        assert_eq!(repo.read_index().unwrap().entries()[0].stat, stat);
        assert_eq!(
            git(&dir, &["diff", "--cached", "--name-only"]).trim(),
            "b.txt"
        );
    }

    #[test]
    fn porcelain_v2_records_become_short_status_letters() {
        let out = "1 .M N... 100644 100644 100644 a a a.txt\0\
                   1 A. N... 000000 100644 100644 0 b dir/new file.txt\0\
                   u UU N... 100644 100644 100644 100644 a b c both.txt\0\
                   1 D. N... 100644 000000 000000 a 0 gone.txt\0\
                   ? gone.txt\0? untracked/\0! target/\0";
        let (by_path, ignored) = parse_porcelain_v2(out);
        let c = changes_from(by_path);
        assert_eq!(
            c.lines,
            [
                " M a.txt",
                "UU both.txt",
                "A  dir/new file.txt",
                "D  gone.txt",
                "?? gone.txt",
                "?? untracked/"
            ]
        );
        assert_eq!(
            (c.staged, c.modified, c.conflicted, c.untracked),
            (2, 1, 1, 2)
        );
        assert_eq!(ignored, ["target/"]);
    }
}
