//! `gw mcp-serve --workspace NAME`: the Go grove's MCP server, JSON-RPC 2.0 over stdio,
//! one message per line.
//!
//! Methods: `initialize`, `ping`, `tools/list`, `tools/call` (tools `announce`,
//! `get_announcements`, `list_workspaces`). A request without an `id` is a notification
//! and gets no answer; a line that is not a JSON-RPC message (invalid JSON, a non-string
//! `method`) is skipped, as the Go server did from v1.1.7.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

use super::store::{CATEGORIES, Store};
use crate::error::{Error, Result};
use crate::ops::Ctx;

pub const PROTOCOL_VERSION: &str = "2024-11-05";

const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

type RpcResult = std::result::Result<Value, (i64, String)>;

/// Serves requests from `input` until it ends, answering on `output`.
pub fn serve(
    ctx: &Ctx<'_>,
    workspace: &str,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<()> {
    let db = ctx.home.messages_db();
    let store = Store::open(&db).map_err(|e| Error::internal(e.to_string()))?;
    let server = Server {
        ctx,
        workspace,
        store,
    };
    let mut line = String::new();
    loop {
        line.clear();
        let n = input
            .read_line(&mut line)
            .map_err(|e| Error::internal(format!("cannot read stdin: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        let Some(reply) = server.handle_line(&line) else {
            continue;
        };
        let mut text = reply.to_string();
        text.push('\n');
        output
            .write_all(text.as_bytes())
            .and_then(|_| output.flush())
            .map_err(|e| Error::internal(format!("cannot write stdout: {e}")))?;
    }
}

struct Server<'a> {
    ctx: &'a Ctx<'a>,
    workspace: &'a str,
    store: Store,
}

impl Server<'_> {
    /// The answer to one line, or `None` for notifications and malformed lines.
    fn handle_line(&self, line: &str) -> Option<Value> {
        let msg: Value = serde_json::from_str(line.trim()).ok()?;
        let method = msg.get("method")?.as_str()?;
        let id = msg.get("id")?.clone();
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        Some(match self.handle(method, &params) {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err((code, message)) => {
                json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
            }
        })
    }

    fn handle(&self, method: &str, params: &Value) -> RpcResult {
        match method {
            "initialize" => Ok(json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": { "tools": {} },
                "serverInfo": { "name": "grove", "version": env!("CARGO_PKG_VERSION") },
            })),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": tools() })),
            "tools/call" => {
                let name = params.get("name").and_then(Value::as_str).unwrap_or("");
                let args = params.get("arguments").cloned().unwrap_or(json!({}));
                let text = self.call(name, &args)?;
                Ok(json!({ "content": [{ "type": "text", "text": text }] }))
            }
            other => Err((METHOD_NOT_FOUND, format!("method not found: {other}"))),
        }
    }

    fn call(&self, tool: &str, args: &Value) -> std::result::Result<String, (i64, String)> {
        let arg = |k: &str| args.get(k).and_then(Value::as_str);
        let required = |k: &str| {
            arg(k)
                .filter(|v| !v.is_empty())
                .ok_or((INVALID_PARAMS, format!("missing required argument: {k}")))
        };
        let internal = |e: super::store::Error| (INTERNAL_ERROR, e.to_string());
        match tool {
            "announce" => {
                let repo = required("repo_url")?;
                let category = required("category")?;
                let message = required("message")?;
                if !CATEGORIES.contains(&category) {
                    return Err((
                        INVALID_PARAMS,
                        format!(
                            "invalid category {category:?}: use one of {}",
                            CATEGORIES.join(", ")
                        ),
                    ));
                }
                let id = self
                    .store
                    .announce(self.workspace, repo, category, message)
                    .map_err(internal)?;
                Ok(format!("Announcement #{id} published ({category})"))
            }
            "get_announcements" => {
                let repo = required("repo_url")?;
                let rows = self
                    .store
                    .query(repo, self.workspace, arg("since").filter(|s| !s.is_empty()))
                    .map_err(internal)?;
                Ok(serde_json::to_string_pretty(&rows).expect("rows serialise"))
            }
            "list_workspaces" => {
                let state = self
                    .ctx
                    .state()
                    .map_err(|e| (INTERNAL_ERROR, e.message.clone()))?;
                let list: Vec<Value> = state
                    .workspaces
                    .iter()
                    .map(|w| {
                        json!({
                            "name": w.name,
                            "branch": w.branch,
                            "path": w.path,
                            "repos": w.repos.iter().map(|r| json!({
                                "repo_name": r.repo_name,
                                "branch": r.branch,
                                "source_repo": r.source_repo,
                            })).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                Ok(serde_json::to_string_pretty(&list).expect("values serialise"))
            }
            other => Err((INVALID_PARAMS, format!("unknown tool: {other}"))),
        }
    }
}

fn tools() -> Value {
    let string = |d: &str| json!({ "type": "string", "description": d });
    json!([
        {
            "name": "announce",
            "description": "Publish an announcement to other workspaces that use the same repository",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "repo_url": string("The repository's remote URL"),
                    "category": { "type": "string", "enum": CATEGORIES, "description": "What kind of announcement" },
                    "message": string("The announcement"),
                },
                "required": ["repo_url", "category", "message"],
            },
        },
        {
            "name": "get_announcements",
            "description": "Announcements from other workspaces about a repository, newest first",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "repo_url": string("The repository's remote URL"),
                    "since": string("Only announcements at or after this UTC time (YYYY-MM-DD HH:MM:SS)"),
                },
                "required": ["repo_url"],
            },
        },
        {
            "name": "list_workspaces",
            "description": "All grove workspaces with their branches and repositories",
            "inputSchema": { "type": "object", "properties": {} },
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Env;
    use crate::ops::Quiet;

    fn run(ctx: &Ctx<'_>, workspace: &str, lines: &[&str]) -> Vec<Value> {
        let input = lines.join("\n");
        let mut out = Vec::new();
        serve(ctx, workspace, &mut input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn speaks_json_rpc_and_shares_announcements() {
        let home = tempfile::tempdir().unwrap();
        let env = Env::for_home(home.path(), home.path());
        let ctx = Ctx::new(&env, &Quiet);
        let replies = run(
            &ctx,
            "ws-a",
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "this is not json",
                r#"{"jsonrpc":"2.0","id":2,"method":42}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"announce","arguments":{"repo_url":"git@github.com:acme/api.git","category":"breaking_change","message":"v2 API"}}}"#,
                r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"announce","arguments":{"repo_url":"acme/api","category":"gossip","message":"x"}}}"#,
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}"#,
                r#"{"jsonrpc":"2.0","id":8,"method":"resources/list"}"#,
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_workspaces","arguments":{}}}"#,
            ],
        );
        let ids: Vec<i64> = replies.iter().map(|r| r["id"].as_i64().unwrap()).collect();
        assert_eq!(
            ids,
            [1, 3, 4, 5, 6, 7, 8, 9],
            "malformed lines and notifications get no answer"
        );
        assert_eq!(replies[0]["result"]["protocolVersion"], PROTOCOL_VERSION);
        assert_eq!(replies[0]["result"]["serverInfo"]["name"], "grove");
        assert_eq!(replies[1]["result"], json!({}));
        let names: Vec<&str> = replies[2]["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["announce", "get_announcements", "list_workspaces"]);
        assert_eq!(
            replies[3]["result"]["content"][0]["text"],
            "Announcement #1 published (breaking_change)"
        );
        assert_eq!(replies[4]["error"]["code"], INVALID_PARAMS);
        assert_eq!(replies[5]["error"]["code"], INVALID_PARAMS);
        assert_eq!(replies[6]["error"]["code"], METHOD_NOT_FOUND);
        assert_eq!(replies[7]["result"]["content"][0]["text"], "[]");
        assert!(home.path().join(".grove/messages.db").is_file());

        let own = run(
            &ctx,
            "ws-a",
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_announcements","arguments":{"repo_url":"https://github.com/acme/api"}}}"#,
            ],
        );
        assert_eq!(
            own[0]["result"]["content"][0]["text"], "[]",
            "own announcements are excluded"
        );
        let other = run(
            &ctx,
            "ws-b",
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_announcements","arguments":{"repo_url":"https://github.com/acme/api"}}}"#,
            ],
        );
        let rows: Value =
            serde_json::from_str(other[0]["result"]["content"][0]["text"].as_str().unwrap())
                .unwrap();
        assert_eq!(rows[0]["message"], "v2 API");
        assert_eq!(rows[0]["workspace_id"], "ws-a");
        assert_eq!(rows[0]["repo_url"], "acme/api");
    }
}
