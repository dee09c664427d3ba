//! The git adapter: gix in-process for every read, the `git` CLI for every mutation.
//!
//! This is the only module that imports gix or runs git. Reads open repositories with
//! `bail_if_untrusted`, so a repository owned by someone else is an error rather than a
//! silently reduced view (gix would otherwise ignore its config and report no remotes).

mod hidden;
mod history;
mod index_tree;
mod kept;
mod named;
mod pristine;
mod read;
mod reopen;
mod scan;
mod staged;
mod status;
mod tracking;
pub mod url;
mod worktree;
mod write;

pub use history::reflog;
pub use named::{Matches, Named, Standing};
pub use read::{
    Base, BranchInfo, Changes, Head, Repo, Unreadable, WorktreeStatus, worktree_status,
};
#[doc(hidden)]
pub use scan::{fuzz_index, ignored_by_rules};
pub use tracking::{Tracking, Unknown, tracking};
pub use worktree::{
    Link, WorktreeInfo, in_progress, is_worktree_of, lexical, link, linked_admin, lock_reason,
    repository_locks, worktree_locks,
};
pub use write::*;

use std::path::{Path, PathBuf};

use crate::proc;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot open repository `{}`: {message}", path.display())]
    Open { path: PathBuf, message: String },
    #[error("cannot read `{}`: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error(transparent)]
    Command(#[from] proc::Error),
}

impl Error {
    pub(crate) fn read(path: &Path, e: impl std::fmt::Display) -> Error {
        Error::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }

    fn command_stderr(&self) -> Option<String> {
        match self {
            Error::Command(proc::Error::Failed { stderr, .. }) => Some(stderr.to_lowercase()),
            _ => None,
        }
    }

    /// The failure was git refusing credentials; retrying will not help.
    pub fn is_auth(&self) -> bool {
        const AUTH: &[&str] = &[
            "permission denied (publickey",
            "host key verification failed",
            "terminal prompts disabled",
            "could not read username",
            "could not read password",
            "authentication failed",
            "repository not found",
        ];
        self.command_stderr()
            .is_some_and(|s| AUTH.iter().any(|a| s.contains(a)))
    }

    /// git could not write a file (the repository, or a directory in it, is read-only).
    pub fn is_local_permission(&self) -> bool {
        self.command_stderr().is_some_and(|s| {
            (s.contains("permission denied") && !s.contains("permission denied (publickey"))
                || s.contains("read-only file system")
        })
    }

    /// The failure looks like a network hiccup worth retrying.
    pub fn is_transient(&self) -> bool {
        const TRANSIENT: &[&str] = &[
            "could not resolve host",
            "connection timed out",
            "connection refused",
            "connection reset",
            "operation timed out",
            "early eof",
            "the remote end hung up unexpectedly",
            "temporary failure",
            "unable to access",
        ];
        !self.is_auth()
            && self
                .command_stderr()
                .is_some_and(|s| TRANSIENT.iter().any(|a| s.contains(a)))
    }

    /// A hint for the user, when one is known.
    pub fn fix(&self) -> Option<String> {
        if self.is_auth() {
            Some("Check your SSH keys or credentials (for example `ssh -T git@github.com`)".into())
        } else if self.is_local_permission() {
            Some(
                "git may not write there: check the permissions of the repository (and its `.git`)"
                    .into(),
            )
        } else if self.is_transient() {
            Some("Check the network connection and retry".into())
        } else {
            None
        }
    }
}

/// `git --version` (`git version 2.47.3`), for reports.
pub fn version(cwd: &Path) -> Result<String, Error> {
    let out = proc::Cmd::git(cwd).arg("--version").check()?;
    Ok(out.stdout.trim().to_string())
}

/// Whether `full` (`refs/heads/…`) is a reference name git accepts.
pub fn valid_ref_name(full: &str) -> bool {
    gix::validate::reference::name(full.into()).is_ok()
}
