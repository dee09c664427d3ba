//! Blueprint files: `gw create -f workspace.toml` and `gw plan create -f workspace.toml`.
//!
//! ```toml
//! name = "feat-login"            # optional default workspace name
//! track = false                  # optional default for every repository
//! repos = ["svc-auth", "api"]    # names or git URLs, or tables:
//!
//! [[repos]]
//! name = "web"                   # or: url = "https://…"
//! base_branch = "develop"        # optional
//! track = true                   # optional
//!
//! [source]                       # optional, like --source-*
//! provider = "github"
//! url = "https://github.com/acme/web/pull/42"
//! ref = "42"
//! title = "Login page"
//! ```
//!
//! A workspace records the blueprint it came from (the file's absolute path and a SHA-256
//! of the normalised content, which ignores comments and formatting); a preset is the same
//! thing stored in `config.toml` (`preset:NAME`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml_edit::{Item, TableLike};

use crate::config::toml::Reader;
use crate::error::{Error, Result};
use crate::fsx;
use crate::ops::create::SourceFields;

/// A parsed blueprint file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlueprintFile {
    /// Absolute path of the file.
    pub path: PathBuf,
    /// SHA-256 of the normalised content.
    pub sha256: String,
    /// Default workspace name.
    pub name: Option<String>,
    pub repos: Vec<BlueprintRepo>,
    pub source: SourceFields,
}

/// One repository of a blueprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlueprintRepo {
    /// A repository name or a git URL.
    pub repo: String,
    /// Overrides `.grove.toml`'s `base_branch`.
    pub base_branch: Option<String>,
    /// Overrides `--track` for this repository.
    pub track: Option<bool>,
    /// Where it is in the file, for errors.
    pub line: usize,
}

fn err(path: &Path, detail: String) -> Error {
    Error::usage(format!("invalid blueprint `{}`: {detail}", path.display()))
        .with_fix("See `gw create --help` for the blueprint format")
}

const TOP_KEYS: &[&str] = &["name", "track", "repos", "source"];
const REPO_KEYS: &[&str] = &["name", "url", "base_branch", "track"];
const SOURCE_KEYS: &[&str] = &["provider", "url", "ref", "title"];

/// Reads and validates a blueprint file.
pub fn load(path: &Path) -> Result<BlueprintFile> {
    let text = fsx::read_limited(path, fsx::MAX_DOCUMENT).map_err(|e| err(path, e.to_string()))?;
    parse(path, &text)
}

pub fn parse(path: &Path, text: &str) -> Result<BlueprintFile> {
    let r = Reader::new(text);
    let doc =
        toml_edit::Document::parse(text.to_string()).map_err(|e| err(path, r.syntax_error(&e)))?;
    let e = |detail: String| err(path, detail);
    let root = doc.as_table();
    unknown_keys(&r, root, TOP_KEYS, "").map_err(e)?;
    let name = root
        .get("name")
        .map(|i| r.string(i, "name"))
        .transpose()
        .map_err(e)?;
    let default_track = root
        .get("track")
        .map(|i| r.bool(i, "track"))
        .transpose()
        .map_err(e)?;
    let mut repos = Vec::new();
    match root.get("repos") {
        None => {
            return Err(err(
                path,
                "key `repos`: missing (list the repositories of the workspace)".into(),
            ));
        }
        Some(Item::ArrayOfTables(tables)) => {
            for (i, t) in tables.iter().enumerate() {
                repos.push(repo_table(&r, t, t.span(), &format!("repos[{i}]")).map_err(e)?);
            }
        }
        Some(item) => {
            let Some(arr) = item.as_array() else {
                return Err(err(
                    path,
                    r.error(
                        item,
                        "repos",
                        "expected a list of repository names or tables",
                    ),
                ));
            };
            for (i, v) in arr.iter().enumerate() {
                let key = format!("repos[{i}]");
                if let Some(s) = v.as_str() {
                    repos.push(BlueprintRepo {
                        repo: s.to_string(),
                        base_branch: None,
                        track: None,
                        line: r.line_at(v.span()),
                    });
                } else if let Some(t) = v.as_inline_table() {
                    repos.push(repo_table(&r, t, v.span(), &key).map_err(e)?);
                } else {
                    return Err(err(
                        path,
                        r.error_at(v.span(), &key, "expected a repository name or a table"),
                    ));
                }
            }
        }
    }
    if repos.is_empty() {
        return Err(err(path, "key `repos`: the list is empty".into()));
    }
    if let Some(track) = default_track {
        for repo in &mut repos {
            repo.track.get_or_insert(track);
        }
    }
    let mut source = SourceFields::default();
    if let Some(item) = root.get("source") {
        let t = r.table(item, "source").map_err(e)?;
        unknown_keys(&r, t, SOURCE_KEYS, "source.").map_err(e)?;
        let s = |k: &str| {
            t.get(k)
                .map(|i| r.string(i, &format!("source.{k}")))
                .transpose()
        };
        source = SourceFields {
            provider: s("provider").map_err(e)?,
            url: s("url").map_err(e)?,
            reference: s("ref").map_err(e)?,
            title: s("title").map_err(e)?,
        };
    }
    let normalised = serde_json::json!({
        "name": name,
        "repos": repos.iter().map(|r| serde_json::json!([r.repo, r.base_branch, r.track])).collect::<Vec<_>>(),
        "source": [source.provider, source.url, source.reference, source.title],
    });
    let sha256 = crate::fsx::sha256_hex(normalised.to_string().as_bytes());
    let path =
        crate::env::normalize(&std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()));
    Ok(BlueprintFile {
        path,
        sha256,
        name,
        repos,
        source,
    })
}

fn unknown_keys(
    r: &Reader<'_>,
    t: &dyn TableLike,
    known: &[&str],
    prefix: &str,
) -> std::result::Result<(), String> {
    for (k, item) in t.iter() {
        if !known.contains(&k) {
            return Err(r.error(
                item,
                &format!("{prefix}{k}"),
                &format!("unknown key (known: {})", known.join(", ")),
            ));
        }
    }
    Ok(())
}

fn repo_table(
    r: &Reader<'_>,
    t: &dyn TableLike,
    span: Option<std::ops::Range<usize>>,
    key: &str,
) -> std::result::Result<BlueprintRepo, String> {
    unknown_keys(r, t, REPO_KEYS, &format!("{key}."))?;
    let s = |k: &str| {
        t.get(k)
            .map(|i| r.string(i, &format!("{key}.{k}")))
            .transpose()
    };
    let repo = match (s("name")?, s("url")?) {
        (Some(n), None) => n,
        (None, Some(u)) => u,
        (Some(_), Some(_)) => {
            return Err(r.error_at(span, key, "give either `name` or `url`, not both"));
        }
        (None, None) => return Err(r.error_at(span, key, "missing `name` (or `url`)")),
    };
    let track = t
        .get("track")
        .map(|i| r.bool(i, &format!("{key}.track")))
        .transpose()?;
    Ok(BlueprintRepo {
        repo,
        base_branch: s("base_branch")?,
        track,
        line: r.line_at(span),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<BlueprintFile> {
        parse(Path::new("/tmp/ws.toml"), text)
    }

    #[test]
    fn both_forms_and_identity() {
        let a = p("name = \"x\"\nrepos = [\"api\", { name = \"web\", base_branch = \"develop\", track = true }]\n[source]\nprovider = \"github\"\nref = \"42\"\n").unwrap();
        assert_eq!(a.name.as_deref(), Some("x"));
        assert_eq!(a.repos.len(), 2);
        assert_eq!(a.repos[1].base_branch.as_deref(), Some("develop"));
        assert_eq!(a.repos[1].track, Some(true));
        assert_eq!(a.source.reference.as_deref(), Some("42"));
        let b = p("# a comment\nname    = \"x\"\n\n[[repos]]\nname = \"api\"\n\n[[repos]]\nname = \"web\"\nbase_branch = \"develop\"\ntrack = true\n[source]\nref = \"42\"\nprovider = \"github\"\n").unwrap();
        assert_eq!(
            a.sha256, b.sha256,
            "formatting and comments do not change the identity"
        );
        let c = p("repos = [\"api\"]\n").unwrap();
        assert_ne!(a.sha256, c.sha256);
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        for (text, needle) in [
            (
                "repos = [\"api\"]\ncolour = \"red\"\n",
                "line 2, key `colour`: unknown key",
            ),
            ("repos = \"api\"\n", "key `repos`"),
            (
                "\n[[repos]]\nname = \"api\"\ntrack = \"yes\"\n",
                "line 4, key `repos[0].track`: expected true or false",
            ),
            ("[[repos]]\nbase_branch = \"x\"\n", "missing `name`"),
            ("name = \"x\"\n", "key `repos`: missing"),
            ("repos = [\n", "ws.toml"),
            (
                "repos = [\"a\"]\n[source]\nauthor = \"me\"\n",
                "key `source.author`: unknown key",
            ),
        ] {
            let e = p(text).unwrap_err();
            assert!(
                e.message.contains(needle) && e.message.contains("/tmp/ws.toml"),
                "{text:?}: {}",
                e.message
            );
            assert_eq!(e.code, crate::error::Code::Usage);
        }
    }
}
