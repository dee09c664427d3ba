//! Every bad input of issue 2 (item 7): a one-line error on stderr naming the problem, the
//! right exit code, the right `error.code` in machine mode, and nothing changed on disk.

use e2e::{Run, TestEnv, s};

/// Asserts the text-mode error shape: nothing on stdout; on stderr one `error:` line,
/// optionally followed by `hint:` lines.
#[track_caller]
fn one_line_error(run: &Run) {
    assert!(
        run.stdout.is_empty(),
        "stdout must be empty on error:\n{run}"
    );
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(
        !lines.is_empty() && lines[0].starts_with("error: "),
        "first stderr line is the error:\n{run}"
    );
    assert!(
        lines[1..].iter().all(|l| l.starts_with("hint: ")),
        "only hints follow the one error line:\n{run}"
    );
}

/// Runs `args` in text mode and in machine mode; asserts the exit code, the error shape,
/// that the message mentions `needle`, the `error.code`, and that nothing changed.
#[track_caller]
fn bad(env: &TestEnv, args: &[&str], exit: i32, code: &str, needle: &str) {
    let before = env.snapshot();
    let text = env.gw(args).code(exit);
    one_line_error(&text);
    assert!(
        text.stderr.contains(needle),
        "the error names `{needle}`:\n{text}"
    );
    env.assert_unchanged(&before);
    // `--format` goes first: some argument lists end with `-- NAME`.
    let argv = [&["--format", "json"][..], args].concat();
    let json = env.gw(&argv).code(exit);
    assert_eq!(json.error_code(), code, "{json}");
    env.assert_unchanged(&before);
}

#[test]
fn unknown_workspace_repo_and_preset() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "ws", "api");
    for args in [
        &["status", "nope"][..],
        &["ws", "show", "nope"],
        &["go", "nope"],
        &["go", "-b", "nope"],
        &["delete", "nope"],
        &["ws", "delete", "nope"],
    ] {
        bad(&env, args, 3, "WORKSPACE_NOT_FOUND", "nope");
    }
    bad(
        &env,
        &["create", "x", "-b", "x", "-r", "api,nope"],
        3,
        "REPO_NOT_FOUND",
        "nope",
    );
    bad(
        &env,
        &["create", "x", "-b", "x", "-p", "nope"],
        3,
        "PRESET_NOT_FOUND",
        "nope",
    );
    bad(
        &env,
        &["preset", "show", "nope"],
        3,
        "PRESET_NOT_FOUND",
        "nope",
    );
    bad(
        &env,
        &["preset", "remove", "nope"],
        3,
        "PRESET_NOT_FOUND",
        "nope",
    );
    bad(
        &env,
        &["preset", "add", "p", "-r", "api,nope"],
        3,
        "REPO_NOT_FOUND",
        "nope",
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn duplicate_workspace_and_branch_with_a_worktree() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "shared", "api");
    bad(
        &env,
        &["create", "ws", "-b", "other", "-r", "web"],
        4,
        "WORKSPACE_EXISTS",
        "ws",
    );
    // The branch is checked out in `ws`'s api worktree; web is fine but nothing is made.
    bad(
        &env,
        &["create", "second", "-b", "shared", "-r", "web,api"],
        4,
        "WORKTREE_EXISTS",
        "shared",
    );
    // A branch checked out in the repository's main checkout.
    bad(
        &env,
        &["create", "m", "-b", "main", "-r", "api"],
        4,
        "WORKTREE_EXISTS",
        "main",
    );
    // A directory of that name already in the workspace dir (not grove's).
    std::fs::create_dir_all(env.ws("squatter")).unwrap();
    bad(
        &env,
        &["create", "squatter", "-b", "sq", "-r", "api"],
        4,
        "WORKSPACE_EXISTS",
        "squatter",
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn invalid_names_are_usage_errors() {
    let env = TestEnv::with_repos(&["api"]);
    for name in [
        "a/b",
        "..",
        "../escape",
        "a..b",
        ".hidden",
        "tab\there",
        "bell\u{7}",
        "nl\n",
    ] {
        bad(
            &env,
            &["create", "-b", "ok", "-r", "api", "--", name],
            2,
            "USAGE",
            "invalid workspace name",
        );
    }
    // A leading `-` is a flag to clap unless after `--`; either way it is refused.
    bad(
        &env,
        &["create", "-b", "ok", "-r", "api", "--", "-x"],
        2,
        "USAGE",
        "-x",
    );
    // A name derived from a branch is checked the same way.
    bad(&env, &["create", "-b", "..", "-r", "api"], 2, "USAGE", "..");
    bad(
        &env,
        &["create", "ok", "-b", "bad..branch", "-r", "api"],
        2,
        "USAGE",
        "bad..branch",
    );
    bad(
        &env,
        &["preset", "add", "a.b", "-r", "api"],
        2,
        "USAGE",
        "a.b",
    );
    assert!(!env.root.join("escape").exists());
    assert!(!env.grove_home.join("escape").exists());
    env.assert_git_agrees_with_state();
}

#[test]
fn missing_repo_dir_and_failing_clone() {
    let env = TestEnv::with_repos(&["api"]);
    let missing = env.root.join("nowhere");
    bad(&env, &["init", s(&missing)], 2, "USAGE", s(&missing));
    bad(&env, &["add-dir", s(&missing)], 2, "USAGE", s(&missing));
    let url = format!("file://{}", s(&env.origins.join("absent.git")));
    bad(
        &env,
        &["create", "c", "-b", "c", "-r", &format!("api,{url}")],
        5,
        "GIT_FAILED",
        &url,
    );
    assert!(!env.repos.join("absent").exists());
    assert!(!env.ws("c").exists());
    env.assert_git_agrees_with_state();
}

#[test]
fn not_initialised() {
    let env = TestEnv::new();
    env.repo("api");
    for args in [
        &["list"][..],
        &["ws", "list"],
        &["repos"],
        &["status", "x"],
        &["create", "x", "-b", "x", "-r", "api"],
        &["delete", "x"],
        &["add-dir", s(&env.repos)],
        &["preset", "list"],
    ] {
        bad(&env, args, 5, "NOT_INITIALIZED", "gw init");
    }
    assert!(!env.grove_home.exists(), "nothing written to GW_HOME");
}

#[test]
fn corrupt_state_is_reported_and_never_overwritten() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    let corrupt = "[{\"name\": \"ws\", \"path\": ";
    std::fs::write(env.state_path(), corrupt).unwrap();
    let path = s(&env.state_path()).to_string();
    for args in [
        &["list"][..],
        &["list", "-s"],
        &["status", "ws"],
        &["ws", "show", "ws"],
        &["go", "ws"],
        &["create", "new", "-b", "new", "-r", "api"],
        &["delete", "ws", "--force"],
    ] {
        bad(&env, args, 5, "CORRUPT_STATE", &path);
        let text = env.gw(args);
        assert!(text.stderr.contains("gw doctor"), "names the fix:\n{text}");
        let json = env.gw(&[&["--format", "json"][..], args].concat()).json();
        assert!(
            json["error"]["message"].as_str().unwrap().contains(&path),
            "{json}"
        );
        assert!(
            json["fix"].as_str().unwrap().contains("gw doctor"),
            "{json}"
        );
    }
    assert_eq!(std::fs::read_to_string(env.state_path()).unwrap(), corrupt);
    assert!(!env.ws("new").exists());
    assert!(
        env.ws("ws").join("api").is_dir(),
        "the workspace was not deleted"
    );

    // Valid JSON of the wrong shape is corrupt too.
    std::fs::write(env.state_path(), "{\"workspaces\": []}").unwrap();
    bad(&env, &["list"], 5, "CORRUPT_STATE", &path);
}

/// State that is JSON but not grove's is corrupt for every command alike, `gw list` (which
/// reads it its own way, without copying it) included: it neither shows it nor panics on it.
#[test]
fn state_the_model_refuses_is_corrupt_for_list_too() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    let good = std::fs::read_to_string(env.state_path()).unwrap();
    let path = s(&env.state_path()).to_string();
    let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
    for (what, from, to) in [
        (
            "a null time",
            "\"created_at\": \"",
            "\"created_at\": null, \"x\": \"",
        ),
        (
            "a lone surrogate",
            "\"name\": \"ws\"",
            "\"name\": \"\\ud800\"",
        ),
        (
            "an unknown field too deep",
            "\"name\": \"ws\"",
            &format!("\"name\": \"ws\", \"later\": {deep}"),
        ),
        (
            "an unknown number out of range",
            "\"name\": \"ws\"",
            "\"name\": \"ws\", \"later\": 1e400",
        ),
    ] {
        assert!(good.contains(from), "{what}: {good}");
        std::fs::write(env.state_path(), good.replacen(from, to, 1)).unwrap();
        for args in [
            &["list"][..],
            &["list", "--json"],
            &["list", "-o", "tsv"],
            &["status", "ws"],
        ] {
            let out = env.gw(args);
            assert!(!out.stderr.contains("panicked"), "{what}, {args:?}:\n{out}");
            bad(&env, args, 5, "CORRUPT_STATE", &path);
        }
    }
}

#[test]
fn corrupt_config_is_reported_and_never_overwritten() {
    let env = TestEnv::with_repos(&["api"]);
    let path = s(&env.config_path()).to_string();
    for corrupt in [
        "repo_dirs = [\n",
        "repo_dirs = \"not a list\"\n",
        "[hooks]\npost_create = { stream = true }\n",
    ] {
        std::fs::write(env.config_path(), corrupt).unwrap();
        for args in [
            &["list"][..],
            &["repos"],
            &["create", "x", "-b", "x", "-r", "api"],
            &["init", s(&env.repos)],
            &["add-dir", s(&env.repos)],
            &["preset", "add", "p", "-r", "api"],
        ] {
            bad(&env, args, 5, "CORRUPT_STATE", &path);
            let text = env.gw(args);
            assert!(text.stderr.contains("gw doctor"), "names the fix:\n{text}");
        }
        assert_eq!(std::fs::read_to_string(env.config_path()).unwrap(), corrupt);
    }
}

#[test]
fn a_failure_in_one_repository_rolls_back_the_others() {
    let env = TestEnv::with_repos(&["api", "web"]);
    // `feat` exists in web, so git cannot create `feat/x` there (a ref cannot be both a
    // branch and a directory of branches); api succeeds first and must be undone.
    env.git(&env.repos.join("web"), &["branch", "feat"]);
    let before = env.snapshot();
    let run = env
        .gw(&[
            "create", "x", "-b", "feat/x", "-r", "api,web", "--format", "json",
        ])
        .failure();
    let v = run.json();
    assert_eq!(v["ok"], false, "{run}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("web"),
        "{run}"
    );
    env.assert_unchanged(&before);
    assert!(!env.ws("x").exists());
    assert!(!env.has_branch(&env.repos.join("api"), "feat/x"));
    env.assert_git_agrees_with_state();

    let text = env
        .gw(&["create", "x", "-b", "feat/x", "-r", "api,web"])
        .failure();
    one_line_error(&text);
    env.assert_unchanged(&before);

    // A branch that existed before (in api) survives the rollback.
    env.git(&env.repos.join("api"), &["branch", "feat/x"]);
    let before = env.snapshot();
    env.gw(&["create", "x", "-b", "feat/x", "-r", "api,web"])
        .failure();
    env.assert_unchanged(&before);
    assert!(env.has_branch(&env.repos.join("api"), "feat/x"));
    env.assert_git_agrees_with_state();
}

#[test]
fn missing_input_without_a_terminal_names_the_flag() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    for (args, flag) in [
        (&["create", "x", "-r", "api"][..], "--branch"),
        (&["create", "x", "-b", "x"], "--repos"),
        (&["go"], "NAME"),
        (&["delete"], "--stdin"),
        (&["preset", "add", "-r", "api"], "NAME"),
        (&["preset", "add", "p"], "--repos"),
        (&["remove-dir"], "PATH"),
    ] {
        bad(&env, args, 2, "USAGE", flag);
    }
    env.assert_git_agrees_with_state();
}

#[test]
fn a_refused_create_removes_the_clone_it_made() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let tool = env.repo("tool");
    std::fs::remove_dir_all(&tool).unwrap();
    let url = env.url("tool");
    env.create("ws", "taken", "api");
    env.git(&env.repos.join("web"), &["branch", "feat"]);

    // Refused while planning: an unknown repo, a branch with a worktree elsewhere.
    bad(
        &env,
        &["create", "x", "-b", "x", "-r", &format!("{url},nope")],
        3,
        "REPO_NOT_FOUND",
        "nope",
    );
    bad(
        &env,
        &["create", "x", "-b", "taken", "-r", &format!("{url},api")],
        4,
        "WORKTREE_EXISTS",
        "taken",
    );
    // Failed while creating worktrees (git cannot make `feat/x` in web): rolled back.
    let before = env.snapshot();
    env.gw(&["create", "x", "-b", "feat/x", "-r", &format!("{url},web")])
        .failure();
    env.assert_unchanged(&before);
    assert!(
        !tool.exists(),
        "the clone made by the failed create is gone"
    );
    env.assert_git_agrees_with_state();

    // An existing clone is never removed by a failure.
    env.gw(&["create", "y", "-b", "y", "-r", &url]).success();
    let before = env.snapshot();
    env.gw(&["create", "z", "-b", "taken", "-r", &format!("{url},api")])
        .code(4);
    env.assert_unchanged(&before);
    assert!(tool.join(".git").is_dir());
    env.assert_git_agrees_with_state();
}
