//! `gw man [COMMAND…]`: the manual pages (clap_mangen), made from the same grammar as
//! `--help`. `cargo xtask man` writes every page, and the release archive carries them
//! (`man/man1/`), from [`pages`].

use clap::Args;

use crate::cli::{CmdResult, Out};
use crate::error::Error;
use crate::output::render::ManPage;

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (`create`, `preset add`); none: gw's own
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `gw man [COMMAND…]`.
pub fn man(a: ManArgs) -> CmdResult {
    let (name, page) = page(&a.command)?;
    Ok(Out::new(ManPage {
        name,
        page: String::from_utf8_lossy(&page).into_owned(),
    }))
}

/// The page of the command at `path` (`[]` for gw, `["preset", "add"]`): its name
/// (`gw-preset-add`) and roff.
pub fn page(path: &[String]) -> Result<(String, Vec<u8>), Error> {
    let mut cmd = root();
    let mut name = String::from("gw");
    for word in path {
        let found = cmd
            .get_subcommands()
            .find(|c| {
                !c.is_hide_set() && (c.get_name() == word || c.get_all_aliases().any(|a| a == word))
            })
            .cloned();
        let Some(sub) = found else {
            let known: Vec<String> = cmd
                .get_subcommands()
                .filter(|c| !c.is_hide_set())
                .map(|c| c.get_name().to_string())
                .collect();
            let suggestions = crate::ops::names::nearest(word, &known);
            return Err(Error::usage(format!("`{name}` has no command `{word}`"))
                .with_fix(crate::ops::names::did_you_mean(
                    &suggestions,
                    &format!(
                        "Run `{} --help` to see its commands",
                        name.replace('-', " ")
                    ),
                ))
                .with_details(serde_json::json!({ "command": word, "suggestions": suggestions })));
        };
        name = format!("{name}-{}", sub.get_name());
        cmd = sub;
    }
    Ok((name.clone(), render(cmd, &name)?))
}

/// Every page: gw's and one per command (`gw-create`, `gw-preset-add`, …), by name.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>, Error> {
    let mut out = Vec::new();
    collect(root(), "gw", &mut out)?;
    Ok(out)
}

fn root() -> clap::Command {
    let mut cmd = super::command().bin_name("gw");
    cmd.build();
    cmd
}

fn collect(cmd: clap::Command, name: &str, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), Error> {
    out.push((name.to_string(), render(cmd.clone(), name)?));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub.clone(), &format!("{name}-{}", sub.get_name()), out)?;
    }
    Ok(())
}

fn render(cmd: clap::Command, name: &str) -> Result<Vec<u8>, Error> {
    // clap names commands with `&'static str`: a page's name lives as long as the process
    // (a few dozen short strings, once).
    let name: &'static str = Box::leak(name.to_string().into_boxed_str());
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.name(name))
        .render(&mut buf)
        .map_err(|e| Error::internal(format!("cannot write the manual page: {e}")))?;
    Ok(buf)
}
