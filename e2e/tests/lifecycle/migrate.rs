//! `gw-migrate` through its command line: dry run, apply, a second apply, restore, the
//! envelope and its next actions, and usage errors.

use std::path::Path;

use e2e::{TestEnv, s};
use serde_json::Value;

fn go_file(ws: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"grove\": {{\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"{ws}\"\n      ],\n      \"command\": \"gw\"\n    }}\n  }}\n}}"
    )
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

fn files(result: &Value) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["action"].as_str().unwrap_or("-").to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn dry_run_apply_and_restore() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api"])
        .success();
    let ws = env.workspace_dir().join("feat-x");
    let root_file = ws.join(".mcp.json");
    let wt_file = ws.join("api/.mcp.json");
    let keeper = "{\n  \"mcpServers\": {\n    \"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\", \"--workspace\", \"feat-x\"]},\n    \"keeper\": {\"command\": \"keeper\"}\n  }\n}\n";
    write(&root_file, &go_file("feat-x"));
    write(&wt_file, keeper);

    let dry = env.migrate(&["--format", "json"]).success();
    let r = dry.result();
    assert_eq!(r["mode"], "dry_run");
    assert_eq!(
        files(&r),
        [
            (
                s(&root_file).to_string(),
                "delete_file".into(),
                "pending".into()
            ),
            (
                s(&wt_file).to_string(),
                "remove_entry".into(),
                "pending".into()
            ),
        ]
    );
    assert_eq!(r["summary"]["pending"], 2);
    let next = &dry.json()["next_actions"][0];
    assert_eq!(
        next["argv"],
        serde_json::json!(["gw-migrate", "--apply", "--format", "json"])
    );
    assert_eq!(next["effect"], "write");
    assert_eq!(
        read(&root_file).unwrap(),
        go_file("feat-x"),
        "a dry run changes nothing"
    );

    let text = env.migrate(&[]).success();
    assert!(text.stdout.contains("would delete"), "{text}");
    assert!(text.stderr.contains("gw-migrate --apply"), "{text}");

    let applied = env.migrate(&["--apply", "--format", "json"]).success();
    let r = applied.result();
    assert_eq!(r["summary"]["done"], 2);
    let id = r["backup"]["id"].as_str().unwrap().to_string();
    assert!(!root_file.exists());
    assert_eq!(
        read(&wt_file).unwrap(),
        "{\n  \"mcpServers\": {\n    \"keeper\": {\"command\": \"keeper\"}\n  }\n}\n"
    );
    let undo = &applied.json()["next_actions"][0];
    assert_eq!(
        undo["argv"],
        serde_json::json!(["gw-migrate", "restore", id, "--format", "json"])
    );

    let again = env.migrate(&["--apply", "--format", "json"]).success();
    let r = again.result();
    assert_eq!(
        r["files"],
        serde_json::json!([]),
        "a second run finds nothing"
    );
    assert_eq!(r["backup"], Value::Null);
    assert_eq!(again.json()["next_actions"], serde_json::json!([]));

    let restored = env.migrate(&["restore", "--format", "json"]).success();
    assert_eq!(restored.result()["id"], id.as_str());
    assert_eq!(read(&root_file).unwrap(), go_file("feat-x"));
    assert_eq!(read(&wt_file).unwrap(), keeper);

    let none_left = env.migrate(&["restore", "--format", "json"]).code(2);
    assert_eq!(none_left.error_code(), "USAGE");
}

#[test]
fn grove_dir_and_extra_roots() {
    let env = TestEnv::new();
    let other_home = env.root.join("elsewhere/.grove");
    std::fs::create_dir_all(&other_home).unwrap();
    let mut db = b"SQLite format 3\0".to_vec();
    db.extend_from_slice(&[0; 100]);
    std::fs::write(other_home.join("messages.db"), &db).unwrap();
    let checkout = env.root.join("src/proj/.mcp.json");
    write(&checkout, &go_file("proj"));

    let r = env
        .migrate(&[
            "--grove-dir",
            s(&other_home),
            s(&env.root.join("src")),
            "--apply",
            "--format",
            "json",
        ])
        .success()
        .result();
    assert_eq!(r["grove_dir"], s(&other_home));
    assert_eq!(
        files(&r),
        [
            (
                s(&other_home.join("messages.db")).to_string(),
                "move_database".into(),
                "done".into()
            ),
            (
                s(&checkout).to_string(),
                "delete_file".into(),
                "done".into()
            ),
        ]
    );
    let backup = Path::new(r["backup"]["path"].as_str().unwrap());
    assert!(backup.starts_with(other_home.join("migrate-backups")));
    assert_eq!(
        std::fs::read(backup.join("database/messages.db")).unwrap(),
        db
    );
    assert!(!env.grove_home.join("migrate-backups").exists());
}

#[test]
fn usage_errors_are_envelopes() {
    let env = TestEnv::new();
    let bad = env.migrate(&["--frobnicate", "--format", "json"]).code(2);
    assert_eq!(bad.error_code(), "USAGE");
    let missing = env
        .migrate(&[s(&env.root.join("nope")), "--format", "json"])
        .code(2);
    assert_eq!(missing.error_code(), "USAGE");
    let unknown = env
        .migrate(&["restore", "20000101T000000Z", "--format", "json"])
        .code(2);
    assert_eq!(unknown.error_code(), "USAGE");
    let help = env.migrate(&["--help"]).success();
    assert!(help.stdout.contains("--include-tracked"), "{help}");
}
