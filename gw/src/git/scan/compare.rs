//! A tracked file against its index entry: stat data first, the content as `git add` would
//! store it when the stat data is not conclusive.

use std::os::fd::BorrowedFd;

use gix::index::entry::{Flags, Mode};
use rustix::fs::{FileType, OFlags};

use super::{Worker, errno_text, is_gone};
use crate::git::status::Update;

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
        if entry.flags.contains(Flags::INTENT_TO_ADD) {
            let y = if kind == FileType::Directory {
                'D'
            } else {
                'A'
            };
            self.found.changed.push((i, y));
            return Ok(());
        }
        let y = match (entry.mode, kind) {
            (_, FileType::Directory) => Some('D'),
            (Mode::FILE | Mode::FILE_EXECUTABLE, FileType::RegularFile) => {
                let executable = stat.st_mode & 0o100 != 0;
                (rules.file_mode && executable != (entry.mode == Mode::FILE_EXECUTABLE))
                    .then_some('M')
            }
            (Mode::SYMLINK, FileType::Symlink) => None,
            (Mode::FILE | Mode::FILE_EXECUTABLE, FileType::Symlink)
            | (Mode::SYMLINK, FileType::RegularFile) => Some('T'),
            // A fifo, a socket, a device where a file was: git says modified.
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
        let id = self.hash(path, kind, at, name)?;
        match (id == Some(entry.id), same) {
            // Unchanged: its stat data is written back even when it was equal (the file was
            // racy), as git does, so that the index, written later than the file, no longer
            // sends every status to read it.
            (true, _) => self.found.updates.push((i, Update::Stat(now))),
            (false, same) => {
                self.found.changed.push((i, 'M'));
                if same {
                    // Racily clean in the index: keep it looking changed once the index is
                    // written with a newer time.
                    self.found.updates.push((i, Update::SizeZero));
                }
            }
        }
        Ok(())
    }

    /// The blob id `git add` would give the file at `path`, or `None` if it went away or is
    /// no longer a file.
    fn hash(
        &mut self,
        path: &[u8],
        kind: FileType,
        at: BorrowedFd<'_>,
        name: &[u8],
    ) -> Result<Option<gix::ObjectId>, String> {
        let hash_kind = self.shared.index.object_hash();
        let blob = |data: &[u8]| {
            gix::objs::compute_hash(hash_kind, gix::objs::Kind::Blob, data)
                .map_err(|e| e.to_string())
        };
        if kind == FileType::Symlink {
            return match rustix::fs::readlinkat(at, name, Vec::new()) {
                Ok(target) => blob(target.as_bytes()).map(Some),
                Err(e) if is_gone(e) => Ok(None),
                Err(e) => Err(errno_text("cannot read", path, e)),
            };
        }
        // Without blocking: a file replaced by a fifo since its `lstat` would otherwise hang
        // the open (a regular file ignores the flag).
        let file = match rustix::fs::openat(
            at,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            rustix::fs::Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(e) if is_gone(e) => return Ok(None),
            Err(e) => return Err(errno_text("cannot read", path, e)),
        };
        match rustix::fs::fstat(&file) {
            Ok(st) if FileType::from_raw_mode(st.st_mode as _) == FileType::RegularFile => {}
            // Replaced meanwhile by something that is not a file: changed.
            _ => return Ok(None),
        }
        let file = std::fs::File::from(file);
        let pipeline = match &mut self.filters {
            Some(pipeline) => pipeline,
            None => {
                let stack = self
                    .repo
                    .attributes_only(
                        self.shared.index,
                        gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
                    )
                    .map_err(|e| e.to_string())?
                    .detach();
                self.filters.insert(
                    gix::filter::Pipeline::new(self.repo, stack).map_err(|e| e.to_string())?,
                )
            }
        };
        use gix::filter::plumbing::pipeline::convert::ToGitOutcome as Out;
        use std::io::Read as _;
        let rela = gix::path::from_bstr(gix::bstr::BStr::new(path)).map_err(|e| e.to_string())?;
        let read = |e: std::io::Error| errno_text("cannot read", path, e);
        let mut data = Vec::new();
        match pipeline
            .convert_to_git(file, rela.as_ref(), self.shared.index)
            .map_err(|e| e.to_string())?
        {
            Out::Unchanged(mut r) => {
                r.read_to_end(&mut data).map_err(read)?;
            }
            Out::Process(mut r) => {
                r.read_to_end(&mut data).map_err(read)?;
            }
            Out::Buffer(b) => data.extend_from_slice(b),
        }
        blob(&data).map(Some)
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
