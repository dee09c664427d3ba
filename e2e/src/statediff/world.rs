//! A world for one seed: a grove directory, a source repository and a workspace with its
//! worktree, built and then changed by shell commands that are recorded as they run.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::{HERMETIC_GIT, Rng, TestEnv};

/// How long one command may run before it counts as hung.
const PATIENCE: Duration = Duration::from_secs(120);

/// A seeded world.
pub struct World {
    pub seed: u64,
    dice: Dice,
    env: TestEnv,
    wt: PathBuf,
    scratch: PathBuf,
    t0: u64,
    /// The commands run so far, as a script.
    log: Vec<String>,
    /// Unreadable paths may be made (the world is read by an unprivileged user).
    unprivileged: bool,
    /// Fifos named like a rules file, moved away while git looks (git would block).
    fifo_rules: Vec<String>,
    /// A branch to merge exists.
    merged: bool,
    /// The `gw` under test, copied where any user may run it.
    gw: PathBuf,
}

/// What undoes a state that must not outlive its comparison (an unreadable directory, a
/// fifo named `.gitignore`).
pub struct Undo(Option<String>);

impl World {
    pub fn new(seed: u64, gw: &Path, unprivileged: bool) -> Result<World, String> {
        let env = TestEnv::new();
        let root = env.root.clone();
        let scratch = root.join("scratch");
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        let t0 = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_secs();
        let mut w = World {
            seed,
            dice: Dice(Rng::seeded(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)),
            wt: env.grove_home.join("workspaces/ws/r"),
            env,
            scratch,
            t0,
            log: Vec::new(),
            unprivileged,
            fifo_rules: Vec::new(),
            merged: false,
            gw: gw.to_path_buf(),
        };
        let base = w.base_world();
        w.sh_in_root(&base)?;
        Ok(w)
    }

    pub fn worktree(&self) -> &Path {
        &self.wt
    }

    /// The reproduction: the script of everything run so far.
    pub fn script(&self) -> String {
        let mut s = String::from(
            "#!/bin/sh\n# grove status against git: rebuilds the world and shows both answers.\n\
             # Run with GW=/path/to/gw.\n",
        );
        s.push_str(&format!("# seed {}\n", self.seed));
        for (k, v) in HERMETIC_GIT {
            s.push_str(&format!("export {k}={}\n", quote(v)));
        }
        s.push_str(
            "export GIT_AUTHOR_DATE=2001-02-03T04:05:06Z GIT_COMMITTER_DATE=2001-02-03T04:05:06Z \
             LANG=C LC_ALL=C NO_COLOR=1\n\
             GW=${GW:-gw}\nROOT=$(mktemp -d)\nexport HOME=\"$ROOT/home\" GW_HOME=\"$ROOT/home/.grove\" \
             TMPDIR=\"$ROOT/tmp\" GIT_CEILING_DIRECTORIES=\"$ROOT\"\n\
             mkdir -p \"$HOME\" \"$ROOT/tmp\" \"$ROOT/repos\" \"$ROOT/scratch\" \"$ROOT/origins\"\n\
             S=\"$ROOT/scratch\" WT=\"$GW_HOME/workspaces/ws/r\" T0=$(date +%s)\ncd \"$ROOT\"\n",
        );
        for l in &self.log {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    /// Records a comment in the script.
    pub fn note(&mut self, line: &str) {
        self.log.push(line.to_string());
    }

    /// `sh -c script` in `cwd` with the world's environment.
    fn sh_at(&mut self, cwd: &str, script: &str) -> Result<Output, String> {
        self.log.push(format!("cd \"${cwd}\"\n{script}"));
        let dir = if cwd == "ROOT" {
            self.env.root.clone()
        } else {
            self.wt.clone()
        };
        let mut cmd = self.command("sh");
        cmd.arg("-c").arg(script).current_dir(dir);
        run(cmd)
    }

    fn sh_in_root(&mut self, script: &str) -> Result<(), String> {
        let out = self.sh_at("ROOT", script)?;
        if !out.status.success() {
            return Err(format!(
                "{script}\nfailed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    /// A mutation in the worktree; whether it worked does not matter (the state is what it
    /// is either way).
    fn sh(&mut self, script: &str) {
        let _ = self.sh_at("WT", script);
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = self.env.command(Path::new(program), &[]);
        cmd.env("ROOT", &self.env.root)
            .env("WT", &self.wt)
            .env("S", &self.scratch)
            .env("T0", self.t0.to_string())
            .env("GW", &self.gw)
            .env("GIT_LITERAL_PATHSPECS", "1");
        cmd
    }

    /// git's status in the worktree, without letting git write its index: (stdout, stderr).
    pub fn git_status(&mut self, args: &[&str]) -> Result<(Vec<u8>, String), String> {
        self.log.push(format!(
            "git --no-optional-locks {} | tr '\\0' '\\n'",
            args.join(" ")
        ));
        self.hide_fifo_rules();
        let mut cmd = self.command("git");
        cmd.env("GIT_OPTIONAL_LOCKS", "0")
            .args(args)
            .current_dir(&self.wt);
        let out = run(cmd);
        self.show_fifo_rules();
        let out = out?;
        if !out.status.success() {
            return Err(format!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok((
            out.stdout,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    /// `gw status ws --format json`'s change lines.
    pub fn gw_status(&mut self) -> Result<Vec<String>, String> {
        self.log.push("\"$GW\" status ws --format json".to_string());
        let mut cmd = self.command(&self.gw.to_string_lossy());
        cmd.args(["status", "ws", "--format", "json"])
            .current_dir(&self.env.root);
        let out = run(cmd)?;
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
            format!(
                "gw status printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        let repo = &v["result"]["repos"][0];
        if v["ok"] != true || !repo["error"].is_null() {
            return Err(format!("gw status failed: {v}"));
        }
        let mut lines: Vec<String> = repo["changes"]
            .as_array()
            .ok_or_else(|| format!("gw status has no changes: {v}"))?
            .iter()
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect();
        super::git::sort(&mut lines, false);
        let unreadable = repo["unreadable"].as_array().is_some_and(|u| !u.is_empty());
        if (repo["state"] == "clean") != (lines.is_empty() && !unreadable) {
            return Err(format!(
                "gw status says {} with {lines:?} (unreadable: {unreadable})",
                repo["state"]
            ));
        }
        Ok(lines)
    }

    /// Whether the file at `path` differs from its index entry, as `git hash-object` cleans
    /// it (anything but a file or a symbolic link differs).
    pub fn content_differs(&mut self, path: &str) -> Result<bool, String> {
        let q = quote(path);
        let script = format!(
            "entry=$(git ls-files -s -z -- {q} | cut -d' ' -f2)\n\
             if [ -L {q} ]; then now=$(printf %s \"$(readlink -- {q})\" | git hash-object --stdin)\n\
             elif [ -f {q} ] && [ ! -p {q} ]; then now=$(git hash-object -- {q})\n\
             else now=none; fi\n\
             [ \"$entry\" = \"$now\" ] && echo same || echo differs"
        );
        self.log
            .push(format!("# does {path} differ from its index entry?"));
        self.hide_fifo_rules();
        let out = self.sh_at("WT", &script);
        self.show_fifo_rules();
        let text = String::from_utf8_lossy(&out?.stdout).into_owned();
        Ok(text.trim() != "same")
    }

    fn hide_fifo_rules(&mut self) {
        for (i, f) in self.fifo_rules.clone().iter().enumerate() {
            let _ = std::fs::rename(self.wt.join(f), self.scratch.join(format!("fifo{i}")));
        }
    }

    fn show_fifo_rules(&mut self) {
        for (i, f) in self.fifo_rules.clone().iter().enumerate() {
            let _ = std::fs::rename(self.scratch.join(format!("fifo{i}")), self.wt.join(f));
        }
    }

    /// Puts back what a transient state changed.
    pub fn undo(&mut self, undo: Undo) {
        if let Some(script) = undo.0 {
            self.sh(&script);
        }
        self.fifo_rules.clear();
    }

    /// Makes everything removable again.
    pub fn finish(&mut self) {
        let _ = self.sh_at("ROOT", "chmod -R u+rwX . 2>/dev/null; true");
    }
}

/// Runs `cmd` to its end, for at most [`PATIENCE`].
fn run(mut cmd: Command) -> Result<Output, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("{cmd:?}: {e}"))?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{cmd:?} hung (killed after {PATIENCE:?})"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Output {
        status,
        stdout: reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    })
}

/// `s` single-quoted for sh.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Seeded choices.
struct Dice(Rng);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n.max(1) as u64) as usize
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }
}

/// File names, some of them hostile (glob characters, a leading dash, a comment character,
/// spaces, tabs, a newline, a name in NFC whose NFD twin may appear later).
const NAMES: &[&str] = &[
    "a.txt",
    "b.txt",
    "c.md",
    "run.sh",
    "data.bin",
    "w.crlf",
    "u.up",
    "g.gone",
    "sp ace.txt",
    "caf\u{e9}.txt",
    "-dash.txt",
    "#hash.txt",
    "!bang.txt",
    "st*r.txt",
    "q?.txt",
    "[b].txt",
    "back\\slash.txt",
    "trail .txt",
    "tab\there.txt",
    "new\nline.txt",
    "x.o",
    ".hidden",
    "keep.txt",
    "long-name-with-many-characters-0123456789.txt",
];

const DIRS: &[&str] = &[
    "",
    "",
    "",
    "dir",
    "dir/sub",
    "deep/a/b",
    "sp ace",
    "caf\u{e9}",
    "dist",
    "logs",
];

const CONTENTS: &[&str] = &[
    "one\n",
    "one\ntwo\n",
    "crlf\r\nline\r\n",
    "mixed\r\nlf\n",
    "no newline",
    "",
    "\0bin\0ary\0",
    "lower case text\n",
    "#!/bin/sh\necho hi\n",
    "a somewhat longer line of text that is not short\nand another\n",
];

const IGNORES: &[&str] = &[
    "*.o",
    "dist/",
    "logs/",
    "!logs/keep.txt",
    "/build",
    "*.tmp",
    "!important.tmp",
    "sub/",
    "#hash.txt",
    "\\#hash.txt",
    "!*.md",
    "deep/**/b",
    "*.bin",
    "ign*",
    "[ab].txt",
    ".hidden",
    "/dir/sub/",
    "caf\u{e9}*",
    "nested/",
    "!nested/keep",
    "*.txt",
    "!b.txt",
];

const ATTRIBUTES: &[&str] = &[
    "*.txt text",
    "*.crlf text eol=crlf",
    "*.bin binary",
    "*.up filter=up",
    "*.gone filter=gone",
    "* text=auto",
    "*.md eol=lf",
    "*.txt -text",
];

impl World {
    /// The source repository, grove, and the workspace `ws` with the worktree of `r`.
    fn base_world(&mut self) -> String {
        let d = &mut self.dice;
        let mut s = String::from(
            "git init -q -b main repos/r && cd repos/r\n\
             git config filter.up.clean 'tr a-z A-Z'\n\
             git config filter.gone.clean gw-no-such-command\n",
        );
        if d.chance(15) {
            // A required filter needs its smudge command too, or git cannot check a file
            // out (seed 20271100: the world's worktree was never made).
            s.push_str("git config filter.up.required true\ngit config filter.up.smudge cat\n");
        }
        for (key, values) in [
            ("core.autocrlf", &["true", "input", "false"][..]),
            ("core.safecrlf", &["true", "warn", "false"][..]),
            ("core.eol", &["crlf", "lf"][..]),
        ] {
            if d.chance(25) {
                s.push_str(&format!("git config {key} {}\n", d.pick(values)));
            }
        }
        let mut files = Vec::new();
        for _ in 0..2 + d.below(12) {
            let dir = *d.pick(DIRS);
            let name = *d.pick(NAMES);
            let path = if dir.is_empty() {
                name.to_string()
            } else {
                format!("{dir}/{name}")
            };
            if !files.contains(&path) {
                files.push(path);
            }
        }
        for f in &files {
            let content = *d.pick(CONTENTS);
            s.push_str(&write_file(f, content));
            if d.chance(10) {
                s.push_str(&format!("chmod +x -- {}\n", quote(f)));
            }
        }
        if d.chance(20) {
            s.push_str("ln -s a.txt link\nln -s no-such-target dangling\n");
        }
        if d.chance(50) {
            let mut rules = String::new();
            for _ in 0..1 + d.below(5) {
                rules.push_str(d.pick::<&str>(IGNORES));
                rules.push('\n');
            }
            s.push_str(&write_file(".gitignore", &rules));
        }
        if d.chance(30) {
            let mut rules = String::new();
            for _ in 0..1 + d.below(3) {
                rules.push_str(d.pick::<&str>(ATTRIBUTES));
                rules.push('\n');
            }
            s.push_str(&write_file(".gitattributes", &rules));
        }
        s.push_str("git add -A 2>/dev/null\ngit commit -q -m base --allow-empty\n");
        // A branch to merge later: it changes and deletes some of the same files.
        s.push_str("git switch -q -c other\n");
        for f in files.iter().take(3) {
            if d.chance(50) {
                s.push_str(&format!("git rm -q -- {} 2>/dev/null\n", quote(f)));
            } else {
                s.push_str(&write_file(f, "from other\n"));
            }
        }
        s.push_str(&write_file("both-added.txt", "other's\n"));
        s.push_str(
            "git add -A 2>/dev/null\ngit commit -q -m other --allow-empty\ngit switch -q main\n",
        );
        s.push_str("cd \"$ROOT\"\n\"$GW\" init \"$ROOT/repos\" >/dev/null\n");
        s.push_str("\"$GW\" create ws -b feat -r r >/dev/null\ncd \"$WT\"\n");
        // After the checkout: what changes how the index is kept and compared.
        for (what, percent) in [
            ("git update-index --index-version 4", 15),
            (
                "git config core.splitIndex true && git update-index --split-index",
                10,
            ),
            (
                "git config core.untrackedCache true && git update-index --untracked-cache",
                10,
            ),
            ("git config core.fileMode false", 10),
            ("git config core.trustctime false", 15),
            ("git config core.checkStat minimal", 10),
            ("git config core.preloadIndex false", 5),
            // Not with a split index: git 2.47 alone, no grove involved, breaks its index
            // under the two together (`git reset --hard` then lists an entry without a
            // path, or loses entries: seed 20261226), and leaves no answer to compare with.
            (
                "[ \"$(git config --bool core.splitIndex)\" = true ] || git config index.skipHash true",
                5,
            ),
        ] {
            if d.chance(percent) {
                s.push_str(what);
                s.push('\n');
            }
        }
        s.push_str(&untracked_setting(d));
        if d.chance(20) {
            s.push_str(
                "printf '*.tmp\\n!keep.tmp\\n' > \"$ROOT/excludes\"\n\
                 git config core.excludesFile \"$ROOT/excludes\"\n",
            );
        }
        if d.chance(20) {
            s.push_str(
                "mkdir -p \"$(git rev-parse --git-common-dir)/info\"\n\
                 printf 'ign*\\n!ignx\\n' >> \"$(git rev-parse --git-common-dir)/info/exclude\"\n",
            );
        }
        s
    }

    /// The tracked paths (stage 0 or not), sorted.
    fn tracked(&mut self) -> Vec<String> {
        let mut cmd = self.command("git");
        cmd.args(["ls-files", "-z"]).current_dir(&self.wt);
        let Ok(out) = run(cmd) else {
            return Vec::new();
        };
        let mut v: Vec<String> = out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        v.dedup();
        v
    }

    /// Every path in the worktree but `.git` (directories too), sorted.
    fn present(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        let mut stack = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(self.wt.join(&rel)) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_name() == ".git" {
                    continue;
                }
                let p = rel.join(e.file_name());
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                if is_dir && out.len() < 400 {
                    stack.push(p.clone());
                }
                out.push((p.to_string_lossy().into_owned(), is_dir));
            }
        }
        out.sort();
        out
    }

    fn pick_tracked(&mut self) -> Option<String> {
        let t = self.tracked();
        (!t.is_empty()).then(|| self.dice.pick(&t).clone())
    }

    /// A tracked path that is a regular file now: what an edit reads and writes. A fifo
    /// (a kind swap makes one) would block the reader here and the writer in the shell.
    fn pick_tracked_file(&mut self) -> Option<String> {
        let t: Vec<String> = self
            .tracked()
            .into_iter()
            .filter(|f| {
                self.wt
                    .join(f)
                    .symlink_metadata()
                    .is_ok_and(|m| m.is_file())
            })
            .collect();
        (!t.is_empty()).then(|| self.dice.pick(&t).clone())
    }

    fn pick_dir(&mut self) -> String {
        let dirs: Vec<String> = self
            .present()
            .into_iter()
            .filter(|(_, d)| *d)
            .map(|(p, _)| p)
            .collect();
        if dirs.is_empty() || self.dice.chance(40) {
            String::new()
        } else {
            self.dice.pick(&dirs).clone()
        }
    }

    fn new_path(&mut self) -> String {
        let dir = self.pick_dir();
        let name = *self.dice.pick(NAMES);
        let name = if self.dice.chance(30) {
            format!("new-{name}")
        } else {
            name.to_string()
        };
        if dir.is_empty() {
            name
        } else {
            format!("{dir}/{name}")
        }
    }

    /// Changes the world into its next state: one to three mutations, and perhaps one that
    /// is undone after the comparison.
    pub fn mutate(&mut self) -> Undo {
        for _ in 0..1 + self.dice.below(3) {
            let m = self.dice.below(MUTATIONS);
            self.mutation(m);
        }
        if self.dice.chance(15) {
            return self.transient();
        }
        Undo(None)
    }

    fn mutation(&mut self, m: usize) {
        let script = match m {
            0 => self.edit(false),
            1 | 2 => self.edit(true),
            3 => self.same_size_restored_time(),
            4 => self.same_second_edit(),
            5 => self.pick_tracked_file().map(|f| {
                let q = quote(&f);
                match self.dice.below(3) {
                    0 => format!("touch -- {q}"),
                    1 => format!("touch -d \"@$((T0 - {}))\" -- {q}", self.dice.below(4000)),
                    _ => format!("cat -- {q} > \"$S/copy\" && cat \"$S/copy\" > {q}"),
                }
            }),
            6 => self.pick_tracked().map(|f| {
                let q = quote(&f);
                if self.dice.chance(50) {
                    format!("chmod +x -- {q}")
                } else {
                    format!("chmod -x -- {q}")
                }
            }),
            7 => self.kind_swap(),
            8 => self.pick_tracked().map(|f| {
                let q = quote(&f);
                match self.dice.below(3) {
                    0 => format!("rm -f -- {q}"),
                    1 => {
                        let dir = Path::new(&f)
                            .parent()
                            .map(|p| p.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        if dir.is_empty() {
                            format!("rm -f -- {q}")
                        } else {
                            format!("rm -rf -- {}", quote(&dir))
                        }
                    }
                    _ => format!("rm -f -- {q} && mkdir -p -- {q}"),
                }
            }),
            9 | 10 => Some(self.untracked()),
            11 => Some(self.repository_inside()),
            12 => Some(self.rules()),
            13 | 14 => self.index_change(),
            15 => Some(self.merge()),
            16 => Some(self.index_format()),
            17 => Some(self.age()),
            18 => Some(self.config_flip()),
            19 => Some(match self.dice.below(3) {
                0 => "git add -A 2>/dev/null; git commit -q -m step --no-verify".to_string(),
                1 => "git update-index -q --refresh".to_string(),
                _ => "git status --porcelain >/dev/null".to_string(),
            }),
            _ => Some("git reset -q --hard 2>/dev/null; git clean -q -f -d".to_string()),
        };
        if let Some(s) = script {
            self.sh(&s);
        }
    }

    fn edit(&mut self, same_size: bool) -> Option<String> {
        let f = self.pick_tracked_file()?;
        let q = quote(&f);
        let old = std::fs::read(self.wt.join(&f)).unwrap_or_default();
        if !same_size || old.is_empty() {
            let add = *self
                .dice
                .pick(&["more\n", "\r\n", "x", "crlf\r\n", "mixed\r\nlf\n"]);
            return Some(format!("printf '%s' {} >> {q}", quote(add)));
        }
        Some(format!(
            "printf '%s' {} > {q}",
            quote(&same_size_edit(&old, &mut self.dice))
        ))
    }

    /// A same-size edit whose modification time is put back: only the inode change time
    /// (and the content) tell.
    fn same_size_restored_time(&mut self) -> Option<String> {
        let f = self.pick_tracked_file()?;
        let old = std::fs::read(self.wt.join(&f))
            .ok()
            .filter(|o| !o.is_empty())?;
        let q = quote(&f);
        Some(format!(
            "touch -r {q} \"$S/ref\" && printf '%s' {} > {q} && touch -r \"$S/ref\" {q}",
            quote(&same_size_edit(&old, &mut self.dice))
        ))
    }

    /// A same-size edit in the second of the file's last modification (and of the index):
    /// the stat data differ only in nanoseconds.
    fn same_second_edit(&mut self) -> Option<String> {
        let f = self.pick_tracked_file()?;
        let old = std::fs::read(self.wt.join(&f))
            .ok()
            .filter(|o| !o.is_empty())?;
        let q = quote(&f);
        let index = if self.dice.chance(70) {
            "; touch -d \"@$m\" \"$(git rev-parse --git-path index)\""
        } else {
            ""
        };
        Some(format!(
            "m=$(stat -c %Y -- {q}); printf '%s' {} > {q}; touch -d \"@$m.{:09}\" -- {q}{index}",
            quote(&same_size_edit(&old, &mut self.dice)),
            1 + self.dice.below(999_999_998)
        ))
    }

    fn kind_swap(&mut self) -> Option<String> {
        let f = self.pick_tracked()?;
        let q = quote(&f);
        // A fifo where git reads rules would hang git's side of the comparison: those the
        // transient states make are hidden from git (`fifo_rules`), a tracked one is not.
        let rules = [".gitignore", ".gitattributes"]
            .iter()
            .any(|n| Path::new(&f).file_name().is_some_and(|x| x == *n));
        let swap = match self.dice.below(8) {
            4 if rules => 1,
            n => n,
        };
        Some(match swap {
            0 => format!("rm -f -- {q} && ln -s a.txt {q}"),
            1 => format!("rm -f -- {q} && printf 'was a link\\n' > {q}"),
            2 => format!(
                "rm -f -- {q} && ln -s {} {q}",
                quote("x".repeat(5).as_str())
            ),
            3 => format!("rm -f -- {q} && mkdir -- {q} && printf 'in\\n' > {q}/inner"),
            4 => format!("rm -f -- {q} && mkfifo -- {q}"),
            5 => format!(
                "rm -f -- {q} && git init -q -- {q} && git -C {q} commit -q --allow-empty -m sub"
            ),
            6 => format!("rm -f -- {q} && git init -q -- {q}"),
            _ => format!("rm -f -- {q} && ln -s . {q}"),
        })
    }

    fn untracked(&mut self) -> String {
        let p = self.new_path();
        let q = quote(&p);
        match self.dice.below(8) {
            0 => format!("mkdir -p -- {q}"),
            1 => format!("mkdir -p -- {q}/deeper && printf 'x\\n' > {q}/deeper/file"),
            2 => format!("mkdir -p -- {q} && printf 'o\\n' > {q}/only.o"),
            3 => format!("mkfifo -- {q}"),
            4 => format!(
                "mkdir -p -- {q} && printf 'x\\n' > {q}/f && printf 'o\\n' > {q}/g.o && mkdir -p {q}/ign && printf 'i\\n' > {q}/ign/h"
            ),
            5 => {
                // An NFD twin of a name the index may hold in NFC.
                format!("printf 'nfd\\n' > {}", quote("cafe\u{301}.txt"))
            }
            _ => format!(
                "printf '%s' {} > {q}",
                quote(self.dice.pick::<&str>(CONTENTS))
            ),
        }
    }

    /// A repository, or something that only looks like one, in a new directory.
    fn repository_inside(&mut self) -> String {
        let p = self.new_path();
        let q = quote(&p);
        match self.dice.below(8) {
            0 => format!("git init -q -- {q}"),
            1 => format!("git init -q -- {q} && git -C {q} commit -q --allow-empty -m x"),
            2 => {
                format!("mkdir -p -- {q}/.git && printf 'ref: refs/heads/main\\n' > {q}/.git/HEAD")
            }
            3 => format!("mkdir -p -- {q} && printf 'gitdir: /no/such/dir\\n' > {q}/.git"),
            4 => format!("mkdir -p -- {q} && ln -s /no/such/dir {q}/.git"),
            // A `.git` that points at another repository's git directory (not at this
            // worktree's own: a second way into its git directory inside the worktree is not
            // a state git answers for).
            5 => format!(
                "git init -q --bare \"$S/elsewhere.git\" 2>/dev/null; mkdir -p -- {q} && ln -s \"$S/elsewhere.git\" {q}/.git"
            ),
            6 => format!(
                "git init -q --bare \"$S/elsewhere.git\" 2>/dev/null; mkdir -p -- {q} && printf 'gitdir: %s\\n' \"$S/elsewhere.git\" > {q}/.git && printf 'x\\n' > {q}/x"
            ),
            _ => format!(
                "mkdir -p -- {q}/.git && printf 'ref: refs/heads/main\\n' > {q}/.git/HEAD && printf 'x\\n' > {q}/x"
            ),
        }
    }

    fn rules(&mut self) -> String {
        let rule = *self.dice.pick(IGNORES);
        match self.dice.below(4) {
            0 => {
                let dir = self.pick_dir();
                let file = if dir.is_empty() {
                    ".gitignore".to_string()
                } else {
                    format!("{dir}/.gitignore")
                };
                format!("printf '%s\\n' {} >> {}", quote(rule), quote(&file))
            }
            1 => format!(
                "mkdir -p \"$(git rev-parse --git-common-dir)/info\" && printf '%s\\n' {} >> \"$(git rev-parse --git-common-dir)/info/exclude\"",
                quote(rule)
            ),
            2 => format!(
                "printf '%s\\n' {} >> \"$ROOT/excludes\" && git config core.excludesFile \"$ROOT/excludes\"",
                quote(rule)
            ),
            _ => format!(
                "printf '%s\\n' {} >> .gitattributes",
                quote(self.dice.pick::<&str>(ATTRIBUTES))
            ),
        }
    }

    fn index_change(&mut self) -> Option<String> {
        let f = self.pick_tracked()?;
        let q = quote(&f);
        let new = self.new_path();
        let n = quote(&new);
        Some(match self.dice.below(10) {
            0 => format!("git add -- {q}"),
            1 => "git add -A 2>/dev/null".to_string(),
            2 => format!("printf 'i\\n' > {n} && git add -N -- {n}"),
            3 => format!("git rm -q --cached -- {q}"),
            4 => format!("git rm -q --cached -- {q} && git add -N -- {q}"),
            5 => format!("git rm -q -f -- {q}"),
            6 => format!("git mv -k -- {q} {n}"),
            7 => format!("git update-index --assume-unchanged -- {q}"),
            8 => format!("git update-index --skip-worktree -- {q}"),
            _ => format!("rm -f -- {q} && ln -s a.txt {q} && git add -- {q}"),
        })
    }

    fn merge(&mut self) -> String {
        if self.merged && self.dice.chance(50) {
            return "git merge --abort 2>/dev/null; true".to_string();
        }
        self.merged = true;
        "printf 'mine\\n' > both-added.txt; git add -A 2>/dev/null; git commit -q -m before-merge --no-verify; git merge -q other >/dev/null 2>&1; true".to_string()
    }

    fn index_format(&mut self) -> String {
        self.dice
            .pick(&[
                "git update-index --index-version 4",
                "git update-index --index-version 2",
                "git update-index --index-version 3",
                // Not under `index.skipHash` (see the world's setup).
                "[ \"$(git config --bool index.skipHash)\" = true ] || git update-index --split-index",
                "git update-index --no-split-index",
                "git update-index --untracked-cache",
                "git update-index --no-untracked-cache",
            ])
            .to_string()
    }

    /// Everything, the index too, made as old as a checkout long ago; or the index made as
    /// old as a file (its entries racy).
    fn age(&mut self) -> String {
        let ago = 10 + self.dice.below(5000);
        if self.dice.chance(50) {
            format!(
                "find . -path ./.git -prune -o -exec touch -h -d \"@$((T0 - {ago}))\" {{}} + ; touch -d \"@$((T0 - {ago}))\" \"$(git rev-parse --git-path index)\""
            )
        } else {
            match self.pick_tracked() {
                Some(f) => format!(
                    "touch -r {} \"$(git rev-parse --git-path index)\"",
                    quote(&f)
                ),
                None => "true".to_string(),
            }
        }
    }

    fn config_flip(&mut self) -> String {
        let d = &mut self.dice;
        match d.below(6) {
            0 => format!("git config core.fileMode {}", d.pick(&["true", "false"])),
            1 => format!("git config core.trustctime {}", d.pick(&["true", "false"])),
            2 => format!(
                "git config core.checkStat {}",
                d.pick(&["minimal", "default"])
            ),
            3 => format!(
                "git config core.autocrlf {}",
                d.pick(&["true", "input", "false"])
            ),
            4 => format!(
                "git config core.safecrlf {}",
                d.pick(&["true", "warn", "false"])
            ),
            _ => format!(
                "git config --unset-all status.showUntrackedFiles; {}",
                untracked_setting(d)
            ),
        }
    }

    /// A state undone after its comparison: an unreadable path (when the world is read as an
    /// unprivileged user), or a fifo named like a rules file where none is tracked.
    fn transient(&mut self) -> Undo {
        if self.unprivileged && self.dice.chance(70) {
            let tracked = self.tracked();
            let dirs: Vec<String> = tracked
                .iter()
                .filter_map(|t| Path::new(t).parent())
                .map(|p| p.to_string_lossy().into_owned())
                .filter(|p| !p.is_empty())
                .collect();
            let (target, mode) = match self.dice.below(5) {
                0 if !dirs.is_empty() => (self.dice.pick(&dirs).clone(), "111"),
                1 if !dirs.is_empty() => (self.dice.pick(&dirs).clone(), "444"),
                2 if !tracked.is_empty() => {
                    let f = self.dice.pick(&tracked).clone();
                    // Touched, so that it must be read.
                    self.sh(&format!("touch -- {}", quote(&f)));
                    (f, "000")
                }
                3 => {
                    let p = self.new_path();
                    self.sh(&format!(
                        "mkdir -p -- {q} && printf 's\\n' > {q}/secret",
                        q = quote(&p)
                    ));
                    (p, "000")
                }
                _ => {
                    let p = self.new_path();
                    self.sh(&format!(
                        "printf '*.txt\\n' > {}",
                        quote(&format!("{p}.rules"))
                    ));
                    let dir = self.pick_dir();
                    let rules = if dir.is_empty() {
                        ".gitignore".to_string()
                    } else {
                        format!("{dir}/.gitignore")
                    };
                    if tracked.contains(&rules) {
                        return Undo(None);
                    }
                    self.sh(&format!("printf '*.txt\\n' >> {}", quote(&rules)));
                    (rules, "000")
                }
            };
            // chmod follows a symbolic link: one to `.` (a kind swap makes them) would lock
            // the worktree itself, where git cannot even start (seed 20270776).
            if self
                .wt
                .join(&target)
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            {
                return Undo(None);
            }
            let q = quote(&target);
            self.sh(&format!("chmod {mode} -- {q}"));
            let back = if mode == "000" && !Path::new(&self.wt.join(&target)).is_dir() {
                "644"
            } else {
                "755"
            };
            return Undo(Some(format!("chmod {back} -- {q}")));
        }
        let tracked = self.tracked();
        let dir = self.pick_dir();
        let name = *self.dice.pick(&[".gitignore", ".gitattributes"]);
        let rel = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        if tracked.contains(&rel) || self.wt.join(&rel).symlink_metadata().is_ok() {
            return Undo(None);
        }
        self.sh(&format!("mkfifo -- {}", quote(&rel)));
        self.fifo_rules.push(rel.clone());
        Undo(Some(format!("rm -f -- {}", quote(&rel))))
    }
}

/// How many kinds of mutation [`World::mutation`] knows.
const MUTATIONS: usize = 21;

/// `old` with its bytes changed but its length kept (line ends among them, sometimes).
fn same_size_edit(old: &[u8], d: &mut Dice) -> String {
    let mut s: Vec<u8> = old.to_vec();
    let i = d.below(s.len());
    s[i] = match s[i] {
        b'\n' if d.chance(50) => b'\r',
        b'a'..=b'y' => s[i] + 1,
        b'z' => b'a',
        _ => b'Q',
    };
    // The shell gets text: a NUL cannot pass through printf '%s'.
    String::from_utf8_lossy(&s).replace('\0', "0")
}

/// sh that writes `content` to `path` (creating its directory).
fn write_file(path: &str, content: &str) -> String {
    let dir = Path::new(path)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mkdir = if dir.is_empty() {
        String::new()
    } else {
        format!("mkdir -p -- {} && ", quote(&dir))
    };
    let bytes = content
        .bytes()
        .map(|b| format!("\\{b:03o}"))
        .collect::<String>();
    format!("{mkdir}printf '{bytes}' > {}\n", quote(path))
}

/// A `status.showUntrackedFiles` setting, valueless and empty among them.
fn untracked_setting(d: &mut Dice) -> String {
    match d.below(9) {
        0 => "git config status.showUntrackedFiles no\n".into(),
        1 => "git config status.showUntrackedFiles all\n".into(),
        2 => "git config status.showUntrackedFiles normal\n".into(),
        3 => "git config status.showUntrackedFiles true\n".into(),
        4 => "git config status.showUntrackedFiles false\n".into(),
        5 => "printf '[status]\\n\\tshowUntrackedFiles\\n' >> \"$(git rev-parse --git-common-dir)/config\"\n".into(),
        6 => "git config status.showUntrackedFiles ''\n".into(),
        _ => String::new(),
    }
}
