//! The shapes of `config.toml` and `.grove.toml` as JSON Schemas, for editors: Taplo and
//! Tombi read a `#:schema URL` line at the top of a TOML file and then complete keys,
//! show these descriptions and flag a key grove does not read (a misspelling). The
//! documents are generated from these types into `docs/schema/config.json` and
//! `docs/schema/grove-toml.json` (JSON Schema draft-07, which both editors read), published
//! with each release and printed by `gw schema config` / `gw schema grove-toml`.
//!
//! These types describe the files; the parsers in `config/` read them (with line numbers
//! in their errors, and keeping comments on edits). A test checks the two agree: every key
//! a parser reads is in a schema and every key of a schema is read, and the documents the
//! parsers' own tests read validate.

#![allow(dead_code)] // the types exist for their schemas; nothing builds their values

use std::collections::BTreeMap;

use schemars::JsonSchema;

/// grove's configuration: `~/.grove/config.toml` (`$GW_HOME/config.toml`). `gw init`,
/// `gw add-dir` and `gw preset` edit it and keep your comments.
#[derive(JsonSchema)]
#[schemars(title = "grove config.toml", deny_unknown_fields)]
pub struct ConfigFile {
    /// Directories holding the repositories a workspace can be made of (searched three
    /// levels deep). `~` is your home directory; a relative path is taken from the current
    /// directory when grove reads it.
    pub repo_dirs: Option<Vec<String>>,
    /// Where workspaces are created. Empty or absent: `~/.grove/workspaces`.
    pub workspace_dir: Option<String>,
    /// The Go grove's single repository directory. grove reads it as the first of
    /// `repo_dirs` and rewrites it as `repo_dirs` when it loads the file.
    #[deprecated = "use repo_dirs"]
    pub repos_dir: Option<String>,
    /// Named lists of repositories: `gw create NAME -p PRESET`.
    pub presets: Option<BTreeMap<String, Preset>>,
    /// Commands grove runs at points of every workspace's life (`--no-hooks` skips them).
    pub hooks: Option<Hooks>,
    /// Repositories whose `.grove.toml` commands run without being approved (`gw trust`).
    pub trust: Option<TrustRules>,
    /// Where workspaces' ports are: the workspace with slot `s` owns the `block` ports from
    /// `base + s × block` (docs/ports.md).
    pub ports: Option<PortRange>,
    /// What `gw delete`, `gw prune` and `gw create --replace` keep for `gw restore`.
    pub trash: Option<TrashSettings>,
    /// Defaults of `gw create` (and `gw add-repo`).
    pub create: Option<CreateSettings>,
}

/// Defaults of `gw create` and `gw add-repo`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CreateSettings {
    /// Copy each repository's `.grove.toml` `copy` paths into its new worktree without
    /// being asked (`--copy`); `--no-copy` turns it off for one command. Absent: false.
    pub copy: Option<bool>,
}

/// How long, and how much of, what delete removes stays restorable.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrashSettings {
    /// How long a deleted workspace stays restorable (`gw restore`, `gw undo`): an age
    /// such as `7d`, `12h` or `2w`, or a number of days; `0` erases at once, as
    /// `gw delete --purge` does. Absent: 7 days.
    pub keep: Option<AgeOrDays>,
    /// The most the trash holds: beyond it the oldest entries are erased first. A number
    /// of bytes or a size such as `10GiB` or `500MB`. Absent: 10 GiB.
    pub max_size: Option<SizeOrBytes>,
}

/// An age (`7d`, `12h`, `2w`, `0`) or a whole number of days.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum AgeOrDays {
    Age(#[schemars(regex(pattern = r"^\s*\d+[hdw]?\s*$"))] String),
    Days(u64),
}

/// A size (`10GiB`, `500MB`, `0`) or a whole number of bytes.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum SizeOrBytes {
    Size(
        #[schemars(regex(
            pattern = r"^\s*(\d+\.?\d*|\.\d+)\s*([kKmMgGtT]([iI]?[bB])?|[bB])?\s*$"
        ))]
        String,
    ),
    Bytes(u64),
}

/// Trust rules for repositories' `.grove.toml` commands.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrustRules {
    /// Directories whose repositories' `.grove.toml` commands (setup, run, hooks) run
    /// without asking. `~` is your home directory.
    pub dirs: Option<Vec<String>>,
}

/// The ports grove hands out to workspaces.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PortRange {
    /// The first port of slot 0's block. Absent: 20000.
    #[schemars(range(min = 1, max = 65535))]
    pub base: Option<u32>,
    /// Ports per workspace: at least as many as its repositories declare in all. Absent:
    /// 100.
    #[schemars(range(min = 1, max = 65535))]
    pub block: Option<u32>,
}

/// A named list of repositories.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Preset {
    /// Repository names, as `gw repos` lists them.
    pub repos: Option<Vec<String>>,
}

/// Global lifecycle hooks. Each is a shell command (`sh -c`) or a table with a `command`.
/// `{name}`, `{path}`, `{branch}`, `{source_url}`, `{source_ref}` and `{source_title}` in
/// the command are replaced by the workspace's values, shell-quoted.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Hooks {
    /// Runs after `gw create` made a workspace and each repository's `setup` ran.
    pub post_create: Option<Hook>,
    /// Runs before `gw delete`, `gw prune`, `gw create --replace` and `gw go -d` remove a
    /// workspace.
    pub pre_delete: Option<Hook>,
    /// Runs for `gw go -c` (close the workspace's tab or pane); required by it.
    pub on_close: Option<Hook>,
}

/// A hook: a shell command, or a table with the command and how to run it.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum Hook {
    /// The shell command. An empty string is no hook.
    Command(String),
    Table(HookTable),
}

/// A hook with its settings.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HookTable {
    /// The shell command.
    pub command: String,
    /// What the hook is for (documentation only).
    pub description: Option<String>,
    /// Print the hook's output live, each line prefixed `[<hook>] `, instead of only when
    /// it fails.
    pub stream: Option<bool>,
    /// Stop the hook (its whole process group) after this long: a Go duration such as
    /// `30s`, `5m` or `1h30m`. Empty or absent: no limit.
    #[schemars(regex(pattern = r"^\s*(0|((\d+\.?\d*|\.\d+)(ns|us|µs|ms|s|m|h))+)?\s*$"))]
    pub timeout: Option<String>,
    /// What a failing hook does to the command that ran it: `warn` (the default) reports it
    /// and carries on, `abort` fails the command with `HOOK_FAILED`.
    pub on_failure: Option<OnFailure>,
}

/// What a failing hook does.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnFailure {
    Warn,
    Abort,
    #[serde(rename = "")]
    Default,
}

/// A repository's own grove settings: `.grove.toml` at the top of its main checkout. The
/// commands run with the worktree as their directory, after `gw trust` approved them.
#[derive(JsonSchema)]
#[schemars(title = "grove .grove.toml", deny_unknown_fields)]
pub struct RepoFile {
    /// The branch new branches start from and `gw sync` rebases onto
    /// (`origin/<base_branch>`). Absent: the remote's default branch.
    pub base_branch: Option<String>,
    /// Run in each new worktree after the workspace is created.
    pub setup: Option<Commands>,
    /// Run in a worktree before grove removes it; failures are ignored.
    pub teardown: Option<Commands>,
    /// Run before `gw sync` rebases the worktree.
    pub pre_sync: Option<Commands>,
    /// Run after `gw sync` rebased the worktree.
    pub post_sync: Option<Commands>,
    /// The repository's dev processes, started by `gw run`.
    pub run: Option<Commands>,
    /// Run before `run`.
    pub pre_run: Option<Commands>,
    /// Run after `run` ended.
    pub post_run: Option<Commands>,
    /// The repository's named ports and the port each uses outside grove (`http = 8080`).
    /// In each workspace each gets a port of its own, given to every command as
    /// `GROVE_PORT_<REPO>_<NAME>` (and as `PORT` when there is one) and to `.grove.toml`
    /// commands as `{port.<repo>.<name>}` (docs/ports.md).
    /// Names are letters, digits, `_` and `-`.
    pub ports: Option<BTreeMap<String, Port>>,
    /// Paths of this checkout that `gw create --copy` and `gw add-repo --copy` copy into a
    /// new worktree, so it starts with the build caches and dependencies this one has
    /// (`node_modules`, `target`, `.venv`) and local settings (`.env.local`). Only paths
    /// git ignores, or does not track: a tracked one is refused. Relative, `/`-separated;
    /// `*`, `?` and `[…]` match within one component (`packages/*/node_modules`), `**` is
    /// not supported. Copied as copy-on-write clones where the file system can, never as
    /// hard links, and never over a file the new worktree has.
    pub copy: Option<Paths>,
}

/// One path, or several.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum Paths {
    One(String),
    Several(Vec<String>),
}

/// A TCP port.
#[derive(JsonSchema)]
pub struct Port(#[schemars(range(min = 1, max = 65535))] u32);

/// One shell command, or several run in order.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum Commands {
    One(String),
    Several(Vec<String>),
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use serde_json::{Map, Value, json};

    use crate::config::{Config, RepoConfig};
    use crate::env::Env;
    use crate::home::GroveHome;

    fn schema(name: &str) -> Value {
        serde_json::from_str(crate::schema::find(name).unwrap().json).unwrap()
    }

    /// A TOML document as the JSON an editor validates against the schema.
    fn to_json(text: &str) -> Value {
        fn item(i: &toml_edit::Item) -> Value {
            match i {
                toml_edit::Item::Value(v) => value(v),
                toml_edit::Item::Table(t) => table(t.iter()),
                toml_edit::Item::ArrayOfTables(a) => {
                    Value::Array(a.iter().map(|t| table(t.iter())).collect())
                }
                toml_edit::Item::None => Value::Null,
            }
        }
        fn value(v: &toml_edit::Value) -> Value {
            match v {
                toml_edit::Value::String(s) => json!(s.value()),
                toml_edit::Value::Integer(n) => json!(n.value()),
                toml_edit::Value::Float(f) => json!(f.value()),
                toml_edit::Value::Boolean(b) => json!(b.value()),
                toml_edit::Value::Datetime(d) => json!(d.value().to_string()),
                toml_edit::Value::Array(a) => Value::Array(a.iter().map(value).collect()),
                toml_edit::Value::InlineTable(t) => {
                    Value::Object(t.iter().map(|(k, v)| (k.to_string(), value(v))).collect())
                }
            }
        }
        fn table<'a>(entries: impl Iterator<Item = (&'a str, &'a toml_edit::Item)>) -> Value {
            Value::Object(
                entries
                    .map(|(k, v)| (k.to_string(), item(v)))
                    .collect::<Map<_, _>>(),
            )
        }
        let doc: toml_edit::DocumentMut = text.parse().unwrap();
        table(doc.iter())
    }

    /// The schema's complaints about `text`, one line each (none: it validates).
    fn complaints(schema_name: &str, text: &str) -> Vec<String> {
        let schema = schema(schema_name);
        let v = jsonschema::validator_for(&schema).unwrap();
        v.iter_errors(&to_json(text))
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }

    fn parse_config(text: &str) -> Result<Config, String> {
        let dir = tempfile::tempdir().unwrap();
        let env = Env::for_home(dir.path(), dir.path());
        let home = GroveHome::new(dir.path().join(".grove"));
        Config::parse(&home.config(), text, &home, &env).map_err(|e| e.to_string())
    }

    /// Every key and form the parser reads, as the Go grove and grove write them.
    const FULL_CONFIG: &str = r#"#:schema https://github.com/grove-rs/grove/releases/latest/download/config.schema.json
repo_dirs = ["~/src", "/opt/work"]
workspace_dir = "~/ws"
repos_dir = "/legacy"

[presets.backend]
repos = ["svc-auth", "api"]

[presets.empty]

[hooks]
post_create = "echo created {name}"
pre_delete = { command = "check {path}", description = "refuse dirty", stream = true, timeout = "1m30s", on_failure = "abort" }

[hooks.on_close]
command = "zellij action close-pane"
timeout = ""
on_failure = "warn"

[trash]
keep = "7d"
max_size = "10GiB"

[create]
copy = true
"#;

    const FULL_REPO: &str = r#"#:schema https://github.com/grove-rs/grove/releases/latest/download/grove-toml.schema.json
base_branch = "develop"
setup = ["npm ci", "make"]
teardown = "rm -rf tmp"
pre_sync = "git stash"
post_sync = ["git stash pop"]
run = "npm run dev"
pre_run = []
post_run = "echo done"
copy = ["node_modules", "target/", "packages/*/dist"]
"#;

    #[test]
    fn what_the_parsers_read_validates() {
        parse_config(FULL_CONFIG).unwrap();
        assert_eq!(complaints("config", FULL_CONFIG), Vec::<String>::new());
        RepoConfig::parse(FULL_REPO).unwrap();
        assert_eq!(complaints("grove-toml", FULL_REPO), Vec::<String>::new());
        for empty in ["", "# nothing\n"] {
            assert!(complaints("config", empty).is_empty());
            assert!(complaints("grove-toml", empty).is_empty());
        }
    }

    /// What an editor flags: a misspelled key anywhere, a value of the wrong type, and
    /// the values the parser refuses too.
    #[test]
    fn misspellings_and_bad_values_are_flagged() {
        for (bad, parser_refuses) in [
            ("workspace_dri = \"~/ws\"\n", false),
            ("repo_dirs = \"~/src\"\n", true),
            ("[presets.a]\nrepo = [\"x\"]\n", false),
            ("[hooks]\npost_crate = \"echo\"\n", false),
            ("[hooks.pre_delete]\ncomand = \"x\"\n", true),
            (
                "[hooks.pre_delete]\ncommand = \"x\"\nstreem = true\n",
                false,
            ),
            (
                "[hooks.pre_delete]\ncommand = \"x\"\non_failure = \"ignore\"\n",
                true,
            ),
            (
                "[hooks.pre_delete]\ncommand = \"x\"\ntimeout = \"30 seconds\"\n",
                true,
            ),
            (
                "[hooks.pre_delete]\ncommand = \"x\"\nstream = \"yes\"\n",
                true,
            ),
        ] {
            assert!(!complaints("config", bad).is_empty(), "not flagged: {bad}");
            assert_eq!(parse_config(bad).is_err(), parser_refuses, "{bad}");
        }
        for bad in [
            "setpu = \"make\"\n",
            "setup = 5\n",
            "base_branch = [\"main\"]\n",
        ] {
            assert!(
                !complaints("grove-toml", bad).is_empty(),
                "not flagged: {bad}"
            );
        }
    }

    /// Every property name anywhere in a schema.
    fn properties(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(props)) = m.get("properties") {
                    out.extend(props.keys().cloned());
                }
                m.values().for_each(|x| properties(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| properties(x, out)),
            _ => {}
        }
    }

    /// The string literals the parsers look keys up with (`get("…")`, `list("…")`, a hook
    /// kind's `key()`), outside their tests.
    fn keys_read(file: &str) -> BTreeSet<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/config")
            .join(file);
        let text = crate::fsx::read(&path).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let mut keys = BTreeSet::new();
        for pat in [".get(\"", "list(\"", "contains_key(\"", " => \""] {
            for (at, _) in code.match_indices(pat) {
                let rest = &code[at + pat.len()..];
                let key = &rest[..rest.find('"').unwrap()];
                if !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                    keys.insert(key.to_string());
                }
            }
        }
        keys
    }

    /// The schemas and the parsers name the same keys: a key added to a parser and not
    /// to its schema would be flagged in every editor as a misspelling, and a key in a
    /// schema no parser reads would be completed and then ignored.
    #[test]
    fn the_schemas_name_exactly_the_keys_the_parsers_read() {
        let mut config = BTreeSet::new();
        properties(&schema("config"), &mut config);
        let mut read: BTreeSet<String> = keys_read("mod.rs");
        read.extend(keys_read("hooks.rs"));
        // `warn` and `abort` are values, read by the same `=> "…"` pattern.
        read.retain(|k| k != "warn" && k != "abort");
        assert_eq!(
            config, read,
            "config.toml: schema (left) against parser (right)"
        );

        let mut repo = BTreeSet::new();
        properties(&schema("grove-toml"), &mut repo);
        assert_eq!(
            repo,
            keys_read("repo.rs"),
            ".grove.toml: schema against parser"
        );
    }

    /// Taplo and Tombi, the editors' TOML servers, read the schema from a `#:schema` line
    /// and flag a misspelled key and a bad value, and accept what grove writes.
    #[test]
    fn taplo_and_tombi_flag_misspellings_from_a_schema_line() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema");
        let dir = tempfile::tempdir().unwrap();
        let mut checked = 0;
        for (tool, args) in [
            ("taplo", &["check"][..]),
            ("tombi", &["lint", "--offline"][..]),
        ] {
            if !e2e::require(tool) {
                continue;
            }
            for (schema, name, good, bad, flagged) in [
                (
                    "config",
                    "config.toml",
                    FULL_CONFIG,
                    "workspace_dri = \"~/ws\"\n",
                    "workspace_dri",
                ),
                (
                    "grove-toml",
                    ".grove.toml",
                    FULL_REPO,
                    "setpu = \"make\"\n",
                    "setpu",
                ),
            ] {
                let line = format!(
                    "#:schema {}\n",
                    docs.join(format!("{schema}.json")).display()
                );
                // The published line names the release's URL; here the file beside it.
                let good = good.lines().skip(1).collect::<Vec<_>>().join("\n");
                for (text, ok) in [
                    (format!("{line}{good}\n"), true),
                    (format!("{line}{bad}"), false),
                ] {
                    let file = dir.path().join(name);
                    crate::fsx::write_atomic(&file, text.as_bytes()).unwrap();
                    let out = crate::proc::Cmd::new(tool, dir.path())
                        .args(args)
                        .arg(&file)
                        .env("HOME", dir.path())
                        .env("XDG_CACHE_HOME", dir.path().join("cache"))
                        .env("NO_COLOR", "1")
                        .run()
                        .unwrap();
                    let said = format!("{}{}", out.stdout, out.stderr);
                    assert_eq!(out.success(), ok, "{tool} on {name}:\n{text}\n{said}");
                    if !ok {
                        assert!(
                            said.contains(flagged),
                            "{tool} did not name `{flagged}`: {said}"
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked == 0 || checked == 8, "{checked} checks");
    }
}
