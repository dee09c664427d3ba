//! An agent's whole session — context, create, status, sync, delete — driven only by
//! machine-mode output and by running `next_actions` verbatim, with hooks that print to
//! stdout and stderr, a dirty repository and a fetch that fails. Every stdout must be
//! exactly one JSON document.

use e2e::{Run, TestEnv};
use serde_json::Value;

/// Runs the next action whose argv starts with `prefix`, verbatim, through a shell.
#[track_caller]
fn follow(env: &TestEnv, cwd: &std::path::Path, envelope: &Value, prefix: &[&str]) -> Run {
    let actions = envelope["next_actions"]
        .as_array()
        .expect("next_actions is always present");
    let action = actions
        .iter()
        .find(|a| {
            let argv: Vec<&str> = a["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap())
                .collect();
            argv.starts_with(prefix)
        })
        .unwrap_or_else(|| panic!("no next action starting with {prefix:?} in {actions:#?}"));
    assert!(["read", "write", "destructive"].contains(&action["effect"].as_str().unwrap()));
    let command = action["command"].as_str().unwrap();
    let run = env.sh(cwd, command);
    if prefix[0] == "gw" {
        run.json();
    }
    run
}

#[test]
fn an_agent_drives_the_lifecycle_through_json_and_next_actions() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let api_src = env.repos.join("api");
    env.commit(
        &api_src,
        ".grove.toml",
        "setup = \"echo setup-out; echo setup-err >&2\"\n",
        "setup",
    );
    env.git(&api_src, &["push", "-q", "origin", "main"]);
    env.trust("api").success();
    let config = env.grove_home.join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[hooks]\npost_create = \"echo hook-out; echo hook-err >&2\"\n");
    std::fs::write(&config, text).unwrap();
    // web's origin disappears: its fetches fail, and grove carries on with local refs.
    env.git(
        &env.repos.join("web"),
        &["remote", "set-url", "origin", "file:///nonexistent/web.git"],
    );

    let json = |run: Run| -> Value {
        let v = run.json();
        assert!(v["next_actions"].is_array(), "{run}");
        v
    };

    // Orient.
    let ctx = json(env.gw(&["context", "--format", "json"]).success());
    assert_eq!(ctx["result"]["initialized"], true);
    assert_eq!(ctx["result"]["workspace"], Value::Null);
    let repos = json(follow(&env, &env.root, &ctx, &["gw", "repos"]).success());
    let names: Vec<&str> = repos["result"]["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["api", "web"]);

    // Create: hook output stays off stdout; the failed fetch is a warning.
    let created = json(
        env.gw(&[
            "create", "feat", "-b", "feat/x", "-r", "api,web", "--format", "json",
        ])
        .success(),
    );
    assert!(
        !created.to_string().contains("hook-out") && !created.to_string().contains("setup-out")
    );
    let warnings = created["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("web: fetch failed")),
        "{warnings:?}"
    );
    assert_eq!(created["result"]["setup"][0]["status"], "ready");
    let path = created["result"]["path"].as_str().unwrap().to_string();
    let ws = std::path::PathBuf::from(&path);

    // Inspect, following the create's own suggestion.
    let status = json(follow(&env, &env.root, &created, &["gw", "status"]).success());
    assert_eq!(status["result"]["count"], 2);

    // Upstream moves on, and the agent leaves work in web.
    env.push_upstream("api", "main", "upstream.txt", "new\n");
    std::fs::write(ws.join("web/notes.md"), "work in progress\n").unwrap();
    env.git(&ws.join("api"), &["fetch", "-q", "origin"]);
    let inside = json(
        env.gw_in(&ws.join("api"), &["context", "--format", "json"])
            .success(),
    );
    assert_eq!(inside["result"]["workspace"]["workspace"], "feat");
    let status = json(follow(&env, &ws, &inside, &["gw", "status"]).success());
    let api = &status["result"]["repos"][0];
    assert_eq!(
        (api["repo"].as_str(), api["behind"].as_u64()),
        (Some("api"), Some(1))
    );
    let git_status = follow(&env, &ws, &status, &["git", "-C"]).success();
    assert!(git_status.stdout.contains("notes.md"), "{git_status}");

    // Sync, as suggested: api is rebased, dirty web is skipped with a warning.
    let synced = json(follow(&env, &ws, &status, &["gw", "sync"]).success());
    let outcomes: Vec<(&str, &str)> = synced["result"]["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["repo"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(outcomes, [("api", "rebased"), ("web", "skipped")]);
    assert!(!synced["warnings"].as_array().unwrap().is_empty());
    assert!(ws.join("api/upstream.txt").exists());

    // Delete refuses to lose the notes; its suggestion shows what would be lost.
    let refused = env.gw(&["delete", "feat", "--format", "json"]).code(4);
    let refused = json(refused);
    assert_eq!(refused["error"]["code"], "WORKTREE_DIRTY");
    let seen = json(follow(&env, &env.root, &refused, &["gw", "status"]).success());
    assert!(
        seen["result"]["repos"][1]["changes"]
            .to_string()
            .contains("notes.md")
    );
    // The agent was told to discard it: --force.
    let deleted = json(
        env.gw(&["delete", "feat", "--force", "--format", "json"])
            .success(),
    );
    assert_eq!(deleted["result"]["deleted"][0]["outcome"], "deleted");
    let list = json(follow(&env, &env.root, &deleted, &["gw", "list"]).success());
    assert_eq!(list["result"]["count"], 0);
    assert!(!ws.exists(), "the workspace directory is gone");
    env.assert_git_agrees_with_state();
}
