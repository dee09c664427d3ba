//! The JSONC reader and the `.mcp.json` editor of `gw-migrate` and `gw doctor --fix`
//! (`legacy::jsonc::parse`, `legacy::mcp::inspect`).
//!
//! Checked: every strict JSON document serde_json reads (within its nesting limit) the
//! JSONC reader reads as the same value; every node's span holds that node (read alone, it
//! is the same value), every member's key starts at its quote and its comma is a comma;
//! and when the editor cuts grove's entry out, the result reads, holds the same document
//! without exactly that entry, keeps the byte-order mark, and has nothing left to cut.
#![no_main]

use grove::legacy::jsonc::{self, Kind, Node};
use grove::legacy::mcp::{self, Verdict};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        reader(text);
    }
    editor(data);
});

fn reader(text: &str) {
    let parsed = jsonc::parse(text);
    if let Ok(strict) = serde_json::from_str::<Value>(text) {
        let doc = parsed
            .as_ref()
            .unwrap_or_else(|e| panic!("strict JSON refused: {e}"));
        assert_eq!(
            doc.root.to_value(),
            strict,
            "read differently from serde_json"
        );
        assert!(!doc.has_comments);
    }
    let Ok(doc) = parsed else {
        return;
    };
    spans(text, &doc.root);
}

fn spans(text: &str, node: &Node<'_>) {
    let inner = text
        .get(node.span.clone())
        .expect("a span on char boundaries");
    let alone = jsonc::parse(inner).unwrap_or_else(|e| panic!("a node's span is refused: {e}"));
    assert!(alone.root.same(node), "a node's span holds another value");
    match &node.kind {
        Kind::Scalar(_) => {}
        Kind::Array(items) => items.iter().for_each(|i| spans(text, i)),
        Kind::Object(members) => {
            for m in members {
                assert_eq!(text.as_bytes()[m.start], b'"', "a key's start");
                assert!(m.start < m.value.span.start);
                if let Some(c) = m.comma {
                    assert_eq!(text.as_bytes()[c], b',', "a member's comma");
                    assert!(c >= m.value.span.end);
                }
                spans(text, &m.value);
            }
        }
    }
}

fn editor(data: &[u8]) {
    let Verdict::Ours { edited, .. } = mcp::inspect(data) else {
        return;
    };
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    assert_eq!(data.starts_with(BOM), edited.starts_with(BOM), "the BOM");
    let body = |b: &[u8]| {
        std::str::from_utf8(b.strip_prefix(BOM).unwrap_or(b))
            .unwrap()
            .to_string()
    };
    let (before, after) = (body(data), body(&edited));
    let mut expected = jsonc::parse(&before).unwrap().root.to_value();
    expected["mcpServers"]
        .as_object_mut()
        .unwrap()
        .shift_remove(mcp::KEY)
        .expect("the entry was there");
    let doc = jsonc::parse(&after).unwrap_or_else(|e| panic!("the edit is refused: {e}\n{after}"));
    assert_eq!(
        doc.root.to_value(),
        expected,
        "the edit changed more:\n{after}"
    );
    assert_eq!(
        mcp::inspect(&edited),
        Verdict::Clean,
        "something left to cut:\n{after}"
    );
}
