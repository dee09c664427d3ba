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
