//! The kernel in process, table-driven: every kind of work, made for real in a worktree of
//! a real workspace, × every remover × forced or not. [`TABLE`] is the specification,
//! written out; each kind's test builds a worktree holding that kind, checks the inventory
//! finds it, checks every verdict against the table, and then runs the removers
//! themselves — a refused `gw delete`, `gw remove-repo`, `gw prune` and `gw create
//! --replace` change nothing, a rollback keeps the worktree, `gw doctor --fix` leaves it,
//! and a forced `gw delete` takes it.

use std::path::{Path, PathBuf};

use super::*;
use crate::error::Code;
use crate::ops::create::{self, CreateOptions, Selection, SourceFields};
use crate::ops::delete::{self, DeleteOptions};
use crate::ops::remove_repo::{self, RemoveRepoOptions};
use crate::ops::testutil::{World, git};
use crate::state::journal::BranchSource;

/// Per kind, per remover (in [`Remover::ALL`] order: delete, remove-repo, create
/// --replace, prune, rollback, doctor --fix, reset's switch): without force, then with it,
/// `R` the remover refuses (or keeps), `L` it loses the work, `-` it does not lose it.
const TABLE: &[(Kind, [&str; 7])] = &[
    (Kind::Changes, ["RL", "RL", "RL", "RR", "RR", "RR", "RL"]),
    (Kind::Untracked, ["RL", "RL", "RL", "RR", "RR", "RR", "--"]),
    (Kind::Ignored, ["--", "--", "--", "--", "--", "RR", "--"]),
    (
        Kind::HiddenEdits,
        ["RL", "RL", "RL", "RR", "RR", "RR", "RL"],
    ),
    (
        Kind::DetachedHead,
        ["RL", "RL", "RL", "RR", "RR", "RR", "RR"],
    ),
    (Kind::Reflog, ["RL", "RL", "RL", "RR", "RR", "RR", "--"]),
    (Kind::PrivateRef, ["RL", "RL", "RL", "RR", "RR", "RR", "--"]),
    (Kind::InProgress, ["RL", "RL", "RL", "RR", "RR", "RR", "RR"]),
    (Kind::Locked, ["RL", "RL", "RL", "RR", "RR", "RR", "--"]),
    (Kind::Stash, ["RL", "RL", "RL", "RR", "RR", "RR", "--"]),
    (
        Kind::LocalCommits,
        ["RL", "RL", "RL", "RR", "RR", "RR", "--"],
    ),
    (Kind::Nested, ["RL", "RL", "RL", "RR", "RR", "RR", "--"]),
    (Kind::Submodule, ["RL", "RL", "RL", "RR", "RR", "RR", "--"]),
    (Kind::Stray, ["RL", "RL", "RL", "RR", "--", "--", "--"]),
    (Kind::Unreadable, ["RL", "RL", "RL", "RR", "RR", "RR", "RR"]),
];

fn row(kind: Kind) -> [&'static str; 7] {
    TABLE
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, r)| *r)
        .expect("every kind is in the table")
}

#[test]
fn the_table_is_the_policy() {
    let kinds: Vec<Kind> = TABLE.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, Kind::ALL, "one row per kind, in order");
    for (kind, cells) in TABLE {
        for (remover, cell) in Remover::ALL.iter().zip(cells) {
            let expect = (cell.as_bytes()[0], cell.as_bytes()[1]);
            let protects = remover.protects(*kind);
            let forced_goes = protects && remover.forcible(*kind);
            let actual = match (protects, forced_goes) {
                (false, _) => (b'-', b'-'),
                (true, true) => (b'R', b'L'),
                (true, false) => (b'R', b'R'),
            };
            assert_eq!(actual, expect, "{kind:?} × {remover:?}");
        }
    }
}

/// A world with repositories `api` (ignoring `deps/` and `build/`, with `lib` as a
/// submodule) and `lib`, and workspace `w` on branch `w` holding a worktree of `api`.
struct Fixture {
    world: World,
    wt: PathBuf,
}

const NAME: &str = "w";

impl Fixture {
    fn new() -> Fixture {
        let world = World::new(&["api", "lib"]);
        let api = world.repos.join("api");
        crate::fsx::write_atomic(&api.join(".gitignore"), b"deps/\nbuild/\n").unwrap();
        git(&api, &["add", ".gitignore"]);
        git(&api, &["commit", "-q", "-m", "ignore"]);
        let lib = world.repos.join("lib");
        git(
            &api,
            &[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
                &lib.to_string_lossy(),
                "lib",
            ],
        );
        git(&api, &["commit", "-q", "-m", "submodule"]);
        create::create(&world.ctx(), create_options(NAME, false, false)).unwrap();
        let wt = world
            .ctx()
            .state()
            .unwrap()
            .find(NAME)
            .unwrap()
            .repos
            .first()
            .unwrap()
            .worktree_path
            .clone();
        Fixture { world, wt }
    }

    /// Makes the worktree hold `kind`.
    fn hold(&self, kind: Kind) {
        let wt = &self.wt;
        let write = |p: &Path, s: &str| {
            crate::fsx::create_dir_all(p.parent().unwrap()).unwrap();
            crate::fsx::write_atomic(p, s.as_bytes()).unwrap()
        };
        let commit = |dir: &Path, file: &str| {
            write(&dir.join(file), file);
            git(dir, &["add", file]);
            git(dir, &["commit", "-q", "-m", file]);
        };
        let clone_lib = |at: &Path| {
            git(
                &self.world.repos,
                &[
                    "clone",
                    "-q",
                    &self.world.repos.join("lib").to_string_lossy(),
                    &at.to_string_lossy(),
                ],
            );
        };
        match kind {
            Kind::Changes => write(&wt.join("README.md"), "edited\n"),
            Kind::Untracked => write(&wt.join("new.txt"), "new\n"),
            Kind::Ignored => write(&wt.join("build/out.o"), "built\n"),
            Kind::HiddenEdits => {
                git(wt, &["update-index", "--skip-worktree", "README.md"]);
                write(&wt.join("README.md"), "a hidden edit\n");
            }
            Kind::DetachedHead => {
                git(wt, &["checkout", "-q", "--detach"]);
                commit(wt, "detached.txt");
            }
            Kind::Reflog => {
                git(wt, &["checkout", "-q", "--detach"]);
                commit(wt, "detached.txt");
                git(wt, &["switch", "-q", NAME]);
            }
            Kind::PrivateRef => {
                git(wt, &["checkout", "-q", "--detach"]);
                commit(wt, "kept.txt");
                git(wt, &["update-ref", "refs/worktree/keep", "HEAD"]);
                git(wt, &["switch", "-q", NAME]);
                // Only the private ref names it: the reflog rule must not count it twice.
            }
            Kind::InProgress => {
                git(wt, &["bisect", "start"]);
            }
            Kind::Locked => {
                git(
                    &self.world.repos.join("api"),
                    &[
                        "worktree",
                        "lock",
                        "--reason",
                        "on a usb drive",
                        &wt.to_string_lossy(),
                    ],
                );
            }
            Kind::Stash => {
                let nested = wt.join("deps/lib");
                clone_lib(&nested);
                write(&nested.join("README.md"), "stashed\n");
                git(&nested, &["stash", "-q"]);
            }
            Kind::LocalCommits => {
                let nested = wt.join("deps/lib");
                clone_lib(&nested);
                commit(&nested, "local.txt");
            }
            Kind::Nested => {
                let nested = wt.join("build/mine");
                crate::fsx::create_dir_all(&nested).unwrap();
                git(&nested, &["init", "-q"]);
                write(
                    &nested.join("x.txt"),
                    "uncommitted in a nested repository\n",
                );
            }
            Kind::Submodule => {
                git(
                    wt,
                    &[
                        "-c",
                        "protocol.file.allow=always",
                        "submodule",
                        "update",
                        "--init",
                        "-q",
                    ],
                );
                let sub = wt.join("lib");
                git(&sub, &["switch", "-q", "-c", "wip"]);
                commit(&sub, "wip.txt");
                git(wt, &["submodule", "update", "-q"]);
            }
            Kind::Stray => write(&wt.parent().unwrap().join("notes.txt"), "mine\n"),
            Kind::Unreadable => write(&wt.join(".git"), "gitdir: /nowhere/at/all\n"),
        }
    }

    /// What the kernel finds: the worktree's work, and the workspace's stray files.
    fn work(&self) -> Work {
        let ctx = self.world.ctx();
        let st = ctx.state().unwrap();
        let ws = st.find(NAME).unwrap();
        let mut work = inspect(&ws.repos[0]).work;
        let stray = work::stray_files(ws);
        if !stray.is_empty() {
            work.0.push(Held::Stray(stray));
        }
        work
    }
}

fn create_options(name: &str, replace: bool, force: bool) -> CreateOptions {
    CreateOptions {
        name: Some(name.into()),
        branch: name.into(),
        selection: Selection::Repos(vec!["api".into()]),
        track: false,
        source: SourceFields::default(),
        replace,
        force,
        replacing: None,
        copy: None,
        expect: None,
    }
}

/// Whether `held` is, or holds (in a repository inside the worktree), `kind`.
fn holds(held: &Held, kind: Kind) -> bool {
    held.kind() == kind
        || match held {
            Held::Nested { held, .. } | Held::Submodule { held, .. } => {
                held.iter().any(|h| holds(h, kind))
            }
            _ => false,
        }
}

/// The kind at the top of the inventory for `kind`: a stash or a commit of a repository
/// inside the worktree is found as that repository.
fn top(kind: Kind) -> Kind {
    match kind {
        Kind::Stash | Kind::LocalCommits => Kind::Nested,
        k => k,
    }
}

fn check(kind: Kind) {
    let f = Fixture::new();
    assert!(
        f.work().is_empty(),
        "a fresh worktree holds nothing: {:?}",
        f.work()
    );
    f.hold(kind);
    let work = f.work();
    assert!(
        work.0.iter().any(|h| holds(h, kind)),
        "{kind:?} is found: {work:?}"
    );
    // What it holds besides (an ignored directory around a nested repository) is work no
    // remover protects more than the kind itself.
    let top = top(kind);
    for (remover, cell) in Remover::ALL.iter().zip(row(top)) {
        for (force, want) in [(false, cell.as_bytes()[0]), (true, cell.as_bytes()[1])] {
            let refused = work.refusal(*remover, force);
            let stops = refused.iter().any(|h| h.kind() == top);
            assert_eq!(
                stops,
                want == b'R',
                "{kind:?} × {remover:?} × force={force}: {refused:?}"
            );
            if want == b'L' {
                assert!(
                    work.lost(*remover).iter().any(|h| h.kind() == top),
                    "{kind:?} × {remover:?}: what is lost is said"
                );
            }
        }
    }
    run_removers(&f, kind);
}

/// The removers themselves, in process, on the worktree holding `kind`.
fn run_removers(f: &Fixture, kind: Kind) {
    let ctx = f.world.ctx();
    let cells = row(top(kind));
    let refuses = |i: usize| cells[i].as_bytes()[0] == b'R';
    let before = ctx.state().unwrap();
    let delete_as = |remover| {
        delete::delete_as(
            &ctx,
            DeleteOptions {
                names: vec![NAME.into()],
                force: false,
                purge: false,
                expect: None,
            },
            remover,
        )
        .unwrap()
    };
    // Delete, prune (through delete, never forced), create --replace (through delete).
    for (i, remover) in [
        (0, Remover::Delete),
        (3, Remover::Prune),
        (2, Remover::CreateReplace),
    ] {
        if !refuses(i) {
            continue;
        }
        let report = delete_as(remover);
        let e = report.failure().expect("refused");
        assert_eq!(
            e.code,
            Code::WorktreeDirty,
            "{kind:?} × {remover:?}: {}",
            e.message
        );
        assert_eq!(
            ctx.state().unwrap(),
            before,
            "{kind:?} × {remover:?}: nothing changed"
        );
    }
    if refuses(1) && kind != Kind::Stray {
        let e = remove_repo::remove_repo(
            &ctx,
            RemoveRepoOptions {
                name: Some(NAME.into()),
                repos: vec!["api".into()],
                force: false,
                expect: None,
            },
        )
        .unwrap_err();
        assert_eq!(
            e.code,
            Code::WorktreeDirty,
            "{kind:?} × remove-repo: {}",
            e.message
        );
        assert!(f.wt.exists());
    }
    // Rollback: undoing the worktree's creation keeps it; doctor --fix would leave it.
    if kind != Kind::Stray && kind != Kind::Unreadable {
        let source = f.world.repos.join("api");
        let undo =
            remove::added_worktree(&ctx, &source, &f.wt, NAME, &BranchSource::Existing).unwrap();
        assert_eq!(
            matches!(undo, crate::ops::tx::Undo::Kept(_)),
            refuses(4),
            "{kind:?} × rollback: {undo:?}"
        );
        if refuses(4) {
            assert!(f.wt.join(".git").exists(), "{kind:?}: kept");
        }
    }
    if f.wt.exists() && kind != Kind::Stray {
        assert_eq!(
            !remove::disposable(&f.wt),
            refuses(5),
            "{kind:?} × doctor --fix"
        );
    }
    // Forced, delete takes it.
    if f.wt.exists() {
        let report = delete::delete(
            &ctx,
            DeleteOptions {
                names: vec![NAME.into()],
                force: true,
                purge: false,
                expect: None,
            },
        )
        .unwrap();
        assert!(report.failure().is_none(), "{kind:?}: forced delete");
        assert!(ctx.state().unwrap().find(NAME).is_none());
    }
}

macro_rules! every_kind {
    ($($name:ident: $kind:expr;)*) => {
        $(#[test] fn $name() { check($kind); })*
    };
}

every_kind! {
    changes: Kind::Changes;
    untracked: Kind::Untracked;
    ignored: Kind::Ignored;
    hidden_edits: Kind::HiddenEdits;
    detached_head: Kind::DetachedHead;
    reflog: Kind::Reflog;
    private_ref: Kind::PrivateRef;
    in_progress: Kind::InProgress;
    locked: Kind::Locked;
    stash: Kind::Stash;
    local_commits: Kind::LocalCommits;
    nested: Kind::Nested;
    submodule: Kind::Submodule;
    stray: Kind::Stray;
    unreadable: Kind::Unreadable;
}

/// Branch fates, table-driven: what happens to a workspace's branch when its worktree
/// goes, unforced and forced, and to a `gw prune branches` candidate.
#[test]
fn branch_fates() {
    let world = World::new(&["api"]);
    let ctx = world.ctx();
    let api = world.repos.join("api");
    create::create(&ctx, create_options("b", false, false)).unwrap();
    let st = ctx.state().unwrap();
    let r = st.find("b").unwrap().repos[0].clone();
    let t = ctx.territory();
    // Nothing on it: goes either way.
    assert!(matches!(
        fate::fate(&r, false, t),
        Fate::Delete {
            unique: Some(0),
            ..
        }
    ));
    // A commit only it has: kept unless forced.
    git(
        &r.worktree_path,
        &["commit", "-q", "--allow-empty", "-m", "mine"],
    );
    assert!(matches!(fate::fate(&r, false, t), Fate::Keep(_)));
    assert!(matches!(
        fate::fate(&r, true, t),
        Fate::Delete {
            unique: Some(1),
            ..
        }
    ));
    // Another branch has it: goes.
    git(&api, &["branch", "copy", "b"]);
    assert!(matches!(
        fate::fate(&r, false, t),
        Fate::Delete {
            unique: Some(0),
            ..
        }
    ));
    // It existed before the workspace: never.
    let mut pre = r.clone();
    pre.preserve_branch = true;
    assert_eq!(fate::fate(&pre, true, t), Fate::Preserved);
    // Checked out elsewhere: kept, forced or not.
    git(
        &api,
        &[
            "worktree",
            "add",
            "-q",
            "--force",
            &world.repos.join("other").to_string_lossy(),
            "b",
        ],
    );
    assert!(matches!(fate::fate(&r, true, t), Fate::Keep(_)));
    // A worktree outside the workspace directory says nothing about whose branch it is.
    let mut outside = r.clone();
    outside.worktree_path = world.repos.join("other");
    assert!(matches!(fate::fate(&outside, true, t), Fate::Keep(_)));

    // A prune candidate: a commit on no remote, whose change is not in the base, is kept
    // unless forced; once the base has its change (a squash merge), it goes.
    git(&api, &["switch", "-q", "-c", "topic"]);
    crate::fsx::write_atomic(&api.join("t.txt"), b"t\n").unwrap();
    git(&api, &["add", "t.txt"]);
    git(&api, &["commit", "-q", "-m", "topic"]);
    git(&api, &["switch", "-q", "main"]);
    let repo = crate::git::Repo::open(&api).unwrap();
    let tip = repo.local_branch("topic").unwrap();
    let base = crate::git::Base {
        name: "main".into(),
        oid: repo.local_branch("main").unwrap(),
    };
    assert!(matches!(
        fate::of_candidate(&repo, "topic", &tip, &base, false),
        Fate::Keep(_)
    ));
    assert!(matches!(
        fate::of_candidate(&repo, "topic", &tip, &base, true),
        Fate::Delete {
            unique: Some(1),
            ..
        }
    ));
    git(&api, &["merge", "-q", "--squash", "topic"]);
    git(&api, &["commit", "-q", "-m", "squashed"]);
    let base = crate::git::Base {
        name: "main".into(),
        oid: repo.local_branch("main").unwrap(),
    };
    assert!(matches!(
        fate::of_candidate(&repo, "topic", &tip, &base, false),
        Fate::Delete {
            unique: Some(0),
            ..
        }
    ));

    // The removal re-checks the tip: a branch that moved since it was judged stays.
    let moved = remove::branch(&ctx, &api, "topic", &"0".repeat(40)).unwrap_err();
    assert_eq!(moved.code, Code::StateChanged);
    assert!(repo.local_branch("topic").is_some());
    assert_eq!(
        remove::branch(&ctx, &api, "topic", &tip).unwrap(),
        remove::Done::Removed
    );
    assert_eq!(
        remove::branch(&ctx, &api, "topic", &tip).unwrap(),
        remove::Done::Absent
    );
    // And its undo brings it back where it was.
    let target = remove::Target::Branch {
        source: api.clone(),
        branch: "topic".into(),
        tip: tip.clone(),
        keep: None,
    };
    assert_eq!(
        remove::restore(&ctx, &target).unwrap(),
        crate::ops::tx::Undo::Undone
    );
    assert_eq!(repo.local_branch("topic").as_deref(), Some(tip.as_str()));
}

/// A branch deleted for the trash goes as `git branch -D` takes it — its settings section
/// and its reflog with it — in one transaction with the reference that keeps its tip, and
/// not while a worktree has it checked out (the tip is kept then too); a name that could
/// smuggle a second command into the transaction is refused.
#[test]
fn a_kept_branch_goes_with_its_settings_and_reflog_and_leaves_its_tip_kept() {
    let world = World::new(&["api"]);
    let ctx = world.ctx();
    let api = world.repos.join("api");
    git(&api, &["branch", "topic"]);
    git(&api, &["config", "branch.topic.remote", "origin"]);
    git(&api, &["config", "branch.topic.merge", "refs/heads/topic"]);
    let repo = crate::git::Repo::open(&api).unwrap();
    let tip = repo.local_branch("topic").unwrap();
    let keep = "refs/grove/trash/1/0";
    assert!(api.join(".git/logs/refs/heads/topic").exists());

    // Checked out in a worktree: refused, the branch and its settings as they were — and
    // its tip kept all the same, so the trash entry holds it whatever the branch does next.
    let wt = world.repos.with_file_name("wt-topic");
    git(
        &api,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "topic"],
    );
    let refused = keep::branch_kept(&ctx, &api, "topic", &tip, keep).unwrap_err();
    assert_eq!(refused.code, Code::StateChanged, "{}", refused.message);
    let repo = crate::git::Repo::open(&api).unwrap();
    assert_eq!(repo.local_branch("topic").as_deref(), Some(tip.as_str()));
    assert_eq!(repo.reference(keep).as_deref(), Some(tip.as_str()));
    assert!(repo.has_branch_section("topic"));
    git(
        &api,
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );

    // A name with a NUL in it is not written into the transaction.
    let smuggled = format!("topic\0delete refs/heads/main\0{tip}");
    assert!(keep::branch_kept(&ctx, &api, "topic", &tip, &smuggled).is_err());
    let repo = crate::git::Repo::open(&api).unwrap();
    assert!(repo.local_branch("main").is_some());
    assert!(repo.local_branch("topic").is_some());

    assert_eq!(
        keep::branch_kept(&ctx, &api, "topic", &tip, keep).unwrap(),
        remove::Done::Removed
    );
    let repo = crate::git::Repo::open(&api).unwrap();
    assert_eq!(repo.local_branch("topic"), None);
    assert_eq!(repo.reference(keep).as_deref(), Some(tip.as_str()));
    assert!(!repo.has_branch_section("topic"));
    assert!(!api.join(".git/logs/refs/heads/topic").exists());
    // Done again (recovery): nothing left to do.
    assert_eq!(
        keep::branch_kept(&ctx, &api, "topic", &tip, keep).unwrap(),
        remove::Done::Absent
    );
}

/// A kept registration goes into the trash entry whole — renamed there, or, when the
/// repository is on another file system (here `/dev/shm`), copied there and removed by
/// git — and git no longer lists the worktree; done again (recovery), nothing changes.
#[test]
#[cfg(target_os = "linux")]
fn a_registration_is_moved_into_the_trash_or_copied_across_file_systems() {
    let world = World::new(&["api"]);
    let ctx = world.ctx();
    // The other file system: `/dev/shm`, which every Linux system has (the test is of
    // the copy it makes necessary, so it has no way around it).
    let elsewhere = tempfile::tempdir_in("/dev/shm").expect("a directory on /dev/shm");
    let far = elsewhere.path().canonicalize().unwrap().join("far");
    crate::fsx::create_dir_all(&far).unwrap();
    git(&far, &["init", "-q", "-b", "main"]);
    git(&far, &["commit", "-q", "--allow-empty", "-m", "initial"]);
    let device = |p: &Path| std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(p).unwrap());
    assert_ne!(
        device(&far),
        device(&world.repos),
        "/dev/shm is the temporary directory's file system: nothing is copied across"
    );
    let sources = [world.repos.join("api"), far];
    let wsdir = ctx.territory().trash_dirs()[0]
        .parent()
        .unwrap()
        .to_path_buf();
    for (k, source) in sources.iter().enumerate() {
        let path = wsdir.join(format!("w{k}/repo"));
        git(
            source,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("w{k}"),
                path.to_str().unwrap(),
            ],
        );
        std::fs::remove_dir_all(&path).unwrap();
        let keep = ctx.territory().trash_dirs()[0].join(format!("w{k}-12345/git/0"));
        assert_eq!(
            keep::registration_kept(&ctx, source, &path, &keep).unwrap(),
            remove::Done::Removed
        );
        assert!(keep.join("HEAD").is_file() && keep.join("gitdir").is_file());
        let repo = crate::git::Repo::open(source).unwrap();
        assert!(
            repo.worktrees().unwrap().iter().all(|w| w.path != path),
            "still registered in {}",
            source.display()
        );
        assert_eq!(
            keep::registration_kept(&ctx, source, &path, &keep).unwrap(),
            remove::Done::Absent
        );
        assert!(keep.join("HEAD").is_file());
    }
}
