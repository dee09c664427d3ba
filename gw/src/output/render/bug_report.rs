//! Rendering of `gw bug-report`.

use std::io;

use super::value;
use crate::action::NextAction;
use crate::ops::bug_report::BugReport;
use crate::output::{Json, Printer, Render, Role, Shown};
use crate::shown;

impl Render for BugReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.opened {
            p.message(
                Role::Success,
                "Opened a new issue in your browser, pre-filled with this report",
            )?;
            if self.truncated {
                p.message(
                    Role::Hint,
                    "the report was too long for the link and was cut; paste the rest from `gw bug-report --print`",
                )?;
            }
            return Ok(());
        }
        p.print(Shown::block(&self.markdown))?;
        p.message(
            Role::Hint,
            shown!(
                "open a new issue at {}/issues/new and paste this report (secrets are redacted; `--redact-home` hides your home directory)",
                crate::ops::bug_report::REPOSITORY
            ),
        )
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        BugReport::next_actions(self)
    }
}
