//! Finding and removing the Go grove's MCP leftovers, with backups that can be restored.
//!
//! - [`scan`] (`scan.rs`) looks at every place the Go grove wrote a `.mcp.json` (tracked
//!   workspaces and their worktrees, the workspace directory including orphaned
//!   directories, extra roots) and at the database (`database.rs`), and returns a [`Plan`]:
//!   one [`Item`] per file that needs attention (`model.rs`), changing nothing.
//! - [`apply`] (`apply.rs`) carries out exactly that plan, each file re-checked, with a
//!   manifest written ahead of every change (`manifest.rs`) into
//!   `<GW_HOME>/migrate-backups/<id>/`; an edited file is copied there first, a removed one
//!   moved there (never unlinked). `recover.rs` completes the manifest of a run that was
//!   killed, before the next run or restore.
//! - [`restore`] (`restore.rs`) copies back what a run changed, checking every digest, and
//!   keeps the backup.
//! - `gw doctor` uses [`Leftovers`] and [`fix`] (`doctor.rs`): the same scan over the
//!   same scope, and the same apply; and its own repairs leave alone the directories
//!   gw-migrate has a claim on ([`Leftovers::claim`]).
//!
//! [`migrate`] is the whole of `gw-migrate`'s scan-and-apply, which `gw doctor --fix`
//! runs too. `--apply`, `restore` and `gw doctor --fix` hold one lock while they work.

mod apply;
mod cancel;
mod database;
mod doctor;
mod files;
mod manifest;
mod model;
pub mod paths;
mod recover;
mod restore;
mod scan;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use apply::{Applied, apply};
pub use cancel::Cancel;
pub use database::DATABASE_FILES;
pub use doctor::{Finding, Fixed, Leftovers, doctor_findings, finding, fix};
pub use manifest::{
    Entry, Listed, MANIFEST, Manifest, Standing, State as EntryState, list as backups,
};
pub use model::{Action, Backup, Item, Kind, Plan, Reason, Status};
pub use restore::{RestoreReport, RestoreStatus, Restored, restore};
pub use scan::{Scope, scan};

use crate::env::Env;
use crate::error::Error;
use crate::home::GroveHome;

/// What `gw-migrate` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Make the changes (otherwise only scan).
    pub apply: bool,
    /// Also edit `.mcp.json` files that git tracks or may track.
    pub include_tracked: bool,
    /// Directories to scan besides the install's.
    pub roots: Vec<PathBuf>,
}

/// What `gw-migrate` found and did.
#[derive(Debug)]
pub struct Migration {
    pub plan: Plan,
    pub backup: Option<Backup>,
    /// What could not be read, interrupted runs found, and the like.
    pub warnings: Vec<String>,
    /// The signal that stopped an applied run before every file was handled.
    pub stopped: Option<i32>,
}

/// Scans the install (and `opts.roots`) and, with `opts.apply`, cleans what was found:
/// under the lock, after completing the record of any run that was interrupted.
pub fn migrate(
    home: &GroveHome,
    env: &Env,
    opts: &Options,
    cancel: &Cancel,
) -> Result<Migration, Error> {
    let (mut scope, mut warnings) = Scope::load(home, env);
    scope.roots.clone_from(&opts.roots);
    scope.include_tracked = opts.include_tracked;
    if !opts.apply {
        warnings.extend(unfinished(home));
        return Ok(Migration {
            plan: scan(home, &scope),
            backup: None,
            warnings,
            stopped: None,
        });
    }
    let _lock = manifest::lock(home, env)?;
    warnings.extend(recover::recover(home));
    let mut plan = scan(home, &scope);
    let applied = apply(home, &mut plan, cancel)?;
    Ok(Migration {
        plan,
        backup: applied.backup,
        warnings,
        stopped: applied.stopped,
    })
}

/// Applied runs that stopped without finishing their manifest (a dry run only says so).
fn unfinished(home: &GroveHome) -> Vec<String> {
    manifest::list(home)
        .into_iter()
        .filter_map(|l| match l.standing {
            Ok(manifest::Standing::Unfinished) => Some(format!(
                "the run of backup {} was interrupted; `gw-migrate --apply` completes its record, and `gw-migrate restore {}` undoes what it changed",
                l.id, l.id
            )),
            Ok(_) => None,
            Err(why) => Some(format!("backup {} cannot be used: {why}", l.id)),
        })
        .collect()
}
