//! Item 3: one way to be cancelled. Ctrl-C during `gw create` or `gw run`, and Esc or Ctrl-C
//! in any picker (tested with the pickers, in `terminal.rs`), leave no progress on the
//! screen and say it once (`cancelled`, and what
//! was rolled back), the same for Esc and Ctrl-C, with exit 8 (`CANCELLED`) in text and
//! JSON mode alike — `gw run` stopped by Ctrl-C too, so `gw run && deploy` stops. A signal
//! is never lost behind a write blocked on a stalled pipe.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use e2e::{Stdout, Term, TestEnv, WAIT_FOR_RELEASE, s};

use super::NARROW;

/// The braille spinners indicatif draws.
const SPINNERS: &str = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";

/// What is left on the screen: no spinner, one line saying `cancelled`, and nothing on an
/// `error:` line.
pub(super) fn assert_one_quiet_cancel(what: &str, t: &Term) {
    let text = t.text();
    let raw = String::from_utf8_lossy(t.raw()).into_owned();
    let tail: String = raw
        .chars()
        .rev()
        .take(600)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(
        !text.chars().any(|c| SPINNERS.contains(c)),
        "{what}: a spinner is left:\n{text}\n{tail:?}"
    );
    let said: Vec<&str> = text.lines().filter(|l| l.contains("cancel")).collect();
    assert_eq!(said.len(), 1, "{what}: said once:\n{text}\n{tail:?}");
    assert!(said[0].starts_with("cancelled"), "{what}:\n{text}");
    assert!(!text.contains("error"), "{what}: quietly:\n{text}");
    assert!(
        !t.screen().hide_cursor(),
        "{what}: the cursor is back\n{text}"
    );
}

/// A repository whose `.grove.toml` runs `setup` and `run` slowly, approved.
fn slow_repo(env: &TestEnv, name: &str, grove_toml: &str) {
    let dir = env.repos.join(name);
    env.commit(&dir, ".grove.toml", grove_toml, "slow commands");
    env.git(&dir, &["push", "-q", "origin", "main"]);
    env.trust(name).success();
}

#[test]
fn ctrl_c_during_create_rolls_back_and_says_so_once() {
    let mut env = TestEnv::with_repos(&["api", "web"]);
    // git stops at adding the worktrees until the test lets it go on, so that Ctrl-C
    // comes in the middle of the transaction.
    for (json, name) in [(false, "text"), (true, "json")] {
        let gate = env.fake_git(&[("worktree add", WAIT_FOR_RELEASE)]);
        let ws = format!("c-{name}");
        let mut args = vec!["create", ws.as_str(), "-b", ws.as_str(), "-r", "api,web"];
        if json {
            args.extend(["--format", "json"]);
        }
        let mut t = env.terminal("gw", &args, &env.root, NARROW, Stdout::Pipe);
        gate.wait_started(1);
        t.wait_for_text("creating");
        t.send("\x03");
        // The step under way finishes (git is never cut short), then everything is undone.
        gate.release();
        let out = t.stdout_text();
        let st = t.finish();
        assert_eq!(st.code(), Some(8), "{name}: exit 8\n{}", t.text());
        if json {
            let v: serde_json::Value = serde_json::from_str(&out).expect("one envelope");
            assert_eq!(v["error"]["code"], "CANCELLED", "{out}");
        } else {
            assert_one_quiet_cancel("create", &t);
            assert!(t.text().contains("rolled back"), "{}", t.text());
        }
        assert!(!env.ws(&ws).exists(), "{name}: rolled back");
    }
    env.assert_git_agrees_with_state();
}

/// Ctrl-C while `.grove.toml`'s setup runs (the workspace is made by then): the setup is
/// stopped, the screen is clean, and it is said once.
#[test]
fn ctrl_c_during_setup_leaves_a_clean_screen() {
    let env = TestEnv::with_repos(&["api"]);
    slow_repo(&env, "api", "setup = \"echo setup-started; sleep 30\"\n");
    let mut t = env.terminal(
        "gw",
        &["create", "s", "-b", "s", "-r", "api"],
        &env.root,
        NARROW,
        Stdout::Pipe,
    );
    t.wait_for_text("setup-started");
    t.send("\x03");
    let st = t.finish();
    assert_eq!(st.code(), Some(8), "{}", t.text());
    assert_one_quiet_cancel("setup", &t);
}

#[test]
fn ctrl_c_stops_run_with_exit_8_and_a_clean_screen() {
    let env = TestEnv::with_repos(&["api"]);
    slow_repo(
        &env,
        "api",
        "run = \"echo api-up; sleep 30\"\npost_run = \"echo api cleaned up\"\n",
    );
    env.create("r", "r", "api");
    for json in [false, true] {
        let mut args = vec!["run", "r"];
        if json {
            args.extend(["--format", "json"]);
        }
        let mut t = env.terminal("gw", &args, &env.root, NARROW, Stdout::Pipe);
        t.wait_for_text("api-up");
        t.send("\x03");
        let out = t.stdout_text();
        let st = t.finish();
        assert_eq!(st.code(), Some(8), "json {json}: exit 8\n{}", t.text());
        let text = t.text();
        assert!(!text.chars().any(|c| SPINNERS.contains(c)), "{text}");
        assert!(!text.contains("stopping every process"), "{text}");
        // The post_run line starts at the left edge, with its prefix.
        assert!(
            text.lines().any(|l| l.starts_with("api | api cleaned up")),
            "{text}"
        );
        if json {
            let v: serde_json::Value = serde_json::from_str(&out).expect("one envelope");
            assert_eq!(v["error"]["code"], "CANCELLED", "{out}");
            assert_eq!(v["result"]["repos"][0]["outcome"], "stopped", "{out}");
        } else {
            let said: Vec<&str> = text.lines().filter(|l| l.contains("cancel")).collect();
            assert_eq!(said.len(), 1, "{text}");
        }
    }
}

/// `gw list` writing into a pipe nobody reads is blocked in `write`; SIGINT and SIGTERM
/// still end it (exit 8). No clock is asserted on: the test waits for the exit, and fails
/// (rather than hangs) if it never comes.
#[test]
fn a_signal_ends_gw_list_blocked_on_a_stalled_pipe() {
    let env = TestEnv::with_repos(&["api"]);
    // Enough workspaces for several times a pipe's 64 KiB.
    let records: Vec<serde_json::Value> = (0..3000)
        .map(|i| {
            let name = format!("workspace-with-a-long-name-{i:05}");
            serde_json::json!({
                "name": name,
                "path": s(&env.workspace_dir().join(&name)),
                "branch": format!("feat/{name}"),
                "created_at": "2026-01-01T00:00:00Z",
                "repos": [],
            })
        })
        .collect();
    std::fs::write(env.state_path(), serde_json::to_string(&records).unwrap()).unwrap();
    for (signal, format) in [
        (rustix::process::Signal::INT, "text"),
        (rustix::process::Signal::TERM, "text"),
        (rustix::process::Signal::INT, "json"),
    ] {
        let mut cmd = env.gw_cmd(&["list", "--format", format]);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        // The pipe is full: gw is blocked writing.
        let deadline = Instant::now() + Duration::from_secs(60);
        while rustix::io::ioctl_fionread(&stdout).unwrap_or(0) < 60_000 {
            assert!(
                Instant::now() < deadline,
                "gw list never filled the pipe: {:?}",
                rustix::io::ioctl_fionread(&stdout)
            );
            assert!(child.try_wait().unwrap().is_none(), "gw list ended early");
            std::thread::sleep(Duration::from_millis(10));
        }
        let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{signal:?} did not end gw list --format {format} blocked on the pipe");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.code(), Some(8), "{signal:?} {format}");
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        drop(stdout);
    }
}
