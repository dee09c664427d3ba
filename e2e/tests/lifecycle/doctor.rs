//! `gw doctor [--fix]`: healthy, then a worktree deleted by hand, a workspace directory
//! gone, stale registrations, leftover trash, and unreadable files.

use e2e::{TestEnv, s};
use serde_json::Value;

fn kinds(result: &Value) -> Vec<String> {
    result["issues"]
        .as_array()
        .unwrap_or_else(|| panic!("no issues in {result:#}"))
        .iter()
        .map(|i| i["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn doctor_before_and_after_deleting_a_worktree_by_hand() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(r["healthy"], true, "{r:#}");
    assert_eq!(kinds(&r), Vec::<String>::new());
    assert!(
        env.gw(&["doctor"])
            .success()
            .stderr
            .contains("All workspaces healthy")
    );

    let web = env.workspace_dir().join("feat-x/web");
    std::fs::remove_dir_all(&web).unwrap();
    // Issues found: exit 5, `ISSUES_FOUND`, with the issues in the result.
    let run = env.gw(&["doctor", "--format", "json"]).code(5);
    run.envelope("doctor");
    assert_eq!(run.error_code(), "ISSUES_FOUND", "{run}");
    let r = run.json()["result"].clone();
    assert_eq!(r["healthy"], false);
    assert_eq!(kinds(&r), ["worktree_missing"]);
    let issue = &r["issues"][0];
    assert_eq!(issue["workspace"], "feat-x");
    assert_eq!(issue["repo"], "web");
    assert_eq!(issue["fixable"], true);
    assert!(issue["issue"].as_str().unwrap().contains(s(&web)));
    assert_eq!(
        run.json()["next_actions"][0]["command"],
        "gw doctor --fix --format json"
    );

    // The Go grove's bare shape.
    let bare = env.gw(&["doctor", "--json"]).code(5).json();
    let bare = bare.as_array().expect("a bare array");
    assert_eq!(bare.len(), 1);
    for key in ["workspace", "repo", "issue", "suggested_action"] {
        assert!(bare[0].get(key).is_some(), "{key} in {bare:?}");
    }

    let r = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    assert_eq!(r["fixed"], 1, "{r:#}");
    assert_eq!(r["issues"][0]["outcome"], "fixed");
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(kinds(&r), Vec::<String>::new(), "nothing left after --fix");
    let list = env.git(&env.repos.join("web"), &["worktree", "list", "--porcelain"]);
    assert!(
        !list.contains("feat-x"),
        "the registration was pruned:\n{list}"
    );
    env.assert_git_agrees_with_state();

    // The suggested way back.
    env.gw(&["add-repo", "feat-x", "-r", "web"]).success();
    env.assert_git_agrees_with_state();
}

#[test]
fn doctor_fixes_what_is_safe_and_leaves_the_rest() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "gone", "-b", "feat/gone", "-r", "api"])
        .success();
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    // A workspace directory deleted by hand.
    std::fs::remove_dir_all(env.workspace_dir().join("gone")).unwrap();
    // A registration in the workspace directory that no workspace records, whose directory
    // is gone.
    let stray = env.workspace_dir().join("stray");
    env.git(
        &env.repos.join("web"),
        &["worktree", "add", "-q", "-b", "stray", s(&stray)],
    );
    std::fs::remove_dir_all(&stray).unwrap();
    // The same outside the workspace directory: the user's own business, left alone.
    let mine = env.root.join("mine");
    env.git(
        &env.repos.join("web"),
        &["worktree", "add", "-q", "-b", "mine", s(&mine)],
    );
    std::fs::remove_dir_all(&mine).unwrap();
    // Leftover bytes of a deleted workspace.
    let trash = env.workspace_dir().join(".trash/zombie-1234");
    std::fs::create_dir_all(trash.join("api")).unwrap();
    // A worktree on a branch that no longer exists: reported, not fixable.
    let api = env.workspace_dir().join("feat-x/api");
    env.git(&api, &["switch", "-q", "-c", "elsewhere"]);
    env.git(&env.repos.join("api"), &["branch", "-D", "feat/x"]);

    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    let mut found = kinds(&r);
    found.sort();
    assert_eq!(
        found,
        [
            "branch_missing",
            "leftover_trash",
            "stale_registration",
            "workspace_dir_missing"
        ],
        "{r:#}"
    );

    let r = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    assert_eq!(
        (r["fixed"].as_u64(), r["left"].as_u64()),
        (Some(3), Some(1)),
        "{r:#}"
    );
    let left = r["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["outcome"] == "left")
        .unwrap();
    assert_eq!(left["kind"], "branch_missing");
    assert!(
        left["detail"].as_str().unwrap().contains("not safe"),
        "{left:#}"
    );
    assert!(!trash.exists());
    let list = env.git(&env.repos.join("web"), &["worktree", "list", "--porcelain"]);
    assert!(!list.contains(s(&stray)), "{list}");
    assert!(list.contains(s(&mine)), "not grove's, not touched: {list}");
    let state = env.state();
    let names: Vec<&str> = state
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["feat-x"]);

    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert!(
        r["issues"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["fixable"] == false),
        "a second doctor finds nothing fixable: {r:#}"
    );
    assert_eq!(kinds(&r), ["branch_missing"]);
    env.git(&api, &["switch", "-q", "-c", "feat/x"]);
    // The user's own stale registration is theirs to prune.
    env.git(&env.repos.join("web"), &["worktree", "prune"]);
    env.assert_git_agrees_with_state();
}

#[test]
fn doctor_reports_unreadable_files_and_never_overwrites_them() {
    let env = TestEnv::with_repos(&["api"]);
    let state = env.grove_home.join("state.json");
    std::fs::write(&state, "[{\"name\": ").unwrap();
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(kinds(&r), ["state_unreadable"]);
    assert!(
        r["issues"][0]["issue"]
            .as_str()
            .unwrap()
            .contains("state.json")
    );
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    assert_eq!(r["issues"][0]["outcome"], "left");
    assert_eq!(std::fs::read_to_string(&state).unwrap(), "[{\"name\": ");
    // Other commands refuse, pointing at doctor.
    let run = env.gw(&["list", "--format", "json"]).code(5);
    assert_eq!(run.error_code(), "CORRUPT_STATE");
    std::fs::remove_file(&state).unwrap();

    let config = env.grove_home.join("config.toml");
    std::fs::write(&config, "repo_dirs = [\n").unwrap();
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(kinds(&r), ["config_unreadable"]);
    assert!(
        r["issues"][0]["issue"]
            .as_str()
            .unwrap()
            .contains("config.toml")
    );
    // Left as it is (grove never rewrites a file it cannot read): an issue left, exit 5.
    env.gw(&["doctor", "--fix"]).code(5);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "repo_dirs = [\n");
    env.assert_git_agrees_with_state();
}

#[test]
fn doctor_fix_rolls_back_an_interrupted_rename() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "a", "-b", "feat/a", "-r", "api,web"])
        .success();
    let old = env.workspace_dir().join("a");
    let new = env.workspace_dir().join("b");
    // A rename killed after it moved the directory: its journal says so, and the
    // directory is where the rename left it ...
    std::fs::rename(&old, &new).unwrap();
    let ops = env.grove_home.join("operations");
    std::fs::create_dir_all(&ops).unwrap();
    let id = "20260101T000000000000000-1-0-rename-a";
    let step = |action: &str, extra: Value| {
        let mut v = serde_json::json!({ "action": action, "status": "done" });
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    let mut steps = vec![step(
        "move_dir",
        serde_json::json!({ "from": s(&old), "to": s(&new) }),
    )];
    // ... and after git was told where the worktrees went. Rolling back must move the
    // directory back and then point git at the old paths again.
    for repo in ["api", "web"] {
        env.git(
            &env.repos.join(repo),
            &["worktree", "repair", s(&new.join(repo))],
        );
        steps.push(step(
            "repair_worktrees",
            serde_json::json!({ "repo": repo, "source": s(&env.repos.join(repo)), "paths": [s(&new.join(repo))] }),
        ));
    }
    let record = serde_json::json!({
        "version": 1, "id": id, "kind": "rename", "workspace": "a", "also": ["b"], "pid": 1,
        "started_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "phase": "running", "steps": steps,
    });
    std::fs::write(ops.join(format!("{id}.json")), record.to_string()).unwrap();

    let run = env.gw(&["sync", "a", "--format", "json"]).code(5);
    assert_eq!(run.error_code(), "RECOVERY_PENDING");
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    let op = r["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "interrupted_operation")
        .unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(op["workspace"], "a");
    assert_eq!(op["fixable"], true);

    let r = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    assert_eq!(r["issues"][0]["kind"], "interrupted_operation", "{r:#}");
    assert_eq!(r["issues"][0]["outcome"], "fixed", "{r:#}");
    assert!(
        old.join("api").is_dir() && !new.exists(),
        "the directory is back"
    );
    assert_eq!(
        env.git(&old.join("web"), &["branch", "--show-current"]),
        "feat/a"
    );
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(kinds(&r), Vec::<String>::new(), "{r:#}");
    env.gw(&["sync", "a"]).success();
    env.assert_git_agrees_with_state();
}

/// A journal grove cannot read is reported, never deleted, and blocks every fix that
/// removes something (it may describe exactly that); once it is moved away, the same fixes
/// go through.
#[test]
fn an_unreadable_journal_is_reported_and_blocks_destructive_fixes() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "gone", "-b", "feat/gone", "-r", "api"])
        .success();
    std::fs::remove_dir_all(env.workspace_dir().join("gone")).unwrap();
    let trash = env.workspace_dir().join(".trash/zombie-1234");
    std::fs::create_dir_all(trash.join("api")).unwrap();
    std::fs::write(trash.join("api/file"), "bytes\n").unwrap();
    let ops = env.grove_home.join("operations");
    std::fs::create_dir_all(&ops).unwrap();
    let bad = ops.join("20260101T000000000000000-1-0-delete-gone.json");
    std::fs::write(&bad, "{\"version\": 1, \"id\": ").unwrap();

    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    let mut found = kinds(&r);
    found.sort();
    assert_eq!(
        found,
        [
            "journal_unreadable",
            "leftover_trash",
            "workspace_dir_missing"
        ],
        "{r:#}"
    );
    let issue = &r["issues"][0];
    assert_eq!(issue["kind"], "journal_unreadable");
    assert!(issue["issue"].as_str().unwrap().contains(s(&bad)), "{r:#}");

    let before = env.snapshot();
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    assert_eq!(r["fixed"], 0, "{r:#}");
    for i in r["issues"].as_array().unwrap() {
        assert_eq!(i["outcome"], "left", "{i:#}");
        if i["kind"] != "journal_unreadable" {
            assert!(
                i["detail"]
                    .as_str()
                    .unwrap()
                    .contains("journal cannot be read"),
                "{i:#}"
            );
        }
    }
    env.assert_unchanged(&before);
    assert_eq!(
        std::fs::read_to_string(&bad).unwrap(),
        "{\"version\": 1, \"id\": ",
        "the journal is left as it was"
    );
    assert!(trash.join("api/file").exists(), "the trash is left alone");

    // Moved away by hand: the fixes go through.
    std::fs::rename(&bad, env.root.join("bad-journal.json")).unwrap();
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    assert_eq!(
        (r["fixed"].as_u64(), r["left"].as_u64()),
        (Some(2), Some(0)),
        "{r:#}"
    );
    assert!(!trash.exists());
    assert_eq!(env.state(), serde_json::json!([]));
    env.assert_git_agrees_with_state();
}
