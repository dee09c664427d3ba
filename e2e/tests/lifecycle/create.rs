//! `gw create`: repository selection (names, preset, `--all`, git URLs), `--track`, source
//! fields, names derived from branches, existing branches, and `--replace`.

use e2e::{TestEnv, s, tree};

fn head_branch(env: &TestEnv, wt: &std::path::Path) -> String {
    env.git(wt, &["rev-parse", "--abbrev-ref", "HEAD"])
}

fn upstream(env: &TestEnv, wt: &std::path::Path) -> Option<String> {
    let r = env.git_run(wt, &["rev-parse", "--abbrev-ref", "@{u}"]);
    (r.status == 0).then(|| r.stdout.trim().to_string())
}

fn repo_names(result: &serde_json::Value) -> Vec<String> {
    result["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["repo"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn names_preset_and_all() {
    let env = TestEnv::with_repos(&["api", "web", "cli"]);

    let r = env.create("by-name", "feat/a", "api,web");
    assert_eq!(repo_names(&r), ["api", "web"]);
    assert_eq!(r["path"], s(&env.ws("by-name")));
    for repo in ["api", "web"] {
        let wt = env.ws("by-name").join(repo);
        assert_eq!(head_branch(&env, &wt), "feat/a");
        assert!(wt.join("README.md").is_file(), "content from the base");
        assert_eq!(
            upstream(&env, &wt),
            None,
            "a new branch has no upstream (created with --no-track)"
        );
    }
    assert!(!env.ws("by-name").join("cli").exists());

    env.gw(&["preset", "add", "backend", "-r", "api,cli"])
        .success();
    let r = env
        .gw(&[
            "create",
            "by-preset",
            "-b",
            "feat/p",
            "-p",
            "backend",
            "--format",
            "json",
        ])
        .success()
        .result();
    assert_eq!(repo_names(&r), ["api", "cli"]);
    let state = env.state();
    assert_eq!(state[1]["name"], "by-preset");
    assert_eq!(state[1]["blueprint"]["name"], "preset:backend");

    let r = env
        .gw(&[
            "create", "every", "-b", "feat/all", "--all", "--format", "json",
        ])
        .success()
        .result();
    let mut names = repo_names(&r);
    names.sort();
    assert_eq!(names, ["api", "cli", "web"]);
    assert_eq!(r["count"], 3);

    // Text mode: messages on stderr, nothing on stdout.
    let text = env
        .gw(&["create", "quiet", "-b", "quiet", "-r", "web"])
        .success();
    assert!(text.stdout.is_empty(), "{text}");
    assert!(
        text.stderr.contains(&format!(
            "Workspace quiet created at {}",
            s(&env.ws("quiet"))
        )),
        "{text}"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn name_is_derived_from_the_branch() {
    let env = TestEnv::with_repos(&["api"]);
    let r = env
        .gw(&[
            "create",
            "-b",
            "feat/login-page",
            "-r",
            "api",
            "--format",
            "json",
        ])
        .success()
        .result();
    assert_eq!(r["name"], "feat-login-page");
    assert_eq!(r["branch"], "feat/login-page");
    assert!(env.ws("feat-login-page").join("api").is_dir());
    assert_eq!(env.state()[0]["name"], "feat-login-page");
    env.assert_git_agrees_with_state();
}

#[test]
fn git_url_is_cloned_into_the_first_repo_dir_and_reused() {
    let env = TestEnv::with_repos(&["api"]);
    // An origin nobody has cloned yet.
    let tool = env.repo("tool");
    std::fs::remove_dir_all(&tool).unwrap();
    let url = env.url("tool");

    let r = env
        .gw(&[
            "create",
            "u1",
            "-b",
            "u1",
            "-r",
            &format!("api,{url}"),
            "--format",
            "json",
        ])
        .success()
        .result();
    assert_eq!(repo_names(&r), ["api", "tool"]);
    assert!(tool.join(".git").is_dir(), "cloned into the repo dir");
    assert_eq!(
        env.git(&tool, &["remote", "get-url", "origin"]),
        url,
        "the clone's origin is the URL"
    );
    assert!(env.ws("u1").join("tool/README.md").is_file());
    let leftovers: Vec<String> = tree(&env.repos, 1)
        .into_iter()
        .filter(|n| n.starts_with(".grove-clone"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // A second create reuses the clone (same origin).
    let head = env.git(&tool, &["rev-parse", "HEAD"]);
    env.gw(&["create", "u2", "-b", "u2", "-r", &url]).success();
    assert_eq!(env.git(&tool, &["rev-parse", "HEAD"]), head);
    assert_eq!(env.state()[1]["repos"][0]["source_repo"], s(&tool));
    env.assert_git_agrees_with_state();
}

#[test]
fn git_url_that_fails_to_clone_leaves_nothing() {
    let env = TestEnv::with_repos(&["api"]);
    let url = format!("file://{}", s(&env.origins.join("missing.git")));
    let before = env.snapshot();
    let run = env.gw(&["create", "bad", "-b", "bad", "-r", &format!("api,{url}")]);
    let run = run.failure();
    assert!(run.stderr.starts_with("error: "), "{run}");
    assert!(!env.repos.join("missing").exists());
    env.assert_unchanged(&before);
    assert!(!env.ws("bad").exists());

    let json = env
        .gw(&["create", "bad", "-b", "bad", "-r", &url, "--format", "json"])
        .failure();
    assert_eq!(json.error_code(), "GIT_FAILED");
    env.assert_unchanged(&before);
}

#[test]
fn git_url_with_a_same_named_repo_of_another_origin_is_refused() {
    let env = TestEnv::with_repos(&["api"]);
    // `repos/tool` is a clone of something else than the URL given.
    env.repo("tool");
    env.git(
        &env.repos.join("tool"),
        &["remote", "set-url", "origin", "file:///elsewhere/tool.git"],
    );
    let url = env.url("tool");
    // `repos/plain` is a directory that is not a repository at all.
    let plain = env.repos.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(plain.join("notes.txt"), "mine").unwrap();
    let plain_url = format!("file://{}", s(&env.origins.join("plain.git")));
    env.git(&env.origins, &["init", "-q", "--bare", "plain.git"]);

    let before = env.snapshot();
    for (url, dir) in [(&url, env.repos.join("tool")), (&plain_url, plain.clone())] {
        let run = env
            .gw(&["create", "c", "-b", "c", "-r", url, "--format", "json"])
            .failure();
        let v = run.json();
        assert_eq!(v["ok"], false);
        assert!(
            v["error"]["message"].as_str().unwrap().contains(s(&dir)),
            "names the directory in the way:\n{run}"
        );
        env.assert_unchanged(&before);
    }
    assert_eq!(
        env.git(&env.repos.join("tool"), &["remote", "get-url", "origin"]),
        "file:///elsewhere/tool.git"
    );
    assert_eq!(
        std::fs::read_to_string(plain.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(e2e::tree(&plain, 1), ["notes.txt"]);
}

#[test]
fn track_checks_out_the_remote_branch_and_falls_back_with_a_warning() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.push_upstream("api", "feat/pr", "pr.txt", "from the pull request\n");

    let run = env
        .gw(&["create", "pr", "-b", "feat/pr", "-r", "api,web", "--track"])
        .success();
    let api = env.ws("pr").join("api");
    assert_eq!(
        std::fs::read_to_string(api.join("pr.txt")).unwrap(),
        "from the pull request\n"
    );
    assert_eq!(head_branch(&env, &api), "feat/pr");
    assert_eq!(upstream(&env, &api).as_deref(), Some("origin/feat/pr"));

    // web has no origin/feat/pr: a warning, and a new branch from the base.
    let web = env.ws("pr").join("web");
    assert!(
        run.stderr.lines().any(|l| l.starts_with("warning:")
            && l.contains("web")
            && l.contains("origin/feat/pr")),
        "{run}"
    );
    assert_eq!(head_branch(&env, &web), "feat/pr");
    assert_eq!(upstream(&env, &web), None);
    assert!(!web.join("pr.txt").exists());
    assert_eq!(
        env.git(&web, &["rev-parse", "HEAD"]),
        env.git(&env.repos.join("web"), &["rev-parse", "origin/main"])
    );

    // The same fallback in machine mode is a warning in the envelope.
    let v = env
        .gw(&[
            "create",
            "pr2",
            "-b",
            "feat/none",
            "-r",
            "web",
            "--track",
            "--format",
            "json",
        ])
        .success()
        .json();
    let warnings = v["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("origin/feat/none")),
        "{v}"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn source_fields_are_stored_and_shown() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&[
        "create",
        "src",
        "-b",
        "fix/42",
        "-r",
        "api",
        "--source-url",
        "https://example.invalid/acme/api/pull/42",
        "--source-provider",
        "github",
        "--source-ref",
        "42",
        "--source-title",
        "Fix the login page",
    ])
    .success();
    let source = env.state()[0]["source"].clone();
    assert_eq!(
        source,
        serde_json::json!({
            "provider": "github",
            "url": "https://example.invalid/acme/api/pull/42",
            "ref": "42",
            "title": "Fix the login page",
        })
    );

    let status = env.gw(&["status", "src"]).success().stdout;
    assert!(
        status.contains(
            "Source: github 42 — Fix the login page  (https://example.invalid/acme/api/pull/42)"
        ),
        "{status}"
    );
    let result = env
        .gw(&["status", "src", "--format", "json"])
        .success()
        .result();
    assert_eq!(result["source"], source);
    let legacy = env.gw(&["status", "src", "--json"]).success().json();
    assert_eq!(legacy["source"], source);

    let show = env.gw(&["ws", "show", "src"]).success().stdout;
    assert!(
        show.contains("Source:  github 42 — Fix the login page"),
        "{show}"
    );
    let show = env.gw(&["ws", "show", "src", "--json"]).success().json();
    assert_eq!(show["source"], source);
    let show = env
        .gw(&["ws", "show", "src", "--format", "json"])
        .success()
        .result();
    assert_eq!(show["workspace"]["source"], source);
    env.assert_git_agrees_with_state();
}

#[test]
fn an_existing_local_branch_is_checked_out_and_kept_on_delete() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let api = env.repos.join("api");
    env.git(&api, &["checkout", "-q", "-b", "existing"]);
    env.commit(&api, "work.txt", "mine\n", "work on existing");
    env.git(&api, &["checkout", "-q", "main"]);
    let tip = env.git(&api, &["rev-parse", "existing"]);

    env.gw(&["create", "ex", "-b", "existing", "-r", "api,web"])
        .success();
    let wt = env.ws("ex").join("api");
    assert_eq!(head_branch(&env, &wt), "existing");
    assert_eq!(env.git(&wt, &["rev-parse", "HEAD"]), tip);
    assert!(wt.join("work.txt").is_file());
    let state = env.state();
    let repos = state[0]["repos"].as_array().unwrap();
    assert_eq!(repos[0]["repo_name"], "api");
    assert_eq!(repos[0]["preserve_branch"], true);
    assert!(
        repos[1].get("preserve_branch").is_none(),
        "omitted when false, as the Go grove writes it: {}",
        repos[1]
    );
    env.assert_git_agrees_with_state();

    env.gw(&["delete", "ex"]).success();
    assert_eq!(
        env.git(&api, &["rev-parse", "existing"]),
        tip,
        "a branch grove did not create survives delete"
    );
    assert!(
        !env.has_branch(&env.repos.join("web"), "existing"),
        "the branch grove created is deleted"
    );
    assert!(!env.ws("ex").exists());
    env.assert_git_agrees_with_state();
}

#[test]
fn replace_from_inside_a_workspace() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("old", "old", "api");
    let inside = env.ws("old").join("api");

    // Outside any workspace, or without --force and without a terminal: refused.
    let before = env.snapshot();
    env.gw(&[
        "create",
        "new",
        "-b",
        "new",
        "-r",
        "web",
        "--replace",
        "--force",
    ])
    .code(2);
    env.gw_in(
        &inside,
        &["create", "new", "-b", "new", "-r", "web", "--replace"],
    )
    .code(2);
    // The new name must differ from the replaced one: refused before anything is deleted.
    let collision = env
        .gw_in(
            &inside,
            &[
                "create",
                "old",
                "-b",
                "other",
                "-r",
                "web",
                "--replace",
                "--force",
                "--format",
                "json",
            ],
        )
        .code(4);
    assert_eq!(collision.error_code(), "WORKSPACE_EXISTS");
    env.assert_unchanged(&before);

    let run = env
        .gw_in(
            &inside,
            &[
                "create",
                "new",
                "-b",
                "new",
                "-r",
                "web",
                "--replace",
                "--force",
                "--format",
                "json",
            ],
        )
        .success();
    let r = run.result();
    assert_eq!(r["replaced"], "old");
    assert_eq!(r["name"], "new");
    let state = env.state();
    let names: Vec<&str> = state
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["new"]);
    assert!(!env.ws("old").exists());
    assert!(!env.has_branch(&env.repos.join("api"), "old"));
    assert!(env.ws("new").join("web").is_dir());
    env.assert_git_agrees_with_state();
}

#[test]
fn base_branch_from_grove_toml_and_repos_without_origin() {
    let env = TestEnv::with_repos(&["api"]);
    env.push_upstream("api", "develop", "develop.txt", "on develop\n");
    std::fs::write(
        env.repos.join("api/.grove.toml"),
        "base_branch = \"develop\"\n",
    )
    .unwrap();
    let local = env.local_repo("notes");

    env.create("ws", "feat/x", "api,notes");
    let api = env.ws("ws").join("api");
    assert!(
        api.join("develop.txt").is_file(),
        "branched from origin/develop"
    );
    assert_eq!(
        env.git(&api, &["rev-parse", "HEAD"]),
        env.git(&env.repos.join("api"), &["rev-parse", "origin/develop"])
    );
    let notes = env.ws("ws").join("notes");
    assert_eq!(
        env.git(&notes, &["rev-parse", "HEAD"]),
        env.git(&local, &["rev-parse", "main"]),
        "a repository without an origin branches from its local default branch"
    );
    let status = env
        .gw(&["status", "ws", "--format", "json"])
        .success()
        .result();
    assert_eq!(status["repos"][0]["base_branch"], "origin/develop");
    assert_eq!(status["repos"][0]["ahead"], 0);
    assert_eq!(status["repos"][1]["base_branch"], "main");
    assert_eq!(status["repos"][1]["remote"], serde_json::Value::Null);
    env.assert_git_agrees_with_state();
}

/// A checkout runs on the threads the repository may use (`checkout.workers`, passed to
/// git), unless the user set `checkout.workers` themselves; `GW_THREADS=1` passes none.
#[test]
fn checkout_workers_follow_the_threads_unless_the_user_set_them() {
    let env = TestEnv::with_repos(&["api"]);
    let api = env.repos.join("api");
    let log = || std::fs::read_to_string(env.grove_home.join("grove.log")).unwrap_or_default();
    let add_line = |ws: &str| {
        log()
            .lines()
            .find(|l| {
                l.contains(" INFO - git ")
                    && l.contains("worktree add")
                    && l.contains(&format!("/{ws}/api"))
            })
            .unwrap_or_else(|| panic!("no worktree add of {ws} in:\n{}", log()))
            .to_string()
    };
    let create = |ws: &str, threads: &str| {
        env.gw_env(
            &env.root,
            &["create", ws, "-b", ws, "-r", "api", "--format", "json"],
            &[("GW_THREADS", threads)],
        )
        .success();
    };
    create("two", "2");
    assert!(
        add_line("two").contains("-c checkout.workers=2 worktree add"),
        "{}",
        add_line("two")
    );
    create("one", "1");
    assert!(
        !add_line("one").contains("checkout.workers"),
        "{}",
        add_line("one")
    );
    env.git(&api, &["config", "checkout.workers", "1"]);
    create("mine", "2");
    assert!(
        !add_line("mine").contains("checkout.workers"),
        "{}",
        add_line("mine")
    );
}

/// `--replace` onto the branch of the workspace it replaces: create holds that branch's
/// lock while the replaced workspace is deleted, and the delete takes the same lock. It
/// once waited on its own lock until the lock timeout, after the replaced workspace's
/// teardown had begun.
#[test]
fn replace_onto_the_replaced_workspaces_branch() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("old", "topic", "api");
    let inside = env.ws("old").join("api");
    let args = [
        "create",
        "new",
        "-b",
        "topic",
        "-r",
        "api,web",
        "--replace",
        "--force",
        "--format",
        "json",
    ];
    let mut cmd = env.gw_cmd(&args);
    cmd.current_dir(&inside).env("GW_LOCK_TIMEOUT_MS", "3000");
    let run = e2e::Run::from(
        format!("gw {}", args.join(" ")),
        cmd.output().expect("gw runs"),
    )
    .success();
    let r = run.result();
    assert_eq!(r["replaced"], "old", "{r:#}");
    assert!(!env.ws("old").exists());
    assert_eq!(
        env.git(&env.ws("new").join("api"), &["branch", "--show-current"]),
        "topic"
    );
    env.assert_git_agrees_with_state();
}
