//! How each report looks: the envelope `result`, human text, and the Go grove's bare data
//! shapes for `-o`/`--json`. One file per group of commands; shared helpers here.

mod cleanup;
mod daily;
mod plugin;
mod run;
mod setup;
mod workspace;

use std::io;
use std::path::Path;

use serde::Serialize;

use super::{Json, Printer, Render};

pub(super) fn value<'a, T: Serialize + 'a>(t: T) -> Json<'a> {
    Json::of(t)
}

pub(super) fn json_pretty(p: &mut Printer, v: &impl Serialize) -> io::Result<()> {
    let mut s = serde_json::to_string_pretty(v).expect("reports serialise");
    s.push('\n');
    p.raw(&s)
}

pub(super) fn json_line(p: &mut Printer, v: &impl Serialize) -> io::Result<()> {
    let mut s = serde_json::to_string(v).expect("reports serialise");
    s.push('\n');
    p.raw(&s)
}

pub(super) fn tsv(p: &mut Printer, header: &[&str], rows: &[Vec<String>]) -> io::Result<()> {
    p.line(&header.join("\t"))?;
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| c.replace(['\t', '\n'], " ")).collect();
        p.line(&cells.join("\t"))?;
    }
    Ok(())
}

pub(super) fn lines<'a>(
    p: &mut Printer,
    items: impl IntoIterator<Item = &'a str>,
) -> io::Result<()> {
    for i in items {
        p.line(i)?;
    }
    Ok(())
}

pub(super) fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Output of a command that only prints a script (`gw completions`).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Script {
    /// The shell the script is for.
    pub shell: String,
    pub script: String,
}

impl Render for Script {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        p.raw(&self.script)
    }
}

/// `--help`/`--version` in machine mode.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Help {
    pub help: String,
}
