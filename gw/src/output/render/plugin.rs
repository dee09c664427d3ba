//! Rendering of `gw plugin list|install|remove`.

use std::io;

use serde_json::{Value, json};

use super::{json_line, json_pretty, lines, path_str, value};
use crate::action::NextAction;
use crate::ops::plugin::{Origin, PluginListReport, PluginOutcome, PluginReport};
use crate::output::{DataFormat, Json, Printer, Render, Role};

impl Render for PluginListReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        if self.plugins.is_empty() {
            return p.message(
                Role::Plain,
                "No plugins; install one with `gw plugin install PATH|URL|OWNER/REPO`",
            );
        }
        let rows: Vec<Vec<String>> = self
            .plugins
            .iter()
            .map(|pl| {
                vec![
                    p.paint(Role::Name, &pl.name),
                    path_str(&pl.path),
                    match pl.source {
                        Origin::Installed => "installed".into(),
                        Origin::Path => "PATH".into(),
                    },
                ]
            })
            .collect();
        p.table(&["Name", "Path", "Source"], &rows)
    }
    fn legacy(&self, f: DataFormat, p: &mut Printer) -> Option<io::Result<()>> {
        // The Go grove's shape: `[{name, path}]`.
        let bare: Vec<Value> = self
            .plugins
            .iter()
            .map(|pl| json!({ "name": pl.name, "path": pl.path }))
            .collect();
        Some(match f {
            DataFormat::Json => json_pretty(p, &bare),
            DataFormat::Jsonl => bare.iter().try_for_each(|v| json_line(p, v)),
            DataFormat::Name => lines(p, self.plugins.iter().map(|pl| pl.name.as_str())),
            DataFormat::Path => {
                let paths: Vec<String> = self.plugins.iter().map(|pl| path_str(&pl.path)).collect();
                lines(p, paths.iter().map(String::as_str))
            }
            _ => return None,
        })
    }
}

impl Render for PluginReport {
    fn result(&self) -> Json<'_> {
        value(self)
    }
    fn text(&self, p: &mut Printer) -> io::Result<()> {
        let (name, path) = (&self.name, self.path.display());
        let line = match self.outcome {
            PluginOutcome::Removed => format!("Removed plugin {name} ({path})"),
            PluginOutcome::Replaced => {
                format!("Replaced plugin {name} ({path}); run it with `gw {name}`")
            }
            PluginOutcome::Installed => {
                format!("Installed plugin {name} ({path}); run it with `gw {name}`")
            }
        };
        p.message(Role::Success, &line)
    }
    fn next_actions(&self) -> Vec<NextAction> {
        PluginReport::next_actions(self)
    }
}
