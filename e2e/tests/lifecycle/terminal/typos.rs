//! Item 6: typos handled evenly. A misspelt workspace, repository or preset name gets a
//! "did you mean"; an unknown repository is `REPO_NOT_FOUND` (exit 3) for add-repo and
//! remove-repo alike; a Go command that is gone names what replaced it; clap's own errors
//! look like gw's (`error:` in red, then `hint:` lines).

use e2e::{Stdout, TestEnv};

use super::NARROW;

/// `gw args` on a terminal: its exit code and the screen.
fn shown(env: &TestEnv, args: &[&str]) -> (Option<i32>, String, String) {
    let mut t = env.terminal("gw", args, &env.root, NARROW, Stdout::Terminal);
    let code = t.finish().code();
    (
        code,
        t.text(),
        String::from_utf8_lossy(t.raw()).into_owned(),
    )
}

#[test]
fn misspelt_names_get_a_did_you_mean() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("alpha", "alpha", "api");
    env.gw(&["preset", "add", "backend", "-r", "api,web"])
        .success();
    let cases: &[(&[&str], &str, &str, i32)] = &[
        (&["go", "alpah"], "alpha", "WORKSPACE_NOT_FOUND", 3),
        (&["status", "alpah"], "alpha", "WORKSPACE_NOT_FOUND", 3),
        (
            &["add-repo", "alpha", "-r", "wbe"],
            "web",
            "REPO_NOT_FOUND",
            3,
        ),
        (
            &["remove-repo", "alpha", "-r", "aip"],
            "api",
            "REPO_NOT_FOUND",
            3,
        ),
        (
            &["create", "x", "-b", "x", "-p", "backnd"],
            "backend",
            "PRESET_NOT_FOUND",
            3,
        ),
        (
            &["create", "x", "-b", "x", "-r", "ap"],
            "api",
            "REPO_NOT_FOUND",
            3,
        ),
    ];
    for (args, meant, code, exit) in cases {
        let (st, text, _) = shown(&env, args);
        assert_eq!(st, Some(*exit), "gw {args:?}\n{text}");
        assert!(
            text.to_lowercase()
                .contains(&format!("did you mean `{meant}`")),
            "gw {args:?}: {text}"
        );
        let mut json = args.to_vec();
        json.extend(["--format", "json"]);
        let run = env.gw(&json).code(*exit);
        assert_eq!(run.error_code(), *code, "{run}");
        let v = run.json();
        assert_eq!(v["error"]["details"]["suggestions"][0], *meant, "{run}");
    }
    // A repository grove knows that is just not in the workspace: removal converges.
    env.gw(&["remove-repo", "alpha", "-r", "web"]).success();
    assert_eq!(env.workspace_repos("alpha"), ["api"]);
}

#[test]
fn removed_go_commands_name_their_replacement() {
    let env = TestEnv::with_repos(&["api"]);
    for (command, replacement) in [
        ("mcp-serve", "--format json"),
        ("explore", "gw repos"),
        ("wizard", "gw init"),
        ("announce", "removed"),
    ] {
        let (st, text, _) = shown(&env, &[command]);
        assert_eq!(st, Some(2), "{command}: {text}");
        assert!(text.contains(replacement), "{command}: {text}");
        assert!(!text.contains("unknown command"), "{command}: {text}");
        let run = env.gw(&[command, "--format", "json"]).code(2);
        assert_eq!(run.json()["error"]["details"]["removed"], true, "{run}");
    }
}

#[test]
fn clap_errors_look_like_gw_errors() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("golf", "golf", "api");
    for args in [
        &["delete", "golf", "--bogus"][..],
        &["rename", "golf"],
        &["list", "-o", "yaml"],
    ] {
        let (st, text, raw) = shown(&env, args);
        assert_eq!(st, Some(2), "{args:?}: {text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("error: "), "{args:?}:\n{text}");
        // `error:` in red, as gw's own errors.
        assert!(
            raw.contains("\x1b[31merror:") || raw.contains("\x1b[1;31merror:"),
            "{raw:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("hint: ") && l.contains("--help")),
            "{args:?}:\n{text}"
        );
        for l in &lines {
            assert!(
                l.starts_with("error: ") || l.starts_with("hint: ") || l.starts_with("  "),
                "{args:?}: a line neither error nor hint: {l:?}\n{text}"
            );
        }
        assert!(!text.contains("For more information"), "{text}");
    }
}

/// A misspelt command after `help`, `man` or a command group gets a did-you-mean, as `gw
/// craete` does; a bad value points at the help of the command it was given to.
#[test]
fn command_typos_after_help_and_man_and_value_errors_name_the_command() {
    let env = TestEnv::with_repos(&["api"]);
    for (args, fix) in [
        (&["help", "craete"][..], "Did you mean `create`?"),
        (&["man", "craete"], "Did you mean `create`?"),
        (
            &["preset", "ad", "x"],
            "Did you mean `add`? Run `gw preset --help`",
        ),
    ] {
        let (st, text, _) = shown(&env, args);
        assert_eq!(st, Some(2), "{args:?}: {text}");
        assert!(text.contains(fix), "{args:?}:\n{text}");
        let mut json = args.to_vec();
        json.extend(["--format", "json"]);
        let run = env.gw(&json).code(2);
        assert_eq!(run.error_code(), "USAGE", "{run}");
        assert!(run.json()["fix"].as_str().unwrap().contains(fix), "{run}");
    }
    let (st, text, _) = shown(&env, &["list", "-o", "tabel"]);
    assert_eq!(st, Some(2), "{text}");
    assert!(text.contains("`gw list --help` says more"), "{text}");
    let run = env.gw(&["list", "--format", "jsn"]).code(2);
    assert_eq!(run.json()["fix"], "Run `gw list --help` for usage", "{run}");
}
