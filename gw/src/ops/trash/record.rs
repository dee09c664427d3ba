//! The record a retained removal writes into its trash entry: the workspace's state entry
//! as it was, and per repository its registration's name, its branch's tip and what
//! happened to that branch — everything `gw restore` needs to bring it back.

use std::path::PathBuf;

use crate::git;
use crate::ops::safety::Fate;
use crate::state::trash::{BranchFate, KeptRepo, Reason, Record, VERSION};
use crate::state::{RepoEntry, Workspace};

/// The record of `ws` going for `reason`: `targets` are its repositories, `fates` what
/// happens to each one's branch (`None`: its source repository is gone), `registered`
/// (index, path, private git directory) the registrations that go with them.
pub fn record_of(
    ws: &Workspace,
    reason: Reason,
    targets: &[RepoEntry],
    fates: &[Option<Fate>],
    registered: &[(usize, PathBuf, PathBuf)],
) -> Record {
    let repos = targets
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let admin = registered
                .iter()
                .find(|(j, ..)| *j == i)
                .and_then(|(_, _, admin)| admin.file_name())
                .map(|n| n.to_string_lossy().into_owned());
            let source = git::Repo::open(&r.source_repo).ok();
            let (fate, tip) = match fates.get(i).cloned().flatten() {
                Some(Fate::Delete { tip, .. }) => (BranchFate::Deleted, Some(tip)),
                Some(Fate::Gone) => (BranchFate::Gone, None),
                _ => (
                    BranchFate::Kept,
                    source.as_ref().and_then(|s| s.local_branch(&r.branch)),
                ),
            };
            let config = match (&source, fate) {
                (Some(s), BranchFate::Deleted) => s.branch_config(&r.branch),
                _ => Vec::new(),
            };
            KeptRepo {
                repo: r.repo_name.clone(),
                source: r.source_repo.clone(),
                admin,
                branch: r.branch.clone(),
                tip,
                fate,
                config,
            }
        })
        .collect();
    Record {
        version: VERSION,
        name: ws.name.clone(),
        deleted_at: crate::time::now_utc(),
        reason,
        workspace: ws.clone(),
        repos,
    }
}
