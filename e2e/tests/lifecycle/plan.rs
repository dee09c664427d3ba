//! Plan before mutation: `gw plan <command> …` and `gw apply PLAN|-`, and blueprint files.

use std::path::PathBuf;

use e2e::{TestEnv, s};
use serde_json::Value;

fn plan(env: &TestEnv, args: &[&str]) -> Value {
    let mut full = vec!["plan"];
    full.extend(args);
    full.extend(["--format", "json"]);
    env.gw(&full).success().envelope("plan")["result"].clone()
}

fn save(env: &TestEnv, doc: &Value, name: &str) -> PathBuf {
    let path = env.root.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    path
}

#[test]
fn plan_create_piped_to_apply_creates_exactly_the_plan() {
    let env = TestEnv::with_repos(&["api", "web"]);
    let doc = plan(&env, &["create", "feat", "-b", "feat/x", "-r", "api,web"]);
    assert_eq!(doc["kind"], "create");
    assert_eq!(doc["destructive"], false);
    let planned: Vec<String> = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] == "create_worktree")
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(planned.len(), 2);
    assert!(!env.ws("feat").exists(), "planning changes nothing");
    assert_eq!(env.state(), Value::Array(vec![]));

    // Text mode into a pipe prints the document itself, so the plain pipe works.
    let run = env.sh(
        &env.root,
        "gw plan create feat -b feat/x -r api,web | gw apply - --format json",
    );
    assert_eq!(run.status, 0, "{run}");
    let state = env.state();
    let recorded: Vec<String> = state[0]["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["worktree_path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(recorded, planned);
    env.assert_git_agrees_with_state();
}

#[test]
fn a_track_plan_applies_as_a_tracking_worktree() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.push_upstream("api", "feat/pr", "pr.txt", "from the pull request\n");
    env.git(&env.repos.join("api"), &["fetch", "-q", "origin"]);
    let doc = plan(
        &env,
        &["create", "pr", "-b", "feat/pr", "-r", "api,web", "--track"],
    );
    let actions: Vec<(&str, &str)> = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["action"].as_str().unwrap(),
                c["repo"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(
        actions.contains(&("track_remote_branch", "api")),
        "{actions:?}"
    );
    assert!(
        actions.contains(&("create_branch", "web")),
        "web has no such remote branch: {actions:?}"
    );
    assert_eq!(
        doc["inputs"]["track"], true,
        "the branch mode is part of the plan"
    );
    let file = save(&env, &doc, "pr.json");
    env.gw(&["apply", s(&file), "--format", "json"])
        .success()
        .envelope("create");
    let api = env.ws("pr").join("api");
    assert_eq!(
        env.git(&api, &["rev-parse", "--abbrev-ref", "@{u}"]),
        "origin/feat/pr"
    );
    assert!(api.join("pr.txt").exists());
    env.assert_git_agrees_with_state();
}

#[test]
fn plan_delete_lists_uncommitted_work() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/ws", "api,web");
    std::fs::write(env.ws("ws").join("api/notes.txt"), "mine\n").unwrap();
    let before = env.snapshot();
    // Without --force the plan refuses exactly as the delete would.
    let refused = env
        .gw(&["plan", "delete", "ws", "--format", "json"])
        .code(4);
    assert_eq!(refused.error_code(), "WORKTREE_DIRTY");
    // With --force it lists what would be destroyed.
    let doc = plan(&env, &["delete", "ws", "--force"]);
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("api")
                && w.as_str().unwrap().contains("notes.txt")),
        "{warnings:?}"
    );
    assert_eq!(doc["destructive"], true);
    let trash = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["action"] == "move_to_trash")
        .unwrap();
    assert_eq!(trash["destructive"], true);
    env.assert_unchanged(&before);
    // And applying it does what it said.
    let file = save(&env, &doc, "delete.json");
    env.gw(&["apply", s(&file), "--format", "json"])
        .success()
        .envelope("delete");
    assert!(!env.ws("ws").exists());
    env.assert_git_agrees_with_state();
}

/// Plans the delete of `ws`, changes the world with `change`, and expects `gw apply` to
/// refuse, naming `repo` and a fact matching `needle`, and to leave everything as it was.
fn refused_after(env: &TestEnv, doc: &Value, change: impl FnOnce(), repo: &str, needle: &str) {
    let file = save(env, doc, "plan.json");
    change();
    let before = env.snapshot();
    let run = env.gw(&["apply", s(&file), "--format", "json"]).code(4);
    let v = run.envelope("envelope");
    assert_eq!(v["error"]["code"], "STATE_CHANGED", "{run}");
    let changed: Vec<String> = v["error"]["details"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert!(
        changed
            .iter()
            .any(|c| c.starts_with(&format!("{repo}: ")) && c.contains(needle)),
        "{changed:?}"
    );
    env.assert_unchanged(&before);
}

#[test]
fn apply_refuses_when_the_world_changed() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/ws", "api,web");
    let api = env.ws("ws").join("api");
    let web = env.ws("ws").join("web");

    let doc = plan(&env, &["delete", "ws", "--force"]);
    refused_after(
        &env,
        &doc,
        || std::fs::write(web.join("notes.txt"), "x\n").unwrap(),
        "web",
        "new untracked file notes.txt",
    );
    std::fs::remove_file(web.join("notes.txt")).unwrap();

    let doc = plan(&env, &["delete", "ws", "--force"]);
    refused_after(
        &env,
        &doc,
        || env.commit(&api, "a.txt", "a\n", "work"),
        "api",
        "HEAD moved",
    );

    let doc = plan(&env, &["delete", "ws", "--force"]);
    refused_after(
        &env,
        &doc,
        || {
            env.git(&web, &["switch", "-q", "-c", "elsewhere"]);
        },
        "web",
        "checked_out",
    );
    env.git(&web, &["switch", "-q", "feat/ws"]);

    // A remote branch that moves between the plan and the apply.
    env.push_upstream("web", "feat/pr", "pr.txt", "one\n");
    env.git(&env.repos.join("web"), &["fetch", "-q", "origin"]);
    let doc = plan(
        &env,
        &["create", "pr", "-b", "feat/pr", "-r", "web", "--track"],
    );
    refused_after(
        &env,
        &doc,
        || env.push_upstream("web", "feat/pr", "pr.txt", "two\n"),
        "web",
        "remote_branch origin/feat/pr",
    );
    assert!(!env.ws("pr").exists());
    env.assert_git_agrees_with_state();
}

#[test]
fn applying_the_same_plan_twice_is_refused() {
    let env = TestEnv::with_repos(&["api"]);
    let doc = plan(&env, &["create", "once", "-b", "once", "-r", "api"]);
    let file = save(&env, &doc, "once.json");
    env.gw(&["apply", s(&file), "--format", "json"]).success();
    let before = env.snapshot();
    let again = env.gw(&["apply", s(&file), "--format", "json"]).code(4);
    assert_eq!(again.error_code(), "STATE_CHANGED");
    env.assert_unchanged(&before);
}

/// Every leaf of a JSON document, as a JSON pointer.
fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            leaves(
                x,
                format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| leaves(x, format!("{at}/{i}"), out)),
        _ => out.push(at),
    }
}

fn edited(doc: &Value, pointer: &str) -> Value {
    let mut d = doc.clone();
    let slot = d.pointer_mut(pointer).unwrap();
    *slot = match slot.take() {
        Value::String(s) => Value::String(format!("{s}x")),
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) => Value::from(n.as_u64().unwrap_or(0) + 1),
        Value::Null => Value::String("x".into()),
        other => other,
    };
    d
}

#[test]
fn every_edited_field_of_every_plan_kind_is_refused() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/ws", "api");
    env.create("old", "feat/old", "web");
    let kinds: Vec<(&str, Vec<&str>)> = vec![
        (
            "create",
            vec!["create", "new", "-b", "feat/new", "-r", "api,web"],
        ),
        ("delete", vec!["delete", "old"]),
        ("add-repo", vec!["add-repo", "ws", "-r", "web"]),
        ("remove-repo", vec!["remove-repo", "ws", "-r", "api"]),
        ("rename", vec!["rename", "ws", "--to", "renamed"]),
        ("reset", vec!["reset", "ws"]),
        ("sync", vec!["sync", "ws"]),
        ("prune", vec!["prune", "--min-age", "0d"]),
    ];
    for (kind, args) in kinds {
        let doc = plan(&env, &args);
        assert_eq!(doc["kind"], kind);
        let mut paths = Vec::new();
        leaves(&doc, String::new(), &mut paths);
        let before = env.snapshot();
        for p in &paths {
            let file = save(&env, &edited(&doc, p), "edited.json");
            let run = env.gw(&["apply", s(&file), "--format", "json"]);
            let v = run.envelope("envelope");
            assert_eq!(
                v["ok"], false,
                "{kind}: editing {p} was not refused:\n{run}"
            );
            assert_eq!(
                v["error"]["code"], "PLAN_INVALID",
                "{kind}: editing {p}:\n{run}"
            );
            env.assert_unchanged(&before);
        }
        assert!(paths.len() > 10, "{kind}: {} fields", paths.len());
    }
}

#[test]
fn blueprint_files_round_trip_to_context() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.push_upstream("web", "develop", "dev.txt", "develop\n");
    env.git(&env.repos.join("web"), &["fetch", "-q", "origin"]);
    let bp = env.root.join("workspace.toml");
    std::fs::write(
        &bp,
        "# the login feature\nname = \"login\"\n\n[[repos]]\nname = \"api\"\n\n[[repos]]\nname = \"web\"\nbase_branch = \"develop\"\n\n[source]\nprovider = \"github\"\nref = \"42\"\n",
    )
    .unwrap();
    let doc = plan(&env, &["create", "-f", s(&bp), "-b", "feat/login"]);
    assert_eq!(doc["workspace"], "login");
    let web_start = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["action"] == "create_branch" && c["repo"] == "web")
        .unwrap()["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(web_start.contains("origin/develop"), "{web_start}");
    let file = save(&env, &doc, "bp.json");
    env.gw(&["apply", s(&file), "--format", "json"]).success();
    assert!(
        env.ws("login").join("web/dev.txt").exists(),
        "web started from develop"
    );
    let ctx = env
        .gw_in(
            &env.ws("login").join("api"),
            &["context", "--format", "json"],
        )
        .success()
        .envelope("context");
    let blueprint = &ctx["result"]["workspace"]["blueprint"];
    assert_eq!(blueprint["name"], s(&bp));
    assert_eq!(blueprint["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(ctx["result"]["workspace"]["source"]["ref"], "42");
    let status = env
        .gw(&["status", "login", "--format", "json"])
        .success()
        .result();
    assert_eq!(status["blueprint"], *blueprint);
    env.assert_git_agrees_with_state();
}

#[test]
fn invalid_blueprints_name_the_file_line_and_key() {
    let env = TestEnv::with_repos(&["api"]);
    let cases: &[(&str, &str, &str)] = &[
        (
            "repos = [\"api\"]\ncolor = \"red\"\n",
            "line 2, key `color`",
            "USAGE",
        ),
        ("repos = \"api\"\n", "key `repos`", "USAGE"),
        (
            "[[repos]]\nname = \"api\"\ntrack = \"yes\"\n",
            "line 3, key `repos[0].track`",
            "USAGE",
        ),
        ("repos = [\"api\",\n", "line", "USAGE"),
        (
            "\n\nrepos = [\"api\", \"nope\"]\n",
            "line 3",
            "REPO_NOT_FOUND",
        ),
    ];
    for (i, (text, needle, code)) in cases.iter().enumerate() {
        let bp: PathBuf = env.root.join(format!("bp{i}.toml"));
        std::fs::write(&bp, text).unwrap();
        let before = env.snapshot();
        for cmd in [
            &["create", "-f", s(&bp), "-b", "b"][..],
            &["plan", "create", "-f", s(&bp), "-b", "b"][..],
        ] {
            let mut args = cmd.to_vec();
            args.extend(["--format", "json"]);
            let run = env.gw(&args).failure();
            let v = run.envelope("envelope");
            assert_eq!(v["error"]["code"], *code, "{text:?}:\n{run}");
            let message = v["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(s(&bp)) && message.contains(needle),
                "{text:?}: {message}"
            );
            env.assert_unchanged(&before);
        }
    }
}

/// `--out` writes a plan as a regular file, and never in place of anything else: a symbolic
/// link (to a file or `/dev/null`) or a FIFO was replaced by a plan file, and as root
/// `--out /dev/null` replaced the system's (found by the issue-30 adversary).
#[test]
fn out_never_replaces_what_is_not_a_regular_file() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/ws", "api");
    let dir = env.root.join("tmp");
    std::fs::write(dir.join("target.txt"), "mine\n").unwrap();
    std::os::unix::fs::symlink(dir.join("target.txt"), dir.join("link")).unwrap();
    std::os::unix::fs::symlink("/dev/null", dir.join("null")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(dir.join("fifo"))
        .status()
        .unwrap();
    assert!(fifo.success());
    for name in ["link", "null", "fifo", "-"] {
        let out = dir.join(name);
        let arg = if name == "-" {
            "-".to_string()
        } else {
            s(&out).to_string()
        };
        for args in [
            vec![
                "delete",
                "ws",
                "--dry-run",
                "--out",
                &arg,
                "--format",
                "json",
            ],
            vec!["plan", "delete", "ws", "--out", &arg, "--format", "json"],
        ] {
            let run = env.gw(&args).code(2);
            assert_eq!(run.error_code(), "USAGE", "{name}: {run}");
        }
        if name != "-" {
            let kind = std::fs::symlink_metadata(&out).unwrap().file_type();
            assert!(!kind.is_file(), "{name} was replaced by a file");
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("target.txt")).unwrap(),
        "mine\n"
    );
    let saved = dir.join("plan.json");
    env.gw(&["delete", "ws", "--dry-run", "--out", s(&saved)])
        .success();
    assert!(std::fs::metadata(&saved).unwrap().is_file());
    assert!(env.ws("ws").exists(), "a dry run deletes nothing");
}
