//! The verdict: which of what something holds a remover would lose, and which of that
//! `--force` lets go. One table, [`Remover::protects`] and [`Remover::forcible`], read by
//! every remover and by the plans that describe them.

use serde_json::json;

use super::work::{self, Held, Kind, Work};
use crate::action::NextAction;
use crate::error::{Code, Error};
use crate::state::RepoEntry;

/// What takes something away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Remover {
    /// `gw delete` (and `gw go --delete`): a whole workspace, into the trash.
    Delete,
    /// `gw remove-repo`: worktrees of a workspace, into the trash.
    RemoveRepo,
    /// `gw create --replace`: the workspace it replaces, through delete.
    CreateReplace,
    /// `gw prune`: old workspaces, through delete, never forced.
    Prune,
    /// Undoing a worktree an operation added (its rollback, or recovery's): never forced,
    /// and what it keeps is reported.
    Rollback,
    /// `gw doctor --fix` of a worktree or registration no workspace records: never
    /// forced; nothing but the files of its commit may be there.
    DoctorFix,
    /// `gw reset`'s switch back to the workspace's branch, forced by `--discard`.
    ResetSwitch,
}

impl Remover {
    pub const ALL: [Remover; 7] = [
        Remover::Delete,
        Remover::RemoveRepo,
        Remover::CreateReplace,
        Remover::Prune,
        Remover::Rollback,
        Remover::DoctorFix,
        Remover::ResetSwitch,
    ];

    /// Whether this remover would lose `kind`, so that it stops unless forced. Ignored
    /// files go with a deleted worktree (its plan lists them: build output and
    /// dependencies are what ignore files are for), but a worktree no workspace records
    /// is not grove's to call disposable. A switch of branch loses only changes to tracked
    /// files (hidden edits included: `git reset --hard` and `git switch` overwrite an
    /// assume-unchanged file), a detached HEAD's commits, an operation in progress, and
    /// what cannot be read.
    pub fn protects(self, kind: Kind) -> bool {
        match self {
            Remover::Delete | Remover::RemoveRepo | Remover::CreateReplace | Remover::Prune => {
                kind != Kind::Ignored
            }
            Remover::Rollback => !matches!(kind, Kind::Ignored | Kind::Stray),
            Remover::DoctorFix => kind != Kind::Stray,
            Remover::ResetSwitch => matches!(
                kind,
                Kind::Changes
                    | Kind::HiddenEdits
                    | Kind::DetachedHead
                    | Kind::InProgress
                    | Kind::Unreadable
            ),
        }
    }

    /// Whether `--force` (`--discard` for a switch) lets this remover lose `kind`.
    pub fn forcible(self, kind: Kind) -> bool {
        match self {
            Remover::Delete | Remover::RemoveRepo | Remover::CreateReplace => true,
            Remover::Prune | Remover::Rollback | Remover::DoctorFix => false,
            Remover::ResetSwitch => matches!(kind, Kind::Changes | Kind::HiddenEdits),
        }
    }
}

impl Work {
    /// What stops `remover`: the work it would lose that `force` does not let go. Nothing
    /// stops it when this is empty.
    pub fn refusal(&self, remover: Remover, force: bool) -> Vec<&Held> {
        self.0
            .iter()
            .filter(|h| remover.protects(h.kind()) && !(force && remover.forcible(h.kind())))
            .collect()
    }

    /// What `remover`, forced, loses: the plan's warnings.
    pub fn lost(&self, remover: Remover) -> Vec<&Held> {
        self.0
            .iter()
            .filter(|h| remover.protects(h.kind()))
            .collect()
    }
}

/// What a worktree of a workspace held when it was looked at, before anything was removed.
#[derive(Debug, Clone)]
pub struct Inspection {
    pub exists: bool,
    pub source_exists: bool,
    pub work: Work,
}

impl Inspection {
    /// Whether removing it (forced) loses work.
    pub fn holds_work(&self, remover: Remover) -> bool {
        !self.work.lost(remover).is_empty()
    }
}

/// Looks at the worktree of `r`: nothing when it is gone; what cannot be told when its
/// source repository is (git cannot read the worktree without it).
pub fn inspect(r: &RepoEntry) -> Inspection {
    let exists = r.worktree_path.is_dir();
    let source_exists = r.source_repo.is_dir();
    let work = match (exists, source_exists) {
        (false, _) => Work::default(),
        (true, false) => Work(vec![Held::Unreadable(format!(
            "its source repository `{}` is missing, so git cannot check the worktree",
            r.source_repo.display()
        ))]),
        (true, true) => work::of_worktree(&r.worktree_path),
    };
    Inspection {
        exists,
        source_exists,
        work,
    }
}

/// Inspects every one of `repos`, in parallel.
pub fn inspect_all(repos: &[RepoEntry]) -> Vec<Inspection> {
    crate::parallel::map(repos, inspect)
}

/// `WORKTREE_DIRTY`: removing from workspace `ws` would lose what `refused` lists per
/// repository (each one's refusal) and the files `stray` outside any worktree. The one
/// error `gw delete`, `gw remove-repo` and their plans refuse with.
pub fn refused(
    ws: &str,
    refused: &[(&RepoEntry, &Inspection, Vec<&Held>)],
    stray: &[String],
) -> Error {
    let mut parts: Vec<String> = refused
        .iter()
        .map(|(r, _, held)| {
            let why: Vec<String> = held.iter().map(|h| h.describe()).collect();
            format!("{} ({})", r.repo_name, why.join("; "))
        })
        .collect();
    if !stray.is_empty() {
        parts.push(Held::Stray(stray.to_vec()).describe());
    }
    let repos: Vec<serde_json::Value> = refused
        .iter()
        .map(|(r, i, held)| {
            json!({
                "repo": r.repo_name,
                "changes": i.work.status_lines(),
                "held": held.iter().map(|h| h.describe()).collect::<Vec<_>>(),
            })
        })
        .collect();
    Error::new(
        Code::WorktreeDirty,
        format!("workspace `{ws}` has work that would be lost: {}", parts.join("; ")),
    )
    .with_fix("Commit, push or stash the work (and finish or abort what is in progress), or pass --force to discard it")
    .with_details(json!({ "workspace": ws, "repos": repos, "stray_files": stray }))
    .with_action(NextAction::read(
        "See what would be lost",
        &["gw", "status", ws, "--format", "json"],
    ))
}
