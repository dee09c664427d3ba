//! Blueprint files (`gw create --from FILE`, `ops::blueprint::parse`).
//!
//! Checked: the blueprint written out again, in the other form (every repository as a
//! table of `[[repos]]`), reads as the same blueprint with the same identity (`sha256`,
//! which formatting, comments and form must not change).
#![no_main]

use std::path::Path;

use grove::ops::blueprint::{self, BlueprintFile};
use libfuzzer_sys::fuzz_target;
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/b/ws.toml");
    let Ok(bp) = blueprint::parse(path, text) else {
        return;
    };
    assert!(!bp.repos.is_empty());
    let written = write(&bp);
    let again = blueprint::parse(path, &written)
        .unwrap_or_else(|e| panic!("the blueprint written out is refused: {e}\n{written}"));
    assert_eq!(again.sha256, bp.sha256, "identity changed:\n{written}");
    assert_eq!(again.name, bp.name);
    assert_eq!(again.source, bp.source);
    assert_eq!(again.repos.len(), bp.repos.len());
    for (a, b) in again.repos.iter().zip(&bp.repos) {
        assert_eq!(
            (&a.repo, &a.base_branch, a.track),
            (&b.repo, &b.base_branch, b.track)
        );
    }
});

fn write(bp: &BlueprintFile) -> String {
    let mut doc = DocumentMut::new();
    if let Some(n) = &bp.name {
        doc.insert("name", value(n.as_str()));
    }
    let mut repos = ArrayOfTables::new();
    for r in &bp.repos {
        let mut t = Table::new();
        t.insert("name", value(r.repo.as_str()));
        if let Some(b) = &r.base_branch {
            t.insert("base_branch", value(b.as_str()));
        }
        if let Some(track) = r.track {
            t.insert("track", value(track));
        }
        repos.push(t);
    }
    doc.insert("repos", Item::ArrayOfTables(repos));
    let s = &bp.source;
    let mut source = Table::new();
    for (k, v) in [
        ("provider", &s.provider),
        ("url", &s.url),
        ("ref", &s.reference),
        ("title", &s.title),
    ] {
        if let Some(v) = v {
            source.insert(k, value(v.as_str()));
        }
    }
    if !source.is_empty() {
        doc.insert("source", Item::Table(source));
    }
    doc.to_string()
}
