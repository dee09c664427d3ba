//! Rendering of where a workspace stands: `gw status` and `gw context`.

use std::io;
use std::path::Path;

use serde_json::{Value, json};

use super::{json_line, json_pretty, lines, path_str, tsv, value};
use crate::action::NextAction;
use crate::ops::context::ContextReport;
use crate::ops::status::{RepoState, RepoStatus, StatusReport};
use crate::output::{DataFormat, Json, Printer, Render, Role, Shown};
use crate::shown;

// ---- status ----

fn dash(n: Option<usize>) -> String {
    n.map(|n| n.to_string()).unwrap_or_else(|| "-".into())
}

/// The Go grove's `status` field: `clean`, the short-status text, or `error: …`.
fn legacy_status(r: &RepoStatus) -> String {
    match (&r.error, r.changes.is_empty()) {
        (Some(e), _) => format!("error: {e}"),
        (None, true) => "clean".into(),
        (None, false) => r.changes.join("\n"),
    }
}

fn status_cell(r: &RepoStatus) -> String {
    if let Some(e) = &r.error {
        return if r.state == RepoState::Missing {
            "missing".into()
        } else {
            format!("error: {e}")
        };
    }
    let mut s = match (r.changed, r.unreadable.len()) {
        (0, 0) => "clean".to_string(),
        (n, 0) => format!("{n} changed"),
        (0, u) => format!("{u} unreadable"),
        (n, u) => format!("{n} changed, {u} unreadable"),
    };
    if let Some(op) = &r.in_progress {
        s.push_str(&format!(" ({op} in progress)"));
    }
    s
}

fn live_branch(r: &RepoStatus) -> String {
    r.branch.clone().unwrap_or_else(|| "(detached)".into())
}

impl Render for StatusReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let name = p.paint(Role::Name, &self.workspace);
        p.line(shown!("Workspace: {}  ({})", name, self.path.display()))?;
        if let Some(s) = &self.source {
            p.line(shown!("Source: {}", super::workspace::source_line(s)))?;
        }
        p.line("")?;
        let rows: Vec<Vec<Shown>> = self
            .repos
            .iter()
            .map(|r| {
                let ab = Shown::text(ahead_behind(r.ahead, r.behind));
                let mut branch = Shown::text(live_branch(r));
                if r.branch.as_deref() != Some(r.recorded_branch.as_str()) {
                    branch = p.paint(Role::Warning, branch);
                }
                let status = Shown::text(status_cell(r));
                let status = if r.changed > 0 || r.error.is_some() || !r.unreadable.is_empty() {
                    p.paint(Role::Warning, status)
                } else {
                    status
                };
                vec![Shown::text(&r.repo), branch, ab, status]
            })
            .collect();
        p.table(&["Repo", "Branch", "↑↓", "Status"], &rows)?;
        // What git would warn about, as git says it (names from the file system escaped).
        for r in &self.repos {
            for u in &r.unreadable {
                let text = format!("{}: {} cannot be read ({})", r.repo, u.path, u.reason);
                p.message(Role::Warning, Shown::text(text))?;
            }
            for w in &r.warnings {
                p.message(Role::Warning, Shown::text(format!("{}: {w}", r.repo)))?;
            }
        }
        if !self.ports.is_empty() {
            let slot = self.slot.map(|s| s.to_string()).unwrap_or_default();
            p.line("")?;
            p.line(shown!("Ports (slot {}):", slot))?;
            super::run::ports_table(p, &self.ports)?;
        } else if let Some(why) = self.unknown.get("ports") {
            p.line("")?;
            p.line(shown!("Ports: {}", why))?;
        }
        Ok(())
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        let repo = |r: &RepoStatus| {
            json!({
                "repo": r.repo,
                "branch": r.branch.clone().unwrap_or_default(),
                "status": legacy_status(r),
                "changed": r.changed,
                "ahead": dash(r.ahead),
                "behind": dash(r.behind),
                "base_branch": r.base_branch.clone().unwrap_or_default(),
            })
        };
        Some(match f {
            DataFormat::Json => {
                let mut doc = json!({ "workspace": self.workspace, "path": self.path });
                if let Some(s) = &self.source {
                    doc["source"] = serde_json::to_value(s).expect("a source serialises");
                }
                doc["repos"] = Value::Array(self.repos.iter().map(repo).collect());
                json_pretty(p, &doc)
            }
            DataFormat::Jsonl => self.repos.iter().try_for_each(|r| {
                let mut v = repo(r);
                v["workspace"] = json!(self.workspace);
                v["path"] = json!(r.path);
                json_line(p, &v)
            }),
            DataFormat::Tsv => tsv(
                p,
                &[
                    "WORKSPACE",
                    "REPO",
                    "PATH",
                    "BRANCH",
                    "AHEAD",
                    "BEHIND",
                    "CHANGED",
                    "STATUS",
                ],
                &self
                    .repos
                    .iter()
                    .map(|r| {
                        vec![
                            self.workspace.clone(),
                            r.repo.clone(),
                            path_str(&r.path),
                            r.branch.clone().unwrap_or_default(),
                            dash(r.ahead),
                            dash(r.behind),
                            r.changed.to_string(),
                            status_cell(r),
                        ]
                    })
                    .collect::<Vec<_>>(),
            ),
            DataFormat::Name => lines(p, self.repos.iter().map(|r| r.repo.as_str())),
            DataFormat::Path => {
                let paths: Vec<String> = self.repos.iter().map(|r| path_str(&r.path)).collect();
                lines(p, paths.iter().map(String::as_str))
            }
            DataFormat::Table => return None,
        })
    }
    fn next_actions(&self) -> Vec<NextAction> {
        StatusReport::next_actions(self)
    }
}

// ---- context ----

fn tilde(p: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".into(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path_str(p),
    }
}

impl Render for ContextReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let home = self.grove_home.parent();
        let t = |x: &Path| tilde(x, home);
        p.line(shown!(
            "Grove:      {} ({})",
            self.grove_version,
            t(&self.grove_home)
        ))?;
        if !self.initialized {
            p.line("Config:     not initialized (run `gw init <repo-dir>`)")?;
        } else {
            p.line(shown!("Config:     {}", t(&self.config_path)))?;
        }
        let dirs: Vec<String> = self.repo_dirs.iter().map(|d| t(d)).collect();
        p.line(shown!(
            "Repo dirs:  {}",
            if dirs.is_empty() {
                "none".into()
            } else {
                dirs.join(", ")
            }
        ))?;
        p.line(shown!(
            "Presets:    {}",
            if self.presets.is_empty() {
                "none".into()
            } else {
                self.presets.join(", ")
            }
        ))?;
        p.line(shown!(
            "Workspaces: {} in {}",
            self.workspace_count,
            t(&self.workspace_dir)
        ))?;
        let Some(ws) = &self.workspace else {
            return Ok(());
        };
        p.line("")?;
        let name = p.paint(Role::Name, &ws.workspace);
        p.line(shown!(
            "Workspace: {}  ({})  branch {}",
            name,
            t(&ws.path),
            ws.branch
        ))?;
        let rows: Vec<Vec<Shown>> = ws
            .repos
            .iter()
            .map(|r| {
                let ab = ahead_behind(r.ahead, r.behind);
                [
                    r.repo.clone(),
                    live_branch(r),
                    r.base_branch.clone().unwrap_or_else(|| "-".into()),
                    ab,
                    status_cell(r),
                    format!("{:?}", r.preparation.status).to_lowercase(),
                ]
                .iter()
                .map(Shown::text)
                .collect()
            })
            .collect();
        p.table(&["Repo", "Branch", "Base", "↑↓", "State", "Setup"], &rows)
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        self.next_actions.clone()
    }
}

/// `2↑ 1↓`, or `-` when either count is unknown.
fn ahead_behind(ahead: Option<usize>, behind: Option<usize>) -> String {
    match (ahead, behind) {
        (Some(a), Some(b)) => format!("{a}↑ {b}↓"),
        _ => "-".into(),
    }
}
