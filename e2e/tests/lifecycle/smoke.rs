//! The whole lifecycle once, quickly: init → create → list → status → go → delete.

use e2e::{TestEnv, s};

#[test]
fn create_inspect_delete() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let created = env
        .gw(&[
            "create", "feat-x", "-b", "feat/x", "-r", "api,web", "--format", "json",
        ])
        .success();
    let r = created.result();
    assert_eq!(r["name"], "feat-x");
    assert_eq!(r["repos"].as_array().unwrap().len(), 2);
    env.assert_git_agrees_with_state();

    let list = env.gw(&["list", "--json"]).success().json();
    assert_eq!(list[0]["name"], "feat-x", "legacy --json is a bare array");

    let status = env
        .gw(&["status", "feat-x", "--format", "json"])
        .success()
        .result();
    assert_eq!(status["repos"][0]["branch"], "feat/x");

    let path = env.gw(&["go", "feat-x"]).success().stdout;
    assert_eq!(
        path,
        format!("{}\n", s(&env.workspace_dir().join("feat-x")))
    );

    env.gw(&["delete", "feat-x"]).success();
    assert!(!env.workspace_dir().join("feat-x").exists());
    assert_eq!(
        env.git(&env.repos.join("api"), &["branch", "--list", "feat/x"]),
        ""
    );
    env.assert_git_agrees_with_state();
}
