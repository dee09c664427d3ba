//! `trust.json`: the repositories whose `.grove.toml` commands the user approved, each with
//! the SHA-256 of the commands approved (so an edited command is asked about again).
//!
//! ```json
//! {"version": 1, "repos": [{"repo": "/home/me/src/api", "sha256": "…",
//!   "approved_at": "2026-12-03T10:00:00Z", "how": "asked"}]}
//! ```
//!
//! Read through `fsx` (a regular file of bounded size), written atomically under
//! `locks/trust.lock`. A file that cannot be read is an error naming it (`CORRUPT_STATE`),
//! never overwritten.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Error;
use crate::fsx;
use crate::home::GroveHome;
use crate::lock;

/// The format's version.
const VERSION: u32 = 1;

/// One approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Entry {
    /// The repository (its main checkout), absolute and canonical.
    pub repo: PathBuf,
    /// SHA-256 of the commands approved (`RepoConfig::commands_sha256`).
    pub sha256: String,
    /// RFC 3339, UTC.
    pub approved_at: String,
    /// How: `asked` (a person answered yes), `yes` (`--yes`), `command` (`gw trust`), or
    /// `upgrade` (already used by the grove this one replaced).
    pub how: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    repos: Vec<Entry>,
}

/// The approvals.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    pub entries: Vec<Entry>,
}

impl Trust {
    /// The approval of `repo`, whatever it approved.
    pub fn entry(&self, repo: &Path) -> Option<&Entry> {
        self.entries.iter().find(|e| e.repo == repo)
    }

    /// Whether `repo`'s commands hashing to `sha256` are approved.
    pub fn allows(&self, repo: &Path, sha256: &str) -> bool {
        self.entry(repo).is_some_and(|e| e.sha256 == sha256)
    }
}

/// Reads `trust.json`: `None` when there is none yet.
pub fn load(home: &GroveHome) -> Result<Option<Trust>, Error> {
    let path = home.trust();
    let Some(text) = fsx::read_optional(&path)? else {
        return Ok(None);
    };
    let file: File = serde_json::from_str(&text).map_err(|e| Error::Corrupt {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    if file.version != VERSION {
        return Err(Error::Corrupt {
            path,
            detail: format!("unknown version {} (this gw knows {VERSION})", file.version),
        });
    }
    Ok(Some(Trust {
        entries: file.repos,
    }))
}

/// Changes the approvals with `f` under the lock (an absent file starts empty) and writes
/// them back; returns what `f` returned.
pub fn update<T>(
    home: &GroveHome,
    timeout: Duration,
    f: impl FnOnce(&mut Trust) -> T,
) -> Result<T, Error> {
    let _lock = lock::acquire(&home.trust_lock(), timeout)?;
    let mut trust = load(home)?.unwrap_or_default();
    let out = f(&mut trust);
    let file = File {
        version: VERSION,
        repos: std::mem::take(&mut trust.entries),
    };
    let text = serde_json::to_string_pretty(&file).expect("trust serialises");
    fsx::write_atomic(&home.trust(), format!("{text}\n").as_bytes())?;
    Ok(out)
}

/// Records `entry`, replacing any earlier approval of the same repository.
pub fn approve(trust: &mut Trust, entry: Entry) {
    trust.entries.retain(|e| e.repo != entry.repo);
    trust.entries.push(entry);
    trust.entries.sort_by(|a, b| a.repo.cmp(&b.repo));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(repo: &str, sha: &str) -> Entry {
        Entry {
            repo: repo.into(),
            sha256: sha.into(),
            approved_at: "2026-12-03T10:00:00Z".into(),
            how: "command".into(),
        }
    }

    #[test]
    fn approvals_round_trip_and_replace_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let home = GroveHome::new(dir.path());
        assert!(load(&home).unwrap().is_none());
        update(&home, Duration::from_secs(1), |t| {
            approve(t, entry("/r/b", "1"));
            approve(t, entry("/r/a", "2"));
            approve(t, entry("/r/b", "3"));
        })
        .unwrap();
        let t = load(&home).unwrap().unwrap();
        assert_eq!(t.entries, [entry("/r/a", "2"), entry("/r/b", "3")]);
        assert!(t.allows(Path::new("/r/b"), "3"));
        assert!(!t.allows(Path::new("/r/b"), "1"));
        assert!(!t.allows(Path::new("/r/c"), "3"));
    }

    #[test]
    fn an_unreadable_file_is_an_error_naming_it_and_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let home = GroveHome::new(dir.path());
        fsx::write_atomic(&home.trust(), b"{not json").unwrap();
        let e = load(&home).unwrap_err();
        assert!(e.to_string().contains("trust.json"), "{e}");
        assert!(update(&home, Duration::from_secs(1), |_| ()).is_err());
        assert_eq!(
            fsx::read_optional(&home.trust()).unwrap().as_deref(),
            Some("{not json")
        );
    }
}
