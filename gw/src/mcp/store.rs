//! The announcements database of the Go grove's MCP server: `<GROVE_HOME>/messages.db`,
//! SQLite in WAL mode, one table, rows older than 30 days pruned on every open.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};
use serde::Serialize;

/// The categories `announce` accepts.
pub const CATEGORIES: &[&str] = &["breaking_change", "status", "warning", "info"];

/// How many rows a query returns at most.
const LIMIT: i64 = 50;

#[derive(Debug, thiserror::Error)]
#[error("announcements database `{}`: {source}", path.display())]
pub struct Error {
    pub path: PathBuf,
    #[source]
    pub source: rusqlite::Error,
}

/// One announcement, as `get_announcements` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Announcement {
    pub id: i64,
    pub workspace_id: String,
    pub repo_url: String,
    pub category: String,
    pub message: String,
    pub created_at: String,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database, switches it to WAL, creates the schema and
    /// prunes rows older than 30 days.
    pub fn open(path: &Path) -> Result<Store, Error> {
        let err = |source| Error {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            // A missing grove directory surfaces as SQLite's "unable to open" below.
            let _ = crate::fsx::create_dir_all(dir);
        }
        let conn = Connection::open(path).map_err(err)?;
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS announcements (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                workspace_id TEXT NOT NULL,
                repo_url TEXT NOT NULL,
                category TEXT NOT NULL,
                message TEXT NOT NULL,
                created_at TEXT DEFAULT (datetime('now'))
            );
            CREATE INDEX IF NOT EXISTS idx_repo_created ON announcements(repo_url, created_at);
            DELETE FROM announcements WHERE created_at < datetime('now', '-30 days');",
        )
        .map_err(err)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    fn err(&self, source: rusqlite::Error) -> Error {
        Error {
            path: self.path.clone(),
            source,
        }
    }

    /// Records an announcement and returns its id. `repo_url` is normalised.
    pub fn announce(
        &self,
        workspace: &str,
        repo_url: &str,
        category: &str,
        message: &str,
    ) -> Result<i64, Error> {
        self.conn
            .execute(
                "INSERT INTO announcements (workspace_id, repo_url, category, message) VALUES (?1, ?2, ?3, ?4)",
                params![workspace, normalize_url(repo_url), category, message],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The newest 50 announcements about `repo_url` from other workspaces, optionally only
    /// those created at or after `since` (`YYYY-MM-DD HH:MM:SS`, UTC).
    pub fn query(
        &self,
        repo_url: &str,
        exclude_workspace: &str,
        since: Option<&str>,
    ) -> Result<Vec<Announcement>, Error> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, workspace_id, repo_url, category, message, created_at FROM announcements
                 WHERE repo_url = ?1 AND workspace_id != ?2 AND (?3 IS NULL OR created_at >= ?3)
                 ORDER BY created_at DESC, id DESC LIMIT ?4",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![normalize_url(repo_url), exclude_workspace, since, LIMIT],
                |r| {
                    Ok(Announcement {
                        id: r.get(0)?,
                        workspace_id: r.get(1)?,
                        repo_url: r.get(2)?,
                        category: r.get(3)?,
                        message: r.get(4)?,
                        created_at: r.get::<_, Option<String>>(5)?.unwrap_or_default(),
                    })
                },
            )
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }
}

/// The repository key announcements are filed under (case preserved):
/// `git@host:owner/repo(.git)` and `http(s)://host/owner/repo(.git)` become `owner/repo`;
/// anything else loses a trailing `.git`.
pub fn normalize_url(url: &str) -> String {
    let url = url.trim();
    let strip = |s: &str| s.strip_suffix(".git").unwrap_or(s).to_string();
    if let Some(rest) = url.strip_prefix("git@")
        && let Some((_, path)) = rest.split_once(':')
    {
        return strip(path);
    }
    for scheme in ["https://", "http://"] {
        if let Some(rest) = url.strip_prefix(scheme)
            && let Some((_, path)) = rest.split_once('/')
        {
            return strip(path.trim_end_matches('/'));
        }
    }
    strip(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_normalised() {
        assert_eq!(normalize_url("git@github.com:Acme/Api.git"), "Acme/Api");
        assert_eq!(normalize_url("https://github.com/acme/api.git"), "acme/api");
        assert_eq!(normalize_url("http://host/acme/api"), "acme/api");
        assert_eq!(normalize_url("file:///srv/api.git"), "file:///srv/api");
        assert_eq!(normalize_url("acme/api"), "acme/api");
    }

    #[test]
    fn announcements_round_trip_excluding_own_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("messages.db");
        let s = Store::open(&path).unwrap();
        let a = s
            .announce(
                "ws-a",
                "git@github.com:acme/api.git",
                "breaking_change",
                "v2",
            )
            .unwrap();
        let b = s
            .announce("ws-b", "https://github.com/acme/api", "info", "hello")
            .unwrap();
        assert!(b > a);
        let seen_by_a = s.query("acme/api", "ws-a", None).unwrap();
        assert_eq!(seen_by_a.len(), 1);
        assert_eq!(seen_by_a[0].workspace_id, "ws-b");
        assert_eq!(seen_by_a[0].repo_url, "acme/api");
        let seen_by_c = s.query("git@h:acme/api", "ws-c", None).unwrap();
        assert_eq!(
            seen_by_c.iter().map(|x| x.id).collect::<Vec<_>>(),
            [b, a],
            "newest first"
        );
        assert!(
            s.query("acme/api", "ws-c", Some("9999-01-01 00:00:00"))
                .unwrap()
                .is_empty()
        );
        let mode: String = s
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn old_rows_are_pruned_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("messages.db");
        {
            let s = Store::open(&path).unwrap();
            s.announce("ws", "acme/api", "info", "recent").unwrap();
            s.conn
                .execute(
                    "INSERT INTO announcements (workspace_id, repo_url, category, message, created_at)
                     VALUES ('ws', 'acme/api', 'info', 'old', datetime('now', '-31 days'))",
                    [],
                )
                .unwrap();
            assert_eq!(s.query("acme/api", "other", None).unwrap().len(), 2);
        }
        let s = Store::open(&path).unwrap();
        let rows = s.query("acme/api", "other", None).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].message, "recent");
    }

    #[test]
    fn at_most_fifty_rows() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("messages.db")).unwrap();
        for i in 0..55 {
            s.announce("ws", "acme/api", "status", &format!("n{i}"))
                .unwrap();
        }
        let rows = s.query("acme/api", "other", None).unwrap();
        assert_eq!(rows.len(), 50);
        assert_eq!(rows[0].message, "n54");
    }
}
