//! What a hostile user (or a careless one) found after the first safety round: work that
//! lives beyond a worktree's files, and repositories a file merely names. Each test is the
//! reproduction of one finding.

use std::path::{Path, PathBuf};

use e2e::{TestEnv, s};

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
    let ops = env.grove_home.join("operations");
    std::fs::create_dir_all(&ops).unwrap();
    let id = "20260101T000000Z-99999";
    let record = serde_json::json!({
        "version": 1, "id": id, "kind": "delete", "workspace": "gone", "pid": 1,
        "started_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "phase": "committed", "steps": [
            {"action": "set_state", "name": "gone", "before": null, "after": null, "status": "done"},
            step,
        ],
    });
    std::fs::write(ops.join(format!("{id}.json")), record.to_string()).unwrap();
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

    let r = env.gw(&["doctor", "--format", "json"]).success().result();
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

    let fixed = env
        .gw(&["doctor", "--fix", "--format", "json"])
        .success()
        .result();
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
    let r = env
        .gw(&["doctor", "--fix", "--format", "json"])
        .success()
        .result();
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
