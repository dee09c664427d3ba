//! What a retained deletion reads of a repository before it lets things go: a reference
//! by its full name, the references under a prefix (`refs/grove/trash/`), a branch's
//! `branch.<name>.*` settings, and where a worktree's registration lives.

use super::Error;
use super::read::{Repo, err};

impl Repo {
    /// The object a full reference name (`refs/grove/trash/…`) points to, unpeeled.
    pub fn reference(&self, full: &str) -> Option<String> {
        let r = self.repo.try_find_reference(full).ok()??;
        r.target().try_id().map(|id| id.to_string())
    }

    /// Every reference whose full name starts with `prefix`, with what it points to,
    /// sorted by name.
    pub fn references_under(&self, prefix: &str) -> Result<Vec<(String, String)>, Error> {
        let refs = self.repo.references().map_err(err(self.path()))?;
        let mut out = Vec::new();
        for r in refs.prefixed(prefix).map_err(err(self.path()))? {
            let Ok(r) = r else { continue };
            if let Some(id) = r.target().try_id() {
                out.push((r.name().as_bstr().to_string(), id.to_string()));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Whether the repository's own configuration file has a `[branch "<branch>"]`
    /// section, settings or not: what `git branch -D` removes with the branch.
    pub fn has_branch_section(&self, branch: &str) -> bool {
        let cfg = self.repo.config_snapshot();
        cfg.plumbing()
            .sections_by_name("branch")
            .is_some_and(|mut sections| {
                sections.any(|s| {
                    s.meta().source == gix::config::Source::Local
                        && s.header().subsection_name().is_some_and(|n| n == branch)
                })
            })
    }

    /// The settings of `branch` in the repository's own configuration file
    /// (`branch.<name>.<key>`, in the order written; a key set several times is listed as
    /// often), which `git branch -D` removes with the branch.
    pub fn branch_config(&self, branch: &str) -> Vec<(String, String)> {
        let cfg = self.repo.config_snapshot();
        let Some(sections) = cfg.plumbing().sections_by_name("branch") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for s in sections.filter(|s| {
            s.meta().source == gix::config::Source::Local
                && s.header().subsection_name().is_some_and(|n| n == branch)
        }) {
            let mut names: Vec<String> = Vec::new();
            for n in s.value_names() {
                if !names.iter().any(|m| m.eq_ignore_ascii_case(&n)) {
                    names.push(n);
                }
            }
            for n in names {
                // A key without `=` is true to git; written back, it must stay true.
                if s.value_implicit(&n) == Some(None) && s.values(&n).iter().all(|v| v.is_empty()) {
                    out.push((n, "true".into()));
                    continue;
                }
                for v in s.values(&n) {
                    out.push((n.clone(), v.to_string()));
                }
            }
        }
        out
    }
}
