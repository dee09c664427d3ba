//! `gw-migrate` on installs that broke its promises before: a database held open by a live
//! process, a directory name that is not UTF-8, a worktree whose repository moved, a
//! symlink in either name order, an unreadable `state.json`, two runs at once, a restore
//! after the workspace was deleted, a corrupt manifest. And on every one of them, `gw
//! doctor --format json` and `gw-migrate --format json` report the same files with the same
//! verdicts.
// Skipped tests say why on stderr.
#![allow(clippy::print_stderr)]

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use e2e::{TestEnv, s};
use serde_json::Value;

fn go_file(ws: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"grove\": {{\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"{ws}\"\n      ],\n      \"command\": \"gw\"\n    }}\n  }}\n}}"
    )
}

const KEEPER: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]},\n    \"keeper\": {\"command\": \"keeper\"}\n  }\n}\n";
const KEEPER_ONLY: &str =
    "{\n  \"mcpServers\": {\n    \"keeper\": {\"command\": \"keeper\"}\n  }\n}\n";
const FOREIGN: &str =
    "{\"mcpServers\": {\"grove\": {\"command\": \"grove\", \"args\": [\"serve\"]}}}\n";
const EMPTIED: &str = "{\n  \"mcpServers\": {}\n}";

fn write(p: &Path, text: impl AsRef<[u8]>) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(p: &Path) -> String {
    String::from_utf8(std::fs::read(p).unwrap()).unwrap()
}

fn symlink(target: &str, link: &Path) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// gw-migrate's word for a file: its action while pending, else its reason.
fn verdict(f: &Value) -> String {
    if f["status"] == "pending" || f["status"] == "done" {
        f["action"].as_str().unwrap().to_string()
    } else {
        f["reason"].as_str().unwrap().to_string()
    }
}

/// The first `(word)` of a doctor issue: gw-migrate's verdict, which it names.
fn doctor_verdict(issue: &str) -> String {
    issue
        .split('(')
        .skip(1)
        .filter_map(|s| s.split(')').next())
        .find(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
        .unwrap_or_else(|| panic!("no verdict in {issue:?}"))
        .to_string()
}

/// `(path, verdict, fixable)` of each MCP leftover in a `gw doctor --format json` result,
/// sorted.
pub(crate) fn doctor_leftovers(result: &Value) -> Vec<(String, String, bool)> {
    let mut found: Vec<(String, String, bool)> = result["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == "mcp_leftover")
        .map(|i| {
            (
                i["path"].as_str().unwrap().to_string(),
                doctor_verdict(i["issue"].as_str().unwrap()),
                i["fixable"].as_bool().unwrap(),
            )
        })
        .collect();
    found.sort();
    found
}

/// `gw doctor` and `gw-migrate` report the same files with the same verdicts.
fn assert_agree(env: &TestEnv, what: &str) {
    let doctor = env.gw(&["doctor", "--format", "json"]);
    assert_ne!(
        doctor.json()["error"]["code"],
        "INTERNAL",
        "{what}: {doctor}"
    );
    let from_doctor = doctor_leftovers(&doctor.json()["result"]);
    let migrate = env.migrate(&["--format", "json"]);
    let mut from_migrate: Vec<(String, String, bool)> = migrate.result()["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["reason"] != "foreign_entry")
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                verdict(f),
                f["status"] == "pending",
            )
        })
        .collect();
    from_migrate.sort();
    assert_eq!(
        from_doctor, from_migrate,
        "{what}: doctor and gw-migrate disagree"
    );
}

/// `(path, verdict)` of every file gw-migrate reports.
fn verdicts(run: &e2e::Run) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = run.result()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_string(), verdict(f)))
        .collect();
    v.sort();
    v
}

/// The status of each file a `gw-migrate restore --format json` reports, in its order.
pub(crate) fn restore_statuses(run: &e2e::Run) -> Vec<String> {
    run.result()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["status"].as_str().unwrap().to_string())
        .collect()
}

fn row(p: &Path, v: &str) -> (String, String) {
    (p.to_string_lossy().into_owned(), v.to_string())
}

// ---- fixtures ----

/// A tracked workspace and its worktrees, an orphaned workspace directory, another tool's
/// entry, unusable files, a file git tracks, and an empty (never written) database.
fn basic() -> TestEnv {
    let env = TestEnv::with_repos(&["api", "web"]);
    let web = env.repos.join("web");
    env.commit(&web, ".mcp.json", KEEPER, "a server list");
    env.git(&web, &["push", "-q", "origin", "main"]);
    env.gw(&["create", "feat-x", "-b", "feat/x", "-r", "api,web"])
        .success();
    let ws = env.ws("feat-x");
    write(&ws.join(".mcp.json"), go_file("feat-x"));
    write(&ws.join("api/.mcp.json"), KEEPER);
    let wd = env.workspace_dir();
    write(&wd.join("gone/.mcp.json"), go_file("gone"));
    write(&wd.join("gone/api/.mcp.json"), FOREIGN);
    write(&wd.join("bad/.mcp.json"), "{\"mcpServers\": {\"grove\": ");
    write(
        &wd.join("dupes/.mcp.json"),
        "{\"mcpServers\": {\"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]}, \"grove\": {}}}",
    );
    write(&env.grove_home.join("messages.db"), "");
    env
}

/// A file and a symlink to it, in both name orders, and a workspace root that is a
/// symlink into a sibling directory.
fn symlinks() -> TestEnv {
    let env = TestEnv::with_repos(&["api"]);
    let wd = env.workspace_dir();
    write(&wd.join("a-real/.mcp.json"), go_file("a"));
    symlink("../a-real/.mcp.json", &wd.join("z-link/.mcp.json"));
    write(&wd.join("z-real/.mcp.json"), go_file("z"));
    symlink("../z-real/.mcp.json", &wd.join("b-link/.mcp.json"));
    env.gw(&["create", "feat-s", "-b", "feat/s", "-r", "api"])
        .success();
    write(&wd.join("shared/servers.json"), KEEPER);
    symlink(
        "../shared/servers.json",
        &env.ws("feat-s").join(".mcp.json"),
    );
    env
}

/// A workspace directory whose name is not UTF-8, holding grove's entry and another
/// tool's.
fn not_utf8() -> (TestEnv, PathBuf) {
    let env = TestEnv::with_repos(&["api"]);
    let dir = env
        .workspace_dir()
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9-ws"));
    write(&dir.join(".mcp.json"), KEEPER);
    write(&dir.join("api/.mcp.json"), FOREIGN);
    (env, dir)
}

/// A workspace whose `api` repository moved away, breaking its worktree's `.git` link.
fn broken_link() -> TestEnv {
    let env = TestEnv::with_repos(&["api", "web"]);
    env.gw(&["create", "feat-b", "-b", "feat/b", "-r", "api,web"])
        .success();
    let ws = env.ws("feat-b");
    write(&ws.join("api/.mcp.json"), go_file("feat-b"));
    write(&ws.join("web/.mcp.json"), go_file("feat-b"));
    std::fs::rename(env.repos.join("api"), env.root.join("api-moved")).unwrap();
    env
}

/// `state.json` unreadable: the database and the workspace directory are still looked at.
fn state_unreadable() -> TestEnv {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "feat-u", "-b", "feat/u", "-r", "api"])
        .success();
    write(&env.ws("feat-u").join(".mcp.json"), go_file("feat-u"));
    let mut db = b"SQLite format 3\0".to_vec();
    db.extend([0; 100]);
    write(&env.grove_home.join("messages.db"), db);
    write(&env.state_path(), "[{\"name\": ");
    env
}

#[test]
fn doctor_and_gw_migrate_agree_on_every_fixture() {
    assert_agree(&basic(), "basic");
    assert_agree(&symlinks(), "symlinks");
    assert_agree(&not_utf8().0, "a directory name that is not UTF-8");
    assert_agree(&broken_link(), "a broken worktree link");
    assert_agree(&state_unreadable(), "state.json unreadable");
    // Without python, `python` said why the live-database fixture is skipped.
    if let Some(py) = python() {
        let env = TestEnv::new();
        let db = env.grove_home.join("messages.db");
        std::fs::create_dir_all(&env.grove_home).unwrap();
        let holder = Holder::start(py, &db, "create");
        assert_agree(&env, "a database held open");
        holder.finish();
    }
}

#[test]
fn basic_install_is_cleaned_and_restored() {
    let env = basic();
    let ws = env.ws("feat-x");
    let wd = env.workspace_dir();
    let db = env.grove_home.join("messages.db");
    let dry = env.migrate(&["--format", "json"]).success();
    let mut expected = vec![
        row(&ws.join(".mcp.json"), "delete_file"),
        row(&ws.join("api/.mcp.json"), "remove_entry"),
        row(&ws.join("web/.mcp.json"), "tracked"),
        row(&wd.join("gone/.mcp.json"), "delete_file"),
        row(&wd.join("gone/api/.mcp.json"), "foreign_entry"),
        row(&wd.join("bad/.mcp.json"), "invalid_json"),
        row(&wd.join("dupes/.mcp.json"), "duplicate_keys"),
        row(&db, "move_database"),
    ];
    expected.sort();
    assert_eq!(verdicts(&dry), expected);
    let applied = env.migrate(&["--apply", "--format", "json"]).success();
    assert_eq!(applied.result()["summary"]["done"], 4);
    assert!(!db.exists(), "an empty database is moved like any other");
    let again = env.migrate(&["--format", "json"]).success();
    assert_eq!(again.result()["summary"]["pending"], 0);
    env.migrate(&["restore", "--format", "json"]).success();
    assert_eq!(read(&ws.join("api/.mcp.json")), KEEPER);
    assert!(db.is_file());
}

#[test]
fn symlinks_in_either_order_are_edited_through_and_kept() {
    let env = symlinks();
    let wd = env.workspace_dir();
    let dry = env.migrate(&["--format", "json"]).success();
    let files = dry.result()["files"].as_array().unwrap().clone();
    for (real, link) in [("a-real", "z-link"), ("z-real", "b-link")] {
        let f = files
            .iter()
            .find(|f| f["path"] == s(&wd.join(real).join(".mcp.json")))
            .unwrap_or_else(|| panic!("{real}: {dry}"));
        assert_eq!(f["action"], "remove_entry", "{real}: {f}");
        assert_eq!(
            f["links"],
            serde_json::json!([s(&wd.join(link).join(".mcp.json"))]),
            "the dry run names the link"
        );
    }
    let text = env.migrate(&[]).success();
    assert!(text.stdout.contains("z-link/.mcp.json"), "{text}");
    let sibling = files
        .iter()
        .find(|f| f["path"] == s(&env.ws("feat-s").join(".mcp.json")))
        .unwrap();
    assert_eq!(sibling["action"], "remove_entry", "{sibling}");
    env.migrate(&["--apply", "--format", "json"]).success();
    for (real, link) in [("a-real", "z-link"), ("z-real", "b-link")] {
        assert_eq!(read(&wd.join(real).join(".mcp.json")), EMPTIED);
        let l = wd.join(link).join(".mcp.json");
        assert!(
            std::fs::symlink_metadata(&l)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(read(&l), EMPTIED, "{link} still leads to the file");
    }
    assert_eq!(read(&wd.join("shared/servers.json")), KEEPER_ONLY);
    env.migrate(&["restore", "--format", "json"]).success();
    assert_eq!(read(&wd.join("z-link/.mcp.json")), go_file("a"));
}

#[test]
fn a_directory_name_that_is_not_utf8_is_cleaned_and_shown_lossily() {
    let (env, dir) = not_utf8();
    let dry = env.migrate(&["--format", "json"]).success();
    let files = dry.result()["files"].as_array().unwrap().clone();
    assert_eq!(files.len(), 2, "{dry}");
    for f in &files {
        assert_eq!(f["path_lossy"], true, "{f}");
        assert!(
            f["path"].as_str().unwrap().contains("caf\u{fffd}-ws"),
            "{f}"
        );
    }
    env.migrate(&[]).success();
    let applied = env.migrate(&["--apply", "--format", "json"]).success();
    assert_eq!(applied.result()["summary"]["done"], 1, "{applied}");
    assert_eq!(read(&dir.join(".mcp.json")), KEEPER_ONLY);
    assert_eq!(read(&dir.join("api/.mcp.json")), FOREIGN);
    env.gw(&["doctor", "--format", "json"]).doctor();
    env.migrate(&["restore", "--format", "json"]).success();
    assert_eq!(read(&dir.join(".mcp.json")), KEEPER);
}

#[test]
fn a_worktree_whose_repository_moved_keeps_its_file() {
    let env = broken_link();
    let ws = env.ws("feat-b");
    let dry = env.migrate(&["--format", "json"]).success();
    let mut expected = vec![
        row(&ws.join("api/.mcp.json"), "git_link_broken"),
        row(&ws.join("web/.mcp.json"), "delete_file"),
    ];
    expected.sort();
    assert_eq!(verdicts(&dry), expected, "{dry}");
    env.migrate(&["--apply", "--format", "json"]).success();
    assert_eq!(read(&ws.join("api/.mcp.json")), go_file("feat-b"), "kept");
    assert!(!ws.join("web/.mcp.json").exists());
}

#[test]
fn an_unreadable_state_still_finds_the_database_and_the_workspace_directory() {
    let env = state_unreadable();
    let dry = env.migrate(&["--format", "json"]).success();
    let mut expected = vec![
        row(&env.ws("feat-u").join(".mcp.json"), "delete_file"),
        row(&env.grove_home.join("messages.db"), "move_database"),
    ];
    expected.sort();
    assert_eq!(verdicts(&dry), expected, "{dry}");
    assert!(
        dry.json()["warnings"].to_string().contains("state.json"),
        "{dry}"
    );
}

#[test]
fn two_applies_at_once_take_turns() {
    let env = TestEnv::new();
    let wd = env.grove_home.join("workspaces");
    for i in 0..300 {
        write(&wd.join(format!("ws-{i:03}/.mcp.json")), go_file("w"));
    }
    let spawn = || {
        env.command(e2e::migrate_bin(), &["--apply", "--format", "json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let mut done = Vec::new();
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(out.status.success(), "{v}");
        for f in v["result"]["files"].as_array().unwrap() {
            assert_eq!(f["status"], "done", "no spurious failures: {f}");
            done.push(f["path"].as_str().unwrap().to_string());
        }
    }
    done.sort();
    let n = done.len();
    done.dedup();
    assert_eq!(
        (n, done.len()),
        (300, 300),
        "each file cleaned exactly once"
    );
}

#[test]
fn restore_after_the_workspace_was_deleted_recreates_nothing() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "feat-d", "-b", "feat/d", "-r", "api"])
        .success();
    let ws = env.ws("feat-d");
    write(&ws.join(".mcp.json"), go_file("feat-d"));
    write(&ws.join("api/.mcp.json"), go_file("feat-d"));
    env.migrate(&["--apply", "--format", "json"]).success();
    env.gw(&["delete", "feat-d", "--format", "json"]).success();
    let r = env.migrate(&["restore", "--format", "json"]).success();
    assert_eq!(restore_statuses(&r), ["skipped", "skipped"], "{r}");
    assert!(!ws.exists(), "no empty skeleton is left");
    assert!(
        r.json()["warnings"]
            .to_string()
            .contains("no longer exists"),
        "{r}"
    );
    env.gw(&[
        "create", "feat-d", "-b", "feat/d2", "-r", "api", "--format", "json",
    ])
    .success();
    env.assert_git_agrees_with_state();
}

#[test]
fn a_corrupt_manifest_is_reported_as_corrupt() {
    let env = TestEnv::new();
    write(
        &env.grove_home.join("workspaces/ws/.mcp.json"),
        go_file("ws"),
    );
    let applied = env.migrate(&["--apply", "--format", "json"]).success();
    let backup = PathBuf::from(applied.result()["backup"]["path"].as_str().unwrap());
    write(&backup.join("manifest.jsonl"), "not json\n");
    let r = env.migrate(&["restore", "--format", "json"]).code(5);
    assert_eq!(r.error_code(), "CORRUPT_STATE", "{r}");
    let id = applied.result()["backup"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        r.json()["error"]["message"].as_str().unwrap().contains(&id),
        "{r}"
    );
}

// ---- a live database ----

/// python3 with its sqlite3 module: required in CI, skipped with a reason elsewhere.
pub(crate) fn python() -> Option<&'static str> {
    let ok = Command::new("python3")
        .args(["-c", "import sqlite3"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some("python3");
    }
    e2e::skip("python3 with its sqlite3 module is not installed; the live-database tests need it");
    None
}

/// What `gw mcp-serve` did to the database, played by python's sqlite3: `create` makes it
/// in WAL mode with two announcements and keeps it open; `open` only opens it. Each line
/// on stdin is one more announcement, and end of input closes the connection.
const HOLDER: &str = r#"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "create":
    db.execute("pragma journal_mode=wal")
    db.execute("create table announcements(id integer primary key, message text)")
    for m in ("api v2 is coming", "api v2 is out"):
        db.execute("insert into announcements(message) values (?)", (m,))
else:
    db.execute("select count(*) from announcements").fetchone()
print("ready", flush=True)
for line in sys.stdin:
    db.execute("insert into announcements(message) values (?)", (line.strip(),))
    print("wrote", flush=True)
db.close()
"#;

struct Holder {
    child: Child,
    stdin: ChildStdin,
    stdout: std::io::BufReader<ChildStdout>,
}

impl Holder {
    fn start(py: &str, db: &Path, mode: &str) -> Holder {
        use std::io::BufRead;
        let mut child = Command::new(py)
            .args(["-c", HOLDER, s(db), mode])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
        Holder {
            child,
            stdin,
            stdout,
        }
    }

    fn write(&mut self, message: &str) {
        use std::io::{BufRead, Write};
        writeln!(self.stdin, "{message}").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "wrote");
    }

    fn finish(self) {
        drop(self.stdin);
        let mut child = self.child;
        assert!(child.wait().unwrap().success());
    }
}

pub(crate) fn announcements(py: &str, db: &Path) -> Vec<String> {
    let out = Command::new(py)
        .args([
            "-c",
            "import sqlite3, sys\nfor (m,) in sqlite3.connect(sys.argv[1]).execute('select message from announcements order by id'): print(m)",
            s(db),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_database_held_open_stays_whole_until_it_is_closed() {
    let Some(py) = python() else { return };
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.grove_home).unwrap();
    let db = env.grove_home.join("messages.db");
    let sidecars =
        ["messages.db", "messages.db-wal", "messages.db-shm"].map(|n| env.grove_home.join(n));

    // A running old server: writing, in WAL mode.
    let mut writer = Holder::start(py, &db, "create");
    assert!(
        sidecars.iter().all(|p| p.is_file()),
        "WAL mode keeps -wal and -shm"
    );
    let before: Vec<Vec<u8>> = sidecars.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let run = env.migrate(&["--apply", "--format", "json"]).success();
    let files = run.result()["files"].as_array().unwrap().clone();
    assert_eq!(files.len(), 3, "{run}");
    for f in &files {
        assert_eq!(f["reason"], "in_use", "{f}");
        assert_eq!(f["pids"], serde_json::json!([writer.child.id()]), "{f}");
    }
    assert_eq!(run.result()["backup"], Value::Null, "nothing moved");
    let after: Vec<Vec<u8>> = sidecars.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert_eq!(before, after, "the database is left whole, in place");
    let doctor = env.gw(&["doctor", "--format", "json"]);
    assert!(doctor.stdout.contains("(in_use)"), "{doctor}");
    doctor.doctor();
    writer.write("still running");
    writer.finish();

    // An idle reader holds it open too.
    let reader = Holder::start(py, &db, "open");
    let run = env.migrate(&["--apply", "--format", "json"]).success();
    let files = run.result()["files"].as_array().unwrap().clone();
    assert!(files.iter().all(|f| f["reason"] == "in_use"), "{run}");
    reader.finish();

    // Closed: it moves, and the copy opens on its own with every announcement.
    let original = std::fs::read(&db).unwrap();
    let run = env.migrate(&["--apply", "--format", "json"]).success();
    assert_eq!(run.result()["summary"]["pending"], 0, "{run}");
    assert!(
        run.result()["summary"]["done"].as_u64().unwrap() >= 1,
        "{run}"
    );
    assert!(sidecars.iter().all(|p| !p.exists()));
    let backup = PathBuf::from(run.result()["backup"]["path"].as_str().unwrap());
    let copy = backup.join("database/messages.db");
    let want = ["api v2 is coming", "api v2 is out", "still running"];
    // Read through a scratch copy: SQLite may write beside what it opens.
    let scratch = env.root.join("scratch.db");
    std::fs::copy(&copy, &scratch).unwrap();
    assert_eq!(announcements(py, &scratch), want);
    let restored = env.migrate(&["restore", "--format", "json"]).success();
    assert!(
        restored.result()["files"].to_string().contains("restored"),
        "{restored}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), original, "byte for byte");
    assert_eq!(announcements(py, &db), want);
}
