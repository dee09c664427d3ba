//! The machine envelope (SPEC §5): `{ok, schemaVersion, result | error, fix?, warnings?,
//! next_actions}`.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::action::NextAction;
use crate::error::{Code, Error};
use crate::redact;

/// `text` as grove shows it in messages: its secrets hidden.
pub fn redacted(text: &str) -> String {
    redact::secrets(text).into_owned()
}

/// Every string in `v`, its secrets hidden.
fn redact_value(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(redacted(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(redact_value).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k, redact_value(v))).collect())
        }
        other => other,
    }
}

/// The result a failure carries, its secrets hidden: it may echo the input that failed
/// (a workspace name, a URL) in the per-item errors of a partial failure.
pub fn redacted_result(raw: &RawValue) -> serde_json::Result<Box<RawValue>> {
    let v: Value = serde_json::from_str(raw.get())?;
    serde_json::value::to_raw_value(&redact_value(v))
}

/// Bumped only for incompatible changes (see `docs/agent-cli.md`).
pub const SCHEMA_VERSION: u32 = 1;

/// The one JSON document machine mode prints on stdout.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Envelope {
    pub ok: bool,
    #[serde(rename = "schemaVersion")]
    pub schema_version: u32,
    /// The command's result (see `gw schema <command>`); present when `ok`, and also on a
    /// partial failure, where it shows what happened to each part.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "Option<serde_json::Map<String, Value>>"))]
    pub result: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
    /// How to fix the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// Degraded but successful work (also printed on stderr).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub warnings: Vec<String>,
    /// Safe, relevant commands to run next; always present, possibly empty.
    pub next_actions: Vec<NextAction>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ErrorBody {
    /// Stable; branch on this, never on `message`.
    pub code: Code,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

pub fn envelope_ok(
    result: super::Json,
    warnings: &[String],
    next_actions: &[NextAction],
) -> serde_json::Result<Envelope> {
    let result = result.into_raw()?;
    Ok(Envelope {
        ok: true,
        schema_version: SCHEMA_VERSION,
        result: Some(result),
        error: None,
        fix: None,
        warnings: warnings.to_vec(),
        next_actions: next_actions.to_vec(),
    })
}

/// The envelope of a failure. Its message, fix and details are shown with their secrets
/// hidden (`redact`): an error may quote a URL, a command or git's output.
pub fn envelope_error(e: &Error) -> Envelope {
    Envelope {
        ok: false,
        schema_version: SCHEMA_VERSION,
        result: None,
        error: Some(ErrorBody {
            code: e.code,
            message: redacted(&e.message),
            details: e.details.clone().map(redact_value),
        }),
        fix: e.fix.as_deref().map(redacted),
        warnings: Vec::new(),
        next_actions: e.next_actions.clone(),
    }
}
