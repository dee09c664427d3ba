//! Grove's own files are regular files of bounded size (issue 28, finding 4): a
//! `state.json` that is a symbolic link to `/dev/zero` was read until memory ran out, and
//! one that is a FIFO hung `gw list` and `gw create` forever. Each kind of file grove reads
//! whole — state, config, a journal, a repository's `.grove.toml`, trust, a plan — is refused
//! when it is a FIFO, a device or absurdly large, quickly, with the code and the file's
//! name.

use std::path::Path;
use std::time::{Duration, Instant};

use e2e::{TestEnv, s};

/// Makes `path` a FIFO, with POSIX's `mkfifo` utility: rustix has no `mknodat` for
/// Apple's systems, and this test compiles there too.
fn fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = std::process::Command::new("mkfifo")
        .arg("-m")
        .arg("600")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}: {status}", path.display());
}

/// Makes `path` a symbolic link to `/dev/zero`.
fn zero(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

/// Makes `path` a sparse file larger than grove reads (64 MiB).
fn huge(path: &Path) {
    let _ = std::fs::remove_file(path);
    let f = std::fs::File::create(path).unwrap();
    f.set_len(65 * 1024 * 1024).unwrap();
}

/// Puts `bytes` back at `path`, whatever it was made (writing to a FIFO would wait for a
/// reader).
fn restore(path: &Path, bytes: &[u8]) {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, bytes).unwrap();
}

/// Runs `gw args --format json` with a deadline (a hang is a failure, not a stuck test):
/// it must fail with `code`, naming `file`.
#[track_caller]
fn refused(env: &TestEnv, args: &[&str], code: &str, file: &Path) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let mut child = env
        .gw_cmd(&all)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("gw {args:?} hangs on {}", file.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let run = e2e::Run::from(format!("gw {all:?}"), out);
    let v = run.envelope("envelope");
    assert_eq!(v["error"]["code"], code, "{run}");
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        v["error"]["message"].as_str().unwrap().contains(name),
        "the error names {name}: {run}"
    );
}

#[test]
fn state_json_as_dev_zero_a_fifo_or_huge_is_refused_quickly() {
    let env = TestEnv::with_repos(&["api"]);
    let state = env.state_path();
    for make in [zero, fifo, huge] {
        make(&state);
        for args in [
            &["list"][..],
            &["create", "w1", "-b", "w1", "-r", "api"],
            &["status", "w1"],
        ] {
            refused(&env, args, "CORRUPT_STATE", &state);
        }
    }
}

#[test]
fn every_file_grove_reads_whole_is_refused_when_not_a_regular_file() {
    let env = TestEnv::with_repos(&["api"]);
    env.gw(&["create", "w1", "-b", "w1", "-r", "api", "--format", "json"])
        .success();
    let config = env.config_path();
    let saved = std::fs::read(&config).unwrap();
    for make in [zero, fifo, huge] {
        make(&config);
        refused(&env, &["repos"], "CORRUPT_STATE", &config);
        refused(
            &env,
            &["create", "w2", "-b", "w2", "-r", "api"],
            "CORRUPT_STATE",
            &config,
        );
    }
    restore(&config, &saved);

    // A repository's .grove.toml.
    let toml = env.repos.join("api/.grove.toml");
    for make in [zero, fifo, huge] {
        make(&toml);
        refused(
            &env,
            &["create", "w2", "-b", "w2", "-r", "api"],
            "CORRUPT_STATE",
            &toml,
        );
    }
    std::fs::remove_file(&toml).unwrap();

    // trust.json.
    let trust = env.grove_home.join("trust.json");
    std::fs::write(env.repos.join("api/.grove.toml"), "setup = \"true\"\n").unwrap();
    let saved = std::fs::read(&trust).unwrap();
    for make in [zero, fifo] {
        make(&trust);
        refused(
            &env,
            &["create", "w2", "-b", "w2", "-r", "api"],
            "CORRUPT_STATE",
            &trust,
        );
    }
    restore(&trust, &saved);
    std::fs::remove_file(env.repos.join("api/.grove.toml")).unwrap();

    // A journal: doctor reports it, naming it, instead of hanging.
    let ops = env.grove_home.join("operations");
    std::fs::create_dir_all(&ops).unwrap();
    let journal = ops.join("20260101T000000Z-4242.json");
    fifo(&journal);
    let run = env.gw(&["doctor", "--format", "json"]);
    assert!(
        run.stdout.contains("20260101T000000Z-4242.json"),
        "doctor names the journal: {run}"
    );
    std::fs::remove_file(&journal).unwrap();

    // A plan and a blueprint given on the command line.
    let plan = env.root.join("plan.json");
    fifo(&plan);
    refused(&env, &["apply", s(&plan)], "PLAN_INVALID", &plan);
    zero(&plan);
    refused(&env, &["apply", s(&plan)], "PLAN_INVALID", &plan);
}
