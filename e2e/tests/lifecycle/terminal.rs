//! What a person at a terminal sees, in a real pseudo-terminal: tables that align in colour
//! and fit the width, pickers that filter and always give the cursor back, live progress
//! on stderr (never stdout), completion of workspace names in real shells, and the shell
//! integration's hint. With `GW_UPDATE_CAPTURES=1` the screens are also written to
//! `docs/captures/`, which `docs/terminal.md` shows.
//!
//! The modules below hold the second round (issue 30), one per finding: the shell never
//! stranded, a missing workspace, cancelling, `--dry-run`, help, typos, failures shown,
//! doctor, and the details.

mod cancel;
mod details;
mod doctor;
mod dry_run;
mod failures;
mod help;
mod missing;
mod shell;
mod typos;

use std::path::Path;

use e2e::{Stdout, Term, TestEnv, require, s};

const NARROW: (u16, u16) = (80, 30);
const WIDE: (u16, u16) = (160, 30);

/// Saves a screen for the docs when asked to.
fn capture(name: &str, text: &str) {
    if std::env::var_os("GW_UPDATE_CAPTURES").is_some() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/captures");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.txt")), text).unwrap();
    }
}

/// Runs `gw args` in a terminal of `size` and returns it once `gw` has exited.
fn run(env: &TestEnv, cwd: &Path, args: &[&str], size: (u16, u16)) -> Term {
    let mut t = env.terminal("gw", args, cwd, size, Stdout::Terminal);
    let st = t.finish();
    assert!(st.success(), "gw {args:?}: {st}\n{}", t.text());
    t
}

/// The display column where `needle` starts in `line`.
fn column(line: &str, needle: &str) -> Option<usize> {
    line.find(needle).map(|i| line[..i].chars().count())
}

#[test]
fn tables_align_in_colour_and_fit_80_and_160_columns() {
    let env = TestEnv::with_repos(&["api", "web", "svc-auth"]);
    env.create("feat-login", "feat/login", "api,web");
    env.create(
        "fix-token",
        "fix/token-expiry-when-the-clock-of-the-identity-provider-drifts-by-more-than-a-minute",
        "api,web,svc-auth",
    );
    let inside = env.ws("feat-login").join("api");
    for (size, name) in [(NARROW, "list-80"), (WIDE, "list-160")] {
        let t = run(&env, &inside, &["list"], size);
        let raw = String::from_utf8_lossy(t.raw()).into_owned();
        assert!(
            raw.contains("\x1b[1m"),
            "headers and names are bold: {raw:?}"
        );
        let text = t.text();
        capture(name, &text);
        let lines: Vec<&str> = text.lines().collect();
        let header = lines[0];
        assert_eq!(t.wrapped_rows(), 0, "no line wraps at {}:\n{text}", size.0);
        // Every column starts where its header does, colour or not.
        let branch = column(header, "Branch").unwrap();
        let repos = column(header, "Repos").unwrap();
        for (line, want) in [(lines[1], "feat/login"), (lines[2], "fix/token")] {
            assert_eq!(column(line, want), Some(branch), "{text}");
        }
        assert_eq!(column(lines[1], "api, web"), Some(repos), "{text}");
        // The workspace the shell is in is marked.
        assert!(lines[1].starts_with("* feat-login"), "{text}");
        assert!(lines[2].starts_with("  fix-token"), "{text}");
        if size == NARROW {
            assert!(
                text.contains('…'),
                "the long branch is cut at 80 columns:\n{text}"
            );
        } else {
            assert!(
                !text.contains('…'),
                "nothing is cut at 160 columns:\n{text}"
            );
        }
    }

    // doctor's issues are read in full: too wide for 80 columns, they become a list.
    std::fs::remove_dir_all(env.ws("fix-token").join("svc-auth")).unwrap();
    for (size, name) in [(NARROW, "doctor-80"), (WIDE, "doctor-160")] {
        let mut t = env.terminal("gw", &["doctor"], &env.root, size, Stdout::Terminal);
        t.finish();
        let text = t.text();
        capture(name, &text);
        assert_eq!(t.wrapped_rows(), 0, "no line wraps at {}:\n{text}", size.0);
        assert!(
            !text.contains('…'),
            "doctor never cuts an issue short:\n{text}"
        );
        if size == NARROW {
            assert!(text.contains("Issue:"), "a list at 80 columns:\n{text}");
        }
    }
}

/// Each kind of picker, left with Esc and with Ctrl-C: a quiet `cancelled`, exit 8, the
/// cursor visible again and nothing changed — and the same screen for both keys, the
/// prompt taken away and `cancelled` said once (issue 30, item 3).
#[test]
fn every_picker_gives_the_cursor_back_on_esc_and_ctrl_c() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("feat-login", "feat/login", "api");
    env.create("fix-token", "fix/token", "web");
    let inside = env.ws("feat-login").join("api");
    let cases: &[(&str, &[&str], &Path, &str)] = &[
        ("select", &["go"], &env.root, "Workspace"),
        (
            "select (status outside a workspace)",
            &["status"],
            &env.root,
            "Workspace",
        ),
        (
            "multi-select",
            &["delete"],
            &env.root,
            "Delete which workspaces?",
        ),
        ("text", &["create", "-r", "api"], &env.root, "Branch"),
        (
            "confirm",
            &["create", "again", "-b", "again", "-r", "web", "--replace"],
            &inside,
            "replace it?",
        ),
    ];
    let before = env.snapshot();
    for (kind, args, cwd, prompt) in cases {
        let mut screens = Vec::new();
        for (key, name) in [("\x1b", "Esc"), ("\x03", "Ctrl-C")] {
            let mut t = env.terminal("gw", args, cwd, NARROW, Stdout::Terminal);
            t.wait_for_text(prompt);
            t.send(key);
            let st = t.finish();
            let text = t.text();
            assert_eq!(st.code(), Some(8), "{kind} + {name}: exit 8\n{text}");
            assert!(
                !t.screen().hide_cursor(),
                "{kind} + {name}: the cursor is visible again\n{text}"
            );
            assert!(text.contains("cancelled"), "{kind} + {name}:\n{text}");
            assert!(!text.contains("error"), "{kind} + {name}: quietly\n{text}");
            cancel::assert_one_quiet_cancel(&format!("{kind} + {name}"), &t);
            assert!(
                !text.contains(prompt),
                "{kind} + {name}: the prompt is gone\n{text}"
            );
            screens.push(text);
        }
        assert_eq!(screens[0], screens[1], "{kind}: Esc and Ctrl-C alike");
    }
    env.assert_unchanged(&before);
}

#[test]
fn multi_select_filters_as_you_type() {
    let env = TestEnv::with_repos(&["api"]);
    for name in ["old-a", "old-b", "keep-me"] {
        env.create(name, name, "api");
    }
    let mut t = env.terminal("gw", &["delete"], &env.root, NARROW, Stdout::Terminal);
    t.wait_for_text("Delete which workspaces?");
    t.send("keep");
    t.wait_for("the list filtered to keep-me", |s| {
        let c = s.contents();
        c.contains("keep-me") && !c.contains("old-a")
    });
    capture("delete-picker-filtered", &t.text());
    t.send(" \r");
    let st = t.finish();
    assert!(st.success(), "{}", t.text());
    assert_eq!(env.workspace_names(), ["old-a", "old-b"]);
    env.assert_git_agrees_with_state();
}

#[test]
fn create_draws_progress_on_stderr_and_nothing_on_stdout() {
    let env = TestEnv::new();
    let mono = env.repo("mono");
    for d in 0..100 {
        let dir = mono.join(format!("d{d:03}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..200 {
            std::fs::write(dir.join(format!("f{f:03}.txt")), format!("{d} {f}\n")).unwrap();
        }
    }
    env.git(&mono, &["add", "."]);
    env.git(&mono, &["commit", "-q", "-m", "20,000 files"]);
    env.git(&mono, &["push", "-q", "origin", "main"]);
    env.gw(&["init", s(&env.repos)]).success();

    for (name, extra) in [("text", &[][..]), ("json", &["--format", "json"][..])] {
        let ws = format!("big-{name}");
        let mut args = vec!["create", ws.as_str(), "-b", ws.as_str(), "-r", "mono"];
        args.extend_from_slice(extra);
        let mut t = env.terminal("gw", &args, &env.root, WIDE, Stdout::Pipe);
        let stdout = t.stdout_text();
        let st = t.finish();
        assert!(st.success(), "{name}: {st}\n{}", t.text());
        let frames = String::from_utf8_lossy(t.raw()).into_owned();
        // The last 2,000 bytes or so, from a character's start (a spinner is 3 bytes).
        let from = (frames.len().saturating_sub(2000)..frames.len())
            .find(|i| frames.is_char_boundary(*i))
            .unwrap_or(frames.len());
        let tail = &frames[from..];
        // The checkout's own count (20,000 files and the README), as git reports it, drawn
        // live for the repository, redrawn several times.
        assert!(
            frames.contains("/20001") && frames.contains("mono"),
            "{name}: progress frames on stderr: {tail:?}"
        );
        assert!(
            frames.matches("updating files").count() > 1,
            "{name}: {tail:?}"
        );
        if name == "text" {
            // A frame from the middle of the checkout, as the screen showed it.
            let mut screen = vt100::Parser::new(WIDE.1, WIDE.0, 0);
            for chunk in t.raw().chunks(512) {
                screen.process(chunk);
                let rows: Vec<String> = screen.screen().rows(0, WIDE.0).collect();
                let text = rows
                    .iter()
                    .map(|r| r.trim_end())
                    .collect::<Vec<_>>()
                    .join("\n");
                let done = text.find("/20001").map(|i| {
                    let digits = text[..i].rsplit(' ').next().unwrap_or("");
                    digits.parse::<u64>().unwrap_or(0)
                });
                if text.contains("updating files") && done.is_some_and(|d| d > 5000) {
                    capture("create-progress", &(text.trim_end().to_string() + "\n"));
                    break;
                }
            }
        }
        for marker in ["updating files", "checking out", "\x1b["] {
            assert!(
                !stdout.contains(marker),
                "{name}: stdout has no progress: {stdout:?}"
            );
        }
        if name == "json" {
            let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one envelope");
            assert_eq!(doc["ok"], true, "{stdout}");
        }
        assert!(env.ws(&ws).join("mono/d099/f199.txt").is_file());
    }
    env.assert_git_agrees_with_state();
}

#[test]
fn go_without_the_integration_prints_the_path_and_a_hint() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    let t = run(&env, &env.root, &["go", "ws"], NARROW);
    let text = t.text();
    assert!(
        text.starts_with(&format!("{}\n", s(&env.ws("ws")))),
        "{text}"
    );
    assert!(text.contains("shell-init"), "one hint line: {text}");
}

/// Types `gw go fe<Tab>` into an interactive `shell` that loaded grove's completions with
/// `setup`, and waits for the completed workspace name.
fn completes_in(env: &TestEnv, shell: &str, args: &[&str], setup: &str) {
    let mut t = env.terminal(shell, args, &env.root, WIDE, Stdout::Terminal);
    // The shell reads ahead of its prompt: type only once the setup has run (the quotes
    // keep the echo of the typed line from matching).
    t.send(&format!("{setup}; clear; echo 'ready''-now'\r"));
    t.wait_for_text("ready-now");
    t.send("gw go fe\t");
    t.wait_for(&format!("{shell} to complete `gw go fe`"), |s| {
        s.contents().contains("gw go feat-login")
    });
    capture(&format!("complete-{shell}"), &t.text());
    t.send("\x15exit\r");
}

#[test]
fn gw_go_tab_completes_workspace_names_in_bash_zsh_and_fish() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat-login", "feat/login", "api");
    env.create("other", "other", "api");
    if require("bash") {
        completes_in(
            &env,
            "bash",
            &["--norc", "--noprofile", "-i"],
            "PS1='$ '; source <(gw completions bash)",
        );
    }
    if require("zsh") {
        completes_in(
            &env,
            "zsh",
            &["-f", "-i"],
            "PS1='$ '; autoload -Uz compinit && compinit -u; source <(gw completions zsh)",
        );
    }
    if require("fish") {
        completes_in(
            &env,
            "fish",
            &["--no-config", "-i"],
            "gw completions fish | source",
        );
    }
}

/// nushell: the generated script is parsed and run by nu itself (installed from npm by
/// .ci/run), and its completer returns workspace names and comma-list repositories.
#[test]
fn nu_completion_script_parses_and_completes() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("feat-login", "feat/login", "api");
    if !require("nu") {
        return;
    }
    let script = env.root.join("tmp/gw-completions.nu");
    std::fs::write(&script, env.gw(&["completions", "nu"]).success().stdout).unwrap();
    let run = env.shell(
        "nu",
        &env.root,
        &format!(
            "source {}; print (nu-complete gw 'gw go fe' | get value | to nuon); print (nu-complete gw 'gw create -r api,w' | get value | to nuon)",
            s(&script)
        ),
    );
    assert_eq!(run.status, 0, "{run}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines, ["[feat-login]", "[\"api,web\"]"], "{run}");

    // The shell integration carries the same completer, and still changes directory.
    let init = env.root.join("tmp/grove.nu");
    std::fs::write(&init, env.gw(&["shell-init", "nu"]).success().stdout).unwrap();
    let run = env.shell(
        "nu",
        &env.root,
        &format!(
            "source {}; print (nu-complete gw 'gw status f' | get value | to nuon); gw go feat-login; print (pwd)",
            s(&init)
        ),
    );
    let lines: Vec<&str> = run.stdout.lines().collect();
    // `gw go` prints the path too (its stdout is not a terminal), then the shell is there.
    let ws = env.ws("feat-login");
    assert_eq!(lines, ["[feat-login]", s(&ws), s(&ws)], "{run}");
}
