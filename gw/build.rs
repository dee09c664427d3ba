//! What `gw --version` says beyond the version: the commit and its date when `gw` is built
//! from a git checkout of this repository (`gw 0.1.0 (0123abcde 2026-12-03)`, as
//! `cargo --version` says it), the commit alone when it is built from a packaged crate
//! (cargo records it in `.cargo_vcs_info.json`), and nothing when neither is known (a
//! source tree without git, or one that sits inside somebody else's repository).
//!
//! The date is the commit's, not the clock's: the same commit builds the same binary, which
//! is what makes `cargo xtask dist`'s archives reproducible. It is set as
//! `GW_VERSION_DETAIL` (` (0123abcde 2026-12-03)`, or empty) for `grove::VERSION`.
//!
//! Cheap by design: three `git` processes, and only when a file it read changes
//! (HEAD, the branch it names, `packed-refs`), never on every build.
//!
//! `grove`'s tests include this file (`version_detail` is tested in process).
// A build script reads cargo's variables, runs git and talks to cargo on stdout.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Hex digits of the commit shown, as cargo and rustc show theirs.
const SHORT: usize = 9;

#[allow(dead_code)] // included by the tests, which call `version_detail`
fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=GIT_DIR");
    let detail = version_detail(&manifest, &mut |p| {
        println!("cargo:rerun-if-changed={}", p.display());
    });
    println!("cargo:rustc-env=GW_VERSION_DETAIL={detail}");
}

/// ` (COMMIT DATE)`, ` (COMMIT)` or empty, for the package whose manifest is in
/// `manifest`; `watch` is given each file whose change could change the answer.
pub(crate) fn version_detail(manifest: &Path, watch: &mut dyn FnMut(&Path)) -> String {
    match packaged(manifest, watch) {
        Some(commit) => format!(" ({commit})"),
        None => checkout(manifest, watch).unwrap_or_default(),
    }
}

/// The commit a packaged crate was made from: `.cargo_vcs_info.json`'s `git.sha1`.
fn packaged(manifest: &Path, watch: &mut dyn FnMut(&Path)) -> Option<String> {
    let info = manifest.join(".cargo_vcs_info.json");
    let text = std::fs::read_to_string(&info).ok()?;
    watch(&info);
    let at = text.find("\"sha1\"")?;
    let rest = text[at + "\"sha1\"".len()..]
        .trim_start()
        .strip_prefix(':')?;
    let sha: String = rest
        .trim_start()
        .strip_prefix('"')?
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (sha.len() >= SHORT).then(|| sha[..SHORT].to_string())
}

/// ` (COMMIT DATE)` of HEAD, when the manifest's parent directory is the top of a git
/// checkout (this workspace's root), and the files that say where HEAD is are watched.
fn checkout(manifest: &Path, watch: &mut dyn FnMut(&Path)) -> Option<String> {
    let root = manifest.parent()?;
    let head = git(
        root,
        &[
            "rev-parse",
            "--show-toplevel",
            "--symbolic-full-name",
            "HEAD",
        ],
    )?;
    let mut lines = head.lines();
    let top = lines.next()?;
    // `refs/heads/NAME`, or `HEAD` when it is detached.
    let branch = lines.next().filter(|b| b.starts_with("refs/"));
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(Path::new(top), root) {
        // The workspace is not a checkout of its own: a repository around it says nothing
        // about this source.
        return None;
    }
    let line = git(
        root,
        &[
            "log",
            "-1",
            "--no-show-signature",
            "--format=%H %cs",
            "HEAD",
        ],
    )?;
    let (hash, date) = line.split_once(' ')?;
    if hash.len() < SHORT || !hash.bytes().all(|b| b.is_ascii_hexdigit()) || date.len() != 10 {
        return None;
    }
    // Rerun when HEAD moves: HEAD itself, the branch it is on (loose or packed) and, with
    // the reftable backend, its tables. Only existing paths are named: cargo reruns a
    // build script on every build while a path it watches is missing.
    let watched = ["HEAD", "packed-refs", "reftable"]
        .into_iter()
        .chain(branch);
    let args: Vec<&str> = ["rev-parse", "--path-format=absolute"]
        .into_iter()
        .chain(watched.flat_map(|p| ["--git-path", p]))
        .collect();
    let paths = git(root, &args)?;
    for p in paths.lines().map(Path::new).filter(|p| p.exists()) {
        watch(p);
    }
    Some(format!(" ({} {date})", &hash[..SHORT]))
}

/// `git ARGS` in `dir`: its trimmed stdout, or `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?;
    Some(s.trim().to_string())
}
