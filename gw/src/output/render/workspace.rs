//! Rendering of the workspace lifecycle: create, delete, list, show, go.

use std::io;

use serde_json::{Value, json};

use super::{json_line, json_pretty, lines, path_str, tsv, value};
use crate::action::NextAction;
use crate::error::Error;
use crate::ops::create::CreateReport;
use crate::ops::delete::{DeleteReport, WorkspaceOutcome};
use crate::ops::go::{CloseReport, GoReport};
use crate::ops::list::{
    ListPortsReport, ListReport, ListStatusReport, ShowReport, ShowView, WorkspaceView,
};
use crate::output::{DataFormat, Json, Printer, Render, Role, Shown};
use crate::shown;
use crate::state::listing::WorkspaceRef;
use crate::state::{State, Workspace};

// ---- create, delete ----

impl Render for CreateReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if let Some(old) = &self.replaced {
            p.message(Role::Success, shown!("Workspace {} deleted", old))?;
        }
        let width = self.repos.iter().map(|r| r.repo.len()).max().unwrap_or(0);
        for r in &self.repos {
            let name = format!("{:<width$}", r.repo);
            p.message(
                Role::Plain,
                shown!("  {}  {}", name, r.detail.as_deref().unwrap_or("")),
            )?;
        }
        for c in &self.copied {
            p.message(Role::Plain, shown!("  {}  copied {}", c.repo, c.summary()))?;
        }
        p.message(
            Role::Success,
            shown!("Workspace {} created at {}", self.name, self.path.display()),
        )
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        CreateReport::next_actions(self)
    }
}

impl Render for DeleteReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        for d in self
            .deleted
            .iter()
            .filter(|d| d.outcome == WorkspaceOutcome::Deleted)
        {
            match &d.trash {
                Some(_) => p.message(
                    Role::Success,
                    shown!(
                        "Workspace {} deleted (kept in the trash: `gw restore {}` brings it back)",
                        d.name,
                        crate::proc::shell_quote(&d.name)
                    ),
                )?,
                None => p.message(Role::Success, shown!("Workspace {} deleted", d.name))?,
            }
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn next_actions(&self) -> Vec<NextAction> {
        DeleteReport::next_actions(self)
    }
    fn failure(&self) -> Option<&Error> {
        DeleteReport::failure(self)
    }
}

// ---- list, ws show ----

fn repo_names(ws: &Workspace) -> Vec<String> {
    ws.repos.iter().map(|r| r.repo_name.clone()).collect()
}

/// `gw list --format json`'s result, [`ListView`](crate::ops::list::ListView) written by
/// hand: each string is copied as the token it is in `state.json`, keys are literals, and a
/// workspace is assembled in a small buffer before it is written. Serde's per-token work
/// (escaping every key again, a call per punctuation mark) was a fifth of `gw list`.
fn write_list(records: &[WorkspaceRef<'_>], w: &mut dyn io::Write) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    w.write_all(b"{\"workspaces\":[")?;
    for (i, r) in records.iter().enumerate() {
        let view = WorkspaceView::of_record(r);
        buf.clear();
        if i > 0 {
            buf.push(b',');
        }
        let field = |buf: &mut Vec<u8>, key: &[u8], token: &str| {
            buf.extend_from_slice(key);
            buf.extend_from_slice(token.as_bytes());
        };
        field(&mut buf, b"{\"name\":", r.name.token());
        field(&mut buf, b",\"path\":", r.path.token());
        field(&mut buf, b",\"branch\":", r.branch.token());
        buf.extend_from_slice(b",\"created_at\":");
        serde_json::to_writer(&mut buf, &view.created_at)?;
        buf.extend_from_slice(b",\"repos\":[");
        for (j, repo) in r.repos.iter().enumerate() {
            if j > 0 {
                buf.push(b',');
            }
            field(&mut buf, b"{\"repo\":", repo.repo_name.token());
            field(&mut buf, b",\"branch\":", repo.branch.token());
            field(&mut buf, b",\"path\":", repo.worktree_path.token());
            field(&mut buf, b",\"source_repo\":", repo.source_repo.token());
            buf.extend_from_slice(if repo.preserve_branch {
                b",\"preserve_branch\":true}"
            } else {
                b",\"preserve_branch\":false}"
            });
        }
        buf.extend_from_slice(b"],\"repo_count\":");
        buf.extend_from_slice(r.repos.len().to_string().as_bytes());
        if let Some(source) = &r.source {
            buf.extend_from_slice(b",\"source\":");
            serde_json::to_writer(&mut buf, source)?;
        }
        if let Some(blueprint) = &r.blueprint {
            buf.extend_from_slice(b",\"blueprint\":");
            serde_json::to_writer(&mut buf, blueprint)?;
        }
        if let Some(slot) = r.slot {
            buf.extend_from_slice(b",\"slot\":");
            buf.extend_from_slice(slot.to_string().as_bytes());
        }
        if !view.unknown.is_empty() {
            buf.extend_from_slice(b",\"unknown\":");
            serde_json::to_writer(&mut buf, &view.unknown)?;
        }
        buf.push(b'}');
        w.write_all(&buf)?;
    }
    write!(w, "],\"count\":{}}}", records.len())
}

fn date(created_at: &str) -> String {
    created_at.chars().take(10).collect()
}

impl Render for ListReport {
    fn result(&self) -> Json<'_> {
        Json::written(|w| write_list(self.listing.records(), w))
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let records = self.listing.records();
        if records.is_empty() {
            return p.message(
                Role::Plain,
                "No workspaces; create one with `gw create NAME -b BRANCH -r REPOS`",
            );
        }
        let rows: Vec<Vec<Shown>> = records
            .iter()
            .map(|w| {
                let repos: Vec<_> = w.repos.iter().map(|r| r.repo_name.to_str()).collect();
                let created = w.created_at.map(|c| c.to_str()).unwrap_or_default();
                let name = w.name.to_str();
                // `*` marks the workspace you are in, as git marks the current branch.
                let name = match &self.current {
                    Some(c) if *c == name => shown!("* {}", p.paint(Role::Success, &name)),
                    Some(_) => shown!("  {}", p.paint(Role::Name, &name)),
                    None => p.paint(Role::Name, &name),
                };
                vec![
                    name,
                    Shown::text(w.branch.to_str()),
                    Shown::text(repos.join(", ")),
                    Shown::text(date(&created)),
                ]
            })
            .collect();
        // The name is what you type next: never cut (the other columns are, or the rows
        // become a list).
        p.table_keeping(&["Name", "Branch", "Repos", "Created"], &rows, &[0])
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        // The Go grove's shapes are the state objects themselves, unknown fields included:
        // read the full model (the listing skips those).
        let state = State::parse(self.listing.text()).expect("the listing accepted this text");
        let workspaces = &state.workspaces;
        Some(match f {
            DataFormat::Json => json_pretty(p, workspaces),
            DataFormat::Jsonl => workspaces.iter().try_for_each(|w| json_line(p, w)),
            DataFormat::Tsv => tsv(
                p,
                &["NAME", "BRANCH", "REPOS", "CREATED"],
                &workspaces
                    .iter()
                    .map(|w| {
                        vec![
                            w.name.clone(),
                            w.branch.clone(),
                            repo_names(w).join(","),
                            w.created_at.clone(),
                        ]
                    })
                    .collect::<Vec<_>>(),
            ),
            DataFormat::Name => lines(p, workspaces.iter().map(|w| w.name.as_str())),
            DataFormat::Path => {
                let paths: Vec<String> = workspaces.iter().map(|w| path_str(&w.path)).collect();
                lines(p, paths.iter().map(String::as_str))
            }
            DataFormat::Table => return None,
        })
    }
    fn next_actions(&self) -> Vec<NextAction> {
        ListReport::next_actions(self)
    }
}

impl Render for ListStatusReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn next_actions(&self) -> Vec<NextAction> {
        let w = self
            .workspaces
            .iter()
            .find(|w| w.modified + w.errors > 0)
            .or(self.workspaces.first());
        match w {
            Some(w) => vec![NextAction::read(
                format!("Inspect workspace {}", w.name),
                &["gw", "status", &w.name, "--format", "json"],
            )],
            None => Vec::new(),
        }
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.workspaces.is_empty() {
            return p.message(Role::Plain, "No workspaces");
        }
        let rows: Vec<Vec<Shown>> = self
            .workspaces
            .iter()
            .map(|w| {
                vec![
                    p.paint(Role::Name, &w.name),
                    Shown::text(&w.branch),
                    Shown::text(w.repos),
                    Shown::text(&w.status),
                ]
            })
            .collect();
        p.table(&["Name", "Branch", "Repos", "Status"], &rows)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        let bare: Vec<Value> = self
            .workspaces
            .iter()
            .map(|w| json!({"name": w.name, "branch": w.branch, "repos": w.repos, "status": w.status, "path": w.path}))
            .collect();
        Some(match f {
            DataFormat::Json => json_pretty(p, &bare),
            DataFormat::Jsonl => bare.iter().try_for_each(|v| json_line(p, v)),
            DataFormat::Tsv => tsv(
                p,
                &["NAME", "BRANCH", "REPOS", "STATUS", "PATH"],
                &self
                    .workspaces
                    .iter()
                    .map(|w| {
                        vec![
                            w.name.clone(),
                            w.branch.clone(),
                            w.repos.to_string(),
                            w.status.clone(),
                            path_str(&w.path),
                        ]
                    })
                    .collect::<Vec<_>>(),
            ),
            DataFormat::Name | DataFormat::Path => {
                names_or_paths(p, f, self.workspaces.iter().map(|w| (&*w.name, &*w.path)))
            }
            DataFormat::Table => return None,
        })
    }
}

/// `-o name` or `-o path`: one workspace a line.
fn names_or_paths<'a>(
    p: &mut Printer,
    f: DataFormat,
    workspaces: impl Iterator<Item = (&'a str, &'a std::path::Path)>,
) -> io::Result<()> {
    let shown: Vec<String> = workspaces
        .map(|(name, path)| match f {
            DataFormat::Path => path_str(path),
            _ => name.to_string(),
        })
        .collect();
    lines(p, shown.iter().map(String::as_str))
}

impl Render for ListPortsReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.workspaces.is_empty() {
            return p.message(Role::Plain, "No workspaces");
        }
        let mut rows: Vec<Vec<Shown>> = Vec::new();
        for w in &self.workspaces {
            let name = p.paint(Role::Name, &w.name);
            let slot = Shown::text(w.slot.map(|s| s.to_string()).unwrap_or_else(|| "-".into()));
            if w.ports.is_empty() {
                let why = match w.unknown.values().next() {
                    Some(_) if w.slot.is_none() => "no slot yet".to_string(),
                    Some(why) => why.clone(),
                    None => "no ports declared".to_string(),
                };
                let blank = || Shown::from("");
                rows.push(vec![name, slot, blank(), blank(), Shown::text(why)]);
                continue;
            }
            for s in &w.ports {
                rows.push(vec![
                    name.clone(),
                    slot.clone(),
                    Shown::text(s.port.port),
                    shown!("{}.{}", s.port.repo, s.port.name),
                    super::run::listening_shown(p, s),
                ]);
            }
        }
        p.table(&["Name", "Slot", "Port", "Repo.name", "Listening"], &rows)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        let flat: Vec<Value> = self
            .workspaces
            .iter()
            .flat_map(|w| {
                w.ports.iter().map(move |s| {
                    json!({"workspace": w.name, "slot": w.slot, "repo": s.port.repo,
                        "name": s.port.name, "port": s.port.port, "var": s.port.var,
                        "listening": s.listening})
                })
            })
            .collect();
        Some(match f {
            DataFormat::Json => json_pretty(p, &self.workspaces),
            DataFormat::Jsonl => flat.iter().try_for_each(|v| json_line(p, v)),
            DataFormat::Tsv => tsv(
                p,
                &[
                    "WORKSPACE",
                    "SLOT",
                    "PORT",
                    "REPO",
                    "NAME",
                    "VAR",
                    "LISTENING",
                ],
                &self
                    .workspaces
                    .iter()
                    .flat_map(|w| {
                        w.ports.iter().map(move |s| {
                            vec![
                                w.name.clone(),
                                w.slot.map(|s| s.to_string()).unwrap_or_default(),
                                s.port.port.to_string(),
                                s.port.repo.clone(),
                                s.port.name.clone(),
                                s.port.var.clone(),
                                super::run::listening_cell(s),
                            ]
                        })
                    })
                    .collect::<Vec<_>>(),
            ),
            DataFormat::Name | DataFormat::Path => {
                names_or_paths(p, f, self.workspaces.iter().map(|w| (&*w.name, &*w.path)))
            }
            DataFormat::Table => return None,
        })
    }
}

impl Render for ShowReport {
    fn result(&self) -> Json<'_> {
        value(ShowView {
            workspace: WorkspaceView::of(&self.workspace),
        })
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let w = &self.workspace;
        let name = p.paint(Role::Name, &w.name);
        p.line(shown!("Name:    {}", name))?;
        p.line(shown!("Branch:  {}", w.branch))?;
        p.line(shown!("Path:    {}", w.path.display()))?;
        p.line(shown!("Created: {}", w.created_at))?;
        p.line(shown!("Repos:   {}", w.repos.len()))?;
        if let Some(s) = &w.source {
            p.line(shown!("Source:  {}", source_line(s)))?;
        }
        if w.repos.is_empty() {
            return Ok(());
        }
        p.line("")?;
        let rows: Vec<Vec<Shown>> = w
            .repos
            .iter()
            .map(|r| {
                let rel = r
                    .worktree_path
                    .strip_prefix(&w.path)
                    .unwrap_or(&r.worktree_path);
                vec![
                    Shown::text(&r.repo_name),
                    Shown::text(&r.branch),
                    Shown::text(rel),
                    Shown::text(&r.source_repo),
                ]
            })
            .collect();
        p.table(&["Repo", "Branch", "Worktree", "Source"], &rows)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        let w = &self.workspace;
        Some(match f {
            DataFormat::Json => json_pretty(p, w),
            DataFormat::Jsonl => json_line(p, w),
            DataFormat::Tsv => tsv(
                p,
                &["NAME", "PATH", "BRANCH", "CREATED", "REPOS"],
                &[vec![
                    w.name.clone(),
                    path_str(&w.path),
                    w.branch.clone(),
                    w.created_at.clone(),
                    repo_names(w).join(","),
                ]],
            ),
            DataFormat::Name => lines(p, w.repos.iter().map(|r| r.repo_name.as_str())),
            DataFormat::Path => {
                let paths: Vec<String> =
                    w.repos.iter().map(|r| path_str(&r.worktree_path)).collect();
                lines(p, paths.iter().map(String::as_str))
            }
            DataFormat::Table => return None,
        })
    }
    fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "Inspect repo state",
            &["gw", "status", &self.workspace.name, "--format", "json"],
        )]
    }
}

pub(super) fn source_line(s: &crate::state::Source) -> String {
    let mut parts = vec![s.provider.clone()];
    if !s.reference.is_empty() {
        parts.push(s.reference.clone());
    }
    let mut line = parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if !s.title.is_empty() {
        line.push_str(&format!(" — {}", s.title));
    }
    if !s.url.is_empty() {
        line.push_str(&format!("  ({})", s.url));
    }
    line
}

// ---- go, shell-init, presets ----

impl Render for GoReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn next_actions(&self) -> Vec<NextAction> {
        match &self.workspace {
            Some(ws) => vec![NextAction::read(
                "Inspect the workspace",
                &["gw", "status", ws, "--format", "json"],
            )],
            None => Vec::new(),
        }
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.integrated {
            // The shell integration goes there.
            return Ok(());
        }
        // `cd "$(gw go NAME)"` (command substitution drops the newline), or an older shell
        // integration, captures this. On a terminal nothing captured it: the integration
        // is missing.
        p.line(Shown::text(&self.path))?;
        if p.out_is_terminal {
            p.message(
                Role::Hint,
                "a program cannot change its shell's directory: add `eval \"$(gw shell-init)\"` to your shell's rc file so that `gw go` does, or run `cd \"$(gw go NAME)\"`",
            )?;
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

impl Render for CloseReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, _: &mut Printer) -> io::Result<()> {
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

impl Render for crate::ops::trash::UnlinkReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, _: &mut Printer) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Listing;

    #[test]
    fn the_hand_written_list_is_the_serialised_view() {
        let text = r#"[
  {"name": "a\u0062", "path": "/w/ab", "branch": "feat/\"x\"", "created_at": "2026-05-01T09:30:12.123456",
   "repos": [{"repo_name": "r", "source_repo": "/s/r", "worktree_path": "/w/ab/r", "branch": "feat/x", "preserve_branch": true},
             {"repo_name": "q", "source_repo": "/s/q", "worktree_path": "/w/ab/q", "branch": "feat/x", "later": 1}],
   "source": {"provider": "github", "url": "u", "ref": "", "extra": [1]},
   "blueprint": {"name": "preset:p", "sha256": "00"}, "slot": 4, "future": true},
  {"name": "old", "path": "/w/old", "branch": "old", "repos": null, "slot": 0},
  {"name": "odd", "path": "/w/odd", "branch": "odd", "created_at": "yesterday", "repos": []}
]"#;
        for text in [text, "[]", ""] {
            let report = ListReport {
                listing: Listing::parse(text.to_string()).unwrap(),
                current: None,
            };
            let mut written = Vec::new();
            write_list(report.listing.records(), &mut written).unwrap();
            let expected = serde_json::to_string(&report.view()).unwrap();
            assert_eq!(String::from_utf8(written).unwrap(), expected);
        }
    }
}
