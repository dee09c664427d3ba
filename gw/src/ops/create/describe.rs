//! What a create (or add-repo) plan shows: the changes it makes and the facts it depends on.

use crate::config::{Config, HookKind};
use crate::fsx;
use crate::git;
use crate::ops::Ctx;
use crate::ops::plan::{Change, ChangeKind, Described, Fact};
use crate::state::journal::BranchSource;

use super::{CreatePlan, RepoPlan};

/// The changes a create plan makes and the facts it depends on.
pub fn describe(ctx: &Ctx<'_>, config: &Config, plan: &CreatePlan) -> Described {
    let mut changes = vec![Change::new(ChangeKind::CreateWorkspaceDir).path(&plan.path)];
    let path_state = if fsx::exists(&plan.path) {
        "exists"
    } else {
        "absent"
    };
    let mut facts = vec![
        Fact::new(None, "workspace", "absent"),
        Fact::new(None, "path", path_state),
    ];
    describe_repos(&plan.repos, &plan.branch, &mut changes, &mut facts);
    changes.push(
        Change::new(ChangeKind::RecordState)
            .path(&plan.path)
            .detail(format!("workspace {}", plan.name)),
    );
    describe_setup(&plan.repos, &mut changes);
    if let Some(hook) = config
        .hooks
        .get(HookKind::PostCreate)
        .filter(|_| !ctx.no_hooks)
    {
        changes.push(
            Change::new(ChangeKind::RunHook).detail(format!("post_create: {}", hook.command)),
        );
    }
    Described {
        workspace: plan.name.clone(),
        changes,
        facts,
        warnings: plan.warnings.clone(),
    }
}

/// The changes and facts of adding a worktree per planned repository (shared with
/// `gw add-repo`).
pub(crate) fn describe_repos(
    repos: &[RepoPlan],
    branch: &str,
    changes: &mut Vec<Change>,
    facts: &mut Vec<Fact>,
) {
    let short = |o: &Option<String>| {
        o.as_deref()
            .map(|o| o.get(..7).unwrap_or(o).to_string())
            .unwrap_or_else(|| "?".into())
    };
    for r in repos {
        let repo = git::Repo::open(&r.source).ok();
        let local = repo.as_ref().and_then(|g| g.local_branch(branch));
        let remote = repo
            .as_ref()
            .and_then(|g| g.remote_branch("origin", branch));
        facts.push(Fact::new(
            Some(&r.name),
            "source",
            r.source.to_string_lossy(),
        ));
        facts.push(Fact::new(
            Some(&r.name),
            format!("branch {branch}"),
            local.unwrap_or_else(|| "absent".into()),
        ));
        facts.push(Fact::new(
            Some(&r.name),
            format!("remote_branch origin/{branch}"),
            remote.unwrap_or_else(|| "absent".into()),
        ));
        facts.push(Fact::new(
            Some(&r.name),
            "worktree_path",
            if fsx::exists(&r.worktree) {
                "exists"
            } else {
                "absent"
            },
        ));
        match &r.how {
            BranchSource::New { start, start_oid } => {
                facts.push(Fact::new(
                    Some(&r.name),
                    format!("start {start}"),
                    start_oid.clone().unwrap_or_default(),
                ));
                changes.push(
                    Change::new(ChangeKind::CreateBranch)
                        .repo(&r.name)
                        .branch(branch)
                        .detail(format!("from {start} at {}", short(start_oid))),
                );
            }
            BranchSource::Track {
                remote_ref,
                start_oid,
            } => changes.push(
                Change::new(ChangeKind::TrackRemoteBranch)
                    .repo(&r.name)
                    .branch(branch)
                    .detail(format!("tracking {remote_ref} at {}", short(start_oid))),
            ),
            BranchSource::Existing => {}
        }
        let detail = match r.how {
            BranchSource::Existing => {
                "branch already exists locally; it is checked out, not created"
            }
            _ => "new worktree",
        };
        changes.push(
            Change::new(ChangeKind::CreateWorktree)
                .repo(&r.name)
                .path(&r.worktree)
                .branch(branch)
                .detail(detail),
        );
        crate::ops::warm::describe(&r.name, &r.source, &r.worktree, &r.copy, changes, facts);
    }
}

/// One `run_setup_hook` change per setup command.
pub(crate) fn describe_setup(repos: &[RepoPlan], changes: &mut Vec<Change>) {
    for r in repos {
        for cmd in &r.setup {
            changes.push(
                Change::new(ChangeKind::RunSetupHook)
                    .repo(&r.name)
                    .path(&r.worktree)
                    .detail(cmd.clone()),
            );
        }
    }
}
