//! Item 2: a workspace whose directory was removed by hand is an error that says so and
//! points at `gw doctor` — for go, status, run, sync and reset — not a path printed (which
//! the shell integration then silently did not enter) or a table of `missing` rows.

use e2e::{Stdout, TestEnv};

use super::NARROW;

#[test]
fn a_missing_workspace_directory_is_an_error_pointing_at_doctor() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("charlie", "charlie", "api");
    std::fs::remove_dir_all(env.ws("charlie")).unwrap();
    for args in [
        &["go", "charlie"][..],
        &["status", "charlie"],
        &["run", "charlie", "--", "true"],
        &["sync", "charlie"],
        &["reset", "charlie"],
        // WORKSPACE_NOT_FOUND before (the issue-30 adversary).
        &["rename", "charlie", "--to", "delta"],
        &["add-repo", "charlie", "-r", "api"],
    ] {
        let mut t = env.terminal("gw", args, &env.root, NARROW, Stdout::Terminal);
        let st = t.finish();
        let text = t.text();
        assert_eq!(st.code(), Some(5), "gw {args:?}:\n{text}");
        assert!(text.starts_with("error: "), "gw {args:?}:\n{text}");
        assert!(text.contains("is gone"), "gw {args:?}:\n{text}");
        assert!(
            text.contains("hint:") && text.contains("gw doctor"),
            "gw {args:?}:\n{text}"
        );
        // Before any `--`: `gw --format json run charlie -- true`.
        let json: Vec<&str> = ["--format", "json"].iter().chain(args).copied().collect();
        let run = env.gw(&json).code(5);
        assert_eq!(run.error_code(), "WORKSPACE_DIR_MISSING", "{run}");
        assert_eq!(
            run.json()["error"]["details"]["workspace"],
            "charlie",
            "{run}"
        );
        let actions = run.next_commands();
        assert!(
            actions.iter().any(|a| a.starts_with("gw doctor")),
            "{actions:?}"
        );
    }
    // What doctor --fix does about it: the stale entry goes, and the name is free again.
    env.gw(&["doctor", "--fix"]).success();
    assert!(env.workspace_names().is_empty());
}
