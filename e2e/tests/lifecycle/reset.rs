//! `gw reset`: wandered worktrees go back to the workspace's branch; uncommitted work
//! blocks that unless `--discard`; a repository that cannot be reset fails the command.

use e2e::audit::Kind;
use e2e::{TestEnv, repo_result};

#[test]
fn reset_switches_a_wandered_repo_back_and_syncs() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let web = env.workspace_dir().join("feat-x/web");
    env.git(&web, &["switch", "-q", "-c", "wander"]);
    env.push_upstream("web", "main", "w.txt", "w\n");

    let r = env
        .gw(&["reset", "feat-x", "--format", "json"])
        .success()
        .result();
    assert_eq!(repo_result(&r, "api")["outcome"], "ready", "{r:#}");
    let w = repo_result(&r, "web");
    assert_eq!(w["outcome"], "switched", "{r:#}");
    assert_eq!(w["switched_from"], "wander");
    assert_eq!(w["branch"], "feat/x");
    assert_eq!(env.git(&web, &["branch", "--show-current"]), "feat/x");
    assert!(web.join("w.txt").exists(), "switched, then synced");
    env.assert_git_agrees_with_state();
}

#[test]
fn reset_skips_a_dirty_wandered_repo_unless_discard() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let web = env.workspace_dir().join("feat-x/web");
    env.git(&web, &["switch", "-q", "-c", "wander"]);
    std::fs::write(web.join("README.md"), "uncommitted edit\n").unwrap();
    std::fs::write(web.join("scratch.txt"), "untracked\n").unwrap();
    let before = env.worktree_state(&web);

    let run = env.gw(&["reset", "feat-x", "--format", "json"]).success();
    run.envelope("reset");
    let doc = run.json();
    let w = repo_result(&doc["result"], "web");
    assert_eq!(w["outcome"], "skipped", "{doc:#}");
    assert!(w["detail"].as_str().unwrap().contains("on wander"), "{w:#}");
    assert!(
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x.as_str().unwrap().starts_with("web: skipped")),
        "{doc:#}"
    );
    let discard = doc["next_actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| {
            a["argv"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x == "--discard")
        })
        .expect("a --discard next action");
    assert_eq!(
        discard["command"],
        "gw reset feat-x --discard --format json"
    );
    assert_eq!(discard["effect"], "destructive");
    assert_eq!(env.worktree_state(&web), before, "nothing was touched");

    let r = env
        .gw(&["reset", "feat-x", "--discard", "--format", "json"])
        .success()
        .result();
    assert_eq!(repo_result(&r, "web")["outcome"], "switched", "{r:#}");
    assert_eq!(env.git(&web, &["branch", "--show-current"]), "feat/x");
    assert_eq!(
        std::fs::read_to_string(web.join("README.md")).unwrap(),
        "# web\n",
        "the tracked change was discarded"
    );
    assert!(web.join("scratch.txt").exists(), "untracked files are kept");
    env.assert_git_agrees_with_state();
}

#[test]
fn reset_fails_when_a_repo_cannot_go_back() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let web = env.workspace_dir().join("feat-x/web");
    env.git(&web, &["switch", "-q", "-c", "wander"]);
    // The recorded branch is gone: there is nothing to switch back to.
    env.git(&env.repos.join("web"), &["branch", "-D", "feat/x"]);

    let run = env.gw(&["reset", "feat-x", "--format", "json"]).code(5);
    run.envelope("reset");
    assert_eq!(run.error_code(), "GIT_FAILED");
    let doc = run.json();
    assert_eq!(
        repo_result(&doc["result"], "web")["outcome"],
        "failed",
        "{doc:#}"
    );
    assert_eq!(repo_result(&doc["result"], "api")["outcome"], "ready");
    assert_eq!(env.git(&web, &["branch", "--show-current"]), "wander");
    env.gw(&["reset", "feat-x"]).code(5);
    // The test switched web to `wander` and deleted its branch; reset could not switch it
    // back, so that one disagreement (and only it) remains.
    env.assert_git_agrees_with_state_except(&[(Kind::BranchMismatch, "feat-x/web")]);
}

/// What cannot be read cannot be told to hold nothing (issue 26): the kernel's verdict for a
/// switch back is to stop, `--discard` or not. Reset once judged the status lines alone,
/// dropping its unreadable paths, and switched past a fifo `.gitignore` that kept git from
/// answering.
#[test]
fn reset_skips_a_wandered_repo_holding_a_path_it_cannot_read() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let web = env.workspace_dir().join("feat-x/web");
    env.git(&web, &["switch", "-q", "-c", "wander"]);
    // A committed gitlink: the status is git's to answer, and git would wait on a fifo
    // where it reads rules.
    let inner = web.join("inner");
    env.git(&web, &["init", "-q", "inner"]);
    env.git(&inner, &["commit", "-q", "--allow-empty", "-m", "i"]);
    env.git(&web, &["add", "inner"]);
    env.git(&web, &["commit", "-q", "-m", "a gitlink"]);
    let status = std::process::Command::new("mkfifo")
        .arg(web.join(".gitignore"))
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo: {status}");

    for extra in [None, Some("--discard")] {
        let mut args = vec!["reset", "feat-x", "--format", "json"];
        args.extend(extra);
        let doc = env.gw(&args).success().json();
        let w = repo_result(&doc["result"], "web");
        assert_eq!(w["outcome"], "skipped", "{extra:?}: {doc:#}");
        assert!(
            w["detail"].as_str().unwrap().contains(".gitignore"),
            "{extra:?}: {w:#}"
        );
        assert_eq!(env.git(&web, &["branch", "--show-current"]), "wander");
    }
}
