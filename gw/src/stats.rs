//! `<grove dir>/stats.json`: the Go grove's append-only usage events, which plugins read.
//!
//! A JSON array of `{event: "workspace_created"|"workspace_deleted", timestamp,
//! workspace_name, branch, repo_names, repo_count}`, `timestamp` in local wall-clock time
//! like `created_at` (`2026-05-01T09:30:12.123456`). Events already in the file, and fields
//! grove does not know, are kept as they are.
//!
//! Recording is best effort, as in the Go grove: a file that cannot be read, parsed, locked
//! or written is left alone and the command goes on. A file that is not a JSON array is never
//! overwritten.

use std::time::Duration;

use serde::Serialize;

use crate::fsx;
use crate::home::GroveHome;
use crate::lock;
use crate::state::Workspace;

/// How long to wait for another process recording an event.
const LOCK_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    WorkspaceCreated,
    WorkspaceDeleted,
}

impl Event {
    pub fn as_str(self) -> &'static str {
        match self {
            Event::WorkspaceCreated => "workspace_created",
            Event::WorkspaceDeleted => "workspace_deleted",
        }
    }
}

#[derive(Debug, Serialize)]
struct Record<'a> {
    event: &'static str,
    timestamp: String,
    workspace_name: &'a str,
    branch: &'a str,
    repo_names: Vec<&'a str>,
    repo_count: usize,
}

/// Appends `event` for `ws` to `stats.json`; never fails.
pub fn record(home: &GroveHome, event: Event, ws: &Workspace) {
    let _ = try_record(home, event, ws);
}

fn try_record(home: &GroveHome, event: Event, ws: &Workspace) -> Result<(), String> {
    let path = home.stats();
    if !fsx::is_dir(home.root()) {
        return Err("no grove directory".into());
    }
    let _lock = lock::acquire(&home.stats_lock(), LOCK_WAIT).map_err(|e| e.to_string())?;
    let record = Record {
        event: event.as_str(),
        timestamp: crate::time::now_local(),
        workspace_name: &ws.name,
        branch: &ws.branch,
        repo_names: ws.repos.iter().map(|r| r.repo_name.as_str()).collect(),
        repo_count: ws.repos.len(),
    };
    // The event goes in before the array's closing bracket, as an element of the pretty
    // array: what was there is kept as it is, not parsed and written again (the log only
    // grows, and every create and delete paid for all of it).
    let element = serde_json::to_string_pretty(&record)
        .map_err(|e| e.to_string())?
        .lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n");
    let before = fsx::read_optional(&path).map_err(|e| e.to_string())?;
    let text = match before.as_deref().map(str::trim) {
        None | Some("") => format!("[\n{element}\n]\n"),
        Some(old) => match old.strip_prefix('[').and_then(|o| o.strip_suffix(']')) {
            Some(inner) if inner.trim().is_empty() => format!("[\n{element}\n]\n"),
            Some(_) => format!("{},\n{element}\n]\n", old[..old.len() - 1].trim_end()),
            // Not ours to repair.
            None => return Err(format!("{} is not a JSON array", path.display())),
        },
    };
    // Losing the last event to a power cut costs nothing: no `fsync`.
    fsx::write_atomic_lazily(&path, text.as_bytes()).map_err(|e| e.to_string())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// A workspace as `state.json` records it.
    fn ws(name: &str, repos: &[&str]) -> Workspace {
        let repos: Vec<serde_json::Value> = repos
            .iter()
            .map(|r| serde_json::json!({"repo_name": r, "source_repo": format!("/src/{r}"), "worktree_path": format!("/w/{name}/{r}"), "branch": format!("feat/{name}")}))
            .collect();
        let text = serde_json::json!([{"name": name, "path": format!("/w/{name}"), "branch": format!("feat/{name}"), "created_at": "", "repos": repos}]);
        crate::state::State::parse(&text.to_string())
            .unwrap()
            .workspaces
            .remove(0)
    }

    #[test]
    fn appends_events_keeping_what_was_there() {
        let dir = tempfile::tempdir().unwrap();
        let home = GroveHome::new(dir.path());
        let old = r#"[{"event":"workspace_created","timestamp":"2025-01-02T03:04:05.123+01:00","workspace_name":"go","branch":"go","repo_names":["a"],"repo_count":1,"extra":true}]"#;
        std::fs::write(home.stats(), old).unwrap();
        record(&home, Event::WorkspaceCreated, &ws("x", &["api", "web"]));
        record(&home, Event::WorkspaceDeleted, &ws("x", &["api", "web"]));
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(home.stats()).unwrap()).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a[0], serde_json::from_str::<Value>(old).unwrap()[0]);
        assert_eq!(a[1]["event"], "workspace_created");
        assert_eq!(a[2]["event"], "workspace_deleted");
        assert_eq!(a[2]["workspace_name"], "x");
        assert_eq!(a[2]["branch"], "feat/x");
        assert_eq!(a[2]["repo_names"], serde_json::json!(["api", "web"]));
        assert_eq!(a[2]["repo_count"], 2);
        let ts = a[1]["timestamp"].as_str().unwrap();
        assert!(
            crate::time::parse_created_at(ts).is_some(),
            "the Go layout: {ts}"
        );
        assert_eq!(ts.len(), "2026-05-01T09:30:12.123456".len(), "{ts}");
    }

    /// Appended in place, the file is still laid out as the whole array written pretty:
    /// from no file, from an empty array, one event after another.
    #[test]
    fn the_appended_file_is_the_pretty_array() {
        let dir = tempfile::tempdir().unwrap();
        let home = GroveHome::new(dir.path());
        for start in [None, Some("[]"), Some(" [ \n] \n")] {
            if let Some(text) = start {
                std::fs::write(home.stats(), text).unwrap();
            } else {
                let _ = std::fs::remove_file(home.stats());
            }
            record(&home, Event::WorkspaceCreated, &ws("x", &["api"]));
            record(&home, Event::WorkspaceDeleted, &ws("x", &["api"]));
            let text = std::fs::read_to_string(home.stats()).unwrap();
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v.as_array().unwrap().len(), 2, "{text}");
            assert_eq!(text, serde_json::to_string_pretty(&v).unwrap() + "\n");
        }
    }

    #[test]
    fn a_file_that_is_not_an_array_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let home = GroveHome::new(dir.path());
        std::fs::write(home.stats(), "{\"not\": \"ours\"}").unwrap();
        record(&home, Event::WorkspaceCreated, &ws("x", &["api"]));
        assert_eq!(
            std::fs::read_to_string(home.stats()).unwrap(),
            "{\"not\": \"ours\"}"
        );
        // A grove directory that does not exist: nothing is created, nothing fails.
        let gone = GroveHome::new(dir.path().join("missing"));
        record(&gone, Event::WorkspaceCreated, &ws("x", &["api"]));
        assert!(!dir.path().join("missing").exists());
    }
}
