//! `gw delete` / `gw ws delete`: what goes (worktrees, directory, grove's branches) and what
//! stays (uncommitted work, unique commits, stray files, other workspaces, branches grove
//! did not create).

use e2e::{TestEnv, s};

#[test]
fn clean_delete_removes_exactly_what_grove_created() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let api = env.repos.join("api");
    env.git(&api, &["branch", "keep-me"]);
    let branches_before = (env.branches(&api), env.branches(&env.repos.join("web")));
    std::fs::write(env.workspace_dir().join("unrelated.txt"), "mine").unwrap();

    env.create("ws", "feat/x", "api,web");
    assert!(env.has_branch(&api, "feat/x"));
    let run = env.gw(&["delete", "ws"]).success();
    assert!(run.stderr.contains("Workspace ws deleted"), "{run}");
    assert!(run.stdout.is_empty(), "{run}");

    assert!(!env.ws("ws").exists(), "the workspace directory is gone");
    assert_eq!(
        (env.branches(&api), env.branches(&env.repos.join("web"))),
        branches_before,
        "grove's branches are gone, every other branch is still there"
    );
    assert_eq!(env.workspace_names(), Vec::<String>::new());
    assert!(env.workspace_dir().join("unrelated.txt").is_file());
    assert_eq!(
        std::fs::read_to_string(api.join("README.md")).unwrap(),
        "# api\n"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn dirty_is_refused_unless_forced() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/x", "api,web");
    std::fs::write(env.ws("ws").join("web/wip.txt"), "work in progress").unwrap();

    let before = env.snapshot();
    let run = env.gw(&["delete", "ws"]).code(4);
    assert!(run.stderr.starts_with("error: "), "{run}");
    assert!(run.stderr.contains("web"), "names the repo:\n{run}");
    let json = env.gw(&["delete", "ws", "--format", "json"]).code(4);
    assert_eq!(json.error_code(), "WORKTREE_DIRTY");
    assert_eq!(
        env.gw(&["ws", "delete", "ws", "--format", "json"])
            .code(4)
            .error_code(),
        "WORKTREE_DIRTY"
    );
    env.assert_unchanged(&before);
    assert!(
        env.ws("ws").join("web/wip.txt").is_file(),
        "the work is still there"
    );

    env.gw(&["delete", "ws", "--force"]).success();
    assert!(!env.ws("ws").exists());
    assert!(!env.has_branch(&env.repos.join("web"), "feat/x"));
    env.assert_git_agrees_with_state();
}

#[test]
fn several_names_in_one_call() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("a", "a", "api");
    env.create("b", "b", "api,web");
    env.create("c", "c", "web");
    // Run from inside one of the workspaces being deleted.
    let inside = env.ws("a").join("api");
    let run = env.gw_in(&inside, &["delete", "a", "b"]).success();
    assert!(run.stderr.contains("Workspace a deleted"), "{run}");
    assert!(run.stderr.contains("Workspace b deleted"), "{run}");
    assert_eq!(env.workspace_names(), ["c"]);
    assert!(!env.ws("a").exists() && !env.ws("b").exists());
    assert!(env.ws("c").join("web").is_dir());
    env.assert_git_agrees_with_state();

    env.create("d", "d", "api");
    let r = env
        .gw(&["ws", "delete", "c", "d", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["count"], 2);
    assert_eq!(r["deleted"][0]["outcome"], "deleted");
    assert_eq!(r["deleted"][1]["name"], "d");
    assert_eq!(env.workspace_names(), Vec::<String>::new());
    env.assert_git_agrees_with_state();
}

#[test]
fn one_missing_name_fails_the_call_but_the_others_are_reported() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("a", "a", "api");
    let run = env.gw(&["delete", "a", "nope", "--format", "json"]).code(3);
    let v = run.json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], "WORKSPACE_NOT_FOUND");
    assert_eq!(v["result"]["deleted"][0]["outcome"], "deleted", "{run}");
    assert_eq!(v["result"]["deleted"][1]["outcome"], "failed", "{run}");
    env.assert_git_agrees_with_state();
}

#[test]
fn stdin_needs_yes_and_names() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("a", "a", "api");
    env.create("b", "b", "api");
    env.create("c", "c", "api");

    let before = env.snapshot();
    for (args, input) in [
        (vec!["delete", "--stdin"], "a\n"),
        (vec!["delete", "--yes", "a"], ""),
        (vec!["delete", "--stdin", "--yes"], ""),
        (vec!["delete", "--stdin", "--yes"], "\n  \n"),
        (vec!["delete", "--stdin", "--yes", "a"], "b\n"),
    ] {
        let mut argv = args.clone();
        argv.extend(["--format", "json"]);
        let run = env.gw_stdin(&argv, input).code(2);
        assert_eq!(run.error_code(), "USAGE", "{run}");
        let text = env.gw_stdin(&args, input).code(2);
        assert!(text.stderr.starts_with("error: "), "{text}");
    }
    env.assert_unchanged(&before);

    env.gw_stdin(&["delete", "--stdin", "--yes"], "a\n\n  b  \na\n")
        .success();
    assert_eq!(env.workspace_names(), ["c"]);
    env.gw_stdin(&["ws", "delete", "--stdin", "-y"], "c\n")
        .success();
    assert_eq!(env.workspace_names(), Vec::<String>::new());
    env.assert_git_agrees_with_state();
}

#[test]
fn a_branch_with_unique_commits_is_kept_unless_forced() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/x", "api,web");
    let wt = env.ws("ws").join("api");
    env.commit(&wt, "only-here.txt", "x\n", "work that exists nowhere else");
    let tip = env.git(&wt, &["rev-parse", "HEAD"]);

    let run = env.gw(&["delete", "ws"]).success();
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("warning:") && l.contains("kept branch feat/x")),
        "{run}"
    );
    let api = env.repos.join("api");
    assert_eq!(
        env.git(&api, &["rev-parse", "feat/x"]),
        tip,
        "the commit survives"
    );
    assert!(
        !env.has_branch(&env.repos.join("web"), "feat/x"),
        "web's branch had nothing unique"
    );
    assert!(!env.ws("ws").exists());
    assert_eq!(env.workspace_names(), Vec::<String>::new());
    env.assert_git_agrees_with_state();

    // A pushed branch holds nothing unique: deleted.
    env.git(&api, &["branch", "-D", "feat/x"]);
    env.create("pushed", "feat/p", "api");
    let wt = env.ws("pushed").join("api");
    env.commit(&wt, "p.txt", "p\n", "pushed work");
    env.git(&wt, &["push", "-q", "origin", "feat/p"]);
    env.gw(&["delete", "pushed"]).success();
    assert!(!env.has_branch(&api, "feat/p"));

    // --force deletes a branch with unique commits.
    env.create("forced", "feat/f", "api");
    env.commit(&env.ws("forced").join("api"), "f.txt", "f\n", "unique");
    let run = env.gw(&["delete", "forced", "--force"]).success();
    assert!(!run.stderr.contains("kept branch"), "{run}");
    assert!(!env.has_branch(&api, "feat/f"));
    env.assert_git_agrees_with_state();
}

#[test]
fn a_stray_file_at_the_workspace_root_blocks_delete() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    std::fs::write(env.ws("ws").join("notes.md"), "my notes").unwrap();
    let before = env.snapshot();
    let run = env.gw(&["delete", "ws", "--format", "json"]).code(4);
    assert_eq!(run.error_code(), "WORKTREE_DIRTY");
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("notes.md"),
        "{run}"
    );
    env.assert_unchanged(&before);
    assert!(env.ws("ws").join("notes.md").is_file());

    env.gw(&["delete", "ws", "--force"]).success();
    assert!(!env.ws("ws").exists());
    env.assert_git_agrees_with_state();
}

#[test]
fn another_workspace_on_the_same_repos_is_untouched() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("a", "feat/a", "api,web");
    env.create("b", "feat/b", "api,web");
    std::fs::write(env.ws("b").join("web/wip.txt"), "b's work").unwrap();
    let b_heads: Vec<String> = ["api", "web"]
        .iter()
        .map(|r| env.git(&env.ws("b").join(r), &["rev-parse", "HEAD"]))
        .collect();

    env.gw(&["delete", "a"]).success();
    assert_eq!(env.workspace_names(), ["b"]);
    for (r, head) in ["api", "web"].iter().zip(&b_heads) {
        let wt = env.ws("b").join(r);
        assert_eq!(&env.git(&wt, &["rev-parse", "HEAD"]), head);
        assert!(env.has_branch(&env.repos.join(r), "feat/b"));
        assert!(!env.has_branch(&env.repos.join(r), "feat/a"));
    }
    assert!(env.ws("b").join("web/wip.txt").is_file());
    let status = env
        .gw(&["status", "b", "--format", "json"])
        .success()
        .result();
    assert_eq!(status["repos"][1]["state"], "dirty");
    assert_eq!(
        env.gw(&["go", "b"]).success().stdout.trim_end(),
        s(&env.ws("b"))
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn a_worktree_removed_by_hand_does_not_block_delete() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/x", "api,web");
    std::fs::remove_dir_all(env.ws("ws").join("web")).unwrap();
    env.gw(&["delete", "ws"]).success();
    assert!(!env.ws("ws").exists());
    assert!(!env.has_branch(&env.repos.join("web"), "feat/x"));
    assert!(!env.has_branch(&env.repos.join("api"), "feat/x"));
    assert_eq!(env.workspace_names(), Vec::<String>::new());
    env.assert_git_agrees_with_state();
}

#[test]
fn a_worktree_switched_to_another_branch_keeps_that_branch() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    let wt = env.ws("ws").join("api");
    env.git(&wt, &["checkout", "-q", "-b", "mine"]);
    env.commit(&wt, "mine.txt", "mine\n", "my own branch");
    let tip = env.git(&wt, &["rev-parse", "HEAD"]);

    let run = env.gw(&["delete", "ws"]).success();
    let api = env.repos.join("api");
    assert_eq!(
        env.git(&api, &["rev-parse", "mine"]),
        tip,
        "a branch grove did not create is never deleted:\n{run}"
    );
    assert!(
        !env.has_branch(&api, "feat/x"),
        "grove's own branch is deleted"
    );
    assert!(!env.ws("ws").exists());
    env.assert_git_agrees_with_state();
}

/// A workspace holding 100,000 ignored files (a `node_modules`) is purged at once: the
/// command returns with the workspace gone from state and from its place while its bytes
/// still sit in `<workspace_dir>/.trash/`, where a detached `gw unlink-trash` removes them.
/// (Without `--purge` they stay there for `gw restore`: trash.rs.)
#[test]
fn deleting_a_huge_workspace_returns_before_its_bytes_are_gone() {
    let env = TestEnv::with_repos(&["api"]);
    env.ignore("api", "node_modules/");
    env.gw(&["create", "big", "-b", "feat/big", "-r", "api"])
        .success();
    let modules = env.ws("big").join("api/node_modules");
    for d in 0..100 {
        let dir = modules.join(format!("pkg-{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..1000 {
            std::fs::File::create(dir.join(format!("f{f:04}.js"))).unwrap();
        }
    }
    let status = env
        .gw(&["status", "big", "--format", "json"])
        .success()
        .result();
    assert_eq!(
        status["repos"][0]["changed"], 0,
        "ignored files are not changes: {status:#}"
    );

    let r = env
        .gw(&["delete", "big", "--purge", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["deleted"][0]["trash"], serde_json::Value::Null, "{r:#}");
    // Right after it returned: gone from state and from its place ...
    assert_eq!(r["deleted"][0]["outcome"], "deleted", "{r:#}");
    assert!(env.workspace_names().is_empty());
    assert!(!env.ws("big").exists());
    // ... while the quarantined bytes are still being removed.
    let trash = env.workspace_dir().join(".trash");
    let quarantined: Vec<_> = std::fs::read_dir(&trash)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(quarantined.len(), 1, "{quarantined:?}");
    assert!(
        quarantined[0].join("api/node_modules").is_dir(),
        "the bytes outlive the command"
    );
    env.assert_git_agrees_with_state();

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while quarantined[0].exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the quarantined workspace was not removed within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(r["healthy"], true, "{r:#}");
}
