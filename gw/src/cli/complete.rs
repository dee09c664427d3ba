//! Shell completion: `gw completions SHELL` prints a script that asks `gw` itself for
//! candidates (clap_complete's dynamic engine: the script runs `COMPLETE=SHELL gw -- WORDS`),
//! so workspace names, repositories (in comma lists), presets and plugins complete from
//! grove's own files. bash, zsh, fish, elvish and PowerShell use clap_complete's scripts;
//! nushell's, which clap_complete lacks, is [`Nu`].
//!
//! Candidates are read the cheapest way there is: workspace names from `state.json` as a
//! borrowed listing (no process, no repository opened), repositories from the discovery
//! walk, presets from `config.toml`. Errors give no candidates, never a message.

use std::ffi::OsString;
use std::io::Write;
use std::sync::OnceLock;

use clap_complete::engine::CompletionCandidate;
use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Shells, Zsh};

use crate::env::Env;
use crate::ops::{self, Ctx, Quiet};

/// The environment the candidates are read in (set once, before completing).
static ENV: OnceLock<Env> = OnceLock::new();

/// The shells completion scripts exist for.
pub const SHELLS: Shells<'static> = Shells(&[&Bash, &Zsh, &Fish, &Nu, &Elvish, &Powershell]);

/// The completer for `name` (`nushell` is `nu`).
pub fn shell(name: &str) -> Option<&'static dyn EnvCompleter> {
    SHELLS.completer(name)
}

/// The registration script for `shell`: it calls `completer` (the `gw` to run) for
/// candidates.
pub fn script(shell: &dyn EnvCompleter, completer: &str) -> std::io::Result<String> {
    let mut buf = Vec::new();
    shell.write_registration("COMPLETE", "gw", "gw", completer, &mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Answers a completion request (`COMPLETE=SHELL gw -- WORDS…`): the candidates for the
/// last word, in the shell's format. `args` are the process's arguments.
pub fn candidates(env: &Env, shell: &dyn EnvCompleter, args: &[OsString]) -> Vec<u8> {
    let _ = ENV.set(env.clone());
    let words: Vec<OsString> = match args.iter().position(|a| a == "--") {
        Some(i) => args[i + 1..].to_vec(),
        None => Vec::new(),
    };
    let mut buf = Vec::new();
    let mut cmd = super::command();
    // Flags only once a `-` is typed, as git's completion does: before that, Tab offers
    // what the command takes (workspace names, subcommands), not `--format`.
    let current = env
        .complete_index
        .and_then(|i| words.get(i))
        .or(words.last());
    if !current.is_some_and(|w| w.to_string_lossy().starts_with('-')) {
        cmd = without_flags(cmd);
    }
    cmd.build();
    let _ = shell.write_complete(&mut cmd, words, Some(&env.cwd), &mut buf);
    buf
}

/// `cmd` with every flag hidden from completion, in every subcommand.
fn without_flags(cmd: clap::Command) -> clap::Command {
    cmd.disable_help_flag(true)
        .disable_version_flag(true)
        .mut_args(|a| if a.is_positional() { a } else { a.hide(true) })
        .mut_subcommands(without_flags)
}

/// Runs `f` with a context on the completion's environment.
fn with_ctx<T: Default>(f: impl FnOnce(&Ctx<'_>) -> Option<T>) -> T {
    let Some(env) = ENV.get() else {
        return T::default();
    };
    let ctx = Ctx::new(env, &Quiet);
    f(&ctx).unwrap_or_default()
}

fn candidates_of(names: impl IntoIterator<Item = String>) -> Vec<CompletionCandidate> {
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// Workspace names, from `state.json`.
pub fn workspaces() -> Vec<CompletionCandidate> {
    with_ctx(|ctx| {
        let listing = ctx.store.listing().ok()?;
        Some(candidates_of(
            listing
                .records()
                .iter()
                .map(|w| w.name.to_str().into_owned()),
        ))
    })
}

/// The deleted workspaces in the trash (`gw restore`), newest first, with when they went.
pub fn trashed() -> Vec<CompletionCandidate> {
    with_ctx(|ctx| {
        let mut seen = Vec::new();
        let kept = ops::trash::contents(ctx).kept;
        Some(
            kept.into_iter()
                .rev()
                .filter(|k| {
                    let new = !seen.contains(&k.record.name);
                    seen.push(k.record.name.clone());
                    new
                })
                .map(|k| {
                    let help = format!("deleted {}", k.record.deleted_at);
                    CompletionCandidate::new(k.record.name).help(Some(help.into()))
                })
                .collect(),
        )
    })
}

/// Repository names grove can put in a workspace.
pub fn repos() -> Vec<CompletionCandidate> {
    with_ctx(|ctx| {
        let config = ctx.config().ok()?;
        let found = ops::repos::discover(ctx, &config);
        Some(candidates_of(found.repos.into_iter().map(|r| r.name)))
    })
}

/// Preset names, with their repositories as help.
pub fn presets() -> Vec<CompletionCandidate> {
    with_ctx(|ctx| {
        let presets = ops::preset::list(ctx).ok()?.presets;
        Some(
            presets
                .into_iter()
                .map(|p| CompletionCandidate::new(p.name).help(Some(p.repos.join(", ").into())))
                .collect(),
        )
    })
}

/// Plugin names (`gw-NAME` executables), as commands of their own.
pub fn plugins() -> Vec<CompletionCandidate> {
    with_ctx(|ctx| {
        let plugins = ops::plugin::list(ctx).ok()?.plugins;
        Some(
            plugins
                .into_iter()
                .map(|p| CompletionCandidate::new(p.name).help(Some("plugin".into())))
                .collect(),
        )
    })
}

/// nushell: an `extern` whose arguments complete through `gw` itself. nushell hands a
/// custom completer the command line up to the cursor; it is split into words and passed
/// on, and the candidates come back one per line, each `value<TAB>description`.
#[derive(Debug, Clone, Copy)]
pub struct Nu;

impl EnvCompleter for Nu {
    fn name(&self) -> &'static str {
        "nu"
    }

    fn is(&self, name: &str) -> bool {
        name == "nu" || name == "nushell"
    }

    fn write_registration(
        &self,
        var: &str,
        name: &str,
        bin: &str,
        completer: &str,
        buf: &mut dyn Write,
    ) -> std::io::Result<()> {
        let script = NU_SCRIPT
            .replace("NU_COMPLETER", crate::ops::shell_init::NU_COMPLETER)
            .replace("VAR", var)
            .replace("NAME", &name.replace('-', "_"))
            .replace("BIN", bin)
            .replace("COMPLETER", &nu_string(completer));
        buf.write_all(script.as_bytes())
    }

    fn write_complete(
        &self,
        cmd: &mut clap::Command,
        args: Vec<OsString>,
        current_dir: Option<&std::path::Path>,
        buf: &mut dyn Write,
    ) -> std::io::Result<()> {
        // The last word is the one being completed (empty after a space).
        let index = args.len().saturating_sub(1);
        let found = clap_complete::engine::complete(cmd, args, index, current_dir)?;
        for c in found {
            let value = c.get_value().to_string_lossy();
            match c.get_help() {
                Some(help) => writeln!(buf, "{value}\t{help}")?,
                None => writeln!(buf, "{value}")?,
            }
        }
        Ok(())
    }
}

/// A nushell string literal (raw string, which needs no escaping).
fn nu_string(s: &str) -> String {
    // The literal ends at `'` and its hashes: use enough that the text cannot end it.
    let n = (1..)
        .find(|n| !s.contains(&format!("'{}", "#".repeat(*n))))
        .unwrap_or(1);
    let hashes = "#".repeat(n);
    format!("r{hashes}'{s}'{hashes}")
}

const NU_SCRIPT: &str = r#"# grove completions for nushell: gw completions nu | save -f ~/.gw-completions.nu
# then add `source ~/.gw-completions.nu` to your config.nu. (`gw shell-init nu` includes
# the same completer: with the shell integration, this file is not needed.)
NU_COMPLETER
export extern "BIN" [
    ...args: string@"nu-complete NAME"
]
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nu_strings_are_raw_literals() {
        assert_eq!(nu_string("gw"), "r#'gw'#");
        assert_eq!(nu_string("/a/'#b"), "r##'/a/'#b'##");
    }
}
