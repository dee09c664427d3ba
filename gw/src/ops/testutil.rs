//! A small world for in-process tests of operations: a temporary home with grove
//! initialised over a directory of repositories (no origins, one commit each).

use std::path::{Path, PathBuf};

use crate::env::Env;
use crate::ops::{Ctx, Quiet};
use crate::proc::Cmd;

pub struct World {
    _tmp: tempfile::TempDir,
    pub env: Env,
    pub repos: PathBuf,
}

/// Sets the modification time of the file at `path`.
pub fn set_modified(path: &Path, time: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(time))
        .unwrap_or_else(|e| panic!("set the time of {}: {e}", path.display()));
}

/// Runs git with a fixed identity in `dir`, panicking on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    Cmd::git(dir)
        .args([
            "-c",
            "user.name=Grove Test",
            "-c",
            "user.email=test@grove.invalid",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .check()
        .unwrap_or_else(|e| panic!("git {args:?} in {}: {e}", dir.display()))
        .stdout
        .trim_end()
        .to_string()
}

impl World {
    pub fn new(names: &[&str]) -> World {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let repos = root.join("repos");
        for n in names {
            let p = repos.join(n);
            crate::fsx::create_dir_all(&p).unwrap();
            git(&p, &["init", "-q", "-b", "main"]);
            crate::fsx::write_atomic(&p.join("README.md"), format!("# {n}\n").as_bytes()).unwrap();
            git(&p, &["add", "."]);
            git(&p, &["commit", "-q", "-m", "initial"]);
        }
        let home = root.join("home");
        crate::fsx::create_dir_all(&home).unwrap();
        let env = Env::for_home(&home, &root);
        let world = World {
            _tmp: tmp,
            env,
            repos,
        };
        crate::ops::init::init(&world.ctx(), std::slice::from_ref(&world.repos), false).unwrap();
        world
    }

    pub fn ctx(&self) -> Ctx<'_> {
        Ctx::new(&self.env, &Quiet)
    }
}
