//! Rendering of day-to-day operations: sync, reset, add-repo, remove-repo, rename.
//!
//! Per-repository lines are messages (stderr); skipped repositories appear as warnings,
//! and a partial failure as the error after them.

use std::io;

use super::value;
use crate::action::NextAction;
use crate::error::Error;
use crate::ops::add_repo::AddRepoReport;
use crate::ops::remove_repo::RemoveRepoReport;
use crate::ops::rename::RenameReport;
use crate::ops::reset::ResetReport;
use crate::ops::sync::{RepoSync, SyncReport};
use crate::ops::{Outcome, RepoResult};
use crate::output::{Json, Printer, Render, Role};
use crate::shown;

fn role(o: Outcome) -> Role {
    match o {
        Outcome::Failed | Outcome::RolledBack => Role::Error,
        Outcome::Skipped | Outcome::NotFound | Outcome::AlreadyPresent => Role::Warning,
        _ => Role::Success,
    }
}

fn repo_line(p: &mut Printer, r: &RepoResult) -> io::Result<()> {
    let mut line = shown!("{}: {}", r.repo, r.outcome.as_str().replace('_', " "));
    if let Some(d) = &r.detail {
        line.push(shown!(" ({})", d));
    }
    p.message(role(r.outcome), line)
}

fn sync_text(p: &mut Printer, repos: &[RepoSync]) -> io::Result<()> {
    // Skipped repositories are shown once, as warnings; failed ones with what failed and the
    // commands that resolve it (the error after them sums up).
    for r in repos.iter().filter(|r| r.outcome() != Outcome::Skipped) {
        let line = match (&r.result.outcome, &r.result.detail) {
            (_, Some(d)) => shown!("{}: {}", r.result.repo, d),
            (o, None) => shown!("{}: {}", r.result.repo, o.as_str()),
        };
        if r.outcome() == Outcome::Failed {
            let mark = p.paint_err(Role::Error, "✗");
            p.message(Role::Plain, shown!("{} {}", mark, line))?;
            for a in &r.actions {
                p.message(Role::Plain, shown!("  {}:", a.description))?;
                p.message(Role::Plain, shown!("    {}", a.for_people()))?;
            }
        } else {
            p.message(role(r.outcome()), line)?;
        }
    }
    Ok(())
}

impl Render for SyncReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        sync_text(p, &self.repos)
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        SyncReport::next_actions(self)
    }
    fn failure(&self) -> Option<&Error> {
        self.failure.as_ref()
    }
}

impl Render for ResetReport {
    fn result(&self) -> Json<'_> {
        value(&self.0)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        sync_text(p, &self.0.repos)
    }
    fn warnings(&self) -> Vec<String> {
        self.0.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        self.0.next_actions()
    }
    fn failure(&self) -> Option<&Error> {
        self.0.failure.as_ref()
    }
}

impl Render for AddRepoReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let added = self
            .repos
            .iter()
            .filter(|r| r.outcome == Outcome::Added)
            .count();
        if added == 0 && self.failure.is_none() {
            return p.message(Role::Plain, "All repos already in workspace");
        }
        for r in &self.repos {
            repo_line(p, r)?;
        }
        for c in &self.copied {
            p.message(Role::Plain, shown!("  {}  copied {}", c.repo, c.summary()))?;
        }
        if added > 0 {
            p.message(
                Role::Success,
                shown!(
                    "Added {} repositor{} to {}",
                    added,
                    if added == 1 { "y" } else { "ies" },
                    self.workspace
                ),
            )?;
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        AddRepoReport::next_actions(self)
    }
    fn failure(&self) -> Option<&Error> {
        self.failure.as_ref()
    }
}

impl Render for RemoveRepoReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        for r in &self.repos {
            repo_line(p, r)?;
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        RemoveRepoReport::next_actions(self)
    }
    fn failure(&self) -> Option<&Error> {
        self.failure.as_ref()
    }
}

impl Render for RenameReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        p.message(
            Role::Success,
            shown!(
                "Workspace {} renamed to {} at {}",
                self.from,
                self.name,
                self.path.display()
            ),
        )?;
        // Where the shell in it is to go: see `cli::relocate`.
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        RenameReport::next_actions(self)
    }
}
