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
        Ok(RepoConfig {
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
}
