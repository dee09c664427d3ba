//! Hiding secrets in text that leaves the machine or lands in a file: credentials in URLs
//! (`https://user:token@host/…`), values of `*_TOKEN`/`*_KEY`-style settings
//! (`GITHUB_TOKEN=…`, `api_key = "…"`), well-known token formats (`ghp_…`, `glpat-…`), and,
//! where asked, the user's home directory. Used by `grove.log` and `gw bug-report`.

use std::borrow::Cow;
use std::path::Path;

/// What a hidden value is replaced with.
pub const MASK: &str = "[REDACTED]";

/// `text` with every secret this module recognises replaced by [`MASK`].
pub fn secrets(text: &str) -> Cow<'_, str> {
    let step = url_credentials(text);
    let step = match assignments(&step) {
        Cow::Owned(s) => Cow::Owned(s),
        Cow::Borrowed(_) => step,
    };
    match known_tokens(&step) {
        Cow::Owned(s) => Cow::Owned(s),
        Cow::Borrowed(_) => step,
    }
}

/// `text` with `home` (at a path boundary) shown as `~`.
pub fn home<'a>(text: &'a str, home: &Path) -> Cow<'a, str> {
    let Some(h) = home.to_str().map(|h| h.trim_end_matches('/')) else {
        return Cow::Borrowed(text);
    };
    if h.is_empty() || !text.contains(h) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(h) {
        let after = &rest[i + h.len()..];
        let boundary_after = after.is_empty()
            || after.starts_with(|c: char| c == '/' || !(c.is_alphanumeric() || "_-.".contains(c)));
        let boundary_before = rest[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || "_-./".contains(c)));
        out.push_str(&rest[..i]);
        if boundary_after && boundary_before {
            out.push('~');
        } else {
            out.push_str(h);
        }
        rest = after;
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// `scheme://user:password@host…` → `scheme://[REDACTED]@host…`. A bare `git@` (ssh's
/// conventional user, no secret) is kept.
fn url_credentials(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first character that cannot be in it.
        let end = tail
            .find(|c: char| c == '/' || c == '?' || c == '#' || is_delimiter(c))
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) if &authority[..at] != "git" && at > 0 => {
                out.push_str(MASK);
                out.push_str(&authority[at..]);
                changed = true;
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// Characters that end a value written inline in prose, TOML, shell or logfmt.
fn is_delimiter(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '`' | ',' | ';' | '}' | ')' | ']' | '>' | '<'
        )
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// Whether a setting called `name` holds a secret: its last word (split at `_`, `-`, `.`)
/// is token, key, secret, password, …, or the whole name ends in one of the unambiguous
/// ones (`apitoken`, `dbpassword`).
fn is_secret_name(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "token",
        "key",
        "secret",
        "password",
        "passwd",
        "pwd",
        "apikey",
        "credential",
        "credentials",
        "auth",
    ];
    const SUFFIXES: &[&str] = &["token", "secret", "password", "passwd", "apikey"];
    let lower = name.to_ascii_lowercase();
    let last = lower.rsplit(['_', '-', '.']).next().unwrap_or("");
    WORDS.contains(&last) || SUFFIXES.iter().any(|s| lower.ends_with(s))
}

/// `NAME=value`, `NAME: value`, `name = "value"` where NAME looks like a secret's name:
/// the value becomes [`MASK`]. Also `Bearer value`.
fn assignments(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    let mut changed = false;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if !is_name_char(c) || (i > 0 && is_name_char(bytes[i - 1] as char)) {
            i += 1;
            continue;
        }
        // A name starts here.
        let start = i;
        while i < bytes.len() && is_name_char(bytes[i] as char) {
            i += 1;
        }
        let name = &text[start..i];
        let bearer = name.eq_ignore_ascii_case("bearer") || name.eq_ignore_ascii_case("basic");
        if !bearer && !is_secret_name(name) {
            continue;
        }
        // Separator: optional spaces (and a closing quote of a quoted key), `=` or `:`.
        let mut j = i;
        if !bearer {
            while j < bytes.len() && matches!(bytes[j], b'"' | b'\'') {
                j += 1;
            }
            while j < bytes.len() && bytes[j] == b' ' {
                j += 1;
            }
            if j >= bytes.len() || !matches!(bytes[j], b'=' | b':') {
                continue;
            }
            // `key: value` is also prose ("the key: it is here"); a colon counts after a
            // name written as a setting (`API_KEY:`, `api-key:`) or before a quoted value.
            let setting =
                name.contains(['_', '-']) || !name.bytes().any(|b| b.is_ascii_lowercase());
            let quoted = text[j + 1..]
                .trim_start_matches(' ')
                .starts_with(['"', '\'']);
            if bytes[j] == b':' && !setting && !quoted {
                continue;
            }
            j += 1;
            // `key == x` or `::` are not assignments.
            if j < bytes.len() && matches!(bytes[j], b'=' | b':') {
                continue;
            }
        }
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        let quote = match bytes.get(j) {
            Some(q @ (b'"' | b'\'')) => {
                j += 1;
                Some(*q as char)
            }
            _ => None,
        };
        let value_start = j;
        let value_end = match quote {
            Some(q) => text[j..].find(q).map(|k| j + k).unwrap_or(text.len()),
            None => text[j..]
                .find(is_delimiter)
                .map(|k| j + k)
                .unwrap_or(text.len()),
        };
        let value = &text[value_start..value_end];
        if value.is_empty() || value == MASK || (bearer && value.len() < 8) {
            i = value_end.max(i);
            continue;
        }
        out.push_str(&text[copied..value_start]);
        out.push_str(MASK);
        copied = value_end;
        i = value_end;
        changed = true;
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Tokens recognisable by their shape wherever they appear: GitHub (`ghp_`, `gho_`, `ghu_`,
/// `ghs_`, `ghr_`, `github_pat_`), GitLab (`glpat-`), Slack (`xoxb-` …) and AWS access key
/// ids (`AKIA…`).
fn known_tokens(text: &str) -> Cow<'_, str> {
    const PREFIXES: &[&str] = &[
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "xoxr-",
        "xoxs-",
        "AKIA",
    ];
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut changed = false;
    let mut i = 0;
    while i < text.len() {
        if !text.is_char_boundary(i)
            || (i > 0 && text[..i].chars().next_back().is_some_and(is_name_char))
        {
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let Some(p) = PREFIXES.iter().find(|p| rest.starts_with(**p)) else {
            i += 1;
            continue;
        };
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(rest.len());
        // Long enough to be a token rather than a word that starts the same way.
        if len >= p.len() + 12 {
            out.push_str(&text[copied..i]);
            out.push_str(MASK);
            copied = i + len;
            changed = true;
        }
        i += len.max(1);
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_urls() {
        assert_eq!(
            secrets("origin https://alice:s3cret@example.com/acme/api.git (fetch)"),
            "origin https://[REDACTED]@example.com/acme/api.git (fetch)"
        );
        assert_eq!(
            secrets("url=\"https://x-access-token:abc@github.com/a/b\""),
            "url=\"https://[REDACTED]@github.com/a/b\""
        );
        // No credentials, ssh's `git@`, and scp-like addresses stay.
        for same in [
            "https://example.com/a/b.git",
            "ssh://git@example.com/a/b.git",
            "git@github.com:acme/api.git",
            "mail me at a@b.c",
        ] {
            assert_eq!(secrets(same), same);
            assert!(matches!(secrets(same), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn secret_settings() {
        assert_eq!(
            secrets("post_create = \"GITHUB_TOKEN=abc123 gh pr create\""),
            "post_create = \"GITHUB_TOKEN=[REDACTED] gh pr create\""
        );
        assert_eq!(secrets("api_key = \"xyz\""), "api_key = \"[REDACTED]\"");
        assert_eq!(
            secrets("AWS_SECRET_ACCESS_KEY: hunter2"),
            "AWS_SECRET_ACCESS_KEY: [REDACTED]"
        );
        assert_eq!(
            secrets("export NPM_TOKEN='tok en'"),
            "export NPM_TOKEN='[REDACTED]'"
        );
        assert_eq!(
            secrets("-H 'Authorization: Bearer abcdefghijkl'"),
            "-H 'Authorization: Bearer [REDACTED]'"
        );
        assert_eq!(
            secrets("db_password=pw; next"),
            "db_password=[REDACTED]; next"
        );
        // Names that only look alike are left alone.
        assert_eq!(secrets("token: \"abc\""), "token: \"[REDACTED]\"");
        for same in [
            "monkey = \"banana\"",
            "keyboard=qwerty",
            "tokens: 3 of them",
            "if key == value",
            "token",
            "the key: it is here",
            "key `repos`: missing",
        ] {
            assert_eq!(secrets(same), same, "{same}");
        }
    }

    #[test]
    fn known_token_shapes() {
        assert_eq!(
            secrets("push with ghp_abcdefghijklmnopqrstuvwxyz0123456789 now"),
            "push with [REDACTED] now"
        );
        assert_eq!(secrets("glpat-abcdefghij0123456789"), "[REDACTED]");
        assert_eq!(secrets("ghp_short"), "ghp_short");
        assert_eq!(
            secrets("myghp_abcdefghijklmnopqrstuvwxyz"),
            "myghp_abcdefghijklmnopqrstuvwxyz"
        );
    }

    #[test]
    fn home_directory() {
        let h = Path::new("/home/alice");
        assert_eq!(
            home("grove dir: /home/alice/.grove (in /home/alice)", h),
            "grove dir: ~/.grove (in ~)"
        );
        assert_eq!(home("/home/alicebob/x", h), "/home/alicebob/x");
        assert_eq!(home("/srv/home/alice/x", h), "/srv/home/alice/x");
        assert_eq!(home("nothing here", h), "nothing here");
    }
}
