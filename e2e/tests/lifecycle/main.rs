//! End-to-end scenarios: the real `gw` against temporary repositories.
#![allow(clippy::disallowed_methods)]

mod add_remove_repo;
mod adversary_31;
mod agent;
mod audit;
mod chaos;
mod concurrency;
mod contract;
mod crash;
mod create;
mod credentials;
mod delete;
mod doctor;
mod dry_run_edits;
mod durability;
mod errors;
mod escapes;
mod every_command;
mod from_go;
mod go_commands;
mod go_shell;
mod gofixtures;
mod hooks;
mod hostile;
mod hostile_files;
mod init;
mod kernel;
mod list;
mod machine;
mod migrate;
mod migrate_fixtures;
mod migrate_hostile;
mod migrate_kill;
mod plan;
mod plan_is_execution;
mod plan_replace;
mod plugins;
mod ports;
mod prune;
mod rename;
mod reset;
mod run;
mod safety;
mod schemas;
mod smoke;
mod status;
mod status_git;
mod sync;
mod terminal;
mod trash;
mod trash_hostile;
mod trust;
mod upgrade;
mod ux;
mod warm;

/// Every file in this directory is declared above, so none is silently skipped.
#[test]
fn no_forgotten_test_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lifecycle");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(module) = name.strip_suffix(".rs").filter(|m| *m != "main") {
            assert!(
                main.contains(&format!("mod {module};")),
                "tests/lifecycle/{name} is not declared in main.rs"
            );
        }
    }
}
