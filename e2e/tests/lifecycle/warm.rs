//! Warm worktrees (`.grove.toml` `copy`, `gw create --copy`, `gw add-repo --copy`): a new
//! worktree starts with the caches its checkout has — every file with the same bytes and
//! mode, links as links, each file a new one (writing it leaves the source alone) — a
//! tracked path is refused, and the plan lists what is copied and its size.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use e2e::{TestEnv, s};

/// Files in the generated `node_modules`.
pub const MODULES: usize = 20_000;

/// `repos/api` with an ignored `node_modules` of `MODULES` files (in 400 packages, some
/// executable, some read-only, a `.bin` of links) and an ignored `target/` (a read-only
/// directory among them), and a `.grove.toml` naming them, committed and pushed.
pub fn warm_world() -> TestEnv {
    let (env, api) = copying(
        &["api", "web"],
        "node_modules/\n/target\n",
        "copy = [\"node_modules\", \"target\"]\n",
    );
    fill_modules(&api.join("node_modules"), MODULES);
    let target = api.join("target/debug");
    std::fs::create_dir_all(target.join("deps")).unwrap();
    std::fs::write(target.join("app"), b"\x7fELF pretend binary").unwrap();
    set_mode(&target.join("app"), 0o755);
    std::fs::write(target.join("deps/libx.rlib"), vec![7u8; 100_000]).unwrap();
    set_mode(&target.join("deps"), 0o555);
    env
}

/// Repositories `repos`, the first of which (returned) gets `ignore` as its `.gitignore`
/// and `grove_toml` as its `.grove.toml`, committed and pushed.
fn copying(repos: &[&str], ignore: &str, grove_toml: &str) -> (TestEnv, PathBuf) {
    let env = TestEnv::with_repos(repos);
    let first = env.repos.join(repos[0]);
    env.commit(&first, ".gitignore", ignore, "ignore");
    env.commit(&first, ".grove.toml", grove_toml, "copy");
    env.git(&first, &["push", "-q", "origin", "main"]);
    (env, first)
}

/// `n` files in packages of 50, each with a `lib/`; every seventh executable, every
/// eleventh read-only; a `.bin` link to each package's entry.
pub fn fill_modules(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir.join(".bin")).unwrap();
    for i in 0..n {
        let pkg = dir.join(format!("pkg{:03}", i / 50));
        let file = pkg.join(format!("lib/m{i}.js"));
        if i % 50 == 0 {
            std::fs::create_dir_all(pkg.join("lib")).unwrap();
            std::os::unix::fs::symlink(
                format!("../pkg{:03}/lib/m{i}.js", i / 50),
                dir.join(format!(".bin/pkg{:03}", i / 50)),
            )
            .unwrap();
        }
        std::fs::write(
            &file,
            format!("module.exports = {i};\n{}", "x".repeat(i % 97)),
        )
        .unwrap();
        if i % 7 == 0 {
            set_mode(&file, 0o755);
        } else if i % 11 == 0 {
            set_mode(&file, 0o444);
        }
    }
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every entry under `root`: its path, kind, mode and content (a link's target).
pub fn entries(root: &Path) -> Vec<(PathBuf, &'static str, u32, Vec<u8>)> {
    use std::os::unix::ffi::OsStringExt;
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let mode = m.mode() & 0o7777;
            if m.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap().into_os_string().into_vec();
                out.push((rel, "link", 0, target));
            } else if m.is_dir() {
                out.push((rel, "dir", mode, Vec::new()));
                stack.push(p);
            } else {
                out.push((rel, "file", mode, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn create_copy_brings_every_cache_file_with_its_bytes_and_mode_as_a_new_file() {
    let env = warm_world();
    let api = env.repos.join("api");

    // The plan lists what would be copied, and its size; applying it does exactly that.
    let plan = env
        .gw(&[
            "plan", "create", "w", "-b", "w", "-r", "api,web", "--copy", "--format", "json",
        ])
        .success()
        .result();
    let copies: Vec<&serde_json::Value> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] == "copy_path")
        .collect();
    assert_eq!(copies.len(), 2, "{plan:#}");
    let modules = copies
        .iter()
        .find(|c| c["path"].as_str().unwrap().ends_with("/api/node_modules"))
        .expect("node_modules is in the plan");
    let detail = modules["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("ignored node_modules: {MODULES} files"))
            && detail.contains("400 links"),
        "{detail}"
    );
    assert!(plan["facts"].as_array().unwrap().iter().any(|f| {
        f["fact"] == "copy node_modules"
            && f["value"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{MODULES} files, "))
    }));
    let plan_file = env.root.join("plan.json");
    std::fs::write(&plan_file, plan.to_string()).unwrap();
    let result = env
        .gw(&["apply", s(&plan_file), "--format", "json"])
        .success()
        .result();

    let copied = result["copied"].as_array().unwrap();
    assert_eq!(copied.len(), 1, "web has no `copy`: {result:#}");
    let c = &copied[0];
    assert_eq!(c["repo"], "api");
    assert_eq!(c["paths"], serde_json::json!(["node_modules", "target"]));
    assert_eq!(c["files"], MODULES + 2);
    assert_eq!(c["symlinks"], 400);
    assert!(c["reflink"].is_boolean());
    let bytes: u64 = (0..MODULES)
        .map(|i| format!("module.exports = {i};\n").len() as u64 + (i % 97) as u64)
        .sum::<u64>()
        + 19
        + 100_000;
    assert_eq!(c["bytes"], bytes);

    let wt = env.ws("w").join("api");
    for cache in ["node_modules", "target"] {
        let (want, got) = (entries(&api.join(cache)), entries(&wt.join(cache)));
        assert_eq!(want.len(), got.len(), "{cache}");
        assert!(want == got, "{cache} differs from its source");
    }
    // New files, not the source's: a build writing one leaves the other alone.
    let (src, dst) = (
        api.join("node_modules/pkg001/lib/m51.js"),
        wt.join("node_modules/pkg001/lib/m51.js"),
    );
    let before = std::fs::read(&src).unwrap();
    assert_ne!(
        std::fs::metadata(&src).unwrap().ino(),
        std::fs::metadata(&dst).unwrap().ino()
    );
    assert_eq!(std::fs::metadata(&dst).unwrap().nlink(), 1);
    std::fs::write(&dst, "rebuilt\n").unwrap();
    assert_eq!(std::fs::read(&src).unwrap(), before);
    assert_eq!(std::fs::metadata(&src).unwrap().nlink(), 1);
    // The copies are ignored: the worktree is clean.
    let status = env
        .gw(&["status", "w", "--format", "json"])
        .success()
        .result();
    assert_eq!(
        e2e::repo_result(&status, "api")["state"],
        "clean",
        "the copied caches are ignored files: {status:#}"
    );
    env.gw(&["delete", "w", "--format", "json"]).success();
    assert!(!env.ws("w").exists());
    assert_eq!(
        entries(&api.join("node_modules")).len(),
        MODULES + 400 + 400 + 401
    );
}

#[test]
fn a_tracked_path_named_in_copy_is_refused_and_nothing_is_created() {
    let (env, api) = copying(
        &["api"],
        "node_modules/\n",
        "copy = [\"node_modules\", \"*.md\"]\n",
    );
    std::fs::create_dir_all(api.join("node_modules/x")).unwrap();
    std::fs::write(api.join("node_modules/x/i.js"), "1").unwrap();
    let before = env.snapshot();
    let run = env
        .gw(&[
            "create", "w", "-b", "w", "-r", "api", "--copy", "--format", "json",
        ])
        .code(5);
    let v = run.json();
    assert_eq!(v["error"]["code"], "CORRUPT_STATE", "{run}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`README.md` (matched by `*.md`), which git tracks"),
        "{message}"
    );
    let fix = v["fix"].as_str().unwrap();
    assert!(
        fix.contains("out of `copy`") && fix.contains(".grove.toml"),
        "{fix}"
    );
    assert_eq!(v["error"]["details"]["path"], "README.md");
    env.assert_unchanged(&before);
    assert!(!env.ws("w").exists());
    assert!(!env.has_branch(&api, "w"));
    // The plan refuses it the same way; without --copy, the create goes ahead.
    let plan = env
        .gw(&["plan", "create", "w", "-b", "w", "-r", "api", "--copy"])
        .code(5);
    assert!(plan.stderr.contains("which git tracks"), "{plan}");
    env.gw(&["create", "w", "-b", "w", "-r", "api"]).success();
    assert!(!env.ws("w").join("api/node_modules").exists());
}

#[test]
fn add_repo_copies_and_the_config_default_copies_without_the_flag() {
    let env = warm_world();
    env.append_config("\n[create]\ncopy = true\n");
    env.gw(&["create", "w", "-b", "w", "-r", "web"]).success();
    let result = env
        .gw(&["add-repo", "w", "-r", "api", "--format", "json"])
        .success()
        .result();
    assert_eq!(result["copied"][0]["files"], MODULES + 2, "{result:#}");
    let wt = env.ws("w").join("api");
    assert_eq!(
        entries(&env.repos.join("api/target")),
        entries(&wt.join("target"))
    );
    // --no-copy wins over the configuration.
    let result = env
        .gw(&[
            "create",
            "v",
            "-b",
            "v",
            "-r",
            "api",
            "--no-copy",
            "--format",
            "json",
        ])
        .success()
        .result();
    assert_eq!(result["copied"], serde_json::json!([]));
    assert!(!env.ws("v").join("api/node_modules").exists());
}

#[test]
fn copies_only_what_the_new_branch_leaves_room_for() {
    let (env, api) = copying(
        &["api"],
        "dist/\n.env.local\n",
        "copy = [\"dist\", \".env.local\"]\n",
    );
    // A branch whose files include `dist/` (tracked there, force-added).
    env.git(&api, &["switch", "-q", "-c", "old"]);
    std::fs::create_dir_all(api.join("dist")).unwrap();
    std::fs::write(api.join("dist/tracked.js"), "old").unwrap();
    env.git(&api, &["add", "-f", "dist/tracked.js"]);
    env.git(&api, &["commit", "-q", "-m", "dist on old"]);
    env.git(&api, &["switch", "-q", "main"]);
    std::fs::create_dir_all(api.join("dist")).unwrap();
    std::fs::write(api.join("dist/built.js"), "built").unwrap();
    std::fs::write(api.join(".env.local"), "KEY=1\n").unwrap();
    let result = env
        .gw(&[
            "create", "w", "-b", "old", "-r", "api", "--copy", "--format", "json",
        ])
        .success()
        .result();
    assert_eq!(
        result["copied"][0]["paths"],
        serde_json::json!([".env.local"])
    );
    let wt = env.ws("w").join("api");
    assert_eq!(
        std::fs::read_to_string(wt.join("dist/tracked.js")).unwrap(),
        "old"
    );
    assert!(
        !wt.join("dist/built.js").exists(),
        "never copied over the branch's files"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join(".env.local")).unwrap(),
        "KEY=1\n"
    );
}

/// Whether the file system under `dir` makes copy-on-write clones, as `cp` finds (GNU's
/// `--reflink=always`, or macOS's `-c`, which asks for `clonefile`).
fn clones_here(env: &TestEnv, dir: &Path) -> bool {
    let probe = dir.join("probe");
    std::fs::write(&probe, vec![1u8; 65536]).unwrap();
    let ok = |flag: &str| {
        env.sh(dir, &format!("cp {flag} probe probe-{}", flag.len()))
            .status
            == 0
    };
    let gnu = env.sh(dir, "cp --version").status == 0;
    let cloned = if gnu {
        ok("--reflink=always")
    } else {
        ok("-c")
    };
    env.sh(dir, "rm -f probe probe-*");
    cloned
}

/// The copy is made of copy-on-write clones exactly when the file system makes them (run
/// with `TMPDIR` on btrfs or XFS, or on macOS, to see the clones; on ext4 or tmpfs, the
/// plain copy), and either way the bytes are the source's.
#[test]
fn copies_are_clones_exactly_where_the_file_system_makes_them() {
    let (env, api) = copying(&["api"], "cache/\n", "copy = \"cache\"\n");
    std::fs::create_dir_all(api.join("cache")).unwrap();
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(api.join("cache/blob"), &big).unwrap();
    std::fs::write(api.join("cache/empty"), "").unwrap();
    let expected = clones_here(&env, &env.root);
    let result = env
        .gw(&[
            "create", "w", "-b", "w", "-r", "api", "--copy", "--format", "json",
        ])
        .success()
        .result();
    assert_eq!(result["copied"][0]["reflink"], expected, "{result:#}");
    assert_eq!(result["copied"][0]["bytes"], 3_000_000);
    let copy = env.ws("w").join("api/cache/blob");
    assert_eq!(std::fs::read(&copy).unwrap(), big);
    std::fs::write(&copy, "changed").unwrap();
    assert_eq!(std::fs::read(api.join("cache/blob")).unwrap(), big);
    eprintln!("copy-on-write clones here: {expected}");
}
