//! The machine contract (SPEC §5): every error code's exit class through the real binary,
//! malformed invocations, and machine-mode output validated against `docs/schema/`.

use std::path::Path;

use e2e::{TestEnv, s};
use serde_json::Value;

/// Every code the envelope schema declares.
fn declared_codes() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema/envelope.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    schema["$defs"]["Code"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

/// Runs `args` in machine mode and asserts the error code and exit class.
#[track_caller]
fn expect_code(env: &TestEnv, args: &[&str], code: &str, exit: i32) {
    let mut full: Vec<&str> = args.to_vec();
    full.extend(["--format", "json"]);
    let run = env.gw(&full);
    let v = run.envelope("envelope");
    assert_eq!(v["ok"], false, "{run}");
    assert_eq!(v["error"]["code"], code, "{run}");
    assert_eq!(run.status, exit, "{code} must exit {exit}:\n{run}");
}

#[test]
fn every_error_code_has_its_exit_class() {
    let mut covered: Vec<&str> = Vec::new();
    let mut check = |env: &TestEnv, args: &[&str], code: &'static str, exit: i32| {
        expect_code(env, args, code, exit);
        covered.push(code);
    };

    // Not initialised, then initialised with two repositories.
    let bare = TestEnv::new();
    check(&bare, &["list"], "NOT_INITIALIZED", 5);
    check(&bare, &["go"], "NOT_INITIALIZED", 5);

    let env = TestEnv::with_repos(&["api", "web"]);
    check(&env, &["list", "--bogus"], "USAGE", 2);
    let bad_plan = env.root.join("bad-plan.json");
    std::fs::write(&bad_plan, "{ not a plan").unwrap();
    check(&env, &["apply", s(&bad_plan)], "PLAN_INVALID", 2);
    check(&env, &["go"], "NO_WORKSPACES", 3);
    check(&env, &["status", "nope"], "WORKSPACE_NOT_FOUND", 3);
    check(
        &env,
        &["create", "x", "-b", "x", "-r", "nope"],
        "REPO_NOT_FOUND",
        3,
    );
    check(
        &env,
        &["create", "x", "-b", "x", "-p", "nope"],
        "PRESET_NOT_FOUND",
        3,
    );
    env.gw(&["create", "one", "-b", "feat/one", "-r", "api,web"])
        .success();
    check(
        &env,
        &["create", "one", "-b", "feat/other", "-r", "api"],
        "WORKSPACE_EXISTS",
        4,
    );
    check(
        &env,
        &["create", "two", "-b", "feat/one", "-r", "api"],
        "WORKTREE_EXISTS",
        4,
    );
    std::fs::write(env.workspace_dir().join("one/api/README.md"), "changed\n").unwrap();
    check(&env, &["delete", "one"], "WORKTREE_DIRTY", 4);
    let web = env.workspace_dir().join("one/web");
    env.git(&web, &["switch", "-q", "-c", "elsewhere"]);
    check(
        &env,
        &["remove-repo", "one", "-r", "web"],
        "BRANCH_CONFLICT",
        4,
    );
    let missing = format!("file://{}", s(&env.root.join("no-such-origin.git")));
    check(
        &env,
        &["create", "three", "-b", "three", "-r", &missing],
        "GIT_FAILED",
        5,
    );

    // A hook that aborts.
    let hooked = TestEnv::with_repos(&["api"]);
    let config = hooked.grove_home.join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[hooks.post_create]\ncommand = \"exit 3\"\non_failure = \"abort\"\n");
    std::fs::write(&config, text).unwrap();
    check(
        &hooked,
        &["create", "h", "-b", "h", "-r", "api"],
        "HOOK_FAILED",
        5,
    );

    // A pre_delete hook that changes the workspace behind grove's back.
    let changed = TestEnv::with_repos(&["api"]);
    changed
        .gw(&["create", "c", "-b", "c", "-r", "api"])
        .success();
    let config = changed.grove_home.join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(
        r#"
[hooks]
pre_delete = '''s="$GW_HOME/state.json"; sed 's/"created_at": "[^"]*"/"created_at": "2000-01-01T00:00:00"/' "$s" > "$s.new" && mv "$s.new" "$s"'''
"#,
    );
    std::fs::write(&config, text).unwrap();
    check(&changed, &["delete", "c"], "STATE_CHANGED", 4);
    assert!(
        changed.workspace_dir().join("c").exists(),
        "nothing was deleted"
    );

    // A port of the stack held by another process (this test): `gw run` starts nothing.
    let ports = TestEnv::with_repos(&["api"]);
    let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).unwrap();
    let held = listener.local_addr().unwrap().port();
    ports.append_config(&format!("\n[ports]\nbase = {held}\nblock = 1\n"));
    std::fs::write(
        ports.repos.join("api/.grove.toml"),
        "run = \"true\"\n[ports]\nhttp = 8080\n",
    )
    .unwrap();
    ports.trust("api").success();
    ports
        .gw(&["create", "srv", "-b", "srv", "-r", "api"])
        .success();
    check(&ports, &["run", "srv"], "PORT_IN_USE", 4);
    drop(listener);

    // An interrupted operation on a workspace, waiting for `gw doctor --fix`.
    let pending = TestEnv::with_repos(&["api"]);
    pending.write_journal(
        "20260101T000000000000000-1-0-create-p",
        "create",
        "p",
        "running",
        serde_json::json!([]),
    );
    check(
        &pending,
        &["create", "p", "-b", "p", "-r", "api"],
        "RECOVERY_PENDING",
        5,
    );

    // Doctor finding issues, and a recovery it refuses: a journal (of a gw long gone) that
    // would delete a branch in a repository grove does not know.
    let refused = TestEnv::with_repos(&["api"]);
    refused.create("w", "w", "api");
    std::fs::remove_dir_all(refused.ws("w").join("api")).unwrap();
    check(&refused, &["doctor"], "ISSUES_FOUND", 5);
    refused.write_refused_journal();
    check(&refused, &["doctor", "--fix"], "RECOVERY_REFUSED", 5);

    // A workspace whose directory was removed by hand.
    let gone = TestEnv::with_repos(&["api"]);
    gone.create("g", "g", "api");
    std::fs::remove_dir_all(gone.ws("g")).unwrap();
    check(&gone, &["status", "g"], "WORKSPACE_DIR_MISSING", 5);

    // A repository whose `.grove.toml` commands nobody approved.
    let untrusted = TestEnv::with_repos(&["api"]);
    std::fs::write(
        untrusted.repos.join("api/.grove.toml"),
        "setup = \"true\"\n",
    )
    .unwrap();
    check(
        &untrusted,
        &["create", "u", "-b", "u", "-r", "api"],
        "UNTRUSTED_COMMANDS",
        6,
    );
    assert!(!untrusted.workspace_dir().join("u").exists());

    // A state file that is not JSON, and one that is not a file at all.
    let corrupt = TestEnv::with_repos(&["api"]);
    std::fs::write(corrupt.grove_home.join("state.json"), "{not json").unwrap();
    check(&corrupt, &["list"], "CORRUPT_STATE", 5);
    let weird = TestEnv::with_repos(&["api"]);
    std::fs::create_dir_all(weird.grove_home.join("state.json")).unwrap();
    check(&weird, &["list"], "INTERNAL", 1);

    // Credentials refused by the remote: an ssh that says so.
    let mut auth = TestEnv::with_repos(&["api"]);
    let fake_ssh = auth.root.join("fake-ssh");
    std::fs::write(
        &fake_ssh,
        "#!/bin/sh\necho 'git@example.invalid: Permission denied (publickey).' >&2\nexit 255\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &fake_ssh,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    auth.set_env("GIT_SSH_COMMAND", s(&fake_ssh));
    check(
        &auth,
        &[
            "create",
            "p",
            "-b",
            "p",
            "-r",
            "ssh://git@example.invalid/team/secret.git",
        ],
        "PERMISSION_DENIED",
        6,
    );
    assert!(
        !auth.repos.join("secret").exists(),
        "a refused clone leaves nothing behind"
    );

    // The state lock held by someone else.
    let mut locked = TestEnv::with_repos(&["api"]);
    locked.set_env("GW_LOCK_TIMEOUT_MS", "300");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(locked.grove_home.join("state.lock"))
        .unwrap();
    lock.lock().unwrap();
    check(
        &locked,
        &["create", "l", "-b", "l", "-r", "api"],
        "TRANSIENT",
        7,
    );
    drop(lock);
    assert!(
        !locked.workspace_dir().join("l").exists(),
        "the create that timed out was rolled back"
    );
    locked.assert_git_agrees_with_state();

    // A person declining a prompt (a pseudo-terminal through `script`: util-linux's takes
    // the command with -c, the BSD one of macOS after the typescript file).
    let in_pty = |cmd: &str| {
        if cfg!(target_os = "linux") {
            format!("script -qec {} /dev/null", e2e_quote(cmd))
        } else {
            format!("script -q /dev/null sh -c {}", e2e_quote(cmd))
        }
    };
    if e2e::require("script") {
        let env = TestEnv::with_repos(&["api"]);
        env.gw(&["create", "cur", "-b", "cur", "-r", "api"])
            .success();
        let ws = env.workspace_dir().join("cur");
        let gw = e2e::gw_bin();
        let line = format!("{} create new -b new -r api --replace", s(gw));
        let run = env.sh(&ws, &format!("printf 'n' | {}", in_pty(&line)));
        assert!(
            run.stdout.contains("cancelled") || run.stderr.contains("cancelled"),
            "{run}"
        );
        let status = env.sh(
            &ws,
            &format!(
                "printf 'n' | {}; echo \"exit=$?\"",
                in_pty(&format!("{line}; exit $?"))
            ),
        );
        assert!(
            status.stdout.contains("exit=8"),
            "CANCELLED exits 8:\n{status}"
        );
        assert!(ws.exists(), "nothing was replaced");
        covered.push("CANCELLED");
    }

    for code in declared_codes() {
        assert!(
            covered.contains(&code.as_str()),
            "no test makes a real command return {code}"
        );
    }
}

fn e2e_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn malformed_invocations_are_usage_envelopes_and_change_nothing() {
    let env = TestEnv::with_repos(&["api"]);
    let before = std::fs::read_to_string(env.grove_home.join("config.toml")).unwrap();
    let cases: &[&[&str]] = &[
        &["list", "--bogus", "--format", "json"],
        &["create", "x", "-b", "--format", "json"],
        &["frobnicate", "--format", "json"],
        &["list", "--format", "yaml"],
        &[
            "create", "x", "-b", "x", "-r", "api", "-p", "p", "--format", "json",
        ],
        &["delete", "x", "--stdin", "--format", "json"],
        &["--format=json", "status", "a", "b"],
    ];
    for args in cases {
        let run = env.gw(args);
        let v = run.envelope("envelope");
        assert_eq!(v["error"]["code"], "USAGE", "{run}");
        assert_eq!(run.status, 2, "{run}");
    }
    assert_eq!(
        std::fs::read_to_string(env.grove_home.join("config.toml")).unwrap(),
        before
    );
    assert!(!env.workspace_dir().join("x").exists());
    assert_eq!(env.state(), Value::Array(vec![]));
}

#[test]
fn a_panic_is_an_internal_error_in_either_mode() {
    // Release builds abort on a panic (`cargo xtask e2e` runs this against one), so the
    // report comes from the panic hook, not from unwinding.
    let mut env = TestEnv::with_repos(&["api"]);
    env.set_env("GW_TEST_PANIC", "1");

    let run = env.gw(&["list", "--format", "json"]);
    let v = run.envelope("envelope");
    assert_eq!(v["error"]["code"], "INTERNAL", "{run}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("gw panicked: GW_TEST_PANIC is set"),
        "{run}"
    );
    assert_eq!(run.status, 1, "{run}");
    assert!(run.stderr.contains("panicked"), "{run}");

    let run = env.gw(&["list"]).code(1);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(
        run.stderr
            .contains("error: gw panicked: GW_TEST_PANIC is set"),
        "{run}"
    );
    assert!(run.stderr.contains("this is a bug in gw"), "{run}");

    let run = env.migrate(&["--format", "json"]);
    let v = run.envelope("envelope");
    assert_eq!(v["error"]["code"], "INTERNAL", "{run}");
    assert_eq!(run.status, 1, "{run}");
}

#[test]
fn machine_output_matches_the_published_schemas() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let ok = |args: &[&str], schema: &str| {
        let mut full = args.to_vec();
        full.extend(["--format", "json"]);
        let run = env.gw(&full);
        let v = run.envelope(schema);
        assert_eq!(v["ok"], true, "{run}");
        v
    };
    ok(&["context"], "context");
    ok(&["init", s(&env.repos)], "init");
    ok(&["repos"], "repos");
    ok(&["preset", "add", "both", "-r", "api,web"], "preset");
    ok(&["preset", "list"], "preset-list");
    ok(&["preset", "show", "both"], "preset");
    let created = ok(&["create", "ws", "-b", "feat/ws", "-p", "both"], "create");
    assert_eq!(created["result"]["blueprint"]["name"], "preset:both");
    ok(&["list"], "list");
    ok(&["ws", "list"], "list");
    ok(&["list", "--status"], "list-status");
    ok(&["ws", "show", "ws"], "ws-show");
    ok(&["status", "ws"], "status");
    ok(&["go", "ws"], "go");
    ok(&["shell-init", "--shell", "fish"], "shell-init");
    ok(&["completions", "bash"], "completions");
    ok(&["schema"], "schema");
    ok(&["schema", "status"], "schema");
    ok(&["--help"], "help");
    let ws = env.workspace_dir().join("ws");
    let ctx = env
        .gw_in(&ws.join("api"), &["context", "--format", "json"])
        .envelope("context");
    assert_eq!(ctx["result"]["workspace"]["workspace"], "ws");
    ok(&["delete", "ws"], "delete");
    ok(&["preset", "remove", "both"], "preset");
    let extra = env.root.join("more");
    std::fs::create_dir_all(&extra).unwrap();
    ok(&["add-dir", s(&extra)], "add-dir");
    ok(&["remove-dir", s(&extra)], "remove-dir");
    env.assert_git_agrees_with_state();
}
