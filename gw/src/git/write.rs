//! Mutations through the `git` CLI, which handles credentials, hooks, config and every
//! repository format git itself supports.

use std::path::Path;
use std::time::Instant;

use super::Error;
use crate::log;
use crate::proc::{self, Cmd, Output};

/// How a worktree gets its branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checkout {
    /// Create `branch` at `start` without an upstream (`--no-track`), so ahead/behind is
    /// measured against the base rather than a branch it was merely started from.
    NewBranch { start: String },
    /// Check out a local branch that already exists.
    Existing,
    /// Create `branch` tracking `remote_ref` (`origin/<branch>`).
    Track { remote_ref: String },
}

/// `git worktree add` of `branch` at `path` in the repository at `source`.
pub fn worktree_add(source: &Path, path: &Path, branch: &str, how: &Checkout) -> Result<(), Error> {
    let mut cmd = Cmd::git(source);
    cmd.args(["worktree", "add", "--quiet"]);
    match how {
        Checkout::NewBranch { start } => {
            cmd.args(["--no-track", "-b", branch]).arg(path).arg(start);
        }
        Checkout::Existing => {
            cmd.arg(path).arg(branch);
        }
        Checkout::Track { remote_ref } => {
            cmd.args(["--track", "-b", branch])
                .arg(path)
                .arg(remote_ref);
        }
    }
    check(&cmd, source)?;
    Ok(())
}

/// `git worktree remove`; `force` discards uncommitted changes.
pub fn worktree_remove(source: &Path, path: &Path, force: bool) -> Result<(), Error> {
    let mut cmd = Cmd::git(source);
    cmd.args(["worktree", "remove"]);
    if force {
        cmd.args(["--force", "--force"]);
    }
    cmd.arg(path);
    check(&cmd, source)?;
    Ok(())
}

/// `git worktree prune`: drops registrations whose directory is gone.
pub fn worktree_prune(source: &Path) -> Result<(), Error> {
    check(
        Cmd::git(source).args(["worktree", "prune", "--expire=now"]),
        source,
    )?;
    Ok(())
}

/// `git worktree repair`: re-links worktrees after their directories moved.
pub fn worktree_repair(source: &Path, paths: &[&Path]) -> Result<(), Error> {
    let mut cmd = Cmd::git(source);
    cmd.args(["worktree", "repair"]);
    for p in paths {
        cmd.arg(p);
    }
    check(&cmd, source)?;
    Ok(())
}

/// Deletes a local branch; without `force` git refuses an unmerged one.
pub fn branch_delete(source: &Path, branch: &str, force: bool) -> Result<(), Error> {
    check(
        Cmd::git(source).args(["branch", if force { "-D" } else { "-d" }, "--", branch]),
        source,
    )?;
    Ok(())
}

/// `git fetch --all --quiet` in the repository at `source`.
pub fn fetch(source: &Path) -> Result<(), Error> {
    check(Cmd::git(source).args(["fetch", "--all", "--quiet"]), source)?;
    Ok(())
}

/// `git clone` of `url` into `dest` (which must not exist), run from `cwd`.
pub fn clone(url: &str, dest: &Path, cwd: &Path) -> Result<(), Error> {
    check(
        Cmd::git(cwd)
            .args(["clone", "--quiet", "--", url])
            .arg(dest),
        cwd,
    )?;
    Ok(())
}

/// `git switch` in the worktree at `path` to `target` (a branch, or a commit with `detach`).
pub fn switch(path: &Path, target: &str, detach: bool) -> Result<(), Error> {
    let mut cmd = Cmd::git(path);
    cmd.args(["switch", "--quiet"]);
    if detach {
        cmd.arg("--detach");
    }
    cmd.arg(target);
    check(&cmd, path)?;
    Ok(())
}

/// Creates `branch` at `at` (a commit) without checking it out.
pub fn branch_create(source: &Path, branch: &str, at: &str) -> Result<(), Error> {
    check(
        Cmd::git(source).args(["branch", "--no-track", "--", branch, at]),
        source,
    )?;
    Ok(())
}

/// How a `git rebase` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rebase {
    Done,
    /// git stopped (usually on a conflict); the rebase is still in progress and must be
    /// aborted or continued.
    Stopped {
        /// The files git reported as conflicting.
        conflicts: Vec<String>,
        /// The last lines of git's output.
        output: String,
    },
}

/// `git rebase <onto>` in the worktree at `path`. `Err` only when git could not be run;
/// a rebase that stops is `Ok(Rebase::Stopped)`.
pub fn rebase(path: &Path, onto: &str) -> Result<Rebase, Error> {
    // No editor may open: a rebase that would need one must fail, not hang.
    let mut cmd = Cmd::git(path);
    cmd.env("GIT_EDITOR", ":")
        .env("GIT_SEQUENCE_EDITOR", ":")
        .args(["rebase", "--quiet", onto]);
    let out = logged(&cmd, path, Cmd::run)?;
    if out.success() {
        return Ok(Rebase::Done);
    }
    let all = format!("{}{}", out.stdout, out.stderr);
    let conflicts = all
        .lines()
        .filter_map(|l| l.strip_prefix("CONFLICT ("))
        .filter_map(|l| {
            l.split_once("Merge conflict in ")
                .map(|(_, f)| f.trim().to_string())
        })
        .collect();
    Ok(Rebase::Stopped {
        conflicts,
        output: crate::proc::tail_lines(&all, 20),
    })
}

/// `git rebase --abort`: puts the branch, index and files back as they were.
pub fn rebase_abort(path: &Path) -> Result<(), Error> {
    check(Cmd::git(path).args(["rebase", "--abort"]), path)?;
    Ok(())
}

/// Throws away changes to tracked files (index and working tree back to HEAD), as
/// `git switch --discard-changes` would; untracked files are not touched.
pub fn discard_changes(path: &Path) -> Result<(), Error> {
    check(
        Cmd::git(path).args(["reset", "--hard", "--quiet", "HEAD"]),
        path,
    )?;
    Ok(())
}

/// `git fetch --all --prune --quiet`: also drops remote-tracking refs whose branch is gone.
pub fn fetch_prune(source: &Path) -> Result<(), Error> {
    check(
        Cmd::git(source).args(["fetch", "--all", "--prune", "--quiet"]),
        source,
    )?;
    Ok(())
}

/// Runs a git mutation that must succeed, recording it in `grove.log`.
fn check(cmd: &Cmd, repo: &Path) -> Result<Output, proc::Error> {
    logged(cmd, repo, Cmd::check)
}

/// Runs `cmd` through `run` (`Cmd::run` or `Cmd::check`) and records the command line, the
/// repository, how it ended and how long it took in `grove.log`.
fn logged(
    cmd: &Cmd,
    repo: &Path,
    run: fn(&Cmd) -> Result<Output, proc::Error>,
) -> Result<Output, proc::Error> {
    let start = Instant::now();
    let result = run(cmd);
    let line = cmd.display();
    let took = start.elapsed();
    match &result {
        Ok(out) if out.success() => log::git(&line, repo, log::Outcome::Ok, took, &out.stderr),
        Ok(out) => {
            let status = out.status.to_string();
            let reason = reason(&out.stderr);
            let outcome = log::Outcome::Failed {
                code: &status,
                message: &reason,
            };
            log::git(&line, repo, outcome, took, &out.stderr);
        }
        Err(e) => {
            let (code, stderr) = match e {
                proc::Error::Failed { status, stderr, .. } => (status.to_string(), stderr.as_str()),
                proc::Error::Spawn { .. } => ("spawn failed".to_string(), ""),
            };
            let message = if stderr.is_empty() {
                e.to_string()
            } else {
                reason(stderr)
            };
            let outcome = log::Outcome::Failed {
                code: &code,
                message: &message,
            };
            log::git(&line, repo, outcome, took, stderr);
        }
    }
    result
}

/// The line of git's stderr that says why: the first `fatal:`/`error:` line, else the last.
fn reason(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or(lines.last())
        .map(|l| l.to_string())
        .unwrap_or_default()
}
