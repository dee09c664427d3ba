//! Rendering of clean-up commands: prune, prune branches, doctor.

use std::io;

use serde_json::{Value, json};

use super::{json_line, json_pretty, lines, path_str, tsv, value};
use crate::action::NextAction;
use crate::error::Error;
use crate::ops::doctor::{DoctorReport, Issue};
use crate::ops::prune::{Candidate, PruneBranchesReport, PruneReport};
use crate::output::{DataFormat, Json, Printer, Render, Role, Shown};
use crate::shown;

// ---- prune ----

fn note(c: &Candidate) -> String {
    match (c.outcome.map(|o| o.as_str()), &c.detail) {
        (Some("failed"), d) => format!("FAILED: {}", d.as_deref().unwrap_or("")),
        (Some(o), _) => o.to_string(),
        (None, _) if c.missing => "directory missing".into(),
        (None, _) => String::new(),
    }
}

/// The Go grove's `prune --json` element.
fn bare(c: &Candidate) -> Value {
    let mut v = json!({
        "name": c.name,
        "branch": c.branch,
        "created_at": c.recorded_created_at,
        "age_days": c.age_days,
        "missing": c.missing,
    });
    if c.outcome.map(|o| o.as_str()) == Some("failed") {
        v["error"] = json!(c.detail.clone().unwrap_or_default());
    }
    v
}

impl Render for PruneReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.workspaces.is_empty() {
            return p.message(
                Role::Plain,
                shown!(
                    "No workspaces to prune (none older than {} or missing)",
                    self.min_age
                ),
            );
        }
        let rows: Vec<Vec<Shown>> = self
            .workspaces
            .iter()
            .map(|c| {
                vec![
                    p.paint(Role::Name, &c.name),
                    Shown::text(&c.branch),
                    Shown::text(c.recorded_created_at.chars().take(10).collect::<String>()),
                    Shown::text(
                        c.age_days
                            .map(|d| format!("{d}d"))
                            .unwrap_or_else(|| "?".into()),
                    ),
                    Shown::text(note(c)),
                ]
            })
            .collect();
        p.table(&["Name", "Branch", "Created", "Age", "Note"], &rows)?;
        if !self.applied {
            p.message(Role::Hint, "run again with --yes to delete them")?;
        }
        Ok(())
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        let bare: Vec<Value> = self.workspaces.iter().map(bare).collect();
        Some(match f {
            DataFormat::Json => json_pretty(p, &bare),
            DataFormat::Jsonl => bare.iter().try_for_each(|v| json_line(p, v)),
            DataFormat::Tsv => tsv(
                p,
                &["NAME", "BRANCH", "CREATED", "AGE_DAYS", "NOTE"],
                &self
                    .workspaces
                    .iter()
                    .map(|c| {
                        vec![
                            c.name.clone(),
                            c.branch.clone(),
                            c.recorded_created_at.clone(),
                            c.age_days.map(|d| d.to_string()).unwrap_or_default(),
                            note(c),
                        ]
                    })
                    .collect::<Vec<_>>(),
            ),
            DataFormat::Name => lines(p, self.workspaces.iter().map(|c| c.name.as_str())),
            DataFormat::Path => {
                let paths: Vec<String> =
                    self.workspaces.iter().map(|c| path_str(&c.path)).collect();
                lines(p, paths.iter().map(String::as_str))
            }
            DataFormat::Table => return None,
        })
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        PruneReport::next_actions(self)
    }
    fn failure(&self) -> Option<&Error> {
        self.failure.as_ref()
    }
}

impl Render for PruneBranchesReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.branches.is_empty() {
            return p.message(Role::Plain, "No branches to prune");
        }
        let rows: Vec<Vec<Shown>> = self
            .branches
            .iter()
            .map(|b| {
                let mut row = vec![
                    Shown::text(&b.repo),
                    Shown::text(&b.branch),
                    Shown::text(&b.reason),
                ];
                if self.applied {
                    row.push(Shown::text(
                        match (b.outcome.map(|o| o.as_str()), &b.detail) {
                            (Some("failed"), d) => {
                                format!("FAILED: {}", d.as_deref().unwrap_or(""))
                            }
                            (o, _) => o.unwrap_or("").to_string(),
                        },
                    ));
                }
                row
            })
            .collect();
        if self.applied {
            p.table(&["Repo", "Branch", "Reason", "Result"], &rows)
        } else {
            p.table(&["Repo", "Branch", "Reason"], &rows)?;
            p.message(Role::Hint, "run again with --yes to delete them")
        }
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        Some(match f {
            DataFormat::Json => json_pretty(p, &self.branches),
            DataFormat::Jsonl => self.branches.iter().try_for_each(|b| json_line(p, b)),
            DataFormat::Tsv => tsv(
                p,
                &["REPO", "BRANCH", "REASON"],
                &self
                    .branches
                    .iter()
                    .map(|b| vec![b.repo.clone(), b.branch.clone(), b.reason.clone()])
                    .collect::<Vec<_>>(),
            ),
            DataFormat::Name => lines(p, self.branches.iter().map(|b| b.branch.as_str())),
            _ => return None,
        })
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        PruneBranchesReport::next_actions(self)
    }
    fn failure(&self) -> Option<&Error> {
        self.failure.as_ref()
    }
}

// ---- doctor ----

fn dash(s: &Option<String>) -> String {
    s.clone().unwrap_or_else(|| "—".into())
}

fn result_cell(i: &Issue) -> String {
    match (i.outcome.map(|o| o.as_str()), &i.detail) {
        (Some("fixed"), _) => "fixed".into(),
        (Some("failed"), d) => format!("FAILED: {}", d.as_deref().unwrap_or("")),
        (Some(o), _) => o.to_string(),
        (None, _) => String::new(),
    }
}

impl DoctorReport {
    fn issues_text(&self, p: &mut Printer) -> io::Result<()> {
        if self.issues.is_empty() {
            return p.message(Role::Success, "All workspaces healthy");
        }
        let rows: Vec<Vec<Shown>> = self
            .issues
            .iter()
            .map(|i| {
                let mut row = vec![
                    Shown::text(dash(&i.workspace)),
                    Shown::text(dash(&i.repo)),
                    Shown::text(&i.issue),
                    Shown::text(&i.suggested_action),
                ];
                if self.fix {
                    row.push(Shown::text(result_cell(i)));
                }
                row
            })
            .collect();
        if self.fix {
            // An issue is read in full: cut short, it would not say what is wrong.
            p.table_keeping(
                &["Workspace", "Repo", "Issue", "Action", "Result"],
                &rows,
                &[2, 3],
            )?;
            p.message(
                Role::Plain,
                shown!(
                    "{} fixed, {} left, {} failed",
                    self.fixed,
                    self.left,
                    self.failed
                ),
            )
        } else {
            // The error after the table says how many, and whether `--fix` helps.
            p.table_keeping(&["Workspace", "Repo", "Issue", "Action"], &rows, &[2, 3])
        }
    }
}

/// What the trash holds, when it holds anything (no issue: a deleted workspace kept for
/// `gw restore` is where it should be).
fn trash_line(p: &mut Printer, t: &crate::ops::trash::TrashSummary) -> io::Result<()> {
    if t.count == 0 {
        return Ok(());
    }
    p.message(
        Role::Plain,
        shown!(
            "Trash: {} ({}), `gw trash` lists them",
            crate::ops::count(t.count, "deleted workspace", "deleted workspaces"),
            crate::duration::format_size(t.bytes)
        ),
    )?;
    if !t.sources_gone.is_empty() {
        p.message(
            Role::Warning,
            shown!(
                "{} in the trash cannot be restored: a source repository is gone ({})",
                crate::ops::count(t.sources_gone.len(), "entry", "entries"),
                t.sources_gone.join(", ")
            ),
        )?;
    }
    Ok(())
}

impl Render for DoctorReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        self.issues_text(p)?;
        trash_line(p, &self.trash)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        Some(match f {
            // The Go grove's shape: a bare array of issues.
            DataFormat::Json => json_pretty(p, &self.issues),
            DataFormat::Jsonl => self.issues.iter().try_for_each(|i| json_line(p, i)),
            DataFormat::Tsv => tsv(
                p,
                &["WORKSPACE", "REPO", "ISSUE", "ACTION"],
                &self
                    .issues
                    .iter()
                    .map(|i| {
                        vec![
                            i.workspace.clone().unwrap_or_default(),
                            i.repo.clone().unwrap_or_default(),
                            i.issue.clone(),
                            i.suggested_action.clone(),
                        ]
                    })
                    .collect::<Vec<_>>(),
            ),
            _ => return None,
        })
    }
    fn next_actions(&self) -> Vec<NextAction> {
        DoctorReport::next_actions(self)
    }
    fn failure(&self) -> Option<&Error> {
        self.failure.as_ref()
    }
}
