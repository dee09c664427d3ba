//! The machine envelope (SPEC §5): `{ok, schemaVersion, result | error, fix?, warnings?,
//! next_actions}`.

use serde_json::{Map, Value, json};

use crate::action::NextAction;
use crate::error::Error;

/// Bumped only for incompatible changes (see `docs/agent-cli.md`).
pub const SCHEMA_VERSION: u32 = 1;

pub fn envelope_ok(result: Value, warnings: &[String], next_actions: &[NextAction]) -> Value {
    let result = if result.is_null() {
        Value::Object(Map::new())
    } else {
        result
    };
    let mut doc = json!({ "ok": true, "schemaVersion": SCHEMA_VERSION, "result": result });
    if !warnings.is_empty() {
        doc["warnings"] = json!(warnings);
    }
    doc["next_actions"] = json!(next_actions);
    doc
}

pub fn envelope_error(e: &Error) -> Value {
    let mut error = json!({ "code": e.code, "message": e.message });
    if let Some(d) = &e.details {
        error["details"] = d.clone();
    }
    let mut doc = json!({ "ok": false, "schemaVersion": SCHEMA_VERSION, "error": error });
    if let Some(fix) = &e.fix {
        doc["fix"] = json!(fix);
    }
    doc["next_actions"] = json!(e.next_actions);
    doc
}
