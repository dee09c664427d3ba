//! Secrets stay secret (issue 28, finding 1): credentials in URLs (whatever characters the
//! password holds), header-shaped secrets and known token formats never reach
//! `grove.log`, `gw bug-report`, an error (text or JSON) or `--verbose` output, and a URL's
//! userinfo is never written to grove's files at all.

use e2e::TestEnv;
use e2e::secrets::shapes;

/// Every file under the grove directory, as text.
fn grove_files(env: &TestEnv) -> String {
    let mut all = String::new();
    let mut dirs = vec![env.grove_home.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                all.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
            }
        }
    }
    all
}

#[track_caller]
fn assert_hidden(what: &str, text: &str, secrets: &[&str]) {
    for s in secrets {
        assert!(!text.contains(s), "{s:?} is in {what}:\n{text}");
    }
}

/// The findings as reported: a URL password with `;` or `,`, remotes with them, and a
/// header, `sk-ant-`, `sk-proj-`, `npm_` and a `ghp_` right after a `-` in a hook command.
#[test]
fn the_reported_credentials_are_hidden() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "w1", "-b", "w1", "-r", "api", "--format", "json"])
        .success();
    let secrets = [
        "tok;en99",
        "s3cr3t,pw",
        "abc;def123",
        "c2VjcmV0dG9rZW4xMjM0",
        "sk-ant-api03-AbCdEfGh0123456789AbCdEfGh0123456789",
        "sk-proj-AbCdEfGh0123456789AbCdEfGh0123456789",
        "npm_AbCdEfGh0123456789AbCdEfGh0123456789",
        "ghp_AbCdEfGh0123456789AbCdEfGh0123456789",
    ];
    env.append_config(&format!(
        "[hooks]\npost_create = \"curl -H 'Authorization: token {}' -d {} -d {} -d {} https://x -ghp_AbCdEfGh0123456789AbCdEfGh0123456789\"\n",
        secrets[3], secrets[4], secrets[5], secrets[6]
    ));
    // Remotes holding credentials.
    let api = env.repos.join("api");
    env.git(
        &api,
        &[
            "remote",
            "set-url",
            "origin",
            "https://bot:s3cr3t,pw@example.com/acme/api.git",
        ],
    );
    let web = env.local_repo("web");
    env.git(
        &web,
        &[
            "remote",
            "add",
            "origin",
            "https://oauth2:abc;def123@example.com/acme/web.git",
        ],
    );
    // A URL whose password holds `;`, and one whose `,` the -r list once split at.
    let mut out = String::new();
    for (mode, url) in [
        ("json", "https://bot:tok;en99@example.com/x.git"),
        ("text", "https://bot:s3cr3t,pw@example.com/y.git"),
    ] {
        let run = env.gw(&["-v", "add-repo", "w1", "-r", url, "--format", mode]);
        assert_ne!(run.status, 0, "the clone fails (no network): {run}");
        out.push_str(&run.stdout);
        out.push_str(&run.stderr);
    }
    let run = env.gw(&["repos", "--format", "json"]).success();
    out.push_str(&run.stdout);
    let report = env.gw(&["bug-report", "--print"]).success();
    out.push_str(&report.stdout);
    out.push_str(&report.stderr);
    assert!(report.stdout.contains("[REDACTED]"), "{report}");
    assert_hidden("the output", &out, &secrets);
    assert_hidden("grove's files", &grove_files(&env), &secrets[..3]);
    // The URL was not cut at its comma: no fragment of it was looked up as a repository.
    let log = std::fs::read_to_string(env.grove_home.join("grove.log")).unwrap();
    assert!(!log.contains("pw@example.com/y.git`"), "{log}");
    assert!(!log.contains("unknown repo"), "{log}");
}

/// The corpus: every shape, in a `config.toml` that `gw bug-report` shows, in an argument
/// that an error echoes (text and JSON, with `--verbose`) and `grove.log` records, and in
/// the log tail `gw bug-report` shows.
#[test]
fn no_secret_of_the_corpus_is_written_anywhere() {
    let env = TestEnv::with_repos(&["api"]);
    let shapes = shapes();
    assert!(shapes.len() >= 100);
    let mut config = String::new();
    for s in &shapes {
        for line in s.text.lines() {
            config.push_str(&format!("# {line}\n"));
        }
    }
    env.append_config(&config);
    let mut out = String::new();
    for s in &shapes {
        for mode in ["text", "json"] {
            // A mutating command, so that grove.log records it, failing on its argument.
            let run = env.gw(&["-v", "--format", mode, "delete", "--", &s.text]);
            assert_ne!(run.status, 0, "{run}");
            out.push_str(&run.stdout);
            out.push_str(&run.stderr);
        }
    }
    let report = env.gw(&["bug-report", "--print"]).success();
    out.push_str(&report.stdout);
    let report = env.gw(&["bug-report", "--format", "json"]).success();
    out.push_str(&report.stdout);
    let log = std::fs::read_to_string(env.grove_home.join("grove.log")).unwrap();
    assert!(
        log.lines().count() >= shapes.len(),
        "every command was logged"
    );
    for s in &shapes {
        let json = serde_json::to_string(&s.secret).unwrap();
        let json = json.trim_matches('"');
        for (what, text) in [("the output", &out), ("grove.log", &log)] {
            assert!(
                !text.contains(&s.secret) && !text.contains(json),
                "{:?} is in {what}",
                s.secret
            );
        }
    }
}
