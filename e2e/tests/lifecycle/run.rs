//! `gw run`: each repository's dev processes side by side, their outcomes, and that none
//! of them (nor anything they started) is left running afterwards.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use e2e::{TestEnv, live_in_group, repo_result, s};
use serde_json::Value;

/// Two repositories with a workspace `w` holding both.
fn setup() -> TestEnv {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "w", "-b", "feat/w", "-r", "api,web"])
        .success();
    env
}

/// Writes `repos/<repo>/.grove.toml` (in the main checkout, where grove reads it).
fn grove_toml(env: &TestEnv, repo: &str, text: &str) {
    std::fs::write(env.repos.join(repo).join(".grove.toml"), text).unwrap();
    // Approved as the user would (`gw trust`); a file grove cannot read is refused there.
    let _ = env.trust(repo);
}

/// A file each command appends its shell's pid to: the id of its process group.
fn pid_file(env: &TestEnv, repo: &str) -> PathBuf {
    env.root.join(format!("pids-{repo}"))
}

/// `echo $$ >> <pid file>; ` — the start of every command whose group the test checks.
fn record(env: &TestEnv, repo: &str) -> String {
    format!("echo $$ >> \"{}\"; ", s(&pid_file(env, repo)))
}

fn groups(env: &TestEnv, repo: &str) -> Vec<i32> {
    std::fs::read_to_string(pid_file(env, repo))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().expect("a pid"))
        .collect()
}

/// Every process group the repositories' commands ran in is gone.
#[track_caller]
fn assert_no_process_left(env: &TestEnv, repos: &[&str]) {
    for repo in repos {
        let groups = groups(env, repo);
        assert!(!groups.is_empty(), "{repo}'s commands recorded no group");
        for pgid in groups {
            let live = live_in_group(pgid);
            assert!(
                live.is_empty(),
                "{repo}: processes {live:?} of group {pgid} still run after gw run"
            );
        }
    }
}

#[test]
fn outcomes_exit_codes_and_one_envelope() {
    let env = setup();
    let post = env.root.join("post-api");
    grove_toml(
        &env,
        "api",
        &format!(
            "run = '{}echo hello from api; echo \"$GROVE_WORKSPACE $GROVE_REPO $GROVE_WORKTREE\"'\npost_run = '{}echo cleaned > \"{}\"'\n",
            record(&env, "api"),
            record(&env, "api"),
            s(&post)
        ),
    );
    grove_toml(
        &env,
        "web",
        &format!(
            "run = ['{}echo web starting', '{}echo web is failing >&2; exit 3']\npost_run = '{}exit 4'\n",
            record(&env, "web"),
            record(&env, "web"),
            record(&env, "web")
        ),
    );

    let run = env.gw(&["run", "w", "--format", "json"]).code(5);
    let v = run.envelope("run");
    assert_eq!(v["ok"], false, "{run}");
    assert_eq!(v["error"]["code"], "HOOK_FAILED", "{run}");
    assert_eq!(v["error"]["details"]["repos"], serde_json::json!(["web"]));
    // `post_run` runs after a failed `run` too; its failure is a warning.
    assert_eq!(
        v["warnings"],
        serde_json::json!(["web: post_run `echo $$ >> \"".to_string()
            + s(&pid_file(&env, "web"))
            + "\"; exit 4` failed (exit status 4)"]),
        "{run}"
    );
    let result = &v["result"];
    assert_eq!(result["workspace"], "w");
    assert_eq!(result["count"], 2);
    assert_eq!(result["stopped_by"], Value::Null);
    let api = repo_result(result, "api");
    assert_eq!(api["outcome"], "exited", "{run}");
    assert_eq!(api["exit_code"], 0);
    assert_eq!(api["detail"], Value::Null);
    let web = repo_result(result, "web");
    assert_eq!(web["outcome"], "failed", "{run}");
    assert_eq!(web["exit_code"], 3);
    let detail = web["detail"].as_str().unwrap();
    assert!(
        detail.contains("exit status 3") && detail.contains("web is failing"),
        "{detail}"
    );
    // stdout is the envelope alone; the processes' lines are on stderr, prefixed.
    assert!(run.stderr.contains("api | hello from api"), "{run}");
    assert!(run.stderr.contains("web | web is failing"), "{run}");
    let worktree = env.workspace_dir().join("w/api");
    assert!(
        run.stderr
            .contains(&format!("api | w api {}", s(&worktree))),
        "GROVE_* variables are set:\n{run}"
    );
    assert_eq!(std::fs::read_to_string(&post).unwrap(), "cleaned\n");
    assert_no_process_left(&env, &["api", "web"]);

    // Only the repository that succeeds: exit 0, an ok envelope. The workspace is the
    // one the current directory is in.
    let run = env
        .gw_in(&worktree, &["run", "-r", "api", "--format", "json"])
        .success();
    let v = run.envelope("run");
    assert_eq!(v["ok"], true, "{run}");
    assert_eq!(v["result"]["count"], 1);
    assert_eq!(repo_result(&v["result"], "api")["outcome"], "exited");

    // Text mode: nothing on stdout, a summary line per repository on stderr.
    let run = env.gw(&["run", "w"]).code(5);
    assert_eq!(run.stdout, "", "{run}");
    assert!(run.stderr.contains("✓ api  exited 0 after"), "{run}");
    assert!(
        run.stderr.contains("✗ web  `echo $$ ")
            && run.stderr.contains("failed (exit status 3) after"),
        "{run}"
    );
    assert!(run.stderr.contains("error: web: `echo $$"), "{run}");
    assert_no_process_left(&env, &["api", "web"]);
    env.assert_git_agrees_with_state();
}

#[test]
fn timeout_stops_a_long_running_process_and_its_children() {
    let env = setup();
    // A dev server with a background helper, both in the process group `gw run` stops.
    grove_toml(
        &env,
        "api",
        &format!(
            "run = '{}echo serving; sleep 1000 & sleep 1000; wait'\n",
            record(&env, "api")
        ),
    );
    let run = env
        .gw(&["run", "w", "--timeout", "1s", "--format", "json"])
        .success();
    let v = run.envelope("run");
    assert_eq!(v["ok"], true, "{run}");
    let result = &v["result"];
    assert_eq!(result["stopped_by"], "timeout");
    let api = repo_result(result, "api");
    assert_eq!(api["outcome"], "stopped", "{run}");
    assert_eq!(api["exit_code"], Value::Null);
    assert!(api["duration_ms"].as_u64().unwrap() > 0);
    assert!(api["detail"].as_str().unwrap().contains("timeout"));
    let web = repo_result(result, "web");
    assert_eq!(web["outcome"], "skipped", "{run}");
    assert!(web["detail"].as_str().unwrap().contains(".grove.toml"));
    assert!(run.stderr.contains("api | serving"), "{run}");
    assert_no_process_left(&env, &["api"]);
}

#[test]
fn pre_run_failure_means_not_started() {
    let env = setup();
    let ran = env.root.join("api-ran");
    let post = env.root.join("api-post");
    grove_toml(
        &env,
        "api",
        &format!(
            "pre_run = '{}echo preparing; exit 1'\nrun = 'touch \"{}\"'\npost_run = 'touch \"{}\"'\n",
            record(&env, "api"),
            s(&ran),
            s(&post)
        ),
    );
    grove_toml(
        &env,
        "web",
        &format!("run = '{}echo web ok'\n", record(&env, "web")),
    );
    let run = env.gw(&["run", "w", "--format", "json"]).code(5);
    let v = run.envelope("run");
    assert_eq!(v["error"]["code"], "HOOK_FAILED", "{run}");
    let api = repo_result(&v["result"], "api");
    assert_eq!(api["outcome"], "not_started", "{run}");
    assert_eq!(api["exit_code"], Value::Null);
    assert_eq!(api["duration_ms"], 0);
    let detail = api["detail"].as_str().unwrap();
    assert!(
        detail.contains("pre_run") && detail.contains("preparing"),
        "{detail}"
    );
    assert_eq!(
        repo_result(&v["result"], "web")["outcome"],
        "exited",
        "{run}"
    );
    assert!(!ran.exists(), "run must not start after pre_run failed");
    assert!(!post.exists(), "post_run follows only a run that got going");
    assert_no_process_left(&env, &["api", "web"]);
}

#[test]
fn bad_input() {
    let env = setup();
    // Nothing defines `run`: a usage error that names the file to edit.
    let run = env.gw(&["run", "w", "--format", "json"]).code(2);
    assert_eq!(run.error_code(), "USAGE");
    let v = run.envelope("envelope");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains(".grove.toml"),
        "{run}"
    );
    assert!(v["fix"].as_str().unwrap().contains(".grove.toml"), "{run}");

    grove_toml(&env, "api", "run = 'echo api'\n");
    let run = env
        .gw(&["run", "w", "-r", "api,nope", "--format", "json"])
        .code(3);
    assert_eq!(run.error_code(), "REPO_NOT_FOUND", "{run}");
    // Named repositories that define nothing: the same usage error.
    assert_eq!(
        env.gw(&["run", "w", "-r", "web", "--format", "json"])
            .code(2)
            .error_code(),
        "USAGE"
    );
    assert_eq!(
        env.gw(&["run", "nope", "--format", "json"])
            .code(3)
            .error_code(),
        "WORKSPACE_NOT_FOUND"
    );
    for bad in ["0", "soon", "10"] {
        let run = env
            .gw(&["run", "w", "--timeout", bad, "--format", "json"])
            .code(2);
        assert_eq!(run.error_code(), "USAGE", "--timeout {bad}");
    }

    // A `run` command that is not executable does not start; the others still run.
    let script = env.workspace_dir().join("w/web/dev.sh");
    std::fs::write(&script, "#!/bin/sh\necho dev\n").unwrap();
    grove_toml(&env, "web", "run = './dev.sh --port 3000'\n");
    let run = env.gw(&["run", "w", "--format", "json"]).code(5);
    let v = run.envelope("run");
    let web = repo_result(&v["result"], "web");
    assert_eq!(web["outcome"], "not_started", "{run}");
    assert!(
        web["detail"].as_str().unwrap().contains("not executable"),
        "{run}"
    );
    assert_eq!(
        repo_result(&v["result"], "api")["outcome"],
        "exited",
        "{run}"
    );
    // A program that is not on PATH.
    grove_toml(&env, "web", "run = 'no-such-dev-server --watch'\n");
    let run = env
        .gw(&["run", "w", "-r", "web", "--format", "json"])
        .code(5);
    let web = repo_result(&run.envelope("run")["result"], "web").clone();
    assert_eq!(web["outcome"], "not_started", "{run}");
    assert!(
        web["detail"]
            .as_str()
            .unwrap()
            .contains("not found on PATH"),
        "{run}"
    );
}

/// Waits for `path` to hold `lines` lines.
fn wait_for_lines(path: &Path, lines: usize) {
    let until = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
        < lines
    {
        assert!(
            Instant::now() < until,
            "{} never got {lines} lines",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_stops_every_process_group_in_text_mode() {
    let env = setup();
    grove_toml(
        &env,
        "api",
        &format!(
            "run = '{}echo api up; sleep 1000 & sleep 1000; wait'\n",
            record(&env, "api")
        ),
    );
    // This one ignores SIGTERM (and so do its children): only SIGKILL, after the grace
    // period, ends it.
    grove_toml(
        &env,
        "web",
        &format!(
            "run = 'trap \"\" TERM; {}echo web up; sleep 1000'\n",
            record(&env, "web")
        ),
    );
    let mut child = env
        .gw_cmd(&["run", "w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&pid_file(&env, "api"), 1);
    wait_for_lines(&pid_file(&env, "web"), 1);
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());

    // gw waits for every group to end: SIGTERM, then SIGKILL after the 5 s grace period.
    // The margin only keeps a hung gw from hanging the suite.
    let grace = Duration::from_secs(5);
    let until = Instant::now() + grace + Duration::from_secs(30);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("gw run did not end within the grace period after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let shown = format!("[exit {status}]\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}");
    // Stopped by a signal is cancelled (exit 8), so `gw run && deploy` stops too.
    assert_eq!(status.code(), Some(8), "stopped by a signal:\n{shown}");
    assert_eq!(stdout, "", "{shown}");
    assert!(stderr.contains("api | api up"), "{shown}");
    assert!(stderr.contains("web | web up"), "{shown}");
    assert!(stderr.contains("■ api  stopped by SIGINT"), "{shown}");
    assert!(stderr.contains("■ web  stopped by SIGINT"), "{shown}");
    assert_no_process_left(&env, &["api", "web"]);
}

/// A closed terminal (SIGHUP) stops a run as Ctrl-C does: every process group ends and gw
/// says `CANCELLED` (found by the issue-30 adversary: gw died at once and left its dev
/// servers running with init as their parent, their ports taken). Under `nohup` — SIGHUP
/// ignored when gw starts — the run goes on.
#[test]
fn a_closed_terminal_stops_every_process_group() {
    let env = setup();
    grove_toml(
        &env,
        "api",
        &format!("run = '{}echo api up; sleep 1000'\n", record(&env, "api")),
    );
    let child = env
        .gw_cmd(&["run", "w", "-r", "api", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&pid_file(&env, "api"), 1);
    let sent = std::process::Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "one envelope ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(out.status.code(), Some(8), "{v:#}");
    assert_eq!(v["error"]["code"], "CANCELLED", "{v:#}");
    assert_eq!(v["result"]["stopped_by"], "signal", "{v:#}");
    assert_no_process_left(&env, &["api"]);

    // `nohup gw run`: the hangup is not gw's to act on; Ctrl-C still is.
    let pids = pid_file(&env, "api");
    std::fs::remove_file(&pids).unwrap();
    // The same command and environment as gw_cmd's, under nohup.
    let gw = env.gw_cmd(&[]).get_program().to_owned();
    let mut nohup = env.command(
        Path::new("nohup"),
        &[
            s(Path::new(&gw)),
            "run",
            "w",
            "-r",
            "api",
            "--format",
            "json",
        ],
    );
    let mut child = nohup
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&pids, 1);
    let pid = child.id().to_string();
    for signal in ["-HUP", "-INT"] {
        let sent = std::process::Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap();
        assert!(sent.success());
        if signal == "-HUP" {
            // Still running after the hangup: its process group is still there.
            std::thread::sleep(Duration::from_millis(300));
            assert!(
                child.try_wait().unwrap().is_none(),
                "nohup gw run ended on SIGHUP"
            );
        }
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(8));
    assert_no_process_left(&env, &["api"]);
}
