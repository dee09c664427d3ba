//! What a repository's references and reflogs name, and which commits lie beyond a set of
//! them: the facts the safety kernel (`ops::safety`) weighs to tell what a removal loses.
//! The rules — which references count as "elsewhere" — are the kernel's; this is only how
//! to read them.

use std::path::Path;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{Error, Repo, read::err};

impl Repo {
    /// Every reference this repository (or worktree) sees but `HEAD` — shared ones and the
    /// worktree's own (`refs/worktree/…`, `refs/bisect/…`, `refs/rewritten/…`) — as its
    /// full name and the commit it peels to. One that peels to no commit (a tag of a tree)
    /// is left out: it names no history.
    pub fn references(&self) -> Result<Vec<(String, String)>, Error> {
        let refs = self.repo.references().map_err(err(self.path()))?;
        let mut out = Vec::new();
        for r in refs.all().map_err(err(self.path()))? {
            let Ok(mut r) = r else { continue };
            let name = r.name().as_bstr().to_string();
            let Ok(id) = r.peel_to_id() else { continue };
            let is_commit = self
                .repo
                .find_header(id.detach())
                .is_ok_and(|h| h.kind() == gix::object::Kind::Commit);
            if is_commit {
                out.push((name, id.to_string()));
            }
        }
        out.sort();
        Ok(out)
    }

    /// How many commits reachable from `tips` none of `hidden` reaches (all hex commit
    /// ids). A tip that names no commit of this repository is an error: what it holds
    /// cannot be told.
    pub fn count_beyond(&self, tips: &[String], hidden: &[String]) -> Result<usize, Error> {
        let ids = |v: &[String]| -> Result<Vec<ObjectId>, Error> {
            v.iter()
                .map(|h| ObjectId::from_hex(h.as_bytes()).map_err(|e| Error::read(self.path(), e)))
                .collect()
        };
        let tips = ids(tips)?;
        if tips.is_empty() {
            return Ok(0);
        }
        // A hidden commit that is not here (a reflog naming one gc removed) hides nothing.
        let hidden: Vec<ObjectId> = ids(hidden)?
            .into_iter()
            .filter(|id| self.repo.has_object(id))
            .collect();
        let walk = self
            .repo
            .rev_walk(tips)
            .with_hidden(hidden)
            .all()
            .map_err(err(self.path()))?;
        let mut n = 0;
        for info in walk {
            info.map_err(err(self.path()))?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether `oid` (hex) is an object of this repository.
    pub fn has_commit(&self, oid: &str) -> bool {
        ObjectId::from_hex(oid.as_bytes()).is_ok_and(|id| {
            self.repo
                .find_header(id)
                .is_ok_and(|h| h.kind() == gix::object::Kind::Commit)
        })
    }
}

impl Repo {
    /// Whether merging `branch` (a commit) into `base` (a commit) changes nothing: its
    /// changes are in `base` already — merged, rebased or squash-merged — so deleting it
    /// loses no content, whatever its commits. `false` on a conflict, or when git cannot
    /// tell (`git merge-tree --write-tree`, git 2.38 or later; it writes only objects).
    pub fn changes_are_in(&self, base: &str, branch: &str) -> bool {
        let Some(base_tree) = self.rev(&format!("{base}^{{tree}}")) else {
            return false;
        };
        let out = crate::proc::Cmd::git(self.path())
            .args(["merge-tree", "--write-tree", "--no-messages", base, branch])
            .run();
        match out {
            Ok(o) if o.success() => o.stdout.lines().next().map(str::trim) == Some(&base_tree),
            _ => false,
        }
    }
}

/// The commits the reflog file at `path` records (the new side of every entry that names
/// one), newest first; nothing when there is no such file. `<git dir>/logs/HEAD` is a
/// worktree's HEAD's, `<common dir>/logs/refs/stash` the stash's entries.
pub fn reflog(path: &Path) -> Result<Vec<String>, Error> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::read(path, e)),
    };
    let mut out: Vec<String> = Vec::new();
    for line in gix::refs::file::log::iter::forward(&bytes) {
        let Ok(line) = line else { continue };
        let new = line.new_oid.to_str_lossy().into_owned();
        if new.bytes().all(|b| b == b'0') || ObjectId::from_hex(new.as_bytes()).is_err() {
            continue;
        }
        out.push(new);
    }
    out.reverse();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::git;

    #[test]
    fn counts_what_lies_beyond_and_reads_reflogs() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        git(dir, &["commit", "-q", "--allow-empty", "-m", "one"]);
        git(dir, &["tag", "-a", "-m", "t", "v1"]);
        git(dir, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let repo = Repo::open(dir).unwrap();
        let refs = repo.references().unwrap();
        let names: Vec<&str> = refs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["refs/heads/main", "refs/tags/v1"],
            "peeled tags too"
        );
        let tip = |n: &str| refs.iter().find(|(r, _)| r == n).unwrap().1.clone();
        assert_eq!(
            repo.count_beyond(&[tip("refs/heads/main")], &[tip("refs/tags/v1")])
                .unwrap(),
            1
        );
        assert_eq!(
            repo.count_beyond(&[tip("refs/heads/main")], &[]).unwrap(),
            2
        );
        assert_eq!(repo.count_beyond(&[], &[]).unwrap(), 0);
        let log = reflog(&dir.join(".git/logs/HEAD")).unwrap();
        assert_eq!(log.len(), 2);
        assert_eq!(log[0], tip("refs/heads/main"), "newest first");
        assert!(
            reflog(&dir.join(".git/logs/refs/stash"))
                .unwrap()
                .is_empty()
        );
        assert!(repo.has_commit(&log[1]));
        assert!(!repo.has_commit(&"1".repeat(40)));

        // A branch whose change was squash-merged: its changes are in the base.
        git(dir, &["switch", "-q", "-c", "topic", "HEAD~1"]);
        crate::fsx::write_atomic(&dir.join("f"), "f\n".as_ref()).unwrap();
        git(dir, &["add", "f"]);
        git(dir, &["commit", "-q", "-m", "topic"]);
        git(dir, &["switch", "-q", "main"]);
        assert!(!repo.changes_are_in("main", "topic"));
        git(dir, &["merge", "-q", "--squash", "topic"]);
        git(dir, &["commit", "-q", "-m", "squashed"]);
        assert!(repo.changes_are_in("main", "topic"));
        assert!(repo.changes_are_in("main", "main"));
    }
}
