//! `cargo xtask fuzz`: the fuzz targets of `fuzz/` (issue 26), each for a given time, with
//! libFuzzer through cargo-fuzz.
//!
//! cargo-fuzz comes from crates.io, installed into `target/ci-tools` (as `.ci/run` installs
//! cargo-bloat) when that copy is missing or another version. It builds the targets (address
//! sanitizer, coverage instrumentation, debug assertions) with the nightly toolchain when
//! rustup has one, else with the current toolchain and `RUSTC_BOOTSTRAP=1`: the flags it
//! passes are unstable. Each target's binary then runs directly, so that its output, its
//! inputs and its findings go where this task says: new inputs into a work corpus,
//! `target/fuzz/corpus/TARGET` (the committed seeds in `fuzz/corpus/TARGET` are read, never
//! written), failing inputs into `target/fuzz/artifacts/TARGET/`, libFuzzer's output into
//! `target/fuzz/logs/TARGET.log`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::util::{self, thousands};

pub const USAGE: &str =
    "usage: cargo xtask fuzz [--time SECONDS] [--timeout SECONDS] [--toolchain NAME] [TARGET...]
       cargo xtask fuzz --replay FILE TARGET

Runs each fuzz target of fuzz/ (or each TARGET named), one after another, for SECONDS with
libFuzzer (cargo-fuzz), and prints per target the seconds it ran, the inputs it executed
and the new inputs it kept. A crash (a panic: a reader refusing what it wrote, two readers
disagreeing, a round trip changing a value), an input running longer than --timeout (a
hang) or one taking more than 2 GiB fails the task; it names the target, the failing
input's path and the command that replays it. Every target runs even when one fails.

  --time SECONDS     how long each target runs (default 60)
  --timeout SECONDS  an input running longer is a hang (default 10)
  --toolchain NAME   build with rustup's toolchain NAME (RUSTC_BOOTSTRAP=1 unless it is a
                     nightly); default: `nightly` when rustup has it, else the current
                     toolchain with RUSTC_BOOTSTRAP=1
  --replay FILE      run TARGET once on FILE (a failing input) and show what it printed

The targets are the [[bin]]s of fuzz/Cargo.toml (fuzz/README.md says what each checks).
cargo-fuzz 0.13.2 is installed into target/ci-tools when missing. New inputs are kept in
target/fuzz/corpus/TARGET, never in the committed seeds (fuzz/corpus/TARGET); failing
inputs in target/fuzz/artifacts/TARGET/; libFuzzer's output in target/fuzz/logs/TARGET.log.";

/// The cargo-fuzz this task installs and runs.
const CARGO_FUZZ: &str = "0.13.2";

#[derive(Debug, PartialEq, Eq)]
pub struct Args {
    pub time: u64,
    pub timeout: u64,
    pub toolchain: Option<String>,
    pub replay: Option<PathBuf>,
    /// The targets to run, in the order of fuzz/Cargo.toml when none was named.
    pub targets: Vec<String>,
}

pub fn parse(args: &[String]) -> Result<Args, String> {
    parse_for(args, &targets(&util::project_root())?)
}

fn parse_for(args: &[String], known: &[String]) -> Result<Args, String> {
    let mut a = Args {
        time: 60,
        timeout: 10,
        toolchain: None,
        replay: None,
        targets: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| util::value(&mut it, name, USAGE);
        let seconds = |name: &str, v: String| match v.parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{name}: `{v}` is not a number of seconds\n\n{USAGE}"
            )),
        };
        match arg.as_str() {
            "--time" => a.time = seconds("--time", value("--time")?)?,
            "--timeout" => a.timeout = seconds("--timeout", value("--timeout")?)?,
            "--toolchain" => a.toolchain = Some(value("--toolchain")?),
            "--replay" => a.replay = Some(PathBuf::from(value("--replay")?)),
            t if t.starts_with('-') => return Err(format!("unknown argument `{t}`\n\n{USAGE}")),
            t if known.iter().any(|k| k == t) => {
                if !a.targets.iter().any(|x| x == t) {
                    a.targets.push(t.to_string());
                }
            }
            t => {
                return Err(format!(
                    "`{t}` is not a fuzz target; they are: {}",
                    known.join(", ")
                ));
            }
        }
    }
    if a.replay.is_some() && a.targets.len() != 1 {
        return Err(format!("--replay needs exactly one TARGET\n\n{USAGE}"));
    }
    if a.targets.is_empty() {
        a.targets = known.to_vec();
    }
    Ok(a)
}

/// The fuzz targets: the `[[bin]]` names of `fuzz/Cargo.toml`, in its order.
pub fn targets(root: &Path) -> Result<Vec<String>, String> {
    let manifest = root.join("fuzz/Cargo.toml");
    let text =
        std::fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(v) = line.strip_prefix("name") {
            let v = v
                .trim_start()
                .trim_start_matches('=')
                .trim()
                .trim_matches('"');
            names.push(v.to_string());
        }
    }
    if names.is_empty() {
        return Err(format!("{} names no [[bin]]", manifest.display()));
    }
    Ok(names)
}

/// Where a run keeps what it makes, all under cargo's target directory.
struct Dirs {
    fuzz: PathBuf,
    build: PathBuf,
    work: PathBuf,
}

impl Dirs {
    fn new(root: &Path) -> Result<Dirs, String> {
        let work = util::target_dir(root)?.join("fuzz");
        Ok(Dirs {
            fuzz: root.join("fuzz"),
            build: work.join("build"),
            work,
        })
    }
    fn seeds(&self, target: &str) -> PathBuf {
        self.fuzz.join("corpus").join(target)
    }
    fn corpus(&self, target: &str) -> PathBuf {
        self.work.join("corpus").join(target)
    }
    fn artifacts(&self, target: &str) -> PathBuf {
        self.work.join("artifacts").join(target)
    }
    fn log(&self, target: &str) -> PathBuf {
        self.work.join("logs").join(format!("{target}.log"))
    }
}

/// How the targets are built: which rustup toolchain (none: the current one), and whether
/// the unstable flags need `RUSTC_BOOTSTRAP=1`.
#[derive(Debug, PartialEq, Eq)]
struct Toolchain {
    rustup: Option<String>,
    bootstrap: bool,
}

impl Toolchain {
    fn choose(asked: Option<&str>) -> Toolchain {
        let name = asked.map(str::to_string).or_else(|| {
            let nightly = Command::new("rustup")
                .args(["run", "nightly", "rustc", "--version"])
                .env("RUSTUP_AUTO_INSTALL", "0")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            nightly.then(|| "nightly".to_string())
        });
        let bootstrap = !name.as_deref().is_some_and(|n| n.starts_with("nightly"));
        Toolchain {
            rustup: name,
            bootstrap,
        }
    }

    fn describe(&self) -> String {
        match (&self.rustup, self.bootstrap) {
            (Some(n), false) => format!("rustup toolchain {n}"),
            (Some(n), true) => format!("rustup toolchain {n} with RUSTC_BOOTSTRAP=1"),
            (None, _) => "the current toolchain with RUSTC_BOOTSTRAP=1".to_string(),
        }
    }

    fn apply(&self, cmd: &mut Command) {
        // cargo-fuzz runs `cargo` and `rustc` from PATH (rustup's proxies): they follow
        // RUSTUP_TOOLCHAIN. The ones cargo put in xtask's environment would not.
        cmd.env_remove("CARGO").env_remove("RUSTC");
        cmd.env("RUSTUP_AUTO_INSTALL", "0");
        if let Some(n) = &self.rustup {
            cmd.env("RUSTUP_TOOLCHAIN", n);
        }
        if self.bootstrap {
            cmd.env("RUSTC_BOOTSTRAP", "1");
        }
    }
}

/// cargo-fuzz from `target/ci-tools`, installed there from crates.io first when missing.
fn cargo_fuzz(root: &Path) -> Result<PathBuf, String> {
    let tools = util::target_dir(root)?.join("ci-tools");
    let bin = tools.join("bin/cargo-fuzz");
    let version = Command::new(&bin)
        .args(["fuzz", "--version"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if version != format!("cargo-fuzz {CARGO_FUZZ}") {
        util::step(&format!("cargo-fuzz {CARGO_FUZZ} into target/ci-tools"));
        let root_arg = tools.to_string_lossy().into_owned();
        let krate = format!("cargo-fuzz@{CARGO_FUZZ}");
        util::cargo(
            root,
            &[
                "install", "--locked", "--quiet", "--root", &root_arg, &krate,
            ],
        )?;
    }
    Ok(bin)
}

/// Builds every target and returns the directory holding their binaries.
fn build(root: &Path, dirs: &Dirs, toolchain: &Toolchain) -> Result<PathBuf, String> {
    let cargo_fuzz = cargo_fuzz(root)?;
    util::step(&format!(
        "build the fuzz targets ({}; address sanitizer, debug assertions)",
        toolchain.describe()
    ));
    let mut cmd = Command::new(&cargo_fuzz);
    cmd.args(["fuzz", "build", "--debug-assertions", "--fuzz-dir"])
        .arg(&dirs.fuzz)
        .arg("--target-dir")
        .arg(&dirs.build)
        .current_dir(&dirs.fuzz);
    toolchain.apply(&mut cmd);
    let status = cmd.status().map_err(|e| format!("cargo-fuzz: {e}"))?;
    if !status.success() {
        return Err("cargo fuzz build failed".to_string());
    }
    // cargo-fuzz builds for the host: `TARGET_DIR/HOST/release/NAME`.
    let mut rustc = Command::new("rustc");
    rustc.arg("-vV");
    toolchain.apply(&mut rustc);
    let out = rustc.output().map_err(|e| format!("rustc -vV: {e}"))?;
    let host = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or("rustc -vV names no host")?;
    Ok(dirs.build.join(host).join("release"))
}

/// A target's binary, set to run as cargo-fuzz runs it.
fn target_cmd(bins: &Path, target: &str) -> Command {
    let mut cmd = Command::new(bins.join(target));
    let mut asan = std::env::var("ASAN_OPTIONS").unwrap_or_default();
    if !asan.is_empty() {
        asan.push(':');
    }
    asan.push_str("detect_odr_violation=0");
    cmd.env("ASAN_OPTIONS", asan);
    cmd
}

/// What one target's run did.
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    seconds: f64,
    executions: Option<u64>,
    new_inputs: usize,
    /// Why it failed (`crash`, `timeout`, `oom`, …) and the inputs it left, when it did.
    failure: Option<(String, Vec<PathBuf>)>,
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// libFuzzer's count of executed inputs, from its final statistics.
fn executions(log: &str) -> Option<u64> {
    log.lines()
        .rev()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|v| v.trim().parse().ok())
        .or_else(|| {
            // "Done 123 runs in 5 second(s)"
            log.lines().rev().find_map(|l| {
                l.strip_prefix("Done ")
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(|n| n.parse().ok())
            })
        })
}

/// What kind of failure the inputs libFuzzer left name (`crash-…`, `timeout-…`, `oom-…`,
/// `leak-…`), else what its log says.
fn failure_kind(left: &[PathBuf], log: &str) -> String {
    for p in left {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        if let Some((kind, _)) = name.split_once('-')
            && kind != "slow"
        {
            return kind.to_string();
        }
    }
    if log.contains("ERROR: libFuzzer: timeout") {
        "timeout".into()
    } else if log.contains("out-of-memory") {
        "oom".into()
    } else {
        "crash".into()
    }
}

fn run_target(bins: &Path, dirs: &Dirs, target: &str, a: &Args) -> Result<Outcome, String> {
    let (corpus, artifacts, log) = (
        dirs.corpus(target),
        dirs.artifacts(target),
        dirs.log(target),
    );
    for d in [&corpus, &artifacts, &dirs.work.join("logs")] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let seeds = dirs.seeds(target);
    if files(&seeds).is_empty() {
        return Err(format!("{}: no seed inputs", seeds.display()));
    }
    let (corpus_before, artifacts_before) = (files(&corpus).len(), files(&artifacts));
    util::step(&format!(
        "fuzz {target} for {} s (log: {})",
        a.time,
        log.display()
    ));
    let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut prefix = artifacts.into_os_string();
    prefix.push("/");
    let mut cmd = target_cmd(bins, target);
    // The first directory receives new inputs; the seeds are only read.
    cmd.arg(&corpus)
        .arg(&seeds)
        .arg(format!("-max_total_time={}", a.time))
        .arg(format!("-timeout={}", a.timeout))
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .arg({
            let mut p = std::ffi::OsString::from("-artifact_prefix=");
            p.push(&prefix);
            p
        })
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    let started = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("{}: {e}", bins.join(target).display()))?;
    let seconds = started.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
    let left: Vec<PathBuf> = files(&dirs.artifacts(target))
        .into_iter()
        .filter(|p| !artifacts_before.contains(p))
        .collect();
    let failure = (!status.success()).then(|| (failure_kind(&left, &text), left));
    Ok(Outcome {
        seconds,
        executions: executions(&text),
        new_inputs: files(&corpus).len().saturating_sub(corpus_before),
        failure,
    })
}

/// The lines of a failed run's log that say what happened: from the first report of a
/// panic, a sanitizer or libFuzzer's own error, at most 40.
fn report(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("panicked at") || l.starts_with("==") && l.contains("ERROR:"))
        .unwrap_or(lines.len().saturating_sub(40));
    lines[start..lines.len().min(start + 40)].join("\n")
}

pub fn run(args: &[String]) -> Result<(), String> {
    let a = parse(args)?;
    let root = util::project_root();
    let dirs = Dirs::new(&root)?;
    let toolchain = Toolchain::choose(a.toolchain.as_deref());
    let bins = build(&root, &dirs, &toolchain)?;
    if let Some(file) = &a.replay {
        return replay(&bins, &a.targets[0], file, a.timeout);
    }
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for target in &a.targets {
        let o = run_target(&bins, &dirs, target, &a)?;
        if let Some((kind, inputs)) = &o.failure {
            let log = dirs.log(target);
            let text =
                String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
            eprintln!("\nfuzz: {target} FAILED ({kind}) after {:.0} s", o.seconds);
            eprintln!("{}", report(&text));
            eprintln!("  log: {}", log.display());
            if inputs.is_empty() {
                eprintln!("  libFuzzer left no input (see the log)");
            }
            for input in inputs {
                eprintln!("  input: {}", input.display());
                eprintln!(
                    "  replay: cargo xtask fuzz --replay {} {target}{}",
                    input.display(),
                    a.toolchain
                        .as_deref()
                        .map(|t| format!(" --toolchain {t}"))
                        .unwrap_or_default()
                );
            }
            failed.push(format!("{target} ({kind})"));
        }
        rows.push((target.clone(), o));
    }
    println!("\n| target | seconds | executions | new inputs | result |");
    println!("|---|---:|---:|---:|---|");
    for (t, o) in &rows {
        println!(
            "| {t} | {:.0} | {} | {} | {} |",
            o.seconds,
            o.executions.map_or("?".into(), thousands),
            o.new_inputs,
            o.failure
                .as_ref()
                .map_or("ok".to_string(), |(k, _)| k.clone())
        );
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzzing failed: {}", failed.join(", ")))
    }
}

fn replay(bins: &Path, target: &str, file: &Path, timeout: u64) -> Result<(), String> {
    util::step(&format!("replay {} on {target}", file.display()));
    let status = target_cmd(bins, target)
        .arg(format!("-timeout={timeout}"))
        .arg("-rss_limit_mb=2048")
        .arg(file)
        .status()
        .map_err(|e| format!("{}: {e}", bins.join(target).display()))?;
    if status.success() {
        println!("{target} runs {} without failing", file.display());
        Ok(())
    } else {
        Err(format!("{target} fails on {} ({status})", file.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::words;

    fn known() -> Vec<String> {
        words("state_json config_toml plan")
    }

    #[test]
    fn arguments_are_read_and_checked() {
        let a = parse_for(&words("--time 600 plan state_json plan"), &known()).unwrap();
        assert_eq!(
            a,
            Args {
                time: 600,
                timeout: 10,
                toolchain: None,
                replay: None,
                targets: words("plan state_json"),
            }
        );
        let a = parse_for(&[], &known()).unwrap();
        assert_eq!((a.time, a.targets), (60, known()));
        let a = parse_for(
            &words("--replay x/crash-1 --timeout 3 --toolchain stable plan"),
            &known(),
        )
        .unwrap();
        assert_eq!(a.replay, Some(PathBuf::from("x/crash-1")));
        assert_eq!((a.timeout, a.toolchain.as_deref()), (3, Some("stable")));
        for bad in [
            "--time",
            "--time 0",
            "--time x",
            "--timeout -1",
            "nope",
            "--fast",
            "--replay f",
            "--replay f plan state_json",
        ] {
            assert!(parse_for(&words(bad), &known()).is_err(), "{bad}");
        }
    }

    /// Every target of fuzz/Cargo.toml has its source, committed seeds and a paragraph in
    /// fuzz/README.md.
    #[test]
    fn every_target_has_its_source_seeds_and_description() {
        let root = util::project_root();
        let targets = targets(&root).unwrap();
        assert!(targets.len() >= 8, "{targets:?}");
        let readme = std::fs::read_to_string(root.join("fuzz/README.md")).unwrap();
        for t in &targets {
            assert!(
                root.join("fuzz/fuzz_targets")
                    .join(format!("{t}.rs"))
                    .is_file(),
                "{t}"
            );
            assert!(!files(&root.join("fuzz/corpus").join(t)).is_empty(), "{t}");
            assert!(
                readme.contains(&format!("`{t}`")),
                "fuzz/README.md names no `{t}`"
            );
        }
    }

    #[test]
    fn the_toolchain_is_nightly_or_bootstrapped() {
        let t = Toolchain::choose(Some("stable"));
        assert_eq!(
            t.describe(),
            "rustup toolchain stable with RUSTC_BOOTSTRAP=1"
        );
        let t = Toolchain::choose(Some("nightly-2026-05-19"));
        assert!(!t.bootstrap, "{t:?}");
        assert_eq!(t.describe(), "rustup toolchain nightly-2026-05-19");
        let none = Toolchain {
            rustup: None,
            bootstrap: true,
        };
        assert_eq!(
            none.describe(),
            "the current toolchain with RUSTC_BOOTSTRAP=1"
        );
    }

    #[test]
    fn a_run_is_read_from_its_log_and_inputs() {
        let log = "#2\tINITED cov: 10\nDone 1234 runs in 5 second(s)\n\
                   stat::number_of_executed_units: 1240\nstat::peak_rss_mb: 40\n";
        assert_eq!(executions(log), Some(1240));
        assert_eq!(executions("Done 77 runs in 1 second(s)\n"), Some(77));
        assert_eq!(executions("nothing"), None);
        let left = [PathBuf::from("a/slow-unit-1"), PathBuf::from("a/timeout-2")];
        assert_eq!(failure_kind(&left, ""), "timeout");
        assert_eq!(failure_kind(&[PathBuf::from("a/crash-ff")], ""), "crash");
        assert_eq!(
            failure_kind(&[], "==1== ERROR: libFuzzer: timeout after 11 seconds"),
            "timeout"
        );
        let crash = "INFO: x\n".repeat(50)
            + "thread '<unnamed>' panicked at fuzz_targets/plan.rs:3:5:\nboom\n==1== ERROR: libFuzzer: deadly signal\n";
        let r = report(&crash);
        assert!(r.starts_with("thread '<unnamed>' panicked at"), "{r}");
        assert!(r.contains("deadly signal"), "{r}");
    }
}
