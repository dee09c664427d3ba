//! Rendering of setup commands: init, repo dirs, repos, presets, shell integration.

use std::io;

use serde_json::{Value, json};

use super::{did, json_line, json_pretty, lines, nothing_written, path_str, tsv, value};
use crate::action::NextAction;
use crate::ops::dirs::{DirOutcome, DirReport};
use crate::ops::init::InitReport;
use crate::ops::preset::{PresetListReport, PresetOutcome, PresetReport};
use crate::ops::repos::ReposReport;
use crate::ops::shell_init::ShellInitReport;
use crate::output::{DataFormat, Json, Printer, Render, Role, Shown};
use crate::shown;

// ---- init, add-dir, remove-dir, repos ----

impl Render for InitReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let verb = if self.created {
            did(self.dry_run, "Initialized", "Would initialize")
        } else {
            did(self.dry_run, "Updated", "Would update")
        };
        p.message(
            Role::Success,
            shown!("{} grove config at {}", verb, self.config_path.display()),
        )?;
        if self.repo_dirs.is_empty() {
            p.message(
                Role::Hint,
                "add a directory holding your repositories with `gw add-dir <path>`",
            )?;
        }
        for d in &self.repo_dirs {
            p.message(Role::Plain, shown!("  repo dir: {}", d.display()))?;
        }
        p.message(
            Role::Plain,
            shown!(
                "{} found",
                crate::ops::count(self.repos_found, "repository", "repositories")
            ),
        )?;
        nothing_written(p, self.dry_run)
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        InitReport::next_actions(self)
    }
}

impl Render for DirReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "List the repositories grove can use",
            &["gw", "repos", "--format", "json"],
        )]
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let dir = self.dir.display();
        match self.outcome {
            DirOutcome::Added => p.message(
                Role::Success,
                shown!("{} {}", did(self.dry_run, "Added", "Would add"), dir),
            )?,
            DirOutcome::AlreadyPresent => {
                p.message(Role::Plain, shown!("{} is already a repo dir", dir))?
            }
            _ => p.message(
                Role::Success,
                shown!("{} {}", did(self.dry_run, "Removed", "Would remove"), dir),
            )?,
        }
        if let Some(n) = self.repos_found {
            p.message(
                Role::Plain,
                shown!(
                    "{} found",
                    crate::ops::count(n, "repository", "repositories")
                ),
            )?;
        }
        nothing_written(p, self.dry_run)
    }
}

impl Render for ReposReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.repos.is_empty() {
            return p.message(
                Role::Plain,
                "No repositories found; add a directory with `gw add-dir <path>`",
            );
        }
        let rows: Vec<Vec<Shown>> = self
            .repos
            .iter()
            .map(|r| {
                vec![
                    Shown::text(&r.name),
                    Shown::text(&r.display_name),
                    Shown::text(&r.path),
                ]
            })
            .collect();
        p.table(&["Name", "Owner/Repo", "Path"], &rows)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        let bare: Vec<Value> = self
            .repos
            .iter()
            .map(|r| json!({"name": r.name, "path": r.path, "remote": r.remote.clone().unwrap_or_default(), "display_name": r.display_name}))
            .collect();
        Some(match f {
            DataFormat::Json => json_pretty(p, &bare),
            DataFormat::Jsonl => bare.iter().try_for_each(|v| json_line(p, v)),
            DataFormat::Tsv => tsv(
                p,
                &["NAME", "OWNER/REPO", "PATH"],
                &self
                    .repos
                    .iter()
                    .map(|r| vec![r.name.clone(), r.display_name.clone(), path_str(&r.path)])
                    .collect::<Vec<_>>(),
            ),
            DataFormat::Name => lines(p, self.repos.iter().map(|r| r.name.as_str())),
            DataFormat::Path => {
                let paths: Vec<String> = self.repos.iter().map(|r| path_str(&r.path)).collect();
                lines(p, paths.iter().map(String::as_str))
            }
            DataFormat::Table => return None,
        })
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

impl Render for ShellInitReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        p.script(&self.script)
    }
}

impl Render for PresetReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let repos = self.preset.repos.join(", ");
        match self.outcome {
            PresetOutcome::Shown => p.line(shown!("{}: {}", self.preset.name, repos))?,
            PresetOutcome::Removed => p.message(
                Role::Success,
                shown!(
                    "{} preset {}",
                    did(self.dry_run, "Removed", "Would remove"),
                    self.preset.name
                ),
            )?,
            _ => p.message(
                Role::Success,
                shown!(
                    "{} preset {} ({})",
                    did(self.dry_run, "Saved", "Would save"),
                    self.preset.name,
                    repos
                ),
            )?,
        }
        nothing_written(p, self.dry_run)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        match f {
            DataFormat::Json => Some(json_pretty(p, &self.preset)),
            DataFormat::Jsonl => Some(json_line(p, &self.preset)),
            DataFormat::Name => Some(lines(p, self.preset.repos.iter().map(String::as_str))),
            _ => None,
        }
    }
}

impl Render for PresetListReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.presets.is_empty() {
            return p.message(
                Role::Plain,
                "No presets; save one with `gw preset add NAME -r a,b`",
            );
        }
        let rows: Vec<Vec<Shown>> = self
            .presets
            .iter()
            .map(|ps| {
                vec![
                    p.paint(Role::Name, &ps.name),
                    Shown::text(ps.repos.join(", ")),
                ]
            })
            .collect();
        p.table(&["Name", "Repos"], &rows)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        match f {
            DataFormat::Json => Some(json_pretty(p, &self.as_map())),
            DataFormat::Jsonl => Some(self.presets.iter().try_for_each(|ps| json_line(p, ps))),
            DataFormat::Name => Some(lines(p, self.presets.iter().map(|ps| ps.name.as_str()))),
            DataFormat::Tsv => Some(tsv(
                p,
                &["NAME", "REPOS"],
                &self
                    .presets
                    .iter()
                    .map(|ps| vec![ps.name.clone(), ps.repos.join(",")])
                    .collect::<Vec<_>>(),
            )),
            _ => None,
        }
    }
}

impl Render for crate::ops::skill::SkillReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        p.script(&self.skill)
    }
}

impl Render for crate::ops::schema::SchemaReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        match self.schemas.as_slice() {
            [one] if one.schema.is_some() => json_pretty(p, &one.schema),
            all => {
                let rows: Vec<Vec<Shown>> = all
                    .iter()
                    .map(|s| vec![Shown::text(&s.name), Shown::text(&s.about)])
                    .collect();
                p.table(&["Schema", "Describes"], &rows)
            }
        }
    }
}

// ---- trust ----

impl Render for crate::ops::trust::TrustListReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.repos.is_empty() {
            p.message(
                Role::Plain,
                "No repository's .grove.toml commands are approved; `gw trust REPO` approves them",
            )?;
        } else {
            let rows: Vec<Vec<Shown>> = self
                .repos
                .iter()
                .map(|r| {
                    let state = match r.current {
                        Some(true) => "approved",
                        Some(false) => "changed since (asked again)",
                        None => "repository gone",
                    };
                    vec![
                        Shown::text(&r.path),
                        Shown::text(state),
                        Shown::text(r.approved_at.chars().take(10).collect::<String>()),
                        Shown::text(&r.how),
                    ]
                })
                .collect();
            p.table(&["Repository", "Commands", "Approved", "How"], &rows)?;
        }
        for d in &self.dirs {
            p.message(
                Role::Plain,
                shown!(
                    "trusted by config.toml: every repository in {}",
                    d.display()
                ),
            )?;
        }
        Ok(())
    }
}

impl Render for crate::ops::trust::TrustReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        use crate::ops::trust::TrustOutcome;
        match self.outcome {
            TrustOutcome::Approved if self.commands.is_empty() => p.message(
                Role::Success,
                shown!(
                    "{} {} ({}): it has no .grove.toml commands now; any it gets will be asked about",
                    did(self.dry_run, "Approved", "Would approve"),
                    self.repo,
                    self.path.display()
                ),
            )?,
            TrustOutcome::Approved => p.message(
                Role::Success,
                shown!(
                    "{} the .grove.toml commands of {} ({}):",
                    did(self.dry_run, "Approved", "Would approve"),
                    self.repo,
                    self.path.display()
                ),
            )?,
            TrustOutcome::Removed => p.message(
                Role::Success,
                shown!(
                    "{} ({}) {}; its commands will be asked about",
                    self.repo,
                    self.path.display(),
                    did(self.dry_run, "is no longer approved", "would no longer be approved")
                ),
            )?,
            TrustOutcome::NotApproved => p.message(
                Role::Plain,
                shown!("{} ({}) was not approved", self.repo, self.path.display()),
            )?,
        }
        if self.outcome == TrustOutcome::Approved {
            for (key, commands) in &self.commands {
                for c in commands {
                    p.message(Role::Plain, shown!("  {}: {}", key, c))?;
                }
            }
        }
        nothing_written(p, self.dry_run)
    }
    fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "List approved repositories",
            &["gw", "trust", "list", "--format", "json"],
        )]
    }
}
