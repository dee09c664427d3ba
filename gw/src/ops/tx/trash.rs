//! The actions of a retained deletion and of a restore (`RecordTrash`, `RestoreRegistration`,
//! `RestoreBranch`, `DropTrash`): carrying each out, and undoing it. Every path comes from a
//! journal and is checked against the territory first; every removal goes through the
//! safety kernel.

use std::path::{Path, PathBuf};

use super::Undo;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::Ctx;
use crate::ops::safety::{keep, remove};
use crate::state::trash::{KeptRef, Layout, Record};

use super::locks::hold_repos;

/// `RecordTrash`: makes the entry and writes its record (the same record again is done).
pub fn record(ctx: &Ctx<'_>, entry: &Path, record: &Record) -> Result<()> {
    ctx.territory().check_trash_entry(entry)?;
    let layout = Layout::of(entry);
    fsx::create_dir_all(entry)?;
    match Record::read(&layout.record()) {
        Ok(Some(r)) if r == *record => return Ok(()),
        Ok(None) => {}
        Ok(Some(_)) | Err(_) => {
            return Err(Error::new(
                Code::WorkspaceExists,
                format!("the trash entry `{}` exists already", entry.display()),
            ));
        }
    }
    fsx::write_atomic(&layout.record(), record.to_json().as_bytes())?;
    Ok(())
}

/// Undoes [`record`]: the record goes, then the entry and the trash directory when they
/// are empty (the workspace directory was moved back out of it first).
pub fn unrecord(ctx: &Ctx<'_>, entry: &Path) -> Result<Undo> {
    ctx.territory().check_trash_entry(entry)?;
    fsx::remove_file(&Layout::of(entry).record())?;
    // A write of the record killed half way left its temporary file.
    for tmp in crate::ops::trash::temp_files(entry) {
        fsx::remove_file(&tmp)?;
    }
    if fsx::exists(entry) && !fsx::remove_empty_dir(entry) {
        return Ok(Undo::Kept(format!("`{}` is not empty", entry.display())));
    }
    if let Some(parent) = entry.parent() {
        fsx::remove_empty_dir(parent);
    }
    Ok(Undo::Undone)
}

/// The private git directory a restored registration `admin` gets in `source`.
pub fn admin_dir(source: &Path, admin: &str) -> Result<PathBuf> {
    Ok(git::Repo::open(source)?
        .common_dir()
        .join("worktrees")
        .join(admin))
}

/// `RestoreRegistration`: copies the kept private git directory back as
/// `<git dir>/worktrees/<admin>` and links it with the worktree at `path` both ways.
pub fn register(ctx: &Ctx<'_>, source: &Path, kept: &Path, admin: &str, path: &Path) -> Result<()> {
    let territory = ctx.territory();
    territory.check(path, "register the worktree")?;
    territory.check(kept, "read a kept registration from")?;
    if !std::fs::symlink_metadata(kept).is_ok_and(|m| m.is_dir()) {
        return Err(Error::new(
            Code::CorruptState,
            format!(
                "`{}` is not a kept registration (a directory)",
                kept.display()
            ),
        ));
    }
    let _hold = hold_repos(ctx, &[source])?;
    let dir = admin_dir(source, admin)?;
    if fsx::exists(&dir) {
        if !keep::registration_of(&dir, path) {
            return Err(Error::new(
                Code::WorktreeExists,
                format!(
                    "`{}` is the registration of another worktree now",
                    dir.display()
                ),
            )
            .with_fix("Run the restore again: it picks a free name"));
        }
    } else {
        if let Some(parent) = dir.parent() {
            fsx::create_dir_all(parent)?;
        }
        // Copied beside `worktrees/`, never in it (git would take a half copy for a worktree
        // of its own, and refuse to delete its branch), then renamed into place.
        let common = git::Repo::open(source)?.common_dir();
        keep::restore_leftovers(ctx, &common, admin)?;
        let staging = common.join(format!("{}{admin}", keep::STAGING));
        fsx::copy_tree(kept, &staging)?;
        fsx::rename(&staging, &dir)?;
    }
    link(&dir, path)
}

/// Points the registration `dir` at the worktree `path` and the worktree at `dir`, where
/// they do not already (written as `git worktree add` writes them: absolute paths).
fn link(dir: &Path, path: &Path) -> Result<()> {
    let gitfile = path.join(".git");
    if !keep::registration_of(dir, path) {
        fsx::write_atomic(
            &dir.join("gitdir"),
            format!("{}\n", gitfile.display()).as_bytes(),
        )?;
    }
    let points = match git::link(path) {
        git::Link::Linked { admin } => {
            admin == dir || fsx::canonical(&admin) == fsx::canonical(dir)
        }
        _ => false,
    };
    if !points {
        fsx::write_atomic(&gitfile, format!("gitdir: {}\n", dir.display()).as_bytes())?;
    }
    Ok(())
}

/// Undoes [`register`]: the registration goes while it is still the worktree's.
pub fn unregister(ctx: &Ctx<'_>, source: &Path, admin: &str, path: &Path) -> Result<Undo> {
    if !source.is_dir() {
        return Ok(Undo::Undone);
    }
    let _hold = hold_repos(ctx, &[source])?;
    let dir = admin_dir(source, admin)?;
    keep::restore_leftovers(ctx, &git::Repo::open(source)?.common_dir(), admin)?;
    match keep::restored_registration(ctx, &dir, path) {
        Ok(_) => Ok(Undo::Undone),
        Err(e) if e.code == Code::StateChanged => Ok(Undo::Kept(e.message.clone())),
        Err(e) => Err(e),
    }
}

/// `RestoreBranch`: creates the branch at `tip` with its settings.
pub fn branch(
    ctx: &Ctx<'_>,
    source: &Path,
    name: &str,
    tip: &str,
    config: &[(String, String)],
) -> Result<()> {
    let _hold = hold_repos(ctx, &[source])?;
    let repo = git::Repo::open(source)?;
    match repo.local_branch(name) {
        Some(at) if at == tip => {}
        Some(at) => return Err(taken(name, &at)),
        None => git::branch_create(source, name, tip)?,
    }
    let has = git::Repo::open(source)?.branch_config(name);
    for (key, value) in config {
        if !has
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case(key) && v == value)
        {
            git::branch_config_add(source, name, key, value)?;
        }
    }
    Ok(())
}

/// A branch of that name exists already (at `at`).
pub fn taken(name: &str, at: &str) -> Error {
    Error::new(
        Code::BranchConflict,
        format!(
            "branch {name} exists again (at {}), so the deleted one cannot come back",
            at.get(..7).unwrap_or(at)
        ),
    )
    .with_fix("Rename or delete that branch first, or keep the workspace in the trash")
}

/// Undoes [`branch`]: deletes it while it is still at `tip`.
pub fn unbranch(ctx: &Ctx<'_>, source: &Path, name: &str, tip: &str) -> Result<Undo> {
    match remove::branch(ctx, source, name, tip) {
        Ok(_) => Ok(Undo::Undone),
        Err(e) if e.code == Code::StateChanged => Ok(Undo::Kept(e.message.clone())),
        Err(e) => Err(e),
    }
}

/// `DropTrash`: the record, then the kept references (one moved since is left), then the
/// files.
pub fn drop(ctx: &Ctx<'_>, entry: &Path, refs: &[KeptRef]) -> Result<()> {
    ctx.territory().check_trash_entry(entry)?;
    fsx::remove_file(&Layout::of(entry).record())?;
    for r in refs {
        match keep::kept_ref(ctx, &r.source, &r.name, &r.oid) {
            Ok(_) => {}
            Err(e) if e.code == Code::StateChanged => {}
            Err(e) => return Err(e.context(r.repo.as_str())),
        }
    }
    remove::trash(ctx, entry)?;
    Ok(())
}
