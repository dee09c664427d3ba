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

fn have_nextest() -> bool {
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
