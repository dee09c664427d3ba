//! Text that did not come from grove reaches a terminal escaped (finding 2 of issue 28): a
//! repository whose directory name carries an OSC 52 clipboard write, a branch with a
//! bidirectional override, a remote URL and a hand-edited `state.json` record holding ESC,
//! BEL and CR, and arguments echoed in errors. Every text command's output, captured in a
//! real pseudo-terminal, holds no control byte but the ones grove emits itself (colour,
//! and the progress display's cursor movements); JSON stays exact.

use std::path::Path;

use e2e::{Stdout, TestEnv, s};

/// ESC, an OSC 52 clipboard write ended by BEL, CR, U+202E (right-to-left override) and a
/// device status request (`ESC [ 6 n`, which makes a terminal type an answer).
const HOSTILE: &str = "ev\x1b]52;c;aGk=\x07x\r\u{202e}\x1b[6n";

/// What grove's own sequences may end with: SGR colour (`m`), and the progress display's
/// erase and cursor moves (`K`, `J`, `A`–`D`, `G`, `h`/`l` for the cursor's visibility).
const GROVE_FINALS: &str = "mKJABCDGhl";

/// The control characters in `raw` that grove did not emit itself: anything but a newline,
/// the terminal's CR before it, a tab (`-o tsv`'s separator), and CSI sequences ending in
/// one of [`GROVE_FINALS`].
fn foreign_controls(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(raw);
    let chars: Vec<char> = text.chars().collect();
    let mut bad = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' | '\t' => {}
            '\r' if matches!(chars.get(i + 1), Some('\n') | Some('\x1b')) => {}
            '\x1b' if chars.get(i + 1) == Some(&'[') => {
                let mut j = i + 2;
                while j < chars.len() && (chars[j].is_ascii_digit() || ";?".contains(chars[j])) {
                    j += 1;
                }
                match chars.get(j) {
                    Some(f) if GROVE_FINALS.contains(*f) => {
                        i = j + 1;
                        continue;
                    }
                    other => bad.push(format!("CSI ending {other:?} at {i}")),
                }
            }
            c if c.is_control() || is_bidi(c) => bad.push(format!("{c:?} at {i}")),
            _ => {}
        }
        i += 1;
    }
    bad
}

fn is_bidi(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Runs `gw args` in a terminal (stdout and stderr both on it) and asserts that it wrote
/// no foreign control byte; returns the screen's text.
#[track_caller]
fn assert_safe(env: &TestEnv, cwd: &Path, args: &[&str]) -> String {
    let mut t = env.terminal("gw", args, cwd, (200, 50), Stdout::Terminal);
    t.finish();
    let bad = foreign_controls(t.raw());
    assert!(
        bad.is_empty(),
        "gw {args:?} wrote control bytes that are not grove's: {bad:?}\n{:?}",
        String::from_utf8_lossy(t.raw())
    );
    t.text()
}

/// A repository in the repo dir named `dir_name`, with `origin` set to `remote` (never
/// fetched) and a branch `branch`.
fn hostile_repo(env: &TestEnv, dir_name: &str, remote: &str, branch: &str) {
    let path = env.repos.join(dir_name);
    std::fs::create_dir_all(&path).unwrap();
    env.git(&path, &["init", "-q", "-b", "main"]);
    env.commit(&path, "README.md", "hostile\n", "initial");
    env.git(&path, &["remote", "add", "origin", remote]);
    env.git(&path, &["branch", branch]);
}

#[test]
fn hostile_names_reach_the_terminal_escaped() {
    let env = TestEnv::with_repos(&["api"]);
    let repo = format!("r-{HOSTILE}");
    let branch = "feat\u{202e}gnp.exe";
    hostile_repo(
        &env,
        &repo,
        &format!("https://example.com/{HOSTILE}/x.git"),
        branch,
    );
    let root = env.root.clone();
    // Created in a terminal: the progress names the repository.
    let repos = format!("api,{repo}");
    assert_safe(
        &env,
        &root,
        &["create", "w1", "-b", "feat/w1", "-r", &repos],
    );
    let wt = env.ws("w1").join(&repo);
    assert!(wt.is_dir(), "the workspace was created");
    // The worktree's live branch comes from git's refs.
    env.git(&wt, &["switch", "-q", branch]);
    // A hand-edited record.
    env.edit_state(|st| {
        let mut rec = st[0].clone();
        rec["name"] = HOSTILE.into();
        rec["branch"] = HOSTILE.into();
        rec["path"] = format!("{}/{HOSTILE}", s(&env.workspace_dir())).into();
        rec["created_at"] = HOSTILE.into();
        rec["repos"][0]["repo_name"] = HOSTILE.into();
        rec["repos"][0]["branch"] = HOSTILE.into();
        rec["source"] = serde_json::json!({"provider": HOSTILE, "url": HOSTILE, "ref": HOSTILE, "title": HOSTILE});
        st.as_array_mut().unwrap().push(rec);
    });
    // A plugin whose file name holds the payload.
    let plugins = env.plugins_dir();
    std::fs::create_dir_all(&plugins).unwrap();
    e2e::write_executable(&plugins.join(format!("gw-{HOSTILE}")), "#!/bin/sh\n");

    let inside = wt.clone();
    let commands: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["list", "-s"],
        vec!["list", "-o", "tsv"],
        vec!["list", "-o", "name"],
        vec!["list", "-o", "path"],
        vec!["status", "w1"],
        vec!["status", "w1", "-o", "tsv"],
        vec!["ws", "show", "w1"],
        vec!["ws", "show", "w1", "-o", "tsv"],
        vec!["ws", "show", HOSTILE],
        vec!["repos"],
        vec!["repos", "-o", "tsv"],
        vec!["doctor"],
        vec!["doctor", "-o", "tsv"],
        vec!["prune", "--min-age", "0s"],
        vec!["plugin", "list"],
        vec!["context"],
        // Arguments echoed in errors.
        vec![HOSTILE],
        vec!["status", HOSTILE],
        vec!["delete", HOSTILE, "--yes"],
        vec!["create", "w2", "-b", "w2", "-r", HOSTILE],
        vec!["add-repo", "w1", "-r", HOSTILE],
        vec!["go", HOSTILE],
        vec!["--color", HOSTILE, "list"],
    ];
    let mut shown_escaped = 0;
    for args in &commands {
        let cwd = if args[0] == "context" { &inside } else { &root };
        let text = assert_safe(&env, cwd, args);
        if text.contains("\\e]52;") {
            shown_escaped += 1;
        }
    }
    // The payload was shown (visibly escaped), not dropped.
    assert!(
        shown_escaped >= 10,
        "the escaped payload appears in most outputs ({shown_escaped})"
    );
    let list = assert_safe(&env, &root, &["list"]);
    assert!(
        list.contains("ev\\e]52;c;aGk=\\x07x\\r\\u{202e}\\e[6n"),
        "{list}"
    );
    let status = assert_safe(&env, &root, &["status", "w1"]);
    assert!(status.contains("feat\\u{202e}gnp.exe"), "{status}");
    let plugins = assert_safe(&env, &root, &["plugin", "list"]);
    assert!(
        plugins.contains("gw-ev\\e]52;"),
        "a plugin that cannot run is named: {plugins}"
    );

    // JSON carries the exact text.
    let out = env.gw(&["list", "--format", "json"]).success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["result"]["workspaces"][1]["name"], HOSTILE);
    let out = env.gw(&["list", "-o", "json"]).success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v[1]["branch"], HOSTILE);
}

/// A hook's and `gw run`'s processes are the user's own programs: their output passes
/// through as written, while the names around it are escaped.
#[test]
fn hook_output_passes_through() {
    let env = TestEnv::with_repos(&["api"]);
    env.append_config(
        "[hooks.post_create]\ncommand = \"printf 'hook:\\\\033[1mbold\\\\033[0m\\\\n'\"\nstream = true\n",
    );
    let root = env.root.clone();
    let mut t = env.terminal(
        "gw",
        &["create", "w1", "-b", "w1", "-r", "api"],
        &root,
        (120, 30),
        Stdout::Terminal,
    );
    assert!(t.finish().success(), "{}", t.text());
    let raw = String::from_utf8_lossy(t.raw()).into_owned();
    assert!(raw.contains("hook:\x1b[1mbold\x1b[0m"), "{raw:?}");
}

#[test]
fn the_checker_finds_every_foreign_byte() {
    assert!(foreign_controls(b"plain\r\n\x1b[1mbold\x1b[0m\r\n\x1b[2K\x1b[1A").is_empty());
    for bad in [
        "a\x1b]52;c;x\x07",
        "a\x07",
        "a\rb",
        "a\u{202e}b",
        "\x1b[6n",
        "\u{9b}31m",
    ] {
        assert!(!foreign_controls(bad.as_bytes()).is_empty(), "{bad:?}");
    }
}
