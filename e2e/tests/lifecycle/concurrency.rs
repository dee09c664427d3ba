//! Many `gw` processes at once over the same repositories: every command succeeds or fails
//! with a clean code, no state update is lost, no git lock error escapes, and git agrees
//! with `state.json` at the end.

use std::process::Stdio;

use e2e::TestEnv;
use serde_json::Value;

#[test]
fn sixteen_processes_create_and_delete_over_three_repos() {
    let env = TestEnv::with_repos(&["api", "web", "svc"]);
    for name in ["old-1", "old-2", "old-3", "old-4"] {
        env.gw(&["create", name, "-b", name, "-r", "api,web,svc"])
            .success();
    }
    let mut jobs: Vec<Vec<String>> = Vec::new();
    for name in ["same-a", "same-b", "same-c", "same-d"] {
        for _ in 0..2 {
            jobs.push(vec![
                "create".into(),
                name.into(),
                "-b".into(),
                name.into(),
                "-r".into(),
                "api,web,svc".into(),
            ]);
        }
    }
    for i in 0..4 {
        let name = format!("solo-{i}");
        jobs.push(vec![
            "create".into(),
            name.clone(),
            "-b".into(),
            name,
            "-r".into(),
            "api,web,svc".into(),
        ]);
    }
    for name in ["old-1", "old-2", "old-3", "old-4"] {
        jobs.push(vec!["delete".into(), name.into()]);
    }
    assert_eq!(jobs.len(), 16);
    let children: Vec<_> = jobs
        .iter()
        .map(|args| {
            let mut full: Vec<&str> = args.iter().map(String::as_str).collect();
            full.extend(["--format", "json"]);
            let mut cmd = env.gw_cmd(&full);
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
            (args.clone(), cmd.spawn().expect("gw starts"))
        })
        .collect();
    let mut created: Vec<String> = Vec::new();
    for (args, child) in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let v: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not one envelope ({e}):\n{stdout}\n{stderr}"));
        let code = out.status.code().unwrap();
        assert!(
            !stdout.contains(".lock") && !stderr.contains("config.lock"),
            "{args:?}: a git lock error escaped:\n{stdout}\n{stderr}"
        );
        if v["ok"] == true {
            assert_eq!(code, 0);
            if args[0] == "create" {
                created.push(args[1].clone());
            }
        } else {
            let err = v["error"]["code"].as_str().unwrap();
            assert!(
                (err == "WORKSPACE_EXISTS" && code == 4) || (err == "TRANSIENT" && code == 7),
                "{args:?} failed with {err} (exit {code}):\n{stdout}"
            );
        }
    }
    for name in ["same-a", "same-b", "same-c", "same-d"] {
        assert_eq!(
            created.iter().filter(|c| *c == name).count(),
            1,
            "exactly one create of {name} won: {created:?}"
        );
    }
    let mut names = env.workspace_names();
    names.sort();
    created.sort();
    assert_eq!(
        names, created,
        "every successful create is recorded, every delete took effect"
    );
    env.assert_git_agrees_with_state();
    assert!(
        std::fs::read_dir(env.grove_home.join("operations"))
            .map(|d| d
                .filter(|e| e
                    .as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "json"))
                .count())
            .unwrap_or(0)
            == 0,
        "no journal is left behind"
    );
}
