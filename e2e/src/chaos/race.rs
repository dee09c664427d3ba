//! The race suite: sixteen `gw` processes at once, a seeded mix of `create`, `delete`,
//! `rename`, `sync`, `add-repo`, `remove-repo`, `prune` and `prune branches` over three
//! shared repositories and a small pool of workspace names (so they collide), with creates
//! of different names on one shared branch (one of them wins, the others get a conflict). Every command must succeed or
//! fail cleanly — one valid envelope, an exit code of its error's class, an error a race
//! can explain (never `INTERNAL`, a panic or a non-JSON stdout) — and afterwards, once
//! every process they started has ended, the auditor must find nothing: git agrees with
//! state (no worktree on another workspace's branch), nothing leaked, no journal left.
//!
//! The world: repositories `api`, `web`, `svc` with origins that moved on after the
//! workspaces were made (so `sync` rebases); workspaces `i0`..`i5` over different subsets,
//! `i0`, `i1` and `i4` created long ago (so `prune` deletes them), `i1` and `i3` with a
//! commit of their own; a dirty tracked file in `web`'s checkout, an untracked one in
//! `api`'s; a merged branch `done` in every repository (so `prune branches` has something
//! to delete while deletes and creates come and go).

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::world::{Template, big_repo};
use super::{Finding, MARK_VAR, Rng, error_code, judge_output, settle};
use crate::audit::{Baseline, Preserved};

const REPOS: [&str; 3] = ["api", "web", "svc"];
const INITIAL: [(&str, &str, bool); 6] = [
    ("i0", "api,web,svc", true),
    ("i1", "api,web", true),
    ("i2", "web,svc", false),
    ("i3", "api,svc", false),
    ("i4", "api", true),
    ("i5", "svc", false),
];
const NEW: [&str; 6] = ["n0", "n1", "n2", "n3", "n4", "n5"];
/// The branch creates of different names race for.
const SHARED: &str = "feat/shared";

/// Errors a race explains: the other process got there first, or held the lock too long.
pub const CLEAN_CODES: [&str; 8] = [
    "WORKSPACE_EXISTS",
    "WORKSPACE_NOT_FOUND",
    "WORKTREE_EXISTS",
    "BRANCH_CONFLICT",
    "WORKTREE_DIRTY",
    "STATE_CHANGED",
    "TRANSIENT",
    "NO_WORKSPACES",
];

#[derive(Debug, Clone)]
pub struct Config {
    pub gw: PathBuf,
    pub dir: PathBuf,
    /// Processes per run (16).
    pub procs: usize,
    /// Files per repository.
    pub files: usize,
}

/// How one command of a run ended.
#[derive(Debug, Clone)]
pub struct JobEnd {
    pub args: Vec<String>,
    /// "exit 0 ok", "exit 4 WORKSPACE_EXISTS", …
    pub end: String,
    pub took: Duration,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub seed: u64,
    pub jobs: Vec<JobEnd>,
    pub findings: Vec<Finding>,
    pub took: Duration,
}

impl Outcome {
    pub fn headline(&self) -> String {
        let ok = self.jobs.iter().filter(|j| j.end.ends_with(" ok")).count();
        format!(
            "seed {} | {} processes, {ok} ok, {} refused | {} ms | {}",
            self.seed,
            self.jobs.len(),
            self.jobs.len() - ok,
            self.took.as_millis(),
            if self.findings.is_empty() {
                "clean".to_string()
            } else {
                format!("{} finding(s)", self.findings.len())
            }
        )
    }
}

/// The commands of the run with this seed: the first renames an initial workspace and the
/// second prunes (the pair that races worst), the third prunes branches and the next two
/// create new workspaces on one branch, the rest are drawn with weights.
pub fn jobs(seed: u64, procs: usize) -> Vec<Vec<String>> {
    let mut rng = Rng::new(seed);
    let initial: Vec<&str> = INITIAL.iter().map(|(n, _, _)| *n).collect();
    let all: Vec<&str> = initial.iter().chain(NEW.iter()).copied().collect();
    let subset = |rng: &mut Rng| {
        let bits = 1 + rng.below(7);
        REPOS
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, r)| *r)
            .collect::<Vec<_>>()
            .join(",")
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let mut lines: Vec<Vec<String>> = Vec::new();
    lines.push(s(&["rename", rng.pick(&initial), "--to", rng.pick(&NEW)]));
    lines.push(s(&["prune", "--min-age", "7d", "--yes"]));
    lines.push(s(&["prune", "branches", "--yes"]));
    let shared = |rng: &mut Rng, name: &str| {
        let repos = subset(rng);
        s(&["create", name, "-b", SHARED, "-r", &repos])
    };
    // Two different names on one branch: one wins, the other is told whose it is.
    let first = rng.pick(&NEW);
    let others: Vec<&str> = NEW.iter().copied().filter(|n| *n != first).collect();
    let second = rng.pick(&others);
    lines.push(shared(&mut rng, first));
    lines.push(shared(&mut rng, second));
    const WEIGHTS: [(&str, u64); 9] = [
        ("create", 4),
        ("delete", 3),
        ("rename", 3),
        ("sync", 2),
        ("add-repo", 2),
        ("remove-repo", 2),
        ("prune", 1),
        ("prune-branches", 1),
        ("create-shared", 1),
    ];
    let total: u64 = WEIGHTS.iter().map(|(_, w)| w).sum();
    // A command on an existing workspace is the interesting race; one on a name that was
    // never made is refused at once. Two in three aim at the workspaces of the world.
    let target = |rng: &mut Rng| {
        if rng.below(3) < 2 {
            rng.pick(&initial)
        } else {
            rng.pick(&all)
        }
    };
    while lines.len() < procs {
        let mut roll = rng.below(total);
        let kind = WEIGHTS
            .iter()
            .find(|(_, w)| {
                if roll < *w {
                    true
                } else {
                    roll -= w;
                    false
                }
            })
            .map(|(k, _)| *k)
            .unwrap();
        let line = match kind {
            "create" => {
                let name = if rng.below(4) == 0 {
                    rng.pick(&initial)
                } else {
                    rng.pick(&NEW)
                };
                let repos = subset(&mut rng);
                s(&["create", name, "-b", name, "-r", &repos])
            }
            "delete" => s(&["delete", target(&mut rng)]),
            "rename" => {
                let from = target(&mut rng);
                // Never to its own name (a usage error, not a race).
                let to: Vec<&str> = NEW.iter().copied().filter(|n| *n != from).collect();
                s(&["rename", from, "--to", rng.pick(&to)])
            }
            "sync" => s(&["sync", target(&mut rng)]),
            "add-repo" => {
                let name = target(&mut rng);
                let repos = subset(&mut rng);
                s(&["add-repo", name, "-r", &repos])
            }
            "remove-repo" => {
                let name = target(&mut rng);
                let repos = subset(&mut rng);
                s(&["remove-repo", name, "-r", &repos])
            }
            "prune-branches" => s(&["prune", "branches", "--yes"]),
            "create-shared" => {
                let name = rng.pick(&NEW);
                shared(&mut rng, name)
            }
            _ => s(&["prune", "--min-age", "7d", "--yes"]),
        };
        lines.push(line);
    }
    for l in &mut lines {
        l.extend(["--format".to_string(), "json".to_string()]);
    }
    lines
}

pub struct Suite {
    cfg: Config,
    tpl: Template,
    baseline: Baseline,
    preserved: Preserved,
}

impl Suite {
    pub fn prepare(cfg: Config) -> Suite {
        let tpl = Template::new(&cfg.dir, "race");
        let env = tpl.env(&cfg.gw);
        for r in REPOS {
            big_repo(&env, r, cfg.files);
        }
        env.gw(&["init", env.repos.to_str().unwrap()]).success();
        for (name, repos, _) in INITIAL {
            env.gw(&["create", name, "-b", name, "-r", repos]).success();
        }
        env.commit(&env.ws("i1").join("api"), "i1.txt", "i1 work\n", "i1 work");
        env.commit(&env.ws("i3").join("svc"), "i3.txt", "i3 work\n", "i3 work");
        env.edit_state(|s| {
            for w in s.as_array_mut().unwrap() {
                if INITIAL.iter().any(|(n, _, old)| *old && w["name"] == *n) {
                    w["created_at"] = "2001-01-01T00:00:00".into();
                }
            }
        });
        for r in REPOS {
            env.git(&env.repos.join(r), &["branch", "done", "main"]);
            env.push_upstream(r, "main", "upstream.txt", "upstream moved on\n");
        }
        std::fs::write(env.repos.join("web/README.md"), "edited, not committed\n").unwrap();
        std::fs::write(env.repos.join("api/notes.txt"), "untracked\n").unwrap();
        let baseline = Baseline::record(&env.world());
        let mut preserved = Preserved::new();
        preserved
            .file(&env.repos.join("web/README.md"))
            .file(&env.repos.join("api/notes.txt"))
            .commits(&env.repos.join("api"), "i1", true)
            .commits(&env.repos.join("svc"), "i3", true);
        tpl.seal(&env, &baseline, &preserved);
        Suite {
            cfg,
            tpl,
            baseline,
            preserved,
        }
    }

    /// One run: the seed's jobs all at once, then the audit.
    pub fn run(&mut self, seed: u64) -> Outcome {
        let env = self.tpl.reset(&self.cfg.gw);
        let mark = format!("race-{seed}-{}", std::process::id());
        let lines = jobs(seed, self.cfg.procs);
        let start = Instant::now();
        let children: Vec<(Vec<String>, Child, Instant)> = lines
            .iter()
            .map(|args| {
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                let mut cmd = env.gw_cmd(&argv);
                cmd.env(MARK_VAR, &mark)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                (
                    args.clone(),
                    cmd.spawn().expect("gw starts"),
                    Instant::now(),
                )
            })
            .collect();
        let mut findings = Vec::new();
        let mut ends = Vec::new();
        for (args, child, started) in children {
            let line = format!("gw {}", args.join(" "));
            let out = child.wait_with_output().expect("gw runs");
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            let code = out.status.code();
            let end = match judge_output(&stdout, code) {
                Err(e) => {
                    findings.push(Finding::new(
                        "envelope_invalid",
                        format!("{line}: {e}; stderr: {}", super::clip(&stderr, 300)),
                    ));
                    format!("exit {code:?}, bad output")
                }
                Ok(None) => {
                    findings.push(Finding::new(
                        "envelope_invalid",
                        format!(
                            "{line}: nothing on stdout ({}); stderr: {}",
                            match out.status.signal() {
                                Some(s) => format!("killed by signal {s}"),
                                None => format!("exit {code:?}"),
                            },
                            super::clip(&stderr, 300)
                        ),
                    ));
                    format!("exit {code:?}, no envelope")
                }
                Ok(Some(v)) => match error_code(&v) {
                    None => format!("exit {} ok", code.unwrap_or(-1)),
                    Some(c) => {
                        if !CLEAN_CODES.contains(&c) {
                            findings.push(Finding::new(
                                if c == "INTERNAL" {
                                    "internal_error"
                                } else {
                                    "unexpected_error"
                                },
                                format!(
                                    "{line}: {c}: {}",
                                    super::clip(v["error"]["message"].as_str().unwrap_or(""), 400)
                                ),
                            ));
                        }
                        format!("exit {} {c}", code.unwrap_or(-1))
                    }
                },
            };
            ends.push(JobEnd {
                args,
                end,
                took: started.elapsed(),
            });
        }
        findings.extend(settle(&mark, "the last gw"));
        findings.extend(
            env.world()
                .audit_with(&self.baseline, &self.preserved)
                .into_iter()
                .map(Finding::from),
        );
        Outcome {
            seed,
            jobs: ends,
            findings,
            took: start.elapsed(),
        }
    }

    pub fn live(&self) -> &Path {
        &self.tpl.live
    }

    pub fn remove(self) {
        self.tpl.remove();
    }
}
