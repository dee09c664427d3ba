//! A repository's `.grove.toml` (`RepoConfig::parse`).
//!
//! Checked: the document as toml_edit writes it back reads the same, and so does the
//! configuration written out as a plain `.grove.toml` (every key as a list, the ports in
//! their order): a command list, base branch or port read is one that reads again as
//! itself.
#![no_main]

use grove::config::RepoConfig;
use libfuzzer_sys::fuzz_target;
use toml_edit::{Array, DocumentMut, Table, value};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = RepoConfig::parse(text) else {
        return;
    };
    let doc: DocumentMut = text.parse().expect("RepoConfig::parse accepted it");
    let again = RepoConfig::parse(&doc.to_string()).expect("toml_edit's output reads");
    assert_eq!(again, config, "toml_edit's round trip");

    let written = write(&config);
    let again = RepoConfig::parse(&written)
        .unwrap_or_else(|e| panic!("the configuration written out is refused: {e}\n{written}"));
    assert_eq!(again, config, "written out:\n{written}");
    // The approval's identity is a function of the commands alone.
    assert_eq!(again.commands_sha256(), config.commands_sha256());
});

fn write(c: &RepoConfig) -> String {
    let mut doc = DocumentMut::new();
    if let Some(b) = &c.base_branch {
        doc.insert("base_branch", value(b.as_str()));
    }
    for (key, list) in [
        ("setup", &c.setup),
        ("teardown", &c.teardown),
        ("pre_sync", &c.pre_sync),
        ("post_sync", &c.post_sync),
        ("run", &c.run),
        ("pre_run", &c.pre_run),
        ("post_run", &c.post_run),
    ] {
        let arr: Array = list.iter().map(String::as_str).collect();
        doc.insert(key, value(arr));
    }
    if !c.ports.is_empty() {
        let mut t = Table::new();
        for (name, port) in &c.ports {
            t.insert(name, value(i64::from(*port)));
        }
        doc.insert("ports", toml_edit::Item::Table(t));
    }
    doc.to_string()
}
