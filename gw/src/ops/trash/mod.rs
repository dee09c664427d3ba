//! Quarantine: what a delete or remove-repo takes away is first renamed into the workspace
//! directory's `.trash` (one rename on the same file system, undone by renaming it back),
//! and its bytes are removed afterwards, in the background.
//!
//! Entries are named `<name>-<nanoseconds>`, the name cut to fit a file name, so that
//! `gw doctor` can tell which workspace a leftover entry came from. Nothing outside a
//! workspace directory's `.trash` is ever removed here ([`crate::ops::safety::territory`]).

mod kept;
mod list;
mod record;
mod retention;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use crate::state::trash::{Layout, Reason, kept_ref};
pub use kept::{Contents, Kept, contents, find, is_retained, named, newest};
pub use list::{TrashEntry, TrashReport, TrashSummary, age, list, summary};
pub use record::record_of;
pub use retention::{
    EmptyReport, TidyReport, ago, empty, expired, known_sources, now, purge, refs_in, refs_of,
    sweep, tidy, tidy_in_background,
};

use crate::error::Result;
use crate::home;
use crate::ops::Ctx;

/// The most bytes of a name kept in a trash entry's name: with the suffix it stays well
/// inside a file name's 255.
const NAME_BYTES: usize = 100;

/// `<parent of path>/.trash/<base>-<nanos>`: in the same file system as `path`, so
/// moving it there is one rename however many files it holds.
pub fn path_for(path: &Path, base: &str) -> PathBuf {
    let parent = path.parent().unwrap_or(Path::new("/"));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    home::trash_dir(parent).join(format!("{}-{nanos}", cut(base)))
}

/// Whether the trash entry `entry` came from the directory `from` (a workspace's).
pub fn belongs_to(entry: &Path, from: &Path) -> bool {
    origin(entry).is_some_and(|o| Some(o) == origin_of(from))
}

/// The name a trash entry was made from (`<name>-<nanos>` → `<name>`).
pub fn origin(entry: &Path) -> Option<String> {
    let name = entry.file_name()?.to_string_lossy().into_owned();
    name.rsplit_once('-').map(|(base, _)| base.to_string())
}

/// The name trash entries of the directory `dir` are made from.
pub fn origin_of(dir: &Path) -> Option<String> {
    Some(cut(&dir.file_name()?.to_string_lossy()).to_string())
}

/// `name` cut to at most [`NAME_BYTES`], on a character boundary.
fn cut(name: &str) -> &str {
    let mut end = name.len().min(NAME_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// The temporary files of a record or size being written in `entry` (`.trash.json.…tmp`,
/// `.size.json.…tmp`), left there by a process killed while it wrote.
pub fn temp_files(entry: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(entry)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        (n.starts_with(".trash.json.") || n.starts_with(".size.json."))
                            && n.ends_with(".tmp")
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// An entry that holds nothing but [`temp_files`]: a delete killed while it wrote the
/// record, before anything moved in.
pub fn holds_nothing(entry: &Path) -> bool {
    let temps = temp_files(entry);
    std::fs::read_dir(entry).is_ok_and(|d| d.flatten().all(|e| temps.contains(&e.path())))
}

/// Every entry of the workspace directories' trash, sorted.
pub fn entries(ctx: &Ctx<'_>) -> Vec<PathBuf> {
    entries_all(ctx.territory())
}

/// Every entry of the trash of `territory`'s workspace directories, sorted.
pub fn entries_all(territory: &crate::ops::safety::Territory) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in territory.trash_dirs() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = read.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        found.sort();
        out.extend(found);
    }
    out
}

/// `gw unlink-trash`'s result.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct UnlinkReport {
    pub removed: PathBuf,
}

/// `gw unlink-trash PATH` (hidden): removes a quarantined workspace or worktree. Refuses
/// anything that is not an entry of a workspace directory's `.trash`.
pub fn unlink(ctx: &Ctx<'_>, path: &Path) -> Result<UnlinkReport> {
    ctx.territory().check_trash_entry(path)?;
    // What a purge killed half way left: the references it had not removed yet, in the
    // repositories grove knows (an entry without a record no longer says which).
    if let Some(id) = Layout::of(path).id() {
        let known = known_sources(ctx);
        let sources: Vec<PathBuf> = known.iter().cloned().collect();
        let all = sources.iter().map(|s| ("", s.as_path()));
        for r in refs_in(&id, all, &known) {
            let _ = crate::ops::safety::keep::kept_ref(ctx, &r.source, &r.name, &r.oid);
        }
    }
    let mut last = None;
    for _ in 0..10 {
        match crate::ops::safety::remove::trash(ctx, path) {
            Ok(_) => {
                return Ok(UnlinkReport {
                    removed: path.to_path_buf(),
                });
            }
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Err(last.expect("ten attempts failed"))
}

/// Removes `entry` in a detached `gw unlink-trash` process, so a huge tree does not hold
/// up the command; falls back to removing it here.
pub fn unlink_in_background(ctx: &Ctx<'_>, entry: &Path) {
    if let Some(exe) = &ctx.env.exe {
        let mut cmd = crate::proc::Cmd::new(exe, ctx.home.root());
        cmd.arg("unlink-trash").arg(entry);
        if cmd.spawn_detached().is_ok() {
            return;
        }
    }
    let _ = unlink(ctx, entry);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_fit_a_file_name_and_say_whose_they_are() {
        let long = "é".repeat(127);
        let ws = Path::new("/w").join(&long);
        let entry = path_for(&ws, &long);
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.len() < 140, "{}", name.len());
        assert_eq!(entry.parent().unwrap(), Path::new("/w/.trash"));
        assert!(belongs_to(&entry, &ws));
        assert!(!belongs_to(&entry, Path::new("/w/other")));
        assert!(belongs_to(
            &path_for(Path::new("/w/a"), "a"),
            Path::new("/w/a")
        ));
        assert!(!belongs_to(
            &path_for(Path::new("/w/ab"), "ab"),
            Path::new("/w/a")
        ));
    }
}
