//! The kill suite: `gw create --copy` (of every repository, each copying its checkout's
//! `node_modules`), `add-repo --copy`, `delete`, `sync` (with
//! upstream commits to rebase onto), `rename` and `restore` (of a deleted workspace from the
//! trash) are interrupted — SIGKILL to gw alone,
//! SIGKILL to its process group, SIGINT to its process group (what Ctrl-C does) — at a
//! seeded moment: a delay within the time an uninterrupted run takes, or the Nth journal
//! write observed in `<grove dir>/operations/` from outside. Then `gw doctor --fix --format
//! json` runs at once (while a killed gw's children may still be running), again after a
//! pause (once every process the trial started has ended), and the auditor must find
//! nothing: git agrees with state, nothing leaked, nothing left in progress, and the
//! pre-existing work byte for byte intact.
//!
//! The world: `repos` repositories of `files` files each (and an ignored `node_modules` of
//! half as many in each checkout, which `--copy` copies); workspace `other` (r0, r1) with a
//! dirty tracked file, an untracked file and an unpushed commit; workspace `feat` (r0..r3)
//! with an unpushed commit in each repository, whose origins have moved on (so `sync`
//! rebases); in the source checkouts a dirty tracked file (r2), an untracked file (r3) and
//! a branch `keep` with a commit of its own (r4); in the trash, workspace `gone` (r0, r2),
//! deleted with an untracked file and a commit of its own, which a restore brings back
//! whole or leaves in the trash whole — never half.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::world::{Template, big_repo};
use super::{Finding, MARK_VAR, Rng, error_code, judge_output, settle};
use crate::TestEnv;
use crate::audit::{Baseline, Preserved};

/// The commands the suite interrupts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    Create,
    AddRepo,
    Delete,
    Sync,
    Rename,
    Restore,
}

impl Op {
    pub const ALL: [Op; 6] = [
        Op::Create,
        Op::AddRepo,
        Op::Delete,
        Op::Sync,
        Op::Rename,
        Op::Restore,
    ];

    /// The command named `name` (as displayed).
    pub fn named(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.to_string() == name)
    }

    /// The command line (without `gw`), for a world of `repos` repositories.
    pub fn args(self, repos: usize) -> Vec<String> {
        let all: Vec<String> = (0..repos).map(|i| format!("r{i}")).collect();
        let added: Vec<String> = (FEAT_REPOS..repos).map(|i| format!("r{i}")).collect();
        let args: Vec<String> = match self {
            Op::Create => vec![
                "create".into(),
                NEW.into(),
                "-b".into(),
                NEW.into(),
                "-r".into(),
                all.join(","),
                // Each worktree is copied its checkout's `node_modules` (`big_repo`).
                "--copy".into(),
            ],
            Op::AddRepo => vec![
                "add-repo".into(),
                FEAT.into(),
                "-r".into(),
                added.join(","),
                "--copy".into(),
            ],
            Op::Delete => vec!["delete".into(), FEAT.into()],
            Op::Sync => vec!["sync".into(), FEAT.into()],
            Op::Rename => vec!["rename".into(), FEAT.into(), "--to".into(), RENAMED.into()],
            Op::Restore => vec!["restore".into(), GONE.into()],
        };
        args.into_iter()
            .chain(["--format".to_string(), "json".to_string()])
            .collect()
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Create => "create",
            Op::AddRepo => "add-repo",
            Op::Delete => "delete",
            Op::Sync => "sync",
            Op::Rename => "rename",
            Op::Restore => "restore",
        })
    }
}

/// How the command is interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGKILL to the gw process alone: its children live on.
    KillGw,
    /// SIGKILL to gw's process group (what a supervisor killing a job does).
    KillGroup,
    /// SIGINT to gw's process group (what Ctrl-C at a terminal does).
    IntGroup,
}

impl Signal {
    pub const ALL: [Signal; 3] = [Signal::KillGw, Signal::KillGroup, Signal::IntGroup];
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Signal::KillGw => "SIGKILL to gw",
            Signal::KillGroup => "SIGKILL to the group",
            Signal::IntGroup => "SIGINT to the group",
        })
    }
}

/// When the signal is sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Moment {
    /// After this fraction of the time an uninterrupted run takes.
    Delay(f64),
    /// When journal write number `1 + pick % W` is observed (`W`: the writes observed in
    /// an uninterrupted run); a command that writes no journal falls back to a delay.
    JournalWrite(u64),
}

/// One trial, entirely determined by its seed: consecutive seeds cycle through every
/// command, and every six through every signal (6 × 3 = 18 combinations in 18
/// consecutive seeds).
#[derive(Debug, Clone)]
pub struct Trial {
    pub seed: u64,
    pub op: Op,
    pub signal: Signal,
    pub moment: Moment,
}

impl Trial {
    pub fn from_seed(seed: u64) -> Trial {
        let mut rng = Rng::new(seed);
        let moment = if rng.below(2) == 0 {
            Moment::Delay(rng.fraction())
        } else {
            Moment::JournalWrite(rng.next_u64())
        };
        Trial {
            seed,
            op: Op::ALL[(seed % 6) as usize],
            signal: Signal::ALL[((seed / 6) % 3) as usize],
            moment,
        }
    }
}

const NEW: &str = "new";
const FEAT: &str = "feat";
const RENAMED: &str = "renamed";
const GONE: &str = "gone";
/// The untracked file of `gone`'s r2 worktree, and what it holds.
const GONE_FILE: &str = "r2/gone-notes.txt";
const GONE_TEXT: &str = "deleted with the workspace, kept in the trash\n";
const FEAT_REPOS: usize = 4;
const CALIBRATION_RUNS: u32 = 3;

/// What the suite needs to know.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `gw` under test (the release build).
    pub gw: PathBuf,
    /// Where the worlds are built (emptied first).
    pub dir: PathBuf,
    /// Repositories in the world (at least 5).
    pub repos: usize,
    /// Files per repository.
    pub files: usize,
}

/// An uninterrupted run of a command, the yardstick for its trials' moments.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub took: Duration,
    pub journal_writes: u32,
    /// What was wrong with the uninterrupted run (nothing, normally).
    pub findings: Vec<Finding>,
}

/// What a trial did and found.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub trial: Trial,
    /// The signal was sent while gw was running.
    pub landed: bool,
    /// The moment as it happened ("after 412 ms (0.37 of 1.10 s)").
    pub moment: String,
    /// How gw ended ("killed by SIGKILL", "exit 8 CANCELLED", "exit 0").
    pub gw_end: String,
    /// `gw doctor --fix` at once, and after the pause, summarised.
    pub doctor_now: String,
    pub doctor_later: String,
    pub findings: Vec<Finding>,
    pub took: Duration,
    /// Where the trial's time went ("reset 2.1 s, gw 0.4 s, …").
    pub phases: String,
}

impl Outcome {
    /// One line: seed, command, signal, moment, how gw and doctor ended.
    pub fn headline(&self) -> String {
        format!(
            "seed {} | gw {} | {} {} | gw: {} | doctor now: {} | after pause: {} | {} | {:.1} s ({})",
            self.trial.seed,
            self.trial.op,
            self.trial.signal,
            self.moment,
            self.gw_end,
            self.doctor_now,
            self.doctor_later,
            if !self.landed {
                "finished before the signal".to_string()
            } else if self.findings.is_empty() {
                "survived".to_string()
            } else {
                format!("{} finding(s)", self.findings.len())
            },
            self.took.as_secs_f64(),
            self.phases
        )
    }
}

/// The suite: a world built once, a calibration per command, and trials.
pub struct Suite {
    cfg: Config,
    tpl: Template,
    baseline: Baseline,
    preserved: Preserved,
    calibrations: BTreeMap<Op, Calibration>,
}

impl Suite {
    /// Builds the world (this takes a while for thousands of files) and keeps it as the
    /// template every trial starts from.
    pub fn prepare(cfg: Config) -> Suite {
        assert!(
            cfg.repos > FEAT_REPOS,
            "the kill suite needs at least 5 repositories"
        );
        let tpl = Template::new(&cfg.dir, "kill");
        let env = tpl.env(&cfg.gw);
        let names: Vec<String> = (0..cfg.repos).map(|i| format!("r{i}")).collect();
        for n in &names {
            big_repo(&env, n, cfg.files);
        }
        env.gw(&["init", env.repos.to_str().unwrap()]).success();
        // Pre-existing work in the source checkouts.
        let r = |i: usize| env.repos.join(format!("r{i}"));
        std::fs::write(r(2).join("src/d000/f00000.txt"), "edited, not committed\n").unwrap();
        std::fs::write(r(3).join("notes.txt"), "untracked notes\n").unwrap();
        env.git(&r(4), &["switch", "-q", "-c", "keep"]);
        env.commit(&r(4), "keep.txt", "kept\n", "a commit found nowhere else");
        env.git(&r(4), &["switch", "-q", "main"]);
        // Workspace `other`, with work of every kind.
        env.gw(&["create", "other", "-b", "other", "-r", "r0,r1"])
            .success();
        let other = env.ws("other");
        env.commit(
            &other.join("r1"),
            "other.txt",
            "other work\n",
            "unpushed work",
        );
        std::fs::write(other.join("r0/README.md"), "dirty\n").unwrap();
        std::fs::write(other.join("r1/scratch.txt"), "untracked\n").unwrap();
        // Workspace `feat`: a commit of its own in each repository, origins moved on.
        let feat_repos: Vec<&str> = names[..FEAT_REPOS].iter().map(String::as_str).collect();
        env.gw(&["create", FEAT, "-b", FEAT, "-r", &feat_repos.join(",")])
            .success();
        for (i, n) in feat_repos.iter().enumerate() {
            env.commit(
                &env.ws(FEAT).join(n),
                &format!("feat-{i}.txt"),
                "feature work\n",
                "feature work",
            );
            env.push_upstream(n, "main", "upstream.txt", "upstream moved on\n");
        }
        // Workspace `gone`, deleted with work of its own: in the trash, for `restore`.
        env.gw(&["create", GONE, "-b", GONE, "-r", "r0,r2"])
            .success();
        std::fs::write(env.ws(GONE).join(GONE_FILE), GONE_TEXT).unwrap();
        env.commit(
            &env.ws(GONE).join("r0"),
            "gone.txt",
            "gone work\n",
            "a commit only the deleted workspace has",
        );
        // Marked, so the measuring `gw trash tidy` it starts has ended before the world is
        // sealed.
        let mark = format!("prepare-{}", std::process::id());
        let deleted = env
            .gw_cmd(&["delete", GONE, "--force"])
            .env(MARK_VAR, &mark)
            .output()
            .expect("gw runs");
        assert!(deleted.status.success(), "{deleted:?}");
        assert!(settle(&mark, "the delete of `gone`").is_none());
        let baseline = Baseline::record(&env.world());
        let mut preserved = Preserved::new();
        preserved
            .file(&r(2).join("src/d000/f00000.txt"))
            .file(&r(3).join("notes.txt"))
            .file(&other.join("r0/README.md"))
            .file(&other.join("r1/scratch.txt"))
            .commits(&r(4), "keep", false)
            .commits(&r(1), "other", false);
        for i in 0..FEAT_REPOS {
            // A sync rebases these; a delete keeps the branch (its commits are nowhere else).
            preserved.commits(&r(i), FEAT, true);
        }
        tpl.seal(&env, &baseline, &preserved);
        Suite {
            cfg,
            tpl,
            baseline,
            preserved,
            calibrations: BTreeMap::new(),
        }
    }

    /// Runs `op` without interruption, three times (once per suite): the shortest time it
    /// took and the fewest journal writes seen are the yardstick for its trials' moments
    /// (so that they land mid-command), and each run must leave a clean world.
    pub fn calibrate(&mut self, op: Op) -> &Calibration {
        if !self.calibrations.contains_key(&op) {
            let mut cal = Calibration {
                took: Duration::MAX,
                journal_writes: u32::MAX,
                findings: Vec::new(),
            };
            for run in 0..CALIBRATION_RUNS {
                let (took, writes, findings) = self.uninterrupted(op, run);
                cal.took = cal.took.min(took);
                cal.journal_writes = cal.journal_writes.min(writes);
                cal.findings.extend(findings);
            }
            self.calibrations.insert(op, cal);
        }
        &self.calibrations[&op]
    }

    fn uninterrupted(&mut self, op: Op, run: u32) -> (Duration, u32, Vec<Finding>) {
        let env = self.tpl.reset(&self.cfg.gw);
        let mark = format!("calibrate-{op}-{run}-{}", std::process::id());
        let start = Instant::now();
        let mut child = spawn(&env, &op.args(self.cfg.repos), &mark);
        let mut poll = JournalPoll::new(&env);
        while child.try_wait().expect("wait for gw").is_none() {
            poll.poll();
            std::thread::sleep(Duration::from_micros(100));
        }
        let took = start.elapsed();
        let ended = finish(child);
        let mut findings = Vec::new();
        match judge_output(&ended.stdout, ended.status.code()) {
            Ok(Some(v)) if v["ok"] == true => {}
            other => findings.push(Finding::new(
                "uninterrupted_run_failed",
                format!(
                    "{op} without any signal: {} {other:?}; stderr: {}",
                    describe_status(ended.status, &ended.stdout),
                    super::clip(&ended.stderr, 400)
                ),
            )),
        }
        findings.extend(settle(&mark, "an uninterrupted run"));
        findings.extend(
            env.world()
                .audit_with(&self.baseline, &self.preserved)
                .into_iter()
                .map(Finding::from),
        );
        findings.extend(check_outcome(&env, op, self.cfg.repos, true));
        (took, poll.writes, findings)
    }

    /// Runs one trial.
    pub fn run(&mut self, trial: &Trial) -> Outcome {
        let cal = self.calibrate(trial.op).clone();
        let t0 = Instant::now();
        let mut phases = Phases::start();
        let env = self.tpl.reset(&self.cfg.gw);
        phases.lap("reset");
        let mark = format!("kill-{}-{}", trial.seed, std::process::id());
        let mut findings = Vec::new();

        // The moment, resolved against the calibration.
        enum At {
            After(Duration),
            Write(u32),
        }
        let (at, planned) = match trial.moment {
            Moment::JournalWrite(pick) if cal.journal_writes > 0 => {
                let n = 1 + (pick % cal.journal_writes as u64) as u32;
                (
                    At::Write(n),
                    format!("at journal write {n} of {}", cal.journal_writes),
                )
            }
            Moment::JournalWrite(pick) => {
                let f = (pick % 1000) as f64 / 1000.0;
                let d = cal.took.mul_f64(f);
                (
                    At::After(d),
                    format!(
                        "after {} ms ({f:.2} of {} ms; no journal to watch)",
                        d.as_millis(),
                        cal.took.as_millis()
                    ),
                )
            }
            Moment::Delay(f) => {
                let d = cal.took.mul_f64(f);
                (
                    At::After(d),
                    format!(
                        "after {} ms ({f:.2} of {} ms)",
                        d.as_millis(),
                        cal.took.as_millis()
                    ),
                )
            }
        };

        let started = Instant::now();
        let mut child = spawn(&env, &trial.op.args(self.cfg.repos), &mark);
        let pid = child.id() as i32;
        let mut poll = JournalPoll::new(&env);
        let mut landed = false;
        let mut sent_at = None;
        loop {
            if child.try_wait().expect("wait for gw").is_some() {
                break;
            }
            let due = match at {
                At::After(d) => started.elapsed() >= d,
                At::Write(n) => {
                    poll.poll();
                    poll.writes >= n
                }
            };
            // Ctrl-C can be handled only once gw is running: a SIGINT waits until gw
            // catches it (it starts its watcher first thing, before parsing its
            // arguments). Before that, no program could answer it.
            if due && (trial.signal != Signal::IntGroup || catches_sigint(pid)) {
                send(pid, trial.signal);
                landed = true;
                sent_at = Some(started.elapsed());
                break;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        let moment = match sent_at {
            Some(t) => format!("{planned} (sent at {} ms)", t.as_millis()),
            None => planned,
        };
        // A gw that handles SIGINT must end by itself; give it a generous while.
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().expect("wait for gw").is_none() {
            if Instant::now() > deadline {
                findings.push(Finding::new(
                    "gw_hangs",
                    format!("gw still runs 60 s after {}", trial.signal),
                ));
                send(pid, Signal::KillGroup);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let ended = finish(child);
        let gw_end = describe_status(ended.status, &ended.stdout);
        if let Err(e) = judge_output(&ended.stdout, ended.status.code()) {
            findings.push(Finding::new(
                "envelope_invalid",
                format!("gw {}: {e}", trial.op),
            ));
        }
        if landed && trial.signal == Signal::IntGroup {
            findings.extend(judge_sigint(&env, &ended));
        }
        phases.lap("gw");

        // Doctor at once: the children of a gw killed alone may still be at work.
        let (doctor_now, mut f) = doctor(&env, &mark, false);
        findings.append(&mut f);
        phases.lap("doctor");
        // The pause: every process the trial started has ended.
        findings.extend(settle(&mark, "the signal"));
        std::thread::sleep(Duration::from_millis(200));
        phases.lap("pause");
        let (doctor_later, mut f) = doctor(&env, &mark, true);
        findings.append(&mut f);
        phases.lap("doctor");
        findings.extend(settle(&mark, "doctor"));

        let violations = env.world().audit_with(&self.baseline, &self.preserved);
        if !violations.is_empty() {
            // Does grove itself see what is wrong?
            let run = env.gw(&["doctor", "--format", "json"]);
            if let Ok(Some(v)) = judge_output(&run.stdout, Some(run.status))
                && v["result"]["healthy"] == true
            {
                findings.push(Finding::new(
                    "doctor_says_healthy",
                    format!(
                        "`gw doctor` reports healthy while the auditor finds {} violation(s)",
                        violations.len()
                    ),
                ));
            }
        }
        findings.extend(violations.into_iter().map(Finding::from));
        findings.extend(check_outcome(&env, trial.op, self.cfg.repos, false));
        phases.lap("audit");
        Outcome {
            trial: trial.clone(),
            landed,
            moment,
            gw_end,
            doctor_now,
            doctor_later,
            findings,
            took: t0.elapsed(),
            phases: phases.to_string(),
        }
    }

    /// The live world's path (kept for inspection after a failing trial).
    pub fn live(&self) -> &Path {
        &self.tpl.live
    }

    /// Removes the worlds.
    pub fn remove(self) {
        self.tpl.remove();
    }
}

/// Wall-clock time per phase of a trial, for the log (never judged).
struct Phases {
    last: Option<Instant>,
    laps: Vec<(&'static str, Duration)>,
}

impl Phases {
    fn start() -> Phases {
        Phases {
            last: Some(Instant::now()),
            laps: Vec::new(),
        }
    }

    fn lap(&mut self, what: &'static str) {
        let now = Instant::now();
        let since = self.last.map(|l| now - l).unwrap_or_default();
        match self.laps.iter_mut().find(|(w, _)| *w == what) {
            Some((_, d)) => *d += since,
            None => self.laps.push((what, since)),
        }
        self.last = Some(now);
    }
}

impl fmt::Display for Phases {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .laps
            .iter()
            .map(|(w, d)| format!("{w} {:.1} s", d.as_secs_f64()))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// Starts `gw args` in a process group of its own, marked, with output piped.
fn spawn(env: &TestEnv, args: &[String], mark: &str) -> Child {
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = env.gw_cmd(&argv);
    cmd.env(MARK_VAR, mark)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd.spawn().expect("gw starts")
}

/// Whether process `pid` has a handler for SIGINT (Linux's `SigCgt` in
/// `/proc/PID/status`).
fn catches_sigint(pid: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (2 - 1)) != 0)
}

fn send(pid: i32, signal: Signal) {
    use rustix::process::{Pid, Signal as S, kill_process, kill_process_group};
    let Some(p) = Pid::from_raw(pid) else { return };
    let _ = match signal {
        Signal::KillGw => kill_process(p, S::KILL),
        Signal::KillGroup => kill_process_group(p, S::KILL),
        Signal::IntGroup => kill_process_group(p, S::INT),
    };
}

struct Ended {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Reaps `child` and reads what it printed. The pipes are read on threads: orphaned git
/// children of a killed gw may hold them open, and their end must not be waited for here.
fn finish(mut child: Child) -> Ended {
    let read = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = read(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = read(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let status = child.wait().expect("gw can be waited for");
    // gw's own output is complete once gw is gone; a pipe kept open by an orphan is read
    // until it closes, bounded.
    let join = |h: std::thread::JoinHandle<String>| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !h.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if h.is_finished() {
            h.join().unwrap_or_default()
        } else {
            "(the pipe was still held open after 120 s)".to_string()
        }
    };
    Ended {
        status,
        stdout: join(out),
        stderr: join(err),
    }
}

fn describe_status(status: ExitStatus, stdout: &str) -> String {
    if let Some(sig) = status.signal() {
        let name = match sig {
            9 => "SIGKILL",
            2 => "SIGINT",
            15 => "SIGTERM",
            6 => "SIGABRT",
            _ => "a signal",
        };
        return format!("killed by {name}");
    }
    let code = status.code().unwrap_or(-1);
    match serde_json::from_str::<Value>(stdout) {
        Ok(v) => match error_code(&v) {
            Some(c) => format!("exit {code} {c}"),
            None => format!("exit {code} ok"),
        },
        Err(_) if stdout.trim().is_empty() => format!("exit {code}, nothing on stdout"),
        Err(_) => format!("exit {code}, stdout not JSON"),
    }
}

/// What Ctrl-C must give (issue 13, item 7): an envelope (`CANCELLED`, exit 8, or the
/// command's own result when it finished anyway), not a death by signal, and no journal.
fn judge_sigint(env: &TestEnv, ended: &Ended) -> Vec<Finding> {
    let mut out = Vec::new();
    if ended.status.signal() == Some(2) {
        out.push(Finding::new(
            "sigint_not_handled",
            "gw died of SIGINT: no envelope, no message, no rollback",
        ));
    } else if ended.stdout.trim().is_empty() {
        out.push(Finding::new(
            "sigint_not_handled",
            format!(
                "gw ended ({}) after SIGINT without an envelope",
                describe_status(ended.status, &ended.stdout)
            ),
        ));
    }
    let journals = journal_names(env);
    if !journals.is_empty() {
        out.push(Finding::new(
            "journal_left_after_sigint",
            format!("{journals:?} left in operations/ by the interrupted gw"),
        ));
    }
    out
}

fn journal_names(env: &TestEnv) -> Vec<String> {
    std::fs::read_dir(env.grove_home.join("operations"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// `gw doctor --fix --format json`, marked as the trial's; a summary and what is wrong with
/// its answer. `settled`: run after the pause, when it must fix everything it can.
fn doctor(env: &TestEnv, mark: &str, settled: bool) -> (String, Vec<Finding>) {
    let mut cmd = env.gw_cmd(&["doctor", "--fix", "--format", "json"]);
    cmd.env(MARK_VAR, mark);
    let out = cmd.output().expect("gw doctor runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let when = if settled {
        "after the pause"
    } else {
        "at once"
    };
    let mut findings = Vec::new();
    let summary = match judge_output(&stdout, out.status.code()) {
        Err(e) => {
            findings.push(Finding::new(
                "envelope_invalid",
                format!("gw doctor --fix {when}: {e}"),
            ));
            describe_status(out.status, &stdout)
        }
        Ok(None) => {
            findings.push(Finding::new(
                "envelope_invalid",
                format!(
                    "gw doctor --fix {when} printed nothing ({}); stderr: {}",
                    describe_status(out.status, &stdout),
                    super::clip(&stderr, 300)
                ),
            ));
            describe_status(out.status, &stdout)
        }
        Ok(Some(v)) => {
            let r = &v["result"];
            let summary = match error_code(&v) {
                Some(code) => format!(
                    "{code} ({})",
                    super::clip(v["error"]["message"].as_str().unwrap_or(""), 160)
                ),
                None => format!(
                    "fixed {} left {} failed {}",
                    r["fixed"], r["left"], r["failed"]
                ),
            };
            let code = error_code(&v);
            if code == Some("INTERNAL") {
                findings.push(Finding::new(
                    "doctor_internal",
                    format!("gw doctor --fix {when}: {summary}"),
                ));
            } else if settled && (code.is_some() || r["failed"].as_u64().unwrap_or(0) > 0) {
                let failed: Vec<String> = r["issues"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or(&[])
                    .iter()
                    .filter(|i| i["outcome"] == "failed")
                    .map(|i| {
                        format!(
                            "{} {}: {}",
                            i["kind"].as_str().unwrap_or("?"),
                            i["issue"].as_str().unwrap_or(""),
                            super::clip(i["detail"].as_str().unwrap_or(""), 200)
                        )
                    })
                    .collect();
                findings.push(Finding::new(
                    "doctor_fix_failed",
                    format!("gw doctor --fix {when}: {summary} {failed:?}"),
                ));
            }
            summary
        }
    };
    (summary, findings)
}

/// Counts journal writes from outside, with inotify on `operations/`: each write renames
/// a temporary file onto `<id>.json` (an `IN_MOVED_TO` event), and the kernel queues every
/// event, so none is missed however fast they come; the kill lands as soon as the harness
/// reads the Nth.
#[cfg(target_os = "linux")]
struct JournalPoll {
    fd: rustix::fd::OwnedFd,
    writes: u32,
}

#[cfg(target_os = "linux")]
impl JournalPoll {
    fn new(env: &TestEnv) -> JournalPoll {
        use rustix::fs::inotify;
        let dir = env.grove_home.join("operations");
        std::fs::create_dir_all(&dir).expect("create operations/");
        let fd = inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC)
            .expect("inotify_init1");
        inotify::add_watch(
            &fd,
            &dir,
            inotify::WatchFlags::MOVED_TO | inotify::WatchFlags::CLOSE_WRITE,
        )
        .expect("watch operations/");
        JournalPoll { fd, writes: 0 }
    }

    fn poll(&mut self) {
        use rustix::fs::inotify;
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        while let Ok(event) = reader.next() {
            let Some(name) = event.file_name() else {
                continue;
            };
            let name = name.to_string_lossy();
            if name.ends_with(".json") && !name.starts_with('.') {
                self.writes += 1;
            }
        }
    }
}

/// Elsewhere the kill suite does not run (it finds a trial's orphans in `/proc`, see
/// [`super::have_proc`]), and nothing queues every rename the way inotify does: a kqueue
/// vnode event on the directory coalesces writes that come close together, so counting
/// them would kill at the wrong write. This twin keeps the suite compiling and says so if
/// it is ever reached.
#[cfg(not(target_os = "linux"))]
struct JournalPoll {
    writes: u32,
}

#[cfg(not(target_os = "linux"))]
impl JournalPoll {
    fn new(_env: &TestEnv) -> JournalPoll {
        panic!("the kill suite counts journal writes with inotify, which only Linux has");
    }

    fn poll(&mut self) {
        let _ = self.writes;
    }
}

/// Whether the command happened entirely or not at all (`done`: it must have happened).
fn check_outcome(env: &TestEnv, op: Op, repos: usize, done: bool) -> Vec<Finding> {
    let state = env.state();
    let count = |name: &str| {
        state.as_array().and_then(|l| {
            l.iter()
                .find(|w| w["name"] == name)
                .map(|w| w["repos"].as_array().map(Vec::len).unwrap_or(0))
        })
    };
    let (ok, what) = match op {
        Op::Create => {
            let n = count(NEW);
            (
                n == Some(repos) || (!done && n.is_none()),
                format!("workspace `{NEW}` has {n:?} of {repos} repositories"),
            )
        }
        Op::AddRepo => {
            let n = count(FEAT);
            (
                n == Some(repos) || (!done && n == Some(FEAT_REPOS)),
                format!(
                    "workspace `{FEAT}` has {n:?} repositories ({FEAT_REPOS} before, {repos} after)"
                ),
            )
        }
        Op::Delete => {
            let n = count(FEAT);
            (
                n.is_none() || (!done && n == Some(FEAT_REPOS)),
                format!("workspace `{FEAT}` has {n:?} repositories"),
            )
        }
        Op::Rename => {
            let (a, b) = (count(FEAT), count(RENAMED));
            (
                (a.is_none() && b == Some(FEAT_REPOS))
                    || (!done && a == Some(FEAT_REPOS) && b.is_none()),
                format!("`{FEAT}`: {a:?}, `{RENAMED}`: {b:?} repositories"),
            )
        }
        Op::Sync => {
            let n = count(FEAT);
            (
                n == Some(FEAT_REPOS),
                format!("workspace `{FEAT}` has {n:?} repositories"),
            )
        }
        Op::Restore => {
            // Either restored (recorded, its work in place, nothing left in the trash) or
            // still in the trash (not recorded, its work in the entry) — never half.
            let n = count(GONE);
            let entries: Vec<PathBuf> = std::fs::read_dir(env.workspace_dir().join(".trash"))
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            let kept: Vec<&PathBuf> = entries
                .iter()
                .filter(|e| {
                    e.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("gone-"))
                })
                .collect();
            let holds = |dir: &Path| {
                std::fs::read_to_string(dir.join(GONE_FILE)).is_ok_and(|t| t == GONE_TEXT)
            };
            let restored = n == Some(2) && kept.is_empty() && holds(&env.ws(GONE));
            let in_trash = n.is_none()
                && kept.len() == 1
                && kept[0].join("trash.json").is_file()
                && holds(&kept[0].join("workspace"));
            (
                restored || (!done && in_trash),
                format!(
                    "workspace `{GONE}` has {n:?} repositories, trash entries {kept:?}, its file {} in place",
                    if holds(&env.ws(GONE)) { "is" } else { "is not" }
                ),
            )
        }
    };
    if ok {
        Vec::new()
    } else {
        vec![Finding::new(
            "partial_outcome",
            format!("{op}: neither the world before nor after: {what}"),
        )]
    }
}

/// Everything a run of the suite did, for the closing note.
#[derive(Debug, Default)]
pub struct Tally {
    pub trials: usize,
    pub kills: usize,
    pub survived: usize,
    pub failed: Vec<Outcome>,
}

impl Tally {
    pub fn add(&mut self, o: Outcome) {
        self.trials += 1;
        if o.landed {
            self.kills += 1;
            if o.findings.is_empty() {
                self.survived += 1;
            }
        }
        if !o.findings.is_empty() {
            self.failed.push(o);
        }
    }
}
