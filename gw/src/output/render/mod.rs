//! How each report looks: the envelope `result`, human text, and the Go grove's bare data
//! shapes for `-o`/`--json`. One file per group of commands; shared helpers here.

mod bug_report;
mod cleanup;
mod daily;
mod plugin;
mod run;
mod setup;
mod status;
mod trash;
mod workspace;

use std::io;
use std::path::Path;

use serde::Serialize;

use super::{Json, Printer, Render, Role, Shown};
use crate::shown;

pub(super) fn value<'a, T: Serialize + 'a>(t: T) -> Json<'a> {
    Json::of(t)
}

pub(super) fn json_pretty(p: &mut Printer, v: &impl Serialize) -> io::Result<()> {
    p.json_pretty(v)
}

pub(super) fn json_line(p: &mut Printer, v: &impl Serialize) -> io::Result<()> {
    p.json_line(v)
}

/// `-o tsv`: a header line and a line per row, cells separated by tabs. A tab or a newline
/// in a cell becomes a space; any other control character is escaped as everywhere else.
pub(super) fn tsv(
    p: &mut Printer,
    header: &[&'static str],
    rows: &[Vec<String>],
) -> io::Result<()> {
    let header: Vec<Shown> = header.iter().map(|&h| Shown::from(h)).collect();
    p.line(Shown::join(header, "\t"))?;
    for r in rows {
        let cells = r.iter().map(|c| Shown::text(c.replace(['\t', '\n'], " ")));
        p.line(Shown::join(cells, "\t"))?;
    }
    Ok(())
}

/// `-o name`, `-o path`: one item per line, escaped.
pub(super) fn lines<'a>(
    p: &mut Printer,
    items: impl IntoIterator<Item = &'a str>,
) -> io::Result<()> {
    for i in items {
        p.line(Shown::text(i))?;
    }
    Ok(())
}

pub(super) fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Output of a command that only prints a script (`gw completions`).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Script {
    /// The shell the script is for.
    pub shell: String,
    pub script: String,
}

impl Render for Script {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        p.script(&self.script)
    }
}

/// `gw man`: a manual page, roff (`man -l -` reads it).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ManPage {
    /// The page's name: `gw`, `gw-create`, `gw-preset-add`, …
    pub name: String,
    /// The page, in roff.
    pub page: String,
}

impl Render for ManPage {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        p.script(&self.page)?;
        if p.out_is_terminal {
            let page = self.name.replacen("gw-", "gw ", 1).replace('-', " ");
            let command = page.strip_prefix("gw").unwrap_or("").trim();
            let shown = if command.is_empty() {
                "gw man | man -l -".to_string()
            } else {
                format!("gw man {command} | man -l -")
            };
            p.message(Role::Hint, shown!("read it with `{}`", shown))?;
        }
        Ok(())
    }
}

/// `--help`/`--version` in machine mode.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Help {
    pub help: String,
}

/// `gw plan`'s output: the plan document, and where it was saved.
pub struct Planned {
    pub doc: crate::ops::plan::PlanDoc,
    pub saved: Option<std::path::PathBuf>,
}

impl Render for Planned {
    fn result(&self) -> Json<'_> {
        value(&self.doc)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let d = &self.doc;
        if !p.out_is_terminal {
            // Piped (`gw plan … | gw apply -`) or saved to a file: the document itself.
            return json_pretty(p, d);
        }
        let title = shown!("Plan: {} {}", d.kind.command(), d.workspace);
        p.line(p.paint(super::Role::Header, title))?;
        for (i, c) in d.changes.iter().enumerate() {
            let mut line = shown!("{:>3}. {}", i + 1, c.action.to_string());
            for part in [
                c.repo.clone(),
                c.branch.clone(),
                c.path.as_ref().map(|x| x.display().to_string()),
            ]
            .into_iter()
            .flatten()
            {
                line.push(shown!("  {}", part));
            }
            if let Some(detail) = &c.detail {
                line.push(shown!("  ({})", detail));
            }
            if c.destructive {
                line.push(shown!("  {}", p.paint(super::Role::Error, "[DESTRUCTIVE]")));
            }
            p.line(line)?;
        }
        if d.changes.is_empty() {
            p.line("  nothing to do")?;
        }
        if !d.warnings.is_empty() {
            p.line("Warnings:")?;
            for w in &d.warnings {
                p.line(shown!("  - {}", w))?;
            }
        }
        p.line(shown!("Fingerprint: {}", d.fingerprint))?;
        match &self.saved {
            Some(path) => p.line(shown!(
                "Saved to {}; apply with `gw apply {}`",
                path.display(),
                crate::proc::shell_quote(&path.to_string_lossy())
            )),
            None => p.line("Save it with `gw plan --out plan.json …` (or `--format json`), then `gw apply plan.json`"),
        }
    }
    fn next_actions(&self) -> Vec<crate::action::NextAction> {
        let Some(path) = &self.saved else {
            return Vec::new();
        };
        let effect = if self.doc.destructive {
            crate::action::Effect::Destructive
        } else {
            crate::action::Effect::Write
        };
        vec![crate::action::NextAction::new(
            effect,
            "Apply this plan (refused if anything it depends on has changed)",
            &["gw", "apply", &path.to_string_lossy(), "--format", "json"],
        )]
    }
}

/// What a configuration edit says it did: `done`, or after its `--dry-run` what it `would` do.
fn did(dry_run: bool, done: &'static str, would: &'static str) -> &'static str {
    if dry_run { would } else { done }
}

/// The last line of a configuration edit's `--dry-run`: nothing was written.
fn nothing_written(p: &mut Printer, dry_run: bool) -> io::Result<()> {
    if !dry_run {
        return Ok(());
    }
    p.message(
        Role::Hint,
        "dry run: nothing was written; run it again without --dry-run to make the change",
    )
}
