//! Whether a directory holds anything but files of a commit: the test that tells an
//! unfinished checkout (which grove may remove) from a person's work (which it keeps).

use std::collections::HashMap;
use std::path::Path;

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};

use super::{Error, Repo};

impl Repo {
    /// Whether every file and symlink in `dir` (the worktree's `.git` link aside) has
    /// exactly the content `commit` (a commit id or revision) has at the same path, so that
    /// removing `dir` loses nothing that `commit` does not keep. A checkout of `commit`
    /// that was cut short passes; a changed or new file — tracked, untracked or ignored —
    /// does not, nor does anything that is not a file, a symlink or a directory.
    pub fn holds_only_files_of(&self, commit: &str, dir: &Path) -> Result<bool, Error> {
        let repo = &self.repo;
        let read = |e: &dyn std::fmt::Display| Error::read(dir, e);
        let id = match ObjectId::from_hex(commit.as_bytes()) {
            Ok(id) => id,
            Err(_) => match self.rev(commit) {
                Some(hex) => ObjectId::from_hex(hex.as_bytes()).map_err(|e| read(&e))?,
                None => return Ok(false),
            },
        };
        let tree = repo
            .find_commit(id)
            .map_err(|e| read(&e))?
            .tree()
            .map_err(|e| read(&e))?;
        let mut recorder = gix::traverse::tree::Recorder::default();
        tree.traverse()
            .breadthfirst(&mut recorder)
            .map_err(|e| read(&e))?;
        let files: HashMap<BString, ObjectId> = recorder
            .records
            .into_iter()
            .filter(|e| e.mode.is_blob() || e.mode.is_link())
            .map(|e| (e.filepath, e.oid))
            .collect();
        let kind = repo.object_hash();
        for entry in walkdir::WalkDir::new(dir).min_depth(1).follow_links(false) {
            let entry = entry.map_err(|e| read(&e))?;
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            if entry.depth() == 1 && rel == Path::new(".git") {
                continue;
            }
            let ft = entry.file_type();
            let data = if ft.is_dir() {
                continue;
            } else if ft.is_file() {
                std::fs::read(entry.path()).map_err(|e| read(&e))?
            } else if ft.is_symlink() {
                use std::os::unix::ffi::OsStrExt;
                let target = std::fs::read_link(entry.path()).map_err(|e| read(&e))?;
                target.as_os_str().as_bytes().to_vec()
            } else {
                return Ok(false);
            };
            use std::os::unix::ffi::OsStrExt;
            let key = rel.as_os_str().as_bytes().as_bstr();
            let Some(want) = files.get(key) else {
                return Ok(false);
            };
            let have = gix::objs::compute_hash(kind, gix::objs::Kind::Blob, &data)
                .map_err(|e| read(&e))?;
            if have != *want {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
