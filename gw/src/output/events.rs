//! Live progress and hook output, written to stderr as it happens.

use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

use super::envelope::redacted;
use super::progress::Live;
use super::style::{self, Role};
use super::term::{Shown, escape};
use crate::ops::{Events, Label, Task};
use crate::shown;

/// Writes events to stderr. On a terminal (in machine mode too: stdout carries the
/// envelope, stderr is the person's) progress is drawn live, one line per repository; with
/// `--verbose` off a terminal it is written as plain lines; otherwise it is not shown.
/// Output from hooks and repository commands always appears, as the program wrote it (it
/// is the user's own); the names and messages around it are escaped (`term`), and the
/// messages have their secrets hidden (`redact`), as `--verbose` writes them.
pub struct StderrEvents {
    draw: Draw,
    color: bool,
}

enum Draw {
    Live(Live),
    /// One line per step, with when each repository's work began.
    Lines(Mutex<Vec<(String, String, Instant)>>),
    Off,
}

impl StderrEvents {
    /// `color`: whether stderr is coloured.
    pub fn new(verbose: bool, color: bool) -> StderrEvents {
        let draw = if io::stderr().is_terminal() {
            Draw::Live(Live::new())
        } else if verbose {
            Draw::Lines(Mutex::new(Vec::new()))
        } else {
            Draw::Off
        };
        console::set_colors_enabled_stderr(color);
        StderrEvents { draw, color }
    }

    /// Takes the live display off the screen, before the command's own output.
    pub fn finish(&self) {
        if let Draw::Live(live) = &self.draw {
            live.clear();
        }
    }

    fn line(&self, line: &Shown) {
        self.write_line(line.as_str());
    }

    /// Writes `line` as it is: [`Shown`] text, or a line of a hook's output.
    fn write_line(&self, line: &str) {
        match &self.draw {
            Draw::Live(live) => live.println(line),
            _ => {
                let _ = writeln!(io::stderr().lock(), "{line}");
            }
        }
    }

    fn dim(&self, text: Shown) -> Shown {
        style::paint(self.color, Role::Dim, &text)
    }
}

impl Events for StderrEvents {
    fn progress(&self, message: &str) {
        let message = &redacted(message);
        match &self.draw {
            Draw::Live(live) => live.headline(&escape(message)),
            Draw::Lines(_) => self.line(&self.dim(shown!("… {}", message))),
            Draw::Off => {}
        }
    }

    fn shows_counts(&self) -> bool {
        matches!(self.draw, Draw::Live(_))
    }

    fn task(&self, repo: &str, task: Task<'_>) {
        let step;
        let task = match task {
            Task::Step(s) => {
                step = redacted(s);
                Task::Step(&step)
            }
            other => other,
        };
        match &self.draw {
            Draw::Live(live) => live.task(&escape(repo), task),
            Draw::Lines(started) => {
                let mut started = started.lock().unwrap_or_else(|e| e.into_inner());
                match task {
                    Task::Step(step) => {
                        started.retain(|(r, _, _)| r != repo);
                        started.push((repo.to_string(), step.to_string(), Instant::now()));
                        drop(started);
                        self.line(&self.dim(shown!("… {}: {}", repo, step)));
                    }
                    Task::Count { .. } => {}
                    Task::Done { ok } => {
                        let Some(i) = started.iter().position(|(r, _, _)| r == repo) else {
                            return;
                        };
                        let (_, step, at) = started.remove(i);
                        drop(started);
                        let secs = at.elapsed().as_secs_f64();
                        let how = if ok { "done" } else { "failed" };
                        let secs = format!("{secs:.1}");
                        self.line(&self.dim(shown!("… {}: {} {} ({}s)", repo, step, how, secs)));
                    }
                }
            }
            Draw::Off => {}
        }
    }

    fn output(&self, prefix: &str, line: &str) {
        let prefix = style::paint(self.color, Role::Hint, &Shown::text(prefix));
        self.write_line(&format!("{prefix}{line}"));
    }

    fn process_output(&self, label: &Label<'_>, line: &str) {
        let name = Shown::text(format!("{:<w$} |", label.name, w = label.width));
        let prefix = style::paint_nth(self.color, label.index, &name);
        self.write_line(&format!("{prefix} {line}"));
    }
}
