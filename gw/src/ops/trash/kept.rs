//! The retained entries of the trash: what `gw trash` lists, `gw restore` and `gw undo`
//! bring back, and retention purges. An entry is retained when it holds a readable record
//! (`trash.json`) and no operation is still at work on it.

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::ops::Ctx;
use crate::state::trash::{Layout, Record, Size};

/// One retained entry.
#[derive(Debug, Clone)]
pub struct Kept {
    pub entry: PathBuf,
    /// The entry's directory name, `<name>-<nanos>`: how `gw restore` can name it.
    pub id: String,
    pub record: Record,
    /// When it went; `None` when the record's time cannot be read (it never expires by
    /// age then, only by size).
    pub deleted: Option<Timestamp>,
    /// How much it holds, once measured.
    pub size: Option<Size>,
}

impl Kept {
    pub fn layout(&self) -> Layout {
        Layout::of(&self.entry)
    }
}

/// What the trash holds: the retained entries, oldest first, and the entries whose record
/// cannot be read (path, why).
#[derive(Debug, Default)]
pub struct Contents {
    pub kept: Vec<Kept>,
    pub corrupt: Vec<(PathBuf, String)>,
    /// Retained entries an operation still has (a delete whose cleanup awaits
    /// `gw doctor --fix`, a restore under way), oldest first.
    pub busy: Vec<Kept>,
}

/// Reads the trash of every workspace directory. Entries an interrupted or running
/// operation names are left out: they are that operation's until it ends or is recovered.
pub fn contents(ctx: &Ctx<'_>) -> Contents {
    let busy: Vec<PathBuf> = crate::ops::recover::journaled_paths(ctx)
        .iter()
        .filter_map(|p| crate::fsx::canonical_lenient(p))
        .collect();
    let mut out = Contents::default();
    for entry in super::entries(ctx) {
        let layout = Layout::of(&entry);
        // Only a directory of its own: a symbolic link named like an entry is no entry
        // (it would list one twice, or lead elsewhere).
        match std::fs::symlink_metadata(&entry) {
            Ok(m) if m.file_type().is_symlink() => {
                out.corrupt
                    .push((entry, "it is a symbolic link, not an entry".into()));
                continue;
            }
            Ok(m) if m.is_dir() => {}
            _ => continue,
        }
        let journaled = crate::fsx::canonical_lenient(&entry).is_some_and(|c| {
            busy.iter()
                .any(|b| b == &c || b.starts_with(&c) && b.parent() == Some(c.as_path()))
        });
        match Record::read(&layout.record()) {
            Ok(Some(record)) => {
                let id = entry
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let list = if journaled {
                    &mut out.busy
                } else {
                    &mut out.kept
                };
                list.push(Kept {
                    deleted: crate::time::parse_created_at(&record.deleted_at),
                    size: Size::read(&layout),
                    entry,
                    id,
                    record,
                });
            }
            Ok(None) => {}
            Err(_) if journaled => {}
            Err(e) => out.corrupt.push((entry, e.to_string())),
        }
    }
    // In the order they went: an entry's name ends in the nanosecond it was made.
    out.kept.sort_by_key(|k| (nanos(&k.entry), k.id.clone()));
    out.busy.sort_by_key(|k| (nanos(&k.entry), k.id.clone()));
    out
}

/// The nanosecond an entry was made, from its name (`<name>-<nanos>`).
fn nanos(entry: &Path) -> u128 {
    Layout::of(entry)
        .id()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The entry `name` names: a workspace's name (its newest entry) or an entry's id.
pub fn find<'c>(contents: &'c Contents, name: &str) -> Option<&'c Kept> {
    named(&contents.kept, name)
}

/// The entry of `list` (oldest first) that `name` names.
pub fn named<'c>(list: &'c [Kept], name: &str) -> Option<&'c Kept> {
    list.iter()
        .rev()
        .find(|k| k.id == name)
        .or_else(|| list.iter().rev().find(|k| k.record.name == name))
}

/// The entry deleted last of all, retained or still an operation's.
pub fn newest(contents: &Contents) -> Option<&Kept> {
    contents
        .kept
        .iter()
        .chain(&contents.busy)
        .max_by_key(|k| (nanos(&k.entry), k.id.clone()))
}

/// Whether `path` lies in a retained entry (a trash entry with a record).
pub fn is_retained(entry: &Path) -> bool {
    crate::fsx::exists(&Layout::of(entry).record())
}
