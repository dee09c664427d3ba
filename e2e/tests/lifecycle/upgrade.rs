//! Upgrading from the MCP era: the legacy baseline's `gw` (the commit recorded in
//! `size-reports/before-mcp-removal.json`, built once per machine into the target
//! directory) creates workspaces and publishes announcements; leftovers are added the way
//! older Go releases left them; then `gw-migrate` reports, applies, finds nothing more,
//! restores and applies again, with exact file contents checked at every step; and the
//! current `gw` lists and deletes the workspaces.
//!
//! `GW_LEGACY_BIN` may point at an already built baseline `gw`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use e2e::{TestEnv, s};
use serde_json::Value;

/// The baseline commit, as recorded when its size was measured.
fn baseline_commit() -> String {
    let report =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../size-reports/before-mcp-removal.json");
    let text =
        std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{}: {e}", report.display()));
    let v: Value = serde_json::from_str(&text).expect("the size report parses");
    v["commit"]
        .as_str()
        .expect("the report names its commit")
        .to_string()
}

/// The baseline's `gw`: exported with `git archive` (no worktree registration in the
/// developer's repository) and built with the debug profile into a directory keyed by
/// the commit, so it is built once per machine.
fn legacy_gw() -> PathBuf {
    if let Some(p) = std::env::var_os("GW_LEGACY_BIN") {
        return PathBuf::from(p);
    }
    let commit = baseline_commit();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| project.join("target"));
    let cache = target.join("legacy-gw").join(&commit[..12]);
    let bin = cache.join("target/debug/gw");
    if bin.is_file() {
        return bin;
    }
    // Two tests of this file may ask at once, each in a process of its own under nextest:
    // one builds while the other waits on this lock, then finds the binary made.
    std::fs::create_dir_all(&cache).unwrap();
    let lock = std::fs::File::create(cache.join("build.lock")).unwrap();
    lock.lock().expect("the baseline build's lock");
    if bin.is_file() {
        return bin;
    }
    let src = cache.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap();
    let archive = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "git -C '{}' archive --format=tar {commit} | tar -x -C '{}'",
            project.display(),
            src.display()
        ))
        .status()
        .expect("git archive runs");
    assert!(
        archive.success(),
        "cannot export the baseline commit {commit}; a shallow clone lacks it \
         (fetch the history, or set GW_LEGACY_BIN to a gw built from it)"
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--quiet", "--locked", "--bin", "gw"])
        .current_dir(&src)
        .env("CARGO_TARGET_DIR", cache.join("target"))
        .stderr(Stdio::inherit())
        .status()
        .expect("cargo runs");
    assert!(
        built.success(),
        "building the baseline gw ({commit}) failed"
    );
    bin
}

fn go_file(ws: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"grove\": {{\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"{ws}\"\n      ],\n      \"command\": \"gw\"\n    }}\n  }}\n}}"
    )
}

/// `web` tracks this `.mcp.json` (in the Go grove's own formatting).
const WEB_TRACKED: &str =
    "{\n  \"mcpServers\": {\n    \"lint\": {\n      \"command\": \"lint-mcp\"\n    }\n  }\n}";
/// What Go grove ≤ 1.1.5 made of it in a worktree of workspace `ws-one`.
const WEB_MERGED: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"ws-one\"\n      ],\n      \"command\": \"gw\"\n    },\n    \"lint\": {\n      \"command\": \"lint-mcp\"\n    }\n  }\n}";
/// `docs` tracks a code-intelligence tool's server, also named `grove`.
const DOCS_FOREIGN: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\"command\": \"grove\", \"args\": [\"serve\"]}\n  }\n}\n";
/// ws-two's root file after someone added their own server.
const TWO_WITH_OTHER: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"ws-two\"\n      ],\n      \"command\": \"gw\"\n    },\n    \"other\": {\n      \"command\": \"other-mcp\"\n    }\n  }\n}";
const TWO_OTHER_ONLY: &str =
    "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"other-mcp\"\n    }\n  }\n}";

/// Publishes announcements through the baseline's `gw mcp-serve`, then kills it the way
/// agent clients did, so `messages.db-wal` and `-shm` stay behind.
fn announce(env: &TestEnv, gw: &Path, workspace: &str, messages: &[&str]) {
    let mut child = env
        .command(gw, &["mcp-serve", "--workspace", workspace])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mcp-serve starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut replies = BufReader::new(child.stdout.take().unwrap());
    let mut send = |id: usize, msg: String| {
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"{msg}}}"#).unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        replies.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).expect("a JSON-RPC reply")
    };
    let init = send(0, r#"initialize","params":{}"#.to_string());
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05");
    for (i, m) in messages.iter().enumerate() {
        let reply = send(
            i + 1,
            format!(
                r#"tools/call","params":{{"name":"announce","arguments":{{"repo_url":"git@github.com:acme/api.git","category":"status","message":"{m}"}}}}"#
            ),
        );
        let text = reply["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.ends_with("published (status)"), "{reply}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The bytes of every file the migration may touch (`None` when absent).
fn snapshot(paths: &[PathBuf]) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    paths
        .iter()
        .map(|p| (p.clone(), std::fs::read(p).ok()))
        .collect()
}

fn text(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

/// `(path, action, status, reason)` of each file in a gw-migrate result, sorted.
fn outcomes(result: &Value) -> Vec<(String, String, String, String)> {
    let mut v: Vec<_> = result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let field = |k: &str| f[k].as_str().unwrap_or("-").to_string();
            (
                field("path"),
                field("action"),
                field("status"),
                field("reason"),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn upgrade_from_the_mcp_era() {
    let legacy = legacy_gw();
    let env = TestEnv::with_repos(&["api", "web", "docs"]);
    // Repositories that track a .mcp.json of their own.
    for (repo, content) in [("web", WEB_TRACKED), ("docs", DOCS_FOREIGN)] {
        let dir = env.repos.join(repo);
        env.commit(&dir, ".mcp.json", content, "add .mcp.json");
        env.git(&dir, &["push", "-q", "origin", "main"]);
    }

    // The baseline gw creates two workspaces (and registers its server in each root).
    for (name, repos) in [("ws-one", "api,web"), ("ws-two", "api,docs")] {
        env.run(
            &legacy,
            &["create", name, "-b", &format!("feat/{name}"), "-r", repos],
        )
        .success();
    }
    let wd = env.workspace_dir();
    let one = wd.join("ws-one");
    let two = wd.join("ws-two");
    assert_eq!(text(&one.join(".mcp.json")).unwrap(), go_file("ws-one"));
    announce(
        &env,
        &legacy,
        "ws-one",
        &["api v2 is coming", "api v2 is out"],
    );
    let db = env.grove_home.join("messages.db");
    let wal = env.grove_home.join("messages.db-wal");
    let shm = env.grove_home.join("messages.db-shm");
    assert!(
        std::fs::read(&db)
            .unwrap()
            .starts_with(b"SQLite format 3\0")
    );
    assert!(
        wal.is_file() && shm.is_file(),
        "a killed server leaves its WAL behind"
    );

    // What Go grove <= 1.1.5 also wrote into every worktree, a server someone added by
    // hand, and a workspace directory whose state entry is gone.
    std::fs::write(one.join("api/.mcp.json"), go_file("ws-one")).unwrap();
    std::fs::write(one.join("web/.mcp.json"), WEB_MERGED).unwrap();
    std::fs::write(two.join("api/.mcp.json"), go_file("ws-two")).unwrap();
    std::fs::write(two.join(".mcp.json"), TWO_WITH_OTHER).unwrap();
    let orphan = wd.join("ws-gone/.mcp.json");
    std::fs::create_dir_all(orphan.parent().unwrap()).unwrap();
    std::fs::write(&orphan, go_file("ws-gone")).unwrap();

    let watched: Vec<PathBuf> = vec![
        one.join(".mcp.json"),
        one.join("api/.mcp.json"),
        one.join("web/.mcp.json"),
        two.join(".mcp.json"),
        two.join("api/.mcp.json"),
        two.join("docs/.mcp.json"),
        orphan.clone(),
        db.clone(),
        wal.clone(),
        shm.clone(),
    ];
    let before = snapshot(&watched);

    // The current doctor reports exactly what gw-migrate would (the tracked workspaces,
    // the workspace directory with its orphaned workspace, and the database), the tracked
    // file as not fixable, and another tool's `grove` server not at all; it changes
    // nothing.
    let doctor = env.gw(&["doctor", "--format", "json"]).doctor();
    let found: Vec<(String, bool)> = crate::migrate_fixtures::doctor_leftovers(&doctor)
        .into_iter()
        .map(|(path, _, fixable)| (path, fixable))
        .collect();
    let mut expected: Vec<(String, bool)> = [
        (one.join(".mcp.json"), true),
        (one.join("api/.mcp.json"), true),
        (one.join("web/.mcp.json"), false),
        (two.join(".mcp.json"), true),
        (two.join("api/.mcp.json"), true),
        (orphan.clone(), true),
        (db.clone(), true),
        (wal.clone(), true),
        (shm.clone(), true),
    ]
    .into_iter()
    .map(|(p, f)| (s(&p).to_string(), f))
    .collect();
    expected.sort();
    assert_eq!(found, expected);
    assert_eq!(snapshot(&watched), before, "doctor only reports");

    let row = |p: &Path, action: &str, status: &str, reason: &str| {
        (
            s(p).to_string(),
            action.to_string(),
            status.to_string(),
            reason.to_string(),
        )
    };
    let mut pending = vec![
        row(&one.join(".mcp.json"), "delete_file", "pending", "-"),
        row(&one.join("api/.mcp.json"), "delete_file", "pending", "-"),
        row(&one.join("web/.mcp.json"), "-", "skipped", "tracked"),
        row(&two.join(".mcp.json"), "remove_entry", "pending", "-"),
        row(&two.join("api/.mcp.json"), "delete_file", "pending", "-"),
        row(&two.join("docs/.mcp.json"), "-", "skipped", "foreign_entry"),
        row(&orphan, "delete_file", "pending", "-"),
        row(&db, "move_database", "pending", "-"),
        row(&wal, "move_database", "pending", "-"),
        row(&shm, "move_database", "pending", "-"),
    ];
    pending.sort();

    // 1. The report changes nothing.
    let dry = env.migrate(&["--format", "json"]).success();
    assert_eq!(outcomes(&dry.result()), pending);
    assert_eq!(
        dry.result()["summary"]["needs_attention"],
        1,
        "the tracked file"
    );
    assert_eq!(snapshot(&watched), before);

    // 2. --apply does exactly that.
    let applied = env.migrate(&["--apply", "--format", "json"]).success();
    let done: Vec<_> = pending
        .iter()
        .map(|(p, a, st, r)| {
            let st = if st == "pending" { "done" } else { st };
            (p.clone(), a.clone(), st.to_string(), r.clone())
        })
        .collect();
    assert_eq!(outcomes(&applied.result()), done);
    let backup = PathBuf::from(applied.result()["backup"]["path"].as_str().unwrap());
    for gone in [
        &one.join(".mcp.json"),
        &one.join("api/.mcp.json"),
        &two.join("api/.mcp.json"),
        &orphan,
        &db,
        &wal,
        &shm,
    ] {
        assert!(!gone.exists(), "{} was moved away", gone.display());
    }
    assert_eq!(text(&two.join(".mcp.json")).unwrap(), TWO_OTHER_ONLY);
    assert_eq!(
        text(&one.join("web/.mcp.json")).unwrap(),
        WEB_MERGED,
        "tracked: left"
    );
    assert_eq!(text(&two.join("docs/.mcp.json")).unwrap(), DOCS_FOREIGN);
    assert_eq!(
        std::fs::read(backup.join("database/messages.db")).unwrap(),
        before[&db].clone().unwrap()
    );
    let after_apply = snapshot(&watched);

    // 3. A second run finds nothing to do.
    let again = env.migrate(&["--apply", "--format", "json"]).success();
    assert_eq!(again.result()["summary"]["pending"], 0);
    assert_eq!(again.result()["summary"]["done"], 0);
    assert_eq!(again.result()["backup"], Value::Null);
    assert_eq!(snapshot(&watched), after_apply);

    // 4. restore puts every byte back.
    let restored = env.migrate(&["restore", "--format", "json"]).success();
    assert!(
        restored.result()["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["status"] == "restored"),
        "{restored}"
    );
    assert_eq!(snapshot(&watched), before);

    // 5. --apply again gives the same result as the first time.
    env.migrate(&["--apply", "--format", "json"]).success();
    assert_eq!(snapshot(&watched), after_apply);

    // The tracked file: removing the entry gives back exactly what web's HEAD holds.
    let tracked = env
        .migrate(&["--apply", "--include-tracked", "--format", "json"])
        .success()
        .result();
    assert_eq!(
        outcomes(&tracked)
            .into_iter()
            .filter(|o| o.2 == "done")
            .collect::<Vec<_>>(),
        [row(&one.join("web/.mcp.json"), "remove_entry", "done", "-")]
    );
    assert_eq!(text(&one.join("web/.mcp.json")).unwrap(), WEB_TRACKED);
    assert_eq!(
        env.git(&one.join("web"), &["status", "--porcelain"]),
        "",
        "the worktree is clean again"
    );

    // The current gw takes over: lists and deletes the baseline's workspaces.
    let list = env.gw(&["list", "--format", "json"]).success().result();
    let names: Vec<&str> = list["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ws-one", "ws-two"]);
    let synced = env
        .gw(&["sync", "ws-one", "--format", "json"])
        .success()
        .result();
    assert!(
        synced["repos"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["outcome"] == "up_to_date"),
        "{synced}"
    );
    env.gw(&["delete", "ws-one", "--format", "json"]).success();
    // ws-two's root still holds the server someone added: that is their work.
    let refused = env.gw(&["delete", "ws-two", "--format", "json"]).code(4);
    assert_eq!(refused.error_code(), "WORKTREE_DIRTY");
    env.gw(&["delete", "ws-two", "--force", "--format", "json"])
        .success();
    assert!(!one.exists() && !two.exists());
    env.assert_git_agrees_with_state();
}

/// Workspace slots round-trip through the baseline, a gw that does not know them: it keeps
/// the field in the records it writes back, a workspace it deletes
/// frees its slot, and one it creates gets the smallest free slot from the first gw that
/// needs its ports.
#[test]
fn slots_round_trip_through_the_baseline() {
    let legacy = legacy_gw();
    let env = TestEnv::with_repos(&["api", "web"]);
    for name in ["a", "b", "c"] {
        env.gw(&["create", name, "-b", name, "-r", "api"]).success();
    }
    let slots = |env: &TestEnv| -> BTreeMap<String, Value> {
        env.state()
            .as_array()
            .unwrap()
            .iter()
            .map(|w| (w["name"].as_str().unwrap().to_string(), w["slot"].clone()))
            .collect()
    };
    let expect = |pairs: &[(&str, Value)]| -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect()
    };
    assert_eq!(
        slots(&env),
        expect(&[("a", 0.into()), ("b", 1.into()), ("c", 2.into())])
    );

    env.run(&legacy, &["delete", "a"]).success();
    env.run(&legacy, &["create", "d", "-b", "d", "-r", "web"])
        .success();
    assert_eq!(
        slots(&env),
        expect(&[("b", 1.into()), ("c", 2.into()), ("d", Value::Null)])
    );

    // The first gw that needs d's ports gives it the smallest free slot; a new workspace
    // takes the next.
    let d = env
        .gw(&["env", "d", "--format", "json"])
        .success()
        .envelope("env");
    assert_eq!(d["result"]["env"]["GROVE_SLOT"], "0");
    env.gw(&["create", "e", "-b", "e", "-r", "web"]).success();
    assert_eq!(
        slots(&env),
        expect(&[
            ("b", 1.into()),
            ("c", 2.into()),
            ("d", 0.into()),
            ("e", 3.into())
        ])
    );
    // And the baseline still reads and lists what grove wrote.
    let listed = env.run(&legacy, &["list", "--json"]).success().json();
    assert_eq!(listed.as_array().unwrap().len(), 4, "{listed:#}");
    env.assert_git_agrees_with_state();
}
