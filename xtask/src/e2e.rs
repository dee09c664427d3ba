//! `cargo xtask e2e`: the end-to-end suite against the release binaries, and a report of
//! the run that CI keeps as an artifact.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use serde_json::json;

use crate::util;

pub const USAGE: &str = "usage: cargo xtask e2e [--report DIR] [RUNNER ARGS…]

Builds the release gw and gw-migrate and runs the e2e crate's tests against them
(GW_BIN, GW_MIGRATE_BIN) with cargo-nextest when it is installed, else cargo test. Other
arguments go to the test runner: a filter, or `-- ARGS` for the test binaries.

  --report DIR  where the report of the run goes (default: target/e2e-report):
                e2e.log       the runner's whole output
                junit.xml     every test's outcome (with cargo-nextest)
                summary.json  commit, binaries, runner, exit status";

#[derive(Debug, Default)]
pub struct Options {
    report: Option<PathBuf>,
    /// Passed to the test runner.
    extra: Vec<String>,
}

/// Checks the arguments; does no work.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--report" => {
                let dir = it
                    .next()
                    .ok_or_else(|| format!("--report needs a directory\n\n{USAGE}"))?;
                opts.report = Some(PathBuf::from(dir));
            }
            "--" => {
                opts.extra.push(a.clone());
                opts.extra.extend(it.by_ref().cloned());
            }
            _ => opts.extra.push(a.clone()),
        }
    }
    Ok(opts)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let root = util::project_root();
    let target = util::target_dir(&root)?;
    util::step("cargo build --release -p gw");
    let bin = util::build_release(&root, "gw")?;
    util::step("cargo build --release -p migrate");
    let migrate = util::build_release(&root, "gw-migrate")?;
    let report = opts.report.unwrap_or_else(|| target.join("e2e-report"));
    std::fs::create_dir_all(&report).map_err(|e| format!("{}: {e}", report.display()))?;
    for stale in ["e2e.log", "junit.xml", "summary.json"] {
        let _ = std::fs::remove_file(report.join(stale));
    }

    let nextest = util::have_nextest();
    let profile = "e2e-report";
    let config = root.join("xtask/nextest-e2e.toml");
    let tool_config = format!("xtask:{}", config.display());
    let mut runner: Vec<&str> = if nextest {
        vec![
            "nextest",
            "run",
            "--locked",
            "--no-fail-fast",
            "-p",
            "e2e",
            "--tool-config-file",
            &tool_config,
            "--profile",
            profile,
        ]
    } else {
        vec!["test", "--locked", "--no-fail-fast", "-p", "e2e"]
    };
    runner.extend(opts.extra.iter().map(String::as_str));
    util::step(&format!("e2e suite against {}", bin.display()));
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(&runner)
        .current_dir(&root)
        .env("GW_BIN", &bin)
        .env("GW_MIGRATE_BIN", &migrate);
    let started = Instant::now();
    let status = util::run_teed(&mut cmd, &report.join("e2e.log"))?;
    let seconds = started.elapsed().as_secs_f64();

    // A run that failed before any test ran leaves no JUnit file; that failure is the news.
    let junit = if nextest {
        let junit = target.join("nextest").join(profile).join("junit.xml");
        std::fs::copy(&junit, report.join("junit.xml"))
            .map(drop)
            .map_err(|e| format!("{}: {e}", junit.display()))
    } else {
        Ok(())
    };
    let version = Command::new(&bin)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let summary = json!({
        "commit": util::git_head(&root),
        "gw": bin,
        "gw_version": version,
        "gw_migrate": migrate,
        "runner": if nextest { "cargo-nextest" } else { "cargo test" },
        "command": format!("cargo {}", runner.join(" ")),
        "success": status.success(),
        "exit_code": status.code(),
        "seconds": (seconds * 10.0).round() / 10.0,
    });
    let path = report.join("summary.json");
    let text = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("e2e report: {}", report.display());
    if status.success() {
        junit
    } else {
        Err(format!(
            "the e2e suite failed (`cargo {}`); its report is in {}",
            runner.join(" "),
            report.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::words;

    #[test]
    fn arguments() {
        let o = parse(&words(
            "--report out lifecycle::create -- --nocapture --report x",
        ))
        .unwrap();
        assert_eq!(o.report, Some(PathBuf::from("out")));
        assert_eq!(
            o.extra,
            words("lifecycle::create -- --nocapture --report x")
        );
        assert!(parse(&words("--report")).is_err());
    }
}
