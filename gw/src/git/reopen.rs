//! Opening a repository again in the same process: a delete opens its source repository
//! five times (its worktrees, the branch's fate, the registration, what is pinned, the
//! branch), and each open reads and parses its configuration again.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::Error;
use super::read::Repo;

/// The repositories opened with [`Repo::open_again`], each with its configuration files as
/// they were when it was opened.
static OPENED: Mutex<Vec<(PathBuf, Stamp, gix::ThreadSafeRepository)>> = Mutex::new(Vec::new());

/// Which file each of a repository's own configuration files was (device, inode, size and
/// modification time; `None`: absent). git writes a configuration file by renaming a new
/// one over it, so a change is a new inode.
type Stamp = [Option<(u64, u64, u64, i64, i64)>; 3];

fn stamp(repo: &gix::Repository) -> Stamp {
    let of = |p: PathBuf| {
        std::fs::metadata(p)
            .ok()
            .map(|m| (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
    };
    [
        of(repo.common_dir().join("config")),
        of(repo.git_dir().join("config")),
        of(repo.git_dir().join("config.worktree")),
    ]
}

impl Repo {
    /// [`Repo::open`], from this process's earlier open of `path` while the repository's
    /// configuration files are the ones that open read: what gix keeps of an open
    /// repository besides its configuration (references, the index, worktrees) it reads
    /// again, or checks, each time it is asked, and objects never change.
    pub fn open_again(path: &Path) -> Result<Repo, Error> {
        let known = {
            let opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
            opened
                .iter()
                .find(|(p, _, _)| p == path)
                .map(|(_, s, r)| (*s, r.clone()))
        };
        if let Some((then, sync)) = known {
            let mut repo = sync.to_thread_local();
            if stamp(&repo) == then {
                repo.object_cache_size_if_unset(4 << 20);
                return Ok(Repo::from_parts(repo, path.to_path_buf()));
            }
        }
        let repo = Repo::open(path)?;
        let now = stamp(&repo.repo);
        let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
        opened.retain(|(p, _, _)| p != path);
        opened.push((path.to_path_buf(), now, repo.repo.clone().into_sync()));
        Ok(repo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::git;

    /// A setting changed by git since the first open is seen by the next: the repository is
    /// opened anew when its configuration file is another.
    #[test]
    fn a_repository_opened_again_sees_its_configuration_as_it_is_now() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        git(dir, &["commit", "-q", "--allow-empty", "-m", "one"]);
        git(dir, &["config", "branch.main.description", "first"]);
        let read = |r: &Repo| {
            r.repo
                .config_snapshot()
                .string("branch.main.description")
                .map(|s| s.to_string())
        };
        let first = Repo::open_again(dir).unwrap();
        assert_eq!(read(&first).as_deref(), Some("first"));
        assert_eq!(
            read(&Repo::open_again(dir).unwrap()).as_deref(),
            Some("first")
        );
        git(dir, &["config", "branch.main.description", "second"]);
        assert_eq!(
            read(&Repo::open_again(dir).unwrap()).as_deref(),
            Some("second")
        );
        // References are read as they are now, from a repository opened before they moved.
        git(dir, &["branch", "later"]);
        assert!(
            Repo::open_again(dir)
                .unwrap()
                .local_branch("later")
                .is_some()
        );
    }
}
