//! Global lifecycle hooks from `[hooks]`: `post_create`, `pre_delete` and `on_close`.

use std::time::Duration;

use toml_edit::Item;

use super::toml::Reader;
use crate::duration;

/// Which lifecycle hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookKind {
    PostCreate,
    PreDelete,
    OnClose,
}

impl HookKind {
    pub fn key(self) -> &'static str {
        match self {
            HookKind::PostCreate => "post_create",
            HookKind::PreDelete => "pre_delete",
            HookKind::OnClose => "on_close",
        }
    }
}

/// What a failing hook does to the command that ran it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    /// The failure is reported as a warning and the command carries on.
    #[default]
    Warn,
    /// The command fails with `HOOK_FAILED`.
    Abort,
}

/// One configured hook: a bare command string or a table with metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// A shell command; `{name}`, `{path}`, `{branch}` and `{source_*}` are substituted.
    pub command: String,
    pub description: Option<String>,
    /// Print output live, each line prefixed `[<hook>] `, instead of only on failure.
    pub stream: bool,
    pub timeout: Option<Duration>,
    pub on_failure: OnFailure,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hooks {
    pub post_create: Option<Hook>,
    pub pre_delete: Option<Hook>,
    pub on_close: Option<Hook>,
}

impl Hooks {
    pub fn get(&self, kind: HookKind) -> Option<&Hook> {
        match kind {
            HookKind::PostCreate => self.post_create.as_ref(),
            HookKind::PreDelete => self.pre_delete.as_ref(),
            HookKind::OnClose => self.on_close.as_ref(),
        }
    }

    pub(super) fn parse(r: &Reader<'_>, item: &Item) -> Result<Hooks, String> {
        let table = r.table(item, "hooks")?;
        let mut hooks = Hooks::default();
        for kind in [HookKind::PostCreate, HookKind::PreDelete, HookKind::OnClose] {
            let Some(item) = table.get(kind.key()) else {
                continue;
            };
            let hook = parse_hook(r, item, &format!("hooks.{}", kind.key()))?;
            match kind {
                HookKind::PostCreate => hooks.post_create = hook,
                HookKind::PreDelete => hooks.pre_delete = hook,
                HookKind::OnClose => hooks.on_close = hook,
            }
        }
        Ok(hooks)
    }
}

fn parse_hook(r: &Reader<'_>, item: &Item, key: &str) -> Result<Option<Hook>, String> {
    if let Some(cmd) = item.as_str() {
        return Ok((!cmd.trim().is_empty()).then(|| Hook {
            command: cmd.to_string(),
            description: None,
            stream: false,
            timeout: None,
            on_failure: OnFailure::Warn,
        }));
    }
    let t = r
        .table(item, key)
        .map_err(|_| r.error(item, key, "expected a command string or a table"))?;
    let command = match t.get("command") {
        Some(c) => r.string(c, &format!("{key}.command"))?,
        None => {
            return Err(r.error(
                item,
                &format!("{key}.command"),
                "missing (a hook table needs a command)",
            ));
        }
    };
    let description = t
        .get("description")
        .map(|d| r.string(d, &format!("{key}.description")))
        .transpose()?;
    let stream = t
        .get("stream")
        .map(|s| r.bool(s, &format!("{key}.stream")))
        .transpose()?
        .unwrap_or(false);
    let timeout = match t.get("timeout") {
        Some(v) => {
            let k = format!("{key}.timeout");
            let s = r.string(v, &k)?;
            if s.trim().is_empty() {
                None
            } else {
                Some(duration::parse_go(&s).map_err(|e| r.error(v, &k, &e))?)
            }
        }
        None => None,
    };
    let on_failure = match t.get("on_failure") {
        Some(v) => {
            let k = format!("{key}.on_failure");
            match r.string(v, &k)?.as_str() {
                "" | "warn" => OnFailure::Warn,
                "abort" => OnFailure::Abort,
                other => {
                    return Err(r.error(
                        v,
                        &k,
                        &format!("expected \"warn\" or \"abort\", found \"{other}\""),
                    ));
                }
            }
        }
        None => OnFailure::Warn,
    };
    Ok(Some(Hook {
        command,
        description,
        stream,
        timeout,
        on_failure,
    }))
}
