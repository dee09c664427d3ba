//! `gw list`, `gw ws list`, `gw list -s` and `gw ws show`, in every output form.

use e2e::{TestEnv, s};

fn header(table: &str) -> Vec<String> {
    table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn list_in_every_form() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let empty = env.gw(&["list"]).success();
    assert!(empty.stdout.is_empty(), "{empty}");
    assert!(empty.stderr.contains("No workspaces"), "{empty}");
    assert_eq!(
        env.gw(&["list", "--json"]).success().json(),
        serde_json::json!([])
    );

    env.create("one", "feat/one", "api,web");
    env.create("two", "feat/two", "web");

    let table = env.gw(&["list"]).success().stdout;
    assert_eq!(header(&table), ["Name", "Branch", "Repos", "Created"]);
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap()
        .split("  ")
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(row[0].trim(), "one");
    assert_eq!(row[1].trim(), "feat/one");
    assert_eq!(row[2].trim(), "api, web");
    assert_eq!(
        row[3].trim().len(),
        10,
        "the date, cut to YYYY-MM-DD: {table}"
    );
    assert_eq!(env.gw(&["ws", "list"]).success().stdout, table);
    assert_eq!(env.gw(&["ls"]).success().stdout, table);

    // --json: the bare state array, exactly as stored.
    let json = env.gw(&["list", "--json"]).success().json();
    assert_eq!(json, env.state());
    assert_eq!(env.gw(&["list", "-j"]).success().json(), json);
    assert_eq!(env.gw(&["ws", "list", "-o", "json"]).success().json(), json);

    let jsonl = env.gw(&["list", "-o", "jsonl"]).success().stdout;
    let lines: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, json.as_array().unwrap().clone());

    let tsv = env.gw(&["list", "-o", "tsv"]).success().stdout;
    let mut tsv_lines = tsv.lines();
    assert_eq!(tsv_lines.next(), Some("NAME\tBRANCH\tREPOS\tCREATED"));
    let created = json[0]["created_at"].as_str().unwrap();
    assert_eq!(
        tsv_lines.next().unwrap(),
        format!("one\tfeat/one\tapi,web\t{created}")
    );

    assert_eq!(
        env.gw(&["list", "-o", "name"]).success().stdout,
        "one\ntwo\n"
    );
    assert_eq!(
        env.gw(&["list", "-o", "path"]).success().stdout,
        format!("{}\n{}\n", s(&env.ws("one")), s(&env.ws("two")))
    );

    // Machine mode shows the same workspaces, in the contract's shape: RFC 3339 UTC times,
    // `repo`/`path` per repository and counts beside lists.
    let result = env
        .gw(&["list", "--format", "json"])
        .success()
        .envelope("list")["result"]
        .clone();
    assert_eq!(result["count"], 2);
    for (view, recorded) in result["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .zip(json.as_array().unwrap())
    {
        assert_eq!(view["name"], recorded["name"]);
        assert_eq!(view["path"], recorded["path"]);
        assert_eq!(view["branch"], recorded["branch"]);
        assert!(
            view["created_at"].as_str().unwrap().ends_with('Z'),
            "{view}"
        );
        assert_eq!(
            view["repo_count"],
            recorded["repos"].as_array().unwrap().len()
        );
        for (r, rec) in view["repos"]
            .as_array()
            .unwrap()
            .iter()
            .zip(recorded["repos"].as_array().unwrap())
        {
            assert_eq!(r["repo"], rec["repo_name"]);
            assert_eq!(r["path"], rec["worktree_path"]);
            assert_eq!(r["source_repo"], rec["source_repo"]);
        }
    }
    env.assert_git_agrees_with_state();
}

#[test]
fn list_with_status_summaries() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("one", "feat/one", "api,web");
    env.create("two", "feat/two", "web");
    std::fs::write(env.ws("one").join("web/new.txt"), "x").unwrap();

    let table = env.gw(&["list", "-s"]).success().stdout;
    assert_eq!(header(&table), ["Name", "Branch", "Repos", "Status"]);
    let one = table.lines().find(|l| l.starts_with("one")).unwrap();
    assert!(one.contains("1 clean, 1 modified"), "{table}");
    let two = table.lines().find(|l| l.starts_with("two")).unwrap();
    assert!(two.ends_with("1 clean"), "{table}");
    assert_eq!(env.gw(&["ws", "list", "--status"]).success().stdout, table);

    let json = env.gw(&["list", "-s", "--json"]).success().json();
    assert_eq!(
        json[0],
        serde_json::json!({
            "name": "one",
            "branch": "feat/one",
            "repos": 2,
            "status": "1 clean, 1 modified",
            "path": s(&env.ws("one")),
        })
    );
    let tsv = env.gw(&["list", "-s", "-o", "tsv"]).success().stdout;
    assert_eq!(
        tsv.lines().next(),
        Some("NAME\tBRANCH\tREPOS\tSTATUS\tPATH")
    );

    // A missing worktree counts as an error.
    std::fs::remove_dir_all(env.ws("two").join("web")).unwrap();
    let json = env
        .gw(&["list", "-s", "--format", "json"])
        .success()
        .result();
    assert_eq!(json["workspaces"][1]["status"], "1 error");
    assert_eq!(json["workspaces"][0]["modified"], 1);
    env.assert_git_agrees_with_state();
}

#[test]
fn ws_show_in_every_form() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("one", "feat/one", "api,web");
    let state = env.state();

    let text = env.gw(&["ws", "show", "one"]).success().stdout;
    assert!(text.contains("Name:    one"), "{text}");
    assert!(text.contains("Branch:  feat/one"), "{text}");
    assert!(
        text.contains(&format!("Path:    {}", s(&env.ws("one")))),
        "{text}"
    );
    assert!(text.contains("Repos:   2"), "{text}");
    let repo_table = text.split("\n\n").nth(1).unwrap();
    assert_eq!(header(repo_table), ["Repo", "Branch", "Worktree", "Source"]);
    assert!(
        repo_table
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["api", "feat/one", "api", s(&env.repos.join("api"))]),
        "{repo_table}"
    );

    assert_eq!(
        env.gw(&["ws", "show", "one", "--json"]).success().json(),
        state[0]
    );
    let jsonl = env
        .gw(&["ws", "show", "one", "-o", "jsonl"])
        .success()
        .stdout;
    assert_eq!(jsonl.lines().count(), 1);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&jsonl).unwrap(),
        state[0]
    );
    let tsv = env.gw(&["ws", "show", "one", "-o", "tsv"]).success().stdout;
    assert_eq!(
        tsv,
        format!(
            "NAME\tPATH\tBRANCH\tCREATED\tREPOS\none\t{}\tfeat/one\t{}\tapi,web\n",
            s(&env.ws("one")),
            state[0]["created_at"].as_str().unwrap()
        )
    );
    let result = env
        .gw(&["ws", "show", "one", "--format", "json"])
        .success()
        .result();
    assert_eq!(result["workspace"]["name"], state[0]["name"]);
    assert_eq!(result["workspace"]["path"], state[0]["path"]);
    assert_eq!(result["workspace"]["repo_count"], 2);

    // Without a name, the workspace you are in.
    let inside = env.gw_in(&env.ws("one").join("web"), &["ws", "show", "--json"]);
    assert_eq!(inside.success().json()["name"], "one");

    let missing = env.gw(&["ws", "show", "nope"]).code(3);
    assert!(missing.stderr.contains("nope"), "{missing}");
    env.assert_git_agrees_with_state();
}

/// Commands that only need `state.json` start no process at all (issue 8): a `git` on PATH
/// that records its calls sees none of them, while a command that does run git is seen.
#[test]
fn state_only_commands_run_no_git() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("one", "feat/one", "api,web");
    let shim_dir = env.root.join("shim");
    std::fs::create_dir_all(&shim_dir).unwrap();
    let log = env.root.join("git-calls.log");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let real_git = std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|g| g.is_file())
        .expect("git on PATH");
    let shim = shim_dir.join("git");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real_git.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut dirs = vec![shim_dir.clone()];
    dirs.extend(std::env::split_paths(&path));
    let shimmed = std::env::join_paths(dirs).unwrap();
    let shimmed = shimmed.to_str().unwrap();
    for args in [
        &["list"][..],
        &["list", "--format", "json"],
        &["list", "--json"],
        &["ws", "show", "one", "--format", "json"],
        &["go", "one", "--format", "json"],
        &["context", "--format", "json"],
    ] {
        env.gw_env(&env.home, args, &[("PATH", shimmed)]).success();
        assert!(
            !log.exists(),
            "gw {args:?} ran git: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }
    // The shim does see git when gw runs it.
    env.gw_env(
        &env.home,
        &[
            "create", "two", "-b", "feat/two", "-r", "api", "--format", "json",
        ],
        &[("PATH", shimmed)],
    )
    .success();
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(calls.contains("worktree add"), "{calls}");
}
