//! Plugins: `gw foo` runs `gw-foo` from the plugins directory or PATH with arguments,
//! environment and exit code; `gw plugin list|install|remove`; unknown commands.

use e2e::{TestEnv, s, write_executable};

/// A plugin that prints its arguments and grove's variables, and exits with `code`.
fn script(tag: &str, code: i32) -> String {
    format!(
        "#!/bin/sh\necho \"{tag}\"\nfor a in \"$@\"; do echo \"arg=$a\"; done\n\
         echo \"GW_HOME=$GW_HOME\"\necho \"GROVE_DIR=$GROVE_DIR\"\necho \"GROVE_CONFIG=$GROVE_CONFIG\"\n\
         echo \"GROVE_STATE=$GROVE_STATE\"\necho \"GROVE_WORKSPACE=$GROVE_WORKSPACE\"\n\
         echo \"to stderr\" >&2\nexit {code}\n"
    )
}

#[test]
fn plugin_in_the_plugins_dir_gets_arguments_environment_and_exit_code() {
    let env = TestEnv::with_repos(&["api"]);
    write_executable(&env.plugins_dir().join("gw-hello"), &script("installed", 7));

    let run = env.gw(&["hello", "a", "b c", "--flag"]).code(7);
    let home = s(&env.grove_home);
    assert_eq!(
        run.stdout,
        format!(
            "installed\narg=a\narg=b c\narg=--flag\nGW_HOME={home}\nGROVE_DIR={home}\nGROVE_CONFIG={home}/config.toml\n\
             GROVE_STATE={home}/state.json\nGROVE_WORKSPACE=\n"
        )
    );
    assert_eq!(run.stderr, "to stderr\n");

    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api"])
        .success();
    let run = env
        .gw_in(&env.workspace_dir().join("feat-x/api"), &["hello"])
        .code(7);
    assert!(run.stdout.contains("GROVE_WORKSPACE=feat-x\n"), "{run}");
    env.assert_git_agrees_with_state();
}

#[test]
fn plugin_on_path_runs_and_the_plugins_dir_wins() {
    let mut env = TestEnv::with_repos(&["api"]);
    let bin = env.root.join("bin");
    write_executable(&bin.join("gw-onpath"), &script("on path", 0));
    write_executable(&bin.join("gw-both"), &script("both on path", 0));
    write_executable(
        &env.plugins_dir().join("gw-both"),
        &script("both installed", 0),
    );
    let path = format!("{}:{}", s(&bin), std::env::var("PATH").unwrap_or_default());
    env.set_env("PATH", &path);

    let run = env.gw(&["onpath", "x"]).success();
    assert!(run.stdout.starts_with("on path\narg=x\n"), "{run}");
    let run = env.gw(&["both"]).success();
    assert!(run.stdout.starts_with("both installed\n"), "{run}");

    let r = env
        .gw(&["plugin", "list", "--format", "json"])
        .success()
        .result();
    let listed: Vec<(String, String)> = r["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("both".to_string(), "installed".to_string()),
            ("onpath".to_string(), "path".to_string())
        ]
    );
    env.assert_git_agrees_with_state();
}

#[test]
fn unknown_command_without_plugin_is_usage_naming_the_nearest_commands() {
    let env = TestEnv::with_repos(&["api"]);
    let run = env.gw(&["sinc", "--format", "json"]).code(2);
    assert_eq!(run.error_code(), "USAGE");
    let doc = run.json();
    assert_eq!(doc["error"]["details"]["suggestions"][0], "sync", "{doc:#}");
    assert!(doc["fix"].as_str().unwrap().contains("gw sync"));
    let run = env.gw(&["stauts"]).code(2);
    assert!(run.stderr.contains("gw status"), "{run}");
    assert_eq!(run.stdout, "");
    let run = env.gw(&["../evil", "--format", "json"]).code(2);
    assert_eq!(run.error_code(), "USAGE");
    env.assert_git_agrees_with_state();
}

#[test]
fn plugin_install_list_remove() {
    let env = TestEnv::with_repos(&["api"]);
    let src = env.root.join("gw-tool.sh");
    write_executable(&src, &script("tool", 0));

    let r = env
        .gw(&["plugin", "install", s(&src), "--format", "json"])
        .success()
        .result();
    assert_eq!(r["name"], "tool");
    assert_eq!(r["outcome"], "installed");
    let installed = env.plugins_dir().join("gw-tool");
    assert_eq!(r["path"], s(&installed));
    assert!(
        env.gw(&["tool", "hi"])
            .success()
            .stdout
            .starts_with("tool\narg=hi\n")
    );
    let again = env
        .gw(&["plugin", "install", s(&src), "--format", "json"])
        .success()
        .result();
    assert_eq!(again["outcome"], "replaced");

    // A tarball holding `gw-<name>`, installed under a chosen name.
    let pkg = env.root.join("pkg");
    write_executable(&pkg.join("gw-packed"), &script("packed", 0));
    let tarball = env.root.join("gw-packed_1.0.0_linux_amd64.tar.gz");
    env.sh(
        &env.root,
        &format!("tar -czf {} -C {} gw-packed", s(&tarball), s(&pkg)),
    )
    .success();
    let r = env
        .gw(&["plugin", "install", s(&tarball), "--format", "json"])
        .success()
        .result();
    assert_eq!(r["name"], "packed");
    assert!(env.gw(&["packed"]).success().stdout.starts_with("packed\n"));

    // Not a program for this platform, or an unsafe name: refused, nothing installed.
    let page = env.root.join("gw-page");
    std::fs::write(&page, "<!DOCTYPE html><html>not found</html>").unwrap();
    let run = env
        .gw(&["plugin", "install", s(&page), "--format", "json"])
        .code(2);
    assert_eq!(run.error_code(), "USAGE");
    assert!(!env.plugins_dir().join("gw-page").exists());
    env.gw(&["plugin", "install", s(&src), "--name", "../x"])
        .code(2);
    env.gw(&["plugin", "install", s(&env.root.join("missing"))])
        .code(2);

    let bare = env.gw(&["plugin", "list", "--json"]).success().json();
    let names: Vec<&str> = bare
        .as_array()
        .expect("legacy --json is a bare array")
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["packed", "tool"]);

    let r = env
        .gw(&["plugin", "remove", "tool", "--format", "json"])
        .success()
        .result();
    assert_eq!(r["outcome"], "removed");
    assert!(!installed.exists());
    let run = env
        .gw(&["plugin", "remove", "tool", "--format", "json"])
        .code(2);
    assert_eq!(run.error_code(), "USAGE");
    env.gw(&["tool"]).code(2);
    env.assert_git_agrees_with_state();
}
