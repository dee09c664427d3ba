//! The machine envelope (SPEC §5): `{ok, schemaVersion, result | error, fix?, warnings?,
//! next_actions}`.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::action::NextAction;
use crate::error::{Code, Error};

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

pub fn envelope_error(e: &Error) -> Envelope {
    Envelope {
        ok: false,
        schema_version: SCHEMA_VERSION,
        result: None,
        error: Some(ErrorBody {
            code: e.code,
            message: e.message.clone(),
            details: e.details.clone(),
        }),
        fix: e.fix.clone(),
        warnings: Vec::new(),
        next_actions: e.next_actions.clone(),
    }
}
