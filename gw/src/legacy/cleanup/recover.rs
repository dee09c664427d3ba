//! Completing the record of runs that stopped without finishing it (killed, or the machine
//! went down), before anything else touches the leftovers or their backups. Called under
//! the lock, so no run it looks at is still going.
//!
//! For each file a run intended to change and did not mark, the file's digest tells
//! whether the change happened. The temporary file it may have left is removed when it
//! holds what gw-migrate wrote or what the backup keeps; one holding a version of the file
//! written while the two were swapped goes back in place (or is kept beside it), never
//! removed ([`files::settle`]). A file that was moved into the backup but is not what was
//! read goes back. A unit that moved only in part (some database files in the backup, some
//! not) is moved back, so the database is whole again in one place. A run that in the end
//! changed nothing leaves no backup.

use std::collections::BTreeSet;
use std::path::Path;

use super::files;
use super::manifest::{self, Log, Manifest, Record, Standing, State};
use super::model::Action;
use crate::fsx;
use crate::home::GroveHome;

/// Completes every unfinished manifest; returns what a person should know.
pub(super) fn recover(home: &GroveHome) -> Vec<String> {
    let mut notes = Vec::new();
    for l in manifest::list(home) {
        match l.standing {
            Ok(Standing::Unfinished | Standing::Restoring) => {}
            Ok(Standing::Finished | Standing::Restored) => continue,
            // A run killed before its first record was whole changed nothing.
            Err(_) if fsx::remove_empty_dir(&l.dir) || manifest::remove_if_blank(&l.dir) => {
                continue;
            }
            Err(why) => {
                notes.push(format!(
                    "backup {} cannot be used: {why}; `gw-migrate restore` leaves it alone",
                    l.id
                ));
                continue;
            }
        }
        let m = match l.manifest(home) {
            Ok(m) => m,
            Err(why) => {
                // A run killed right after making its directory leaves it empty.
                if !fsx::remove_empty_dir(&l.dir) {
                    notes.push(format!(
                        "backup {} cannot be used: {why}; `gw-migrate restore` leaves it alone",
                        l.id
                    ));
                }
                continue;
            }
        };
        if !m.finished {
            match finish_run(&l.dir, &m) {
                Ok(Some(note)) => notes.push(note),
                Ok(None) => {}
                Err(e) => notes.push(format!(
                    "backup {}: an interrupted run could not be completed: {e}",
                    l.id
                )),
            }
        }
        if m.restoring {
            for e in &m.entries {
                let e = &e.entry;
                let tmp = files::tmp_for(&e.file, &m.id, e.n, true);
                // A removed file goes back by a rename, never an exchange: its temporary
                // file only ever holds the copy.
                let Some(after) = e.sha256_after.as_deref() else {
                    files::remove_tmp(&tmp);
                    continue;
                };
                let before = e.sha256_before.as_str();
                let settled =
                    files::settle(&tmp, &e.file, &[before, after], Some(before), Some(after));
                if let files::Settled::Kept(kept) = settled {
                    notes.push(kept_note(&e.file, &kept));
                }
            }
            let ended = Log::reopen(&l.dir, &m).and_then(|mut log| {
                log.write(
                    &[Record::RestoreEnded {
                        at: crate::time::now_utc(),
                        complete: false,
                    }],
                    true,
                )
            });
            if let Err(e) = ended {
                notes.push(format!("backup {}: {e}", l.id));
            }
        }
    }
    notes
}

fn finish_run(dir: &Path, m: &Manifest) -> Result<Option<String>, fsx::Error> {
    let mut states: Vec<State> = m.entries.iter().map(|l| l.state).collect();
    let mut records = Vec::new();
    let mut notes = Vec::new();
    for (k, l) in m.entries.iter().enumerate() {
        if l.state != State::Intended {
            continue;
        }
        let e = &l.entry;
        let tmp = files::tmp_for(&e.file, &m.id, e.n, false);
        let after = e.sha256_after.as_deref();
        let derivable = [e.sha256_before.as_str(), after.unwrap_or_default()];
        let settled = files::settle(&tmp, &e.file, &derivable, after, Some(&e.sha256_before));
        if let files::Settled::Kept(kept) = &settled {
            notes.push(kept_note(&e.file, kept));
        }
        let Ok(now) = files::digest(&e.file) else {
            continue;
        };
        let before = Some(e.sha256_before.as_str());
        let outcome = match (e.action, now.as_deref()) {
            (_, d) if d == before => Some(State::NotDone),
            // An edit made while the file was swapped out is back in place of gw-migrate's.
            _ if settled == files::Settled::PutBack => Some(State::NotDone),
            (Action::RemoveEntry, d) if d.is_some() && d == e.sha256_after.as_deref() => {
                Some(State::Done)
            }
            (Action::DeleteFile | Action::MoveDatabase, None) => {
                let saved = dir.join(&e.backup);
                match files::digest(&saved).ok().flatten() {
                    Some(copy) if Some(copy.as_str()) == before => Some(State::Done),
                    // Changed just before it moved, and the run was killed before it could
                    // compare: it goes back.
                    Some(_) if files::rename_new(&saved, &e.file).unwrap_or(false) => {
                        Some(State::RolledBack)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(s) = outcome {
            states[k] = s;
            records.push(record(s, e.n));
        }
    }
    // A unit moved in part goes back whole.
    let units: BTreeSet<usize> = m.entries.iter().filter_map(|l| l.entry.unit).collect();
    for u in units {
        let members: Vec<usize> = (0..m.entries.len())
            .filter(|&k| m.entries[k].entry.unit == Some(u))
            .collect();
        let done: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&k| states[k] == State::Done)
            .collect();
        if done.is_empty() || done.len() == members.len() {
            continue;
        }
        for k in done {
            let e = &m.entries[k].entry;
            if files::rename_new(&dir.join(&e.backup), &e.file)? {
                states[k] = State::RolledBack;
                records.push(Record::RolledBack { n: e.n });
            } else {
                notes.push(format!(
                    "`{}` was moved into the backup and cannot go back: a new file is in its place",
                    e.file.display()
                ));
            }
        }
    }
    records.push(Record::Finished {
        at: crate::time::now_utc(),
        cancelled: false,
        interrupted: true,
    });
    Log::reopen(dir, m)?.write(&records, true)?;
    let changed = states
        .iter()
        .filter(|s| !matches!(s, State::NotDone | State::RolledBack))
        .count();
    if changed == 0 {
        fsx::remove_dir_all(dir)?;
        return Ok((!notes.is_empty()).then(|| notes.join("; ")));
    }
    notes.insert(
        0,
        format!(
            "the run of backup {} was interrupted; its manifest is completed ({changed} file{} changed; `gw-migrate restore {}` puts {} back)",
            m.id,
            if changed == 1 { "" } else { "s" },
            m.id,
            if changed == 1 { "it" } else { "them" }
        ),
    );
    Ok(Some(notes.join("; ")))
}

fn record(s: State, n: usize) -> Record {
    match s {
        State::Done => Record::Done { n },
        State::NotDone => Record::NotDone { n },
        State::RolledBack => Record::RolledBack { n },
        State::Intended => unreachable!("an outcome is recorded"),
    }
}

fn kept_note(file: &Path, kept: &Path) -> String {
    format!(
        "`{}` changed while gw-migrate swapped it; that version is kept at `{}`: compare the two and keep the right one",
        file.display(),
        kept.display()
    )
}
