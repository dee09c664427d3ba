//! Rendering of `gw run`: a summary line per repository on stderr (the processes' own
//! output was streamed there already), and the per-repository outcomes in the envelope.

use std::io;
use std::time::Duration;

use super::value;
use crate::duration;
use crate::error::Error;
use crate::ops::env::EnvReport;
use crate::ops::ports::PortStatus;
use crate::ops::run::{RunOutcome, RunReport, RunResult};
use crate::output::{Json, Printer, Render, Role, Shown};
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
            // A failure's last lines of output, under its line.
            if r.outcome == RunOutcome::Failed
                && let Some(detail) = &r.detail
            {
                for l in detail.lines().skip(1) {
                    p.message(Role::Plain, shown!("    {}", l))?;
                }
            }
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

impl Render for EnvReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    /// Only the variables, on stdout, for `eval "$(gw env)"` or a `.env` file.
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        p.script(&self.lines())
    }
}

/// The `Listening` cell of a port: `yes (pid 4242 python3 -m http.server)`, `no`, or `?`.
pub(super) fn listening_cell(s: &PortStatus) -> String {
    match s.listening {
        Some(false) => "no".into(),
        None => "?".into(),
        Some(true) if s.holders.is_empty() => "yes".into(),
        Some(true) => {
            let who: Vec<String> = s
                .holders
                .iter()
                .map(|h| format!("pid {} {}", h.pid, h.command))
                .collect();
            format!("yes ({})", who.join(", "))
        }
    }
}

/// [`listening_cell`] for a terminal: green when something listens.
pub(super) fn listening_shown(p: &Printer, s: &PortStatus) -> Shown {
    let cell = listening_cell(s);
    match s.listening {
        Some(true) => p.paint(Role::Success, &cell),
        _ => Shown::text(cell),
    }
}

/// A table of ports: `Port`, `Repo`, `Name`, `Variable`, `Listening`.
pub(super) fn ports_table(p: &mut Printer, ports: &[PortStatus]) -> io::Result<()> {
    let rows: Vec<Vec<Shown>> = ports
        .iter()
        .map(|s| {
            vec![
                Shown::text(s.port.port),
                Shown::text(&s.port.repo),
                Shown::text(&s.port.name),
                Shown::text(&s.port.var),
                listening_shown(p, s),
            ]
        })
        .collect();
    p.table(&["Port", "Repo", "Name", "Variable", "Listening"], &rows)
}
