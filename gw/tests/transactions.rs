//! Fault injection through the transaction seam: every step of create and delete is made
//! to fail, before and after it takes effect, and the world must come out consistent —
//! nothing this invocation created remains, everything that existed before is intact,
//! and git's worktree registrations agree with `state.json`.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::sync::Arc;

use e2e::TestEnv;
use grove::env::Env;
use grove::ops::create::{CreateOptions, Selection, SourceFields};
use grove::ops::delete::DeleteOptions;
use grove::ops::tx::Faults;
use grove::ops::{self, Ctx, Quiet};

fn hermetic() {
    grove::proc::set_defaults(grove::proc::Defaults {
        ssh_command: None,
        env: grove::proc::hermetic_env(),
    });
}

/// Three repositories with origins; `other` is a workspace over api and web; web already
/// has a branch `feat` with a commit of its own; api's main checkout has an untracked file.
struct World {
    env: TestEnv,
    gw_env: Env,
}

impl World {
    fn new() -> World {
        hermetic();
        let env = TestEnv::new();
        for r in ["api", "web", "svc"] {
            env.repo(r);
        }
        let web = env.repos.join("web");
        env.git(&web, &["branch", "feat"]);
        env.git(&web, &["switch", "-q", "feat"]);
        env.commit(
            &web,
            "pre.txt",
            "pre-existing work\n",
            "pre-existing commit",
        );
        env.git(&web, &["switch", "-q", "main"]);
        std::fs::write(env.repos.join("api/notes.txt"), "mine\n").unwrap();
        let gw_env = Env::for_home(&env.home, &env.root);
        let w = World { env, gw_env };
        w.with_ctx(None, |ctx| {
            ops::init::init(ctx, std::slice::from_ref(&w.env.repos)).map(|_| ())
        })
        .unwrap();
        w.with_ctx(None, |ctx| {
            ops::create::create(ctx, opts("other", &["api", "web"])).map(|_| ())
        })
        .unwrap();
        w
    }

    fn with_ctx<T>(&self, faults: Option<Arc<Faults>>, f: impl FnOnce(&Ctx<'_>) -> T) -> T {
        let mut ctx = Ctx::new(&self.gw_env, &Quiet);
        ctx.faults = faults;
        f(&ctx)
    }

    /// Everything a failed operation must leave as it found.
    fn snapshot(&self) -> String {
        let mut out = String::new();
        out.push_str(
            &std::fs::read_to_string(self.env.grove_home.join("state.json")).unwrap_or_default(),
        );
        for r in ["api", "web", "svc"] {
            let dir = self.env.repos.join(r);
            out.push_str(&format!("\n== {r}\n"));
            out.push_str(&self.env.git(
                &dir,
                &[
                    "for-each-ref",
                    "--format=%(refname) %(objectname)",
                    "refs/heads",
                ],
            ));
            out.push('\n');
            out.push_str(&self.env.git(&dir, &["worktree", "list", "--porcelain"]));
            out.push('\n');
            out.push_str(&self.env.git(&dir, &["status", "--porcelain"]));
        }
        out.push_str(&format!(
            "\n== workspaces\n{:?}",
            listing(&self.env.workspace_dir())
        ));
        out.push_str(&format!(
            "\n== operations\n{:?}",
            listing(&self.env.grove_home.join("operations"))
        ));
        out
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.retain(|n| !n.ends_with(".lock"));
    v.sort();
    v
}

fn opts(name: &str, repos: &[&str]) -> CreateOptions {
    CreateOptions {
        name: Some(name.into()),
        branch: name.into(),
        selection: Selection::Repos(repos.iter().map(|s| s.to_string()).collect()),
        track: false,
        source: SourceFields::default(),
        replace: false,
        force: false,
        expect: None,
    }
}

fn branch_tip(env: &TestEnv, repo: &str, branch: &str) -> Option<String> {
    let r = env.git_run(
        &env.repos.join(repo),
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    );
    (r.status == 0).then(|| r.stdout.trim().to_string())
}

#[test]
fn every_step_of_create_fails_cleanly() {
    let mut covered = 0;
    for after in [false, true] {
        for at in 0.. {
            let w = World::new();
            let before = w.snapshot();
            let faults = Faults::new(at, after);
            let result = w.with_ctx(Some(faults.clone()), |ctx| {
                ops::create::create(ctx, opts("feat", &["api", "web", "svc"]))
            });
            if faults.seen() <= at {
                result.expect("with no fault the create succeeds");
                assert!(
                    w.env.workspace_dir().join("feat/web/pre.txt").exists(),
                    "web's existing branch is checked out"
                );
                break;
            }
            let err = result.expect_err("the injected fault fails the create");
            assert_ne!(
                err.code,
                grove::error::Code::RecoveryPending,
                "rollback completes: {}",
                err.message
            );
            assert_eq!(
                w.snapshot(),
                before,
                "fault at step {at} ({}) left traces",
                if after { "after" } else { "before" }
            );
            covered += 1;
        }
    }
    assert!(
        covered >= 10,
        "create has at least five steps to fail, before and after ({covered})"
    );
}

#[test]
fn every_step_of_delete_fails_cleanly_or_is_completed_by_recovery() {
    let mut covered = 0;
    for after in [false, true] {
        for at in 0.. {
            let w = World::new();
            w.with_ctx(None, |ctx| {
                ops::create::create(ctx, opts("feat", &["api", "web", "svc"]))
            })
            .unwrap();
            let web_tip = branch_tip(&w.env, "web", "feat");
            let before = w.snapshot();
            let faults = Faults::new(at, after);
            let result = w.with_ctx(Some(faults.clone()), |ctx| {
                ops::delete::delete(
                    ctx,
                    DeleteOptions {
                        names: vec!["feat".into()],
                        force: false,
                        expect: None,
                    },
                )
            });
            let report = result.expect("delete reports per workspace");
            if faults.seen() <= at {
                assert!(report.failure().is_none());
                break;
            }
            covered += 1;
            let state = std::fs::read_to_string(w.env.grove_home.join("state.json")).unwrap();
            if state.contains("\"feat\"") {
                // Failed before the commit point: everything is back as it was.
                assert!(report.failure().is_some());
                assert_eq!(
                    w.snapshot(),
                    before,
                    "fault at step {at} ({after}) left traces"
                );
                continue;
            }
            // Past the commit point: recovery finishes the job.
            let recovered = w.with_ctx(None, ops::recover::recover_all).unwrap();
            assert!(
                recovered.iter().all(|r| r.outcome == "completed"),
                "{recovered:?}"
            );
            assert_eq!(branch_tip(&w.env, "api", "feat"), None);
            assert_eq!(branch_tip(&w.env, "svc", "feat"), None);
            assert_eq!(
                branch_tip(&w.env, "web", "feat"),
                web_tip,
                "the pre-existing branch survives"
            );
            assert!(!state.contains("\"feat\""));
            for r in ["api", "web", "svc"] {
                let list = w
                    .env
                    .git(&w.env.repos.join(r), &["worktree", "list", "--porcelain"]);
                assert!(
                    !list.contains("/feat/"),
                    "{r}: a registration of the deleted workspace remains:\n{list}"
                );
            }
            assert!(listing(&w.env.grove_home.join("operations")).is_empty());
            assert!(w.env.repos.join("api/notes.txt").exists());
            assert!(w.env.workspace_dir().join("other/api").is_dir());
        }
    }
    assert!(covered >= 8, "delete has several steps to fail ({covered})");
}
