//! The `grove` entry in a workspace's `.mcp.json`, written the way the Go grove ≤ 1.1.11
//! wrote it: `mcpServers.grove = {"command": "gw", "args": ["mcp-serve", "--workspace",
//! NAME]}`, keys sorted, two-space indentation, no final newline (Go's `json.MarshalIndent`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::fsx;

pub const FILE: &str = ".mcp.json";

pub fn path(workspace_root: &Path) -> PathBuf {
    workspace_root.join(FILE)
}

/// The entry that launches grove's server for `workspace`.
pub fn entry(workspace: &str) -> Value {
    json!({ "command": "gw", "args": ["mcp-serve", "--workspace", workspace] })
}

/// Sets `mcpServers.grove` in `<workspace_root>/.mcp.json`, keeping every other key and
/// server. As in the Go grove, a missing, unparseable or non-object file starts from `{}`.
pub fn write(workspace_root: &Path, workspace: &str) -> fsx::Result<()> {
    let path = path(workspace_root);
    let mut doc = match fsx::read_optional(&path) {
        Ok(Some(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    let servers = doc
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    if !servers.is_object() {
        *servers = Value::Object(Map::new());
    }
    if let Value::Object(s) = servers {
        s.insert("grove".into(), entry(workspace));
    }
    fsx::write_atomic(&path, go_json(Value::Object(doc)).as_bytes())
}

/// Removes `mcpServers.grove` (whatever it holds, as the Go grove did) and deletes the file
/// when no server remains. An unparseable file, or one without `mcpServers`, is left alone.
/// Returns whether the file changed.
pub fn remove(workspace_root: &Path) -> fsx::Result<bool> {
    let path = path(workspace_root);
    let Some(text) = fsx::read_optional(&path)? else {
        return Ok(false);
    };
    let Ok(Value::Object(mut doc)) = serde_json::from_str::<Value>(&text) else {
        return Ok(false);
    };
    let Some(Value::Object(servers)) = doc.get_mut("mcpServers") else {
        return Ok(false);
    };
    if servers.remove("grove").is_none() {
        return Ok(false);
    }
    if servers.is_empty() {
        fsx::remove_file(&path)?;
    } else {
        fsx::write_atomic(&path, go_json(Value::Object(doc)).as_bytes())?;
    }
    Ok(true)
}

/// Go's `json.MarshalIndent(v, "", "  ")` of a map: keys sorted at every level.
fn go_json(v: Value) -> String {
    fn sorted(v: Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut entries: Vec<(String, Value)> = m.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
            }
            Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
            other => other,
        }
    }
    serde_json::to_string_pretty(&sorted(v)).expect("a JSON value serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONLY_GROVE: &str = r#"{
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
    fn writes_go_shaped_file() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "feat-x").unwrap();
        assert_eq!(fsx::read(&path(dir.path())).unwrap(), ONLY_GROVE);
    }

    #[test]
    fn merges_with_other_servers_and_keys() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path());
        fsx::write_atomic(
            &p,
            br#"{"mcpServers":{"other":{"command":"x"}},"$schema":"s"}"#,
        )
        .unwrap();
        write(dir.path(), "ws").unwrap();
        let v: Value = serde_json::from_str(&fsx::read(&p).unwrap()).unwrap();
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(v["mcpServers"]["grove"], entry("ws"));
        assert_eq!(v["$schema"], "s");

        assert!(remove(dir.path()).unwrap());
        let v: Value = serde_json::from_str(&fsx::read(&p).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"$schema": "s", "mcpServers": {"other": {"command": "x"}}})
        );
    }

    #[test]
    fn unparseable_file_is_overwritten_like_go_did() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path());
        fsx::write_atomic(&p, b"// comment\n{\"mcpServers\": {}}").unwrap();
        assert!(!remove(dir.path()).unwrap(), "removal leaves it alone");
        write(dir.path(), "feat-x").unwrap();
        assert_eq!(fsx::read(&p).unwrap(), ONLY_GROVE);
    }

    #[test]
    fn removing_the_last_server_deletes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "feat-x").unwrap();
        assert!(remove(dir.path()).unwrap());
        assert!(!path(dir.path()).exists());
        assert!(!remove(dir.path()).unwrap());
    }
}
