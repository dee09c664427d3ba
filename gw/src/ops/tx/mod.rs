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
//! While it changes things, SIGINT and SIGTERM interrupt it (`proc::signals`): the step
//! running is cut short, the rest is not started, and everything is rolled back. Undoing,
//! and finishing past the commit point, are not interrupted. Every process it starts keeps
//! the journal's lock open, so an operation whose gw was killed still counts as running
//! until its git processes are done.
//!
//! The same `apply`/`undo` functions serve `gw doctor --fix`, which finishes or rolls back
//! the journals of interrupted operations.

mod apply;
mod faults;
mod locks;
mod trash;

use std::time::Duration;

pub use apply::{Undo, apply, precheck, run, undo, undo_steps};
pub use faults::Faults;
pub use locks::{
    Locks, RepoHold, check_pending, hold_repos, lock_workspaces, recovery_pending, repo_lock,
    still_finishing, workspace_lock,
};
pub use trash::taken as taken_branch;

use crate::error::{Code, Error, Result};
use crate::lock;
use crate::ops::Ctx;
use crate::proc::{self, signals};
use crate::state::journal::{self, Action, Journal, Kind, Phase, StepStatus};

/// A running mutation of one or more workspaces.
pub struct Tx<'c, 'a> {
    ctx: &'c Ctx<'a>,
    // Dropped in this order: children stop inheriting the lock before it goes.
    _inherit: proc::InheritGuard,
    mode: signals::ModeGuard,
    journal: Journal,
    /// What each copy step done so far copied, by repository.
    copied: Vec<(String, crate::treecopy::Copied)>,
    _locks: Locks,
}

impl<'c, 'a> Tx<'c, 'a> {
    /// Starts the journal of an operation on `workspace` (and `also`, for a rename), whose
    /// locks the caller took with [`lock_workspaces`]. A signal that came before this is
    /// `CANCELLED` here, before anything changes.
    pub fn begin(
        ctx: &'c Ctx<'a>,
        locks: Locks,
        kind: Kind,
        workspace: &str,
        also: &[String],
    ) -> Result<Tx<'c, 'a>> {
        Tx::begin_with(ctx, locks, kind, workspace, also, Vec::new()).map(|(tx, _)| tx)
    }

    /// Like [`Tx::begin`], with `first` recorded as intended in the journal's first write
    /// (one durable write fewer before anything changes); returns their indices, for
    /// [`Tx::run_intended`].
    pub fn begin_with(
        ctx: &'c Ctx<'a>,
        locks: Locks,
        kind: Kind,
        workspace: &str,
        also: &[String],
        first: Vec<Action>,
    ) -> Result<(Tx<'c, 'a>, Vec<usize>)> {
        let mode = signals::enter(signals::Mode::Interrupt);
        if let Some(sig) = signals::requested() {
            return Err(cancelled(sig, "(before anything was changed)"));
        }
        let (journal, indices) = Journal::begin_with(&ctx.home, kind, workspace, also, first)?;
        let inherit = proc::inherit_lock(journal.lock())
            .map_err(|e| Error::internal(format!("cannot share the journal's lock: {e}")))?;
        let tx = Tx {
            ctx,
            _inherit: inherit,
            mode,
            journal,
            copied: Vec::new(),
            _locks: locks,
        };
        Ok((tx, indices))
    }

    /// Applies steps recorded by [`Tx::begin_with`], as [`Tx::run_all`] does (`parallel`:
    /// they touch different repositories). Not after an earlier one of them failed: call
    /// it once per group, and stop at the first failure.
    pub fn run_intended(&mut self, indices: &[usize], parallel: bool) -> Vec<Result<()>> {
        self.execute(indices, parallel)
    }

    pub fn id(&self) -> &str {
        self.journal.id()
    }

    /// What the copy steps done so far copied, by repository (`Action::CopyPaths`).
    pub fn copied(&self) -> &[(String, crate::treecopy::Copied)] {
        &self.copied
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
            Err(e) => actions
                .iter()
                .map(|_| Err(journal_write_error(&e)))
                .collect(),
        }
    }

    /// Records steps of [`Tx::begin_with`] as never attempted (an earlier one failed), so
    /// that rolling back leaves what they name alone; written by the next write (the
    /// rollback's first).
    pub fn not_attempted(&mut self, indices: &[usize]) {
        for &i in indices {
            self.journal.mark(
                i,
                StepStatus::Undone,
                Some("not attempted after an earlier failure".into()),
            );
        }
    }

    /// Applies the recorded steps `indices` (stopping at the first failure unless
    /// `parallel`) and records what happened (one journal write). A step not started
    /// because a signal asked to stop fails with `CANCELLED`.
    fn execute(&mut self, indices: &[usize], parallel: bool) -> Vec<Result<()>> {
        let actions: Vec<Action> = indices
            .iter()
            .map(|&i| self.journal.record.steps[i].action.clone())
            .collect();
        let ctx = self.ctx;
        // A step refused before it started (a signal, or its precheck) did not happen.
        let step = |a: &Action| -> Result<Option<crate::treecopy::Copied>, (Error, bool)> {
            match signals::requested() {
                Some(sig) if self.journal.record.phase == Phase::Running => Err((
                    cancelled(sig, &format!("(before: {})", a.describe())),
                    false,
                )),
                _ => {
                    precheck(ctx, a).map_err(|e| (e, false))?;
                    run(ctx, a).map_err(|e| (e, true))
                }
            }
        };
        let results: Vec<Result<Option<crate::treecopy::Copied>, (Error, bool)>> = if parallel {
            crate::parallel::map_processes(&actions, step)
        } else {
            let mut out = Vec::new();
            for a in &actions {
                let r = step(a);
                let failed = r.is_err();
                out.push(r);
                if failed {
                    break;
                }
            }
            while out.len() < actions.len() {
                out.push(Err((
                    Error::new(Code::Internal, "not attempted after an earlier failure"),
                    false,
                )));
            }
            out
        };
        for (a, r) in actions.iter().zip(&results) {
            if let (Ok(Some(c)), Some(repo)) = (r, a.repo()) {
                self.copied.push((repo.to_string(), *c));
            }
        }
        for (i, r) in indices.iter().zip(&results) {
            match r {
                Ok(_) => self.journal.mark(*i, StepStatus::Done, None),
                Err((e, true)) => {
                    self.journal
                        .mark(*i, StepStatus::Intended, Some(e.message.clone()))
                }
                Err((e, false)) => {
                    self.journal
                        .mark(*i, StepStatus::Undone, Some(e.message.clone()))
                }
            }
        }
        let results: Vec<Result<()>> = results
            .into_iter()
            .map(|r| r.map(|_| ()).map_err(|(e, _)| e))
            .collect();
        // Steps that all happened are recorded by the next write (the next steps' intent,
        // the commit) or never (`finish` removes the journal): recovery already treats an
        // `intended` step as possibly done, and checks (a process can die between a change
        // and its record). A failure or a refusal is recorded now: a refused step must not
        // be undone as if it might have happened. (Two to four fewer durable writes in a
        // create or a delete: every `fsync` is a wait, the first after a checkout a long
        // one, as it commits the file system's journal of all the files written.)
        if results.iter().all(Result::is_ok) {
            return results;
        }
        if let Err(e) = self.journal.write() {
            // The changes happened but could not be recorded; undo will check reality.
            return results
                .into_iter()
                .map(|r| r.and(Err(journal_write_error(&e))))
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
    /// Returns the steps' indices, for [`Tx::run_planned`]. From here on a signal no longer
    /// interrupts: what is left is finished.
    pub fn commit_with(&mut self, action: Action, then: Vec<Action>) -> Result<Vec<usize>> {
        self.run(action)?;
        self.committed(then)
    }

    /// Like [`Tx::commit_with`], for a commit-point action recorded as intended already (by
    /// [`Tx::begin_with`], with what comes before it: one durable write fewer); `index` is
    /// its step.
    pub fn commit_intended(&mut self, index: usize, then: Vec<Action>) -> Result<Vec<usize>> {
        self.execute(&[index], false)
            .into_iter()
            .next()
            .expect("one result per step")?;
        self.committed(then)
    }

    fn committed(&mut self, then: Vec<Action>) -> Result<Vec<usize>> {
        self.mode.switch(signals::Mode::Defer);
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
        self.journal.write()?;
        Ok((first..self.journal.record.steps.len()).collect())
    }

    /// Carries out steps recorded by [`Tx::commit_with`].
    pub fn run_planned(&mut self, indices: &[usize], parallel: bool) -> Vec<Result<()>> {
        self.execute(indices, parallel)
    }

    /// Undoes every step, newest first (a signal does not interrupt this). Returns each
    /// step's action and what undoing it did. The journal is removed when everything was
    /// undone (or deliberately kept); otherwise it stays for `gw doctor --fix` and the
    /// returned flag is false.
    pub fn rollback(mut self) -> (Vec<(Action, Undo)>, bool) {
        self.mode.switch(signals::Mode::Defer);
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
        Ok(self.journal.finish()?)
    }

    /// Leaves the journal for `gw doctor --fix` (work past the commit point failed).
    pub fn abandon(mut self) -> String {
        let _ = self.journal.write();
        self.journal.id().to_string()
    }
}

/// `CANCELLED`: a signal asked the operation to stop.
pub fn cancelled(sig: i32, when: &str) -> Error {
    Error::new(Code::Cancelled, format!("cancelled {when}"))
        .with_details(serde_json::json!({ "signal": proc::signal_name(sig) }))
}

fn journal_write_error(e: &journal::Error) -> Error {
    Error::new(
        Code::Internal,
        format!("cannot write the operation journal: {e}"),
    )
}

/// How long to wait for any lock.
pub fn lock_timeout(env_ms: Option<u64>) -> Duration {
    env_ms
        .map(Duration::from_millis)
        .unwrap_or(lock::DEFAULT_TIMEOUT)
}
