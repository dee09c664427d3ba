//! Where the shell is to go after a command, and telling it (the shell integration's
//! `GROVE_CD_FILE`, see `ops::shell_init`) or the person (a hint).
//!
//! A command asks for it (`gw go` and `gw create` lead into a workspace, `gw rename` moves
//! the one the shell is in), or finds the shell's directory gone: a command removed it
//! (`gw delete`, `remove-repo`, `prune`, a plan of them). The shell then goes somewhere that
//! exists: the nearest directory above that is still inside a workspace (a removed
//! repository's workspace); else where it was before `gw go` took it into the workspace
//! (`GROVE_RETURN_DIR`); else the nearest directory above (the workspaces' directory).

use std::path::{Path, PathBuf};

use crate::fsx;
use crate::ops::Ctx;
use crate::output::{self, Printer};

/// Where the shell should go after the command: `asked` when the command says so, else,
/// when the shell's directory is gone, a directory that exists.
pub fn destination(ctx: &Ctx<'_>, asked: Option<PathBuf>) -> Option<PathBuf> {
    if asked.is_some() {
        return asked;
    }
    let cwd = &ctx.env.cwd;
    if fsx::is_dir(cwd) {
        return None;
    }
    let above = cwd
        .ancestors()
        .skip(1)
        .find(|d| fsx::is_dir(d))?
        .to_path_buf();
    let in_workspace = ctx
        .config()
        .ok()
        .map(|c| fsx::canonical(&c.workspace_dir))
        .is_some_and(|dir| {
            let above = fsx::canonical(&above);
            above != dir && above.starts_with(&dir)
        });
    if in_workspace {
        return Some(above);
    }
    match &ctx.env.return_dir {
        Some(back) if fsx::is_dir(back) => Some(back.clone()),
        _ => Some(above),
    }
}

/// Tells the shell integration to go to `dest`; without the integration, when the shell's
/// directory was removed by this command (`stranded`), tells the person where to go.
pub fn deliver(ctx: &Ctx<'_>, p: &mut Printer, dest: &Path, stranded: bool) {
    match ctx.env.cd_file.as_deref() {
        // The shell integration cds there afterwards; failing to tell it is not worth
        // failing the command for.
        Some(cd) => {
            let _ = fsx::write_atomic(cd, dest.to_string_lossy().as_bytes());
        }
        None if stranded => output::stranded_hint(p, &ctx.env.cwd, dest),
        None => {}
    }
}
