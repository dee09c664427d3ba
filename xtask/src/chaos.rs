//! `cargo xtask chaos`: issue 13's acceptance suites through the release `gw` — the kill
//! suite (`e2e::chaos::kill`) and the race suite (`e2e::chaos::race`), each trial printed
//! with the seed that replays it, the closing note "kills tried / survived" and "race runs
//! / clean", and every failure with the auditor's findings. Exits non-zero on any failure.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use e2e::chaos::{self, Finding, kill, race};

use crate::util;

pub const USAGE: &str = "usage: cargo xtask chaos [--kills N] [--races N] [--seed S] [--quick]
                         [--only OP] [--repos N] [--files N] [--report FILE] [--keep]

  --kills N    kills that land mid-command (default 60; 0: no kill suite)
  --only OP    kill only `gw OP` (create, add-repo, delete, sync, rename, restore): the
               trials of the other commands' seeds are skipped
  --races N    race runs of 16 processes (default 10; 0: no race suite)
  --seed S     first seed; trial i uses S+i, so `--seed S --kills 1` replays trial S
  --quick      9 kills and 2 race runs on smaller repositories (what `cargo xtask ci` runs)
  --repos N    repositories in the kill suite's world (default 7)
  --files N    files per repository (default 3000; --quick: 1000)
  --report F   also write the findings as Markdown to F
  --dir D      where to build the worlds (default: /dev/shm/grove-chaos when that memory
               file system has 4 GiB free, else target/chaos; every trial copies a world
               of tens of thousands of files, which a busy disk makes slow)
  --keep       keep the worlds for inspection";

pub struct Args {
    kills: usize,
    races: usize,
    seed: u64,
    only: Option<kill::Op>,
    repos: usize,
    files: usize,
    report: Option<PathBuf>,
    dir: Option<PathBuf>,
    keep: bool,
}

pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        kills: 60,
        races: 10,
        seed: chaos::clock_seed(),
        only: None,
        repos: 7,
        files: 3000,
        report: None,
        dir: None,
        keep: false,
    };
    let mut quick = false;
    let (mut kills, mut races, mut files) = (None, None, None);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| util::value(&mut it, name, USAGE);
        let number = |name: &str, v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{name}: `{v}` is not a number\n\n{USAGE}"))
        };
        match arg.as_str() {
            "--kills" => kills = Some(number("--kills", value("--kills")?)? as usize),
            "--races" => races = Some(number("--races", value("--races")?)? as usize),
            "--seed" => a.seed = number("--seed", value("--seed")?)?,
            "--only" => {
                let v = value("--only")?;
                a.only = Some(
                    kill::Op::named(&v)
                        .ok_or_else(|| format!("--only: no command `{v}`\n\n{USAGE}"))?,
                );
            }
            "--repos" => a.repos = number("--repos", value("--repos")?)? as usize,
            "--files" => files = Some(number("--files", value("--files")?)? as usize),
            "--report" => a.report = Some(PathBuf::from(value("--report")?)),
            "--dir" => a.dir = Some(PathBuf::from(value("--dir")?)),
            "--quick" => quick = true,
            "--keep" => a.keep = true,
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument `{other}`\n\n{USAGE}")),
        }
    }
    a.kills = kills.unwrap_or(if quick { 9 } else { 60 });
    a.races = races.unwrap_or(if quick { 2 } else { 10 });
    a.files = files.unwrap_or(if quick { 1000 } else { 3000 });
    if a.repos < 5 {
        return Err("--repos: the kill suite needs at least 5 repositories".into());
    }
    Ok(a)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let a = parse(args)?;
    if !chaos::have_proc() {
        // The suites find a killed gw's orphans through /proc; without it they cannot judge.
        return Err("chaos needs /proc (Linux) to find the processes a trial started".into());
    }
    let root = util::project_root();
    util::step("cargo build --release -p gw");
    let gw = util::build_release(&root, "gw")?;
    let dir = match &a.dir {
        Some(d) => d.clone(),
        None if free_bytes(std::path::Path::new("/dev/shm")) >= 4 << 30 => {
            PathBuf::from("/dev/shm/grove-chaos")
        }
        None => util::target_dir(&root)?.join("chaos"),
    };
    eprintln!("worlds under {}", dir.display());
    let mut report = String::new();
    let _ = writeln!(
        report,
        "# Chaos findings\n\n`cargo xtask chaos --seed {} --kills {} --races {} --repos {} --files {}` against `{}` at {}.\n",
        a.seed,
        a.kills,
        a.races,
        a.repos,
        a.files,
        gw.display(),
        util::git_head(&root)
    );
    let mut summary = Vec::new();
    let mut failures = 0usize;
    // One line per failing trial, repeated at the end.
    let mut failing: Vec<String> = Vec::new();

    if a.kills > 0 {
        util::step(&format!(
            "kill suite: {} kills from seed {} ({} repositories × {} files)",
            a.kills, a.seed, a.repos, a.files
        ));
        let t = Instant::now();
        let mut suite = kill::Suite::prepare(kill::Config {
            gw: gw.clone(),
            dir: dir.clone(),
            repos: a.repos,
            files: a.files,
        });
        eprintln!("world built in {:.1} s", t.elapsed().as_secs_f64());
        let _ = writeln!(report, "## Kill suite\n");
        for op in kill::Op::ALL
            .into_iter()
            .filter(|op| a.only.is_none_or(|o| o == *op))
        {
            let c = suite.calibrate(op).clone();
            eprintln!(
                "uninterrupted gw {op}: {} ms, {} journal writes seen{}",
                c.took.as_millis(),
                c.journal_writes,
                if c.findings.is_empty() {
                    ""
                } else {
                    " — FAILED"
                }
            );
            if !c.findings.is_empty() {
                failures += 1;
                failing.push(format!(
                    "uninterrupted gw {op}: {}",
                    kinds_summary(&c.findings)
                ));
                print_findings(&c.findings);
                let _ = writeln!(
                    report,
                    "### uninterrupted `gw {op}` (no signal) fails\n\n{}",
                    md_findings(&c.findings)
                );
            }
        }
        let mut tally = kill::Tally::default();
        let mut seed = a.seed;
        while tally.kills < a.kills {
            if tally.trials >= a.kills * 3 {
                return Err(format!(
                    "only {} of {} trials landed their signal mid-command",
                    tally.kills, tally.trials
                ));
            }
            let trial = kill::Trial::from_seed(seed);
            if a.only.is_some_and(|o| o != trial.op) {
                seed += 1;
                continue;
            }
            let o = suite.run(&trial);
            eprintln!("kill {:>3}: {}", tally.trials + 1, o.headline());
            print_findings(&o.findings);
            tally.add(o);
            seed += 1;
        }
        failures += tally.failed.len();
        for o in &tally.failed {
            failing.push(format!(
                "kill seed {}: gw {}, {}, {} → {}",
                o.trial.seed,
                o.trial.op,
                o.trial.signal,
                o.moment,
                kinds_summary(&o.findings)
            ));
        }
        let line = format!(
            "kills tried / survived: {} / {} ({} trials; {} finished before their signal)",
            tally.kills,
            tally.survived,
            tally.trials,
            tally.trials - tally.kills
        );
        let _ = writeln!(report, "{line}\n");
        for o in &tally.failed {
            let _ = writeln!(
                report,
                "### seed {}: `gw {}`, {}, {}\n\n- gw: {}\n- doctor --fix at once: {}\n- doctor --fix after the pause: {}\n- replay: `cargo xtask chaos --kills 1 --races 0 --repos {} --files {} --seed {}`\n\n{}",
                o.trial.seed,
                o.trial.op,
                o.trial.signal,
                o.moment,
                o.gw_end,
                o.doctor_now,
                o.doctor_later,
                a.repos,
                a.files,
                o.trial.seed,
                md_findings(&o.findings)
            );
        }
        summary.push(line);
        if a.keep {
            eprintln!("kept the last trial's world at {}", suite.live().display());
        } else {
            suite.remove();
        }
    }

    if a.races > 0 {
        util::step(&format!(
            "race suite: {} runs of 16 processes from seed {}",
            a.races, a.seed
        ));
        let mut suite = race::Suite::prepare(race::Config {
            gw: gw.clone(),
            dir: dir.clone(),
            procs: 16,
            files: a.files / 10,
        });
        let _ = writeln!(report, "## Race suite\n");
        let mut clean = 0;
        for i in 0..a.races {
            let o = suite.run(a.seed + i as u64);
            eprintln!("race {:>2}: {}", i + 1, o.headline());
            if o.findings.is_empty() {
                clean += 1;
                continue;
            }
            failures += 1;
            failing.push(format!(
                "race seed {} → {}",
                o.seed,
                kinds_summary(&o.findings)
            ));
            print_findings(&o.findings);
            let jobs: String = o
                .jobs
                .iter()
                .map(|j| {
                    format!(
                        "  - `gw {}` → {} ({} ms)\n",
                        j.args.join(" "),
                        j.end,
                        j.took.as_millis()
                    )
                })
                .collect();
            for j in &o.jobs {
                eprintln!("      gw {} → {}", j.args.join(" "), j.end);
            }
            let _ = writeln!(
                report,
                "### seed {}\n\n- replay: `cargo xtask chaos --kills 0 --races 1 --files {} --seed {}`\n- the 16 commands, all started at once:\n{jobs}\n{}",
                o.seed,
                a.files,
                o.seed,
                md_findings(&o.findings)
            );
        }
        let line = format!("race runs / clean: {} / {clean}", a.races);
        let _ = writeln!(report, "{line}\n");
        summary.push(line);
        if a.keep {
            eprintln!("kept the last run's world at {}", suite.live().display());
        } else {
            suite.remove();
        }
    }

    util::step("chaos: summary");
    if !failing.is_empty() {
        eprintln!("failing trials (findings by kind; details above, replay with --seed):");
        for l in &failing {
            eprintln!("  {l}");
        }
    }
    for l in &summary {
        eprintln!("{l}");
    }
    if let Some(path) = &a.report {
        let mut text = format!("{}\n\n", summary.join("  \n"));
        if !failing.is_empty() {
            text.push_str("Failing trials (findings by kind):\n\n");
            for l in &failing {
                text.push_str(&format!("- {l}\n"));
            }
            text.push('\n');
        }
        text.push_str(&report);
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("findings written to {}", path.display());
    }
    if failures > 0 {
        Err(format!(
            "chaos: {failures} failing trial(s); each is printed above with its seed"
        ))
    } else {
        Ok(())
    }
}

/// Free bytes on the file system holding `dir` (0 when unknown), from `df`.
fn free_bytes(dir: &std::path::Path) -> u64 {
    std::process::Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .nth(1)
                .and_then(|l| l.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// "unrecorded_registration ×7, leaked_branch ×7".
fn kinds_summary(findings: &[Finding]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for f in findings {
        match counts.iter_mut().find(|(k, _)| *k == f.kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((f.kind.clone(), 1)),
        }
    }
    counts
        .iter()
        .map(|(k, n)| {
            if *n == 1 {
                k.clone()
            } else {
                format!("{k} ×{n}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn print_findings(findings: &[Finding]) {
    for f in findings {
        eprintln!("      - {f}");
    }
}

fn md_findings(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("- **{}**: {}\n", f.kind, f.detail.replace('\n', " ")))
        .collect()
}
