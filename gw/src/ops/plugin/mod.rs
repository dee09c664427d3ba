//! Plugins: `gw foo …` runs `gw-foo` when there is no built-in `foo`; `gw plugin
//! list|remove|install|upgrade|search` manages the ones in `<GW_HOME>/plugins/`.
//!
//! A plugin is looked up in `<GW_HOME>/plugins/` first, then on `PATH`, and started
//! with `exec`, so it replaces `gw`: its output and exit code are the command's. It gets
//! `GROVE_DIR`, `GROVE_CONFIG`, `GROVE_STATE` and `GROVE_WORKSPACE` (the workspace the
//! current directory is in, or empty) in its environment, and reads grove's files itself.
//!
//! `install` takes a local executable or tarball (a path or a `file://` URL), an http(s) URL
//! of either, a GitHub `OWNER/REPO` whose latest release has an asset
//! `gw-<name>_<version>_<os>_<arch>.tar.gz`, or the bare name of a plugin in the registry
//! shipped in the binary ([`REGISTRY`], what `gw plugin search` lists). Where a plugin came
//! from is recorded next to it, in the Go grove's `plugins/.gw-<name>.json` (`{repo,
//! version}`, plus `source` for a path or URL), so `gw plugin upgrade` can install it again
//! from there; a plugin put in the directory by hand has no record and is skipped.
//! Downloads use `curl` and tarballs `tar` (through `proc::Cmd`), so grove carries no HTTP
//! or archive code. Before anything is installed the file is checked to be an executable
//! for this platform (an ELF or Mach-O binary for this OS and CPU, or a `#!` script), so
//! an HTML error page or another platform's binary is refused.

mod install;
mod upgrade;
pub use install::*;
pub use upgrade::*;

use std::ffi::OsString;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;

use crate::error::{Code, Error, Result};

use crate::fsx;

use crate::ops::Ctx;

use crate::proc::Cmd;

/// Where a plugin was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// `<GW_HOME>/plugins/`.
    Installed,
    /// A directory on `PATH`.
    Path,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Plugin {
    pub name: String,
    pub path: PathBuf,
    pub source: Origin,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PluginListReport {
    pub plugins: Vec<Plugin>,
    pub count: usize,
    /// Executables named `gw-…` that cannot run as plugins (their name is not a plugin
    /// name), so that one is not silently missing.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// What `plugin install` or `plugin remove` did.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PluginReport {
    pub name: String,
    pub path: PathBuf,
    pub outcome: PluginOutcome,
    /// What it was installed from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `--dry-run`: validated, nothing written; the report says what would change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// install: the plugin there already has exactly these bytes.
    #[serde(skip)]
    pub unchanged: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PluginOutcome {
    Installed,
    /// An installed plugin of the same name was overwritten.
    Replaced,
    Removed,
}

impl PluginReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        vec![NextAction::read(
            "List plugins",
            &["gw", "plugin", "list", "--format", "json"],
        )]
    }
}

/// A plugin name becomes a file name `gw-<name>` and a command word, so it is one plain
/// word: letters, digits, `-`, `_` and `.`, not starting with `-` or `.`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with(['-', '.'])
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Error::usage(format!("invalid plugin name {name:?}"))
            .with_fix("A plugin name is one word of letters, digits, `-`, `_` and `.`"))
    }
}

fn file_name(name: &str) -> String {
    format!("gw-{name}")
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn path_dirs(ctx: &Ctx<'_>) -> Vec<PathBuf> {
    ctx.env
        .path
        .as_deref()
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default()
}

/// The executable `gw-<name>`: in the plugins directory, else on `PATH`.
pub fn find(ctx: &Ctx<'_>, name: &str) -> Option<PathBuf> {
    if check_name(name).is_err() {
        return None;
    }
    std::iter::once(ctx.home.plugins())
        .chain(path_dirs(ctx))
        .map(|d| d.join(file_name(name)))
        .find(|p| is_executable(p))
}

/// Runs the plugin for `gw <name> <args…>`, replacing this process. Returns only when it
/// could not be started (or does not exist: then a `USAGE` error naming the nearest
/// built-in commands).
pub fn exec(
    ctx: &Ctx<'_>,
    name: &str,
    args: &[OsString],
    builtins: &[String],
    json: bool,
) -> Error {
    let Some(path) = find(ctx, name) else {
        return removed_command(name).unwrap_or_else(|| unknown_command(name, builtins));
    };
    let workspace = ctx
        .state()
        .ok()
        .and_then(|s| s.containing(&ctx.env.cwd).map(|w| w.name.clone()))
        .unwrap_or_default();
    let mut cmd = Cmd::new(&path, &ctx.env.cwd);
    cmd.args(args)
        .envs(ctx.home.child_env())
        .env("GROVE_WORKSPACE", workspace);
    if json {
        // `gw --format json foo` was parsed by gw; tell the plugin.
        cmd.env("GW_FORMAT", "json");
    }
    let e = cmd.exec();
    let code = match &e {
        crate::proc::Error::Spawn { source, .. }
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            Code::PermissionDenied
        }
        _ => Code::Internal,
    };
    Error::new(code, format!("cannot run plugin `{}`: {e}", path.display()))
        .with_details(serde_json::json!({ "plugin": name, "path": path }))
}

/// The Go grove's commands grove does not have, and what to use instead.
const REMOVED: &[(&str, &str)] = &[
    (
        "mcp-serve",
        "grove has no MCP server: agents run gw itself with `--format json` (`gw skill` prints the skill that teaches them), and `gw-migrate` removes the old `.mcp.json` entries",
    ),
    (
        "explore",
        "`gw repos` lists every repository grove finds (discovery is always recursive now)",
    ),
    (
        "wizard",
        "`gw init DIR` sets grove up, and `gw create` asks on a terminal for what it needs",
    ),
    (
        "announce",
        "announcements were removed with the MCP server; nothing replaces them",
    ),
    (
        "announcements",
        "announcements were removed with the MCP server; nothing replaces them",
    ),
    (
        "news",
        "announcements were removed with the MCP server; nothing replaces them",
    ),
];

/// `USAGE`: `name` is a command of the Go grove that grove does not have (and no plugin
/// of that name exists); the fix says what replaced it.
pub fn removed_command(name: &str) -> Option<Error> {
    let (_, instead) = REMOVED.iter().find(|(n, _)| *n == name)?;
    Some(
        Error::usage(format!(
            "`gw {name}` was a command of the Go grove and is gone"
        ))
        .with_fix(instead.to_string())
        .with_details(serde_json::json!({
            "command": name,
            "removed": true,
            "replacement": instead,
        })),
    )
}

/// `USAGE`: no built-in command and no plugin called `name`; names the closest built-ins.
pub fn unknown_command(name: &str, builtins: &[String]) -> Error {
    let suggestions = crate::ops::names::nearest(name, builtins);
    let mut fix = match suggestions.as_slice() {
        [] => String::new(),
        [one] => format!("Did you mean `gw {one}`? "),
        many => format!(
            "Did you mean one of: {}? ",
            many.iter()
                .map(|s| format!("`gw {s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    fix.push_str(&format!(
        "Run `gw --help` for every command; a plugin would be an executable `gw-{name}` in the plugins directory or on PATH"
    ));
    Error::usage(format!("unknown command `{name}`"))
        .with_fix(fix)
        .with_details(serde_json::json!({ "command": name, "suggestions": suggestions }))
}

/// `gw plugin list`: installed plugins, then those on `PATH` (a name found twice is
/// listed once, where `gw` would run it from).
pub fn list(ctx: &Ctx<'_>) -> Result<PluginListReport> {
    let mut plugins: Vec<Plugin> = Vec::new();
    let mut warnings = Vec::new();
    let dirs = std::iter::once((ctx.home.plugins(), Origin::Installed))
        .chain(path_dirs(ctx).into_iter().map(|d| (d, Origin::Path)));
    for (dir, origin) in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<Plugin> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let file = e.file_name();
                let name = file.as_encoded_bytes().strip_prefix(b"gw-")?;
                if !is_executable(&e.path()) {
                    return None;
                }
                let name = std::str::from_utf8(name).ok().filter(|n| check_name(n).is_ok());
                let Some(name) = name else {
                    warnings.push(format!(
                        "`{}` cannot run as a plugin: a plugin name is one word of letters, digits, `-`, `_` and `.`",
                        e.path().display()
                    ));
                    return None;
                };
                Some(Plugin {
                    name: name.to_string(),
                    path: e.path(),
                    source: origin,
                })
            })
            .filter(|p| !plugins.iter().any(|q| q.name == p.name))
            .collect();
        found.sort_by(|a, b| a.name.cmp(&b.name));
        plugins.extend(found);
    }
    plugins.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(PluginListReport {
        count: plugins.len(),
        plugins,
        warnings,
    })
}

/// `gw plugin remove NAME`: deletes an installed plugin (`dry_run`: validated the same,
/// nothing removed).
pub fn remove(ctx: &Ctx<'_>, name: &str, dry_run: bool) -> Result<PluginReport> {
    check_name(name)?;
    let path = ctx.home.plugins().join(file_name(name));
    if !fsx::exists(&path) {
        let installed: Vec<String> = list(ctx)?
            .plugins
            .into_iter()
            .filter(|p| p.source == Origin::Installed)
            .map(|p| p.name)
            .collect();
        return Err(
            Error::usage(format!("no plugin named `{name}` is installed"))
                .with_fix(if installed.is_empty() {
                    "No plugins are installed".to_string()
                } else {
                    format!("Installed: {}", installed.join(", "))
                })
                .with_details(serde_json::json!({ "plugin": name, "installed": installed }))
                .with_action(NextAction::read(
                    "List plugins",
                    &["gw", "plugin", "list", "--format", "json"],
                )),
        );
    }
    let meta = meta_path(&ctx.home.plugins(), name);
    if !dry_run {
        fsx::remove_file(&path)?;
        if fsx::exists(&meta) {
            fsx::remove_file(&meta)?;
        }
    }
    Ok(PluginReport {
        name: name.to_string(),
        path,
        outcome: PluginOutcome::Removed,
        source: None,
        dry_run,
        unchanged: false,
    })
}

/// The plugin registry shipped in the binary (the Go grove's, as of its 1.1.18 release).
pub const REGISTRY: &[Registered] = &[
    Registered {
        name: "code",
        repo: "igor-kupczynski/gw-code",
        description: "Open a workspace in VS Code (or a compatible editor) as one multi-root editor workspace",
    },
    Registered {
        name: "dispatch",
        repo: "nicksenap/gw-dispatch",
        description: "Create a workspace and start a coding agent in it with a first prompt",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["hello", "my-tool", "x_1", "v1.2"] {
            check_name(ok).unwrap();
        }
        for bad in ["", "a/b", "..", "../x", "-x", ".x", "a b", "a\\b"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        let n = |f: &str| name_from_file(Path::new(f)).unwrap();
        assert_eq!(n("/x/gw-hello"), "hello");
        assert_eq!(n("/x/gw-code_1.2.0_linux_amd64"), "code");
        assert_eq!(n("/x/gw-tool.sh"), "tool");
        assert_eq!(n("/x/deploy"), "deploy");
    }

    #[test]
    fn suggestions() {
        let b: Vec<String> = ["sync", "status", "create", "delete", "doctor", "reset"]
            .map(String::from)
            .to_vec();
        use crate::ops::names::nearest;
        assert_eq!(nearest("sinc", &b), ["sync"]);
        assert_eq!(nearest("stat", &b)[0], "status");
        assert!(nearest("zzzzzzzz", &b).is_empty());
        let e = unknown_command("sinc", &b);
        assert_eq!(e.code, Code::Usage);
        assert!(e.fix.as_deref().unwrap().contains("gw sync"));
    }

    #[test]
    fn platform_check() {
        assert!(check_platform(b"#!/bin/sh\necho hi\n").is_ok());
        assert!(
            check_platform(b"<!DOCTYPE html><html>")
                .unwrap_err()
                .contains("HTML")
        );
        assert!(check_platform(b"hello").is_err());
        // This test binary itself is an executable for this platform.
        let me = std::env::current_exe().unwrap();
        let head = read_head(&me).unwrap();
        check_platform(&head).unwrap();
        // The same header claiming another CPU is refused.
        if head.starts_with(b"\x7fELF") {
            let mut other = head.clone();
            other[18] = other[18].wrapping_add(1);
            assert!(check_platform(&other).is_err());
        }
    }

    #[test]
    fn github_sources() {
        assert_eq!(
            github_repo("acme/gw-code"),
            Some(("acme".into(), "gw-code".into()))
        );
        assert_eq!(
            github_repo("github.com/acme/gw-code"),
            Some(("acme".into(), "gw-code".into()))
        );
        assert_eq!(github_repo("a/b/c"), None);
        assert_eq!(
            url_file_name("https://example.com/dl/gw-foo?x=1").as_deref(),
            Some("gw-foo")
        );
        assert_eq!(url_file_name("https://example.com/"), None);
        assert_eq!(github_repo("nope"), None);
    }
}
