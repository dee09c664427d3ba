//! `gw add-repo` / `gw remove-repo`: names and URLs, idempotent re-add and re-remove,
//! refusals that protect work, and an add that fails part way leaving nothing behind.

use e2e::{TestEnv, write_executable};
use serde_json::Value;

fn outcomes(result: &Value) -> Vec<(String, String)> {
    result["repos"]
        .as_array()
        .expect("repos array")
        .iter()
        .map(|r| {
            (
                r["repo"].as_str().unwrap().to_string(),
                r["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn add_and_remove_repos_by_name_and_url_idempotently() {
    let env = TestEnv::with_repos(&["api", "web"]);
    // `lib` exists only as an origin: adding it by URL clones it into the repo dir.
    env.repo("lib");
    std::fs::remove_dir_all(env.repos.join("lib")).unwrap();
    let lib_url = env.url("lib");
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api"])
        .success();
    let ws = env.workspace_dir().join("feat-x");

    let r = env
        .gw(&[
            "add-repo",
            "feat-x",
            "-r",
            &format!("web,{lib_url}"),
            "--format",
            "json",
        ])
        .success()
        .result();
    assert_eq!(outcomes(&r), pairs(&[("web", "added"), ("lib", "added")]));
    assert!(env.repos.join("lib/.git").is_dir(), "the URL was cloned");
    assert_eq!(
        env.git(&ws.join("lib"), &["branch", "--show-current"]),
        "feat/x"
    );
    assert_eq!(env.workspace_repos("feat-x"), ["api", "web", "lib"]);
    env.assert_git_agrees_with_state();

    // Again, from inside the workspace, by name and by URL: nothing to do.
    let r = env
        .gw_in(
            &ws.join("api"),
            &[
                "add-repo",
                "-r",
                &format!("api,web,{lib_url}"),
                "--format",
                "json",
            ],
        )
        .success()
        .result();
    assert_eq!(
        outcomes(&r),
        pairs(&[
            ("api", "already_present"),
            ("web", "already_present"),
            ("lib", "already_present")
        ])
    );
    assert_eq!(env.workspace_repos("feat-x"), ["api", "web", "lib"]);

    // Remove one by name and one by URL; the branches grove created go with them.
    let r = env
        .gw(&[
            "remove-repo",
            "feat-x",
            "-r",
            &format!("web,{lib_url}"),
            "--format",
            "json",
        ])
        .success()
        .result();
    assert_eq!(
        outcomes(&r),
        pairs(&[("web", "removed"), ("lib", "removed")])
    );
    assert!(!ws.join("web").exists() && !ws.join("lib").exists());
    assert_eq!(
        env.git(&env.repos.join("web"), &["branch", "--list", "feat/x"]),
        ""
    );
    assert_eq!(env.workspace_repos("feat-x"), ["api"]);
    env.assert_git_agrees_with_state();

    // Removing them again converges.
    let r = env
        .gw_in(
            &ws.join("api"),
            &["remove-repo", "-r", "web,lib", "--format", "json"],
        )
        .success()
        .result();
    assert_eq!(
        outcomes(&r),
        pairs(&[("web", "not_found"), ("lib", "not_found")])
    );
    env.gw(&["remove-repo", "feat-x", "-r", "web"]).success();
    env.assert_git_agrees_with_state();
}

#[test]
fn remove_repo_refuses_dirty_or_wandered_worktrees_without_force() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let ws = env.workspace_dir().join("feat-x");
    std::fs::write(ws.join("web/README.md"), "uncommitted\n").unwrap();

    let run = env
        .gw(&["remove-repo", "feat-x", "-r", "api,web", "--format", "json"])
        .code(4);
    assert_eq!(run.error_code(), "WORKTREE_DIRTY");
    assert_eq!(run.json()["error"]["details"]["repos"][0]["repo"], "web");
    assert_eq!(
        env.workspace_repos("feat-x"),
        ["api", "web"],
        "nothing removed"
    );
    assert!(ws.join("api").is_dir());

    env.git(&ws.join("web"), &["checkout", "--", "README.md"]);
    env.git(&ws.join("web"), &["switch", "-q", "-c", "elsewhere"]);
    let run = env
        .gw(&["remove-repo", "feat-x", "-r", "web", "--format", "json"])
        .code(4);
    assert_eq!(run.error_code(), "BRANCH_CONFLICT");
    assert!(
        run.json()["next_actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["command"] == "gw reset feat-x --format json")
    );
    assert_eq!(env.workspace_repos("feat-x"), ["api", "web"]);
    env.gw(&["remove-repo", "feat-x", "-r", "web"]).code(4);

    let r = env
        .gw(&[
            "remove-repo",
            "feat-x",
            "-r",
            "web",
            "--force",
            "--format",
            "json",
        ])
        .success()
        .result();
    assert_eq!(outcomes(&r), pairs(&[("web", "removed")]));
    assert_eq!(env.workspace_repos("feat-x"), ["api"]);
    env.assert_git_agrees_with_state();
}

#[test]
fn remove_repo_keeps_a_branch_with_unpushed_commits() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    env.commit(
        &env.workspace_dir().join("feat-x/web"),
        "work.txt",
        "w\n",
        "unpushed work",
    );
    let run = env
        .gw(&["remove-repo", "feat-x", "-r", "web", "--format", "json"])
        .success();
    let doc = run.json();
    assert_eq!(doc["result"]["repos"][0]["outcome"], "removed");
    assert!(
        doc["warnings"][0]
            .as_str()
            .unwrap()
            .contains("kept branch feat/x"),
        "{doc:#}"
    );
    assert_eq!(
        env.git(&env.repos.join("web"), &["branch", "--list", "feat/x"]),
        "  feat/x"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn add_repo_that_fails_part_way_leaves_no_half_added_repo() {
    let env = TestEnv::with_repos(&["api", "web", "lib"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api"])
        .success();
    // web's checkout hook fails after git has made the worktree: the add fails for web,
    // and lib, which succeeded, must be rolled back too.
    write_executable(
        &env.repos.join("web/.git/hooks/post-checkout"),
        "#!/bin/sh\necho refusing >&2\nexit 1\n",
    );
    let state_before = env.state();

    let run = env
        .gw(&["add-repo", "feat-x", "-r", "lib,web", "--format", "json"])
        .failure();
    let doc = run.envelope("add-repo");
    assert_eq!(doc["ok"], false, "{doc:#}");
    assert_eq!(doc["error"]["code"], "GIT_FAILED");
    assert_eq!(
        outcomes(&doc["result"]),
        pairs(&[("lib", "rolled_back"), ("web", "failed")])
    );
    assert_eq!(env.state(), state_before, "state is untouched");
    let ws = env.workspace_dir().join("feat-x");
    assert!(!ws.join("web").exists() && !ws.join("lib").exists());
    for r in ["web", "lib"] {
        assert_eq!(
            env.git(&env.repos.join(r), &["branch", "--list", "feat/x"]),
            "",
            "{r}: the branch this invocation created is gone"
        );
    }
    env.assert_git_agrees_with_state();

    // Text mode fails too, and a retry after fixing the cause works.
    env.gw(&["add-repo", "feat-x", "-r", "web"]).failure();
    std::fs::remove_file(env.repos.join("web/.git/hooks/post-checkout")).unwrap();
    env.gw(&["add-repo", "feat-x", "-r", "lib,web"]).success();
    assert_eq!(env.workspace_repos("feat-x"), ["api", "lib", "web"]);
    env.assert_git_agrees_with_state();
}

#[test]
fn add_repo_outside_a_workspace_needs_a_name() {
    let env = TestEnv::with_repos(&["api"]);
    let run = env
        .gw(&["add-repo", "-r", "api", "--format", "json"])
        .code(3);
    assert_eq!(run.error_code(), "WORKSPACE_NOT_FOUND");
    let run = env.gw(&["add-repo", "nope", "--format", "json"]).code(2);
    assert_eq!(run.error_code(), "USAGE");
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("repositories")
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn create_that_fails_part_way_leaves_no_half_created_repo_either() {
    let env = TestEnv::with_repos(&["api", "web"]);
    write_executable(
        &env.repos.join("web/.git/hooks/post-checkout"),
        "#!/bin/sh\nexit 1\n",
    );
    let run = env
        .gw(&[
            "create", "feat-x", "-b", "feat/x", "-r", "api,web", "--format", "json",
        ])
        .failure();
    assert_eq!(run.json()["ok"], false);
    assert_eq!(env.state(), serde_json::json!([]));
    assert!(!env.workspace_dir().join("feat-x").exists());
    for r in ["api", "web"] {
        assert_eq!(
            env.git(&env.repos.join(r), &["branch", "--list", "feat/x"]),
            "",
            "{r}"
        );
    }
    env.assert_git_agrees_with_state();
}
