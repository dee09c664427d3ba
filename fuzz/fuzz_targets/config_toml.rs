//! `config.toml` (`Config::parse`), with its presets, hooks, ports and trash settings, and
//! the edits grove makes to it (`gw init`, `gw preset add|remove`, the legacy `repos_dir`
//! migration).
//!
//! Checked: what grove writes back (unchanged, and after each edit) reads again, as the
//! configuration the edit meant: the same settings, with the edited preset, directories
//! or workspace directory as set.
#![no_main]

use std::path::{Path, PathBuf};

use grove::config::Config;
use grove::env::Env;
use grove::home::GroveHome;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let dir = Path::new("/home/u");
    let env = Env::for_home(dir, dir);
    let home = GroveHome::new(dir.join(".grove"));
    let read = |what: &str, text: &str| {
        Config::parse(&home.config(), text, &home, &env)
            .unwrap_or_else(|e| panic!("{what}: grove's own output is refused: {e}\n{text}"))
    };
    let Ok(config) = Config::parse(&home.config(), text, &home, &env) else {
        return;
    };
    same(
        "as written",
        &config,
        &read("as written", &config.to_toml()),
    );

    // The legacy key, migrated, keeps the directories.
    let mut migrated = config.clone();
    migrated.migrate_repos_dir();
    let out = migrated.to_toml();
    let again = read("migrated", &out);
    same("migrated", &config, &again);
    let doc: toml_edit::DocumentMut = out.parse().unwrap();
    assert!(
        !doc.contains_key("repos_dir"),
        "repos_dir left after migration\n{out}"
    );

    // Every preset rewritten, one added, one removed.
    let mut edited = config.clone();
    let names: Vec<String> = config.presets.keys().cloned().collect();
    for name in &names {
        let mut repos = config.presets[name].clone();
        repos.reverse();
        repos.push("added".into());
        edited.set_preset(name, &repos);
    }
    edited.set_preset("fuzz", &["a".into(), "b c".into()]);
    let again = read("presets set", &edited.to_toml());
    assert_eq!(again.presets, edited.presets, "presets set");
    if let Some(first) = names.first() {
        assert!(edited.remove_preset(first));
        let again = read("preset removed", &edited.to_toml());
        assert_eq!(again.presets, edited.presets, "preset removed");
    }
    // The other settings are untouched by preset edits.
    let mut check = read("presets edited", &edited.to_toml());
    assert_eq!(check.presets, edited.presets, "presets edited");
    check.presets = config.presets.clone();
    same("presets edited", &config, &check);

    // Directories set.
    let mut dirs = config.clone();
    let repo_dirs = vec![PathBuf::from("/src/a"), dir.join("b c")];
    dirs.set_repo_dirs(repo_dirs.clone());
    dirs.set_workspace_dir(Path::new("/w/ws"), &home);
    let again = read("directories set", &dirs.to_toml());
    assert_eq!(again.workspace_dir, Path::new("/w/ws"));
    // A legacy `repos_dir` still read is put first unless listed.
    if !config_has_legacy(&dirs) {
        assert_eq!(again.repo_dirs, repo_dirs);
    }
});

fn config_has_legacy(c: &Config) -> bool {
    let doc: toml_edit::DocumentMut = c.to_toml().parse().unwrap();
    doc.contains_key("repos_dir")
}

fn same(what: &str, a: &Config, b: &Config) {
    assert_eq!(a.repo_dirs, b.repo_dirs, "{what}: repo_dirs");
    assert_eq!(a.workspace_dir, b.workspace_dir, "{what}: workspace_dir");
    assert_eq!(a.presets, b.presets, "{what}: presets");
    assert_eq!(a.hooks, b.hooks, "{what}: hooks");
    assert_eq!(a.trust_dirs, b.trust_dirs, "{what}: trust_dirs");
    assert_eq!(a.ports, b.ports, "{what}: ports");
    assert_eq!(a.trash, b.trash, "{what}: trash");
}
