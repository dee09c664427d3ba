//! The machine contract: every command of issue 2 with `--format json` prints exactly one
//! JSON envelope on stdout, in success and in failure, even when hooks and setup commands
//! print to stdout; clap's own errors are `USAGE` envelopes.

use e2e::{Run, TestEnv, s};
use serde_json::Value;

/// Asserts that stdout is exactly one envelope (one JSON document and a newline) with the
/// invariant fields, and returns it.
#[track_caller]
fn envelope(run: &Run) -> Value {
    assert!(
        run.stdout.ends_with('\n'),
        "the envelope ends with a newline:\n{run}"
    );
    let mut docs = serde_json::Deserializer::from_str(&run.stdout).into_iter::<Value>();
    let v = docs
        .next()
        .unwrap_or_else(|| panic!("no JSON on stdout:\n{run}"))
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{run}"));
    assert!(
        docs.next().is_none(),
        "more than one document on stdout:\n{run}"
    );
    assert_eq!(v["schemaVersion"], 1, "{run}");
    assert!(
        v["next_actions"].is_array(),
        "next_actions is always present:\n{run}"
    );
    for a in v["next_actions"].as_array().unwrap() {
        assert!(a["command"].is_string() && a["argv"].is_array(), "{a}");
        assert!(
            ["read", "write", "destructive"].contains(&a["effect"].as_str().unwrap()),
            "{a}"
        );
    }
    match v["ok"].as_bool() {
        Some(true) => {
            assert_eq!(run.status, 0, "{run}");
            assert!(
                v["result"].is_object(),
                "result is an object when ok:\n{run}"
            );
        }
        Some(false) => {
            assert_ne!(run.status, 0, "{run}");
            assert!(v["error"]["code"].is_string(), "{run}");
            assert!(v["error"]["message"].is_string(), "{run}");
        }
        None => panic!("ok is a boolean:\n{run}"),
    }
    v
}

#[track_caller]
fn ok(env: &TestEnv, args: &[&str]) -> Value {
    let mut argv = args.to_vec();
    argv.extend(["--format", "json"]);
    let run = env.gw(&argv);
    let v = envelope(&run);
    assert_eq!(v["ok"], true, "{run}");
    v
}

#[track_caller]
fn fails(env: &TestEnv, args: &[&str], exit: i32, code: &str) -> Value {
    let mut argv = args.to_vec();
    argv.extend(["--format", "json"]);
    let run = env.gw(&argv).code(exit);
    let v = envelope(&run);
    assert_eq!(v["error"]["code"], code, "{run}");
    v
}

#[test]
fn every_command_succeeds_and_fails_with_one_envelope() {
    let env = TestEnv::new();
    env.repo("api");
    env.repo("web");
    let more = env.root.join("more");
    std::fs::create_dir_all(&more).unwrap();
    let missing = env.root.join("missing");

    // Before init.
    fails(&env, &["list"], 5, "NOT_INITIALIZED");
    fails(&env, &["ws", "list"], 5, "NOT_INITIALIZED");
    fails(&env, &["repos"], 5, "NOT_INITIALIZED");
    fails(&env, &["preset", "list"], 5, "NOT_INITIALIZED");
    fails(&env, &["init", s(&missing)], 2, "USAGE");

    let r = ok(&env, &["init", s(&env.repos)]);
    assert_eq!(r["result"]["repos_found"], 2);
    ok(&env, &["add-dir", s(&more)]);
    fails(&env, &["add-dir", s(&missing)], 2, "USAGE");
    ok(&env, &["remove-dir", s(&more)]);
    fails(&env, &["remove-dir", s(&more)], 2, "USAGE");
    assert_eq!(ok(&env, &["repos"])["result"]["count"], 2);

    ok(&env, &["preset", "add", "both", "-r", "api,web"]);
    fails(
        &env,
        &["preset", "add", "bad.name", "-r", "api"],
        2,
        "USAGE",
    );
    assert_eq!(
        ok(&env, &["preset", "list"])["result"]["presets"][0]["name"],
        "both"
    );
    assert_eq!(
        ok(&env, &["preset", "show", "both"])["result"]["preset"]["repos"],
        serde_json::json!(["api", "web"])
    );
    fails(&env, &["preset", "show", "nope"], 3, "PRESET_NOT_FOUND");

    let created = ok(&env, &["create", "ws", "-b", "feat/x", "-p", "both"]);
    assert_eq!(created["result"]["name"], "ws");
    fails(
        &env,
        &["create", "ws", "-b", "feat/y", "-r", "api"],
        4,
        "WORKSPACE_EXISTS",
    );
    fails(&env, &["create", "x", "-b", "x"], 2, "USAGE");

    assert_eq!(ok(&env, &["list"])["result"]["count"], 1);
    assert_eq!(
        ok(&env, &["list", "-s"])["result"]["workspaces"][0]["status"],
        "2 clean"
    );
    ok(&env, &["ws", "list"]);
    assert_eq!(
        ok(&env, &["ws", "show", "ws"])["result"]["workspace"]["name"],
        "ws"
    );
    fails(&env, &["ws", "show", "nope"], 3, "WORKSPACE_NOT_FOUND");
    assert_eq!(ok(&env, &["status", "ws"])["result"]["count"], 2);
    fails(&env, &["status", "nope"], 3, "WORKSPACE_NOT_FOUND");
    assert_eq!(ok(&env, &["go", "ws"])["result"]["path"], s(&env.ws("ws")));
    fails(&env, &["go", "nope"], 3, "WORKSPACE_NOT_FOUND");
    ok(&env, &["shell-init", "--shell", "bash"]);
    fails(&env, &["shell-init", "--shell", "tcsh"], 2, "USAGE");
    for shell in ["bash", "zsh", "fish", "nushell"] {
        let v = ok(&env, &["completions", shell]);
        assert!(
            v["result"]["script"].as_str().unwrap().contains("gw"),
            "{shell}"
        );
    }
    fails(&env, &["completions", "tcsh"], 2, "USAGE");

    // Legacy data flags do not change machine mode: still one envelope.
    ok(&env, &["list", "--json"]);
    ok(&env, &["status", "ws", "-o", "tsv"]);

    ok(&env, &["delete", "ws"]);
    fails(&env, &["delete", "ws"], 3, "WORKSPACE_NOT_FOUND");
    ok(&env, &["create", "ws2", "-b", "ws2", "-r", "api"]);
    ok(&env, &["ws", "delete", "ws2"]);
    fails(&env, &["ws", "delete", "ws2"], 3, "WORKSPACE_NOT_FOUND");
    fails(&env, &["delete"], 3, "NO_WORKSPACES");

    ok(&env, &["preset", "remove", "both"]);
    fails(&env, &["preset", "remove", "both"], 3, "PRESET_NOT_FOUND");
    env.assert_git_agrees_with_state();
}

#[test]
fn hook_and_setup_output_never_reaches_stdout() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.append_config(
        "[hooks.post_create]\n\
         command = \"echo HOOK-OUT; echo HOOK-ERR >&2; printf '{\\\"not\\\": \\\"the envelope\\\"}\\\\n'\"\n\
         stream = true\n\
         [hooks.pre_delete]\n\
         command = \"echo PRE-DELETE-OUT\"\n",
    );
    std::fs::write(
        env.repos.join("api/.grove.toml"),
        "setup = [\"echo SETUP-OUT\", \"echo SETUP-ERR >&2\"]\nteardown = \"echo TEARDOWN-OUT\"\n",
    )
    .unwrap();
    env.trust("api").success();

    let run = env.gw(&[
        "create", "ws", "-b", "ws", "-r", "api,web", "--format", "json",
    ]);
    let v = envelope(&run);
    assert_eq!(v["ok"], true, "{run}");
    for noise in ["HOOK-OUT", "HOOK-ERR", "SETUP-OUT", "SETUP-ERR", "not"] {
        assert!(
            !run.stdout.contains(noise),
            "{noise} leaked to stdout:\n{run}"
        );
    }
    for noise in [
        "[post_create] HOOK-OUT",
        "[post_create] HOOK-ERR",
        "SETUP-OUT",
        "SETUP-ERR",
    ] {
        assert!(run.stderr.contains(noise), "{noise} is on stderr:\n{run}");
    }

    // Text mode keeps hook output off stdout too.
    let text = env
        .gw(&["create", "ws2", "-b", "ws2", "-r", "api"])
        .success();
    assert!(text.stdout.is_empty(), "{text}");

    let run = env.gw(&["delete", "ws", "ws2", "--format", "json"]);
    let v = envelope(&run);
    assert_eq!(v["ok"], true, "{run}");
    assert!(!run.stdout.contains("OUT"), "{run}");

    // A failing hook in machine mode: still exactly one envelope.
    let env2 = TestEnv::with_repos(&["api"]);
    env2.append_config(
        "[hooks]\npost_create = { command = \"echo LOUD; exit 1\", on_failure = \"abort\", stream = true }\n",
    );
    let run = env2
        .gw(&["create", "x", "-b", "x", "-r", "api", "--format", "json"])
        .code(5);
    let v = envelope(&run);
    assert_eq!(v["error"]["code"], "HOOK_FAILED");
    assert!(run.stderr.contains("[post_create] LOUD"), "{run}");
    env.assert_git_agrees_with_state();
}

#[test]
fn clap_errors_are_usage_envelopes() {
    let env = TestEnv::with_repos(&["api"]);
    for args in [
        &["list", "--bogus", "--format", "json"][..],
        &["--format", "json", "create", "x", "-b"],
        &["--format", "json", "frobnicate"],
        &["list", "--format", "yaml"],
        &["--format=yaml", "list"],
        &["status", "--format", "json", "a", "b"],
        &["--format", "json", "list", "-o", "xml"],
    ] {
        let run = env.gw(args).code(2);
        let v = envelope(&run);
        assert_eq!(v["error"]["code"], "USAGE", "{run}");
    }
    // GW_FORMAT=json selects machine mode too, and --format text overrides it.
    let run = env
        .gw_env(&env.root, &["list", "--bogus"], &[("GW_FORMAT", "json")])
        .code(2);
    assert_eq!(envelope(&run)["error"]["code"], "USAGE");
    let run = env
        .gw_env(&env.root, &["list"], &[("GW_FORMAT", "json")])
        .success();
    assert_eq!(envelope(&run)["ok"], true);
    let run = env
        .gw_env(
            &env.root,
            &["list", "--format", "text"],
            &[("GW_FORMAT", "json")],
        )
        .success();
    assert!(
        !run.stdout.starts_with('{') && !run.stderr.starts_with('{'),
        "{run}"
    );
    // Help and version in machine mode are envelopes too.
    let run = env.gw(&["--help", "--format", "json"]).success();
    assert_eq!(envelope(&run)["ok"], true);
}
