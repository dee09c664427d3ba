//! The end-to-end harness: runs the real `gw` binary against throwaway git repositories
//! with `file://` origins, in a hermetic environment (temporary `HOME` and `GW_HOME`,
//! no host git config, fixed identity and locale).
//!
//! The binary is `$GW_BIN` when set (`cargo xtask e2e` sets it to the release build), else
//! the debug build that `cargo build -p gw` produces, built once per test process; the same
//! for `gw-migrate` with `$GW_MIGRATE_BIN`.
#![allow(clippy::disallowed_methods, clippy::print_stderr)]

use std::ffi::OsStr;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

pub mod audit;
pub mod chaos;
pub mod secrets;
pub mod statediff;
pub mod term;
pub mod unprivileged;

pub use term::{Stdout, Term};

/// The one environment that keeps git away from the host's and the system's configuration
/// and identity, and from prompting: for the e2e suite, grove's own unit and integration
/// tests (through `grove::proc::set_defaults`) and xtask's fixtures alike.
pub const HERMETIC_GIT: &[(&str, &str)] = &[
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_SYSTEM", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_COUNT", "3"),
    ("GIT_CONFIG_KEY_0", "init.defaultBranch"),
    ("GIT_CONFIG_VALUE_0", "main"),
    ("GIT_CONFIG_KEY_1", "advice.detachedHead"),
    ("GIT_CONFIG_VALUE_1", "false"),
    ("GIT_CONFIG_KEY_2", "protocol.file.allow"),
    ("GIT_CONFIG_VALUE_2", "always"),
    ("GIT_AUTHOR_NAME", "Grove Test"),
    ("GIT_AUTHOR_EMAIL", "test@grove.invalid"),
    ("GIT_COMMITTER_NAME", "Grove Test"),
    ("GIT_COMMITTER_EMAIL", "test@grove.invalid"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// The `gw` binary under test.
pub fn gw_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("GW_BIN") {
            return PathBuf::from(p);
        }
        build_bin("gw")
    })
}

/// The `gw-migrate` binary under test.
pub fn migrate_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("GW_MIGRATE_BIN") {
            return PathBuf::from(p);
        }
        build_bin("gw-migrate")
    })
}

/// Builds a binary of this workspace with cargo and returns its path.
pub fn build_bin(name: &str) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "--message-format=json",
            "--bin",
            name,
            "--manifest-path",
        ])
        .arg(&manifest)
        .stderr(Stdio::inherit())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo build --bin {name} failed");
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if msg["reason"] == "compiler-artifact"
            && msg["target"]["name"] == name
            && let Some(exe) = msg["executable"].as_str()
        {
            return PathBuf::from(exe);
        }
    }
    panic!("cargo did not report an executable for {name}");
}

/// A temporary world: a home directory, a grove directory, a directory of repositories and
/// their bare origins.
pub struct TestEnv {
    tmp: Option<tempfile::TempDir>,
    pub root: PathBuf,
    pub home: PathBuf,
    pub grove_home: PathBuf,
    /// Where source repositories live (`gw init <repos>`).
    pub repos: PathBuf,
    /// Bare repositories the sources clone from.
    pub origins: PathBuf,
    extra_env: Vec<(String, String)>,
    /// The `gw` to run instead of [`gw_bin`] (see [`TestEnv::with_bin`]).
    bin: Option<PathBuf>,
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        if std::env::var_os("GW_E2E_KEEP").is_some()
            && let Some(t) = self.tmp.take()
        {
            eprintln!("kept test directory {}", t.keep().display());
        }
    }
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let tmp = tempfile::Builder::new()
            .prefix("grove-e2e.")
            .tempdir()
            .expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        TestEnv::rooted(root, Some(tmp))
    }

    fn rooted(root: PathBuf, tmp: Option<tempfile::TempDir>) -> TestEnv {
        let env = TestEnv {
            home: root.join("home"),
            grove_home: root.join("home/.grove"),
            repos: root.join("repos"),
            origins: root.join("origins"),
            root,
            tmp,
            extra_env: Vec::new(),
            bin: None,
        };
        for d in [&env.home, &env.repos, &env.origins, &env.root.join("tmp")] {
            std::fs::create_dir_all(d).expect("create test dirs");
        }
        env
    }

    /// An environment rooted at `root` (created when missing, never removed by this value):
    /// for a world rebuilt at the same absolute path again and again, as the chaos suites
    /// do, so that the paths recorded inside it stay true.
    pub fn at(root: &Path) -> TestEnv {
        std::fs::create_dir_all(root).expect("create the root");
        TestEnv::rooted(root.canonicalize().expect("canonical root"), None)
    }

    /// Runs `bin` as `gw` (instead of `$GW_BIN` or the debug build).
    pub fn with_bin(mut self, bin: &Path) -> TestEnv {
        self.bin = Some(bin.to_path_buf());
        self
    }

    /// The `gw` this environment runs.
    pub fn bin(&self) -> &Path {
        self.bin.as_deref().unwrap_or_else(|| gw_bin())
    }

    /// A new environment with `names` as repositories (each with an origin) and grove
    /// initialised on them.
    pub fn with_repos(names: &[&str]) -> TestEnv {
        let env = TestEnv::new();
        for n in names {
            env.repo(n);
        }
        env.gw(&["init", env.repos.to_str().unwrap()]).success();
        env
    }

    /// Sets an extra environment variable for every `gw` run.
    pub fn set_env(&mut self, k: &str, v: &str) {
        self.extra_env.push((k.into(), v.into()));
    }

    fn hermetic(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GW_HOME", &self.grove_home)
            .env("TMPDIR", self.root.join("tmp"))
            .envs(HERMETIC_GIT.iter().copied())
            .env("GIT_AUTHOR_DATE", "2001-02-03T04:05:06Z")
            .env("GIT_COMMITTER_DATE", "2001-02-03T04:05:06Z")
            .env("GIT_CEILING_DIRECTORIES", &self.root)
            .env("LANG", "C")
            .env("LC_ALL", "C")
            .env("NO_COLOR", "1")
            .env("COLUMNS", "100");
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
    }

    /// A `gw` command with the hermetic environment, run from the test root.
    pub fn gw_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(self.bin());
        self.hermetic(&mut cmd);
        cmd.args(args).current_dir(&self.root).stdin(Stdio::null());
        cmd
    }

    /// Runs `gw args` from the test root.
    pub fn gw(&self, args: &[&str]) -> Run {
        self.gw_in(&self.root, args)
    }

    /// Runs `gw args` as an agent would: again while it says `TRANSIENT` (exit 7: a lock is
    /// held, or an interrupted command's git processes are still finishing), for at most a
    /// minute.
    pub fn gw_retrying(&self, args: &[&str]) -> Run {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let run = self.gw(args);
            if run.status != 7 || std::time::Instant::now() >= deadline {
                return run;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Runs `gw args` from `cwd`.
    pub fn gw_in(&self, cwd: &Path, args: &[&str]) -> Run {
        let mut cmd = self.gw_cmd(args);
        cmd.current_dir(cwd);
        Run::from(
            format!("gw {}", args.join(" ")),
            cmd.output().expect("gw runs"),
        )
    }

    /// Runs `gw-migrate args` from the test root, in the hermetic environment.
    pub fn migrate(&self, args: &[&str]) -> Run {
        self.run(migrate_bin(), args)
    }

    /// `program args` with the hermetic environment, run from the test root (for other
    /// binaries, such as an older `gw`).
    pub fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        self.hermetic(&mut cmd);
        cmd.args(args).current_dir(&self.root).stdin(Stdio::null());
        cmd
    }

    /// Runs `program args` with the hermetic environment from the test root.
    pub fn run(&self, program: &Path, args: &[&str]) -> Run {
        let name = program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Run::from(
            format!("{name} {}", args.join(" ")),
            self.command(program, args)
                .output()
                .unwrap_or_else(|e| panic!("{} runs: {e}", program.display())),
        )
    }

    /// Runs `gw args` with `input` on stdin.
    pub fn gw_stdin(&self, args: &[&str], input: &str) -> Run {
        let mut cmd = self.gw_cmd(args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("gw runs");
        // gw may exit without reading stdin (a usage error): a closed pipe is not a failure.
        match child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
        {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
            _ => {}
        }
        Run::from(
            format!("gw {}", args.join(" ")),
            child.wait_with_output().expect("gw runs"),
        )
    }

    /// Runs `gw args` from `cwd` with extra environment variables.
    pub fn gw_env(&self, cwd: &Path, args: &[&str], vars: &[(&str, &str)]) -> Run {
        let mut cmd = self.gw_cmd(args);
        cmd.current_dir(cwd);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        Run::from(
            format!("gw {}", args.join(" ")),
            cmd.output().expect("gw runs"),
        )
    }

    /// Runs a shell line with the hermetic environment (PATH includes the gw under test).
    pub fn sh(&self, cwd: &Path, script: &str) -> Run {
        self.shell("sh", cwd, script)
    }

    /// Runs `script` with `shell -c` (bash, zsh, fish, nu…) and the hermetic environment;
    /// PATH includes the gw under test.
    pub fn shell(&self, shell: &str, cwd: &Path, script: &str) -> Run {
        let mut cmd = self.with_gw_on_path(OsStr::new(shell));
        cmd.arg("-c")
            .arg(script)
            .current_dir(cwd)
            .stdin(Stdio::null());
        Run::from(
            format!("{shell} -c {script}"),
            cmd.output().expect("shell runs"),
        )
    }

    /// `program` with the hermetic environment and the `gw` under test first on the `PATH`.
    fn with_gw_on_path(&self, program: &OsStr) -> Command {
        let mut cmd = Command::new(program);
        self.hermetic(&mut cmd);
        let bin_dir = self.bin().parent().expect("bin dir");
        // After the gw under test, the PATH its runs get (a fake git's first, if set).
        let rest = self
            .extra_env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| std::env::var("PATH").unwrap_or_default());
        let path = format!("{}:{rest}", bin_dir.display());
        cmd.env("PATH", path);
        cmd
    }

    /// `program args` (`gw` for the binary under test) in a `cols`×`rows` pseudo-terminal,
    /// from `cwd`, with the hermetic environment as a terminal user has it: colour allowed
    /// (no `NO_COLOR`, `TERM=xterm-256color`), no `COLUMNS` (the terminal's size counts),
    /// and the `gw` under test first on the `PATH`.
    pub fn terminal(
        &self,
        program: &str,
        args: &[&str],
        cwd: &Path,
        (cols, rows): (u16, u16),
        stdout: Stdout,
    ) -> Term {
        let program: &OsStr = if program == "gw" {
            gw_bin().as_os_str()
        } else {
            OsStr::new(program)
        };
        let mut cmd = self.with_gw_on_path(program);
        cmd.env_remove("NO_COLOR")
            .env_remove("COLUMNS")
            .env("TERM", "xterm-256color")
            .args(args)
            .current_dir(cwd);
        Term::spawn(cmd, cols, rows, stdout)
    }

    /// Runs git with the hermetic environment; panics on failure.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let r = self.git_run(dir, args);
        assert!(
            r.status == 0,
            "git {} in {} failed:\n{}",
            args.join(" "),
            dir.display(),
            r
        );
        r.stdout.trim_end().to_string()
    }

    /// Runs git and returns the result whatever the exit status.
    pub fn git_run(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = Command::new("git");
        self.hermetic(&mut cmd);
        cmd.args(args).current_dir(dir).stdin(Stdio::null());
        Run::from(
            format!("git {}", args.join(" ")),
            cmd.output().expect("git runs"),
        )
    }

    /// Creates `repos/<name>`, a clone of a new bare `origins/<name>.git` with one commit
    /// on `main` pushed (so `origin/main` and `origin/HEAD` exist).
    pub fn repo(&self, name: &str) -> PathBuf {
        self.origin(name);
        let path = self.repos.join(name);
        self.git(&self.repos, &["clone", "-q", &self.url(name), name]);
        std::fs::write(path.join("README.md"), format!("# {name}\n")).unwrap();
        self.git(&path, &["add", "."]);
        self.git(&path, &["commit", "-q", "-m", "initial"]);
        self.git(&path, &["push", "-q", "origin", "main"]);
        self.git(&path, &["remote", "set-head", "origin", "main"]);
        path
    }

    /// A new, empty bare repository `origins/<name>.git` with `main` as its default branch.
    pub fn origin(&self, name: &str) -> PathBuf {
        let origin = self.origins.join(format!("{name}.git"));
        self.git(
            &self.origins,
            &[
                "init",
                "-q",
                "--bare",
                "-b",
                "main",
                origin.to_str().unwrap(),
            ],
        );
        origin
    }

    /// A repository without an origin.
    pub fn local_repo(&self, name: &str) -> PathBuf {
        let path = self.repos.join(name);
        std::fs::create_dir_all(&path).unwrap();
        self.git(&path, &["init", "-q", "-b", "main"]);
        std::fs::write(path.join("README.md"), format!("# {name}\n")).unwrap();
        self.git(&path, &["add", "."]);
        self.git(&path, &["commit", "-q", "-m", "initial"]);
        path
    }

    /// The `file://` URL of `name`'s origin.
    pub fn url(&self, name: &str) -> String {
        format!(
            "file://{}",
            self.origins.join(format!("{name}.git")).display()
        )
    }

    /// Commits a `.gitignore` of `pattern` to `repos/<name>` and pushes it to origin's `main`.
    pub fn ignore(&self, name: &str, pattern: &str) {
        let repo = self.repos.join(name);
        self.commit(&repo, ".gitignore", &format!("{pattern}\n"), "ignore");
        self.git(&repo, &["push", "-q", "origin", "main"]);
    }

    /// Adds `url` as a submodule at `path` of the repository at `dir`, commits that and
    /// pushes it to origin's `main` (the hermetic git allows the `file` transport).
    pub fn add_submodule(&self, dir: &Path, url: &str, path: &str) {
        self.git(dir, &["submodule", "add", "-q", url, path]);
        self.git(dir, &["commit", "-q", "-m", &format!("submodule {path}")]);
        self.git(dir, &["push", "-q", "origin", "main"]);
    }

    /// Commits `file` with `content` in `dir`.
    pub fn commit(&self, dir: &Path, file: &str, content: &str, message: &str) {
        let p = dir.join(file);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, content).unwrap();
        self.git(dir, &["add", "--", file]);
        self.git(dir, &["commit", "-q", "-m", message]);
    }

    /// Pushes a new commit to `name`'s origin `branch` from a scratch clone, without
    /// touching `repos/<name>`.
    pub fn push_upstream(&self, name: &str, branch: &str, file: &str, content: &str) {
        let scratch = self
            .root
            .join("tmp")
            .join(format!("scratch-{name}-{}", unique()));
        self.git(
            &self.root,
            &["clone", "-q", &self.url(name), scratch.to_str().unwrap()],
        );
        let exists = self
            .git_run(
                &scratch,
                &["rev-parse", "--verify", &format!("origin/{branch}")],
            )
            .status
            == 0;
        if exists {
            self.git(&scratch, &["checkout", "-q", branch]);
        } else {
            self.git(&scratch, &["checkout", "-q", "-b", branch]);
        }
        self.commit(
            &scratch,
            file,
            content,
            &format!("upstream change to {file}"),
        );
        self.git(&scratch, &["push", "-q", "origin", branch]);
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    /// Rewrites `state.json` through `f` (to age a workspace, or corrupt the file).
    pub fn edit_state(&self, f: impl FnOnce(&mut Value)) {
        let mut state = self.state();
        f(&mut state);
        std::fs::write(
            self.grove_home.join("state.json"),
            serde_json::to_string_pretty(&state).unwrap(),
        )
        .unwrap();
    }

    /// Writes the journal of an operation whose gw is gone (pid 1 is never grove's), as a
    /// killed command leaves it in `operations/`: `kind` (`create`, `delete`, …) of
    /// `workspace`, in `phase` (`running`, `committed`), with `steps`.
    pub fn write_journal(&self, id: &str, kind: &str, workspace: &str, phase: &str, steps: Value) {
        let ops = self.grove_home.join("operations");
        std::fs::create_dir_all(&ops).unwrap();
        let record = serde_json::json!({
            "version": 1, "id": id, "kind": kind, "workspace": workspace, "pid": 1,
            "started_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
            "phase": phase, "steps": steps
        });
        std::fs::write(ops.join(format!("{id}.json")), record.to_string()).unwrap();
    }

    /// A journal whose recovery `gw doctor --fix` refuses: it would delete a branch in
    /// `stranger`, a repository (made here) that grove does not know. Returns its path.
    pub fn write_refused_journal(&self) -> PathBuf {
        let stranger = self.root.join("stranger");
        std::fs::create_dir_all(&stranger).unwrap();
        self.git(&stranger, &["init", "-q", "-b", "main"]);
        self.git(&stranger, &["commit", "-q", "--allow-empty", "-m", "x"]);
        let tip = self
            .git(&stranger, &["rev-parse", "HEAD"])
            .trim()
            .to_string();
        let step = serde_json::json!({"action": "delete_branch", "repo": "stranger",
            "source": s(&stranger), "branch": "main", "tip": tip, "status": "planned"});
        self.write_journal(
            "20260101T000000000000000-1-0-delete-w",
            "delete",
            "w",
            "committed",
            serde_json::json!([step]),
        );
        stranger
    }

    /// The shell integration's cd files left in the temporary directory (none should be).
    pub fn leftover_cd_files(&self) -> Vec<String> {
        tree(&self.root.join("tmp"), 1)
            .into_iter()
            .filter(|n| n.starts_with(".grove_cd"))
            .collect()
    }

    /// The directory `gw plugin install` installs into.
    pub fn plugins_dir(&self) -> PathBuf {
        self.grove_home.join("plugins")
    }

    /// A worktree's exact state: every file's bytes, `HEAD` and `git status --porcelain`.
    pub fn worktree_state(&self, dir: &Path) -> WorktreeState {
        WorktreeState {
            files: file_contents(dir),
            head: self.git(dir, &["rev-parse", "HEAD"]),
            branch: self.git(dir, &["branch", "--show-current"]),
            status: self.git(dir, &["status", "--porcelain", "--untracked-files=all"]),
        }
    }

    pub fn workspace_dir(&self) -> PathBuf {
        self.grove_home.join("workspaces")
    }

    /// The directory of workspace `name`.
    pub fn ws(&self, name: &str) -> PathBuf {
        self.workspace_dir().join(name)
    }

    pub fn config_path(&self) -> PathBuf {
        self.grove_home.join("config.toml")
    }

    pub fn state_path(&self) -> PathBuf {
        self.grove_home.join("state.json")
    }

    /// Approves the `.grove.toml` commands of `repos/<repo>` as they are now (`gw trust`),
    /// as a user does before grove runs them. Returns the run (a `.grove.toml` grove cannot
    /// read is refused).
    pub fn trust(&self, repo: &str) -> Run {
        let path = self.repos.join(repo);
        self.gw(&["trust", s(&path), "--format", "json"])
    }

    /// Appends TOML to `config.toml` (hooks, presets).
    pub fn append_config(&self, toml: &str) {
        let mut text = std::fs::read_to_string(self.config_path()).unwrap_or_default();
        text.push('\n');
        text.push_str(toml);
        std::fs::write(self.config_path(), text).expect("write config.toml");
    }

    /// `gw create NAME -b BRANCH -r REPOS --format json`, asserting success; the result.
    #[track_caller]
    pub fn create(&self, name: &str, branch: &str, repos: &str) -> Value {
        self.gw(&[
            "create", name, "-b", branch, "-r", repos, "--format", "json",
        ])
        .success()
        .result()
    }

    /// The local branches of the repository at `dir`, sorted.
    pub fn branches(&self, dir: &Path) -> Vec<String> {
        let out = self.git(
            dir,
            &["for-each-ref", "--format=%(refname:short)", "refs/heads"],
        );
        let mut v: Vec<String> = out.lines().map(String::from).collect();
        v.sort();
        v
    }

    /// Whether `branch` exists locally in the repository at `dir`.
    pub fn has_branch(&self, dir: &Path, branch: &str) -> bool {
        self.branches(dir).iter().any(|b| b == branch)
    }

    /// Everything grove could change on disk: `state.json`, `config.toml`, the workspace
    /// directory's tree, the repos directory's entries, and every repository's branches
    /// (with their commits) and worktree registrations. Compare two snapshots to prove
    /// that a command changed nothing.
    pub fn snapshot(&self) -> Snapshot {
        let read = |p: PathBuf| std::fs::read(p).ok();
        let mut repos = Vec::new();
        let mut entries = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&self.repos) {
            let mut dirs: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
            dirs.sort();
            for repo in dirs {
                entries.push(repo.file_name().unwrap().to_string_lossy().into_owned());
                if !repo.join(".git").is_dir() {
                    continue;
                }
                let refs = self.git(
                    &repo,
                    &[
                        "for-each-ref",
                        "--format=%(refname) %(objectname)",
                        "refs/heads",
                    ],
                );
                let wts = self.git(&repo, &["worktree", "list", "--porcelain"]);
                repos.push((s(&repo).to_string(), refs, wts));
            }
        }
        Snapshot {
            state: read(self.state_path()),
            config: read(self.config_path()),
            workspaces: tree(&self.workspace_dir(), 2),
            repo_entries: entries,
            repos,
        }
    }

    /// Asserts that nothing grove could change differs from `before`.
    #[track_caller]
    pub fn assert_unchanged(&self, before: &Snapshot) {
        let now = self.snapshot();
        assert_eq!(&now, before, "the command changed something on disk");
    }

    /// `state.json` parsed.
    pub fn state(&self) -> Value {
        match std::fs::read_to_string(self.grove_home.join("state.json")) {
            Ok(s) if !s.trim().is_empty() => serde_json::from_str(&s).expect("state.json parses"),
            _ => Value::Array(vec![]),
        }
    }

    /// The repositories `state.json` records for workspace `ws`, in its order.
    #[track_caller]
    pub fn workspace_repos(&self, ws: &str) -> Vec<String> {
        let state = self.state();
        let entry = state
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == ws)
            .unwrap_or_else(|| panic!("no workspace {ws} in {state:#}"));
        entry["repos"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["repo_name"].as_str().unwrap().to_string())
            .collect()
    }

    /// The names of the workspaces `state.json` records, in its order.
    pub fn workspace_names(&self) -> Vec<String> {
        self.state()
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// The world as the auditor sees it: this grove directory, its workspace directory, and
    /// every repository under `repos/` (the auditor adds the source repositories that
    /// `state.json` names).
    pub fn world(&self) -> audit::World {
        let sources = std::fs::read_dir(&self.repos)
            .map(|rd| {
                let mut v: Vec<PathBuf> = rd
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.join(".git").is_dir())
                    .collect();
                v.sort();
                v
            })
            .unwrap_or_default();
        audit::World::new(&self.grove_home, self.workspace_dir(), sources)
    }

    /// Asserts that, for every repository under `repos/` and every source repository state
    /// names, the linked worktrees git has registered are exactly those `state.json`
    /// records — same path, same branch — that each recorded worktree's `.git` leads back
    /// to it, and that no registration points into the workspace directory unrecorded
    /// (see [`audit::World::git_vs_state`]).
    #[track_caller]
    pub fn assert_git_agrees_with_state(&self) {
        let found = self.world().git_vs_state();
        assert!(
            found.is_empty(),
            "git worktree registrations disagree with state.json:\n{}\nstate.json: {:#}",
            audit::render(&found),
            self.state()
        );
    }

    /// Like [`TestEnv::assert_git_agrees_with_state`] for a world where the test itself
    /// (as a user would) switched worktrees away from their recorded branch: the violations
    /// must be exactly `expected`, each a kind and the worktree path it is about (relative
    /// to the workspace directory), nothing more and nothing less.
    #[track_caller]
    pub fn assert_git_agrees_with_state_except(&self, expected: &[(audit::Kind, &str)]) {
        let found = self.world().git_vs_state();
        let mut unexplained: Vec<&audit::Violation> = Vec::new();
        let mut seen = vec![false; expected.len()];
        for f in &found {
            let hit = expected.iter().position(|(kind, rel)| {
                *kind == f.kind
                    && f.detail.contains(&format!(
                        "{} (workspace",
                        self.workspace_dir().join(rel).display()
                    ))
            });
            match hit {
                Some(i) => seen[i] = true,
                None => unexplained.push(f),
            }
        }
        let missing: Vec<_> = expected
            .iter()
            .zip(&seen)
            .filter(|(_, s)| !**s)
            .map(|(e, _)| e)
            .collect();
        assert!(
            unexplained.is_empty() && missing.is_empty(),
            "git worktree registrations disagree with state.json beyond what the test made:\n{}\nexpected but not found: {missing:?}",
            audit::render(&found)
        );
    }

    /// `gw delete NAME --force` (machine mode), which must succeed and keep the workspace
    /// in the trash: the trash entry's id.
    pub fn delete_into_trash(&self, name: &str) -> String {
        let deleted = self
            .gw(&["delete", name, "--force", "--format", "json"])
            .success();
        deleted.result()["deleted"][0]["trash"]
            .as_str()
            .unwrap_or_else(|| panic!("no trash entry: {deleted}"))
            .to_string()
    }

    /// Waits until no `gw trash tidy` or `gw unlink-trash` of this environment runs (a
    /// delete starts them detached), so that what the trash holds is settled.
    pub fn settle_trash(&self) {
        let root = self.root.to_string_lossy().into_owned();
        for _ in 0..1200 {
            let busy = std::fs::read_dir("/proc")
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| {
                    let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
                    let cmd = String::from_utf8_lossy(&cmd);
                    let environ = std::fs::read(e.path().join("environ")).unwrap_or_default();
                    (cmd.contains("trash\0tidy") || cmd.contains("unlink-trash"))
                        && String::from_utf8_lossy(&environ).contains(&root)
                });
            if !busy {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the background trash processes did not end within a minute");
    }

    /// Asserts that the auditor finds nothing at all (see [`audit::World::audit`]): git
    /// agrees with state, no stray directory, leftover trash, git lock file, operation in
    /// progress or journal.
    #[track_caller]
    pub fn assert_world_clean(&self) {
        let found = self.world().audit();
        assert!(
            found.is_empty(),
            "the auditor found:\n{}",
            audit::render(&found)
        );
    }
}

/// What [`TestEnv::snapshot`] captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub state: Option<Vec<u8>>,
    pub config: Option<Vec<u8>>,
    pub workspaces: Vec<String>,
    pub repo_entries: Vec<String>,
    pub repos: Vec<(String, String, String)>,
}

/// The relative paths under `root`, down to `depth` levels (hidden entries included),
/// sorted; empty when `root` does not exist.
pub fn tree(root: &Path, depth: usize) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            out.push(s(p.strip_prefix(root).unwrap()).to_string());
            if depth > 1 && e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                walk(root, &p, depth - 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, depth, &mut out);
    out.sort();
    out
}

/// What [`TestEnv::worktree_state`] records.
#[derive(Debug, PartialEq, Eq)]
pub struct WorktreeState {
    pub files: Vec<(String, Vec<u8>)>,
    pub head: String,
    pub branch: String,
    pub status: String,
}

/// Every file below `dir` except `.git`, relative path and content, sorted by path.
pub fn file_contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Writes an executable file (a plugin or a git hook).
pub fn write_executable(path: &Path, content: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// A finished command: its exit status and output.
pub struct Run {
    pub command: String,
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The entry for repository `name` in a result's `repos` array.
#[track_caller]
pub fn repo_result<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["repos"]
        .as_array()
        .expect("a repos array")
        .iter()
        .find(|r| r["repo"] == name)
        .unwrap_or_else(|| panic!("no repo {name} in {result:#}"))
}

impl Run {
    /// The run of `command` that ended with `out`.
    pub fn from(command: String, out: Output) -> Run {
        Run {
            command,
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts exit status 0.
    #[track_caller]
    pub fn success(self) -> Run {
        assert_eq!(self.status, 0, "expected success:\n{self}");
        self
    }

    /// Asserts a specific exit status.
    #[track_caller]
    pub fn code(self, code: i32) -> Run {
        assert_eq!(self.status, code, "expected exit {code}:\n{self}");
        self
    }

    /// Asserts failure (any non-zero exit).
    #[track_caller]
    pub fn failure(self) -> Run {
        assert_ne!(self.status, 0, "expected failure:\n{self}");
        self
    }

    /// stdout parsed as exactly one JSON document.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{self}"))
    }

    /// The envelope's `result` (asserting `ok: true`).
    #[track_caller]
    pub fn result(&self) -> Value {
        let v = self.json();
        assert_eq!(v["ok"], true, "expected ok envelope:\n{self}");
        v["result"].clone()
    }

    /// The result of `gw doctor … --format json`: exit 0 when it found nothing wrong (or,
    /// with `--fix`, left nothing), else `ISSUES_FOUND` (exit 5) with the issues, or the
    /// code of what `--fix` could not do — the result is there either way.
    #[track_caller]
    pub fn doctor(self) -> Value {
        let v = self.json();
        if v["ok"] == true {
            assert_eq!(self.status, 0, "{self}");
        } else {
            let code = v["error"]["code"].as_str().unwrap_or("").to_string();
            let exit = match code.as_str() {
                "ISSUES_FOUND" | "GIT_FAILED" | "RECOVERY_REFUSED" => 5,
                "TRANSIENT" => 7,
                other => panic!("doctor's failure {other}:\n{self}"),
            };
            assert_eq!(self.status, exit, "{self}");
            if code == "ISSUES_FOUND" {
                assert_ne!(v["result"]["count"], 0, "{self}");
            }
        }
        v["result"].clone()
    }

    /// The `command` of each next action.
    pub fn next_commands(&self) -> Vec<String> {
        self.json()["next_actions"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x["command"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The envelope's `error.code` (asserting `ok: false`).
    #[track_caller]
    pub fn error_code(&self) -> String {
        let v = self.json();
        assert_eq!(v["ok"], false, "expected error envelope:\n{self}");
        v["error"]["code"].as_str().expect("error.code").to_string()
    }
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "$ {}", self.command)?;
        writeln!(f, "[exit status: {}]", self.status)?;
        writeln!(f, "--- stdout ---\n{}", self.stdout)?;
        write!(f, "--- stderr ---\n{}", self.stderr)
    }
}

/// A small deterministic generator (xorshift) for tests that act at random moments,
/// seeded from the clock unless `GW_CRASH_SEED` replays a sequence; the seed is printed.
pub struct Rng(u64);

impl Rng {
    /// A generator for `what`, whose seed is printed as `what: GW_CRASH_SEED=…`.
    pub fn new(what: &str) -> Rng {
        let seed = std::env::var("GW_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .expect("the clock is past 1970")
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("{what}: GW_CRASH_SEED={seed}");
        Rng::seeded(seed)
    }

    /// A generator with a given seed.
    pub fn seeded(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A duration in `[0, max)`.
    pub fn below(&mut self, max: std::time::Duration) -> std::time::Duration {
        std::time::Duration::from_nanos(self.next_u64() % (max.as_nanos().max(1) as u64))
    }
}

/// `path` as `&str`.
pub fn s(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// Whether this runs in CI: `CI` is set, and not to "" or "false" (`.ci/run` sets it).
/// There, everything a test needs is present, and a missing need fails the test.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// A test cannot run here because `reason`: in CI that fails it; locally it is skipped,
/// saying why. The caller returns after this.
pub fn skip(reason: &str) {
    skip_or_fail(in_ci(), reason);
}

/// [`skip`], with whether this is CI given: a test in CI never passes by skipping.
fn skip_or_fail(ci: bool, reason: &str) {
    if ci {
        panic!("{reason}; CI is set, so this fails (.ci/run provides it)");
    }
    eprintln!("skipped: {reason} (CI would fail here)");
}

/// Whether a tool a test needs is installed; when it is not, [`skip`].
pub fn require(program: &str) -> bool {
    if have(program) {
        return true;
    }
    skip(&format!(
        "`{program}` is not installed; .ci/run installs it"
    ));
    false
}

/// Whether a program is on PATH.
pub fn have(program: impl AsRef<OsStr>) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "command -v {} >/dev/null",
            program.as_ref().to_string_lossy()
        ))
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The processes of process group `pgid` that are still running (zombies, which linger
/// where PID 1 does not reap orphans, do not count). Reads `/proc` on Linux; elsewhere
/// asks `kill -0` and reports the group id itself when anything answers.
pub fn live_in_group(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        let alive = Command::new("kill")
            .args(["-0", "--", &format!("-{pgid}")])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        return if alive { vec![pgid] } else { Vec::new() };
    };
    let mut live = Vec::new();
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2).and_then(|f| f.parse::<i32>().ok()) == Some(pgid)
            && !matches!(fields.first(), Some(&"Z") | Some(&"X"))
        {
            live.push(pid);
        }
    }
    live
}

/// Validation of machine-mode output against the published schemas in `docs/schema/`.
pub mod schema {
    use std::collections::HashMap;
    use std::path::Path;
    use std::sync::{Mutex, OnceLock};

    use serde_json::Value;

    fn load(name: &str) -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs/schema")
            .join(format!("{name}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        serde_json::from_str(&text).expect("schema is JSON")
    }

    /// Why `value` is not valid against the schema `name` (empty when it is).
    pub fn errors(name: &str, value: &Value) -> Vec<String> {
        static CACHE: OnceLock<Mutex<HashMap<String, Value>>> = OnceLock::new();
        let schema = {
            let mut cache = CACHE.get_or_init(Default::default).lock().unwrap();
            cache
                .entry(name.to_string())
                .or_insert_with(|| load(name))
                .clone()
        };
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        validator
            .iter_errors(value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }

    /// Asserts that `value` is valid against the schema `name`.
    #[track_caller]
    pub fn validate(name: &str, value: &Value) {
        let errors = errors(name, value);
        assert!(
            errors.is_empty(),
            "output does not match docs/schema/{name}.json:\n{}\n{}",
            errors.join("\n"),
            serde_json::to_string_pretty(value).unwrap()
        );
    }
}

impl Run {
    /// stdout as one envelope, validated against `docs/schema/envelope.json`, with its
    /// `result` (when present) validated against `docs/schema/<result_schema>.json` (pass
    /// `"envelope"` to check the envelope alone).
    #[track_caller]
    pub fn envelope(&self, result_schema: &str) -> Value {
        let v = self.json();
        schema::validate("envelope", &v);
        let actions = v["next_actions"].as_array().cloned().unwrap_or_default();
        for (i, a) in actions.iter().enumerate() {
            assert!(
                !actions[..i].contains(a),
                "next action listed twice: {a}\n{v:#}"
            );
        }
        if let Some(r) = v.get("result").filter(|_| result_schema != "envelope") {
            schema::validate(result_schema, r);
        }
        v
    }
}

/// A `git` put first on `PATH` for the `gw` runs of a [`TestEnv`], that runs a shell
/// snippet instead of the real git for command lines containing a pattern — to stop git at
/// a chosen moment (a race, a kill) or to make it misbehave. The snippet has `$REAL` (the
/// real git), `$GATE` (a directory of its own) and the arguments as `"$@"`.
pub struct FakeGit {
    pub dir: PathBuf,
}

/// For [`TestEnv::fake_git`]: marks the command as started (`$GATE/started.<pid>`), then
/// waits until [`FakeGit::release`].
pub const WAIT_FOR_RELEASE: &str =
    "touch \"$GATE/started.$$\"; while [ ! -e \"$GATE/release\" ]; do sleep 0.02; done";

impl TestEnv {
    /// Installs a fake `git` (see [`FakeGit`]): `rules` are `(pattern, snippet)`, the first
    /// pattern found in the arguments (joined by spaces) wins; other command lines run the
    /// real git.
    pub fn fake_git(&mut self, rules: &[(&str, &str)]) -> FakeGit {
        let real = real_git();
        let dir = self.root.join(format!("fake-git-{}", unique()));
        let gate = dir.join("gate");
        std::fs::create_dir_all(&gate).unwrap();
        let mut script = format!(
            "#!/bin/sh\nREAL={}\nGATE={}\nexport REAL GATE\ncase \" $* \" in\n",
            sh_quote(&real.to_string_lossy()),
            sh_quote(&gate.to_string_lossy())
        );
        for (pattern, snippet) in rules {
            script.push_str(&format!("  *{}*)\n{snippet}\n  ;;\n", sh_quote(pattern)));
        }
        script.push_str("esac\nexec \"$REAL\" \"$@\"\n");
        write_executable(&dir.join("bin/git"), &script);
        let path = format!(
            "{}:{}",
            dir.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        self.set_env("PATH", &path);
        FakeGit { dir: gate }
    }
}

impl FakeGit {
    /// How many matching commands have started waiting.
    pub fn started(&self) -> usize {
        std::fs::read_dir(&self.dir)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("started."))
                    .count()
            })
            .unwrap_or(0)
    }

    /// Waits until `n` matching commands have started waiting (at most a minute).
    pub fn wait_started(&self, n: usize) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while self.started() < n {
            assert!(
                std::time::Instant::now() < deadline,
                "the gated git command never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Lets every waiting (and future) matching command go on.
    pub fn release(&self) {
        std::fs::write(self.dir.join("release"), "").unwrap();
    }
}

/// The real git on `PATH`.
pub fn real_git() -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git is on PATH")
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "CI is set, so this fails")]
    fn in_ci_a_missing_need_fails_the_test() {
        skip_or_fail(true, "`zsh` is not installed");
    }

    #[test]
    fn outside_ci_a_missing_need_is_skipped_saying_why() {
        skip_or_fail(false, "`zsh` is not installed");
    }
}
