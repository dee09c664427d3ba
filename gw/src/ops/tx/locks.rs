//! The locks a mutation holds: its workspaces' (from before it validates anything until it
//! is done) and, around git commands that write a source repository's config or refs, the
//! repository's. And the check that nothing interrupted — or still finishing — stands in
//! the way.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::lock::{self, Lock};
use crate::ops::Ctx;
use crate::state::journal::{self, Kind};

/// The workspace locks a mutation holds from before it validates anything until it is done
/// (and the lock of the branch it creates or deletes, taken after them).
pub struct Locks {
    #[allow(dead_code)]
    workspaces: Vec<Lock>,
    /// The branch locks these took, kept in [`held`] so that an operation this one runs
    /// (`create --replace`'s delete of the replaced workspace, on the same branch) takes
    /// nothing again: a second lock of the same file would wait on this process itself.
    branches: Vec<PathBuf>,
}

impl Drop for Locks {
    fn drop(&mut self) {
        let mut held = held();
        for p in &self.branches {
            held.remove(p);
        }
    }
}

impl Locks {
    /// No workspace's lock: for an operation on no workspace (`gw prune branches`, which
    /// holds its repositories' locks instead).
    pub fn none() -> Locks {
        Locks {
            workspaces: Vec::new(),
            branches: Vec::new(),
        }
    }

    /// Adds the lock of `branch`, held as long as these: a create of a new branch decides
    /// that the branch is its to make, and makes it, while no other gw creates, checks out
    /// or deletes a branch of that name. Taken after the workspace locks and before any
    /// repository's, like every lock in that order.
    pub fn with_branch(self, ctx: &Ctx<'_>, branch: &str) -> Result<Locks> {
        self.with_branches(ctx, &[branch])
    }

    /// [`Locks::with_branch`] of each of `branches`, in a fixed order.
    pub fn with_branches(mut self, ctx: &Ctx<'_>, branches: &[&str]) -> Result<Locks> {
        let mut branches = branches.to_vec();
        branches.sort();
        branches.dedup();
        for branch in branches {
            let digest = fsx::sha256_hex(branch.as_bytes());
            let path = ctx.home.branch_lock(branch, &digest[..16]);
            if held().contains_key(&path) {
                continue;
            }
            let lock = lock::acquire(&path, ctx.lock_timeout())?;
            held().insert(path.clone(), lock);
            self.branches.push(path);
        }
        Ok(self)
    }
}

/// Locks `names` (in a fixed order, so two processes cannot deadlock) and refuses when an
/// operation on any of them awaits recovery or is still finishing.
pub fn lock_workspaces(ctx: &Ctx<'_>, names: &[&str]) -> Result<Locks> {
    let mut names: Vec<&str> = names.to_vec();
    names.sort();
    names.dedup();
    let mut locks = Vec::new();
    for n in &names {
        locks.push(workspace_lock(ctx, n)?);
    }
    check_pending(ctx, &names)?;
    Ok(Locks {
        workspaces: locks,
        branches: Vec::new(),
    })
}

/// The lock held for a whole mutation of workspace `name`.
pub fn workspace_lock(ctx: &Ctx<'_>, name: &str) -> Result<Lock> {
    Ok(lock::acquire(
        &ctx.home.workspace_lock(name),
        ctx.lock_timeout(),
    )?)
}

/// The lock held around a git command that writes `source`'s config or refs. Within a
/// [`hold_repos`] of this process it is already held, and this takes nothing.
pub fn repo_lock(ctx: &Ctx<'_>, source: &Path) -> Result<RepoLock> {
    let path = repo_lock_path(ctx, source);
    if held().contains_key(&path) {
        return Ok(RepoLock(None));
    }
    Ok(RepoLock(Some(lock::acquire(&path, ctx.lock_timeout())?)))
}

/// A source repository's lock, or nothing when an enclosing [`hold_repos`] has it.
pub struct RepoLock(#[allow(dead_code)] Option<Lock>);

/// Takes the locks of every repository in `sources` (in a fixed order) and keeps them until
/// the guard is dropped; meanwhile [`repo_lock`] of any of them, from any thread of this
/// process, takes nothing. For steps that must not be separated — a rename's move and the
/// repairs that follow it — while other processes' git commands in those repositories wait.
pub fn hold_repos(ctx: &Ctx<'_>, sources: &[&Path]) -> Result<RepoHold> {
    let mut paths: Vec<PathBuf> = sources.iter().map(|s| repo_lock_path(ctx, s)).collect();
    paths.sort();
    paths.dedup();
    let mut taken = Vec::new();
    for p in paths {
        if held().contains_key(&p) {
            continue;
        }
        let lock = lock::acquire(&p, ctx.lock_timeout())?;
        held().insert(p.clone(), lock);
        taken.push(p);
    }
    Ok(RepoHold(taken))
}

/// Releases what [`hold_repos`] took when dropped.
#[must_use]
pub struct RepoHold(Vec<PathBuf>);

impl Drop for RepoHold {
    fn drop(&mut self) {
        let mut held = held();
        for p in &self.0 {
            held.remove(p);
        }
    }
}

/// The repository and branch locks this process holds, by path.
fn held() -> std::sync::MutexGuard<'static, BTreeMap<PathBuf, Lock>> {
    static HELD: Mutex<BTreeMap<PathBuf, Lock>> = Mutex::new(BTreeMap::new());
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

fn repo_lock_path(ctx: &Ctx<'_>, source: &Path) -> PathBuf {
    let canon = fsx::canonical(source);
    let digest = crate::fsx::sha256_hex(canon.to_string_lossy().as_bytes());
    let base = canon
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    ctx.home.repo_lock(&base, &digest[..16])
}

/// Refuses to touch `names` while an interrupted operation on them awaits recovery
/// (`RECOVERY_PENDING`), or while one whose process is gone still has git processes at
/// work (`TRANSIENT`: they hold its lock). Called with the workspaces' locks held, so a
/// running operation on these names cannot be a live gw's.
pub fn check_pending(ctx: &Ctx<'_>, names: &[&str]) -> Result<()> {
    let found = journal::scan(&ctx.home, false)?;
    for f in &found {
        let Ok(rec) = &f.record else { continue };
        let touches = names
            .iter()
            .any(|n| rec.workspace == *n || rec.also.iter().any(|a| a == n));
        if !touches {
            continue;
        }
        if f.interrupted {
            return Err(recovery_pending(&rec.id, &rec.workspace, rec.kind));
        }
        if rec.pid != std::process::id() {
            return Err(still_finishing(&rec.id, &rec.workspace, rec.kind));
        }
    }
    Ok(())
}

pub fn recovery_pending(id: &str, workspace: &str, kind: Kind) -> Error {
    Error::new(
        Code::RecoveryPending,
        format!(
            "an interrupted {} of workspace `{workspace}` must be recovered first (operation {id})",
            kind.as_str()
        ),
    )
    .with_fix("Run `gw doctor --fix` to finish or roll back the interrupted operation")
    .with_details(
        serde_json::json!({ "operation": id, "workspace": workspace, "kind": kind.as_str() }),
    )
    .with_action(NextAction::write(
        "Recover the interrupted operation",
        &["gw", "doctor", "--fix", "--format", "json"],
    ))
}

/// An operation whose gw is gone but whose git processes still hold its lock.
pub fn still_finishing(id: &str, workspace: &str, kind: Kind) -> Error {
    Error::new(
        Code::Transient,
        format!(
            "an operation is still running: the {} of workspace `{workspace}` (operation {id}) \
             was interrupted, and the git processes it started are still finishing",
            kind.as_str()
        ),
    )
    .with_fix("Retry in a moment; once they are done, `gw doctor --fix` recovers it")
    .with_details(
        serde_json::json!({ "operation": id, "workspace": workspace, "kind": kind.as_str() }),
    )
}
