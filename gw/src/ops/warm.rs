//! Warm worktrees: a new worktree starts with the build caches and dependencies its
//! repository's checkout already has (`.grove.toml` `copy`, on `gw create --copy` and
//! `gw add-repo --copy`, or always with `[create] copy = true`).
//!
//! Planning ([`plan`], part of each repository's plan, shared by create and add-repo)
//! decides what is copied: the paths `copy` names in the checkout that git ignores or does
//! not track — a tracked one refuses the command — and that the new worktree's commit
//! leaves room for. Describing ([`describe`]) measures them for `gw plan`. Carrying out is
//! one journaled step per repository (`Action::CopyPaths`, applied by [`copy`]) inside the
//! command's transaction, before its commit point: a failure, a signal or a kill rolls it
//! back, and its undo removes exactly what it made, through the safety kernel
//! (`safety::remove::copied`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::RepoConfig;
use crate::duration::format_size;
use crate::error::{Code, Error, Result};
use crate::git::{self, Standing};
use crate::ops::plan::{Change, ChangeKind, Fact};
use crate::ops::{Ctx, Task, tx};
use crate::proc::signals;
use crate::treecopy;

/// What one repository's copy will be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyPlan {
    /// Relative to the checkout and to the new worktree; sorted, none inside another.
    pub entries: Vec<Entry>,
    /// Named by `copy` but not copied, and why.
    pub skipped: Vec<(PathBuf, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub standing: Standing,
}

impl CopyPlan {
    pub fn paths(&self) -> Vec<PathBuf> {
        self.entries.iter().map(|e| e.path.clone()).collect()
    }
}

/// One repository's copy, as done: `result.copied[]` of `gw create` and `gw add-repo`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CopyResult {
    pub repo: String,
    /// The paths copied, relative to the worktree.
    pub paths: Vec<PathBuf>,
    /// Regular files copied, and their bytes.
    pub files: u64,
    pub bytes: u64,
    /// Symbolic links, copied as links.
    pub symlinks: u64,
    pub dirs: u64,
    /// FIFOs, sockets and devices, not copied.
    pub skipped: u64,
    /// The files are copy-on-write clones (the file system makes them): they take no
    /// space until one side changes.
    pub reflink: bool,
}

impl CopyResult {
    pub fn new(repo: &str, paths: Vec<PathBuf>, c: &treecopy::Copied) -> CopyResult {
        CopyResult {
            repo: repo.to_string(),
            paths,
            files: c.tally.files,
            bytes: c.tally.bytes,
            symlinks: c.tally.symlinks,
            dirs: c.tally.dirs,
            skipped: c.tally.skipped,
            reflink: c.reflink,
        }
    }

    /// `node_modules, target: 20000 files, 312.4 MiB (copy-on-write)`.
    pub fn summary(&self) -> String {
        format!(
            "{}: {}, {}{}",
            join(&self.paths),
            crate::ops::count(self.files as usize, "file", "files"),
            format_size(self.bytes),
            if self.reflink { " (copy-on-write)" } else { "" }
        )
    }
}

/// Decides what of the checkout `source` (repository `repo`, whose `.grove.toml` is
/// `config`) is copied into a new worktree of `commit`: the paths `copy` names that git
/// ignores or does not track. A tracked one is refused (`CORRUPT_STATE`, naming it and the
/// fix); one the commit has files at (or whose directory it lacks) is skipped, and said.
pub fn plan(
    repo: &str,
    source: &Path,
    config: &RepoConfig,
    commit: Option<&str>,
) -> Result<CopyPlan> {
    if config.copy.is_empty() {
        return Ok(CopyPlan::default());
    }
    let git = git::Repo::open(source)?;
    let found = git.named(&config.copy)?;
    if let Some((path, pattern)) = found.tracked.first() {
        let file = source.join(crate::config::REPO_FILE);
        let named = if *pattern == path.to_string_lossy() {
            String::new()
        } else {
            format!(" (matched by `{pattern}`)")
        };
        return Err(Error::new(
            Code::CorruptState,
            format!(
                "{repo}: `copy` in `{}` names `{}`{named}, which git tracks: grove copies only \
                 ignored or untracked paths (a tracked file is checked out already)",
                file.display(),
                path.display()
            ),
        )
        .with_fix(format!(
            "Take `{}` out of `copy` in `{}`, or stop tracking it (`git rm -r --cached {}` and \
             add it to `.gitignore`)",
            pattern,
            file.display(),
            crate::proc::shell_quote(&path.to_string_lossy())
        ))
        .with_details(serde_json::json!({
            "repo": repo, "path": path, "pattern": pattern, "file": file,
            "tracked": found.tracked.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        })));
    }
    let mut plan = CopyPlan {
        skipped: found.passed_over,
        ..CopyPlan::default()
    };
    for n in found.named {
        let room = match commit {
            Some(c) => git.room_for(c, &n.path)?,
            None => true,
        };
        if room {
            plan.entries.push(Entry {
                path: n.path,
                standing: n.standing,
            });
        } else {
            plan.skipped.push((
                n.path,
                "the new worktree's commit has files there (or lacks its directory); not \
                 copied over them"
                    .into(),
            ));
        }
    }
    Ok(plan)
}

/// The plan's changes and facts for one repository's copy: each path with what it holds
/// (measured now, as the copy would walk it), and each path skipped. The sizes are facts:
/// `gw apply` refuses a plan whose copy grew or shrank since.
pub fn describe(
    repo: &str,
    source: &Path,
    worktree: &Path,
    plan: &CopyPlan,
    changes: &mut Vec<Change>,
    facts: &mut Vec<Fact>,
) {
    for e in &plan.entries {
        let measured = treecopy::measure(
            source,
            std::slice::from_ref(&e.path),
            crate::parallel::share(),
        );
        let (detail, fact) = match &measured {
            Ok(t) => (
                format!(
                    "{} {}: {}, {}{}, from {} (copy-on-write where the file system can)",
                    match e.standing {
                        Standing::Ignored => "ignored",
                        Standing::Untracked => "untracked",
                    },
                    e.path.display(),
                    crate::ops::count(t.files as usize, "file", "files"),
                    format_size(t.bytes),
                    if t.symlinks > 0 {
                        format!(
                            ", {}",
                            crate::ops::count(t.symlinks as usize, "link", "links")
                        )
                    } else {
                        String::new()
                    },
                    source.join(&e.path).display()
                ),
                format!("{} files, {} bytes", t.files, t.bytes),
            ),
            Err(err) => (
                format!("{}: cannot be measured: {err}", e.path.display()),
                "unreadable".to_string(),
            ),
        };
        facts.push(Fact::new(
            Some(repo),
            format!("copy {}", e.path.display()),
            fact,
        ));
        changes.push(
            Change::new(ChangeKind::CopyPath)
                .repo(repo)
                .path(worktree.join(&e.path))
                .detail(detail),
        );
    }
    for (path, why) in &plan.skipped {
        changes.push(
            Change::new(ChangeKind::Skip)
                .repo(repo)
                .path(worktree.join(path))
                .detail(format!("not copied: {why}")),
        );
    }
}

/// Refuses, before it starts, a copy that would meet anything in the new worktree (so
/// that undoing it removes only what it made): every entry must be absent, and a plain
/// relative path.
pub fn precheck(ctx: &Ctx<'_>, worktree: &Path, entries: &[PathBuf]) -> Result<()> {
    ctx.territory().check(worktree, "copy into")?;
    for e in entries {
        if !crate::ops::safety::territory::is_relative_inside(e) {
            return Err(Error::new(
                Code::CorruptState,
                format!(
                    "refusing to copy `{}`: not a path inside a worktree",
                    e.display()
                ),
            ));
        }
        let at = worktree.join(e);
        if std::fs::symlink_metadata(&at).is_ok() {
            return Err(Error::new(
                Code::WorktreeExists,
                format!(
                    "`{}` exists in the new worktree; grove never copies over a file",
                    at.display()
                ),
            )
            .with_fix(
                "Run the command again; if it keeps happening, take the path out of `copy`",
            ));
        }
    }
    Ok(())
}

/// Carries out a copy step: `entries` from the checkout `source` into the worktree at
/// `worktree`, on the threads this step may use, with progress as counts, stopped by a
/// signal (`CANCELLED`).
pub fn copy(
    ctx: &Ctx<'_>,
    repo: &str,
    source: &Path,
    worktree: &Path,
    entries: &[PathBuf],
) -> Result<treecopy::Copied> {
    precheck(ctx, worktree, entries)?;
    ctx.events
        .task(repo, Task::Step(&format!("copying {}", join(entries))));
    let progress = |t: &treecopy::Tally| {
        ctx.events.task(
            repo,
            Task::Count {
                what: "Copying files",
                done: t.files,
                total: None,
            },
        );
    };
    let opts = treecopy::Options {
        // The copy waits on the file system more than it computes.
        threads: (crate::parallel::share() * 2).max(2),
        stop: &|| signals::requested().is_some(),
        progress: &progress,
    };
    let result = treecopy::copy(source, worktree, entries, &opts);
    ctx.events.task(repo, Task::Done { ok: result.is_ok() });
    result.map_err(|e| match signals::requested() {
        Some(sig) if e.kind() == std::io::ErrorKind::Interrupted => {
            tx::cancelled(sig, &format!("(while copying into {})", worktree.display()))
        }
        _ => Error::from(e).context(repo),
    })
}

fn join(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
