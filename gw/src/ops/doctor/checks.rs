//! The checks of `gw doctor`, each independent of the others.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{Check, Checkup, Fix, Issue, IssueKind as K};
use crate::fsx;
use crate::git::{self, Link};
use crate::proc::shell_quote;
use crate::state::{RepoEntry, Workspace};

/// Every check, in the order their issues are listed.
pub const CHECKS: &[(&str, Check)] = &[
    ("operations", check_operations),
    ("files", check_files),
    ("workspaces", check_workspaces),
    ("registrations", check_registrations),
    ("locks", check_locks),
    ("temp_files", check_temp_files),
    ("stray", check_stray),
    ("trash", check_trash),
    ("mcp_leftovers", check_mcp),
];

fn q(p: &Path) -> String {
    shell_quote(&p.to_string_lossy())
}

/// Operations that were interrupted (their process is gone) and journals that cannot be
/// read. Until they are recovered, commands on their workspaces say `RECOVERY_PENDING`.
fn check_operations(c: &Checkup<'_>) -> Vec<Issue> {
    let found = match &c.interrupted {
        Ok(f) => f,
        Err(e) => {
            return vec![Issue::new(
                K::JournalUnreadable,
                format!("cannot read the operation journals: {e}"),
                format!("check `{}` by hand", c.home.operations().display()),
            )];
        }
    };
    found
        .iter()
        .map(|op| {
            if let Some(why) = &op.corrupt {
                return Issue::new(
                    K::JournalUnreadable,
                    format!("unreadable operation journal: {why}"),
                    "move it out of `operations/` by hand once you have checked what it describes (it blocks recovery)",
                );
            }
            let kind = op.kind.map(|k| k.as_str()).unwrap_or("operation");
            let ws = op.workspace.as_deref().unwrap_or("?");
            let phase = match op.phase {
                Some(crate::state::journal::Phase::Committed) => "committed",
                Some(crate::state::journal::Phase::RollingBack) => "rolling back",
                _ => "running",
            };
            let what = format!(
                "an interrupted {kind} of workspace `{ws}` (operation {}, {phase}): {}",
                op.id,
                op.steps.join("; ")
            );
            let i = if op.finishing {
                Issue::new(
                    K::OperationFinishing,
                    format!("{what}; git processes it started are still at work"),
                    "wait until they are done (they hold its lock), then run `gw doctor --fix`",
                )
            } else {
                Issue::new(
                    K::InterruptedOperation,
                    what,
                    if phase == "committed" {
                        "finish it"
                    } else {
                        "roll it back"
                    },
                )
                .fix(Fix::Recover { id: op.id.clone() })
            };
            match &op.workspace {
                Some(w) => i.workspace(w),
                None => i,
            }
        })
        .collect()
}

fn check_files(c: &Checkup<'_>) -> Vec<Issue> {
    let mut out = Vec::new();
    if let Some(e) = &c.config_error {
        out.push(
            Issue::new(
                K::ConfigUnreadable,
                e.clone(),
                format!(
                    "fix `{}` by hand (grove never overwrites a file it cannot read)",
                    c.home.config().display()
                ),
            )
            .path(&c.home.config()),
        );
    } else if c.config.is_none() {
        out.push(
            Issue::new(
                K::NotInitialized,
                format!(
                    "grove is not initialized (no `{}`)",
                    c.home.config().display()
                ),
                "run `gw init <repo-dir>`",
            )
            .path(&c.home.config()),
        );
    }
    if let Some(e) = &c.state_error {
        out.push(
            Issue::new(
                K::StateUnreadable,
                e.clone(),
                format!(
                    "fix `{}` by hand or restore it from a backup (grove never overwrites a file it cannot read)",
                    c.home.state().display()
                ),
            )
            .path(&c.home.state()),
        );
    }
    out
}

/// The registration of `path` in `source`, if it has one: (source, path as git recorded it).
fn registration(c: &Checkup<'_>, source: &Path, path: &Path) -> Option<(PathBuf, PathBuf)> {
    let wts = c.sources.get(source)?.worktrees.as_ref().ok()?;
    let want = fsx::canonical_lenient(path);
    wts.iter()
        .find(|w| !w.is_main && (w.path == path || fsx::canonical_lenient(&w.path) == want))
        .map(|w| (source.to_path_buf(), w.path.clone()))
}

/// Trash entries by the name they were made from (`<name>-<nanos>`).
fn trash_by_name<'c>(c: &'c Checkup<'_>) -> BTreeMap<String, Vec<&'c PathBuf>> {
    let mut out: BTreeMap<String, Vec<&PathBuf>> = BTreeMap::new();
    for t in &c.trash {
        if let Some(base) = crate::ops::trash::origin(t) {
            out.entry(base).or_default().push(t);
        }
    }
    out
}

fn check_workspaces(c: &Checkup<'_>) -> Vec<Issue> {
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

fn missing_workspace(
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
        .filter_map(|r| registration(c, &r.source_repo, &r.worktree_path))
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

fn check_repo(c: &Checkup<'_>, ws: &Workspace, r: &RepoEntry) -> Vec<Issue> {
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
                registration: registration(c, &r.source_repo, &r.worktree_path)
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
        Link::Linked { admin } if registration(c, &r.source_repo, &r.worktree_path).is_some() => {
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
                    format!(
                        "do not commit there; move any work out, then `gw remove-repo {} -r {} --force` and `gw add-repo {} -r {}`",
                        shell_quote(&ws.name),
                        r.repo_name,
                        shell_quote(&ws.name),
                        r.repo_name
                    ),
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
                    format!(
                        "move your work out of it, then `gw remove-repo {} -r {} --force` and `gw add-repo {} -r {}`",
                        shell_quote(&ws.name),
                        r.repo_name,
                        shell_quote(&ws.name),
                        r.repo_name
                    ),
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

/// A git lock file: fixable when no process has it open (Linux can tell).
fn stale_lock(lock: &Path) -> Issue {
    let held = fsx::open_by_any_process(lock);
    let i = Issue::new(
        K::StaleLock,
        format!(
            "git's lock file `{}` is left behind (a git or gw process was killed while writing); git refuses to work there until it is gone",
            lock.display()
        ),
        format!("make sure no git is running there, then `rm {}`", q(lock)),
    )
    .path(lock);
    match held {
        Some(false) => i.fix(Fix::RemoveStaleLock {
            path: lock.to_path_buf(),
        }),
        _ => i,
    }
}

/// Lock files git left in the source repositories, in what grove asks of them (the
/// workspaces' branches, packed refs, config) — those a process still holds are in use.
fn check_locks(c: &Checkup<'_>) -> Vec<Issue> {
    let mut branches: BTreeMap<&Path, BTreeSet<&str>> = BTreeMap::new();
    for r in c
        .state
        .iter()
        .flat_map(|s| s.workspaces.iter())
        .flat_map(|w| w.repos.iter())
    {
        branches
            .entry(r.source_repo.as_path())
            .or_default()
            .insert(&r.branch);
    }
    let mut out = Vec::new();
    for (path, source) in &c.sources {
        let Some(git_dir) = &source.git_dir else {
            continue;
        };
        let names: Vec<&str> = branches
            .get(path.as_path())
            .map(|b| b.iter().copied().collect())
            .unwrap_or_default();
        for lock in git::repository_locks(git_dir, &names) {
            if fsx::open_by_any_process(&lock) != Some(true) {
                out.push(stale_lock(&lock));
            }
        }
    }
    out
}

/// Temporary files of grove's atomic writes (`.state.json.XXXX.tmp`, a journal's) left by a
/// process killed while writing: removable once no process has them open.
fn check_temp_files(c: &Checkup<'_>) -> Vec<Issue> {
    let mut out = Vec::new();
    for dir in [c.home.root().to_path_buf(), c.home.operations()] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.starts_with('.') && n.ends_with(".tmp")
                }) && p.is_file()
            })
            .collect();
        found.sort();
        for tmp in found {
            let i = Issue::new(
                K::StaleTempFile,
                format!(
                    "`{}` is a temporary file a grove process left when it was killed while writing",
                    tmp.display()
                ),
                format!("remove it: `rm {}`", q(&tmp)),
            )
            .path(&tmp);
            out.push(match fsx::open_by_any_process(&tmp) {
                Some(false) => i.fix(Fix::RemoveStaleLock { path: tmp }),
                Some(true) => continue,
                None => i,
            });
        }
    }
    out
}

/// Registrations in every source repository grove knows that state does not explain:
/// stale ones inside a workspace directory (their directory is gone), and live worktrees
/// inside a workspace directory that no workspace records. Registrations of worktrees
/// outside the workspace directories are the user's own business.
fn check_registrations(c: &Checkup<'_>) -> Vec<Issue> {
    let workspaces = c.state.map(|s| s.workspaces.as_slice()).unwrap_or_default();
    let recorded: BTreeSet<PathBuf> = workspaces
        .iter()
        .flat_map(|w| w.repos.iter())
        .filter_map(|r| fsx::canonical_lenient(&r.worktree_path))
        .collect();
    // Registrations under a missing workspace are fixed by dropping that workspace.
    let missing: BTreeSet<PathBuf> = workspaces
        .iter()
        .filter(|w| !fsx::exists(&w.path))
        .filter_map(|w| fsx::canonical_lenient(&w.path))
        .collect();
    let mut out = Vec::new();
    for (source, s) in &c.sources {
        let Ok(wts) = &s.worktrees else { continue };
        let name = source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for wt in wts.iter().filter(|w| !w.is_main) {
            let Some(canonical) = fsx::canonical_lenient(&wt.path) else {
                continue;
            };
            if c.territory.check(&wt.path, "").is_err()
                || recorded.contains(&canonical)
                || c.journaled.contains(&canonical)
                || canonical.parent().is_some_and(|p| missing.contains(p))
            {
                continue;
            }
            if wt.prunable {
                out.push(
                    Issue::new(
                        K::StaleRegistration,
                        format!(
                            "`{}` is registered as a worktree but its directory is gone",
                            wt.path.display()
                        ),
                        format!(
                            "remove the registration with `git -C {} worktree remove --force {}`",
                            q(source),
                            q(&wt.path)
                        ),
                    )
                    .repo(&name)
                    .path(&wt.path)
                    .fix(Fix::RemoveRegistration {
                        source: source.clone(),
                        path: wt.path.clone(),
                    }),
                );
                continue;
            }
            let mut i = Issue::new(
                K::UntrackedWorktree,
                format!(
                    "`{}` is a worktree inside the workspace directory that no workspace records",
                    wt.path.display()
                ),
                format!(
                    "look at it; if it holds nothing you need, `git -C {} worktree remove {}`",
                    q(source),
                    q(&wt.path)
                ),
            )
            .repo(&name)
            .path(&wt.path);
            if disposable(&wt.path) {
                i.suggested_action =
                    "remove it: it holds nothing but the files of its commit".into();
                i = i.fix(Fix::RemoveWorktree {
                    source: source.clone(),
                    path: wt.path.clone(),
                });
            }
            out.push(i);
        }
    }
    out
}

/// A worktree that holds nothing but the files of the commit it has checked out: removing
/// it loses nothing (its branch stays).
pub(super) fn disposable(path: &Path) -> bool {
    let Ok(repo) = git::Repo::open(path) else {
        return false;
    };
    let Ok(Some(head)) = repo.head().map(|h| h.oid) else {
        return false;
    };
    repo.holds_only_files_of(&head, path).unwrap_or(false)
}

/// Entries of the workspace directories that no workspace records and no operation is
/// making or moving.
fn check_stray(c: &Checkup<'_>) -> Vec<Issue> {
    let recorded: BTreeSet<PathBuf> = c
        .state
        .iter()
        .flat_map(|s| s.workspaces.iter())
        .filter_map(|w| fsx::canonical_lenient(&w.path))
        .collect();
    let mut roots: BTreeSet<PathBuf> = c
        .territory
        .trash_dirs()
        .into_iter()
        .filter_map(|t| t.parent().map(Path::to_path_buf))
        .collect();
    roots.retain(|r| r.is_dir());
    let mut out = Vec::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            if path.file_name().is_some_and(|n| n == crate::home::TRASH) {
                continue;
            }
            let Some(canonical) = fsx::canonical_lenient(&path) else {
                continue;
            };
            if recorded.contains(&canonical) || c.journaled.contains(&canonical) {
                continue;
            }
            let i = Issue::new(
                K::StrayDirectory,
                format!(
                    "`{}` is in the workspace directory but no workspace records it",
                    path.display()
                ),
                "look inside; move what you need elsewhere and remove it (`gw create` of that name is refused while it exists)",
            )
            .path(&path);
            out.push(if only_empty_dirs(&path) {
                i.fix(Fix::RemoveEmptyDir { path })
            } else {
                i
            });
        }
    }
    out
}

/// A directory with nothing in it but (nested) empty directories.
pub(super) fn only_empty_dirs(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    meta.is_dir()
        && walkdir::WalkDir::new(path)
            .follow_links(false)
            .into_iter()
            .all(|e| e.is_ok_and(|e| e.file_type().is_dir()))
}

fn check_trash(c: &Checkup<'_>) -> Vec<Issue> {
    let workspaces: Vec<(&str, &Path)> = c
        .state
        .map(|s| {
            s.workspaces
                .iter()
                .map(|w| (w.name.as_str(), w.path.as_path()))
                .collect()
        })
        .unwrap_or_default();
    let by_base: BTreeMap<String, (&str, &Path)> = workspaces
        .iter()
        .filter_map(|(n, p)| crate::ops::trash::origin_of(p).map(|b| (b, (*n, *p))))
        .collect();
    let mut out = Vec::new();
    // Trash an operation recorded is that operation's: it is restored or removed when the
    // operation finishes or is recovered.
    for t in c
        .trash
        .iter()
        .filter(|t| !fsx::canonical_lenient(t).is_some_and(|p| c.journaled.contains(&p)))
    {
        let owner = crate::ops::trash::origin(t).and_then(|b| by_base.get(&b));
        match owner {
            // A missing workspace with bytes in the trash is reported by `check_workspaces`.
            Some((_, p)) if !fsx::exists(p) => {}
            Some((name, _)) => out.push(
                Issue::new(
                    K::TrashOfWorkspace,
                    format!(
                        "leftover trash `{}` may still belong to workspace `{name}`",
                        t.display()
                    ),
                    format!("look inside, then remove it with `rm -rf {}`", q(t)),
                )
                .workspace(name)
                .path(t),
            ),
            None => out.push(
                Issue::new(
                    K::LeftoverTrash,
                    format!("leftover trash `{}`", t.display()),
                    "remove the quarantined workspace bytes",
                )
                .path(t)
                .fix(Fix::RemoveTrash { path: t.clone() }),
            ),
        }
    }
    out
}

/// Leftovers of the Go grove's MCP era (a `grove` entry of another tool is never one):
/// the library decides what is grove's, for doctor and `gw-migrate` alike.
fn check_mcp(c: &Checkup<'_>) -> Vec<Issue> {
    let Some(state) = c.state else {
        return Vec::new();
    };
    crate::legacy::cleanup::doctor_findings(c.home, state)
        .into_iter()
        .map(|f| {
            let mut i = Issue::new(K::McpLeftover, f.issue, f.suggested_action).path(&f.path);
            if let Some(w) = &f.workspace {
                i = i.workspace(w);
            }
            if let Some(r) = &f.repo {
                i = i.repo(r);
            }
            if f.fixable { i.fix(Fix::McpCleanup) } else { i }
        })
        .collect()
}
