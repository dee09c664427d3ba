//! `gw preset add|list|show|remove`: named repository lists in `config.toml`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::Result;
use crate::ops::create::preset_not_found;
use crate::ops::{Ctx, names, repos};

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Preset {
    pub name: String,
    pub repos: Vec<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PresetReport {
    pub preset: Preset,
    pub outcome: PresetOutcome,
    /// `--dry-run`: validated, nothing written; the report says what would change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PresetOutcome {
    Added,
    Updated,
    Removed,
    Shown,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PresetListReport {
    pub presets: Vec<Preset>,
    pub count: usize,
}

impl PresetListReport {
    /// The Go grove's `preset list --json`: `{name: {repos: […]}}`.
    pub fn as_map(&self) -> BTreeMap<&str, serde_json::Value> {
        self.presets
            .iter()
            .map(|p| (p.name.as_str(), serde_json::json!({ "repos": p.repos })))
            .collect()
    }
}

/// Saves a preset; every repository must be one grove can find. `dry_run`: validated the
/// same, nothing written.
pub fn add(ctx: &Ctx<'_>, name: &str, entries: &[String], dry_run: bool) -> Result<PresetReport> {
    names::check_preset(name)?;
    let mut config = ctx.config()?;
    let d = repos::discover(ctx, &config);
    let mut list: Vec<String> = Vec::new();
    for e in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        if d.find(e).is_none() {
            return Err(repos::unknown_repo(e, &d));
        }
        if !list.iter().any(|x| x == e) {
            list.push(e.to_string());
        }
    }
    if list.is_empty() {
        return Err(
            crate::error::Error::usage("a preset needs at least one repository")
                .with_fix("Pass --repos/-r"),
        );
    }
    let outcome = if config.presets.contains_key(name) {
        PresetOutcome::Updated
    } else {
        PresetOutcome::Added
    };
    config.set_preset(name, &list);
    if !dry_run {
        config.save()?;
    }
    Ok(PresetReport {
        preset: Preset {
            name: name.to_string(),
            repos: list,
        },
        outcome,
        dry_run,
    })
}

pub fn list(ctx: &Ctx<'_>) -> Result<PresetListReport> {
    let config = ctx.config()?;
    let presets: Vec<Preset> = config
        .presets
        .iter()
        .map(|(n, r)| Preset {
            name: n.clone(),
            repos: r.clone(),
        })
        .collect();
    Ok(PresetListReport {
        count: presets.len(),
        presets,
    })
}

pub fn show(ctx: &Ctx<'_>, name: &str) -> Result<PresetReport> {
    let config = ctx.config()?;
    let repos = config
        .presets
        .get(name)
        .ok_or_else(|| preset_not_found(name, &config))?;
    Ok(PresetReport {
        preset: Preset {
            name: name.to_string(),
            repos: repos.clone(),
        },
        outcome: PresetOutcome::Shown,
        dry_run: false,
    })
}

/// `gw preset remove`; `dry_run`: validated the same, nothing written.
pub fn remove(ctx: &Ctx<'_>, name: &str, dry_run: bool) -> Result<PresetReport> {
    let mut config = ctx.config()?;
    let repos = config
        .presets
        .get(name)
        .cloned()
        .ok_or_else(|| preset_not_found(name, &config))?;
    config.remove_preset(name);
    if !dry_run {
        config.save()?;
    }
    Ok(PresetReport {
        preset: Preset {
            name: name.to_string(),
            repos,
        },
        outcome: PresetOutcome::Removed,
        dry_run,
    })
}
