//! Recovery of interrupted operations from their journals (`gw doctor`, `gw doctor --fix`).
//!
//! An operation that died before its commit point is rolled back; one that died after it is
//! completed. Both use the same `apply`/`undo` as a live operation, and neither ever
//! removes something whose ownership is unclear or that has gained work since: that is kept
//! and reported, and a recovery that kept something is not called done. A journal that
//! cannot be read is reported and left alone, and it blocks every destructive fix (`gw
//! doctor --fix` only reports while one exists).
//!
//! An operation whose gw is gone while processes it started still hold its lock is
//! *running*, not interrupted: recovering it now would race them (a checkout half done
//! looks like uncommitted work). It is reported, and recovered once they are done.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::ops::Ctx;
use crate::ops::safety::fate;
use crate::ops::tx::{self, Undo};
use crate::state::journal::{self, Action, Found, Kind, Phase, StepStatus};

/// An operation found in `operations/` that is not a live gw's own business.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Interrupted {
    pub id: String,
    /// `null` when the journal cannot be read.
    pub kind: Option<Kind>,
    pub workspace: Option<String>,
    /// `running` (rolls back), `committed` (completes) or `rolling_back`.
    pub phase: Option<Phase>,
    /// What it had done: one line per step, with its status.
    pub steps: Vec<String>,
    /// Why the journal cannot be used, when it is corrupt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrupt: Option<String>,
    /// Its gw is gone but processes it started still hold its lock: recover it later.
    #[serde(skip)]
    pub finishing: bool,
}

/// How recovering one operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RecoveryOutcome {
    /// Everything it had done was undone.
    RolledBack,
    /// What it had left to do was done.
    Completed,
    /// Finished, but something was kept on purpose (it holds work): see the steps. The
    /// journal is gone; what was kept is reported by `gw doctor` on its own.
    Kept,
    /// Not recovered (see `detail`); the journal stays.
    Left,
}

/// What recovering one operation did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Recovered {
    pub id: String,
    pub workspace: Option<String>,
    pub outcome: RecoveryOutcome,
    /// Per step: what was done.
    pub steps: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// `Left` because recovery would not act there (a directory another workspace holds,
    /// a repository grove does not know): a person must look.
    #[serde(skip)]
    pub refused: bool,
}

fn status_name(s: StepStatus) -> &'static str {
    match s {
        StepStatus::Planned => "planned",
        StepStatus::Intended => "intended",
        StepStatus::Done => "done",
        StepStatus::Undone => "undone",
        StepStatus::UndoFailed => "undo failed",
        StepStatus::Kept => "kept",
    }
}

/// Operations whose gw is gone (interrupted, or still finishing), and journals that cannot
/// be read. Operations of a live gw are not listed.
pub fn interrupted(ctx: &Ctx<'_>) -> Result<Vec<Interrupted>> {
    let found = journal::scan(&ctx.home, false)?;
    Ok(found
        .iter()
        .filter_map(|f| match &f.record {
            Err(_) => Some(describe(f, false)),
            Ok(_) if f.interrupted => Some(describe(f, false)),
            Ok(r) if !pid_alive(r.pid) => Some(describe(f, true)),
            Ok(_) => None,
        })
        .collect())
}

/// Whether process `pid` exists (a reused pid counts: then the operation is taken for a
/// live one, and only reported later).
fn pid_alive(pid: u32) -> bool {
    rustix::process::Pid::from_raw(pid as i32)
        .is_some_and(|p| rustix::process::test_kill_process(p).is_ok())
}

fn describe(f: &Found, finishing: bool) -> Interrupted {
    match &f.record {
        Ok(r) => Interrupted {
            id: r.id.clone(),
            kind: Some(r.kind),
            workspace: Some(r.workspace.clone()),
            phase: Some(r.phase),
            steps: r
                .steps
                .iter()
                .map(|s| format!("{} ({})", s.action.describe(), status_name(s.status)))
                .collect(),
            corrupt: None,
            finishing,
        },
        Err(e) => Interrupted {
            id: f.id(),
            kind: None,
            workspace: None,
            phase: None,
            steps: Vec::new(),
            corrupt: Some(format!("{}: {e}", f.path.display())),
            finishing: false,
        },
    }
}

/// The paths the readable journals (of running and interrupted operations alike) made,
/// moved or moved things to: quarantined worktrees and workspaces, directories and
/// worktrees being created — that operation's to restore or remove, not leftovers.
pub fn journaled_paths(ctx: &Ctx<'_>) -> Vec<PathBuf> {
    let Ok(found) = journal::scan(&ctx.home, false) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for step in found
        .iter()
        .filter_map(|f| f.record.as_ref().ok())
        .flat_map(|r| r.steps.iter())
    {
        match &step.action {
            Action::MoveDir { from, to } => out.extend([from.clone(), to.clone()]),
            Action::CreateDir { path }
            | Action::AddWorktree { path, .. }
            | Action::CopyPaths { path, .. } => out.push(path.clone()),
            Action::RemoveRegistration { path, .. } => out.push(path.clone()),
            Action::RepairWorktrees { paths, .. } => out.extend(paths.iter().cloned()),
            Action::RecordTrash { entry, .. } | Action::DropTrash { entry, .. } => {
                out.push(entry.clone())
            }
            Action::RestoreRegistration { path, .. } => out.push(path.clone()),
            _ => {}
        }
    }
    out
}

/// Waits until no interrupted operation's git processes are still at work (they hold its
/// lock after their gw was killed), at most as long as a lock is waited for: recovering it
/// is then possible at once, instead of after a `TRANSIENT` the caller must retry.
pub fn wait_for_finishing(ctx: &Ctx<'_>) {
    let deadline = std::time::Instant::now() + ctx.lock_timeout();
    let mut said = false;
    loop {
        let finishing: Vec<Interrupted> = interrupted(ctx)
            .unwrap_or_default()
            .into_iter()
            .filter(|i| i.finishing)
            .collect();
        let Some(first) = finishing.first() else {
            return;
        };
        if std::time::Instant::now() >= deadline {
            return;
        }
        if !said {
            let what = first.kind.map(|k| k.as_str()).unwrap_or("operation");
            let ws = first.workspace.as_deref().unwrap_or("?");
            ctx.events.progress(&format!(
                "waiting for the git processes of an interrupted {what} of `{ws}` to finish"
            ));
            said = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Finishes or rolls back every interrupted operation. Refuses (recovers nothing) while a
/// corrupt journal exists, since it might describe work on the same resources.
pub fn recover_all(ctx: &Ctx<'_>) -> Result<Vec<Recovered>> {
    journal::remove_orphan_locks(&ctx.home);
    let found = journal::scan(&ctx.home, true)?;
    if let Some(bad) = found.iter().find(|f| f.record.is_err()) {
        return Ok(vec![Recovered {
            id: bad.id(),
            workspace: None,
            outcome: RecoveryOutcome::Left,
            steps: Vec::new(),
            detail: Some(format!(
                "corrupt journal {}: recovery is blocked until it is repaired or moved away by hand",
                bad.path.display()
            )),
            refused: true,
        }]);
    }
    let mut out = Vec::new();
    for f in found
        .into_iter()
        .filter(|f| f.interrupted && f.lock.is_some())
    {
        out.push(recover(ctx, f));
    }
    Ok(out)
}

fn recover(ctx: &Ctx<'_>, f: Found) -> Recovered {
    let mut record = f.record.expect("corrupt journals were filtered out");
    let mut names: Vec<String> = std::iter::once(record.workspace.clone())
        .chain(record.also.clone())
        .collect();
    names.sort();
    names.dedup();
    // `gw prune branches` journals no workspace.
    names.retain(|n| !n.is_empty());
    let left = |detail: String, refused: bool| Recovered {
        id: record.id.clone(),
        workspace: Some(record.workspace.clone()),
        outcome: RecoveryOutcome::Left,
        steps: Vec::new(),
        detail: Some(detail),
        refused,
    };
    if let Some(theirs) = foreign_move(ctx, &record, &names) {
        return left(
            format!(
                "it moves `{}`, which another workspace holds; recovery moves only the \
             operation's own directories, so it left this operation alone: look at it, then \
             remove `{}` by hand",
                theirs.display(),
                f.path.display()
            ),
            true,
        );
    }
    if let Some(stranger) = unknown_source(ctx, &record) {
        return left(
            format!(
                "it names `{}`, a repository no workspace and no repository directory of grove's \
             has; recovery acts only in repositories grove knows, so it left this operation \
             alone: look at it, then remove `{}` by hand",
                stranger.display(),
                f.path.display()
            ),
            true,
        );
    }
    let mut locks = Vec::new();
    for n in &names {
        match tx::workspace_lock(ctx, n) {
            Ok(l) => locks.push(l),
            Err(e) => return left(e.message.clone(), false),
        }
    }
    // A rename held its repositories from the move to the repairs; so does undoing it. A
    // branch is judged and deleted while no other gw changes its repository.
    let sources: Vec<&std::path::Path> = record
        .steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::RepairWorktrees { source, .. } | Action::DeleteBranch { source, .. } => {
                Some(source.as_path())
            }
            _ => None,
        })
        .collect();
    let _hold = match tx::hold_repos(ctx, &sources) {
        Ok(h) => h,
        Err(e) => return left(e.message.clone(), false),
    };
    // The steps run by recovery: children keep the journal's lock, as a live operation's do.
    let _inherit = f
        .lock
        .as_ref()
        .and_then(|l| crate::proc::inherit_lock(l).ok());
    let (outcome, steps, problem) = match record.phase {
        Phase::Committed => complete(ctx, &mut record.steps),
        Phase::Running | Phase::RollingBack => {
            let undone = tx::undo_steps(ctx, &mut record.steps);
            let failed = undone.iter().find_map(|(a, u)| match u {
                Undo::Failed(e) => Some(format!("{}: {e}", a.describe())),
                _ => None,
            });
            let kept = undone.iter().any(|(_, u)| matches!(u, Undo::Kept(_)));
            let lines = undone
                .iter()
                .map(|(a, u)| format!("{}: {}", a.describe(), undo_name(u)))
                .collect();
            let outcome = if kept {
                RecoveryOutcome::Kept
            } else {
                RecoveryOutcome::RolledBack
            };
            (outcome, lines, failed)
        }
    };
    let detail = match &problem {
        Some(p) => {
            let _ = journal::rewrite(&f.path, &record);
            Some(p.clone())
        }
        None => {
            let _ = journal::remove(&f.path);
            None
        }
    };
    Recovered {
        id: record.id.clone(),
        workspace: Some(record.workspace.clone()),
        outcome: if problem.is_some() {
            RecoveryOutcome::Left
        } else {
            outcome
        },
        steps,
        detail,
        refused: false,
    }
}

/// The first repository a step of `record` acts in that grove does not know — no workspace
/// in state uses it and it is not in a repository directory. A journal is a file: an edited
/// one must not delete a branch or drop a registration in any repository on disk, and it
/// cannot vouch for a repository itself.
fn unknown_source(ctx: &Ctx<'_>, record: &journal::Record) -> Option<std::path::PathBuf> {
    use std::collections::BTreeSet;
    let canonical = |p: &std::path::Path| crate::fsx::canonical_lenient(p);
    let named: Vec<&std::path::Path> = record
        .steps
        .iter()
        .filter_map(|s| s.action.source())
        .filter(|s| s.is_dir())
        .collect();
    if named.is_empty() {
        return None;
    }
    let (config, state) = (ctx.config().ok(), ctx.state().ok());
    let known: BTreeSet<std::path::PathBuf> =
        crate::ops::repos::known_sources(ctx, config.as_ref(), state.as_ref())
            .iter()
            .filter_map(|p| canonical(p))
            .collect();
    named
        .into_iter()
        .find(|s| !canonical(s).is_some_and(|c| known.contains(&c)))
        .map(std::path::Path::to_path_buf)
}

/// A directory a step of `record` moves that is another workspace's: one state records
/// under a name the operation does not hold (`names`). Recovery moves only its own.
fn foreign_move(
    ctx: &Ctx<'_>,
    record: &journal::Record,
    names: &[String],
) -> Option<std::path::PathBuf> {
    let state = ctx.state().ok()?;
    let others: Vec<std::path::PathBuf> = state
        .workspaces
        .iter()
        .filter(|w| !names.contains(&w.name))
        .filter_map(|w| crate::fsx::canonical_lenient(&w.path))
        .collect();
    record.steps.iter().find_map(|s| match &s.action {
        Action::MoveDir { from, to } => [from, to]
            .into_iter()
            .find(|p| {
                crate::fsx::canonical_lenient(p)
                    .is_some_and(|c| others.iter().any(|o| c.starts_with(o)))
            })
            .cloned(),
        _ => None,
    })
}

fn undo_name(u: &Undo) -> String {
    match u {
        Undo::Undone => "undone".into(),
        Undo::Kept(why) => format!("kept ({why})"),
        Undo::Failed(e) => format!("undo failed ({e})"),
    }
}

/// Re-applies what an operation past its commit point had not finished. Every completion
/// step is idempotent or checked first.
fn complete(
    ctx: &Ctx<'_>,
    steps: &mut [journal::Step],
) -> (RecoveryOutcome, Vec<String>, Option<String>) {
    let mut lines = Vec::new();
    let mut problem = None;
    let mut kept = false;
    let commit = steps
        .iter()
        .rposition(|s| matches!(s.action, Action::SetState { .. }));
    // The branches the workspace had before the operation, as its own state change records.
    let recorded: Vec<(std::path::PathBuf, String)> = steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::SetState {
                before: Some(w), ..
            } => Some(w),
            _ => None,
        })
        .flat_map(|w| w.repos.iter())
        .filter(|r| !r.preserve_branch)
        .filter_map(|r| {
            Some((
                crate::fsx::canonical_lenient(&r.source_repo)?,
                r.branch.clone(),
            ))
        })
        .collect();
    for (i, step) in steps.iter_mut().enumerate() {
        if Some(i) <= commit || matches!(step.status, StepStatus::Done | StepStatus::Kept) {
            continue;
        }
        let result = match &step.action {
            Action::DeleteBranch {
                source,
                branch,
                tip,
                forced,
                ..
            } => match crate::git::Repo::open(source) {
                Ok(r) => match r.local_branch(branch) {
                    None => Ok(()),
                    Some(at) => {
                        match fate::keep_on_completion(&r, branch, &at, tip, *forced, &recorded) {
                            Some(why) => {
                                step.status = StepStatus::Kept;
                                kept = true;
                                lines.push(format!("{}: kept ({why})", step.action.describe()));
                                continue;
                            }
                            None => tx::apply(ctx, &step.action),
                        }
                    }
                },
                Err(e) => Err(Error::from(e)),
            },
            other => tx::apply(ctx, other),
        };
        match result {
            Ok(()) => {
                step.status = StepStatus::Done;
                step.error = None;
                lines.push(format!("{}: done", step.action.describe()));
            }
            Err(e) => {
                step.error = Some(e.message.clone());
                lines.push(format!(
                    "{}: failed ({})",
                    step.action.describe(),
                    e.message
                ));
                problem.get_or_insert(format!("{}: {}", step.action.describe(), e.message));
            }
        }
    }
    // A quarantined workspace's bytes go too.
    if problem.is_none() {
        for step in steps.iter() {
            if let Action::MoveDir { to, .. } = &step.action
                && to
                    .parent()
                    .and_then(|p| p.file_name())
                    .is_some_and(|n| n == crate::home::TRASH)
                && to.exists()
            {
                let _ = crate::ops::trash::unlink(ctx, to);
            }
        }
    }
    let outcome = if kept {
        RecoveryOutcome::Kept
    } else {
        RecoveryOutcome::Completed
    };
    (outcome, lines, problem)
}
