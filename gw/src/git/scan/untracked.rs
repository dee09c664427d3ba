//! The names the index does not hold: an untracked file, or an untracked directory looked
//! into as git looks into one (collapsed to `dir/`, ignored as a whole, or a repository of
//! its own).

use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{AtFlags, FileType};

use super::names::Listing;
use super::{Worker, errno_text, is_gone, join, kind_of, open_dir};
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
        let text = |p: &[u8], dir: bool| {
            let mut s = String::from_utf8_lossy(p).into_owned();
            if dir {
                s.push('/');
            }
            s
        };
        if ignored {
            if ask.ignored {
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
            Err(e) => return Err(errno_text("cannot open", &path, e)),
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
        let listing = Listing::read(fd, path)?;
        if listing.git && is_repository(fd) {
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
        for n in &listing.names {
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
            if self.excluded(&child, is_dir)? {
                ignored.push(if is_dir { text + "/" } else { text });
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
                Err(e) => return Err(errno_text("cannot open", &child, e)),
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

/// Whether the `.git` in the directory open at `fd` makes it a repository: a file (a
/// worktree's or a submodule's link) or a directory with a `HEAD`.
fn is_repository(fd: BorrowedFd<'_>) -> bool {
    match rustix::fs::statat(fd, ".git", AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode as _) == FileType::Directory => {
            rustix::fs::statat(fd, ".git/HEAD", AtFlags::SYMLINK_NOFOLLOW).is_ok()
        }
        Ok(_) => true,
        Err(_) => false,
    }
}
