//! `gw restore NAME [--as NEW]` and `gw undo`: a deleted workspace comes back from the
//! trash exactly as it went — its directory with every file, each worktree's registration
//! (index, HEAD, reflog), the branches the delete removed at their recorded tips with their
//! settings, and its state entry.
//!
//! One transaction (`ops::tx`, journal kind `restore`) under the locks of the workspace's
//! names: the directory moves back, the registrations and branches come back, and the state
//! entry is recorded (the commit point); what is left of the entry (its record, the
//! references that kept the tips) goes afterwards. Killed anywhere, `gw doctor --fix`
//! finishes or rolls it back: the workspace is either restored or still in the trash.
//! Everything that could stand in the way — the name or directory taken, a branch made
//! again, a source repository gone — is found first and refused with a code; nothing is
//! half-restored.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::plan::{self, Change, ChangeKind, Described, Fact, PlanDoc, PlanKind};
use crate::ops::trash::{self, Kept};
use crate::ops::tx::{self, Tx};
use crate::ops::{Ctx, Outcome, RepoResult, names};
use crate::state::journal::{Action, Kind};
use crate::state::trash::BranchFate;
use crate::state::{State, Workspace};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RestoreOptions {
    /// A deleted workspace's name (its newest entry) or an entry's id; `None`: the newest
    /// entry of all (`gw undo`).
    pub name: Option<String>,
    /// The name it comes back under (`--as`), beside where it was.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub as_name: Option<String>,
    /// `gw apply`: the plan this restore must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RestoreReport {
    /// The workspace's name now.
    pub name: String,
    pub path: PathBuf,
    pub branch: String,
    /// The trash entry it came from.
    pub from: String,
    /// Its name when it was deleted.
    pub deleted_name: String,
    pub deleted_at: String,
    /// Every worktree, `restored`; `detail` says what happened to its branch.
    pub repos: Vec<RepoResult>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
}

impl RestoreReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "Inspect the restored workspace",
            &["gw", "status", &self.name, "--format", "json"],
        )]
    }
}

/// What restoring an entry takes, decided before anything changes.
struct Plan {
    kept: Kept,
    /// The state entry it comes back as.
    after: Workspace,
    /// Before the commit point, in order.
    steps: Vec<Action>,
    /// What happens to each repository's branch (for the report and the plan).
    branches: Vec<String>,
    warnings: Vec<String>,
}

/// `gw restore` / `gw undo`.
pub fn restore(ctx: &Ctx<'_>, opts: RestoreOptions) -> Result<RestoreReport> {
    let config = ctx.config()?;
    // The entry, and the name it comes back under, are found before any lock; both names
    // are then locked, and everything is decided again under the locks.
    let first = find(ctx, &opts)?;
    let target = target_name(&first, &opts)?;
    let locks = tx::lock_workspaces(ctx, &[&first.record.name, &target])?;
    let entry_opts = RestoreOptions {
        name: Some(first.id.clone()),
        ..opts.clone()
    };
    let kept = find(ctx, &entry_opts)?;
    let plan = plan(ctx, &config, &ctx.state()?, kept, opts.as_name.as_deref())?;
    if let Some(expect) = &opts.expect {
        let now = describe(&plan);
        plan::verify(
            PlanKind::Restore,
            expect,
            &inputs(&plan.kept.id, &opts),
            &now,
        )?;
    }
    let sources: Vec<&Path> = plan
        .kept
        .record
        .repos
        .iter()
        .map(|r| r.source.as_path())
        .collect();
    let _hold = tx::hold_repos(ctx, &sources)?;
    let mut tx = Tx::begin(ctx, locks, Kind::Restore, &plan.after.name, &[])?;
    ctx.events
        .progress(&format!("restoring {}", plan.after.name));
    let done = tx
        .run_all(plan.steps.clone(), false)
        .into_iter()
        .find_map(Result::err)
        .map_or_else(
            || {
                tx.commit_with(
                    Action::SetState {
                        name: plan.after.name.clone(),
                        before: None,
                        after: Some(Box::new(plan.after.clone())),
                    },
                    vec![Action::DropTrash {
                        entry: plan.kept.entry.clone(),
                        refs: trash::refs_of(&plan.kept),
                    }],
                )
            },
            Err,
        );
    let planned = match done {
        Ok(p) => p,
        Err(cause) => {
            let id = tx.id().to_string();
            let (_, clean) = tx.rollback();
            return Err(if clean {
                cause.context(format!(
                    "cannot restore `{}`; it is still in the trash",
                    plan.kept.record.name
                ))
            } else {
                tx::recovery_pending(&id, &plan.after.name, Kind::Restore).with_message(format!(
                    "cannot restore `{}`: {}; putting it back failed too",
                    plan.kept.record.name, cause.message
                ))
            });
        }
    };
    let mut warnings = plan.warnings.clone();
    if let Some(Err(e)) = tx.run_planned(&planned, false).into_iter().next() {
        let id = tx.abandon();
        warnings.push(format!(
            "the workspace is back; removing what is left of its trash entry failed ({}); \
             `gw doctor --fix` finishes it (operation {id})",
            e.message
        ));
    } else {
        tx.finish()?;
    }
    let repos: Vec<RepoResult> = plan
        .after
        .repos
        .iter()
        .zip(&plan.branches)
        .map(|(r, b)| RepoResult {
            repo: r.repo_name.clone(),
            outcome: Outcome::Restored,
            branch: r.branch.clone(),
            path: r.worktree_path.clone(),
            detail: Some(b.clone()),
        })
        .collect();
    Ok(RestoreReport {
        name: plan.after.name.clone(),
        path: plan.after.path.clone(),
        branch: plan.after.branch.clone(),
        from: plan.kept.id.clone(),
        deleted_name: plan.kept.record.name.clone(),
        deleted_at: plan.kept.record.deleted_at.clone(),
        count: repos.len(),
        repos,
        warnings,
    })
}

/// `gw plan restore` / `gw plan undo`: decides exactly as the restore does, and describes
/// it; the entry is recorded by its id, so applying the plan restores that one.
pub fn plan_doc(ctx: &Ctx<'_>, opts: &RestoreOptions) -> Result<PlanDoc> {
    let config = ctx.config()?;
    let kept = find(ctx, opts)?;
    let id = kept.id.clone();
    let plan = plan(ctx, &config, &ctx.state()?, kept, opts.as_name.as_deref())?;
    Ok(plan::document(
        PlanKind::Restore,
        inputs(&id, opts),
        describe(&plan),
    ))
}

fn inputs(id: &str, opts: &RestoreOptions) -> serde_json::Value {
    serde_json::to_value(RestoreOptions {
        name: Some(id.to_string()),
        as_name: opts.as_name.clone(),
        expect: None,
    })
    .expect("options serialise")
}

/// The entry `opts` names, or the newest.
fn find(ctx: &Ctx<'_>, opts: &RestoreOptions) -> Result<Kept> {
    let contents = trash::contents(ctx);
    let found = match &opts.name {
        Some(n) => trash::find(&contents, n),
        None => contents.kept.last(),
    };
    if let Some(k) = found {
        return Ok(k.clone());
    }
    let (message, fix) = match &opts.name {
        Some(n) => (
            format!("no deleted workspace named `{n}` is in the trash"),
            "Run `gw trash` to see what can be restored",
        ),
        None => (
            "the trash is empty: there is no deletion to undo".to_string(),
            "Deleted workspaces are kept for `trash.keep` (7 days by default); `gw delete --purge` keeps nothing",
        ),
    };
    Err(Error::new(Code::WorkspaceNotFound, message)
        .with_fix(fix)
        .with_action(NextAction::read(
            "List the trash",
            &["gw", "trash", "--format", "json"],
        )))
}

fn target_name(kept: &Kept, opts: &RestoreOptions) -> Result<String> {
    match &opts.as_name {
        Some(n) => {
            names::check_workspace(n)?;
            Ok(n.clone())
        }
        None => Ok(kept.record.name.clone()),
    }
}

/// Everything the restore of `kept` (as `as_name`) will do, or why it cannot.
fn plan(
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
    let name = match as_name {
        Some(n) => {
            names::check_workspace(n)?;
            n.to_string()
        }
        None => record.name.clone(),
    };
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
    if fsx::exists(&path) {
        return Err(taken(&kept, &name, format!("`{}` exists", path.display())));
    }
    if !fsx::is_dir(&layout.workspace()) {
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
    let mut steps = vec![Action::MoveDir {
        from: layout.workspace(),
        to: path.clone(),
    }];
    let mut registrations = Vec::new();
    let mut branch_steps = Vec::new();
    let mut branches = Vec::new();
    let mut warnings = Vec::new();
    for (i, (kr, r)) in record.repos.iter().zip(after.repos.iter_mut()).enumerate() {
        let rel = r.worktree_path.strip_prefix(&old.path).map_err(|_| {
            Error::new(
                Code::CorruptState,
                format!(
                    "{}: its worktree `{}` was not inside the workspace directory, so it is not in the trash",
                    r.repo_name,
                    r.worktree_path.display()
                ),
            )
        })?;
        r.worktree_path = path.join(rel);
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
            .find(|w| !w.is_main && !w.prunable && w.branch.as_deref() == Some(kr.branch.as_str()))
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
        if let Some(admin) = &kr.admin {
            let kept_dir = layout.registration(i);
            if !fsx::is_dir(&kept_dir) {
                return Err(Error::new(
                    Code::CorruptState,
                    format!(
                        "{}: the trash entry does not hold its worktree's registration",
                        kr.repo
                    ),
                )
                .with_fix("Run `gw doctor --fix` (an interrupted delete may still be finishing), then retry"));
            }
            registrations.push(Action::RestoreRegistration {
                repo: kr.repo.clone(),
                source: kr.source.clone(),
                kept: kept_dir,
                admin: free_admin(&source, admin),
                path: r.worktree_path.clone(),
            });
        }
    }
    steps.extend(registrations);
    steps.extend(branch_steps);
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
        (_, _, None) => (None, format!("branch {} absent", kr.branch)),
    })
}

/// `admin`, or `admin1`, `admin2`… when another worktree of `source` has that name now.
fn free_admin(source: &git::Repo, admin: &str) -> String {
    let dir = source.common_dir().join("worktrees");
    std::iter::once(admin.to_string())
        .chain((1..).map(|n| format!("{admin}{n}")))
        .find(|a| !fsx::exists(&dir.join(a)))
        .expect("some name is free")
}

fn taken(kept: &Kept, name: &str, why: String) -> Error {
    let other = format!("{name}-restored");
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
fn describe(plan: &Plan) -> Described {
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
