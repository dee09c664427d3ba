//! Rendering of `gw plugin list|install|remove|upgrade|search`.

use std::io;

use serde_json::{Value, json};

use super::{did, json_line, json_pretty, lines, nothing_written, path_str, value};
use crate::action::NextAction;
use crate::error::Error;
use crate::ops::plugin::{
    Origin, PluginListReport, PluginOutcome, PluginReport, PluginSearchReport, PluginUpgradeReport,
    UpgradeOutcome,
};
use crate::output::{DataFormat, Json, Printer, Render, Role, Shown};
use crate::shown;

impl Render for PluginListReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.plugins.is_empty() {
            return p.message(
                Role::Plain,
                "No plugins; install one with `gw plugin install PATH|URL|OWNER/REPO`",
            );
        }
        let rows: Vec<Vec<Shown>> = self
            .plugins
            .iter()
            .map(|pl| {
                vec![
                    p.paint(Role::Name, &pl.name),
                    Shown::text(&pl.path),
                    match pl.source {
                        Origin::Installed => "installed".into(),
                        Origin::Path => "PATH".into(),
                    },
                ]
            })
            .collect();
        p.table(&["Name", "Path", "Source"], &rows)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        // The Go grove's shape: `[{name, path}]`.
        let bare: Vec<Value> = self
            .plugins
            .iter()
            .map(|pl| json!({ "name": pl.name, "path": pl.path }))
            .collect();
        Some(match f {
            DataFormat::Json => json_pretty(p, &bare),
            DataFormat::Jsonl => bare.iter().try_for_each(|v| json_line(p, v)),
            DataFormat::Name => lines(p, self.plugins.iter().map(|pl| pl.name.as_str())),
            DataFormat::Path => {
                let paths: Vec<String> = self.plugins.iter().map(|pl| path_str(&pl.path)).collect();
                lines(p, paths.iter().map(String::as_str))
            }
            _ => return None,
        })
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

impl Render for PluginReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let (name, path) = (&self.name, self.path.display());
        let dry = self.dry_run;
        let line = match self.outcome {
            PluginOutcome::Removed => shown!(
                "{} plugin {} ({})",
                did(dry, "Removed", "Would remove"),
                name,
                path
            ),
            PluginOutcome::Replaced => {
                shown!(
                    "{} plugin {} ({}); run it with `gw {}`",
                    did(dry, "Replaced", "Would replace"),
                    name,
                    path,
                    name
                )
            }
            PluginOutcome::Installed => {
                shown!(
                    "{} plugin {} ({}); run it with `gw {}`",
                    did(dry, "Installed", "Would install"),
                    name,
                    path,
                    name
                )
            }
        };
        p.message(Role::Success, line)?;
        nothing_written(p, dry)
    }
    fn next_actions(&self) -> Vec<NextAction> {
        PluginReport::next_actions(self)
    }
}

impl Render for PluginUpgradeReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.plugins.is_empty() {
            return p.message(Role::Plain, "No plugins are installed");
        }
        for u in &self.plugins {
            let (role, what) = match u.outcome {
                UpgradeOutcome::Upgraded => (
                    Role::Success,
                    did(self.dry_run, "upgraded", "would be upgraded"),
                ),
                UpgradeOutcome::UpToDate => (Role::Success, "up to date"),
                UpgradeOutcome::Skipped => (Role::Warning, "skipped"),
                UpgradeOutcome::Failed => (Role::Error, "failed"),
            };
            let mut line = shown!("{}: {}", u.name, what);
            if let Some(s) = &u.source {
                line.push(shown!(" (from {})", s));
            }
            if let Some(d) = &u.detail {
                line.push(shown!(": {}", d));
            }
            if u.outcome == UpgradeOutcome::Failed {
                // The failure itself is shown once, after the per-plugin lines.
                p.message(Role::Plain, shown!("  {}", line))?;
            } else {
                p.message(role, line)?;
            }
        }
        nothing_written(p, self.dry_run)
    }
    fn failure(&self) -> Option<&Error> {
        self.failure.as_ref()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "List plugins",
            &["gw", "plugin", "list", "--format", "json"],
        )]
    }
}

impl Render for PluginSearchReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.plugins.is_empty() {
            return p.message(
                Role::Plain,
                shown!(
                    "No plugin in the registry matches `{}`; `gw plugin search` lists them all",
                    self.term.as_deref().unwrap_or("")
                ),
            );
        }
        let rows: Vec<Vec<Shown>> = self
            .plugins
            .iter()
            .map(|h| {
                vec![
                    p.paint(Role::Name, h.name),
                    Shown::text(h.repo),
                    Shown::text(h.description),
                    if h.installed {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                ]
            })
            .collect();
        p.table(&["Name", "Repo", "Description", "Installed"], &rows)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        // The Go grove's shape: `[{name, repo, description}]`.
        let bare: Vec<Value> = self
            .plugins
            .iter()
            .map(|h| json!({ "name": h.name, "repo": h.repo, "description": h.description }))
            .collect();
        Some(match f {
            DataFormat::Json => json_pretty(p, &bare),
            DataFormat::Jsonl => bare.iter().try_for_each(|v| json_line(p, v)),
            DataFormat::Name => lines(p, self.plugins.iter().map(|h| h.name)),
            _ => return None,
        })
    }
    fn next_actions(&self) -> Vec<NextAction> {
        PluginSearchReport::next_actions(self)
    }
}
