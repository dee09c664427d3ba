//! Repository discovery: which repositories `gw create -r NAME` can use.
//!
//! Each configured repo dir is walked to a depth of 3 (a direct child is depth 0),
//! skipping hidden directories, `node_modules`, `__pycache__` and the workspace directory
//! (grove's own worktrees must never be discovered), and never descending into a
//! repository. A directory is a repository when it holds a `.git` directory. Origin URLs
//! come from a cache invalidated by the repository's `.git/config` mtime.

mod cache;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use walkdir::WalkDir;

use crate::fsx;
use crate::git;
use crate::home::GroveHome;

/// Deepest level searched below a repo dir (0 = a direct child).
pub const MAX_DEPTH: usize = 3;

/// A repository grove can put in a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Repo {
    /// The directory name; what `-r` refers to.
    pub name: String,
    pub path: PathBuf,
    /// The origin URL, if any.
    pub remote: Option<String>,
    /// `owner/repo` parsed from the origin URL, else the name.
    pub display_name: String,
    #[serde(skip)]
    pub depth: usize,
}

/// The result of a discovery walk.
#[derive(Debug, Default)]
pub struct Discovery {
    pub repos: Vec<Repo>,
    /// Problems that did not stop the walk (a repo dir that does not exist, a name
    /// shadowed by another repository).
    pub warnings: Vec<String>,
}

impl Discovery {
    pub fn find(&self, name: &str) -> Option<&Repo> {
        self.repos.iter().find(|r| r.name == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.repos.iter().map(|r| r.name.clone()).collect()
    }
}

/// Walks `dirs` and returns the repositories found, de-duplicated and sorted by display
/// name. `skip` is the workspace directory.
pub fn discover(home: &GroveHome, dirs: &[PathBuf], skip: &Path) -> Discovery {
    let skip = fsx::canonical(skip);
    let mut out = Discovery::default();
    let mut found: Vec<(PathBuf, String, usize)> = Vec::new();
    let mut seen = HashSet::new();
    for dir in dirs {
        if !dir.is_dir() {
            out.warnings.push(format!(
                "repo dir `{}` does not exist; run `gw remove-dir` to drop it",
                dir.display()
            ));
            continue;
        }
        walk(dir, &skip, &mut seen, &mut found);
    }
    // grove's files record paths as text: a repository whose path is not UTF-8 cannot be
    // recorded, so it cannot be used.
    found.retain(|(path, _, _)| {
        let text = path.to_str().is_some();
        if !text {
            out.warnings.push(format!(
                "repository `{}` is skipped: its path is not valid UTF-8",
                path.display()
            ));
        }
        text
    });

    let mut cache = cache::RemoteCache::load(&home.remote_cache());
    let paths: Vec<PathBuf> = found.iter().map(|(p, _, _)| p.clone()).collect();
    let remotes = cache.resolve(&paths);
    cache.save();

    let mut by_remote: HashMap<String, usize> = HashMap::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for ((path, name, depth), remote) in found.into_iter().zip(remotes) {
        let display_name = remote
            .as_deref()
            .and_then(git::url::owner_repo)
            .unwrap_or_else(|| name.clone());
        let repo = Repo {
            name: name.clone(),
            path,
            remote,
            display_name,
            depth,
        };
        if let Some(key) = repo.remote.as_deref().map(git::url::canonical) {
            if let Some(&i) = by_remote.get(&key) {
                // The same repository cloned twice: a direct child beats a nested clone.
                if repo.depth < out.repos[i].depth && !by_name.contains_key(&repo.name) {
                    by_name.remove(&out.repos[i].name);
                    by_name.insert(repo.name.clone(), i);
                    out.repos[i] = repo;
                }
                continue;
            }
            by_remote.insert(key, out.repos.len());
        }
        if let Some(&i) = by_name.get(&name) {
            out.warnings.push(format!(
                "repository `{}` is shadowed by `{}` of the same name",
                repo.path.display(),
                out.repos[i].path.display()
            ));
            continue;
        }
        by_name.insert(name, out.repos.len());
        out.repos.push(repo);
    }
    out.repos.sort_by(|a, b| {
        a.display_name
            .to_lowercase()
            .cmp(&b.display_name.to_lowercase())
            .then(a.name.cmp(&b.name))
    });
    out
}

fn walk(
    dir: &Path,
    skip: &Path,
    seen: &mut HashSet<PathBuf>,
    found: &mut Vec<(PathBuf, String, usize)>,
) {
    let mut it = WalkDir::new(dir)
        .min_depth(1)
        .max_depth(MAX_DEPTH + 1)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = it.next() {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "node_modules" || name == "__pycache__" {
            it.skip_current_dir();
            continue;
        }
        let resolved = fsx::canonical(entry.path());
        if resolved.starts_with(skip) || !seen.insert(resolved) {
            it.skip_current_dir();
            continue;
        }
        if entry.path().join(".git").is_dir() {
            found.push((entry.path().to_path_buf(), name, entry.depth() - 1));
            it.skip_current_dir();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proc::Cmd;

    fn git_init(p: &Path) {
        crate::proc::hermetic();
        fsx::create_dir_all(p).unwrap();
        Cmd::git(p).args(["init", "-q"]).check().unwrap();
    }

    fn set_origin(p: &Path, url: &str) {
        Cmd::git(p)
            .args(["remote", "add", "origin", url])
            .check()
            .unwrap();
    }

    #[test]
    fn walks_skips_and_dedups() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("src");
        git_init(&root.join("api"));
        set_origin(&root.join("api"), "git@github.com:acme/api.git");
        git_init(&root.join("group/web"));
        git_init(&root.join("a/b/c/deep")); // depth 3: found
        git_init(&root.join("a/b/c/d/too-deep")); // depth 4: not found
        git_init(&root.join(".hidden/secret"));
        git_init(&root.join("node_modules/pkg"));
        git_init(&root.join("api/nested-inside-repo"));
        git_init(&root.join("mirror/api")); // same remote, nested: loses to the direct child
        set_origin(&root.join("mirror/api"), "https://github.com/acme/api");
        git_init(&root.join("ws/feat/api-wt")); // inside the workspace dir
        let home = GroveHome::new(tmp.path().join(".grove"));
        let d = discover(
            &home,
            &[root.clone(), tmp.path().join("missing")],
            &root.join("ws"),
        );
        let names: Vec<_> = d
            .repos
            .iter()
            .map(|r| (r.name.as_str(), r.display_name.as_str()))
            .collect();
        assert_eq!(
            names,
            [("api", "acme/api"), ("deep", "deep"), ("web", "web")]
        );
        assert_eq!(d.repos[0].path, root.join("api"));
        assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
        assert!(home.remote_cache().exists(), "the remote cache is written");
        // A second walk is served from the cache and agrees.
        let again = discover(&home, std::slice::from_ref(&root), &root.join("ws"));
        assert_eq!(again.repos, d.repos);
    }
}
