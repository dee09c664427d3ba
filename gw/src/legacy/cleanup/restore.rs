//! `gw-migrate restore`: puts back what a run changed, from copies it keeps.
//!
//! The manifest is read whole and checked first ([`manifest::read`]: its digests, every
//! path it names, every mode); anything wrong there is `CORRUPT_STATE` before a byte is
//! written. Then every file is looked at as it is now: one still as the run found it needs nothing; one
//! exactly as the run left it is put back from its copy (whose digest is checked as it is
//! copied); anything else is a conflict, left alone and reported, and so is a file whose
//! directory no longer exists (nothing is recreated). The database files go back as one
//! unit. The backup is kept, so a restore can be repeated, and one that stopped part way
//! (a signal, a full disk, a read-only directory) can be run again to finish.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::cancel::Cancel;
use super::files::{self, Meta, Swapped};
use super::manifest::{self, Entry, Listed, Log, Logged, Record, Standing, State};
use super::model::{Action, Kind};
use super::paths;
use super::recover::recover;
use crate::env::Env;
use crate::error::{Code, Error};
use crate::home::GroveHome;

/// What `restore` did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RestoreStatus {
    /// Put back from its copy.
    Restored,
    /// Already as it was before the run (restored before).
    AlreadyRestored,
    /// The run had not changed it (it stopped first).
    NotChanged,
    /// Its directory no longer exists; nothing was recreated.
    Skipped,
    /// Changed since the run (or its copy is damaged); left alone.
    Conflict,
    Failed,
    /// Not reached: the restore was stopped first.
    Pending,
}

impl RestoreStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RestoreStatus::Restored => "restored",
            RestoreStatus::AlreadyRestored => "already_restored",
            RestoreStatus::NotChanged => "not_changed",
            RestoreStatus::Skipped => "skipped",
            RestoreStatus::Conflict => "conflict",
            RestoreStatus::Failed => "failed",
            RestoreStatus::Pending => "pending",
        }
    }
}

/// One file of a restore.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    #[serde(serialize_with = "crate::fsx::serialize_lossy")]
    pub path: PathBuf,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub path_lossy: bool,
    pub kind: Kind,
    /// The action being undone.
    pub action: Action,
    pub status: RestoreStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The result of `restore`.
#[derive(Debug, Clone, Serialize)]
pub struct RestoreReport {
    pub id: String,
    #[serde(serialize_with = "crate::fsx::serialize_lossy")]
    pub backup: PathBuf,
    pub files: Vec<Restored>,
    /// `--dry-run`: every file looked at as a restore does, nothing written (no lock, no
    /// completion of an interrupted run, no manifest record); `restored` is what would be.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// Set when a file conflicts or fails, or the restore was stopped.
    #[serde(skip)]
    pub failure: Option<Error>,
    /// What a person should know (interrupted runs completed, files skipped).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Puts back what run `id` (default: the newest one not yet restored) changed; with
/// `dry_run`, decides the same and writes nothing.
pub fn restore(
    home: &GroveHome,
    env: &Env,
    id: Option<&str>,
    cancel: &Cancel,
    dry_run: bool,
) -> Result<RestoreReport, Error> {
    // Without a backup directory there is nothing to lock or complete (and no grove
    // directory is created just to say so); a dry run neither locks nor completes.
    let exists = home.migrate_backups().is_dir() && !dry_run;
    let _lock = exists.then(|| manifest::lock(home, env)).transpose()?;
    let warnings = if exists { recover(home) } else { Vec::new() };
    let all = manifest::list(home);
    let listed = choose(home, &all, id)?;
    let m = &listed
        .manifest(home)
        .map_err(|why| corrupt(&all, listed, &why))?;
    let dir = listed.dir.clone();
    for sub in ["files", "database"] {
        let p = dir.join(sub);
        if fs::symlink_metadata(&p).is_ok_and(|m| !m.is_dir()) {
            let why = format!("`{}` is not a directory of the backup", p.display());
            return Err(corrupt(&all, listed, &why));
        }
    }
    let mut report = RestoreReport {
        id: listed.id.clone(),
        backup: dir.clone(),
        files: Vec::new(),
        dry_run,
        failure: None,
        warnings,
    };
    let mut log = if dry_run {
        None
    } else {
        let mut log = Log::reopen(&dir, m)?;
        log.write(
            &[Record::Restoring {
                at: crate::time::now_utc(),
            }],
            true,
        )?;
        Some(log)
    };

    // Decide every file first; a unit goes back whole or not at all.
    let entries: Vec<&Logged> = m.entries.iter().rev().collect();
    let mut verdicts: Vec<Verdict> = entries
        .iter()
        .map(|l| check(home, &dir, &m.roots, l))
        .collect();
    for (k, l) in entries.iter().enumerate() {
        let Some(u) = l.entry.unit else { continue };
        let blocked = entries.iter().zip(&verdicts).find(|(o, v)| {
            o.entry.unit == Some(u) && matches!(v, Verdict::Final(RestoreStatus::Conflict, _))
        });
        if let (Some((o, _)), Verdict::Put) = (blocked, &verdicts[k]) {
            verdicts[k] = Verdict::Final(
                RestoreStatus::Conflict,
                Some(format!(
                    "the database files go back only together, and `{}` conflicts",
                    o.entry.file.display()
                )),
            );
        }
    }
    for (l, v) in entries.iter().zip(&verdicts) {
        let (status, detail) = match v {
            Verdict::Final(s, d) => (*s, d.clone()),
            Verdict::Put => (RestoreStatus::Pending, None),
        };
        report.files.push(Restored {
            path: l.entry.path.clone(),
            path_lossy: paths::is_lossy(&l.entry.path),
            kind: l.entry.kind,
            action: l.entry.action,
            status,
            detail,
        });
    }

    let Some(log) = log.as_mut() else {
        // The dry run: what a restore would put back, and what it would leave alone.
        for f in &mut report.files {
            if f.status == RestoreStatus::Pending {
                f.status = RestoreStatus::Restored;
            }
        }
        let left = report
            .files
            .iter()
            .filter(|f| f.status == RestoreStatus::Conflict)
            .count();
        if left > 0 {
            report.warnings.push(format!(
                "{left} file{} changed since the migration and would be left alone",
                if left == 1 { "" } else { "s" }
            ));
        }
        return Ok(report);
    };
    // Copy back in batches, flushing each batch's copies together.
    let todo: Vec<usize> = (0..entries.len())
        .filter(|&k| matches!(verdicts[k], Verdict::Put))
        .collect();
    let mut stopped = None;
    let mut first_failure: Option<Error> = None;
    let mut unit_at: Option<usize> = None;
    for batch in todo.chunks(128) {
        if let Some(sig) = cancel.requested() {
            stopped = Some(sig);
            break;
        }
        let written = files::in_parallel(batch, |&k| copy_out(&dir, &m.id, &entries[k].entry));
        for (&k, w) in batch.iter().zip(written) {
            let e = &entries[k].entry;
            let f = &mut report.files[k];
            let tmp = files::tmp_for(&e.file, &m.id, e.n, true);
            // A stop is honoured between files, and not inside the database unit.
            let inside_unit = e.unit.is_some() && e.unit == unit_at;
            unit_at = e.unit;
            let put = w.and_then(|note| {
                if stopped.is_none() && !inside_unit {
                    stopped = cancel.requested();
                }
                if stopped.is_some() {
                    files::remove_tmp(&tmp);
                    return Ok(None);
                }
                put_back(e, &tmp).map(|()| Some(note))
            });
            match put {
                Ok(None) => {}
                Ok(Some(note)) => {
                    f.status = RestoreStatus::Restored;
                    f.detail = note;
                }
                Err(not) => {
                    files::remove_tmp(&tmp);
                    f.status = not.status;
                    f.detail = Some(not.error.message.clone());
                    if not.status == RestoreStatus::Failed {
                        first_failure.get_or_insert(not.error);
                    }
                }
            }
        }
    }
    let count = |s: RestoreStatus| report.files.iter().filter(|f| f.status == s).count();
    let conflicts = count(RestoreStatus::Conflict);
    let failed = count(RestoreStatus::Failed);
    let skipped = count(RestoreStatus::Skipped);
    let complete = conflicts == 0 && failed == 0 && stopped.is_none();
    log.write(
        &[Record::RestoreEnded {
            at: crate::time::now_utc(),
            complete,
        }],
        true,
    )?;
    if skipped > 0 {
        report.warnings.push(format!(
            "{skipped} file{} not restored: {} directory no longer exists (see each file's detail)",
            if skipped == 1 { " was" } else { "s were" },
            if skipped == 1 { "its" } else { "their" }
        ));
    }
    let again = format!("gw-migrate restore {}", report.id);
    report.failure = if let Some(sig) = stopped {
        Some(
            Error::new(
                Code::Cancelled,
                format!(
                    "restore stopped by {} before every file was back",
                    crate::proc::signal_name(sig)
                ),
            )
            .with_fix(format!("Run `{again}` again to finish")),
        )
    } else if conflicts > 0 {
        Some(
            Error::new(
                Code::StateChanged,
                format!(
                    "{conflicts} file{} changed since the migration and {} left alone; the others were restored",
                    if conflicts == 1 { "" } else { "s" },
                    if conflicts == 1 { "was" } else { "were" }
                ),
            )
            .with_fix(format!(
                "Look at the files marked `conflict`, resolve them by hand, and run `{again}` again"
            )),
        )
    } else if let Some(e) = first_failure {
        let n = if failed == 1 {
            "1 file".to_string()
        } else {
            format!("{failed} files")
        };
        Some(
            Error::new(e.code, format!("{n} could not be restored: {}", e.message)).with_fix(
                format!("Fix what each file's detail names and run `{again}` again"),
            ),
        )
    } else {
        None
    };
    Ok(report)
}

/// `Known backups: …`, or how to make one.
fn known(all: &[Listed]) -> String {
    let ids: Vec<&str> = all.iter().map(|l| l.id.as_str()).collect();
    if ids.is_empty() {
        "There are no backups; `gw-migrate --apply` makes one".to_string()
    } else {
        format!("Known backups: {}", ids.join(", "))
    }
}

fn corrupt(all: &[Listed], l: &Listed, why: &str) -> Error {
    Error::new(
        Code::CorruptState,
        format!(
            "the manifest of migrate backup `{}` cannot be used: {why}",
            l.id
        ),
    )
    .with_fix(format!(
        "Look at `{}`; nothing was restored. {}",
        l.dir.display(),
        known(all)
    ))
}

/// The backup to restore: `id`, or the newest one not completely restored.
fn choose<'a>(home: &GroveHome, all: &'a [Listed], id: Option<&str>) -> Result<&'a Listed, Error> {
    let base = home.migrate_backups();
    let chosen = match id {
        Some(id) => all.iter().find(|l| l.id == id).ok_or_else(|| {
            Error::usage(format!("no migrate backup `{id}` in `{}`", base.display()))
                .with_fix(known(all))
        })?,
        None => all
            .iter()
            .rev()
            .find(|l| l.standing != Ok(Standing::Restored))
            .ok_or_else(|| {
                Error::usage(format!(
                    "no migrate backup left to restore in `{}`",
                    base.display()
                ))
                .with_fix(known(all))
            })?,
    };
    match &chosen.standing {
        Ok(_) => Ok(chosen),
        Err(why) => Err(corrupt(all, chosen, why)),
    }
}

enum Verdict {
    /// Nothing to do, or nothing can be done.
    Final(RestoreStatus, Option<String>),
    /// Copy it back.
    Put,
}

fn check(home: &GroveHome, dir: &Path, roots: &[PathBuf], l: &Logged) -> Verdict {
    let e = &l.entry;
    if matches!(l.state, State::NotDone | State::RolledBack) {
        return Verdict::Final(RestoreStatus::NotChanged, None);
    }
    let conflict = |why: String| Verdict::Final(RestoreStatus::Conflict, Some(why));
    let parent = e.file.parent().unwrap_or(Path::new("/"));
    if !parent.is_dir() {
        return Verdict::Final(
            RestoreStatus::Skipped,
            Some(format!(
                "its directory `{}` no longer exists (was the workspace deleted?); nothing was recreated",
                parent.display()
            )),
        );
    }
    // Where the copy would be written, with symlinks resolved now: still inside what the
    // run scanned (or the grove directory), not somewhere a directory swapped for a link
    // leads.
    let real = crate::fsx::canonical(parent);
    let allowed = match e.kind {
        Kind::Database => real == crate::fsx::canonical(home.root()),
        Kind::McpJson => {
            manifest::inside(&real.join(e.file.file_name().unwrap_or_default()), roots)
        }
    };
    if !allowed {
        return conflict(format!(
            "its directory now leads to `{}`, outside the directories the run scanned; left alone",
            real.display()
        ));
    }
    // A file edited through a symlink is written only while that link still leads to it:
    // the manifest alone never names a file to write that is not a `.mcp.json`.
    if e.path != e.file
        && crate::fsx::canonical(&e.path) != real.join(e.file.file_name().unwrap_or_default())
    {
        return conflict(format!(
            "`{}` no longer leads to `{}`, the file the run edited through it; left alone",
            e.path.display(),
            e.file.display()
        ));
    }
    let saved = dir.join(&e.backup);
    if fs::symlink_metadata(&saved).is_ok_and(|m| !m.file_type().is_file()) {
        return conflict(format!(
            "the backup copy `{}` is not a regular file",
            saved.display()
        ));
    }
    let now = match files::digest(&e.file) {
        Ok(d) => d,
        Err(err) => return conflict(format!("cannot read it: {err}")),
    };
    if now.as_deref() == Some(e.sha256_before.as_str()) {
        return Verdict::Final(
            if l.state == State::Done {
                RestoreStatus::AlreadyRestored
            } else {
                RestoreStatus::NotChanged
            },
            None,
        );
    }
    match (e.action, &now) {
        (Action::RemoveEntry, Some(d)) if Some(d) == e.sha256_after.as_ref() => {}
        (Action::DeleteFile | Action::MoveDatabase, None) => {}
        (Action::RemoveEntry, None) => {
            return conflict("the file was removed after the migration".into());
        }
        (_, Some(_)) => return conflict("the file changed after the migration".into()),
    }
    if e.unit.is_none() {
        // A file alone: its copy's digest is checked as it is copied back.
        return if saved.is_file() {
            Verdict::Put
        } else {
            conflict(format!("the backup copy `{}` is missing", saved.display()))
        };
    }
    // A unit goes back whole: every copy is checked before any is copied.
    match files::digest(&saved) {
        Ok(Some(d)) if d == e.sha256_before => Verdict::Put,
        Ok(Some(_)) => conflict(format!(
            "the backup copy `{}` does not match its recorded digest",
            saved.display()
        )),
        Ok(None) => conflict(format!("the backup copy `{}` is missing", saved.display())),
        Err(err) => conflict(format!("cannot read the backup copy: {err}")),
    }
}

/// Why a file was not put back.
struct NotBack {
    status: RestoreStatus,
    error: Error,
}

impl NotBack {
    fn failed(e: crate::fsx::Error) -> NotBack {
        NotBack {
            status: RestoreStatus::Failed,
            error: e.into(),
        }
    }
}

/// Copies an entry's backup into its temporary file beside the original, checking the
/// digest as it goes; a note when the owner could not be given back.
fn copy_out(dir: &Path, id: &str, e: &Entry) -> Result<Option<String>, NotBack> {
    let tmp = files::tmp_for(&e.file, id, e.n, true);
    files::remove_tmp(&tmp);
    let saved = dir.join(&e.backup);
    let mut source = fs::File::open(&saved)
        .map_err(|err| NotBack::failed(crate::fsx::Error::new("open", &saved, err)))?;
    // Never wider than recorded, nor than the copy (which has the original's mode).
    let copy_mode = source.metadata().ok().map(|m| mode_of(&m));
    let meta = Meta {
        mode: match (e.mode, copy_mode) {
            (Some(m), Some(c)) => Some(m & c),
            (m, _) => m,
        },
        uid: e.uid,
        gid: e.gid,
    };
    let how = files::Writing {
        owner_required: false,
        sync: true,
    };
    let (digest, owner) =
        files::write_new(&tmp, &mut source, meta, how).map_err(|err| match err {
            files::WriteError::Io(e) => NotBack::failed(e),
            files::WriteError::Owner(e) => {
                NotBack::failed(crate::fsx::Error::new("chown", &tmp, e))
            }
        })?;
    if digest != e.sha256_before {
        return Err(NotBack {
            status: RestoreStatus::Conflict,
            error: Error::new(
                Code::StateChanged,
                format!(
                    "the backup copy `{}` changed while it was read",
                    saved.display()
                ),
            ),
        });
    }
    Ok(owner.map(|err| {
        format!(
            "restored, but its owner (uid {} gid {}) could not be given back: {err}",
            e.uid.unwrap_or_default(),
            e.gid.unwrap_or_default()
        )
    }))
}

#[cfg(unix)]
fn mode_of(m: &fs::Metadata) -> u32 {
    use std::os::unix::fs::MetadataExt;
    m.mode() & 0o777
}

#[cfg(not(unix))]
fn mode_of(_: &fs::Metadata) -> u32 {
    0o777
}

/// Puts the copied-out file in place, if the file is still as checked: an edited file is
/// swapped with it and what came out compared (so an edit made meanwhile goes back and is
/// not lost); a removed file is put back only where no file is.
fn put_back(e: &Entry, tmp: &Path) -> Result<(), NotBack> {
    let changed = |why: String| NotBack {
        status: RestoreStatus::Conflict,
        error: Error::new(Code::StateChanged, why),
    };
    let placed = match e.action {
        Action::RemoveEntry => {
            let after = e.sha256_after.as_deref().unwrap_or_default();
            files::swap_in(tmp, &e.file, after, &e.sha256_before)
        }
        Action::DeleteFile | Action::MoveDatabase => files::rename_new(tmp, &e.file)
            .map(|new| if new { Swapped::Done } else { Swapped::Changed }),
    };
    match placed {
        Ok(Swapped::Done) => Ok(()),
        Ok(Swapped::Changed) => {
            files::remove_tmp(tmp);
            Err(changed(
                "the file changed while it was being restored".into(),
            ))
        }
        Ok(Swapped::Kept(kept)) => Err(changed(format!(
            "the file changed twice while it was being restored: one version is in place and the other is kept at `{}`",
            kept.display()
        ))),
        Err(err) => Err(NotBack::failed(err)),
    }
}
