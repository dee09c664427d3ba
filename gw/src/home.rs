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

    /// The log (`grove.log`, rotated to `grove.log.1` … `.3`).
    pub fn log(&self) -> PathBuf {
        self.root.join("grove.log")
    }

    /// Usage events (`workspace_created`, `workspace_deleted`) that plugins read.
    pub fn stats(&self) -> PathBuf {
        self.root.join("stats.json")
    }

    /// The repositories whose `.grove.toml` commands were approved, with the content
    /// approved (`gw trust`).
    pub fn trust(&self) -> PathBuf {
        self.root.join("trust.json")
    }

    /// Held while `trust.json` is read, changed and written.
    pub fn trust_lock(&self) -> PathBuf {
        self.locks().join("trust.lock")
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

    /// The operation journals (`<id>.json`, locked through `<id>.lock`).
    pub fn operations(&self) -> PathBuf {
        self.root.join("operations")
    }

    /// The lock held for a whole mutation of the workspace `name` (made file-name safe).
    /// A name that had to be changed or cut to fit gets its digest as well: two names must
    /// never share a lock (a restore `--as` a name alike its own would wait on itself).
    pub fn workspace_lock(&self, name: &str) -> PathBuf {
        let safe = lock_name(name);
        if safe == name {
            return self.locks().join(format!("ws-{safe}.lock"));
        }
        let digest = crate::fsx::sha256_hex(name.as_bytes());
        self.locks()
            .join(format!("ws-{safe}~{}.lock", &digest[..16]))
    }

    /// The lock held around git commands that write a source repository's config or
    /// refs: `base` names it for people, `digest` (of its canonical path) tells it apart.
    pub fn repo_lock(&self, base: &str, digest: &str) -> PathBuf {
        self.locks()
            .join(format!("repo-{}-{digest}.lock", lock_name(base)))
    }

    /// The lock held by a mutation that creates, checks out or deletes `branch` (in any
    /// repository): two creates of one new branch must not both think it is theirs to make.
    /// `digest` (of the branch name) tells apart names that read alike.
    pub fn branch_lock(&self, branch: &str, digest: &str) -> PathBuf {
        self.locks()
            .join(format!("branch-{}-{digest}.lock", lock_name(branch)))
    }

    /// The lock held while `stats.json` is appended to.
    pub fn stats_lock(&self) -> PathBuf {
        self.locks().join("stats.lock")
    }

    fn locks(&self) -> PathBuf {
        self.root.join("locks")
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

/// The directory quarantined workspaces and worktrees wait in until their bytes are
/// removed: `<workspace dir>/.trash`.
pub fn trash_dir(workspace_dir: &Path) -> PathBuf {
    workspace_dir.join(TRASH)
}

/// The name of [`trash_dir`].
pub const TRASH: &str = ".trash";

/// A name made safe (and short enough) for a lock file's name.
fn lock_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(80)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::GroveHome;

    #[test]
    fn no_two_workspace_names_share_a_lock() {
        let home = GroveHome::new("/g");
        let long = "n".repeat(250);
        let names = [
            "api".to_string(),
            "a b".to_string(),
            "a-b".to_string(),
            "a~b".to_string(),
            long.clone(),
            format!("{long}-restored"),
            format!("{}-restored", &long[..80]),
        ];
        let locks: std::collections::BTreeSet<_> =
            names.iter().map(|n| home.workspace_lock(n)).collect();
        assert_eq!(locks.len(), names.len(), "{locks:#?}");
        assert_eq!(home.workspace_lock("api"), home.workspace_lock("api"));
        assert!(home.workspace_lock("api").ends_with("locks/ws-api.lock"));
        for l in &locks {
            assert!(l.file_name().unwrap().len() <= 120, "{l:?}");
        }
    }
}
