//! The layout of the grove directory (`$GW_HOME`, else `$HOME/.grove`).

use std::path::{Path, PathBuf};

/// Paths inside the grove directory. Nothing here touches the disk.
#[derive(Debug, Clone)]
pub struct GroveHome {
    root: PathBuf,
}

impl GroveHome {
    pub fn new(root: impl Into<PathBuf>) -> GroveHome {
        GroveHome { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    pub fn state(&self) -> PathBuf {
        self.root.join("state.json")
    }

    /// The advisory lock file shared with the Go grove (never deleted).
    pub fn state_lock(&self) -> PathBuf {
        self.root.join("state.lock")
    }

    pub fn remote_cache(&self) -> PathBuf {
        self.root.join("cache").join("remotes.json")
    }

    pub fn plugins(&self) -> PathBuf {
        self.root.join("plugins")
    }

    /// The announcements database of the Go grove's MCP server (≤ 1.1.11), SQLite.
    pub fn messages_db(&self) -> PathBuf {
        self.root.join("messages.db")
    }

    /// Where `gw-migrate --apply` (and `gw doctor --fix`) keep what they changed, one
    /// directory per run.
    pub fn migrate_backups(&self) -> PathBuf {
        self.root.join("migrate-backups")
    }

    /// Held by `gw-migrate --apply`, `gw-migrate restore` and `gw doctor --fix` while they
    /// change leftovers or their backups.
    pub fn migrate_lock(&self) -> PathBuf {
        self.root.join("locks").join("migrate.lock")
    }

    pub fn default_workspace_dir(&self) -> PathBuf {
        self.root.join("workspaces")
    }

    /// What hooks and plugins are told about where grove lives: `GW_HOME`, and the Go
    /// grove's `GROVE_DIR`, `GROVE_CONFIG` and `GROVE_STATE`, so a plugin or hook that runs
    /// `gw` again lands in the same grove directory.
    pub fn child_env(&self) -> [(&'static str, PathBuf); 4] {
        [
            ("GW_HOME", self.root.clone()),
            ("GROVE_DIR", self.root.clone()),
            ("GROVE_CONFIG", self.config()),
            ("GROVE_STATE", self.state()),
        ]
    }
}
