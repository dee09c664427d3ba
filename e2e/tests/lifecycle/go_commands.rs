//! `docs/migration.md`'s "Coming from the Go grove" table covers every command and flag of
//! the Go grove (`e2e/fixtures/go-grove-cli.txt`, extracted from the reference), and what it
//! names as today's equivalent exists: each command answers `--help` and lists each flag.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use e2e::TestEnv;

/// One backticked `gw …` invocation: its command words and its flags (`-b/--branch` is two).
fn invocation(span: &str) -> Option<(String, Vec<String>)> {
    let mut tokens = span.split_whitespace();
    if tokens.next() != Some("gw") {
        return None;
    }
    let mut words = Vec::new();
    let mut flags = Vec::new();
    for t in tokens {
        if t.starts_with('-') {
            flags.extend(t.split('/').map(str::to_string));
        } else if flags.is_empty() {
            words.push(t);
        }
    }
    Some((words.join(" "), flags))
}

/// The backticked spans of a table cell.
fn spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The rows of the table under `## Coming from the Go grove`: (Go grove cell, grove cell,
/// status).
fn table() -> Vec<(String, String, String)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/migration.md"))
            .unwrap();
    let section = doc
        .split("\n## Coming from the Go grove\n")
        .nth(1)
        .expect("docs/migration.md has a \"Coming from the Go grove\" section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| `gw"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 4, "a row has four cells: {l}");
            (cells[0].into(), cells[1].into(), cells[2].into())
        })
        .collect()
}

#[test]
fn every_go_command_and_flag_is_in_the_migration_table() {
    let fixture = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/go-grove-cli.txt"),
    )
    .unwrap();
    let rows = table();
    assert!(rows.len() > 50, "the table is there: {} rows", rows.len());

    // What the table covers: (command, flag or "") for every Go invocation in a first cell.
    let mut covered: BTreeSet<(String, String)> = BTreeSet::new();
    for (go, _, status) in &rows {
        assert!(
            ["same", "renamed", "changed", "removed"].contains(&status.as_str()),
            "status `{status}` in the row of {go}"
        );
        for (cmd, flags) in spans(go).into_iter().filter_map(invocation) {
            if flags.is_empty() {
                covered.insert((cmd.clone(), String::new()));
            }
            for f in flags {
                covered.insert((cmd.clone(), f));
            }
        }
    }
    let mut missing = Vec::new();
    let mut entries = 0;
    for line in fixture
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let fields: Vec<&str> = line.split('\t').collect();
        let cmd = if fields[0] == "-" { "" } else { fields[0] };
        let flag = fields
            .get(1)
            .filter(|f| f.starts_with('-'))
            .copied()
            .unwrap_or("");
        entries += 1;
        if !covered.contains(&(cmd.to_string(), flag.to_string())) {
            missing.push(format!("gw {cmd} {flag}"));
        }
    }
    assert!(
        entries > 150,
        "the fixture lists the Go grove's CLI: {entries} entries"
    );
    assert!(
        missing.is_empty(),
        "not in docs/migration.md's table:\n{}",
        missing.join("\n")
    );
}

#[test]
fn what_the_table_names_exists() {
    let env = TestEnv::new();
    // Each command grove is said to have, with the flags the table gives it.
    let mut wanted: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (go, ours, status) in table() {
        let named: Vec<(String, Vec<String>)> =
            spans(&ours).into_iter().filter_map(invocation).collect();
        if status == "removed" && named.is_empty() {
            assert_eq!(
                ours, "—",
                "a removed command without a replacement says so: {go}"
            );
            continue;
        }
        assert!(!named.is_empty(), "the row of {go} names what to use");
        for (cmd, flags) in named {
            wanted.entry(cmd).or_default().extend(flags);
        }
    }
    for (cmd, flags) in &wanted {
        let mut args: Vec<&str> = cmd.split_whitespace().collect();
        args.push("--help");
        let help = env.gw(&args).success().stdout;
        for f in flags {
            let listed = help
                .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
                .any(|w| w == f || w.split('=').next() == Some(f.as_str()));
            assert!(listed, "`gw {cmd} --help` does not list {f}:\n{help}");
        }
    }
}
