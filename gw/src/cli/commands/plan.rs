//! `gw plan <command> …` and `gw apply PLAN|-`.
//!
//! `gw plan` takes exactly the arguments of the command it plans (the same `Args`
//! structs), never prompts, and prints the plan document. `gw apply` reads a plan (or a
//! saved `gw plan` envelope), and runs the command from the plan's recorded inputs with the
//! plan as its expectation: it executes only if nothing the plan depends on has changed.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::cleanup::PruneArgs;
use super::daily::{self, AddRepoArgs, RemoveRepoArgs, RenameArgs, ResetArgs, SyncArgs};
use super::trash::{self, RestoreArgs, UndoArgs};
use super::workspace::{self, CreateArgs, DeleteArgs};
use crate::cli::{CmdResult, Out, Ui};
use crate::error::Error;
use crate::fsx;
use crate::ops::prune::PruneOptions;
use crate::ops::{self, Ctx};

/// Preview a mutating command: what it would change, and what that depends on
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Also write the plan document to FILE (for `gw apply FILE`)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(subcommand)]
    pub command: PlanCommand,
}

/// `--dry-run` (and `--out`) of every command `gw plan` plans: the command's plan, shown
/// by `gw plan` itself. In `gw plan COMMAND …`, `--out` is the plan's own and `--dry-run`
/// is hidden (a plan changes nothing anyway).
#[derive(Debug, Args, Default)]
pub struct DryRun {
    /// Change nothing: show the plan of what this would do (what `gw plan` shows)
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: also write the plan to FILE (for `gw apply FILE`)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl DryRun {
    /// Whether the command is only to be planned: `--dry-run`. `--out` without it is a
    /// mistake (the command would run), refused before anything happens.
    pub fn asked(&self) -> Result<bool, Error> {
        if self.out.is_some() && !self.dry_run {
            return Err(Error::usage("--out saves the plan of a dry run")
                .with_fix("Add --dry-run to save the plan without changing anything"));
        }
        Ok(self.dry_run)
    }
}

/// `--dry-run` of a configuration edit (`init`, `add-dir`, `preset add`, `trust`, `plugin
/// install`, …): it validates exactly as the command does and shows what would change,
/// writing nothing. These are no `gw plan` kinds, so there is no plan to save: `--out` is
/// refused (it is accepted by the parser only to say so).
#[derive(Debug, Args, Default)]
pub struct EditDryRun {
    /// Change nothing: check everything and show what would change
    #[arg(long)]
    pub dry_run: bool,
    /// (Not for this command: its dry run is shown, not saved as a plan)
    #[arg(long, value_name = "FILE", hide = true)]
    pub out: Option<PathBuf>,
}

impl EditDryRun {
    /// Whether only a dry run is asked for; `--out` (with `--dry-run` or not) is a `USAGE`
    /// error for `gw {command}`, before anything happens.
    pub fn asked(&self, command: &str) -> Result<bool, Error> {
        if self.out.is_some() {
            return Err(Error::usage(format!(
                "`gw {command}` makes no plan for --out to save: `gw plan` and `gw apply` cover the workspace commands, not configuration edits"
            ))
            .with_fix(format!(
                "Drop --out: `gw {command} … --dry-run` shows what would change, and the same command without --dry-run makes the change"
            )));
        }
        Ok(self.dry_run)
    }
}

/// `COMMAND --dry-run`: exactly `gw plan COMMAND …`.
pub fn dry_run(ctx: &Ctx<'_>, command: PlanCommand, ui: Ui) -> CmdResult {
    plan(ctx, PlanArgs { out: None, command }, ui)
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Plan `gw create`
    Create(CreateArgs),
    /// Plan `gw delete`
    Delete(DeleteArgs),
    /// Plan `gw add-repo`
    AddRepo(AddRepoArgs),
    /// Plan `gw remove-repo`
    RemoveRepo(RemoveRepoArgs),
    /// Plan `gw rename`
    Rename(RenameArgs),
    /// Plan `gw reset`
    Reset(ResetArgs),
    /// Plan `gw sync`
    Sync(SyncArgs),
    /// Plan `gw prune --yes` (the workspaces it would delete), or `gw prune branches --yes`
    Prune(PruneArgs),
    /// Plan `gw restore`
    Restore(RestoreArgs),
    /// Plan `gw undo`: which deleted workspace it would restore, and how
    Undo(UndoArgs),
}

impl PlanCommand {
    /// The `--dry-run`/`--out` arguments the planned command was given.
    fn dry_run(&self) -> &DryRun {
        match self {
            PlanCommand::Create(c) => &c.dry,
            PlanCommand::Delete(c) => &c.dry,
            PlanCommand::AddRepo(c) => &c.dry,
            PlanCommand::RemoveRepo(c) => &c.dry,
            PlanCommand::Rename(c) => &c.dry,
            PlanCommand::Reset(c) => &c.dry,
            PlanCommand::Sync(c) => &c.dry,
            PlanCommand::Prune(c) => match &c.command {
                Some(super::cleanup::PruneCommand::Branches(b)) => &b.dry,
                None => &c.dry,
            },
            PlanCommand::Restore(c) => &c.dry,
            PlanCommand::Undo(c) => &c.dry,
        }
    }
}

pub fn plan(ctx: &Ctx<'_>, a: PlanArgs, ui: Ui) -> CmdResult {
    // A plan never asks: anything missing is a USAGE error naming the flag.
    let ui = Ui {
        interactive: false,
        ..ui
    };
    let out = a.out.or_else(|| a.command.dry_run().out.clone());
    let doc = match a.command {
        PlanCommand::Create(c) => {
            ops::create::plan_doc(ctx, &workspace::create_options(ctx, c, ui)?)?
        }
        PlanCommand::Delete(c) => {
            ops::delete::plan_doc(ctx, &workspace::delete_options(ctx, c, ui)?)?
        }
        PlanCommand::AddRepo(c) => {
            ops::add_repo::plan_doc(ctx, &daily::add_repo_options(ctx, c, ui)?)?
        }
        PlanCommand::RemoveRepo(c) => {
            ops::remove_repo::plan_doc(ctx, &daily::remove_repo_options(ctx, c, ui)?)?
        }
        PlanCommand::Rename(c) => ops::rename::plan_doc(ctx, &daily::rename_options(c))?,
        PlanCommand::Reset(c) => ops::reset::plan_doc(ctx, &daily::reset_options(c))?,
        PlanCommand::Sync(c) => ops::sync::plan_doc(ctx, &daily::sync_options(c))?,
        PlanCommand::Prune(c) => match &c.command {
            Some(super::cleanup::PruneCommand::Branches(b)) => {
                ops::prune::branches_plan_doc(ctx, &super::cleanup::prune_branches_options(b))?
            }
            None => ops::prune::plan_doc(
                ctx,
                &PruneOptions {
                    min_age: c.min_age,
                    yes: true,
                    expect: None,
                },
            )?,
        },
        PlanCommand::Restore(c) => ops::restore::plan_doc(ctx, &trash::restore_options(c))?,
        PlanCommand::Undo(_) => ops::restore::plan_doc(ctx, &trash::undo_options())?,
    };
    let mut saved = None;
    if let Some(out) = out {
        let path = plan_file(&ctx.env.resolve_path(&out), &out)?;
        if ctx.territory().is_groves_own(ctx.home.root(), &path) {
            return Err(Error::usage(format!(
                "`{}` is grove's own (its directory, or a workspace directory outside any workspace); --out does not write there",
                path.display()
            ))
            .with_fix("Save the plan elsewhere: `--out plan.json` in your own directory"));
        }
        let text = serde_json::to_string_pretty(&doc).expect("plans serialise");
        if crate::redact::has_url_userinfo(&text) {
            // grove writes no credential to disk; the plan's inputs hold a URL's.
            return Err(Error::usage(format!(
                "the plan holds a URL with credentials, which grove does not write to disk (`{}`)",
                path.display()
            ))
            .with_fix("Let git's credential helper supply them and pass the URL without, or pipe the plan: `gw plan … --format json | gw apply -`"));
        }
        fsx::write_atomic(&path, text.as_bytes())?;
        saved = Some(path);
    }
    Ok(Out::new(crate::output::render::Planned { doc, saved }))
}

/// Where `--out` may write a plan: a new file, or over a regular file (replaced whole), in
/// a directory that exists. Never over anything else — a device, a FIFO, a directory, a
/// symbolic link (writing replaces the entry, and `/dev/null` is no place to replace) — and
/// `-` is no file name here: stdout already has the plan.
fn plan_file(path: &std::path::Path, given: &std::path::Path) -> crate::error::Result<PathBuf> {
    let fix = "Name a new file or a regular file (`--out plan.json`), or pipe the plan: `gw plan … --format json | gw apply -`";
    if given.as_os_str() == "-" {
        return Err(
            Error::usage("`--out -`: the plan is on stdout already; --out names a file")
                .with_fix(fix),
        );
    }
    let refuse = |what: &str| {
        Err(Error::usage(format!(
            "`{}` is {what}; --out writes a regular file",
            path.display()
        ))
        .with_fix(fix))
    };
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => return refuse("a symbolic link"),
        Ok(m) if m.is_dir() => return refuse("a directory"),
        Ok(m) if !m.is_file() => {
            return refuse("not a regular file (a device, a FIFO or a socket)");
        }
        Ok(_) => {}
        // Nothing there, or no directory to hold it (said below).
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) => {}
        Err(e) => return Err(fsx::Error::new("look at", path, e).into()),
    }
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(Error::usage(format!(
            "`{}` is not a directory, so `{}` cannot be written",
            dir.display(),
            path.display()
        ))
        .with_fix(fix)),
        _ => Ok(path.to_path_buf()),
    }
}

/// Execute a plan made by `gw plan`, if nothing it depends on has changed
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// A plan document or a saved `gw plan --format json` envelope; `-` reads stdin
    pub plan: String,
}

pub fn apply(ctx: &Ctx<'_>, a: ApplyArgs) -> CmdResult {
    use ops::apply::{Applied, PlanSource};
    let path = ctx.env.resolve_path(std::path::Path::new(&a.plan));
    let source = if a.plan == "-" {
        PlanSource::Stdin
    } else {
        PlanSource::File(&path)
    };
    let doc = ops::apply::read(source)?;
    Ok(match ops::apply::apply(ctx, &doc)? {
        Applied::Create(r) => Out::new(*r),
        Applied::Delete(r) => Out::new(r),
        Applied::AddRepo(r) => Out::new(r),
        Applied::RemoveRepo(r) => Out::new(r),
        Applied::Rename(r) => {
            let cd = r.cwd_moved_to.clone();
            Out::new(r).with_cd(cd)
        }
        Applied::Reset(r) => Out::new(r),
        Applied::Sync(r) => Out::new(r),
        Applied::Prune(r) => Out::new(r),
        Applied::PruneBranches(r) => Out::new(r),
        Applied::Restore(r) => Out::new(r),
    })
}

#[cfg(test)]
mod tests {
    use super::plan_file;
    use std::path::Path;

    #[test]
    fn a_plan_is_written_only_as_a_regular_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let at = |name: &str| dir.join(name);
        let ok = |p: &Path| plan_file(p, p).map(|_| ()).map_err(|e| e.code);
        assert_eq!(ok(&at("new.json")), Ok(()));
        crate::fsx::write_atomic(&at("old.json"), b"{}").unwrap();
        assert_eq!(ok(&at("old.json")), Ok(()), "a regular file is replaced");
        std::os::unix::fs::symlink(at("old.json"), at("link")).unwrap();
        std::os::unix::fs::symlink("/dev/null", at("null")).unwrap();
        // POSIX's `mkfifo` (rustix has no `mkfifoat` on Apple's systems).
        crate::proc::Cmd::new("mkfifo", dir)
            .arg(at("fifo"))
            .check()
            .unwrap();
        for refused in ["link", "null", "fifo", ""] {
            assert_eq!(
                ok(&at(refused)),
                Err(crate::error::Code::Usage),
                "{refused:?}"
            );
        }
        assert_eq!(ok(Path::new("/dev/null")), Err(crate::error::Code::Usage));
        assert_eq!(
            ok(&at("old.json/x")),
            Err(crate::error::Code::Usage),
            "under a file"
        );
        assert_eq!(
            ok(&at("nowhere/x.json")),
            Err(crate::error::Code::Usage),
            "under nothing"
        );
        let dash = Path::new("-");
        assert_eq!(
            plan_file(&at("-"), dash).map(|_| ()).map_err(|e| e.code),
            Err(crate::error::Code::Usage)
        );
    }
}
