//! Git URLs: recognising them, naming the repository they point to, and comparing them.

/// Whether `s` is a git URL rather than a repository name.
pub fn is_git_url(s: &str) -> bool {
    const SCHEMES: &[&str] = &[
        "https://",
        "http://",
        "file://",
        "ssh://",
        "git://",
        "git+ssh://",
    ];
    if SCHEMES.iter().any(|p| s.starts_with(p)) {
        return true;
    }
    // scp-like: user@host:path
    match (s.find('@'), s.find(':')) {
        (Some(at), Some(colon)) => at > 0 && colon > at + 1 && !s[..colon].contains('/'),
        _ => false,
    }
}

/// The repository name a URL clones into: its last path segment without `.git`.
pub fn repo_name(url: &str) -> Option<String> {
    let trimmed = url.trim_end_matches('/');
    let last = trimmed.rsplit(['/', ':']).next()?;
    let name = last.strip_suffix(".git").unwrap_or(last);
    if name.is_empty() || name == "." || name == ".." || name.contains('\\') {
        None
    } else {
        Some(name.to_string())
    }
}

/// `owner/repo` for a hosted remote (`git@host:owner/repo.git`, `https://host/owner/repo`).
pub fn owner_repo(url: &str) -> Option<String> {
    let rest = if let Some(i) = url.find("://") {
        let after = &url[i + 3..];
        if url.starts_with("file://") {
            return None;
        }
        let slash = after.find('/')?;
        &after[slash + 1..]
    } else if is_git_url(url) {
        &url[url.find(':')? + 1..]
    } else {
        return None;
    };
    let rest = rest.trim_matches('/');
    let rest = rest.strip_suffix(".git").unwrap_or(rest);
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    if parts.len() >= 2 {
        Some(format!(
            "{}/{}",
            parts[parts.len() - 2],
            parts[parts.len() - 1]
        ))
    } else {
        None
    }
}

/// A normalised form for comparing two URLs of the same repository: scheme, user and a
/// trailing `.git` or `/` do not matter; host names compare case-insensitively.
pub fn canonical(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    let url = url.strip_suffix(".git").unwrap_or(url);
    if let Some(path) = url.strip_prefix("file://") {
        return format!(
            "file:{}",
            crate::env::normalize(std::path::Path::new(path)).display()
        );
    }
    let (host, path) = if let Some(i) = url.find("://") {
        let after = &url[i + 3..];
        let after = after.rsplit_once('@').map(|(_, h)| h).unwrap_or(after);
        match after.find('/') {
            Some(s) => (&after[..s], &after[s + 1..]),
            None => (after, ""),
        }
    } else if is_git_url(url) {
        let colon = url.find(':').unwrap_or(0);
        let host = &url[..colon];
        let host = host.rsplit_once('@').map(|(_, h)| h).unwrap_or(host);
        (host, &url[colon + 1..])
    } else {
        return format!(
            "file:{}",
            crate::env::normalize(std::path::Path::new(url)).display()
        );
    };
    let host = host.split(':').next().unwrap_or(host).to_lowercase();
    format!("{host}/{}", path.trim_matches('/'))
}

/// A comma-separated list of repositories (`-r api,https://…`) split at every comma, with
/// the URLs a comma in their userinfo cut apart put back together: a URL with nothing
/// after its host yet (`https://bot:s3cr3t`) goes on into the next piece
/// (`pw@host/x.git`). A git URL always has a path, so a piece without one cannot be a
/// URL that ended there.
pub fn rejoin(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    let mut open = false;
    for item in items {
        match out.last_mut() {
            Some(last) if open => {
                last.push(',');
                last.push_str(&item);
            }
            _ => out.push(item),
        }
        let last = out.last().expect("pushed");
        open = last
            .find("://")
            .is_some_and(|i| !last[i + 3..].contains('/'));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_urls() {
        for u in [
            "https://github.com/a/b.git",
            "file:///tmp/x",
            "git@github.com:a/b.git",
            "ssh://git@h/a/b",
            "git://h/a",
        ] {
            assert!(is_git_url(u), "{u}");
        }
        for n in ["api", "svc-auth", "owner/repo", "C:thing", "./x"] {
            assert!(!is_git_url(n), "{n}");
        }
    }

    #[test]
    fn names_and_owners() {
        assert_eq!(
            repo_name("https://github.com/acme/api.git").as_deref(),
            Some("api")
        );
        assert_eq!(repo_name("git@github.com:acme/web").as_deref(), Some("web"));
        assert_eq!(
            repo_name("file:///tmp/origins/svc.git/").as_deref(),
            Some("svc")
        );
        assert_eq!(repo_name("https://h/.."), None);
        assert_eq!(
            owner_repo("git@github.com:acme/api.git").as_deref(),
            Some("acme/api")
        );
        assert_eq!(
            owner_repo("https://gitlab.com/g/sub/api").as_deref(),
            Some("sub/api")
        );
        assert_eq!(owner_repo("file:///tmp/x.git"), None);
        assert_eq!(owner_repo("/local/path"), None);
    }

    #[test]
    fn a_comma_in_a_urls_userinfo_does_not_split_it() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            rejoin(v(&["api", "https://bot:s3cr3t", "pw@host/x.git", "web"])),
            v(&["api", "https://bot:s3cr3t,pw@host/x.git", "web"])
        );
        assert_eq!(
            rejoin(v(&["https://u:a", "b", "c@h/x", "web"])),
            v(&["https://u:a,b,c@h/x", "web"])
        );
        assert_eq!(
            rejoin(v(&["https://h/x.git", "web", "git@h:a/b"])),
            v(&["https://h/x.git", "web", "git@h:a/b"])
        );
    }

    #[test]
    fn canonical_forms_agree() {
        assert_eq!(
            canonical("https://github.com/acme/api.git"),
            canonical("git@GitHub.com:acme/api")
        );
        assert_eq!(
            canonical("ssh://git@github.com/acme/api/"),
            canonical("https://github.com/acme/api")
        );
        assert_eq!(
            canonical("file:///tmp/o/../o/api.git"),
            canonical("/tmp/o/api")
        );
        assert_ne!(
            canonical("https://github.com/acme/api"),
            canonical("https://github.com/acme/web")
        );
    }
}
