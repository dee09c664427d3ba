//! Where the shell is to go after a command, and telling it (the shell integration's
//! `GROVE_CD_FILE`, see `ops::shell_init`) or the person (a hint).
//!
//! A command asks for it (`gw go` and `gw create` lead into a workspace, `gw rename` moves
//! the one the shell is in), or finds the shell's directory gone: a command removed it
//! (`gw delete`, `remove-repo`, `prune`, a plan of them), or moved it back from the trash
//! (`gw undo`, `gw restore` from a shell left in a workspace deleted elsewhere). The shell
//! then goes somewhere that exists and is not in grove's trash: where its directory is now
//! (restored); else the nearest directory above that is still inside a workspace (a removed
//! repository's workspace); else where it was before `gw go` took it into the workspace
//! (`GROVE_RETURN_DIR`); else the nearest directory above (the workspaces' directory, also
//! for a shell whose directory was in the trash).

use std::path::{Path, PathBuf};

use crate::fsx;
use crate::home;
use crate::ops::Ctx;
use crate::output::{self, Printer};

/// Where the shell should go after the command: `asked` when the command says so, else,
/// when the shell's directory is gone, a directory that exists — never into grove's trash
/// (`.trash`), where a directory the shell stood in may have gone.
pub fn destination(ctx: &Ctx<'_>, asked: Option<PathBuf>) -> Option<PathBuf> {
    if asked.is_some() {
        return asked;
    }
    let cwd = &ctx.env.cwd;
    if fsx::is_dir(cwd) {
        return None;
    }
    let workspaces = ctx.config().ok().map(|c| fsx::canonical(&c.workspace_dir));
    // Strictly inside the workspaces' directory, not in its trash.
    let inside = |d: &Path| {
        let c = fsx::canonical(d);
        workspaces
            .as_ref()
            .is_some_and(|w| c != *w && c.starts_with(w))
            && !in_trash(workspaces.as_deref(), d)
    };
    // The directory itself moved, not removed: a restore (`gw undo`, `gw restore`) put the
    // workspace the shell stood in back from the trash. The process's directory is where
    // it is now.
    if let Ok(now) = std::env::current_dir()
        && fsx::is_dir(&now)
        && inside(&now)
    {
        return Some(now);
    }
    let above = cwd
        .ancestors()
        .skip(1)
        .find(|d| fsx::is_dir(d))?
        .to_path_buf();
    if inside(&above) {
        return Some(above);
    }
    match &ctx.env.return_dir {
        Some(back) if fsx::is_dir(back) && !in_trash(workspaces.as_deref(), back) => {
            Some(back.clone())
        }
        _ if in_trash(workspaces.as_deref(), &above) => workspaces,
        _ => Some(above),
    }
}

/// Whether `dir` lies in the trash of the workspaces' directory `workspaces`.
fn in_trash(workspaces: Option<&Path>, dir: &Path) -> bool {
    workspaces.is_some_and(|w| fsx::canonical(dir).starts_with(home::trash_dir(w)))
}

/// Tells the shell integration to go to `dest`; without the integration, or when the
/// integration's function runs in a subshell, when the shell's directory was removed by
/// this command (`stranded`), tells the person where to go.
pub fn deliver(ctx: &Ctx<'_>, p: &mut Printer, dest: &Path, stranded: bool) {
    match ctx.env.cd_file.as_deref() {
        // The shell integration cds there afterwards; failing to tell it is not worth
        // failing the command for.
        Some(cd) => {
            let _ = fsx::write_atomic(cd, dest.to_string_lossy().as_bytes());
            // In a subshell (a bash pipeline, `$(…)`) the function's cd is lost with it.
            if stranded && ctx.env.subshell {
                output::stranded_hint(p, &ctx.env.cwd, dest, true);
            }
        }
        None if stranded => output::stranded_hint(p, &ctx.env.cwd, dest, false),
        None => {}
    }
}
