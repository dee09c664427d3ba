//! `cargo xtask`: the project's own automation.
//!
//! - `cargo xtask ci`   formatting, clippy and every test (what `.ci/run` runs)
//! - `cargo xtask e2e`  the end-to-end suite against the release binary
//! - `cargo xtask demo` a guided tour on three sample repositories
//! - `cargo xtask bench` hot paths timed as ratios against git baselines
//! - `cargo xtask size` release binary size by crate, optionally against another revision
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

mod bench;
mod demo;
mod size;
mod util;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("e2e") => e2e(&args[1..]),
        Some("demo") => demo::run(),
        Some("bench") => bench::run(&args[1..]),
        Some("size") => size::run(&args[1..]),
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
  ci      cargo fmt --check, clippy -D warnings, the unit and e2e tests
  e2e     build the release gw and run the e2e suite against it
  demo    walk a workspace through its lifecycle on three sample repositories
  bench   time grove's hot paths against git baselines [--quick] [--json FILE] [--scaling]
  size    release binary size by crate into size-reports/ (--label L, --baseline REV)";

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
