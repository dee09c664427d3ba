//! The trash's retained entries: a record that cannot be read, and references under
//! `refs/grove/trash/` whose entry is gone (a purge killed half way). Retained entries
//! themselves are no issue, and `--fix` never purges one; what the trash holds is the
//! report's `trash` summary.

use super::*;
use crate::state::trash::REF_PREFIX;

pub(super) fn check_kept_trash(c: &Checkup<'_>) -> Vec<Issue> {
    let mut out: Vec<Issue> = c
        .kept
        .corrupt
        .iter()
        .map(|(path, why)| {
            Issue::new(
                K::TrashUnreadable,
                format!("unreadable trash entry: {why}"),
                format!(
                    "it cannot be restored; look inside, then remove it with `rm -rf {}`",
                    q(path)
                ),
            )
            .path(path)
        })
        .collect();
    // Every entry's id (`<name>-<nanos>` → nanos), retained or not: references of an entry
    // still there, or being made or purged, are its own.
    let ids: BTreeSet<String> = crate::ops::trash::entries_all(c.territory)
        .iter()
        .filter_map(|e| crate::state::trash::Layout::of(e).id())
        .collect();
    for source in c.sources.keys() {
        let Ok(repo) = git::Repo::open(source) else {
            continue;
        };
        for (name, oid) in repo.references_under(REF_PREFIX).unwrap_or_default() {
            let id = name[REF_PREFIX.len()..]
                .split('/')
                .next()
                .unwrap_or_default();
            if ids.contains(id) {
                continue;
            }
            // Its entry may be another grove directory's, or in a workspace directory no
            // longer configured: only a reference that keeps nothing of its own goes.
            let elsewhere = repo.unreferenced_commits(&oid).is_ok_and(|n| n == 0);
            let issue = Issue::new(
                K::OrphanTrashRef,
                format!(
                    "`{name}` in `{}` keeps what a deleted workspace held, for a trash entry this grove directory does not have",
                    source.display()
                ),
                if elsewhere {
                    "remove the reference: what it keeps is on other branches too".to_string()
                } else {
                    format!(
                        "it keeps commits (or staged content) found nowhere else: if no other grove directory (GW_HOME) or workspace directory holds its entry, remove it with `git -C {} update-ref -d {name}`",
                        q(source)
                    )
                },
            )
            .path(source);
            out.push(if elsewhere {
                issue.fix(Fix::RemoveKeptRef {
                    source: source.clone(),
                    name,
                    oid,
                })
            } else {
                issue
            });
        }
    }
    out
}
