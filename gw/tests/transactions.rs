//! Fault injection through the transaction seam: every step of create, delete, add-repo,
//! remove-repo, rename and reset is made to fail, before and after it takes effect, and
//! the world must come out consistent — nothing this invocation created remains,
//! everything that existed before is intact (byte for byte: branches with their commits,
//! dirty files, other workspaces), and git's worktree registrations agree with
//! `state.json`. A fault before the commit point must leave the world exactly as it was; a
//! fault after it must, once `gw doctor --fix`'s recovery has run, leave the world exactly
//! as a run without the fault does.
#![allow(clippy::disallowed_methods, clippy::print_stderr)]

use std::path::Path;
use std::sync::Arc;

use e2e::TestEnv;
use grove::env::Env;
use grove::error::{Code, Error};
use grove::ops::add_repo::AddRepoOptions;
use grove::ops::create::{CreateOptions, Selection, SourceFields};
use grove::ops::delete::DeleteOptions;
use grove::ops::remove_repo::RemoveRepoOptions;
use grove::ops::rename::RenameOptions;
use grove::ops::reset::ResetOptions;
use grove::ops::tx::Faults;
use grove::ops::{self, Ctx, Quiet};

fn hermetic() {
    grove::proc::set_defaults(grove::proc::Defaults {
        ssh_command: None,
        env: e2e::HERMETIC_GIT
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
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
            ops::init::init(ctx, std::slice::from_ref(&w.env.repos), false).map(|_| ())
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

    /// Everything a failed operation must leave as it found: state, every repository's
    /// branches (with their commits), worktree registrations and status, every file of
    /// every worktree of every workspace (with its HEAD and status), the workspace
    /// directory's tree and the journals. Paths are relative to the test root and
    /// `created_at` is dropped, so that snapshots of two worlds can be compared.
    fn snapshot(&self) -> String {
        let mut out = String::new();
        let state =
            std::fs::read_to_string(self.env.grove_home.join("state.json")).unwrap_or_default();
        if let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&state) {
            for w in v.as_array_mut().into_iter().flatten() {
                w.as_object_mut().unwrap().remove("created_at");
            }
            out.push_str(&serde_json::to_string_pretty(&v).unwrap());
        } else {
            out.push_str(&state);
        }
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
        let ws_dir = self.env.workspace_dir();
        // A trash entry is named `<name>-<nanoseconds>`: the time is not the world's.
        let tree: Vec<String> = e2e::tree(&ws_dir, 4)
            .into_iter()
            .map(|p| match p.strip_prefix(".trash/") {
                Some(rest) => {
                    let (entry, inside) = rest.split_once('/').unwrap_or((rest, ""));
                    let name = entry.rsplit_once('-').map_or(entry, |(n, _)| n);
                    format!(".trash/{name}-N/{inside}")
                }
                None => p,
            })
            .collect();
        out.push_str(&format!("\n== workspaces\n{tree:?}"));
        for r in ["api", "web", "svc"] {
            // The tips a kept delete keeps, by their repository position (the id is a time).
            let kept = self.env.git(
                &self.env.repos.join(r),
                &["for-each-ref", "--format=%(objectname)", "refs/grove/"],
            );
            out.push_str(&format!("\n== {r} kept tips\n{kept}"));
        }
        for ws in listing(&ws_dir) {
            for repo in listing(&ws_dir.join(&ws)) {
                let wt = ws_dir.join(&ws).join(&repo);
                if !wt.join(".git").is_file() {
                    continue;
                }
                let st = self.env.worktree_state(&wt);
                out.push_str(&format!(
                    "\n== {ws}/{repo}: HEAD {} on {:?}\n{}\n",
                    st.head, st.branch, st.status
                ));
                for (path, bytes) in st.files {
                    out.push_str(&format!("{path}: {:?}\n", String::from_utf8_lossy(&bytes)));
                }
            }
        }
        out.push_str(&format!(
            "\n== operations\n{:?}",
            listing(&self.env.grove_home.join("operations"))
        ));
        out.replace(e2e::s(&self.env.root), "<root>")
    }

    /// Runs recovery (what `gw doctor --fix` does first) and asserts it found the
    /// interrupted operation and completed it.
    ///
    /// The journal's lock is an `flock`, and the other tests of this process spawn git
    /// concurrently: a child between fork and exec briefly holds a copy of every open
    /// descriptor, so the lock can look held for an instant after the failed command let
    /// go of it. Recovery rightly leaves a held journal alone; this looks again.
    fn recover(&self) {
        for _ in 0..100 {
            let recovered = self.with_ctx(None, ops::recover::recover_all).unwrap();
            if recovered.is_empty() {
                std::thread::sleep(std::time::Duration::from_millis(20));
                continue;
            }
            assert!(
                recovered
                    .iter()
                    .all(|r| r.outcome == grove::ops::recover::RecoveryOutcome::Completed),
                "{recovered:?}"
            );
            return;
        }
        panic!("recovery never found the interrupted operation");
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
        replacing: None,
        copy: None,
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

/// Runs `op` once without a fault, then once per step with that step failing before it
/// takes effect and once with it failing after, each time in a fresh world made by
/// `prepare`. A run the fault made fail before its commit point must leave the world as it
/// found it; one that got past it leaves a journal, and after recovery the world must be
/// exactly what the run without a fault produced. `check` looks at that successful
/// world. Returns the number of faults injected.
fn every_fault(
    prepare: impl Fn(&World),
    op: impl Fn(&Ctx<'_>) -> Result<(), Error>,
    check: impl Fn(&World),
) -> usize {
    let clean = World::new();
    prepare(&clean);
    clean
        .with_ctx(None, &op)
        .expect("without a fault the command succeeds");
    check(&clean);
    clean.env.assert_git_agrees_with_state();
    let success = clean.snapshot();

    let mut covered = 0;
    for after in [false, true] {
        let when = if after { "after" } else { "before" };
        for at in 0.. {
            let w = World::new();
            prepare(&w);
            let before = w.snapshot();
            // What `prepare` itself made disagree with state (reset's test moves worktrees
            // off their branch, as a user would): a rollback must leave exactly that.
            let made_by_test = w.env.world().git_vs_state();
            let faults = Faults::new(at, after);
            let result = w.with_ctx(Some(faults.clone()), &op);
            if faults.seen() <= at {
                result.expect("with no fault the command succeeds");
                break;
            }
            covered += 1;
            if let Err(e) = &result {
                assert_ne!(
                    e.code,
                    Code::RecoveryPending,
                    "fault {when} step {at}: the rollback completes: {}",
                    e.message
                );
            }
            if listing(&w.env.grove_home.join("operations")).is_empty() {
                // Stopped before the commit point: everything is back as it was.
                assert!(
                    result.is_err(),
                    "fault {when} step {at}: a rolled-back command reports a failure"
                );
                assert_eq!(w.snapshot(), before, "fault {when} step {at} left traces");
                assert_eq!(
                    w.env.world().git_vs_state(),
                    made_by_test,
                    "fault {when} step {at}: git and state disagree beyond what the test made"
                );
            } else {
                // Past the commit point: recovery finishes the job.
                w.recover();
                assert_eq!(
                    w.snapshot(),
                    success,
                    "fault {when} step {at}: recovery did not finish the job"
                );
                w.env.assert_git_agrees_with_state();
            }
        }
    }
    covered
}

fn create_feat(w: &World, repos: &[&str]) {
    w.with_ctx(None, |ctx| ops::create::create(ctx, opts("feat", repos)))
        .unwrap();
}

/// A modified tracked file and an untracked one in workspace `feat`'s `repo`.
fn make_dirty(w: &World, repo: &str) {
    let wt = w.env.workspace_dir().join("feat").join(repo);
    std::fs::write(wt.join("README.md"), "changed, not committed\n").unwrap();
    std::fs::write(wt.join("scratch.txt"), "untracked work\n").unwrap();
}

fn failure(e: Option<&Error>) -> Result<(), Error> {
    match e {
        Some(e) => Err(e.clone()),
        None => Ok(()),
    }
}

#[test]
fn every_step_of_create_fails_cleanly() {
    let covered = every_fault(
        |_| {},
        |ctx| ops::create::create(ctx, opts("feat", &["api", "web", "svc"])).map(|_| ()),
        |w| {
            assert!(
                w.env.workspace_dir().join("feat/web/pre.txt").exists(),
                "web's existing branch is checked out"
            );
        },
    );
    eprintln!("create: {covered} faults");
    assert!(
        covered >= 10,
        "create has at least five steps to fail, before and after ({covered})"
    );
}

/// `gw create --copy`: the copies are steps of the transaction too; a fault at any step, the
/// copies' included, leaves no copy (nor anything else) behind.
#[test]
fn every_step_of_create_copy_fails_cleanly() {
    let covered = every_fault(
        |w| {
            for r in ["api", "svc"] {
                let repo = w.env.repos.join(r);
                std::fs::write(
                    repo.join(".grove.toml"),
                    "copy = [\"cache\", \".env.local\"]\n",
                )
                .unwrap();
                std::fs::write(repo.join(".git/info/exclude"), "cache/\n").unwrap();
                std::fs::create_dir_all(repo.join("cache/deep")).unwrap();
                std::fs::write(repo.join("cache/deep/built.o"), "object\n").unwrap();
                std::fs::write(repo.join(".env.local"), "KEY=1\n").unwrap();
            }
        },
        |ctx| {
            let mut o = opts("feat", &["api", "web", "svc"]);
            o.copy = Some(true);
            ops::create::create(ctx, o).map(|_| ())
        },
        |w| {
            for r in ["api", "svc"] {
                let wt = w.env.workspace_dir().join("feat").join(r);
                assert!(
                    wt.join("cache/deep/built.o").is_file(),
                    "{r}'s cache is copied"
                );
                assert!(wt.join(".env.local").is_file());
            }
        },
    );
    eprintln!("create --copy: {covered} faults");
    assert!(
        covered >= 14,
        "create --copy has at least seven steps to fail, before and after ({covered})"
    );
}

#[test]
fn every_step_of_delete_fails_cleanly_or_is_completed_by_recovery() {
    let web_tip = std::sync::OnceLock::new();
    let covered = every_fault(
        |w| {
            create_feat(w, &["api", "web", "svc"]);
            let _ = web_tip.set(branch_tip(&w.env, "web", "feat"));
        },
        |ctx| {
            let report = ops::delete::delete(
                ctx,
                DeleteOptions {
                    names: vec!["feat".into()],
                    force: false,
                    purge: false,
                    expect: None,
                },
            )?;
            failure(report.failure())
        },
        |w| {
            assert_eq!(branch_tip(&w.env, "api", "feat"), None);
            assert_eq!(branch_tip(&w.env, "svc", "feat"), None);
            assert_eq!(
                branch_tip(&w.env, "web", "feat"),
                *web_tip.get().unwrap(),
                "the pre-existing branch survives"
            );
            assert!(!w.env.workspace_dir().join("feat").exists());
            assert!(w.env.repos.join("api/notes.txt").exists());
            assert!(w.env.workspace_dir().join("other/api").is_dir());
        },
    );
    eprintln!("delete: {covered} faults");
    assert!(covered >= 8, "delete has several steps to fail ({covered})");
}

/// A restore of a workspace deleted with work in it: before its commit point a fault leaves
/// the entry whole in the trash (the directory moved back, the registrations and branches it
/// made removed); after it, recovery drops the rest of the entry.
#[test]
fn every_step_of_restore_fails_cleanly_or_is_completed_by_recovery() {
    let covered = every_fault(
        |w| {
            create_feat(w, &["api", "web", "svc"]);
            make_dirty(w, "api");
            w.with_ctx(None, |ctx| {
                ops::delete::delete(
                    ctx,
                    DeleteOptions {
                        names: vec!["feat".into()],
                        force: true,
                        purge: false,
                        expect: None,
                    },
                )
            })
            .unwrap();
        },
        |ctx| {
            ops::restore::restore(
                ctx,
                ops::restore::RestoreOptions {
                    name: Some("feat".into()),
                    as_name: None,
                    expect: None,
                },
            )
            .map(|_| ())
        },
        |w| {
            let api = w.env.workspace_dir().join("feat/api");
            assert_eq!(
                std::fs::read_to_string(api.join("scratch.txt")).unwrap(),
                "untracked work\n"
            );
            assert!(branch_tip(&w.env, "api", "feat").is_some());
            assert!(
                e2e::tree(&w.env.workspace_dir().join(".trash"), 1).is_empty(),
                "nothing is left in the trash"
            );
        },
    );
    eprintln!("restore: {covered} faults");
    assert!(
        covered >= 10,
        "restore has several steps to fail ({covered})"
    );
}

#[test]
fn every_step_of_add_repo_fails_cleanly() {
    let covered = every_fault(
        |w| {
            create_feat(w, &["api"]);
            make_dirty(w, "api");
        },
        |ctx| {
            let report = ops::add_repo::add_repo(
                ctx,
                AddRepoOptions {
                    name: Some("feat".into()),
                    repos: vec!["web".into(), "svc".into()],
                    copy: None,
                    expect: None,
                },
            )?;
            failure(report.failure.as_ref())
        },
        |w| {
            assert_eq!(w.env.workspace_repos("feat"), ["api", "web", "svc"]);
            assert!(
                w.env.workspace_dir().join("feat/web/pre.txt").exists(),
                "web's existing branch is checked out"
            );
        },
    );
    // Two worktrees added in parallel and the state change, each failed before and after.
    assert_eq!(covered, 6, "add-repo's fault points");
}

#[test]
fn every_step_of_remove_repo_fails_cleanly_or_is_completed_by_recovery() {
    let covered = every_fault(
        |w| {
            create_feat(w, &["api", "web", "svc"]);
            make_dirty(w, "web");
        },
        |ctx| {
            let report = ops::remove_repo::remove_repo(
                ctx,
                RemoveRepoOptions {
                    name: Some("feat".into()),
                    repos: vec!["api".into(), "svc".into()],
                    force: false,
                    expect: None,
                },
            )?;
            failure(report.failure.as_ref())
        },
        |w| {
            assert_eq!(w.env.workspace_repos("feat"), ["web"]);
            assert_eq!(branch_tip(&w.env, "api", "feat"), None);
            assert_eq!(branch_tip(&w.env, "svc", "feat"), None);
            assert!(!w.env.workspace_dir().join("feat/api").exists());
        },
    );
    // Two quarantine moves and the state change (the commit point), then two prunes and
    // two branch deletions, each failed before and after.
    assert_eq!(covered, 14, "remove-repo's fault points");
}

#[test]
fn every_step_of_rename_fails_cleanly() {
    let covered = every_fault(
        |w| {
            create_feat(w, &["api", "web", "svc"]);
            make_dirty(w, "api");
        },
        |ctx| {
            ops::rename::rename(
                ctx,
                RenameOptions {
                    name: Some("feat".into()),
                    to: "renamed".into(),
                    expect: None,
                },
            )
            .map(|_| ())
        },
        |w| {
            assert_eq!(w.env.workspace_repos("renamed"), ["api", "web", "svc"]);
            assert_eq!(
                std::fs::read_to_string(w.env.workspace_dir().join("renamed/api/scratch.txt"))
                    .unwrap(),
                "untracked work\n"
            );
            assert!(!w.env.workspace_dir().join("feat").exists());
        },
    );
    // The move, three registration repairs and the state change, before and after.
    assert_eq!(covered, 10, "rename's fault points");
}

#[test]
fn every_step_of_reset_fails_cleanly() {
    let covered = every_fault(
        |w| {
            create_feat(w, &["api", "web", "svc"]);
            let ws = w.env.workspace_dir().join("feat");
            // api wandered to a branch of its own, svc to a detached HEAD; web is on its
            // branch with uncommitted work (synced around, never touched).
            w.env.git(&ws.join("api"), &["switch", "-q", "-c", "side"]);
            w.env
                .commit(&ws.join("api"), "side.txt", "side\n", "on the side");
            w.env.git(&ws.join("svc"), &["switch", "-q", "--detach"]);
            make_dirty(w, "web");
        },
        |ctx| {
            let report = ops::reset::reset(
                ctx,
                ResetOptions {
                    name: Some("feat".into()),
                    discard: false,
                    expect: None,
                },
            )?;
            failure(report.0.failure.as_ref())
        },
        |w| {
            let ws = w.env.workspace_dir().join("feat");
            for repo in ["api", "svc"] {
                assert_eq!(
                    w.env.git(&ws.join(repo), &["branch", "--show-current"]),
                    "feat",
                    "{repo} is back on its branch"
                );
            }
            assert!(branch_tip(&w.env, "api", "side").is_some());
        },
    );
    // Two switches (in parallel), each failed before and after.
    assert_eq!(covered, 4, "reset's fault points");
}
