//! Issue 25: one judge of what a removal loses. Each test reproduces one way `gw` lost work
//! without `--force` because "what would removing this lose?" was answered in several
//! places, each a little differently; every remover now asks the safety kernel
//! (`gw/src/ops/safety/`).

use std::path::Path;
use std::process::Stdio;

use e2e::{Stdout, TestEnv};

/// `gw delete WS` refuses (`WORKTREE_DIRTY`, exit 4) and changes nothing; the message
/// names every one of `what`.
#[track_caller]
fn delete_is_refused_naming(env: &TestEnv, ws: &str, what: &[&str]) {
    let before = env.snapshot();
    let run = env.gw(&["delete", ws, "--format", "json"]).code(4);
    assert_eq!(run.error_code(), "WORKTREE_DIRTY", "{run}");
    let message = run.json()["error"]["message"].to_string();
    for w in what {
        assert!(message.contains(w), "names {w}: {message}");
    }
    env.assert_unchanged(&before);
}

/// Whether `commit` is still in the repository at `dir` (reachable or not).
fn exists(env: &TestEnv, dir: &Path, commit: &str) -> bool {
    env.git_run(dir, &["cat-file", "-e", &format!("{commit}^{{commit}}")])
        .status
        == 0
}

/// A workspace `name` of `api`, whose worktree has `deps/lib`, an ignored clone of `lib`
/// in sync with its remote. Returns the clone's path.
fn nested_clone(env: &TestEnv, name: &str) -> std::path::PathBuf {
    env.create(name, name, "api");
    let deps = env.ws(name).join("api/deps");
    std::fs::create_dir_all(&deps).unwrap();
    env.git(&deps, &["clone", "-q", &env.url("lib"), "lib"]);
    deps.join("lib")
}

/// Item 1: a stash, or a commit only a local tag has, in a repository inside an ignored
/// directory was lost by `gw delete` (exit 0): the nested check never looked at
/// `refs/stash`, and counted the nested repository's own tags as "elsewhere" although they
/// are deleted with it.
#[test]
fn a_nested_repositorys_stash_and_tag_only_commits_are_work() {
    let env = TestEnv::with_repos(&["api", "lib"]);
    env.ignore("api", "deps/");

    let stashed = nested_clone(&env, "stash");
    std::fs::write(stashed.join("README.md"), "edited\n").unwrap();
    env.git(&stashed, &["stash", "-q"]);
    let stash = env.git(&stashed, &["rev-parse", "refs/stash"]);
    delete_is_refused_naming(&env, "stash", &["deps/lib", "stash"]);
    assert!(exists(&env, &stashed, &stash));

    let tagged = nested_clone(&env, "tagged");
    env.commit(&tagged, "t.txt", "tagged only\n", "tagged only");
    let commit = env.git(&tagged, &["rev-parse", "HEAD"]);
    env.git(&tagged, &["tag", "keep-me"]);
    env.git(&tagged, &["reset", "-q", "--hard", "origin/main"]);
    delete_is_refused_naming(&env, "tagged", &["deps/lib", "keep-me"]);
    assert!(exists(&env, &tagged, &commit));

    // A stash entry below the top one lives only in the stash's reflog: it counts too.
    let deeper = nested_clone(&env, "deeper");
    for edit in ["first\n", "second\n"] {
        std::fs::write(deeper.join("README.md"), edit).unwrap();
        env.git(&deeper, &["stash", "-q"]);
    }
    env.git(&deeper, &["stash", "drop", "-q", "stash@{0}"]);
    std::fs::write(deeper.join("README.md"), "third\n").unwrap();
    env.git(&deeper, &["stash", "-q"]);
    delete_is_refused_naming(&env, "deeper", &["deps/lib", "2 stash"]);

    // The same clone holding nothing of its own is not work.
    nested_clone(&env, "clean");
    env.gw(&["delete", "clean", "--format", "json"]).success();
    env.assert_git_agrees_with_state();
}

/// Item 2: a submodule's local branch or stash was lost: only the submodule's HEAD was
/// looked at, and the superproject is clean.
#[test]
fn a_submodules_branches_and_stash_are_work() {
    let env = TestEnv::with_repos(&["api", "lib"]);
    let api = env.repos.join("api");
    env.add_submodule(&api, &env.url("lib"), "lib");

    env.create("branch", "branch", "api");
    let wt = env.ws("branch").join("api");
    env.git(&wt, &["submodule", "update", "--init", "-q"]);
    let sub = wt.join("lib");
    env.git(&sub, &["switch", "-q", "-c", "wip"]);
    env.commit(
        &sub,
        "wip.txt",
        "wip\n",
        "work on a branch of the submodule",
    );
    let wip = env.git(&sub, &["rev-parse", "HEAD"]);
    env.git(&wt, &["submodule", "update", "-q"]);
    assert!(
        env.git(&wt, &["status", "--porcelain"]).is_empty(),
        "the superproject is clean"
    );
    delete_is_refused_naming(&env, "branch", &["submodule `lib`", "wip"]);
    assert!(exists(&env, &sub, &wip));

    env.create("stash", "stash", "api");
    let wt = env.ws("stash").join("api");
    env.git(&wt, &["submodule", "update", "--init", "-q"]);
    let sub = wt.join("lib");
    std::fs::write(sub.join("README.md"), "stashed in the submodule\n").unwrap();
    env.git(&sub, &["stash", "-q"]);
    assert!(env.git(&wt, &["status", "--porcelain"]).is_empty());
    delete_is_refused_naming(&env, "stash", &["submodule `lib`", "stash"]);
}

/// Item 3: `gw prune branches --gone --yes` deleted a branch holding a commit never
/// pushed, and its preview warned of nothing.
#[test]
fn prune_branches_keeps_a_gone_branch_holding_commits_never_pushed() {
    let env = TestEnv::with_repos(&["api"]);
    let api = env.repos.join("api");
    // `topic`: pushed, one more commit, then deleted on the remote.
    env.git(&api, &["switch", "-q", "-c", "topic"]);
    env.commit(&api, "t1.txt", "pushed\n", "pushed");
    env.git(&api, &["push", "-q", "-u", "origin", "topic"]);
    env.commit(&api, "t2.txt", "never pushed\n", "never pushed");
    let unpushed = env.git(&api, &["rev-parse", "HEAD"]);
    // `squashed`: pushed, its change squash-merged into main upstream, then deleted.
    env.git(&api, &["switch", "-q", "-c", "squashed", "origin/main"]);
    env.commit(&api, "s.txt", "squashed\n", "squashed work");
    env.git(&api, &["push", "-q", "-u", "origin", "squashed"]);
    env.git(&api, &["switch", "-q", "main"]);
    env.push_upstream("api", "main", "s.txt", "squashed\n");
    let origin = env.origins.join("api.git");
    for b in ["topic", "squashed"] {
        env.git(&origin, &["branch", "-q", "-D", b]);
    }
    env.git(&api, &["fetch", "-q", "--prune"]);

    let preview = env
        .gw(&["prune", "branches", "--gone", "--format", "json"])
        .success()
        .result();
    let topic = preview["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["branch"] == "topic")
        .unwrap_or_else(|| panic!("topic is a candidate: {preview:#}"));
    assert!(
        topic.to_string().contains("commit"),
        "the preview says what deleting it loses: {preview:#}"
    );

    // The plan describes the same verdicts.
    let plan = env
        .gw(&["plan", "prune", "branches", "--gone", "--format", "json"])
        .success()
        .result();
    let changes = plan["changes"].as_array().unwrap();
    let of = |b: &str| {
        changes
            .iter()
            .find(|c| c["branch"] == b)
            .unwrap_or_else(|| panic!("{b} in the plan: {plan:#}"))["action"]
            .clone()
    };
    assert_eq!(of("topic"), "keep_branch", "{plan:#}");
    assert_eq!(of("squashed"), "delete_branch", "{plan:#}");

    let run = env.gw(&["prune", "branches", "--gone", "--yes", "--format", "json"]);
    assert_eq!(run.status, 4, "{run}");
    assert_eq!(run.error_code(), "WORKTREE_DIRTY", "{run}");
    assert!(env.has_branch(&api, "topic"), "{run}");
    assert_eq!(env.git(&api, &["rev-parse", "topic"]), unpushed);
    assert!(
        !env.has_branch(&api, "squashed"),
        "its change is on the base: {run}"
    );

    env.gw(&[
        "prune", "branches", "--gone", "--yes", "--force", "--format", "json",
    ])
    .success();
    assert!(!env.has_branch(&api, "topic"));
}

/// Item 4: an edit to a file marked `--skip-worktree` or `--assume-unchanged` looks clean,
/// and `gw delete` removed it.
#[test]
fn hidden_edits_are_work() {
    let env = TestEnv::with_repos(&["api"]);
    env.commit(&env.repos.join("api"), "conf.txt", "conf\n", "conf");
    env.git(&env.repos.join("api"), &["push", "-q", "origin", "main"]);
    for (ws, flag, file) in [
        ("skip", "--skip-worktree", "conf.txt"),
        ("assume", "--assume-unchanged", "README.md"),
    ] {
        env.create(ws, ws, "api");
        let wt = env.ws(ws).join("api");
        env.git(&wt, &["update-index", flag, file]);
        std::fs::write(wt.join(file), "a local edit\n").unwrap();
        assert!(env.git(&wt, &["status", "--porcelain"]).is_empty());
        delete_is_refused_naming(&env, ws, &[file]);
        assert_eq!(
            std::fs::read_to_string(wt.join(file)).unwrap(),
            "a local edit\n"
        );
        // And `gw remove-repo` judges the same.
        let run = env.gw(&["remove-repo", ws, "-r", "api", "--format", "json"]);
        assert_eq!(run.error_code(), "WORKTREE_DIRTY", "{run}");
    }
}

/// Item 5: a commit made on a detached HEAD, left behind by `git switch feat`, is named
/// only by the worktree's own HEAD reflog, and `gw delete` removed it with the worktree
/// (git would have kept it for 30 days).
#[test]
fn a_commit_only_the_worktrees_reflog_names_is_work() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat/w1", "api");
    let wt = env.ws("feat").join("api");
    env.git(&wt, &["checkout", "-q", "--detach"]);
    env.commit(&wt, "d.txt", "detached\n", "made on a detached HEAD");
    let commit = env.git(&wt, &["rev-parse", "HEAD"]);
    env.git(&wt, &["switch", "-q", "feat/w1"]);
    delete_is_refused_naming(&env, "feat", &["reflog", &commit[..7]]);
    assert!(exists(&env, &env.repos.join("api"), &commit));

    // Rewriting the branch's own commits (an amend, a rebase) is not such work: the
    // branch's reflog names what it replaced.
    env.create("amended", "amended", "api");
    let wt = env.ws("amended").join("api");
    env.commit(&wt, "a.txt", "a\n", "first try");
    env.git(&wt, &["commit", "-q", "--amend", "-m", "second try"]);
    env.git(&wt, &["push", "-q", "origin", "amended"]);
    env.gw(&["delete", "amended", "--format", "json"]).success();
}

/// A workspace `name` of `api` whose worktree holds a repository with a commit of its own
/// in the ignored `scratch/`.
fn with_nested_work(env: &TestEnv, name: &str) {
    env.create(name, name, "api,web");
    let nested = env.ws(name).join("api/scratch/mine");
    std::fs::create_dir_all(&nested).unwrap();
    env.git(&nested, &["init", "-q"]);
    env.commit(&nested, "x.txt", "precious\n", "work of its own");
}

/// Item 6: `gw remove-repo` judged differently from `gw delete`: it skipped the search of
/// ignored directories for repositories, so it removed a worktree `gw delete` refuses.
#[test]
fn remove_repo_judges_as_delete_does() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.ignore("api", "scratch/");
    with_nested_work(&env, "feat");
    delete_is_refused_naming(&env, "feat", &["scratch/mine"]);

    let before = env.snapshot();
    let run = env.gw(&["remove-repo", "feat", "-r", "api", "--format", "json"]);
    assert_eq!(run.status, 4, "{run}");
    assert_eq!(run.error_code(), "WORKTREE_DIRTY", "{run}");
    assert!(run.stdout.contains("scratch/mine"), "{run}");
    env.assert_unchanged(&before);

    // Their plans say the same.
    for args in [
        &["plan", "delete", "feat", "--format", "json"][..],
        &[
            "plan",
            "remove-repo",
            "feat",
            "-r",
            "api",
            "--format",
            "json",
        ],
    ] {
        let run = env.gw(args);
        assert_eq!(run.error_code(), "WORKTREE_DIRTY", "{args:?}: {run}");
    }
    for args in [
        &["plan", "delete", "feat", "--force", "--format", "json"][..],
        &[
            "plan",
            "remove-repo",
            "feat",
            "-r",
            "api",
            "--force",
            "--format",
            "json",
        ],
    ] {
        let plan = env.gw(args).success().result();
        assert!(
            plan["warnings"].to_string().contains("scratch/mine"),
            "{args:?}: {plan:#}"
        );
        assert_eq!(plan["destructive"], true, "{args:?}: {plan:#}");
    }
}

/// Item 7: two creates of different workspaces on one new branch at once. The loser got
/// `GIT_FAILED` instead of a conflict; sometimes both failed; and a rollback deleted a
/// branch its own `worktree add` never created.
#[test]
fn concurrent_creates_on_one_branch_have_one_winner() {
    let env = TestEnv::with_repos(&["a", "b", "c"]);
    for round in 0..8 {
        let spawn = |name: &str| {
            let mut cmd = env.gw_cmd(&[
                "create", name, "-b", "feat/s", "-r", "a,b,c", "--format", "json",
            ]);
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
            cmd.spawn().unwrap()
        };
        let (x, y) = (spawn("x"), spawn("y"));
        let runs = [
            ("x", x.wait_with_output().unwrap()),
            ("y", y.wait_with_output().unwrap()),
        ];
        let won: Vec<&str> = runs
            .iter()
            .filter(|(_, o)| o.status.success())
            .map(|(n, _)| *n)
            .collect();
        let said = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(
            won.len(),
            1,
            "round {round}: one create wins: x: {} y: {}",
            said(&runs[0].1),
            said(&runs[1].1)
        );
        let winner = won[0];
        let (_, lost) = runs.iter().find(|(n, _)| *n != winner).unwrap();
        let envelope: serde_json::Value = serde_json::from_slice(&lost.stdout).unwrap();
        assert_eq!(lost.status.code(), Some(4), "round {round}: {envelope:#}");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("`{winner}`")),
            "round {round}: names the workspace holding the branch: {envelope:#}"
        );
        assert!(
            !env.grove_home.join("operations").exists()
                || std::fs::read_dir(env.grove_home.join("operations"))
                    .unwrap()
                    .next()
                    .is_none(),
            "round {round}: no journal left"
        );
        env.assert_world_clean();
        for r in ["a", "b", "c"] {
            assert!(
                env.has_branch(&env.repos.join(r), "feat/s"),
                "round {round}"
            );
        }
        env.gw(&["delete", winner, "--format", "json"]).success();
    }
}

/// Item 8: the delete picker deleted fifteen workspaces at once without asking.
#[test]
fn deleting_several_from_a_picker_asks_once() {
    let env = TestEnv::with_repos(&["api"]);
    for name in ["one", "two", "three"] {
        env.create(name, name, "api");
    }
    let before = env.snapshot();
    let mut t = env.terminal("gw", &["delete"], &env.root, (100, 30), Stdout::Terminal);
    t.wait_for_text("Delete which workspaces?");
    t.send("\x1b[C\r");
    t.wait_for_text("Delete 3 workspaces and their branches?");
    t.send("n");
    let st = t.finish();
    assert_eq!(st.code(), Some(8), "declined: cancelled\n{}", t.text());
    env.assert_unchanged(&before);

    let mut t = env.terminal("gw", &["delete"], &env.root, (100, 30), Stdout::Terminal);
    t.wait_for_text("Delete which workspaces?");
    t.send("\x1b[C\r");
    t.wait_for_text("Delete 3 workspaces and their branches?");
    t.send("y");
    let st = t.finish();
    assert!(st.success(), "{}", t.text());
    assert!(env.workspace_names().is_empty());

    // `--yes` answers it.
    for name in ["four", "five"] {
        env.create(name, name, "api");
    }
    let mut t = env.terminal(
        "gw",
        &["delete", "--yes"],
        &env.root,
        (100, 30),
        Stdout::Terminal,
    );
    t.wait_for_text("Delete which workspaces?");
    t.send("\x1b[C\r");
    let st = t.finish();
    assert!(st.success(), "{}", t.text());
    assert!(!t.text().contains("their branches?"), "{}", t.text());
    assert!(env.workspace_names().is_empty());
    env.assert_git_agrees_with_state();
}
