//! How each report looks: the envelope `result`, human text, and the Go grove's bare data
//! shapes for `-o`/`--json`. One file per group of commands; shared helpers here.

mod cleanup;
mod daily;
mod plugin;
mod setup;
mod workspace;

use std::io;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::{Printer, Render, Role};

pub(super) fn value<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("reports serialise: every map key is a string")
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

/// Output of a command that only prints text (completion scripts).
pub struct Script {
    pub kind: &'static str,
    pub text: String,
}

impl Render for Script {
    fn result(&self) -> Value {
        json!({ "kind": self.kind, "script": self.text })
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        p.raw(&self.text)
    }
}

/// A report of a command with nothing but a message (`gw go -c`).
pub struct Done {
    pub message: String,
    pub result: Value,
    pub warnings: Vec<String>,
}

impl Render for Done {
    fn result(&self) -> Value {
        self.result.clone()
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.message.is_empty() {
            Ok(())
        } else {
            p.message(Role::Success, &self.message)
        }
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}
