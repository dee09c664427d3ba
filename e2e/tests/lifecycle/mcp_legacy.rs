//! The Go grove's MCP surface (legacy baseline): `.mcp.json` written by create and cleaned
//! by delete, and `gw mcp-serve` answering JSON-RPC on stdio with announcements in SQLite.

use e2e::TestEnv;
use serde_json::Value;

const ENTRY_ONLY: &str = r#"{
  "mcpServers": {
    "grove": {
      "args": [
        "mcp-serve",
        "--workspace",
        "feat-x"
      ],
      "command": "gw"
    }
  }
}"#;

#[test]
fn create_registers_the_server_and_delete_removes_it() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let ws = env.workspace_dir().join("feat-x");
    assert_eq!(
        std::fs::read_to_string(ws.join(".mcp.json")).unwrap(),
        ENTRY_ONLY
    );
    env.gw(&["delete", "feat-x"]).success();
    assert!(
        !ws.exists(),
        "the file and the workspace directory are gone"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn delete_keeps_other_servers() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "feat-y", "-b", "feat/y", "-r", "api"])
        .success();
    let ws = env.workspace_dir().join("feat-y");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join(".mcp.json")).unwrap()).unwrap();
    doc["mcpServers"]["other"] = serde_json::json!({"command": "other-mcp"});
    std::fs::write(ws.join(".mcp.json"), doc.to_string()).unwrap();

    env.gw(&["delete", "feat-y"]).success();
    let left: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(
        left,
        serde_json::json!({"mcpServers": {"other": {"command": "other-mcp"}}})
    );
    assert!(env.state().as_array().unwrap().is_empty());
    env.assert_git_agrees_with_state();
}

#[test]
fn mcp_serve_publishes_announcements_to_other_workspaces() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "feat-a", "-b", "feat/a", "-r", "api"])
        .success();
    let publish = env
        .gw_stdin(
            &["mcp-serve", "--workspace", "feat-a"],
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"announce","arguments":{"repo_url":"git@github.com:acme/api.git","category":"warning","message":"schema change"}}}"#,
                "\n"
            ),
        )
        .success();
    let replies: Vec<Value> = publish
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2, "{publish}");
    assert_eq!(replies[0]["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(
        replies[1]["result"]["content"][0]["text"],
        "Announcement #1 published (warning)"
    );
    let db = std::fs::read(env.grove_home.join("messages.db")).unwrap();
    assert!(db.starts_with(b"SQLite format 3\0"));

    let read = env
        .gw_stdin(
            &["mcp-serve", "-w", "feat-b"],
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_announcements","arguments":{"repo_url":"https://github.com/acme/api"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_workspaces","arguments":{}}}"#,
                "\n"
            ),
        )
        .success();
    let replies: Vec<Value> = read
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rows: Value =
        serde_json::from_str(replies[0]["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(rows[0]["message"], "schema change");
    assert_eq!(rows[0]["workspace_id"], "feat-a");
    let list: Value =
        serde_json::from_str(replies[1]["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(list[0]["name"], "feat-a");
    assert_eq!(list[0]["repos"][0]["repo_name"], "api");
}
