//! `state.json` read for display, without copying it.
//!
//! `gw list` shows every workspace, and with a thousand of them the state file is a
//! megabyte. Reading it into [`Workspace`](super::Workspace)s allocates and copies every
//! string, and writing the result escapes each one again; together that cost several
//! times what starting the process does. A [`Listing`] keeps the file's text and borrows
//! from it: each string stays the JSON token it is in the file ([`RawStr`]), written out
//! again verbatim and decoded only where its value is needed. Fields this version does not
//! know are skipped here; commands that write the state use the full model, which keeps them.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Blueprint, SetupRecord, Source};

/// A JSON string as it appears in the file: quotes and escapes included.
#[derive(Clone, Copy, Serialize)]
#[serde(transparent)]
pub struct RawStr<'t>(&'t RawValue);

impl<'t> RawStr<'t> {
    /// The JSON token, quotes and escapes included.
    pub fn token(&self) -> &'t str {
        self.0.get()
    }

    /// The string's value; borrowed unless it contains escapes.
    pub fn to_str(&self) -> Cow<'t, str> {
        let token = self.0.get();
        let inner = &token[1..token.len() - 1];
        if inner.contains('\\') {
            Cow::Owned(serde_json::from_str(token).expect("validated as a string when read"))
        } else {
            Cow::Borrowed(inner)
        }
    }
}

impl fmt::Debug for RawStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl<'de: 't, 't> Deserialize<'de> for RawStr<'t> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        if raw.get().starts_with('"') {
            Ok(RawStr(raw))
        } else {
            Err(de::Error::invalid_type(
                de::Unexpected::Other(raw.get()),
                &"a string",
            ))
        }
    }
}

/// A workspace record, borrowed from the file.
#[derive(Debug, Deserialize)]
pub struct WorkspaceRef<'t> {
    #[serde(borrow)]
    pub name: RawStr<'t>,
    #[serde(borrow)]
    pub path: RawStr<'t>,
    #[serde(borrow)]
    pub branch: RawStr<'t>,
    /// Absent in very old files; read as empty.
    #[serde(borrow, default)]
    pub created_at: Option<RawStr<'t>>,
    #[serde(borrow, default, deserialize_with = "null_as_empty")]
    pub repos: Vec<RepoRef<'t>>,
    // Boxed: rare, and a thousand records are copied as the list grows.
    #[serde(default)]
    pub source: Option<Box<Source>>,
    #[serde(default)]
    pub blueprint: Option<Box<Blueprint>>,
}

/// A repository record, borrowed from the file.
#[derive(Debug, Deserialize)]
pub struct RepoRef<'t> {
    #[serde(borrow)]
    pub repo_name: RawStr<'t>,
    #[serde(borrow)]
    pub source_repo: RawStr<'t>,
    #[serde(borrow)]
    pub worktree_path: RawStr<'t>,
    #[serde(borrow)]
    pub branch: RawStr<'t>,
    #[serde(default)]
    pub preserve_branch: bool,
    /// Read (and so checked) like the full model does, though nothing here shows it.
    #[serde(default, rename = "setup")]
    pub _setup: Option<SetupRecord>,
}

fn null_as_empty<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

/// The records of a listing.
pub type Records<'t> = Vec<WorkspaceRef<'t>>;

self_cell::self_cell!(
    /// The text of `state.json` and its workspace records, borrowed from it.
    pub struct Listing {
        owner: String,
        #[covariant]
        dependent: Records,
    }
    impl {Debug}
);

impl Listing {
    /// Reads `text` (blank text is an empty registry). Accepts exactly the documents
    /// [`State::parse`](super::State::parse) accepts.
    pub fn parse(text: String) -> Result<Listing, String> {
        Listing::try_new(text, |t| {
            if t.trim().is_empty() {
                return Ok(Vec::new());
            }
            serde_json::from_str::<Records<'_>>(t).map_err(|e| e.to_string())
        })
    }

    pub fn records(&self) -> &Records<'_> {
        self.borrow_dependent()
    }

    /// The file's text.
    pub fn text(&self) -> &str {
        self.borrow_owner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;

    #[test]
    fn reads_what_the_full_model_reads() {
        let text = r#"[{"name":"a\u0062","path":"/w/ab","branch":"feat/x","created_at":"2026-05-01T09:30:12.123456",
            "repos":[{"repo_name":"r","source_repo":"/s/r","worktree_path":"/w/ab/r","branch":"feat/x","preserve_branch":true,"later":1}],
            "source":{"provider":"github","url":"u","extra":[1]},"future":{"x":1}},
            {"name":"old","path":"/w/old","branch":"old","repos":null}]"#;
        let listing = Listing::parse(text.to_string()).unwrap();
        let state = State::parse(text).unwrap();
        let recs = listing.records();
        assert_eq!(recs.len(), state.workspaces.len());
        for (r, w) in recs.iter().zip(&state.workspaces) {
            assert_eq!(r.name.to_str(), w.name);
            assert_eq!(r.path.to_str(), w.path.to_string_lossy());
            assert_eq!(r.branch.to_str(), w.branch);
            assert_eq!(
                r.created_at
                    .map(|c| c.to_str().into_owned())
                    .unwrap_or_default(),
                w.created_at
            );
            assert_eq!(r.repos.len(), w.repos.len());
            assert_eq!(r.source.as_deref(), w.source.as_ref());
            for (rr, wr) in r.repos.iter().zip(&w.repos) {
                assert_eq!(rr.repo_name.to_str(), wr.repo_name);
                assert_eq!(
                    rr.worktree_path.to_str(),
                    wr.worktree_path.to_string_lossy()
                );
                assert_eq!(rr.preserve_branch, wr.preserve_branch);
            }
        }
        assert!(
            matches!(recs[0].name.to_str(), Cow::Owned(_)),
            "escapes are decoded"
        );
        assert_eq!(
            serde_json::to_string(&recs[0].name).unwrap(),
            r#""a\u0062""#
        );
    }

    #[test]
    fn refuses_what_the_full_model_refuses() {
        for bad in [
            r#"{"workspaces": []}"#,
            "[{]",
            r#"[{"path":"/w","branch":"b"}]"#,
            r#"[{"name":1,"path":"/w","branch":"b"}]"#,
            r#"[{"name":"a","name":"b","path":"/w","branch":"b"}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","repos":[{"repo_name":"r"}]}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","repos":[{"repo_name":"r","source_repo":"/s","worktree_path":"/w/r","branch":"b","setup":{"status":"odd"}}]}]"#,
        ] {
            assert!(State::parse(bad).is_err(), "{bad}");
            assert!(Listing::parse(bad.to_string()).is_err(), "{bad}");
        }
        assert!(Listing::parse("  \n".into()).unwrap().records().is_empty());
    }
}
