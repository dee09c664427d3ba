//! Whether git tracks a file: the question `gw-migrate` and `gw doctor` ask before they
//! touch a `.mcp.json`, answered the way git would — or "unknown", never a guess.

use std::path::{Path, PathBuf};

use super::Repo;

/// Whether git tracks a file, as far as can be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tracking {
    /// The index of the repository whose work tree holds it has an entry for it.
    Tracked,
    /// No repository holds it, or its repository's index has no entry for it.
    Untracked,
    /// It cannot be told; callers treat this like tracked.
    Unknown(Unknown),
}

/// Why tracking cannot be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unknown {
    /// The work tree's `.git` file names a git directory that does not exist (the source
    /// repository moved or was deleted).
    BrokenLink { dot_git: PathBuf, gitdir: PathBuf },
    /// The repository belongs to another user (git's "dubious ownership"); grove does not
    /// read it.
    NotTrusted { repo: PathBuf },
    /// The repository's index cannot be read.
    IndexUnreadable { repo: PathBuf, message: String },
    /// Anything else (an unreadable `.git`, a repository that does not open).
    Other { message: String },
}

/// Whether git tracks `file`. The nearest directory above it with a `.git` decides; a
/// `.git` that cannot be followed makes the answer unknown rather than "untracked", unlike
/// a discovery that walks on past it to an outer repository or to none.
pub fn tracking(file: &Path) -> Tracking {
    use std::io::ErrorKind;
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = crate::fsx::canonical(dir);
    let Some(name) = file.file_name() else {
        return Tracking::Untracked;
    };
    let file = dir.join(name);
    let mut at = Some(dir.as_path());
    while let Some(d) = at {
        let dot_git = d.join(".git");
        match std::fs::metadata(&dot_git) {
            Ok(meta) => return tracking_in(d, &dot_git, meta.is_file(), &file),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                // A `.git` symlink that leads nowhere is a broken link too.
                if let Ok(target) = std::fs::read_link(&dot_git) {
                    return Tracking::Unknown(Unknown::BrokenLink {
                        gitdir: d.join(target),
                        dot_git,
                    });
                }
            }
            Err(e) => {
                return Tracking::Unknown(Unknown::Other {
                    message: format!("cannot read `{}`: {e}", dot_git.display()),
                });
            }
        }
        at = d.parent();
    }
    Tracking::Untracked
}

fn tracking_in(work_dir: &Path, dot_git: &Path, is_file: bool, file: &Path) -> Tracking {
    if is_file {
        let text = match std::fs::read(dot_git) {
            Ok(t) => t,
            Err(e) => {
                return Tracking::Unknown(Unknown::Other {
                    message: format!("cannot read `{}`: {e}", dot_git.display()),
                });
            }
        };
        let text = String::from_utf8_lossy(&text);
        let Some(target) = text.strip_prefix("gitdir:").map(str::trim) else {
            return Tracking::Unknown(Unknown::Other {
                message: format!("`{}` does not name a git directory", dot_git.display()),
            });
        };
        let gitdir = work_dir.join(target);
        if !gitdir.is_dir() {
            return Tracking::Unknown(Unknown::BrokenLink {
                dot_git: dot_git.to_path_buf(),
                gitdir,
            });
        }
    }
    let repo = match Repo::open(work_dir) {
        Ok(r) => r,
        Err(e) => {
            let untrusted = [work_dir, dot_git].iter().any(|p| {
                gix::sec::Trust::from_path_ownership(p).is_ok_and(|t| t == gix::sec::Trust::Reduced)
            });
            return Tracking::Unknown(if untrusted {
                Unknown::NotTrusted {
                    repo: work_dir.to_path_buf(),
                }
            } else {
                Unknown::Other {
                    message: e.to_string(),
                }
            });
        }
    };
    let Ok(rel) = file.strip_prefix(work_dir) else {
        return Tracking::Untracked;
    };
    // A repository without an index whose HEAD names a commit has lost its index (a
    // fresh one, before its first commit, has none yet): what it tracks cannot be told.
    let index_path = repo.repo.index_path();
    if !index_path.exists() && repo.repo.head_id().is_ok() {
        return Tracking::Unknown(Unknown::Other {
            message: format!(
                "the repository `{}` has no index (`{}` is missing) although its HEAD names a commit",
                work_dir.display(),
                index_path.display()
            ),
        });
    }
    let index = match repo.repo.index_or_empty() {
        Ok(i) => i,
        Err(e) => {
            return Tracking::Unknown(Unknown::IndexUnreadable {
                repo: work_dir.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    let Ok(rel) =
        gix::path::into_bstr(rel).map(|r| gix::path::to_unix_separators_on_windows(r).into_owned())
    else {
        return Tracking::Unknown(Unknown::Other {
            message: format!("`{}` is not a path git can name", rel.display()),
        });
    };
    if index.entry_by_path(rel.as_ref()).is_some() {
        Tracking::Tracked
    } else {
        Tracking::Untracked
    }
}
