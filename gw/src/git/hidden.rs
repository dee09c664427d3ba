//! Edits `git status` does not show: files marked `--skip-worktree` or
//! `--assume-unchanged` are taken on trust, so an edit to one looks clean, and removing the
//! worktree would lose it silently.

use gix::index::entry::{Flags, Mode};

use super::{Error, Repo, read::err};

impl Repo {
    /// The tracked files (paths relative to the worktree) marked skip-worktree or
    /// assume-unchanged whose file differs from what the index records: its content as
    /// `git add` would store it (clean filters, line ends), its kind, or its link target. A
    /// file that is absent holds nothing the index does not (a sparse checkout leaves such
    /// files out). Nothing for a repository without a worktree.
    pub fn hidden_edits(&self) -> Result<Vec<String>, Error> {
        let repo = &self.repo;
        let Some(workdir) = repo.workdir() else {
            return Ok(Vec::new());
        };
        let index = repo.index_or_empty().map_err(err(self.path()))?;
        let trusted = |e: &gix::index::Entry| {
            e.flags
                .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
                && e.stage_raw() == 0
                && e.mode != Mode::DIR
                && e.mode != Mode::COMMIT
        };
        if !index.entries().iter().any(trusted) {
            return Ok(Vec::new());
        }
        let read = |e: &dyn std::fmt::Display| Error::read(self.path(), e);
        let kind = repo.object_hash();
        let blob = |data: &[u8]| {
            gix::objs::compute_hash(kind, gix::objs::Kind::Blob, data).map_err(|e| read(&e))
        };
        let mut pipeline: Option<gix::filter::Pipeline<'_>> = None;
        let mut out = Vec::new();
        for entry in index.entries().iter().filter(|e| trusted(e)) {
            let rela = entry.path(&index);
            let rel = gix::path::from_bstr(rela).map_err(|e| read(&e))?;
            let full = workdir.join(&rel);
            let meta = match full.symlink_metadata() {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                // A path through something that is no longer a directory: absent too.
                Err(e) if e.raw_os_error() == Some(20) => continue,
                Err(e) => return Err(read(&format!("{}: {e}", full.display()))),
            };
            let same = if entry.mode == Mode::SYMLINK {
                meta.file_type().is_symlink() && {
                    use std::os::unix::ffi::OsStrExt;
                    let target = std::fs::read_link(&full).map_err(|e| read(&e))?;
                    blob(target.as_os_str().as_bytes())? == entry.id
                }
            } else if meta.is_file() {
                let pipeline = match &mut pipeline {
                    Some(p) => p,
                    None => {
                        let stack = repo
                            .attributes_only(
                                &index,
                                gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
                            )
                            .map_err(|e| read(&e))?
                            .detach();
                        pipeline
                            .insert(gix::filter::Pipeline::new(repo, stack).map_err(|e| read(&e))?)
                    }
                };
                let file = std::fs::File::open(&full).map_err(|e| read(&e))?;
                use gix::filter::plumbing::pipeline::convert::ToGitOutcome as Out;
                use std::io::Read as _;
                let mut data = Vec::new();
                match pipeline
                    .convert_to_git(file, &rel, &index)
                    .map_err(|e| read(&e))?
                {
                    Out::Unchanged(mut r) => r.read_to_end(&mut data).map(|_| ()),
                    Out::Process(mut r) => r.read_to_end(&mut data).map(|_| ()),
                    Out::Buffer(b) => {
                        data.extend_from_slice(b);
                        Ok(())
                    }
                }
                .map_err(|e| read(&e))?;
                blob(&data)? == entry.id
            } else {
                false
            };
            if !same {
                out.push(rela.to_string());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::git;

    #[test]
    fn edits_to_files_git_takes_on_trust_are_found() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        for f in ["a", "b", "c", "gone"] {
            crate::fsx::write_atomic(&dir.join(f), f.as_ref()).unwrap();
        }
        git(dir, &["add", "."]);
        git(dir, &["commit", "-q", "-m", "files"]);
        let repo = || Repo::open(dir).unwrap();
        assert!(repo().hidden_edits().unwrap().is_empty());
        git(dir, &["update-index", "--skip-worktree", "a", "gone"]);
        git(dir, &["update-index", "--assume-unchanged", "b"]);
        assert!(
            repo().hidden_edits().unwrap().is_empty(),
            "marked but unchanged"
        );
        std::fs::remove_file(dir.join("gone")).unwrap();
        assert!(
            repo().hidden_edits().unwrap().is_empty(),
            "absent is not an edit"
        );
        crate::fsx::write_atomic(&dir.join("a"), "edited".as_ref()).unwrap();
        crate::fsx::write_atomic(&dir.join("b"), "edited".as_ref()).unwrap();
        crate::fsx::write_atomic(&dir.join("c"), "edited, and seen by status".as_ref()).unwrap();
        assert_eq!(repo().hidden_edits().unwrap(), ["a", "b"]);
        assert_eq!(repo().changes().unwrap().lines, [" M c"]);
    }
}
