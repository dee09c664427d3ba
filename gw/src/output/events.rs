//! Live progress and hook output, written to stderr as it happens.

use std::io::{self, IsTerminal, Write};

use super::style::{self, Role};
use crate::ops::{Events, Label};

/// Writes events to stderr. Progress lines appear only when stderr is a terminal (or with
/// `--verbose`); output from hooks and repository commands always appears.
pub struct StderrEvents {
    show_progress: bool,
    color: bool,
}

impl StderrEvents {
    pub fn new(verbose: bool, no_color: bool, machine: bool) -> StderrEvents {
        let tty = io::stderr().is_terminal();
        StderrEvents {
            show_progress: verbose || (tty && !machine),
            color: tty && !no_color && !machine,
        }
    }
}

impl Events for StderrEvents {
    fn progress(&self, message: &str) {
        if self.show_progress {
            let line = style::paint(self.color, Role::Dim, &format!("… {message}"));
            let _ = writeln!(io::stderr().lock(), "{line}");
        }
    }

    fn output(&self, prefix: &str, line: &str) {
        let prefix = style::paint(self.color, Role::Hint, prefix);
        let _ = writeln!(io::stderr().lock(), "{prefix}{line}");
    }

    fn process_output(&self, label: &Label<'_>, line: &str) {
        let name = format!("{:<w$} |", label.name, w = label.width);
        let prefix = style::paint_nth(self.color, label.index, &name);
        let _ = writeln!(io::stderr().lock(), "{prefix} {line}");
    }
}
