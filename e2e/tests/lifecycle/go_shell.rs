//! `gw go` and `gw shell-init`: the path printed, and the shell wrappers that `cd` into it
//! (actually run in every shell that is installed).

use e2e::{TestEnv, s};

#[test]
fn go_prints_the_path_and_a_newline() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/x", "api,web");

    let run = env.gw(&["go", "ws"]).success();
    assert_eq!(
        run.stdout,
        format!("{}\n", s(&env.ws("ws"))),
        "the path, one line"
    );
    // Off a terminal (`cd "$(gw go ws)"`): no hint about the shell integration.
    assert!(run.stderr.is_empty(), "{run}");

    let r = env.gw(&["go", "ws", "--format", "json"]).success().result();
    assert_eq!(r["path"], s(&env.ws("ws")));
    assert_eq!(r["workspace"], "ws");

    let unknown = env.gw(&["go", "nope"]).code(3);
    assert!(unknown.stdout.is_empty(), "{unknown}");
    assert!(unknown.stderr.contains("nope"), "{unknown}");
    assert_eq!(
        env.gw(&["go", "nope", "--format", "json"])
            .code(3)
            .error_code(),
        "WORKSPACE_NOT_FOUND"
    );
    // No name and no terminal: a usage error naming the argument, not a picker.
    assert_eq!(
        env.gw(&["go", "--format", "json"]).code(2).error_code(),
        "USAGE"
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn go_back_leads_to_the_repos_dir() {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.create("ws", "feat/x", "api,web");
    let line = format!("{}\n", s(&env.repos));
    assert_eq!(env.gw(&["go", "-b", "ws"]).success().stdout, line);
    let inside = env.ws("ws").join("web");
    assert_eq!(env.gw_in(&inside, &["go", "--back"]).success().stdout, line);
    // Outside any workspace: the configured repo dir.
    assert_eq!(env.gw(&["go", "-b"]).success().stdout, line);
    env.assert_git_agrees_with_state();
}

#[test]
fn shell_init_prints_a_gw_function_for_every_shell() {
    let env = TestEnv::with_repos(&["api"]);
    for (shell, defines) in [
        ("bash", "gw() {"),
        ("zsh", "gw() {"),
        ("fish", "function gw"),
        ("nu", "def --env --wrapped gw"),
    ] {
        let run = env.gw(&["shell-init", "--shell", shell]).success();
        assert!(run.stdout.contains(defines), "{shell}:\n{run}");
        assert!(
            run.stdout.contains("GROVE_CD_FILE"),
            "{shell}: create cds too"
        );
        let r = env
            .gw(&["shell-init", "--shell", shell, "--format", "json"])
            .success()
            .result();
        assert_eq!(r["script"], run.stdout.as_str());
    }
    let bad = env.gw(&["shell-init", "--shell", "tcsh"]).code(2);
    assert!(bad.stderr.contains("tcsh"), "{bad}");
}

/// Runs the POSIX wrapper in `shell` (bash, sh, zsh): `gw go` and `gw create` change the
/// shell's directory; a failing `gw go` does not.
fn posix_wrapper_cds(env: &TestEnv, shell: &str, init_as: &str) {
    let ws = env.ws("ws");
    let script = format!(
        "eval \"$(gw shell-init --shell {init_as})\"\n\
         gw go ws || exit 90\n\
         pwd\n\
         gw go nope; echo \"rc=$?\"\n\
         pwd\n\
         gw create made-{shell} -b made-{shell} -r api || exit 91\n\
         pwd\n"
    );
    let run = env.shell(shell, &env.root, &script);
    assert_eq!(run.status, 0, "{shell}:\n{run}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        // `gw go` prints the path too: its stdout is not a terminal.
        [
            s(&ws),
            s(&ws),
            "rc=3",
            s(&ws),
            s(&env.ws(&format!("made-{shell}"))),
        ],
        "{shell}:\n{run}"
    );
    let leftovers = env.leftover_cd_files();
    assert!(
        leftovers.is_empty(),
        "{shell}: cd file removed: {leftovers:?}"
    );
}

#[test]
fn bash_and_sh_wrappers_change_directory() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    posix_wrapper_cds(&env, "bash", "bash");
    posix_wrapper_cds(&env, "sh", "bash");
    if e2e::require("zsh") {
        posix_wrapper_cds(&env, "zsh", "zsh");
    }
    env.assert_git_agrees_with_state();
}

#[test]
fn create_writes_the_cd_file() {
    let env = TestEnv::with_repos(&["api"]);
    let cd = env.root.join("tmp/cd-target");
    let cd_s = s(&cd).to_string();
    env.gw_env(
        &env.root,
        &["create", "ws", "-b", "ws", "-r", "api"],
        &[("GROVE_CD_FILE", &cd_s)],
    )
    .success();
    assert_eq!(std::fs::read_to_string(&cd).unwrap(), s(&env.ws("ws")));

    // A failed create leaves the cd file alone (the wrapper only cds on success).
    std::fs::write(&cd, "").unwrap();
    env.gw_env(
        &env.root,
        &["create", "ws", "-b", "ws2", "-r", "api"],
        &[("GROVE_CD_FILE", &cd_s)],
    )
    .code(4);
    assert_eq!(std::fs::read_to_string(&cd).unwrap(), "");
    env.assert_git_agrees_with_state();
}

#[test]
fn fish_wrapper_changes_directory() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    if !e2e::require("fish") {
        return; // the text is checked by shell_init_prints_a_gw_function_for_every_shell
    }
    let run = env.shell(
        "fish",
        &env.root,
        "gw shell-init --shell fish | source; gw go ws; pwd; gw create made -b made -r api; pwd",
    );
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        // `gw go` prints the path too: its stdout is not a terminal.
        [s(&env.ws("ws")), s(&env.ws("ws")), s(&env.ws("made"))],
        "{run}"
    );
}

#[test]
fn nu_wrapper_changes_directory() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("ws", "feat/x", "api");
    if !e2e::require("nu") {
        return; // the text is checked by shell_init_prints_a_gw_function_for_every_shell
    }
    let script = env.root.join("tmp/grove.nu");
    std::fs::write(
        &script,
        env.gw(&["shell-init", "--shell", "nu"]).success().stdout,
    )
    .unwrap();
    let run = env.shell(
        "nu",
        &env.root,
        &format!(
            "source {}; gw go ws; print (pwd); gw create made -b made -r api; print (pwd)",
            s(&script)
        ),
    );
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        // `gw go` prints the path too: its stdout is not a terminal.
        [s(&env.ws("ws")), s(&env.ws("ws")), s(&env.ws("made"))],
        "{run}"
    );
}

/// The `P=` lines a script printed (the shell's directory at each step), in order.
fn steps(run: &e2e::Run, prefix: &str) -> Vec<String> {
    run.stdout
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(str::to_string)
        .collect()
}

/// Loads the integration in `shell`'s own syntax.
fn load(env: &TestEnv, shell: &str) -> String {
    match shell {
        "fish" => "gw shell-init --shell fish | source".to_string(),
        "nu" => {
            let init = env.root.join("tmp/grove.nu");
            std::fs::write(&init, env.gw(&["shell-init", "nu"]).success().stdout).unwrap();
            format!("source {}", s(&init))
        }
        sh => format!("eval \"$(gw shell-init --shell {sh})\""),
    }
}

/// Global options before the command (`gw -v delete X`, `gw --color never go X`,
/// `--format=json`) do not hide the command from the wrapper: it still moves the shell.
/// Reproduced the adversarial tester's `gw -v delete feat1`, which left the shell in the
/// deleted directory.
#[test]
fn global_options_before_the_command_keep_the_shell_wrapper() {
    for shell in ["bash", "zsh", "fish", "nu"] {
        if shell != "bash" && !e2e::require(shell) {
            continue;
        }
        let env = TestEnv::with_repos(&["api"]);
        for ws in ["one", "two", "three"] {
            env.create(ws, ws, "api");
        }
        let lines = [
            "gw -v go one",
            "gw --color never go two",
            "gw --format=text go three",
            "cd api; gw --no-hooks delete three",
            "cd api; gw -nv --color=never delete two --force",
            "gw go one; cd api; gw --format json delete one",
        ];
        let pwd = if shell == "nu" {
            "print $\"P=($env.PWD)\""
        } else {
            "echo \"P=$PWD\""
        };
        let mut script = load(&env, shell);
        for l in lines {
            script.push_str(&format!("\n{l}\n{pwd}"));
        }
        let script = if shell == "nu" {
            script.replace('\n', "; ")
        } else {
            script
        };
        let run = env.shell(shell, &env.root, &script);
        let wd = s(&env.workspace_dir()).to_string();
        assert_eq!(
            steps(&run, "P="),
            [
                s(&env.ws("one")),
                s(&env.ws("two")),
                s(&env.ws("three")),
                s(&env.ws("two")),
                &wd,
                &wd
            ],
            "{shell}:\n{run}"
        );
        assert!(env.workspace_names().is_empty(), "{shell}:\n{run}");
    }
}

/// `$(gw go NAME)` prints the path with the integration loaded too (its stdout is not a
/// terminal), so `rm -rf "$(gw go old)/node_modules"` never becomes `rm -rf /node_modules`;
/// the substitution's subshell does not move the shell. Reproduced: the path was empty.
#[test]
fn command_substitution_of_go_prints_the_path_through_the_shell_wrapper() {
    let env = TestEnv::with_repos(&["api"]);
    env.create("one", "one", "api");
    for shell in ["bash", "zsh", "fish"] {
        if shell != "bash" && !e2e::require(shell) {
            continue;
        }
        let script = if shell == "fish" {
            format!("{}\nset d (gw go one)\necho \"D=$d\"", load(&env, shell))
        } else {
            format!(
                "{}\nd=\"$(gw go one)\"\necho \"D=$d\"\necho \"P=$PWD\"",
                load(&env, shell)
            )
        };
        let run = env.shell(shell, &env.root, &script);
        assert_eq!(steps(&run, "D="), [s(&env.ws("one"))], "{shell}:\n{run}");
        if shell != "fish" {
            assert_eq!(steps(&run, "P="), [s(&env.root)], "{shell}:\n{run}");
        }
    }
}

/// A shell left in a workspace another terminal deleted stands in grove's trash; `gw undo`
/// (or `gw restore`) takes it to the restored workspace's directory, and `gw trash empty`
/// to where it was before, never into `.trash`. Reproduced: both left it in `.trash`.
#[test]
fn undo_and_trash_empty_from_a_stranded_shell_never_go_into_the_trash() {
    let env = TestEnv::with_repos(&["api"]);
    let start = env.root.join("start");
    std::fs::create_dir(&start).unwrap();
    let script = format!(
        "{}\ngw create one -b one -r api >/dev/null 2>&1\ncd api\n\
         command gw delete one >/dev/null 2>&1\ngw undo >/dev/null 2>&1\necho \"P=$PWD\"\n\
         command gw delete one >/dev/null 2>&1\ngw trash empty --yes >/dev/null 2>&1\n\
         echo \"P=$PWD\"",
        load(&env, "bash")
    );
    let run = env.shell("bash", &start, &script);
    assert_eq!(
        steps(&run, "P="),
        [s(&env.ws("one").join("api")), s(&start)],
        "{run}"
    );
}

/// `gw rename` of the workspace the shell is in takes it along when the workspaces'
/// directory is reached through a symlink (the process's cwd is the resolved path).
/// Reproduced: the shell stayed behind in the old name.
#[test]
fn rename_through_a_symlinked_workspace_dir_takes_the_shell_along() {
    let env = TestEnv::with_repos(&["api"]);
    let real = env.root.join("real-workspaces");
    std::fs::create_dir(&real).unwrap();
    let _ = std::fs::remove_dir(env.workspace_dir());
    std::os::unix::fs::symlink(&real, env.workspace_dir()).unwrap();
    env.create("s1", "s1", "api");
    let script = format!(
        "{}\ngw go s1 >/dev/null\ncd api\ngw rename s1 --to s2 >/dev/null 2>&1\n\
         test -d \"$PWD\" && echo \"R=$(pwd -P)\"",
        load(&env, "bash")
    );
    let run = env.shell("bash", &env.root, &script);
    assert_eq!(
        steps(&run, "R="),
        [s(&real.join("s2").join("api"))],
        "{run}"
    );
}

/// Hooks (and every other process gw starts) run without `GROVE_CD_FILE` and
/// `GROVE_RETURN_DIR`: a `gw go` in a hook does not move the shell. Reproduced: a
/// `pre_delete` hook's `gw go two` sent the shell to `two`.
#[test]
fn hooks_do_not_inherit_the_shell_wrapper_cd_file() {
    let env = TestEnv::with_repos(&["api"]);
    let log = env.root.join("tmp/hook-env");
    env.append_config(&format!(
        "[hooks]\npre_delete = \"gw go two >/dev/null; env | grep -E '^GROVE_(CD_FILE|RETURN_DIR|SUBSHELL)=' >> {} || true\"\n",
        s(&log)
    ));
    env.create("one", "one", "api");
    env.create("two", "two", "api");
    let script = format!(
        "{}\ngw go two >/dev/null\ncd ..\ngw delete one >/dev/null 2>&1\necho \"P=$PWD\"",
        load(&env, "bash")
    );
    let run = env.shell("bash", &env.root, &script);
    assert_eq!(steps(&run, "P="), [s(&env.workspace_dir())], "{run}");
    let seen = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(seen.is_empty(), "the hook saw {seen}");
}
