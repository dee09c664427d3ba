//! What a repository whose whole git directory goes with a removal holds: one inside an
//! ignored directory of a worktree, or an initialised submodule's (its repository lives in
//! the worktree's private git directory). Its branches, tags, stash and reflogs go with
//! it: only its remote-tracking refs say a commit is elsewhere.

use std::path::Path;

use super::work::{Held, head_and_refs, of_worktree_files, reflog_only, short, unknown};
use crate::git;

/// The work of the initialised submodules whose repositories live in the private git
/// directory `git_dir` (`modules/NAME`) and go with it, local branches, tags, stash and all.
pub(super) fn submodules(git_dir: &Path) -> Vec<Held> {
    let modules = git_dir.join("modules");
    if !modules.is_dir() {
        return Vec::new();
    }
    let mut out = Vec::new();
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
        let held = match git::Repo::open(path) {
            Ok(sub) => of_repository(&sub, false),
            Err(e) => vec![Held::Unreadable(format!("cannot be read: {e}"))],
        };
        if !held.is_empty() {
            out.push(Held::Submodule { name, held });
        }
    }
    out
}

/// What a repository whose whole git directory goes holds: (`with_files`) its uncommitted
/// changes, untracked files and hidden edits; an operation in progress; its stash; the
/// commits only its own references have (branches, tags and HEAD go with it: only its
/// remote-tracking refs say a commit is elsewhere); and what only its HEAD's reflog names.
pub fn of_repository(repo: &git::Repo, with_files: bool) -> Vec<Held> {
    let mut held = if with_files {
        of_worktree_files(repo)
    } else {
        Vec::new()
    };
    let Some((head, refs)) = head_and_refs(repo, &mut held) else {
        return held;
    };
    let remotes: Vec<String> = refs
        .iter()
        .filter(|(n, _)| n.starts_with("refs/remotes/"))
        .map(|(_, o)| o.clone())
        .collect();
    match git::reflog(&repo.common_dir().join("logs/refs/stash")) {
        Ok(mut entries) => {
            entries.extend(
                refs.iter()
                    .filter(|(n, _)| n == "refs/stash")
                    .map(|(_, o)| o.clone()),
            );
            entries.sort();
            entries.dedup();
            if !entries.is_empty() {
                held.push(Held::Stash(entries.len()));
            }
        }
        Err(e) => held.push(unknown("it has stash entries", e)),
    }
    let locals: Vec<&(String, String)> = refs
        .iter()
        .filter(|(n, _)| !n.starts_with("refs/remotes/") && n != "refs/stash")
        .collect();
    let mut tips: Vec<String> = locals.iter().map(|(_, o)| o.clone()).collect();
    tips.extend(head.oid.clone());
    match repo.count_beyond(&tips, &remotes) {
        Ok(0) => {}
        Ok(commits) => {
            let beyond = |oid: &String| {
                repo.count_beyond(std::slice::from_ref(oid), &remotes)
                    .map_or(true, |n| n > 0)
            };
            let mut names: Vec<String> = locals
                .iter()
                .filter(|(_, o)| beyond(o))
                .take(5)
                .map(|(n, _)| {
                    n.strip_prefix("refs/heads/")
                        .map(|b| format!("branch {b}"))
                        .or_else(|| n.strip_prefix("refs/tags/").map(|t| format!("tag {t}")))
                        .unwrap_or_else(|| n.clone())
                })
                .collect();
            if let (true, Some(oid)) = (head.detached, &head.oid)
                && beyond(oid)
            {
                names.push(format!("detached HEAD {}", short(oid)));
            }
            held.push(Held::LocalCommits {
                refs: names,
                commits,
            });
        }
        Err(e) => held.push(unknown("its commits exist on a remote", e)),
    }
    held.extend(reflog_only(
        repo,
        repo.git_dir(),
        head.oid.as_deref(),
        &refs,
    ));
    held
}
