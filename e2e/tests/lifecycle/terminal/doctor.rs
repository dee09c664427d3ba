//! Item 8: doctor an agent need not loop around, and whose exit code means something.
//! `doctor --fix` right after a killed command waits for its dying git processes (as long
//! as a lock is waited for) instead of answering `TRANSIENT` at once; `gw doctor` that finds
//! issues exits non-zero (`ISSUES_FOUND`, exit 5), in words with the right plurals; a
//! recovery doctor refuses is `RECOVERY_REFUSED`, not `GIT_FAILED`.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use e2e::{Stdout, TestEnv, WAIT_FOR_RELEASE};

use super::NARROW;

#[test]
fn fix_waits_for_a_killed_commands_git_processes() {
    let mut env = TestEnv::with_repos(&["api", "web"]);
    let before = env.snapshot();
    let gate = env.fake_git(&[("worktree add", WAIT_FOR_RELEASE)]);
    let mut create = env.gw_cmd(&["create", "ws", "-b", "ws", "-r", "api,web"]);
    let mut create = create
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    gate.wait_started(2);
    create.kill().unwrap();
    create.wait().unwrap();
    // Right after: doctor --fix waits for the git processes the killed gw left (saying
    // so), and once they are done, recovers.
    let mut doctor = env.gw_cmd(&["doctor", "--fix", "-v", "--format", "json"]);
    let mut doctor = doctor
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(doctor.stderr.take().unwrap());
    let mut said = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        let waiting = line.contains("waiting for");
        said.push(line);
        if waiting {
            gate.release();
        }
    }
    // (Never left waiting, whatever happened.)
    gate.release();
    let out = doctor.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let said = said.join("\n");
    assert!(said.contains("waiting for"), "{said}\n{stdout}");
    assert_eq!(out.status.code(), Some(0), "{said}\n{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["result"]["healthy"], true, "{v:#}");
    env.assert_unchanged(&before);
}

#[test]
fn doctor_that_finds_issues_exits_non_zero_and_counts_them_right() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("one", "one", "api");
    // Healthy: exit 0.
    let mut t = env.terminal("gw", &["doctor"], &env.root, NARROW, Stdout::Terminal);
    assert_eq!(t.finish().code(), Some(0), "{}", t.text());
    // One issue: exit 5, said in the singular.
    std::fs::remove_dir_all(env.ws("one").join("api")).unwrap();
    let mut t = env.terminal("gw", &["doctor"], &env.root, NARROW, Stdout::Terminal);
    assert_eq!(t.finish().code(), Some(5), "{}", t.text());
    let text = t.text();
    assert!(
        text.contains("1 issue found") && !text.contains("1 issues"),
        "{text}"
    );
    let run = env.gw(&["doctor", "--format", "json"]).code(5);
    assert_eq!(run.error_code(), "ISSUES_FOUND", "{run}");
    let v = run.json();
    assert_eq!(v["result"]["count"], 1, "{run}");
    assert!(
        v["next_actions"].to_string().contains("gw doctor --fix"),
        "{run}"
    );
    // Fixed: exit 0, and healthy again.
    env.gw(&["doctor", "--fix"]).success();
    env.gw(&["doctor"]).success();
}

#[test]
fn a_refused_recovery_has_its_own_code() {
    let env = TestEnv::with_repos(&["api"]);
    // A journal (of a gw long gone) that would delete a branch in a repository grove does
    // not know: recovery refuses to act there.
    let stranger = env.write_refused_journal();
    let mut t = env.terminal(
        "gw",
        &["doctor", "--fix"],
        &env.root,
        NARROW,
        Stdout::Terminal,
    );
    let st = t.finish();
    let text = t.text();
    assert_eq!(st.code(), Some(5), "{text}");
    assert!(
        text.contains("could not fix 1 of 1 issue:") || text.contains("could not fix the 1 issue"),
        "{text}"
    );
    let run = env.gw(&["doctor", "--fix", "--format", "json"]).code(5);
    assert_eq!(run.error_code(), "RECOVERY_REFUSED", "{run}");
    assert!(
        env.has_branch(&stranger, "main"),
        "nothing done in the stranger"
    );
}
