//! One function per command: arguments → options → one operation → a report.

pub mod bug_report;
pub mod cleanup;
pub mod daily;
pub mod plan;
pub mod plugin;
pub mod run;
pub mod setup;
pub mod trash;
pub mod trust;
pub mod workspace;

use super::args::{Command, Format};
use super::{CmdResult, Ui};
use crate::error::Error;
use crate::ops::Ctx;
use setup::PresetCommand;
use workspace::WsCommand;

pub fn dispatch(ctx: &Ctx<'_>, command: Command, ui: Ui, format: Option<Format>) -> CmdResult {
    if let Some(f @ (Format::Shell | Format::Dotenv)) = format
        && !matches!(command, Command::Env(_))
    {
        let name = if f == Format::Shell {
            "shell"
        } else {
            "dotenv"
        };
        return Err(
            Error::usage(format!("`--format {name}` is only for `gw env`"))
                .with_fix("Use --format text or --format json"),
        );
    }
    match command {
        Command::Init(a) => setup::init(ctx, a),
        Command::AddDir(a) => setup::add_dir(ctx, a),
        Command::RemoveDir(a) => setup::remove_dir(ctx, a, ui),
        Command::Repos(a) => setup::repos(ctx, a),
        Command::Create(a) => workspace::create(ctx, a, ui),
        Command::Context(a) => workspace::context(ctx, a),
        Command::Plan(a) => plan::plan(ctx, a, ui),
        Command::Apply(a) => plan::apply(ctx, a),
        Command::List(a) => workspace::list(ctx, a, ui),
        Command::Ws(ws) => match ws.command {
            WsCommand::List(a) => workspace::list(ctx, a, ui),
            WsCommand::Show(a) => workspace::show(ctx, a, ui),
            WsCommand::Delete(a) => workspace::delete(ctx, a, ui),
        },
        Command::Status(a) => workspace::status(ctx, a, ui),
        Command::Go(a) => workspace::go(ctx, a, ui),
        Command::ShellInit(a) => setup::shell_init(ctx, a),
        Command::Delete(a) => workspace::delete(ctx, a, ui),
        Command::Preset(p) => match p.command {
            PresetCommand::Add(a) => setup::preset_add(ctx, a, ui),
            PresetCommand::List(a) => setup::preset_list(ctx, a),
            PresetCommand::Show(a) => setup::preset_show(ctx, a),
            PresetCommand::Remove(a) => setup::preset_remove(ctx, a, ui),
        },
        Command::Completions(a) => setup::completions(ctx, a),
        Command::Schema(a) => setup::schema(a),
        Command::Skill => setup::skill(),
        Command::Run(a) => run::run(ctx, a, ui),
        Command::Env(a) => run::env(ctx, a, format),
        Command::UnlinkTrash(a) => setup::unlink_trash(ctx, a),
        Command::Sync(a) => daily::sync(ctx, a, ui),
        Command::Reset(a) => daily::reset(ctx, a, ui),
        Command::AddRepo(a) => daily::add_repo(ctx, a, ui),
        Command::RemoveRepo(a) => daily::remove_repo(ctx, a, ui),
        Command::Rename(a) => daily::rename(ctx, a, ui),
        Command::Prune(a) => cleanup::prune(ctx, a, ui),
        Command::Doctor(a) => cleanup::doctor(ctx, a),
        Command::Plugin(a) => plugin::plugin(ctx, a),
        Command::BugReport(a) => bug_report::bug_report(ctx, a, ui),
        Command::Man(a) => crate::cli::man::man(a),
        Command::Trust(a) => trust::trust(ctx, a),
        Command::Trash(a) => trash::trash(ctx, a, ui),
        Command::Restore(a) => trash::restore(ctx, a, ui),
        Command::Undo(a) => trash::undo(ctx, a, ui),
        Command::External(args) => plugin::external(ctx, args, ui),
    }
}
