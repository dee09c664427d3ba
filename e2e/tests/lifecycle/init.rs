//! Setting grove up: `gw init`, `add-dir`, `remove-dir`, `repos`, and the discovery rules.

use e2e::{TestEnv, s};

/// How many times `dir` is listed in `config.toml`'s `repo_dirs`.
fn listed(env: &TestEnv, dir: &std::path::Path) -> usize {
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    text.matches(&format!("\"{}\"", s(dir))).count()
}

#[test]
fn init_finds_repos_writes_config_and_is_idempotent() {
    let env = TestEnv::new();
    env.repo("api");
    env.repo("web");
    assert!(!env.config_path().exists());

    let run = env.gw(&["init", s(&env.repos)]).success();
    assert!(run.stderr.contains("2 repos found"), "{run}");
    assert!(
        run.stdout.is_empty(),
        "init prints messages on stderr:\n{run}"
    );
    assert_eq!(listed(&env, &env.repos), 1);
    assert!(env.workspace_dir().is_dir(), "the workspace dir is created");

    // A second init with the same directory changes nothing and says so.
    let config = std::fs::read(env.config_path()).unwrap();
    let again = env
        .gw(&["init", s(&env.repos), "--format", "json"])
        .success()
        .result();
    assert_eq!(again["created"], false);
    assert_eq!(again["repos_found"], 2);
    assert_eq!(again["repo_dirs"], serde_json::json!([s(&env.repos)]));
    assert_eq!(std::fs::read(env.config_path()).unwrap(), config);

    // Relative paths are resolved against the current directory; a second dir is merged in.
    let more = env.root.join("more");
    std::fs::create_dir_all(&more).unwrap();
    env.gw_in(&env.root, &["init", "more", s(&env.repos)])
        .success();
    assert_eq!(listed(&env, &env.repos), 1, "no duplicates");
    assert_eq!(listed(&env, &more), 1, "relative dir stored absolute");
}

#[test]
fn init_with_a_missing_dir_is_usage_and_writes_nothing() {
    let env = TestEnv::new();
    env.repo("api");
    let missing = env.root.join("no-such-dir");
    let run = env.gw(&["init", s(&env.repos), s(&missing)]).code(2);
    assert!(run.stderr.contains(s(&missing)), "names the dir:\n{run}");
    assert!(!env.config_path().exists(), "no config written");
    assert!(!env.workspace_dir().exists(), "no workspace dir created");

    let json = env.gw(&["init", s(&missing), "--format", "json"]).code(2);
    assert_eq!(json.error_code(), "USAGE");
    assert!(!env.config_path().exists());

    // With grove already set up, the config is left exactly as it was.
    env.gw(&["init", s(&env.repos)]).success();
    let before = env.snapshot();
    env.gw(&["init", s(&missing)]).code(2);
    env.assert_unchanged(&before);
}

#[test]
fn add_dir_and_remove_dir() {
    let env = TestEnv::with_repos(&["api"]);
    let more = env.root.join("more");
    std::fs::create_dir_all(&more).unwrap();
    env.git(&more, &["init", "-q", "-b", "main", "tool"]);

    let run = env.gw(&["add-dir", s(&more)]).success();
    assert!(run.stderr.contains("1 repos found"), "{run}");
    assert_eq!(listed(&env, &more), 1);
    let names = env.gw(&["repos", "-o", "name"]).success().stdout;
    assert_eq!(names, "api\ntool\n");

    // Adding it again is not an error and does not duplicate it.
    let again = env
        .gw(&["add-dir", s(&more), "--format", "json"])
        .success()
        .result();
    assert_eq!(again["outcome"], "already_present");
    assert_eq!(listed(&env, &more), 1);

    let before = env.snapshot();
    assert_eq!(
        env.gw(&["add-dir", s(&env.root.join("nope")), "--format", "json"])
            .code(2)
            .error_code(),
        "USAGE"
    );
    env.assert_unchanged(&before);

    let removed = env.gw(&["remove-dir", s(&more)]).success();
    assert!(removed.stderr.contains("Removed"), "{removed}");
    assert_eq!(listed(&env, &more), 0);
    assert_eq!(env.gw(&["repos", "-o", "name"]).success().stdout, "api\n");

    // Removing a directory that is not configured, or naming none without a terminal.
    let before = env.snapshot();
    env.gw(&["remove-dir", s(&more)]).code(2);
    assert_eq!(
        env.gw(&["remove-dir", "--format", "json"])
            .code(2)
            .error_code(),
        "USAGE"
    );
    env.assert_unchanged(&before);
}

#[test]
fn repos_table_json_and_data_formats() {
    let env = TestEnv::with_repos(&["api", "web"]);
    // A hosted remote gets an owner/repo display name (no network is needed to list);
    // repositories are sorted by display name.
    env.git(
        &env.repos.join("web"),
        &["remote", "set-url", "origin", "git@github.com:zeta/web.git"],
    );

    let table = env.gw(&["repos"]).success().stdout;
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["Name", "Owner/Repo", "Path"]);
    assert!(table.contains("zeta/web"), "{table}");
    assert!(table.contains(s(&env.repos.join("api"))), "{table}");

    let json = env.gw(&["repos", "--json"]).success().json();
    let arr = json.as_array().expect("--json is a bare array");
    assert_eq!(arr.len(), 2);
    for r in arr {
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["name", "path", "remote", "display_name"]);
    }
    assert_eq!(arr[0]["name"], "api");
    assert_eq!(arr[0]["path"], s(&env.repos.join("api")));
    assert_eq!(arr[0]["remote"], env.url("api"));
    assert_eq!(arr[0]["display_name"], "api");
    assert_eq!(arr[1]["display_name"], "zeta/web");
    assert_eq!(env.gw(&["repos", "-j"]).success().json(), json);

    let tsv = env.gw(&["repos", "-o", "tsv"]).success().stdout;
    assert_eq!(
        tsv,
        format!(
            "NAME\tOWNER/REPO\tPATH\napi\tapi\t{}\nweb\tzeta/web\t{}\n",
            s(&env.repos.join("api")),
            s(&env.repos.join("web"))
        )
    );
    assert_eq!(
        env.gw(&["repos", "-o", "name"]).success().stdout,
        "api\nweb\n"
    );
    assert_eq!(
        env.gw(&["repos", "-o", "path"]).success().stdout,
        format!(
            "{}\n{}\n",
            s(&env.repos.join("api")),
            s(&env.repos.join("web"))
        )
    );

    let machine = env.gw(&["repos", "--format", "json"]).success().result();
    assert_eq!(machine["count"], 2);
}

#[test]
fn discovery_rules() {
    let env = TestEnv::new();
    env.repo("api");
    let init = |rel: &str| {
        let p = env.repos.join(rel);
        std::fs::create_dir_all(&p).unwrap();
        env.git(&p, &["init", "-q", "-b", "main"]);
        env.commit(&p, "README.md", rel, "initial");
    };
    init("group/web"); // depth 1
    init("a/b/c/deep"); // depth 3: the deepest searched
    init("a/b/c/d/too-deep"); // depth 4: not searched
    init(".hidden/secret");
    init("group/.cache/hidden-too");
    init("node_modules/pkg");
    init("__pycache__/cached");
    init("api/vendor/nested"); // inside a repository: not descended into
    init("group/web/sub/nested-too");
    // The workspace dir lives inside the repo dir here; nothing in it is a repository to
    // grove, not even a real clone someone left there.
    let ws_dir = env.repos.join("workspaces");
    std::fs::create_dir_all(&ws_dir).unwrap();
    init("workspaces/stray-clone");
    std::fs::create_dir_all(&env.grove_home).unwrap();
    std::fs::write(
        env.config_path(),
        format!(
            "repo_dirs = [\"{}\"]\nworkspace_dir = \"{}\"\n",
            s(&env.repos),
            s(&ws_dir)
        ),
    )
    .unwrap();

    let names = env.gw(&["repos", "-o", "name"]).success().stdout;
    assert_eq!(names, "api\ndeep\nweb\n");

    // Grove's own worktrees are never discovered.
    env.gw(&["create", "feat", "-b", "feat", "-r", "api,web"])
        .success();
    assert!(ws_dir.join("feat/api").is_dir());
    assert_eq!(env.gw(&["repos", "-o", "name"]).success().stdout, names);
    let init_again = env
        .gw(&["init", s(&env.repos), "--format", "json"])
        .success()
        .result();
    assert_eq!(init_again["repos_found"], 3);
    env.assert_git_agrees_with_state();
}

#[test]
fn gw_home_chooses_the_grove_directory() {
    let env = TestEnv::new();
    env.repo("api");
    let elsewhere = env.root.join("elsewhere");
    let home = s(&elsewhere).to_string();
    env.gw_env(&env.root, &["init", s(&env.repos)], &[("GW_HOME", &home)])
        .success();
    assert!(elsewhere.join("config.toml").is_file());
    assert!(
        elsewhere.join("workspaces").is_dir(),
        "the default workspace dir is inside it"
    );
    assert!(!env.config_path().exists(), "nothing under $HOME/.grove");
    env.gw_env(
        &env.root,
        &["create", "ws", "-b", "ws", "-r", "api"],
        &[("GW_HOME", &home)],
    )
    .success();
    assert!(elsewhere.join("workspaces/ws/api").is_dir());
    assert!(elsewhere.join("state.json").is_file());
    let worktrees = env.git(&env.repos.join("api"), &["worktree", "list", "--porcelain"]);
    assert!(
        worktrees.contains(s(&elsewhere.join("workspaces/ws/api"))),
        "{worktrees}"
    );
    // Without GW_HOME (empty counts as unset) the default, $HOME/.grove, is used.
    env.gw_env(&env.root, &["list"], &[("GW_HOME", "")]).code(5);
    env.gw_env(&env.root, &["init", s(&env.repos)], &[("GW_HOME", "")])
        .success();
    assert!(env.home.join(".grove/config.toml").is_file());
}

/// `GROVE_HOME` belongs to other tools named grove; the Go grove never read it, and neither
/// do we: with it pointing elsewhere, grove lives in `$HOME/.grove` and writes nothing there.
#[test]
fn grove_home_is_not_read() {
    let env = TestEnv::new();
    env.repo("api");
    let other = env.root.join("other-tool");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("their-data"), "keep").unwrap();
    let vars = [("GW_HOME", ""), ("GROVE_HOME", s(&other))];
    env.gw_env(&env.root, &["init", s(&env.repos)], &vars)
        .success();
    env.gw_env(&env.root, &["create", "ws", "-b", "ws", "-r", "api"], &vars)
        .success();
    // Everything else that writes: the log, stats, plugins, the remote cache.
    for args in [
        &["sync", "ws"][..],
        &["rename", "ws", "--to", "ws2"],
        &["plugin", "search"],
        &["bug-report", "--print"],
        &["doctor", "--fix"],
    ] {
        env.gw_env(&env.root, args, &vars).success();
    }
    let plugin = env.root.join("gw-tool");
    e2e::write_executable(&plugin, "#!/bin/sh\n");
    env.gw_env(&env.root, &["plugin", "install", s(&plugin)], &vars)
        .success();
    env.gw_env(&env.root, &["delete", "ws2"], &vars).success();
    assert!(env.home.join(".grove/config.toml").is_file());
    assert!(env.home.join(".grove/grove.log").is_file());
    assert!(env.home.join(".grove/stats.json").is_file());
    assert!(env.home.join(".grove/plugins/gw-tool").is_file());
    let entries: Vec<_> = std::fs::read_dir(&other)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, vec![std::ffi::OsString::from("their-data")]);
}
