//! Validation of the names users give grove: workspaces, branches and presets.

use crate::error::{Error, Result};

/// The longest workspace name: it is a directory's name.
const MAX_NAME_BYTES: usize = 255;

/// A workspace name becomes a directory under the workspace dir, so it must be one plain
/// path component.
pub fn check_workspace(name: &str) -> Result<()> {
    let problem = if name.trim().is_empty() {
        Some("is empty")
    } else if name.contains('/') || name.contains('\\') {
        Some("contains a path separator")
    } else if name.contains("..") {
        Some("contains `..`")
    } else if name.starts_with('-') {
        Some("starts with `-`")
    } else if name.starts_with('.') {
        Some("starts with `.`")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else if name != name.trim() {
        Some("has leading or trailing whitespace")
    } else if name.len() > MAX_NAME_BYTES {
        Some("is longer than 255 bytes, the most a file name can have")
    } else {
        None
    };
    match problem {
        Some(p) => Err(
            Error::usage(format!("invalid workspace name {name:?}: it {p}"))
                .with_fix("Use letters, digits, `-`, `_` and `.` (for example `feat-login`)"),
        ),
        None => Ok(()),
    }
}

/// The workspace name derived from a branch: `/` and whitespace become `-`, and leading
/// and trailing `-` are trimmed.
pub fn from_branch(branch: &str) -> String {
    let s: String = branch
        .chars()
        .map(|c| {
            if c == '/' || c.is_whitespace() {
                '-'
            } else {
                c
            }
        })
        .collect();
    s.trim_matches('-').to_string()
}

/// A branch name git accepts (`git check-ref-format --branch`).
pub fn check_branch(branch: &str) -> Result<()> {
    let full = format!("refs/heads/{branch}");
    let ok = !branch.is_empty() && !branch.starts_with('-') && gix_validate_ref(&full);
    if ok {
        Ok(())
    } else {
        Err(
            Error::usage(format!("invalid branch name {branch:?}")).with_fix(
                "Use a name git accepts, for example `feat/login` (see `git check-ref-format`)",
            ),
        )
    }
}

fn gix_validate_ref(full: &str) -> bool {
    crate::git::valid_ref_name(full)
}

/// Preset names are TOML keys: letters, digits, `_` and `-`.
pub fn check_preset(name: &str) -> Result<()> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        Ok(())
    } else {
        Err(Error::usage(format!("invalid preset name {name:?}"))
            .with_fix("Use letters, digits, `_` and `-`"))
    }
}

/// The candidates closest to `word` (a command, a workspace, a repository, a preset), by
/// edit distance, at most three: what "did you mean" offers.
pub fn nearest(word: &str, candidates: &[String]) -> Vec<String> {
    let limit = (word.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &String)> = candidates
        .iter()
        .map(|c| {
            let d = levenshtein(word, c);
            let prefix = c.starts_with(word) || word.starts_with(c.as_str());
            (if prefix { d.min(1) } else { d }, c)
        })
        .filter(|(d, _)| *d <= limit)
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c.clone()).collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// "Did you mean `a`?" (or "`a`, `b` or `c`"), with `then` after it; `then` alone when there
/// is nothing to suggest.
pub fn did_you_mean(suggestions: &[String], then: &str) -> String {
    let quoted: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
    let names = match quoted.as_slice() {
        [] => return then.to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    format!("Did you mean {names}? {then}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_names() {
        for ok in ["feat-x", "feat_x", "v1.2", "Fix 12"] {
            check_workspace(ok).unwrap();
        }
        for bad in [
            "",
            "a/b",
            "..",
            "a..b",
            "-x",
            ".hidden",
            "tab\there",
            "nl\n",
            " lead",
        ] {
            let e = check_workspace(bad).unwrap_err();
            assert_eq!(e.code, crate::error::Code::Usage, "{bad:?}");
        }
        assert_eq!(from_branch("feat/login page/"), "feat-login-page");
    }

    #[test]
    fn branches_and_presets() {
        check_branch("feat/login").unwrap();
        for bad in ["", "-x", "a..b", "a b", "x.lock", "a~b", "a:b", "/x"] {
            assert!(check_branch(bad).is_err(), "{bad:?}");
        }
        check_preset("back_end-1").unwrap();
        assert!(check_preset("a.b").is_err());
    }
}
