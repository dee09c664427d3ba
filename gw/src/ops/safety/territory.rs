//! Where grove may move or delete things: strictly inside a workspace directory (the
//! configured one, or the default `<grove dir>/workspaces`).
//!
//! Paths come from files — `state.json`, a plan, a journal — that a person, another
//! program or a bug may have edited. Before grove moves or deletes anything at such a
//! path it checks it here: no `..`, and with every symlink resolved, inside a workspace
//! directory and not the directory itself. Anything else is refused (`CORRUPT_STATE`), and
//! nothing is touched.

use std::path::{Path, PathBuf};

use crate::error::{Code, Error, Result};
use crate::home::{self, GroveHome};

/// The workspace directories grove may act in.
#[derive(Debug, Clone)]
pub struct Territory {
    /// Canonical (symlinks resolved), without duplicates.
    roots: Vec<PathBuf>,
}

impl Territory {
    /// The territory of `workspace_dir` (the configured one, when there is a configuration)
    /// and of the default workspace directory of `home`.
    pub fn new(home: &GroveHome, workspace_dir: Option<&Path>) -> Territory {
        let mut roots = Vec::new();
        for dir in workspace_dir
            .into_iter()
            .map(Path::to_path_buf)
            .chain([home.default_workspace_dir()])
        {
            if let Some(c) = crate::fsx::canonical_lenient(&dir)
                && !roots.contains(&c)
            {
                roots.push(c);
            }
        }
        Territory { roots }
    }

    /// The workspace directories' trash directories.
    pub fn trash_dirs(&self) -> Vec<PathBuf> {
        self.roots.iter().map(|r| home::trash_dir(r)).collect()
    }

    /// Whether `dir` is a workspace directory itself (with symlinks resolved).
    pub fn is_root(&self, dir: &Path) -> bool {
        crate::fsx::canonical_lenient(dir).is_some_and(|c| self.roots.contains(&c))
    }

    /// The root `path` lies strictly inside (with symlinks resolved), if any.
    fn root_of(&self, path: &Path) -> Option<(&Path, PathBuf)> {
        let resolved = crate::fsx::canonical_lenient(path)?;
        self.roots
            .iter()
            .find(|r| resolved.starts_with(r) && resolved != **r)
            .map(|r| (r.as_path(), resolved))
    }

    /// Whether `path` is one of grove's own places, where nothing but grove writes: inside
    /// its directory `home` (state, configuration, journals, locks, plugins) or a workspace
    /// directory (its trash, or a file of its own) — but not inside a workspace there
    /// (`<workspace dir>/<name>/…`, which is the user's).
    pub fn is_groves_own(&self, home: &Path, path: &Path) -> bool {
        let Some(resolved) = crate::fsx::canonical_lenient(path) else {
            return false;
        };
        let in_workspace = self.roots.iter().any(|r| {
            resolved
                .strip_prefix(r)
                .ok()
                .filter(|rest| rest.components().count() > 1)
                .and_then(|rest| rest.components().next())
                .is_some_and(|c| !c.as_os_str().to_string_lossy().starts_with('.'))
        });
        let in_home = crate::fsx::canonical_lenient(home).is_some_and(|h| resolved.starts_with(h));
        !in_workspace && (in_home || self.roots.iter().any(|r| resolved.starts_with(r)))
    }

    /// Refuses, before anything is done to it, a path outside every workspace directory.
    /// `what` says what was about to happen ("delete the workspace directory").
    pub fn check(&self, path: &Path, what: &str) -> Result<()> {
        match self.root_of(path) {
            Some(_) => Ok(()),
            None => Err(self.outside(path, what)),
        }
    }

    /// Refuses anything but an entry directly inside a workspace directory's `.trash`.
    pub fn check_trash_entry(&self, path: &Path) -> Result<()> {
        let in_trash = self.root_of(path).is_some_and(|(root, resolved)| {
            resolved.parent() == Some(home::trash_dir(root).as_path())
        });
        if in_trash {
            Ok(())
        } else {
            Err(Error::usage(format!(
                "refusing to remove `{}`: it is not inside a workspace directory's `{}`",
                path.display(),
                home::TRASH
            )))
        }
    }

    fn outside(&self, path: &Path, what: &str) -> Error {
        let roots: Vec<String> = self
            .roots
            .iter()
            .map(|r| format!("`{}`", r.display()))
            .collect();
        Error::new(
            Code::CorruptState,
            format!(
                "refusing to {what} `{}`: it is not inside the workspace directory ({})",
                path.display(),
                roots.join(" or ")
            ),
        )
        .with_fix(
            "grove only moves or deletes what lies in its workspace directory; the path was read \
             from state.json (or a journal) and does not: correct it by hand, or let \
             `gw doctor --fix` drop the entry (it never touches the directory)",
        )
        .with_details(serde_json::json!({ "path": path, "workspace_dirs": self.roots }))
    }
}

/// A relative path of plain components (no `..`, no root): it stays inside what it is
/// joined to, unless a symbolic link on the way leads out ([`Territory::check`] sees to that).
pub fn is_relative_inside(path: &Path) -> bool {
    path.components().next().is_some()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_strictly_inside_a_workspace_dir_with_symlinks_resolved() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = GroveHome::new(root.join("grove"));
        let ws_dir = root.join("ws");
        std::fs::create_dir_all(ws_dir.join("a")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), ws_dir.join("link")).unwrap();
        let t = Territory::new(&home, Some(&ws_dir));
        let ok = |p: &Path| t.check(p, "delete").is_ok();
        assert!(ok(&ws_dir.join("a")));
        assert!(
            ok(&ws_dir.join("not-yet/made")),
            "missing paths are judged by their parent"
        );
        assert!(ok(&home.default_workspace_dir().join("w")));
        assert!(!ok(&ws_dir), "never the workspace directory itself");
        assert!(!ok(&root.join("outside")));
        assert!(!ok(&ws_dir.join("link")), "a symlink out of it");
        assert!(!ok(&ws_dir.join("link/x")));
        assert!(!ok(&ws_dir.join("a/../../outside")));
        assert!(!ok(Path::new("relative/path")));
        let e = t.check(&root.join("outside"), "delete").unwrap_err();
        assert_eq!(e.code, Code::CorruptState);

        let trash = ws_dir.join(".trash");
        assert!(t.check_trash_entry(&trash.join("w-1")).is_ok());
        assert!(t.check_trash_entry(&trash).is_err());
        assert!(t.check_trash_entry(&trash.join("w-1/deeper")).is_err());
        assert!(t.check_trash_entry(&root.join("outside/.trash/x")).is_err());
    }
}
