//! The live progress display on stderr (indicatif): a headline for the operation's current
//! step and one line per repository at work — what it is doing, git's counts where git
//! reports them (files checked out, objects received), and the time it has taken so far.

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::term::escape;
use crate::ops::Task;

/// How often spinners turn and elapsed times update.
const TICK: Duration = Duration::from_millis(100);

/// Bars drawn on a terminal.
pub struct Live {
    multi: MultiProgress,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    headline: Option<ProgressBar>,
    /// The repositories at work, by name.
    repos: Vec<(String, ProgressBar)>,
    /// The longest repository name seen, so that the lines align.
    name_width: usize,
}

/// The display drawn now, for [`clear_all`].
static SHOWN: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Takes the live display off the screen for good: the process is about to end (a signal).
pub fn clear_all() {
    let shown = SHOWN.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(multi) = shown {
        let _ = multi.clear();
        multi.set_draw_target(ProgressDrawTarget::hidden());
    }
}

impl Live {
    pub fn new() -> Live {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10));
        *SHOWN.lock().unwrap_or_else(|e| e.into_inner()) = Some(multi.clone());
        Live {
            multi,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The operation's current step, above the repositories. `message` and the names
    /// given to [`Live::task`] are escaped already; a step and git's counts are escaped here.
    pub fn headline(&self, message: &str) {
        let mut inner = self.lock();
        match &inner.headline {
            Some(bar) => bar.set_message(message.to_string()),
            None => {
                let bar = self.multi.insert(0, ProgressBar::new_spinner());
                bar.set_style(style("{spinner:.cyan} {msg} {elapsed:.dim}"));
                bar.set_message(message.to_string());
                bar.enable_steady_tick(TICK);
                inner.headline = Some(bar);
            }
        }
    }

    pub fn task(&self, repo: &str, task: Task<'_>) {
        let mut inner = self.lock();
        match task {
            Task::Step(step) => {
                if repo.len() > inner.name_width {
                    inner.name_width = repo.len();
                    let w = inner.name_width;
                    for (name, bar) in &inner.repos {
                        bar.set_prefix(format!("{name:<w$}"));
                    }
                }
                let bar = match inner.repos.iter().find(|(n, _)| n == repo) {
                    Some((_, bar)) => bar.clone(),
                    None => {
                        let bar = self.multi.add(ProgressBar::new_spinner());
                        bar.enable_steady_tick(TICK);
                        inner.repos.push((repo.to_string(), bar.clone()));
                        bar
                    }
                };
                let w = inner.name_width;
                bar.set_style(spinner_style());
                bar.set_prefix(format!("{repo:<w$}"));
                bar.set_length(0);
                bar.set_position(0);
                bar.set_message(escape(step).into_owned());
            }
            Task::Count { what, done, total } => {
                let Some((_, bar)) = inner.repos.iter().find(|(n, _)| n == repo) else {
                    return;
                };
                match total {
                    Some(total) => {
                        if bar.length() != Some(total) {
                            bar.set_style(bar_style());
                            bar.set_length(total);
                        }
                        bar.set_position(done);
                    }
                    None => bar.set_position(done),
                }
                let what = escape(&what.to_lowercase()).into_owned();
                if bar.message() != what {
                    bar.set_message(what);
                }
            }
            Task::Done { .. } => {
                if let Some(i) = inner.repos.iter().position(|(n, _)| n == repo) {
                    let (_, bar) = inner.repos.remove(i);
                    bar.finish_and_clear();
                    self.multi.remove(&bar);
                }
            }
        }
    }

    /// Prints a line above the bars.
    pub fn println(&self, line: &str) {
        let _ = self.multi.println(line);
    }

    /// Takes every bar off the screen.
    pub fn clear(&self) {
        let mut inner = self.lock();
        for (_, bar) in inner.repos.drain(..) {
            bar.finish_and_clear();
        }
        if let Some(bar) = inner.headline.take() {
            bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("the templates are valid")
        .tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ ")
}

fn spinner_style() -> ProgressStyle {
    style("  {spinner:.cyan} {prefix:.bold} {msg} {elapsed:.dim}")
}

fn bar_style() -> ProgressStyle {
    style("  {spinner:.cyan} {prefix:.bold} {msg} {bar:20.cyan/blue} {pos}/{len} {elapsed:.dim}")
        .progress_chars("━╸ ")
}
