//! Item 4: `--dry-run` on every command `gw plan` can plan shows exactly the plan, changes
//! nothing, and `--dry-run --out F` saves it; `gw-migrate --dry-run` is its default.

use e2e::{Stdout, TestEnv, s};

use super::{NARROW, run};

/// The commands, as `gw plan` takes them.
const COMMANDS: &[&[&str]] = &[
    &["create", "fresh", "-b", "fresh", "-r", "api"],
    &["delete", "golf"],
    &["ws", "delete", "golf"],
    &["add-repo", "golf", "-r", "web"],
    &["remove-repo", "golf", "-r", "api"],
    &["rename", "golf", "--to", "hotel"],
    &["reset", "golf"],
    &["sync", "golf"],
    &["prune", "--min-age", "0"],
    &["prune", "branches"],
    &["restore", "gone"],
    &["restore", "gone", "--as", "back"],
    &["undo"],
];

#[test]
fn dry_run_shows_the_plan_and_changes_nothing() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("golf", "golf", "api");
    // A deleted workspace in the trash, for restore and undo.
    env.create("gone", "gone", "web");
    env.gw(&["delete", "gone"]).success();
    let before = env.snapshot();
    for args in COMMANDS {
        // `gw ws delete` is planned as `gw plan delete`.
        let planned: Vec<&str> = match args {
            ["ws", rest @ ..] => std::iter::once("plan")
                .chain(rest.iter().copied())
                .collect(),
            _ => std::iter::once("plan")
                .chain(args.iter().copied())
                .collect(),
        };
        let mut dry = args.to_vec();
        dry.push("--dry-run");
        // On a terminal: the readable plan, byte for byte.
        let shown = run(&env, &env.root, &dry, NARROW).text();
        let want = run(&env, &env.root, &planned, NARROW).text();
        assert_eq!(shown, want, "gw {}", dry.join(" "));
        assert!(shown.starts_with("Plan: "), "{shown}");
        // Piped and in machine mode: the same document (but when it was made).
        for extra in [&[][..], &["--format", "json"][..]] {
            let doc = |a: &[&str]| {
                let mut a = a.to_vec();
                a.extend_from_slice(extra);
                let run = env.gw(&a).success();
                let mut v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
                let d = if v.get("schemaVersion").is_some() {
                    &mut v["result"]
                } else {
                    &mut v
                };
                d["created_at"] = serde_json::Value::Null;
                d["digest"] = serde_json::Value::Null;
                v
            };
            assert_eq!(doc(&dry), doc(&planned), "gw {} {extra:?}", dry.join(" "));
        }
    }
    env.assert_unchanged(&before);

    // `--out F` saves the plan, which `gw apply F` carries out.
    let saved = env.root.join("tmp/delete.json");
    env.gw(&["delete", "golf", "--dry-run", "--out", s(&saved)])
        .success();
    env.assert_unchanged(&before);
    env.gw(&["apply", s(&saved)]).success();
    assert!(env.workspace_names().is_empty());
    // Restore's too.
    let restore = env.root.join("tmp/restore.json");
    env.gw(&["restore", "golf", "--dry-run", "--out", s(&restore)])
        .success();
    assert!(env.workspace_names().is_empty());
    env.gw(&["apply", s(&restore)]).success();
    assert_eq!(env.workspace_names(), ["golf"]);
    env.gw(&["delete", "golf", "--purge"]).success();
    // `--out` alone is a mistake, not a silent deletion.
    env.create("golf", "golf", "api");
    let alone = env.gw(&["delete", "golf", "--out", s(&saved), "--format", "json"]);
    assert_eq!(alone.code(2).error_code(), "USAGE");
    assert_eq!(env.workspace_names(), ["golf"]);
}

/// `gw create --replace --dry-run`, from inside the workspace it replaces: exactly
/// `gw plan create --replace`, one document listing the removal of the old workspace and
/// then the creation, and nothing changes.
#[test]
fn replace_dry_run_is_the_plan_and_changes_nothing() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("old", "old", "api");
    let inside = env.ws("old").join("api");
    let before = env.snapshot();
    for force in [false, true] {
        let mut args = crate::plan_replace::REPLACE.to_vec();
        if force {
            args.push("--force");
        }
        let planned: Vec<&str> = std::iter::once("plan").chain(args.clone()).collect();
        let mut dry = args.clone();
        dry.push("--dry-run");
        let shown = run(&env, &inside, &dry, NARROW).text();
        let want = run(&env, &inside, &planned, NARROW).text();
        assert_eq!(shown, want, "gw {}", dry.join(" "));
        assert!(shown.starts_with("Plan: create new"), "{shown}");
        let doc = |a: &[&str]| {
            let mut a = a.to_vec();
            a.extend(["--format", "json"]);
            let mut d = env.gw_in(&inside, &a).success().result();
            d["created_at"] = serde_json::Value::Null;
            d["digest"] = serde_json::Value::Null;
            d
        };
        let d = doc(&dry);
        assert_eq!(d, doc(&planned), "gw {}", dry.join(" "));
        assert_eq!(d["kind"], "create", "{d:#}");
        assert_eq!(d["inputs"]["replacing"], "old", "{d:#}");
        let actions: Vec<&str> = d["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["action"].as_str().unwrap())
            .collect();
        // The old workspace goes first, then the new one is made.
        let trashed = actions.iter().position(|a| *a == "move_to_trash");
        let made = actions.iter().position(|a| *a == "create_worktree");
        assert!(
            matches!((trashed, made), (Some(t), Some(m)) if t < m),
            "{actions:?}"
        );
        assert!(actions.contains(&"remove_state_entry"), "{actions:?}");
        assert!(actions.contains(&"record_state"), "{actions:?}");
    }
    // `--out F` saves it, and still changes nothing else.
    let saved = env.root.join("tmp/replace.json");
    let mut args = crate::plan_replace::REPLACE.to_vec();
    args.extend(["--dry-run", "--out", s(&saved)]);
    env.gw_in(&inside, &args).success();
    assert!(saved.is_file());
    env.assert_unchanged(&before);
}

#[test]
fn migrate_takes_dry_run_as_its_default() {
    let env = TestEnv::with_repos(&["api"]);
    let dry = env.migrate(&["--dry-run"]).success();
    let default = env.migrate(&[]).success();
    assert_eq!(dry.stdout, default.stdout, "{dry}");
    let both = env.migrate(&["--dry-run", "--apply", "--format", "json"]);
    assert_eq!(both.code(2).error_code(), "USAGE");
    let mut t = env.terminal(
        e2e::migrate_bin().to_str().unwrap(),
        &["--dry-run"],
        &env.root,
        NARROW,
        Stdout::Terminal,
    );
    assert!(t.finish().success(), "{}", t.text());
}
