//! `gw sync`: catching up with upstream, skipping dirty worktrees, aborting a conflicting
//! rebase so the worktree is exactly as it was, and the sync hooks.

use e2e::{TestEnv, repo_result, s};
use serde_json::Value;

#[test]
fn sync_catches_up_with_new_upstream_commits() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let api = env.workspace_dir().join("feat-x/api");
    env.commit(&api, "feature.txt", "mine\n", "my work");
    env.push_upstream("api", "main", "one.txt", "1\n");
    env.push_upstream("api", "main", "two.txt", "2\n");

    let run = env.gw(&["sync", "feat-x", "--format", "json"]).success();
    run.envelope("sync");
    let r = run.result();
    assert_eq!(repo_result(&r, "api")["outcome"], "rebased", "{r:#}");
    assert_eq!(repo_result(&r, "api")["commits"], 2);
    assert_eq!(repo_result(&r, "api")["base"], "origin/main");
    assert_eq!(repo_result(&r, "api")["branch"], "feat/x");
    assert_eq!(repo_result(&r, "web")["outcome"], "up_to_date");
    assert!(api.join("one.txt").exists() && api.join("two.txt").exists());
    assert!(api.join("feature.txt").exists(), "own commit kept on top");
    let status = env
        .gw(&["status", "feat-x", "--format", "json"])
        .success()
        .result();
    assert_eq!(status["repos"][0]["behind"], 0);
    assert_eq!(status["repos"][0]["ahead"], 1);

    // From inside the workspace, nothing left to do.
    let again = env.gw_in(&api, &["sync", "--format", "json"]).success();
    assert_eq!(repo_result(&again.result(), "api")["outcome"], "up_to_date");
    env.assert_git_agrees_with_state();
}

#[test]
fn sync_skips_a_dirty_repo_and_rebases_the_others() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let web = env.workspace_dir().join("feat-x/web");
    env.push_upstream("api", "main", "a.txt", "a\n");
    env.push_upstream("web", "main", "w.txt", "w\n");
    std::fs::write(web.join("README.md"), "edited, not committed\n").unwrap();
    let before = env.worktree_state(&web);

    let run = env.gw(&["sync", "feat-x", "--format", "json"]).success();
    run.envelope("sync");
    let doc = run.json();
    let r = run.result();
    assert_eq!(repo_result(&r, "api")["outcome"], "rebased");
    let w = repo_result(&r, "web");
    assert_eq!(w["outcome"], "skipped");
    assert_eq!(w["commits"], serde_json::Value::Null);
    assert!(
        w["unknown"]["commits"].as_str().unwrap().contains("dirty"),
        "a null says why: {w:#}"
    );
    assert!(w["detail"].as_str().unwrap().contains("dirty"), "{w:#}");
    let warnings = doc["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|x| x.as_str().unwrap().contains("web") && x.as_str().unwrap().contains("dirty")),
        "{doc:#}"
    );
    assert!(
        doc["next_actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["command"] == format!("git -C {} status", s(&web))),
        "{doc:#}"
    );
    assert_eq!(
        env.worktree_state(&web),
        before,
        "the dirty worktree is untouched"
    );
    assert!(!web.join("w.txt").exists());
    env.assert_git_agrees_with_state();
}

#[test]
fn sync_with_a_conflict_fails_and_leaves_the_worktree_exactly_as_it_was() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let api = env.workspace_dir().join("feat-x/api");
    let web = env.workspace_dir().join("feat-x/web");
    env.commit(&api, "README.md", "# api, my version\n", "mine");
    env.commit(&api, "notes/later.txt", "more work\n", "more");
    env.push_upstream("api", "main", "README.md", "# api, their version\n");
    env.push_upstream("web", "main", "w.txt", "w\n");
    let before = env.worktree_state(&api);

    let run = env.gw(&["sync", "feat-x", "--format", "json"]).code(5);
    run.envelope("sync");
    assert_eq!(run.error_code(), "GIT_FAILED");
    let doc = run.json();
    let r = &doc["result"];
    let a = repo_result(r, "api");
    assert_eq!(a["outcome"], "failed", "{doc:#}");
    let detail = a["detail"].as_str().unwrap();
    assert!(
        detail.contains("aborted") && detail.contains("README.md"),
        "{detail}"
    );
    assert_eq!(
        repo_result(r, "web")["outcome"],
        "rebased",
        "other repos still sync"
    );
    assert!(web.join("w.txt").exists());
    let commands: Vec<&str> = doc["next_actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["command"].as_str().unwrap())
        .collect();
    assert!(
        commands.contains(&format!("git -C {} status", s(&api)).as_str()),
        "{commands:?}"
    );
    assert!(
        commands.contains(&format!("git -C {} rebase origin/main", s(&api)).as_str()),
        "{commands:?}"
    );

    assert_eq!(
        env.worktree_state(&api),
        before,
        "files, HEAD, branch and status are exactly as before"
    );
    let status = env.git(&api, &["status"]);
    assert!(
        !status.contains("rebase"),
        "no rebase in progress:\n{status}"
    );

    // Text mode fails the same way.
    env.gw(&["sync", "feat-x"]).code(5);
    assert_eq!(env.worktree_state(&api), before);
    env.assert_git_agrees_with_state();
}

#[test]
fn sync_runs_pre_and_post_sync_hooks_around_a_rebase() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let log = env.root.join("hooks.log");
    std::fs::write(
        env.repos.join("api/.grove.toml"),
        format!(
            "pre_sync = \"echo pre $GROVE_REPO >> {0}\"\npost_sync = [\"echo post $GROVE_REPO >> {0}\"]\n",
            s(&log)
        ),
    )
    .unwrap();
    std::fs::write(
        env.repos.join("web/.grove.toml"),
        format!("pre_sync = \"echo pre web >> {}\"\n", s(&log)),
    )
    .unwrap();
    env.trust("api").success();
    env.trust("web").success();
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    env.push_upstream("api", "main", "a.txt", "a\n");

    let r = env
        .gw(&["sync", "feat-x", "--format", "json"])
        .success()
        .result();
    assert_eq!(repo_result(&r, "api")["outcome"], "rebased");
    assert_eq!(repo_result(&r, "web")["outcome"], "up_to_date");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        logged, "pre api\npost api\n",
        "hooks run only around an actual rebase"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn sync_fails_cleanly_when_pre_sync_fails() {
    let env = TestEnv::with_repos(&["api"]);
    std::fs::write(env.repos.join("api/.grove.toml"), "pre_sync = \"exit 3\"\n").unwrap();
    env.trust("api").success();
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api"])
        .success();
    env.push_upstream("api", "main", "a.txt", "a\n");
    let api = env.workspace_dir().join("feat-x/api");
    let before = env.worktree_state(&api);
    let run = env.gw(&["sync", "feat-x", "--format", "json"]).code(5);
    run.envelope("sync");
    let r = run.json();
    assert_eq!(repo_result(&r["result"], "api")["outcome"], "failed");
    assert_eq!(env.worktree_state(&api), before);
    env.assert_git_agrees_with_state();
}

/// Hooks run outside grove's locks, since a hook may call gw: a `pre_sync` hook that asks
/// for the workspace's status and runs a command that takes the workspace lock
/// (`add-repo` of a repository already there) works, and so does a `post_sync` one.
#[test]
fn sync_hooks_may_call_gw_on_the_same_workspace() {
    let mut env = TestEnv::with_repos(&["api"]);
    // Short enough that a hook blocked on the lock fails the test quickly.
    env.set_env("GW_LOCK_TIMEOUT_MS", "3000");
    let out = env.root.join("hook-out");
    std::fs::create_dir_all(&out).unwrap();
    let gw = e2e::gw_bin().to_str().unwrap().to_string();
    let call =
        |args: &str, file: &str| format!("'{gw}' {args} --format json > '{}'", s(&out.join(file)));
    std::fs::write(
        env.repos.join("api/.grove.toml"),
        format!(
            "pre_sync = [{:?}, {:?}]\npost_sync = {:?}\n",
            call("status feat-x", "pre-status.json"),
            call("add-repo feat-x -r api", "pre-add.json"),
            call("add-repo feat-x -r api", "post-add.json"),
        ),
    )
    .unwrap();
    env.trust("api").success();
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api"])
        .success();
    env.push_upstream("api", "main", "a.txt", "a\n");

    let r = env
        .gw(&["sync", "feat-x", "--format", "json"])
        .success()
        .result();
    assert_eq!(repo_result(&r, "api")["outcome"], "rebased", "{r:#}");
    let read = |file: &str| -> Value {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        let v: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}: {text}"));
        assert_eq!(v["ok"], true, "{file}: {v:#}");
        v["result"].clone()
    };
    let status = read("pre-status.json");
    assert_eq!(status["workspace"], "feat-x", "{status:#}");
    for file in ["pre-add.json", "post-add.json"] {
        assert_eq!(read(file)["repos"][0]["outcome"], "already_present");
    }
    env.assert_git_agrees_with_state();
}
