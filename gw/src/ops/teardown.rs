//! Taking worktrees away: the one path `gw delete` and `gw remove-repo` (and `gw prune`,
//! through delete) follow, and the one their plans describe.
//!
//! 1. [`inspect`] every worktree that goes: uncommitted changes, files outside any
//!    worktree, what is ignored. The command refuses lost work unless forced.
//! 2. [`run_hooks`]: `pre_delete` and each repository's `teardown`, outside every lock (a
//!    hook may call gw).
//! 3. [`remove`], under the workspace's lock: the workspace must be the one inspected, and —
//!    unless forced — nothing may have appeared since (a hook, or a person, writing into a
//!    worktree): that is `STATE_CHANGED`, and nothing is touched. Every path must lie in a
//!    workspace directory.
//! 4. In one transaction, quarantine (a rename into `.trash`), then commit the state change
//!    together with what completes it: removing exactly these worktrees' registrations
//!    (never `git worktree prune`, which would drop another process's worktree in the middle
//!    of a move), and deleting the branches [`branch_fate`] lets go. Carry those out; the
//!    bytes are removed in the background.

use std::path::PathBuf;

use crate::config::{Hook, HookKind, RepoConfig};
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::branch_fate::{self, Fate};
use crate::ops::hooks::{self, Vars};
use crate::ops::plan::{Change, Described, Fact};
use crate::ops::tx::{self, Locks, Tx};
use crate::ops::{Ctx, resolve, trash};
use crate::parallel;
use crate::state::journal::{Action, Kind};
use crate::state::{RepoEntry, Workspace};

/// What a worktree held when it was looked at, before anything was removed.
#[derive(Debug, Clone)]
pub struct Inspection {
    pub exists: bool,
    pub source_exists: bool,
    /// `git status --short` lines; `None` when the worktree could not be read (`error`).
    pub changes: Option<Vec<String>>,
    /// Ignored files and directories (`node_modules/`, `.env`): removed with the worktree.
    pub ignored: Vec<String>,
    /// Work it holds beyond its files ([`held_work`]).
    pub held: Vec<String>,
    pub error: Option<String>,
}

impl Inspection {
    /// Removing it would lose work: uncommitted changes, or work it holds beyond them.
    pub fn dirty(&self) -> bool {
        self.changes.as_ref().is_some_and(|c| !c.is_empty()) || !self.held.is_empty()
    }
}

/// What the worktree `repo` holds beyond its files, which removing it would lose although
/// `git status` is clean: commits only its detached HEAD names (the worktree's HEAD and
/// reflog are their last reference), an operation stopped half way (a rebase's rewritten
/// commits), a lock someone put on it (`git worktree lock`: "keep this"). One line per
/// reason; empty when there is none.
pub fn held_work(repo: &git::Repo) -> Vec<String> {
    let mut held = Vec::new();
    match repo.head() {
        Ok(head) => {
            held.extend(head.in_progress.map(|op| format!("a {op} is in progress")));
            if let (true, Some(oid)) = (head.detached, &head.oid) {
                held.extend(detached_work(repo, oid));
            }
        }
        Err(e) => held.push(format!("cannot read its HEAD: {e}")),
    }
    match repo.private_refs_holding_commits() {
        Ok(refs) => held.extend(
            refs.into_iter()
                .map(|(name, n)| format!("its own ref {name} has {}", commits_nowhere_else(n))),
        ),
        Err(e) => held.push(format!("cannot read its refs: {e}")),
    }
    held.extend(submodule_work(repo.git_dir()));
    held.extend(person_lock(repo.git_dir()));
    held
}

/// What a detached HEAD at `oid` in `repo` holds on its own: the commits no branch, tag or
/// remote has (their last name is that HEAD and its reflog).
pub fn detached_work(repo: &git::Repo, oid: &str) -> Option<String> {
    let short = &oid[..oid.len().min(7)];
    match repo.unreferenced_commits(oid) {
        Ok(0) => None,
        Ok(n) => Some(format!(
            "its detached HEAD ({short}) has {}",
            commits_nowhere_else(n)
        )),
        Err(e) => Some(format!(
            "cannot tell whether its detached HEAD ({short}) has commits found nowhere else: {e}"
        )),
    }
}

/// "`n` commit(s) no branch, tag or remote has".
fn commits_nowhere_else(n: usize) -> String {
    format!(
        "{n} commit{} no branch, tag or remote has",
        if n == 1 { "" } else { "s" }
    )
}

/// The lock a person put on the worktree whose private git directory is `admin`
/// (`git worktree lock`), described. `git worktree add` locks the worktree it is making
/// ("initializing") until its checkout is done: a checkout cut short leaves that lock, and
/// it is not a person's.
pub fn person_lock(admin: &std::path::Path) -> Option<String> {
    let reason = git::lock_reason(admin).filter(|r| r != "initializing")?;
    Some(if reason.is_empty() {
        "it is locked (`git worktree lock`)".to_string()
    } else {
        format!("it is locked (`git worktree lock`): {reason}")
    })
}

/// Commits the worktree's initialised submodules (their repositories live in its private
/// git directory, `modules/NAME`, and go with it, local branches and all) have that no tag
/// or remote-tracking ref of theirs has: a commit made in a submodule and recorded in the
/// superproject leaves `git status` clean.
fn submodule_work(git_dir: &std::path::Path) -> Vec<String> {
    let modules = git_dir.join("modules");
    if !modules.is_dir() {
        return Vec::new();
    }
    let mut held = Vec::new();
    let walk = walkdir::WalkDir::new(&modules)
        .follow_links(false)
        .max_depth(6)
        .into_iter()
        .filter_entry(|e| {
            e.file_type().is_dir()
                && !matches!(
                    e.file_name().to_str(),
                    Some("objects" | "refs" | "logs" | "hooks")
                )
        });
    for dir in walk.filter_map(Result::ok) {
        let path = dir.path();
        if !path.join("HEAD").is_file() || !path.join("objects").is_dir() {
            continue;
        }
        let name = path
            .strip_prefix(&modules)
            .unwrap_or(path)
            .display()
            .to_string();
        let Ok(sub) = git::Repo::open(path) else {
            continue;
        };
        let Ok(git::Head { oid: Some(oid), .. }) = sub.head() else {
            continue;
        };
        match sub.commits_not_on_remotes(&oid) {
            Ok(0) => {}
            Ok(n) => held.push(format!(
                "submodule `{name}` has {n} commit{} no tag or remote of it has",
                if n == 1 { "" } else { "s" }
            )),
            Err(e) => held.push(format!(
                "cannot tell whether submodule `{name}` has commits found nowhere else: {e}"
            )),
        }
    }
    held
}

/// How deep below an ignored directory, and how many entries in each and in all,
/// [`nested_repositories`] looks: a repository or worktree someone made in `scratch/`,
/// `.worktrees/NAME` or `build/a/b/NAME` is found, and a `node_modules` of a hundred
/// thousand files costs a few thousand entries read at most. The search is breadth first
/// and its budget is per directory, so that neither a deep tree nor a large directory uses
/// it up before the shallower places and the other directories are looked at.
const NESTED_DEPTH: usize = 3;
const NESTED_ENTRIES: usize = 5_000;
const NESTED_ENTRIES_IN_ALL: usize = 50_000;

/// Work held by repositories and worktrees inside the ignored directories of the worktree
/// at `root` (`ignored`, as inspected: directories end in `/`). `git status` does not show
/// them, and they go with the directory: a worktree's uncommitted changes and the work
/// beyond its files; a repository's own changes and the commits none of its remotes or
/// tags has. One that holds nothing (a tool's clone, as Terraform keeps of git-sourced
/// modules) is not work.
fn nested_repositories(root: &std::path::Path, ignored: &[String]) -> Vec<String> {
    use std::path::PathBuf;
    let mut found = Vec::new();
    let mut in_all = NESTED_ENTRIES_IN_ALL;
    let mut check = |at: &std::path::Path, is_dir: bool| {
        let rel = at.strip_prefix(root).unwrap_or(at).display().to_string();
        let held = match git::Repo::open(at) {
            Ok(repo) => nested_work(&repo, is_dir),
            Err(e) => vec![format!("cannot be read: {e}")],
        };
        if !held.is_empty() {
            found.push(format!(
                "`{rel}/`, a {} in an ignored directory, holds work: {}",
                if is_dir { "repository" } else { "worktree" },
                held.join("; ")
            ));
        }
    };
    for dir in ignored.iter().filter_map(|e| e.strip_suffix('/')) {
        let mut budget = NESTED_ENTRIES;
        let mut level: Vec<PathBuf> = vec![root.join(dir)];
        'levels: for depth in 0..=NESTED_DEPTH {
            let mut below = Vec::new();
            for d in &level {
                if let Ok(meta) = d.join(".git").symlink_metadata() {
                    check(d, meta.is_dir());
                }
                if depth == NESTED_DEPTH {
                    continue;
                }
                let Ok(entries) = std::fs::read_dir(d) else {
                    continue;
                };
                for e in entries.flatten() {
                    if budget == 0 || in_all == 0 {
                        break 'levels;
                    }
                    budget -= 1;
                    in_all -= 1;
                    // A repository's own git directory says nothing more; a link is not
                    // followed.
                    if e.file_name() != ".git" && e.file_type().is_ok_and(|t| t.is_dir()) {
                        below.push(e.path());
                    }
                }
            }
            level = below;
        }
    }
    found
}

/// What a repository or worktree found inside another worktree would lose with it.
fn nested_work(repo: &git::Repo, own_repository: bool) -> Vec<String> {
    let mut held = match repo.changes() {
        Ok(c) if c.is_clean() => Vec::new(),
        Ok(c) => vec![format!("{} uncommitted change(s)", c.count())],
        Err(e) => vec![format!("cannot tell its changes: {e}")],
    };
    if !own_repository {
        // A worktree's branches live in its repository, elsewhere.
        held.extend(held_work(repo));
        return held;
    }
    let tips = repo
        .local_branches()
        .map(|b| b.into_iter().map(|b| b.name).collect::<Vec<_>>())
        .unwrap_or_default();
    let head = repo.head().ok().and_then(|h| h.oid);
    let oids = tips.iter().filter_map(|b| repo.local_branch(b)).chain(head);
    for oid in oids {
        match repo.commits_not_on_remotes(&oid) {
            Ok(0) => {}
            Ok(_) => {
                held.push("commits none of its remotes or tags has".into());
                break;
            }
            Err(e) => {
                held.push(format!(
                    "cannot tell whether its commits exist elsewhere: {e}"
                ));
                break;
            }
        }
    }
    held
}

/// Looks at the worktree of `r`.
pub fn inspect(r: &RepoEntry) -> Inspection {
    let exists = r.worktree_path.is_dir();
    let source_exists = r.source_repo.is_dir();
    let mut i = Inspection {
        exists,
        source_exists,
        changes: None,
        ignored: Vec::new(),
        held: Vec::new(),
        error: None,
    };
    if exists {
        let read = git::Repo::open(&r.worktree_path).and_then(|repo| {
            let (changes, ignored) = repo.changes_and_ignored()?;
            Ok((changes, ignored, held_work(&repo)))
        });
        match read {
            Ok((c, ignored, mut held)) => {
                held.extend(nested_repositories(&r.worktree_path, &ignored));
                i.changes = Some(c.lines);
                i.ignored = ignored;
                i.held = held;
            }
            Err(e) => i.error = Some(e.to_string()),
        }
    }
    i
}

/// Inspects every one of `repos`, in parallel.
pub fn inspect_all(repos: &[RepoEntry]) -> Vec<Inspection> {
    parallel::map(repos, inspect)
}

/// Entries of the workspace directory that belong to no worktree.
pub fn stray_files(ws: &Workspace) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(&ws.path) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !ws.repos.iter().any(|r| r.worktree_path == e.path()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The plan's view of a worktree that goes: its HEAD, branch, uncommitted changes and
/// ignored files as facts (and warnings), and its teardown commands.
pub fn describe_worktree(r: &RepoEntry, label: &str, i: &Inspection, d: &mut Described) {
    let (head, live) = match git::Repo::open(&r.worktree_path).and_then(|g| g.head()) {
        Ok(h) => (
            h.oid.unwrap_or_default(),
            h.branch.unwrap_or_else(|| "(detached)".into()),
        ),
        Err(_) => ("missing".into(), "missing".into()),
    };
    d.facts.push(Fact::new(Some(label), "head", head));
    d.facts.push(Fact::new(Some(label), "checked_out", live));
    let changes = i.changes.clone().unwrap_or_default();
    let listed = if changes.is_empty() {
        "(none)".to_string()
    } else {
        changes.join("\n")
    };
    d.facts.push(Fact::new(Some(label), "changes", listed));
    if !changes.is_empty() {
        d.warnings.push(format!(
            "{label}: {} uncommitted change{} would be destroyed: {}",
            changes.len(),
            if changes.len() == 1 { "" } else { "s" },
            changes.join(", ")
        ));
    }
    for why in &i.held {
        d.warnings
            .push(format!("{label}: {why}; removing the worktree loses that"));
    }
    if !i.ignored.is_empty() {
        d.warnings.push(format!(
            "{label}: ignored files are removed with the worktree: {}",
            i.ignored.join(", ")
        ));
    }
    if i.exists && i.source_exists {
        for cmd in teardown_commands(r) {
            d.changes.push(
                Change::new("run_teardown_hook")
                    .repo(label)
                    .path(&r.worktree_path)
                    .detail(cmd),
            );
        }
    }
}

/// The plan's view of what completes the removal of `r`'s worktree: its registration goes,
/// and its branch meets its [`branch_fate`] — judged after the branches `going` (repository,
/// branch) that the plan deletes before it, as the command will; a branch it deletes joins
/// them.
pub fn describe_completion(
    ctx: &Ctx<'_>,
    r: &RepoEntry,
    label: &str,
    force: bool,
    going: &mut Vec<(PathBuf, String)>,
    d: &mut Described,
) {
    if !r.source_repo.is_dir() {
        return;
    }
    d.changes.push(
        Change::new("remove_registration")
            .repo(label)
            .path(&r.worktree_path),
    );
    let source = fsx::canonical(&r.source_repo);
    let before: Vec<&str> = going
        .iter()
        .filter(|(s, _)| *s == source)
        .map(|(_, b)| b.as_str())
        .collect();
    let fate = branch_fate::fate_beside(r, force, ctx.territory(), &before);
    if let Fate::Delete { .. } = fate {
        going.push((source, r.branch.clone()));
    }
    branch_fate::describe(r, label, &fate, d);
}

fn teardown_commands(r: &RepoEntry) -> Vec<String> {
    RepoConfig::load(&r.source_repo)
        .map(|c| c.teardown)
        .unwrap_or_default()
}

/// What [`run_hooks`] runs: `pre_delete` (when given) and the `teardown` commands of the
/// targets whose worktree and source exist, each repository's `.grove.toml` read once.
pub struct Hooks<'a> {
    pre_delete: Option<&'a Hook>,
    teardown: Vec<(&'a RepoEntry, Vec<String>)>,
}

impl<'a> Hooks<'a> {
    pub fn of(targets: &'a [RepoEntry], pre_delete: Option<&'a Hook>) -> Hooks<'a> {
        let teardown = targets
            .iter()
            .filter(|r| r.worktree_path.is_dir() && r.source_repo.is_dir())
            .map(|r| (r, teardown_commands(r)))
            .filter(|(_, cmds)| !cmds.is_empty())
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
    let vars = Vars::of(ws);
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
    for (r, teardown) in &what.teardown {
        if let Err(f) =
            hooks::run_repo_commands(ctx, &r.repo_name, teardown, &r.worktree_path, &vars, false)
        {
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
    /// Whether `inspections` were made under the lock `remove` is given (no hook ran in
    /// between): nothing can have changed since, and they are not made again.
    pub inspected_under_lock: bool,
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
    let registrations = registrations(ctx, req.targets);
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
    let mut tx = Tx::begin(ctx, locks, req.kind, &ws.name, &[])?;
    let moves: Vec<Action> = req
        .moves
        .iter()
        .filter(|(from, _)| fsx::exists(from))
        .map(|(from, to)| Action::MoveDir {
            from: from.clone(),
            to: to.clone(),
        })
        .collect();
    let moved = tx.run_all(moves, false);
    // What completes the removal is decided now and recorded with the commit point, so that
    // a process killed after it leaves a journal that finishes all of it.
    let mut removed = Removed::default();
    let mut deletes = Vec::new();
    for r in req.targets.iter().filter(|r| r.source_repo.is_dir()) {
        match branch_fate::fate(r, req.force, territory) {
            Fate::Delete { tip, unique } => deletes.push(Action::DeleteBranch {
                repo: r.repo_name.clone(),
                source: r.source_repo.clone(),
                branch: r.branch.clone(),
                tip,
                forced: unique != Some(0),
            }),
            Fate::Keep(why) => {
                removed.warnings.push(format!("{}: {why}", r.repo_name));
                removed.notes.push((r.repo_name.clone(), why));
            }
            Fate::Preserved | Fate::Gone => {}
        }
    }
    let n_registrations = registrations.len();
    let committed = match moved.into_iter().find_map(Result::err) {
        Some(e) => Err(e),
        None => tx.commit_with(
            Action::SetState {
                name: ws.name.clone(),
                before: Some(Box::new(ws.clone())),
                after: req.after.clone().map(Box::new),
            },
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
    for (_, to) in &req.moves {
        if to.exists() {
            trash::unlink_in_background(ctx, to);
        }
    }
    Ok(removed)
}

/// Without `--force`: what the worktrees (and the workspace directory) hold now must be
/// what was inspected before the hooks ran; anything new is `STATE_CHANGED`.
fn recheck(req: &Request<'_>) -> Result<()> {
    let now = inspect_all(req.targets);
    let mut appeared = Vec::new();
    for ((r, before), now) in req.targets.iter().zip(req.inspections).zip(&now) {
        let old = before.changes.as_deref().unwrap_or_default();
        match (&now.changes, &now.error) {
            (_, Some(e)) if before.error.is_none() => {
                appeared.push(format!("{}: cannot be read any more: {e}", r.repo_name));
            }
            (Some(lines), _) => appeared.extend(
                lines
                    .iter()
                    .filter(|l| !old.contains(l))
                    .map(|l| format!("{}: {l}", r.repo_name)),
            ),
            _ => {}
        }
        appeared.extend(
            now.held
                .iter()
                .filter(|h| !before.held.contains(h))
                .map(|h| format!("{}: {h}", r.repo_name)),
        );
    }
    if req.after.is_none() {
        appeared.extend(
            stray_files(req.ws)
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

/// One `RemoveRegistration` per target whose source has its worktree registered, with the
/// path as git recorded it (it may differ from state's by symlinks), found while the
/// directory is still there. Only inside a workspace directory: a registration elsewhere
/// is not grove's to remove.
fn registrations(ctx: &Ctx<'_>, targets: &[RepoEntry]) -> Vec<Action> {
    let territory = ctx.territory();
    let found = parallel::map(targets, |r| {
        if !r.source_repo.is_dir() || territory.check(&r.worktree_path, "").is_err() {
            return None;
        }
        let want = fsx::canonical(&r.worktree_path);
        let wts = git::Repo::open(&r.source_repo)
            .and_then(|g| g.worktrees())
            .ok()?;
        wts.into_iter()
            .find(|w| !w.is_main && (w.path == r.worktree_path || fsx::canonical(&w.path) == want))
            .map(|w| Action::RemoveRegistration {
                repo: r.repo_name.clone(),
                source: r.source_repo.clone(),
                path: w.path,
            })
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
