//! Files written by the Go grove (by hand, from the reference's format description) are
//! read, and what grove writes back keeps every field and the shape.

use e2e::{TestEnv, s};
use serde_json::{Value, json};

/// A Go-grove home: `config.toml` with a comment, the legacy `repos_dir` key, both hook
/// forms and a preset; `state.json` with two workspaces over real worktrees.
fn go_home() -> (TestEnv, Value) {
    let env = TestEnv::new();
    let api = env.repo("api");
    let web = env.repo("web");
    let log = env.root.join("hook.log");
    let ws_dir = env.workspace_dir();

    // Worktrees made the way the Go grove makes them.
    let legacy = ws_dir.join("legacy");
    env.git(
        &api,
        &[
            "worktree",
            "add",
            "-q",
            "--no-track",
            "-b",
            "feat/legacy",
            s(&legacy.join("api")),
            "origin/main",
        ],
    );
    env.git(&web, &["branch", "long-lived"]);
    env.git(
        &web,
        &[
            "worktree",
            "add",
            "-q",
            s(&legacy.join("web")),
            "long-lived",
        ],
    );
    let old = ws_dir.join("old");
    env.git(
        &web,
        &[
            "worktree",
            "add",
            "-q",
            "--no-track",
            "-b",
            "old",
            s(&old.join("web")),
            "origin/main",
        ],
    );

    std::fs::create_dir_all(&env.grove_home).unwrap();
    std::fs::write(
        env.config_path(),
        format!(
            "# grove config, written by gw 1.1.x\n\
             repos_dir = \"{repos}\"\n\
             workspace_dir = \"{ws}\"\n\
             \n\
             [presets.backend]\n\
             repos = [\"api\", \"web\"]\n\
             \n\
             [hooks]\n\
             post_create = \"echo created {{name}} >> {log}\"\n\
             pre_delete = {{ command = \"echo deleting {{name}} >> {log}\", description = \"log it\", on_failure = \"warn\", timeout = \"30s\" }}\n",
            repos = s(&env.repos),
            ws = s(&ws_dir),
            log = s(&log),
        ),
    )
    .unwrap();

    let state = json!([
        {
            "name": "legacy",
            "path": s(&legacy),
            "branch": "feat/legacy",
            "created_at": "2025-03-04T05:06:07.123456",
            "repos": [
                {
                    "repo_name": "api",
                    "source_repo": s(&api),
                    "worktree_path": s(&legacy.join("api")),
                    "branch": "feat/legacy"
                },
                {
                    "repo_name": "web",
                    "source_repo": s(&web),
                    "worktree_path": s(&legacy.join("web")),
                    "branch": "long-lived",
                    "preserve_branch": true,
                    "plugin_note": {"from": "a plugin"}
                }
            ],
            "source": {
                "provider": "github",
                "url": "https://example.invalid/acme/api/pull/7",
                "ref": "7",
                "title": "Legacy work"
            },
            "future_field": [1, "two", {"three": 3}]
        },
        {
            "name": "old",
            "path": s(&old),
            "branch": "old",
            "created_at": "2024-12-24T18:00:00",
            "repos": [
                {
                    "repo_name": "web",
                    "source_repo": s(&web),
                    "worktree_path": s(&old.join("web")),
                    "branch": "old"
                }
            ]
        }
    ]);
    std::fs::write(
        env.state_path(),
        serde_json::to_string_pretty(&state).unwrap(),
    )
    .unwrap();
    (env, state)
}

#[test]
fn go_files_are_read_and_round_trip_without_losing_fields() {
    let (env, original) = go_home();

    // Read: the bare array comes back exactly.
    assert_eq!(env.gw(&["list", "--json"]).success().json(), original);
    let status = env
        .gw(&["status", "legacy", "--format", "json"])
        .success()
        .result();
    assert_eq!(status["source"], original[0]["source"]);
    assert_eq!(status["repos"][0]["branch"], "feat/legacy");
    assert_eq!(status["repos"][1]["branch"], "long-lived");
    let table = env.gw(&["status", "legacy"]).success().stdout;
    assert!(table.contains("Source: github 7 — Legacy work"), "{table}");
    let list = env.gw(&["list"]).success().stdout;
    assert!(
        list.contains("2025-03-04") && list.contains("2024-12-24"),
        "{list}"
    );
    assert_eq!(
        env.gw(&["repos", "-o", "name"]).success().stdout,
        "api\nweb\n"
    );
    let presets = env.gw(&["preset", "list", "--json"]).success().json();
    assert_eq!(presets, json!({"backend": {"repos": ["api", "web"]}}));
    env.assert_git_agrees_with_state();

    // The legacy key was migrated on load; the comment and everything else survived.
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    assert!(
        config.starts_with("# grove config, written by gw 1.1.x\n"),
        "{config}"
    );
    assert!(!config.contains("repos_dir"), "{config}");
    assert!(
        config.contains(&format!("repo_dirs = [\"{}\"]", s(&env.repos))),
        "{config}"
    );
    assert!(config.contains("description = \"log it\""), "{config}");
    assert!(config.contains("[presets.backend]"), "{config}");

    // Write: create and delete another workspace (through the Go config's preset and hooks).
    env.gw(&["create", "fresh", "-b", "fresh", "-p", "backend"])
        .success();
    // The first write gives every workspace a port slot (the Go entries first, in file
    // order); otherwise every field of the Go entries is kept.
    let with_slots = |slots: &[u64]| -> Value {
        let mut v = original.clone();
        for (w, slot) in v.as_array_mut().unwrap().iter_mut().zip(slots) {
            w["slot"] = json!(slot);
        }
        v
    };
    let original = with_slots(&[0, 1]);
    let mid = env.state();
    assert!(mid.is_array());
    assert_eq!(mid[0], original[0], "every field of the Go entry is kept");
    assert_eq!(mid[1], original[1]);
    assert_eq!(mid[2]["name"], "fresh");
    assert_eq!(mid[2]["slot"], 2);
    env.assert_git_agrees_with_state();
    env.gw(&["delete", "fresh"]).success();
    let log = std::fs::read_to_string(env.root.join("hook.log")).unwrap();
    assert_eq!(log, "created fresh\ndeleting fresh\n");

    let text = std::fs::read_to_string(env.state_path()).unwrap();
    let after: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(after, original, "the Go entries round-trip exactly");
    assert!(
        text.starts_with("[\n  {\n    \"name\": \"legacy\""),
        "a bare, two-space array:\n{text}"
    );
    env.assert_git_agrees_with_state();

    // Deleting the Go workspace honours its preserve_branch.
    env.gw(&["delete", "legacy"]).success();
    assert!(env.has_branch(&env.repos.join("web"), "long-lived"));
    assert!(!env.has_branch(&env.repos.join("api"), "feat/legacy"));
    let after: Value = env.state();
    assert_eq!(after, json!([original[1].clone()]));
    env.assert_git_agrees_with_state();
}
