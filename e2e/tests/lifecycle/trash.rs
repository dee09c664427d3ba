//! Undo a delete (issue 27): `gw delete`, `gw prune` and `gw create --replace` keep what
//! they remove in the trash, and `gw restore` / `gw undo` bring it back exactly as it was —
//! every file with its mode, each worktree's index (staged and unstaged kept apart), the
//! branches at their tips with their settings, the state entry. Conflicts are refused and
//! change nothing; retention purges on the next mutating command.

use std::path::{Path, PathBuf};

use e2e::{TestEnv, s};
use serde_json::Value;

/// Every entry below `dir` (`.git` files included, their content too): relative path,
/// kind and permission bits, and the bytes (a link's target), sorted.
fn tree_bytes(dir: &Path) -> Vec<(String, u32, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, u32, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let bytes = if meta.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
                    .into_bytes()
            } else if meta.is_file() {
                std::fs::read(&path).unwrap()
            } else {
                Vec::new()
            };
            out.push((rel, meta.mode(), bytes));
            if meta.is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// What git says of every worktree of `ws`, and of every repository's branches: the
/// porcelain v2 status (staged and unstaged apart, untracked and ignored files), HEAD, the
/// reflog of HEAD, every branch with its tip and `branch.*` settings.
fn git_view(env: &TestEnv, ws: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for r in ws["repos"].as_array().unwrap() {
        let wt = PathBuf::from(r["worktree_path"].as_str().unwrap());
        let source = PathBuf::from(r["source_repo"].as_str().unwrap());
        out.push(format!(
            "{}: status\n{}",
            r["repo_name"],
            env.git(
                &wt,
                &[
                    "status",
                    "--porcelain=v2",
                    "--branch",
                    "--ignored",
                    "--untracked-files=all"
                ]
            )
        ));
        out.push(format!("head {}", env.git(&wt, &["rev-parse", "HEAD"])));
        out.push(format!(
            "reflog {}",
            env.git(&wt, &["reflog", "--format=%H %gs", "HEAD"])
        ));
        out.push(format!(
            "branches {}",
            env.git(
                &source,
                &[
                    "for-each-ref",
                    "--format=%(refname) %(objectname)",
                    "refs/heads"
                ]
            )
        ));
        out.push(format!(
            "config {}",
            env.git_run(&source, &["config", "--get-regexp", "^branch\\."])
                .stdout
        ));
    }
    out
}

fn state_entry(env: &TestEnv, name: &str) -> Value {
    env.state()
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no workspace {name} in state"))
}

/// The trash entries (as `gw trash --format json` lists them), newest first.
fn trash(env: &TestEnv) -> Vec<Value> {
    env.gw(&["trash", "--format", "json"]).success().result()["entries"]
        .as_array()
        .unwrap()
        .clone()
}

/// A workspace of three repositories holding every kind of work: staged, unstaged,
/// untracked, ignored and executable files, a symlink, a commit found nowhere else, a file
/// outside any worktree, a branch grove did not create (`svc`), and branch settings.
fn busy_workspace(env: &TestEnv) {
    env.ignore("api", "*.log");
    let svc = env.repos.join("svc");
    env.git(&svc, &["branch", "feat/x"]);
    env.create("ws", "feat/x", "api,web,svc");
    let ws = env.ws("ws");
    let api = ws.join("api");
    env.git(
        &api,
        &["config", "branch.feat/x.description", "the login work"],
    );
    env.git(&api, &["branch", "--set-upstream-to=origin/main"]);
    std::fs::write(api.join("README.md"), "# api\nstaged\n").unwrap();
    env.git(&api, &["add", "README.md"]);
    std::fs::write(api.join("README.md"), "# api\nstaged\nand not\n").unwrap();
    std::fs::write(api.join("new.txt"), "untracked\n").unwrap();
    std::fs::write(api.join("debug.log"), "ignored\n").unwrap();
    e2e::write_executable(&api.join("run.sh"), "#!/bin/sh\necho hi\n");
    std::os::unix::fs::symlink("README.md", api.join("link")).unwrap();
    let web = ws.join("web");
    env.commit(
        &web,
        "only-here.txt",
        "unique\n",
        "a commit found nowhere else",
    );
    std::fs::write(ws.join("notes.md"), "outside any worktree\n").unwrap();
    std::fs::write(ws.join("svc/wip.txt"), "svc work\n").unwrap();
}

#[test]
fn a_forced_delete_comes_back_exactly_as_it_was() {
    let env = TestEnv::with_repos(&["api", "web", "svc"]);
    busy_workspace(&env);
    let entry = state_entry(&env, "ws");
    let files = tree_bytes(&env.ws("ws"));
    let git = git_view(&env, &entry);
    let (api, web, svc) = (
        env.repos.join("api"),
        env.repos.join("web"),
        env.repos.join("svc"),
    );

    // Refused without --force, as always: the trash is a last line of defence, not a reason
    // to discard work silently.
    assert_eq!(
        env.gw(&["delete", "ws", "--format", "json"])
            .code(4)
            .error_code(),
        "WORKTREE_DIRTY"
    );
    let deleted = env
        .gw(&["delete", "ws", "--force", "--format", "json"])
        .success();
    let id = deleted.result()["deleted"][0]["trash"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        deleted.json()["next_actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["command"] == format!("gw restore {id} --format json")),
        "{deleted}"
    );
    assert!(!env.ws("ws").exists());
    assert!(!env.has_branch(&api, "feat/x") && !env.has_branch(&web, "feat/x"));
    assert!(
        env.has_branch(&svc, "feat/x"),
        "a branch grove did not create stays"
    );
    assert_eq!(env.workspace_names(), Vec::<String>::new());
    // The deleted branches' tips stay reachable, so git's gc keeps the unique commit.
    let kept = env.git(
        &web,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/grove/trash/",
        ],
    );
    let branch_ref = format!(
        "refs/grove/trash/{}/1 {}",
        id.rsplit_once('-').unwrap().1,
        git_tip(&git, "web")
    );
    assert!(
        kept.lines().any(|l| l == branch_ref),
        "web's tip is kept: {kept}"
    );
    env.settle_trash();
    env.assert_world_clean();

    let listed = trash(&env);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id);
    assert_eq!(listed[0]["name"], "ws");
    assert_eq!(listed[0]["reason"], "delete");
    assert!(
        listed[0]["bytes"].as_u64().unwrap() > 0,
        "measured: {:#}",
        listed[0]
    );
    let text = env.gw(&["trash"]).success();
    assert!(
        text.stdout.contains("ws") && text.stdout.contains("feat/x (deleted)"),
        "{text}"
    );

    let run = env.gw(&["restore", "ws"]).success();
    assert!(run.stderr.contains("Workspace ws restored"), "{run}");
    assert_eq!(
        tree_bytes(&env.ws("ws")),
        files,
        "every file, mode and byte is back"
    );
    assert_eq!(git_view(&env, &entry), git, "git sees what it saw before");
    assert_eq!(state_entry(&env, "ws"), entry, "the same state entry");
    assert!(trash(&env).is_empty());
    assert_eq!(
        env.git(&web, &["for-each-ref", "refs/grove/"]),
        "",
        "the kept tips went with the entry"
    );
    // (notes.md, outside any worktree, is the test's own stray file.)
    env.assert_git_agrees_with_state();
    // It is an ordinary workspace again.
    env.gw(&["status", "ws"]).success();
    env.gw(&["delete", "ws", "--force", "--purge"]).success();
    env.settle_trash();
    assert!(trash(&env).is_empty(), "--purge keeps nothing");
    env.assert_world_clean();
}

/// The tip of `repo`'s `feat/x` in a [`git_view`].
fn git_tip(view: &[String], repo: &str) -> String {
    let i = view
        .iter()
        .position(|l| l.starts_with(&format!("\"{repo}\": status")))
        .unwrap();
    view[i + 3]
        .split_whitespace()
        .skip_while(|w| *w != "refs/heads/feat/x")
        .nth(1)
        .unwrap()
        .to_string()
}

#[test]
fn prune_and_replace_keep_what_they_remove_too() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("old", "feat/old", "api,web");
    std::fs::write(env.ws("old").join("api/ignored-by-nobody.txt"), "x\n").unwrap();
    env.gw(&["delete", "old", "--force"]).success();
    env.create("stale", "feat/stale", "api");
    let stale = state_entry(&env, "stale");
    let files = tree_bytes(&env.ws("stale"));
    env.gw(&["prune", "--min-age", "0h", "--yes"]).success();
    assert!(env.workspace_names().is_empty());

    env.create("ws", "feat/a", "api");
    std::fs::write(env.ws("ws").join("api/a.txt"), "a\n").unwrap();
    let replaced = state_entry(&env, "ws");
    env.gw_in(
        &env.ws("ws").join("api"),
        &[
            "create",
            "ws2",
            "-b",
            "feat/b",
            "-r",
            "web",
            "--replace",
            "--force",
        ],
    )
    .success();
    env.create("ws", "feat/c", "web");
    env.settle_trash();
    let listed = trash(&env);
    let reasons: Vec<(&str, &str)> = listed
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        reasons,
        [("ws", "replace"), ("stale", "prune"), ("old", "delete")],
        "newest first"
    );
    env.assert_world_clean();

    // `ws` is taken by a new workspace of that name: refused, with the way out.
    let refused = env.gw(&["restore", "ws", "--format", "json"]).code(4);
    assert_eq!(refused.error_code(), "WORKSPACE_EXISTS");
    let way = refused.json()["next_actions"][0]["argv"].clone();
    assert_eq!(way[3], "--as", "{refused}");
    let restored = env
        .gw(&["restore", "ws", "--as", "ws-a", "--format", "json"])
        .success()
        .result();
    assert_eq!(restored["name"], "ws-a");
    assert_eq!(restored["deleted_name"], "ws");
    let now = state_entry(&env, "ws-a");
    assert_eq!(now["branch"], replaced["branch"]);
    assert_eq!(
        now["repos"][0]["worktree_path"],
        s(&env.ws("ws-a").join("api"))
    );
    assert_eq!(
        std::fs::read_to_string(env.ws("ws-a").join("api/a.txt")).unwrap(),
        "a\n"
    );
    assert_eq!(
        env.git(&env.ws("ws-a").join("api"), &["status", "--porcelain"]),
        "?? a.txt"
    );

    env.gw(&["restore", "stale"]).success();
    // The same entry, but for its slot: another workspace took slot 0 meanwhile, so it
    // gets a free one (its ports move with it).
    let without_slot = |mut w: Value| {
        w.as_object_mut().unwrap().remove("slot");
        w
    };
    let now = state_entry(&env, "stale");
    assert!(
        now["slot"].is_u64() && now["slot"] != stale["slot"],
        "{now:#}"
    );
    assert_eq!(without_slot(now), without_slot(stale));
    // Every byte but the `.git` link's: `worktrees/api` is another worktree's name now,
    // so the restored registration is `worktrees/api1`, and the link says so.
    let links = |t: Vec<(String, u32, Vec<u8>)>| -> Vec<(String, u32, Vec<u8>)> {
        t.into_iter()
            .map(|(p, m, b)| {
                if p.ends_with(".git") {
                    (p, m, Vec::new())
                } else {
                    (p, m, b)
                }
            })
            .collect()
    };
    assert_eq!(links(tree_bytes(&env.ws("stale"))), links(files));
    let link = std::fs::read_to_string(env.ws("stale").join("api/.git")).unwrap();
    assert!(link.trim_end().ends_with("worktrees/api1"), "{link}");
    assert_eq!(
        env.git(&env.ws("stale").join("api"), &["status", "--porcelain"]),
        ""
    );
    env.assert_world_clean();
}

#[test]
fn conflicts_are_refused_and_leave_the_entry_as_it_was() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/x", "api,web");
    env.gw(&["delete", "ws"]).success();
    env.settle_trash();
    let api = env.repos.join("api");

    // A branch of that name was made again elsewhere.
    env.git(&api, &["branch", "feat/x", "main"]);
    env.git(&api, &["commit", "-q", "--allow-empty", "-m", "moves main"]);
    env.git(&api, &["branch", "-f", "feat/x", "main"]);
    let before = env.snapshot();
    let trash_before = e2e::tree(&env.workspace_dir().join(".trash"), 4);
    let run = env.gw(&["restore", "ws", "--format", "json"]).code(4);
    assert_eq!(run.error_code(), "BRANCH_CONFLICT", "{run}");
    env.assert_unchanged(&before);
    assert_eq!(
        e2e::tree(&env.workspace_dir().join(".trash"), 4),
        trash_before
    );
    env.git(&api, &["branch", "-D", "feat/x"]);

    // Its directory is taken.
    std::fs::create_dir_all(env.ws("ws")).unwrap();
    let run = env.gw(&["restore", "ws", "--format", "json"]).code(4);
    assert_eq!(run.error_code(), "WORKSPACE_EXISTS", "{run}");
    std::fs::remove_dir(env.ws("ws")).unwrap();

    // A source repository is gone.
    let away = env.root.join("away");
    std::fs::rename(env.repos.join("web"), &away).unwrap();
    let run = env.gw(&["restore", "ws", "--format", "json"]).code(3);
    assert_eq!(run.error_code(), "REPO_NOT_FOUND", "{run}");
    let listed = trash(&env);
    assert_eq!(listed[0]["sources_gone"], serde_json::json!(["web"]));
    let ctx = env.gw(&["context", "--format", "json"]).success().result();
    assert_eq!(ctx["trash"]["sources_gone"][0], listed[0]["id"]);
    std::fs::rename(&away, env.repos.join("web")).unwrap();

    // Nothing of it is gone: now it comes back.
    assert_eq!(
        e2e::tree(&env.workspace_dir().join(".trash"), 4),
        trash_before
    );
    env.gw(&["restore", "ws"]).success();
    env.assert_world_clean();
    // Unknown names are not found, with the way to look.
    let run = env.gw(&["restore", "nope", "--format", "json"]).code(3);
    assert_eq!(run.error_code(), "WORKSPACE_NOT_FOUND");
    let run = env.gw(&["undo", "--format", "json"]).code(3);
    assert_eq!(run.error_code(), "WORKSPACE_NOT_FOUND");
}

#[test]
fn undo_restores_the_newest_deletion_as_its_plan_says() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("a", "feat/a", "api");
    env.create("b", "feat/b", "api");
    env.gw(&["delete", "a"]).success();
    env.gw(&["delete", "b"]).success();
    let plan = env
        .gw(&["plan", "undo", "--format", "json"])
        .success()
        .result();
    assert_eq!(plan["kind"], "restore", "{plan:#}");
    assert_eq!(plan["workspace"], "b");
    let actions: Vec<&str> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "restore_branch",
            "restore_from_trash",
            "register_worktree",
            "record_state",
            "remove_trash_entry"
        ]
    );
    // A saved plan applies only while the world is as it was.
    let file = env.root.join("undo.json");
    env.gw(&["plan", "--out", s(&file), "undo"]).success();
    env.gw(&["undo"]).success();
    assert_eq!(env.workspace_names(), ["b"]);
    let run = env.gw(&["apply", s(&file), "--format", "json"]).failure();
    assert!(
        ["STATE_CHANGED", "WORKSPACE_NOT_FOUND", "WORKSPACE_EXISTS"]
            .contains(&run.error_code().as_str()),
        "{run}"
    );
    let file = env.root.join("restore.json");
    env.gw(&["plan", "--out", s(&file), "restore", "a"])
        .success();
    env.gw(&["apply", s(&file)]).success();
    assert_eq!(env.workspace_names(), ["b", "a"]);
    env.assert_world_clean();
}

#[test]
fn retention_purges_on_the_next_mutating_command() {
    let env = TestEnv::with_repos(&["api"]);
    env.append_config("[trash]\nkeep = \"2d\"\n");
    env.create("a", "feat/a", "api");
    env.gw(&["delete", "a"]).success();
    env.settle_trash();
    assert_eq!(trash(&env).len(), 1);
    let api = env.repos.join("api");
    assert_ne!(env.git(&api, &["for-each-ref", "refs/grove/"]), "");

    // Three days later (a fake clock): reading changes nothing, the next change purges.
    let later = rfc3339_in(72 * 3600);
    let root = env.root.clone();
    let at_later = |args: &[&str]| env.gw_env(&root, args, &[("GW_TEST_NOW", later.as_str())]);
    at_later(&["list"]).success();
    at_later(&["doctor", "--fix"]).success();
    assert_eq!(trash(&env).len(), 1, "reads and doctor --fix never purge");
    at_later(&["create", "b", "-b", "feat/b", "-r", "api"]).success();
    env.settle_trash();
    assert!(trash(&env).is_empty());
    assert_eq!(
        env.git(&api, &["for-each-ref", "refs/grove/"]),
        "",
        "its kept tips went"
    );
    assert!(e2e::tree(&env.workspace_dir().join(".trash"), 1).is_empty());
    env.assert_world_clean();

    // Beyond max_size, the oldest go first (sizes measured in the background).
    env.append_config("max_size = \"1GiB\"\n");
    env.create("c", "feat/c", "api");
    env.gw(&["delete", "b"]).success();
    env.gw(&["delete", "c"]).success();
    env.settle_trash();
    assert_eq!(trash(&env).len(), 2);
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(env.config_path(), text.replace("1GiB", "1B")).unwrap();
    env.gw(&["trash", "tidy"]).success();
    let left = trash(&env);
    assert_eq!(left.len(), 1, "over a one-byte cap the older goes");
    assert_eq!(left[0]["name"], "c", "the newest stays whatever its size");
    env.gw(&["trash", "empty", "--yes"]).success();

    // keep = "0": delete erases at once, as --purge does.
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(
        env.config_path(),
        text.replace("keep = \"2d\"", "keep = \"0\""),
    )
    .unwrap();
    env.create("d", "feat/d", "api");
    let r = env
        .gw(&["delete", "d", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["deleted"][0]["trash"], Value::Null);
    env.settle_trash();
    assert!(trash(&env).is_empty());
    env.assert_world_clean();
}

#[test]
fn trash_empty_erases_and_doctor_reports_without_purging() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("a", "feat/a", "api");
    env.gw(&["delete", "a"]).success();
    env.settle_trash();
    let doctor = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(doctor["trash"]["count"], 1, "{doctor:#}");
    assert_eq!(doctor["trash"]["newest"], "a");
    assert_eq!(
        doctor["count"], 0,
        "a retained entry is no issue: {doctor:#}"
    );

    // A kept tip whose entry is gone (a purge killed half way) is an issue doctor fixes.
    let api = env.repos.join("api");
    let main = env.git(&api, &["rev-parse", "main"]);
    env.git(&api, &["update-ref", "refs/grove/trash/123/0", &main]);
    let doctor = env.gw(&["doctor", "--format", "json"]).doctor();
    assert_eq!(
        doctor["issues"][0]["kind"], "orphan_trash_ref",
        "{doctor:#}"
    );
    env.gw(&["doctor", "--fix"]).success();
    let left = env.git(
        &api,
        &["for-each-ref", "--format=%(refname)", "refs/grove/"],
    );
    assert!(
        !left.is_empty() && !left.contains("refs/grove/trash/123/"),
        "only the entry's own references are left: {left}"
    );
    assert_eq!(trash(&env).len(), 1, "doctor --fix never purges the trash");

    let emptied = env
        .gw(&[
            "trash",
            "empty",
            "--yes",
            "--older-than",
            "1d",
            "--format",
            "json",
        ])
        .success();
    assert_eq!(emptied.result()["count"], 0, "not a day old yet");
    // A dry run says what would go, needs no --yes, and erases nothing.
    let dry = env
        .gw(&["trash", "empty", "--dry-run", "--format", "json"])
        .success();
    assert_eq!(dry.result()["count"], 1, "{dry}");
    assert_eq!(dry.result()["dry_run"], true, "{dry}");
    e2e::schema::validate("trash-empty", &dry.result());
    assert_eq!(trash(&env).len(), 1, "a dry run erases nothing");
    let emptied = env
        .gw(&["trash", "empty", "--yes", "--format", "json"])
        .success();
    assert_eq!(emptied.result()["count"], 1);
    assert!(trash(&env).is_empty());
    assert_eq!(env.git(&api, &["for-each-ref", "refs/grove/"]), "");
    assert!(e2e::tree(&env.workspace_dir().join(".trash"), 1).is_empty());
    env.assert_world_clean();
}

/// The time `secs` seconds from now, RFC 3339 in UTC (as `date` writes it).
fn rfc3339_in(secs: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let out = std::process::Command::new("date")
        .args([
            "-u",
            "-d",
            &format!("@{}", now + secs),
            "+%Y-%m-%dT%H:%M:%SZ",
        ])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}
