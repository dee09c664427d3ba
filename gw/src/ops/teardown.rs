//! Taking worktrees away: the one path `gw delete` and `gw remove-repo` (and `gw prune`,
//! through delete) follow, and the one their plans describe.
//!
//! 1. Inspect every worktree that goes (`safety::inspect`: the work it holds, what is
//!    ignored) and the files outside any worktree. The command refuses lost work unless
//!    forced (`Work::refusal`).
//! 2. [`run_hooks`]: `pre_delete` and each repository's `teardown`, outside every lock (a
//!    hook may call gw).
//! 3. [`remove`], under the workspace's lock: the workspace must be the one inspected, and —
//!    unless forced — nothing may have appeared since (a hook, or a person, writing into a
//!    worktree): that is `STATE_CHANGED`, and nothing is touched. Every path must lie in a
//!    workspace directory.
//! 4. In one transaction, quarantine (a rename into `.trash`), then commit the state change
//!    together with what completes it: removing exactly these worktrees' registrations
//!    (never `git worktree prune`, which would drop another process's worktree in the middle
//!    of a move), and deleting the branches `safety::fate` lets go. Carry those out; the
//!    bytes are removed in the background.

use std::path::PathBuf;

use crate::config::{Hook, HookKind, RepoConfig};
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::hooks::{self, Vars};
use crate::ops::plan::{Change, ChangeKind, Described, Fact};
use crate::ops::safety::{self, Fate, Held, Inspection, Remover, fate};
use crate::ops::tx::{self, Locks, Tx};
use crate::ops::{Ctx, resolve, trash, trust};
use crate::parallel;
use crate::state::journal::{Action, Kind};
use crate::state::{RepoEntry, Workspace};

/// The plan's view of a worktree that `remover` takes: its HEAD, branch and uncommitted
/// changes as facts, what removing it loses (the kernel's verdict) and the ignored files
/// that go with it as warnings, and its teardown commands.
pub fn describe_worktree(
    r: &RepoEntry,
    label: &str,
    i: &Inspection,
    remover: Remover,
    d: &mut Described,
) {
    let (head, live) = match git::Repo::open(&r.worktree_path).and_then(|g| g.head()) {
        Ok(h) => (
            h.oid.unwrap_or_default(),
            h.branch.unwrap_or_else(|| "(detached)".into()),
        ),
        Err(_) => ("missing".into(), "missing".into()),
    };
    d.facts.push(Fact::new(Some(label), "head", head));
    d.facts.push(Fact::new(Some(label), "checked_out", live));
    let changes = i.work.status_lines();
    let listed = if changes.is_empty() {
        "(none)".to_string()
    } else {
        changes.join("\n")
    };
    d.facts.push(Fact::new(Some(label), "changes", listed));
    if !changes.is_empty() {
        // A file changed again has the same status line: what the changes are is in the
        // files' size, time and mode, so a plan made with them is not applied over new work.
        d.facts.push(Fact::new(
            Some(label),
            "changes_stat",
            changes_stat(&r.worktree_path, &changes),
        ));
    }
    if !changes.is_empty() {
        d.warnings.push(format!(
            "{label}: {} uncommitted change{} would be destroyed: {}",
            changes.len(),
            if changes.len() == 1 { "" } else { "s" },
            changes.join(", ")
        ));
    }
    for held in i.work.lost(remover) {
        if !matches!(held, Held::Changes(_) | Held::Untracked(_)) {
            d.warnings.push(format!(
                "{label}: {}; removing the worktree loses that",
                held.describe()
            ));
        }
    }
    if !i.work.ignored().is_empty() {
        d.warnings.push(format!(
            "{label}: ignored files are removed with the worktree: {}",
            i.work.ignored().join(", ")
        ));
    }
    if i.exists && i.source_exists {
        for cmd in repo_config(r).teardown {
            d.changes.push(
                Change::new(ChangeKind::RunTeardownHook)
                    .repo(label)
                    .path(&r.worktree_path)
                    .detail(cmd),
            );
        }
    }
}

/// The plan's view of what completes the removal of `r`'s worktree: its registration goes,
/// and its branch meets its fate (`safety::fate`) — judged after the branches `going` (repository,
/// branch) that the plan deletes before it, as the command will; a branch it deletes joins
/// them. `keep`: the workspace goes into the trash, its branches' tips kept.
pub fn describe_completion(
    ctx: &Ctx<'_>,
    r: &RepoEntry,
    label: &str,
    force: bool,
    keep: bool,
    going: &mut Vec<(PathBuf, String)>,
    d: &mut Described,
) {
    if !r.source_repo.is_dir() {
        return;
    }
    d.changes.push(
        Change::new(ChangeKind::RemoveRegistration)
            .repo(label)
            .path(&r.worktree_path),
    );
    let source = fsx::canonical(&r.source_repo);
    let before: Vec<&str> = going
        .iter()
        .filter(|(s, _)| *s == source)
        .map(|(_, b)| b.as_str())
        .collect();
    let fate = fate::fate_beside(r, force, ctx.territory(), &before);
    if let Fate::Delete { .. } = fate {
        going.push((source, r.branch.clone()));
    }
    fate::describe(r, label, &fate, d);
    if keep
        && let Fate::Delete { .. } = fate
        && let Some(c) = d.changes.last_mut()
    {
        c.detail = Some(format!(
            "{}; its tip is kept under {} while the workspace is in the trash",
            c.detail.as_deref().unwrap_or_default(),
            crate::state::trash::REF_PREFIX
        ));
    }
}

/// A digest of what the files of the status lines `changes` of the worktree at `path`
/// are now (kind, size, modification time and mode; a directory's own), without reading them.
fn changes_stat(path: &std::path::Path, changes: &[String]) -> String {
    use std::os::unix::fs::MetadataExt;
    let mut seen = String::new();
    for line in changes {
        let name = line.get(3..).unwrap_or_default();
        let name = name.rsplit_once(" -> ").map_or(name, |(_, to)| to);
        let name = name.trim_end_matches('/');
        let stat = match std::fs::symlink_metadata(path.join(name)) {
            Ok(m) => format!(
                "{:o} {} {}.{}",
                m.mode(),
                m.size(),
                m.mtime(),
                m.mtime_nsec()
            ),
            Err(_) => "absent".into(),
        };
        seen.push_str(&format!("{name}\0{stat}\0"));
    }
    fsx::sha256_hex(seen.as_bytes())
}

fn repo_config(r: &RepoEntry) -> RepoConfig {
    RepoConfig::load(&r.source_repo).unwrap_or_default()
}

/// What [`run_hooks`] runs: `pre_delete` (when given) and the `teardown` commands of the
/// targets whose worktree and source exist, each repository's `.grove.toml` read once.
pub struct Hooks<'a> {
    pre_delete: Option<&'a Hook>,
    teardown: Vec<(&'a RepoEntry, RepoConfig)>,
}

impl<'a> Hooks<'a> {
    pub fn of(targets: &'a [RepoEntry], pre_delete: Option<&'a Hook>) -> Hooks<'a> {
        let teardown = targets
            .iter()
            .filter(|r| r.worktree_path.is_dir() && r.source_repo.is_dir())
            .map(|r| (r, repo_config(r)))
            .filter(|(_, c)| !c.teardown.is_empty())
            .collect();
        Hooks {
            pre_delete,
            teardown,
        }
    }

    /// Whether there is nothing to run.
    pub fn is_empty(&self) -> bool {
        self.pre_delete.is_none() && self.teardown.is_empty()
    }
}

/// Runs `what` for `ws`. Returns warnings; a `pre_delete` that fails with
/// `on_failure = "abort"` is an error.
pub fn run_hooks(ctx: &Ctx<'_>, ws: &Workspace, what: &Hooks<'_>) -> Result<Vec<String>> {
    let projects: Vec<trust::Project<'_>> = what
        .teardown
        .iter()
        .map(|(r, config)| trust::Project::of(r, config))
        .collect();
    trust::require(
        ctx,
        &format!("removing worktrees of `{}`", ws.name),
        &projects,
    )?;
    let vars = Vars::of(ctx, ws);
    let mut warnings = Vec::new();
    if what.pre_delete.is_some() {
        warnings.extend(hooks::run_global(
            ctx,
            what.pre_delete,
            HookKind::PreDelete,
            &vars,
            &ws.path,
        )?);
    }
    for (r, config) in &what.teardown {
        if let Err(f) = hooks::run_repo_commands(
            ctx,
            &r.repo_name,
            &config.teardown,
            &r.worktree_path,
            &vars,
            false,
        ) {
            warnings.push(format!("{}: teardown failed: {}", r.repo_name, f.summary()));
        }
    }
    Ok(warnings)
}

/// A removal, as decided before its hooks ran.
pub struct Request<'a> {
    /// The workspace as inspected.
    pub ws: &'a Workspace,
    pub kind: Kind,
    /// The worktrees that go, and what was seen in them.
    pub targets: &'a [RepoEntry],
    pub inspections: &'a [Inspection],
    /// Files outside any worktree that were seen (a whole workspace goes).
    pub stray: &'a [String],
    /// What is quarantined: (from, to).
    pub moves: Vec<(PathBuf, PathBuf)>,
    /// The state entry afterwards; `None` drops it.
    pub after: Option<Workspace>,
    pub force: bool,
    /// Who removes (delete, remove-repo, prune, create --replace): what is judged work.
    pub remover: Remover,
    /// Whether `inspections` were made under the lock `remove` is given (no hook ran in
    /// between): nothing can have changed since, and they are not made again.
    pub inspected_under_lock: bool,
    /// Keep what goes in the trash for `gw restore` (a whole workspace: `targets` are its
    /// repositories, and the one move is its directory into the entry's `workspace/`);
    /// `None` erases it, in the background.
    pub keep: Option<Keep>,
}

/// Where and why a retained removal keeps what it removes.
pub struct Keep {
    /// The trash entry (`.trash/<name>-<nanos>`), made by the removal.
    pub entry: PathBuf,
    pub reason: trash::Reason,
}

/// What a removal that went through left: per repository, what it kept and why (`notes`),
/// and warnings.
#[derive(Debug, Default)]
pub struct Removed {
    pub notes: Vec<(String, String)>,
    pub warnings: Vec<String>,
}

/// Why a removal did not go through.
pub enum Failure {
    /// Refused before anything changed.
    Refused(Error),
    /// Failed before its commit point and was rolled back (`clean`), or rolling back failed
    /// too and its journal `id` awaits recovery.
    Failed {
        cause: Error,
        id: String,
        clean: bool,
    },
}

impl Failure {
    /// The error to show: `what` failed ("delete workspace `x`"), and whether anything is
    /// left to recover.
    pub fn error(self, what: &str, ws: &str, kind: Kind) -> Error {
        match self {
            Failure::Refused(e) => e,
            Failure::Failed { cause, clean, .. } if clean => {
                cause.context(format!("cannot {what}; nothing was changed"))
            }
            Failure::Failed { cause, id, .. } => tx::recovery_pending(&id, ws, kind).with_message(
                format!("cannot {what}: {}; restoring failed too", cause.message),
            ),
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Refused(e)
    }
}

/// Step 3 and 4: checks again under `locks` (the workspace's), quarantines, commits, and
/// completes the removal.
pub fn remove(ctx: &Ctx<'_>, locks: Locks, req: Request<'_>) -> Result<Removed, Failure> {
    let ws = req.ws;
    // The hooks ran without the lock; make sure they left the workspace that was checked.
    match ctx.state()?.find(&ws.name) {
        Some(now) if now == ws => {}
        None => return Err(resolve::not_found(&ws.name).into()),
        Some(_) => return Err(changed(ws, &["its state entry changed".into()]).into()),
    }
    if !req.force && !req.inspected_under_lock {
        recheck(&req)?;
    }
    let territory = ctx.territory();
    for (from, to) in req.moves.iter().filter(|(from, _)| fsx::exists(from)) {
        territory.check(from, "delete")?;
        territory.check(to, "move into the trash")?;
    }
    // The registrations to remove once the directories are gone, as git recorded them.
    let registered = registrations(ctx, req.targets);
    for (from, _) in &req.moves {
        // A process inside a directory it is about to move would lose its working directory.
        fsx::step_out_of(from);
    }
    // Whether a branch's commits exist elsewhere is decided, and the branch deleted, while
    // no other gw changes these repositories: two deletes must not each count the other's
    // branch as the copy of a commit only the two of them have.
    let sources: Vec<&std::path::Path> = req
        .targets
        .iter()
        .filter(|r| r.source_repo.is_dir())
        .map(|r| r.source_repo.as_path())
        .collect();
    let _hold = tx::hold_repos(ctx, &sources)?;
    // What completes the removal is decided now and recorded with the commit point, so that
    // a process killed after it leaves a journal that finishes all of it. A branch's fate
    // depends on branches and registrations, not on where the directories are.
    let fates: Vec<Option<Fate>> = req
        .targets
        .iter()
        .map(|r| {
            r.source_repo
                .is_dir()
                .then(|| fate::fate(r, req.force, territory))
        })
        .collect();
    let layout = req.keep.as_ref().map(|k| trash::Layout::of(&k.entry));
    let kept_ref = |i: usize| {
        layout
            .as_ref()
            .and_then(trash::Layout::id)
            .map(|id| trash::kept_ref(&id, i))
    };
    let mut first = Vec::new();
    if let Some(keep) = &req.keep {
        let record = trash::record_of(ws, keep.reason, req.targets, &fates, &registered);
        first.push(Action::RecordTrash {
            entry: keep.entry.clone(),
            record: Box::new(record),
        });
    }
    first.extend(
        req.moves
            .iter()
            .filter(|(from, _)| fsx::exists(from))
            .map(|(from, to)| Action::MoveDir {
                from: from.clone(),
                to: to.clone(),
            }),
    );
    // The commit point, the state change, is recorded with the steps before it in the
    // journal's first write (one durable write fewer).
    first.push(Action::SetState {
        name: ws.name.clone(),
        before: Some(Box::new(ws.clone())),
        after: req.after.clone().map(Box::new),
    });
    let (mut tx, mut first) = Tx::begin_with(ctx, locks, req.kind, &ws.name, &[], first)?;
    let commit = first.pop().expect("the state change is a step");
    // The git processes that delete the branches start now (keeping the journal's lock) and
    // wait for their input while the commit's writes wait for the disk; dropped unneeded.
    let _warm = git::warm_update_refs(req.targets.iter().zip(&fates).filter_map(|(r, f)| {
        matches!(f, Some(Fate::Delete { .. })).then_some(r.source_repo.as_path())
    }));
    let moved = tx.run_intended(&first, false);
    let mut removed = Removed::default();
    let mut deletes = Vec::new();
    for (i, (r, fate)) in req.targets.iter().zip(fates).enumerate() {
        match fate {
            Some(Fate::Delete { tip, unique }) => deletes.push(Action::DeleteBranch {
                repo: r.repo_name.clone(),
                source: r.source_repo.clone(),
                branch: r.branch.clone(),
                tip,
                forced: unique != Some(0),
                keep: kept_ref(i),
            }),
            Some(Fate::Keep(why)) => {
                removed.warnings.push(format!("{}: {why}", r.repo_name));
                removed.notes.push((r.repo_name.clone(), why));
            }
            Some(Fate::Preserved | Fate::Gone) | None => {}
        }
    }
    let registrations: Vec<Action> = registered
        .iter()
        .map(|(i, path, _)| {
            let r = &req.targets[*i];
            Action::RemoveRegistration {
                repo: r.repo_name.clone(),
                source: r.source_repo.clone(),
                path: path.clone(),
                keep: layout.as_ref().map(|l| l.registration(*i)),
            }
        })
        .collect();
    let n_registrations = registrations.len();
    let committed = match moved.into_iter().find_map(Result::err) {
        Some(e) => {
            // Rolling back leaves the state, which was not changed, alone.
            tx.not_attempted(&[commit]);
            Err(e)
        }
        None => tx.commit_intended(
            commit,
            registrations
                .into_iter()
                .chain(deletes.iter().cloned())
                .collect(),
        ),
    };
    let planned = match committed {
        Ok(p) => p,
        Err(cause) => {
            let id = tx.id().to_string();
            let (_, clean) = tx.rollback();
            return Err(Failure::Failed { cause, id, clean });
        }
    };
    // Past the commit point: the state no longer has them. What is left completes it.
    complete(
        tx,
        &ws.name,
        &planned,
        n_registrations,
        deletes,
        &mut removed,
    );
    match &req.keep {
        // Measured, and the trash kept within its limits, off the critical path.
        Some(keep) => trash::tidy_in_background(ctx, Some(&keep.entry)),
        None => {
            for (_, to) in &req.moves {
                if to.exists() {
                    trash::unlink_in_background(ctx, to);
                }
            }
        }
    }
    Ok(removed)
}

/// Without `--force`: what the worktrees (and the workspace directory) hold now must be
/// what was inspected before the hooks ran; anything new is `STATE_CHANGED`.
fn recheck(req: &Request<'_>) -> Result<()> {
    let now = safety::inspect_all(req.targets);
    let mut appeared = Vec::new();
    for ((r, before), now) in req.targets.iter().zip(req.inspections).zip(&now) {
        let old = before.work.status_lines();
        appeared.extend(
            now.work
                .status_lines()
                .into_iter()
                .filter(|l| !old.contains(l))
                .map(|l| format!("{}: {l}", r.repo_name)),
        );
        let was: Vec<String> = before.work.0.iter().map(Held::describe).collect();
        appeared.extend(
            now.work
                .refusal(req.remover, false)
                .into_iter()
                .filter(|h| !matches!(h, Held::Changes(_) | Held::Untracked(_)))
                .map(Held::describe)
                .filter(|h| !was.contains(h))
                .map(|h| format!("{}: {h}", r.repo_name)),
        );
    }
    if req.after.is_none() {
        appeared.extend(
            safety::work::stray_files(req.ws)
                .into_iter()
                .filter(|s| !req.stray.contains(s))
                .map(|s| format!("new file outside any worktree: {s}")),
        );
    }
    if appeared.is_empty() {
        Ok(())
    } else {
        Err(changed(req.ws, &appeared))
    }
}

fn changed(ws: &Workspace, what: &[String]) -> Error {
    Error::new(
        Code::StateChanged,
        format!(
            "workspace `{}` changed while it was being checked (its hooks were running): {}",
            ws.name,
            what.join("; ")
        ),
    )
    .with_fix("Look at it again (`gw status`), then retry; nothing was removed")
    .with_details(serde_json::json!({ "workspace": ws.name, "changed": what }))
}

/// The registrations of the targets whose source has their worktree registered: the
/// target's index, the path as git recorded it (it may differ from state's by symlinks)
/// and its private git directory, found while the directory is still there. Only inside a
/// workspace directory: a registration elsewhere is not grove's to remove.
fn registrations(ctx: &Ctx<'_>, targets: &[RepoEntry]) -> Vec<(usize, PathBuf, PathBuf)> {
    let territory = ctx.territory();
    let indexed: Vec<(usize, &RepoEntry)> = targets.iter().enumerate().collect();
    let found = parallel::map(&indexed, |(i, r)| {
        if !r.source_repo.is_dir() || territory.check(&r.worktree_path, "").is_err() {
            return None;
        }
        let want = fsx::canonical(&r.worktree_path);
        let wts = git::Repo::open_again(&r.source_repo)
            .and_then(|g| g.worktrees())
            .ok()?;
        wts.into_iter()
            .find(|w| !w.is_main && (w.path == r.worktree_path || fsx::canonical(&w.path) == want))
            .map(|w| (*i, w.path, w.admin))
    });
    found.into_iter().flatten().collect()
}

/// Past the commit point: removes the planned registrations (the first `n_registrations`
/// of `planned`), then deletes the branches (`deletes`, the rest), and finishes the
/// journal — or leaves it for `gw doctor --fix` when anything failed. A branch that could
/// not be deleted becomes a note and a warning.
fn complete(
    mut tx: Tx<'_, '_>,
    workspace: &str,
    planned: &[usize],
    n_registrations: usize,
    deletes: Vec<Action>,
    removed: &mut Removed,
) {
    let (registration_steps, delete_steps) = planned.split_at(n_registrations);
    let mut complete = true;
    for r in tx.run_planned(registration_steps, true) {
        if let Err(e) = r {
            complete = false;
            removed.warnings.push(e.message.clone());
        }
    }
    for (action, result) in deletes.into_iter().zip(tx.run_planned(delete_steps, true)) {
        if let (Action::DeleteBranch { repo, branch, .. }, Err(e)) = (action, result) {
            complete = false;
            let why = format!("could not delete branch {branch}: {}", e.message);
            removed.warnings.push(format!("{repo}: {why}"));
            removed.notes.push((repo, why));
        }
    }
    if complete {
        if let Err(e) = tx.finish() {
            removed.warnings.push(e.message.clone());
        }
    } else {
        let id = tx.abandon();
        removed.warnings.push(format!(
            "some cleanup of `{workspace}` is left for `gw doctor --fix` (operation {id})"
        ));
    }
}
