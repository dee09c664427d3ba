//! Transactions: every mutation of a workspace goes through a [`Tx`].
//!
//! A `Tx` holds the workspace lock (so two processes changing the same workspace
//! serialise while different workspaces proceed in parallel), writes the operation journal
//! ahead of each change, applies the change through the git and file-system adapters
//! (taking the source repository's lock around git commands that write its config or refs),
//! and on failure undoes, in reverse order, exactly what it did. Undo never removes what
//! this operation did not create, and never removes something that has gained work since
//! (a dirty worktree, a branch that moved): that is kept and reported.
//!
//! The same `apply`/`undo` functions serve `gw doctor --fix`, which finishes or rolls back
//! the journals of interrupted operations.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git::{self, Checkout};
use crate::lock::{self, Lock};
use crate::ops::Ctx;
use crate::state::journal::{self, Action, BranchSource, Journal, Kind, Phase, StepStatus};

/// Fault injection for tests: fail the `at`-th applied action (0-based), before or after
/// it takes effect. Only code can construct this; nothing in the CLI enables it.
#[derive(Debug)]
pub struct Faults {
    pub at: usize,
    pub after: bool,
    seen: AtomicUsize,
}

impl Faults {
    pub fn new(at: usize, after: bool) -> Arc<Faults> {
        Arc::new(Faults {
            at,
            after,
            seen: AtomicUsize::new(0),
        })
    }

    /// How many actions were applied (or attempted) so far.
    pub fn seen(&self) -> usize {
        self.seen.load(Ordering::SeqCst)
    }

    /// Counts an action about to be applied and returns its index.
    fn next(&self) -> usize {
        self.seen.fetch_add(1, Ordering::SeqCst)
    }

    fn check(&self, index: usize, after: bool) -> Result<()> {
        if index == self.at && after == self.after {
            let when = if after { "after" } else { "before" };
            Err(Error::new(
                Code::Internal,
                format!("injected fault {when} step {index}"),
            ))
        } else {
            Ok(())
        }
    }
}

/// What undoing one step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// Reverted (or it had not happened).
    Undone,
    /// Left in place on purpose; the reason.
    Kept(String),
    /// Undoing failed; the error.
    Failed(String),
}

/// A running mutation of one or more workspaces.
pub struct Tx<'c, 'a> {
    ctx: &'c Ctx<'a>,
    journal: Journal,
    _locks: Locks,
}

/// The workspace locks a mutation holds from before it validates anything until it is done.
pub struct Locks(#[allow(dead_code)] Vec<Lock>);

/// Locks `names` (in a fixed order, so two processes cannot deadlock) and refuses when an
/// interrupted operation on any of them awaits recovery.
pub fn lock_workspaces(ctx: &Ctx<'_>, names: &[&str]) -> Result<Locks> {
    let mut names: Vec<&str> = names.to_vec();
    names.sort();
    names.dedup();
    let mut locks = Vec::new();
    for n in &names {
        locks.push(workspace_lock(ctx, n)?);
    }
    check_pending(ctx, &names)?;
    Ok(Locks(locks))
}

/// The lock held for a whole mutation of workspace `name`.
pub fn workspace_lock(ctx: &Ctx<'_>, name: &str) -> Result<Lock> {
    let path = ctx
        .home
        .root()
        .join("locks")
        .join(format!("ws-{}.lock", sanitize(name)));
    lock::acquire(&path, ctx.lock_timeout()).map_err(lock_error)
}

/// The lock held around a git command that writes `source`'s config or refs.
pub fn repo_lock(ctx: &Ctx<'_>, source: &Path) -> Result<Lock> {
    use sha2::{Digest, Sha256};
    let canon = fsx::canonical(source);
    let digest = Sha256::digest(canon.to_string_lossy().as_bytes());
    let short: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let base = canon
        .file_name()
        .map(|n| sanitize(&n.to_string_lossy()))
        .unwrap_or_default();
    let path = ctx
        .home
        .root()
        .join("locks")
        .join(format!("repo-{base}-{short}.lock"));
    lock::acquire(&path, ctx.lock_timeout()).map_err(lock_error)
}

fn lock_error(e: lock::Error) -> Error {
    match e {
        lock::Error::Io(io) => io.into(),
        e @ lock::Error::Timeout { .. } => Error::new(Code::Transient, e.to_string())
            .with_fix("Another gw process is working on this; retry when it has finished"),
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(80)
        .collect()
}

/// Refuses to touch `names` while an interrupted operation on them awaits recovery.
pub fn check_pending(ctx: &Ctx<'_>, names: &[&str]) -> Result<()> {
    let found = journal::scan(&ctx.home, false).map_err(journal_error)?;
    for f in found.iter().filter(|f| f.interrupted) {
        let Ok(rec) = &f.record else { continue };
        let touches = names
            .iter()
            .any(|n| rec.workspace == *n || rec.also.iter().any(|a| a == n));
        if touches {
            return Err(recovery_pending(&rec.id, &rec.workspace, rec.kind));
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

pub fn journal_error(e: journal::Error) -> Error {
    match e {
        journal::Error::Io(io) => io.into(),
        e @ journal::Error::Corrupt { .. } => Error::new(Code::CorruptState, e.to_string())
            .with_fix("Run `gw doctor` to see it; grove never deletes a journal it cannot read"),
    }
}

impl<'c, 'a> Tx<'c, 'a> {
    /// Starts the journal of an operation on `workspace` (and `also`, for a rename), whose
    /// locks the caller took with [`lock_workspaces`].
    pub fn begin(
        ctx: &'c Ctx<'a>,
        locks: Locks,
        kind: Kind,
        workspace: &str,
        also: &[String],
    ) -> Result<Tx<'c, 'a>> {
        let journal = Journal::begin(&ctx.home, kind, workspace, also).map_err(journal_error)?;
        Ok(Tx {
            ctx,
            journal,
            _locks: locks,
        })
    }

    pub fn id(&self) -> &str {
        self.journal.id()
    }

    /// Records, applies and marks one action.
    pub fn run(&mut self, action: Action) -> Result<()> {
        self.run_all(vec![action], false)
            .into_iter()
            .next()
            .expect("one result per action")
    }

    /// Records every action (one journal write), applies them — in parallel when
    /// `parallel` (they must touch different repositories) — and records what happened.
    pub fn run_all(&mut self, actions: Vec<Action>, parallel: bool) -> Vec<Result<()>> {
        match self.journal.intend(actions.clone()) {
            Ok(indices) => self.execute(&indices, parallel),
            Err(e) => actions.iter().map(|_| Err(journal_error_ref(&e))).collect(),
        }
    }

    /// Applies the recorded steps `indices` (stopping at the first failure unless
    /// `parallel`) and records what happened (one journal write).
    fn execute(&mut self, indices: &[usize], parallel: bool) -> Vec<Result<()>> {
        let actions: Vec<Action> = indices
            .iter()
            .map(|&i| self.journal.record.steps[i].action.clone())
            .collect();
        let ctx = self.ctx;
        let results: Vec<Result<()>> = if parallel {
            crate::parallel::map_processes(&actions, |a| apply(ctx, a))
        } else {
            let mut out = Vec::new();
            for a in &actions {
                let r = apply(ctx, a);
                let failed = r.is_err();
                out.push(r);
                if failed {
                    break;
                }
            }
            while out.len() < actions.len() {
                out.push(Err(Error::new(
                    Code::Internal,
                    "not attempted after an earlier failure",
                )));
            }
            out
        };
        for (i, r) in indices.iter().zip(&results) {
            match r {
                Ok(()) => self.journal.mark(*i, StepStatus::Done, None),
                Err(e) => self
                    .journal
                    .mark(*i, StepStatus::Intended, Some(e.message.clone())),
            }
        }
        if let Err(e) = self.journal.write() {
            // The changes happened but could not be recorded; undo will check reality.
            return results
                .into_iter()
                .map(|r| r.and(Err(journal_error_ref(&e))))
                .collect();
        }
        results
    }

    /// Applies the commit-point action (a state change); afterwards a failure no longer
    /// rolls back, it only leaves work for `gw doctor --fix` to finish.
    pub fn commit(&mut self, action: Action) -> Result<()> {
        self.commit_with(action, Vec::new()).map(|_| ())
    }

    /// Like [`Tx::commit`], and records `then` — every step that completes the operation —
    /// in the same durable write that marks the commit, so that a process killed at any
    /// later point leaves a journal from which `gw doctor --fix` finishes all of it.
    /// Returns the steps' indices, for [`Tx::run_planned`].
    pub fn commit_with(&mut self, action: Action, then: Vec<Action>) -> Result<Vec<usize>> {
        self.run(action)?;
        let first = self.journal.record.steps.len();
        self.journal
            .record
            .steps
            .extend(then.into_iter().map(|action| journal::Step {
                action,
                status: StepStatus::Planned,
                error: None,
            }));
        self.journal.record.phase = Phase::Committed;
        self.journal.write().map_err(journal_error)?;
        Ok((first..self.journal.record.steps.len()).collect())
    }

    /// Carries out steps recorded by [`Tx::commit_with`].
    pub fn run_planned(&mut self, indices: &[usize], parallel: bool) -> Vec<Result<()>> {
        self.execute(indices, parallel)
    }

    /// Undoes every step, newest first. Returns each step's action and what undoing it did.
    /// The journal is removed when everything was undone (or deliberately kept); otherwise
    /// it stays for `gw doctor --fix` and the returned flag is false.
    pub fn rollback(mut self) -> (Vec<(Action, Undo)>, bool) {
        self.journal.record.phase = Phase::RollingBack;
        let _ = self.journal.write();
        let outcomes = undo_steps(self.ctx, &mut self.journal.record.steps);
        let clean = !outcomes.iter().any(|(_, u)| matches!(u, Undo::Failed(_)));
        if clean {
            let _ = self.journal.finish();
        } else {
            let _ = self.journal.write();
        }
        (outcomes, clean)
    }

    /// The operation succeeded: its journal goes away.
    pub fn finish(self) -> Result<()> {
        self.journal.finish().map_err(journal_error)
    }

    /// Leaves the journal for `gw doctor --fix` (work past the commit point failed).
    pub fn abandon(mut self) -> String {
        let _ = self.journal.write();
        self.journal.id().to_string()
    }
}

fn journal_error_ref(e: &journal::Error) -> Error {
    Error::new(
        Code::Internal,
        format!("cannot write the operation journal: {e}"),
    )
}

/// Undoes `steps` newest first, updating their status.
///
/// A `RepairWorktrees` step is undone together with the `MoveDir` it follows, not on its
/// own: newest first, the repair comes up while its directories are still at their new
/// place, where re-pointing git is pointless; it is the move back that leaves git's
/// registrations pointing at the wrong place. So undoing a move re-links the worktrees
/// that the later repairs had pointed into it (see [`undo_move`]).
pub fn undo_steps(ctx: &Ctx<'_>, steps: &mut [journal::Step]) -> Vec<(Action, Undo)> {
    let mut out = Vec::new();
    for i in (0..steps.len()).rev() {
        if matches!(
            steps[i].status,
            StepStatus::Undone | StepStatus::Kept | StepStatus::Planned
        ) {
            continue;
        }
        let u = match &steps[i].action {
            Action::MoveDir { from, to } => {
                let relink = relinks(to, &steps[i + 1..]);
                match undo_move(ctx, from, to, &relink) {
                    Ok(u) => u,
                    Err(e) => Undo::Failed(e.message.clone()),
                }
            }
            action => undo(ctx, action),
        };
        let step = &mut steps[i];
        match &u {
            Undo::Undone => {
                step.status = StepStatus::Undone;
                step.error = None;
            }
            Undo::Kept(why) => {
                step.status = StepStatus::Kept;
                step.error = Some(why.clone());
            }
            Undo::Failed(e) => {
                step.status = StepStatus::UndoFailed;
                step.error = Some(e.clone());
            }
        }
        out.push((step.action.clone(), u));
    }
    out
}

/// The worktrees that repairs recorded in `later` (whatever their status: a repair that
/// may have happened counts) pointed git at inside `to`, per source repository.
fn relinks<'s>(to: &Path, later: &'s [journal::Step]) -> Vec<(&'s str, &'s Path, Vec<&'s Path>)> {
    let mut out = Vec::new();
    for step in later {
        if let Action::RepairWorktrees {
            repo,
            source,
            paths,
        } = &step.action
        {
            let inside: Vec<&Path> = paths
                .iter()
                .map(PathBuf::as_path)
                .filter(|p| p.starts_with(to))
                .collect();
            if !inside.is_empty() {
                out.push((repo.as_str(), source.as_path(), inside));
            }
        }
    }
    out
}

/// Moves `to` back to `from`, then points git at the worktrees in their old place again
/// (`relink`: the paths inside `to` that git was told about after the move).
fn undo_move(
    ctx: &Ctx<'_>,
    from: &Path,
    to: &Path,
    relink: &[(&str, &Path, Vec<&Path>)],
) -> Result<Undo> {
    if fsx::exists(to) && !fsx::exists(from) {
        fsx::rename(to, from)?;
    }
    // The trash directory may have been made for this move; leave no empty one.
    if let Some(parent) = to
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == ".trash"))
    {
        fsx::remove_empty_dir(parent);
    }
    for (repo, source, paths) in relink {
        let back: Vec<PathBuf> = paths
            .iter()
            .filter_map(|p| p.strip_prefix(to).ok())
            .map(|rel| from.join(rel))
            .filter(|p| p.is_dir())
            .collect();
        if back.is_empty() || !source.is_dir() {
            continue;
        }
        let back: Vec<&Path> = back.iter().map(PathBuf::as_path).collect();
        let _lock = repo_lock(ctx, source)?;
        git::worktree_repair(source, &back).map_err(|e| Error::from(e).context(*repo))?;
    }
    Ok(Undo::Undone)
}

fn faults<'c>(ctx: &'c Ctx<'_>) -> Option<&'c Faults> {
    ctx.faults.as_deref()
}

/// Carries out one action.
pub fn apply(ctx: &Ctx<'_>, action: &Action) -> Result<()> {
    let fault = faults(ctx).map(|f| (f, f.next()));
    if let Some((f, i)) = fault {
        f.check(i, false)?;
    }
    apply_inner(ctx, action)?;
    if let Some((f, i)) = fault {
        f.check(i, true)?;
    }
    Ok(())
}

fn apply_inner(ctx: &Ctx<'_>, action: &Action) -> Result<()> {
    match action {
        Action::CreateDir { path } => match fsx::create_dir(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(Error::new(
                Code::WorkspaceExists,
                format!("`{}` already exists", path.display()),
            )
            .with_fix("Choose another name, or remove the directory")),
            Err(e) => Err(e.into()),
        },
        Action::AddWorktree {
            repo,
            source,
            path,
            branch,
            how,
        } => {
            let checkout = match how {
                BranchSource::New { start, .. } => Checkout::NewBranch {
                    start: start.clone(),
                },
                BranchSource::Existing => Checkout::Existing,
                BranchSource::Track { remote_ref, .. } => Checkout::Track {
                    remote_ref: remote_ref.clone(),
                },
            };
            let _lock = repo_lock(ctx, source)?;
            crate::ops::task(ctx, repo, "checking out", |on| {
                git::worktree_add(source, path, branch, &checkout, on)
            })
            .map_err(|e| Error::from(e).context(repo))
        }
        Action::MoveDir { from, to } => {
            if let Some(parent) = to.parent() {
                fsx::create_dir_all(parent)?;
            }
            if fsx::exists(to) {
                return Err(Error::new(
                    Code::WorkspaceExists,
                    format!("`{}` already exists", to.display()),
                ));
            }
            Ok(fsx::rename(from, to)?)
        }
        Action::PruneWorktrees { repo, source } => {
            let _lock = repo_lock(ctx, source)?;
            git::worktree_prune(source).map_err(|e| Error::from(e).context(repo))
        }
        Action::RepairWorktrees {
            repo,
            source,
            paths,
        } => {
            let _lock = repo_lock(ctx, source)?;
            let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
            git::worktree_repair(source, &paths).map_err(|e| Error::from(e).context(repo))
        }
        Action::DeleteBranch {
            repo,
            source,
            branch,
            ..
        } => {
            let _lock = repo_lock(ctx, source)?;
            git::branch_delete(source, branch, true).map_err(|e| Error::from(e).context(repo))
        }
        Action::SwitchBranch { repo, path, to, .. } => {
            git::switch(path, to, false).map_err(|e| Error::from(e).context(repo))
        }
        Action::SetState {
            name,
            before,
            after,
        } => ctx.store.update(|st| {
            let current = st.find(name).cloned();
            if current.as_ref() != before.as_deref() {
                return Err(match (&current, before) {
                    (Some(_), None) => Error::new(
                        Code::WorkspaceExists,
                        format!("a workspace named `{name}` already exists"),
                    )
                    .with_fix("Choose another name"),
                    _ => Error::new(
                        Code::StateChanged,
                        format!("workspace `{name}` changed while this command was running"),
                    )
                    .with_fix("Look at it again (`gw status`) and retry"),
                });
            }
            match (after, current.is_some()) {
                (Some(w), true) => {
                    let slot = st.find_mut(name).expect("present: checked above");
                    *slot = (**w).clone();
                }
                (Some(w), false) => st.workspaces.push((**w).clone()),
                (None, _) => {
                    st.remove(name);
                }
            }
            // A rename stores the workspace under a new name; make sure it is free.
            if let Some(w) = after
                && w.name != *name
                && st.workspaces.iter().filter(|x| x.name == w.name).count() > 1
            {
                return Err(Error::new(
                    Code::WorkspaceExists,
                    format!("a workspace named `{}` already exists", w.name),
                ));
            }
            Ok(())
        }),
    }
}

/// Reverts one action if it happened and it is safe to.
pub fn undo(ctx: &Ctx<'_>, action: &Action) -> Undo {
    match undo_inner(ctx, action) {
        Ok(u) => u,
        Err(e) => Undo::Failed(e.message.clone()),
    }
}

fn undo_inner(ctx: &Ctx<'_>, action: &Action) -> Result<Undo> {
    Ok(match action {
        Action::CreateDir { path } => {
            if !path.exists() || fsx::remove_empty_dir(path) {
                Undo::Undone
            } else {
                Undo::Kept(format!("`{}` is not empty", path.display()))
            }
        }
        Action::AddWorktree {
            source,
            path,
            branch,
            how,
            ..
        } => undo_add_worktree(ctx, source, path, branch, how)?,
        // Without the later repairs: `undo_steps` passes those.
        Action::MoveDir { from, to } => undo_move(ctx, from, to, &[])?,
        // Pruning only removes registrations of directories that are gone; nothing to restore.
        Action::PruneWorktrees { .. } => Undo::Undone,
        // Undone by the move it follows (`undo_steps`), once the directories are back.
        Action::RepairWorktrees { .. } => Undo::Undone,
        Action::DeleteBranch {
            repo,
            source,
            branch,
            tip,
        } => {
            let repo_r = git::Repo::open(source)?;
            match repo_r.local_branch(branch) {
                None => {
                    let _lock = repo_lock(ctx, source)?;
                    git::branch_create(source, branch, tip)
                        .map_err(|e| Error::from(e).context(repo))?;
                    Undo::Undone
                }
                Some(at) if at == *tip => Undo::Undone,
                Some(at) => Undo::Kept(format!("branch {branch} exists again, at {at}")),
            }
        }
        Action::SwitchBranch {
            repo,
            path,
            from,
            from_oid,
            to,
        } => {
            let r = git::Repo::open(path)?;
            let head = r.head()?;
            if head.branch.as_deref() != Some(to.as_str()) {
                return Ok(Undo::Undone);
            }
            if !r.changes()?.is_clean() {
                return Ok(Undo::Kept(format!(
                    "{repo} has uncommitted changes on {to}"
                )));
            }
            let target = from.clone().unwrap_or_else(|| from_oid.clone());
            git::switch(path, &target, from.is_none()).map_err(|e| Error::from(e).context(repo))?;
            Undo::Undone
        }
        Action::SetState {
            name,
            before,
            after,
        } => {
            // Reading needs no lock: when the change never happened there is nothing to
            // take the state lock for (it may be the lock that made the change fail).
            let key = after
                .as_ref()
                .map(|w| w.name.clone())
                .unwrap_or_else(|| name.clone());
            let st = ctx.store.load()?;
            if st.find(&key) != after.as_deref()
                && before.as_ref().map(|b| st.find(&b.name)) == before.as_ref().map(|b| Some(&**b))
            {
                return Ok(Undo::Undone);
            }
            let mut outcome = Undo::Undone;
            ctx.store.update(|st| {
                let key = after
                    .as_ref()
                    .map(|w| w.name.clone())
                    .unwrap_or_else(|| name.clone());
                let current = st.find(&key).cloned();
                if current.as_ref() != after.as_deref() {
                    // Not what this operation left: either it never happened, or someone
                    // changed it since. Only the first is safe to ignore.
                    let back = before.as_ref().map(|b| st.find(&b.name).cloned());
                    if back.flatten().as_ref() != before.as_deref() {
                        outcome = Undo::Kept(format!(
                            "workspace `{key}` has changed since; left as it is"
                        ));
                    }
                    return Ok::<_, Error>(());
                }
                match (before, after.is_some()) {
                    (Some(b), true) if b.name == key => {
                        *st.find_mut(&key).expect("present: compared above") = (**b).clone();
                    }
                    (Some(b), _) => {
                        st.remove(&key);
                        if st.find(&b.name).is_none() {
                            st.workspaces.push((**b).clone());
                        }
                    }
                    (None, _) => {
                        st.remove(&key);
                    }
                }
                Ok(())
            })?;
            outcome
        }
    })
}

fn undo_add_worktree(
    ctx: &Ctx<'_>,
    source: &Path,
    path: &Path,
    branch: &str,
    how: &BranchSource,
) -> Result<Undo> {
    let repo = git::Repo::open(source)?;
    let canon = fsx::canonical(path);
    let registered = repo
        .worktrees()?
        .into_iter()
        .find(|w| fsx::canonical(&w.path) == canon || w.path == path);
    if let Some(wt) = &registered {
        if wt.path.is_dir() {
            // Never throw away work: only a clean worktree still on its branch goes.
            let wt_repo = git::Repo::open(&wt.path)?;
            if !wt_repo.changes()?.is_clean() {
                return Ok(Undo::Kept(format!(
                    "`{}` has uncommitted changes",
                    path.display()
                )));
            }
        }
        let _lock = repo_lock(ctx, source)?;
        git::worktree_remove(source, path, true)?;
    } else if path.is_dir() && !fsx::remove_empty_dir(path) {
        return Ok(Undo::Kept(format!(
            "`{}` exists but is not a worktree of this repository",
            path.display()
        )));
    }
    let _ = registered;
    if let Some(start_oid) = how.created_at_oid()
        && let Some(tip) = repo.local_branch(branch)
    {
        if start_oid.is_some_and(|s| s != tip) {
            return Ok(Undo::Kept(format!("branch {branch} has new commits; kept")));
        }
        if repo
            .worktrees()?
            .iter()
            .any(|w| w.branch.as_deref() == Some(branch))
        {
            return Ok(Undo::Kept(format!(
                "branch {branch} is checked out elsewhere; kept"
            )));
        }
        let _lock = repo_lock(ctx, source)?;
        git::branch_delete(source, branch, true)?;
    }
    Ok(Undo::Undone)
}

/// How long to wait for any lock.
pub fn lock_timeout(env_ms: Option<u64>) -> Duration {
    env_ms
        .map(Duration::from_millis)
        .unwrap_or(lock::DEFAULT_TIMEOUT)
}
