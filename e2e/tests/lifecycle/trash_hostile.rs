//! The trash tried the hard way (an adversary's findings, each reproduced here first): what
//! a deleted workspace holds that git alone would let go (a detached HEAD's commits, staged
//! content), a trash entry or record edited to point elsewhere, a second grove directory
//! over the same repositories, the size cap, the order of `gw undo`, branches checked out
//! in the main worktree, and deletes of a workspace whose directory is gone.

use std::path::{Path, PathBuf};

use e2e::{TestEnv, s};
use serde_json::Value;

/// The only retained entry of the trash.
fn entry(env: &TestEnv) -> PathBuf {
    let trash = env.workspace_dir().join(".trash");
    let mut kept: Vec<PathBuf> = std::fs::read_dir(&trash)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("trash.json").is_file())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    kept.pop().unwrap()
}

fn edit_record(entry: &Path, f: impl FnOnce(&mut Value)) {
    let path = entry.join("trash.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// `git gc` that forgets everything unreachable at once.
fn gc_now(env: &TestEnv, repo: &Path) {
    env.git(
        repo,
        &[
            "-c",
            "gc.reflogExpireUnreachable=now",
            "-c",
            "gc.reflogExpire=now",
            "gc",
            "--prune=now",
            "-q",
        ],
    );
}

/// Commits only a detached HEAD has, and content only the index has, survive a `git gc`
/// while their workspace is in the trash: the entry keeps them under `refs/grove/trash/`.
#[test]
fn a_detached_heads_commits_and_staged_content_survive_a_gc() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("feat", "feat/x", "api,web");
    let ws = env.ws("feat");
    env.git(&ws.join("web"), &["checkout", "-q", "--detach"]);
    env.commit(
        &ws.join("web"),
        "det.txt",
        "detached work\n",
        "detached work",
    );
    let head = env.git(&ws.join("web"), &["rev-parse", "HEAD"]);
    std::fs::write(ws.join("api/s2"), "staged-only\n").unwrap();
    env.git(&ws.join("api"), &["add", "s2"]);
    std::fs::write(ws.join("api/s2"), "worktree version\n").unwrap();
    env.gw(&["delete", "feat", "--force"]).success();
    env.settle_trash();
    for r in ["api", "web"] {
        gc_now(&env, &env.repos.join(r));
    }
    env.gw(&["restore", "feat"]).success();
    assert_eq!(env.git(&ws.join("web"), &["rev-parse", "HEAD"]), head);
    assert_eq!(
        env.git(&ws.join("api"), &["show", ":s2"]),
        "staged-only",
        "the staged blob is still there"
    );
    assert_eq!(env.git(&ws.join("api"), &["fsck", "--no-progress"]), "");
    assert_eq!(env.git(&ws.join("web"), &["fsck", "--no-progress"]), "");
    // (web's worktree is detached, as the test left it: the auditor would say so.)
    env.gw(&["status", "feat"]).success();
}

/// A kept tip another grove directory cannot see an entry for is not its to remove while
/// the commits it keeps exist nowhere else.
#[test]
fn doctor_of_another_grove_directory_keeps_the_tips_of_this_ones_trash() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat/x", "api");
    env.commit(&env.ws("feat").join("api"), "c.txt", "c\n", "only here");
    let tip = env.git(&env.ws("feat").join("api"), &["rev-parse", "HEAD"]);
    env.gw(&["delete", "feat", "--force"]).success();
    env.settle_trash();
    let other = env.root.join("grove2");
    let root = env.root.clone();
    let home2 = [("GW_HOME", s(&other))];
    env.gw_env(&root, &["init", s(&env.repos)], &home2)
        .success();
    let fixed = env
        .gw_env(&root, &["doctor", "--fix", "--format", "json"], &home2)
        .doctor();
    assert_eq!(fixed["fixed"], 0, "{fixed:#}");
    let api = env.repos.join("api");
    gc_now(&env, &api);
    env.git(&api, &["cat-file", "-e", &tip]);
    env.gw(&["restore", "feat"]).success();
}

/// The newest entry stays whatever its size: the last delete can always be undone. The
/// older ones go first while the trash holds more than `max_size`.
#[test]
fn the_newest_entry_is_never_evicted_by_the_size_cap() {
    let env = TestEnv::with_repos(&["api"]);
    env.append_config("[trash]\nmax_size = \"1KiB\"\n");
    env.create("a", "feat/a", "api");
    env.gw(&["delete", "a"]).success();
    env.settle_trash();
    let listed = env.gw(&["trash", "--format", "json"]).success().result();
    assert_eq!(listed["count"], 1, "{listed:#}");
    env.create("b", "feat/b", "api");
    env.gw(&["delete", "b"]).success();
    env.settle_trash();
    let listed = env.gw(&["trash", "--format", "json"]).success().result();
    assert_eq!(listed["count"], 1, "{listed:#}");
    assert_eq!(listed["entries"][0]["name"], "b");
}

/// A `workspace/` (or a kept registration) that is a symbolic link is refused, changing
/// nothing: never does a restore take over what the link points at.
#[test]
fn a_symlink_inside_an_entry_is_refused() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("feat", "feat/x", "api,web");
    env.gw(&["delete", "feat", "--force"]).success();
    env.settle_trash();
    let e = entry(&env);
    env.create("vic", "vic", "api,web");
    let victim = env.ws("vic");
    std::fs::write(victim.join("api/staged"), "s\n").unwrap();
    env.git(&victim.join("api"), &["add", "staged"]);
    let link_before = std::fs::read(victim.join("api/.git")).unwrap();
    let real = env.root.join("moved-away");
    std::fs::rename(e.join("workspace"), &real).unwrap();
    std::os::unix::fs::symlink(&victim, e.join("workspace")).unwrap();
    let before = env.snapshot();
    let run = env.gw(&["restore", "feat", "--format", "json"]).failure();
    assert_eq!(run.error_code(), "CORRUPT_STATE", "{run}");
    env.assert_unchanged(&before);
    assert!(
        env.git(&victim.join("api"), &["status", "--porcelain"])
            .contains("A  staged")
    );
    assert_eq!(
        std::fs::read(victim.join("api/.git")).unwrap(),
        link_before,
        "vic's link is its own"
    );
    // A symlinked entry is not listed (twice) either.
    std::fs::remove_file(e.join("workspace")).unwrap();
    std::fs::rename(&real, e.join("workspace")).unwrap();
    std::os::unix::fs::symlink(&e, env.workspace_dir().join(".trash/evil-42")).unwrap();
    let listed = env.gw(&["trash", "--format", "json"]).success().result();
    assert_eq!(listed["count"], 1, "{listed:#}");
}

/// A record edited to put the workspace somewhere else inside the workspace directory (the
/// trash itself, or inside another workspace) is refused.
#[test]
fn a_record_that_moves_the_workspace_elsewhere_is_refused() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat/x", "api");
    env.create("vic", "vic", "api");
    env.gw(&["delete", "feat", "--force"]).success();
    env.settle_trash();
    let e = entry(&env);
    for place in [
        env.workspace_dir().join(".trash/evil-1"),
        env.ws("vic").join("api/sub"),
    ] {
        let original = std::fs::read(e.join("trash.json")).unwrap();
        edit_record(&e, |v| {
            let old = v["workspace"]["path"].as_str().unwrap().to_string();
            v["workspace"]["path"] = s(&place).into();
            for r in v["workspace"]["repos"].as_array_mut().unwrap() {
                let p = r["worktree_path"]
                    .as_str()
                    .unwrap()
                    .replace(&old, s(&place));
                r["worktree_path"] = p.into();
            }
        });
        let before = env.snapshot();
        let run = env.gw(&["restore", "feat", "--format", "json"]).failure();
        assert_eq!(
            run.error_code(),
            "CORRUPT_STATE",
            "{}: {run}",
            place.display()
        );
        env.assert_unchanged(&before);
        std::fs::write(e.join("trash.json"), original).unwrap();
    }
    env.gw(&["restore", "feat"]).success();
}

/// A record naming another repository as a source makes no purge run git there.
#[test]
fn a_purge_acts_only_in_repositories_grove_knows() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat/x", "api");
    env.gw(&["delete", "feat", "--force"]).success();
    env.settle_trash();
    let e = entry(&env);
    let id = e
        .file_name()
        .unwrap()
        .to_string_lossy()
        .rsplit_once('-')
        .unwrap()
        .1
        .to_string();
    let stranger = env.root.join("stranger");
    std::fs::create_dir_all(&stranger).unwrap();
    env.git(&stranger, &["init", "-q"]);
    env.git(&stranger, &["commit", "-q", "--allow-empty", "-m", "s"]);
    let oid = env.git(&stranger, &["rev-parse", "HEAD"]);
    let kept = format!("refs/grove/trash/{id}/0");
    env.git(&stranger, &["update-ref", &kept, &oid]);
    edit_record(&e, |v| {
        v["repos"][0]["source"] = s(&stranger).into();
        v["repos"][0]["tip"] = oid.clone().into();
        v["workspace"]["repos"][0]["source_repo"] = s(&stranger).into();
    });
    env.gw(&["trash", "empty", "--yes"]).success();
    assert_eq!(env.git(&stranger, &["rev-parse", &kept]), oid, "left alone");
}

/// `gw undo` restores the workspace deleted last, even within the same second.
#[test]
fn undo_takes_the_last_delete_within_a_second() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("zeta", "zeta", "api");
    env.create("alpha", "alpha", "api");
    env.gw(&["delete", "zeta"]).success();
    env.gw(&["delete", "alpha"]).success();
    let ctx = env.gw(&["context", "--format", "json"]).success().result();
    assert_eq!(ctx["trash"]["newest"], "alpha");
    env.gw(&["undo"]).success();
    assert_eq!(env.workspace_names(), ["alpha"]);
}

/// A branch the main worktree has checked out now is checked out elsewhere.
#[test]
fn a_branch_the_main_worktree_has_checked_out_is_a_conflict() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat/x", "api");
    env.commit(&env.ws("feat").join("api"), "u.txt", "u\n", "u");
    env.gw(&["delete", "feat", "--force"]).success();
    let api = env.repos.join("api");
    let kept = env.git(
        &api,
        &["for-each-ref", "--format=%(objectname)", "refs/grove/"],
    );
    let kept = kept.lines().next().unwrap().to_string();
    env.git(&api, &["checkout", "-q", "-b", "feat/x", &kept]);
    let run = env.gw(&["restore", "feat", "--format", "json"]).code(4);
    assert_eq!(run.error_code(), "BRANCH_CONFLICT", "{run}");
}

/// A workspace whose directory was already gone is not said to be kept: there is nothing
/// to bring back.
#[test]
fn a_workspace_whose_directory_is_gone_is_not_said_to_be_kept() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat/x", "api");
    std::fs::remove_dir_all(env.ws("feat")).unwrap();
    let r = env
        .gw(&["delete", "feat", "--force", "--format", "json"])
        .success();
    assert_eq!(r.result()["deleted"][0]["trash"], Value::Null, "{r}");
    let text = env.gw(&["trash", "--format", "json"]).success().result();
    assert_eq!(text["count"], 0);
}

/// A branch the delete kept (its commits were found nowhere else) and someone deleted
/// since comes back from the entry's kept tip, never as an unborn branch.
#[test]
fn a_kept_branch_deleted_since_comes_back_from_the_kept_tip() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat/x", "api");
    env.commit(&env.ws("feat").join("api"), "u.txt", "u\n", "only here");
    let tip = env.git(&env.ws("feat").join("api"), &["rev-parse", "HEAD"]);
    env.gw(&["delete", "feat"]).success();
    let api = env.repos.join("api");
    env.git(&api, &["branch", "-D", "feat/x"]);
    gc_now(&env, &api);
    env.gw(&["restore", "feat"]).success();
    assert_eq!(env.git(&api, &["rev-parse", "feat/x"]), tip);
    assert_eq!(
        env.git(&env.ws("feat").join("api"), &["rev-parse", "HEAD"]),
        tip
    );
}

/// A branch setting written without a value (true to git) comes back true, not empty
/// (which git reads as false).
#[test]
fn a_valueless_branch_setting_comes_back_true() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat", "feat/x", "api");
    let api = env.repos.join("api");
    let config = api.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[branch \"feat/x\"]\n\tflag\n\tdescription = d\n");
    std::fs::write(&config, text).unwrap();
    let read = |env: &TestEnv| {
        env.git_run(&api, &["config", "--type=bool", "branch.feat/x.flag"])
            .stdout
            .trim()
            .to_string()
    };
    assert_eq!(read(&env), "true");
    env.gw(&["delete", "feat"]).success();
    assert_eq!(
        read(&env),
        "",
        "git branch -D took the setting with the branch"
    );
    env.gw(&["restore", "feat"]).success();
    assert_eq!(read(&env), "true");
    assert_eq!(env.git(&api, &["config", "branch.feat/x.description"]), "d");
}

// ---- round two ----

/// A symbolic link inside `workspace/`, named like a worktree, is refused: a restore never
/// takes over what it points at.
#[test]
fn a_symlink_named_like_a_worktree_is_refused() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    env.gw(&["delete", "ws"]).success();
    env.settle_trash();
    env.create("victim", "feat/v", "api");
    let victim = env.ws("victim").join("api");
    std::fs::write(victim.join("s.txt"), "s\n").unwrap();
    env.git(&victim, &["add", "s.txt"]);
    let e = entry(&env);
    std::fs::remove_dir_all(e.join("workspace/api")).unwrap();
    std::os::unix::fs::symlink(&victim, e.join("workspace/api")).unwrap();
    let before = env.snapshot();
    let link = std::fs::read(victim.join(".git")).unwrap();
    let run = env.gw(&["restore", "ws", "--format", "json"]).failure();
    assert_eq!(run.error_code(), "CORRUPT_STATE", "{run}");
    env.assert_unchanged(&before);
    assert_eq!(std::fs::read(victim.join(".git")).unwrap(), link);
    assert!(
        env.git(&victim, &["status", "--porcelain"])
            .contains("A  s.txt")
    );
}

/// A kept registration whose `commondir` names another repository is refused.
#[test]
fn a_kept_registration_of_another_repository_is_refused() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/x", "api");
    env.gw(&["delete", "ws"]).success();
    env.settle_trash();
    let e = entry(&env);
    let web_git = env.repos.join("web/.git");
    std::fs::write(
        e.join("git/0/commondir"),
        format!("{}\n", web_git.display()),
    )
    .unwrap();
    let run = env.gw(&["restore", "ws", "--format", "json"]).failure();
    assert_eq!(run.error_code(), "CORRUPT_STATE", "{run}");
    assert!(!env.ws("ws").exists());
}

/// A workspace whose submodules name its path comes back only where it was.
#[test]
fn a_workspace_with_submodules_comes_back_only_under_its_name() {
    let env = TestEnv::with_repos(&["web", "lib"]);
    let web = env.repos.join("web");
    env.add_submodule(&web, &env.url("lib"), "lib");
    env.create("sm", "f/sm", "web");
    let wt = env.ws("sm").join("web");
    env.git(&wt, &["submodule", "update", "--init", "-q"]);
    std::fs::write(wt.join("lib/wip"), "wip\n").unwrap();
    env.gw(&["delete", "sm", "--force"]).success();
    env.settle_trash();
    let run = env
        .gw(&["restore", "sm", "--as", "sm2", "--format", "json"])
        .code(2);
    assert_eq!(run.error_code(), "USAGE", "{run}");
    assert!(!env.ws("sm2").exists());
    env.gw(&["restore", "sm"]).success();
    assert_eq!(
        std::fs::read_to_string(wt.join("lib/wip")).unwrap(),
        "wip\n"
    );
    env.git(&wt.join("lib"), &["status", "--porcelain"]);
}

/// A workspace one of whose worktrees was already gone comes back with the others.
#[test]
fn a_workspace_missing_a_worktree_comes_back_with_the_others() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/x", "api,web");
    std::fs::write(env.ws("ws").join("api/work.txt"), "precious\n").unwrap();
    std::fs::remove_dir_all(env.ws("ws").join("web")).unwrap();
    env.gw(&["delete", "ws", "--force"]).success();
    env.settle_trash();
    let run = env.gw(&["restore", "ws", "--format", "json"]).success();
    assert!(
        run.json()["warnings"]
            .to_string()
            .contains("already missing"),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(env.ws("ws").join("api/work.txt")).unwrap(),
        "precious\n"
    );
}

/// A worktree that was on another branch than the workspace's: that branch checked out
/// elsewhere is a conflict; deleted since, it is made again from the kept HEAD.
#[test]
fn a_worktree_on_another_branch_comes_back_on_it() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    let wt = env.ws("ws").join("api");
    env.git(&wt, &["checkout", "-q", "-b", "side"]);
    env.commit(&wt, "s.txt", "s\n", "side work");
    let tip = env.git(&wt, &["rev-parse", "HEAD"]);
    env.gw(&["delete", "ws", "--force"]).success();
    env.settle_trash();
    let api = env.repos.join("api");
    env.git(&api, &["checkout", "-q", "side"]);
    let run = env.gw(&["restore", "ws", "--format", "json"]).code(4);
    assert_eq!(run.error_code(), "BRANCH_CONFLICT", "{run}");
    env.git(&api, &["checkout", "-q", "main"]);
    env.git(&api, &["branch", "-D", "side"]);
    gc_now(&env, &api);
    env.gw(&["restore", "ws"]).success();
    assert_eq!(env.git(&wt, &["rev-parse", "HEAD"]), tip);
    assert_eq!(env.git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]), "side");
}

/// A size no file system holds is not a reason to fail: it is summed without overflow.
#[test]
fn an_impossible_size_breaks_no_command() {
    let env = TestEnv::with_repos(&["api"]);
    for n in ["a", "b"] {
        env.create(n, &format!("f/{n}"), "api");
        env.gw(&["delete", n]).success();
    }
    env.settle_trash();
    for e in std::fs::read_dir(env.workspace_dir().join(".trash"))
        .unwrap()
        .flatten()
    {
        std::fs::write(
            e.path().join("size.json"),
            "{\"bytes\":18446744073709551615,\"files\":1}",
        )
        .unwrap();
    }
    env.gw(&["trash", "--format", "json"]).success();
    env.gw(&["context", "--format", "json"]).success();
    env.gw(&["doctor", "--format", "json"]).success();
    env.create("c", "f/c", "api");
}

/// An entry whose delete left its cleanup for `gw doctor --fix` is not "not found": the
/// recovery comes first.
#[test]
fn an_entry_whose_delete_awaits_recovery_says_so() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    std::fs::write(env.ws("ws").join("api/wip"), "wip\n").unwrap();
    let lock = env.repos.join("api/.git/refs/heads/feat/x.lock");
    std::fs::write(&lock, "").unwrap();
    let id = env.delete_into_trash("ws");
    for args in [vec!["restore", id.as_str()], vec!["undo"]] {
        let mut argv = args.clone();
        argv.extend(["--format", "json"]);
        let run = env.gw(&argv).code(5);
        assert_eq!(run.error_code(), "RECOVERY_PENDING", "{run}");
    }
    std::fs::remove_file(&lock).unwrap();
    env.gw(&["doctor", "--fix"]).success();
    env.gw(&["restore", &id]).success();
    assert_eq!(
        std::fs::read_to_string(env.ws("ws").join("api/wip")).unwrap(),
        "wip\n"
    );
}

/// Staged content of a worktree in the middle of a merge with conflicts survives a gc.
#[test]
fn staged_content_mid_merge_survives_a_gc() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("mm", "f/mm", "api");
    let wt = env.ws("mm").join("api");
    env.commit(&wt, "f", "ours\n", "ours");
    env.git(&wt, &["branch", "t", "HEAD~1"]);
    env.git(&wt, &["checkout", "-q", "t"]);
    env.commit(&wt, "f", "theirs\n", "theirs");
    env.git(&wt, &["checkout", "-q", "f/mm"]);
    let merge = env.git_run(&wt, &["merge", "t"]);
    assert_ne!(merge.status, 0, "a conflict: {merge}");
    std::fs::write(wt.join("g"), "precious\n").unwrap();
    env.git(&wt, &["add", "g"]);
    let before = env.git(&wt, &["status", "--porcelain=v2"]);
    env.gw(&["delete", "mm", "--force"]).success();
    env.settle_trash();
    gc_now(&env, &env.repos.join("api"));
    env.gw(&["restore", "mm"]).success();
    assert_eq!(env.git(&wt, &["show", ":g"]), "precious");
    assert_eq!(env.git(&wt, &["status", "--porcelain=v2"]), before);
}

/// Worktree links written relative (git ≥ 2.48's `worktree.useRelativePaths`) are read as
/// the places they name: a delete finishes, and its entry comes back.
#[test]
fn relative_worktree_links_are_followed() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    let wt = env.ws("ws").join("api");
    let admin = env.repos.join("api/.git/worktrees/api");
    let rel = |from: &Path, to: &Path| {
        let out = std::process::Command::new("realpath")
            .args(["--relative-to", s(from), s(to)])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", rel(&wt, &admin))).unwrap();
    // The administrative side is written relative only by a git that reads it so (2.48 on):
    // an older one no longer knows the worktree, and neither can grove's git commands.
    let version = env.git(&env.repos.join("api"), &["version"]);
    let (major, minor) = parse_git_version(&version);
    if (major, minor) >= (2, 48) {
        std::fs::write(
            admin.join("gitdir"),
            format!("{}\n", rel(&admin, &wt.join(".git"))),
        )
        .unwrap();
    } else {
        eprintln!("{version}: only the worktree's .git is written relative");
    }
    env.gw(&["status", "ws"]).success();
    let r = env.gw(&["delete", "ws", "--format", "json"]).success();
    let warnings = r.json()["warnings"].as_array().cloned().unwrap_or_default();
    assert!(warnings.is_empty(), "{r}");
    env.settle_trash();
    env.gw(&["restore", "ws"]).success();
    env.git(&wt, &["status", "--porcelain"]);
}

/// Nothing prompts in machine mode: erasing the trash for good needs --yes there.
#[test]
fn emptying_the_trash_needs_yes_without_a_person() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("a", "f/a", "api");
    env.gw(&["delete", "a"]).success();
    env.settle_trash();
    let run = env.gw(&["trash", "empty", "--format", "json"]).code(2);
    assert_eq!(run.error_code(), "USAGE", "{run}");
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--yes")
    );
    env.gw(&["trash", "empty"]).code(2);
    let listed = env.gw(&["trash", "--format", "json"]).success().result();
    assert_eq!(listed["count"], 1);
    let action = &env.gw(&["trash", "--format", "json"]).success().json()["next_actions"][1];
    assert_eq!(
        action["argv"],
        serde_json::json!(["gw", "trash", "empty", "--yes", "--format", "json"])
    );
}

/// An entry holding nothing but a record's temporary file (a delete killed while writing
/// it) is leftover trash doctor removes.
#[test]
fn an_entry_holding_only_a_temporary_record_is_removed_by_doctor() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    let leftover = env.workspace_dir().join(".trash/ws-1234");
    std::fs::create_dir_all(&leftover).unwrap();
    std::fs::write(leftover.join(".trash.json.Ab12.tmp"), "{").unwrap();
    let found = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(found["issues"][0]["kind"], "leftover_trash", "{found:#}");
    assert_eq!(found["issues"][0]["fixable"], true, "{found:#}");
    env.gw(&["doctor", "--fix"]).success();
    assert!(!leftover.exists());
}

/// The way out of a taken name is a name gw takes, even for the longest names.
#[test]
fn the_suggested_name_fits() {
    let env = TestEnv::with_repos(&["api"]);
    let long = "n".repeat(250);
    env.create(&long, "f/long", "api");
    env.gw(&["delete", &long]).success();
    env.create(&long, "f/long2", "api");
    let run = env.gw(&["restore", &long, "--format", "json"]).code(4);
    let argv: Vec<String> = run.json()["next_actions"][0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let argv: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
    env.gw(&argv).success();
}

/// `git version 2.47.3` → (2, 47).
fn parse_git_version(v: &str) -> (u32, u32) {
    let mut parts = v
        .trim()
        .trim_start_matches("git version ")
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}
