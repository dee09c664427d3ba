//! A plan and its execution cannot disagree: for every mutation kind, `gw plan … --out`
//! then `gw apply`, and every branch, worktree registration and workspace that changed is
//! one the plan listed, and every change the plan listed happened — including when the
//! commits of a branch cannot be counted (the plan then keeps it, and so does apply).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use e2e::{TestEnv, s};

/// What a plan can change, per repository: branches (name → tip) and registrations
/// (path → branch); and the workspaces in state (name → path).
#[derive(Debug, Clone, PartialEq)]
struct World {
    branches: BTreeMap<(String, String), String>,
    registrations: BTreeMap<String, (String, String)>,
    workspaces: BTreeMap<String, String>,
}

fn world(env: &TestEnv, repos: &[&str]) -> World {
    let mut branches = BTreeMap::new();
    let mut registrations = BTreeMap::new();
    for repo in repos {
        let dir = env.repos.join(repo);
        for line in env
            .git(
                &dir,
                &[
                    "for-each-ref",
                    "--format=%(refname:short) %(objectname)",
                    "refs/heads",
                ],
            )
            .lines()
        {
            let (b, tip) = line.split_once(' ').unwrap();
            branches.insert((repo.to_string(), b.to_string()), tip.to_string());
        }
        let list = env.git(&dir, &["worktree", "list", "--porcelain"]);
        for block in list.split("\n\n").skip(1) {
            let path = block
                .lines()
                .find_map(|l| l.strip_prefix("worktree "))
                .unwrap()
                .to_string();
            let branch = block
                .lines()
                .find_map(|l| l.strip_prefix("branch refs/heads/"))
                .unwrap_or("(detached)")
                .to_string();
            registrations.insert(path, (repo.to_string(), branch));
        }
    }
    let workspaces = env
        .state()
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap().to_string(),
                w["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    World {
        branches,
        registrations,
        workspaces,
    }
}

/// `label` is `repo` or `workspace/repo`.
fn repo_of(label: &str) -> &str {
    label.rsplit('/').next().unwrap()
}

/// Plans `args` (a mutating command), applies the plan, and checks the world against it.
/// Returns the plan's changes.
fn plan_and_apply(env: &TestEnv, repos: &[&str], args: &[&str]) -> Vec<Value> {
    let plan = env.root.join("plan.json");
    let mut full = vec!["plan", "--out", s(&plan)];
    full.extend(args);
    full.extend(["--format", "json"]);
    env.gw(&full).success();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let changes = doc["changes"].as_array().unwrap().clone();
    let before = world(env, repos);
    env.gw(&["apply", s(&plan), "--format", "json"]).success();
    let after = world(env, repos);
    check(&changes, &before, &after);
    changes
}

fn check(changes: &[Value], before: &World, after: &World) {
    let listed = |action: &str| -> Vec<&Value> {
        changes.iter().filter(|c| c["action"] == action).collect()
    };
    let field = |c: &Value, k: &str| c[k].as_str().unwrap_or_default().to_string();
    // Branches: every one created or deleted was listed, and everything listed happened.
    let added: BTreeSet<_> = after
        .branches
        .keys()
        .filter(|k| !before.branches.contains_key(*k))
        .cloned()
        .collect();
    let removed: BTreeSet<_> = before
        .branches
        .keys()
        .filter(|k| !after.branches.contains_key(*k))
        .cloned()
        .collect();
    let planned_adds: BTreeSet<_> = listed("create_branch")
        .into_iter()
        .chain(listed("track_remote_branch"))
        .map(|c| (repo_of(&field(c, "repo")).to_string(), field(c, "branch")))
        .collect();
    let planned_deletes: BTreeSet<_> = listed("delete_branch")
        .into_iter()
        .map(|c| (repo_of(&field(c, "repo")).to_string(), field(c, "branch")))
        .collect();
    assert_eq!(
        added, planned_adds,
        "branches created vs planned: {changes:#?}"
    );
    assert_eq!(
        removed, planned_deletes,
        "branches deleted vs planned: {changes:#?}"
    );
    for c in listed("keep_branch") {
        let key = (repo_of(&field(c, "repo")).to_string(), field(c, "branch"));
        assert!(after.branches.contains_key(&key), "kept {key:?}");
    }
    // Registrations: added ones were listed as worktrees created (or repaired), removed ones
    // as registrations removed (or moved by a repair).
    let reg_added: BTreeSet<String> = after
        .registrations
        .keys()
        .filter(|p| !before.registrations.contains_key(*p))
        .cloned()
        .collect();
    let reg_removed: BTreeSet<String> = before
        .registrations
        .keys()
        .filter(|p| !after.registrations.contains_key(*p))
        .cloned()
        .collect();
    let planned_reg_adds: BTreeSet<String> = listed("create_worktree")
        .into_iter()
        .chain(listed("repair_worktrees"))
        .map(|c| field(c, "path"))
        .collect();
    let moved_from: BTreeSet<String> = listed("move_directory")
        .into_iter()
        .map(|c| field(c, "path"))
        .collect();
    let planned_reg_removes: BTreeSet<String> = listed("remove_registration")
        .into_iter()
        .map(|c| field(c, "path"))
        .chain(
            before
                .registrations
                .keys()
                .filter(|p| moved_from.iter().any(|m| p.starts_with(m.as_str())))
                .cloned(),
        )
        .collect();
    assert_eq!(
        reg_added, planned_reg_adds,
        "registrations added vs planned"
    );
    assert_eq!(
        reg_removed, planned_reg_removes,
        "registrations removed vs planned"
    );
    // Branch switches land where planned.
    for c in listed("switch_branch") {
        let on = after
            .registrations
            .values()
            .filter(|(r, _)| r == repo_of(&field(c, "repo")))
            .any(|(_, b)| *b == field(c, "branch"));
        assert!(on, "switched: {c}");
    }
    // State: an entry recorded, removed or renamed only where planned.
    let ws_changed = before.workspaces != after.workspaces;
    let state_planned = !listed("record_state").is_empty()
        || !listed("remove_state_entry").is_empty()
        || !listed("update_state_entry").is_empty();
    if ws_changed {
        assert!(
            state_planned,
            "state changed without a planned state change"
        );
    }
    for c in listed("remove_state_entry") {
        let name = field(c, "detail")
            .trim_start_matches("workspace ")
            .to_string();
        assert!(!after.workspaces.contains_key(&name), "{name} was removed");
    }
}

#[test]
fn every_mutation_does_what_its_plan_listed() {
    let repos = ["api", "web", "docs"];
    let env = TestEnv::with_repos(&repos);
    // create, then add-repo and remove-repo.
    plan_and_apply(&env, &repos, &["create", "ws", "-b", "ws", "-r", "api,web"]);
    plan_and_apply(&env, &repos, &["add-repo", "ws", "-r", "docs"]);
    let web = env.ws("ws").join("web");
    env.commit(
        &web,
        "only.txt",
        "only here\n",
        "a commit found nowhere else",
    );
    let changes = plan_and_apply(&env, &repos, &["remove-repo", "ws", "-r", "web", "--force"]);
    assert!(
        changes
            .iter()
            .any(|c| c["action"] == "delete_branch" && c["destructive"] == true)
    );
    // A branch with a commit of its own is kept without --force, in plan and apply alike.
    let docs = env.ws("ws").join("docs");
    env.commit(&docs, "mine.txt", "mine\n", "unpushed");
    let changes = plan_and_apply(&env, &repos, &["remove-repo", "ws", "-r", "docs"]);
    assert!(changes.iter().any(|c| c["action"] == "keep_branch"));
    // rename, reset (a worktree on another branch), sync (behind its base).
    plan_and_apply(&env, &repos, &["rename", "ws", "--to", "ws2"]);
    let api = env.ws("ws2").join("api");
    env.git(&api, &["switch", "-q", "-c", "elsewhere"]);
    plan_and_apply(&env, &repos, &["reset", "ws2"]);
    env.push_upstream("api", "main", "upstream.txt", "new\n");
    env.git(&env.repos.join("api"), &["fetch", "-q", "origin"]);
    let changes = plan_and_apply(&env, &repos, &["sync", "ws2"]);
    assert!(
        changes.iter().any(|c| c["action"] == "rebase"),
        "{changes:#?}"
    );
    // delete; prune (an old workspace).
    plan_and_apply(&env, &repos, &["delete", "ws2"]);
    plan_and_apply(&env, &repos, &["create", "old", "-b", "old", "-r", "web"]);
    env.edit_state(|st| st[0]["created_at"] = "2000-01-01T00:00:00Z".into());
    plan_and_apply(&env, &repos, &["prune", "--min-age", "1d"]);
    assert!(env.workspace_names().is_empty());
    env.assert_git_agrees_with_state();
}

/// When the commits of a branch cannot be counted (an object is missing), the plan keeps
/// the branch — and so does the delete it is applied as; with `--force` both delete it,
/// as destructive.
#[test]
fn a_branch_whose_commits_cannot_be_counted_is_kept_by_plan_and_apply() {
    let repos = ["api"];
    let env = TestEnv::with_repos(&repos);
    env.create("ws", "ws", "api");
    lose_history(&env, "ws");
    let changes = plan_and_apply(&env, &repos, &["delete", "ws"]);
    let keep = changes
        .iter()
        .find(|c| c["action"] == "keep_branch")
        .unwrap_or_else(|| panic!("{changes:#?}"));
    assert!(
        keep["detail"].as_str().unwrap().contains("cannot tell"),
        "{keep}"
    );
    assert!(env.has_branch(&env.repos.join("api"), "ws"));

    let env = TestEnv::with_repos(&repos);
    env.create("forced", "forced", "api");
    lose_history(&env, "forced");
    let changes = plan_and_apply(&env, &repos, &["delete", "forced", "--force"]);
    let delete = changes
        .iter()
        .find(|c| c["action"] == "delete_branch")
        .unwrap_or_else(|| panic!("{changes:#?}"));
    assert_eq!(delete["destructive"], true, "{delete}");
    assert!(!env.has_branch(&env.repos.join("api"), "forced"));
}

/// Two commits on workspace `ws`'s branch in api, the first one's object then lost.
fn lose_history(env: &TestEnv, ws: &str) {
    let api = env.ws(ws).join("api");
    env.commit(&api, "a.txt", "a\n", "first of its own");
    let first = env.git(&api, &["rev-parse", "HEAD"]);
    env.commit(&api, "b.txt", "b\n", "second of its own");
    let objects = env.repos.join("api/.git/objects");
    std::fs::remove_file(objects.join(&first[..2]).join(&first[2..])).unwrap();
}
