//! Adversary 31: `gw delete` into the trash after the one-rename registration and the
//! one-transaction branch deletion (issue 27), attacked where the deletion of a branch does
//! not go through.

use e2e::TestEnv;

/// The references under `refs/grove/trash/` of `repo`, as `name oid` lines.
fn kept_refs(env: &TestEnv, repo: &std::path::Path) -> String {
    env.git(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/grove/trash/",
        ],
    )
}

/// A branch whose deletion fails (another git process holds its reference's lock) is still
/// kept for the trash: its tip under `refs/grove/trash/`, as the delete's plan promises, and
/// its settings in place while the branch is. Before, `pin` left the kept reference to the
/// deletion's transaction, which failed with it, after the `[branch]` section was already
/// removed: the entry kept nothing, and once the branch moved (the user's `git branch -f`)
/// the workspace's only commit was held by a reflog alone and its upstream was gone.
#[test]
fn a_branch_whose_deletion_fails_still_has_its_tip_kept_and_its_settings() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    let api = env.ws("ws").join("api");
    let source = env.repos.join("api");
    env.git(&api, &["branch", "--set-upstream-to=origin/main"]);
    env.commit(&api, "only.txt", "unique\n", "found nowhere else");
    let tip = env.git(&api, &["rev-parse", "HEAD"]);
    let lock = source.join(".git/refs/heads/feat/x.lock");
    std::fs::write(&lock, "").unwrap();

    let deleted = env.gw(&["delete", "ws", "--force", "--format", "json"]);
    assert!(
        deleted
            .to_string()
            .contains("could not delete branch feat/x"),
        "{deleted}"
    );
    assert!(env.has_branch(&source, "feat/x"), "{deleted}");
    assert!(
        kept_refs(&env, &source).contains(&tip),
        "the trash entry keeps nothing of feat/x's tip {tip}: {deleted}"
    );
    assert_eq!(
        env.git_run(&source, &["config", "branch.feat/x.remote"])
            .stdout
            .trim(),
        "origin",
        "the branch is still there, without its settings: {deleted}"
    );

    // The lock goes, the branch is moved by hand, recovery gives up on deleting it: the
    // workspace's commit is still kept by the trash entry.
    std::fs::remove_file(&lock).unwrap();
    env.git(&source, &["branch", "-f", "feat/x", "main"]);
    env.gw(&["doctor", "--fix"]);
    assert!(kept_refs(&env, &source).contains(&tip));
}

/// A dry run's `--out` never writes over grove's own files: `gw create … --replace
/// --dry-run --out ~/.grove/state.json` (or `gw plan --out` into the trash) replaced the
/// state with a plan document, and every workspace was forgotten. Anywhere else — a
/// workspace's own directory included — is the caller's to choose.
#[test]
fn a_dry_run_out_never_overwrites_groves_own_files() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    let state = std::fs::read(env.state_path()).unwrap();
    let config = std::fs::read(env.config_path()).unwrap();
    let inside = env.ws("ws").join("api");
    for (out, what) in [
        (env.state_path(), "state"),
        (env.config_path(), "configuration"),
        (
            env.grove_home.join("plan.json"),
            "a new file in grove's directory",
        ),
        (
            env.workspace_dir().join(".trash/plan.json"),
            "the trash directory",
        ),
        (
            env.workspace_dir().join("plan.json"),
            "the workspace directory itself",
        ),
    ] {
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        let out = out.to_str().unwrap();
        let run = env.gw_in(
            &inside,
            &[
                "create",
                "nw",
                "-b",
                "feat/n",
                "-r",
                "api",
                "--replace",
                "--dry-run",
                "--out",
                out,
                "--format",
                "json",
            ],
        );
        assert_eq!(
            (run.status, run.error_code()),
            (2, "USAGE".into()),
            "{what}: {run}"
        );
        let plan = env.gw(&["plan", "--out", out, "delete", "ws", "--format", "json"]);
        assert_eq!(
            (plan.status, plan.error_code()),
            (2, "USAGE".into()),
            "{what}: {plan}"
        );
    }
    assert_eq!(std::fs::read(env.state_path()).unwrap(), state);
    assert_eq!(std::fs::read(env.config_path()).unwrap(), config);
    assert!(!env.grove_home.join("plan.json").exists());
    assert_eq!(env.workspace_names(), vec!["ws".to_string()]);
    // A plan saved inside a workspace, or anywhere outside grove, is written.
    let saved = env.root.join("plan.json");
    env.gw(&[
        "plan",
        "--out",
        saved.to_str().unwrap(),
        "delete",
        "ws",
        "--format",
        "json",
    ])
    .success();
    assert!(saved.is_file());
}

/// A forced replace plan is applied only while the replaced workspace holds what the plan
/// saw: a file already modified (or untracked) that was written again since has the same
/// `git status` line, and the plan's facts were those lines alone — so `gw apply` deleted
/// the new work without a word.
#[test]
fn a_replace_plan_refuses_when_a_changed_file_changed_again() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/x", "api,web");
    let api = env.ws("ws").join("api");
    std::fs::write(api.join("README.md"), "# api\nedited\n").unwrap();
    std::fs::write(api.join("notes.txt"), "draft\n").unwrap();
    let plan = env.root.join("plan.json");
    env.gw_in(
        &api,
        &[
            "create",
            "nw",
            "-b",
            "feat/n",
            "-r",
            "web",
            "--replace",
            "--force",
            "--dry-run",
            "--out",
            plan.to_str().unwrap(),
            "--format",
            "json",
        ],
    )
    .success();
    for (file, content) in [
        ("README.md", "# api\nedited\nand hours of work more\n"),
        ("notes.txt", "draft, then the whole design\n"),
    ] {
        let before = std::fs::read(api.join(file)).unwrap();
        std::fs::write(api.join(file), content).unwrap();
        let run = env.gw(&["apply", plan.to_str().unwrap(), "--format", "json"]);
        assert_eq!(
            (run.status, run.error_code()),
            (4, "STATE_CHANGED".into()),
            "{file}: {run}"
        );
        assert_eq!(std::fs::read_to_string(api.join(file)).unwrap(), content);
        std::fs::write(api.join(file), before).unwrap();
    }
    assert_eq!(env.workspace_names(), vec!["ws".to_string()]);
}

/// A worktree's own references (`refs/bisect/*`, `refs/worktree/*`) live in its private
/// git directory, which the trash entry holds: nothing kept their commits reachable, so a
/// `git gc --prune=now` of the repository while the workspace was in the trash took them,
/// and the restored worktree had references to missing objects (`git fsck` errors).
#[test]
fn a_worktrees_own_references_keep_their_commits_while_in_the_trash() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    let api = env.ws("ws").join("api");
    let source = env.repos.join("api");
    env.commit(&api, "private.txt", "private\n", "only under refs/worktree");
    let private = env.git(&api, &["rev-parse", "HEAD"]);
    env.git(&api, &["reset", "-q", "--hard", "HEAD~"]);
    env.git(&api, &["update-ref", "refs/worktree/keep", &private]);
    env.git(&api, &["update-ref", "refs/bisect/bad", &private]);
    env.gw(&["delete", "ws", "--force"]).success();
    env.git(&source, &["reflog", "expire", "--expire=now", "--all"]);
    env.git(&source, &["gc", "-q", "--prune=now"]);
    env.gw(&["restore", "ws"]).success();
    assert_eq!(env.git(&api, &["cat-file", "-t", &private]), "commit");
    assert_eq!(env.git(&api, &["rev-parse", "refs/worktree/keep"]), private);
    assert_eq!(env.git(&api, &["rev-parse", "refs/bisect/bad"]), private);
    assert_eq!(
        env.git(&source, &["for-each-ref", "refs/grove/"]),
        "",
        "the restore leaves none of the entry's references"
    );
}

/// `gw init --dry-run` on a machine where grove never ran writes nothing at all: not the
/// grove directory (which `gw list` there does not make either). It makes `~/.grove` with
/// `cache/remotes.json` (the scan's remotes cache creates the directory) and then
/// `grove.log` in it.
#[test]
#[ignore = "defect: init --dry-run on a fresh home creates ~/.grove (remotes cache, grove.log)"]
fn init_dry_run_on_a_fresh_home_makes_no_grove_directory() {
    let env = TestEnv::new();
    env.repo("api");
    env.gw(&["init", env.repos.to_str().unwrap(), "--dry-run"])
        .success();
    assert!(!env.grove_home.exists(), "{:?}", walk(&env.grove_home));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            let mut v = walk(&p);
            v.push(p);
            v
        })
        .collect()
}
