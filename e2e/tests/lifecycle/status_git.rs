//! `gw status` against git, one scenario per finding of the differential test (issue 26):
//! a status never makes git stop seeing an edit; errors become answers where git answers
//! (and an unreadable path keeps a worktree from being deleted); a `.git` that is not a
//! repository; git's letters; git's reading of a valueless setting; the one deliberate
//! difference (a same-size edit only nanoseconds tell); a fifo named like a rules file.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use e2e::{TestEnv, s};

/// `git status --porcelain` lines as git sees them, without letting it write its index.
fn git_sees(env: &TestEnv, wt: &Path) -> Vec<String> {
    let mut cmd = env.command(Path::new("git"), &["status", "--porcelain", "--no-renames"]);
    cmd.current_dir(wt).env("GIT_OPTIONAL_LOCKS", "0");
    let out = cmd.output().expect("git runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// `gw status ws --format json`'s only repository, in at most two minutes (a status that
/// blocks is a failure, not a hang of the suite).
fn gw_status(env: &TestEnv) -> serde_json::Value {
    let mut child = env
        .gw_cmd(&["status", "ws", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gw runs");
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("gw status did not finish");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("gw output");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["ok"], true, "{v}");
    v["result"]["repos"][0].clone()
}

fn lines(repo: &serde_json::Value) -> Vec<String> {
    let mut l: Vec<String> = repo["changes"]
        .as_array()
        .unwrap_or_else(|| panic!("{repo}"))
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    l.sort();
    l
}

/// A workspace `ws` on `feat/x` with a worktree of `r`, whose first commit holds
/// `files`; returns the environment and the worktree.
fn world(files: &[(&str, &str)]) -> (TestEnv, PathBuf) {
    world_with(TestEnv::new(), files, |_, _| {})
}

/// [`world`] in `env`, running `before` in the source repository before the files are
/// committed.
fn world_with(
    env: TestEnv,
    files: &[(&str, &str)],
    before: impl FnOnce(&TestEnv, &Path),
) -> (TestEnv, PathBuf) {
    let r = env.repo("r");
    before(&env, &r);
    for (name, content) in files {
        let p = r.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
    }
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-q", "-m", "files"]);
    env.git(&r, &["push", "-q", "origin", "main"]);
    env.gw(&["init", s(&env.repos)]).success();
    env.create("ws", "feat/x", "r");
    let wt = env.ws("ws").join("r");
    (env, wt)
}

fn sh(env: &TestEnv, dir: &Path, script: &str) {
    let r = env.sh(dir, script);
    assert_eq!(r.status, 0, "{r}");
}

/// Item 1. Before: a status wrote refreshed stat data for `g` at a later second without
/// smudging the racily clean `f` (edited in the second of the refresh), and a git that
/// compares whole seconds then trusted `f` — `git switch` overwrote the edit.
#[test]
fn a_status_never_makes_git_stop_seeing_an_edit() {
    let (env, wt) = world(&[("f", "hello\n"), ("g", "g\n")]);
    env.git(&wt, &["switch", "-q", "-c", "other"]);
    std::fs::write(wt.join("f"), "other\n").unwrap();
    env.git(&wt, &["commit", "-q", "-am", "other"]);
    env.git(&wt, &["switch", "-q", "feat/x"]);
    // Only times, sizes and inodes count (no inode change times), so that this state is
    // the same on every run: every file and the index as of one second long ago, the index
    // refreshed to it; then `f` edited in that second, keeping its size.
    env.git(&wt, &["config", "core.trustctime", "false"]);
    sh(
        &env,
        &wt,
        "t=$(($(date +%s) - 1000)); touch -d @$t f g && git update-index -q --refresh && \
         printf 'HELLO\\n' > f && touch -d @$t.5 f && touch -d @$t \"$(git rev-parse --git-path index)\"",
    );
    assert_eq!(git_sees(&env, &wt), [" M f"]);
    assert_eq!(lines(&gw_status(&env)), [" M f"]);
    assert_eq!(git_sees(&env, &wt), [" M f"], "git still sees the edit");
    let switch = env.git_run(&wt, &["switch", "other"]);
    assert_ne!(
        switch.status, 0,
        "git refuses to overwrite the edit: {switch}"
    );
    assert_eq!(std::fs::read_to_string(wt.join("f")).unwrap(), "HELLO\n");
}

/// Item 2: `core.safecrlf` is for `git add`; a status answers.
#[test]
fn safecrlf_does_not_stop_a_status() {
    let (env, wt) = world(&[("lf.txt", "one\ntwo\n"), ("mixed.txt", "one\r\ntwo\n")]);
    env.git(&wt, &["config", "core.autocrlf", "true"]);
    env.git(&wt, &["config", "core.safecrlf", "true"]);
    // Touched: read again, LF line ends that a checkout would turn into CRLF.
    sh(
        &env,
        &wt,
        "touch -d @$(($(date +%s) - 100)) lf.txt mixed.txt",
    );
    assert_eq!(git_sees(&env, &wt), Vec::<String>::new());
    assert_eq!(lines(&gw_status(&env)), Vec::<String>::new());
    // A same-size edit of the file with mixed line ends: git says modified.
    sh(&env, &wt, "printf 'ONE\\r\\ntwo\\n' > mixed.txt");
    assert_eq!(git_sees(&env, &wt), [" M mixed.txt"]);
    assert_eq!(lines(&gw_status(&env)), [" M mixed.txt"]);
}

/// Item 2: a clean filter whose command is missing (not `required`): git warns and compares
/// the file unfiltered.
#[test]
fn a_missing_clean_filter_is_compared_unfiltered() {
    let (env, wt) = world_with(
        TestEnv::new(),
        &[
            (".gitattributes", "*.txt filter=gone\n"),
            ("a.txt", "a\n"),
            ("b.txt", "b\n"),
        ],
        |env, r| {
            env.git(r, &["config", "filter.gone.clean", "gw-no-such-command"]);
        },
    );
    sh(
        &env,
        &wt,
        "touch -d @$(($(date +%s) - 100)) a.txt b.txt && printf 'B\\n' > b.txt",
    );
    assert_eq!(git_sees(&env, &wt), [" M b.txt"]);
    let repo = gw_status(&env);
    assert_eq!(lines(&repo), [" M b.txt"]);
    assert!(
        repo["warnings"]
            .as_array()
            .is_some_and(|w| w.iter().any(|w| w.as_str().unwrap().contains("gone"))),
        "the filter that could not run is named: {repo}"
    );
}

/// Item 2: paths a user cannot read are an answer (git's, with what could not be read
/// named), and a worktree holding one is not deleted without `--force`.
#[test]
fn unreadable_paths_are_answered_and_keep_the_worktree() {
    e2e::unprivileged::run(|gw| {
        for (what, script, unreadable) in [
            (
                "an untracked directory of mode 000",
                "mkdir -p secret && echo s > secret/s && chmod 000 secret",
                "secret/",
            ),
            ("a tracked directory of mode 111", "chmod 111 dir", "dir/"),
            (
                "a tracked directory of mode 444",
                "chmod 444 dir",
                "dir/f.txt",
            ),
            (
                "a touched file of mode 000",
                "touch -d @$(($(date +%s) - 100)) top.txt && chmod 000 top.txt",
                "top.txt",
            ),
            // Found by the status-diff (seeds 20270175, 20270253): git looks at a
            // conflicted file too, and warned where grove, taking the conflict from the
            // index alone, named nothing.
            (
                "a conflicted file in a directory of mode 444",
                "git switch -q -c other && echo theirs > dir/f.txt && git commit -qam o && \
                 git switch -q feat/x && echo ours > dir/f.txt && git commit -qam m && \
                 { git merge -q other >/dev/null 2>&1; true; } && chmod 444 dir",
                "dir/f.txt",
            ),
            // Found by the status-diff (seed 20270885): git cannot tell a file in a
            // directory it may list but not search from one deleted, and warns; grove,
            // missing it from the listing, called it deleted.
            (
                "a deleted file in a tracked directory of mode 444",
                "rm dir/f.txt && chmod 444 dir",
                "dir/f.txt",
            ),
        ] {
            let (env, wt) = world_with(
                TestEnv::new().with_bin(gw),
                &[("dir/f.txt", "f\n"), ("top.txt", "t\n")],
                |_, _| {},
            );
            sh(&env, &wt, script);
            let git = git_sees(&env, &wt);
            let repo = gw_status(&env);
            assert_eq!(lines(&repo), git, "{what}: git's answer");
            assert_eq!(repo["state"], "dirty", "{what}: {repo}");
            let named = repo["unreadable"]
                .as_array()
                .unwrap_or_else(|| panic!("{repo}"));
            assert!(
                named.iter().any(|u| u["path"] == unreadable),
                "{what}: {unreadable} is named unreadable: {repo}"
            );
            let delete = env.gw(&["delete", "ws", "--format", "json"]);
            assert_eq!(delete.error_code(), "WORKTREE_DIRTY", "{what}: {delete}");
            assert!(wt.is_dir(), "{what}: the worktree is still there");
            sh(
                &env,
                &wt,
                "chmod -R u+rwX . 2>/dev/null; chmod 644 top.txt; true",
            );
        }
    });
}

/// Item 3: a `.git` that is not a repository does not make its directory one.
#[test]
fn a_git_that_is_not_a_repository_is_looked_through() {
    let (env, wt) = world(&[("f", "f\n")]);
    sh(
        &env,
        &wt,
        "mkdir -p head-only/.git && echo 'ref: refs/heads/main' > head-only/.git/HEAD && \
         mkdir dangling && echo 'gitdir: /no/such/dir' > dangling/.git && \
         mkdir linked && ln -s /no/such/dir linked/.git && \
         mkdir with-file && ln -s /no/such/dir with-file/.git && echo x > with-file/x && \
         git init -q real",
    );
    let git = git_sees(&env, &wt);
    assert_eq!(git, ["?? real/", "?? with-file/"]);
    assert_eq!(lines(&gw_status(&env)), git);
}

/// Item 4: git's letters.
#[test]
fn letters_are_gits() {
    let (env, wt) = world(&[("a", "a\n"), ("b", "b\n"), ("c", "c\n"), ("d", "d\n")]);
    sh(
        &env,
        &wt,
        "rm a && ln -s b a && git add a && \
         git rm -q --cached b && git add -N b && \
         rm c && git init -q c && git -C c commit -q --allow-empty -m sub && \
         rm d && git init -q d",
    );
    let git = git_sees(&env, &wt);
    assert_eq!(git, [" D d", " T c", "DA b", "T  a"]);
    let mut ours = lines(&gw_status(&env));
    ours.sort();
    assert_eq!(ours, git);
}

/// Item 4: a conflict carries git's letters for the stages the index holds.
#[test]
fn conflicts_carry_gits_letters() {
    let (env, wt) = world(&[("both", "base\n"), ("gone", "g\n")]);
    env.git(&wt, &["switch", "-q", "-c", "other"]);
    sh(
        &env,
        &wt,
        "echo theirs > both && git rm -q gone && echo theirs > new && git add -A && git commit -q -m o",
    );
    env.git(&wt, &["switch", "-q", "feat/x"]);
    sh(
        &env,
        &wt,
        "echo ours > both && echo ours > gone && echo ours > new && git add -A && git commit -q -m m",
    );
    let _ = env.git_run(&wt, &["merge", "-q", "other"]);
    let git = git_sees(&env, &wt);
    assert_eq!(git, ["AA new", "UD gone", "UU both"]);
    let repo = gw_status(&env);
    let mut ours = lines(&repo);
    ours.sort();
    assert_eq!(ours, git);
    assert_eq!(repo["conflicted"], 3);
}

/// Item 5: `[status] showUntrackedFiles` without a value is true to git: untracked files
/// are shown.
#[test]
fn a_valueless_show_untracked_files_shows_them() {
    let (env, wt) = world(&[("f", "f\n")]);
    sh(
        &env,
        &wt,
        "printf '[status]\\n\\tshowUntrackedFiles\\n' >> \"$(git rev-parse --git-common-dir)/config\" && echo n > new",
    );
    assert_eq!(git_sees(&env, &wt), ["?? new"]);
    let repo = gw_status(&env);
    assert_eq!(lines(&repo), ["?? new"]);
    assert_eq!(repo["state"], "dirty");
}

/// Item 6, the deliberate difference: a same-size edit whose modification time is put
/// back, in the second of the last refresh. A git that compares whole seconds (Debian's)
/// trusts the entry and says clean; grove compares nanoseconds, reads the file and says
/// modified — and the content, as `git hash-object` cleans it, does differ.
#[test]
fn a_same_size_edit_only_nanoseconds_tell_is_modified() {
    let (env, wt) = world(&[("f", "hello\n")]);
    // The refresh and the edit must share a second: tried until they do.
    let mut shared = false;
    for _ in 0..20 {
        sh(
            &env,
            &wt,
            "printf 'hello\\n' > f && touch -d @$(($(date +%s) - 1000)) f && git update-index -q --refresh && \
             touch -r f \"$TMPDIR/ref\" && printf 'HELLO\\n' > f && touch -r \"$TMPDIR/ref\" f",
        );
        let entry = env.git(&wt, &["ls-files", "--debug", "f"]);
        let recorded = entry
            .lines()
            .find_map(|l| l.trim().strip_prefix("ctime: "))
            .and_then(|c| c.split(':').next())
            .unwrap()
            .to_string();
        let now = env.sh(&wt, "stat -c %Z f").stdout.trim().to_string();
        if recorded == now {
            shared = true;
            break;
        }
    }
    assert!(shared, "the edit never shared the refresh's second");
    assert_eq!(lines(&gw_status(&env)), [" M f"]);
    let git = git_sees(&env, &wt);
    if git.is_empty() {
        // The difference: grove is right.
        let blob = env.git(&wt, &["hash-object", "f"]);
        let entry = env.git(&wt, &["rev-parse", ":f"]);
        assert_ne!(blob, entry, "the content differs from the index's");
    } else {
        assert_eq!(git, [" M f"], "a git that compares nanoseconds agrees");
    }
}

/// Item 7: a fifo named `.gitignore` or `.gitattributes` blocks git forever; to grove it is
/// no rules file.
#[test]
fn a_fifo_named_like_a_rules_file_is_no_rules_file() {
    let (env, wt) = world(&[("f", "f\n"), ("sub/g", "g\n")]);
    sh(
        &env,
        &wt,
        "echo n > new.txt && echo n > sub/new.txt && \
         touch -d @$(($(date +%s) - 100)) f sub/g && printf 'G\\n' > sub/g",
    );
    let without = git_sees(&env, &wt);
    assert_eq!(without, [" M sub/g", "?? new.txt", "?? sub/new.txt"]);
    sh(&env, &wt, "mkfifo .gitignore sub/.gitattributes");
    assert_eq!(lines(&gw_status(&env)), without);

    // A submodule sends a status to git, which would wait on the fifo forever: grove
    // answers itself, names the fifo, and judges the worktree as holding work.
    sh(
        &env,
        &wt,
        // (git itself would wait on the fifos: they are moved aside while it stages.)
        "mv .gitignore \"$TMPDIR/fifo\" && git init -q inner && \
         git -C inner commit -q --allow-empty -m i && git add inner && mv \"$TMPDIR/fifo\" .gitignore",
    );
    let repo = gw_status(&env);
    assert_eq!(
        lines(&repo),
        [" M sub/g", "?? new.txt", "?? sub/new.txt", "A  inner"]
    );
    assert_eq!(repo["unreadable"][0]["path"], ".gitignore", "{repo}");
}

/// Item 7, one level up: git reads the rules of every directory its walk enters, also one
/// that holds only directories (`a/` of `a/b/c.txt`). A fifo `a/.gitignore` blocked the
/// status git was handed (the check looked only at directories holding files).
#[test]
fn a_fifo_rules_file_above_the_files_is_found_too() {
    let (env, wt) = world(&[("a/b/c.txt", "c\n")]);
    sh(
        &env,
        &wt,
        "git init -q inner && git -C inner commit -q --allow-empty -m i && git add inner && \
         mkfifo a/.gitignore",
    );
    let repo = gw_status(&env);
    assert_eq!(repo["unreadable"][0]["path"], "a/.gitignore", "{repo}");
}

/// Item 7, one level down: git runs a status in each submodule, which reads the
/// submodule's own rules files. A fifo `.gitignore` there blocked the status grove handed
/// to git (the check looked only at the outer repository's directories). Found by the
/// status-diff (seed 20270520).
#[test]
fn a_fifo_rules_file_in_a_submodule_is_found_too() {
    let (env, wt) = world(&[("f", "f\n")]);
    sh(
        &env,
        &wt,
        "git init -q inner && echo i > inner/i && git -C inner add i && \
         git -C inner commit -q -m i && git add inner && mkfifo inner/.gitignore",
    );
    let repo = gw_status(&env);
    assert_eq!(lines(&repo), ["A  inner"]);
    assert_eq!(repo["unreadable"][0]["path"], "inner/.gitignore", "{repo}");
}

/// Found by the status-diff (seed 20270672): git reads an untracked directory in the order
/// its listing gives and stops at the first untracked file; a directory it cannot open met
/// before that file is warned of. grove read the names sorted, stopped at the file, and
/// named nothing unreadable.
#[test]
fn an_untracked_directory_is_read_in_the_order_of_its_listing() {
    e2e::unprivileged::run(|gw| {
        let (env, wt) = world_with(TestEnv::new().with_bin(gw), &[("f", "f\n")], |_, _| {});
        let u = wt.join("u");
        let listed_first = |dir: &Path| {
            let mut names = std::fs::read_dir(dir).unwrap();
            names.next().unwrap().unwrap().file_name()
        };
        // A file that sorts before the directory `z.o` but is listed after it (the order a
        // listing gives depends on the file system: the names' hashes, or the order they
        // were made in).
        let file = (0..64)
            .find_map(|i| {
                let _ = std::fs::remove_dir_all(&u);
                std::fs::create_dir(&u).unwrap();
                let file = u.join(format!("a{i}.o"));
                if i % 2 == 0 {
                    std::fs::create_dir(u.join("z.o")).unwrap();
                    std::fs::write(&file, "a\n").unwrap();
                } else {
                    std::fs::write(&file, "a\n").unwrap();
                    std::fs::create_dir(u.join("z.o")).unwrap();
                }
                (listed_first(&u) == "z.o").then_some(file)
            })
            .expect("a listing that gives the directory first");
        assert!(file.is_file());
        sh(&env, &wt, "chmod 000 u/z.o");
        let mut git = env.command(Path::new("git"), &["status", "--porcelain"]);
        git.current_dir(&wt).env("GIT_OPTIONAL_LOCKS", "0");
        let out = git.output().expect("git runs");
        let warned = String::from_utf8_lossy(&out.stderr);
        assert!(
            warned.contains("could not open directory 'u/z.o/'"),
            "git opens the directory it meets first: {warned}"
        );
        let repo = gw_status(&env);
        assert_eq!(lines(&repo), git_sees(&env, &wt));
        assert_eq!(repo["unreadable"][0]["path"], "u/z.o/", "{repo}");
        sh(&env, &wt, "chmod 755 u/z.o");
    });
}

/// Found by the status-diff (seed 20271200): git lists nothing below a directory it cannot
/// list (mode 111), tracked directories included — it warns of that one and compares the
/// tracked files below by their paths. grove listed a tracked directory below it and
/// showed what was untracked there.
#[test]
fn nothing_untracked_is_shown_below_a_directory_that_cannot_be_listed() {
    e2e::unprivileged::run(|gw| {
        let (env, wt) = world_with(
            TestEnv::new().with_bin(gw),
            &[("dir/sub/f.txt", "f\n")],
            |_, _| {},
        );
        sh(
            &env,
            &wt,
            "mkdir -p dir/sub/new/deeper && echo x > dir/sub/new/deeper/file && \
             echo y > dir/sub/new.txt && echo g > dir/sub/f.txt && chmod 111 dir",
        );
        let git = git_sees(&env, &wt);
        assert_eq!(git, [" M dir/sub/f.txt"], "git's answer");
        let repo = gw_status(&env);
        assert_eq!(lines(&repo), git);
        assert_eq!(repo["unreadable"][0]["path"], "dir/", "{repo}");
        sh(&env, &wt, "chmod 755 dir");
    });
}
