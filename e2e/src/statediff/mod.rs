//! The differential test of grove's status against git's: a seeded generator of worktree
//! states (racy and same-size edits, restored modification times, kind swaps, nested and
//! fake repositories, ignore rules, index flags, conflicts, line-end conversion, filters,
//! unreadable paths, hostile names, index formats…), each compared with
//! `git status --porcelain=v2 -z --no-renames`, and git's view checked to be the same after
//! grove looked as before (a status must never make git stop seeing an edit).
//!
//! Every state is built by shell commands, recorded as they run, so a disagreement comes
//! with its seed and a script that rebuilds the world and shows both answers.
//!
//! The side under test is given as a [`Probe`] (grove's `Repo::changes`, read in-process by
//! the caller, which links grove) and the `gw` binary (`gw status --format json`).
//!
//! One difference is deliberate: grove compares nanoseconds where the git it runs beside
//! may compare seconds only (a git built without `USE_NSEC`, Debian's), so a same-size edit
//! whose modification time was put back, in the second of the last refresh, is ` M` to
//! grove and clean to that git. It is accepted only when the file's content, as
//! `git hash-object` cleans it, really differs from the index's: grove is right there.

mod git;
mod world;

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub use world::World;

/// What grove says about one worktree, read in-process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Views {
    /// `Repo::changes`: untracked files as `status.showUntrackedFiles=normal` lists them.
    pub changes: Vec<String>,
    /// `Repo::changes_shown`: untracked files as the repository's configuration says.
    pub shown: Vec<String>,
    /// `Repo::changes_and_ignored`'s ignored paths.
    pub ignored: Vec<String>,
    /// The paths grove could not read.
    pub unreadable: Vec<String>,
    /// `Repo::changes().is_clean()`.
    pub clean: bool,
}

/// grove's in-process reading of the worktree at a path (a function, so that a reading that
/// hangs can be left behind on its thread and reported).
pub type Probe = fn(&Path) -> Result<Views, String>;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub seeds: Vec<u64>,
    /// States per seed: each seed builds one world and changes it this many times.
    pub states: usize,
    /// Seeds run at once.
    pub jobs: usize,
}

/// One state where grove and git disagree.
#[derive(Debug, Clone)]
pub struct Disagreement {
    pub seed: u64,
    pub state: usize,
    pub what: String,
    /// A shell script that rebuilds the world and shows both answers.
    pub script: String,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Report {
    /// States compared.
    pub states: usize,
    /// States not built because their seed stopped early, git having broken its own index.
    pub stopped: usize,
    /// States where grove saw a change git did not, and grove was right (see the module).
    pub deliberate: Vec<String>,
    pub disagreements: Vec<Disagreement>,
    /// Whether unreadable paths were part of the states (not when running as root without
    /// a way to drop privileges).
    pub unreadable_tried: bool,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "seed {} state {}: {}\n--- reproduction (sh) ---\n{}",
            self.seed, self.state, self.what, self.script
        )
    }
}

/// Runs every seed of `plan`; `progress` hears a line per seed.
pub fn run(plan: &Plan, gw: &Path, probe: Probe, progress: &(dyn Fn(&str) + Sync)) -> Report {
    let gw = &crate::unprivileged::runnable_by_anyone(gw);
    let report = Mutex::new(Report::default());
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..plan.jobs.max(1) {
            s.spawn(|| {
                while let Some(&seed) = plan.seeds.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let one = run_seed(seed, plan, gw, probe);
                    progress(&format!(
                        "seed {seed}: {} states, {} deliberate, {} disagreement(s)",
                        one.states,
                        one.deliberate.len(),
                        one.disagreements.len()
                    ));
                    let mut all = report.lock().unwrap_or_else(|e| e.into_inner());
                    all.states += one.states;
                    all.stopped += one.stopped;
                    all.deliberate.extend(one.deliberate);
                    all.disagreements.extend(one.disagreements);
                    all.unreadable_tried |= one.unreadable_tried;
                }
            });
        }
    });
    report.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// One seed, on a thread of its own: as an unprivileged user when this runs as root (so
/// that unreadable paths are unreadable), when the thread can become one.
fn run_seed(seed: u64, plan: &Plan, gw: &Path, probe: Probe) -> Report {
    std::thread::scope(|s| {
        s.spawn(|| {
            let unprivileged = crate::unprivileged::drop_privileges();
            let mut report = Report {
                unreadable_tried: unprivileged,
                ..Report::default()
            };
            let mut w = match World::new(seed, gw, unprivileged) {
                Ok(w) => w,
                Err(e) => {
                    report.disagreements.push(Disagreement {
                        seed,
                        state: 0,
                        what: format!("the world could not be built: {e}"),
                        script: String::new(),
                    });
                    return report;
                }
            };
            for state in 1..=plan.states {
                let undo = w.mutate();
                let verdict = compare(&mut w, probe);
                report.states += 1;
                match verdict {
                    Ok(Verdict::GitBroke) => {
                        report.deliberate.push(format!(
                            "seed {seed} state {state}: git wrote an index it cannot read back \
                             (an entry without a path); nothing to compare, the seed stops"
                        ));
                        report.stopped += plan.states - state;
                        break;
                    }
                    Ok(Verdict::Agreed(deliberate)) => {
                        report.deliberate.extend(
                            deliberate
                                .into_iter()
                                .map(|d| format!("seed {seed} state {state}: {d}")),
                        );
                    }
                    Err(what) => {
                        report.disagreements.push(Disagreement {
                            seed,
                            state,
                            what,
                            script: w.script(),
                        });
                        break;
                    }
                }
                w.undo(undo);
            }
            w.finish();
            report
        })
        .join()
        .unwrap_or_else(|_| Report {
            disagreements: vec![Disagreement {
                seed,
                state: 0,
                what: "the seed's thread panicked".into(),
                script: String::new(),
            }],
            ..Report::default()
        })
    })
}

/// How long one reading may take before it counts as hung.
const PATIENCE: Duration = Duration::from_secs(120);

/// What a comparison found, when grove did not disagree with git.
enum Verdict {
    /// Grove agreed, but for these deliberate differences.
    Agreed(Vec<String>),
    /// git's own index is broken: there is no answer of git's to compare with.
    GitBroke,
}

/// Compares grove's views of the world's worktree with git's, and git's before and after.
/// Returns the deliberate differences found, or what disagreed.
fn compare(w: &mut World, probe: Probe) -> Result<Verdict, String> {
    let wt = w.worktree().to_path_buf();
    w.note("# compare: git's view, grove's, git's again");
    let before = git::View::of(w)?;
    if git::broken_index(&before) {
        return Ok(Verdict::GitBroke);
    }
    let ours = with_patience(move || probe(&wt)).ok_or("Repo::changes hung")??;
    let status = w.gw_status()?;
    let after = git::View::of(w)?;
    let mut deliberate = Vec::new();
    // A warning git no longer gives, all else the same, is what git's own refresh does too:
    // an entry written back with its stat data is not hashed again, so the attributes it
    // would have been hashed with are not looked up (seed 20261463: `.gitattributes`
    // unreadable; `git status`, which writes the index, silences git the same way). A
    // warning that appears, or any other change, is a disagreement.
    let quieter = after.warnings.iter().all(|w| before.warnings.contains(w));
    let same_but_warnings = git::View {
        warnings: before.warnings.clone(),
        ..after.clone()
    } == before;
    if before != after {
        if !(same_but_warnings && quieter) {
            return Err(format!(
                "git's view changed after grove looked:\nbefore: {before:?}\nafter:  {after:?}"
            ));
        }
        deliberate.push(format!(
            "git no longer warns {:?} after grove wrote the index back, as after its own \
             refresh",
            before
                .warnings
                .iter()
                .filter(|w| !after.warnings.contains(w))
                .collect::<Vec<_>>()
        ));
    }
    let mut check = |what: &str, gw: &[String], git: &[String]| -> Result<(), String> {
        match git::differences(gw, git) {
            None => Ok(()),
            Some(diff) => {
                for path in git::only_worktree_modified(gw, git) {
                    if !w.content_differs(&path)? {
                        return Err(format!(
                            "{what}: grove says `{path}` is modified and its content is the \
                             index's\n{diff}"
                        ));
                    }
                }
                if git::differences(&git::without_deliberate(gw, git), git).is_some() {
                    return Err(format!("{what} differs from git:\n{diff}"));
                }
                deliberate.push(format!("{what}: {diff}"));
                Ok(())
            }
        }
    };
    check("Repo::changes", &ours.changes, &before.normal)?;
    check("Repo::changes_shown", &ours.shown, &before.shown)?;
    check("gw status", &status, &before.shown)?;
    if git::differences(&ours.ignored, &before.ignored).is_some() {
        return Err(format!(
            "ignored paths differ:\ngrove: {:?}\ngit:   {:?}",
            ours.ignored, before.ignored
        ));
    }
    if !before.warnings.is_empty() && ours.unreadable.is_empty() {
        return Err(format!(
            "git warned ({:?}) and grove reports nothing unreadable",
            before.warnings
        ));
    }
    if ours.clean != (ours.changes.is_empty() && ours.unreadable.is_empty()) {
        return Err(format!(
            "is_clean() is {} with changes {:?} and unreadable {:?}",
            ours.clean, ours.changes, ours.unreadable
        ));
    }
    deliberate.dedup();
    Ok(Verdict::Agreed(deliberate))
}

/// Runs `f` on another thread (with this one's credentials), waiting at most
/// [`PATIENCE`]; `None` when it did not finish (the thread is left behind).
fn with_patience<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(PATIENCE).ok()
}
