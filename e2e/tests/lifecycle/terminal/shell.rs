//! Item 1: the shell is never stranded. With the shell integration, a command that removes
//! or moves the directory the shell stands in (`delete`, `rename`, `remove-repo`, `prune`)
//! moves the shell somewhere that exists: where it was before `gw go`, else the workspace's
//! parent; a renamed workspace takes the shell along. Without the integration, a hint says
//! where to go. Typed into real bash, zsh and fish.

use e2e::{Stdout, Term, TestEnv, require, s};

use super::WIDE;

/// An interactive `shell` with grove's integration loaded by `setup`.
fn shell(env: &TestEnv, shell: &str, args: &[&str], setup: &str) -> Term {
    let mut t = env.terminal(shell, args, &env.root, WIDE, Stdout::Terminal);
    t.send(&format!("{setup}; clear; echo 'ready''-now'\r"));
    t.wait_for_text("ready-now");
    t
}

/// An interactive bash with grove's integration loaded.
fn bash(env: &TestEnv) -> Term {
    shell(
        env,
        "bash",
        &["--norc", "--noprofile", "-i"],
        "PS1='$ '; eval \"$(gw shell-init bash)\"",
    )
}

/// Types `line`, then waits for the shell to print `P<n>=<dir>` (the shell's directory,
/// printed only when it exists) and returns the directory.
fn cd_after(t: &mut Term, n: u32, line: &str) -> String {
    t.send(&format!(
        "{line}; test -d \"$PWD\" && printf 'P%s=%s\\n' {n} \"$PWD\"\r"
    ));
    let marker = format!("P{n}=");
    t.wait_for(
        &format!("`{marker}` (the shell in a directory that exists)"),
        |s| s.contents().lines().any(|l| l.starts_with(&marker)),
    );
    let text = t.text();
    let line = text.lines().find(|l| l.starts_with(&marker)).unwrap();
    line[marker.len()..].trim_end().to_string()
}

fn never_stranded(shell_name: &str, args: &[&str], setup: &str) {
    let env = TestEnv::with_repos(&["api", "web"]);
    for ws in ["one", "two", "four", "five"] {
        env.create(ws, ws, "api,web");
    }
    let mut t = shell(&env, shell_name, args, setup);
    let go = |ws: &str| format!("gw go {ws} && cd api");
    // delete: back where the shell was before `gw go`.
    let at = cd_after(&mut t, 1, &format!("{}; gw delete one", go("one")));
    assert_eq!(at, s(&env.root), "{shell_name}: delete\n{}", t.text());
    // rename: the shell moves with the workspace.
    let at = cd_after(
        &mut t,
        2,
        &format!("{}; gw rename two --to three", go("two")),
    );
    assert_eq!(
        at,
        s(&env.ws("three").join("api")),
        "{shell_name}: rename\n{}",
        t.text()
    );
    // remove-repo: the workspace holding the removed worktree.
    let at = cd_after(
        &mut t,
        3,
        &format!("{}; gw remove-repo four -r api", go("four")),
    );
    assert_eq!(
        at,
        s(&env.ws("four")),
        "{shell_name}: remove-repo\n{}",
        t.text()
    );
    // prune: where the shell was before `gw go` is gone too (four was pruned): the
    // workspaces' parent.
    let at = cd_after(
        &mut t,
        4,
        &format!("{}; gw prune --min-age 0 --yes", go("five")),
    );
    assert_eq!(
        at,
        s(&env.workspace_dir()),
        "{shell_name}: prune\n{}",
        t.text()
    );
    assert!(env.workspace_names().is_empty(), "{}", t.text());
    t.send("exit\r");
    let leftovers = env.leftover_cd_files();
    assert!(
        leftovers.is_empty(),
        "{shell_name}: cd files removed: {leftovers:?}"
    );
}

#[test]
fn bash_is_never_stranded() {
    never_stranded(
        "bash",
        &["--norc", "--noprofile", "-i"],
        "PS1='$ '; eval \"$(gw shell-init bash)\"",
    );
}

#[test]
fn zsh_is_never_stranded() {
    if require("zsh") {
        never_stranded(
            "zsh",
            &["-f", "-i"],
            "PS1='$ '; eval \"$(gw shell-init zsh)\"",
        );
    }
}

#[test]
fn fish_is_never_stranded() {
    if require("fish") {
        never_stranded(
            "fish",
            &["--no-config", "-i"],
            "gw shell-init fish | source",
        );
    }
}

/// Without the integration nothing can move the shell: a hint says where to go.
#[test]
fn without_the_integration_a_hint_says_where_to_go() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("gone", "gone", "api");
    let inside = env.ws("gone").join("api");
    let mut t = env.terminal("gw", &["delete", "gone"], &inside, WIDE, Stdout::Terminal);
    assert!(t.finish().success(), "{}", t.text());
    let text = t.text();
    assert!(
        text.contains("hint:") && text.contains(&format!("cd {}", s(&env.workspace_dir()))),
        "{text}"
    );
    assert!(text.contains("shell-init"), "{text}");
}

/// Through the integration, `gw go`'s picker is drawn in colour, as without it.
#[test]
fn the_go_picker_keeps_its_colour_through_the_integration() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat-login", "feat-login", "api");
    let mut t = bash(&env);
    let before = t.raw().len();
    t.send("gw go\r");
    t.wait_for_text("Workspace");
    t.wait_for("the picker's items", |s| {
        s.contents().contains("feat-login")
    });
    let drawn = String::from_utf8_lossy(&t.raw()[before..]).into_owned();
    // inquire draws the prompt's `?` in colour (a foreground colour sequence).
    assert!(
        drawn.contains("\x1b[38;5;") || drawn.contains("\x1b[3"),
        "{drawn:?}"
    );
    t.send("\r");
    let at = cd_after(&mut t, 9, "true");
    assert_eq!(at, s(&env.ws("feat-login")), "{}", t.text());
    // At a terminal the integration moves the shell; the path is not printed too.
    let path = s(&env.ws("feat-login")).to_string();
    assert!(
        !t.text().lines().any(|l| l.trim_end() == path),
        "{}",
        t.text()
    );
}

/// nushell (installed from npm by .ci/run) runs the same integration: a script, as nu has
/// no pty-driven test here.
#[test]
fn nu_is_never_stranded() {
    let env = TestEnv::with_repos(&["api", "web"]);
    for ws in ["one", "two"] {
        env.create(ws, ws, "api,web");
    }
    if !require("nu") {
        return;
    }
    let init = env.root.join("tmp/grove.nu");
    std::fs::write(&init, env.gw(&["shell-init", "nu"]).success().stdout).unwrap();
    let run = env.shell(
        "nu",
        &env.root,
        &format!(
            "source {}; gw go one; cd api; gw delete one; print (pwd); gw go two; cd web; gw rename two --to three; print (pwd)",
            s(&init)
        ),
    );
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        // `gw go` prints the path too: its stdout is not a terminal.
        [
            s(&env.ws("one")),
            s(&env.root),
            s(&env.ws("two")),
            s(&env.ws("three").join("web"))
        ],
        "{run}"
    );
}

/// bash runs each part of a pipeline in a subshell, so `gw plan rename A --to B | gw apply -`
/// from inside A cannot move the shell: the integration tells gw so, and gw prints the
/// hint it prints without the integration. Reproduced: nothing said the shell was left in
/// a directory that no longer exists.
#[test]
fn a_gw_in_a_bash_pipeline_says_where_to_go() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("two", "two", "api");
    let mut t = bash(&env);
    t.send(
        "gw go two && cd api; gw plan rename two --to three | gw apply -; echo 'piped''-done'\r",
    );
    t.wait_for_text("piped-done");
    let text = t.text();
    assert!(
        text.contains("hint:") && text.contains(&format!("cd {}", s(&env.ws("three").join("api")))),
        "{text}"
    );
}
