//! `gw-migrate --apply` over installs of 1,100 `.mcp.json` files and a database, killed
//! with SIGKILL or stopped with SIGINT or SIGTERM at random moments (`GW_MIGRATE_KILLS`
//! runs, 30 by default, shared by three installs that run side by side; `GW_CRASH_SEED`
//! replays a sequence). After each, `gw-migrate restore` (itself killed now and then, and
//! run again) must give back every file byte for byte, with no temporary file left
//! anywhere; a final `--apply` must leave each install clean.
// The seed and every kill are printed, so that a failure can be replayed.
#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use e2e::{Rng, TestEnv};
use serde_json::Value;

const WORKSPACES: usize = 100;
const WORKTREES: usize = 10;

fn go_file(ws: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"grove\": {{\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"{ws}\"\n      ],\n      \"command\": \"gw\"\n    }}\n  }}\n}}"
    )
}

fn with_keeper(ws: &str) -> String {
    format!(
        "{{\n  \"mcpServers\": {{\n    \"grove\": {{\"command\": \"gw\", \"args\": [\"mcp-serve\", \"--workspace\", \"{ws}\"]}},\n    \"keeper\": {{\"command\": \"keeper-mcp\"}}\n  }}\n}}\n"
    )
}

const FOREIGN: &str =
    "{\"mcpServers\": {\"grove\": {\"command\": \"grove\", \"args\": [\"serve\"]}}}\n";

/// Writes the install; returns every file that may be touched.
fn install(env: &TestEnv) -> Vec<PathBuf> {
    let wd = env.grove_home.join("workspaces");
    let mut files = Vec::new();
    for w in 0..WORKSPACES {
        let name = format!("ws-{w:03}");
        let root = wd.join(&name);
        let mut put = |p: PathBuf, text: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            files.push(p);
        };
        put(root.join(".mcp.json"), &go_file(&name));
        for r in 0..WORKTREES {
            let text = match r {
                0 => with_keeper(&name),
                1 => FOREIGN.to_string(),
                _ => go_file(&name),
            };
            put(root.join(format!("r{r}/.mcp.json")), &text);
        }
    }
    let mut db = b"SQLite format 3\0".to_vec();
    db.extend((0..64 * 1024).map(|i| (i % 251) as u8));
    let mut wal = vec![0x37, 0x7f, 0x06, 0x82];
    wal.extend((0..32 * 1024).map(|i| (i % 13) as u8));
    for (name, bytes) in [
        ("messages.db", db),
        ("messages.db-wal", wal),
        ("messages.db-shm", vec![5; 32 * 1024]),
    ] {
        let p = env.grove_home.join(name);
        std::fs::write(&p, bytes).unwrap();
        files.push(p);
    }
    files
}

/// The bytes of every watched file (`None` when absent).
fn snapshot(files: &[PathBuf]) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    files
        .iter()
        .map(|p| (p.clone(), std::fs::read(p).ok()))
        .collect()
}

/// Temporary files gw-migrate writes beside the files it replaces.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if e.file_name() != "migrate-backups" {
                    stack.push(p);
                }
            } else if e.file_name().to_string_lossy().contains(".gw-migrate-") {
                out.push(p);
            }
        }
    }
    out
}

fn spawn(env: &TestEnv, args: &[&str]) -> Child {
    env.command(e2e::migrate_bin(), args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gw-migrate starts")
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// Finished before the signal came.
    Finished,
    /// Stopped by SIGINT or SIGTERM: exit 8 with a `CANCELLED` envelope.
    Cancelled,
    /// Ended by the signal itself (SIGKILL, or another before it was listened for).
    Killed,
}

/// Sends `signal` to `child` after `delay` (unless it ended first) and says how it ended.
fn signal_after(mut child: Child, signal: &str, delay: Duration) -> (End, Duration) {
    use std::os::unix::process::ExitStatusExt;
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() >= delay {
            let _ = std::process::Command::new("kill")
                .args([&format!("-{signal}"), &child.id().to_string()])
                .stderr(Stdio::null())
                .status();
            break;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let end = match (out.status.code(), out.status.signal()) {
        (Some(0), _) => End::Finished,
        (Some(8), _) => {
            let v: Value = serde_json::from_str(&stdout)
                .unwrap_or_else(|e| panic!("exit 8 without an envelope ({e}): {stdout}"));
            assert_eq!(v["error"]["code"], "CANCELLED", "{v}");
            assert_eq!(v["ok"], false);
            assert!(v["result"]["files"].is_array(), "the result comes too: {v}");
            End::Cancelled
        }
        (_, Some(9 | 2 | 15)) => End::Killed,
        // A restore with nothing to restore (the run it follows changed nothing).
        (Some(2), _) if stdout.contains("\"USAGE\"") => End::Finished,
        other => panic!(
            "gw-migrate ended with {other:?}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
    };
    (end, took)
}

fn kills() -> usize {
    std::env::var("GW_MIGRATE_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30)
}

/// Restores the newest run and checks that the install is exactly as it was.
fn restore_and_check(
    env: &TestEnv,
    files: &[PathBuf],
    before: &BTreeMap<PathBuf, Option<Vec<u8>>>,
    what: &str,
) {
    let r = env.migrate(&["restore", "--format", "json"]);
    match r.status {
        0 => {
            let files = r.result()["files"].as_array().unwrap().clone();
            assert!(
                files
                    .iter()
                    .all(|f| f["status"] != "conflict" && f["status"] != "failed"),
                "{what}: {r}"
            );
        }
        // The run changed nothing, so it left no backup.
        2 => assert_eq!(r.error_code(), "USAGE", "{what}: {r}"),
        _ => panic!("{what}: restore failed: {r}"),
    }
    let now = snapshot(files);
    let differ: Vec<&PathBuf> = before
        .iter()
        .filter(|(p, b)| now.get(*p) != Some(b))
        .map(|(p, _)| p)
        .collect();
    assert!(
        differ.is_empty(),
        "{what}: {} files differ after restore, e.g. {:?}",
        differ.len(),
        &differ[..differ.len().min(3)]
    );
    let tmp = leftovers(&env.root);
    assert!(tmp.is_empty(), "{what}: temporary files left: {tmp:?}");
}

/// Three installs side by side share the kills: the runs mostly wait on the disk.
const INSTALLS: u64 = 3;

#[test]
fn killed_and_interrupted_applies_are_restored_byte_for_byte() {
    let total = kills();
    let seed = Rng::new("gw-migrate kill test").next_u64();
    let tallies: Vec<BTreeMap<String, usize>> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..INSTALLS)
            .map(|k| {
                let n = total / INSTALLS as usize
                    + usize::from((k as usize) < total % INSTALLS as usize);
                s.spawn(move || kill_runs(k, seed.wrapping_add(k), n))
            })
            .collect();
        runs.into_iter()
            .map(|h| h.join().expect("an install's runs pass"))
            .collect()
    });
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for t in tallies {
        for (k, v) in t {
            *tally.entry(k).or_default() += v;
        }
    }
    let survived: usize = tally.values().sum();
    assert_eq!(survived, total);
    eprintln!("gw-migrate kill test: {survived} kills, every one restored: {tally:?}");
}

/// `n` kills of `--apply` over one install; how each ended.
fn kill_runs(which: u64, seed: u64, n: usize) -> BTreeMap<String, usize> {
    let env = TestEnv::new();
    let files = install(&env);
    assert!(files.len() >= 1000);
    let before = snapshot(&files);
    let apply = ["--apply", "--format", "json"];

    // How long a whole run takes, to aim the kills inside it.
    let start = Instant::now();
    let full = env.migrate(&apply).success();
    let mut took = start.elapsed();
    let summary = &full.result()["summary"];
    assert_eq!(summary["done"], 1003, "{summary}");
    restore_and_check(&env, &files, &before, "a run to the end");

    let mut rng = Rng::seeded(seed);
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for run in 0..n {
        let signal = ["KILL", "INT", "KILL", "TERM"][(rng.next_u64() % 4) as usize];
        let delay = rng.below(took);
        let (end, elapsed) = signal_after(spawn(&env, &apply), signal, delay);
        if end == End::Finished {
            // Aim within the time a run really takes.
            took = took.min(elapsed);
        }
        let what = format!("install {which}, run {run}: SIG{signal} after {delay:?} ({end:?})");
        eprintln!("{what}");
        *tally.entry(format!("SIG{signal} {end:?}")).or_default() += 1;
        if run % 4 == 3 {
            // Kill the restore too; the next one finishes it.
            let restore = spawn(&env, &["restore", "--format", "json"]);
            let (end, _) = signal_after(restore, "KILL", rng.below(took));
            eprintln!("{what}: restore killed ({end:?})");
        }
        restore_and_check(&env, &files, &before, &what);
    }

    let done = env.migrate(&apply).success().result();
    assert_eq!(done["summary"]["done"], 1003, "{done}");
    let dry = env.migrate(&["--format", "json"]).success().result();
    assert_eq!(dry["summary"]["pending"], 0, "{dry}");
    assert_eq!(dry["summary"]["needs_attention"], 0, "{dry}");
    assert_eq!(
        dry["summary"]["skipped"], WORKSPACES,
        "only another tool's entries"
    );
    assert!(leftovers(&env.root).is_empty());
    tally
}
