//! First contact and the small things a terminal user notices, off a terminal: `gw` alone,
//! grouped help with examples, colour control, shell detection for `shell-init`, plurals,
//! and the next action `gw context` gives before `gw init`.

use e2e::{TestEnv, require, s};

#[test]
fn gw_alone_prints_the_grouped_overview_and_succeeds() {
    let env = TestEnv::new();
    let run = env.gw(&[]).success();
    assert!(run.stderr.is_empty(), "{run}");
    // `gw` alone: the everyday groups, and where the rest is.
    for heading in [
        "Start here:",
        "Work in a workspace:",
        "Clean up:",
        "`gw help`",
    ] {
        assert!(run.stdout.contains(heading), "{heading}:\n{run}");
    }
    let help = env.gw(&["--help"]).success().stdout;
    assert_eq!(help, env.gw(&["help"]).success().stdout);
    for heading in [
        "Start here:",
        "Work in a workspace:",
        "Clean up:",
        "For agents and scripts:",
        "Global options:",
        "Examples:",
    ] {
        assert!(help.contains(heading), "{heading}:\n{help}");
    }
    // Every visible command is listed once, in some group.
    for cmd in [
        "create",
        "go",
        "delete",
        "sync",
        "context",
        "shell-init",
        "completions",
    ] {
        let listed = help
            .lines()
            .filter(|l| l.trim_start().starts_with(&format!("{cmd} ")))
            .count();
        assert_eq!(listed, 1, "{cmd}:\n{help}");
    }
    let create = env.gw(&["create", "--help"]).success().stdout;
    assert!(
        create.contains("Examples:") && create.contains("gw create -b fix/token -p backend"),
        "{create}"
    );
    // In machine mode, the overview is an envelope too.
    let r = env.gw(&["--format", "json"]).success().result();
    assert!(r["help"].as_str().unwrap().contains("Start here:"));
}

#[test]
fn colour_follows_the_flag_then_no_color_then_clicolor_force() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    let bold = "\x1b[1m";
    // Off a terminal, no colour by default (the harness sets NO_COLOR; without it too).
    let plain = env
        .gw_env(&env.root, &["list"], &[("NO_COLOR", "")])
        .success();
    assert!(!plain.stdout.contains('\x1b'), "{plain}");
    for (vars, args, coloured) in [
        (
            &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")][..],
            &["list"][..],
            true,
        ),
        (
            &[("NO_COLOR", ""), ("FORCE_COLOR", "1")][..],
            &["list"][..],
            true,
        ),
        (
            &[("NO_COLOR", ""), ("FORCE_COLOR", "0")][..],
            &["list"][..],
            false,
        ),
        (&[("CLICOLOR_FORCE", "1")][..], &["list"][..], false),
        (&[][..], &["list", "--color", "always"][..], true),
        (
            &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")][..],
            &["list", "--color=never"][..],
            false,
        ),
    ] {
        let run = env.gw_env(&env.root, args, vars).success();
        assert_eq!(
            run.stdout.contains(bold),
            coloured,
            "{vars:?} {args:?}:\n{run}"
        );
    }
    // Machine mode is never coloured.
    let json = env
        .gw_env(
            &env.root,
            &["list", "--format", "json", "--color", "always"],
            &[],
        )
        .success();
    assert!(!json.stdout.contains('\x1b'), "{json}");
    assert!(
        env.gw(&["list", "--color", "sometimes"])
            .code(2)
            .stderr
            .contains("sometimes")
    );
}

#[test]
fn shell_init_takes_the_shell_as_an_argument_and_detects_the_parent_shell() {
    let env = TestEnv::with_repos(&["api"]);
    let positional = env.gw(&["shell-init", "fish"]).success().stdout;
    assert!(positional.contains("function gw"), "{positional}");
    assert_eq!(
        env.gw(&["shell-init", "--shell", "fish"]).success().stdout,
        positional
    );
    env.gw(&["shell-init", "fish", "--shell", "bash"]).code(2);
    // Run by bash with SHELL=/usr/bin/fish: the parent (bash) decides.
    let from_bash = env.shell("bash", &env.root, "SHELL=/usr/bin/fish gw shell-init; true");
    assert!(from_bash.stdout.contains("gw() {"), "{from_bash}");
    // Not run by a shell (here: directly by the test): $SHELL decides.
    let direct = env
        .gw_env(&env.root, &["shell-init"], &[("SHELL", "/usr/bin/fish")])
        .success();
    assert!(direct.stdout.contains("function gw"), "{direct}");
    if require("fish") {
        // fish started from bash, SHELL still bash: `gw shell-init | source` works.
        env.create("ws", "ws", "api");
        let run = env.shell(
            "bash",
            &env.root,
            "SHELL=/bin/bash fish --no-config -c 'gw shell-init | source; gw go ws >/dev/null; pwd'",
        );
        assert_eq!(run.stdout.trim(), s(&env.ws("ws")), "{run}");
    }
}

#[test]
fn counts_are_worded_right() {
    let env = TestEnv::with_repos(&["api"]);
    let run = env
        .gw(&["-v", "create", "one", "-b", "one", "-r", "api"])
        .success();
    assert!(run.stderr.contains("creating 1 worktree\n"), "{run}");
    assert!(
        run.stderr.contains("api: checking out"),
        "per-repository progress: {run}"
    );
    let missing = env.gw(&["create", "x", "-b", "x"]).code(2);
    assert!(
        missing.stderr.contains("missing the repositories"),
        "{missing}"
    );
    assert!(!missing.stderr.contains("is required"), "{missing}");
}

#[test]
fn context_before_init_offers_init_with_a_placeholder_or_a_directory() {
    let env = TestEnv::new();
    let empty = env.root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let run = env
        .gw_in(&empty, &["context", "--format", "json"])
        .success();
    let doc = run.json();
    assert_eq!(doc["result"]["initialized"], false);
    let action = &doc["next_actions"][0];
    assert_eq!(
        action["argv"],
        serde_json::json!(["gw", "init", "<DIR>", "--format", "json"])
    );
    assert_eq!(action["effect"], "write");
    // Where the current directory holds repositories, it is the argument itself.
    env.repo("api");
    let run = env
        .gw_in(&env.repos, &["context", "--format", "json"])
        .success();
    let argv = &run.json()["next_actions"][0]["argv"];
    assert_eq!(argv[2], s(&env.repos), "{run}");
}

#[test]
fn completion_scripts_exist_for_every_shell_and_name_candidates() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("feat-login", "feat/login", "api");
    env.gw(&["preset", "add", "backend", "-r", "api,web"])
        .success();
    for shell in ["bash", "zsh", "fish", "nu", "elvish", "powershell"] {
        let script = env.gw(&["completions", shell]).success().stdout;
        assert!(
            script.contains("COMPLETE"),
            "{shell}: calls gw for candidates\n{script}"
        );
    }
    let ask = |words: &[&str]| {
        let mut args = vec!["--"];
        args.extend_from_slice(words);
        let index = (words.len() - 1).to_string();
        env.gw_env(
            &env.root,
            &args,
            &[
                ("COMPLETE", "bash"),
                ("_CLAP_COMPLETE_INDEX", index.as_str()),
            ],
        )
        .success()
        .stdout
    };
    assert_eq!(ask(&["gw", "status", "fe"]), "feat-login");
    assert_eq!(ask(&["gw", "create", "-r", "api,w"]), "api,web");
    assert_eq!(ask(&["gw", "create", "-p", "b"]), "backend");
    assert_eq!(ask(&["gw", "preset", "show", "b"]), "backend");
}
