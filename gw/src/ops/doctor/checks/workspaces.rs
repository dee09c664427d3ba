//! Each recorded workspace and its worktrees, against the disk and git.

use super::*;

/// Trash entries by the name they were made from (`<name>-<nanos>`).
pub(super) fn trash_by_name<'c>(c: &'c Checkup<'_>) -> BTreeMap<String, Vec<&'c PathBuf>> {
    let mut out: BTreeMap<String, Vec<&PathBuf>> = BTreeMap::new();
    for t in &c.trash {
        if let Some(base) = crate::ops::trash::origin(t) {
            out.entry(base).or_default().push(t);
        }
    }
    out
}

pub(super) fn check_workspaces(c: &Checkup<'_>) -> Vec<Issue> {
    let Some(state) = c.state else {
        return Vec::new();
    };
    let trash = trash_by_name(c);
    let mut out = Vec::new();
    for ws in &state.workspaces {
        if fsx::exists(&ws.path) && c.territory.check(&ws.path, "").is_err() {
            out.push(
                Issue::new(
                    K::WorkspaceOutside,
                    format!(
                        "state records `{}` as the directory of workspace `{}`, but it is not inside the workspace directory: grove will not move or delete it",
                        ws.path.display(),
                        ws.name
                    ),
                    "drop the state entry (the directory is left as it is), or correct its path in state.json by hand",
                )
                .workspace(&ws.name)
                .path(&ws.path)
                .fix(Fix::DropWorkspace {
                    name: ws.name.clone(),
                    registrations: Vec::new(),
                }),
            );
            continue;
        }
        if !fsx::exists(&ws.path) {
            out.push(missing_workspace(c, ws, &trash));
            continue;
        }
        for r in &ws.repos {
            out.extend(check_repo(c, ws, r));
        }
    }
    out
}

pub(super) fn missing_workspace(
    c: &Checkup<'_>,
    ws: &Workspace,
    trash: &BTreeMap<String, Vec<&PathBuf>>,
) -> Issue {
    let in_trash = crate::ops::trash::origin_of(&ws.path)
        .and_then(|n| trash.get(&n))
        .and_then(|t| t.first());
    if let Some(t) = in_trash {
        return Issue::new(
            K::WorkspaceInTrash,
            "workspace directory missing; its bytes remain in leftover trash",
            format!(
                "restore it with `mv {} {}`, or run `gw delete {}` again",
                q(t),
                q(&ws.path),
                shell_quote(&ws.name)
            ),
        )
        .workspace(&ws.name)
        .path(t);
    }
    let registrations = ws
        .repos
        .iter()
        .filter_map(|r| c.registration(&r.source_repo, &r.worktree_path))
        .filter(|(_, p)| c.territory.check(p, "").is_ok())
        .collect();
    Issue::new(
        K::WorkspaceDirMissing,
        format!("workspace directory `{}` is missing", ws.path.display()),
        "remove the stale state entry and its worktrees' registrations",
    )
    .workspace(&ws.name)
    .path(&ws.path)
    .fix(Fix::DropWorkspace {
        name: ws.name.clone(),
        registrations,
    })
}

/// The commands that replace `r`'s worktree in `ws` with a fresh one.
fn re_add(ws: &Workspace, r: &RepoEntry) -> String {
    let name = shell_quote(&ws.name);
    format!(
        "`gw remove-repo {name} -r {repo} --force` and `gw add-repo {name} -r {repo}`",
        repo = r.repo_name
    )
}

pub(super) fn check_repo(c: &Checkup<'_>, ws: &Workspace, r: &RepoEntry) -> Vec<Issue> {
    let issue = |kind, text: String, action: String| {
        Issue::new(kind, text, action)
            .workspace(&ws.name)
            .repo(&r.repo_name)
    };
    let Some(source) = c.sources.get(&r.source_repo) else {
        return vec![
            issue(
                K::SourceRepoMissing,
                format!("source repository `{}` is missing", r.source_repo.display()),
                "remove the stale repo entry (the worktree directory, if any, is left in place)"
                    .into(),
            )
            .path(&r.source_repo)
            .fix(Fix::DropRepo {
                workspace: ws.name.clone(),
                repo: r.repo_name.clone(),
                registration: None,
            }),
        ];
    };
    if !r.worktree_path.is_dir() {
        return vec![
            issue(
                K::WorktreeMissing,
                format!("worktree directory `{}` is missing", r.worktree_path.display()),
                format!(
                    "remove the stale repo entry and its registration (then `gw add-repo {} -r {}` re-creates it)",
                    shell_quote(&ws.name),
                    r.repo_name
                ),
            )
            .path(&r.worktree_path)
            .fix(Fix::DropRepo {
                workspace: ws.name.clone(),
                repo: r.repo_name.clone(),
                registration: c.registration(&r.source_repo, &r.worktree_path)
                    .filter(|(_, p)| c.territory.check(p, "").is_ok()),
            }),
        ];
    }
    if let Err(e) = &source.worktrees {
        return vec![issue(
            K::SourceRepoUnreadable,
            e.clone(),
            "check the repository with `git status`".into(),
        )];
    }
    let mut out = Vec::new();
    let admin = match git::link(&r.worktree_path) {
        Link::Linked { admin } if c.registration(&r.source_repo, &r.worktree_path).is_some() => {
            admin
        }
        Link::CrossLinked { admin, owner }
            if git::link(&owner)
                == (Link::Linked {
                    admin: admin.clone(),
                }) =>
        {
            out.push(
                issue(
                    K::WorktreeCrossLinked,
                    format!(
                        "`{}` is linked to git's registration `{}`, which belongs to the worktree at `{}`: commits made here would move that worktree's branch",
                        r.worktree_path.display(),
                        admin.display(),
                        owner.display()
                    ),
                    format!("do not commit there; move any work out, then {}", re_add(ws, r)),
                )
                .path(&r.worktree_path),
            );
            return out;
        }
        Link::CrossLinked { .. } | Link::Linked { .. } => {
            // Its registration still names where it was: a directory that moved.
            out.push(
                issue(
                    K::WorktreeNotRegistered,
                    format!(
                        "`{}` is not registered where it is in `{}` (it moved)",
                        r.worktree_path.display(),
                        r.source_repo.display()
                    ),
                    "re-link it with `git worktree repair`".into(),
                )
                .path(&r.worktree_path)
                .fix(Fix::Repair {
                    source: r.source_repo.clone(),
                    path: r.worktree_path.clone(),
                }),
            );
            return out;
        }
        Link::Unregistered { .. } | Link::NotLinked => {
            out.push(
                issue(
                    K::WorktreeNotRegistered,
                    format!(
                        "`{}` is not registered as a worktree of `{}`",
                        r.worktree_path.display(),
                        r.source_repo.display()
                    ),
                    format!("move your work out of it, then {}", re_add(ws, r)),
                )
                .path(&r.worktree_path),
            );
            return out;
        }
    };
    if !source.branches.contains(&r.branch) {
        out.push(
            issue(
                K::BranchMissing,
                format!("the recorded branch {} no longer exists", r.branch),
                format!(
                    "re-create it with `git -C {} switch -c {}`, or remove the repo with `gw remove-repo {} -r {} --force`",
                    q(&r.worktree_path),
                    shell_quote(&r.branch),
                    shell_quote(&ws.name),
                    r.repo_name
                ),
            )
            .path(&r.worktree_path),
        );
    }
    if let Some(op) = git::in_progress(&admin) {
        out.push(
            issue(
                K::OperationInProgress,
                format!("a {op} is in progress in `{}`", r.worktree_path.display()),
                format!(
                    "finish it (`git -C {wt} {op} --continue`) or abort it (`git -C {wt} {op} --abort`); until then `gw sync` skips this repository",
                    wt = q(&r.worktree_path)
                ),
            )
            .path(&r.worktree_path),
        );
    }
    for lock in git::worktree_locks(&admin) {
        out.push(stale_lock(&lock).workspace(&ws.name).repo(&r.repo_name));
    }
    out
}
