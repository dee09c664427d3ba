//! A cloned repository runs nothing unasked (issue 28, finding 3): a repository's
//! `.grove.toml` commands run only once approved — by `gw trust`, by answering the
//! question at a terminal, by `--yes`, or by a `[trust] dirs` rule — and an approval holds
//! for the commands as they were approved. Machine mode never asks: it fails with
//! `UNTRUSTED_COMMANDS` and the `gw trust` next action. A grove directory from before trust
//! keeps working.

use std::path::{Path, PathBuf};

use e2e::{Stdout, TestEnv, s};

/// An origin `name` whose `.grove.toml` (committed, pushed) has `toml`: what
/// `gw create -r URL` clones.
fn hostile_origin(env: &TestEnv, name: &str, toml: &str) -> String {
    env.origin(name);
    let scratch = env.root.join(format!("scratch-{name}"));
    env.git(&env.root, &["clone", "-q", &env.url(name), s(&scratch)]);
    env.commit(&scratch, ".grove.toml", toml, "commands");
    env.git(&scratch, &["push", "-q", "origin", "HEAD:main"]);
    std::fs::remove_dir_all(&scratch).unwrap();
    env.url(name)
}

/// A marker file a command writes when it runs.
fn marker(env: &TestEnv, what: &str) -> PathBuf {
    env.root.join(format!("ran-{what}"))
}

fn toml_touching(env: &TestEnv, key: &str, what: &str) -> String {
    format!("{key} = \"touch {}\"\n", s(&marker(env, what)))
}

#[track_caller]
fn assert_untrusted(run: &e2e::Run, repo_path: &Path) {
    assert_eq!(run.status, 6, "exit class 6 (permission):\n{run}");
    let v = run.envelope("envelope");
    assert_eq!(v["error"]["code"], "UNTRUSTED_COMMANDS", "{v:#}");
    let want = format!("gw trust {} --format json", s(repo_path));
    assert!(
        v["next_actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["command"] == want.as_str() && a["effect"] == "write"),
        "next action `{want}`: {v:#}"
    );
    let repos = v["error"]["details"]["repos"].as_array().unwrap();
    assert!(
        repos.iter().any(|r| r["path"] == s(repo_path)),
        "the details name the repository and its commands: {v:#}"
    );
}

#[test]
fn a_cloned_repositorys_setup_runs_only_once_approved_and_again_asks_when_edited() {
    let env = TestEnv::with_repos(&["api"]);
    let url = hostile_origin(&env, "evil", &toml_touching(&env, "setup", "setup"));
    let clone = env.repos.join("evil");

    // Machine mode: refused before any worktree exists; nothing ran.
    let run = env.gw(&[
        "create",
        "w1",
        "-b",
        "w1",
        "-r",
        &format!("api,{url}"),
        "--format",
        "json",
    ]);
    assert_untrusted(&run, &clone);
    assert!(!marker(&env, "setup").exists(), "setup did not run");
    assert!(
        env.workspace_names().is_empty(),
        "no workspace was recorded"
    );
    assert!(!env.ws("w1").exists(), "no workspace directory");
    assert!(
        clone.is_dir(),
        "the clone is kept, for `gw trust` to approve"
    );
    env.assert_git_agrees_with_state();

    // The next action approves; the same create then runs the setup.
    let trusted = env
        .gw(&["trust", s(&clone), "--format", "json"])
        .success()
        .envelope("trust");
    assert_eq!(trusted["result"]["outcome"], "approved");
    assert_eq!(
        trusted["result"]["commands"]["setup"][0],
        format!("touch {}", s(&marker(&env, "setup")))
    );
    env.gw(&[
        "create",
        "w1",
        "-b",
        "w1",
        "-r",
        &format!("api,{url}"),
        "--format",
        "json",
    ])
    .success();
    assert!(marker(&env, "setup").exists(), "setup ran once approved");

    // The approval survives.
    std::fs::remove_file(marker(&env, "setup")).unwrap();
    env.gw(&["create", "w2", "-b", "w2", "-r", "evil", "--format", "json"])
        .success();
    assert!(marker(&env, "setup").exists(), "setup ran again, unasked");

    // An edited command is asked about again; so is a new one.
    std::fs::write(
        clone.join(".grove.toml"),
        toml_touching(&env, "setup", "edited"),
    )
    .unwrap();
    let run = env.gw(&["create", "w3", "-b", "w3", "-r", "evil", "--format", "json"]);
    assert_untrusted(&run, &clone);
    assert!(!marker(&env, "edited").exists());
    let listed = env
        .gw(&["trust", "list", "--format", "json"])
        .success()
        .envelope("trust-list");
    assert_eq!(listed["result"]["repos"][0]["current"], false, "{listed:#}");

    // add-repo of a URL is held to the same rule.
    let url2 = hostile_origin(&env, "evil2", &toml_touching(&env, "setup", "setup2"));
    let run = env.gw(&["add-repo", "w1", "-r", &url2, "--format", "json"]);
    assert_untrusted(&run, &env.repos.join("evil2"));
    assert!(!marker(&env, "setup2").exists());
    assert_eq!(env.workspace_repos("w1"), ["api", "evil"]);
    env.assert_git_agrees_with_state();
}

#[test]
fn teardown_sync_hooks_and_run_are_held_to_the_same_rule() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "w1", "-b", "w1", "-r", "api", "--format", "json"])
        .success();
    let api = env.repos.join("api");
    let toml = format!(
        "{}{}{}",
        toml_touching(&env, "teardown", "teardown"),
        toml_touching(&env, "post_sync", "post_sync"),
        "run = \"true\"\n"
    );
    std::fs::write(api.join(".grove.toml"), &toml).unwrap();
    let before = env.snapshot();
    // The fix offers `--yes` only where it approves: `gw delete NAME --yes` is a usage
    // error (--yes confirms names read with --stdin).
    for (args, yes) in [
        (&["delete", "w1", "--format", "json"][..], false),
        (&["sync", "w1", "--format", "json"], true),
        (&["reset", "w1", "--format", "json"], true),
        (&["run", "w1", "--format", "json"], true),
        (
            &["remove-repo", "w1", "-r", "api", "--format", "json"],
            true,
        ),
    ] {
        let run = env.gw(args);
        assert_untrusted(&run, &api);
        let fix = run.json()["fix"].as_str().unwrap_or_default().to_string();
        assert_eq!(fix.contains("--yes"), yes, "{args:?}: {fix}");
        env.assert_unchanged(&before);
    }
    assert!(!marker(&env, "teardown").exists());
    // `--yes` approves and remembers.
    env.gw(&["sync", "w1", "--yes", "--format", "json"])
        .success();
    let listed = env
        .gw(&["trust", "list", "--format", "json"])
        .success()
        .result();
    assert_eq!(listed["repos"][0]["how"], "yes");
    env.gw(&["delete", "w1", "--format", "json"]).success();
    assert!(
        marker(&env, "teardown").exists(),
        "teardown ran once approved"
    );
}

/// `gw run -- CMD` runs the user's own command line and nothing of `.grove.toml` (no
/// `pre_run`, `run` or `post_run`), so unapproved commands there neither stop it nor run;
/// it still gets the workspace's ports. Plain `gw run` of the same workspace is refused.
#[test]
fn gw_run_with_a_command_of_your_own_needs_no_approval_and_runs_nothing_of_the_file() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "w1", "-b", "w1", "-r", "api", "--format", "json"])
        .success();
    let api = env.repos.join("api");
    let toml = format!(
        "{}{}{}\n[ports]\nhttp = 8080\n",
        toml_touching(&env, "pre_run", "pre_run"),
        toml_touching(&env, "run", "run"),
        toml_touching(&env, "post_run", "post_run"),
    );
    std::fs::write(api.join(".grove.toml"), &toml).unwrap();
    let refused = env.gw(&["run", "w1", "--format", "json"]);
    assert_untrusted(&refused, &api);

    let mine = env.root.join("mine");
    let line = format!("echo \"$PORT\" > '{}'", s(&mine));
    let run = env
        .gw(&["run", "w1", "--format", "json", "--", &line])
        .success();
    let port = run.result()["ports"][0]["port"].as_u64().unwrap();
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap().trim(),
        port.to_string(),
        "{run}"
    );
    for what in ["pre_run", "run", "post_run"] {
        assert!(!marker(&env, what).exists(), "`{what}` ran unapproved");
    }
    let listed = env
        .gw(&["trust", "list", "--format", "json"])
        .success()
        .result();
    assert!(
        !listed.to_string().contains(s(&api)),
        "nothing was approved: {listed:#}"
    );
}

#[test]
fn a_person_is_asked_and_shown_the_commands() {
    let env = TestEnv::with_repos(&["api"]);
    // The command as the repository wrote it, escape sequence and all.
    let toml = format!(
        "setup = \"touch {} # \\u001b]0;pwned\\u0007\"\n",
        s(&marker(&env, "setup"))
    );
    std::fs::write(env.repos.join("api/.grove.toml"), toml).unwrap();
    let root = env.root.clone();
    let args = ["create", "w1", "-b", "w1", "-r", "api"];

    // No: nothing is created.
    let mut t = env.terminal("gw", &args, &root, (120, 30), Stdout::Terminal);
    t.wait_for_text("Trust these commands");
    let screen = t.text();
    assert!(
        screen.contains("setup: touch"),
        "the commands are shown:\n{screen}"
    );
    assert!(screen.contains("\\e]0;pwned\\x07"), "escaped:\n{screen}");
    t.send("n");
    let st = t.finish();
    assert_eq!(st.code(), Some(8), "CANCELLED:\n{}", t.text());
    assert!(!marker(&env, "setup").exists());
    assert!(env.workspace_names().is_empty());
    assert!(!String::from_utf8_lossy(t.raw()).contains("\x1b]0;pwned"));

    // Yes: created, set up, and remembered.
    let mut t = env.terminal("gw", &args, &root, (120, 30), Stdout::Terminal);
    t.wait_for_text("Trust these commands");
    t.send("y");
    assert!(t.finish().success(), "{}", t.text());
    assert!(marker(&env, "setup").exists());
    let listed = env
        .gw(&["trust", "list", "--format", "json"])
        .success()
        .result();
    assert_eq!(listed["repos"][0]["how"], "asked");
    assert_eq!(listed["repos"][0]["current"], true);

    // Without a terminal, text mode says what to do instead of asking.
    std::fs::write(env.repos.join("api/.grove.toml"), "setup = \"true\"\n").unwrap();
    let run = env.gw(&["create", "w2", "-b", "w2", "-r", "api"]).code(6);
    assert!(run.stderr.contains("gw trust"), "{run}");
}

#[test]
fn trust_rules_and_removal() {
    let env = TestEnv::with_repos(&["api"]);
    std::fs::write(
        env.repos.join("api/.grove.toml"),
        toml_touching(&env, "setup", "setup"),
    )
    .unwrap();
    env.append_config(&format!("[trust]\ndirs = [\"{}\"]\n", s(&env.repos)));
    env.gw(&["create", "w1", "-b", "w1", "-r", "api", "--format", "json"])
        .success();
    assert!(
        marker(&env, "setup").exists(),
        "a [trust] dirs rule approves"
    );
    let listed = env.gw(&["trust", "--format", "json"]).success().result();
    assert_eq!(listed["count"], 0, "a rule records nothing: {listed:#}");
    assert_eq!(listed["dirs"][0], s(&env.repos));

    // remove forgets an approval.
    let env = TestEnv::with_repos(&["api"]);
    std::fs::write(env.repos.join("api/.grove.toml"), "setup = \"true\"\n").unwrap();
    env.gw(&["trust", "add", "api", "--format", "json"])
        .success();
    env.gw(&["create", "w1", "-b", "w1", "-r", "api", "--format", "json"])
        .success();
    let removed = env
        .gw(&["trust", "remove", "api", "--format", "json"])
        .success()
        .envelope("trust");
    assert_eq!(removed["result"]["outcome"], "removed");
    let run = env.gw(&["create", "w2", "-b", "w2", "-r", "api", "--format", "json"]);
    assert_untrusted(&run, &std::fs::canonicalize(env.repos.join("api")).unwrap());
}

/// A grove directory from before trust (`config.toml`, no `trust.json`) keeps working:
/// the repositories it already knew are approved as they are; one cloned by the same first
/// command is not.
#[test]
fn repositories_a_grove_already_had_are_trusted_at_upgrade() {
    let env = TestEnv::with_repos(&["api", "web"]);
    for repo in ["api", "web"] {
        std::fs::write(
            env.repos.join(repo).join(".grove.toml"),
            toml_touching(&env, "setup", repo),
        )
        .unwrap();
    }
    // As a Go grove (or a grove before trust) left it.
    std::fs::remove_file(env.grove_home.join("trust.json")).unwrap();
    let url = hostile_origin(&env, "evil", &toml_touching(&env, "setup", "evil"));
    let run = env.gw(&[
        "create",
        "w1",
        "-b",
        "w1",
        "-r",
        &format!("api,{url}"),
        "--format",
        "json",
    ]);
    assert_untrusted(&run, &env.repos.join("evil"));
    env.gw(&[
        "create", "w1", "-b", "w1", "-r", "api,web", "--format", "json",
    ])
    .success();
    assert!(marker(&env, "api").exists() && marker(&env, "web").exists());
    let listed = env
        .gw(&["trust", "list", "--format", "json"])
        .success()
        .result();
    let how: Vec<&str> = listed["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["how"].as_str().unwrap())
        .collect();
    assert_eq!(how, ["upgrade", "upgrade"], "{listed:#}");
}
