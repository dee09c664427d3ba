//! `cargo xtask`: the project's own automation.
//!
//! - `cargo xtask ci`   formatting, clippy, every test, the release binaries' tests, the size
//!   budget, a smoke run of the benchmarks and `chaos --quick` on Linux (what `.ci/run` runs)
//! - `cargo xtask e2e`  the end-to-end suite against the release binary, with a report
//! - `cargo xtask chaos` kills and races against the release binary (`--quick` in `ci`)
//! - `cargo xtask demo` a guided tour on three sample repositories
//! - `cargo xtask bench` hot paths timed as ratios against git baselines
//! - `cargo xtask size` release binary size by crate, optionally against another revision
//! - `cargo xtask dist` the release archive, its checksums and its size report
//! - `cargo xtask assemble` one release from every target's `dist`: checked, with the
//!   Homebrew formula and one `SHA256SUMS` (what the release workflow publishes)
//! - `cargo xtask status-diff` grove's status against git's on seeded random states
//! - `cargo xtask fuzz` each fuzz target of `fuzz/` for a given time (cargo-fuzz, libFuzzer)
//! - `cargo xtask man`  the man pages of `gw` (clap_mangen)
//!
//! Every task answers `-h`/`--help` (before any `--`) with its usage and does nothing else,
//! and checks its arguments before it starts work.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

mod assemble;
mod bench;
mod chaos;
mod demo;
mod dist;
mod e2e;
mod fuzz;
mod man;
mod size;
mod status_diff;
mod util;

use std::process::ExitCode;

/// A task: its usage (printed for `--help`), a check of its arguments that does no work,
/// and the work.
struct Task {
    name: &'static str,
    usage: &'static str,
    check: fn(&[String]) -> Result<(), String>,
    run: fn(&[String]) -> Result<(), String>,
}

const TASKS: &[Task] = &[
    Task {
        name: "ci",
        usage: CI_USAGE,
        check: |a| no_args("ci", a),
        run: |_| ci(),
    },
    Task {
        name: "e2e",
        usage: e2e::USAGE,
        check: |a| e2e::parse(a).map(drop),
        run: e2e::run,
    },
    Task {
        name: "chaos",
        usage: chaos::USAGE,
        check: |a| chaos::parse(a).map(drop),
        run: chaos::run,
    },
    Task {
        name: "demo",
        usage: demo::USAGE,
        check: |a| match a {
            [] => Ok(()),
            [k] if k == "--keep" => Ok(()),
            _ => Err(format!(
                "`cargo xtask demo` takes only --keep\n\n{}",
                demo::USAGE
            )),
        },
        run: demo::run,
    },
    Task {
        name: "bench",
        usage: bench::USAGE,
        check: bench::check_args,
        run: bench::run,
    },
    Task {
        name: "size",
        usage: size::USAGE,
        check: |a| size::parse(a).map(drop),
        run: size::run,
    },
    Task {
        name: "man",
        usage: man::USAGE,
        check: |a| match a {
            [] | [_] => Ok(()),
            _ => Err(format!(
                "`cargo xtask man` takes at most a directory\n\n{}",
                man::USAGE
            )),
        },
        run: man::run,
    },
    Task {
        name: "status-diff",
        usage: status_diff::USAGE,
        check: |a| status_diff::parse(a).map(drop),
        run: status_diff::run,
    },
    Task {
        name: "fuzz",
        usage: fuzz::USAGE,
        check: |a| fuzz::parse(a).map(drop),
        run: fuzz::run,
    },
    Task {
        name: "dist",
        usage: dist::USAGE,
        check: |a| dist::parse(a).map(drop),
        run: dist::run,
    },
    Task {
        name: "assemble",
        usage: assemble::USAGE,
        check: |a| assemble::parse(a).map(drop),
        run: assemble::run,
    },
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        None => {
            println!("{USAGE}");
            Ok(())
        }
        Some((name, _)) if name == "-h" || name == "--help" => {
            println!("{USAGE}");
            Ok(())
        }
        Some((name, rest)) => match find(name) {
            Err(e) => Err(e),
            Ok(task) if asks_help(rest) => {
                println!("{}", task.usage);
                Ok(())
            }
            Ok(task) => (task.check)(rest).and_then(|()| (task.run)(rest)),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn find(name: &str) -> Result<&'static Task, String> {
    TASKS
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| format!("unknown task `{name}`\n\n{USAGE}"))
}

/// `-h` or `--help` before any `--` (what follows `--` belongs to another program).
fn asks_help(args: &[String]) -> bool {
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "-h" || a == "--help")
}

/// Whether `cargo xtask NAME ARGS…` would be accepted, without doing the task.
#[cfg(test)]
fn check(name: &str, args: &[String]) -> Result<(), String> {
    let task = find(name)?;
    if asks_help(args) {
        return Ok(());
    }
    (task.check)(args)
}

fn no_args(task: &str, args: &[String]) -> Result<(), String> {
    match args.first() {
        None => Ok(()),
        Some(a) => Err(format!(
            "`cargo xtask {task}` takes no arguments, not `{a}` (see cargo xtask {task} --help)"
        )),
    }
}

const USAGE: &str = "usage: cargo xtask <task> [--help]

tasks:
  ci      cargo fmt --check, clippy -D warnings, the unit and e2e tests, the release
          binaries' tests and size budget, `bench --quick` as a smoke run, and
          `chaos --quick` (Linux)
  e2e     build the release gw and run the e2e suite against it, with a report
  chaos   kill and race suites against the release gw [--kills N] [--races N] [--seed S]
          [--quick]; `--help` for more
  demo    walk a workspace through its lifecycle on three sample repositories [--keep]
  bench   time grove's hot paths against git baselines [--quick] [--json FILE] [--scaling]
  size    release binary size by crate, cargo-bloat's JSON, before/after tables
  dist    the release archive of gw and gw-migrate for one target [--target TRIPLE],
          SHA256SUMS and the size report
  assemble  one release from every target's dist output: checks, Homebrew formula, sums
  status-diff  grove's status against git's on seeded random worktree states
          [--seeds N] [--seed S] [--states N]
  fuzz    each fuzz target of fuzz/ for a given time with libFuzzer (cargo-fuzz)
          [--time SECONDS] [TARGET...]; `--help` for more
  man     write gw's man pages into target/man (or DIR)";

const CI_USAGE: &str = "usage: cargo xtask ci

What .ci/run and the CI workflow run, in order: cargo fmt --check; cargo clippy
--workspace --all-targets -D warnings; every test (cargo-nextest when installed, else
cargo test); the release gw within size-reports/budget.toml; the tests that need the
release binaries (cargo-bloat's JSON, the cross-check with `cargo bloat`, the dist
archive); `cargo xtask bench --quick` as a smoke run; and, on Linux, `cargo xtask
chaos --quick`.";

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
    util::step("tests of the release binaries (size reports, cargo bloat, dist)");
    util::test_ignored(&root, "xtask")?;
    // A smoke run: every case must work; its ratios are not judged on a CI machine.
    bench::run(&["--quick".to_string()])?;
    // Issue 13's promise, in its short form: kills mid-command and racing processes. The
    // suites judge a trial by the processes it left in /proc, which only Linux has.
    if cfg!(target_os = "linux") {
        chaos::run(&["--quick".to_string()])
    } else {
        eprintln!("chaos --quick: not run, its suites need /proc (Linux)");
        Ok(())
    }
}

/// Builds the release `gw` and fails when it is larger than its budget in
/// `size-reports/budget.toml`.
fn size_budget(root: &std::path::Path) -> Result<(), String> {
    util::step("release gw within its size budget");
    let budgets = size::budgets(root)?;
    let gw = util::build_release(root, "gw")?;
    let size = std::fs::metadata(&gw)
        .map_err(|e| format!("{}: {e}", gw.display()))?
        .len();
    let max = budgets["gw"];
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    if size > max {
        return Err(format!(
            "release gw is {size} bytes ({:.2} MiB), over its budget of {max} bytes ({:.2} MiB) in size-reports/budget.toml",
            mib(size),
            mib(max),
        ));
    }
    eprintln!(
        "gw: {size} bytes ({:.2} MiB), budget {max} ({:.2} MiB)",
        mib(size),
        mib(max)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::words;

    #[test]
    fn every_task_answers_help_without_running() {
        for task in TASKS {
            for flag in ["--help", "-h"] {
                assert!(asks_help(&words(flag)), "{} {flag}", task.name);
            }
            assert!(
                task.usage
                    .starts_with(&format!("usage: cargo xtask {}", task.name)),
                "{}",
                task.usage
            );
            assert!(
                USAGE.contains(&format!("\n  {} ", task.name)),
                "`{}` is missing from the task list",
                task.name
            );
        }
        // After `--` the arguments are the test runner's.
        assert!(!asks_help(&words("-- --help")));
        assert!(check("bench", &words("--help")).is_ok());
        assert!(check("bench", &words("--quick --json out.json")).is_ok());
        assert!(check("bench", &words("--quikc")).is_err());
        assert!(check("bench", &words("--json")).is_err());
        assert!(check("ci", &words("--fast")).is_err());
        assert!(check("nope", &[]).is_err());
    }

    /// The shell words of every `cargo xtask …` in `text`, up to the end of its command.
    fn xtask_invocations(text: &str) -> Vec<Vec<String>> {
        let mut found = Vec::new();
        for line in text.lines() {
            let mut rest = line;
            while let Some(at) = rest.find("cargo xtask ") {
                rest = &rest[at + "cargo xtask ".len()..];
                let mut words = Vec::new();
                for w in rest.split_whitespace() {
                    if w.starts_with('#')
                        || w.starts_with('>')
                        || w.starts_with("2>")
                        || ["|", "||", "&&", ";", ")"].contains(&w)
                    {
                        break;
                    }
                    let end = w.ends_with(';') || w.ends_with(')');
                    let w = w.trim_end_matches([';', ')']);
                    words.push(w.trim_matches(['"', '\'']).to_string());
                    if end {
                        break;
                    }
                }
                found.push(words);
            }
        }
        found
    }

    /// The `run:` steps of a workflow: a `run:` line and, for a block (`run: |`), the
    /// lines indented deeper than it.
    fn run_steps(text: &str) -> String {
        let mut runs = String::new();
        let mut block: Option<usize> = None;
        for line in text.lines() {
            let indent = line.len() - line.trim_start().len();
            if let Some(i) = block {
                if line.trim().is_empty() || indent > i {
                    runs += line;
                    runs.push('\n');
                    continue;
                }
                block = None;
            }
            let t = line.trim_start().trim_start_matches("- ");
            if let Some(cmd) = t.strip_prefix("run:") {
                let cmd = cmd.trim();
                if cmd == "|" || cmd == ">" || cmd.starts_with("|-") || cmd.starts_with(">-") {
                    block = Some(indent);
                } else {
                    runs += cmd;
                    runs.push('\n');
                }
            }
        }
        runs
    }

    /// The workflows' `run:` lines call only tasks that exist, with arguments they accept
    /// (a variable the workflow sets is given each value it can take), and ci.yml and
    /// release.yml each run the tasks they are for.
    #[test]
    fn workflows_run_only_xtask_commands_that_parse() {
        let root = util::project_root();
        let release = std::fs::read_to_string(root.join(".github/workflows/release.yml")).unwrap();
        // The release's build matrix is exactly the targets a release has.
        let targets: Vec<&str> = release
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- target: "))
            .collect();
        assert_eq!(targets, assemble::RELEASE_TARGETS, "release.yml's matrix");
        for (file, needed) in [
            ("ci.yml", &["ci", "e2e", "size"][..]),
            ("release.yml", &["dist", "assemble"]),
        ] {
            let path = root.join(".github/workflows").join(file);
            let runs = run_steps(&std::fs::read_to_string(&path).unwrap());
            let calls = xtask_invocations(&runs);
            let tasks: Vec<&str> = calls
                .iter()
                .filter_map(|c| c.first().map(String::as_str))
                .collect();
            for task in needed {
                assert!(
                    tasks.contains(task),
                    "{file} runs no `cargo xtask {task}`: {tasks:?}"
                );
            }
            for call in &calls {
                let (name, args) = call.split_first().expect("a task after `cargo xtask`");
                let values: Vec<&str> = if args.iter().any(|a| a == "$TARGET") {
                    targets.clone()
                } else {
                    vec![""]
                };
                for target in values {
                    let args: Vec<String> = args
                        .iter()
                        .map(|a| match a.as_str() {
                            "$TARGET" => target.to_string(),
                            "$TAG" => "v1.2.3".to_string(),
                            _ => a.clone(),
                        })
                        .collect();
                    check(name, &args).unwrap_or_else(|e| {
                        panic!("{file}: `cargo xtask {}`: {e}", call.join(" "))
                    });
                }
            }
            // Scripts the workflow runs exist.
            for w in runs.split_whitespace() {
                let w = w.trim_matches(['"', '\'']);
                if w.starts_with(".ci/") || w.starts_with("./") {
                    assert!(
                        root.join(w).exists(),
                        "{file} runs {w}, which does not exist"
                    );
                }
            }
        }
    }

    #[test]
    fn invocations_are_split_at_shell_operators() {
        let calls = xtask_invocations(
            "cargo xtask size --baseline \"$base\" --out target/size > target/size.md || status=$?\n\
             x=$(cargo xtask e2e --report dir); cargo xtask ci # all\n",
        );
        assert_eq!(
            calls,
            [
                words("size --baseline $base --out target/size"),
                words("e2e --report dir"),
                words("ci"),
            ]
        );
    }
}
