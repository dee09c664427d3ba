//! `gw env [NAME]`: the environment grove gives a workspace's commands — its slot and every
//! repository's ports — for direnv, editors and agents (`eval "$(gw env)"`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::ops::hooks::Vars;
use crate::ops::ports::{Port, Stack};
use crate::ops::{Ctx, resolve};
use crate::state::{RepoEntry, Workspace};

/// How `gw env` prints the variables in text mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnvFormat {
    /// `export NAME=value` lines, for `eval` in sh, bash and zsh (the default).
    #[default]
    Shell,
    /// `NAME=value` lines, as `.env` files have them.
    Dotenv,
}

#[derive(Debug, Clone)]
pub struct EnvOptions {
    /// The workspace; `None` for the one containing the current directory.
    pub name: Option<String>,
    /// The repository whose `GROVE_REPO`, `GROVE_WORKTREE` and `PORT` to include; `None`
    /// for the one whose worktree holds the current directory, if any.
    pub repo: Option<String>,
    pub format: EnvFormat,
}

/// Variables in the order they are set, shown as a JSON object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvVars(pub Vec<(String, String)>);

impl Serialize for EnvVars {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

#[cfg(test)]
impl schemars::JsonSchema for EnvVars {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EnvVars".into()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = <std::collections::BTreeMap<String, String>>::json_schema(g);
        schema.insert(
            "description".into(),
            "Variable name → value, in the order they are set.".into(),
        );
        schema
    }
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct EnvReport {
    pub workspace: String,
    pub path: PathBuf,
    /// The repository the variables are for (`-r`, or the one whose worktree holds the
    /// current directory); `null` for the workspace as a whole (no `GROVE_REPO`,
    /// `GROVE_WORKTREE` or `PORT`).
    pub repo: Option<String>,
    pub slot: u32,
    /// Every repository's named ports in this workspace.
    pub ports: Vec<Port>,
    pub port_count: usize,
    /// The variables, exactly as hooks, `.grove.toml` commands and `gw run` get them.
    pub env: EnvVars,
    #[serde(skip)]
    pub format: EnvFormat,
}

/// `gw env`: the workspace's environment. A workspace without a slot yet (recorded by the
/// Go grove) gets it now.
pub fn env(ctx: &Ctx<'_>, opts: &EnvOptions) -> Result<EnvReport> {
    let config = ctx.config()?;
    let state = ctx.store.load_with_slots()?;
    let ws = resolve::workspace(&state, opts.name.as_deref(), &ctx.env.cwd)?;
    let repo = match &opts.repo {
        Some(name) => Some(ws.repo(name).ok_or_else(|| unknown_repo(ws, name))?),
        // The current directory picks the repository only inside the workspace it names.
        None if opts.name.is_none() || state.containing(&ctx.env.cwd) == Some(ws) => {
            repo_at(ws, &ctx.env.cwd)
        }
        None => None,
    };
    let stack = Stack::of(ctx, &config, ws)?;
    let (slot, ports) = (stack.slot, stack.ports.clone());
    let vars = Vars {
        ports: Some(Ok(Arc::new(stack))),
        ..Vars::recorded(ws)
    };
    let env = vars.environment(repo.map(|r| (r.repo_name.as_str(), r.worktree_path.as_path())));
    if opts.format == EnvFormat::Dotenv {
        dotenv_writable(&env)?;
    }
    Ok(EnvReport {
        workspace: ws.name.clone(),
        path: ws.path.clone(),
        repo: repo.map(|r| r.repo_name.clone()),
        slot,
        port_count: ports.len(),
        ports,
        env: EnvVars(env),
        format: opts.format,
    })
}

/// The repository of `ws` whose worktree holds `dir` (the deepest, resolving symlinks).
pub fn repo_at<'w>(ws: &'w Workspace, dir: &Path) -> Option<&'w RepoEntry> {
    let dir = crate::fsx::canonical(dir);
    ws.repos
        .iter()
        .filter(|r| dir.starts_with(crate::fsx::canonical(&r.worktree_path)))
        .max_by_key(|r| r.worktree_path.components().count())
}

fn unknown_repo(ws: &Workspace, name: &str) -> Error {
    crate::ops::resolve::repo_not_in(ws, name)
}

impl EnvReport {
    /// The variables as `format` writes them, one per line.
    pub fn lines(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.env.0 {
            match self.format {
                EnvFormat::Shell => {
                    out.push_str(&format!("export {k}={}\n", crate::proc::shell_quote(v)));
                }
                EnvFormat::Dotenv => out.push_str(&format!("{k}={}\n", dotenv_value(v))),
            }
        }
        out
    }
}

/// Refuses a value `.env` cannot hold safely: one that needs double quotes (it has a single
/// quote or a line break) and holds a backtick, which a shell sourcing the file would run
/// as a command and which dotenv parsers cannot escape.
fn dotenv_writable(env: &[(String, String)]) -> Result<()> {
    match env
        .iter()
        .find(|(_, v)| v.contains(['\'', '\n', '\r']) && v.contains('`'))
    {
        None => Ok(()),
        Some((k, _)) => Err(Error::usage(format!(
            "the value of {k} holds a quote or a line break and a backtick, which a `.env` \
             file cannot hold safely (a shell sourcing it would run what the backticks enclose)"
        ))
        .with_fix("Use --format shell (for eval) or --format json")),
    }
}

/// A value as a `.env` file holds it: bare when it is plain, in single quotes (taken
/// literally) when it has no single quote or newline, else in double quotes with `\`, `"`,
/// `$` and newlines escaped.
fn dotenv_value(v: &str) -> String {
    let plain = !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:@%+,".contains(&b));
    if plain {
        v.to_string()
    } else if !v.contains(['\'', '\n', '\r']) {
        format!("'{v}'")
    } else {
        let mut out = String::from("\"");
        for c in v.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '$' => out.push_str("\\$"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(format: EnvFormat, vars: &[(&str, &str)]) -> EnvReport {
        EnvReport {
            workspace: "w".into(),
            path: "/w".into(),
            repo: None,
            slot: 0,
            ports: Vec::new(),
            port_count: 0,
            env: EnvVars(
                vars.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            format,
        }
    }

    const AWKWARD: &[(&str, &str)] = &[
        ("GROVE_SLOT", "3"),
        ("GROVE_WORKSPACE_PATH", "/home/me/my ws/it's $HOME #1"),
        ("GROVE_BRANCH", "feat/x\"y\\z"),
        ("GROVE_WORKSPACE", "a\nb"),
        ("GROVE_REPO", ""),
    ];

    /// What sh makes of the shell form is every value exactly.
    #[test]
    fn shell_form_evaluates_to_the_values() {
        let text = report(EnvFormat::Shell, AWKWARD).lines();
        let script = format!(
            "{text}printf '%s|' \"$GROVE_SLOT\" \"$GROVE_WORKSPACE_PATH\" \"$GROVE_BRANCH\" \"$GROVE_WORKSPACE\" \"$GROVE_REPO\""
        );
        let out = crate::proc::Cmd::shell(&script, Path::new("/"))
            .check()
            .unwrap();
        let want: Vec<&str> = AWKWARD.iter().map(|(_, v)| *v).collect();
        assert_eq!(out.stdout, format!("{}|", want.join("|")), "{text}");
    }

    /// A name a hostile branch could carry: in double quotes a backtick would run.
    #[test]
    fn dotenv_refuses_a_backtick_it_would_have_to_double_quote() {
        let env = |v: &str| vec![("GROVE_BRANCH".to_string(), v.to_string())];
        let e = dotenv_writable(&env("x'`touch /tmp/pwn`")).unwrap_err();
        assert!(e.message.contains("GROVE_BRANCH"), "{}", e.message);
        assert!(
            dotenv_writable(&env("x`y`")).is_ok(),
            "single quotes hold it"
        );
        assert!(dotenv_writable(&env("it's")).is_ok());
        let text = report(EnvFormat::Dotenv, &[("V", "x`y`")]).lines();
        assert_eq!(text, "V='x`y`'\n");
    }

    #[test]
    fn dotenv_values_are_quoted_only_when_needed() {
        let text = report(EnvFormat::Dotenv, AWKWARD).lines();
        assert_eq!(
            text,
            r#"GROVE_SLOT=3
GROVE_WORKSPACE_PATH="/home/me/my ws/it's \$HOME #1"
GROVE_BRANCH='feat/x"y\z'
GROVE_WORKSPACE="a\nb"
GROVE_REPO=''
"#
        );
    }
}
