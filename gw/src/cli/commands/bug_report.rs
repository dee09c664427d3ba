//! `gw bug-report [--print] [--redact-home]`.

use std::io::IsTerminal;

use clap::Args;

use crate::cli::{CmdResult, Out, Ui};
use crate::ops::bug_report::BugReportOptions;
use crate::ops::{self, Ctx};
use crate::output::pick;

#[derive(Debug, Args)]
pub struct BugReportArgs {
    /// Print the report instead of offering to open a pre-filled issue in the browser
    #[arg(long)]
    pub print: bool,
    /// Also hide your home directory (shown as `~`)
    #[arg(long)]
    pub redact_home: bool,
}

pub fn bug_report(ctx: &Ctx<'_>, a: BugReportArgs, ui: Ui) -> CmdResult {
    let mut report = ops::bug_report::bug_report(
        ctx,
        BugReportOptions {
            redact_home: a.redact_home,
        },
    );
    // A person at a terminal is offered the browser; anything else gets the report.
    if !a.print
        && ui.interactive
        && std::io::stdout().is_terminal()
        && pick::confirm("Open a new issue in your browser, pre-filled with this report?")?
    {
        // A browser that cannot be opened is no reason to lose the report: it is printed.
        match ops::bug_report::open(ctx, &report.issue_url) {
            Ok(()) => report.opened = true,
            Err(e) => report.warnings.push(e.message.clone()),
        }
    }
    Ok(Out::new(report))
}
