//! `cache/remotes.json`: origin URLs by repository path, so discovery does not open every
//! repository on every run. An entry is stale when the repository's `.git/config` changed
//! or it is a day old. The cache is best effort: unreadable means empty.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::fsx;
use crate::git;

const TTL: Duration = Duration::from_secs(24 * 3600);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// Empty when the repository has no origin.
    url: String,
    /// `.git/config` modification time, in nanoseconds since the epoch.
    mtime: i128,
    /// When the entry was written, in seconds since the epoch.
    ts: u64,
}

pub struct RemoteCache {
    path: PathBuf,
    entries: BTreeMap<String, Entry>,
    dirty: bool,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn config_mtime(repo: &Path) -> i128 {
    std::fs::metadata(repo.join(".git").join("config"))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(-1)
}

impl RemoteCache {
    pub fn load(path: &Path) -> RemoteCache {
        let entries = fsx::read_optional(path)
            .ok()
            .flatten()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        RemoteCache {
            path: path.to_path_buf(),
            entries,
            dirty: false,
        }
    }

    /// Origin URLs for `repos`, in order; misses are read in parallel.
    pub fn resolve(&mut self, repos: &[PathBuf]) -> Vec<Option<String>> {
        let now = now();
        let keys: Vec<(String, i128)> = repos
            .iter()
            .map(|p| {
                (
                    fsx::canonical(p).to_string_lossy().into_owned(),
                    config_mtime(p),
                )
            })
            .collect();
        let mut out: Vec<Option<Option<String>>> = keys
            .iter()
            .map(|(k, mtime)| {
                self.entries
                    .get(k)
                    .filter(|e| e.mtime == *mtime && now.saturating_sub(e.ts) < TTL.as_secs())
                    .map(|e| Some(e.url.clone()).filter(|u| !u.is_empty()))
            })
            .collect();
        let misses: Vec<usize> = (0..repos.len()).filter(|&i| out[i].is_none()).collect();
        if misses.is_empty() {
            return out.into_iter().map(|o| o.flatten()).collect();
        }
        let read = crate::parallel::map(&misses, |&i| {
            git::Repo::open(&repos[i]).ok().and_then(|r| r.origin_url())
        });
        for (i, url) in misses.into_iter().zip(read) {
            let (key, mtime) = &keys[i];
            self.entries.insert(
                key.clone(),
                Entry {
                    url: url.clone().unwrap_or_default(),
                    mtime: *mtime,
                    ts: now,
                },
            );
            self.dirty = true;
            out[i] = Some(url);
        }
        out.into_iter().map(|o| o.flatten()).collect()
    }

    /// Writes the cache when it changed; failures are ignored (it is only a cache).
    pub fn save(&self) {
        if self.dirty
            && let Ok(text) = serde_json::to_string_pretty(&self.entries)
        {
            let _ = fsx::write_atomic_lazily(&self.path, text.as_bytes());
        }
    }
}
