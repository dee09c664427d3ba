//! The worktrees a repository has registered, read as git reads them: each one's
//! private git directory (`.git/worktrees/<id>`) holds its path and its HEAD.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::{Error, Repo, read::err};

/// A worktree registered in a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    pub path: PathBuf,
    /// The checked-out branch, `None` when detached or unreadable.
    pub branch: Option<String>,
    pub head: Option<String>,
    pub is_main: bool,
    pub locked: bool,
    /// The directory is gone; `git worktree prune` would drop the registration.
    pub prunable: bool,
    /// Its private git directory (`.git/worktrees/<id>`; `.git` for the main checkout).
    pub admin: PathBuf,
}

impl Repo {
    /// The repository's git directory shared by all its worktrees (`.git` of the main
    /// checkout).
    pub fn common_dir(&self) -> PathBuf {
        self.repo.common_dir().to_path_buf()
    }

    /// This worktree's private git directory (`.git/worktrees/<id>`; `.git` for the main
    /// checkout).
    pub fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// Every worktree of this repository, the main checkout first.
    pub fn worktrees(&self) -> Result<Vec<WorktreeInfo>, Error> {
        let main = self.repo.main_repo().map_err(err(self.path()))?;
        let mut out = Vec::new();
        if let Some(wd) = main.workdir() {
            let head = main.head().ok();
            out.push(WorktreeInfo {
                admin: main.git_dir().to_path_buf(),
                path: wd.to_path_buf(),
                branch: head
                    .as_ref()
                    .and_then(|h| h.referent_name().map(|n| n.shorten().to_string())),
                head: head.as_ref().and_then(|h| h.id().map(|i| i.to_string())),
                is_main: true,
                locked: false,
                prunable: false,
            });
        }
        for proxy in main.worktrees().map_err(err(self.path()))? {
            // git ≥ 2.48 may write the link relative (`worktree.useRelativePaths`): read as
            // `<admin>/../../../ws/api`, it is the place it names, without the `..`.
            let path = lexical(&proxy.base().unwrap_or_default());
            let (locked, prunable) = (proxy.is_locked(), proxy.is_prunable());
            // Read the worktree's HEAD file, as git does, rather than opening the worktree
            // as a repository: a source repository used by many workspaces has dozens of
            // worktrees, and opening each cost milliseconds in every create and delete.
            let (branch, head) = worktree_head(&main, proxy.git_dir());
            out.push(WorktreeInfo {
                admin: proxy.git_dir().to_path_buf(),
                path,
                branch,
                head,
                is_main: false,
                locked,
                prunable,
            });
        }
        Ok(out)
    }
}

/// The branch a linked worktree has checked out and the commit its HEAD resolves to, from
/// its private git directory's `HEAD` (a symbolic ref, or a commit id when detached); the
/// branch itself lives in the shared refs of `main`.
fn worktree_head(main: &gix::Repository, git_dir: &Path) -> (Option<String>, Option<String>) {
    let Ok(Some(text)) = crate::fsx::read_optional(&git_dir.join("HEAD")) else {
        return (None, None);
    };
    let text = text.trim();
    match text.strip_prefix("ref:") {
        Some(target) => {
            let target = target.trim();
            let Ok(name) = gix::refs::FullName::try_from(target) else {
                return (None, None);
            };
            let branch = Some(name.as_ref().shorten().to_string());
            let head = main
                .try_find_reference(target)
                .ok()
                .flatten()
                .and_then(|mut r| r.peel_to_id().ok().map(|id| id.to_string()));
            (branch, head)
        }
        None => match ObjectId::from_hex(text.as_bytes()) {
            Ok(id) => (None, Some(id.to_string())),
            Err(_) => (None, None),
        },
    }
}

/// What a worktree directory's `.git` link says, checked from both ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// `.git` names a private git directory whose `gitdir` names this worktree back.
    Linked { admin: PathBuf },
    /// There is no `.git` file (a plain directory, or a repository of its own).
    NotLinked,
    /// `.git` names a private git directory that is gone (its registration was pruned).
    Unregistered { admin: PathBuf },
    /// `.git` names a private git directory that now belongs to another worktree: git
    /// reused the name after this one's registration was pruned, and work done here would
    /// move that worktree's branch.
    CrossLinked { admin: PathBuf, owner: PathBuf },
}

/// The private git directory the `.git` file of the worktree at `dir` names, if it is a
/// `gitdir:` file.
fn admin_named_by(dir: &Path) -> Option<PathBuf> {
    linked_admin(&dir.join(".git"), dir)
}

/// The private git directory the `.git` file `gitfile` names, a relative name read as
/// relative to `base` (the worktree the file belongs to, wherever the file is now).
pub fn linked_admin(gitfile: &Path, base: &Path) -> Option<PathBuf> {
    let text = crate::fsx::read_optional(gitfile).ok()??;
    let target = Path::new(text.trim().strip_prefix("gitdir:")?.trim());
    Some(if target.is_absolute() {
        target.to_path_buf()
    } else {
        // Read as the place it names even where `base` is gone (a worktree in the trash).
        lexical(&base.join(target))
    })
}

/// Whether the worktree at `dir` is one of `source`'s: its `.git` file names a private git
/// directory in `source`'s `worktrees/`. `git worktree repair <dir>` rewrites the
/// registration that file names, in whichever repository it is, so grove asks for a repair
/// only of such a worktree.
pub fn is_worktree_of(dir: &Path, source: &Path) -> bool {
    let Some(admin) = admin_named_by(dir) else {
        return false;
    };
    let Ok(repo) = Repo::open(source) else {
        return false;
    };
    let worktrees = crate::fsx::canonical(&repo.common_dir().join("worktrees"));
    admin
        .parent()
        .is_some_and(|p| crate::fsx::canonical(p) == worktrees)
}

/// `path` with `.` and `..` taken out by name (a registration's path as git joins a
/// relative link to its private directory; nothing on the way is a symbolic link git made).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Reads the link of the worktree at `dir`.
pub fn link(dir: &Path) -> Link {
    let dot_git = dir.join(".git");
    let Some(admin) = admin_named_by(dir) else {
        return Link::NotLinked;
    };
    let Ok(Some(back)) = crate::fsx::read_optional(&admin.join("gitdir")) else {
        return Link::Unregistered { admin };
    };
    let back = Path::new(back.trim());
    let back = if back.is_absolute() {
        back.to_path_buf()
    } else {
        admin.join(back)
    };
    if crate::fsx::canonical(&back) == crate::fsx::canonical(&dot_git) {
        Link::Linked { admin }
    } else {
        let owner = back.parent().map(Path::to_path_buf).unwrap_or(back);
        Link::CrossLinked { admin, owner }
    }
}

/// The operation a worktree is in the middle of (`rebase`, `merge`, …), read from its
/// private git directory `admin`.
pub fn in_progress(admin: &Path) -> Option<&'static str> {
    [
        ("rebase-merge", "rebase"),
        ("rebase-apply", "rebase"),
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
        ("BISECT_LOG", "bisect"),
    ]
    .into_iter()
    .find(|(f, _)| admin.join(f).exists())
    .map(|(_, op)| op)
}

/// Why the worktree whose private git directory is `admin` is locked (`git worktree
/// lock`), when it is: `Some("")` for a lock without a reason.
pub fn lock_reason(admin: &Path) -> Option<String> {
    crate::fsx::read_optional(&admin.join("locked"))
        .ok()
        .flatten()
        .map(|r| r.trim().to_string())
}

/// The lock files git may leave in a worktree's private git directory when it is killed
/// half way, that exist now.
pub fn worktree_locks(admin: &Path) -> Vec<PathBuf> {
    ["index.lock", "HEAD.lock"]
        .into_iter()
        .map(|f| admin.join(f))
        .filter(|p| p.exists())
        .collect()
}

/// The lock files git may leave in a source repository, in what grove asks of it (its
/// branches, packed refs, config), that exist now. `branches` are the workspace branches.
pub fn repository_locks(source_git_dir: &Path, branches: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["packed-refs.lock", "config.lock"]
        .into_iter()
        .map(|f| source_git_dir.join(f))
        .collect();
    out.extend(
        branches
            .iter()
            .map(|b| source_git_dir.join(format!("refs/heads/{b}.lock"))),
    );
    out.retain(|p| p.exists());
    out
}
