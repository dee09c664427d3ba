//! Crash recovery through the real binary: `gw create` of a ten-repository workspace and
//! `gw delete` of it are killed with SIGKILL at many points — right after each journal
//! write (`GW_CRASH_AFTER_JOURNAL_WRITES`, honoured by every build) and at random moments — and after each crash the commands touching the workspace say
//! `RECOVERY_PENDING` while a journal is left, and `gw doctor --fix` restores a consistent
//! world: exactly the world before the command or exactly the world after it, git
//! agreeing with `state.json`, no journal and no trash left, everything that existed
//! before (a branch with a commit, dirty files, another workspace) intact.
// The seed and the crash points are printed, so that a failure can be replayed.
#![allow(clippy::print_stderr)]

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use e2e::{Rng, TestEnv};

const REPOS: usize = 10;
const CRASH_VAR: &str = "GW_CRASH_AFTER_JOURNAL_WRITES";

fn repo_names() -> Vec<String> {
    (0..REPOS).map(|i| format!("r{i:02}")).collect()
}

/// Ten repositories with origins. Pre-existing things a crash must not touch: `r03` has a
/// branch `feat` with a commit of its own (the workspace checks it out, and never deletes
/// it), `r00`'s checkout has an untracked file, and workspace `other` (over r00 and r01)
/// has uncommitted work.
fn world() -> TestEnv {
    let names = repo_names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let env = TestEnv::with_repos(&refs);
    let r03 = env.repos.join("r03");
    env.git(&r03, &["switch", "-q", "-c", "feat"]);
    env.commit(
        &r03,
        "pre.txt",
        "pre-existing work\n",
        "pre-existing commit",
    );
    env.git(&r03, &["switch", "-q", "main"]);
    std::fs::write(env.repos.join("r00/notes.txt"), "mine\n").unwrap();
    env.gw(&["create", "other", "-b", "other", "-r", "r00,r01"])
        .success();
    std::fs::write(env.ws("other").join("r00/README.md"), "changed\n").unwrap();
    std::fs::write(env.ws("other").join("r01/untracked.txt"), "work\n").unwrap();
    env
}

fn create_args() -> Vec<String> {
    let all = repo_names().join(",");
    [
        "create", "feat", "-b", "feat", "-r", &all, "--format", "json",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

fn delete_args() -> Vec<String> {
    ["delete", "feat", "--format", "json"]
        .iter()
        .map(|a| a.to_string())
        .collect()
}

/// Starts `gw args` in a process group of its own (with its git children), optionally
/// told to kill itself after its `crash_after`th journal write.
fn spawn(env: &TestEnv, args: &[String], crash_after: Option<u32>) -> Child {
    use std::os::unix::process::CommandExt;
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = env.gw_cmd(&argv);
    if let Some(n) = crash_after {
        cmd.env(CRASH_VAR, n.to_string());
    }
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd.spawn().expect("gw starts")
}

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// Exit status 0.
    Done,
    /// Killed by SIGKILL (by itself or by the test).
    Killed,
}

/// Waits for `child`; `kill_after` kills gw with SIGKILL after that long. Then waits
/// until the git commands it had started are done too (they are not killed: a git killed
/// half way leaves git's own lock files, such as `packed-refs.lock`, which git wants
/// removed by hand and grove rightly refuses to guess about).
fn finish(mut child: Child, kill_after: Option<Duration>) -> (End, Duration) {
    use std::os::unix::process::ExitStatusExt;
    let pgid = child.id() as i32;
    let start = Instant::now();
    if let Some(delay) = kill_after {
        while child.try_wait().expect("gw can be waited for").is_none() {
            if start.elapsed() >= delay {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pgid.to_string()])
                    .stderr(Stdio::null())
                    .status();
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let out = child.wait_with_output().expect("gw runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !e2e::live_in_group(pgid).is_empty() {
        assert!(Instant::now() < deadline, "the killed group lingers");
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = start.elapsed();
    let end = match out.status.signal() {
        Some(9) => End::Killed,
        _ => {
            assert!(
                out.status.success(),
                "gw failed instead of finishing or being killed: {}\n{}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            End::Done
        }
    };
    (end, took)
}

fn journals(env: &TestEnv) -> Vec<String> {
    std::fs::read_dir(env.grove_home.join("operations"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default()
}

/// Everything a crash could change, comparable across runs: state (without creation
/// times), every repository's branches with their commits and its worktree registrations,
/// the workspace directory's tree, and the bytes of the pre-existing dirty files.
fn world_snapshot(env: &TestEnv) -> String {
    let mut state = env.state();
    for w in state.as_array_mut().unwrap() {
        w.as_object_mut().unwrap().remove("created_at");
    }
    let mut out = serde_json::to_string_pretty(&state).unwrap();
    for name in repo_names() {
        let dir = env.repos.join(&name);
        out.push_str(&format!("\n== {name}\n"));
        out.push_str(&env.git(
            &dir,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/heads",
            ],
        ));
        out.push('\n');
        out.push_str(&env.git(&dir, &["worktree", "list", "--porcelain"]));
        out.push('\n');
        out.push_str(&env.git(&dir, &["status", "--porcelain"]));
    }
    let tree: Vec<String> = e2e::tree(&env.workspace_dir(), 2)
        .into_iter()
        .filter(|p| !p.starts_with(".trash"))
        .collect();
    out.push_str(&format!("\n== workspaces\n{tree:?}\n"));
    for wt in ["other/r00", "other/r01"] {
        out.push_str(&format!(
            "== {wt}\n{:?}\n",
            env.worktree_state(&env.workspace_dir().join(wt))
        ));
    }
    out
}

/// The trash entries that are not a deleted workspace kept for `gw restore` (those have a
/// record, and the auditor checks they are whole): quarantined bytes still to be erased.
fn trash_entries(env: &TestEnv) -> Vec<String> {
    let trash = env.workspace_dir().join(".trash");
    e2e::tree(&trash, 1)
        .into_iter()
        .filter(|e| !trash.join(e).join("trash.json").is_file())
        .collect()
}

/// After a crash: while a journal is left, `probe` (a command touching the workspace) must
/// say `RECOVERY_PENDING`; then `gw doctor --fix` restores a world equal to `before` or to
/// `after`, with no journal and no trash left, which a second doctor finds healthy.
/// Returns whether the world is the one after the command.
fn recover_and_check(env: &TestEnv, what: &str, probe: &[&str], before: &str, after: &str) -> bool {
    let pending = !journals(env).is_empty();
    eprintln!("{what}: journal left: {pending}");
    if pending {
        let run = env.gw_retrying(probe).code(5);
        assert_eq!(run.error_code(), "RECOVERY_PENDING", "{what}: {run}");
    }
    let fixed = env.gw_retrying(&["doctor", "--fix", "--format", "json"]);
    assert_eq!(fixed.status, 0, "{what}: {fixed}");
    let result = fixed.result();
    assert_eq!(
        result["failed"], 0,
        "{what}: doctor --fix failed somewhere: {result:#}"
    );
    assert!(journals(env).is_empty(), "{what}: a journal is left");
    assert_eq!(
        trash_entries(env),
        Vec::<String>::new(),
        "{what}: trash is left"
    );
    let healthy = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(
        healthy["healthy"], true,
        "{what}: {healthy:#}\nafter doctor --fix: {result:#}"
    );
    env.assert_git_agrees_with_state();
    let broken: Vec<_> = env
        .world()
        .audit()
        .into_iter()
        .filter(|v| {
            matches!(
                v.kind,
                e2e::audit::Kind::BrokenTrash | e2e::audit::Kind::LeakedTrashRef
            )
        })
        .collect();
    assert!(broken.is_empty(), "{what}: {}", e2e::audit::render(&broken));
    let now = world_snapshot(env);
    if now == before {
        false
    } else {
        assert_eq!(now, after, "{what}: neither the world before nor after");
        true
    }
}

/// Deletes workspace `feat` and waits until nothing but its kept entry is in the trash.
fn delete_feat(env: &TestEnv) {
    env.gw(&["delete", "feat", "--format", "json"]).success();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !trash_entries(env).is_empty() {
        assert!(Instant::now() < deadline, "the trash is never emptied");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn create_feat(env: &TestEnv) {
    let argv = create_args();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    env.gw(&argv).success();
}

/// The worlds before and after `gw create feat`, recorded with a real create and delete;
/// the time the create took.
fn create_worlds(env: &TestEnv) -> (String, String, Duration) {
    let start = Instant::now();
    create_feat(env);
    let took = start.elapsed();
    assert!(env.ws("feat").join("r03/pre.txt").exists());
    let after = world_snapshot(env);
    delete_feat(env);
    (world_snapshot(env), after, took)
}

/// Crashes `gw create` after each of its journal writes, until it completes.
#[test]
fn create_killed_after_every_journal_write_is_recovered() {
    let env = world();
    let (before, after, _) = create_worlds(&env);
    let mut crashes = 0;
    for n in 1.. {
        let (end, _) = finish(spawn(&env, &create_args(), Some(n)), None);
        if end == End::Done {
            assert!(n > 1, "{CRASH_VAR} is not honoured by this gw");
            assert_eq!(world_snapshot(&env), after);
            break;
        }
        crashes += 1;
        assert!(
            !journals(&env).is_empty(),
            "crash after journal write {n}: the journal is there"
        );
        let what = format!("create killed after journal write {n}");
        let probe = create_args();
        let probe: Vec<&str> = probe.iter().map(String::as_str).collect();
        if recover_and_check(&env, &what, &probe, &before, &after) {
            delete_feat(&env);
        }
    }
    eprintln!("create: {crashes} crash points");
    // The first write (the directory's and the worktrees' intent), the state's intent, the
    // commit: a step that happened is recorded by the next write (tx/mod.rs, `execute`).
    assert!(
        crashes >= 3,
        "create writes its journal at least three times ({crashes})"
    );
}

/// Crashes `gw delete` after each of its journal writes, until it completes.
#[test]
fn delete_killed_after_every_journal_write_is_recovered() {
    let env = world();
    let (after, before, _) = create_worlds(&env);
    create_feat(&env);
    let mut crashes = 0;
    for n in 1.. {
        let (end, _) = finish(spawn(&env, &delete_args(), Some(n)), None);
        if end == End::Done {
            assert!(n > 1, "{CRASH_VAR} is not honoured by this gw");
            break;
        }
        crashes += 1;
        let what = format!("delete killed after journal write {n}");
        if !recover_and_check(
            &env,
            &what,
            &["delete", "feat", "--format", "json"],
            &before,
            &after,
        ) {
            // Rolled back: the workspace is intact, and the next round deletes it again.
            continue;
        }
        create_feat(&env);
    }
    eprintln!("delete: {crashes} crash points");
    // The first write (the intent of the trash record, the move and the state change),
    // then the commit.
    assert!(
        crashes >= 2,
        "delete writes its journal at least twice ({crashes})"
    );
}

/// Kills at random moments per command; `GW_CRASH_RUNS` asks for more (a soak test).
fn random_runs() -> usize {
    std::env::var("GW_CRASH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
}

/// Kills `gw create` at random moments.
#[test]
fn create_killed_at_random_moments_is_recovered() {
    let env = world();
    let (before, after, mut took) = create_worlds(&env);
    let mut rng = Rng::new("create");
    for run in 0..random_runs() {
        let delay = rng.below(took);
        let (end, elapsed) = finish(spawn(&env, &create_args(), None), Some(delay));
        if end == End::Done {
            // Aim within the time a create really takes.
            took = took.min(elapsed);
        }
        let what = format!("create killed after {delay:?} (run {run}, {end:?})");
        let probe = create_args();
        let probe: Vec<&str> = probe.iter().map(String::as_str).collect();
        if recover_and_check(&env, &what, &probe, &before, &after) {
            delete_feat(&env);
        }
    }
}

/// Kills `gw delete` at random moments.
#[test]
fn delete_killed_at_random_moments_is_recovered() {
    let env = world();
    let (after, before, _) = create_worlds(&env);
    create_feat(&env);
    let (end, mut took) = finish(spawn(&env, &delete_args(), None), None);
    assert_eq!(end, End::Done);
    create_feat(&env);
    let mut rng = Rng::new("delete");
    for run in 0..random_runs() {
        let delay = rng.below(took);
        let (end, elapsed) = finish(spawn(&env, &delete_args(), None), Some(delay));
        if end == End::Done {
            took = took.min(elapsed);
        }
        let what = format!("delete killed after {delay:?} (run {run}, {end:?})");
        if recover_and_check(
            &env,
            &what,
            &["delete", "feat", "--format", "json"],
            &before,
            &after,
        ) {
            create_feat(&env);
        }
    }
}

/// `gw create --copy` killed (SIGKILL) while it copies a 20,000-file `node_modules` into
/// the new worktree: the journal names the copy, commands on the workspace say
/// `RECOVERY_PENDING`, and `gw doctor --fix` rolls it all back — no partial copy, no
/// worktree, no branch, no workspace directory — leaving the source's caches as they were.
#[test]
fn create_killed_while_copying_leaves_no_partial_copy_after_doctor_fix() {
    use crate::warm::{MODULES, entries, warm_world};
    let env = warm_world();
    let api = env.repos.join("api");
    let source = (
        entries(&api.join("node_modules")),
        entries(&api.join("target")),
    );
    let args: Vec<String> = [
        "create", "feat", "-b", "feat", "-r", "api", "--copy", "--format", "json",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let child = spawn(&env, &args, None);
    let dest = env.ws("feat").join("api/node_modules");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !dest.exists() {
        assert!(Instant::now() < deadline, "the copy never began");
        std::thread::sleep(Duration::from_micros(200));
    }
    let (end, _) = finish(child, Some(Duration::ZERO));
    assert_eq!(end, End::Killed);
    let partial = walk_files(&dest);
    eprintln!("killed with {partial} of {MODULES} files copied");
    assert!(partial < MODULES, "killed before the copy was done");
    let doctor = env.gw(&["doctor", "--format", "json"]).doctor();
    assert!(
        doctor
            .to_string()
            .contains("copy node_modules, target of api into")
            && doctor.to_string().contains("(intended)"),
        "the interrupted copy is reported: {doctor:#}"
    );
    let probe: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = env.gw_retrying(&probe).code(5);
    assert_eq!(run.error_code(), "RECOVERY_PENDING", "{run}");

    let fixed = env.gw_retrying(&["doctor", "--fix", "--format", "json"]);
    assert_eq!(fixed.status, 0, "{fixed}");
    assert_eq!(fixed.result()["failed"], 0, "{fixed}");
    assert!(journals(&env).is_empty(), "a journal is left");
    assert!(!env.ws("feat").exists(), "nothing of the copy is left");
    assert!(!env.has_branch(&api, "feat"));
    env.assert_git_agrees_with_state();
    assert_eq!(
        env.gw(&["doctor", "--format", "json"]).doctor()["healthy"],
        true
    );
    assert!(
        source
            == (
                entries(&api.join("node_modules")),
                entries(&api.join("target"))
            ),
        "the source's caches changed"
    );
    // And the same create then succeeds, whole.
    let done = env.gw(&probe).success().result();
    assert_eq!(done["copied"][0]["files"], MODULES + 2);
}

/// The regular files under `dir`.
fn walk_files(dir: &std::path::Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                n += 1;
            }
        }
    }
    n
}

/// `gw doctor --fix` run from inside a worktree of the create it rolls back: the worktree
/// goes, and the doctor, standing in it, used to fail the rest (`GIT_FAILED`: gix opens
/// no repository from a directory that is gone; found by the issue-30 adversary). It steps
/// out of whatever it removes.
#[test]
fn doctor_fix_from_inside_the_worktree_it_rolls_back() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let args: Vec<String> = ["create", "feat", "-b", "feat", "-r", "api,web"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    let child = spawn(&env, &args, Some(2));
    let (end, _) = finish(child, None);
    assert_eq!(end, End::Killed);
    let inside = env.ws("feat").join("api");
    assert!(inside.join(".git").exists(), "the crash left the worktree");
    let fixed = env.gw_in(&inside, &["doctor", "--fix", "--format", "json"]);
    assert_eq!(fixed.status, 0, "{fixed}");
    assert_eq!(fixed.result()["failed"], 0, "{fixed}");
    assert!(journals(&env).is_empty(), "a journal is left");
    assert!(!env.ws("feat").exists());
    for repo in ["api", "web"] {
        assert!(!env.has_branch(&env.repos.join(repo), "feat"), "{repo}");
    }
}
