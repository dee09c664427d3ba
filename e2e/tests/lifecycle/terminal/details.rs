//! Item 9: the details. Filtering a picker ranks names that start with what was typed
//! first; Tab offers no flags before a `-` is typed; `gw list` at 80 columns never cuts the
//! name you type; create's lines align; a rebase shows its counts; `*` finds a workspace
//! whose recorded path goes through a symlink; a `created_at` outside RFC 3339's years is
//! `null`, never `-001-…`. (The picker's colour through the shell integration and `gw man`
//! are tested with items 1 and 5.)

use e2e::{Stdout, TestEnv, WAIT_FOR_RELEASE, s};

use super::{NARROW, WIDE, run};

#[test]
fn typing_ranks_names_that_start_with_it_first() {
    let env = TestEnv::with_repos(&["api"]);
    for name in ["alpha", "echo-fix", "hotel"] {
        env.create(name, name, "api");
    }
    let mut t = env.terminal("gw", &["go"], &env.root, NARROW, Stdout::Terminal);
    t.wait_for_text("Workspace");
    t.send("ho");
    t.wait_for("the list filtered", |s| {
        let c = s.contents();
        c.contains("ho") && c.contains("hotel") && !c.contains("alpha")
    });
    let text = t.text();
    let hotel = text.lines().position(|l| l.contains("hotel")).unwrap();
    let echo = text.lines().position(|l| l.contains("echo-fix"));
    assert!(echo.is_none_or(|e| hotel < e), "hotel first:\n{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with('>') && l.contains("hotel")),
        "hotel chosen:\n{text}"
    );
    t.send("\x1b");
    t.finish();
}

#[test]
fn tab_offers_no_flags_before_a_dash() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("feat-login", "feat/login", "api");
    env.create("other", "other", "api");
    let mut t = env.terminal(
        "bash",
        &["--norc", "--noprofile", "-i"],
        &env.root,
        WIDE,
        Stdout::Terminal,
    );
    t.send("PS1='$ '; source <(gw completions bash); clear; echo 'ready''-now'\r");
    t.wait_for_text("ready-now");
    t.send("gw go \t\t");
    t.wait_for("the candidates", |s| {
        let c = s.contents();
        c.contains("feat-login") && c.contains("other")
    });
    let text = t.text();
    assert!(
        !text.contains("--format") && !text.contains("--back"),
        "{text}"
    );
    // After a dash, the flags.
    t.send("\x15gw go --b\t");
    t.wait_for("--back completed", |s| {
        s.contents().contains("gw go --back")
    });
    t.send("\x15exit\r");
}

#[test]
fn list_never_cuts_the_name() {
    let env = TestEnv::with_repos(&["api", "web-frontend"]);
    let long = "lima-long-workspace-name-nobody-should-have-to-guess";
    env.create(
        long,
        "feat/a-branch-name-long-enough-to-be-cut-at-eighty",
        "api,web-frontend",
    );
    let t = run(&env, &env.root, &["list"], NARROW);
    let text = t.text();
    assert!(text.contains(long), "the whole name:\n{text}");
    assert_eq!(t.wrapped_rows(), 0, "{text}");
}

#[test]
fn create_aligns_its_lines() {
    let env = TestEnv::with_repos(&["api", "web-frontend"]);
    let mut t = env.terminal(
        "gw",
        &[
            "create",
            "aligned",
            "-b",
            "aligned",
            "-r",
            "api,web-frontend",
        ],
        &env.root,
        WIDE,
        Stdout::Pipe,
    );
    assert!(t.finish().success(), "{}", t.text());
    let text = t.text();
    let col = |repo: &str| {
        let l = text
            .lines()
            .find(|l| l.trim_start().starts_with(repo))
            .unwrap();
        l.find("new branch")
            .unwrap_or_else(|| panic!("{l}\n{text}"))
    };
    assert_eq!(col("api"), col("web-frontend"), "aligned:\n{text}");
}

#[test]
fn a_rebase_shows_its_counts() {
    let mut env = TestEnv::with_repos(&["mono"]);
    env.create("feat", "feat", "mono");
    let wt = env.ws("feat").join("mono");
    env.commit(&wt, "one.txt", "1\n", "one");
    env.commit(&wt, "two.txt", "2\n", "two");
    env.push_upstream("mono", "main", "base.txt", "b\n");
    // The real rebase, then a wait: the last frame of its progress stays on the screen.
    let gate = env.fake_git(&[(
        " rebase ",
        &format!("\"$REAL\" \"$@\"; rc=$?; {WAIT_FOR_RELEASE}; exit $rc"),
    )]);
    // Let go, whatever happens.
    struct Release<'a>(&'a e2e::FakeGit);
    impl Drop for Release<'_> {
        fn drop(&mut self) {
            self.0.release();
        }
    }
    let _release = Release(&gate);
    let mut t = env.terminal("gw", &["sync", "feat"], &env.root, WIDE, Stdout::Terminal);
    gate.wait_started(1);
    t.wait_for("the rebase's count", |s| s.contents().contains("2/2"));
    gate.release();
    assert!(t.finish().success(), "{}", t.text());
    assert!(
        String::from_utf8_lossy(t.raw()).contains("rebasing"),
        "{}",
        t.text()
    );
    assert_eq!(
        env.git(&wt, &["rev-list", "--count", "origin/main..HEAD"])
            .trim(),
        "2"
    );
}

#[test]
fn the_star_finds_a_workspace_recorded_through_a_symlink() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("linked", "linked", "api");
    let alias = env.root.join("alias");
    std::os::unix::fs::symlink(env.workspace_dir(), &alias).unwrap();
    env.edit_state(|st| {
        st[0]["path"] = serde_json::json!(s(&alias.join("linked")));
    });
    let inside = env.ws("linked").join("api");
    let t = run(&env, &inside, &["list"], NARROW);
    let text = t.text();
    assert!(
        text.lines().any(|l| l.starts_with("* linked")),
        "marked from its real path:\n{text}"
    );
}

#[test]
fn a_created_at_outside_rfc_3339_years_is_null() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("old", "old", "api");
    env.edit_state(|st| {
        st[0]["created_at"] = serde_json::json!("0000-01-01T00:00:00");
    });
    let run = env.gw_env(
        &env.root,
        &["list", "-s", "--format", "json"],
        &[("TZ", "Etc/GMT-14")],
    );
    let v = run.envelope("list-status");
    let created = &v["result"]["workspaces"][0]["created_at"];
    assert!(created.is_null(), "not RFC 3339, so null: {created}\n{run}");
    let prune = env
        .gw_env(
            &env.root,
            &["prune", "--format", "json"],
            &[("TZ", "Etc/GMT-14")],
        )
        .envelope("prune");
    let w = &prune["result"]["workspaces"];
    for c in w.as_array().unwrap() {
        let at = &c["created_at"];
        assert!(
            at.is_null() || !at.as_str().unwrap().starts_with('-'),
            "{prune}"
        );
    }
}
