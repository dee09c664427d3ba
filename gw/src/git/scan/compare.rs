//! A tracked file against its index entry: stat data first, the content as `git add` would
//! store it when the stat data is not conclusive.

use std::os::fd::{AsFd, BorrowedFd};

use gix::index::entry::{Flags, Mode};
use rustix::fs::{AtFlags, FileType, OFlags};

use super::filters::{Attributes, Cleaned, Filters};
use super::{Worker, is_gone, refresh};

impl Worker<'_> {
    /// Compares the tracked file `entry` (index position `i`) with its `stat`.
    pub(super) fn compare(
        &mut self,
        i: usize,
        entry: &gix::index::Entry,
        path: &[u8],
        stat: &rustix::fs::Stat,
        at: BorrowedFd<'_>,
        name: &[u8],
    ) -> Result<(), String> {
        let rules = self.shared.rules;
        let kind = FileType::from_raw_mode(stat.st_mode as _);
        if entry.mode == Mode::COMMIT {
            // A submodule (reached only when git cannot be asked, see `status_of`): changed
            // when its HEAD is not the recorded commit, or when it holds work of its own.
            let y = if kind == FileType::Directory {
                (self.commit_in(path) != Some(entry.id) || self.submodule_holds_work(path))
                    .then_some('M')
            } else {
                Some('T')
            };
            if let Some(y) = y {
                self.found.changed.push((i, y));
            }
            return Ok(());
        }
        if kind == FileType::Directory {
            // git's `check_removed`: a directory where a file was is the file deleted, unless
            // it is a repository with a commit (then the entry changed kind, or, intent to
            // add, is added).
            let repository = self.commit_in(path).is_some();
            let y = match (entry.flags.contains(Flags::INTENT_TO_ADD), repository) {
                (true, true) => 'A',
                (false, true) => 'T',
                (_, false) => 'D',
            };
            self.found.changed.push((i, y));
            return Ok(());
        }
        if entry.flags.contains(Flags::INTENT_TO_ADD) {
            self.found.changed.push((i, 'A'));
            return Ok(());
        }
        let y = match (entry.mode, kind) {
            (Mode::FILE | Mode::FILE_EXECUTABLE, FileType::RegularFile) => {
                let executable = stat.st_mode & 0o100 != 0;
                (rules.file_mode && executable != (entry.mode == Mode::FILE_EXECUTABLE))
                    .then_some('M')
            }
            (Mode::SYMLINK, FileType::Symlink) => None,
            (Mode::FILE | Mode::FILE_EXECUTABLE, FileType::Symlink)
            | (Mode::SYMLINK, FileType::RegularFile) => Some('T'),
            // A fifo, a socket, a device: git takes it for a regular file (its
            // `ce_mode_from_stat`), so where a symbolic link was, it changed kind; where a
            // file was, it is modified.
            (Mode::SYMLINK, _) => Some('T'),
            _ => Some('M'),
        };
        if let Some(y) = y {
            self.found.changed.push((i, y));
            return Ok(());
        }
        let now = stat_of(stat);
        let was = entry.stat;
        if now.size != was.size && was.size != 0 {
            self.found.changed.push((i, 'M'));
            self.found.resized.push(i);
            return Ok(());
        }
        let same = now.mtime == was.mtime
            && now.size == was.size
            && (!rules.ctime || now.ctime == was.ctime)
            && (!rules.ids || (now.ino == was.ino && now.uid == was.uid && now.gid == was.gid));
        let racy = i64::from(was.mtime.secs) >= rules.index_secs;
        if same && !racy {
            return Ok(());
        }
        match self.hash(path, kind, at, name)? {
            Cleaned::Id(id) if id == entry.id => {
                // Unchanged: its stat data may be written back (even when it was equal, the
                // file being racy: the index, written later, then no longer sends every
                // status to read it) if the file has not changed for long enough that a
                // later edit cannot share its second (see `refresh`).
                if refresh::fresh_enough(&now, rules.started) {
                    self.found.updates.push((i, now));
                }
            }
            Cleaned::Id(_) | Cleaned::Gone => self.found.changed.push((i, 'M')),
            Cleaned::Unreadable(why) => {
                // git cannot read it either, and calls it modified.
                self.found.changed.push((i, 'M'));
                self.unreadable(path, false, why);
            }
        }
        Ok(())
    }

    /// Whether the submodule at `path` holds work, as git's `is_submodule_modified` finds
    /// it: a changed file, a new one when untracked files are shown, or (here) what could
    /// not be read (seed 20271462).
    fn submodule_holds_work(&self, path: &[u8]) -> bool {
        use crate::git::status::{Ask, Untracked};
        let Some(dir) = self
            .repo
            .workdir()
            .and_then(|w| gix::path::from_byte_slice(path).ok().map(|p| w.join(p)))
        else {
            return true;
        };
        let ask = Ask {
            untracked: match self.shared.ask.untracked {
                Untracked::No => Untracked::No,
                _ => Untracked::Normal,
            },
            ignored: false,
        };
        crate::git::Repo::open(&dir)
            .and_then(|r| r.status_of(ask))
            .map_or(true, |(c, _)| {
                !c.lines.is_empty() || !c.unreadable.is_empty()
            })
    }

    /// The commit `HEAD` names in the directory at `path` (relative to the worktree), when
    /// it is a repository (git's `resolve_gitlink_ref`).
    fn commit_in(&self, path: &[u8]) -> Option<gix::ObjectId> {
        let workdir = self.repo.workdir()?;
        let dir = workdir.join(gix::path::from_byte_slice(path).ok()?);
        let fd = rustix::fs::open(
            &dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok()?;
        if !super::untracked::is_repository(fd.as_fd()) {
            return None;
        }
        let repo = gix::open_opts(&dir, gix::open::Options::isolated()).ok()?;
        repo.head_id().ok().map(|id| id.detach())
    }

    /// The blob id `git add` would give the file at `path`.
    fn hash(
        &mut self,
        path: &[u8],
        kind: FileType,
        at: BorrowedFd<'_>,
        name: &[u8],
    ) -> Result<Cleaned, String> {
        let hash_kind = self.shared.index.object_hash();
        if kind == FileType::Symlink {
            return Ok(match rustix::fs::readlinkat(at, name, Vec::new()) {
                Ok(target) => Cleaned::Id(
                    gix::objs::compute_hash(hash_kind, gix::objs::Kind::Blob, target.as_bytes())
                        .map_err(|e| e.to_string())?,
                ),
                Err(e) if is_gone(e) => Cleaned::Gone,
                Err(e) => Cleaned::Unreadable(e.to_string()),
            });
        }
        let attributes = if self.attributes_are_files(at) {
            Attributes::Worktree
        } else {
            Attributes::Staged
        };
        let mut open = || -> Result<Option<std::fs::File>, String> {
            // Without blocking: a file replaced by a fifo since its `lstat` would otherwise
            // hang the open (a regular file ignores the flag).
            let file = match rustix::fs::openat(
                at,
                name,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
                rustix::fs::Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(e) if is_gone(e) => return Ok(None),
                Err(e) => return Err(e.to_string()),
            };
            match rustix::fs::fstat(&file) {
                Ok(st) if FileType::from_raw_mode(st.st_mode as _) == FileType::RegularFile => {
                    Ok(Some(std::fs::File::from(file)))
                }
                // Replaced meanwhile by something that is not a file: changed.
                _ => Ok(None),
            }
        };
        let filters = match &mut self.filters {
            Some(f) => f,
            None => self
                .filters
                .insert(Filters::new(self.repo, self.shared.index)?),
        };
        let rela = gix::path::from_bstr(gix::bstr::BStr::new(path)).map_err(|e| e.to_string())?;
        filters.blob_id(
            self.repo,
            self.shared.index,
            &rela,
            attributes,
            &mut open,
            &mut self.found.warnings,
            &mut self.found.unreadable,
        )
    }

    /// Whether every `.gitattributes` from the worktree down to the directory open at `at`
    /// (the one being compared) is absent, a regular file, a directory or a link — what
    /// gix reads without blocking.
    fn attributes_are_files(&self, at: BorrowedFd<'_>) -> bool {
        let chain = std::iter::once(self.root)
            .chain(self.open.iter().map(|(_, fd)| fd.as_fd()))
            .chain(std::iter::once(at));
        chain.into_iter().all(|fd| {
            match rustix::fs::statat(fd, ".gitattributes", AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => matches!(
                    FileType::from_raw_mode(st.st_mode as _),
                    FileType::RegularFile | FileType::Directory | FileType::Symlink
                ),
                Err(_) => true,
            }
        })
    }
}

/// What git reports for an index entry whose file is missing: deleted, or nothing for an
/// entry git does not compare.
pub(super) fn absent(entry: &gix::index::Entry) -> Option<char> {
    if entry.stage_raw() != 0 {
        return Some('U');
    }
    if entry
        .flags
        .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
    {
        return None;
    }
    Some('D')
}

/// The index's stat data for a file's `lstat`, truncated as git stores it.
fn stat_of(st: &rustix::fs::Stat) -> gix::index::entry::Stat {
    use gix::index::entry::stat::Time;
    gix::index::entry::Stat {
        mtime: Time {
            secs: st.st_mtime as u32,
            nsecs: st.st_mtime_nsec as u32,
        },
        ctime: Time {
            secs: st.st_ctime as u32,
            nsecs: st.st_ctime_nsec as u32,
        },
        dev: st.st_dev as u32,
        ino: st.st_ino as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        size: st.st_size as u32,
    }
}
