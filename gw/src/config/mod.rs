//! Configuration: the global `config.toml` and each repository's `.grove.toml`.
//!
//! `config.toml` is edited with `toml_edit`, so comments, ordering and formatting the user
//! wrote survive every change grove makes. Keys grove does not know are left alone.

mod hooks;
mod repo;
#[cfg(test)]
pub(crate) mod schema;
pub mod toml;

pub use hooks::{Hook, HookKind, Hooks, OnFailure};
pub use repo::{FILE_NAME as REPO_FILE, RepoConfig, is_port_name};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, Value};

use crate::env::Env;
use crate::fsx;
use crate::home::GroveHome;
use toml::Reader;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Io(#[from] fsx::Error),
    #[error("grove is not initialized (no `{}`)", path.display())]
    NotInitialized { path: PathBuf },
    #[error("invalid config `{}`: {detail}", path.display())]
    Invalid { path: PathBuf, detail: String },
    #[error("invalid `{}`: {detail}", path.display())]
    RepoConfig { path: PathBuf, detail: String },
}

/// The global configuration, with the document it was read from kept for edits.
#[derive(Debug, Clone)]
pub struct Config {
    path: PathBuf,
    doc: DocumentMut,
    /// Source directories holding repositories, absolute and `~`-expanded.
    pub repo_dirs: Vec<PathBuf>,
    /// Where workspaces are created, absolute.
    pub workspace_dir: PathBuf,
    /// Named repository lists.
    pub presets: BTreeMap<String, Vec<String>>,
    pub hooks: Hooks,
    /// `[trust] dirs`: repositories inside these directories have their `.grove.toml`
    /// commands run without asking (absolute, `~`-expanded).
    pub trust_dirs: Vec<PathBuf>,
    /// `[ports]`: where workspaces' ports are.
    pub ports: PortRange,
    /// `[trash]`: how long, and how much of, what delete removes is kept for `gw restore`.
    pub trash: Retention,
    /// `[create] copy`: `gw create` and `gw add-repo` copy each repository's `.grove.toml`
    /// `copy` paths without `--copy`.
    pub copy: bool,
}

/// `[trash]` in `config.toml`: a deleted workspace stays restorable for `keep` (zero:
/// erased at once, as `gw delete --purge` does), and the oldest entries go first while the
/// trash holds more than `max_size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub keep: std::time::Duration,
    pub max_size: u64,
}

impl Default for Retention {
    /// A week, as a desktop trash or git's reflog of a deleted branch would give a person
    /// to notice; 10 GiB, a few copies of a large workspace with its build output.
    fn default() -> Retention {
        Retention {
            keep: std::time::Duration::from_secs(7 * 86_400),
            max_size: 10 << 30,
        }
    }
}

/// `[ports]` in `config.toml`: workspace `slot`'s ports are the `block` ports from
/// `base + slot × block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub base: u16,
    pub block: u16,
}

impl Default for PortRange {
    /// Above the ports dev servers pick by default (3000, 5173, 8080, …) and below the
    /// ephemeral range Linux hands out for outgoing connections (32768 on): 127 workspaces
    /// of up to 100 ports each fit in between.
    fn default() -> PortRange {
        PortRange {
            base: 20000,
            block: 100,
        }
    }
}

impl Config {
    /// Loads `config.toml`; fails with `NotInitialized` when it does not exist.
    pub fn load(home: &GroveHome, env: &Env) -> Result<Config, Error> {
        Config::load_optional(home, env)?.ok_or_else(|| Error::NotInitialized {
            path: home.config(),
        })
    }

    /// Loads `config.toml`, or `None` when grove has not been initialised. A legacy
    /// `repos_dir` key is migrated to `repo_dirs` and the file rewritten.
    pub fn load_optional(home: &GroveHome, env: &Env) -> Result<Option<Config>, Error> {
        let path = home.config();
        let Some(text) = fsx::read_optional(&path)? else {
            return Ok(None);
        };
        let mut config = Config::parse(&path, &text, home, env)?;
        if config.doc.contains_key("repos_dir") {
            config.migrate_repos_dir();
            config.save()?;
        }
        Ok(Some(config))
    }

    /// Loads `config.toml` like [`Config::load_optional`] but never writes: a legacy
    /// `repos_dir` is understood without rewriting the file (for read-only tools).
    pub fn peek(home: &GroveHome, env: &Env) -> Result<Option<Config>, Error> {
        let path = home.config();
        let Some(text) = fsx::read_optional(&path)? else {
            return Ok(None);
        };
        Config::parse(&path, &text, home, env).map(Some)
    }

    /// A fresh configuration with the defaults, not yet saved.
    pub fn new(home: &GroveHome) -> Config {
        Config {
            path: home.config(),
            doc: DocumentMut::new(),
            repo_dirs: Vec::new(),
            workspace_dir: home.default_workspace_dir(),
            presets: BTreeMap::new(),
            hooks: Hooks::default(),
            trust_dirs: Vec::new(),
            ports: PortRange::default(),
            trash: Retention::default(),
            copy: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads `text` as the `config.toml` at `path` (public for the fuzz targets).
    #[doc(hidden)]
    pub fn parse(path: &Path, text: &str, home: &GroveHome, env: &Env) -> Result<Config, Error> {
        let invalid = |detail: String| Error::Invalid {
            path: path.to_path_buf(),
            detail,
        };
        let r = Reader::new(text);
        let doc = toml_edit::Document::parse(text.to_string())
            .map_err(|e| invalid(r.syntax_error(&e)))?;
        let root = doc.as_table();

        let mut repo_dirs = Vec::new();
        if let Some(item) = root.get("repo_dirs") {
            for s in r.string_list(item, "repo_dirs").map_err(invalid)? {
                repo_dirs.push(env.resolve_path(Path::new(&s)));
            }
        }
        if let Some(item) = root.get("repos_dir") {
            let legacy = r.string(item, "repos_dir").map_err(invalid)?;
            let legacy = env.resolve_path(Path::new(&legacy));
            if !repo_dirs.contains(&legacy) {
                repo_dirs.insert(0, legacy);
            }
        }
        let workspace_dir = match root.get("workspace_dir") {
            Some(item) => {
                let s = r.string(item, "workspace_dir").map_err(invalid)?;
                if s.trim().is_empty() {
                    home.default_workspace_dir()
                } else {
                    env.resolve_path(Path::new(&s))
                }
            }
            None => home.default_workspace_dir(),
        };
        let mut presets = BTreeMap::new();
        if let Some(item) = root.get("presets") {
            let table = r.table(item, "presets").map_err(invalid)?;
            for (name, p) in table.iter() {
                let key = format!("presets.{name}");
                let ptable = r.table(p, &key).map_err(invalid)?;
                let repos = match ptable.get("repos") {
                    Some(item) => r
                        .string_list(item, &format!("{key}.repos"))
                        .map_err(invalid)?,
                    None => Vec::new(),
                };
                presets.insert(name.to_string(), repos);
            }
        }
        let hooks = match root.get("hooks") {
            Some(item) => Hooks::parse(&r, item).map_err(invalid)?,
            None => Hooks::default(),
        };
        let mut trust_dirs = Vec::new();
        if let Some(item) = root.get("trust") {
            let table = r.table(item, "trust").map_err(invalid)?;
            if let Some(dirs) = table.get("dirs") {
                for s in r.string_list(dirs, "trust.dirs").map_err(invalid)? {
                    trust_dirs.push(env.resolve_path(Path::new(&s)));
                }
            }
        }
        let mut ports = PortRange::default();
        if let Some(item) = root.get("ports") {
            let table = r.table(item, "ports").map_err(invalid)?;
            if let Some(v) = table.get("base") {
                ports.base = r.port(v, "ports.base", 1).map_err(invalid)?;
            }
            if let Some(v) = table.get("block") {
                ports.block = r.port(v, "ports.block", 1).map_err(invalid)?;
            }
        }
        let mut trash = Retention::default();
        if let Some(item) = root.get("trash") {
            let table = r.table(item, "trash").map_err(invalid)?;
            if let Some(v) = table.get("keep") {
                trash.keep = r.age(v, "trash.keep").map_err(invalid)?;
            }
            if let Some(v) = table.get("max_size") {
                trash.max_size = r.size(v, "trash.max_size").map_err(invalid)?;
            }
        }
        let mut copy = false;
        if let Some(item) = root.get("create") {
            let table = r.table(item, "create").map_err(invalid)?;
            if let Some(v) = table.get("copy") {
                copy = r.bool(v, "create.copy").map_err(invalid)?;
            }
        }
        Ok(Config {
            path: path.to_path_buf(),
            doc: doc.into_mut(),
            repo_dirs,
            workspace_dir,
            presets,
            hooks,
            trust_dirs,
            ports,
            trash,
            copy,
        })
    }

    /// Replaces a legacy `repos_dir` with `repo_dirs` in the document (public for the fuzz
    /// targets; [`Config::load_optional`] does it and saves).
    #[doc(hidden)]
    pub fn migrate_repos_dir(&mut self) {
        // Comments written above the old key move to the new one.
        let prefix = self
            .doc
            .as_table()
            .key("repos_dir")
            .and_then(|k| k.leaf_decor().prefix().cloned());
        let had_repo_dirs = self.doc.contains_key("repo_dirs");
        // The keys written after the old one, moved behind the new one below so that it
        // takes the old key's place (a comment heading the file stays at the top).
        let after: Vec<String> = self
            .doc
            .as_table()
            .iter()
            .map(|(k, item)| (k.to_string(), item.is_value()))
            .skip_while(|(k, _)| k != "repos_dir")
            .skip(1)
            .filter(|(_, is_value)| *is_value)
            .map(|(k, _)| k)
            .collect();
        self.doc.remove("repos_dir");
        let dirs = self.repo_dirs.clone();
        self.set_repo_dirs(dirs);
        let root = self.doc.as_table_mut();
        if !had_repo_dirs {
            for k in &after {
                if let Some((key, item)) = root.remove_entry(k) {
                    root.insert_formatted(&key, item);
                }
            }
        }
        if let (Some(prefix), Some(mut key)) = (prefix, root.key_mut("repo_dirs")) {
            key.leaf_decor_mut().set_prefix(prefix);
        }
    }

    /// Replaces `repo_dirs`.
    pub fn set_repo_dirs(&mut self, dirs: Vec<PathBuf>) {
        let mut arr = Array::new();
        for d in &dirs {
            arr.push(d.to_string_lossy().as_ref());
        }
        match self.doc.get_mut("repo_dirs").and_then(Item::as_value_mut) {
            Some(v) => {
                let decor = v.decor().clone();
                *v = Value::Array(arr);
                *v.decor_mut() = decor;
            }
            None => {
                self.doc.insert("repo_dirs", toml_edit::value(arr));
            }
        }
        self.repo_dirs = dirs;
    }

    /// Sets `workspace_dir` when it is not the default.
    pub fn set_workspace_dir(&mut self, dir: &Path, home: &GroveHome) {
        if dir != home.default_workspace_dir() || self.doc.contains_key("workspace_dir") {
            self.doc.insert(
                "workspace_dir",
                toml_edit::value(dir.to_string_lossy().as_ref()),
            );
        }
        self.workspace_dir = dir.to_path_buf();
    }

    /// Adds or replaces a preset.
    pub fn set_preset(&mut self, name: &str, repos: &[String]) {
        if !self.doc.contains_key("presets") {
            let mut t = Table::new();
            t.set_implicit(true);
            self.doc.insert("presets", Item::Table(t));
        }
        let mut arr = Array::new();
        for r in repos {
            arr.push(r.as_str());
        }
        if let Some(presets) = self
            .doc
            .get_mut("presets")
            .and_then(Item::as_table_like_mut)
        {
            match presets.get_mut(name).and_then(Item::as_table_like_mut) {
                Some(t) => {
                    t.insert("repos", toml_edit::value(arr));
                }
                None => {
                    let mut t = Table::new();
                    t.insert("repos", toml_edit::value(arr));
                    presets.insert(name, Item::Table(t));
                }
            }
        }
        self.presets.insert(name.to_string(), repos.to_vec());
    }

    /// Removes a preset; `false` when there was none by that name.
    pub fn remove_preset(&mut self, name: &str) -> bool {
        let removed = self
            .doc
            .get_mut("presets")
            .and_then(Item::as_table_like_mut)
            .and_then(|t| t.remove(name))
            .is_some();
        self.presets.remove(name);
        removed
    }

    /// The document as it would be written.
    pub fn to_toml(&self) -> String {
        self.doc.to_string()
    }

    /// Writes the configuration atomically.
    pub fn save(&self) -> Result<(), Error> {
        fsx::write_atomic(&self.path, self.to_toml().as_bytes())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(dir: &Path) -> (Env, GroveHome) {
        let env = Env::for_home(dir, dir);
        let home = GroveHome::new(dir.join(".grove"));
        (env, home)
    }

    /// A `config.toml` as the Go grove writes it, with a user's comment, every hook form
    /// and presets.
    const GO_CONFIG: &str = r#"# my grove config
repo_dirs = ["~/src", "/opt/work"]
workspace_dir = "~/ws"

[presets.backend]
repos = ["svc-auth", "api"]

[hooks]
post_create = "echo created {name}"
pre_delete = { command = "check {path}", description = "refuse dirty", stream = true, timeout = "30s", on_failure = "abort" }

[hooks.on_close]
command = "zellij action close-pane"
"#;

    #[test]
    fn reads_go_config() {
        let dir = tempfile::tempdir().unwrap();
        let (env, home) = env(dir.path());
        let c = Config::parse(&home.config(), GO_CONFIG, &home, &env).unwrap();
        assert_eq!(
            c.repo_dirs,
            [dir.path().join("src"), PathBuf::from("/opt/work")]
        );
        assert_eq!(c.workspace_dir, dir.path().join("ws"));
        assert_eq!(c.presets["backend"], ["svc-auth", "api"]);
        let pc = c.hooks.post_create.as_ref().unwrap();
        assert_eq!(pc.command, "echo created {name}");
        assert!(!pc.stream);
        assert_eq!(pc.on_failure, OnFailure::Warn);
        let pd = c.hooks.pre_delete.as_ref().unwrap();
        assert!(pd.stream);
        assert_eq!(pd.on_failure, OnFailure::Abort);
        assert_eq!(pd.timeout, Some(std::time::Duration::from_secs(30)));
        assert_eq!(pd.description.as_deref(), Some("refuse dirty"));
        assert_eq!(
            c.hooks.on_close.as_ref().unwrap().command,
            "zellij action close-pane"
        );
    }

    #[test]
    fn edits_keep_comments_and_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let (env, home) = env(dir.path());
        let text = format!("{GO_CONFIG}\n[plugin_settings]\nfoo = 1 # keep me\n");
        let mut c = Config::parse(&home.config(), &text, &home, &env).unwrap();
        c.set_preset("web", &["web".into()]);
        let mut dirs = c.repo_dirs.clone();
        dirs.push("/more".into());
        c.set_repo_dirs(dirs);
        let out = c.to_toml();
        assert!(out.starts_with("# my grove config\n"), "{out}");
        assert!(out.contains("foo = 1 # keep me"), "{out}");
        assert!(
            out.contains("post_create = \"echo created {name}\""),
            "{out}"
        );
        assert!(out.contains("[presets.web]"), "{out}");
        let again = Config::parse(&home.config(), &out, &home, &env).unwrap();
        assert_eq!(again.presets["web"], ["web"]);
        assert_eq!(again.repo_dirs.len(), 3);
        assert!(again.remove_preset_for_test("backend"));
    }

    impl Config {
        fn remove_preset_for_test(mut self, name: &str) -> bool {
            let removed = self.remove_preset(name);
            removed && !self.to_toml().contains("[presets.backend]")
        }
    }

    #[test]
    fn port_range_defaults_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let (env, home) = env(dir.path());
        let parse = |text: &str| Config::parse(&home.config(), text, &home, &env);
        assert_eq!(parse("").unwrap().ports, PortRange::default());
        let c = parse("[ports]\nbase = 41000\nblock = 10\n").unwrap();
        assert_eq!(
            c.ports,
            PortRange {
                base: 41000,
                block: 10
            }
        );
        assert_eq!(parse("[ports]\nblock = 5\n").unwrap().ports.base, 20000);
        for (text, want) in [
            (
                "[ports]\nbase = 0\n",
                "line 2, key `ports.base`: 0 is not from 1 to 65535",
            ),
            ("[ports]\nblock = 65536\n", "ports.block`: 65536 is not"),
            ("ports = 1\n", "key `ports`: expected a table"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.contains("config.toml") && err.contains(want),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn trash_retention_defaults_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let (env, home) = env(dir.path());
        let parse = |text: &str| Config::parse(&home.config(), text, &home, &env);
        assert_eq!(parse("").unwrap().trash, Retention::default());
        let c = parse("[trash]\nkeep = \"12h\"\nmax_size = \"500MiB\"\n").unwrap();
        assert_eq!(c.trash.keep, std::time::Duration::from_secs(12 * 3600));
        assert_eq!(c.trash.max_size, 500 << 20);
        let c = parse("[trash]\nkeep = \"0\"\nmax_size = 1000\n").unwrap();
        assert_eq!(c.trash.keep, std::time::Duration::ZERO);
        assert_eq!(c.trash.max_size, 1000);
        assert_eq!(
            parse("[trash]\nkeep = 3\n").unwrap().trash.keep,
            std::time::Duration::from_secs(3 * 86_400)
        );
        for (text, want) in [
            (
                "[trash]\nkeep = \"soon\"\n",
                "key `trash.keep`: invalid age `soon`",
            ),
            (
                "[trash]\nmax_size = \"lots\"\n",
                "key `trash.max_size`: invalid size `lots`",
            ),
            (
                "[trash]\nmax_size = -1\n",
                "key `trash.max_size`: -1 is not",
            ),
            ("trash = 1\n", "key `trash`: expected a table"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn legacy_repos_dir_is_migrated_on_load() {
        let dir = tempfile::tempdir().unwrap();
        let (env, home) = env(dir.path());
        fsx::write_atomic(&home.config(), b"# old\nrepos_dir = \"/legacy/src\"\n").unwrap();
        let c = Config::load(&home, &env).unwrap();
        assert_eq!(c.repo_dirs, [PathBuf::from("/legacy/src")]);
        let written = fsx::read(&home.config()).unwrap();
        assert!(!written.contains("repos_dir"), "{written}");
        assert!(
            written.contains("repo_dirs = [\"/legacy/src\"]"),
            "{written}"
        );
        assert!(written.contains("# old"), "{written}");

        // The new key takes the old one's place: a comment heading the file stays on top.
        fsx::write_atomic(
            &home.config(),
            b"# header\nrepos_dir = \"/legacy/src\"\nworkspace_dir = \"/ws\"\n\n[presets.a]\nrepos = [\"x\"]\n",
        )
        .unwrap();
        Config::load(&home, &env).unwrap();
        let written = fsx::read(&home.config()).unwrap();
        assert!(
            written
                .starts_with("# header\nrepo_dirs = [\"/legacy/src\"]\nworkspace_dir = \"/ws\"\n"),
            "{written}"
        );
        assert!(written.contains("[presets.a]"), "{written}");
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let (env, home) = env(dir.path());
        let err = Config::parse(
            &home.config(),
            "\n\nrepo_dirs = \"/not/a/list\"\n",
            &home,
            &env,
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("config.toml") && msg.contains("line 3") && msg.contains("repo_dirs"),
            "{msg}"
        );
        let err = Config::parse(&home.config(), "repo_dirs = [", &home, &env).unwrap_err();
        assert!(err.to_string().contains("config.toml"), "{err}");
        let err = Config::parse(
            &home.config(),
            "[hooks]\npost_create = { stream = true }\n",
            &home,
            &env,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("hooks.post_create.command"),
            "{err}"
        );
        assert!(matches!(
            Config::load(&home, &env),
            Err(Error::NotInitialized { .. })
        ));
    }
}
