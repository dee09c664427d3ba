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
    run(&["remove-repo", "ws", "-r", "web"], "remove-repo", true);
    // A repository grove knows that is not in the workspace: removal converges.
    run(&["remove-repo", "ws", "-r", "web"], "remove-repo", true);
    run(&["prune"], "prune", true);
    run(&["prune", "--min-age", "0h"], "prune", true);
    run(&["prune", "branches"], "prune-branches", true);
    std::fs::remove_dir_all(ws.join("api")).unwrap();
    // An issue found is ISSUES_FOUND, with the result.
    let d = run(&["doctor"], "doctor", false);
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

/// What a person redirects into a file is the published document, byte for byte:
/// `gw schema config > config.schema.json` is the schema an editor reads from a
/// `#:schema` line, and `gw skill > SKILL.md` the skill the release archive holds; both work
/// before `gw init`, with the same content in machine mode.
#[test]
fn schema_config_and_skill_print_the_published_files() {
    let env = TestEnv::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (args, file) in [
        (&["schema", "config"][..], "docs/schema/config.json"),
        (&["schema", "grove-toml"], "docs/schema/grove-toml.json"),
    ] {
        let published: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root.join(file)).unwrap()).unwrap();
        let printed = env.gw(args).success().stdout;
        let printed: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(printed, published, "gw {args:?}");
        assert_eq!(
            printed["$schema"],
            "http://json-schema.org/draft-07/schema#"
        );
        let mut json = args.to_vec();
        json.extend(["--format", "json"]);
        let v = env.gw(&json).envelope("schema");
        assert_eq!(v["result"]["schemas"][0]["schema"], published);
    }
    let skill = std::fs::read_to_string(root.join("skills/grove/SKILL.md")).unwrap();
    assert_eq!(env.gw(&["skill"]).success().stdout, skill);
    let v = env.gw(&["skill", "--format", "json"]).envelope("skill");
    assert_eq!(v["result"]["skill"], skill.as_str());
    assert_eq!(v["result"]["name"], "grove");
    let listed = env.gw(&["schema", "--format", "json"]).envelope("schema");
    let names: Vec<&str> = listed["result"]["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"config") && names.contains(&"grove-toml"),
        "{names:?}"
    );
}
