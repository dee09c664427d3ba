//! Safety under fire: what agents running many `gw` at once, and killing them at any
//! moment, must never cause. One test per way it was seen to break; each stops git at the
//! chosen moment with a fake `git` (`TestEnv::fake_git`), so the race or the kill lands
//! exactly there, every time.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use e2e::{Run, TestEnv, WAIT_FOR_RELEASE, s};

/// Starts `gw args` in a process group of its own, outputs piped.
fn spawn(env: &TestEnv, args: &[&str]) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = env.gw_cmd(args);
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd.spawn().expect("gw starts")
}

fn wait(child: Child, what: &str) -> Run {
    Run::from(what.to_string(), child.wait_with_output().expect("gw runs"))
}

/// Sends `signal` (`-KILL`, `-INT`, …) to `pid`, or to its process group with `group`.
fn kill(signal: &str, pid: u32, group: bool) {
    let target = if group {
        format!("-{pid}")
    } else {
        pid.to_string()
    };
    let ok = std::process::Command::new("kill")
        .args([signal, "--", &target])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill {signal} {target}");
}

/// Waits for `child` to exit for at most `limit`; whether it did.
fn exits_within(child: &mut Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if child.try_wait().expect("wait").is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
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

fn kinds(doctor: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = doctor["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap().to_string())
        .collect();
    k.sort();
    k
}

/// Item 1: A rename moves the directory and then repairs git's registrations; a delete of
/// another workspace over the same repository must not drop the moved worktree's
/// registration in that gap (and a later create must not take over its git directory).
/// The delete is stopped while it holds the repository, so the rename has to wait for it:
/// before its move, or (as it used to) between its move and its repair.
#[test]
fn rename_racing_a_delete_on_a_shared_repository_keeps_both_intact() {
    let mut env = TestEnv::with_repos(&["api"]);
    env.create("a", "a", "api");
    env.create("b", "b", "api");
    // The delete's branch deletion (`update-ref`, after its move, under the repository's
    // lock): a delete into the trash moves the registration without git.
    let gate = env.fake_git(&[
        ("worktree prune", WAIT_FOR_RELEASE),
        ("worktree remove", WAIT_FOR_RELEASE),
        ("update-ref", WAIT_FOR_RELEASE),
    ]);
    let delete = spawn(&env, &["delete", "b", "--format", "json"]);
    gate.wait_started(1);
    let rename = spawn(&env, &["rename", "a", "--to", "a2", "--format", "json"]);
    // Let the rename get as far as it can while the delete holds the repository.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !env.ws("a2").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    gate.release();
    wait(delete, "gw delete").success();
    wait(rename, "gw rename").success();
    env.assert_git_agrees_with_state();
    let a2 = env.ws("a2").join("api");
    assert_eq!(env.git(&a2, &["branch", "--show-current"]), "a");
    // A new workspace over the same repository does not take over a2's registration.
    env.create("c", "c", "api");
    env.commit(&a2, "work.txt", "mine\n", "work in a2");
    assert_eq!(env.git(&a2, &["branch", "--show-current"]), "a");
    assert_eq!(
        env.git(&env.ws("c").join("api"), &["log", "-1", "--format=%s"]),
        env.git(
            &env.repos.join("api"),
            &["log", "-1", "--format=%s", "main"]
        ),
        "c's branch did not move"
    );
    env.assert_git_agrees_with_state();
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(r["healthy"], true, "{r:#}");
}

/// Item 2: gw killed while its `git worktree add` still runs: recovery waits for the git
/// processes (`TRANSIENT`) instead of judging a checkout half done, and then rolls back
/// everything — whether gw alone or its whole process group was killed.
#[test]
fn an_interrupted_create_is_recovered_only_once_its_git_is_done() {
    for group in [false, true] {
        let mut env = TestEnv::with_repos(&["api", "web"]);
        let before = env.snapshot();
        let gate = env.fake_git(&[("worktree add", WAIT_FOR_RELEASE)]);
        let child = spawn(&env, &["create", "ws", "-b", "ws", "-r", "api,web"]);
        gate.wait_started(2);
        kill("-KILL", child.id(), group);
        let _ = wait(child, "gw create");
        // Its git commands are still at work: nothing may be judged yet (doctor waits for
        // them as long as for a lock, here a short while).
        let run = env
            .gw_env(
                &env.root,
                &["doctor", "--fix", "--format", "json"],
                &[("GW_LOCK_TIMEOUT_MS", "300")],
            )
            .code(7);
        assert_eq!(run.error_code(), "TRANSIENT", "{run}");
        let run = env.gw(&[
            "create", "ws", "-b", "ws", "-r", "api,web", "--format", "json",
        ]);
        assert_eq!(run.error_code(), "TRANSIENT", "{run}");
        assert_eq!(journals(&env).len(), 1);
        gate.release();
        let fixed = env
            .gw_retrying(&["doctor", "--fix", "--format", "json"])
            .doctor();
        assert_eq!(fixed["healthy"], true, "{fixed:#}");
        assert!(journals(&env).is_empty());
        let r = env.gw(&["doctor", "--format", "json"]).doctor();
        assert_eq!(r["healthy"], true, "{r:#}");
        env.assert_unchanged(&before);
        for repo in ["api", "web"] {
            let dir = env.repos.join(repo);
            assert!(!env.has_branch(&dir, "ws"), "{repo}: the branch is gone");
            let locks = env.sh(&dir, "find .git -name '*.lock'").stdout;
            assert_eq!(locks, "", "{repo}: no lock file left");
        }
        env.create("ws", "ws", "api,web");
    }
}

/// Item 2: A recovery that has to keep a worktree (someone worked in it) does not call itself
/// done, and doctor keeps reporting what was kept.
#[test]
fn kept_work_is_never_reported_healthy() {
    let mut env = TestEnv::with_repos(&["api", "web"]);
    let gate = env.fake_git(&[(
        "worktree add",
        &format!("\"$REAL\" \"$@\" || exit $?\n{WAIT_FOR_RELEASE}"),
    )]);
    let child = spawn(&env, &["create", "ws", "-b", "ws", "-r", "api,web"]);
    gate.wait_started(2);
    kill("-KILL", child.id(), false);
    let _ = wait(child, "gw create");
    // Someone starts working in the half-made workspace.
    std::fs::write(env.ws("ws").join("api/notes.txt"), "mine\n").unwrap();
    gate.release();
    let fixed = env
        .gw_retrying(&["doctor", "--fix", "--format", "json"])
        .doctor();
    assert_eq!(fixed["healthy"], false, "{fixed:#}");
    let op = &fixed["issues"][0];
    assert_eq!(op["kind"], "interrupted_operation");
    assert_eq!(op["outcome"], "left", "{fixed:#}");
    assert_eq!(
        std::fs::read_to_string(env.ws("ws").join("api/notes.txt")).unwrap(),
        "mine\n"
    );
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(r["healthy"], false, "{r:#}");
    assert!(
        kinds(&r).contains(&"untracked_worktree".to_string()),
        "{r:#}"
    );
    assert!(!env.ws("ws").join("web").exists(), "the clean one went");
}

/// Item 2: A checkout cut short is not work: a worktree holding only (some) files of its commit
/// is removed by recovery.
#[test]
fn a_half_made_worktree_is_removed_by_recovery() {
    let mut env = TestEnv::with_repos(&["api"]);
    env.commit(&env.repos.join("api"), "a.txt", "a\n", "a");
    env.commit(&env.repos.join("api"), "b.txt", "b\n", "b");
    // git adds the worktree, then the checkout "dies": one file missing, no index.
    let gate = env.fake_git(&[(
        "worktree add",
        &format!(
            "\"$REAL\" \"$@\" || exit $?\nwt=\"$GW_WS/api\"\nrm -f \"$wt/b.txt\"\n\
             rm -f \"$(\"$REAL\" -C \"$wt\" rev-parse --git-dir)/index\"\n{WAIT_FOR_RELEASE}\nexit 1"
        ),
    )]);
    env.set_env("GW_WS", s(&env.ws("ws")));
    let child = spawn(&env, &["create", "ws", "-b", "ws", "-r", "api"]);
    gate.wait_started(1);
    kill("-KILL", child.id(), false);
    let _ = wait(child, "gw create");
    gate.release();
    let fixed = env
        .gw_retrying(&["doctor", "--fix", "--format", "json"])
        .doctor();
    assert_eq!(fixed["healthy"], true, "{fixed:#}");
    assert!(!env.ws("ws").exists());
    assert!(!env.has_branch(&env.repos.join("api"), "ws"));
    env.assert_git_agrees_with_state();
}

/// Item 2: Doctor looks at every configured repository (not only those a workspace uses) and
/// at the workspace directory itself.
#[test]
fn doctor_sees_worktrees_and_directories_no_workspace_records() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "ws", "api");
    // A worktree of a repository no workspace uses, in the workspace directory.
    let ghost = env.workspace_dir().join("ghost/web");
    env.git(
        &env.repos.join("web"),
        &["worktree", "add", "-q", "-b", "ghost", s(&ghost)],
    );
    // An empty stray directory, and one with someone's file in it.
    std::fs::create_dir_all(env.workspace_dir().join("empty/deeper")).unwrap();
    std::fs::create_dir_all(env.workspace_dir().join("notes")).unwrap();
    std::fs::write(env.workspace_dir().join("notes/todo.txt"), "keep\n").unwrap();

    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(
        kinds(&r),
        [
            "stray_directory",
            "stray_directory",
            "stray_directory",
            "untracked_worktree"
        ],
        "{r:#}"
    );
    let fixed = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    // The worktree holds nothing but its commit, so it goes; then its directory is empty.
    assert!(!env.workspace_dir().join("ghost").exists(), "{fixed:#}");
    assert!(!env.workspace_dir().join("empty").exists());
    assert_eq!(
        std::fs::read_to_string(env.workspace_dir().join("notes/todo.txt")).unwrap(),
        "keep\n"
    );
    assert!(
        env.has_branch(&env.repos.join("web"), "ghost"),
        "branches stay"
    );
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(kinds(&r), ["stray_directory"], "{r:#}");
    env.assert_git_agrees_with_state();
}

/// Item 3: Work written while `pre_delete` or `teardown` ran (by the hook, or by a person) stops
/// a delete or remove-repo without `--force`.
#[test]
fn work_written_during_the_hooks_stops_the_removal() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "ws", "api,web");
    env.append_config(
        "[hooks]\npre_delete = \"echo added >> {path}/api/README.md; echo new > {path}/web/new.txt\"\n",
    );
    let run = env.gw(&["delete", "ws", "--format", "json"]).code(4);
    assert_eq!(run.error_code(), "STATE_CHANGED", "{run}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("README.md") && message.contains("new.txt"),
        "{message}"
    );
    assert!(
        std::fs::read_to_string(env.ws("ws").join("api/README.md"))
            .unwrap()
            .contains("added")
    );
    assert!(env.ws("ws").join("web/new.txt").exists());
    assert_eq!(env.workspace_names(), ["ws"]);
    env.assert_git_agrees_with_state();

    // remove-repo: a teardown command of the repository.
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "ws", "api,web");
    std::fs::write(
        env.repos.join("web/.grove.toml"),
        "teardown = \"echo late > late.txt\"\n",
    )
    .unwrap();
    env.trust("web").success();
    let run = env
        .gw(&["remove-repo", "ws", "-r", "web", "--format", "json"])
        .code(4);
    assert_eq!(run.error_code(), "STATE_CHANGED", "{run}");
    assert!(env.ws("ws").join("web/late.txt").exists());
    assert_eq!(env.workspace_repos("ws"), ["api", "web"]);
    env.assert_git_agrees_with_state();
}

/// Item 4: Paths read from state.json are checked before anything is moved or deleted there.
#[test]
fn paths_in_state_outside_the_workspace_directory_are_refused() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "ws", "api,web");
    let outside = env.root.join("precious");
    std::fs::create_dir_all(outside.join("api")).unwrap();
    std::fs::write(outside.join("keep.txt"), "keep\n").unwrap();
    let keep = || {
        assert_eq!(
            std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
            "keep\n"
        );
    };

    // A worktree path edited to point outside: remove-repo --force refuses.
    env.edit_state(|st| st[0]["repos"][1]["worktree_path"] = s(&outside).into());
    let run = env
        .gw(&[
            "remove-repo",
            "ws",
            "-r",
            "web",
            "--force",
            "--format",
            "json",
        ])
        .code(5);
    assert_eq!(run.error_code(), "CORRUPT_STATE", "{run}");
    keep();

    // The workspace path edited to point outside: delete --force and rename refuse.
    let real = env.ws("ws");
    env.edit_state(|st| {
        st[0]["repos"][1]["worktree_path"] = s(&real.join("web")).into();
        st[0]["path"] = s(&outside).into();
    });
    let run = env
        .gw(&["delete", "ws", "--force", "--format", "json"])
        .code(5);
    assert_eq!(run.error_code(), "CORRUPT_STATE", "{run}");
    keep();
    let run = env
        .gw(&["rename", "ws", "--to", "moved", "--format", "json"])
        .code(5);
    assert_eq!(run.error_code(), "CORRUPT_STATE", "{run}");
    keep();
    assert!(!env.root.join("moved").exists());

    // unlink-trash removes only entries of a workspace directory's trash.
    let fake_trash = env.root.join("other/.trash/victim");
    std::fs::create_dir_all(&fake_trash).unwrap();
    env.gw(&["unlink-trash", s(&fake_trash)]).code(2);
    assert!(fake_trash.exists());

    // Doctor reports it, and --fix drops the entry without touching the directory.
    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert!(
        kinds(&r).contains(&"workspace_outside".to_string()),
        "{r:#}"
    );
    env.gw(&["doctor", "--fix", "--format", "json"]);
    assert!(env.workspace_names().is_empty());
    keep();
}

/// Item 5: A step is recorded as done only when it is: when git could not remove a worktree's
/// registration (a read-only repository; here a git that says it did and did not), the
/// delete leaves its journal, and `gw doctor --fix` finishes it once git can.
#[test]
fn a_registration_git_could_not_remove_is_finished_later() {
    let mut env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    let liar = env.fake_git(&[("worktree remove", "exit 0"), ("worktree prune", "exit 0")]);
    // Purged: a delete into the trash moves the registration there itself (no git).
    let r = env
        .gw(&["delete", "ws", "--purge", "--format", "json"])
        .success();
    assert!(r.stderr.contains("doctor --fix"), "{r}");
    assert_eq!(journals(&env).len(), 1, "the journal is left");
    let run = env.gw(&["doctor", "--fix", "--format", "json"]);
    assert_ne!(run.status, 0, "{run}");
    // git works again.
    std::fs::remove_dir_all(liar.dir.parent().unwrap()).unwrap();
    let fixed = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    assert_eq!(fixed["healthy"], true, "{fixed:#}");
    assert!(journals(&env).is_empty());
    assert!(!env.has_branch(&env.repos.join("api"), "ws"));
    env.assert_git_agrees_with_state();
    env.create("ws", "ws", "api");
}

/// Item 6: What a kill can leave in a worktree — git's `index.lock`, a rebase in progress — is
/// reported (and the lock, which no process holds, removed).
#[test]
fn leftover_locks_and_rebases_are_reported() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "ws", "api,web");
    let api = env.ws("ws").join("api");
    let git_dir = env.git(&api, &["rev-parse", "--absolute-git-dir"]);
    std::fs::write(format!("{git_dir}/index.lock"), "").unwrap();
    // A rebase stopped on a conflict in web.
    let web = env.ws("ws").join("web");
    env.commit(&web, "README.md", "ours\n", "ours");
    env.push_upstream("web", "main", "README.md", "theirs\n");
    env.git(&web, &["fetch", "-q", "origin"]);
    let _ = env.git_run(&web, &["rebase", "origin/main"]);

    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(kinds(&r), ["operation_in_progress", "stale_lock"], "{r:#}");
    let sync = env.gw(&["sync", "ws", "--format", "json"]);
    let web_result = sync.json()["result"]["repos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["repo"] == "web")
        .cloned()
        .unwrap();
    assert_eq!(web_result["outcome"], "skipped", "{sync}");
    assert!(
        web_result["detail"]
            .as_str()
            .unwrap()
            .contains("rebase --abort"),
        "{web_result:#}"
    );
    let fixed = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    assert_eq!(fixed["fixed"], 1, "{fixed:#}");
    assert!(!std::path::Path::new(&format!("{git_dir}/index.lock")).exists());
    env.commit(&api, "x.txt", "x\n", "git works there again");
}

/// Item 7: Ctrl-C (or SIGTERM): the step running finishes, everything is rolled back, and the
/// command says `CANCELLED` (exit 8), in an envelope or one line; no journal is left.
#[test]
fn ctrl_c_rolls_back_and_says_cancelled() {
    for (machine, signal) in [(true, "-INT"), (false, "-TERM")] {
        let mut env = TestEnv::with_repos(&["api", "web"]);
        let before = env.snapshot();
        let gate = env.fake_git(&[("worktree add", WAIT_FOR_RELEASE)]);
        let mut args = vec!["create", "ws", "-b", "ws", "-r", "api,web"];
        if machine {
            args.extend(["--format", "json"]);
        }
        let child = spawn(&env, &args);
        gate.wait_started(2);
        kill(signal, child.id(), true);
        gate.release();
        let run = wait(child, "gw create").code(8);
        if machine {
            assert_eq!(run.error_code(), "CANCELLED", "{run}");
            // The signal is named beside what was rolled back (it was not: the issue-30
            // adversary).
            let details = &run.json()["error"]["details"];
            assert_eq!(details["signal"], "SIGINT", "{run}");
            assert_eq!(details["workspace"], "ws", "{run}");
        } else {
            assert!(run.stdout.is_empty(), "{run}");
            assert!(run.stderr.starts_with("cancelled:"), "{run}");
            assert!(run.stderr.contains("rolled back"), "{run}");
        }
        assert!(journals(&env).is_empty(), "no journal is left");
        env.assert_unchanged(&before);
    }

    // Before anything changed (a hook running): it ends at once, the hook with it.
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    let marker = env.root.join("hook-finished");
    env.append_config(&format!(
        "[hooks]\npre_delete = \"echo started; sleep 30; touch {}\"\n",
        s(&marker)
    ));
    let mut child = spawn(&env, &["delete", "ws", "--format", "json"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while env.sh(&env.root, "pgrep -f 'sleep 30'").status != 0 {
        assert!(Instant::now() < deadline, "the hook never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    kill("-INT", child.id(), false);
    assert!(exits_within(&mut child, Duration::from_secs(20)));
    let run = wait(child, "gw delete").code(8);
    assert_eq!(run.error_code(), "CANCELLED", "{run}");
    assert_eq!(env.workspace_names(), ["ws"]);
    assert!(!marker.exists());
    env.assert_git_agrees_with_state();
}

/// Item 8: The smaller ones.
/// Past its commit point an operation finishes what it recorded, whatever signal comes: a
/// delete interrupted while it removes git's registrations completes, says so, and leaves
/// no journal (it used to end at once, in the middle, and leave one for `gw doctor --fix`).
#[test]
fn ctrl_c_past_the_commit_point_finishes_the_operation() {
    let mut env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "ws", "api,web");
    // The branch deletion, past the commit point.
    let gate = env.fake_git(&[("update-ref", WAIT_FOR_RELEASE)]);
    let child = spawn(&env, &["delete", "ws", "--format", "json"]);
    gate.wait_started(1);
    kill("-INT", child.id(), true);
    // A second Ctrl-C, as an impatient person gives, changes nothing.
    kill("-INT", child.id(), true);
    gate.release();
    let run = wait(child, "gw delete").success();
    assert_eq!(run.result()["deleted"][0]["outcome"], "deleted", "{run}");
    assert!(journals(&env).is_empty(), "no journal is left: {run}");
    assert!(env.workspace_names().is_empty());
    env.assert_git_agrees_with_state();
}

#[test]
fn edge_inputs_get_clear_errors() {
    let env = TestEnv::with_repos(&["api"]);
    // A 255-byte name is created and deleted; a longer one is a usage error.
    let long = "n".repeat(255);
    env.create(&long, "long", "api");
    env.gw(&["delete", &long, "--format", "json"]).success();
    let run = env
        .gw(&[
            "create",
            &"n".repeat(256),
            "-b",
            "x",
            "-r",
            "api",
            "--format",
            "json",
        ])
        .code(2);
    assert_eq!(run.error_code(), "USAGE", "{run}");
    // Endless input is refused without reading it all.
    let run = env
        .gw(&[
            "create",
            "x",
            "-b",
            "x",
            "-f",
            "/dev/zero",
            "--format",
            "json",
        ])
        .code(2);
    assert_eq!(run.error_code(), "USAGE", "{run}");
    let run = env.gw(&["apply", "/dev/zero", "--format", "json"]).code(2);
    assert_eq!(run.error_code(), "PLAN_INVALID", "{run}");
    // Output that cannot be written is a failure.
    env.create("listed", "listed", "api");
    for format in ["text", "json"] {
        let full = env.sh(
            &env.root,
            &format!("gw list --format {format} > /dev/full; echo \"exit $?\""),
        );
        assert!(full.stdout.contains("exit 1"), "{full}");
        assert!(full.stderr.contains("cannot write output"), "{full}");
    }
    // A config that is not text is corrupt, not an internal error.
    let config = std::fs::read(env.config_path()).unwrap();
    std::fs::write(env.config_path(), b"repo_dirs = [\"\xff\"]\n").unwrap();
    let run = env.gw(&["list", "--format", "json"]).code(5);
    assert_eq!(run.error_code(), "CORRUPT_STATE", "{run}");
    std::fs::write(env.config_path(), config).unwrap();
    // A deleted current directory is named.
    let gone = env.root.join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let run = env.sh(
        &gone,
        &format!("rmdir {}; gw status --format json", s(&gone)),
    );
    assert!(run.stdout.contains("no longer exists"), "{run}");
}

/// Item 8: git that may not write the repository (read-only: as root, faked) is
/// `PERMISSION_DENIED`, not `GIT_FAILED`; and nothing is left behind.
#[test]
fn a_repository_git_may_not_write_is_permission_denied() {
    let mut env = TestEnv::with_repos(&["api"]);
    let before = env.snapshot();
    env.fake_git(&[(
        "worktree add",
        "echo \"fatal: could not create leading directories of '.git/worktrees/api': Permission denied\" >&2; exit 128",
    )]);
    let run = env
        .gw(&["create", "ws", "-b", "ws", "-r", "api", "--format", "json"])
        .code(6);
    assert_eq!(run.error_code(), "PERMISSION_DENIED", "{run}");
    assert!(
        run.json()["fix"].as_str().unwrap().contains("permissions"),
        "{run}"
    );
    env.assert_unchanged(&before);
}

/// Item 8: A grove directory or current directory whose path is not UTF-8.
#[test]
fn paths_that_are_not_utf8_are_errors_not_panics() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::with_repos(&["api"]);
    let odd = env.root.join(std::ffi::OsStr::from_bytes(b"odd-\xff"));
    std::fs::create_dir_all(&odd).unwrap();
    let mut cmd = env.gw_cmd(&["list", "--format", "json"]);
    cmd.env("GW_HOME", &odd);
    let run = Run::from("gw list".into(), cmd.output().unwrap());
    assert_eq!(run.status, 2, "{run}");
    assert_eq!(run.error_code(), "USAGE", "{run}");
    let mut cmd = env.gw_cmd(&["context", "--format", "json"]);
    cmd.current_dir(&odd);
    let run = Run::from("gw context".into(), cmd.output().unwrap());
    assert_eq!(run.status, 0, "{run}");
    assert!(run.result()["cwd"].as_str().unwrap().contains("odd-"));
}

/// Item 8: A plan edited (its `destructive` flag cleared) with its digest recomputed is refused.
#[test]
fn an_edited_plan_with_a_recomputed_digest_is_refused() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    std::fs::write(env.ws("ws").join("api/wip.txt"), "wip\n").unwrap();
    let plan = env.root.join("plan.json");
    env.gw(&[
        "plan",
        "--out",
        s(&plan),
        "delete",
        "ws",
        "--force",
        "--format",
        "json",
    ])
    .success();
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(doc["destructive"], true);
    doc["destructive"] = false.into();
    // Recompute the digest exactly as gw does: SHA-256 over the document without it.
    doc.as_object_mut().unwrap().remove("digest");
    let text = doc.to_string();
    let digest = env.sh(
        &env.root,
        &format!("printf '%s' {} | sha256sum | cut -d' ' -f1", shell(&text)),
    );
    doc["digest"] = digest.stdout.trim().into();
    std::fs::write(&plan, doc.to_string()).unwrap();
    let run = env.gw(&["apply", s(&plan), "--format", "json"]).code(2);
    assert_eq!(run.error_code(), "PLAN_INVALID", "{run}");
    assert!(env.ws("ws").join("api/wip.txt").exists());
}

fn shell(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Item 6: a sync killed while its rebase is stopped on a conflict leaves a journal, from
/// which `gw doctor --fix` aborts the rebase: the worktree is back on its branch as it was.
#[test]
fn a_killed_sync_leaves_no_rebase_in_progress() {
    let mut env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    let api = env.ws("ws").join("api");
    env.commit(&api, "README.md", "ours\n", "ours");
    let before = env.worktree_state(&api);
    env.push_upstream("api", "main", "README.md", "theirs\n");
    // git stops on the conflict; gw is killed before it can abort the rebase.
    let gate = env.fake_git(&[(
        " rebase origin/main",
        &format!("\"$REAL\" \"$@\"; rc=$?\n{WAIT_FOR_RELEASE}\nexit $rc"),
    )]);
    let child = spawn(&env, &["sync", "ws", "--format", "json"]);
    gate.wait_started(1);
    kill("-KILL", child.id(), false);
    let _ = wait(child, "gw sync");
    gate.release();
    let run = env.gw_retrying(&["sync", "ws", "--format", "json"]);
    assert_eq!(run.error_code(), "RECOVERY_PENDING", "{run}");
    let fixed = env
        .gw_retrying(&["doctor", "--fix", "--format", "json"])
        .doctor();
    assert_eq!(fixed["healthy"], true, "{fixed:#}");
    assert_eq!(env.worktree_state(&api), before);
    env.assert_git_agrees_with_state();
}
