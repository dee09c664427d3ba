//! `gw status`: live branch (switched, detached), dirty worktrees, ahead/behind, and the
//! workspace inferred from the current directory.

use e2e::audit::Kind;
use e2e::{TestEnv, repo_result, s};

/// The table row of `repo`, split into cells.
fn row(table: &str, repo: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(repo))
        .unwrap_or_else(|| panic!("no row for {repo}:\n{table}"));
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn clean_dirty_switched_and_detached() {
    let env = TestEnv::with_repos(&["api", "web", "cli"]);
    env.create("ws", "feat/x", "api,web,cli");
    let ws = env.ws("ws");

    let clean = env
        .gw(&["status", "ws", "--format", "json"])
        .success()
        .result();
    assert_eq!(clean["workspace"], "ws");
    for r in clean["repos"].as_array().unwrap() {
        assert_eq!(r["state"], "clean", "{r}");
        assert_eq!(r["branch"], "feat/x");
        assert_eq!(r["detached"], false);
        assert_eq!(r["ahead"], 0);
        assert_eq!(r["behind"], 0);
        assert_eq!(r["base_branch"], "origin/main");
    }

    // api: dirty (one new file, one modified file).
    std::fs::write(ws.join("api/new.txt"), "new\n").unwrap();
    std::fs::write(ws.join("api/README.md"), "changed\n").unwrap();
    // web: switched to another branch.
    env.git(&ws.join("web"), &["checkout", "-q", "-b", "elsewhere"]);
    // cli: detached HEAD.
    env.git(&ws.join("cli"), &["checkout", "-q", "--detach"]);

    let r = env
        .gw(&["status", "ws", "--format", "json"])
        .success()
        .result();
    let api = repo_result(&r, "api");
    assert_eq!(api["state"], "dirty");
    assert_eq!(api["changed"], 2);
    assert_eq!(api["untracked"], 1);
    assert_eq!(api["modified"], 1);
    let web = repo_result(&r, "web");
    assert_eq!(
        web["branch"], "elsewhere",
        "the live branch, not the recorded one"
    );
    assert_eq!(web["recorded_branch"], "feat/x");
    assert_eq!(web["state"], "clean");
    let cli = repo_result(&r, "cli");
    assert_eq!(cli["branch"], serde_json::Value::Null);
    assert_eq!(cli["detached"], true);
    assert_eq!(cli["recorded_branch"], "feat/x");

    let table = env.gw(&["status", "ws"]).success().stdout;
    assert!(
        table.starts_with(&format!("Workspace: ws  ({})", s(&ws))),
        "{table}"
    );
    assert_eq!(row(&table, "api")[3], "2 changed");
    assert_eq!(row(&table, "web")[1], "elsewhere");
    assert_eq!(row(&table, "cli")[1], "(detached)");
    assert_eq!(row(&table, "cli")[3], "clean");

    // The Go grove's --json shape: branch "" when detached, status the short text.
    let legacy = env.gw(&["status", "ws", "--json"]).success().json();
    assert_eq!(legacy["workspace"], "ws");
    let lrepo = |n: &str| {
        legacy["repos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["repo"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(lrepo("cli")["branch"], "");
    assert_eq!(lrepo("web")["branch"], "elsewhere");
    assert_eq!(lrepo("api")["changed"], 2);
    assert!(
        lrepo("api")["status"]
            .as_str()
            .unwrap()
            .contains("?? new.txt"),
        "{legacy}"
    );
    assert_eq!(lrepo("web")["status"], "clean");
    assert_eq!(lrepo("web")["ahead"], "0", "the Go grove's strings");

    let tsv = env.gw(&["status", "ws", "-o", "tsv"]).success().stdout;
    assert_eq!(
        tsv.lines().next(),
        Some("WORKSPACE\tREPO\tPATH\tBRANCH\tAHEAD\tBEHIND\tCHANGED\tSTATUS")
    );
    assert!(
        tsv.contains(&format!(
            "ws\tapi\t{}\tfeat/x\t0\t0\t2\t2 changed",
            s(&ws.join("api"))
        )),
        "{tsv}"
    );
    let jsonl = env.gw(&["status", "ws", "-o", "jsonl"]).success().stdout;
    assert_eq!(jsonl.lines().count(), 3);
    assert_eq!(
        env.gw(&["status", "ws", "-o", "name"]).success().stdout,
        "api\nweb\ncli\n"
    );
    // The test itself put web on `elsewhere` and detached cli; status changes nothing, so
    // exactly those two disagreements remain.
    env.assert_git_agrees_with_state_except(&[
        (Kind::BranchMismatch, "ws/web"),
        (Kind::BranchMismatch, "ws/cli"),
    ]);
}

#[test]
fn ahead_after_a_local_commit_and_behind_after_an_upstream_push() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    let wt = env.ws("ws").join("api");

    env.commit(&wt, "local.txt", "local\n", "local work");
    let r = env
        .gw(&["status", "ws", "--format", "json"])
        .success()
        .result();
    assert_eq!(
        (
            r["repos"][0]["ahead"].clone(),
            r["repos"][0]["behind"].clone()
        ),
        (1.into(), 0.into())
    );

    env.push_upstream("api", "main", "upstream.txt", "upstream\n");
    // Nothing fetched yet: status never touches the network.
    let r = env
        .gw(&["status", "ws", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["repos"][0]["behind"], 0);
    env.git(&wt, &["fetch", "-q"]);
    let r = env
        .gw(&["status", "ws", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["repos"][0]["ahead"], 1);
    assert_eq!(r["repos"][0]["behind"], 1);
    let table = env.gw(&["status", "ws"]).success().stdout;
    assert_eq!(row(&table, "api")[2], "1↑ 1↓");
    env.assert_git_agrees_with_state();
}

#[test]
fn name_is_inferred_from_the_current_directory_deepest_wins() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("outer", "outer", "api");
    // A second workspace nested inside the first one's directory.
    let nested_dir = env.ws("outer").join("nested");
    // (`config.toml` has no tables yet, so an appended key is a top-level key.)
    env.append_config(&format!("workspace_dir = \"{}\"\n", s(&nested_dir)));
    env.create("inner", "inner", "web");
    assert!(nested_dir.join("inner/web").is_dir());

    let sub = env.ws("outer").join("api/src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let from = |dir: &std::path::Path| {
        env.gw_in(dir, &["status", "--format", "json"])
            .success()
            .result()["workspace"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(from(&env.ws("outer")), "outer");
    assert_eq!(from(&sub), "outer", "from a subdirectory of a worktree");
    assert_eq!(from(&nested_dir.join("inner")), "inner");
    assert_eq!(from(&nested_dir.join("inner/web")), "inner", "deepest wins");
    let text = env.gw_in(&sub, &["status"]).success().stdout;
    assert!(text.starts_with("Workspace: outer"), "{text}");

    let outside = env.gw(&["status", "--format", "json"]).code(3);
    assert_eq!(outside.error_code(), "WORKSPACE_NOT_FOUND");
    env.assert_git_agrees_with_state();
}

/// `git status --porcelain --no-renames` of `dir` as gw reports it: `XY path` lines,
/// sorted, every kind of conflict as `UU` (gw does not say which side did what).
fn git_short_status(env: &TestEnv, dir: &std::path::Path, untracked: &str) -> Vec<String> {
    let out = env.git(
        dir,
        &[
            "status",
            "--porcelain",
            "--no-renames",
            &format!("--untracked-files={untracked}"),
        ],
    );
    let mut lines: Vec<String> = out
        .lines()
        .map(|l| {
            let (xy, path) = l.split_at(2);
            let xy = if matches!(xy, "DD" | "AU" | "UD" | "UA" | "DU" | "AA" | "UU") {
                "UU"
            } else {
                xy
            };
            format!("{xy}{path}")
        })
        .collect();
    lines.sort_by(|a, b| a[3..].cmp(&b[3..]));
    lines
}

/// The status is the same whichever way it is computed — tracked files compared on one
/// thread or several, HEAD compared with the index beside them or skipped because the
/// index's cache tree proves it unchanged, git asked instead of gix (sparse index,
/// file-system monitor) — and it is what `git status` says, on worktrees holding every
/// kind of change.
#[test]
fn status_is_the_same_on_one_thread_or_many_and_agrees_with_git() {
    let env = TestEnv::with_repos(&["big", "clean", "subs", "cone", "sparseidx", "monitored"]);
    // Enough files that the comparison is split into chunks over several threads.
    let big = env.repos.join("big");
    for i in 0..3000 {
        let dir = big.join(format!("pkg{:02}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i:04}.txt")), format!("{i}\n")).unwrap();
    }
    std::fs::write(big.join(".gitignore"), "*.log\nbuild/\n").unwrap();
    std::fs::write(big.join("both.txt"), "base\n").unwrap();
    env.git(&big, &["add", "."]);
    env.git(&big, &["commit", "-q", "-m", "files"]);
    env.git(&big, &["push", "-q", "origin", "main"]);
    // A submodule.
    env.add_submodule(&env.repos.join("subs"), &env.url("clean"), "vendor/clean");
    // A repository large enough that, with a file-system monitor, git reads it.
    let monitored_src = env.repos.join("monitored");
    for i in 0..20_000 {
        let dir = monitored_src.join(format!("m{:03}", i / 200));
        if i % 200 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(dir.join(format!("{i}.txt")), "m\n").unwrap();
    }
    env.git(&monitored_src, &["add", "."]);
    env.git(&monitored_src, &["commit", "-q", "-m", "many"]);
    env.git(&monitored_src, &["push", "-q", "origin", "main"]);
    for name in ["cone", "sparseidx"] {
        let repo = env.repos.join(name);
        for d in ["keep", "drop"] {
            std::fs::create_dir_all(repo.join(d)).unwrap();
            std::fs::write(repo.join(d).join("a.txt"), "a\n").unwrap();
            std::fs::write(repo.join(d).join("b.txt"), "b\n").unwrap();
        }
        env.git(&repo, &["add", "."]);
        env.git(&repo, &["commit", "-q", "-m", "dirs"]);
        env.git(&repo, &["push", "-q", "origin", "main"]);
    }
    env.create("ws", "feat/eq", "big,clean,subs,cone,sparseidx,monitored");
    let ws = env.ws("ws");

    // big: modified, staged, deleted (staged and not), renamed (staged), untracked files
    // and a directory of them, ignored files, a type change, and a conflict.
    let wt = ws.join("big");
    let conflict_base = env.git(&wt, &["rev-parse", "HEAD"]);
    env.commit(&wt, "both.txt", "ours\n", "ours");
    env.git(&wt, &["switch", "-q", "-c", "theirs", &conflict_base]);
    env.commit(&wt, "both.txt", "theirs\n", "theirs");
    env.git(&wt, &["switch", "-q", "feat/eq"]);
    assert_ne!(env.git_run(&wt, &["merge", "-q", "theirs"]).status, 0);
    std::fs::write(wt.join("pkg00/f0000.txt"), "modified\n").unwrap();
    std::fs::write(wt.join("pkg01/f0100.txt"), "staged\n").unwrap();
    env.git(&wt, &["add", "pkg01/f0100.txt"]);
    std::fs::write(wt.join("pkg01/f0101.txt"), "staged, then modified\n").unwrap();
    env.git(&wt, &["add", "pkg01/f0101.txt"]);
    std::fs::write(wt.join("pkg01/f0101.txt"), "and modified again\n").unwrap();
    std::fs::remove_file(wt.join("pkg02/f0200.txt")).unwrap();
    env.git(&wt, &["rm", "-q", "pkg02/f0201.txt"]);
    env.git(&wt, &["mv", "pkg03/f0300.txt", "pkg03/renamed.txt"]);
    std::fs::write(wt.join("new.txt"), "new\n").unwrap();
    std::fs::create_dir_all(wt.join("newdir/deeper")).unwrap();
    std::fs::write(wt.join("newdir/deeper/x.txt"), "x\n").unwrap();
    std::fs::write(wt.join("pkg04/debug.log"), "ignored\n").unwrap();
    std::fs::create_dir_all(wt.join("build")).unwrap();
    std::fs::write(wt.join("build/out.bin"), "ignored\n").unwrap();
    std::fs::remove_file(wt.join("pkg05/f0500.txt")).unwrap();
    std::os::unix::fs::symlink("f0501.txt", wt.join("pkg05/f0500.txt")).unwrap();
    env.git(&wt, &["add", "-N", "new.txt"]);
    // Deleted from the index, still on disk: staged as deleted, and untracked.
    env.git(&wt, &["rm", "-q", "--cached", "pkg06/f0600.txt"]);

    // clean: nothing changed, only files touched (the index's stat data is stale, its
    // cache tree valid).
    let clean = ws.join("clean");
    std::fs::write(clean.join("README.md"), "# clean\n").unwrap();
    std::fs::write(clean.join("untracked.txt"), "u\n").unwrap();

    // subs: the submodule checked out, with a new commit in it.
    let subs_wt = ws.join("subs");
    env.git(&subs_wt, &["submodule", "update", "-q", "--init"]);
    env.commit(&subs_wt.join("vendor/clean"), "more.txt", "more\n", "more");

    // cone: a sparse checkout without a sparse index (gix reads it); sparseidx: with one
    // (git reads it).
    let cone = ws.join("cone");
    env.git(&cone, &["sparse-checkout", "set", "--cone", "keep"]);
    std::fs::write(cone.join("keep/a.txt"), "changed\n").unwrap();
    // An edit outside the patterns: git compares the file, so must gw (a delete would lose it).
    std::fs::create_dir_all(cone.join("drop")).unwrap();
    std::fs::write(cone.join("drop/b.txt"), "edited outside the cone\n").unwrap();
    let sparseidx = ws.join("sparseidx");
    env.git(
        &sparseidx,
        &["sparse-checkout", "set", "--cone", "--sparse-index", "keep"],
    );
    std::fs::write(sparseidx.join("keep/b.txt"), "changed\n").unwrap();
    std::fs::write(sparseidx.join("keep/c.txt"), "new\n").unwrap();

    // monitored: a file-system monitor (a hook that notes it was asked, and says everything
    // may have changed).
    let monitored = ws.join("monitored");
    let hook = env.root.join("fsmonitor-hook");
    let asked = env.root.join("fsmonitor-asked");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\ntouch '{}'\nprintf 'token\\0/\\0'\n", s(&asked)),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.git(
        &monitored,
        &["config", "core.fsmonitor", hook.to_str().unwrap()],
    );
    std::fs::write(monitored.join("README.md"), "changed\n").unwrap();
    std::fs::write(monitored.join("new.txt"), "new\n").unwrap();

    let status = |threads: &str| {
        env.gw_env(
            &env.root,
            &["status", "ws", "--format", "json"],
            &[("GW_THREADS", threads)],
        )
        .success()
        .result()
    };
    let one = status("1");
    assert!(
        asked.exists(),
        "git, asked to read the monitored repository, runs its fsmonitor hook"
    );
    for threads in ["2", "4", "16"] {
        assert_eq!(
            status(threads),
            one,
            "GW_THREADS={threads} gave another status than GW_THREADS=1"
        );
    }
    for name in ["big", "clean", "subs", "cone", "sparseidx", "monitored"] {
        let r = repo_result(&one, name);
        let changes: Vec<String> = r["changes"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no changes in {r}"))
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            changes,
            git_short_status(&env, &ws.join(name), "normal"),
            "{name}: gw and git disagree"
        );
    }
    let big_changes = repo_result(&one, "big")["changes"].to_string();
    for expected in [
        "UU both.txt",
        " M pkg00",
        "D  pkg02",
        " T pkg05",
        "?? newdir/",
        "D  pkg06/f0600.txt",
        "?? pkg06/f0600.txt",
    ] {
        assert!(
            big_changes.contains(expected),
            "{expected} in {big_changes}"
        );
    }
    assert!(!big_changes.contains("build/") && !big_changes.contains(".log"));
    assert_eq!(
        repo_result(&one, "clean")["changes"].to_string(),
        r#"["?? untracked.txt"]"#
    );
    assert_eq!(
        repo_result(&one, "subs")["modified"],
        1,
        "the submodule's new commit"
    );
    assert!(
        repo_result(&one, "cone")["changes"]
            .to_string()
            .contains(" M drop/b.txt"),
        "{}",
        repo_result(&one, "cone")
    );

    // With the monitor off and git's untracked cache on, git reads the large repository
    // still: only git writes the cache (the index's `UNTR` extension).
    env.git(&monitored, &["config", "--unset", "core.fsmonitor"]);
    env.git(&monitored, &["config", "core.untrackedCache", "true"]);
    let index =
        std::path::PathBuf::from(env.git(&monitored, &["rev-parse", "--git-path", "index"]));
    let index = if index.is_absolute() {
        index
    } else {
        monitored.join(index)
    };
    let has_untracked_cache = || {
        std::fs::read(&index)
            .unwrap()
            .windows(4)
            .any(|w| w == b"UNTR")
    };
    assert!(!has_untracked_cache());
    let r = status("4");
    assert!(
        has_untracked_cache(),
        "git, asked to read it, wrote its untracked cache"
    );
    assert_eq!(repo_result(&r, "monitored"), repo_result(&one, "monitored"));

    // `status.showUntrackedFiles` is honoured as git honours it.
    for (setting, git_mode) in [("no", "no"), ("all", "all")] {
        env.git(&wt, &["config", "status.showUntrackedFiles", setting]);
        for threads in ["1", "4"] {
            let r = env
                .gw_env(
                    &env.root,
                    &["status", "ws", "--format", "json"],
                    &[("GW_THREADS", threads)],
                )
                .success()
                .result();
            let changes: Vec<String> = repo_result(&r, "big")["changes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().to_string())
                .collect();
            assert_eq!(
                changes,
                git_short_status(&env, &wt, git_mode),
                "status.showUntrackedFiles={setting}, GW_THREADS={threads}"
            );
        }
    }
}
