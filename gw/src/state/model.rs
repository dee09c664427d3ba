//! The workspace records stored in `state.json`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// All workspaces grove knows about, in the order they were created.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct State {
    pub workspaces: Vec<Workspace>,
}

/// One workspace: a directory holding one worktree per repository, all on one branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Workspace {
    pub name: String,
    pub path: PathBuf,
    pub branch: String,
    /// Local wall-clock time `YYYY-MM-DDTHH:MM:SS[.ffffff]` without a zone, as the Go grove
    /// writes it; kept verbatim.
    #[serde(default)]
    pub created_at: String,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub repos: Vec<RepoEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// What the workspace was created from: `preset:NAME` or a blueprint file path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blueprint: Option<Blueprint>,
    /// Fields this version does not know, kept so that a round trip loses nothing.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One repository's worktree inside a workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RepoEntry {
    pub repo_name: String,
    pub source_repo: PathBuf,
    pub worktree_path: PathBuf,
    pub branch: String,
    /// The branch existed before grove used it, so deleting the workspace keeps it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub preserve_branch: bool,
    /// The result of the repository's `.grove.toml` `setup` commands, when they ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<SetupRecord>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where the work in a workspace came from (a pull request, an issue…). Opaque to grove.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Source {
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub url: String,
    #[serde(default, rename = "ref", skip_serializing_if = "String::is_empty")]
    pub reference: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The identity of the blueprint a workspace was created from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Blueprint {
    /// `preset:NAME`, or the blueprint file's absolute path.
    pub name: String,
    /// SHA-256 (hex) of the normalised blueprint content.
    pub sha256: String,
}

/// How a repository's setup commands ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SetupStatus {
    Ready,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SetupRecord {
    pub status: SetupStatus,
    /// The failing command and the last lines of its output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn null_as_empty<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

impl State {
    /// Parses `state.json` text; blank text is an empty registry.
    pub fn parse(text: &str) -> Result<State, String> {
        if text.trim().is_empty() {
            return Ok(State::default());
        }
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// The file content: a two-space-indented array and a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.workspaces)
            .expect("state serialises: all keys are strings");
        s.push('\n');
        s
    }

    pub fn find(&self, name: &str) -> Option<&Workspace> {
        self.workspaces.iter().find(|w| w.name == name)
    }

    pub fn find_mut(&mut self, name: &str) -> Option<&mut Workspace> {
        self.workspaces.iter_mut().find(|w| w.name == name)
    }

    pub fn remove(&mut self, name: &str) -> Option<Workspace> {
        let i = self.workspaces.iter().position(|w| w.name == name)?;
        Some(self.workspaces.remove(i))
    }

    pub fn names(&self) -> Vec<String> {
        self.workspaces.iter().map(|w| w.name.clone()).collect()
    }

    /// The workspace whose directory contains `dir`, resolving symlinks on both sides;
    /// with nested workspaces the deepest one wins.
    pub fn containing(&self, dir: &Path) -> Option<&Workspace> {
        let dir = crate::fsx::canonical(dir);
        self.workspaces
            .iter()
            .filter(|w| {
                let root = crate::fsx::canonical(&w.path);
                dir.starts_with(&root)
            })
            .max_by_key(|w| crate::fsx::canonical(&w.path).components().count())
    }
}

impl Workspace {
    pub fn repo(&self, name: &str) -> Option<&RepoEntry> {
        self.repos.iter().find(|r| r.repo_name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `state.json` as the Go grove writes it, by hand from its format description:
    /// local timestamps with and without fractional seconds, a `source`, a
    /// `preserve_branch`, a `null` repo list and a field this version does not know.
    const GO_STATE: &str = r#"[
  {
    "name": "feat-login",
    "path": "/home/dev/.grove/workspaces/feat-login",
    "branch": "feat/login",
    "created_at": "2026-05-01T09:30:12.123456",
    "repos": [
      {
        "repo_name": "svc-auth",
        "source_repo": "/home/dev/src/svc-auth",
        "worktree_path": "/home/dev/.grove/workspaces/feat-login/svc-auth",
        "branch": "feat/login",
        "preserve_branch": true
      },
      {
        "repo_name": "web",
        "source_repo": "/home/dev/src/web",
        "worktree_path": "/home/dev/.grove/workspaces/feat-login/web",
        "branch": "feat/login"
      }
    ],
    "source": {
      "provider": "github",
      "url": "https://github.com/acme/web/pull/42",
      "ref": "42",
      "title": "Login page"
    }
  },
  {
    "name": "old",
    "path": "/home/dev/.grove/workspaces/old",
    "branch": "old",
    "created_at": "2025-12-24T18:00:00",
    "repos": null,
    "future_field": {"kept": [1, 2]}
  }
]"#;

    #[test]
    fn reads_go_state() {
        let st = State::parse(GO_STATE).unwrap();
        assert_eq!(st.workspaces.len(), 2);
        let ws = &st.workspaces[0];
        assert_eq!(ws.created_at, "2026-05-01T09:30:12.123456");
        assert!(ws.repos[0].preserve_branch);
        assert!(!ws.repos[1].preserve_branch);
        let src = ws.source.as_ref().unwrap();
        assert_eq!(
            (src.provider.as_str(), src.reference.as_str()),
            ("github", "42")
        );
        assert_eq!(st.workspaces[1].created_at, "2025-12-24T18:00:00");
        assert!(st.workspaces[1].repos.is_empty());
    }

    #[test]
    fn round_trip_keeps_every_field_and_the_shape() {
        let st = State::parse(GO_STATE).unwrap();
        let written: Value = serde_json::from_str(&st.to_json()).unwrap();
        let mut original: Value = serde_json::from_str(GO_STATE).unwrap();
        // The only normalisation: a null repo list is written as an empty list.
        original[1]["repos"] = Value::Array(vec![]);
        assert_eq!(written, original);
        assert!(written.is_array(), "state.json stays a bare array");
        // Key order of a workspace is the Go grove's.
        let keys: Vec<_> = written[0].as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            ["name", "path", "branch", "created_at", "repos", "source"]
        );
    }

    #[test]
    fn blank_and_corrupt() {
        assert_eq!(State::parse("").unwrap(), State::default());
        assert_eq!(State::parse("  \n").unwrap(), State::default());
        assert!(State::parse("{\"workspaces\": []}").is_err());
        assert!(State::parse("[{]").is_err());
    }
}
