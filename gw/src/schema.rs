//! The published JSON Schemas: the envelope and each command's `result`, and the files
//! grove reads (`config.toml`, `.grove.toml`) for editors.
//!
//! The files in `docs/schema/` are generated from the Rust types that produce the output
//! or describe the file (a unit test regenerates them and fails when they differ; run it
//! with `GW_BLESS=1` to update them), and compiled into the binary so `gw schema` can
//! print them. The files' schemas are JSON Schema draft-07, which Taplo and Tombi read;
//! the output's are 2020-12.

/// A published schema.
pub struct Entry {
    /// `envelope`, or the command whose result it describes (`status`, `ws-show`, …).
    pub name: &'static str,
    /// Which invocation produces it.
    pub about: &'static str,
    /// The JSON Schema document.
    pub json: &'static str,
}

macro_rules! schemas {
    (
        output: $($name:literal, $about:literal => $ty:ty;)*
        files: $($fname:literal, $fabout:literal => $fty:ty;)*
    ) => {
        /// Every published schema, in a fixed order.
        pub const ALL: &[Entry] = &[
            $(Entry { name: $name, about: $about, json: include_str!(concat!("../../docs/schema/", $name, ".json")) },)*
            $(Entry { name: $fname, about: $fabout, json: include_str!(concat!("../../docs/schema/", $fname, ".json")) },)*
        ];

        /// The schemas as the types generate them today.
        #[cfg(test)]
        pub(crate) fn generate() -> Vec<(&'static str, serde_json::Value)> {
            let file = || schemars::generate::SchemaSettings::draft07().into_generator();
            vec![
                $(($name, serde_json::to_value(schemars::schema_for!($ty)).expect("schemas serialise")),)*
                $(($fname, {
                    let mut v = serde_json::to_value(file().into_root_schema_for::<$fty>())
                        .expect("schemas serialise");
                    without_null(&mut v);
                    v
                }),)*
            ]
        }
    };
}

schemas! {
    output:
    "envelope", "every machine-mode output (the document around each result)" => crate::output::Envelope;
    "context", "gw context" => crate::ops::context::ContextReport;
    "init", "gw init" => crate::ops::init::InitReport;
    "add-dir", "gw add-dir" => crate::ops::dirs::DirReport;
    "remove-dir", "gw remove-dir" => crate::ops::dirs::DirReport;
    "repos", "gw repos" => crate::ops::repos::ReposReport;
    "create", "gw create" => crate::ops::create::CreateReport;
    "list", "gw list, gw ws list" => crate::ops::list::ListView<'static>;
    "list-status", "gw list --status" => crate::ops::list::ListStatusReport;
    "list-ports", "gw list --ports" => crate::ops::list::ListPortsReport;
    "ws-show", "gw ws show" => crate::ops::list::ShowView<'static>;
    "status", "gw status" => crate::ops::status::StatusReport;
    "go", "gw go" => crate::ops::go::GoReport;
    "go-close", "gw go --close-tab (alone)" => crate::ops::go::CloseReport;
    "shell-init", "gw shell-init" => crate::ops::shell_init::ShellInitReport;
    "delete", "gw delete, gw ws delete" => crate::ops::delete::DeleteReport;
    "unlink-trash", "gw unlink-trash (internal: removes a deleted workspace's files)" => crate::ops::trash::UnlinkReport;
    "trash", "gw trash, gw trash list" => crate::ops::trash::TrashReport;
    "trash-empty", "gw trash empty" => crate::ops::trash::EmptyReport;
    "trash-tidy", "gw trash tidy (internal: measures an entry and applies retention)" => crate::ops::trash::TidyReport;
    "restore", "gw restore, gw undo" => crate::ops::restore::RestoreReport;
    "preset", "gw preset add|show|remove" => crate::ops::preset::PresetReport;
    "preset-list", "gw preset list" => crate::ops::preset::PresetListReport;
    "completions", "gw completions" => crate::output::render::Script;
    "schema", "gw schema" => crate::ops::schema::SchemaReport;
    "skill", "gw skill" => crate::ops::skill::SkillReport;
    "man", "gw man" => crate::output::render::ManPage;
    "plan", "gw plan <command> (the plan document; gw apply returns the command's own result)" => crate::ops::plan::PlanDoc;
    "sync", "gw sync" => crate::ops::sync::SyncReport;
    "reset", "gw reset" => crate::ops::reset::ResetReport;
    "add-repo", "gw add-repo" => crate::ops::add_repo::AddRepoReport;
    "remove-repo", "gw remove-repo" => crate::ops::remove_repo::RemoveRepoReport;
    "rename", "gw rename" => crate::ops::rename::RenameReport;
    "prune", "gw prune" => crate::ops::prune::PruneReport;
    "prune-branches", "gw prune branches" => crate::ops::prune::PruneBranchesReport;
    "doctor", "gw doctor" => crate::ops::doctor::DoctorReport;
    "plugin-list", "gw plugin list" => crate::ops::plugin::PluginListReport;
    "plugin", "gw plugin install|remove" => crate::ops::plugin::PluginReport;
    "plugin-upgrade", "gw plugin upgrade" => crate::ops::plugin::PluginUpgradeReport;
    "plugin-search", "gw plugin search" => crate::ops::plugin::PluginSearchReport;
    "bug-report", "gw bug-report" => crate::ops::bug_report::BugReport;
    "run", "gw run" => crate::ops::run::RunReport;
    "trust-list", "gw trust list" => crate::ops::trust::TrustListReport;
    "trust", "gw trust add|remove" => crate::ops::trust::TrustReport;
    "env", "gw env" => crate::ops::env::EnvReport;
    "help", "--help or --version" => crate::output::render::Help;
    files:
    "config", "config.toml, grove's configuration (for editors: `#:schema` in the file)" => crate::config::schema::ConfigFile;
    "grove-toml", "a repository's .grove.toml (for editors: `#:schema` in the file)" => crate::config::schema::RepoFile;
}

/// TOML has no null: an optional key is a property that may be absent, never one that may
/// be `null` (`Option<T>` is `T` in a file's schema).
#[cfg(test)]
fn without_null(v: &mut serde_json::Value) {
    use serde_json::Value;
    let is_null = |x: &Value| x.get("type").and_then(Value::as_str) == Some("null");
    if let Value::Object(m) = v {
        if let Some(Value::Array(types)) = m.get_mut("type") {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                let only = types[0].clone();
                m.insert("type".into(), only);
            }
        }
        if m.get("default") == Some(&Value::Null) {
            m.remove("default");
        }
        if let Some(Value::Array(any)) = m.get_mut("anyOf")
            && any.iter().any(is_null)
        {
            any.retain(|x| !is_null(x));
            if let [one] = any.as_slice() {
                // `{"description": …, "anyOf": [{"$ref": …}, {"type": "null"}]}`: draft-07
                // ignores a `$ref`'s siblings, so the reference goes under `allOf`.
                let one = one.clone();
                m.remove("anyOf");
                m.insert("allOf".into(), Value::Array(vec![one]));
            }
        }
    }
    match v {
        Value::Object(m) => m.values_mut().for_each(without_null),
        Value::Array(a) => a.iter_mut().for_each(without_null),
        _ => {}
    }
}

/// The schema named `name`.
pub fn find(name: &str) -> Option<&'static Entry> {
    ALL.iter().find(|e| e.name == name)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// `docs/schema/*.json` are exactly what the types generate, and every file there is
    /// published.
    #[test]
    #[allow(clippy::disallowed_methods)]
    fn published_schemas_match_the_types() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema");
        let bless = std::env::var_os("GW_BLESS").is_some();
        let mut stale = Vec::new();
        for (name, schema) in super::generate() {
            let mut text = serde_json::to_string_pretty(&schema).unwrap();
            text.push('\n');
            let path = dir.join(format!("{name}.json"));
            let current = std::fs::read_to_string(&path).unwrap_or_default();
            if current != text {
                if bless {
                    std::fs::write(&path, &text).unwrap();
                } else {
                    stale.push(name);
                }
            }
        }
        assert!(
            stale.is_empty(),
            "docs/schema is stale for {stale:?}: run `GW_BLESS=1 cargo test -p gw schema` and commit"
        );
        for entry in std::fs::read_dir(&dir).unwrap() {
            let file = entry.unwrap().file_name().into_string().unwrap();
            let name = file.strip_suffix(".json").unwrap_or(&file);
            assert!(
                super::find(name).is_some(),
                "docs/schema/{file} is not published by `gw schema`"
            );
        }
    }
}
