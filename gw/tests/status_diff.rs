//! grove's status against git's on seeded random worktree states (`e2e::statediff`): a
//! fixed list of seeds here, in every test run; `.ci/run` adds a seed from the date and
//! `cargo xtask status-diff --seeds N` runs as many as asked.
#![allow(clippy::print_stderr)]
// A test harness: it reads its environment and runs itself again in a hermetic one.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use e2e::statediff::{self, Plan, Views};

/// grove's in-process reading: what `Repo::changes` and its siblings say.
fn probe(dir: &Path) -> Result<Views, String> {
    let repo = grove::git::Repo::open(dir).map_err(|e| e.to_string())?;
    let changes = repo.changes().map_err(|e| e.to_string())?;
    let shown = repo.changes_shown().map_err(|e| e.to_string())?;
    let (_, ignored) = repo.changes_and_ignored().map_err(|e| e.to_string())?;
    Ok(Views {
        clean: changes.is_clean(),
        unreadable: changes.unreadable.iter().map(|u| u.path.clone()).collect(),
        changes: changes.lines,
        shown: shown.lines,
        ignored,
    })
}

/// The seeds every run tries (each builds a world and changes it [`STATES`] times).
const SEEDS: &[u64] = &[
    1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4181, 6765, 10946,
];
const STATES: usize = 6;

#[test]
fn grove_agrees_with_git_on_seeded_worktree_states() {
    if !hermetic("grove_agrees_with_git_on_seeded_worktree_states") {
        return;
    }
    let plan = Plan {
        seeds: SEEDS.to_vec(),
        states: STATES,
        jobs: 2,
    };
    judge(&plan);
}

/// Seeds on which long runs once found grove disagreeing with git, each kept: an ignored
/// directory holding nothing listed inside an untracked one (20261283, 20261303,
/// 20261390, 20261395); an unreadable directory where the index holds a file, which git
/// reads and warns of without showing it (20261292); a fifo where a symbolic link was, which
/// git calls changed in kind (20261447); a warning git no longer gives after the index was
/// written back, as after its own refresh (20261463); a panic in gix's filter pipeline when
/// one scan read attributes from the worktree and from the index (20270139, a fifo
/// `.gitattributes`); a conflicted file git could not look at, and warned of, in a
/// directory of mode 444 (20270175, 20270253); a fifo `.gitignore` in a submodule, on
/// which the status handed to git waited (20270520); a directory git could not open met
/// before the first untracked file of the listing (20270672); an intent-to-add file under
/// a tree the index caches as HEAD's, ` A` to git (20270689); a racy entry of another size
/// smudged by the write-back, which git then read as clean (20270728); the world's own
/// `chmod 000` through a link to `.`, which locked git out of the worktree (20270776); a
/// file deleted from a directory of mode 444 (20270885); a world whose required filter had
/// no smudge command, which git could not check out (20271100); untracked files below a
/// directory of mode 111, which git does not list (20271200); a submodule holding work,
/// compared by its HEAD alone where grove answers itself (20271462); a `.gitattributes`
/// that is a directory, an empty rules file to git (20271517).
const FOUND: &[u64] = &[
    20261283, 20261292, 20261303, 20261390, 20261395, 20261447, 20261463, 20270139, 20270175,
    20270253, 20270520, 20270672, 20270689, 20270728, 20270776, 20270885, 20271100, 20271200,
    20271462, 20271517,
];

#[test]
fn the_seeds_long_runs_found_disagreeing_stay_agreed() {
    if !hermetic("the_seeds_long_runs_found_disagreeing_stay_agreed") {
        return;
    }
    judge(&Plan {
        seeds: FOUND.to_vec(),
        states: 8,
        jobs: 2,
    });
}

/// `cargo xtask status-diff`: the seeds its environment names.
#[test]
#[ignore = "long: run by `cargo xtask status-diff`"]
fn long_run() {
    if !hermetic("long_run") {
        return;
    }
    let var = |name: &str, default: u64| -> u64 {
        std::env::var(name)
            .ok()
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{name}={v} is not a number"))
            })
            .unwrap_or(default)
    };
    let first = var("GW_STATUS_DIFF_SEED", 1);
    let plan = Plan {
        seeds: (first..first + var("GW_STATUS_DIFF_SEEDS", 100)).collect(),
        states: var("GW_STATUS_DIFF_STATES", 10) as usize,
        jobs: var("GW_STATUS_DIFF_JOBS", 2) as usize,
    };
    judge(&plan);
}

/// Set in the test process [`hermetic`] starts.
const HERMETIC: &str = "GW_STATUS_DIFF_HERMETIC";

/// Whether this process reads git's configuration as the worlds' git does, and may run the
/// test `name`. grove's side is read in this process, so it must see what git sees: no
/// configuration of the host, and a `HOME` the unprivileged user the worlds are read as can
/// search (root's is not: its `~/.config/git/ignore` would be unreadable to grove alone).
/// When not, this runs `name` again in a process that does (its output passed through),
/// fails if that fails, and returns false.
fn hermetic(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    if std::env::var_os(HERMETIC).is_some() {
        return true;
    }
    let home = tempfile::tempdir().expect("a temporary home");
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod the temporary home");
    let exe = std::env::current_exe().expect("this test's executable");
    let status = std::process::Command::new(exe)
        .args(["--exact", name, "--nocapture", "--include-ignored"])
        .env(HERMETIC, "1")
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .envs(e2e::HERMETIC_GIT.iter().copied())
        .env("GW_BIN", e2e::gw_bin())
        .status()
        .expect("run the test again");
    assert!(status.success(), "{name} failed (its output is above)");
    false
}

/// Runs `plan` and fails on any disagreement, printing each with its reproduction.
fn judge(plan: &Plan) {
    let report = statediff::run(plan, e2e::gw_bin(), probe, &|line| eprintln!("{line}"));
    eprintln!(
        "{} states, {} deliberate differences, unreadable paths tried: {}",
        report.states,
        report.deliberate.len(),
        report.unreadable_tried
    );
    for d in &report.deliberate {
        eprintln!("deliberate: {d}");
    }
    if !report.disagreements.is_empty() {
        for d in &report.disagreements {
            eprintln!("{d}");
        }
        panic!(
            "{} disagreement(s) with git (seeds {:?}); each is printed above with a script that \
             rebuilds it",
            report.disagreements.len(),
            report
                .disagreements
                .iter()
                .map(|d| d.seed)
                .collect::<Vec<_>>()
        );
    }
    assert_eq!(
        report.states + report.stopped,
        plan.seeds.len() * plan.states,
        "every state of every seed is compared, or left because its seed stopped"
    );
    if e2e::in_ci() {
        assert!(
            report.unreadable_tried,
            "unreadable paths were not tried: this must run as (or become) an unprivileged user"
        );
    }
}
