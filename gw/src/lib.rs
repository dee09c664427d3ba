//! grove: multi-repository git worktree workspaces.
//!
//! This library is `gw`'s implementation, not a stable API. The layers point one way:
//! `cli` (clap, dispatch) → `ops` (one use case per module, returning reports) →
//! `git`, `state`, `config`, `discover` (adapters) → `proc`, `fsx`, `env`. Only `output`
//! writes to stdout or stderr, and only `proc` starts processes.

pub mod action;
pub mod cli;
pub mod config;
pub mod discover;
pub mod duration;
pub mod env;
pub mod error;
pub mod fsx;
pub mod git;
pub mod home;
pub mod legacy;
pub mod listen;
pub mod lock;
pub mod log;
pub mod ops;
pub mod output;
pub mod parallel;
pub mod proc;
pub mod redact;
pub mod schema;
pub mod state;
pub mod stats;
pub mod time;
pub mod treecopy;

/// What `gw --version` and `gw-migrate --version` print after the name: `0.1.0`, and when
/// built from a git checkout the commit and its date, `0.1.0 (0123abcde 2026-12-03)`
/// (`gw/build.rs`).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("GW_VERSION_DETAIL"));

/// The build script, compiled into the tests too: what it decides is tested in process.
#[cfg(test)]
#[path = "../build.rs"]
mod build_script;

#[cfg(test)]
mod version_tests {
    use std::path::{Path, PathBuf};

    use super::build_script::version_detail;
    use crate::ops::testutil::git;

    fn detail(manifest: &Path) -> (String, Vec<PathBuf>) {
        let mut watched = Vec::new();
        let d = version_detail(manifest, &mut |p| watched.push(p.to_path_buf()));
        (d, watched)
    }

    /// A workspace checkout (`ws/` with the package in `ws/gw/`) with one commit, made on
    /// 2026-12-03; its full hash.
    fn checkout(root: &Path) -> String {
        let ws = root.join("ws");
        crate::fsx::create_dir_all(&ws.join("gw")).unwrap();
        crate::fsx::write_atomic(&ws.join("gw/Cargo.toml"), b"[package]\n").unwrap();
        git(&ws, &["init", "-q", "-b", "main"]);
        git(&ws, &["add", "."]);
        crate::proc::Cmd::git(&ws)
            .args(["-c", "user.name=T", "-c", "user.email=t@grove.invalid"])
            .args(["-c", "commit.gpgsign=false", "commit", "-q", "-m", "one"])
            .env("GIT_COMMITTER_DATE", "2026-12-03T23:30:00+00:00")
            .check()
            .unwrap();
        git(&ws, &["rev-parse", "HEAD"])
    }

    #[test]
    fn a_checkout_gives_its_commit_and_date_and_watches_head() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let hash = checkout(&root);
        let (d, watched) = detail(&root.join("ws/gw"));
        assert_eq!(d, format!(" ({} 2026-12-03)", &hash[..9]));
        let git_dir = root.join("ws/.git");
        assert!(watched.contains(&git_dir.join("HEAD")), "{watched:?}");
        assert!(
            watched.contains(&git_dir.join("refs/heads/main")),
            "{watched:?}"
        );
        // Nothing missing is watched: cargo would rerun the script on every build.
        assert!(watched.iter().all(|p| p.exists()), "{watched:?}");

        // A new commit changes the answer; so does a detached HEAD's move.
        git(
            &root.join("ws"),
            &["commit", "-q", "--allow-empty", "-m", "two"],
        );
        let two = git(&root.join("ws"), &["rev-parse", "HEAD"]);
        assert!(
            detail(&root.join("ws/gw"))
                .0
                .starts_with(&format!(" ({}", &two[..9]))
        );
        git(&root.join("ws"), &["checkout", "-q", "--detach", "HEAD~"]);
        let (d, watched) = detail(&root.join("ws/gw"));
        assert!(d.starts_with(&format!(" ({}", &hash[..9])), "{d}");
        assert!(watched.contains(&git_dir.join("HEAD")), "{watched:?}");
    }

    #[test]
    fn a_source_tree_inside_another_repository_or_none_says_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        // Unpacked into somebody's repository (a home directory kept in git, say): that
        // repository's commit is not this source's.
        checkout(&root);
        let inner = root.join("ws/vendor/gw-0.1.0");
        crate::fsx::create_dir_all(&inner).unwrap();
        assert_eq!(detail(&inner), (String::new(), vec![]));
        let bare = tempfile::tempdir().unwrap();
        let pkg = bare.path().join("gw");
        crate::fsx::create_dir_all(&pkg).unwrap();
        assert_eq!(detail(&pkg).0, "");
    }

    #[test]
    fn a_packaged_crate_gives_the_commit_cargo_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        // Even inside a checkout: the package says where it came from.
        checkout(&root);
        let pkg = root.join("ws/gw");
        let info = pkg.join(".cargo_vcs_info.json");
        crate::fsx::write_atomic(
            &info,
            b"{\n  \"git\": {\n    \"sha1\": \"0123456789abcdef0123456789abcdef01234567\"\n  },\n  \"path_in_vcs\": \"gw\"\n}",
        )
        .unwrap();
        assert_eq!(
            detail(&pkg),
            (" (012345678)".to_string(), vec![info.clone()])
        );
        crate::fsx::write_atomic(&info, b"{\"git\": {\"sha1\": \"xyz\"}}").unwrap();
        assert!(!detail(&pkg).0.contains("xyz"));
    }

    #[test]
    fn the_version_is_the_package_version_and_the_detail() {
        let v = super::VERSION;
        let rest = v.strip_prefix(env!("CARGO_PKG_VERSION")).unwrap();
        assert!(
            rest.is_empty() || (rest.starts_with(" (") && rest.ends_with(')')),
            "{v}"
        );
    }
}
