//! Every command and subcommand `gw --help` lists, run in machine mode once to succeed and
//! once to fail; each stdout is one envelope valid against `docs/schema/` (the command's
//! result schema on success, the envelope's on failure). A command added without a case
//! here fails the test.

use std::collections::BTreeSet;

use e2e::{TestEnv, s};

/// `gw [path…] --help`'s subcommands (without `help`).
fn subcommands(env: &TestEnv, path: &[&str]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help");
    let out = env.gw(&args).success().stdout;
    // `gw help` lists its commands in groups, before the global options; a command's
    // subcommands are clap's `Commands:`.
    let section = match (path, out.split("Commands:\n").nth(1)) {
        ([], _) => out.split("Global options:").next().unwrap_or(""),
        (_, Some(section)) => section.split("\n\n").next().unwrap_or(""),
        (_, None) => return Vec::new(),
    };
    section
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help" && *c != "<plugin>")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_command_succeeds_and_fails_in_one_valid_envelope() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let web = env.repos.join("web");
    env.commit(
        &web,
        ".grove.toml",
        "run = \"echo serving\"\n",
        "run command",
    );
    env.git(&web, &["push", "-q", "origin", "main"]);
    env.trust("web").success();
    let empty = env.root.join("no-grove");
    let extra = env.root.join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let bad_plan = env.root.join("bad.json");
    std::fs::write(&bad_plan, "[]").unwrap();
    let plugin = env.root.join("gw-hello");
    e2e::write_executable(&plugin, "#!/bin/sh\necho hello\n");

    // (command path, success args, result schema, failure args); run in this order.
    let cases: Vec<(&str, Vec<String>, &str, Vec<String>)> = {
        let v = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let plan_out = s(&env.root.join("plan.json")).to_string();
        vec![
            (
                "init",
                v(&["init", s(&env.repos)]),
                "init",
                v(&["init", "/no/such/dir"]),
            ),
            (
                "add-dir",
                v(&["add-dir", s(&extra)]),
                "add-dir",
                v(&["add-dir", "/no/such/dir"]),
            ),
            (
                "remove-dir",
                v(&["remove-dir", s(&extra)]),
                "remove-dir",
                v(&["remove-dir", "/not/configured"]),
            ),
            ("repos", v(&["repos"]), "repos", v(&["repos", "--bogus"])),
            (
                "create",
                v(&["create", "ws", "-b", "feat/ws", "-r", "api,web"]),
                "create",
                v(&["create", "x", "-b", "x", "-r", "nope"]),
            ),
            (
                "context",
                v(&["context"]),
                "context",
                v(&["context", "--bogus"]),
            ),
            ("list", v(&["list"]), "list", v(&["list", "--bogus"])),
            (
                "ws list",
                v(&["ws", "list"]),
                "list",
                v(&["ws", "list", "--bogus"]),
            ),
            (
                "ws show",
                v(&["ws", "show", "ws"]),
                "ws-show",
                v(&["ws", "show", "nope"]),
            ),
            (
                "status",
                v(&["status", "ws"]),
                "status",
                v(&["status", "nope"]),
            ),
            ("go", v(&["go", "ws"]), "go", v(&["go", "nope"])),
            (
                "shell-init",
                v(&["shell-init", "--shell", "zsh"]),
                "shell-init",
                v(&["shell-init", "--shell", "tcsh"]),
            ),
            (
                "preset add",
                v(&["preset", "add", "both", "-r", "api,web"]),
                "preset",
                v(&["preset", "add", "p", "-r", "nope"]),
            ),
            (
                "preset list",
                v(&["preset", "list"]),
                "preset-list",
                v(&["preset", "list", "--bogus"]),
            ),
            (
                "preset show",
                v(&["preset", "show", "both"]),
                "preset",
                v(&["preset", "show", "nope"]),
            ),
            (
                "preset remove",
                v(&["preset", "remove", "both"]),
                "preset",
                v(&["preset", "remove", "nope"]),
            ),
            (
                "completions",
                v(&["completions", "fish"]),
                "completions",
                v(&["completions", "tcsh"]),
            ),
            (
                "schema",
                v(&["schema", "envelope"]),
                "schema",
                v(&["schema", "nope"]),
            ),
            ("skill", v(&["skill"]), "skill", v(&["skill", "--bogus"])),
            (
                "run",
                v(&["run", "ws", "-r", "web"]),
                "run",
                v(&["run", "ws", "-r", "nope"]),
            ),
            ("sync", v(&["sync", "ws"]), "sync", v(&["sync", "nope"])),
            ("env", v(&["env", "ws"]), "env", v(&["env", "nope"])),
            ("reset", v(&["reset", "ws"]), "reset", v(&["reset", "nope"])),
            (
                "remove-repo",
                v(&["remove-repo", "ws", "-r", "api"]),
                "remove-repo",
                v(&["remove-repo", "nope", "-r", "api"]),
            ),
            (
                "add-repo",
                v(&["add-repo", "ws", "-r", "api"]),
                "add-repo",
                v(&["add-repo", "ws", "-r", "nope"]),
            ),
            (
                "rename",
                v(&["rename", "ws", "--to", "ws2"]),
                "rename",
                v(&["rename", "ws2", "--to", "a/b"]),
            ),
            (
                "plan create",
                v(&["plan", "create", "p", "-b", "p", "-r", "api"]),
                "plan",
                v(&["plan", "create", "p", "-r", "api"]),
            ),
            (
                "plan delete",
                v(&["plan", "delete", "ws2"]),
                "plan",
                v(&["plan", "delete", "nope"]),
            ),
            (
                "plan add-repo",
                v(&["plan", "add-repo", "ws2", "-r", "api"]),
                "plan",
                v(&["plan", "add-repo", "ws2", "-r", "nope"]),
            ),
            (
                "plan remove-repo",
                v(&["plan", "remove-repo", "ws2", "-r", "api"]),
                "plan",
                v(&["plan", "remove-repo", "nope", "-r", "api"]),
            ),
            (
                "plan rename",
                v(&["plan", "rename", "ws2", "--to", "ws3"]),
                "plan",
                v(&["plan", "rename", "ws2", "--to", "../x"]),
            ),
            (
                "plan reset",
                v(&["plan", "reset", "ws2"]),
                "plan",
                v(&["plan", "reset", "nope"]),
            ),
            (
                "plan sync",
                v(&["plan", "sync", "ws2"]),
                "plan",
                v(&["plan", "sync", "nope"]),
            ),
            (
                "plan prune",
                v(&["plan", "--out", &plan_out, "prune", "--min-age", "0h"]),
                "plan",
                v(&["plan", "prune", "--min-age", "3m"]),
            ),
            (
                "apply",
                v(&["apply", &plan_out]),
                "prune",
                v(&["apply", s(&bad_plan)]),
            ),
            (
                "doctor",
                v(&["doctor"]),
                "doctor",
                v(&["doctor", "--bogus"]),
            ),
            (
                "plugin install",
                v(&["plugin", "install", s(&plugin)]),
                "plugin",
                v(&["plugin", "install", "/no/such/gw-x"]),
            ),
            (
                "plugin list",
                v(&["plugin", "list"]),
                "plugin-list",
                v(&["plugin", "list", "--bogus"]),
            ),
            (
                "plugin upgrade",
                v(&["plugin", "upgrade", "hello"]),
                "plugin-upgrade",
                v(&["plugin", "upgrade", "nope"]),
            ),
            (
                "plugin search",
                v(&["plugin", "search", "code"]),
                "plugin-search",
                v(&["plugin", "search", "--bogus"]),
            ),
            (
                "plugin remove",
                v(&["plugin", "remove", "hello"]),
                "plugin",
                v(&["plugin", "remove", "nope"]),
            ),
            ("man", v(&["man", "create"]), "man", v(&["man", "nope"])),
            (
                "trust add",
                v(&["trust", "add", "api"]),
                "trust",
                v(&["trust", "add", "nope"]),
            ),
            (
                "trust list",
                v(&["trust", "list"]),
                "trust-list",
                v(&["trust", "list", "--bogus"]),
            ),
            (
                "trust remove",
                v(&["trust", "remove", "api"]),
                "trust",
                v(&["trust", "remove", "nope"]),
            ),
            (
                "bug-report",
                v(&["bug-report"]),
                "bug-report",
                v(&["bug-report", "--bogus"]),
            ),
            (
                "prune branches",
                v(&["prune", "branches"]),
                "prune-branches",
                v(&["prune", "branches", "--bogus"]),
            ),
            (
                "prune",
                v(&["prune", "--min-age", "0h"]),
                "prune",
                v(&["prune", "--min-age", "3m"]),
            ),
            (
                "delete",
                v(&["create", "d", "-b", "d", "-r", "web"]),
                "create",
                v(&["delete", "nope"]),
            ),
            (
                "ws delete",
                v(&["ws", "delete", "d"]),
                "delete",
                v(&["ws", "delete", "nope"]),
            ),
            // `d` is in the trash now.
            (
                "trash list",
                v(&["trash", "list"]),
                "trash",
                v(&["trash", "list", "--bogus"]),
            ),
            (
                "plan restore",
                v(&["plan", "restore", "d"]),
                "plan",
                v(&["plan", "restore", "nope"]),
            ),
            (
                "plan undo",
                v(&["plan", "undo"]),
                "plan",
                v(&["plan", "undo", "--bogus"]),
            ),
            (
                "restore",
                v(&["restore", "d"]),
                "restore",
                v(&["restore", "nope"]),
            ),
            (
                "delete d again",
                v(&["delete", "d"]),
                "delete",
                v(&["delete", "nope"]),
            ),
            ("undo", v(&["undo"]), "restore", v(&["undo", "--bogus"])),
            (
                "trash empty",
                v(&["trash", "empty", "--yes"]),
                "trash-empty",
                v(&["trash", "empty", "--older-than", "nope"]),
            ),
        ]
    };

    let mut covered = BTreeSet::new();
    for (command, ok_args, schema, fail_args) in &cases {
        let mut args: Vec<&str> = ok_args.iter().map(String::as_str).collect();
        args.extend(["--format", "json"]);
        let run = env.gw(&args);
        let v = run.envelope(schema);
        assert_eq!(v["ok"], true, "{command} should succeed:\n{run}");
        assert_eq!(run.status, 0, "{command}:\n{run}");

        let mut args: Vec<&str> = fail_args.iter().map(String::as_str).collect();
        args.extend(["--format", "json"]);
        let run = env.gw(&args);
        let v = run.envelope("envelope");
        assert_eq!(v["ok"], false, "{command} should fail:\n{run}");
        assert_ne!(run.status, 0, "{command}:\n{run}");
        covered.insert(command.to_string());
    }
    // `delete` itself, by name (the case above created the workspace it deletes).
    let run = env.gw(&["create", "d2", "-b", "d2", "-r", "web", "--format", "json"]);
    run.envelope("create");
    env.gw(&["delete", "d2", "--format", "json"])
        .success()
        .envelope("delete");
    // Without a configuration, every command that needs one says so in an envelope.
    let run = env.gw_env(
        &env.root,
        &["list", "--format", "json"],
        &[("GW_HOME", s(&empty))],
    );
    assert_eq!(run.envelope("envelope")["error"]["code"], "NOT_INITIALIZED");

    let mut listed = BTreeSet::new();
    for c in subcommands(&env, &[]) {
        let subs = subcommands(&env, &[&c]);
        if subs.is_empty() || c == "prune" {
            listed.insert(c.clone());
        }
        for sub in subs {
            listed.insert(format!("{c} {sub}"));
        }
    }
    let missing: Vec<_> = listed.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "commands without a machine-mode case: {missing:?}"
    );
    env.assert_git_agrees_with_state();
}
