//! Carrying out a plan with the manifest written ahead (see [`super::manifest`]).
//!
//! Files are handled in batches so that their flushes to disk can be made together: for a
//! batch, every file is checked again (it must still have the digest it was scanned with)
//! and the copies of those to edit are saved (private, with the original's owner and mode)
//! and flushed; then the batch's `intend` records are flushed; then the edited files are
//! written beside the originals and flushed; and only then, file by file, is each swapped
//! with its original and what came out compared with what was read (an edit), or moved
//! into the backup and what arrived compared (a removal): a file changed in between goes
//! back, so no edit made meanwhile is lost. The database unit is examined again, by the
//! check that decided it, right before it moves. A stop request is honoured between two
//! files.

use std::fs;
use std::path::PathBuf;

use super::cancel::Cancel;
use super::database;
use super::files::{self, Meta, Swapped, WriteError, Writing};
use super::manifest::{self, Entry, Log, Record};
use super::model::{Action, Backup, Item, Kind, Plan, Reason, Status};
use crate::error::Error;
use crate::fsx;
use crate::home::GroveHome;

/// Files prepared and flushed together.
const BATCH: usize = 128;

/// What [`apply`] did besides updating the plan's items.
#[derive(Debug)]
pub struct Applied {
    /// The run's backup; `None` when nothing was changed.
    pub backup: Option<Backup>,
    /// The signal that stopped the run before every file was handled.
    pub stopped: Option<i32>,
}

/// Carries out every pending item of `plan`, recording each outcome in the item. Creates a
/// backup only when something is changed. Fails only when the backup cannot be begun;
/// once it is, failures are the items'.
pub fn apply(home: &GroveHome, plan: &mut Plan, cancel: &Cancel) -> Result<Applied, Error> {
    let units = units(&plan.items);
    if units.is_empty() {
        return Ok(Applied {
            backup: None,
            stopped: None,
        });
    }
    if let Some(sig) = cancel.requested() {
        return Ok(Applied {
            backup: None,
            stopped: Some(sig),
        });
    }
    let (id, dir) = manifest::new_backup_dir(home)?;
    let log = match Log::create(&dir, &id, &plan.within) {
        Ok(l) => l,
        Err(e) => {
            let _ = fsx::remove_dir_all(&dir);
            return Err(e.into());
        }
    };
    let mut run = Run {
        home,
        id,
        dir,
        log,
        next: 0,
        changed: 0,
    };
    let mut stopped = None;
    let mut broken = None;
    for batch in batches(units) {
        if let Some(sig) = cancel.requested() {
            stopped = Some(sig);
            break;
        }
        match run.batch(&mut plan.items, &batch, cancel) {
            Ok(None) => {}
            Ok(Some(sig)) => {
                stopped = Some(sig);
                break;
            }
            Err(e) => {
                broken = Some(Error::from(e));
                break;
            }
        }
    }
    let finished = run.log.write(
        &[Record::Finished {
            at: crate::time::now_utc(),
            cancelled: stopped.is_some(),
            interrupted: false,
        }],
        true,
    );
    if let Some(e) = broken.or_else(|| finished.err().map(Error::from)) {
        // Nothing after the failed write was touched.
        for item in plan
            .items
            .iter_mut()
            .filter(|i| i.status == Status::Pending)
        {
            let detail = format!(
                "not attempted: the manifest could not be written: {}",
                e.message
            );
            item.fail_with(Reason::IoError, detail, e.clone());
        }
    } else if run.changed == 0 {
        // Nothing was changed: no backup to restore.
        let _ = fsx::remove_dir_all(&run.dir);
        return Ok(Applied {
            backup: None,
            stopped,
        });
    }
    Ok(Applied {
        backup: Some(Backup {
            id: run.id,
            path: run.dir,
        }),
        stopped,
    })
}

/// The pending items in the order they are handled: each `.mcp.json` alone, the database
/// files together and last.
fn units(items: &[Item]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut database = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.status != Status::Pending || item.action.is_none() {
            continue;
        }
        match item.kind {
            Kind::McpJson => out.push(vec![i]),
            Kind::Database => database.push(i),
        }
    }
    if !database.is_empty() {
        out.push(database);
    }
    out
}

/// Units grouped into batches of at most [`BATCH`] files.
fn batches(units: Vec<Vec<usize>>) -> Vec<Vec<Vec<usize>>> {
    let mut out: Vec<Vec<Vec<usize>>> = Vec::new();
    let mut size = BATCH;
    for u in units {
        if size + u.len() > BATCH {
            out.push(Vec::new());
            size = 0;
        }
        size += u.len();
        out.last_mut().expect("a batch was started").push(u);
    }
    out
}

struct Run<'a> {
    home: &'a GroveHome,
    id: String,
    dir: PathBuf,
    log: Log,
    next: usize,
    changed: usize,
}

/// A unit checked and recorded, ready to be changed.
struct Ready {
    items: Vec<usize>,
    entries: Vec<Entry>,
    /// The edited file written beside the original (`remove_entry`).
    tmp: Option<PathBuf>,
    /// Cannot go ahead any more (its item says why); recorded as not done.
    dropped: bool,
}

impl Run<'_> {
    /// Handles one batch; `Ok(Some(signal))` when a stop request ended it early. An error
    /// means the manifest could not be written; nothing unrecorded was touched.
    fn batch(
        &mut self,
        items: &mut [Item],
        batch: &[Vec<usize>],
        cancel: &Cancel,
    ) -> Result<Option<i32>, fsx::Error> {
        // 1. Check each file again; save copies of the files to edit.
        let mut ready: Vec<Ready> = batch
            .iter()
            .filter_map(|unit| self.prepare(items, unit))
            .collect();
        let dir = &self.dir;
        let copies: Vec<(usize, PathBuf)> = ready
            .iter()
            .enumerate()
            .flat_map(|(u, r)| {
                r.entries
                    .iter()
                    .filter(|e| e.action == Action::RemoveEntry)
                    .map(move |e| (u, dir.join(&e.backup)))
            })
            .collect();
        if !copies.is_empty() {
            let paths: Vec<PathBuf> = copies.iter().map(|(_, p)| p.clone()).collect();
            for ((u, _), r) in copies.iter().zip(files::sync_all(&paths)) {
                if let Err(e) = r {
                    fail_unit(items, &ready[*u].items, Reason::IoError, e.into());
                    ready[*u].dropped = true;
                }
            }
            fsx::sync_dir(&self.dir.join("files"))?;
        }
        ready.retain(|r| !r.dropped);

        // 2. Record the intentions, durably.
        let intents: Vec<Record> = ready
            .iter()
            .flat_map(|r| r.entries.iter().cloned().map(Record::Intend))
            .collect();
        self.log.write(&intents, true)?;

        // 3. Write the edited files beside their originals.
        let jobs: Vec<(usize, PathBuf, &[u8], Meta)> = ready
            .iter()
            .enumerate()
            .filter(|(_, r)| r.entries[0].action == Action::RemoveEntry)
            .map(|(u, r)| {
                let e = &r.entries[0];
                let item = &items[r.items[0]];
                let meta = Meta {
                    mode: e.mode,
                    uid: e.uid,
                    gid: e.gid,
                };
                let tmp = files::tmp_for(&e.file, &self.id, e.n, false);
                (u, tmp, item.edited.as_deref().unwrap_or_default(), meta)
            })
            .collect();
        let written = files::in_parallel(&jobs, |(_, tmp, bytes, meta)| {
            let how = Writing {
                owner_required: true,
                sync: true,
            };
            files::write_new(tmp, &mut &bytes[..], *meta, how)
        });
        let jobs: Vec<(usize, PathBuf)> = jobs.into_iter().map(|(u, t, _, _)| (u, t)).collect();
        for ((u, tmp), w) in jobs.into_iter().zip(written) {
            let r = &mut ready[u];
            match w {
                Ok(_) => r.tmp = Some(tmp),
                Err(WriteError::Owner(why)) => {
                    let e = &r.entries[0];
                    let detail = format!(
                        "owned by uid {} gid {}, and an edited copy cannot be given to that owner ({why}); run gw-migrate as that user",
                        e.uid.unwrap_or_default(),
                        e.gid.unwrap_or_default()
                    );
                    items[r.items[0]].set_skipped(Reason::OwnerNotKept, Some(detail));
                    r.dropped = true;
                }
                Err(WriteError::Io(e)) => {
                    fail_unit(items, &r.items, Reason::IoError, e.into());
                    r.dropped = true;
                }
            }
        }

        // 4. Change the files, one at a time.
        let mut records = Vec::new();
        let mut stopped = None;
        for r in &ready {
            if stopped.is_none() {
                stopped = cancel.requested();
            }
            if stopped.is_some() || r.dropped {
                if let Some(tmp) = &r.tmp {
                    files::remove_tmp(tmp);
                }
                records.extend(r.entries.iter().map(|e| Record::NotDone { n: e.n }));
                continue;
            }
            self.commit(items, r, &mut records);
        }
        self.log.write(&records, true)?;
        Ok(stopped)
    }

    /// Checks a unit's files again and saves copies of the files to edit; `None` (with the
    /// items updated) when the unit cannot go ahead.
    fn prepare(&mut self, items: &mut [Item], unit: &[usize]) -> Option<Ready> {
        let first = self.next + 1;
        let mut entries = Vec::new();
        for &i in unit {
            let item = &items[i];
            let file = item.file().to_path_buf();
            let action = item.action.expect("a pending item has an action");
            let before = item.sha256.clone().expect("a pending item was hashed");
            let checked = fs::symlink_metadata(&file)
                .map_err(|e| fsx::Error::new("read", &file, e))
                .and_then(|meta| {
                    let bytes = match action {
                        Action::RemoveEntry => Some(fsx::read_bytes(&file)?),
                        _ => None,
                    };
                    let now = match &bytes {
                        Some(b) => fsx::sha256_hex(b),
                        None => fsx::sha256_file(&file)?,
                    };
                    Ok((meta, bytes, now))
                });
            let (meta, bytes) = match checked {
                Ok((meta, bytes, now)) if now == before && meta.file_type().is_file() => {
                    (meta, bytes)
                }
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    fail_unit(items, unit, Reason::IoError, e.into());
                    return None;
                }
                _ => {
                    for &j in unit {
                        items[j].set_skipped(
                            Reason::ChangedSinceScan,
                            Some("the file changed after it was scanned; run again".to_string()),
                        );
                    }
                    return None;
                }
            };
            self.next += 1;
            let n = self.next;
            let backup = manifest::copy_of(n, item.kind, &item.path);
            let saved = self.dir.join(&backup);
            let m = Meta::of(&meta);
            // A copy is as private as its original: its owner (where that can be given)
            // and its mode, in a directory only the user can enter.
            let made = files::private_dir(saved.parent().expect("a copy has a directory"))
                .map_err(WriteError::Io)
                .and_then(|()| match &bytes {
                    Some(b) => {
                        let how = Writing {
                            owner_required: false,
                            sync: false,
                        };
                        files::write_new(&saved, &mut &b[..], m, how).map(|_| ())
                    }
                    None => Ok(()),
                });
            match made {
                Ok(()) => {}
                Err(WriteError::Io(e)) => {
                    fail_unit(items, unit, Reason::IoError, e.into());
                    return None;
                }
                Err(WriteError::Owner(e)) => {
                    let e = fsx::Error::new("chown", &saved, e);
                    fail_unit(items, unit, Reason::IoError, e.into());
                    return None;
                }
            }
            entries.push(Entry {
                n,
                kind: item.kind,
                action,
                path: item.path.clone(),
                file,
                backup,
                sha256_before: before,
                sha256_after: (action == Action::RemoveEntry)
                    .then(|| item.edited.as_deref().map(fsx::sha256_hex))
                    .flatten(),
                mode: m.mode,
                uid: m.uid,
                gid: m.gid,
                unit: (item.kind == Kind::Database).then_some(first),
            });
        }
        Some(Ready {
            items: unit.to_vec(),
            entries,
            tmp: None,
            dropped: false,
        })
    }

    /// Makes a recorded change, if each file is still as checked.
    fn commit(&mut self, items: &mut [Item], r: &Ready, records: &mut Vec<Record>) {
        if let Some(tmp) = &r.tmp {
            let e = &r.entries[0];
            let after = e.sha256_after.as_deref().unwrap_or_default();
            let swapped = files::swap_in(tmp, &e.file, &e.sha256_before, after);
            match swapped {
                Ok(Swapped::Done) => {
                    records.push(Record::Done { n: e.n });
                    items[r.items[0]].status = Status::Done;
                    self.changed += 1;
                }
                Ok(Swapped::Changed) => {
                    records.push(Record::NotDone { n: e.n });
                    changed(
                        items,
                        &r.items,
                        "the file changed while gw-migrate ran; run again",
                    );
                }
                Ok(Swapped::Kept(kept)) => {
                    records.push(Record::NotDone { n: e.n });
                    let why = format!(
                        "the file changed while gw-migrate ran, twice: one version is in place and the other is kept at `{}`; compare them, keep the right one and run again",
                        kept.display()
                    );
                    changed(items, &r.items, &why);
                }
                Err(err) => {
                    // A version of the file that could not go back is kept beside it, and
                    // the error says where; the temporary file is gw-migrate's own.
                    files::remove_tmp(tmp);
                    let done = files::digest(&e.file).is_ok_and(|d| d.as_deref() == Some(after));
                    records.push(if done {
                        Record::Done { n: e.n }
                    } else {
                        Record::NotDone { n: e.n }
                    });
                    if done {
                        self.changed += 1;
                    }
                    fail_unit(items, &r.items, Reason::IoError, err.into());
                }
            }
            return;
        }
        if r.entries[0].kind == Kind::Database
            && let Err(b) = self.database_unchanged(&r.entries)
        {
            records.extend(r.entries.iter().map(|e| Record::NotDone { n: e.n }));
            for &i in &r.items {
                items[i].set_skipped(b.reason, Some(b.detail.clone()));
                items[i].pids.clone_from(&b.pids);
            }
            return;
        }
        // Moves: all of the unit or none of it.
        let mut moved: Vec<&Entry> = Vec::new();
        let mut failure: Option<fsx::Error> = None;
        for e in &r.entries {
            match files::move_file(&e.file, &self.dir.join(&e.backup)) {
                Ok(()) => moved.push(e),
                Err(err) => {
                    failure = Some(err);
                    break;
                }
            }
        }
        // What arrived in the backup must be what was read: a file changed just before
        // it moved goes back.
        let differs = failure.is_none()
            && moved.iter().any(|e| {
                files::digest(&self.dir.join(&e.backup))
                    .map_or(true, |d| d.as_deref() != Some(e.sha256_before.as_str()))
            });
        if failure.is_none() && !differs {
            for e in &r.entries {
                records.push(Record::Done { n: e.n });
                self.changed += 1;
            }
            for &i in &r.items {
                items[i].status = Status::Done;
            }
            return;
        }
        let mut stuck = Vec::new();
        for m in moved.iter().rev() {
            let back = self.dir.join(&m.backup);
            if files::rename_new(&back, &m.file).unwrap_or(false) {
                records.push(Record::RolledBack { n: m.n });
            } else {
                records.push(Record::Done { n: m.n });
                self.changed += 1;
                stuck.push(format!(
                    "`{}` is in the backup as `{}`",
                    m.file.display(),
                    back.display()
                ));
            }
        }
        for rest in r
            .entries
            .iter()
            .filter(|x| !moved.iter().any(|m| m.n == x.n))
        {
            records.push(Record::NotDone { n: rest.n });
        }
        let put_back = if stuck.is_empty() {
            if moved.is_empty() {
                String::new()
            } else {
                "; the files that had moved were put back".to_string()
            }
        } else {
            format!(
                "; some files could not be put back because a new file took their place ({}; `gw-migrate restore` puts them back once the new ones are gone)",
                stuck.join(", ")
            )
        };
        match failure {
            Some(err) => {
                let err = Error::from(err);
                let detail = format!("{}{put_back}", err.message);
                for &i in &r.items {
                    items[i].fail_with(Reason::IoError, detail.clone(), err.clone());
                }
            }
            None => changed(
                items,
                &r.items,
                &format!("the file changed while gw-migrate ran; run again{put_back}"),
            ),
        }
    }

    /// Whether the database unit is still what the scan decided, by the same check: the
    /// same files (no new `-wal` or `-shm`), nobody holding them, the same bytes. A change
    /// is `in_use` or `changed_since_scan`.
    fn database_unchanged(&self, entries: &[Entry]) -> Result<(), database::Blocker> {
        let now = database::examine(self.home);
        let changed = |detail: String| database::Blocker {
            at: None,
            reason: Reason::ChangedSinceScan,
            detail,
            pids: Vec::new(),
        };
        let planned: Vec<&PathBuf> = entries.iter().map(|e| &e.file).collect();
        let digests = match now.verdict {
            Err(b) if b.reason == Reason::InUse => return Err(b),
            Err(b) => {
                return Err(changed(format!(
                    "the database changed after it was scanned ({}); run again",
                    b.detail
                )));
            }
            Ok(d) => d,
        };
        if now.files.iter().collect::<Vec<_>>() != planned {
            let names: Vec<String> = now
                .files
                .iter()
                .filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect();
            return Err(changed(format!(
                "the database's files changed after they were scanned (now {}): it was opened meanwhile; run again",
                names.join(", ")
            )));
        }
        if entries
            .iter()
            .zip(&digests)
            .any(|(e, d)| e.sha256_before != *d)
        {
            return Err(changed(
                "the database was written after it was scanned; run again".to_string(),
            ));
        }
        Ok(())
    }
}

/// Left alone because it changed while gw-migrate ran.
fn changed(items: &mut [Item], unit: &[usize], why: &str) {
    for &i in unit {
        items[i].set_skipped(Reason::ChangedSinceScan, Some(why.to_string()));
    }
}

fn fail_unit(items: &mut [Item], unit: &[usize], reason: Reason, error: Error) {
    for &i in unit {
        items[i].fail(reason, error.clone());
    }
}
