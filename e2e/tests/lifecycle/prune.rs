//! `gw prune` by age and with a missing directory, and `gw prune branches`.

use e2e::TestEnv;
use serde_json::Value;

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {v:#}"))
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

fn age(env: &TestEnv, name: &str, created_at: &str) {
    env.edit_state(|st| {
        for w in st.as_array_mut().unwrap() {
            if w["name"] == name {
                w["created_at"] = created_at.into();
            }
        }
    });
}

#[test]
fn prune_by_age_previews_then_deletes() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "old", "-b", "old", "-r", "api,web"])
        .success();
    env.gw(&["create", "new", "-b", "new", "-r", "api"])
        .success();
    age(&env, "old", "2001-02-03T04:05:06.000000");
    // A Go grove entry without fractional seconds parses too.
    env.gw(&["create", "older", "-b", "older", "-r", "web"])
        .success();
    age(&env, "older", "2001-01-01T00:00:00");

    let r = env.gw(&["prune", "--format", "json"]).success().result();
    assert_eq!(names(&r, "workspaces"), ["old", "older"]);
    assert_eq!(r["applied"], false);
    assert_eq!(r["min_age"], "7d");
    assert!(r["workspaces"][0]["age_days"].as_u64().unwrap() > 365);
    assert_eq!(
        env.workspace_names(),
        ["old", "new", "older"],
        "a preview changes nothing"
    );

    let bare = env
        .gw(&["prune", "--min-age", "2w", "--json"])
        .success()
        .json();
    assert_eq!(
        bare.as_array().unwrap().len(),
        2,
        "legacy --json is a bare array"
    );
    assert_eq!(bare[0]["missing"], false);
    env.gw(&["prune", "--min-age", "3m", "--format", "json"])
        .code(2);

    // Nothing is as old as 100 years.
    let r = env
        .gw(&["prune", "--min-age", "5218w", "--yes", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["count"], 0);

    let r = env
        .gw(&["prune", "--min-age", "30d", "--yes", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["applied"], true);
    assert!(
        r["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["outcome"] == "deleted"),
        "{r:#}"
    );
    assert_eq!(env.workspace_names(), ["new"]);
    assert!(!env.workspace_dir().join("old").exists());
    assert_eq!(
        env.git(&env.repos.join("api"), &["branch", "--list", "old"]),
        ""
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn prune_always_takes_workspaces_whose_directory_is_gone() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "gone", "-b", "feat/gone", "-r", "api,web"])
        .success();
    env.gw(&["create", "kept", "-b", "kept", "-r", "api"])
        .success();
    std::fs::remove_dir_all(env.workspace_dir().join("gone")).unwrap();

    let r = env.gw(&["prune", "--format", "json"]).success().result();
    assert_eq!(names(&r, "workspaces"), ["gone"]);
    assert_eq!(r["workspaces"][0]["missing"], true);
    assert_eq!(r["workspaces"][0]["age_days"], 0);
    let table = env.gw(&["prune"]).success();
    assert!(table.stdout.contains("directory missing"), "{table}");

    let r = env
        .gw(&["prune", "--yes", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["workspaces"][0]["outcome"], "deleted", "{r:#}");
    assert_eq!(env.workspace_names(), ["kept"]);
    for repo in ["api", "web"] {
        let src = env.repos.join(repo);
        assert_eq!(env.git(&src, &["branch", "--list", "feat/gone"]), "");
        let list = env.git(&src, &["worktree", "list", "--porcelain"]);
        assert!(!list.contains("gone"), "registration pruned:\n{list}");
    }
    env.assert_git_agrees_with_state();
}

#[test]
fn prune_attempts_every_candidate_and_fails_if_one_fails() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "dirty", "-b", "dirty", "-r", "api"])
        .success();
    env.gw(&["create", "clean", "-b", "clean", "-r", "web"])
        .success();
    age(&env, "dirty", "2001-01-01T00:00:00.000000");
    age(&env, "clean", "2001-01-01T00:00:00.000000");
    std::fs::write(
        env.workspace_dir().join("dirty/api/README.md"),
        "uncommitted\n",
    )
    .unwrap();

    let run = env.gw(&["prune", "--yes", "--format", "json"]).code(4);
    run.envelope("prune");
    assert_eq!(run.error_code(), "WORKTREE_DIRTY");
    let doc = run.json();
    let ws = doc["result"]["workspaces"].as_array().unwrap();
    let outcome = |n: &str| {
        ws.iter().find(|c| c["name"] == n).unwrap()["outcome"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(outcome("dirty"), "failed");
    assert_eq!(
        outcome("clean"),
        "deleted",
        "the other candidate was still attempted"
    );
    assert_eq!(env.workspace_names(), ["dirty"]);
    assert!(env.workspace_dir().join("dirty/api/README.md").exists());
    env.gw(&["prune", "--yes"]).code(4);
    env.assert_git_agrees_with_state();
}

#[test]
fn prune_branches_deletes_merged_and_gone_branches_nothing_uses() {
    let env = TestEnv::with_repos(&["api"]);
    let api = env.repos.join("api");
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api"])
        .success();
    // merged: at main. unmerged: a commit of its own. gone: pushed, then deleted upstream.
    env.git(&api, &["branch", "merged"]);
    env.git(&api, &["switch", "-q", "-c", "unmerged"]);
    env.commit(&api, "u.txt", "u\n", "unmerged work");
    env.git(&api, &["switch", "-q", "-c", "gone"]);
    env.commit(&api, "g.txt", "g\n", "squash-merged elsewhere");
    env.git(&api, &["push", "-q", "-u", "origin", "gone"]);
    env.git(&api, &["push", "-q", "origin", "--delete", "gone"]);
    env.git(&api, &["switch", "-q", "main"]);
    // Its change reached the base as a squash merge, so deleting it loses nothing. (A gone
    // branch whose change is in no base is kept without --force: kernel.rs, issue 25.)
    env.git(&api, &["merge", "-q", "--squash", "gone"]);
    env.git(&api, &["commit", "-q", "-m", "squash-merge gone"]);
    env.git(&api, &["push", "-q", "origin", "main"]);
    // A branch checked out in a worktree grove does not know about is not touched either.
    let side = env.root.join("side");
    env.git(
        &api,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            side.to_str().unwrap(),
        ],
    );

    let branches = |r: &Value| -> Vec<(String, String)> {
        r["branches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["branch"].as_str().unwrap().to_string(),
                    b["reason"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let r = env
        .gw(&["prune", "branches", "--format", "json"])
        .success()
        .result();
    assert_eq!(
        branches(&r),
        [("merged".to_string(), "merged into origin/main".to_string())],
        "main, feat/x (a workspace's), side (checked out), unmerged and gone are kept"
    );
    let r = env
        .gw(&["prune", "branches", "--gone", "--fetch", "--format", "json"])
        .success()
        .result();
    assert_eq!(
        branches(&r),
        [
            (
                "gone".to_string(),
                "upstream origin/gone is gone".to_string()
            ),
            ("merged".to_string(), "merged into origin/main".to_string()),
        ]
    );
    assert_eq!(
        env.git(&api, &["branch", "--list", "merged"]),
        "  merged",
        "preview only"
    );
    let bare = env.gw(&["prune", "branches", "--json"]).success().json();
    assert_eq!(bare[0]["branch"], "merged", "legacy --json is a bare array");

    let r = env
        .gw(&["prune", "branches", "--gone", "--yes", "--format", "json"])
        .success()
        .result();
    assert!(
        r["branches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["outcome"] == "deleted"),
        "{r:#}"
    );
    let left = env.git(&api, &["branch", "--format=%(refname:short)"]);
    let mut left: Vec<&str> = left.lines().collect();
    left.sort();
    assert_eq!(left, ["feat/x", "main", "side", "unmerged"]);
    env.git(&api, &["worktree", "remove", side.to_str().unwrap()]);
    env.assert_git_agrees_with_state();
}
