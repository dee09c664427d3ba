//! `cargo xtask`: the project's own automation.
//!
//! - `cargo xtask ci`   formatting, clippy, every test, the release binary's size budget and
//!   a smoke run of the benchmarks (what `.ci/run` runs)
//! - `cargo xtask e2e`  the end-to-end suite against the release binary
//! - `cargo xtask chaos` kills and races against the release binary (`--quick` in `ci`)
//! - `cargo xtask demo` a guided tour on three sample repositories
//! - `cargo xtask bench` hot paths timed as ratios against git baselines
//! - `cargo xtask size` release binary size by crate, optionally against another revision
//! - `cargo xtask man`  the man pages of `gw` (clap_mangen)
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

mod bench;
mod chaos;
mod demo;
mod man;
mod size;
mod util;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str);
    let help = args.iter().skip(1).any(|a| a == "-h" || a == "--help");
    if let (Some(task), true) = (task, help)
        && let Some(usage) = task_usage(task)
    {
        println!("{usage}");
        return ExitCode::SUCCESS;
    }
    let result = match task {
        Some("ci") => ci(),
        Some("e2e") => e2e(&args[1..]),
        Some("chaos") => chaos::run(&args[1..]),
        Some("demo") => demo::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("size") => size::run(&args[1..]),
        Some("man") => man::run(&args[1..]),
        Some("-h" | "--help") | None => {
            println!("{}", USAGE);
            Ok(())
        }
        Some(other) => Err(format!("unknown task `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: cargo xtask <task>

tasks:
  ci      cargo fmt --check, clippy -D warnings, the unit and e2e tests, the release gw's
          size against size-reports/budget.toml, `bench --quick` as a smoke run, and
          `chaos --quick`
  e2e     build the release gw and run the e2e suite against it
  chaos   kill and race suites against the release gw [--kills N] [--races N] [--seed S]
          [--quick]; `--help` for more
  demo    walk a workspace through its lifecycle on three sample repositories [--keep]
  bench   time grove's hot paths against git baselines [--quick] [--json FILE] [--scaling]
  size    release binary size by crate into size-reports/ (--label L, --baseline REV)
  man     write gw's man pages into target/man (or DIR)

`cargo xtask TASK --help` says more about each.";

/// A task's own `--help`.
fn task_usage(task: &str) -> Option<&'static str> {
    Some(match task {
        "ci" => {
            "usage: cargo xtask ci\n\nWhat CI runs: cargo fmt --check, clippy -D warnings, every test, the\nrelease gw against size-reports/budget.toml, `bench --quick` as a smoke run, and
`chaos --quick`."
        }
        "e2e" => {
            "usage: cargo xtask e2e [TEST ARGS…]\n\nBuilds the release gw and gw-migrate and runs the e2e suite against them\n(arguments go to the test runner, e.g. a test name filter)."
        }
        "chaos" => chaos::USAGE,
        "demo" => demo::USAGE,
        "bench" => bench::USAGE,
        "size" => {
            "usage: cargo xtask size [--label L] [--baseline REV]\n\nRelease binary size by crate into size-reports/ (cargo-bloat's JSON shape);\n--baseline REV also builds REV in a temporary worktree and writes the difference."
        }
        "man" => man::USAGE,
        _ => return None,
    })
}

fn ci() -> Result<(), String> {
    let root = util::project_root();
    util::step("cargo fmt --check");
    util::cargo(&root, &["fmt", "--all", "--", "--check"])?;
    util::step("cargo clippy");
    util::cargo(
        &root,
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    util::step("tests");
    util::test(&root, &[])?;
    size_budget(&root)?;
    // A smoke run: every case must work; its ratios are not judged on a CI machine.
    bench::run(&["--quick".to_string()])?;
    // Issue 13's promise, in its short form: kills mid-command and racing processes.
    chaos::run(&["--quick".to_string()])
}

/// Builds the release `gw` and fails when it is larger than `gw_max_bytes` in
/// `size-reports/budget.toml`.
fn size_budget(root: &std::path::Path) -> Result<(), String> {
    util::step("release gw within its size budget");
    let budget_file = root.join("size-reports/budget.toml");
    let text = std::fs::read_to_string(&budget_file)
        .map_err(|e| format!("{}: {e}", budget_file.display()))?;
    let budget: u64 = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "gw_max_bytes")
        .and_then(|(_, v)| v.trim().replace('_', "").parse().ok())
        .ok_or_else(|| format!("{}: no gw_max_bytes = N", budget_file.display()))?;
    let gw = util::build_release(root, "gw")?;
    let size = std::fs::metadata(&gw)
        .map_err(|e| format!("{}: {e}", gw.display()))?
        .len();
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    if size > budget {
        return Err(format!(
            "release gw is {size} bytes ({:.2} MiB), over its budget of {budget} bytes ({:.2} MiB) in {}",
            mib(size),
            mib(budget),
            budget_file.display()
        ));
    }
    eprintln!(
        "gw: {size} bytes ({:.2} MiB), budget {budget} ({:.2} MiB)",
        mib(size),
        mib(budget)
    );
    Ok(())
}

fn e2e(extra: &[String]) -> Result<(), String> {
    let root = util::project_root();
    util::step("cargo build --release -p gw");
    let bin = util::build_release(&root, "gw")?;
    util::step("cargo build --release -p migrate");
    let migrate = util::build_release(&root, "gw-migrate")?;
    util::step(&format!("e2e suite against {}", bin.display()));
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    util::test_with_env(
        &root,
        &["-p", "e2e"],
        &extra,
        &[
            ("GW_BIN", bin.to_str().ok_or("non-UTF-8 path")?),
            ("GW_MIGRATE_BIN", migrate.to_str().ok_or("non-UTF-8 path")?),
        ],
    )
}
