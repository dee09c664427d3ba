//! Recovery of interrupted operations from their journals (`gw doctor`, `gw doctor --fix`).
//!
//! An operation that died before its commit point is rolled back; one that died after it is
//! completed. Both use the same `apply`/`undo` as a live operation, and neither ever
//! removes something whose ownership is unclear or that has gained work since: that is kept
//! and reported. A journal that cannot be read is reported and left alone, and it blocks
//! every destructive fix (`gw doctor --fix` only reports while one exists).

use serde::Serialize;

use crate::error::Result;
use crate::ops::Ctx;
use crate::ops::tx::{self, Undo};
use crate::state::journal::{self, Action, Found, Phase, StepStatus};

/// An interrupted (or corrupt) operation found in `operations/`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Interrupted {
    pub id: String,
    /// `create`, `delete`, …; `null` when the journal cannot be read.
    pub kind: Option<String>,
    pub workspace: Option<String>,
    /// `running` (rolls back) or `committed` (completes).
    pub phase: Option<String>,
    /// What it had done: one line per step, with its status.
    pub steps: Vec<String>,
    /// Why the journal cannot be used, when it is corrupt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrupt: Option<String>,
}

/// What recovering one operation did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Recovered {
    pub id: String,
    pub workspace: Option<String>,
    /// `rolled_back`, `completed`, or `left` (see `detail`).
    pub outcome: &'static str,
    /// Per step: what was done.
    pub steps: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Running => "running",
        Phase::Committed => "committed",
        Phase::RollingBack => "rolling_back",
    }
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

/// Operations whose process is gone, and journals that cannot be read.
pub fn interrupted(ctx: &Ctx<'_>) -> Result<Vec<Interrupted>> {
    let found = journal::scan(&ctx.home, false).map_err(tx::journal_error)?;
    Ok(found
        .iter()
        .filter(|f| f.interrupted || f.record.is_err())
        .map(describe)
        .collect())
}

fn describe(f: &Found) -> Interrupted {
    match &f.record {
        Ok(r) => Interrupted {
            id: r.id.clone(),
            kind: Some(r.kind.as_str().to_string()),
            workspace: Some(r.workspace.clone()),
            phase: Some(phase_name(r.phase).to_string()),
            steps: r
                .steps
                .iter()
                .map(|s| format!("{} ({})", s.action.describe(), status_name(s.status)))
                .collect(),
            corrupt: None,
        },
        Err(e) => Interrupted {
            id: f.id(),
            kind: None,
            workspace: None,
            phase: None,
            steps: Vec::new(),
            corrupt: Some(format!("{}: {e}", f.path.display())),
        },
    }
}

/// Where the readable journals (of running and interrupted operations alike) moved
/// directories to: quarantined worktrees and workspaces that are theirs to restore or
/// remove, not leftovers.
pub fn journaled_paths(ctx: &Ctx<'_>) -> Vec<std::path::PathBuf> {
    let Ok(found) = journal::scan(&ctx.home, false) else {
        return Vec::new();
    };
    found
        .iter()
        .filter_map(|f| f.record.as_ref().ok())
        .flat_map(|r| r.steps.iter())
        .filter_map(|s| match &s.action {
            Action::MoveDir { to, .. } => Some(to.clone()),
            _ => None,
        })
        .collect()
}

/// Finishes or rolls back every interrupted operation. Refuses (recovers nothing) while a
/// corrupt journal exists, since it might describe work on the same resources.
pub fn recover_all(ctx: &Ctx<'_>) -> Result<Vec<Recovered>> {
    let found = journal::scan(&ctx.home, true).map_err(tx::journal_error)?;
    if let Some(bad) = found.iter().find(|f| f.record.is_err()) {
        return Ok(vec![Recovered {
            id: bad.id(),
            workspace: None,
            outcome: "left",
            steps: Vec::new(),
            detail: Some(format!(
                "corrupt journal {}: recovery is blocked until it is repaired or moved away by hand",
                bad.path.display()
            )),
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
    let mut locks = Vec::new();
    for n in &names {
        match tx::workspace_lock(ctx, n) {
            Ok(l) => locks.push(l),
            Err(e) => {
                return Recovered {
                    id: record.id.clone(),
                    workspace: Some(record.workspace.clone()),
                    outcome: "left",
                    steps: Vec::new(),
                    detail: Some(e.message.clone()),
                };
            }
        }
    }
    let (outcome, steps, problem) = match record.phase {
        Phase::Committed => complete(ctx, &mut record.steps),
        Phase::Running | Phase::RollingBack => {
            let undone = tx::undo_steps(ctx, &mut record.steps);
            let failed = undone.iter().find_map(|(a, u)| match u {
                Undo::Failed(e) => Some(format!("{}: {e}", a.describe())),
                _ => None,
            });
            let lines = undone
                .iter()
                .map(|(a, u)| format!("{}: {}", a.describe(), undo_name(u)))
                .collect();
            ("rolled_back", lines, failed)
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
        outcome: if problem.is_some() { "left" } else { outcome },
        steps,
        detail,
    }
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
) -> (&'static str, Vec<String>, Option<String>) {
    let mut lines = Vec::new();
    let mut problem = None;
    let commit = steps
        .iter()
        .rposition(|s| matches!(s.action, Action::SetState { .. }));
    for (i, step) in steps.iter_mut().enumerate() {
        if Some(i) <= commit || matches!(step.status, StepStatus::Done | StepStatus::Kept) {
            continue;
        }
        let result = match &step.action {
            Action::DeleteBranch {
                source,
                branch,
                tip,
                ..
            } => match crate::git::Repo::open(source) {
                Ok(r) => match r.local_branch(branch) {
                    None => Ok(()),
                    Some(at) if at != *tip => {
                        step.status = StepStatus::Kept;
                        lines.push(format!(
                            "{}: kept (it moved to {at})",
                            step.action.describe()
                        ));
                        continue;
                    }
                    Some(_) => tx::apply(ctx, &step.action),
                },
                Err(e) => Err(e.into()),
            },
            Action::PruneWorktrees { source, .. } if !source.is_dir() => Ok(()),
            other => tx::apply(ctx, other),
        };
        match result {
            Ok(()) => {
                step.status = StepStatus::Done;
                lines.push(format!("{}: done", step.action.describe()));
            }
            Err(e) => {
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
    for step in steps.iter() {
        if let Action::MoveDir { to, .. } = &step.action
            && to
                .parent()
                .and_then(|p| p.file_name())
                .is_some_and(|n| n == crate::ops::delete::TRASH)
            && to.exists()
        {
            let _ = crate::ops::delete::unlink_trash(to);
        }
    }
    ("completed", lines, problem)
}
