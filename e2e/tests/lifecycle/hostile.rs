//! What a hostile user (or a careless one) found after the first safety round: work that
//! lives beyond a worktree's files, and repositories a file merely names. Each test is the
//! reproduction of one finding.

use std::path::{Path, PathBuf};

use e2e::{TestEnv, WAIT_FOR_RELEASE, s};

/// A repository of the user's that grove has never been told about, with a branch
/// `keepme`. Returns its path and `keepme`'s tip.
fn victim(env: &TestEnv) -> (PathBuf, String) {
    let dir = env.root.join("victim");
    std::fs::create_dir_all(&dir).unwrap();
    env.git(&dir, &["init", "-q", "-b", "main"]);
    env.commit(&dir, "mine.txt", "mine\n", "mine");
    env.git(&dir, &["branch", "keepme"]);
    let tip = env.git(&dir, &["rev-parse", "keepme"]).trim().to_string();
    (dir, tip)
}

/// Writes the journal of a delete of `gone` interrupted past its commit point (its gw long
/// gone), with `step` left to do.
fn committed_delete(env: &TestEnv, step: serde_json::Value) {
    journal(
        env,
        "delete",
        "gone",
        "committed",
        serde_json::Value::Null,
        &[step],
    );
}

/// Writes the journal of an interrupted `kind` of `workspace` (its gw long gone): a
/// `set_state` from `before` to nothing, done, then `steps` (each with its status).
fn journal(
    env: &TestEnv,
    kind: &str,
    workspace: &str,
    phase: &str,
    before: serde_json::Value,
    steps: &[serde_json::Value],
) {
    let ops = env.grove_home.join("operations");
    std::fs::create_dir_all(&ops).unwrap();
    let id = "20260101T000000Z-99999";
    let mut all = vec![serde_json::json!({"action": "set_state", "name": workspace,
        "before": before, "after": null, "status": "done"})];
    all.extend(steps.iter().cloned());
    let record = serde_json::json!({
        "version": 1, "id": id, "kind": kind, "workspace": workspace, "pid": 1,
        "started_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "phase": phase, "steps": all,
    });
    std::fs::write(ops.join(format!("{id}.json")), record.to_string()).unwrap();
}

/// A state entry of workspace `name` with one repository `source` on `branch`.
fn entry(env: &TestEnv, name: &str, source: &Path, branch: &str) -> serde_json::Value {
    let path = env.workspace_dir().join(name);
    serde_json::json!({
        "name": name, "path": s(&path), "branch": branch,
        "created_at": "2026-12-01T19:25:39.060990",
        "repos": [{"repo_name": "r", "source_repo": s(source),
                   "worktree_path": s(&path.join("r")), "branch": branch}],
    })
}

fn issues_of<'v>(doctor: &'v serde_json::Value, kind: &str) -> Vec<&'v serde_json::Value> {
    doctor["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == kind)
        .collect()
}

/// Commits `what` on a detached HEAD in `dir`; returns the commit.
fn detached_commit(env: &TestEnv, dir: &Path, what: &str) -> String {
    env.git(dir, &["checkout", "-q", "--detach"]);
    env.commit(dir, &format!("{what}.txt"), "work\n", what);
    env.git(dir, &["rev-parse", "HEAD"]).trim().to_string()
}

fn reachable(env: &TestEnv, repo: &Path, commit: &str) -> bool {
    let refs = env.git(
        repo,
        &["for-each-ref", "--contains", commit, "--format=%(refname)"],
    );
    !refs.trim().is_empty()
}

/// F1: `gw doctor --fix` removed worktrees a person made in the workspace directory when
/// their files were clean — losing commits only their detached HEAD had, a lock, a bisect.
#[test]
fn doctor_fix_keeps_worktrees_holding_work_beyond_their_files() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "ws", "api");
    let api = env.repos.join("api");
    let scratch = env.workspace_dir().join("scratch");
    env.git(&api, &["worktree", "add", "-q", "--detach", s(&scratch)]);
    let work = detached_commit(&env, &scratch, "my work");
    let locked = env.workspace_dir().join("usb");
    env.git(&api, &["worktree", "add", "-q", "-b", "usb", s(&locked)]);
    env.git(
        &api,
        &["worktree", "lock", "--reason", "on usb", s(&locked)],
    );
    let bisecting = env.workspace_dir().join("bisecting");
    env.git(
        &api,
        &["worktree", "add", "-q", "-b", "bisecting", s(&bisecting)],
    );
    env.git(&bisecting, &["bisect", "start"]);

    let r = env.gw(&["doctor", "--format", "json"]).doctor();
    let untracked = issues_of(&r, "untracked_worktree");
    assert_eq!(untracked.len(), 3, "{r:#}");
    assert!(untracked.iter().all(|i| i["fixable"] == false), "{r:#}");
    let said: String = untracked.iter().map(|i| i["issue"].to_string()).collect();
    for what in ["detached HEAD", "locked", "bisect is in progress"] {
        assert!(said.contains(what), "says {what}: {r:#}");
    }
    assert!(
        issues_of(&r, "stray_directory").is_empty(),
        "a worktree is reported once, as a worktree: {r:#}"
    );

    let fixed = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    for dir in [&scratch, &locked, &bisecting] {
        assert!(
            dir.join(".git").is_file(),
            "{} kept: {fixed:#}",
            dir.display()
        );
    }
    assert_eq!(
        env.git(&scratch, &["rev-parse", "HEAD"]).trim(),
        work,
        "the detached commit is still checked out"
    );
    assert!(env.git(&api, &["worktree", "list"]).contains("locked"));
    let admin = env.git(&bisecting, &["rev-parse", "--git-dir"]);
    assert!(
        Path::new(admin.trim()).join("BISECT_LOG").exists(),
        "the bisect goes on"
    );
}

/// F3: `gw delete` (and `gw prune`, which deletes through it) without `--force` threw away
/// commits only a worktree's detached HEAD had, and a bisect in progress.
#[test]
fn delete_refuses_to_lose_a_detached_head_or_an_operation_in_progress() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("feat", "feat", "api,web");
    let api = env.ws("feat").join("api");
    let work = detached_commit(&env, &api, "detached work");
    env.git(&env.ws("feat").join("web"), &["bisect", "start"]);

    let before = env.snapshot();
    let run = env.gw(&["delete", "feat", "--format", "json"]).code(4);
    assert_eq!(run.error_code(), "WORKTREE_DIRTY", "{run}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("detached HEAD"), "{message}");
    assert!(message.contains("bisect is in progress"), "{message}");
    env.assert_unchanged(&before);
    let run = env.gw(&["prune", "--min-age", "0", "--yes", "--format", "json"]);
    assert!(api.is_dir(), "prune keeps it too: {run}");
    assert_eq!(env.git(&api, &["rev-parse", "HEAD"]).trim(), work);
    assert!(
        !reachable(&env, &env.repos.join("api"), &work),
        "only HEAD has it"
    );

    // What `--force` would lose, the plan says.
    let plan = env
        .gw(&["plan", "delete", "feat", "--force", "--format", "json"])
        .success()
        .result();
    let warnings = plan["warnings"].to_string();
    assert!(warnings.contains("detached HEAD"), "{plan:#}");
    assert!(warnings.contains("bisect is in progress"), "{plan:#}");

    env.gw(&["delete", "feat", "--force", "--format", "json"])
        .success();
    env.assert_git_agrees_with_state();
}

/// F4a: a `source_repo` edited in state.json to name another repository made `gw delete`
/// delete that repository's branch.
#[test]
fn an_edited_source_repo_costs_another_repository_no_branch() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("feat", "feat", "api,web");
    let (victim, tip) = victim(&env);
    env.edit_state(|st| {
        st[0]["repos"][0]["source_repo"] = s(&victim).into();
        st[0]["repos"][0]["branch"] = "keepme".into();
    });
    let r = env.gw(&["delete", "feat", "--format", "json"]);
    assert!(env.has_branch(&victim, "keepme"), "{r}");
    assert_eq!(env.git(&victim, &["rev-parse", "keepme"]).trim(), tip);
}

/// F2: a journal (edited, or left by an earlier version) made recovery delete a branch, and
/// drop worktree registrations, in repositories grove never used.
#[test]
fn recovery_acts_only_in_repositories_grove_knows() {
    let env = TestEnv::with_repos(&["api"]);
    let (victim, tip) = victim(&env);
    committed_delete(
        &env,
        serde_json::json!({"action": "delete_branch", "repo": "api", "source": s(&victim),
                           "branch": "keepme", "tip": tip, "status": "planned"}),
    );
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).json()["result"].clone();
    assert!(env.has_branch(&victim, "keepme"), "{r:#}");
    let op = &issues_of(&r, "interrupted_operation")[0];
    assert_ne!(op["outcome"], "fixed", "{r:#}");

    // An earlier version's `prune_worktrees` step, in a repository grove does use, finishes
    // without dropping the registration of a user's worktree on an unmounted drive.
    std::fs::remove_dir_all(env.grove_home.join("operations")).unwrap();
    let api = env.repos.join("api");
    let usb = env.root.join("usb/api-wt");
    env.git(&api, &["worktree", "add", "-q", "-b", "usb", s(&usb)]);
    std::fs::rename(env.root.join("usb"), env.root.join("unmounted")).unwrap();
    committed_delete(
        &env,
        serde_json::json!({"action": "prune_worktrees", "repo": "api", "source": s(&api),
                           "status": "planned"}),
    );
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).doctor();
    assert!(
        env.git(&api, &["worktree", "list"]).contains("api-wt"),
        "the user's registration stays: {r:#}"
    );
}

/// F4b: a worktree path edited to lead out of the workspace through a symlink made a failed
/// rename's rollback re-point git at (and rewrite the `.git` file of) a directory outside.
#[test]
fn rename_never_follows_a_worktree_path_out_of_the_workspace() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("feat", "feat", "api,web");
    let outside = env.root.join("outside");
    std::fs::create_dir_all(outside.join("wt2")).unwrap();
    let fake = "gitdir: /nonexistent/.git/worktrees/api\n";
    std::fs::write(outside.join("wt2/.git"), fake).unwrap();
    std::os::unix::fs::symlink(&outside, env.ws("feat").join("link")).unwrap();
    let admin = env.repos.join("api/.git/worktrees/api/gitdir");
    let registered = std::fs::read_to_string(&admin).unwrap();
    env.edit_state(|st| {
        st[0]["repos"][0]["worktree_path"] = s(&env.ws("feat").join("link/wt2")).into();
    });

    let run = env
        .gw(&["rename", "feat", "--to", "feat2", "--format", "json"])
        .code(5);
    assert_eq!(run.error_code(), "CORRUPT_STATE", "{run}");
    assert_eq!(
        std::fs::read_to_string(outside.join("wt2/.git")).unwrap(),
        fake
    );
    assert_eq!(std::fs::read_to_string(&admin).unwrap(), registered);
    assert!(env.ws("feat").is_dir() && !env.ws("feat2").exists());
    assert!(
        std::fs::read_dir(env.grove_home.join("operations"))
            .map(|d| d.count() == 0)
            .unwrap_or(true),
        "no journal left to wedge on"
    );
}

// ---- the second round (after the fixes above) ----

/// G1, G2: a journal cannot make a repository "known" by naming it in its own state
/// change, and completing a recorded branch deletion judges the branch again: not the
/// workspace's, or holding commits found nowhere else, it stays.
#[test]
fn recovery_judges_a_recorded_branch_deletion_again() {
    let env = TestEnv::with_repos(&["api"]);
    let (victim, tip) = victim(&env);
    let ghost = entry(&env, "ghost", &victim, "keepme");
    journal(
        &env,
        "delete",
        "ghost",
        "committed",
        ghost,
        &[
            serde_json::json!({"action": "delete_branch", "repo": "r", "source": s(&victim),
                             "branch": "keepme", "tip": tip, "status": "planned"}),
        ],
    );
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).json();
    assert!(env.has_branch(&victim, "keepme"), "{r:#}");
    std::fs::remove_dir_all(env.grove_home.join("operations")).unwrap();

    // In a repository grove does use: a branch the journal does not record as the
    // workspace's, and one it does that holds a commit found nowhere else.
    let api = env.repos.join("api");
    env.git(&api, &["switch", "-q", "-c", "wip"]);
    env.commit(&api, "wip.txt", "wip\n", "wip, unpushed");
    env.git(&api, &["switch", "-q", "main"]);
    let wip = env.git(&api, &["rev-parse", "wip"]).trim().to_string();
    let step = serde_json::json!({"action": "delete_branch", "repo": "r", "source": s(&api),
                                  "branch": "wip", "tip": wip, "status": "planned"});
    for before in [serde_json::Value::Null, entry(&env, "gone", &api, "wip")] {
        journal(
            &env,
            "delete",
            "gone",
            "committed",
            before,
            std::slice::from_ref(&step),
        );
        let r = env.gw(&["doctor", "--fix", "--format", "json"]).json();
        assert!(env.has_branch(&api, "wip"), "{r:#}");
        let _ = std::fs::remove_dir_all(env.grove_home.join("operations"));
    }
}

/// G3: rolling back an interrupted create keeps a worktree a person has since committed to
/// on a detached HEAD.
#[test]
fn rolling_back_a_create_keeps_work_done_in_it_since() {
    let env = TestEnv::with_repos(&["api"]);
    let api = env.repos.join("api");
    let main = env.git(&api, &["rev-parse", "main"]).trim().to_string();
    let path = env.workspace_dir().join("feat/api");
    env.git(&api, &["worktree", "add", "-q", "-b", "feat", s(&path)]);
    let work = detached_commit(&env, &path, "made after the kill");
    journal(
        &env,
        "create",
        "feat",
        "running",
        serde_json::Value::Null,
        &[
            serde_json::json!({"action": "add_worktree", "repo": "api", "source": s(&api),
            "path": s(&path), "branch": "feat",
            "how": {"mode": "new", "start": "main", "start_oid": main}, "status": "done"}),
        ],
    );
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).json();
    assert_eq!(
        env.git(&path, &["rev-parse", "HEAD"]).trim(),
        work,
        "the worktree and its commit stay: {r:#}"
    );
}

/// G4: a `worktree_path` edited to name one of the user's own worktrees (outside the
/// workspace directory) does not make that repository's branch the workspace's.
#[test]
fn a_worktree_path_outside_the_workspace_costs_no_branch() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat", "api");
    let (victim, tip) = victim(&env);
    let side = env.root.join("victim-wt");
    env.git(&victim, &["worktree", "add", "-q", "-b", "side", s(&side)]);
    env.git(
        &env.repos.join("api"),
        &["worktree", "remove", s(&env.ws("feat").join("api"))],
    );
    env.edit_state(|st| {
        st[0]["repos"][0]["source_repo"] = s(&victim).into();
        st[0]["repos"][0]["worktree_path"] = s(&side).into();
        st[0]["repos"][0]["branch"] = "keepme".into();
    });
    let r = env.gw(&["delete", "feat", "--force", "--format", "json"]);
    assert!(env.has_branch(&victim, "keepme"), "{r}");
    assert_eq!(env.git(&victim, &["rev-parse", "keepme"]).trim(), tip);
    assert!(side.join(".git").is_file());
}

/// G8: `gw reset` does not switch away from a detached HEAD whose commits nothing else has.
#[test]
fn reset_keeps_a_detached_head_holding_commits() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat", "api");
    let api = env.ws("feat").join("api");
    let work = detached_commit(&env, &api, "detached work");
    let r = env.gw(&["reset", "feat", "--format", "json"]).json();
    assert_eq!(env.git(&api, &["rev-parse", "HEAD"]).trim(), work, "{r:#}");
    assert!(
        r.to_string().contains("no branch, tag or remote has"),
        "{r:#}"
    );
}

/// G9, G14: git repairs the registration a worktree's `.git` file names, in whichever
/// repository it is; neither a rename nor doctor's repair hands git a worktree that is not
/// the recorded repository's.
#[test]
fn repairs_touch_only_the_recorded_repositorys_registrations() {
    let env = TestEnv::with_repos(&["api"]);
    let (victim, _) = victim(&env);
    let vwt = env.root.join("victim-wt");
    env.git(&victim, &["worktree", "add", "-q", "--detach", s(&vwt)]);
    let registration = victim.join(".git/worktrees/victim-wt/gitdir");
    let theirs = std::fs::read_to_string(&registration).unwrap();

    env.create("feat", "feat", "api");
    let dot_git = env.ws("feat").join("api/.git");
    let ours = std::fs::read_to_string(&dot_git).unwrap();
    std::fs::write(
        &dot_git,
        format!("gitdir: {}\n", s(&victim.join(".git/worktrees/victim-wt"))),
    )
    .unwrap();
    let r = env.gw(&["rename", "feat", "--to", "feat2", "--format", "json"]);
    assert_eq!(
        std::fs::read_to_string(&registration).unwrap(),
        theirs,
        "{r}"
    );

    // doctor: a worktree path edited to the user's hand-moved worktree elsewhere.
    let name = env.workspace_names()[0].clone();
    std::fs::write(env.ws(&name).join("api/.git"), &ours).unwrap();
    let moved = env.root.join("victim-moved");
    std::fs::rename(&vwt, &moved).unwrap();
    env.edit_state(|st| st[0]["repos"][0]["worktree_path"] = s(&moved).into());
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).json();
    assert_eq!(
        std::fs::read_to_string(&registration).unwrap(),
        theirs,
        "{r:#}"
    );
}

/// G10: a journal of one workspace does not move another, live one.
#[test]
fn recovery_moves_only_its_own_workspace() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("live", "live", "api");
    let live = env.ws("live");
    std::fs::write(live.join("api/precious.txt"), "precious\n").unwrap();
    committed_delete(
        &env,
        serde_json::json!({"action": "move_dir", "from": s(&live),
            "to": s(&env.workspace_dir().join(".trash/ghost-1")), "status": "planned"}),
    );
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).json();
    assert_eq!(
        std::fs::read_to_string(live.join("api/precious.txt")).unwrap_or_default(),
        "precious\n",
        "{r:#}"
    );
    assert_eq!(env.workspace_names(), ["live"]);
}

/// Workspaces `wsa` and `wsb` over `api`, on branches `a` and `b` whose tip is the same
/// commit, which no remote has; its id.
fn two_branches_sharing_an_unpushed_commit(env: &TestEnv) -> String {
    env.create("wsa", "a", "api");
    env.create("wsb", "b", "api");
    let a = env.ws("wsa").join("api");
    env.commit(&a, "x.txt", "x\n", "X, only local");
    let x = env.git(&a, &["rev-parse", "HEAD"]).trim().to_string();
    env.git(&env.ws("wsb").join("api"), &["reset", "-q", "--hard", &x]);
    x
}

/// G12: two deletes at once, of workspaces whose branches hold the same unpushed commit,
/// do not each count the other's branch as its copy: one branch stays.
#[test]
fn concurrent_deletes_keep_a_commit_only_their_branches_share() {
    let mut env = TestEnv::with_repos(&["api"]);
    let x = two_branches_sharing_an_unpushed_commit(&env);
    // Both stop at their first `git worktree remove`, after each has judged its branch
    // (when the judging is not serialised), then go on together.
    let gate = env.fake_git(&[("worktree remove", WAIT_FOR_RELEASE)]);
    let da = spawn_gw(&env, &["delete", "wsa", "--format", "json"]);
    let db = spawn_gw(&env, &["delete", "wsb", "--format", "json"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while gate.started() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    gate.release();
    let ra = da.wait_with_output().unwrap();
    let rb = db.wait_with_output().unwrap();
    let api = env.repos.join("api");
    assert!(
        reachable(&env, &api, &x),
        "X is on a branch still:\n{}\n{}",
        String::from_utf8_lossy(&ra.stdout),
        String::from_utf8_lossy(&rb.stdout)
    );
}

fn spawn_gw(env: &TestEnv, args: &[&str]) -> std::process::Child {
    let mut cmd = env.gw_cmd(args);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    cmd.spawn().expect("gw starts")
}

/// G6: a workspace moved by hand (or on a drive not mounted) keeps the registrations that
/// hold its detached commits: `gw doctor --fix` does not drop them.
#[test]
fn doctor_keeps_registrations_that_hold_work_of_a_moved_worktree() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat", "api");
    let work = detached_commit(&env, &env.ws("feat").join("api"), "detached, then moved");
    let moved = env.root.join("feat-moved");
    std::fs::rename(env.ws("feat"), &moved).unwrap();
    let r = env.gw(&["doctor", "--fix", "--format", "json"]).json();
    assert_eq!(
        env.git(&moved.join("api"), &["rev-parse", "HEAD"]).trim(),
        work,
        "the moved worktree is still a worktree: {r:#}"
    );
    assert!(r.to_string().contains("worktree repair"), "{r:#}");
}

/// G11: the plan of a delete of several workspaces judges each branch as the command will,
/// after the branches before it are gone: of two branches holding the same unpushed
/// commit, it shows the second kept, as the delete then keeps it.
#[test]
fn a_plan_of_several_deletions_judges_branches_in_turn() {
    let env = TestEnv::with_repos(&["api"]);
    let x = two_branches_sharing_an_unpushed_commit(&env);

    let plan = env
        .gw(&["plan", "delete", "wsa", "wsb", "--format", "json"])
        .success()
        .result();
    let kinds: Vec<(String, String)> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["branch"].is_string())
        .map(|c| {
            (
                c["action"].as_str().unwrap_or_default().to_string(),
                c["branch"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        kinds.contains(&("keep_branch".into(), "b".into())),
        "{plan:#}"
    );
    let path = env.root.join("plan.json");
    std::fs::write(&path, plan.to_string()).unwrap();
    env.gw(&["apply", s(&path), "--format", "json"]).success();
    assert!(env.has_branch(&env.repos.join("api"), "b"));
    assert!(reachable(&env, &env.repos.join("api"), &x));
}

/// `gw delete WS` refuses (`WORKTREE_DIRTY`, exit 4), naming `what` among the work it keeps.
fn delete_is_refused_naming(env: &TestEnv, ws: &str, what: &str) {
    let run = env.gw(&["delete", ws, "--format", "json"]).code(4);
    assert_eq!(run.error_code(), "WORKTREE_DIRTY", "{run}");
    assert!(run.stdout.contains(what), "{run}");
}

/// G7: a worktree someone made inside an ignored directory of a workspace's worktree (git
/// status does not show it) is work: `gw delete` refuses without `--force`.
#[test]
fn delete_refuses_a_worktree_nested_in_an_ignored_directory() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.ignore("api", "scratch/");
    env.create("feat", "feat", "api");
    let nested = env.ws("feat").join("api/scratch/webwt");
    env.git(
        &env.repos.join("web"),
        &["worktree", "add", "-q", "--detach", s(&nested)],
    );
    let work = detached_commit(&env, &nested, "nested detached work");

    delete_is_refused_naming(&env, "feat", "scratch/webwt");
    assert_eq!(env.git(&nested, &["rev-parse", "HEAD"]).trim(), work);
}

/// Makes a repository at `dir` with a commit of its own (no remote has it).
fn repository_with_work(env: &TestEnv, dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    env.git(dir, &["init", "-q"]);
    env.commit(dir, "x.txt", "precious\n", "work of its own");
}

/// A large ignored directory does not hide a repository in another one: the search of
/// ignored directories for repositories has a budget of entries per directory, not one for
/// all (a `node_modules` of 5,100 files used it up, and the commits of a repository in
/// `scratch/`, listed after it, were deleted).
#[test]
fn delete_refuses_a_repository_in_an_ignored_directory_beside_a_large_one() {
    let env = TestEnv::with_repos(&["api"]);
    env.ignore("api", "node_modules/\nscratch/");
    env.create("feat", "feat", "api");
    let wt = env.ws("feat").join("api");
    let modules = wt.join("node_modules");
    std::fs::create_dir_all(&modules).unwrap();
    for i in 0..5_100 {
        std::fs::write(modules.join(format!("m{i}.js")), "").unwrap();
    }
    let scratch = wt.join("scratch");
    repository_with_work(&env, &scratch);

    delete_is_refused_naming(&env, "feat", "scratch");
    assert!(scratch.join(".git").is_dir());
}

/// A repository three directories below an ignored one is found too (the search went two
/// deep, and `build/a/b/nested`'s commits were deleted).
#[test]
fn delete_refuses_a_repository_deep_in_an_ignored_directory() {
    let env = TestEnv::with_repos(&["api"]);
    env.ignore("api", "build/");
    env.create("feat", "feat", "api");
    let nested = env.ws("feat").join("api/build/a/b/nested");
    repository_with_work(&env, &nested);

    delete_is_refused_naming(&env, "feat", "build/a/b/nested");
    assert!(nested.join(".git").is_dir());
}

/// G5: a commit made in a submodule of a worktree, recorded by the superproject and pushed
/// there, exists only in the submodule's repository inside the worktree's private git
/// directory: `gw delete` refuses without `--force`.
#[test]
fn delete_refuses_to_lose_a_submodules_commits() {
    let env = TestEnv::with_repos(&["api", "lib"]);
    let api = env.repos.join("api");
    env.add_submodule(&api, &env.url("lib"), "lib");
    env.create("feat", "feat", "api");
    let wt = env.ws("feat").join("api");
    env.git(&wt, &["submodule", "update", "--init", "-q"]);
    env.commit(&wt.join("lib"), "sub.txt", "precious\n", "submodule work");
    let work = env
        .git(&wt.join("lib"), &["rev-parse", "HEAD"])
        .trim()
        .to_string();
    env.git(&wt, &["add", "lib"]);
    env.git(&wt, &["commit", "-q", "-m", "bump lib"]);
    env.git(&wt, &["push", "-q", "origin", "feat"]);

    delete_is_refused_naming(&env, "feat", "submodule `lib`");
    assert_eq!(
        env.git(&wt.join("lib"), &["rev-parse", "HEAD"]).trim(),
        work
    );
}

/// G13: a commit kept only by a ref private to the worktree (`refs/worktree/…`) goes with
/// the worktree's private git directory: `gw delete` refuses without `--force`.
#[test]
fn delete_refuses_to_lose_a_worktree_private_ref() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat", "api");
    let wt = env.ws("feat").join("api");
    env.commit(&wt, "k.txt", "k\n", "kept in a worktree ref");
    env.git(&wt, &["update-ref", "refs/worktree/keep", "HEAD"]);
    env.git(&wt, &["reset", "-q", "--hard", "HEAD~1"]);
    delete_is_refused_naming(&env, "feat", "refs/worktree/keep");
}

/// The other side of G7: a clone that holds nothing of its own in an ignored directory (as
/// Terraform keeps git-sourced modules in `.terraform/modules/`) does not stop a delete,
/// while one with a commit none of its remotes has does.
#[test]
fn a_tools_clone_in_an_ignored_directory_is_not_work() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.ignore("api", ".terraform/");
    env.create("one", "one", "api");
    env.create("two", "two", "api");
    for ws in ["one", "two"] {
        let modules = env.ws(ws).join("api/.terraform/modules");
        std::fs::create_dir_all(&modules).unwrap();
        env.git(&modules, &["clone", "-q", &env.url("web"), "web"]);
    }
    env.commit(
        &env.ws("two").join("api/.terraform/modules/web"),
        "local.tf",
        "x\n",
        "a commit of its own",
    );
    env.gw(&["delete", "one", "--format", "json"]).success();
    let run = env.gw(&["delete", "two", "--format", "json"]).code(4);
    assert!(run.stdout.contains(".terraform/modules/web"), "{run}");
}
