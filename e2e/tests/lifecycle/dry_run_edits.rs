//! `--dry-run` on the configuration edits (`init`, `add-dir`, `remove-dir`, `preset
//! add|remove`, `trust`, `plugin install|remove|upgrade`): validated as the command is,
//! nothing written, and the output names the change. They are no `gw plan` kinds, so
//! `--dry-run --out F` is a `USAGE` error that says so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use e2e::{TestEnv, s};

/// Every file under `dir` with its bytes (none when `dir` does not exist), except the
/// remotes cache, which every read of the repo dirs refreshes (as `gw repos` does), and
/// `grove.log`, where every command leaves a line.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy();
            if name == "cache" || name.starts_with("grove.log") {
                continue;
            }
            if p.is_dir() {
                out.insert(p.clone(), Vec::new());
                todo.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// Runs `gw args --dry-run` in text and in machine mode: both succeed, grove's directory
/// is byte for byte what it was, the text names `shows`, and the result says `dry_run`.
#[track_caller]
fn dry(env: &TestEnv, args: &[&str], shows: &str) -> serde_json::Value {
    let before = files(&env.grove_home);
    let mut a = args.to_vec();
    a.push("--dry-run");
    // Messages go to stderr, as the command's own do.
    let text = env.gw(&a).success();
    let shown = format!("{}{}", text.stdout, text.stderr);
    assert!(shown.contains(shows), "{text}");
    assert!(shown.contains("nothing was written"), "{text}");
    a.extend(["--format", "json"]);
    let r = env.gw(&a).success().result();
    assert_eq!(r["dry_run"], true, "{r:#}");
    assert_eq!(files(&env.grove_home), before, "gw {}", a.join(" "));
    // Not a plan kind: `--out` is refused, and writes nothing either.
    let out = env.root.join("tmp/edit.json");
    a.extend(["--out", s(&out)]);
    let refused = env.gw(&a).code(2);
    assert_eq!(refused.error_code(), "USAGE", "{refused}");
    assert!(refused.stdout.contains("Drop --out"), "{refused}");
    assert!(!out.exists());
    assert_eq!(files(&env.grove_home), before);
    r
}

#[test]
fn init_dry_run_writes_nothing() {
    let env = TestEnv::new();
    env.repo("api");
    let repos = s(&env.repos);
    let r = dry(&env, &["init", repos], "Would initialize grove config");
    assert_eq!(r["created"], true, "{r:#}");
    assert_eq!(r["repos_found"], 1, "{r:#}");
    // (`grove.log` is written, as by any command.)
    assert!(
        !env.config_path().exists(),
        "a dry run writes no configuration"
    );
    assert!(
        !env.workspace_dir().exists(),
        "nor makes the workspace directory"
    );
    // It validates as init does.
    let missing = env.gw(&["init", "/no/such/dir", "--dry-run", "--format", "json"]);
    assert_eq!(missing.code(2).error_code(), "USAGE");
    env.gw(&["init", repos]).success();
    assert!(env.config_path().is_file());
    dry(&env, &["init", repos], "Would update grove config");
}

#[test]
fn repo_dir_and_preset_dry_runs_write_nothing() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let more = env.root.join("more");
    std::fs::create_dir_all(&more).unwrap();
    let r = dry(&env, &["add-dir", s(&more)], "Would add");
    assert_eq!(r["outcome"], "added", "{r:#}");
    let repos = s(&env.repos);
    let r = dry(&env, &["remove-dir", repos], "Would remove");
    assert_eq!(r["outcome"], "removed", "{r:#}");
    let r = dry(
        &env,
        &["preset", "add", "both", "-r", "api,web"],
        "Would save preset both",
    );
    assert_eq!(r["preset"]["repos"], serde_json::json!(["api", "web"]));
    // Validated as the command is: an unknown repository, a preset that is not there.
    let unknown = env.gw(&[
        "preset",
        "add",
        "x",
        "-r",
        "nosuch",
        "--dry-run",
        "--format",
        "json",
    ]);
    assert_eq!(unknown.code(3).error_code(), "REPO_NOT_FOUND");
    let none = env.gw(&["preset", "remove", "both", "--dry-run", "--format", "json"]);
    assert_eq!(none.code(3).error_code(), "PRESET_NOT_FOUND");
    env.gw(&["preset", "add", "both", "-r", "api,web"])
        .success();
    dry(
        &env,
        &["preset", "remove", "both"],
        "Would remove preset both",
    );
    assert!(
        std::fs::read_to_string(env.config_path())
            .unwrap()
            .contains("both"),
        "the preset is still there"
    );
}

#[test]
fn trust_dry_runs_write_nothing() {
    let env = TestEnv::with_repos(&["api"]);
    std::fs::write(env.repos.join("api/.grove.toml"), "setup = \"true\"\n").unwrap();
    for args in [&["trust", "api"][..], &["trust", "add", "api"][..]] {
        let r = dry(&env, args, "Would approve");
        assert_eq!(r["outcome"], "approved", "{r:#}");
    }
    let unknown = env.gw(&["trust", "nosuch", "--dry-run", "--format", "json"]);
    assert_eq!(unknown.code(3).error_code(), "REPO_NOT_FOUND");
    env.gw(&["trust", "api"]).success();
    let r = dry(
        &env,
        &["trust", "remove", "api"],
        "would no longer be approved",
    );
    assert_eq!(r["outcome"], "removed", "{r:#}");
    let list = env
        .gw(&["trust", "list", "--format", "json"])
        .success()
        .result();
    assert_eq!(list["count"], 1, "still approved: {list:#}");
}

#[test]
fn plugin_dry_runs_write_nothing() {
    let env = TestEnv::with_repos(&["api"]);
    let src = env.root.join("gw-tool.sh");
    e2e::write_executable(&src, "#!/bin/sh\necho one\n");
    let r = dry(
        &env,
        &["plugin", "install", s(&src)],
        "Would install plugin tool",
    );
    assert_eq!(r["outcome"], "installed", "{r:#}");
    assert!(
        !env.plugins_dir().exists(),
        "no plugins directory, not even to stage"
    );
    // Checked as an install is: a file that does not exist.
    let missing = env.root.join("gw-nosuch");
    let refused = env.gw(&[
        "plugin",
        "install",
        s(&missing),
        "--dry-run",
        "--format",
        "json",
    ]);
    assert_eq!(refused.code(2).error_code(), "USAGE");
    env.gw(&["plugin", "install", s(&src)]).success();
    let installed = env.plugins_dir().join("gw-tool");
    e2e::write_executable(&src, "#!/bin/sh\necho two\n");
    let r = dry(&env, &["plugin", "upgrade", "tool"], "would be upgraded");
    assert_eq!(r["plugins"][0]["outcome"], "upgraded", "{r:#}");
    assert_eq!(r["upgraded"], 1, "{r:#}");
    dry(
        &env,
        &["plugin", "remove", "tool"],
        "Would remove plugin tool",
    );
    assert_eq!(
        std::fs::read_to_string(&installed).unwrap(),
        "#!/bin/sh\necho one\n",
        "the installed plugin is untouched"
    );
}

#[test]
fn migrate_restore_dry_run_writes_nothing() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat-x", "feat/x", "api");
    let file = env.ws("feat-x").join(".mcp.json");
    let go = "{\n  \"mcpServers\": {\n    \"grove\": {\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"feat-x\"\n      ],\n      \"command\": \"gw\"\n    }\n  }\n}";
    std::fs::write(&file, go).unwrap();
    env.migrate(&["--apply"]).success();
    assert!(!file.exists());
    let before = files(&env.grove_home);
    let text = env.migrate(&["restore", "--dry-run"]).success();
    let shown = format!("{}{}", text.stdout, text.stderr);
    assert!(shown.contains("would restore backup"), "{text}");
    assert!(shown.contains(s(&file)), "the file is named: {text}");
    let r = env
        .migrate(&["restore", "--dry-run", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["dry_run"], true, "{r:#}");
    assert_eq!(r["files"][0]["status"], "restored", "{r:#}");
    let out = env.root.join("tmp/restore.json");
    let refused = env.migrate(&["restore", "--dry-run", "--out", s(&out), "--format", "json"]);
    assert_eq!(refused.code(2).error_code(), "USAGE");
    assert!(!file.exists(), "a dry run restores nothing");
    assert_eq!(
        files(&env.grove_home),
        before,
        "nor writes the backup's manifest"
    );
    env.migrate(&["restore"]).success();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), go);
}
