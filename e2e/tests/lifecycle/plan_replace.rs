//! `gw create --replace`, planned and applied: `gw apply` deletes the replaced workspace and
//! creates the new one only while both parts of the plan still hold; otherwise it refuses
//! with `STATE_CHANGED` and the old workspace is left as it was.

use std::path::{Path, PathBuf};

use e2e::{TestEnv, s};

/// `gw create` replacing the workspace it is run in with `new` (web).
pub const REPLACE: &[&str] = &["create", "new", "-b", "new", "-r", "web", "--replace"];

/// A workspace `old` (api), and the plan, made from inside it, that replaces it with `new`
/// (web): `--force` or not.
fn planned(force: bool) -> (TestEnv, PathBuf, PathBuf) {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("old", "old", "api");
    let inside = env.ws("old").join("api");
    let saved = env.root.join("tmp/replace.json");
    let mut args = REPLACE.to_vec();
    args.extend(["--dry-run", "--out", s(&saved)]);
    if force {
        args.push("--force");
    }
    env.gw_in(&inside, &args).success();
    (env, inside, saved)
}

fn apply(env: &TestEnv, cwd: &Path, plan: &Path) -> e2e::Run {
    env.gw_in(cwd, &["apply", s(plan), "--format", "json"])
}

#[test]
fn applying_a_replace_plan_replaces_the_workspace() {
    let (env, inside, saved) = planned(false);
    assert_eq!(env.workspace_names(), ["old"], "a dry run deletes nothing");
    let r = apply(&env, &inside, &saved).success().result();
    assert_eq!(r["replaced"], "old", "{r:#}");
    assert_eq!(r["name"], "new", "{r:#}");
    assert_eq!(env.workspace_names(), ["new"]);
    assert!(!env.ws("old").exists());
    assert!(env.ws("new").join("web").is_dir());
    assert!(
        !env.has_branch(&env.repos.join("api"), "old"),
        "the replaced workspace's branch went with it"
    );
    env.assert_git_agrees_with_state();
}

/// The plan names the workspace it replaces: applied from outside any workspace it still
/// means that one; from inside another workspace it is refused, and nothing changes.
#[test]
fn a_replace_plan_means_the_workspace_it_names() {
    let (env, _, saved) = planned(true);
    env.create("other", "other", "web");
    let elsewhere = env.ws("other").join("web");
    let before = env.snapshot();
    let refused = apply(&env, &elsewhere, &saved).code(2);
    assert_eq!(refused.error_code(), "USAGE", "{refused}");
    assert!(refused.stdout.contains("`old`"), "{refused}");
    env.assert_unchanged(&before);
    let r = apply(&env, &env.root, &saved).success().result();
    assert_eq!(r["replaced"], "old", "{r:#}");
    let mut names = env.workspace_names();
    names.sort();
    assert_eq!(names, ["new", "other"]);
}

/// A new uncommitted file in the replaced workspace (the plan was made without --force):
/// refused, nothing deleted, the file kept.
#[test]
fn a_replace_plan_is_refused_when_the_old_workspace_gained_work() {
    let (env, inside, saved) = planned(false);
    std::fs::write(inside.join("notes.txt"), "mine\n").unwrap();
    let before = env.snapshot();
    let refused = apply(&env, &inside, &saved).code(4);
    assert_eq!(refused.error_code(), "STATE_CHANGED", "{refused}");
    assert!(refused.stdout.contains("no longer applies"), "{refused}");
    env.assert_unchanged(&before);
    assert_eq!(
        std::fs::read_to_string(inside.join("notes.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(env.workspace_names(), ["old"]);
}

/// With --force, new work in the replaced workspace would be discarded: the plan did not
/// say so, so it is refused too.
#[test]
fn a_forced_replace_plan_is_refused_when_the_old_workspace_changed() {
    let (env, inside, saved) = planned(true);
    std::fs::write(inside.join("notes.txt"), "mine\n").unwrap();
    let before = env.snapshot();
    let refused = apply(&env, &inside, &saved).code(4);
    assert_eq!(refused.error_code(), "STATE_CHANGED", "{refused}");
    assert!(refused.stdout.contains("notes.txt"), "{refused}");
    env.assert_unchanged(&before);
    assert!(inside.join("notes.txt").is_file());
}

/// The replaced workspace's branch moved (a commit made there): refused, nothing deleted,
/// the commit still on its branch.
#[test]
fn a_replace_plan_is_refused_when_the_old_branch_moved() {
    let (env, inside, saved) = planned(true);
    env.commit(&inside, "more.txt", "more\n", "more work");
    let tip = env.git(&inside, &["rev-parse", "HEAD"]);
    let before = env.snapshot();
    let refused = apply(&env, &inside, &saved).code(4);
    assert_eq!(refused.error_code(), "STATE_CHANGED", "{refused}");
    env.assert_unchanged(&before);
    assert_eq!(env.git(&env.repos.join("api"), &["rev-parse", "old"]), tip);
    assert_eq!(env.workspace_names(), ["old"]);
}
