//! Rendering of `gw run`: a summary line per repository on stderr (the processes' own
//! output was streamed there already), and the per-repository outcomes in the envelope.

use std::io;
use std::time::Duration;

use super::value;
use crate::duration;
use crate::error::Error;
use crate::ops::run::{RunOutcome, RunReport, RunResult};
use crate::output::{Json, Printer, Render, Role};
use crate::shown;

impl Render for RunReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let width = self.repos.iter().map(|r| r.repo.len()).max().unwrap_or(0);
        for r in &self.repos {
            let (mark, role) = match r.outcome {
                RunOutcome::Exited => ("✓", Role::Success),
                RunOutcome::Failed | RunOutcome::NotStarted => ("✗", Role::Error),
                RunOutcome::Stopped => ("■", Role::Hint),
                RunOutcome::Skipped => ("-", Role::Dim),
            };
            let repo = format!("{:<width$}", r.repo);
            let line = shown!("{} {}  {}", p.paint_err(role, mark), repo, summary(r));
            p.message(Role::Plain, line)?;
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn failure(&self) -> Option<&Error> {
        RunReport::failure(self)
    }
}

/// `exited 0 after 3s`, ``make dev` failed (exit status 2) after 1s`, …
fn summary(r: &RunResult) -> String {
    let took = duration::format_go(Duration::from_millis(r.duration_ms));
    let why = r
        .detail
        .as_deref()
        .and_then(|d| d.lines().next())
        .unwrap_or("")
        .trim_end_matches(':');
    match r.outcome {
        RunOutcome::Exited => format!("exited 0 after {took}"),
        RunOutcome::Failed => format!("{why} after {took}"),
        RunOutcome::NotStarted => format!("did not start: {why}"),
        RunOutcome::Stopped => format!("{why} after {took}"),
        RunOutcome::Skipped => format!("skipped: {why}"),
    }
}
