//! Global lifecycle hooks (`post_create`, `pre_delete`) in both forms, their failure
//! policies, streaming, timeouts and placeholders, `--no-hooks`, and each repository's
//! `.grove.toml` `setup` and `teardown`.

use std::path::PathBuf;

use e2e::{TestEnv, s};

/// A log file hooks append to, and its lines.
fn log(env: &TestEnv) -> PathBuf {
    env.root.join("hook.log")
}

fn log_lines(env: &TestEnv) -> Vec<String> {
    std::fs::read_to_string(log(env))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

fn write_repo_config(env: &TestEnv, repo: &str, toml: &str) {
    std::fs::write(env.repos.join(repo).join(".grove.toml"), toml).unwrap();
    // Approved as the user would (`gw trust`); a file grove cannot read is refused there.
    let _ = env.trust(repo);
}

#[test]
fn string_and_table_hooks_fire_with_placeholders() {
    let env = TestEnv::with_repos(&["api"]);
    let log = s(&log(&env)).to_string();
    env.append_config(&format!(
        "[hooks]\n\
         post_create = \"printf 'created|%s|%s|%s\\\\n' {{name}} {{path}} {{branch}} >> {log}\"\n\
         [hooks.pre_delete]\n\
         command = \"printf 'deleting|%s|%s\\\\n' {{name}} \\\"$PWD\\\" >> {log}\"\n\
         description = \"log deletes\"\n"
    ));
    env.gw(&["create", "ws", "-b", "feat/x", "-r", "api"])
        .success();
    assert_eq!(
        log_lines(&env),
        [format!("created|ws|{}|feat/x", s(&env.ws("ws")))]
    );
    env.gw(&["delete", "ws"]).success();
    assert_eq!(
        log_lines(&env)[1],
        format!("deleting|ws|{}", s(&env.ws("ws"))),
        "pre_delete runs in the workspace, before it is removed"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn source_placeholders_keep_spaces_and_quotes_intact() {
    let env = TestEnv::with_repos(&["api"]);
    let log = s(&log(&env)).to_string();
    env.append_config(&format!(
        "[hooks]\npost_create = \"printf '[%s]\\\\n' {{name}} {{source_url}} {{source_ref}} {{source_title}} >> {log}\"\n"
    ));
    let title = r#"It's a "quoted" title; $(echo injected) `x` \ end"#;
    env.gw(&[
        "create",
        "src",
        "-b",
        "src",
        "-r",
        "api",
        "--source-url",
        "https://example.invalid/a b?c=d&e='f'",
        "--source-ref",
        "PR 42",
        "--source-title",
        title,
    ])
    .success();
    assert_eq!(
        log_lines(&env),
        [
            "[src]".to_string(),
            "[https://example.invalid/a b?c=d&e='f']".to_string(),
            "[PR 42]".to_string(),
            format!("[{title}]"),
        ]
    );
    // Empty values expand to nothing (no empty argument).
    std::fs::remove_file(&log).unwrap();
    env.gw(&["create", "plain", "-b", "plain", "-r", "api"])
        .success();
    assert_eq!(log_lines(&env), ["[plain]"]);
    env.assert_git_agrees_with_state();
}

#[test]
fn abort_fails_create_with_hook_failed_but_keeps_the_workspace() {
    let env = TestEnv::with_repos(&["api"]);
    env.append_config(
        "[hooks]\npost_create = { command = \"echo hook says no >&2; exit 3\", on_failure = \"abort\" }\n",
    );
    let run = env.gw(&["create", "ws", "-b", "ws", "-r", "api"]).code(5);
    assert!(run.stderr.contains("[post_create] hook says no"), "{run}");
    assert!(run.stderr.contains("error: "), "{run}");
    assert!(env.ws("ws").join("api").is_dir(), "the workspace is kept");
    assert_eq!(env.state()[0]["name"], "ws");

    let json = env
        .gw(&[
            "create", "ws2", "-b", "ws2", "-r", "api", "--format", "json",
        ])
        .code(5);
    assert_eq!(json.error_code(), "HOOK_FAILED");
    assert_eq!(env.state()[1]["name"], "ws2");
    env.assert_git_agrees_with_state();
}

#[test]
fn pre_delete_abort_keeps_the_workspace() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    env.append_config("[hooks.pre_delete]\ncommand = \"exit 1\"\non_failure = \"abort\"\n");
    let before = env.snapshot();
    let run = env.gw(&["delete", "ws", "--format", "json"]).code(5);
    assert_eq!(run.error_code(), "HOOK_FAILED");
    env.assert_unchanged(&before);
    assert!(env.ws("ws").join("api").is_dir());
    // --no-hooks skips it.
    env.gw(&["delete", "ws", "--no-hooks"]).success();
    assert!(!env.ws("ws").exists());
    env.assert_git_agrees_with_state();
}

#[test]
fn warn_succeeds_with_a_warning() {
    let env = TestEnv::with_repos(&["api"]);
    env.append_config(
        "[hooks]\npost_create = { command = \"echo oops; exit 2\", on_failure = \"warn\" }\n",
    );
    let run = env.gw(&["create", "ws", "-b", "ws", "-r", "api"]).success();
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("warning:") && l.contains("post_create")),
        "{run}"
    );
    assert!(
        run.stderr.contains("[post_create] oops"),
        "output shown on failure:\n{run}"
    );
    let v = env
        .gw(&[
            "create", "ws2", "-b", "ws2", "-r", "api", "--format", "json",
        ])
        .success()
        .json();
    assert!(
        v["warnings"][0].as_str().unwrap().contains("post_create"),
        "{v}"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn stream_prefixes_each_line_on_stderr() {
    let env = TestEnv::with_repos(&["api"]);
    env.append_config(
        "[hooks.post_create]\ncommand = \"echo first; echo second >&2\"\nstream = true\n",
    );
    let run = env.gw(&["create", "ws", "-b", "ws", "-r", "api"]).success();
    assert!(
        run.stdout.is_empty(),
        "hook output never reaches stdout:\n{run}"
    );
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(lines.contains(&"[post_create] first"), "{run}");
    assert!(lines.contains(&"[post_create] second"), "{run}");

    // A silent (non-stream) hook that succeeds shows nothing.
    let env = TestEnv::with_repos(&["api"]);
    env.append_config("[hooks]\npost_create = \"echo quiet\"\n");
    let run = env.gw(&["create", "ws", "-b", "ws", "-r", "api"]).success();
    assert!(
        !run.stderr.contains("quiet") && !run.stdout.contains("quiet"),
        "{run}"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn timeout_kills_the_hook_and_reports_it() {
    let env = TestEnv::with_repos(&["api"]);
    let marker = env.root.join("finished");
    env.append_config(&format!(
        "[hooks.post_create]\ncommand = \"sleep 5; touch {}\"\ntimeout = \"1s\"\n",
        s(&marker)
    ));
    let run = env.gw(&["create", "ws", "-b", "ws", "-r", "api"]).success();
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("warning:") && l.contains("timed out")),
        "{run}"
    );
    assert!(!marker.exists(), "the hook was killed before it finished");

    // With abort, the timeout fails the command.
    let env = TestEnv::with_repos(&["api"]);
    env.append_config(
        "[hooks.post_create]\ncommand = \"sleep 5\"\ntimeout = \"1s\"\non_failure = \"abort\"\n",
    );
    let run = env
        .gw(&["create", "ws", "-b", "ws", "-r", "api", "--format", "json"])
        .code(5);
    assert_eq!(run.error_code(), "HOOK_FAILED");
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{run}"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn no_hooks_skips_global_hooks_but_not_repo_setup() {
    let env = TestEnv::with_repos(&["api"]);
    let log = s(&log(&env)).to_string();
    env.append_config(&format!(
        "[hooks]\npost_create = \"echo post_create >> {log}\"\npre_delete = \"echo pre_delete >> {log}\"\n"
    ));
    write_repo_config(&env, "api", &format!("setup = \"echo setup >> {log}\"\n"));
    env.gw(&["create", "a", "-b", "a", "-r", "api", "--no-hooks"])
        .success();
    env.gw(&["-n", "delete", "a"]).success();
    env.gw(&["create", "b", "-b", "b", "-r", "api", "-n"])
        .success();
    env.gw(&["delete", "--no-hooks", "b"]).success();
    assert_eq!(log_lines(&env), ["setup", "setup"]);
    env.assert_git_agrees_with_state();
}

#[test]
fn repo_setup_in_string_and_list_forms_runs_in_the_worktree() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let log = s(&log(&env)).to_string();
    write_repo_config(
        &env,
        "api",
        &format!(
            "setup = \"echo \\\"api $PWD $GROVE_WORKSPACE $GROVE_DIR $GROVE_STATE\\\" >> {log}\"\nunknown_key = 1\n"
        ),
    );
    write_repo_config(
        &env,
        "web",
        &format!("setup = [\"echo web-one >> {log}\", \"echo web-two >> {log}\"]\n"),
    );
    let r = env.create("ws", "ws", "api,web");
    let mut lines = log_lines(&env);
    lines.sort();
    assert_eq!(
        lines,
        [
            format!(
                "api {} ws {} {}",
                s(&env.ws("ws").join("api")),
                s(&env.grove_home),
                s(&env.grove_home.join("state.json"))
            ),
            "web-one".to_string(),
            "web-two".to_string(),
        ]
    );
    let web: Vec<String> = log_lines(&env)
        .into_iter()
        .filter(|l| l.starts_with("web"))
        .collect();
    assert_eq!(web, ["web-one", "web-two"], "list commands run in order");
    assert_eq!(r["setup"][0]["status"], "ready");
    let state = env.state();
    assert_eq!(state[0]["repos"][0]["setup"]["status"], "ready");
    assert_eq!(state[0]["repos"][1]["setup"]["status"], "ready");
    env.assert_git_agrees_with_state();
}

#[test]
fn repo_setup_failure_is_a_warning_recorded_in_state() {
    let env = TestEnv::with_repos(&["api", "web"]);
    write_repo_config(
        &env,
        "api",
        "setup = [\"echo broken >&2; exit 4\", \"echo never\"]\n",
    );
    let run = env
        .gw(&["create", "ws", "-b", "ws", "-r", "api,web"])
        .success();
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("warning:") && l.contains("api") && l.contains("setup failed")),
        "{run}"
    );
    assert!(
        !run.stderr.contains("never"),
        "stops at the first failure:\n{run}"
    );
    let state = env.state();
    let api = &state[0]["repos"][0];
    assert_eq!(api["setup"]["status"], "failed");
    assert!(
        api["setup"]["detail"].as_str().unwrap().contains("broken"),
        "{api}"
    );
    assert!(
        state[0]["repos"][1].get("setup").is_none(),
        "web has no setup"
    );
    let status = env
        .gw(&["status", "ws", "--format", "json"])
        .success()
        .result();
    assert_eq!(status["repos"][0]["preparation"]["status"], "failed");
    env.assert_git_agrees_with_state();
}

#[test]
fn teardown_runs_in_the_worktree_before_removal() {
    let env = TestEnv::with_repos(&["api"]);
    let log = s(&log(&env)).to_string();
    write_repo_config(
        &env,
        "api",
        &format!("teardown = \"test -f README.md && echo \\\"teardown $PWD\\\" >> {log}\"\n"),
    );
    env.create("ws", "ws", "api");
    env.gw(&["delete", "ws"]).success();
    assert_eq!(
        log_lines(&env),
        [format!("teardown {}", s(&env.ws("ws").join("api")))]
    );
    assert!(!env.ws("ws").exists());
    env.assert_git_agrees_with_state();
}
