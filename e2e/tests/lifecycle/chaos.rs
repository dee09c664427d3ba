//! The chaos harness itself (`e2e::chaos`, run in full by `cargo xtask chaos`): seeds
//! replay, trials cover every command and signal, outputs are judged by the contract,
//! orphaned processes are found, and the kill suite's world and its uninterrupted runs are
//! clean — so a failure the suites report is gw's, not the harness's.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::Duration;

use e2e::TestEnv;
use e2e::chaos::kill::{self, Moment, Op, Signal, Trial};
use e2e::chaos::{self, Rng, race};

#[test]
fn seeds_replay_and_consecutive_seeds_cover_every_command_and_signal() {
    let a: Vec<u64> = {
        let mut r = Rng::new(42);
        (0..5).map(|_| r.next_u64()).collect()
    };
    let b: Vec<u64> = {
        let mut r = Rng::new(42);
        (0..5).map(|_| r.next_u64()).collect()
    };
    assert_eq!(a, b);
    for start in [0u64, 1_000, 987_654_321] {
        let combos: BTreeSet<(Op, String)> = (start..start + 15)
            .map(Trial::from_seed)
            .map(|t| (t.op, t.signal.to_string()))
            .collect();
        assert_eq!(combos.len(), 15, "from seed {start}: {combos:?}");
        let t = Trial::from_seed(start + 3);
        let u = Trial::from_seed(start + 3);
        assert_eq!((t.op, t.signal, t.moment), (u.op, u.signal, u.moment));
    }
    let trials: Vec<Trial> = (0..60).map(Trial::from_seed).collect();
    assert!(
        trials
            .iter()
            .any(|t| matches!(t.moment, Moment::JournalWrite(_)))
    );
    assert!(trials.iter().any(|t| matches!(t.moment, Moment::Delay(_))));
    assert!(trials.iter().any(|t| t.signal == Signal::IntGroup));
}

#[test]
fn race_runs_replay_and_mix_every_command() {
    assert_eq!(race::jobs(7, 16), race::jobs(7, 16));
    assert_ne!(race::jobs(7, 16), race::jobs(8, 16));
    let mut kinds = BTreeSet::new();
    for seed in 0..10 {
        let jobs = race::jobs(seed, 16);
        assert_eq!(jobs.len(), 16);
        assert_eq!(jobs[0][0], "rename");
        assert_eq!(jobs[1][0], "prune");
        // Issue 25: branches pruned, and two creates of different names on one branch.
        assert_eq!(jobs[2][..2], ["prune", "branches"]);
        for j in &jobs[3..5] {
            assert_eq!(j[0], "create");
            assert_eq!(j[3], "feat/shared", "{j:?}");
        }
        for j in &jobs {
            assert_eq!(&j[j.len() - 2..], ["--format", "json"], "{j:?}");
            if j[0] == "rename" {
                assert_ne!(j[1], j[3], "a rename to its own name is no race");
            }
            kinds.insert(j[0].clone());
        }
    }
    let want: BTreeSet<String> = [
        "create",
        "delete",
        "rename",
        "sync",
        "add-repo",
        "remove-repo",
        "prune",
    ]
    .map(String::from)
    .into();
    assert_eq!(kinds, want);
}

#[test]
fn outputs_are_judged_by_the_contract() {
    assert_eq!(chaos::exit_class("INTERNAL"), Some(1));
    assert_eq!(chaos::exit_class("WORKSPACE_EXISTS"), Some(4));
    assert_eq!(chaos::exit_class("RECOVERY_PENDING"), Some(5));
    assert_eq!(chaos::exit_class("TRANSIENT"), Some(7));
    assert_eq!(chaos::exit_class("CANCELLED"), Some(8));
    assert_eq!(chaos::exit_class("NO_SUCH_CODE"), None);

    let env = TestEnv::with_repos(&["api"]);
    let ok = env.gw(&["list", "--format", "json"]).success();
    let err = env.gw(&["delete", "nope", "--format", "json"]).code(3);
    assert!(chaos::judge_output(&ok.stdout, Some(0)).unwrap().is_some());
    assert!(chaos::judge_output(&err.stdout, Some(3)).unwrap().is_some());
    assert_eq!(chaos::judge_output("", None).unwrap(), None);
    // The wrong exit class, a truncated document, two documents, not an envelope.
    assert!(chaos::judge_output(&err.stdout, Some(1)).is_err());
    assert!(chaos::judge_output(&ok.stdout, Some(4)).is_err());
    assert!(chaos::judge_output(&ok.stdout[..ok.stdout.len() / 2], Some(0)).is_err());
    assert!(chaos::judge_output(&format!("{}{}", ok.stdout, ok.stdout), Some(0)).is_err());
    assert!(chaos::judge_output(r#"{"ok": true}"#, Some(0)).is_err());
}

#[test]
fn orphans_of_a_trial_are_found_by_their_mark_and_ended() {
    assert!(chaos::have_proc(), "the chaos harness needs /proc");
    let mark = format!("self-test-{}", std::process::id());
    // The shell exits at once; its `sleep` lives on as an orphan, as a killed gw's git does.
    let status = std::process::Command::new("sh")
        .args(["-c", "sleep 30 >/dev/null 2>&1 &"])
        .env(chaos::MARK_VAR, &mark)
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    // The orphan may still be between fork and exec, when its environment reads empty:
    // look again until it is `sleep`.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut found = chaos::marked_processes(&mark);
    while !(found.len() == 1 && found[0].1.contains("sleep 30"))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
        found = chaos::marked_processes(&mark);
    }
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.contains("sleep 30"), "{found:?}");
    assert!(chaos::wait_unmarked(&mark, Duration::from_millis(50)).is_err());
    chaos::kill_marked(&mark);
    chaos::wait_unmarked(&mark, Duration::from_secs(10)).expect("the orphan was killed");
}

/// The kill suite's world is clean (its `prepare` asserts that), and every command it
/// interrupts leaves a clean world when it is not interrupted.
#[test]
fn the_kill_suites_uninterrupted_runs_leave_a_clean_world() {
    let dir = tempfile::Builder::new()
        .prefix("grove-chaos-selftest.")
        .tempdir()
        .unwrap();
    let mut suite = kill::Suite::prepare(kill::Config {
        gw: e2e::gw_bin().to_path_buf(),
        dir: dir.path().to_path_buf(),
        repos: 5,
        files: 20,
    });
    for op in Op::ALL {
        let c = suite.calibrate(op).clone();
        assert!(
            c.findings.is_empty(),
            "gw {op} without a signal:\n{:#?}",
            c.findings
        );
        if op != Op::Sync {
            assert!(c.journal_writes > 0, "gw {op} writes a journal");
        }
    }
    suite.remove();
}
