//! Machine-mode output of the everyday commands (sync, reset, add/remove-repo, rename,
//! prune, doctor, plugins) validated against `docs/schema/`, in success and failure.

use e2e::{TestEnv, s, write_executable};

#[test]
fn everyday_commands_match_their_published_schemas() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let run = |args: &[&str], schema: &str, ok: bool| {
        let mut full = args.to_vec();
        full.extend(["--format", "json"]);
        let run = env.gw(&full);
        let v = run.envelope(schema);
        assert_eq!(v["ok"], ok, "{run}");
        assert!(
            v.get("result").is_some(),
            "a result, even on failure: {run}"
        );
        v
    };
    env.gw(&["create", "ws", "-b", "feat/ws", "-r", "api"])
        .success();
    let ws = env.workspace_dir().join("ws");
    run(&["add-repo", "ws", "-r", "web"], "add-repo", true);
    run(&["add-repo", "ws", "-r", "web"], "add-repo", true);
    env.push_upstream("api", "main", "a.txt", "a\n");
    run(&["sync", "ws"], "sync", true);
    env.git(&ws.join("web"), &["switch", "-q", "-c", "wander"]);
    run(&["reset", "ws"], "reset", true);
    env.commit(&ws.join("api"), "a.txt", "mine\n", "conflicting");
    env.push_upstream("api", "main", "a.txt", "theirs\n");
    run(&["sync", "ws"], "sync", false);
    run(&["reset", "ws"], "reset", false);
    env.git(&ws.join("api"), &["reset", "-q", "--hard", "origin/main"]);
    run(&["rename", "ws", "--to", "ws2"], "rename", true);
    run(&["rename", "ws2", "--to", "ws"], "rename", true);
    run(
        &["remove-repo", "ws", "-r", "web,nope"],
        "remove-repo",
        true,
    );
    run(&["prune"], "prune", true);
    run(&["prune", "--min-age", "0h"], "prune", true);
    run(&["prune", "branches"], "prune-branches", true);
    std::fs::remove_dir_all(ws.join("api")).unwrap();
    let d = run(&["doctor"], "doctor", true);
    assert_eq!(d["result"]["issues"][0]["kind"], "worktree_missing");
    run(&["doctor", "--fix"], "doctor", true);
    run(&["prune", "--min-age", "0h", "--yes"], "prune", true);

    let tool = env.root.join("gw-tool");
    write_executable(&tool, "#!/bin/sh\nexit 0\n");
    run(&["plugin", "install", s(&tool)], "plugin", true);
    run(&["plugin", "list"], "plugin-list", true);
    run(&["plugin", "remove", "tool"], "plugin", true);
    env.assert_git_agrees_with_state();
}
