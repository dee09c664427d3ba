//! A repository's own `.grove.toml`: base branch and the commands grove runs in its
//! worktrees. Unknown keys are ignored so plugins can add their own.

use std::path::Path;

use super::Error;
use super::toml::Reader;
use crate::fsx;

/// The file name, read from the repository's main checkout.
pub const FILE_NAME: &str = ".grove.toml";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoConfig {
    /// Branch to base new branches on and rebase onto (`origin/<base_branch>`).
    pub base_branch: Option<String>,
    /// Run in a new worktree after the workspace is created.
    pub setup: Vec<String>,
    /// Run in a worktree before it is removed.
    pub teardown: Vec<String>,
    pub pre_sync: Vec<String>,
    pub post_sync: Vec<String>,
    pub run: Vec<String>,
    pub pre_run: Vec<String>,
    pub post_run: Vec<String>,
    /// `[ports]`: the repository's named ports (`http = 8080`, the port it uses outside
    /// grove), in the order the file declares them. Each gets a port of its own in every
    /// workspace (`ops::ports`).
    pub ports: Vec<(String, u16)>,
    /// `copy`: paths of the main checkout (ignored, or untracked) that `gw create --copy`
    /// and `gw add-repo --copy` copy into a new worktree: build caches and dependencies
    /// (`node_modules`, `target`, `.venv`), local settings (`.env.local`). Each is a path
    /// relative to the checkout, `/`-separated; `*`, `?` and `[…]` match within one
    /// component (`packages/*/node_modules`). Validated by [`check_copy_pattern`].
    pub copy: Vec<String>,
}

/// Refuses a `copy` entry grove cannot use: empty, absolute, with a `.`, `..` or `.git`
/// component (a copy never leaves the checkout nor touches git's own files), or `**`
/// (each directory level is named, so that naming a cache never walks a whole checkout).
/// A trailing `/` is allowed (the entry then names directories only).
pub fn check_copy_pattern(pattern: &str) -> Result<(), &'static str> {
    let trimmed = pattern.strip_suffix('/').unwrap_or(pattern);
    if trimmed.is_empty() {
        return Err("a path to copy cannot be empty");
    }
    if trimmed.starts_with('/') || trimmed.contains('\\') {
        return Err(
            "a path to copy is relative to the checkout, `/`-separated (`node_modules`, `packages/*/dist`)",
        );
    }
    for part in trimmed.split('/') {
        match part {
            "" => return Err("a path to copy has no empty component (`a//b`)"),
            "." | ".." => {
                return Err(
                    "a path to copy has no `.` or `..` component: it stays inside the checkout",
                );
            }
            ".git" => return Err("`.git` is git's own: grove never copies it"),
            p if p.contains("**") => {
                return Err(
                    "`**` is not supported: name each directory level (`packages/*/node_modules`)",
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether `name` can name a port: letters, digits, `_` and `-`, so that it makes an
/// environment variable name (`GROVE_PORT_<REPO>_<NAME>`) and a placeholder
/// (`{port.<repo>.<name>}`).
pub fn is_port_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl RepoConfig {
    /// Reads `<repo>/.grove.toml`; a missing file is the default (empty) configuration.
    pub fn load(repo: &Path) -> Result<RepoConfig, Error> {
        let path = repo.join(FILE_NAME);
        match fsx::read_optional(&path)? {
            None => Ok(RepoConfig::default()),
            Some(text) => {
                RepoConfig::parse(&text).map_err(|detail| Error::RepoConfig { path, detail })
            }
        }
    }

    /// The commands this file asks grove to run, by key, in a fixed order, leaving out
    /// the empty ones: what an approval covers (`gw trust`). Settings that run nothing
    /// (`base_branch`, `[ports]`) are not among them.
    pub fn commands(&self) -> Vec<(&'static str, &[String])> {
        [
            ("setup", &self.setup),
            ("teardown", &self.teardown),
            ("pre_sync", &self.pre_sync),
            ("post_sync", &self.post_sync),
            ("pre_run", &self.pre_run),
            ("run", &self.run),
            ("post_run", &self.post_run),
        ]
        .into_iter()
        .filter(|(_, c)| !c.is_empty())
        .map(|(k, c)| (k, c.as_slice()))
        .collect()
    }

    /// SHA-256 of [`RepoConfig::commands`] (as a JSON object): an approval holds for this
    /// content only, so an edited command is asked about again.
    pub fn commands_sha256(&self) -> String {
        let map: serde_json::Map<String, serde_json::Value> = self
            .commands()
            .into_iter()
            .map(|(k, c)| (k.to_string(), serde_json::json!(c)))
            .collect();
        fsx::sha256_hex(serde_json::Value::Object(map).to_string().as_bytes())
    }

    pub fn parse(text: &str) -> Result<RepoConfig, String> {
        let r = Reader::new(text);
        let doc = toml_edit::Document::parse(text.to_string()).map_err(|e| r.syntax_error(&e))?;
        let root = doc.as_table();
        let list = |key: &str| -> Result<Vec<String>, String> {
            match root.get(key) {
                Some(item) => Ok(r
                    .string_or_list(item, key)?
                    .into_iter()
                    .filter(|c| !c.trim().is_empty())
                    .collect()),
                None => Ok(Vec::new()),
            }
        };
        let base_branch = match root.get("base_branch") {
            Some(item) => Some(r.string(item, "base_branch")?).filter(|s| !s.trim().is_empty()),
            None => None,
        };
        let mut ports = Vec::new();
        if let Some(item) = root.get("ports") {
            for (name, value) in r.table(item, "ports")?.iter() {
                let key = format!("ports.{name}");
                if !is_port_name(name) {
                    return Err(r.error(
                        value,
                        &key,
                        "a port name is letters, digits, `_` and `-` (it becomes part of an environment variable name)",
                    ));
                }
                ports.push((name.to_string(), r.port(value, &key, 1)?));
            }
        }
        let copy = list("copy")?;
        if let Some(item) = root.get("copy") {
            for c in &copy {
                check_copy_pattern(c)
                    .map_err(|why| r.error(item, "copy", &format!("`{c}`: {why}")))?;
            }
        }
        Ok(RepoConfig {
            ports,
            copy,
            base_branch,
            setup: list("setup")?,
            teardown: list("teardown")?,
            pre_sync: list("pre_sync")?,
            post_sync: list("post_sync")?,
            run: list("run")?,
            pre_run: list("pre_run")?,
            post_run: list("post_run")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_and_list_forms_and_unknown_keys() {
        let c = RepoConfig::parse(
            "base_branch = \"develop\"\nsetup = [\"npm ci\", \"make\"]\nteardown = \"rm -rf tmp\"\nplugin_key = 3\n",
        )
        .unwrap();
        assert_eq!(c.base_branch.as_deref(), Some("develop"));
        assert_eq!(c.setup, ["npm ci", "make"]);
        assert_eq!(c.teardown, ["rm -rf tmp"]);
        assert!(c.run.is_empty());
        let err = RepoConfig::parse("\nsetup = 5\n").unwrap_err();
        assert!(err.contains("line 2") && err.contains("setup"), "{err}");
    }

    #[test]
    fn the_hash_covers_the_commands_and_nothing_else() {
        let a = RepoConfig::parse("setup = \"make\"\n").unwrap();
        let b =
            RepoConfig::parse("# a comment\nbase_branch = \"dev\"\nsetup = [\"make\"]\n").unwrap();
        let c = RepoConfig::parse("setup = \"make all\"\n").unwrap();
        let d = RepoConfig::parse("teardown = \"make\"\n").unwrap();
        assert_eq!(a.commands_sha256(), b.commands_sha256());
        assert_ne!(a.commands_sha256(), c.commands_sha256());
        assert_ne!(a.commands_sha256(), d.commands_sha256());
        assert!(RepoConfig::default().commands().is_empty());
    }

    #[test]
    fn copy_entries_and_their_errors() {
        let c = RepoConfig::parse(
            "copy = [\"node_modules\", \"target/\", \"packages/*/dist\", \".env.local\"]\n",
        )
        .unwrap();
        assert_eq!(
            c.copy,
            ["node_modules", "target/", "packages/*/dist", ".env.local"]
        );
        assert_eq!(
            RepoConfig::parse("copy = \".venv\"\n").unwrap().copy,
            [".venv"]
        );
        for (text, want) in [
            ("copy = [\"/etc\"]\n", "relative to the checkout"),
            ("copy = [\"../x\"]\n", "no `.` or `..`"),
            ("copy = [\"a/./b\"]\n", "no `.` or `..`"),
            ("copy = [\".git\"]\n", "git's own"),
            ("copy = [\"sub/.git/\"]\n", "git's own"),
            ("copy = [\"**/node_modules\"]\n", "`**` is not supported"),
            ("copy = [\"a//b\"]\n", "empty component"),
            ("copy = [\"/\"]\n", "cannot be empty"),
            ("\ncopy = 3\n", "line 2, key `copy`"),
        ] {
            let err = RepoConfig::parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn ports_in_declared_order_and_their_errors() {
        let c = RepoConfig::parse("[ports]\nhttp = 8080\nadmin-ui = 9000\ngrpc_x = 1\n").unwrap();
        assert_eq!(
            c.ports,
            [
                ("http".into(), 8080),
                ("admin-ui".into(), 9000),
                ("grpc_x".into(), 1)
            ]
        );
        for (text, want) in [
            (
                "[ports]\nhttp = 0\n",
                "ports.http`: 0 is not from 1 to 65535",
            ),
            ("[ports]\nhttp = 70000\n", "70000 is not from 1 to 65535"),
            (
                "[ports]\nhttp = \"80\"\n",
                "expected an integer, found a string",
            ),
            ("ports = 3\n", "key `ports`: expected a table"),
            (
                "[ports]\n\"a.b\" = 1\n",
                "key `ports.a.b`: a port name is letters",
            ),
            ("[ports]\n\"\" = 1\n", "a port name is letters"),
        ] {
            let err = RepoConfig::parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
