//! Hiding secrets in text grove writes: `grove.log`, `gw bug-report`, error messages,
//! warnings and `--verbose` progress all go through [`secrets`], one function.
//!
//! What is hidden:
//! - a URL's userinfo, found as a URL parser finds it: everything between `scheme://` and
//!   the last `@` before the host (the authority ends at `/`, `?`, `#` or white space, so a
//!   password may hold `,` `;` `'` `(` `)` `<` `>` `"`); ssh's conventional `git@` is kept.
//!   [`url_without_userinfo`] drops it from a URL grove stores;
//! - header-shaped secrets: the credential after `Authorization:` (and
//!   `Proxy-Authorization:`), whatever its scheme (`token`, `Bearer`, `Basic`, …), and after
//!   a bare `Bearer` or `Basic`;
//! - values of settings whose name says secret (`GITHUB_TOKEN=…`, `api_key = "…"`,
//!   `"password": "…"`, `--password=…`);
//! - tokens recognisable by their shape wherever they start (after any character but a
//!   letter or digit): GitHub, GitLab, Anthropic, OpenAI, npm, Slack, AWS, Google, Stripe,
//!   Hugging Face, PyPI and others ([`TOKENS`]), JSON Web Tokens, and private key blocks;
//! - where asked ([`home`]), the user's home directory.

use std::borrow::Cow;
use std::path::Path;

/// What a hidden value is replaced with.
pub const MASK: &str = "[REDACTED]";

/// `text` with every secret this module recognises replaced by [`MASK`].
pub fn secrets(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for step in [
        private_keys as fn(&str) -> Option<String>,
        url_credentials,
        authorization,
        assignments,
        known_tokens,
    ] {
        if let Some(changed) = step(&out) {
            out = Cow::Owned(changed);
        }
    }
    out
}

/// `url` without its userinfo (`https://user:token@host/x` → `https://host/x`): how a URL
/// is kept in grove's own files, which never hold a credential. Text that is not a URL
/// with a userinfo is returned as it is.
pub fn url_without_userinfo(url: &str) -> Cow<'_, str> {
    match userinfo(url, 0) {
        Some((start, at)) if start == scheme_end(url).unwrap_or(usize::MAX) => {
            Cow::Owned(format!("{}{}", &url[..start], &url[at + 1..]))
        }
        _ => Cow::Borrowed(url),
    }
}

/// Whether `text` holds a URL with a userinfo (a credential, as far as grove can tell).
pub fn has_url_userinfo(text: &str) -> bool {
    userinfo(text, 0).is_some()
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

/// Where the authority of the URL starting `url` begins (after `scheme://`), if it is one.
fn scheme_end(url: &str) -> Option<usize> {
    let i = url.find("://")?;
    let scheme = &url[..i];
    let ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    ok.then_some(i + 3)
}

/// The userinfo of the first URL in `text` at or after `from` with one: its start (just
/// after `://`) and the index of the `@` that ends it.
fn userinfo(text: &str, from: usize) -> Option<(usize, usize)> {
    let mut search = from;
    while let Some(i) = text[search..].find("://") {
        let start = search + i + 3;
        // The authority ends where a URL parser ends it; the userinfo at its last `@`.
        let end = text[start..]
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .map_or(text.len(), |e| start + e);
        if let Some(at) = text[start..end].rfind('@') {
            let user = &text[start..start + at];
            if at > 0 && user != "git" && user != MASK {
                return Some((start, start + at));
            }
        }
        search = start;
    }
    None
}

/// `scheme://user:password@host…` → `scheme://[REDACTED]@host…`.
fn url_credentials(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    while let Some((start, at)) = userinfo(text, copied) {
        out.push_str(&text[copied..start]);
        out.push_str(MASK);
        copied = at;
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// The credential after `Authorization:` or `Proxy-Authorization:` (its scheme word kept),
/// to the end of the line or a closing quote.
fn authorization(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = String::new();
    let mut copied = 0;
    let mut from = 0;
    while let Some(i) = lower[from..].find("authorization") {
        let name_end = from + i + "authorization".len();
        from = name_end;
        let mut j = name_end;
        let bytes = text.as_bytes();
        // Quotes (JSON's, or JSON's escaped inside a TOML string: `\"`) around the name.
        while j < bytes.len() && matches!(bytes[j], b'"' | b'\'' | b'\\') {
            j += 1;
        }
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        if j >= bytes.len() || !matches!(bytes[j], b':' | b'=') {
            continue;
        }
        j += 1;
        while j < bytes.len() && matches!(bytes[j], b' ' | b'"' | b'\'' | b'\\') {
            j += 1;
        }
        // A scheme word (`token`, `Bearer`, `Basic`) followed by a space is kept.
        let word = text[j..]
            .find(|c: char| !c.is_ascii_alphabetic())
            .map_or(text.len(), |w| j + w);
        if word > j && text[word..].starts_with(' ') {
            j = word + 1;
            while j < bytes.len() && bytes[j] == b' ' {
                j += 1;
            }
        }
        let end = text[j..]
            .find(['"', '\'', '`', '\\', '\n', '\r'])
            .map_or(text.len(), |e| j + e);
        if end > j && &text[j..end] != MASK {
            out.push_str(&text[copied..j]);
            out.push_str(MASK);
            copied = end;
            from = end;
        }
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        out
    })
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
        "pass",
        "apikey",
        "credential",
        "credentials",
        "auth",
        "pat",
    ];
    const SUFFIXES: &[&str] = &["token", "secret", "password", "passwd", "apikey"];
    let lower = name.trim_start_matches('-').to_ascii_lowercase();
    let last = lower.rsplit(['_', '-', '.']).next().unwrap_or("");
    WORDS.contains(&last) || SUFFIXES.iter().any(|s| lower.ends_with(s))
}

/// `NAME=value`, `NAME: value`, `name = "value"`, `--name=value` where NAME looks like a
/// secret's name: the value becomes [`MASK`]. Also `Bearer value` and `Basic value`.
fn assignments(text: &str) -> Option<String> {
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
            while j < bytes.len() && matches!(bytes[j], b'"' | b'\'' | b'\\') {
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
                .starts_with(['"', '\'', '\\']);
            if bytes[j] == b':' && !setting && !quoted {
                continue;
            }
            j += 1;
            // `key == x` or `::` are not assignments.
            if j < bytes.len() && matches!(bytes[j], b'=' | b':') {
                continue;
            }
        } else if !text[j..].starts_with(' ') {
            continue;
        }
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        let quote = match bytes.get(j) {
            Some(q @ (b'"' | b'\'')) => {
                j += 1;
                Some(*q as char)
            }
            // A logfmt value quoted inside a quoted field: `\"`.
            Some(b'\\') if bytes.get(j + 1) == Some(&b'"') => {
                j += 2;
                Some('\\')
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
        // Already hidden (`]` ends an unquoted value, so `value` is `[REDACTED`).
        if value.is_empty() || text[value_start..].starts_with(MASK) || (bearer && value.len() < 8)
        {
            i = value_end.max(i);
            continue;
        }
        out.push_str(&text[copied..value_start]);
        out.push_str(MASK);
        copied = value_end;
        i = value_end;
        changed = true;
    }
    changed.then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// A token shape: a prefix, and how long the whole token is at least.
struct Token {
    prefix: &'static str,
    min_len: usize,
}

const fn t(prefix: &'static str, min_len: usize) -> Token {
    Token { prefix, min_len }
}

/// Tokens recognisable by their prefix, with the shortest real one's length (prefix
/// included). Longer prefixes come before the shorter ones they start with.
const TOKENS: &[Token] = &[
    // GitHub: personal, OAuth, user-to-server, server-to-server, refresh, fine-grained.
    t("github_pat_", 40),
    t("ghp_", 30),
    t("gho_", 30),
    t("ghu_", 30),
    t("ghs_", 30),
    t("ghr_", 30),
    // GitLab: personal, deploy, runner, pipeline trigger, CI build, feed, OAuth.
    t("glpat-", 20),
    t("gldt-", 20),
    t("glrt-", 20),
    t("glptt-", 20),
    t("glcbt-", 20),
    t("glft-", 20),
    t("gloas-", 20),
    // Anthropic and OpenAI (`sk-` alone is checked by `openai_legacy`).
    t("sk-ant-", 24),
    t("sk-proj-", 24),
    t("sk-svcacct-", 24),
    t("sk-admin-", 24),
    // npm, PyPI, RubyGems, Hugging Face.
    t("npm_", 30),
    t("pypi-", 40),
    t("rubygems_", 30),
    t("hf_", 24),
    // Slack.
    t("xoxb-", 20),
    t("xoxp-", 20),
    t("xoxa-", 20),
    t("xoxr-", 20),
    t("xoxs-", 20),
    t("xoxe-", 20),
    t("xoxe.", 20),
    t("xoxc-", 20),
    t("xoxd-", 20),
    t("xapp-", 20),
    // AWS access key ids (permanent, temporary).
    t("AKIA", 20),
    t("ASIA", 20),
    // Google API keys and OAuth access tokens.
    t("AIza", 30),
    t("ya29.", 24),
    // Stripe.
    t("sk_live_", 20),
    t("sk_test_", 20),
    t("rk_live_", 20),
    t("rk_test_", 20),
    t("whsec_", 20),
    // DigitalOcean, Shopify, Linear, Postman, Doppler, HashiCorp Vault, Grafana,
    // Databricks, Atlassian, Heroku, SendGrid, age.
    t("dop_v1_", 30),
    t("doo_v1_", 30),
    t("dor_v1_", 30),
    t("shpat_", 24),
    t("shpss_", 24),
    t("shpca_", 24),
    t("shppa_", 24),
    t("lin_api_", 24),
    t("PMAK-", 24),
    t("dp.pt.", 24),
    t("dp.st.", 24),
    t("hvs.", 24),
    t("hvb.", 24),
    t("glc_", 24),
    t("glsa_", 24),
    t("dapi", 32),
    t("ATATT3", 30),
    t("HRKU-", 24),
    t("SG.", 40),
    t("AGE-SECRET-KEY-1", 40),
];

/// The characters a token is made of.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '=' | '+' | '/')
}

/// Tokens recognisable by their shape wherever they start ([`TOKENS`], OpenAI's older
/// `sk-…`, JSON Web Tokens): after any character but a letter or digit.
fn known_tokens(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut changed = false;
    let mut i = 0;
    while i < text.len() {
        if !text.is_char_boundary(i)
            || (i > 0
                && text[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric()))
        {
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let token = TOKENS.iter().find(|t| rest.starts_with(t.prefix));
        if token.is_none() && !rest.starts_with("sk-") && !rest.starts_with("eyJ") {
            i += 1;
            continue;
        }
        let len = rest.find(|c: char| !is_token_char(c)).unwrap_or(rest.len());
        // A token does not end with the punctuation of the sentence around it.
        let len = rest[..len].trim_end_matches(['.', '/', '-']).len();
        let found = token.is_some_and(|t| len >= t.min_len)
            || openai_legacy(&rest[..len])
            || jwt(&rest[..len]);
        if found {
            out.push_str(&text[copied..i]);
            out.push_str(MASK);
            copied = i + len;
            changed = true;
            i += len;
        } else {
            i += 1;
        }
    }
    changed.then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// OpenAI's `sk-` followed by at least 20 letters and digits with a digit among them
/// (`sk-assessment-plan` is a word).
fn openai_legacy(token: &str) -> bool {
    let Some(body) = token.strip_prefix("sk-") else {
        return false;
    };
    body.len() >= 20
        && body.bytes().any(|b| b.is_ascii_digit())
        && body.bytes().any(|b| b.is_ascii_alphabetic())
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A JSON Web Token: `eyJ…` header, payload and signature, base64url, dot-separated.
fn jwt(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() == 3 && parts[0].starts_with("eyJ") && parts.iter().all(|p| p.len() >= 8)
}

/// `-----BEGIN … PRIVATE KEY-----` up to its `END` line (or the end of the text).
fn private_keys(text: &str) -> Option<String> {
    let begin = "-----BEGIN ";
    let mut out = String::new();
    let mut copied = 0;
    let mut from = 0;
    while let Some(i) = text[from..].find(begin) {
        let start = from + i;
        let head_end = text[start + begin.len()..]
            .find("-----")
            .map(|e| start + begin.len() + e + 5);
        let Some(head_end) = head_end else { break };
        from = head_end;
        if !text[start..head_end].contains("PRIVATE KEY") {
            continue;
        }
        let end = text[head_end..]
            .find("-----END ")
            .and_then(|e| {
                let tail = head_end + e + "-----END ".len();
                text[tail..].find("-----").map(|f| tail + f + 5)
            })
            .unwrap_or(text.len());
        out.push_str(&text[copied..start]);
        out.push_str(MASK);
        copied = end;
        from = end;
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        out
    })
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
        assert_eq!(
            secrets("fatal: unable to access 'https://bot:tok;en99@host/x.git/': 403"),
            "fatal: unable to access 'https://[REDACTED]@host/x.git/': 403"
        );
        // No credentials, ssh's `git@`, and scp-like addresses stay.
        for same in [
            "https://example.com/a/b.git",
            "ssh://git@example.com/a/b.git",
            "git@github.com:acme/api.git",
            "mail me at a@b.c",
            "https://registry.example.com/@scope/pkg",
        ] {
            assert_eq!(secrets(same), same);
            assert!(matches!(secrets(same), Cow::Borrowed(_)));
        }
        assert_eq!(
            url_without_userinfo("https://bot:tok,en@host/x.git"),
            "https://host/x.git"
        );
        assert_eq!(url_without_userinfo("git@host:a/b"), "git@host:a/b");
        assert_eq!(url_without_userinfo("/srv/a@b/repo"), "/srv/a@b/repo");
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
            secrets("-H 'Authorization: token abc'"),
            "-H 'Authorization: token [REDACTED]'"
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
            "authorization failed",
            "bypass=yes",
        ] {
            assert_eq!(secrets(same), same, "{same}");
        }
    }

    #[test]
    fn known_token_shapes() {
        assert_eq!(
            secrets("push with ghp_abcdefghijklmnopqrstuvwxyz0123456789 now."),
            "push with [REDACTED] now."
        );
        assert_eq!(secrets("glpat-abcdefghij0123456789"), "[REDACTED]");
        assert_eq!(
            secrets("-ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            "-[REDACTED]"
        );
        assert_eq!(secrets("ghp_short"), "ghp_short");
        // Inside a word it is not a token; nor is a word that starts like one.
        for same in [
            "myghp_abcdefghijklmnopqrstuvwxyz",
            "pnpm_config_store_dir_is_somewhere_else",
            "fix/sk-assessment-for-the-new-project",
            "task-1234-implement-the-feature-x",
            "AKIA is how AWS key ids start",
        ] {
            assert_eq!(secrets(same), same, "{same}");
        }
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

    /// The corpus: every shape, alone and inside the kinds of text grove redacts (a command
    /// line, git's stderr, a TOML setting, a Markdown line, an error message), is hidden.
    #[test]
    fn no_shape_survives() {
        let shapes = e2e::secrets::shapes();
        assert!(shapes.len() >= 100, "{} shapes", shapes.len());
        for s in &shapes {
            for line in [
                s.text.clone(),
                format!("gw add-repo w1 -r {} --format json", s.text),
                format!(
                    "remote: Invalid credentials\nfatal: could not read {}\n",
                    s.text
                ),
                format!("post_create = \"{}\"", s.text.replace('"', "\\\"")),
                format!("- `{}`: 403 Forbidden", s.text),
                format!("no workspace named `{}`", s.text),
            ] {
                let shown = secrets(&line);
                assert!(
                    !shown.contains(&s.secret),
                    "{:?} survives in {shown:?}",
                    s.secret
                );
                assert!(shown.contains(MASK), "{line:?}");
            }
        }
    }
}
