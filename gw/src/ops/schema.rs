//! `gw schema [NAME]`: the published JSON Schemas, so an agent can introspect the contract
//! in one call.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::schema;

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SchemaReport {
    pub schemas: Vec<SchemaInfo>,
    pub count: usize,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SchemaInfo {
    pub name: String,
    /// Which invocation produces it.
    pub about: String,
    /// The JSON Schema, when one schema was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<serde_json::Value>,
}

/// Every schema's name, or the one named `name` in full.
pub fn schema(name: Option<&str>) -> Result<SchemaReport> {
    let schemas: Vec<SchemaInfo> = match name {
        None => schema::ALL
            .iter()
            .map(|e| SchemaInfo {
                name: e.name.into(),
                about: e.about.into(),
                schema: None,
            })
            .collect(),
        Some(n) => {
            let e = schema::find(n).ok_or_else(|| {
                Error::usage(format!("no schema named `{n}`")).with_fix(format!(
                    "Known: {}",
                    schema::ALL
                        .iter()
                        .map(|e| e.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            let value = serde_json::from_str(e.json)
                .expect("published schemas are valid JSON (checked by a test)");
            vec![SchemaInfo {
                name: e.name.into(),
                about: e.about.into(),
                schema: Some(value),
            }]
        }
    };
    Ok(SchemaReport {
        count: schemas.len(),
        schemas,
    })
}
