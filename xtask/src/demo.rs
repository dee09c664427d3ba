//! `cargo xtask demo [--keep]`: three sample repositories with `file://` origins in a
//! temporary directory, and a workspace walked through its whole lifecycle by the release
//! `gw`, each command printed before its output (and `gw`'s live progress on a terminal).
//! With `--keep` the directory stays, and the demo says how to look around in it.

use std::path::Path;
use std::process::Command;

use crate::util;

pub const USAGE: &str = "usage: cargo xtask demo [--keep]

Builds the release gw, makes three sample repositories in a temporary directory and walks
a workspace through its lifecycle, printing each command before its output.
  --keep   leave the directory in place (it says where, and how to use gw in it)";

pub fn run(args: &[String]) -> Result<(), String> {
    let keep = args.iter().any(|a| a == "--keep");
    if let Some(other) = args.iter().find(|a| *a != "--keep") {
        return Err(format!("unknown argument `{other}`\n\n{USAGE}"));
    }
    let root = util::project_root();
    util::step("cargo build --release -p gw (the first build takes a few minutes)");
    let gw = util::build_release(&root, "gw")?;
    let tmp = tempfile::Builder::new()
        .prefix("grove-demo.")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let base = tmp.path().to_path_buf();
    let demo = Demo {
        base: &base,
        gw: &gw,
    };
    util::step("making three sample repositories (svc-auth, api, web) with file:// origins");
    demo.setup()?;

    println!(
        "\ngrove demo in {}  (HOME and GW_HOME point inside it)\n",
        base.display()
    );
    let repos = base.join("src");
    let repos = repos.to_str().ok_or("non-UTF-8 temp dir")?;
    demo.gw(&["init", repos])?;
    demo.gw(&["repos"])?;
    demo.gw(&["preset", "add", "backend", "-r", "svc-auth,api"])?;
    demo.gw(&[
        "create",
        "feat-login",
        "-b",
        "feat/login",
        "-r",
        "svc-auth,api,web",
    ])?;
    demo.gw(&["list"])?;
    demo.shell("echo 'login form' > \"$GW_HOME/workspaces/feat-login/web/login.html\"")?;
    demo.gw(&["status", "feat-login"])?;
    demo.gw(&["status", "feat-login", "--format", "json"])?;
    demo.gw(&["go", "feat-login"])?;
    println!();
    demo.gw(&["delete", "feat-login"])?;
    demo.gw(&["delete", "feat-login", "--force"])?;
    demo.gw(&["create", "-b", "fix/token-expiry", "-p", "backend"])?;
    demo.gw(&["ws", "show", "fix-token-expiry"])?;
    demo.gw(&["delete", "fix-token-expiry"])?;
    demo.gw(&["list", "--format", "json"])?;
    demo.gw(&["create", "feat-kept", "-b", "feat/kept", "-r", "api,web"])?;
    println!("\nThat was grove. Point it at your own repositories with `gw init ~/src`.");
    if keep {
        let kept = tmp.keep();
        println!(
            "\nThe demo is kept in {dir} (workspace feat-kept is still there). To look around:\n\n  \
             export HOME={dir}/home GW_HOME={dir}/home/.grove\n  \
             {gw} list\n\nRemove it with `rm -rf {dir}`.",
            dir = kept.display(),
            gw = gw.display()
        );
    } else {
        println!("(run `cargo xtask demo --keep` to keep the demo's directory and look around)");
    }
    Ok(())
}

struct Demo<'a> {
    base: &'a Path,
    gw: &'a Path,
}

impl Demo<'_> {
    fn env(&self, cmd: &mut Command) {
        cmd.env("HOME", self.base.join("home"))
            .env("GW_HOME", self.base.join("home/.grove"))
            .envs(e2e::HERMETIC_GIT.iter().copied())
            .env_remove("GW_FORMAT")
            .current_dir(self.base);
    }

    fn shell(&self, script: &str) -> Result<(), String> {
        println!("$ {script}");
        let mut cmd = Command::new("sh");
        self.env(&mut cmd);
        cmd.arg("-c").arg(script);
        let status = cmd.status().map_err(|e| e.to_string())?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("`{script}` failed"))
        }
    }

    fn git(&self, dir: &Path, args: &[&str]) -> Result<(), String> {
        let mut cmd = Command::new("git");
        self.env(&mut cmd);
        cmd.args(args).current_dir(dir);
        util::run_captured(&mut cmd, &format!("git {}", args.join(" ")))
    }

    fn setup(&self) -> Result<(), String> {
        let (origins, src) = (self.base.join("origins"), self.base.join("src"));
        for d in [&origins, &src, &self.base.join("home")] {
            std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
        }
        for name in ["svc-auth", "api", "web"] {
            let origin = origins.join(format!("{name}.git"));
            let url = format!("file://{}", origin.display());
            self.git(
                &origins,
                &[
                    "init",
                    "-q",
                    "--bare",
                    "-b",
                    "main",
                    origin.to_str().ok_or("path")?,
                ],
            )?;
            self.git(&src, &["clone", "-q", &url, name])?;
            let repo = src.join(name);
            std::fs::write(repo.join("README.md"), format!("# {name}\n"))
                .map_err(|e| e.to_string())?;
            self.git(&repo, &["add", "."])?;
            self.git(&repo, &["commit", "-q", "-m", "initial commit"])?;
            self.git(&repo, &["push", "-q", "origin", "main"])?;
            self.git(&repo, &["remote", "set-head", "origin", "main"])?;
        }
        Ok(())
    }

    /// Runs gw, printing the command line, then its stdout and stderr. A failing command is
    /// shown, not fatal: the demo includes refusals on purpose.
    fn gw(&self, args: &[&str]) -> Result<(), String> {
        println!("\n$ gw {}", args.join(" "));
        let mut cmd = Command::new(self.gw);
        self.env(&mut cmd);
        let status = cmd.args(args).status().map_err(|e| e.to_string())?;
        if !status.success() {
            println!("[exit status {}]", status.code().unwrap_or(-1));
        }
        Ok(())
    }
}
