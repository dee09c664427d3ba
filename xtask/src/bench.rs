//! `cargo xtask bench [--quick] [--json FILE] [--scaling]`: grove's hot paths timed against
//! a baseline of the git work they stand for, in the same run (and shell completion, whose
//! budget is a time: a Tab must not be felt).
//!
//! Machines here are shared and noisy, so no figure is an absolute time: each case runs
//! alternately with its baseline (A B A B …, after a warm-up) and the result is the median
//! of the per-pair ratios. Fixtures are generated once into `target/bench-fixtures/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util;

mod floor;
mod report;

use report::{Budget, Case, LoadRange, Seen};

/// Sizes of the fixtures and how many pairs to time.
#[derive(Clone, Copy)]
struct Scale {
    label: &'static str,
    /// Repositories in the status workspace.
    status_repos: usize,
    files: usize,
    /// Workspaces × repositories for `list -s`.
    list_s_workspaces: usize,
    list_s_repos: usize,
    /// Workspaces in state for `list`.
    list_workspaces: usize,
    create_repos: usize,
    /// Files in the one huge repository (status, context and create).
    big_files: usize,
    /// Pairs timed for creating the huge repository's workspace.
    big_create_pairs: usize,
    delete_files: usize,
    /// Files in the cache `gw create --copy` copies.
    copy_files: usize,
    /// Keys in the one object of the `.mcp.json` gw-migrate reads.
    migrate_keys: usize,
    /// Pairs timed for the read cases (`gw list` runs twice as many: its runs are short).
    pairs: usize,
    /// Pairs timed for create and delete, whose runs take seconds.
    slow_pairs: usize,
}

const FULL: Scale = Scale {
    label: "full",
    status_repos: 20,
    files: 2000,
    list_s_workspaces: 20,
    list_s_repos: 5,
    list_workspaces: 1000,
    create_repos: 10,
    big_files: 100_000,
    big_create_pairs: 5,
    delete_files: 100_000,
    copy_files: 100_000,
    migrate_keys: 600_000,
    pairs: 21,
    slow_pairs: 9,
};

const QUICK: Scale = Scale {
    label: "quick",
    status_repos: 4,
    files: 200,
    list_s_workspaces: 3,
    list_s_repos: 2,
    list_workspaces: 100,
    create_repos: 3,
    big_files: 2_000,
    big_create_pairs: 1,
    delete_files: 2_000,
    copy_files: 2_000,
    migrate_keys: 60_000,
    pairs: 2,
    slow_pairs: 1,
};

pub const USAGE: &str =
    "usage: cargo xtask bench [--quick] [--json FILE] [--scaling] [--gw PATH] [--only C] [--fixtures DIR]

Times grove's hot paths (status, context, list -s, list, create, delete, completion)
alternately with a git baseline and reports the median of the per-pair ratios against
each case's budget (completion: the median time, at most 20 ms with 1,000 workspaces).
  --quick    small fixtures, a smoke run: every case must work, no budget is judged
  --json F   also write the figures to F
  --scaling  also time status and list at growing sizes
  --gw PATH  time this gw instead of building the release one
  --only C   only the cases named (comma-separated: status, context, list-s, list,
             completion, create, delete, migrate, big-status, big-context, big-create,
             copy)
  --fixtures DIR  generate the fixtures in DIR instead of target/bench-fixtures (another
             file system: the copy case measures copy-on-write clones on btrfs or XFS)";

/// Medians of a case's pairs: wall-clock and CPU time (user + system, of the process and
/// everything it ran), each side and the median of the per-pair ratios.
#[derive(Clone, Copy, Debug, Default)]
struct Measure {
    gw_ms: f64,
    base_ms: f64,
    ratio: f64,
    gw_cpu_ms: f64,
    base_cpu_ms: f64,
    cpu_ratio: f64,
    /// The load averages seen while the pairs ran.
    seen: Seen,
}

/// One timed run.
#[derive(Clone, Copy, Debug, Default)]
struct Timing {
    wall_ms: f64,
    cpu_ms: f64,
}

/// Checks the arguments; does no work.
pub fn check_args(args: &[String]) -> Result<(), String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" | "--scaling" => {}
            "--json" => {
                it.next().ok_or("--json needs a file")?;
            }
            "--gw" => {
                it.next().ok_or("--gw needs a path")?;
            }
            "--only" => {
                it.next().ok_or("--only needs case names")?;
            }
            "--fixtures" => {
                it.next().ok_or("--fixtures needs a directory")?;
            }
            other => return Err(format!("unknown argument `{other}`\n\n{USAGE}")),
        }
    }
    Ok(())
}

pub fn run(args: &[String]) -> Result<(), String> {
    let quick = args.iter().any(|a| a == "--quick");
    let scaling = args.iter().any(|a| a == "--scaling");
    let json = args
        .iter()
        .position(|a| a == "--json")
        .map(|i| args.get(i + 1).cloned().ok_or("--json needs a file"));
    let json = json.transpose()?;
    let scale = if quick { QUICK } else { FULL };
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .map(|i| args.get(i + 1).ok_or("--only needs case names"))
        .transpose()?
        .map(|v| v.split(',').map(str::to_string).collect());
    let wanted = |case: &str| only.as_ref().is_none_or(|o| o.iter().any(|c| c == case));
    let root = util::project_root();
    let given = args
        .iter()
        .position(|a| a == "--gw")
        .map(|i| {
            args.get(i + 1)
                .map(std::path::PathBuf::from)
                .ok_or("--gw needs a path")
        })
        .transpose()?;
    let gw = match given {
        // Cases run gw from their fixtures' directories: a relative path would name nothing.
        Some(gw) => std::path::absolute(&gw).map_err(|e| format!("--gw {}: {e}", gw.display()))?,
        None => {
            util::step("cargo build --release -p gw");
            util::build_release(&root, "gw")?
        }
    };
    let cache = match args.iter().position(|a| a == "--fixtures") {
        Some(i) => PathBuf::from(args.get(i + 1).ok_or("--fixtures needs a directory")?),
        None => util::target_dir(&root)?.join("bench-fixtures"),
    };
    let started = Instant::now();

    let loadavg_start = report::loadavg();
    let mut cases = Vec::new();
    // Each case as it is measured: its figures are printed at the end, its load now.
    let push = |cases: &mut Vec<Case>, c: Case| {
        println!(
            "    load average {:.2}–{:.2} while timed ({:.0} s in so far)",
            c.m.seen.min,
            c.m.seen.max,
            started.elapsed().as_secs_f64()
        );
        cases.push(c);
    };
    let fx = Fixture::prepare(&cache, &gw, scale)?;
    if wanted("status") {
        util::step("status");
        push(&mut cases, fx.status_case(scale, "status")?);
    }
    if wanted("context") {
        util::step("context");
        push(&mut cases, fx.status_case(scale, "context")?);
    }
    if wanted("list-s") {
        util::step("list -s");
        push(&mut cases, fx.list_status_case(scale)?);
    }
    if wanted("list") || wanted("completion") {
        // The list case also makes the home the completion case uses.
        util::step("list");
        push(&mut cases, fx.list_case(scale, scale.list_workspaces)?);
    }
    if wanted("completion") {
        util::step("completion");
        push(&mut cases, fx.complete_case(scale, scale.list_workspaces)?);
    }
    if wanted("create") {
        util::step("create");
        push(&mut cases, fx.create_case(scale)?);
    }
    if wanted("big-status") || wanted("big-context") || wanted("big-create") {
        let big = Fixture::prepare_big(&cache, &gw, scale)?;
        for which in ["status", "context"] {
            if wanted(&format!("big-{which}")) {
                util::step(&format!("{which}, one huge repository"));
                push(&mut cases, big.big_status_case(scale, which)?);
            }
        }
        if wanted("big-create") {
            util::step("create, one huge repository");
            push(
                &mut cases,
                big.create_case_of(
                    &["big".to_string()],
                    "gw create, one repository of many files",
                    vec![Budget::FloorWall(1.3)],
                    scale.big_create_pairs,
                )?,
            );
        }
    }
    if wanted("delete") {
        util::step("delete");
        push(&mut cases, fx.delete_case(scale)?);
    }
    if wanted("copy") {
        util::step("create --copy, a cache of many files");
        push(
            &mut cases,
            Fixture::prepare_warm(&cache, &gw, scale)?.copy_case(scale)?,
        );
    }
    if wanted("migrate") {
        util::step("cargo build --release -p migrate");
        let migrate = util::build_release(&root, "gw-migrate")?;
        util::step("gw-migrate over one huge object");
        push(&mut cases, migrate_keys_case(&cache, &migrate, scale)?);
    }

    println!("{}", report::table(&cases, quick));
    println!(
        "{} scale, {} pairs per read case ({} for list), {} for create and delete; {:.0} s in all; \
         load average {:.2} at the start, {:.2} at the end (each case's in its row; judged \
         within {:.0}–{:.0}, under load {:.0}–{:.0}); {}",
        scale.label,
        scale.pairs,
        list_pairs(scale),
        scale.slow_pairs,
        started.elapsed().as_secs_f64(),
        loadavg_start,
        report::loadavg(),
        LoadRange::quiet().min,
        LoadRange::quiet().max,
        LoadRange::busy().min,
        LoadRange::busy().max,
        report::verdict(&cases, quick),
    );

    let mut scaling_rows = Vec::new();
    if scaling && wanted("status") {
        // One fixture with the most repositories serves every status size.
        let biggest = Scale {
            status_repos: 80,
            ..scale
        };
        let fx80 = Fixture::prepare(&cache, &gw, biggest)?;
        for n in [5, 20, 80] {
            util::step(&format!("scaling: status over {n} repositories"));
            let s = Scale {
                status_repos: n,
                ..scale
            };
            let c = fx80.status_case(s, "status")?;
            scaling_rows.push(serde_json::json!({
                "case": "gw status --format json", "repos": n, "files_per_repo": s.files,
                "gw_ms": c.m.gw_ms, "baseline_ms": c.m.base_ms, "ratio": c.m.ratio,
                "cpu_ratio": c.m.cpu_ratio,
            }));
        }
    }
    if scaling && wanted("big-status") {
        for n in [10_000, 100_000, 300_000] {
            util::step(&format!("scaling: status of one repository of {n} files"));
            let s = Scale {
                big_files: n,
                ..scale
            };
            let c = Fixture::prepare_big(&cache, &gw, s)?.big_status_case(s, "status")?;
            scaling_rows.push(serde_json::json!({
                "case": "gw status --format json, one repository", "files": n,
                "gw_ms": c.m.gw_ms, "baseline_ms": c.m.base_ms, "ratio": c.m.ratio,
                "cpu_ratio": c.m.cpu_ratio, "peak_rss_kib": c.peak_rss_kib,
            }));
        }
    }
    if scaling && wanted("list") {
        for n in [100, 1000, 10_000] {
            util::step(&format!("scaling: list of {n} workspaces"));
            let c = fx.list_case(scale, n)?;
            scaling_rows.push(serde_json::json!({
                "case": "gw list --format json", "workspaces": n,
                "gw_ms": c.m.gw_ms, "baseline_ms": c.m.base_ms, "ratio": c.m.ratio,
                "cpu_ratio": c.m.cpu_ratio, "peak_rss_kib": c.peak_rss_kib,
            }));
        }
    }
    if !scaling_rows.is_empty() {
        println!("\nScaling:");
        for r in &scaling_rows {
            println!("- {r}");
        }
    }

    if let Some(path) = json {
        let doc = serde_json::json!({
            "scale": scale.label,
            "pairs": scale.pairs,
            "list_pairs": list_pairs(scale),
            "slow_pairs": scale.slow_pairs,
            "commit": util::git_head(&root),
            "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "loadavg_start": loadavg_start,
            "loadavg_end": report::loadavg(),
            "load_range": { "quiet": [LoadRange::quiet().min, LoadRange::quiet().max],
                            "busy": [LoadRange::busy().min, LoadRange::busy().max] },
            "seconds": started.elapsed().as_secs_f64(),
            "cases": cases.iter().map(|c| c.json(quick)).collect::<Vec<_>>(),
            "scaling": scaling_rows,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("json"))
            .map_err(|e| format!("{path}: {e}"))?;
        println!("wrote {path}");
    }
    Ok(())
}

/// The generated repositories and grove directories.
struct Fixture {
    dir: PathBuf,
    gw: PathBuf,
}

fn git_env(cmd: &mut Command, home: &Path) {
    cmd.env("HOME", home)
        .env("GW_HOME", home.join(".grove"))
        .envs(e2e::HERMETIC_GIT.iter().copied())
        .env("NO_COLOR", "1")
        .env_remove("GW_FORMAT")
        .stdin(Stdio::null());
}

fn sh(dir: &Path, home: &Path, script: &str) -> Result<(), String> {
    let mut cmd = Command::new("sh");
    git_env(&mut cmd, home);
    cmd.arg("-c").arg(script).current_dir(dir);
    util::run_captured(&mut cmd, &format!("`{script}`"))
}

/// What a status read case runs: `gw status bench` (from the home) or `gw context` (from
/// inside the workspace).
fn read_args(which: &str) -> Vec<&'static str> {
    match which {
        "status" => vec!["status", "bench", "--format", "json"],
        _ => vec!["context", "--format", "json"],
    }
}

fn q(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

impl Fixture {
    /// Generates (once) `repos` source repositories of `files` files with `file://` origins,
    /// and the grove directories the cases use.
    fn prepare(cache: &Path, gw: &Path, s: Scale) -> Result<Fixture, String> {
        let repos = s.status_repos.max(s.create_repos).max(s.list_s_repos);
        let names: Vec<String> = (1..=repos).map(|i| format!("r{i:02}")).collect();
        let line =
            "grove benchmark fixture line that is about this long, give or take.\n".repeat(3);
        Fixture::generate(
            cache.join(format!("v1-{repos}x{}", s.files)),
            gw,
            &names,
            |seed| {
                for i in 0..s.files {
                    let sub = seed.join(format!("d{:02}", i % 50));
                    std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
                    std::fs::write(sub.join(format!("f{i:05}.txt")), format!("{i}\n{line}"))
                        .map_err(|e| e.to_string())?;
                }
                Ok(())
            },
        )
    }

    /// Generates (once) one repository of `s.big_files` files (200 packages of equal size,
    /// as a monorepo holds them) with a `file://` origin, at `repos/big`.
    fn prepare_big(cache: &Path, gw: &Path, s: Scale) -> Result<Fixture, String> {
        let per_package = (s.big_files / 200).max(1);
        Fixture::generate(
            cache.join(format!("v1-big-{}", s.big_files)),
            gw,
            &["big".to_string()],
            |seed| {
                for i in 0..s.big_files {
                    let sub = seed.join(format!("pkg{:03}/src", i / per_package));
                    if i % per_package == 0 {
                        std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
                    }
                    std::fs::write(
                        sub.join(format!("m{i:06}.js")),
                        format!("// module {i}\nmodule.exports = {i};\n"),
                    )
                    .map_err(|e| e.to_string())?;
                }
                Ok(())
            },
        )
    }

    /// Generates (once) one repository `warm` of 200 files whose `.grove.toml` names
    /// `copy = ["node_modules"]`, and in its checkout an ignored `node_modules` of
    /// `s.copy_files` files as npm lays one out: packages of 40 files (a `package.json`, a
    /// `lib/` and a `lib/internal/`, sizes from a few bytes to 8 KiB), each with a link in
    /// `.bin`.
    fn prepare_warm(cache: &Path, gw: &Path, s: Scale) -> Result<Fixture, String> {
        let dir = cache.join(format!("v1-warm-{}", s.copy_files));
        let fx = Fixture::generate(dir.clone(), gw, &["warm".to_string()], |seed| {
            for i in 0..200 {
                let sub = seed.join(format!("src/d{}", i % 10));
                std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
                std::fs::write(sub.join(format!("f{i}.js")), format!("// {i}\n"))
                    .map_err(|e| e.to_string())?;
            }
            std::fs::write(seed.join(".grove.toml"), "copy = [\"node_modules\"]\n")
                .map_err(|e| e.to_string())
        })?;
        let modules = dir.join("repos/warm/node_modules");
        if !dir.join("modules-ready").exists() {
            let _ = std::fs::remove_dir_all(&modules);
            let bin = modules.join(".bin");
            std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
            let filler = "x".repeat(8192);
            for i in 0..s.copy_files {
                let pkg = modules.join(format!("pkg{:05}", i / 40));
                let file = match i % 40 {
                    0 => {
                        std::fs::create_dir_all(pkg.join("lib/internal"))
                            .map_err(|e| e.to_string())?;
                        std::os::unix::fs::symlink(
                            format!("../pkg{:05}/lib/m0.js", i / 40),
                            bin.join(format!("pkg{:05}", i / 40)),
                        )
                        .map_err(|e| e.to_string())?;
                        pkg.join("package.json")
                    }
                    k if k < 25 => pkg.join(format!("lib/m{k}.js")),
                    k => pkg.join(format!("lib/internal/m{k}.js")),
                };
                let size = (i * 7919) % 8192;
                std::fs::write(&file, &filler[..size]).map_err(|e| e.to_string())?;
            }
            std::fs::write(dir.join("modules-ready"), "").map_err(|e| e.to_string())?;
        }
        Ok(fx)
    }

    /// Generates (once, marked by a `ready` file) under `dir`: a seed repository that
    /// `fill` writes and one commit records, and for each of `names` a bare origin it is
    /// pushed to and a clone of that at `repos/<name>`.
    fn generate(
        dir: PathBuf,
        gw: &Path,
        names: &[String],
        fill: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<Fixture, String> {
        let fx = Fixture {
            dir: dir.clone(),
            gw: gw.to_path_buf(),
        };
        if dir.join("ready").exists() {
            return Ok(fx);
        }
        util::step(&format!("generating fixtures in {}", dir.display()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["seed", "origins", "repos", "home"] {
            std::fs::create_dir_all(dir.join(d)).map_err(|e| e.to_string())?;
        }
        let seed = dir.join("seed");
        fill(&seed)?;
        std::fs::write(seed.join(".gitignore"), "node_modules/\n").map_err(|e| e.to_string())?;
        let home = dir.join("home");
        sh(
            &seed,
            &home,
            "git init -q -b main && git add -A && git commit -q -m seed",
        )?;
        for name in names {
            let origin = dir.join(format!("origins/{name}.git"));
            sh(
                &dir,
                &home,
                &format!(
                    "git init -q --bare -b main {o} && git -C {s} push -q {o} main && git clone -q file://{op} {r}",
                    o = q(&origin),
                    s = q(&seed),
                    op = origin.display(),
                    r = q(&dir.join("repos").join(name)),
                ),
            )?;
        }
        // The clones hold everything the cases use.
        let _ = std::fs::remove_dir_all(&seed);
        std::fs::write(dir.join("ready"), "").map_err(|e| e.to_string())?;
        Ok(fx)
    }

    /// `gw status` (or `gw context` from inside the worktree) of a workspace holding the one
    /// huge repository, one file modified and one untracked, against the git commands that
    /// tell the same: status with the branch, and ahead/behind of the base.
    fn big_status_case(&self, s: Scale, which: &'static str) -> Result<Case, String> {
        let home = self.home("big-status")?;
        let ws = home.join(".grove/workspaces/bench");
        let wt = ws.join("big");
        if !ws.exists() {
            self.gw_ok(&home, &["create", "bench", "-b", "bench", "-r", "big"])?;
            sh(
                &wt,
                &home,
                "echo more >> pkg000/src/m000000.js && echo new > untracked.txt",
            )?;
            // Out of the racy seconds of the checkout (a status refreshes only files two seconds
            // older than itself), then once through, as a worktree in use has been.
            std::thread::sleep(Duration::from_millis(2100));
            self.gw_ok(&home, &["status", "bench"])?;
        }
        let w = q(&wt);
        let baseline = format!(
            "git -C {w} status --porcelain=v2 --branch --untracked-files=normal >/dev/null && \
             git -C {w} rev-list --left-right --count HEAD...origin/main >/dev/null"
        );
        let args = read_args(which);
        let (name, cwd) = match which {
            "status" => (
                "gw status --format json, one repository of many files",
                home.clone(),
            ),
            _ => (
                "gw context --format json, one repository of many files",
                wt.clone(),
            ),
        };
        self.read_case(
            &home,
            (&args, &cwd),
            &baseline,
            s.pairs,
            name,
            "git status --porcelain=v2 --branch + git rev-list --left-right --count",
            0.9,
        )
    }

    /// A read case: `gw args` run from `cwd`, alternately with the shell line `script`.
    #[allow(clippy::too_many_arguments)]
    fn read_case(
        &self,
        home: &Path,
        (args, cwd): (&[&str], &Path),
        script: &str,
        pairs: usize,
        name: &'static str,
        baseline: &'static str,
        budget: f64,
    ) -> Result<Case, String> {
        let mut gw = self.gw_cmd(home, args);
        gw.current_dir(cwd);
        let mut base = Command::new("sh");
        git_env(&mut base, home);
        base.arg("-c").arg(script).stdout(Stdio::null());
        let m = alternate(&mut gw, &mut base, pairs, || Ok(()), || Ok(()))?;
        Ok(Case {
            peak_rss_kib: peak_rss(&mut self.gw_cmd(home, args), cwd),
            ..Case::new(name, baseline, vec![Budget::Wall(budget)], m)
        })
    }

    fn repo(&self, i: usize) -> PathBuf {
        self.dir.join(format!("repos/r{i:02}"))
    }

    /// A fresh grove home under the fixture, initialised on the repositories.
    fn home(&self, name: &str) -> Result<PathBuf, String> {
        let home = self.dir.join(format!("homes/{name}"));
        if !home.join(".grove/config.toml").exists() {
            std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
            self.gw_ok(
                &home,
                &["init", self.dir.join("repos").to_str().ok_or("path")?],
            )?;
        }
        Ok(home)
    }

    fn gw_cmd(&self, home: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.gw);
        git_env(&mut cmd, home);
        cmd.args(args)
            .current_dir(home)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    fn gw_ok(&self, home: &Path, args: &[&str]) -> Result<(), String> {
        let mut cmd = self.gw_cmd(home, args);
        cmd.stderr(Stdio::piped());
        let out = cmd.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "gw {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn status_case(&self, s: Scale, which: &'static str) -> Result<Case, String> {
        let home = self.home(&format!("status-{}", s.status_repos))?;
        let names: Vec<String> = (1..=s.status_repos).map(|i| format!("r{i:02}")).collect();
        let ws = home.join(".grove/workspaces/bench");
        if !ws.exists() {
            // A branch per size: the scaling run makes several of these workspaces over the
            // same source repositories, and a branch can be checked out only once.
            let branch = format!("bench-{}", s.status_repos);
            self.gw_ok(
                &home,
                &["create", "bench", "-b", &branch, "-r", &names.join(",")],
            )?;
            // Some repositories dirty: modified, staged and untracked files.
            for (i, n) in names.iter().enumerate().filter(|(i, _)| i % 4 == 0) {
                let wt = ws.join(n);
                sh(
                    &wt,
                    &home,
                    &format!(
                        "echo more >> d00/f{:05}.txt && echo more >> d01/f{:05}.txt && echo new > untracked-{i}.txt && echo staged >> d02/f{:05}.txt && git add d02",
                        0, 1, 2
                    ),
                )?;
            }
        }
        let dirs: Vec<PathBuf> = names.iter().map(|n| ws.join(n)).collect();
        // Both git commands of every repository, two processes at a time, straight from
        // xargs (six arguments each, no shell in between; `git status` is given its
        // default `--untracked-files=normal` to make the counts equal).
        let mut args = Vec::new();
        for d in &dirs {
            let d = d.to_str().ok_or("non-UTF-8 fixture path")?;
            args.extend(["-C", d, "status", "--porcelain=v2", "--branch"]);
            args.push("--untracked-files=normal");
            args.extend(["-C", d, "rev-list", "--left-right", "--count"]);
            args.push("HEAD...origin/main");
        }
        let arg_file = self.dir.join(format!("status-{}.args", s.status_repos));
        std::fs::write(&arg_file, args.join("\0")).map_err(|e| e.to_string())?;
        let baseline = format!("xargs -0 -n6 -P2 -a {} git >/dev/null", q(&arg_file));
        let args = read_args(which);
        let (name, cwd) = match which {
            "status" => ("gw status --format json", home.clone()),
            _ => ("gw context --format json", ws.join(&names[0])),
        };
        self.read_case(
            &home,
            (&args, &cwd),
            &baseline,
            s.pairs,
            name,
            "git status --porcelain=v2 --branch + git rev-list --left-right --count, two at a time",
            0.6,
        )
    }

    fn list_status_case(&self, s: Scale) -> Result<Case, String> {
        let home = self.home("list-s")?;
        let repos: Vec<String> = (1..=s.list_s_repos).map(|i| format!("r{i:02}")).collect();
        let mut dirs = Vec::new();
        for w in 0..s.list_s_workspaces {
            let name = format!("ls-{w:02}");
            let ws = home.join(".grove/workspaces").join(&name);
            if !ws.exists() {
                self.gw_ok(
                    &home,
                    &["create", &name, "-b", &name, "-r", &repos.join(",")],
                )?;
            }
            dirs.extend(repos.iter().map(|r| ws.join(r)));
        }
        let list = dirs.iter().map(|d| q(d)).collect::<Vec<_>>().join(" ");
        let baseline = format!(
            "printf '%s\\n' {list} | xargs -P2 -I{{}} git -C {{}} status --porcelain=v2 --branch >/dev/null"
        );
        let mut gw = self.gw_cmd(&home, &["list", "-s", "--format", "json"]);
        let mut base = Command::new("sh");
        git_env(&mut base, &home);
        base.arg("-c").arg(&baseline).stdout(Stdio::null());
        let m = alternate(&mut gw, &mut base, s.pairs, || Ok(()), || Ok(()))?;
        Ok(Case {
            peak_rss_kib: peak_rss(
                &mut self.gw_cmd(&home, &["list", "-s", "--format", "json"]),
                &home,
            ),
            ..Case::new(
                "gw list -s --format json",
                "git status --porcelain=v2 --branch over the same worktrees, two at a time",
                vec![Budget::Wall(0.8)],
                m,
            )
        })
    }

    fn list_case(&self, s: Scale, workspaces: usize) -> Result<Case, String> {
        let home = self.dir.join(format!("homes/list-{workspaces}"));
        if !home.join(".grove/state.json").exists() {
            std::fs::create_dir_all(home.join(".grove")).map_err(|e| e.to_string())?;
            let ws_dir = home.join(".grove/workspaces");
            std::fs::write(
                home.join(".grove/config.toml"),
                format!(
                    "repo_dirs = [{:?}]\n",
                    self.dir.join("repos").display().to_string()
                ),
            )
            .map_err(|e| e.to_string())?;
            let state: Vec<serde_json::Value> = (0..workspaces)
                .map(|i| {
                    let name = format!("ws-{i:05}");
                    let path = ws_dir.join(&name);
                    serde_json::json!({
                        "name": name, "path": path, "branch": format!("feat/{name}"),
                        "created_at": "2026-05-01T09:30:12.123456",
                        "repos": (1..=3).map(|r| serde_json::json!({
                            "repo_name": format!("r{r:02}"),
                            "source_repo": self.repo(r),
                            "worktree_path": path.join(format!("r{r:02}")),
                            "branch": format!("feat/{name}"),
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            std::fs::write(
                home.join(".grove/state.json"),
                serde_json::to_string_pretty(&state).expect("json"),
            )
            .map_err(|e| e.to_string())?;
        }
        let mut gw = self.gw_cmd(&home, &["list", "--format", "json"]);
        let mut base = Command::new("git");
        base.arg("--version").stdout(Stdio::null());
        let m = alternate(&mut gw, &mut base, list_pairs(s), || Ok(()), || Ok(()))?;
        Ok(Case {
            peak_rss_kib: peak_rss(
                &mut self.gw_cmd(&home, &["list", "--format", "json"]),
                &home,
            ),
            ..Case::new(
                "gw list --format json",
                "git --version",
                vec![Budget::Wall(3.0)],
                m,
            )
        })
    }

    /// `gw go <Tab>` in bash with `workspaces` workspaces: what the completion script runs.
    fn complete_case(&self, s: Scale, workspaces: usize) -> Result<Case, String> {
        // The list case made this home.
        let home = self.dir.join(format!("homes/list-{workspaces}"));
        let mut gw = self.gw_cmd(&home, &["--", "gw", "go", ""]);
        gw.env("COMPLETE", "bash")
            .env("_CLAP_COMPLETE_INDEX", "2")
            .env("_CLAP_IFS", "\n");
        let out = gw
            .stdout(Stdio::piped())
            .output()
            .map_err(|e| e.to_string())?;
        // The names, then the command's flags (an empty word completes both).
        let found = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("ws-"))
            .count();
        if found != workspaces {
            return Err(format!(
                "completion offered {found} workspace names, not {workspaces}"
            ));
        }
        gw.stdout(Stdio::null());
        let mut base = Command::new("git");
        base.arg("--version").stdout(Stdio::null());
        let m = alternate(&mut gw, &mut base, list_pairs(s), || Ok(()), || Ok(()))?;
        Ok(Case::new(
            "gw go <Tab> (bash completion)",
            "git --version",
            vec![Budget::Ms(20.0)],
            m,
        ))
    }

    fn create_case(&self, s: Scale) -> Result<Case, String> {
        let repos: Vec<String> = (1..=s.create_repos).map(|i| format!("r{i:02}")).collect();
        self.create_case_of(
            &repos,
            "gw create",
            vec![Budget::FloorWall(1.3), Budget::Cpu(1.1)],
            s.slow_pairs,
        )
    }

    /// `gw create` of a workspace of `repos` against `git worktree add` of each in turn and
    /// against the floor (`floor.rs`: only the directories and files, written from memory),
    /// timed in turn in each round.
    fn create_case_of(
        &self,
        repos: &[String],
        name: &'static str,
        budgets: Vec<Budget>,
        pairs: usize,
    ) -> Result<Case, String> {
        let home = self.home("create")?;
        let scratch = self.dir.join("scratch-create");
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        let trees = repos
            .iter()
            .map(|r| {
                floor::Tree::load(&self.dir.join("repos").join(r), "origin/main", |c| {
                    git_env(c, &home)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let threads = floor::threads();
        let mut times_a = Vec::new();
        let mut times_b = Vec::new();
        let mut times_f = Vec::new();
        let mut peak = None;
        report::watch_load();
        for k in 0..=pairs {
            let name = format!("c-{k}");
            // Left over by an interrupted run.
            let _ = self.gw_ok(&home, &["delete", &name, "--force", "--purge"]);
            let mut gw = self.gw_cmd(
                &home,
                &[
                    "create",
                    &name,
                    "-b",
                    &name,
                    "-r",
                    &repos.join(","),
                    "--format",
                    "json",
                ],
            );
            // The warm-up pair measures peak memory instead (under /usr/bin/time).
            settle();
            let t = if k == 0 {
                peak = peak_rss(&mut gw, &home);
                if peak.is_none() {
                    time(&mut gw)?;
                }
                Timing::default()
            } else {
                time(&mut gw)?
            };
            self.gw_ok(&home, &["delete", &name, "--force", "--purge"])?;
            wait_empty(&home.join(".grove/workspaces/.trash"));
            let script: String = repos
                .iter()
                .map(|r| {
                    format!(
                        "git -C {} worktree add -q --no-track -b cb-{k} {} origin/main",
                        q(&self.dir.join("repos").join(r)),
                        q(&scratch.join(format!("cb-{k}/{r}")))
                    )
                })
                .collect::<Vec<_>>()
                .join(" && ");
            let mut base = Command::new("sh");
            git_env(&mut base, &home);
            base.arg("-c").arg(&script);
            settle();
            let tb = time(&mut base)?;
            let cleanup: String = repos
                .iter()
                .map(|r| {
                    format!(
                        "git -C {d} worktree remove --force {p} && git -C {d} branch -q -D cb-{k}",
                        d = q(&self.dir.join("repos").join(r)),
                        p = q(&scratch.join(format!("cb-{k}/{r}")))
                    )
                })
                .collect::<Vec<_>>()
                .join(" && ");
            sh(&home, &home, &cleanup)?;
            let dest = scratch.join(format!("floor-{k}"));
            let to: Vec<(&floor::Tree, PathBuf)> = trees
                .iter()
                .zip(repos)
                .map(|(t, r)| (t, dest.join(r)))
                .collect();
            settle();
            let tf = floor::write(&to, threads)?;
            report::sample_load();
            std::fs::remove_dir_all(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
            if k > 0 {
                times_a.push(t);
                times_b.push(tb);
                times_f.push(tf);
            }
        }
        let m = summarise(&times_a, &times_b);
        let of = |v: &[Timing], f: fn(&Timing) -> f64| median(&v.iter().map(f).collect::<Vec<_>>());
        let ratio = |f: fn(&Timing) -> f64| {
            median(
                &times_a
                    .iter()
                    .zip(&times_f)
                    .map(|(a, b)| f(a) / f(b))
                    .collect::<Vec<_>>(),
            )
        };
        Ok(Case {
            floor: Some(report::Floor {
                wall_ms: of(&times_f, |t| t.wall_ms),
                cpu_ms: of(&times_f, |t| t.cpu_ms),
                ratio: ratio(|t| t.wall_ms),
                cpu_ratio: ratio(|t| t.cpu_ms),
                threads,
            }),
            peak_rss_kib: peak,
            ..Case::new(
                name,
                "sequential git worktree add --no-track -b over the same repos",
                budgets,
                m,
            )
        })
    }

    /// `gw create --copy` of the warm repository (its worktree, and its cache copied into
    /// it) against the shell a person writes for the same: `git worktree add`, then `cp -a`
    /// of the cache, on the same file system.
    fn copy_case(&self, s: Scale) -> Result<Case, String> {
        let home = self.home("copy")?;
        let source = self.dir.join("repos/warm");
        let scratch = self.dir.join("scratch-copy");
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        let (mut times_a, mut times_b) = (Vec::new(), Vec::new());
        let mut reflink = None;
        let mut peak = None;
        report::watch_load();
        for k in 0..=s.slow_pairs {
            let name = format!("w-{k}");
            let _ = self.gw_ok(&home, &["delete", &name, "--force", "--purge"]);
            wait_empty(&home.join(".grove/workspaces/.trash"));
            let args = [
                "create", &name, "-b", &name, "-r", "warm", "--copy", "--format", "json",
            ];
            settle();
            if k == 0 {
                // The warm-up: what was copied, and how (and the peak memory).
                let out = self
                    .gw_cmd(&home, &args)
                    .stdout(Stdio::piped())
                    .output()
                    .map_err(|e| e.to_string())?;
                let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                    .map_err(|e| format!("gw create --copy: {e}"))?;
                let copied = &v["result"]["copied"][0];
                if copied["files"].as_u64() != Some(s.copy_files as u64) {
                    return Err(format!("gw create --copy copied {copied}"));
                }
                reflink = copied["reflink"].as_bool();
                self.gw_ok(&home, &["delete", &name, "--force", "--purge"])?;
                wait_empty(&home.join(".grove/workspaces/.trash"));
                peak = peak_rss(&mut self.gw_cmd(&home, &args), &home);
            } else {
                times_a.push(time(&mut self.gw_cmd(&home, &args))?);
            }
            self.gw_ok(&home, &["delete", &name, "--force", "--purge"])?;
            wait_empty(&home.join(".grove/workspaces/.trash"));
            let wt = scratch.join(format!("cb-{k}"));
            let script = format!(
                "git -C {src} worktree add -q --no-track -b cb-{k} {wt} origin/main && cp -a {src}/node_modules {wt}/node_modules",
                src = q(&source),
                wt = q(&wt),
            );
            let mut base = Command::new("sh");
            git_env(&mut base, &home);
            base.arg("-c").arg(&script);
            settle();
            let tb = time(&mut base)?;
            sh(
                &home,
                &home,
                &format!(
                    "rm -rf {wt} && git -C {src} worktree prune && git -C {src} branch -q -D cb-{k}",
                    src = q(&source),
                    wt = q(&wt)
                ),
            )?;
            if k > 0 {
                times_b.push(tb);
            }
        }
        let m = summarise(&times_a, &times_b);
        Ok(Case {
            peak_rss_kib: peak,
            ..Case::new(
                if reflink == Some(true) {
                    "gw create --copy, a cache of many files (copy-on-write clones)"
                } else {
                    "gw create --copy, a cache of many files (plain copy, in parallel)"
                },
                "git worktree add + cp -a of the cache, same file system",
                vec![Budget::Wall(0.8)],
                m,
            )
        })
    }

    fn delete_case(&self, s: Scale) -> Result<Case, String> {
        // The delete budget holds on a busy machine: both sides run beside a busy thread per
        // core and one more, started before the workspaces are made so that the load average
        // has climbed past 2 by the time the pairs are timed.
        let load = Load::start(std::thread::available_parallelism().map_or(2, |n| n.get()) + 1);
        let home = self.home("delete")?;
        let template = self.dir.join(format!("node_modules-{}", s.delete_files));
        if !template.join("done").exists() {
            let _ = std::fs::remove_dir_all(&template);
            for i in 0..s.delete_files {
                let sub = template.join(format!("pkg{:04}", i / 1000));
                if i % 1000 == 0 {
                    std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
                }
                std::fs::write(sub.join(format!("m{i}.js")), "module.exports = 1;\n")
                    .map_err(|e| e.to_string())?;
            }
            std::fs::write(template.join("done"), "").map_err(|e| e.to_string())?;
        }
        let scratch = self.dir.join("scratch-delete");
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        // Every workspace is made first and then used once (`gw status`), in a later second
        // than its checkout: a worktree's index is "racily clean" until something refreshes
        // it, and a delete right after the create would re-read every tracked file to prove
        // nothing changed (git would too). A workspace being deleted has been worked in.
        let names: Vec<String> = (0..=s.slow_pairs).map(|k| format!("d-{k}")).collect();
        for name in &names {
            // Left over by an interrupted run.
            let _ = self.gw_ok(&home, &["delete", name, "--force", "--purge"]);
            wait_empty(&home.join(".grove/workspaces/.trash"));
            self.gw_ok(&home, &["create", name, "-b", name, "-r", "r01"])?;
            let nm = home
                .join(".grove/workspaces")
                .join(name)
                .join("r01/node_modules");
            sh(&home, &home, &format!("cp -al {} {}", q(&template), q(&nm)))?;
        }
        // A status writes refreshed stat data back only for files at least two seconds
        // (by the clock's seconds) older than itself (`git/scan/refresh.rs`): after a wait of
        // one second the last workspaces' indexes stayed racy, and each delete re-read every
        // tracked file (2,000) to prove nothing had changed.
        std::thread::sleep(Duration::from_millis(2100));
        for name in &names {
            self.gw_ok(&home, &["status", name])?;
        }
        // The load average lags a minute behind the busy threads: wait until it is in range.
        let until = Instant::now() + Duration::from_secs(120);
        while report::loadavg() < LoadRange::busy().min && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(500));
        }
        report::watch_load();
        let mut times_a = Vec::new();
        let mut times_b = Vec::new();
        let mut peak = None;
        for (k, name) in names.iter().enumerate() {
            let mut gw = self.gw_cmd(&home, &["delete", name, "--format", "json"]);
            settle();
            if k == 0 {
                peak = peak_rss(&mut gw, &home);
                if peak.is_none() {
                    time(&mut gw)?;
                }
            } else {
                times_a.push(time(&mut gw)?);
            }
            // The delete keeps the workspace in the trash, and a detached `gw trash tidy`
            // measures it; once it has, the trash is emptied (untimed) for the next pair.
            wait_measured(&home.join(".grove/workspaces/.trash"));
            self.gw_ok(&home, &["trash", "empty", "--yes"])?;
            wait_empty(&home.join(".grove/workspaces/.trash"));
            let copy = scratch.join(format!("rm-{k}"));
            sh(
                &home,
                &home,
                &format!("cp -al {} {}", q(&template), q(&copy)),
            )?;
            let mut base = Command::new("rm");
            base.arg("-rf").arg(&copy);
            settle();
            let tb = time(&mut base)?;
            if k > 0 {
                times_b.push(tb);
            }
        }
        let m = summarise(&times_a, &times_b);
        util::step(&format!(
            "delete timed under load: load average {:.2} at the end",
            report::loadavg()
        ));
        drop(load);
        Ok(Case {
            peak_rss_kib: peak,
            load: LoadRange::busy(),
            ..Case::new(
                "gw delete (workspace holding the node_modules tree), under load",
                "rm -rf of an identical tree",
                vec![Budget::Wall(0.05)],
                m,
            )
        })
    }
}

/// `gw-migrate` (a dry run: parse, duplicate-key check, the edit and its verification)
/// over a `.mcp.json` whose `mcpServers` holds `scale.migrate_keys` keys besides grove's
/// entry. Its budget is absolute, 2 s at 600,000 keys (a quadratic duplicate-key check
/// took 24 s at 100,000); it is given here as the ratio that 2 s is of this run's
/// baseline, `git hash-object` of the same file (one pass over its bytes).
fn migrate_keys_case(cache: &Path, migrate: &Path, s: Scale) -> Result<Case, String> {
    let home = cache.join(format!("migrate-keys-{}", s.migrate_keys));
    let file = home.join(".grove/workspaces/big/.mcp.json");
    if !file.exists() {
        std::fs::create_dir_all(file.parent().ok_or("path")?).map_err(|e| e.to_string())?;
        let mut text = String::from("{\n  \"mcpServers\": {\n");
        for i in 0..s.migrate_keys {
            let _ = writeln!(text, "    \"k{i}\": {{}},");
        }
        text.push_str(
            "    \"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\", \"--workspace\", \"big\"]}\n  }\n}\n",
        );
        std::fs::write(&file, text).map_err(|e| e.to_string())?;
    }
    let mut gw = Command::new(migrate);
    git_env(&mut gw, &home);
    gw.args(["--format", "json"])
        .current_dir(&home)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut base = Command::new("git");
    git_env(&mut base, &home);
    base.arg("hash-object")
        .arg(&file)
        .current_dir(&home)
        .stdout(Stdio::null());
    let m = alternate(&mut gw, &mut base, s.pairs.max(3), || Ok(()), || Ok(()))?;
    let mut peak_cmd = Command::new(migrate);
    git_env(&mut peak_cmd, &home);
    peak_cmd.args(["--format", "json"]);
    Ok(Case {
        peak_rss_kib: peak_rss(&mut peak_cmd, &home),
        ..Case::new(
            if s.migrate_keys >= 600_000 {
                "gw-migrate, .mcp.json of 600,000 keys (budget: 2 s)"
            } else {
                "gw-migrate, .mcp.json of many keys (budget: 2 s at 600,000)"
            },
            "git hash-object of the file",
            vec![Budget::Ms(2000.0)],
            m,
        )
    })
}

/// Threads that keep cores busy for as long as the value lives.
struct Load {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(threads: usize) -> Load {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let threads = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                        }
                    }
                })
            })
            .collect();
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// `gw list` runs take milliseconds: time more of them.
fn list_pairs(s: Scale) -> usize {
    s.pairs.max(5) * 2
}

/// Flushes the file systems before a timed run of file-system work, so that one run's
/// writeback (or the discards of the files the previous step removed) is not billed to the
/// next.
fn settle() {
    let _ = Command::new("sync").status();
}

/// Waits (up to a minute) until every entry of `trash` a delete kept has been measured by
/// the background `gw trash tidy`.
fn wait_measured(trash: &Path) {
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until {
        let measured = std::fs::read_dir(trash).is_ok_and(|d| {
            d.flatten().all(|e| {
                !e.path().join("trash.json").exists() || e.path().join("size.json").exists()
            })
        });
        if measured {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (up to a minute) until a background unlink has emptied `trash`.
fn wait_empty(trash: &Path) {
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until {
        let empty = std::fs::read_dir(trash)
            .map(|mut d| d.next().is_none())
            .unwrap_or(true);
        if empty {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn time(cmd: &mut Command) -> Result<Timing, String> {
    let cpu_before = children_cpu_ms();
    let start = Instant::now();
    let status = cmd.status().map_err(|e| e.to_string())?;
    let wall_ms = start.elapsed().as_secs_f64() * 1000.0;
    if !status.success() {
        return Err(format!("{cmd:?} failed with {status}"));
    }
    report::sample_load();
    Ok(Timing {
        wall_ms,
        cpu_ms: children_cpu_ms() - cpu_before,
    })
}

/// The CPU time (user + system) of every child process this process has waited for, and
/// of their own waited-for children: `getrusage(RUSAGE_CHILDREN)`, microsecond-grained.
#[allow(unsafe_code)]
fn children_cpu_ms() -> f64 {
    // SAFETY: `getrusage` only writes the struct it is given, which is zeroed and owned here.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

/// Runs `a` and `b` alternately after two warm-ups of each; returns the medians of each
/// and the median of the per-pair ratios.
fn alternate(
    a: &mut Command,
    b: &mut Command,
    pairs: usize,
    mut before_a: impl FnMut() -> Result<(), String>,
    mut before_b: impl FnMut() -> Result<(), String>,
) -> Result<Measure, String> {
    report::watch_load();
    for _ in 0..2 {
        before_a()?;
        time(a)?;
        before_b()?;
        time(b)?;
    }
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..pairs {
        before_a()?;
        ta.push(time(a)?);
        before_b()?;
        tb.push(time(b)?);
    }
    Ok(summarise(&ta, &tb))
}

fn summarise(a: &[Timing], b: &[Timing]) -> Measure {
    let of = |v: &[Timing], f: fn(&Timing) -> f64| median(&v.iter().map(f).collect::<Vec<_>>());
    let ratio = |f: fn(&Timing) -> f64| {
        median(
            &a.iter()
                .zip(b)
                .map(|(x, y)| f(x) / f(y))
                .collect::<Vec<_>>(),
        )
    };
    Measure {
        gw_ms: of(a, |t| t.wall_ms),
        base_ms: of(b, |t| t.wall_ms),
        ratio: ratio(|t| t.wall_ms),
        gw_cpu_ms: of(a, |t| t.cpu_ms),
        base_cpu_ms: of(b, |t| t.cpu_ms),
        cpu_ratio: ratio(|t| t.cpu_ms),
        seen: report::seen_load(),
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|x, y| x.partial_cmp(y).expect("times are finite"));
    if v.is_empty() {
        return f64::NAN;
    }
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Peak resident memory of one run of `cmd`, via GNU time when it is installed.
fn peak_rss(cmd: &mut Command, cwd: &Path) -> Option<u64> {
    if !Path::new("/usr/bin/time").exists() {
        return None;
    }
    let out_file = std::env::temp_dir().join(format!("gw-bench-rss-{}", std::process::id()));
    let mut t = Command::new("/usr/bin/time");
    t.arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&out_file)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => t.env(k, v),
            None => t.env_remove(k),
        };
    }
    t.current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    t.status().ok()?;
    let text = std::fs::read_to_string(&out_file).ok()?;
    let _ = std::fs::remove_file(&out_file);
    text.trim().lines().last()?.trim().parse().ok()
}
