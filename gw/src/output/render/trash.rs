//! Rendering of the trash: `gw trash`, `gw trash empty`, `gw restore`, `gw undo`.

use std::io;

use super::value;
use crate::action::NextAction;
use crate::duration::format_size;
use crate::ops::restore::RestoreReport;
use crate::ops::trash::{EmptyReport, TidyReport, TrashReport};
use crate::output::{Json, Printer, Render, Role, Shown};
use crate::shown;
use crate::state::trash::BranchFate;

impl Render for TrashReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.entries.is_empty() {
            p.message(
                Role::Plain,
                "The trash is empty: `gw delete` keeps what it removes here for `gw restore`",
            )?;
        } else {
            let now = jiff::Timestamp::now();
            let rows: Vec<Vec<Shown>> = self
                .entries
                .iter()
                .map(|e| {
                    let branches: Vec<String> = e
                        .repos
                        .iter()
                        .map(|r| match r.fate {
                            BranchFate::Deleted => format!("{} (deleted)", r.branch),
                            BranchFate::Kept => r.branch.clone(),
                            BranchFate::Gone => format!("{} (none)", r.branch),
                        })
                        .collect::<std::collections::BTreeSet<_>>()
                        .into_iter()
                        .collect();
                    let repos: Vec<&str> = e.repos.iter().map(|r| r.repo.as_str()).collect();
                    let mut name = e.name.clone();
                    if !e.sources_gone.is_empty() {
                        name.push_str(" (source gone)");
                    }
                    vec![
                        p.paint(Role::Name, &name),
                        Shown::text(match crate::ops::trash::age(e, now).as_str() {
                            "now" => "just now".to_string(),
                            a => format!("{a} ago"),
                        }),
                        Shown::text(e.reason.as_str()),
                        Shown::text(e.bytes.map_or("…".into(), format_size)),
                        Shown::text(repos.join(", ")),
                        Shown::text(branches.join(", ")),
                        Shown::text(&e.id),
                    ]
                })
                .collect();
            p.table(
                &["Name", "Deleted", "Why", "Size", "Repos", "Branches", "Id"],
                &rows,
            )?;
        }
        for c in &self.corrupt {
            p.message(
                Role::Warning,
                shown!("unreadable trash entry {}: {}", c.path.display(), c.error),
            )?;
        }
        Ok(())
    }
    fn next_actions(&self) -> Vec<NextAction> {
        TrashReport::next_actions(self)
    }
}

impl Render for EmptyReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let what = crate::ops::count(self.count, "deleted workspace", "deleted workspaces");
        if self.dry_run {
            for e in &self.purged {
                p.message(Role::Plain, shown!("  {}  {}", e.name, e.id))?;
            }
            return p.message(
                Role::Plain,
                shown!(
                    "Would erase {} ({}); nothing erased",
                    what,
                    format_size(self.bytes)
                ),
            );
        }
        p.message(
            Role::Success,
            shown!("Erased {} ({})", what, format_size(self.bytes)),
        )
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

impl Render for TidyReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, _p: &mut Printer) -> io::Result<()> {
        Ok(())
    }
}

impl Render for RestoreReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        for r in &self.repos {
            p.message(
                Role::Plain,
                shown!("  {}  {}", r.repo, r.detail.as_deref().unwrap_or("")),
            )?;
        }
        let renamed = if self.name == self.deleted_name {
            String::new()
        } else {
            format!(" as {}", self.name)
        };
        p.message(
            Role::Success,
            shown!(
                "Workspace {} restored{} at {}",
                self.deleted_name,
                renamed,
                self.path.display()
            ),
        )
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        RestoreReport::next_actions(self)
    }
}
