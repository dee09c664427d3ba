//! What counts as grove's own `.mcp.json` entry, and how it is cut out of a file.
//!
//! [`is_grove_entry`] is the single definition of "ours": `gw doctor` (the verifier),
//! `gw doctor --fix` and `gw-migrate` (the writers) all decide through it, so they agree by
//! construction. Two unrelated tools register an MCP server under the key `grove`; the key
//! alone never decides, the entry must also launch `gw mcp-serve`.
//!
//! [`inspect`] reads one file and, when the entry is grove's, produces the file without it:
//! a splice that removes exactly the member (and its separating comma) from the original
//! text, so key order, indentation, line endings, a byte-order mark and comments survive
//! byte for byte. The result is re-read and compared with the original document minus that
//! member before it is trusted.

use std::ops::Range;

use serde_json::Value;

use super::cleanup::Reason;
use super::jsonc::{self, Node};

/// The file the Go grove wrote (into the workspace root, and up to 1.1.5 into every
/// repository worktree).
pub const FILE_NAME: &str = ".mcp.json";
/// The key the Go grove used under `mcpServers`.
pub const KEY: &str = "grove";

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Whether the `mcpServers` member `key: value` is the entry the Go grove wrote: the key is
/// `grove`, `command` is `gw` or a path ending in `/gw`, and `args` contains `mcp-serve`.
///
/// Anything else under the key `grove` (for example a code-intelligence server started as
/// `grove serve`) belongs to another tool.
pub fn is_grove_entry(key: &str, value: &Value) -> bool {
    if key != KEY {
        return false;
    }
    let Some(entry) = value.as_object() else {
        return false;
    };
    let command = entry.get("command").and_then(Value::as_str);
    let is_gw = command.is_some_and(|c| c == "gw" || c.ends_with("/gw"));
    let serves = entry
        .get("args")
        .and_then(Value::as_array)
        .is_some_and(|args| args.iter().any(|a| a.as_str() == Some("mcp-serve")));
    is_gw && serves
}

/// What a `.mcp.json` holds, as far as grove is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No `grove` entry: nothing to do.
    Clean,
    /// A `grove` entry that another tool wrote; never touched.
    Foreign { command: Option<String> },
    /// grove's entry. `edited` is the file without it; `only_content` says the entry was
    /// all the file held (no other server, no other key, no comment).
    Ours { edited: Vec<u8>, only_content: bool },
    /// The file cannot be edited safely; it is left alone and reported.
    Unusable(Problem),
}

/// Why a file is left alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    NotUtf8,
    InvalidJson(String),
    RootNotObject,
    ServersNotObject,
    DuplicateKey(String),
    /// The splice did not produce the expected document (a safety net; never expected).
    Unverifiable,
}

impl Problem {
    /// The reason the report gives.
    pub fn reason(&self) -> Reason {
        match self {
            Problem::NotUtf8 | Problem::InvalidJson(_) => Reason::InvalidJson,
            Problem::RootNotObject => Reason::RootNotObject,
            Problem::ServersNotObject => Reason::ServersNotObject,
            Problem::DuplicateKey(_) => Reason::DuplicateKeys,
            Problem::Unverifiable => Reason::UnverifiableEdit,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Problem::NotUtf8 => "not valid JSON: not UTF-8 text".into(),
            Problem::InvalidJson(e) => format!("not valid JSON: {e}"),
            Problem::RootNotObject => "the document is not a JSON object".into(),
            Problem::ServersNotObject => "`mcpServers` is not an object".into(),
            Problem::DuplicateKey(k) => format!("the key `{k}` appears twice in one object"),
            Problem::Unverifiable => {
                "the entry could not be removed without touching anything else".into()
            }
        }
    }
}

/// Reads a `.mcp.json` and decides what to do with it.
pub fn inspect(bytes: &[u8]) -> Verdict {
    let (bom, body) = match bytes.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, bytes),
    };
    let Ok(text) = std::str::from_utf8(body) else {
        return Verdict::Unusable(Problem::NotUtf8);
    };
    let doc = match jsonc::parse(text) {
        Ok(d) => d,
        Err(e) => return Verdict::Unusable(Problem::InvalidJson(e.to_string())),
    };
    let Some(root) = doc.root.members() else {
        return Verdict::Unusable(Problem::RootNotObject);
    };
    if let Some(k) = doc.root.duplicate_key() {
        return Verdict::Unusable(Problem::DuplicateKey(k.to_string()));
    }
    let Some(at) = root.iter().position(|m| m.key == "mcpServers") else {
        return Verdict::Clean;
    };
    let servers = &root[at];
    let Some(entries) = servers.value.members() else {
        return Verdict::Unusable(Problem::ServersNotObject);
    };
    let Some(index) = entries.iter().position(|m| m.key == KEY) else {
        return Verdict::Clean;
    };
    let value = entries[index].value.to_value();
    if !is_grove_entry(KEY, &value) {
        return Verdict::Foreign {
            command: value
                .get("command")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
    }
    let edited = splice(text, &removal(text, &servers.value, index));
    match jsonc::parse(&edited) {
        Ok(after) if is_without(&doc.root, &after.root, at, index) => {}
        _ => return Verdict::Unusable(Problem::Unverifiable),
    }
    let mut out = Vec::with_capacity(edited.len() + 3);
    if bom {
        out.extend_from_slice(BOM);
    }
    out.extend_from_slice(edited.as_bytes());
    Verdict::Ours {
        edited: out,
        only_content: !doc.has_comments && root.len() == 1 && entries.len() == 1,
    }
}

/// Whether `after` is `before` without member `index` of its member `at` (`mcpServers`):
/// everything else the same, in the same order.
fn is_without(before: &Node<'_>, after: &Node<'_>, at: usize, index: usize) -> bool {
    let (Some(b), Some(a)) = (before.members(), after.members()) else {
        return false;
    };
    b.len() == a.len()
        && b.iter().zip(a).enumerate().all(|(i, (x, y))| {
            if x.key != y.key {
                return false;
            }
            if i != at {
                return x.value.same(&y.value);
            }
            let (Some(xs), Some(ys)) = (x.value.members(), y.value.members()) else {
                return false;
            };
            xs.len() == ys.len() + 1
                && xs
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| *k != index)
                    .zip(ys)
                    .all(|((_, p), q)| p.key == q.key && p.value.same(&q.value))
        })
}

/// The byte ranges that remove member `index` of `object` (with its comma, and with its
/// lines when it occupies whole lines).
fn removal(text: &str, object: &Node<'_>, index: usize) -> Vec<Range<usize>> {
    let members = object.members().expect("called on an object");
    let member = &members[index];
    let end = member.value.span.end;
    let mut ranges = Vec::new();
    if let Some(comma) = member.comma {
        // `"grove": {…},` followed by another member or a closing brace.
        ranges.push(
            whole_lines(text, member.start, comma + 1)
                .unwrap_or_else(|| member.start..skip_blanks(text, comma + 1)),
        );
    } else if index > 0 {
        // The last member: the comma to drop is the one before it.
        let prev_comma = members[index - 1]
            .comma
            .expect("members of an object are separated by commas");
        let end = with_line_comment(text, end);
        if is_blank(&text[prev_comma + 1..member.start]) {
            ranges.push(prev_comma..end);
        } else {
            // A comment sits between them; it belongs to the previous member.
            ranges.push(prev_comma..prev_comma + 1);
            ranges.push(whole_lines(text, member.start, end).unwrap_or(member.start..end));
        }
    } else {
        ranges.push(whole_lines(text, member.start, end).unwrap_or(member.start..end));
    }
    // An object left holding only whitespace becomes `{}`.
    let inner = object.span.start + 1..object.span.end - 1;
    let mut sorted = ranges.clone();
    sorted.sort_by_key(|r| r.start);
    let bytes = text.as_bytes();
    let mut at = inner.start;
    let mut blank = true;
    for r in &sorted {
        let start = r.start.clamp(inner.start, inner.end);
        if start > at {
            blank &= is_blank_bytes(&bytes[at..start]);
        }
        at = at.max(r.end.min(inner.end));
    }
    blank &= is_blank_bytes(&bytes[at..inner.end]);
    if blank {
        return vec![inner];
    }
    ranges
}

/// `start..end` widened to whole lines when nothing but blanks precede it on its first
/// line and nothing but blanks (or a `//` comment) follow it on its last line.
fn whole_lines(text: &str, start: usize, end: usize) -> Option<Range<usize>> {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    if !is_blank(&text[line_start..start]) {
        return None;
    }
    let mut p = with_line_comment(text, end);
    p = skip_blanks(text, p);
    let rest = &text[p..];
    if rest.starts_with("\r\n") {
        p += 2;
    } else if rest.starts_with('\n') {
        p += 1;
    } else if !rest.is_empty() {
        return None;
    }
    Some(line_start..p)
}

/// `end` moved past a `//` comment that follows on the same line.
fn with_line_comment(text: &str, end: usize) -> usize {
    let p = skip_blanks(text, end);
    if text[p..].starts_with("//") {
        let eol = text[p..].find('\n').map_or(text.len(), |i| p + i);
        // Keep the `\r` of a CRLF line ending with the line break.
        if eol > p && text.as_bytes()[eol - 1] == b'\r' {
            eol - 1
        } else {
            eol
        }
    } else {
        end
    }
}

fn skip_blanks(text: &str, mut p: usize) -> usize {
    while matches!(text.as_bytes().get(p), Some(b' ' | b'\t')) {
        p += 1;
    }
    p
}

fn is_blank(s: &str) -> bool {
    is_blank_bytes(s.as_bytes())
}

fn is_blank_bytes(b: &[u8]) -> bool {
    b.iter().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

fn splice(text: &str, ranges: &[Range<usize>]) -> String {
    let mut sorted = ranges.to_vec();
    sorted.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for r in sorted {
        out.push_str(&text[at..r.start.max(at)]);
        at = at.max(r.end);
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The file the Go grove wrote for a workspace `feat-x`.
    pub(crate) const GO_FILE: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"feat-x\"\n      ],\n      \"command\": \"gw\"\n    }\n  }\n}";

    fn edited(input: &str) -> (String, bool) {
        match inspect(input.as_bytes()) {
            Verdict::Ours {
                edited,
                only_content,
            } => (String::from_utf8(edited).unwrap(), only_content),
            other => panic!("expected grove's entry, got {other:?}"),
        }
    }

    #[test]
    fn ours_needs_key_gw_command_and_mcp_serve() {
        let ours = json!({"command": "gw", "args": ["mcp-serve", "--workspace", "x"]});
        assert!(is_grove_entry("grove", &ours));
        assert!(is_grove_entry(
            "grove",
            &json!({"command": "/usr/local/bin/gw", "args": ["--verbose", "mcp-serve"]})
        ));
        assert!(!is_grove_entry("grove-old", &ours), "key");
        assert!(!is_grove_entry(
            "grove",
            &json!({"command": "grove", "args": ["serve"]})
        ));
        assert!(!is_grove_entry(
            "grove",
            &json!({"command": "/opt/grove/bin/grove", "args": ["mcp-serve"]})
        ));
        assert!(!is_grove_entry(
            "grove",
            &json!({"command": "gw-mcp", "args": ["mcp-serve"]})
        ));
        assert!(!is_grove_entry(
            "grove",
            &json!({"command": "gw", "args": ["serve"]})
        ));
        assert!(!is_grove_entry(
            "grove",
            &json!({"command": "gw", "args": "mcp-serve"})
        ));
        assert!(!is_grove_entry("grove", &json!("gw mcp-serve")));
    }

    #[test]
    fn the_go_file_is_all_grove() {
        let (text, only) = edited(GO_FILE);
        assert!(only);
        assert_eq!(text, "{\n  \"mcpServers\": {}\n}");
    }

    #[test]
    fn other_servers_keep_their_bytes_and_order() {
        let input = r#"{
  "$schema": "https://example.com/mcp.schema.json",
  "mcpServers": {
    "zeta": {"command": "z", "env": {"TOKEN": "${TOKEN}"}},
    "grove": {
      "args": ["mcp-serve", "--workspace", "feat-x"],
      "command": "gw"
    },
    "alpha": {
        "command": "a"
    }
  },
  "inputs": []
}
"#;
        let (text, only) = edited(input);
        assert!(!only);
        assert_eq!(
            text,
            r#"{
  "$schema": "https://example.com/mcp.schema.json",
  "mcpServers": {
    "zeta": {"command": "z", "env": {"TOKEN": "${TOKEN}"}},
    "alpha": {
        "command": "a"
    }
  },
  "inputs": []
}
"#
        );
    }

    #[test]
    fn last_member_takes_the_previous_comma() {
        let input = "{\n\t\"mcpServers\": {\n\t\t\"keeper\": {\"command\": \"k\"},\n\t\t\"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]}\n\t}\n}";
        let (text, _) = edited(input);
        assert_eq!(
            text,
            "{\n\t\"mcpServers\": {\n\t\t\"keeper\": {\"command\": \"k\"}\n\t}\n}"
        );
    }

    #[test]
    fn single_line_documents() {
        let (text, only) = edited(
            r#"{"mcpServers":{"grove":{"command":"gw","args":["mcp-serve"]},"k":{"command":"k"}}}"#,
        );
        assert!(!only);
        assert_eq!(text, r#"{"mcpServers":{"k":{"command":"k"}}}"#);
        let (text, _) = edited(
            r#"{"mcpServers": {"k": {"command": "k"}, "grove": {"command": "gw", "args": ["mcp-serve"]}}}"#,
        );
        assert_eq!(text, r#"{"mcpServers": {"k": {"command": "k"}}}"#);
        let (text, only) =
            edited(r#"{"mcpServers":{"grove":{"command":"gw","args":["mcp-serve"]}}}"#);
        assert!(only);
        assert_eq!(text, r#"{"mcpServers":{}}"#);
    }

    #[test]
    fn jsonc_comments_and_trailing_commas_survive() {
        let input = r#"// Servers for this checkout
{
  "mcpServers": {
    /* the linter */
    "lint": { "command": "lint-mcp" }, // keep me
    "grove": { "command": "gw", "args": ["mcp-serve", "--workspace", "w"] }, // legacy
    "docs": { "command": "docs-mcp", },
  },
}
"#;
        let (text, only) = edited(input);
        assert!(!only, "comments are content");
        assert_eq!(
            text,
            r#"// Servers for this checkout
{
  "mcpServers": {
    /* the linter */
    "lint": { "command": "lint-mcp" }, // keep me
    "docs": { "command": "docs-mcp", },
  },
}
"#
        );
        let only_grove_with_comment = "{\n  // grove\n  \"mcpServers\": {\"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]}}\n}\n";
        let (text, only) = edited(only_grove_with_comment);
        assert!(!only, "a comment makes the file worth keeping");
        assert_eq!(text, "{\n  // grove\n  \"mcpServers\": {}\n}\n");
    }

    #[test]
    fn comment_before_the_last_member_stays() {
        let input = "{\"mcpServers\": {\n  \"k\": 1, // about k\n  \"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]}\n}}";
        let (text, _) = edited(input);
        assert_eq!(text, "{\"mcpServers\": {\n  \"k\": 1 // about k\n}}");
    }

    #[test]
    fn crlf_and_bom_are_kept() {
        let input = "\u{feff}{\r\n  \"mcpServers\": {\r\n    \"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]},\r\n    \"k\": {\"command\": \"k\"}\r\n  }\r\n}";
        let (text, _) = edited(input);
        assert_eq!(
            text,
            "\u{feff}{\r\n  \"mcpServers\": {\r\n    \"k\": {\"command\": \"k\"}\r\n  }\r\n}"
        );
        let last = "{\r\n  \"mcpServers\": {\r\n    \"k\": {\"command\": \"k\"},\r\n    \"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]} // old\r\n  }\r\n}\r\n";
        let (text, _) = edited(last);
        assert_eq!(
            text,
            "{\r\n  \"mcpServers\": {\r\n    \"k\": {\"command\": \"k\"}\r\n  }\r\n}\r\n"
        );
    }

    #[test]
    fn unusual_files_are_left_alone() {
        let cases: &[(&[u8], &str)] = &[
            (b"{\"mcpServers\": {\"grove\": ", "invalid_json"),
            (b"", "invalid_json"),
            (b"\xff\xfe{}", "invalid_json"),
            (b"[1, 2]", "root_not_object"),
            (b"{\"mcpServers\": []}", "servers_not_object"),
            (
                br#"{"mcpServers": {"grove": {"command": "gw", "args": ["mcp-serve"]}, "grove": {"command": "grove", "args": ["serve"]}}}"#,
                "duplicate_keys",
            ),
            (
                br#"{"mcpServers": {"grove": {"command": "gw", "args": ["mcp-serve"], "command": "x"}}}"#,
                "duplicate_keys",
            ),
        ];
        for (input, code) in cases {
            match inspect(input) {
                Verdict::Unusable(p) => assert_eq!(p.reason().as_str(), *code, "{input:?}: {p:?}"),
                other => panic!("{input:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_edit_is_checked_against_the_original_minus_the_entry() {
        let parse = |t: &'static str| jsonc::parse(t).unwrap();
        let before = parse(r#"{"a": 1, "mcpServers": {"grove": {}, "k": [1, {"x": "y"}]}}"#);
        let good = parse("{\"a\": 1, \"mcpServers\": {\n \"k\": [1, {\"x\": \"y\"}]}}");
        assert!(is_without(&before.root, &good.root, 1, 0));
        for bad in [
            r#"{"a": 2, "mcpServers": {"k": [1, {"x": "y"}]}}"#,
            r#"{"a": 1, "mcpServers": {"k": [1, {"x": "z"}]}}"#,
            r#"{"a": 1, "mcpServers": {"grove": {}, "k": [1, {"x": "y"}]}}"#,
            r#"{"mcpServers": {"k": [1, {"x": "y"}]}, "a": 1}"#,
            r#"{"a": 1, "mcpServers": {}}"#,
        ] {
            assert!(!is_without(&before.root, &parse(bad).root, 1, 0), "{bad}");
        }
        let escaped = parse(r#"{"\u0061": "\"q\""}"#);
        assert_eq!(escaped.root.members().unwrap()[0].key, "a");
    }

    #[test]
    fn foreign_and_absent_entries() {
        assert_eq!(
            inspect(br#"{"mcpServers": {"grove": {"command": "grove", "args": ["serve"]}}}"#),
            Verdict::Foreign {
                command: Some("grove".into())
            }
        );
        assert_eq!(inspect(br#"{"mcpServers": {"other": {}}}"#), Verdict::Clean);
        assert_eq!(inspect(br#"{"other": 1}"#), Verdict::Clean);
        assert_eq!(inspect(br#"{"mcpServers": {}}"#), Verdict::Clean);
    }
}
