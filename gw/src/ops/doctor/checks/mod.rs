//! The checks of `gw doctor`, each independent of the others.

mod disk;
mod kept;
mod workspaces;

use disk::*;
use kept::*;
use workspaces::*;

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
    ("kept_trash", check_kept_trash),
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
