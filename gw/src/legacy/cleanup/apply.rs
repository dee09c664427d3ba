//! Carrying out a plan with the manifest written ahead (see [`super::manifest`]).
//!
//! Files are handled in batches so that their flushes to disk can be made together: for a
//! batch, every file is checked again (it must still have the digest it was scanned with)
//! and the copies of those to edit are saved and flushed; then the batch's `intend`
//! records are flushed; then the edited files are written beside the originals and
//! flushed; and only then, file by file, is each renamed over its original (an edit) or
//! moved into the backup (a removal). A stop request is honoured between two files.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use super::cancel::Cancel;
use super::files::{self, Meta, WriteError};
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
    let log = match Log::create(&dir, &id) {
        Ok(l) => l,
        Err(e) => {
            let _ = fsx::remove_dir_all(&dir);
            return Err(e.into());
        }
    };
    let mut run = Run {
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

struct Run {
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

impl Run {
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
            files::write_new(tmp, &mut &bytes[..], *meta, true)
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
            let backup = match item.kind {
                Kind::McpJson => PathBuf::from("files").join(format!("{n:05}.mcp.json")),
                Kind::Database => {
                    PathBuf::from("database").join(item.path.file_name().unwrap_or_default())
                }
            };
            let saved = self.dir.join(&backup);
            let made = fsx::create_dir_all(saved.parent().expect("a copy has a directory"))
                .and_then(|()| match &bytes {
                    Some(b) => fs::File::create_new(&saved)
                        .and_then(|mut f| f.write_all(b))
                        .map_err(|e| fsx::Error::new("write", &saved, e)),
                    None => Ok(()),
                });
            if let Err(e) = made {
                fail_unit(items, unit, Reason::IoError, e.into());
                return None;
            }
            let m = Meta::of(&meta);
            entries.push(Entry {
                n,
                kind: item.kind,
                action,
                path: item.path.clone(),
                file,
                backup,
                sha256_before: before,
                sha256_after: item.edited.as_deref().map(fsx::sha256_hex),
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
        let unchanged = r.entries.iter().all(|e| {
            files::digest(&e.file).is_ok_and(|d| d.as_deref() == Some(e.sha256_before.as_str()))
        });
        if !unchanged {
            if let Some(tmp) = &r.tmp {
                files::remove_tmp(tmp);
            }
            records.extend(r.entries.iter().map(|e| Record::NotDone { n: e.n }));
            for &i in &r.items {
                items[i].set_skipped(
                    Reason::ChangedSinceScan,
                    Some("the file changed while gw-migrate ran; run again".to_string()),
                );
            }
            return;
        }
        if let Some(tmp) = &r.tmp {
            let e = &r.entries[0];
            match fsx::rename(tmp, &e.file) {
                Ok(()) => {
                    records.push(Record::Done { n: e.n });
                    items[r.items[0]].status = Status::Done;
                    self.changed += 1;
                }
                Err(err) => {
                    files::remove_tmp(tmp);
                    records.push(Record::NotDone { n: e.n });
                    fail_unit(items, &r.items, Reason::IoError, err.into());
                }
            }
            return;
        }
        // Moves: all of the unit or none of it.
        let mut moved: Vec<&Entry> = Vec::new();
        for e in &r.entries {
            match files::move_file(&e.file, &self.dir.join(&e.backup)) {
                Ok(()) => moved.push(e),
                Err(err) => {
                    let mut undone = Vec::new();
                    for m in moved.iter().rev() {
                        if files::move_file(&self.dir.join(&m.backup), &m.file).is_ok() {
                            records.push(Record::RolledBack { n: m.n });
                            undone.push(m.n);
                        } else {
                            records.push(Record::Done { n: m.n });
                            self.changed += 1;
                        }
                    }
                    for rest in r
                        .entries
                        .iter()
                        .filter(|x| !moved.iter().any(|m| m.n == x.n))
                    {
                        records.push(Record::NotDone { n: rest.n });
                    }
                    let err = Error::from(err);
                    let detail = if undone.len() == moved.len() {
                        format!("{}; the files that had moved were put back", err.message)
                    } else {
                        format!(
                            "{}; some files that had moved could not be put back (`gw-migrate restore` can)",
                            err.message
                        )
                    };
                    for &i in &r.items {
                        items[i].fail_with(Reason::IoError, detail.clone(), err.clone());
                    }
                    return;
                }
            }
        }
        for e in &r.entries {
            records.push(Record::Done { n: e.n });
            self.changed += 1;
        }
        for &i in &r.items {
            items[i].status = Status::Done;
        }
    }
}

fn fail_unit(items: &mut [Item], unit: &[usize], reason: Reason, error: Error) {
    for &i in unit {
        items[i].fail(reason, error.clone());
    }
}
