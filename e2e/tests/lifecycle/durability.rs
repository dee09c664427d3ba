//! Durability: `state.json` and the operation journals are replaced atomically (a temporary
//! file, fsync, rename, fsync of the directory), so a reader never sees a half-written
//! file, however many `gw` processes write at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

use e2e::{TestEnv, s};
use serde_json::Value;

const WRITERS: usize = 4;
const ROUNDS: usize = 5;

#[test]
fn readers_never_see_a_half_written_state_or_journal() {
    let env = TestEnv::with_repos(&["api"]);
    for t in 0..WRITERS {
        env.create(&format!("w{t}"), &format!("w{t}"), "api");
    }
    // A big state file (four hundred more workspaces, recorded without directories), so a
    // write that was not atomic would be caught half way.
    env.edit_state(|v| {
        let template = v[0].clone();
        let list = v.as_array_mut().unwrap();
        for i in 0..400 {
            let mut w = template.clone();
            w["name"] = format!("recorded-{i}").into();
            w["path"] = s(&env.root.join(format!("nowhere/{i}"))).into();
            w["branch"] = format!("recorded-{i}").into();
            w["repos"] = Value::Array(Vec::new());
            list.push(w);
        }
    });
    let state_path = env.state_path();
    let ops = env.grove_home.join("operations");
    let stop = AtomicBool::new(false);
    let (state_reads, journal_reads) = (AtomicUsize::new(0), AtomicUsize::new(0));

    thread::scope(|scope| {
        // A reader reading as fast as it can, in this process.
        let reader = scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let text = std::fs::read_to_string(&state_path).expect("state.json is there");
                let v: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("a half-written state.json ({e}):\n{text}"));
                assert_eq!(v.as_array().map(Vec::len), Some(WRITERS + 400));
                state_reads.fetch_add(1, Ordering::Relaxed);
                for entry in std::fs::read_dir(&ops).into_iter().flatten().flatten() {
                    let path = entry.path();
                    if path.extension().is_none_or(|x| x != "json") {
                        continue;
                    }
                    // A journal may be removed between listing and reading.
                    let Ok(text) = std::fs::read_to_string(&path) else {
                        continue;
                    };
                    serde_json::from_str::<Value>(&text).unwrap_or_else(|e| {
                        panic!("a half-written journal {} ({e}):\n{text}", path.display())
                    });
                    journal_reads.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        // Readers through the binary.
        let listers: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        let r = env.gw(&["list", "--format", "json"]).success().result();
                        let n = r["workspaces"].as_array().map(Vec::len);
                        assert_eq!(n, Some(WRITERS + 400), "{r:#}");
                    }
                })
            })
            .collect();
        // Writers: each renames its own workspace there and back.
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let env = &env;
                scope.spawn(move || {
                    let (a, b) = (format!("w{t}"), format!("w{t}-renamed"));
                    for _ in 0..ROUNDS {
                        env.gw(&["rename", &a, "--to", &b, "--format", "json"])
                            .success();
                        env.gw(&["rename", &b, "--to", &a, "--format", "json"])
                            .success();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().expect("a writer failed");
        }
        stop.store(true, Ordering::Relaxed);
        for l in listers {
            l.join().expect("a reader through gw failed");
        }
        reader.join().expect("the reader saw a half-written file");
    });
    assert!(state_reads.load(Ordering::Relaxed) > 0);
    env.assert_git_agrees_with_state();
}
