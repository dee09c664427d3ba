//! What grove could have made that no workspace records: registrations, directories, trash;
//! and the Go grove's MCP leftovers.

use super::*;
use crate::ops::safety;

/// Registrations in every source repository grove knows that state does not explain:
/// stale ones inside a workspace directory (their directory is gone), and live worktrees
/// inside a workspace directory that no workspace records. Registrations of worktrees
/// outside the workspace directories are the user's own business.
pub(super) fn check_registrations(c: &Checkup<'_>) -> Vec<Issue> {
    let workspaces = c.state.map(|s| s.workspaces.as_slice()).unwrap_or_default();
    let recorded: BTreeSet<PathBuf> = workspaces
        .iter()
        .flat_map(|w| w.repos.iter())
        .filter_map(|r| c.canonical(&r.worktree_path))
        .collect();
    // Registrations under a missing workspace are fixed by dropping that workspace.
    let missing: BTreeSet<PathBuf> = workspaces
        .iter()
        .filter(|w| !fsx::exists(&w.path))
        .filter_map(|w| c.canonical(&w.path))
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
            let repo = git::Repo::open(&wt.path).ok();
            let held: Vec<String> = repo
                .as_ref()
                .map(safety::work::beyond_files)
                .unwrap_or_default()
                .iter()
                .map(safety::Held::describe)
                .collect();
            let holds = if held.is_empty() {
                String::new()
            } else {
                format!(" ({})", held.join("; "))
            };
            let mut i = Issue::new(
                K::UntrackedWorktree,
                format!(
                    "`{}` is a worktree inside the workspace directory that no workspace records{holds}",
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
            if let Some(why) = c.leftovers.claim(&wt.path) {
                i.suggested_action = format!("{}; doctor leaves it: {why}", i.suggested_action);
            } else if held.is_empty() && repo.is_some_and(|r| only_its_commit(&r, &wt.path)) {
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

/// The worktree `repo` at `path` holds nothing but the files of the commit it has checked
/// out.
fn only_its_commit(repo: &git::Repo, path: &Path) -> bool {
    repo.head()
        .ok()
        .and_then(|h| h.oid)
        .is_some_and(|head| repo.holds_only_files_of(&head, path).unwrap_or(false))
}

/// Entries of the workspace directories that no workspace records and no operation is
/// making or moving.
pub(super) fn check_stray(c: &Checkup<'_>) -> Vec<Issue> {
    let recorded: BTreeSet<PathBuf> = c
        .state
        .iter()
        .flat_map(|s| s.workspaces.iter())
        .filter_map(|w| c.canonical(&w.path))
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
            // A worktree of a repository grove knows is reported as one
            // (`check_registrations`), not as a directory.
            if recorded.contains(&canonical)
                || c.journaled.contains(&canonical)
                || c.sources
                    .values()
                    .any(|s| s.registered.contains_key(&canonical))
            {
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
            out.push(match c.leftovers.claim(&path) {
                Some(why) => Issue {
                    suggested_action: format!("{}; doctor leaves it: {why}", i.suggested_action),
                    ..i
                },
                None if safety::remove::only_empty_dirs(&path) => {
                    i.fix(Fix::RemoveEmptyDir { path })
                }
                None => i,
            });
        }
    }
    out
}

pub(super) fn check_trash(c: &Checkup<'_>) -> Vec<Issue> {
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
        let owner = crate::ops::trash::origin(t)
            .and_then(|b| by_base.get(&b))
            // An entry with nothing in it but a record's temporary file holds no one's bytes.
            .filter(|_| !crate::ops::trash::holds_nothing(t));
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
pub(super) fn check_mcp(c: &Checkup<'_>) -> Vec<Issue> {
    c.leftovers
        .findings
        .iter()
        .map(|f| {
            let mut i = Issue::new(K::McpLeftover, &f.issue, &f.suggested_action).path(&f.path);
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
