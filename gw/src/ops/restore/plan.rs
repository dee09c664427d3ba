//! What a restore will do, decided before anything changes: the checks that refuse it
//! (the name or directory taken, a branch made again, a source repository gone or unknown,
//! an entry that is not whole or whose record disagrees with it), the steps, and the plan's
//! view of them.

use std::path::{Path, PathBuf};

use super::Plan;
use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::plan::{Change, ChangeKind, Described, Fact};
use crate::ops::trash::Kept;
use crate::ops::{Ctx, names, tx};
use crate::state::State;
use crate::state::journal::Action;
use crate::state::trash::BranchFate;

/// Everything the restore of `kept` (as `as_name`) will do, or why it cannot.
pub(super) fn plan(
    ctx: &Ctx<'_>,
    config: &crate::config::Config,
    state: &State,
    kept: Kept,
    as_name: Option<&str>,
) -> Result<Plan> {
    let record = &kept.record;
    let layout = kept.layout();
    let territory = ctx.territory();
    territory.check_trash_entry(&kept.entry)?;
    let name = as_name.unwrap_or(&record.name).to_string();
    // A record is a file: its name is checked as a new workspace's would be.
    names::check_workspace(&name).map_err(|e| corrupt_if_recorded(e, as_name.is_none()))?;
    if state.find(&name).is_some() {
        return Err(taken(
            &kept,
            &name,
            format!("a workspace named `{name}` exists"),
        ));
    }
    let old = &record.workspace;
    let path = match as_name {
        Some(n) => old.path.parent().unwrap_or(Path::new("/")).join(n),
        None => old.path.clone(),
    };
    territory.check(&path, "restore a workspace to")?;
    // A workspace's place is a directory of its own in a workspace directory: not the
    // trash, not inside anything else.
    let placed = path.parent().is_some_and(|p| territory.is_root(p))
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| !n.starts_with('.'));
    if !placed {
        return Err(Error::new(
            Code::CorruptState,
            format!(
                "cannot restore `{}` to `{}`: a workspace's directory is one of its own in a workspace directory",
                record.name,
                path.display()
            ),
        )
        .with_fix("Look at the entry (`gw trash --format json`); its record was edited"));
    }
    // Never into (or around) another workspace's directory.
    if let Some(w) = state
        .workspaces
        .iter()
        .find(|w| path.starts_with(&w.path) || w.path.starts_with(&path))
    {
        return Err(taken(
            &kept,
            &name,
            format!("`{}` is workspace `{}`'s place", path.display(), w.name),
        ));
    }
    if fsx::exists(&path) {
        return Err(taken(&kept, &name, format!("`{}` exists", path.display())));
    }
    if !real_dir(&layout.workspace()) {
        return Err(Error::new(
            Code::CorruptState,
            format!(
                "the trash entry `{}` holds no workspace directory",
                kept.entry.display()
            ),
        )
        .with_fix("Run `gw doctor` to see what is left of it"));
    }
    let known: std::collections::BTreeSet<PathBuf> =
        crate::ops::repos::known_sources(ctx, Some(config), Some(state))
            .iter()
            .filter_map(|p| fsx::canonical_lenient(p))
            .collect();
    let mut after = old.clone();
    after.name = name.clone();
    after.path = path.clone();
    // A slot another workspace took meanwhile is given up: the next write assigns one.
    if after.slot.is_some() && state.workspaces.iter().any(|w| w.slot == after.slot) {
        after.slot = None;
    }

    let mut registrations = Vec::new();
    let mut branch_steps = Vec::new();
    let mut branches = Vec::new();
    let mut warnings = Vec::new();
    for (i, (kr, r)) in record.repos.iter().zip(after.repos.iter_mut()).enumerate() {
        let rel = r.worktree_path.strip_prefix(&old.path).map(Path::to_path_buf).map_err(|_| {
            Error::new(
                Code::CorruptState,
                format!(
                    "{}: its worktree `{}` was not inside the workspace directory, so it is not in the trash",
                    r.repo_name,
                    r.worktree_path.display()
                ),
            )
        })?;
        let was = r.worktree_path.clone();
        r.worktree_path = path.join(&rel);
        territory.check(&r.worktree_path, "restore a worktree to")?;
        let source = git::Repo::open(&kr.source)
            .ok()
            .filter(|_| fsx::canonical_lenient(&kr.source).is_some_and(|c| known.contains(&c)))
            .ok_or_else(|| source_gone(&kept, &kr.repo, &kr.source))?;
        let (step, what) = branch_step(&kept, i, &source, &mut warnings)?;
        branch_steps.extend(step);
        branches.push(what);
        if let Some(wt) = source
            .worktrees()?
            .into_iter()
            .find(|w| !w.prunable && w.branch.as_deref() == Some(kr.branch.as_str()))
        {
            return Err(Error::new(
                Code::BranchConflict,
                format!(
                    "{}: branch {} is checked out at `{}` now",
                    kr.repo,
                    kr.branch,
                    wt.path.display()
                ),
            )
            .with_fix("Switch that worktree to another branch, then restore"));
        }
        let found = super::registration::step(&super::registration::Worktree {
            kept: &kept,
            i,
            source: &source,
            in_entry: &layout.workspace().join(&rel),
            was: &was,
            path: &r.worktree_path,
            moved: path != old.path,
        })?;
        warnings.extend(found.warnings);
        branch_steps.extend(found.branch);
        registrations.extend(found.register);
    }
    // The branches first and the registrations last: undone newest first, a registration
    // goes while its directory is back in place, the directory goes back into the entry,
    // and only then the branches, which no worktree has checked out any more.
    let mut steps = branch_steps;
    steps.push(Action::MoveDir {
        from: layout.workspace(),
        to: path.clone(),
    });
    steps.extend(registrations);
    Ok(Plan {
        kept,
        after,
        steps,
        branches,
        warnings,
    })
}

/// What to do about repository `i`'s branch, and how to say it.
fn branch_step(
    kept: &Kept,
    i: usize,
    source: &git::Repo,
    warnings: &mut Vec<String>,
) -> Result<(Option<Action>, String)> {
    let kr = &kept.record.repos[i];
    let now = source.local_branch(&kr.branch);
    let short = |o: &str| o.get(..7).unwrap_or(o).to_string();
    let recreate = |tip: &str| Action::RestoreBranch {
        repo: kr.repo.clone(),
        source: kr.source.clone(),
        branch: kr.branch.clone(),
        tip: tip.to_string(),
        config: kr.config.clone(),
    };
    let has_commit = |tip: &str| source.rev(&format!("{tip}^{{commit}}")).is_some();
    // The tip the record says must be the one the delete kept, where a kept ref is left.
    if let (BranchFate::Deleted, Some(tip), Some(id)) =
        (kr.fate, kr.tip.as_deref(), kept.layout().id())
        && let Some(at) = source.reference(&crate::state::trash::kept_ref(&id, i))
        && at != tip
    {
        return Err(Error::new(
            Code::CorruptState,
            format!(
                "{}: the trash entry's record says branch {} was at {}, its kept tip is {}",
                kr.repo,
                kr.branch,
                short(tip),
                short(&at)
            ),
        )
        .with_fix("Look at the entry (`gw trash --format json`); its record was edited"));
    }
    Ok(match (kr.fate, kr.tip.as_deref(), now) {
        (BranchFate::Deleted, Some(tip), None) => {
            if !has_commit(tip) {
                return Err(Error::new(
                    Code::CorruptState,
                    format!(
                        "{}: commit {} of branch {} is gone from the repository",
                        kr.repo,
                        short(tip),
                        kr.branch
                    ),
                ));
            }
            (
                Some(recreate(tip)),
                format!("branch {} restored at {}", kr.branch, short(tip)),
            )
        }
        (BranchFate::Deleted, Some(tip), Some(at)) if at == tip => (
            None,
            format!("branch {} was made again at {}", kr.branch, short(tip)),
        ),
        (BranchFate::Deleted, _, Some(at)) => {
            return Err(tx::taken_branch(&kr.branch, &at)
                .context(&kr.repo)
                .with_action(NextAction::read(
                    "List the trash",
                    &["gw", "trash", "--format", "json"],
                )));
        }
        (BranchFate::Kept, Some(tip), None) if has_commit(tip) => {
            warnings.push(format!(
                "{}: branch {} was deleted since; made again at {}",
                kr.repo,
                kr.branch,
                short(tip)
            ));
            (
                Some(recreate(tip)),
                format!("branch {} made again at {}", kr.branch, short(tip)),
            )
        }
        (BranchFate::Kept, Some(tip), Some(at)) if at != tip => {
            warnings.push(format!(
                "{}: branch {} moved since the delete (from {} to {}); the worktree's files are as they were",
                kr.repo,
                kr.branch,
                short(tip),
                short(&at)
            ));
            (
                None,
                format!("branch {} kept, now at {}", kr.branch, short(&at)),
            )
        }
        (_, _, Some(at)) => (None, format!("branch {} at {}", kr.branch, short(&at))),
        (BranchFate::Gone, _, None) => (None, format!("branch {} absent", kr.branch)),
        (_, tip, None) => {
            return Err(Error::new(
                Code::CorruptState,
                format!(
                    "{}: branch {} is gone, and so is its commit {}",
                    kr.repo,
                    kr.branch,
                    tip.map(short).unwrap_or_else(|| "(unknown)".into())
                ),
            )
            .with_fix("Nothing can bring it back; `gw trash empty` erases the entry"));
        }
    })
}

fn taken(kept: &Kept, name: &str, why: String) -> Error {
    // The suggestion must be a name gw takes: at most 255 bytes.
    let mut cut = name.len().min(255 - "-restored".len());
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let other = format!("{}-restored", &name[..cut]);
    Error::new(
        Code::WorkspaceExists,
        format!("cannot restore `{}` as `{name}`: {why}", kept.record.name),
    )
    .with_fix("Restore it under another name with --as")
    .with_action(NextAction::write(
        format!("Restore it as {other}"),
        &[
            "gw", "restore", &kept.id, "--as", &other, "--format", "json",
        ],
    ))
}

fn source_gone(kept: &Kept, repo: &str, source: &Path) -> Error {
    Error::new(
        Code::RepoNotFound,
        format!(
            "cannot restore `{}`: the source repository of {repo}, `{}`, is gone (or is not one grove knows)",
            kept.record.name,
            source.display()
        ),
    )
    .with_fix("Put the repository back where it was (or add its directory with `gw add-dir`), then retry")
}

/// The plan's view of a restore.
pub(super) fn describe(plan: &Plan) -> Described {
    let kept = &plan.kept;
    let mut d = Described {
        workspace: plan.after.name.clone(),
        warnings: plan.warnings.clone(),
        ..Described::default()
    };
    d.facts.push(Fact::new(None, "entry", kept.id.clone()));
    d.facts.push(Fact::new(
        None,
        "path",
        if fsx::exists(&plan.after.path) {
            "exists"
        } else {
            "absent"
        },
    ));
    for kr in &kept.record.repos {
        let now = git::Repo::open(&kr.source)
            .ok()
            .and_then(|g| g.local_branch(&kr.branch));
        d.facts.push(Fact::new(
            Some(&kr.repo),
            format!("branch {}", kr.branch),
            now.unwrap_or_else(|| "absent".into()),
        ));
    }
    for step in &plan.steps {
        d.changes.push(match step {
            Action::MoveDir { from, to } => Change::new(ChangeKind::RestoreFromTrash)
                .path(to)
                .detail(format!("from {}", from.display())),
            Action::RestoreRegistration {
                repo, path, admin, ..
            } => Change::new(ChangeKind::RegisterWorktree)
                .repo(repo)
                .path(path)
                .detail(format!("as worktrees/{admin}")),
            Action::RestoreBranch {
                repo, branch, tip, ..
            } => Change::new(ChangeKind::RestoreBranch)
                .repo(repo)
                .branch(branch)
                .detail(format!("at {}", tip.get(..7).unwrap_or(tip))),
            other => Change::new(ChangeKind::RecordState).detail(other.describe()),
        });
    }
    d.changes.push(
        Change::new(ChangeKind::RecordState).detail(format!("workspace {}", plan.after.name)),
    );
    d.changes.push(
        Change::new(ChangeKind::RemoveTrashEntry)
            .path(&kept.entry)
            .detail("its record and the references that kept its branches' tips"),
    );
    d
}

/// Whether `path` is a directory itself, not a symbolic link to one.
pub(super) fn real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// A name a record gives is a corrupt record, not a typo of the user's.
fn corrupt_if_recorded(e: Error, recorded: bool) -> Error {
    if recorded {
        Error::new(
            Code::CorruptState,
            format!("the trash entry's record: {}", e.message),
        )
        .with_fix("Restore it under another name with --as")
    } else {
        e
    }
}
