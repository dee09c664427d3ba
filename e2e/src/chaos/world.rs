//! Building a suite's world once, and laying it down again before every trial.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::TestEnv;
use crate::audit::{Baseline, Preserved};

/// A world built once at `live` and kept as a copy at `template`; every trial starts by
/// replacing `live` with a fresh copy, so absolute paths recorded inside (state.json,
/// worktree links, origin URLs) stay true.
pub(crate) struct Template {
    pub live: PathBuf,
    pub template: PathBuf,
    /// The previous live world, being removed on a thread (one at a time).
    removing: Option<std::thread::JoinHandle<()>>,
    resets: u64,
}

impl Template {
    /// Empties `base` of an earlier run's worlds and returns where this one goes.
    pub fn new(base: &Path, name: &str) -> Template {
        std::fs::create_dir_all(base).expect("create the chaos directory");
        let base = base.canonicalize().expect("canonical chaos directory");
        let t = Template {
            live: base.join(name),
            template: base.join(format!("{name}.template")),
            removing: None,
            resets: 0,
        };
        for d in [&t.live, &t.template] {
            remove(d);
        }
        // Leftovers of an earlier, interrupted run.
        if let Ok(rd) = std::fs::read_dir(&base) {
            for e in rd.flatten() {
                if e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{name}.gone."))
                {
                    remove(&e.path());
                }
            }
        }
        t
    }

    /// The world under construction (at the live path).
    pub fn env(&self, gw: &Path) -> TestEnv {
        TestEnv::at(&self.live).with_bin(gw)
    }

    /// Keeps what is at the live path as the template, once the auditor finds it clean
    /// (a suite whose own world is not clean would blame gw for it).
    pub fn seal(&self, env: &TestEnv, baseline: &Baseline, preserved: &Preserved) {
        let found = env.world().audit_with(baseline, preserved);
        assert!(
            found.is_empty(),
            "the world built at {} is not clean:\n{}",
            self.live.display(),
            crate::audit::render(&found)
        );
        copy(&self.live, &self.template);
    }

    /// Replaces the live world with a fresh copy of the template. The old one is renamed
    /// away at once and removed on a thread while the new one is in use (removing tens of
    /// thousands of files takes seconds).
    pub fn reset(&mut self, gw: &Path) -> TestEnv {
        self.settle();
        if self.live.exists() {
            self.resets += 1;
            let gone = self.live.with_file_name(format!(
                "{}.gone.{}",
                self.live.file_name().unwrap().to_string_lossy(),
                self.resets
            ));
            std::fs::rename(&self.live, &gone).expect("move the old world away");
            self.removing = Some(std::thread::spawn(move || remove(&gone)));
        }
        copy(&self.template, &self.live);
        self.env(gw)
    }

    /// Waits for the removal of an old world.
    fn settle(&mut self) {
        if let Some(h) = self.removing.take() {
            let _ = h.join();
        }
    }

    /// Removes both worlds.
    pub fn remove(mut self) {
        self.settle();
        remove(&self.live);
        remove(&self.template);
    }
}

fn remove(dir: &Path) {
    if dir.exists() {
        // A half-deleted world is harmless; a failure here is reported by the next copy.
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `cp -a`: keeps modes and times, and is much faster than a walk in Rust for tens of
/// thousands of files.
fn copy(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .stdin(Stdio::null())
        .status()
        .expect("cp runs");
    assert!(
        status.success(),
        "cp -a {} {} failed",
        from.display(),
        to.display()
    );
}

/// `repos/<name>` with `files` files (in directories of 100) committed on `main` and pushed
/// to a new bare `origins/<name>.git`; in its checkout an ignored `node_modules` of half as
/// many files (and a link), which its `.grove.toml` asks `gw create --copy` to copy.
pub(crate) fn big_repo(env: &TestEnv, name: &str, files: usize) -> PathBuf {
    env.origin(name);
    let path = env.repos.join(name);
    std::fs::create_dir_all(&path).unwrap();
    env.git(&path, &["init", "-q", "-b", "main"]);
    std::fs::write(path.join("README.md"), format!("# {name}\n")).unwrap();
    std::fs::write(path.join(".gitignore"), "node_modules/\n").unwrap();
    std::fs::write(path.join(".grove.toml"), "copy = [\"node_modules\"]\n").unwrap();
    for i in 0..files {
        let dir = path.join(format!("src/d{:03}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(
            dir.join(format!("f{i:05}.txt")),
            format!(
                "{name} file {i}\n{}\n",
                "lorem ipsum dolor sit amet ".repeat(4)
            ),
        )
        .unwrap();
    }
    env.git(&path, &["add", "-A"]);
    env.git(&path, &["commit", "-q", "-m", "initial"]);
    env.git(&path, &["remote", "add", "origin", &env.url(name)]);
    env.git(&path, &["push", "-q", "-u", "origin", "main"]);
    env.git(&path, &["remote", "set-head", "origin", "main"]);
    let modules = path.join("node_modules");
    for i in 0..files.div_ceil(2) {
        let dir = modules.join(format!("pkg{:03}", i / 50));
        if i % 50 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(
            dir.join(format!("m{i}.js")),
            format!("module.exports = {i};\n"),
        )
        .unwrap();
    }
    std::os::unix::fs::symlink("pkg000/m0.js", modules.join("main.js")).unwrap();
    path
}
