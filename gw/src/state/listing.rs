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

use serde::de::{self, DeserializeSeed, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Blueprint, SetupRecord, Source};
use crate::fsx::Text;

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
    // Boxed: rare, and every record would pay for their size.
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
    /// Checked like the full model does, though nothing here shows it (and not kept: a
    /// thousand workspaces hold thousands of repositories).
    #[serde(default, rename = "setup", deserialize_with = "checked_setup")]
    pub _setup: (),
}

fn checked_setup<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    Option::<SetupRecord>::deserialize(d).map(drop)
}

fn null_as_empty<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

/// The records of a listing.
pub type Records<'t> = Vec<WorkspaceRef<'t>>;

/// Reads the array of records into a vector with room for `.0` of them.
struct RecordsSeed(usize);

impl<'de> de::DeserializeSeed<'de> for RecordsSeed {
    type Value = Records<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Records<'de>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> de::Visitor<'de> for RecordsSeed {
    type Value = Records<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of workspaces")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Records<'de>, A::Error> {
        let mut records = Vec::with_capacity(self.0);
        while let Some(r) = seq.next_element()? {
            records.push(r);
        }
        Ok(records)
    }
}

self_cell::self_cell!(
    /// The text of `state.json` and its workspace records, borrowed from it.
    pub struct Listing {
        owner: Text,
        #[covariant]
        dependent: Records,
    }
    impl {Debug}
);

impl Listing {
    /// Reads `text` (blank text is an empty registry). Accepts exactly the documents
    /// [`State::parse`](super::State::parse) accepts.
    pub fn parse(text: impl Into<Text>) -> Result<Listing, String> {
        Listing::try_new(text.into(), |t| {
            let t = t.as_str();
            if t.trim().is_empty() {
                return Ok(Vec::new());
            }
            // Room for the records from the start (growing a vector of a thousand by doubling
            // copies it eight times): a record as grove writes it takes several hundred
            // bytes, so this is rarely too little (the vector then grows as usual), and what
            // is reserved but never used is never touched and costs no memory.
            let mut de = serde_json::Deserializer::from_str(t);
            let records = RecordsSeed(t.len() / 128)
                .deserialize(&mut de)
                .and_then(|r| de.end().map(|()| r));
            records.map_err(|e| e.to_string())
        })
    }

    pub fn records(&self) -> &Records<'_> {
        self.borrow_dependent()
    }

    /// The file's text.
    pub fn text(&self) -> &str {
        self.borrow_owner().as_str()
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
        assert!(
            Listing::parse("  \n".to_string())
                .unwrap()
                .records()
                .is_empty()
        );
    }

    #[test]
    fn a_large_file_reads_like_a_small_one() {
        let records: Vec<serde_json::Value> = (0..1500)
            .map(|i| {
                serde_json::json!({
                    "name": format!("ws-{i}"), "path": format!("/w/ws-{i}"), "branch": "b",
                    "created_at": "2026-05-01T09:30:12.123456",
                    "repos": [{"repo_name": "r", "source_repo": "/s/r",
                        "worktree_path": format!("/w/ws-{i}/r"), "branch": "b",
                        "setup": {"status": "failed", "detail": "exit 1"}}],
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&records).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        crate::fsx::write_atomic(&path, text.as_bytes()).unwrap();
        let read = crate::fsx::read_text_optional(&path).unwrap().unwrap();
        assert!(
            read.as_str().len() > 512 * 1024,
            "large enough for a huge page"
        );
        let listing = Listing::parse(read).unwrap();
        let state = State::parse(&text).unwrap();
        assert_eq!(listing.text(), text);
        assert_eq!(listing.records().len(), state.workspaces.len());
        for (r, w) in listing.records().iter().zip(&state.workspaces) {
            assert_eq!(r.name.to_str(), w.name);
            assert_eq!(r.repos.len(), w.repos.len());
        }
    }
}
