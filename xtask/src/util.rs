//! Running cargo and finding what it built.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

pub fn step(what: &str) {
    eprintln!("\n==> {what}");
}

fn cargo_bin() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

pub fn cargo(root: &Path, args: &[&str]) -> Result<(), String> {
    let status = Command::new(cargo_bin())
        .args(args)
        .current_dir(root)
        .status()
        .map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed", args.join(" ")))
    }
}

pub fn have_nextest() -> bool {
    Command::new(cargo_bin())
        .args(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Runs the test suite: cargo-nextest when installed, else `cargo test`.
pub fn test(root: &Path, selection: &[&str]) -> Result<(), String> {
    test_with_env(root, selection, &[], &[])
}

pub fn test_with_env(
    root: &Path,
    selection: &[&str],
    extra: &[&str],
    env: &[(&str, &str)],
) -> Result<(), String> {
    let mut args: Vec<&str> = Vec::new();
    if have_nextest() {
        args.extend(["nextest", "run", "--locked", "--no-fail-fast"]);
    } else {
        args.extend(["test", "--locked", "--no-fail-fast"]);
    }
    if selection.is_empty() {
        args.push("--workspace");
    } else {
        args.extend(selection);
    }
    args.extend(extra);
    let mut cmd = Command::new(cargo_bin());
    cmd.args(&args).current_dir(root);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd.status().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed", args.join(" ")))
    }
}

/// Runs only `package`'s ignored tests: those that build the release binaries, which
/// `cargo test` leaves out and `cargo xtask ci` runs after the size budget.
pub fn test_ignored(root: &Path, package: &str) -> Result<(), String> {
    let args: &[&str] = if have_nextest() {
        &[
            "nextest",
            "run",
            "--locked",
            "--no-fail-fast",
            "-p",
            package,
            "--run-ignored",
            "only",
        ]
    } else {
        &[
            "test",
            "--locked",
            "--no-fail-fast",
            "-p",
            package,
            "--",
            "--ignored",
        ]
    };
    cargo(root, args)
}

/// Runs `cmd` with its stdout and stderr passed through and also written, interleaved as
/// they arrive, to `log`.
pub fn run_teed(cmd: &mut Command, log: &Path) -> Result<std::process::ExitStatus, String> {
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};
    let file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let file = Arc::new(Mutex::new(file));
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{:?}: {e}", cmd.get_program()))?;
    fn copy(
        mut from: impl Read + Send + 'static,
        mut to: impl Write + Send + 'static,
        file: Arc<Mutex<std::fs::File>>,
    ) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let _ = to.write_all(&buf[..n]);
                let _ = to.flush();
                if let Ok(mut f) = file.lock() {
                    let _ = f.write_all(&buf[..n]);
                }
            }
        })
    }
    let out = copy(
        child.stdout.take().expect("piped"),
        std::io::stdout(),
        file.clone(),
    );
    let err = copy(child.stderr.take().expect("piped"), std::io::stderr(), file);
    let status = child.wait().map_err(|e| e.to_string())?;
    let _ = out.join();
    let _ = err.join();
    Ok(status)
}

/// The package that builds binary `bin` (`gw` → `gw`, `gw-migrate` → `migrate`).
pub fn package_of(bin: &str) -> &str {
    match bin {
        "gw-migrate" => "migrate",
        other => other,
    }
}

/// Builds `bin` with the release profile and returns the executable's path. The package is
/// named (`-p`), so features resolve exactly as `cargo install --path <package>` does.
pub fn build_release(root: &Path, bin: &str) -> Result<PathBuf, String> {
    let out = Command::new(cargo_bin())
        .args([
            "build",
            "--release",
            "--locked",
            "--message-format=json-render-diagnostics",
            "-p",
            package_of(bin),
            "--bin",
            bin,
        ])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("cargo build --release --bin {bin} failed"));
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] == "compiler-artifact"
            && msg["target"]["name"] == bin
            && let Some(exe) = msg["executable"].as_str()
        {
            return Ok(PathBuf::from(exe));
        }
    }
    Err(format!("cargo reported no executable for {bin}"))
}

/// cargo's target directory for this workspace.
pub fn target_dir(root: &Path) -> Result<PathBuf, String> {
    let meta = cargo_metadata::MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .map_err(|e| e.to_string())?;
    Ok(meta.target_directory.into_std_path_buf())
}

/// The commit checked out at `root` (with `-dirty` when the work tree has changes).
pub fn git_head(root: &Path) -> String {
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let head = run(&["rev-parse", "HEAD"]);
    if run(&["status", "--porcelain", "--untracked-files=no"]).is_empty() {
        head
    } else {
        format!("{head}-dirty")
    }
}

/// Runs `cmd` with its output captured; a failure is an error naming `what`, with the
/// command's output.
pub fn run_captured(cmd: &mut std::process::Command, what: &str) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The value that follows option `name` in a task's arguments, or an error with the task's
/// `usage`.
pub fn value(
    it: &mut std::slice::Iter<'_, String>,
    name: &str,
    usage: &str,
) -> Result<String, String> {
    it.next()
        .cloned()
        .ok_or_else(|| format!("{name} needs a value\n\n{usage}"))
}

/// `n` with its thousands separated by commas: 1,234,567.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Test arguments from a line of words.
#[cfg(test)]
pub fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}
