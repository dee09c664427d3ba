//! `gw rename`: directory, state and git's registrations move together, there and back;
//! a rename that cannot happen moves nothing.

use e2e::{TestEnv, s};

fn ws<'a>(state: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
    state.as_array().unwrap().iter().find(|w| w["name"] == name)
}

#[test]
fn rename_there_and_back() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let old = env.workspace_dir().join("feat-x");
    let new = env.workspace_dir().join("feat-y");
    let created_at = ws(&env.state(), "feat-x").unwrap()["created_at"].clone();
    std::fs::write(old.join("web/wip.txt"), "uncommitted work moves along\n").unwrap();

    let r = env
        .gw(&["rename", "feat-x", "--to", "feat-y", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["from"], "feat-x");
    assert_eq!(r["name"], "feat-y");
    assert_eq!(r["path"], s(&new));
    assert!(
        r["repos"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["outcome"] == "moved")
    );
    assert!(!old.exists() && new.join("api").is_dir());
    assert!(new.join("web/wip.txt").exists());
    let state = env.state();
    assert!(ws(&state, "feat-x").is_none());
    let w = ws(&state, "feat-y").expect("renamed in state");
    assert_eq!(w["path"], s(&new));
    assert_eq!(w["created_at"], created_at, "created_at is preserved");
    assert_eq!(w["repos"][0]["worktree_path"], s(&new.join("api")));
    // git itself follows: the worktree works and the source knows where it is.
    assert_eq!(
        env.git(&new.join("api"), &["branch", "--show-current"]),
        "feat/x"
    );
    assert!(
        env.git(&env.repos.join("api"), &["worktree", "list"])
            .contains(s(&new.join("api")))
    );
    env.gw(&["status", "feat-y"]).success();
    env.assert_git_agrees_with_state();

    // And back, from inside the workspace.
    let r = env
        .gw_in(
            &new.join("web"),
            &["rename", "--to", "feat-x", "--format", "json"],
        )
        .success()
        .result();
    assert_eq!(r["path"], s(&old));
    assert!(old.join("web/wip.txt").exists() && !new.exists());
    let state = env.state();
    assert_eq!(ws(&state, "feat-x").unwrap()["created_at"], created_at);
    assert_eq!(
        env.git(&old.join("web"), &["branch", "--show-current"]),
        "feat/x"
    );
    env.gw(&["delete", "feat-x", "--force"]).success();
    env.assert_git_agrees_with_state();
}

#[test]
fn rename_onto_an_existing_name_or_directory_moves_nothing() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "a", "-b", "a", "-r", "api"]).success();
    env.gw(&["create", "b", "-b", "b", "-r", "api"]).success();
    let before = env.state();

    let run = env
        .gw(&["rename", "a", "--to", "b", "--format", "json"])
        .code(4);
    assert_eq!(run.error_code(), "WORKSPACE_EXISTS");
    std::fs::create_dir(env.workspace_dir().join("c")).unwrap();
    let run = env
        .gw(&["rename", "a", "--to", "c", "--format", "json"])
        .code(4);
    assert_eq!(run.error_code(), "WORKSPACE_EXISTS");
    let run = env
        .gw(&["rename", "a", "--to", "../x", "--format", "json"])
        .code(2);
    assert_eq!(run.error_code(), "USAGE");
    let run = env
        .gw(&["rename", "nope", "--to", "d", "--format", "json"])
        .code(3);
    assert_eq!(run.error_code(), "WORKSPACE_NOT_FOUND");

    assert_eq!(env.state(), before);
    assert!(env.workspace_dir().join("a/api").is_dir());
    env.assert_git_agrees_with_state();
}
