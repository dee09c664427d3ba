//! Upgrading from the Go grove: its `~/.grove` used as it is with only `HOME` set, the habits
//! its users have (`gw completion`, `create … -f`, `gw plugin upgrade|search`), and the files
//! it kept beside the state (`grove.log`, `stats.json`), which `gw bug-report` reads.

use std::path::{Path, PathBuf};

use e2e::{Run, TestEnv, repo_result, s, write_executable};
use serde_json::{Value, json};

/// `GW_HOME` empty counts as unset: grove lives in `$HOME/.grove`, as the Go grove did.
const ONLY_HOME: &[(&str, &str)] = &[("GW_HOME", "")];

fn go(env: &TestEnv, args: &[&str]) -> Run {
    env.gw_env(&env.root, args, ONLY_HOME)
}

fn go_in(env: &TestEnv, cwd: &Path, args: &[&str]) -> Run {
    env.gw_env(cwd, args, ONLY_HOME)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// Asserts that `text` is a `state.json` the Go grove reads: a bare array, two-space
/// indented, every workspace with its string fields, `created_at` in its local layout,
/// `repos` entries with their four strings, and `source` (when there) an object with a
/// provider and a URL.
#[track_caller]
fn assert_go_readable(text: &str) {
    assert!(text.starts_with("[\n  {\n    \"name\": "), "{text}");
    let v: Value = serde_json::from_str(text).expect("state.json parses");
    for ws in v.as_array().expect("a bare array") {
        for k in ["name", "path", "branch", "created_at"] {
            assert!(ws[k].is_string(), "{k} in {ws:#}");
        }
        let created = ws["created_at"].as_str().unwrap();
        let (date, time) = created.split_once('T').expect("local date and time");
        assert_eq!(date.len(), 10, "{created}");
        assert!(
            time.len() == 8 || time.len() == 15,
            "HH:MM:SS[.ffffff], no zone: {created}"
        );
        for r in ws["repos"].as_array().expect("repos array") {
            for k in ["repo_name", "source_repo", "worktree_path", "branch"] {
                assert!(r[k].is_string(), "{k} in {r:#}");
            }
            if let Some(p) = r.get("preserve_branch") {
                assert!(p.is_boolean(), "{r:#}");
            }
        }
        if let Some(src) = ws.get("source") {
            assert!(
                src["provider"].is_string() && src["url"].is_string(),
                "{src:#}"
            );
        }
    }
}

/// A grove directory as the Go grove left it under `$HOME/.grove`: a config with the legacy
/// `repos_dir`, a string and a table hook, a preset, a plugin with the Go grove's install
/// record, `stats.json`, and `state.json` with one workspace that has a `source` and one
/// that has not, over real worktrees.
fn go_home() -> (TestEnv, Value, PathBuf) {
    let env = TestEnv::new();
    let api = env.repo("api");
    let web = env.repo("web");
    env.repo("lib");
    let hook_log = env.root.join("hooks.log");
    let ws_dir = env.workspace_dir();
    let legacy = ws_dir.join("legacy");
    let plain = ws_dir.join("plain");
    // Worktrees made the way the Go grove makes them.
    for (repo, ws, branch) in [
        (&api, &legacy, "feat/legacy"),
        (&web, &legacy, "feat/legacy"),
        (&web, &plain, "plain"),
    ] {
        let name = repo.file_name().unwrap().to_str().unwrap();
        let path = ws.join(name);
        env.git(
            repo,
            &[
                "worktree",
                "add",
                "-q",
                "--no-track",
                "-b",
                branch,
                s(&path),
                "origin/main",
            ],
        );
    }
    std::fs::create_dir_all(&env.grove_home).unwrap();
    std::fs::write(
        env.config_path(),
        format!(
            "repos_dir = \"{repos}\"\n\
             workspace_dir = \"{ws}\"\n\n\
             [presets.full]\nrepos = [\"api\", \"web\", \"lib\"]\n\n\
             [hooks]\n\
             post_create = \"echo created {{name}} >> {log}\"\n\
             [hooks.pre_delete]\ncommand = \"echo deleting {{name}} >> {log}\"\non_failure = \"abort\"\ntimeout = \"1m\"\n",
            repos = s(&env.repos),
            ws = s(&ws_dir),
            log = s(&hook_log),
        ),
    )
    .unwrap();
    write_executable(
        &env.plugins_dir().join("gw-hello"),
        "#!/bin/sh\necho \"hello from $GROVE_DIR\"\n",
    );
    std::fs::write(
        env.plugins_dir().join(".gw-hello.json"),
        r#"{"repo":"someone/gw-hello","version":"v1.0.0"}"#,
    )
    .unwrap();
    std::fs::write(
        env.grove_home.join("stats.json"),
        "[\n  {\n    \"event\": \"workspace_created\",\n    \"timestamp\": \"2025-03-04T05:06:07.123456\",\n    \"workspace_name\": \"legacy\",\n    \"branch\": \"feat/legacy\",\n    \"repo_names\": [\"api\", \"web\"],\n    \"repo_count\": 2\n  }\n]",
    )
    .unwrap();
    let state = json!([
        {
            "name": "legacy",
            "path": s(&legacy),
            "branch": "feat/legacy",
            "created_at": "2025-03-04T05:06:07.123456",
            "repos": [
                {"repo_name": "api", "source_repo": s(&api), "worktree_path": s(&legacy.join("api")), "branch": "feat/legacy"},
                {"repo_name": "web", "source_repo": s(&web), "worktree_path": s(&legacy.join("web")), "branch": "feat/legacy"}
            ],
            "source": {"provider": "github", "url": "https://example.invalid/acme/api/pull/7", "ref": "7", "title": "Legacy work"}
        },
        {
            "name": "plain",
            "path": s(&plain),
            "branch": "plain",
            "created_at": "2024-12-24T18:00:00",
            "repos": [
                {"repo_name": "web", "source_repo": s(&web), "worktree_path": s(&plain.join("web")), "branch": "plain"}
            ]
        }
    ]);
    std::fs::write(
        env.state_path(),
        serde_json::to_string_pretty(&state).unwrap(),
    )
    .unwrap();
    (env, state, hook_log)
}

#[test]
fn a_go_grove_home_works_with_only_home_set() {
    let (env, original, hook_log) = go_home();

    // list and status read it as it is.
    assert_eq!(go(&env, &["list", "--json"]).success().json(), original);
    let status = go(&env, &["status", "legacy", "--format", "json"])
        .success()
        .envelope("status");
    assert_eq!(status["result"]["source"], original[0]["source"]);
    assert_eq!(
        go(&env, &["status", "plain", "--format", "json"])
            .success()
            .result()["source"],
        Value::Null
    );

    // sync rebases onto the new upstream commit, from inside the workspace.
    env.push_upstream("api", "main", "upstream.txt", "new\n");
    let sync = go_in(
        &env,
        &env.workspace_dir().join("legacy/api"),
        &["sync", "--format", "json"],
    )
    .success()
    .result();
    assert_eq!(repo_result(&sync, "api")["outcome"], "rebased");
    assert_eq!(repo_result(&sync, "web")["outcome"], "up_to_date");
    assert!(
        env.workspace_dir()
            .join("legacy/api/upstream.txt")
            .is_file()
    );

    // add-repo through the legacy repos_dir, rename, then delete through the table hook.
    let added = go(
        &env,
        &["add-repo", "plain", "-r", "lib", "--format", "json"],
    )
    .success()
    .result();
    assert_eq!(repo_result(&added, "lib")["outcome"], "added");
    go(&env, &["rename", "plain", "--to", "renamed"]).success();
    assert!(env.workspace_dir().join("renamed/lib").is_dir());
    env.assert_git_agrees_with_state();
    let mid = read(&env.state_path());
    assert_go_readable(&mid);
    go(&env, &["delete", "renamed"]).success();
    assert_eq!(read(&hook_log), "deleting renamed\n");

    // A workspace from the Go config's preset fires its string hook.
    go(&env, &["create", "fresh", "-b", "fresh", "-p", "full"]).success();
    assert_eq!(read(&hook_log), "deleting renamed\ncreated fresh\n");
    go(&env, &["delete", "fresh"]).success();

    // The Go workspace that was only read and synced round-trips field for field, and
    // gains one: its port slot, given the first time grove wrote the state (the smallest
    // free one, in file order: 0).
    let text = read(&env.state_path());
    assert_go_readable(&text);
    let after: Value = serde_json::from_str(&text).unwrap();
    let mut expected = original[0].clone();
    expected["slot"] = json!(0);
    assert_eq!(after, json!([expected]));
    env.assert_git_agrees_with_state();

    // The config was migrated in place; its hooks and preset survived.
    let config = read(&env.config_path());
    assert!(!config.contains("repos_dir"), "{config}");
    assert!(config.contains("repo_dirs = ["), "{config}");
    assert!(config.contains("[presets.full]") && config.contains("on_failure = \"abort\""));

    // The Go plugin still runs, told where grove lives.
    let hello = go(&env, &["hello"]).success();
    assert_eq!(hello.stdout, format!("hello from {}\n", s(&env.grove_home)));

    // stats.json kept the Go event and received the new ones, in the Go layout.
    let stats: Value = serde_json::from_str(&read(&env.grove_home.join("stats.json"))).unwrap();
    let events: Vec<(&str, &str)> = stats
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap(),
                e["workspace_name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("workspace_created", "legacy"),
            ("workspace_deleted", "renamed"),
            ("workspace_created", "fresh"),
            ("workspace_deleted", "fresh"),
        ]
    );
    let fresh = &stats[2];
    assert_eq!(fresh["branch"], "fresh");
    assert_eq!(fresh["repo_names"], json!(["api", "web", "lib"]));
    assert_eq!(fresh["repo_count"], 3);
    assert_eq!(
        fresh["timestamp"].as_str().unwrap().len(),
        "2025-03-04T05:06:07.123456".len()
    );

    // Everything went to $HOME/.grove: the log is there too, and nothing else was made in HOME.
    assert!(env.grove_home.join("grove.log").is_file());
    let home_entries: Vec<String> = std::fs::read_dir(&env.home)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(home_entries, [".grove"]);
}

/// The text of `grove.log`.
fn log(env: &TestEnv) -> String {
    read(&env.grove_home.join("grove.log"))
}

#[test]
fn the_log_records_commands_and_git_mutations_and_rotates() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let api = env.repos.join("api");
    let log_path = env.grove_home.join("grove.log");

    let run = env.gw(&[
        "create", "ws", "-b", "feat/ws", "-r", "api,web", "--format", "json",
    ]);
    run.success().envelope("create");
    let text = log(&env);
    let lines: Vec<&str> = text.lines().collect();
    let command = lines
        .iter()
        .find(|l| l.contains(" INFO - command ") && l.contains("gw create"))
        .unwrap_or_else(|| panic!("no command line:\n{text}"));
    assert!(
        command.contains("cmd=\"gw create ws -b feat/ws -r api,web --format json\"")
            && command.contains(" outcome=ok ")
            && command.contains(" duration_ms=")
            && command.contains(" pid="),
        "{command}"
    );
    let add = lines
        .iter()
        .find(|l| l.contains(" INFO - git ") && l.contains("worktree add") && l.contains(s(&api)))
        .unwrap_or_else(|| panic!("no git line for api:\n{text}"));
    assert!(
        add.contains(&format!("repo={}", s(&api))) && add.contains(" outcome=ok"),
        "{add}"
    );
    // Lines start like the Go grove's: `YYYY-MM-DD HH:MM:SS LEVEL - `.
    for l in &lines {
        let (stamp, rest) = l.split_at(19);
        assert_eq!(stamp.as_bytes()[10], b' ', "{l}");
        assert!(
            rest.starts_with(" INFO - ") || rest.starts_with(" DEBUG - "),
            "{l}"
        );
    }

    // Read-only commands are logged only with -v; failures say why.
    env.gw(&["list"]).success();
    assert_eq!(log(&env), text, "a read-only command adds nothing");
    env.gw(&["-v", "list"]).success();
    let verbose = log(&env);
    assert!(
        verbose
            .lines()
            .last()
            .unwrap()
            .contains(" DEBUG - command ")
            && verbose.contains("cmd=\"gw -v list\""),
        "{verbose}"
    );
    env.gw(&["delete", "nope"]).code(3);
    let last = log(&env).lines().last().unwrap().to_string();
    assert!(
        last.contains("outcome=failed code=WORKSPACE_NOT_FOUND"),
        "{last}"
    );

    // Rotation at 1 MiB: grove.log → .1 → .2 → .3, the oldest dropped.
    let full: String = "2000-01-01 00:00:00 INFO - filler\n".repeat(1024 * 1024 / 34);
    assert!(full.len() as u64 <= 1024 * 1024 && full.len() > 1024 * 1024 - 64);
    std::fs::write(&log_path, &full).unwrap();
    for n in 1..=3 {
        std::fs::write(e2e_backup(&log_path, n), format!("backup {n}\n")).unwrap();
    }
    env.gw(&["create", "ws2", "-b", "ws2", "-r", "api"])
        .success();
    assert_eq!(
        read(&e2e_backup(&log_path, 1)),
        full,
        "the full log moved to .1"
    );
    assert_eq!(read(&e2e_backup(&log_path, 2)), "backup 1\n");
    assert_eq!(read(&e2e_backup(&log_path, 3)), "backup 2\n");
    assert!(!e2e_backup(&log_path, 4).exists(), "three backups at most");
    let fresh = log(&env);
    assert!(
        fresh.len() < 4096 && fresh.contains("cmd=\"gw create ws2"),
        "{fresh}"
    );

    // A log that cannot be written never fails a command, and nothing reaches stdout.
    for n in 1..=3 {
        std::fs::remove_file(e2e_backup(&log_path, n)).unwrap();
    }
    std::fs::remove_file(&log_path).unwrap();
    std::fs::create_dir(&log_path).unwrap();
    let run = env.gw(&[
        "create", "ws3", "-b", "ws3", "-r", "web", "--format", "json",
    ]);
    run.success().envelope("create");
    env.gw(&["delete", "ws3"]).success();
    std::fs::remove_dir(&log_path).unwrap();
    std::os::unix::fs::symlink(env.root.join("no-such-dir/grove.log"), &log_path).unwrap();
    env.gw(&["create", "ws4", "-b", "ws4", "-r", "web"])
        .success();
    assert!(!env.root.join("no-such-dir").exists());
    std::fs::remove_file(&log_path).unwrap();
    // The grove directory read-only: only meaningful when permissions bind (not as root).
    if !running_as_root(&env) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&log_path, "").unwrap();
        std::fs::set_permissions(&log_path, std::fs::Permissions::from_mode(0o444)).unwrap();
        env.gw(&["delete", "ws4"]).success();
        assert_eq!(read(&log_path), "", "nothing written to a read-only log");
    } else {
        eprintln!(
            "running as root: the read-only-permission case is covered by the directory cases"
        );
    }
    env.assert_git_agrees_with_state();
}

fn e2e_backup(log: &Path, n: u32) -> PathBuf {
    PathBuf::from(format!("{}.{n}", s(log)))
}

fn running_as_root(env: &TestEnv) -> bool {
    env.sh(&env.root, "id -u").stdout.trim() == "0"
}

/// The repository issues go to, read from the workspace manifest.
fn repository() -> String {
    let manifest = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml"));
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("repository = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("repository in Cargo.toml")
        .to_string()
}

const SECRETS: &[&str] = &[
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "alice",
    "tok-in-config-123",
    "bearer-secret-value",
    "pw-in-hook-url",
];

/// An environment with secrets planted in a remote URL and in the config's hooks.
fn with_secrets() -> TestEnv {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.git(
        &env.repos.join("web"),
        &[
            "remote",
            "set-url",
            "origin",
            "https://alice:ghp_abcdefghijklmnopqrstuvwxyz0123456789@example.invalid/acme/web.git",
        ],
    );
    env.append_config(
        "[hooks]\n\
         post_create = \"GITHUB_TOKEN=tok-in-config-123 notify {name}\"\n\
         pre_delete = { command = \"curl -H 'Authorization: Bearer bearer-secret-value' https://bob:pw-in-hook-url@hooks.invalid/x\", on_failure = \"warn\" }\n",
    );
    env
}

#[track_caller]
fn assert_no_secrets(text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret} leaked:\n{text}");
    }
}

#[test]
fn bug_report_has_the_sections_with_secrets_redacted() {
    let env = with_secrets();
    env.gw(&["create", "ws", "-b", "feat/ws", "-r", "api"])
        .success();
    std::fs::remove_dir_all(env.ws("ws").join("api")).unwrap();

    // Not a terminal: the report is printed (as with --print).
    for args in [&["bug-report"][..], &["bug-report", "--print"]] {
        let run = env.gw(args).success();
        let out = &run.stdout;
        let at = |h: &str| out.find(h).unwrap_or_else(|| panic!("no {h}:\n{out}"));
        assert!(at("## Environment") < at("## Doctor") && at("## Doctor") < at("## Recent Logs"));
        assert!(out.contains("- **gw:** "), "{out}");
        assert!(out.contains("- **git:** git version"), "{out}");
        assert!(out.contains(&format!("- **Grove dir:** {}", s(&env.grove_home))));
        assert!(
            // A remote's userinfo is not even read: grove keeps remotes without it.
            out.contains("web: https://example.invalid/acme/web.git"),
            "{out}"
        );
        assert!(out.contains("GITHUB_TOKEN=[REDACTED] notify"), "{out}");
        assert!(out.contains("https://[REDACTED]@hooks.invalid/x"), "{out}");
        assert!(out.contains("`worktree_missing` ws/api"), "{out}");
        assert!(
            out.contains("cmd=\"gw create ws -b feat/ws -r api\""),
            "{out}"
        );
        assert_no_secrets(out);
        assert_no_secrets(&run.stderr);
        assert!(
            run.stderr.contains(&format!("{}/issues/new", repository())),
            "{run}"
        );
    }

    let run = env.gw(&["bug-report", "--format", "json"]).success();
    let v = run.envelope("bug-report");
    assert_no_secrets(&run.stdout);
    let r = &v["result"];
    let config = r["environment"]["config"].as_str().unwrap();
    assert!(config.contains("GITHUB_TOKEN=[REDACTED]"), "{config}");
    assert!(
        r["environment"]["repositories"]
            .as_array()
            .unwrap()
            .contains(&json!({"name": "web", "remote": "https://example.invalid/acme/web.git"})),
        "{r:#}"
    );
    assert_eq!(r["doctor"]["report"]["healthy"], false);
    assert_eq!(
        r["doctor"]["report"]["issues"][0]["kind"],
        "worktree_missing"
    );
    assert!(!r["recent_logs"]["lines"].as_array().unwrap().is_empty());
    assert_eq!(r["opened"], false);
    let url = r["issue_url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!(
            "{}/issues/new?title=Bug%20report&body=%23%23%20Environment",
            repository()
        )),
        "{url}"
    );
    assert_eq!(
        v["next_actions"][0]["command"],
        "gw doctor --fix --format json"
    );

    // The home directory only where asked.
    let home = s(&env.home);
    assert!(run.stdout.contains(home));
    let hidden = env
        .gw(&["bug-report", "--print", "--redact-home"])
        .success();
    assert!(!hidden.stdout.contains(home), "{hidden}");
    assert!(
        hidden.stdout.contains("- **Grove dir:** ~/.grove"),
        "{hidden}"
    );

    // Before `gw init` it still reports, saying so.
    let fresh = TestEnv::new();
    let run = fresh.gw(&["bug-report"]).success();
    assert!(run.stdout.contains("not initialised"), "{run}");
    assert!(run.stdout.contains("`not_initialized`"), "{run}");
    assert!(!fresh.grove_home.exists(), "bug-report writes nothing");
}

/// `gw bug-report` at a terminal offers the browser; `script` gives it one.
#[cfg(target_os = "linux")]
#[test]
fn bug_report_on_a_terminal_offers_the_pre_filled_issue() {
    // `script` (util-linux) gives gw a terminal.
    if !e2e::require("script") {
        return;
    }
    let env = TestEnv::with_repos(&["api"]);
    let bin = env.root.join("bin");
    let opened = env.root.join("opened");
    write_executable(
        &bin.join("xdg-open"),
        &format!("#!/bin/sh\nprintf '%s' \"$1\" > {}\n", s(&opened)),
    );
    let broken = env.root.join("broken-bin");
    write_executable(
        &broken.join("xdg-open"),
        "#!/bin/sh\necho 'no display' >&2\nexit 3\n",
    );
    let path_with =
        |dir: &Path| format!("{}:{}", s(dir), std::env::var("PATH").unwrap_or_default());
    let at_terminal = |answer: &str, path: &str| -> Run {
        let line = format!("{} bug-report", s(e2e::gw_bin()));
        let mut cmd = env.command(Path::new("script"), &["-qec", &line, "/dev/null"]);
        cmd.env("PATH", path)
            .env("TERM", "xterm")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("script runs");
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(answer.as_bytes()).unwrap();
            // Keep the terminal open until gw has read the answer.
            std::thread::sleep(std::time::Duration::from_millis(1500));
        }
        let out = child.wait_with_output().unwrap();
        Run {
            command: line,
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    };

    let yes = at_terminal("y", &path_with(&bin));
    assert_eq!(yes.status, 0, "{yes}");
    assert!(
        yes.stdout.contains("Open a new issue in your browser"),
        "{yes}"
    );
    let url = read(&opened);
    assert!(
        url.starts_with(&format!(
            "{}/issues/new?title=Bug%20report&body=%23%23%20Environment",
            repository()
        )),
        "{url}"
    );
    assert!(yes.stdout.contains("Opened a new issue"), "{yes}");
    assert!(
        !yes.stdout.contains("## Doctor"),
        "the report went to the browser:\n{yes}"
    );

    std::fs::remove_file(&opened).unwrap();
    let no = at_terminal("n", &path_with(&bin));
    assert_eq!(no.status, 0, "{no}");
    assert!(!opened.exists(), "declined: no browser");
    assert!(
        no.stdout.contains("## Doctor"),
        "declined: the report is printed\n{no}"
    );

    // A browser that cannot be opened: the report is printed, with the reason.
    let failed = at_terminal("y", &path_with(&broken));
    assert_eq!(failed.status, 0, "{failed}");
    assert!(failed.stdout.contains("## Doctor"), "{failed}");
    assert!(
        failed
            .stdout
            .contains("cannot open a browser with `xdg-open`"),
        "{failed}"
    );
}

#[test]
fn completion_is_completions() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish"] {
        let go_name = env.gw(&["completion", shell]).success().stdout;
        assert!(!go_name.is_empty());
        assert_eq!(go_name, env.gw(&["completions", shell]).success().stdout);
    }
    let help = env.gw(&["--help"]).success().stdout;
    assert!(help.contains("[alias: completion]"), "{help}");
}

#[test]
fn create_f_is_the_blueprint_and_says_so_for_go_habits() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "old", "-b", "old", "-r", "api"])
        .success();
    let inside = env.ws("old").join("api");
    let before = env.snapshot();

    // The Go grove's `--replace -f`: a bare -f.
    let run = env.gw_in(
        &inside,
        &["create", "new", "-b", "new", "-r", "web", "--replace", "-f"],
    );
    let run = run.code(2);
    assert!(
        run.stderr.contains("-f/--file needs a blueprint file"),
        "{run}"
    );
    assert!(run.stderr.contains("pass `--force`"), "{run}");
    // -f followed by something that is not a file (a name, a directory).
    for value in ["new", s(&env.repos)] {
        let run = env.gw_in(
            &inside,
            &[
                "create",
                "-f",
                value,
                "-b",
                "new",
                "--replace",
                "--format",
                "json",
            ],
        );
        let v = run.code(2).envelope("envelope");
        assert_eq!(v["error"]["code"], "USAGE");
        assert!(v["fix"].as_str().unwrap().contains("`--force`"), "{v:#}");
        assert_eq!(v["error"]["details"]["flag"], "-f");
    }
    env.assert_unchanged(&before);

    // A real blueprint still works, and cannot be mixed with a selection.
    let bp = env.root.join("ws.toml");
    std::fs::write(&bp, "repos = [\"web\"]\n").unwrap();
    env.gw(&["create", "bp", "-b", "bp", "-f", s(&bp), "-r", "api"])
        .code(2);
    env.assert_unchanged(&before);
    env.gw(&["create", "bp", "-b", "bp", "-f", s(&bp)])
        .success();
    // --force is what replaces without asking.
    env.gw_in(
        &inside,
        &[
            "create",
            "new",
            "-b",
            "new",
            "-r",
            "web",
            "--replace",
            "--force",
        ],
    )
    .success();
    assert_eq!(env.workspace_names(), ["bp", "new"]);
    env.assert_git_agrees_with_state();
}

#[test]
fn plugin_upgrade_reinstalls_from_the_recorded_source() {
    let env = TestEnv::with_repos(&["api"]);
    let src = env.root.join("src");
    let tool = src.join("gw-tool");
    let other = src.join("gw-other");
    let gone = src.join("gw-gone");
    write_executable(&tool, "#!/bin/sh\necho tool v1\n");
    write_executable(&other, "#!/bin/sh\necho other v1\n");
    write_executable(&gone, "#!/bin/sh\necho gone v1\n");
    env.gw(&["plugin", "install", s(&tool)]).success();
    env.gw(&["plugin", "install", &format!("file://{}", s(&other))])
        .success();
    env.gw_in(&src, &["plugin", "install", "./gw-gone"])
        .success();
    // The source is recorded where the Go grove kept its own (`plugins/.gw-<name>.json`),
    // as an absolute path.
    let meta: Value =
        serde_json::from_str(&read(&env.plugins_dir().join(".gw-gone.json"))).unwrap();
    assert_eq!(meta, json!({"source": s(&gone)}));
    // One put there by hand: no record.
    write_executable(
        &env.plugins_dir().join("gw-manual"),
        "#!/bin/sh\necho manual\n",
    );

    // Nothing changed at the sources: everything with a source is up to date.
    let r = env.gw(&["plugin", "upgrade", "--format", "json"]).success();
    let r = r.envelope("plugin-upgrade")["result"].clone();
    let outcome = |r: &Value, name: &str| -> String {
        r["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {r:#}"))["outcome"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(outcome(&r, "tool"), "up_to_date");
    assert_eq!(outcome(&r, "other"), "up_to_date");
    assert_eq!(outcome(&r, "manual"), "skipped");
    assert_eq!(r["upgraded"], 0);

    // New versions at two sources, one source gone: the others are still upgraded.
    write_executable(&tool, "#!/bin/sh\necho tool v2\n");
    write_executable(&other, "#!/bin/sh\necho other v2\n");
    std::fs::remove_file(&gone).unwrap();
    let run = env.gw(&["plugin", "upgrade", "--format", "json"]);
    let v = run.code(2).envelope("plugin-upgrade");
    let r = &v["result"];
    assert_eq!(outcome(r, "tool"), "upgraded");
    assert_eq!(outcome(r, "other"), "upgraded");
    assert_eq!(outcome(r, "gone"), "failed");
    assert_eq!(outcome(r, "manual"), "skipped");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("gone"),
        "{v:#}"
    );
    assert_eq!(env.gw(&["tool"]).success().stdout, "tool v2\n");
    assert_eq!(env.gw(&["other"]).success().stdout, "other v2\n");
    assert_eq!(
        env.gw(&["gone"]).success().stdout,
        "gone v1\n",
        "kept as it was"
    );

    // One by name; the text says what happened.
    write_executable(&tool, "#!/bin/sh\necho tool v3\n");
    let run = env.gw(&["plugin", "upgrade", "tool"]).success();
    assert!(run.stderr.contains("tool: upgraded"), "{run}");
    assert_eq!(env.gw(&["tool"]).success().stdout, "tool v3\n");
    assert!(
        env.gw(&["plugin", "upgrade", "manual"])
            .success()
            .stderr
            .contains("manual: skipped")
    );
    let before = read(&env.plugins_dir().join("gw-tool"));
    assert_eq!(
        env.gw(&["plugin", "upgrade", "nope", "--format", "json"])
            .code(2)
            .error_code(),
        "USAGE"
    );
    assert_eq!(read(&env.plugins_dir().join("gw-tool")), before);

    // Removing a plugin removes its record; `plugin list` never lists records.
    env.gw(&["plugin", "remove", "tool"]).success();
    assert!(!env.plugins_dir().join(".gw-tool.json").exists());
    let names = env.gw(&["plugin", "list", "-o", "name"]).success().stdout;
    assert_eq!(names, "gone\nmanual\nother\n");
}

#[test]
fn plugin_search_lists_the_shipped_registry_offline() {
    let env = TestEnv::with_repos(&["api"]);
    let all = env.gw(&["plugin", "search", "--format", "json"]).success();
    let r = all.envelope("plugin-search")["result"].clone();
    let names: Vec<&str> = r["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["code", "dispatch"]);
    assert_eq!(r["plugins"][0]["repo"], "igor-kupczynski/gw-code");
    assert_eq!(r["plugins"][0]["installed"], false);
    assert_eq!(
        all.json()["next_actions"][0]["command"],
        "gw plugin install code --format json"
    );

    // A term matches names, repositories and descriptions, in any case.
    let hits = |term: &str| -> Vec<String> {
        env.gw(&["plugin", "search", term, "-o", "name"])
            .success()
            .stdout
            .lines()
            .map(String::from)
            .collect()
    };
    assert_eq!(hits("CODE"), ["code"]);
    assert_eq!(hits("nicksenap"), ["dispatch"]);
    assert_eq!(hits("agent"), ["dispatch"]);
    assert!(hits("zzz").is_empty());
    let none = env.gw(&["plugin", "search", "zzz"]).success();
    assert!(
        none.stderr
            .contains("No plugin in the registry matches `zzz`"),
        "{none}"
    );

    // The Go grove's bare shape, and what is installed.
    let bare = env
        .gw(&["plugin", "search", "dispatch", "--json"])
        .success()
        .json();
    assert_eq!(
        bare,
        json!([{"name": "dispatch", "repo": "nicksenap/gw-dispatch", "description": r["plugins"][1]["description"]}])
    );
    let code = env.root.join("code.sh");
    write_executable(&code, "#!/bin/sh\necho code\n");
    env.gw(&["plugin", "install", s(&code), "--name", "code"])
        .success();
    let table = env.gw(&["plugin", "search"]).success().stdout;
    let row = table.lines().find(|l| l.starts_with("code ")).unwrap();
    assert!(row.trim_end().ends_with("yes"), "{table}");
}

/// A number in a field grove does not know (a newer Go grove's, or a plugin's) is written
/// back as the same number when grove rewrites `state.json`. The release gw read
/// 1666.6666666666665 one unit in the last place off and wrote 1666.6666666666663
/// (serde_json without `float_roundtrip`); the tests' own build had the feature through a
/// dev-dependency, so this test fails only against the shipped binary (`cargo xtask e2e`,
/// or `GW_BIN`). Found by the `state_json` fuzz target (issue 26).
#[test]
fn a_rewritten_state_keeps_the_numbers_it_does_not_know() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("a", "a", "api");
    // What Go's encoding/json writes for float64s and integers, added as text (a
    // `serde_json::Value` here would round them as this build reads them).
    let numbers = [
        "1666.6666666666665",
        "0.30000000000000004",
        "2.718281828459045",
        "1e+21",
        "5e-324",
        "9007199254740993",
        "18446744073709551615",
    ];
    let path = env.state_path();
    let text = read(&path);
    let edited = text.replacen(
        "\"name\": \"a\",",
        &format!("\"name\": \"a\",\n    \"later\": [{}],", numbers.join(", ")),
        1,
    );
    assert_ne!(edited, text, "{text}");
    std::fs::write(&path, &edited).unwrap();

    // Creating another workspace rewrites the file.
    env.create("b", "b", "api");
    let after = read(&path);
    assert_ne!(after, edited);
    type Raw = std::collections::BTreeMap<String, Box<serde_json::value::RawValue>>;
    let records: Vec<Raw> = serde_json::from_str(&after).unwrap();
    let later: Vec<Box<serde_json::value::RawValue>> =
        serde_json::from_str(records[0]["later"].get()).unwrap();
    let written: Vec<&str> = later.iter().map(|n| n.get()).collect();
    // Each is the same float64 (read by the standard library's correctly rounded parser),
    // and an integer keeps its text.
    assert_eq!(written.len(), numbers.len(), "{after}");
    for (number, token) in numbers.iter().zip(&written) {
        let (a, b) = (
            number.parse::<f64>().unwrap(),
            token.parse::<f64>().unwrap(),
        );
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "{number} was written as {token}:\n{after}"
        );
        if !number.contains(['.', 'e']) {
            assert_eq!(token, number, "{after}");
        }
    }
}
