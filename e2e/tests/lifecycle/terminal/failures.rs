//! Item 7: text mode shows what failed, instead of pointing at JSON fields. A sync that
//! stops on a conflict names the repository, the conflicting files and the commands that
//! resolve it (continue or abort); a failed `gw run` shows the last lines of each failed
//! process under its line.

use e2e::{Stdout, TestEnv, s};

use super::WIDE;

#[test]
fn a_sync_conflict_shows_the_files_and_the_commands_that_resolve_it() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("feat", "feat", "api,web");
    let wt = env.ws("feat").join("api");
    env.commit(&wt, "README.md", "ours\n", "our change");
    env.push_upstream("api", "main", "README.md", "theirs\n");
    let mut t = env.terminal("gw", &["sync", "feat"], &env.root, WIDE, Stdout::Terminal);
    let st = t.finish();
    let text = t.text();
    assert_eq!(st.code(), Some(5), "{text}");
    let failed = text
        .lines()
        .position(|l| l.contains("api") && l.contains("README.md"))
        .unwrap_or_else(|| panic!("the repository and its conflicting file:\n{text}"));
    // What follows it, as written (a long line is wrapped by the terminal).
    let raw = String::from_utf8_lossy(t.raw()).replace("\r\n", "\n");
    let from = raw
        .find("conflicts in README.md")
        .unwrap_or_else(|| panic!("{text}"));
    let below = &raw[from..];
    assert!(failed < text.lines().count(), "{text}");
    assert!(
        below.contains(&format!("git -C {} rebase origin/main", s(&wt))),
        "{text}"
    );
    assert!(below.contains("git rebase --continue"), "{text}");
    assert!(below.contains("git rebase --abort"), "{text}");
    assert!(!text.contains("See each repository's detail"), "{text}");
}

#[test]
fn a_failed_run_shows_the_last_lines_of_each_failed_process() {
    let env = TestEnv::with_repos(&["api", "web"]);
    for (repo, line) in [
        ("api", "exit 0"),
        ("web", "echo first; echo the-last-words; exit 3"),
    ] {
        let dir = env.repos.join(repo);
        env.commit(&dir, ".grove.toml", &format!("run = \"{line}\"\n"), "run");
        env.git(&dir, &["push", "-q", "origin", "main"]);
        env.trust(repo).success();
    }
    env.create("r", "r", "api,web");
    // stdout is a pipe: what is on the screen is stderr alone.
    let mut t = env.terminal("gw", &["run", "r"], &env.root, WIDE, Stdout::Pipe);
    let st = t.finish();
    let text = t.text();
    assert_eq!(st.code(), Some(5), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let web = lines
        .iter()
        .position(|l| l.starts_with("✗ web"))
        .unwrap_or_else(|| panic!("web's line:\n{text}"));
    assert!(
        lines[web + 1..]
            .iter()
            .any(|l| l.starts_with("    ") && l.contains("the-last-words")),
        "the last lines, under web's line:\n{text}"
    );
    assert!(!text.contains("Read each failed"), "{text}");
}
