//! The world auditor (`e2e::audit`) can fail: a clean world passes, and each kind of
//! violation planted by hand is found, named, and about the right path.

use e2e::TestEnv;
use e2e::audit::{Baseline, Kind, Preserved, Violation};

/// Two workspaces over two repositories, plus pre-existing work: a dirty tracked file and
/// an untracked file in `a`, an unpushed commit on `a`'s branch, a branch `keep` with a
/// commit of its own in `api`.
fn world() -> (TestEnv, Baseline, Preserved) {
    let env = TestEnv::with_repos(&["api", "web"]);
    let api = env.repos.join("api");
    env.git(&api, &["switch", "-q", "-c", "keep"]);
    env.commit(&api, "keep.txt", "kept\n", "a commit of its own");
    env.git(&api, &["switch", "-q", "main"]);
    let baseline = Baseline::record(&env.world());
    env.gw(&["create", "a", "-b", "a", "-r", "api,web"])
        .success();
    env.gw(&["create", "b", "-b", "b", "-r", "api"]).success();
    let a_api = env.ws("a").join("api");
    env.commit(&a_api, "work.txt", "unpushed\n", "unpushed work");
    std::fs::write(a_api.join("README.md"), "dirty\n").unwrap();
    std::fs::write(env.ws("a").join("web/notes.txt"), "untracked\n").unwrap();
    let mut preserved = Preserved::new();
    preserved
        .file(&a_api.join("README.md"))
        .file(&env.ws("a").join("web/notes.txt"))
        .commits(&a_api, "a", false)
        .commits(&api, "keep", false);
    (env, baseline, preserved)
}

fn kinds(found: &[Violation]) -> Vec<Kind> {
    let mut k: Vec<Kind> = found.iter().map(|v| v.kind).collect();
    k.dedup();
    k
}

#[track_caller]
fn assert_found(found: &[Violation], kind: Kind, about: &str) {
    assert!(
        found
            .iter()
            .any(|v| v.kind == kind && v.detail.contains(about)),
        "expected {kind} about `{about}`, found:\n{}",
        e2e::audit::render(found)
    );
}

#[test]
fn a_clean_world_has_no_violations() {
    let (env, baseline, preserved) = world();
    assert_eq!(preserved.len(), 4);
    let found = env.world().audit_with(&baseline, &preserved);
    assert!(found.is_empty(), "{}", e2e::audit::render(&found));
    env.assert_world_clean();
    // A purged workspace leaves nothing behind once its trash is emptied.
    env.gw(&["delete", "b", "--purge", "--format", "json"])
        .success();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !e2e::tree(&env.workspace_dir().join(".trash"), 1).is_empty() {
        assert!(std::time::Instant::now() < deadline, "trash never emptied");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let found = env.world().audit_with(&baseline, &preserved);
    assert!(found.is_empty(), "{}", e2e::audit::render(&found));
    // One kept in the trash for `gw restore` is whole, and no violation either (its work
    // went with it, by --force).
    env.gw(&["delete", "a", "--force", "--format", "json"])
        .success();
    let found = env.world().audit_with(&baseline, &Preserved::new());
    assert!(found.is_empty(), "{}", e2e::audit::render(&found));
}

#[test]
fn a_trash_entry_that_is_not_whole_and_a_leaked_kept_tip_are_found() {
    let (env, _, _) = world();
    env.gw(&["delete", "a", "--force", "--format", "json"])
        .success();
    let trash = env.workspace_dir().join(".trash");
    let entry = e2e::tree(&trash, 1).pop().expect("a retained entry");
    let entry = trash.join(entry);
    std::fs::rename(entry.join("workspace"), env.root.join("taken")).unwrap();
    let api = env.repos.join("api");
    let main = env.git(&api, &["rev-parse", "main"]);
    env.git(&api, &["update-ref", "refs/grove/trash/42/0", &main]);
    let found = env.world().audit();
    assert_found(&found, Kind::BrokenTrash, "holds no workspace directory");
    assert_found(&found, Kind::LeakedTrashRef, "refs/grove/trash/42/0");
}

#[test]
fn a_worktree_on_another_branch_or_another_workspaces_branch_is_found() {
    let (env, _, _) = world();
    // web of `a` wanders to a branch of its own.
    env.git(&env.ws("a").join("web"), &["switch", "-q", "-c", "wander"]);
    // api of `b` is put on `a`'s branch (git needs to be told to allow it).
    env.git(
        &env.ws("b").join("api"),
        &["switch", "-q", "--ignore-other-worktrees", "a"],
    );
    let found = env.world().git_vs_state();
    assert_eq!(
        kinds(&found),
        vec![Kind::BranchMismatch, Kind::CrossLinked],
        "{found:#?}"
    );
    assert_found(&found, Kind::BranchMismatch, "wander");
    assert_found(&found, Kind::CrossLinked, "the branch of workspace `a`");
    let r = std::panic::catch_unwind(|| env.assert_git_agrees_with_state());
    assert!(r.is_err(), "assert_git_agrees_with_state compares branches");
}

#[test]
fn two_worktrees_sharing_one_admin_directory_are_cross_linked() {
    // What issue 13's rename/prune race leaves: `b/api`'s `.git` leads to the admin
    // directory git now keeps for `a/api`.
    let (env, _, _) = world();
    let a_link = std::fs::read_to_string(env.ws("a").join("api/.git")).unwrap();
    std::fs::write(env.ws("b").join("api/.git"), a_link).unwrap();
    let found = env.world().git_vs_state();
    assert_found(&found, Kind::CrossLinked, "shares git's admin directory");
    assert_found(&found, Kind::CrossLinked, "(workspace `a`)");
}

#[test]
fn leaks_strays_and_missing_things_are_found() {
    let (env, baseline, preserved) = world();
    let api = env.repos.join("api");
    let wsdir = env.workspace_dir();
    // A worktree grove made but never recorded (an interrupted create).
    env.git(
        &api,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "half",
            wsdir.join("half/api").to_str().unwrap(),
        ],
    );
    // A directory in a workspace that is none of its worktrees; trash no journal names.
    std::fs::create_dir_all(wsdir.join("b/stray")).unwrap();
    std::fs::create_dir_all(wsdir.join(".trash/gone-123")).unwrap();
    // A branch made and left behind.
    env.git(&api, &["branch", "leaked", "origin/main"]);
    // A registration dropped behind grove's back.
    let admin = std::fs::read_to_string(env.ws("b").join("api/.git")).unwrap();
    let admin = admin.trim().strip_prefix("gitdir: ").unwrap().to_string();
    std::fs::remove_dir_all(&admin).unwrap();
    // A worktree and a workspace directory gone.
    std::fs::remove_dir_all(env.ws("a").join("web")).unwrap();
    let found = env.world().audit_with(&baseline, &preserved);
    assert_found(&found, Kind::UnrecordedRegistration, "half/api");
    assert_found(&found, Kind::StrayEntry, "half");
    assert_found(&found, Kind::StrayEntry, "b/stray");
    assert_found(&found, Kind::LeftoverTrash, "gone-123");
    assert_found(&found, Kind::LeakedBranch, "`half`");
    assert_found(&found, Kind::LeakedBranch, "`leaked`");
    assert_found(&found, Kind::NotRegistered, "b/api");
    assert_found(&found, Kind::BrokenLink, "b/api");
    assert_found(&found, Kind::WorktreeMissing, "a/web");
    assert_found(&found, Kind::WorkLost, "notes.txt");
    assert!(
        !found
            .iter()
            .any(|v| v.kind == Kind::LeakedBranch && v.detail.contains("`keep`")),
        "a branch that existed before is no leak"
    );
    // A branch with commits of its own that no workspace uses is work kept, not a leak.
    env.gw(&[
        "remove-repo",
        "b",
        "-r",
        "api",
        "--force",
        "--format",
        "json",
    ]);
    std::fs::remove_dir_all(env.ws("b")).unwrap();
    let found = env.world().audit_with(&baseline, &preserved);
    assert_found(&found, Kind::WorkspaceMissing, "`b`");
}

#[test]
fn git_locks_operations_in_progress_and_journals_are_found() {
    let (env, _, _) = world();
    let api = env.repos.join("api");
    let b_api = env.ws("b").join("api");
    std::fs::write(api.join(".git/index.lock"), "").unwrap();
    std::fs::write(api.join(".git/refs/heads/main.lock"), "").unwrap();
    // A rebase stopped on a conflict in workspace b.
    env.commit(&b_api, "README.md", "ours\n", "ours");
    env.push_upstream("api", "main", "README.md", "theirs\n");
    env.git(&b_api, &["fetch", "-q"]);
    assert_ne!(env.git_run(&b_api, &["rebase", "origin/main"]).status, 0);
    let ops = env.grove_home.join("operations");
    std::fs::create_dir_all(&ops).unwrap();
    let trash = env.workspace_dir().join(".trash/x-9");
    let journal = serde_json::json!({"kind": "delete", "workspace": "x", "phase": "running",
        "steps": [{"action": "move_dir", "status": "intended", "to": trash}]});
    std::fs::write(ops.join("1-delete-x.json"), journal.to_string()).unwrap();
    std::fs::write(ops.join("2-delete-y.lock"), "").unwrap();
    std::fs::write(ops.join(".3-create-z.json.a1b2.tmp"), "{").unwrap();
    std::fs::write(env.grove_home.join(".state.json.x9.tmp"), "[").unwrap();
    // Trash a journal names belongs to that operation.
    std::fs::create_dir_all(&trash).unwrap();
    let found = env.world().audit();
    assert_found(&found, Kind::GitLockLeft, "index.lock");
    assert_found(&found, Kind::GitLockLeft, "main.lock");
    assert_found(&found, Kind::OperationInProgress, "rebase-merge");
    assert_found(&found, Kind::OperationInProgress, "b/api");
    assert_found(&found, Kind::JournalLeft, "delete of `x`, phase running");
    assert_found(&found, Kind::JournalLockLeft, "2-delete-y.lock");
    assert_found(&found, Kind::TempFileLeft, ".3-create-z.json.a1b2.tmp");
    assert_found(&found, Kind::TempFileLeft, ".state.json.x9.tmp");
    assert!(
        !found.iter().any(|v| v.kind == Kind::LeftoverTrash),
        "trash a journal names is not leftover: {found:#?}"
    );
}

#[test]
fn pre_existing_work_is_compared_byte_for_byte_and_commits_by_patch() {
    let (env, baseline, preserved) = world();
    let a_api = env.ws("a").join("api");
    // A rebase keeps the work when allowed, as an equivalent patch.
    let mut rebased = Preserved::new();
    rebased.commits(&a_api, "a", true);
    env.git(&a_api, &["stash", "-q"]);
    env.push_upstream("api", "main", "upstream.txt", "new\n");
    env.git(&a_api, &["fetch", "-q"]);
    env.git(&a_api, &["rebase", "-q", "origin/main"]);
    env.git(&a_api, &["stash", "pop", "-q"]);
    assert!(env.world().audit_with(&baseline, &rebased).is_empty());
    let found = env.world().audit_with(&baseline, &preserved);
    assert_found(&found, Kind::WorkLost, "branch `a` moved");
    // Dropping the commit loses it, rebase or not.
    env.git(&a_api, &["stash", "-q"]);
    env.git(&a_api, &["reset", "-q", "--hard", "origin/main"]);
    let found = env.world().audit_with(&baseline, &rebased);
    assert_found(&found, Kind::WorkLost, "lost commit");
    let found = env.world().audit_with(&baseline, &preserved);
    assert_found(&found, Kind::WorkLost, "README.md changed");
    env.git(&env.repos.join("api"), &["branch", "-D", "keep"]);
    let found = env.world().audit_with(&baseline, &preserved);
    assert_found(&found, Kind::WorkLost, "branch `keep`");
}

#[test]
fn hostile_state_is_reported_not_panicked_on() {
    let (env, _, _) = world();
    let outside = env.root.join("elsewhere");
    env.edit_state(|s| {
        let list = s.as_array_mut().unwrap();
        let mut copy = list[0].clone();
        list[1]["path"] = serde_json::json!(outside.to_str().unwrap());
        copy["repos"] = serde_json::json!([]);
        list.push(copy);
    });
    let found = env.world().audit();
    assert_found(&found, Kind::DuplicateState, "`a` is recorded twice");
    assert_found(&found, Kind::PathOutsideWorkspaceDir, "elsewhere");
    std::fs::write(env.state_path(), "{ not json").unwrap();
    let found = env.world().audit();
    assert_eq!(kinds(&found), vec![Kind::StateUnreadable], "{found:#?}");
}
