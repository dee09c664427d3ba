//! How `gw-migrate`'s results look: one entry per file in the envelope's `result`, and a
//! line per file on stdout for people (headers and totals on stderr).

use std::io;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::json;

use grove::action::NextAction;
use grove::error::{Code, Error};
use grove::legacy::cleanup::{Action, Backup, Kind, Plan, Reason, RestoreReport, Status};
use grove::output::{Json, Printer, Render, Role, Shown};

/// What a run was asked to do (`result.mode`).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Apply,
    DryRun,
}

/// A scan, and with `--apply` what was done.
pub struct MigrateReport {
    pub applied: bool,
    pub grove_dir: PathBuf,
    pub plan: Plan,
    pub backup: Option<Backup>,
    pub warnings: Vec<String>,
    /// The signal that stopped an applied run part way.
    pub stopped: Option<i32>,
    /// `--grove-dir DIR` and `--include-tracked` as given, for next actions.
    pub argv: Vec<String>,
    pub roots_argv: Vec<String>,
}

impl MigrateReport {
    /// `gw-migrate EXTRA… [--grove-dir DIR] [--include-tracked] [ROOT…] [--format json]`.
    fn command(&self, extra: &[&str], json: bool) -> Vec<String> {
        let mut argv = vec!["gw-migrate".to_string()];
        argv.extend(extra.iter().map(|s| s.to_string()));
        argv.extend(self.argv.iter().cloned());
        argv.extend(self.roots_argv.iter().cloned());
        if json {
            argv.extend(["--format".to_string(), "json".to_string()]);
        }
        argv
    }

    fn needs_attention(&self) -> usize {
        self.plan
            .items
            .iter()
            .filter(|i| i.needs_attention())
            .count()
    }
}

fn action(argv: &[String]) -> Vec<&str> {
    argv.iter().map(String::as_str).collect()
}

impl Render for MigrateReport {
    fn result(&self) -> Json<'_> {
        let p = &self.plan;
        Json::of(json!({
            "mode": if self.applied { Mode::Apply } else { Mode::DryRun },
            "grove_dir": self.grove_dir.to_string_lossy(),
            "roots": p.roots.iter().map(|r| r.to_string_lossy()).collect::<Vec<_>>(),
            "workspaces": p.workspaces,
            "checked": p.checked,
            "files": p.items,
            "summary": {
                "pending": p.count(Status::Pending),
                "done": p.count(Status::Done),
                "skipped": p.count(Status::Skipped),
                "failed": p.count(Status::Failed),
                "needs_attention": self.needs_attention(),
            },
            "backup": self.backup,
            "stopped_by": self.stopped.map(grove::proc::signal_name),
        }))
    }

    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let plan = &self.plan;
        let mode = if self.applied {
            "applying"
        } else {
            "dry run, nothing is changed"
        };
        p.message(Role::Plain, Shown::text(format!("gw-migrate ({mode})")))?;
        p.message(
            Role::Plain,
            Shown::text(format!("grove dir: {}", self.grove_dir.display())),
        )?;
        let roots: Vec<String> = plan.roots.iter().map(|r| r.display().to_string()).collect();
        p.message(
            Role::Plain,
            Shown::text(format!(
                "scanned: {} tracked workspace{}, {} ({} .mcp.json file{} read)",
                plan.workspaces,
                plural(plan.workspaces),
                roots.join(", "),
                plan.checked,
                plural(plan.checked)
            )),
        )?;
        for item in &plan.items {
            let what = match (item.status, item.action) {
                (Status::Pending, Some(Action::DeleteFile)) => "would delete".to_string(),
                (Status::Pending, Some(Action::RemoveEntry)) => "would edit".to_string(),
                (Status::Pending, Some(Action::MoveDatabase)) => "would move".to_string(),
                (Status::Done, Some(Action::DeleteFile)) => "deleted".to_string(),
                (Status::Done, Some(Action::RemoveEntry)) => "edited".to_string(),
                (Status::Done, Some(Action::MoveDatabase)) => "moved".to_string(),
                (Status::Failed, _) => "failed".to_string(),
                _ => "left alone".to_string(),
            };
            let mut line = format!("{what:<12} {}", item.path.display());
            if let Some(t) = &item.target
                && item.status != Status::Skipped
            {
                line.push_str(&format!(" -> {}", t.display()));
            }
            let links: Vec<String> = item.links.iter().map(|l| l.display().to_string()).collect();
            let note = match (item.kind, item.action, item.status) {
                (_, _, Status::Skipped | Status::Failed) => Some(format!(
                    "{}: {}",
                    item.reason.map_or("?", Reason::as_str),
                    item.detail.as_deref().unwrap_or("")
                )),
                (Kind::McpJson, Some(Action::RemoveEntry), _) if !links.is_empty() => {
                    Some(format!(
                        "grove's entry removed, the rest kept as is; the symlink{} {} to it {} kept",
                        if links.len() == 1 { "" } else { "s" },
                        links.join(", "),
                        if links.len() == 1 { "is" } else { "are" }
                    ))
                }
                (Kind::McpJson, Some(Action::DeleteFile), _) => {
                    Some("grove's entry was all it held".to_string())
                }
                (Kind::McpJson, Some(Action::RemoveEntry), _) => {
                    Some("grove's entry removed, the rest kept as is".to_string())
                }
                _ => None,
            };
            if let Some(n) = note {
                line.push_str(&format!("  ({n})"));
            }
            p.line(Shown::text(&line))?;
        }
        let pending = plan.count(Status::Pending);
        let done = plan.count(Status::Done);
        if !self.applied && pending > 0 {
            p.message(
                Role::Hint,
                Shown::text(format!(
                    "{pending} file{} would change; run `{}` to clean up (originals are backed up)",
                    plural(pending),
                    grove::action::shell_line(&self.command(&["--apply"], false))
                )),
            )?;
        } else if let Some(b) = &self.backup {
            p.message(
                Role::Success,
                Shown::text(format!(
                    "cleaned {done} file{}; originals in {}",
                    plural(done),
                    b.path.display()
                )),
            )?;
            p.message(
                Role::Hint,
                Shown::text(format!("undo with `gw-migrate restore {}`", b.id)),
            )?;
        } else {
            p.message(Role::Success, "nothing to clean up")?;
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = self.warnings.clone();
        let n = self.needs_attention();
        if n > 0 {
            w.push(format!(
                "{n} file{} left unchanged and need{} a look (see each file's reason)",
                plural(n),
                if n == 1 { "s" } else { "" }
            ));
        }
        w
    }

    fn next_actions(&self) -> Vec<NextAction> {
        let mut out = Vec::new();
        if !self.applied && self.plan.count(Status::Pending) > 0 {
            out.push(NextAction::write(
                "Clean up (originals are backed up; `gw-migrate restore` undoes it)",
                &action(&self.command(&["--apply"], true)),
            ));
        }
        let tracked = self
            .plan
            .items
            .iter()
            .any(|i| i.reason.is_some_and(Reason::maybe_tracked));
        if tracked {
            out.push(NextAction::read(
                "See what cleaning files git tracks would change",
                &action(&self.command(&["--include-tracked"], true)),
            ));
        }
        if let Some(b) = &self.backup {
            let mut argv = vec!["gw-migrate".to_string(), "restore".into(), b.id.clone()];
            argv.extend(
                self.argv
                    .iter()
                    .filter(|a| *a != "--include-tracked")
                    .cloned(),
            );
            argv.extend(["--format".into(), "json".into()]);
            out.push(NextAction::write("Undo this cleanup", &action(&argv)));
        }
        out
    }

    fn failure(&self) -> Option<&Error> {
        None
    }
}

/// A migrate report with a failure attached (some file changed or could not be written).
pub struct Failed {
    pub report: MigrateReport,
    pub error: Error,
}

impl MigrateReport {
    /// Turns failures into a partial-failure report: a file that changed while gw-migrate
    /// ran is `STATE_CHANGED`; an I/O failure keeps its own code.
    pub fn into_render(self) -> Box<dyn Render> {
        let changed = self
            .plan
            .items
            .iter()
            .filter(|i| i.reason == Some(Reason::ChangedSinceScan))
            .count();
        let failed = self.plan.items.iter().find_map(|i| i.error.clone());
        let error = if let Some(sig) = self.stopped {
            let done = self.plan.count(Status::Done);
            let left = self.plan.count(Status::Pending);
            let mut e = Error::new(
                Code::Cancelled,
                format!(
                    "stopped by {}: {done} file{} cleaned, {left} not reached; the manifest records each",
                    grove::proc::signal_name(sig),
                    plural(done)
                ),
            );
            e = match &self.backup {
                Some(b) => e.with_fix(format!(
                    "Run `gw-migrate --apply` again to finish, or `gw-migrate restore {}` to undo what was done",
                    b.id
                )),
                None => e.with_fix("Nothing was changed; run `gw-migrate --apply` again"),
            };
            Some(e)
        } else if changed > 0 {
            Some(
                Error::new(
                    Code::StateChanged,
                    format!(
                        "{changed} file{} changed while gw-migrate ran and {} left alone",
                        plural(changed),
                        if changed == 1 { "was" } else { "were" }
                    ),
                )
                .with_fix("Run gw-migrate again"),
            )
        } else {
            failed
        };
        match error {
            None => Box::new(self),
            Some(error) => Box::new(Failed {
                report: self,
                error,
            }),
        }
    }
}

impl Render for Failed {
    fn result(&self) -> Json<'_> {
        self.report.result()
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        self.report.text(p)
    }
    fn warnings(&self) -> Vec<String> {
        self.report.warnings()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        self.report.next_actions()
    }
    fn failure(&self) -> Option<&Error> {
        Some(&self.error)
    }
}

/// `gw-migrate restore`.
pub struct RestoreView {
    pub report: RestoreReport,
    /// `--grove-dir DIR` as given.
    pub base_argv: Vec<String>,
}

impl Render for RestoreView {
    fn result(&self) -> Json<'_> {
        Json::of(&self.report)
    }

    fn text(&self, p: &mut Printer) -> io::Result<()> {
        for f in &self.report.files {
            let mut line = format!("{:<16} {}", f.status.as_str(), f.path.display());
            if let Some(d) = &f.detail {
                line.push_str(&format!("  ({d})"));
            }
            p.line(Shown::text(&line))?;
        }
        if self.report.dry_run {
            let text = format!(
                "would restore backup {} ({}); dry run: nothing was written, run it again without --dry-run to restore",
                self.report.id,
                self.report.backup.display()
            );
            return p.message(Role::Hint, Shown::text(text));
        }
        if self.report.failure.is_none() {
            p.message(
                Role::Success,
                Shown::text(format!(
                    "restored backup {} ({})",
                    self.report.id,
                    self.report.backup.display()
                )),
            )?;
        }
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        self.report.warnings.clone()
    }

    fn next_actions(&self) -> Vec<NextAction> {
        let mut argv = vec!["gw-migrate".to_string()];
        argv.extend(self.base_argv.iter().cloned());
        argv.extend(["--format".into(), "json".into()]);
        vec![NextAction::read("See the leftovers again", &action(&argv))]
    }

    fn failure(&self) -> Option<&Error> {
        self.report.failure.as_ref()
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
