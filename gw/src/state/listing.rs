//! `state.json` read for display, without copying it.
//!
//! `gw list` shows every workspace, and with a thousand of them the state file is a
//! megabyte. Reading it into [`Workspace`](super::Workspace)s allocates and copies every
//! string, and writing the result escapes each one again; together that cost several
//! times what starting the process does. A [`Listing`] keeps the file's text and borrows
//! from it: each string stays the JSON token it is in the file ([`RawStr`]), written out
//! again verbatim and decoded only where its value is needed. Fields this version does not
//! know are checked and dropped here; commands that write the state use the full model,
//! which keeps them.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::model::{Key, Object, deserialize_object, once};
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
        let token = raw.get();
        if token.starts_with('"') {
            // The escapes, rare, are checked as the full model reads them (a lone surrogate
            // is refused); `to_str` decodes them.
            if token.contains('\\') {
                serde_json::from_str::<String>(token).map_err(de::Error::custom)?;
            }
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
#[derive(Debug)]
pub struct WorkspaceRef<'t> {
    pub name: RawStr<'t>,
    pub path: RawStr<'t>,
    pub branch: RawStr<'t>,
    /// Absent in very old files; read as empty.
    pub created_at: Option<RawStr<'t>>,
    pub repos: Vec<RepoRef<'t>>,
    // Boxed: rare, and every record would pay for their size.
    pub source: Option<Box<Source>>,
    pub blueprint: Option<Box<Blueprint>>,
    pub slot: Option<u32>,
}

/// A repository record, borrowed from the file. Its `setup` is checked like the full model
/// does, though nothing here shows it (and not kept: a thousand workspaces hold thousands
/// of repositories).
#[derive(Debug)]
pub struct RepoRef<'t> {
    pub repo_name: RawStr<'t>,
    pub source_repo: RawStr<'t>,
    pub worktree_path: RawStr<'t>,
    pub branch: RawStr<'t>,
    pub preserve_branch: bool,
}

// The two records are read by hand, as the full model reads its own (`model.rs`, whose
// `Object`, `Key` and `once` they use): as objects only (a derived struct would also take
// an array), each known field as the full model's type reads it (`created_at` cannot be
// `null`), a field given twice refused, and every unknown field read as a `Value`, as the
// full model keeps it (its nesting limit and number range apply; skipping it would not
// check them). So the listing accepts exactly what the full model accepts, and `to_str`
// and `--json` cannot fail on what it accepted.

/// A field the record does not know: read as the full model keeps it, then dropped.
fn unknown<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<serde_json::Value>().map(drop)
}

fn missing<E: de::Error, T>(value: Option<T>, key: &'static str) -> Result<T, E> {
    value.ok_or_else(|| de::Error::missing_field(key))
}

impl<'de: 't, 't> Deserialize<'de> for WorkspaceRef<'t> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_object(d)
    }
}

impl<'de: 't, 't> Object<'de> for WorkspaceRef<'t> {
    const EXPECTING: &'static str = "a workspace object";
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut name, mut path, mut branch, mut created_at) = (None, None, None, None);
        // The Go grove writes `null` for a workspace without repositories.
        let mut repos: Option<Option<Vec<RepoRef<'t>>>> = None;
        let mut source: Option<Option<Source>> = None;
        let mut blueprint: Option<Option<Blueprint>> = None;
        let mut slot: Option<Option<u32>> = None;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let m = &mut map;
            match &*key {
                "name" => once(m, &mut name, "name")?,
                "path" => once(m, &mut path, "path")?,
                "branch" => once(m, &mut branch, "branch")?,
                "created_at" => once(m, &mut created_at, "created_at")?,
                "repos" => once(m, &mut repos, "repos")?,
                "source" => once(m, &mut source, "source")?,
                "blueprint" => once(m, &mut blueprint, "blueprint")?,
                "slot" => once(m, &mut slot, "slot")?,
                _ => unknown(m)?,
            }
        }
        Ok(WorkspaceRef {
            name: missing(name, "name")?,
            path: missing(path, "path")?,
            branch: missing(branch, "branch")?,
            created_at,
            repos: repos.flatten().unwrap_or_default(),
            source: source.flatten().map(Box::new),
            blueprint: blueprint.flatten().map(Box::new),
            slot: slot.flatten(),
        })
    }
}

impl<'de: 't, 't> Deserialize<'de> for RepoRef<'t> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_object(d)
    }
}

impl<'de: 't, 't> Object<'de> for RepoRef<'t> {
    const EXPECTING: &'static str = "a repository object";
    fn read<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let (mut repo_name, mut source_repo, mut worktree_path, mut branch) =
            (None, None, None, None);
        let mut preserve_branch = None;
        let mut setup: Option<Option<SetupRecord>> = None;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let m = &mut map;
            match &*key {
                "repo_name" => once(m, &mut repo_name, "repo_name")?,
                "source_repo" => once(m, &mut source_repo, "source_repo")?,
                "worktree_path" => once(m, &mut worktree_path, "worktree_path")?,
                "branch" => once(m, &mut branch, "branch")?,
                "preserve_branch" => once(m, &mut preserve_branch, "preserve_branch")?,
                "setup" => once(m, &mut setup, "setup")?,
                _ => unknown(m)?,
            }
        }
        Ok(RepoRef {
            repo_name: missing(repo_name, "repo_name")?,
            source_repo: missing(source_repo, "source_repo")?,
            worktree_path: missing(worktree_path, "worktree_path")?,
            branch: missing(branch, "branch")?,
            preserve_branch: preserve_branch.unwrap_or(false),
        })
    }
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
            // serde_json's message for the whole document, as every other command gives it.
            records.map_err(|e| super::State::parse(t).err().unwrap_or(e.to_string()))
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

    /// Reads `text` both ways: the listing accepts it exactly when the full model does,
    /// refuses it with the same message, and reads the same values. `true` when accepted.
    fn agree(text: &str) -> bool {
        let listing = Listing::parse(text.to_string());
        let state = State::parse(text);
        let (listing, state) = match (listing, state) {
            (Ok(l), Ok(s)) => (l, s),
            (Err(l), Err(s)) => {
                assert_eq!(l, s, "{text}");
                return false;
            }
            (l, s) => panic!("listing {:?}, full model {:?}: {text}", l.err(), s.err()),
        };
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
            assert_eq!(r.source.as_deref(), w.source.as_ref());
            assert_eq!(r.blueprint.as_deref(), w.blueprint.as_ref());
            assert_eq!(r.slot, w.slot);
            assert_eq!(r.repos.len(), w.repos.len());
            for (rr, wr) in r.repos.iter().zip(&w.repos) {
                assert_eq!(rr.repo_name.to_str(), wr.repo_name);
                assert_eq!(rr.source_repo.to_str(), wr.source_repo.to_string_lossy());
                assert_eq!(
                    rr.worktree_path.to_str(),
                    wr.worktree_path.to_string_lossy()
                );
                assert_eq!(rr.branch.to_str(), wr.branch);
                assert_eq!(rr.preserve_branch, wr.preserve_branch);
            }
        }
        true
    }

    /// Every field the full model knows, escapes, fields it does not know, and `null`s.
    const RICH: &str = r#"[{"name":"a\u0062","path":"/w/ab","branch":"feat/\"x\"","created_at":"2026-05-01T09:30:12.123456",
        "repos":[{"repo_name":"r","source_repo":"/s/r","worktree_path":"/w/ab/r","branch":"feat/x","preserve_branch":true,"later":[1,{"k":"v"}],
                  "setup":{"status":"failed","detail":"exit 1"}},
                 {"repo_name":"q","source_repo":"/s/q","worktree_path":"/w/ab/q","branch":"b","preserve_branch":false,"setup":null}],
        "source":{"provider":"github","url":"u","ref":"42","extra":[1.5e3,true]},"blueprint":{"name":"preset:p","sha256":"00"},"slot":7,"future":{"x":null}},
        {"name":"old","path":"/w/old","branch":"old","repos":null,"source":null,"blueprint":null,"slot":null},
        {"na\u006de":"esc","path":"/w/é","branch":"ü\n\t","created_at":"","repos":[]}]"#;

    #[test]
    fn reads_what_the_full_model_reads() {
        assert!(agree(RICH));
        let listing = Listing::parse(RICH.to_string()).unwrap();
        let recs = listing.records();
        assert!(
            matches!(recs[0].name.to_str(), Cow::Owned(_)),
            "escapes are decoded"
        );
        assert_eq!(recs[2].name.to_str(), "esc", "escaped keys are decoded");
        assert_eq!(
            serde_json::to_string(&recs[0].name).unwrap(),
            r#""a\u0062""#
        );
    }

    /// Every document one edit away from a rich one (a byte removed, or one of the bytes
    /// that matter to JSON put in or swapped in) is accepted and read alike both ways.
    #[test]
    fn one_edit_from_a_valid_document_reads_alike() {
        let inserts = [
            "\"", "\\", ",", ":", "{", "}", "[", "]", " ", "n", "t", "1", "-", "e", "\u{1}", "é",
            "\\u", "null", "true",
        ];
        let mut accepted = 0;
        let mut refused = 0;
        let mut count = |text: &str| {
            if agree(text) {
                accepted += 1;
            } else {
                refused += 1;
            }
        };
        for (i, c) in RICH.char_indices() {
            let (before, after) = RICH.split_at(i);
            count(&format!("{before}{}", &after[c.len_utf8()..]));
            for ins in inserts {
                count(&format!("{before}{ins}{after}"));
                count(&format!("{before}{ins}{}", &after[c.len_utf8()..]));
            }
        }
        // Both kinds are many: the edits reach every path of the reader.
        assert!(accepted > 500 && refused > 5000, "{accepted} / {refused}");
    }

    #[test]
    fn nesting_is_limited_as_serde_json_limits_it() {
        for depth in 120..130 {
            let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            for text in [
                format!(r#"[{{"name":"n","path":"/p","branch":"b","x":{deep}}}]"#),
                format!(
                    r#"[{{"name":"n","path":"/p","branch":"b","repos":[{{"repo_name":"r","source_repo":"/s","worktree_path":"/w","branch":"b","x":{deep}}}]}}]"#
                ),
                format!(r#"[{{"name":"n","path":"/p","branch":"b","source":{{"y":{deep}}}}}]"#),
            ] {
                agree(&text);
            }
        }
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
            r#"[{"name":"a","path":"/w","branch":"b","created_at":null}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","slot":-1}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","slot":"1"}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","slot":1.5}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","slot":4294967296}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","slot":1,"slot":1}]"#,
            r#"[["a","/w","b"]]"#,
            r#"[{"name":"a","path":"/w","branch":"b","repos":[["r","/s","/w/r","b"]]}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","later":1e400}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","repos":[null]}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","repos":[{"repo_name":"r","source_repo":"/s","worktree_path":"/w/r","branch":"b","preserve_branch":null}]}]"#,
            r#"[{"name":"a","path":"/w","branch":"b","x":1,"x":2,"name":"c"}]"#,
            r#"[{"name":"\ud800","path":"/w","branch":"b"}]"#,
            "[{\"name\":\"a\u{1}\",\"path\":\"/w\",\"branch\":\"b\"}]",
            r#"[{"name":"a","path":"/w","branch":"b"},]"#,
            r#"[{"name":"a","path":"/w","branch":"b"}] x"#,
            "\u{feff}[]",
        ] {
            assert!(!agree(bad), "{bad}");
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
