//! The cleanup end to end, in process: scan, apply, interruption, recovery and restore
//! over real files (and real git repositories where tracking matters).

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::manifest;
use super::*;
use crate::env::Env;
use crate::error::Code;
use crate::fsx;
use crate::proc::Cmd;
use crate::state::{RepoEntry, State, Workspace};

/// What the Go grove wrote at a workspace root.
const GO_FILE: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\n      \"args\": [\n        \"mcp-serve\",\n        \"--workspace\",\n        \"feat-x\"\n      ],\n      \"command\": \"gw\"\n    }\n  }\n}";
const WITH_KEEPER: &str = "{\n  \"mcpServers\": {\n    \"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\", \"--workspace\", \"feat-x\"]},\n    \"keeper\": {\"command\": \"keeper-mcp\"}\n  }\n}\n";
const KEEPER_ONLY: &str =
    "{\n  \"mcpServers\": {\n    \"keeper\": {\"command\": \"keeper-mcp\"}\n  }\n}\n";
const FOREIGN: &str =
    "{\"mcpServers\": {\"grove\": {\"command\": \"grove\", \"args\": [\"serve\"]}}}\n";
const CRLF: &str = "\u{feff}{\r\n  // the project's servers\r\n  \"mcpServers\": {\r\n    \"docs\": {\"command\": \"docs\"},\r\n    \"grove\": {\"command\": \"/usr/local/bin/gw\", \"args\": [\"mcp-serve\", \"-w\", \"x\"]}\r\n  }\r\n}\r\n";
const CRLF_AFTER: &str = "\u{feff}{\r\n  // the project's servers\r\n  \"mcpServers\": {\r\n    \"docs\": {\"command\": \"docs\"}\r\n  }\r\n}\r\n";
/// The start of a write-ahead log (its magic number, then anything).
const WAL: &[u8] = b"\x37\x7f\x06\x82wal bytes";
const EMPTIED: &str = "{\n  \"mcpServers\": {}\n}";

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: GroveHome,
    env: Env,
    wd: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let env = Env::for_home(&root.join("home"), &root);
        let home = GroveHome::new(&env.grove_home);
        let wd = home.default_workspace_dir();
        fsx::create_dir_all(&wd).unwrap();
        World {
            _tmp: tmp,
            root,
            home,
            env,
            wd,
        }
    }

    fn scope(&self, state: &State) -> Scope {
        Scope::install(&self.home, None, Some(state))
    }

    fn apply(&self, plan: &mut Plan) -> Option<Backup> {
        apply(&self.home, plan, &Cancel::never()).unwrap().backup
    }

    fn restore(&self, id: Option<&str>) -> Result<RestoreReport, Error> {
        restore(&self.home, &self.env, id, &Cancel::never(), false)
    }
}

fn put(path: &Path, text: impl AsRef<[u8]>) {
    fsx::create_dir_all(path.parent().unwrap()).unwrap();
    fsx::write_atomic(path, text.as_ref()).unwrap();
}

fn read(path: &Path) -> String {
    String::from_utf8(fs::read(path).unwrap()).unwrap()
}

fn workspace(name: &str, path: &Path, repos: &[&str]) -> Workspace {
    Workspace {
        name: name.into(),
        path: path.to_path_buf(),
        branch: format!("feat/{name}"),
        created_at: String::new(),
        repos: repos
            .iter()
            .map(|r| RepoEntry {
                repo_name: r.to_string(),
                source_repo: PathBuf::from("/src").join(r),
                worktree_path: path.join(r),
                branch: format!("feat/{name}"),
                preserve_branch: false,
                setup: None,
                extra: Default::default(),
            })
            .collect(),
        source: None,
        blueprint: None,
        slot: None,
        extra: Default::default(),
    }
}

fn find<'a>(plan: &'a Plan, path: &Path) -> &'a Item {
    plan.items
        .iter()
        .find(|i| i.path == path)
        .unwrap_or_else(|| panic!("no item for {}: {:#?}", path.display(), plan.items))
}

fn database(home: &GroveHome) {
    let mut db = b"SQLite format 3\0".to_vec();
    db.extend_from_slice(&[7; 4080]);
    put(&home.messages_db(), db);
    put(&home.root().join("messages.db-wal"), WAL);
    put(&home.root().join("messages.db-shm"), b"shm bytes");
}

fn statuses(r: &RestoreReport) -> Vec<(PathBuf, RestoreStatus)> {
    r.files.iter().map(|f| (f.path.clone(), f.status)).collect()
}

/// Every temporary file gw-migrate may leave, anywhere under `dir`.
fn tmp_files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".gw-migrate-"))
        .map(|e| e.into_path())
        .collect()
}

#[test]
fn migrates_every_leftover_then_restores_it_byte_for_byte() {
    let w = World::new();
    let ws_root = w.wd.join("feat-x");
    let state = State {
        workspaces: vec![workspace("feat-x", &ws_root, &["api", "web"])],
    };
    let root_file = ws_root.join(".mcp.json");
    let api_file = ws_root.join("api/.mcp.json");
    let web_file = ws_root.join("web/.mcp.json");
    let orphan = w.wd.join("old-ws/.mcp.json");
    let orphan_wt = w.wd.join("old-ws/api/.mcp.json");
    let extra = w.root.join("elsewhere/proj/.mcp.json");
    let invalid = w.wd.join("bad/.mcp.json");
    let dupes = w.wd.join("dupes/.mcp.json");
    let array = w.wd.join("array/.mcp.json");
    let hidden = w.wd.join(".trash/gone/.mcp.json");
    let originals = [
        (&root_file, GO_FILE),
        (&api_file, WITH_KEEPER),
        (&web_file, KEEPER_ONLY),
        (&orphan, GO_FILE),
        (&orphan_wt, FOREIGN),
        (&extra, CRLF),
        (&invalid, "{\"mcpServers\": {\"grove\": "),
        (
            &dupes,
            "{\"mcpServers\": {\"grove\": {\"command\": \"gw\", \"args\": [\"mcp-serve\"]}, \"grove\": {}}}",
        ),
        (&array, "[{\"mcpServers\": {}}]"),
        (&hidden, GO_FILE),
    ];
    for (p, text) in &originals {
        put(p, text);
    }
    database(&w.home);
    let db_before = fs::read(w.home.messages_db()).unwrap();
    let mut scope = w.scope(&state);
    scope.roots.push(w.root.join("elsewhere"));

    let mut plan = scan(&w.home, &scope);
    let expect = |p: &Path, action: Option<Action>, status: Status, reason: Option<Reason>| {
        let i = find(&plan, p);
        assert_eq!(
            (i.action, i.status, i.reason),
            (action, status, reason),
            "{}: {i:#?}",
            p.display()
        );
    };
    expect(&root_file, Some(Action::DeleteFile), Status::Pending, None);
    expect(&api_file, Some(Action::RemoveEntry), Status::Pending, None);
    expect(&orphan, Some(Action::DeleteFile), Status::Pending, None);
    expect(
        &orphan_wt,
        None,
        Status::Skipped,
        Some(Reason::ForeignEntry),
    );
    expect(&extra, Some(Action::RemoveEntry), Status::Pending, None);
    expect(&invalid, None, Status::Skipped, Some(Reason::InvalidJson));
    expect(&dupes, None, Status::Skipped, Some(Reason::DuplicateKeys));
    expect(&array, None, Status::Skipped, Some(Reason::RootNotObject));
    expect(
        &w.home.messages_db(),
        Some(Action::MoveDatabase),
        Status::Pending,
        None,
    );
    assert!(
        plan.items
            .iter()
            .all(|i| i.path != web_file && i.path != hidden)
    );
    assert_eq!(find(&plan, &api_file).workspace.as_deref(), Some("feat-x"));
    assert_eq!(find(&plan, &api_file).repo.as_deref(), Some("api"));
    assert_eq!(plan.count(Status::Pending), 7, "{:#?}", plan.items);
    for (p, text) in &originals {
        assert_eq!(read(p), *text, "a scan changes nothing");
    }

    let backup = w.apply(&mut plan).expect("a backup");
    assert_eq!(plan.count(Status::Done), 7);
    assert!(!root_file.exists() && !orphan.exists());
    assert_eq!(read(&api_file), KEEPER_ONLY);
    assert_eq!(read(&extra), CRLF_AFTER);
    assert_eq!(read(&orphan_wt), FOREIGN, "another tool's entry survives");
    assert_eq!(read(&hidden), GO_FILE, "hidden directories are not walked");
    for name in DATABASE_FILES.iter().take(3) {
        assert!(!w.home.root().join(name).exists());
        assert!(backup.path.join("database").join(name).is_file());
    }
    assert_eq!(
        fs::read(backup.path.join("database/messages.db")).unwrap(),
        db_before
    );
    let m = manifest::read(&backup.path, &w.home).unwrap();
    assert!(m.finished);
    assert_eq!(m.entries.len(), 7);
    assert!(m.entries.iter().all(|l| l.state == EntryState::Done));
    let api = m.entries.iter().find(|l| l.entry.path == api_file).unwrap();
    assert_eq!(
        api.entry.sha256_before,
        fsx::sha256_hex(WITH_KEEPER.as_bytes())
    );
    assert_eq!(
        api.entry.sha256_after.as_deref(),
        Some(fsx::sha256_hex(KEEPER_ONLY.as_bytes()).as_str())
    );
    assert!(tmp_files(&w.root).is_empty());

    let again = scan(&w.home, &scope);
    assert_eq!(again.count(Status::Pending), 0, "{:#?}", again.items);

    let restored = w.restore(None).unwrap();
    assert!(restored.failure.is_none(), "{restored:#?}");
    assert_eq!(restored.id, backup.id);
    assert!(
        restored
            .files
            .iter()
            .all(|f| f.status == RestoreStatus::Restored)
    );
    for (p, text) in &originals {
        assert_eq!(read(p), *text, "{} restored", p.display());
    }
    assert_eq!(fs::read(w.home.messages_db()).unwrap(), db_before);
    assert_eq!(
        fs::read(w.home.root().join("messages.db-wal")).unwrap(),
        WAL
    );
    assert!(
        backup.path.join("database/messages.db").is_file(),
        "the backup is kept"
    );
    let err = w.restore(None).unwrap_err();
    assert_eq!(err.code, Code::Usage, "nothing left to restore");
    // Repeating a restore by id finds everything in place: no false conflicts.
    let twice = w.restore(Some(&backup.id)).unwrap();
    assert!(twice.failure.is_none(), "{twice:#?}");
    assert!(
        twice
            .files
            .iter()
            .all(|f| f.status == RestoreStatus::AlreadyRestored)
    );

    let mut third = scan(&w.home, &scope);
    assert_eq!(
        third.count(Status::Pending),
        7,
        "restored leftovers are found again"
    );
    let second = w.apply(&mut third).unwrap();
    assert_ne!(second.id, backup.id);
    assert_eq!(read(&api_file), KEEPER_ONLY);
}

#[test]
fn symlinks_are_followed_only_inside_the_roots() {
    let w = World::new();
    let state = State::default();
    let inside_target = w.wd.join("shared/servers.json");
    put(&inside_target, GO_FILE);
    let outside_target = w.root.join("dotfiles/mcp.json");
    put(&outside_target, GO_FILE);
    for d in ["a", "b", "c", "d"] {
        fsx::create_dir_all(&w.wd.join(d)).unwrap();
    }
    std::os::unix::fs::symlink(&inside_target, w.wd.join("a/.mcp.json")).unwrap();
    std::os::unix::fs::symlink(&outside_target, w.wd.join("b/.mcp.json")).unwrap();
    std::os::unix::fs::symlink(w.root.join("nowhere"), w.wd.join("c/.mcp.json")).unwrap();
    let unrelated = w.root.join("dotfiles/other.json");
    put(&unrelated, KEEPER_ONLY);
    std::os::unix::fs::symlink(&unrelated, w.wd.join("d/.mcp.json")).unwrap();

    let mut plan = scan(&w.home, &w.scope(&state));
    let inside = find(&plan, &w.wd.join("a/.mcp.json"));
    assert_eq!(inside.target.as_deref(), Some(inside_target.as_path()));
    assert_eq!(
        inside.action,
        Some(Action::RemoveEntry),
        "a link's target is edited, never removed"
    );
    let outside = find(&plan, &w.wd.join("b/.mcp.json"));
    assert_eq!(outside.reason, Some(Reason::SymlinkOutsideRoots));
    assert_eq!(outside.action, None);
    for nothing_of_grove in ["c/.mcp.json", "d/.mcp.json"] {
        assert!(
            plan.items
                .iter()
                .all(|i| i.path != w.wd.join(nothing_of_grove)),
            "{nothing_of_grove}: a dangling link, or a file without grove's entry, is not reported"
        );
    }

    w.apply(&mut plan);
    let link = w.wd.join("a/.mcp.json");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read(&inside_target), EMPTIED);
    assert_eq!(read(&outside_target), GO_FILE);
}

#[test]
fn a_file_and_a_symlink_to_it_are_decided_alike_in_either_name_order() {
    // `a-real` sorts before `z-link`, and `a-link` before `z-real`.
    for (real, link) in [("a-real", "z-link"), ("z-real", "a-link")] {
        let w = World::new();
        let file = w.wd.join(real).join(".mcp.json");
        put(&file, GO_FILE);
        fsx::create_dir_all(&w.wd.join(link)).unwrap();
        let link_path = w.wd.join(link).join(".mcp.json");
        std::os::unix::fs::symlink(format!("../{real}/.mcp.json"), &link_path).unwrap();

        let mut plan = scan(&w.home, &w.scope(&State::default()));
        assert_eq!(plan.items.len(), 1, "{real}/{link}: {:#?}", plan.items);
        let item = &plan.items[0];
        assert_eq!(item.path, file, "named by the file itself");
        assert_eq!(item.target, None);
        assert_eq!(
            item.links,
            std::slice::from_ref(&link_path),
            "the link is listed"
        );
        assert_eq!(
            item.action,
            Some(Action::RemoveEntry),
            "a file a symlink points to is edited, never deleted"
        );
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(
            json["items"][0]["links"][0],
            link_path.to_str().unwrap(),
            "the dry run names the link"
        );
        w.apply(&mut plan).unwrap();
        assert_eq!(
            read(&link_path),
            EMPTIED,
            "the link still leads to the file"
        );
        assert!(
            fs::symlink_metadata(&link_path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}

#[test]
fn read_only_files_keep_their_mode_and_owned_files_their_owner() {
    let w = World::new();
    let state = State::default();
    let p = w.wd.join("ws/.mcp.json");
    put(&p, WITH_KEEPER);
    fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
    // Another user's file keeps its owner (only root can hand a file to another user).
    let root = rustix::process::geteuid().is_root();
    if root {
        std::os::unix::fs::chown(&p, Some(4242), Some(4343)).unwrap();
    } else {
        eprintln!("not root: the owner of an edited file is checked only for our own file");
    }
    let owner = fs::metadata(&p).map(|m| (m.uid(), m.gid())).unwrap();
    let mut plan = scan(&w.home, &w.scope(&state));
    let backup = w.apply(&mut plan).unwrap();
    assert_eq!(find(&plan, &p).status, Status::Done);
    assert_eq!(read(&p), KEEPER_ONLY);
    let meta = fs::metadata(&p).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o444);
    assert_eq!((meta.uid(), meta.gid()), owner);
    w.restore(Some(&backup.id)).unwrap();
    assert_eq!(read(&p), WITH_KEEPER);
    let meta = fs::metadata(&p).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o444);
    assert_eq!((meta.uid(), meta.gid()), owner);
}

#[test]
fn hard_linked_files_are_reported_not_broken() {
    let w = World::new();
    let p = w.wd.join("ws/.mcp.json");
    put(&p, GO_FILE);
    let other = w.root.join("elsewhere/copy.json");
    fsx::create_dir_all(other.parent().unwrap()).unwrap();
    fs::hard_link(&p, &other).unwrap();
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    assert_eq!(find(&plan, &p).reason, Some(Reason::HardLinked));
    assert!(w.apply(&mut plan).is_none());
    assert_eq!(fs::metadata(&p).unwrap().nlink(), 2);
}

#[test]
fn git_tracked_files_need_include_tracked_and_are_never_deleted() {
    let w = World::new();
    let repo = w.wd.join("ws/api");
    fsx::create_dir_all(&repo).unwrap();
    Cmd::git(&repo).args(["init", "-q"]).check().unwrap();
    let tracked = repo.join(".mcp.json");
    put(&tracked, GO_FILE);
    Cmd::git(&repo).args(["add", ".mcp.json"]).check().unwrap();
    let untracked = w.wd.join("ws/web/.mcp.json");
    put(&untracked, GO_FILE);
    Cmd::git(&w.wd.join("ws/web"))
        .args(["init", "-q"])
        .check()
        .unwrap();

    let plan = scan(&w.home, &w.scope(&State::default()));
    assert_eq!(find(&plan, &tracked).reason, Some(Reason::Tracked));
    assert_eq!(find(&plan, &untracked).action, Some(Action::DeleteFile));

    let mut scope = w.scope(&State::default());
    scope.include_tracked = true;
    let mut plan = scan(&w.home, &scope);
    assert_eq!(find(&plan, &tracked).action, Some(Action::RemoveEntry));
    w.apply(&mut plan);
    assert_eq!(read(&tracked), EMPTIED);
    assert!(!untracked.exists());
}

#[test]
fn a_broken_worktree_link_means_unknown_and_the_file_is_kept() {
    let w = World::new();
    let wt = w.wd.join("ws/api");
    put(
        &wt.join(".git"),
        "gitdir: /moved/away/repo/.git/worktrees/api\n",
    );
    let file = wt.join(".mcp.json");
    put(&file, GO_FILE);
    // An outer repository must not answer for it either.
    Cmd::git(&w.wd).args(["init", "-q"]).check().unwrap();
    let plan = scan(&w.home, &w.scope(&State::default()));
    let item = find(&plan, &file);
    assert_eq!(item.reason, Some(Reason::GitLinkBroken), "{item:#?}");
    assert!(item.detail.as_deref().unwrap().contains("/moved/away/repo"));
    let mut scope = w.scope(&State::default());
    scope.include_tracked = true;
    let plan = scan(&w.home, &scope);
    assert_eq!(
        find(&plan, &file).action,
        Some(Action::RemoveEntry),
        "with --include-tracked it is edited, never deleted"
    );
}

#[test]
fn a_repository_of_another_user_means_unknown_and_the_file_is_kept() {
    if !rustix::process::geteuid().is_root() {
        e2e::skip("only root can make a repository owned by another user");
        return;
    }
    let w = World::new();
    let repo = w.wd.join("ws/api");
    fsx::create_dir_all(&repo).unwrap();
    Cmd::git(&repo).args(["init", "-q"]).check().unwrap();
    let file = repo.join(".mcp.json");
    put(&file, GO_FILE);
    for e in walkdir::WalkDir::new(&repo).into_iter().flatten() {
        std::os::unix::fs::lchown(e.path(), Some(4242), Some(4242)).unwrap();
    }
    let plan = scan(&w.home, &w.scope(&State::default()));
    assert_eq!(
        find(&plan, &file).reason,
        Some(Reason::RepositoryNotTrusted),
        "{:#?}",
        plan.items
    );
}

#[test]
fn a_file_changed_after_the_scan_is_left_alone() {
    let w = World::new();
    let p = w.wd.join("ws/.mcp.json");
    put(&p, WITH_KEEPER);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let changed = WITH_KEEPER.replace("keeper-mcp", "keeper-mcp-2");
    put(&p, &changed);
    assert!(
        w.apply(&mut plan).is_none(),
        "nothing changed, so no backup"
    );
    let item = find(&plan, &p);
    assert_eq!(
        (item.status, item.reason),
        (Status::Skipped, Some(Reason::ChangedSinceScan))
    );
    assert_eq!(read(&p), changed);
    assert!(backups(&w.home).is_empty());
}

#[test]
fn the_database_unit_and_its_odd_shapes() {
    let w = World::new();
    put(&w.home.messages_db(), b"not a database at all");
    put(&w.home.root().join("messages.db-journal"), b"j");
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    assert_eq!(
        find(&plan, &w.home.messages_db()).reason,
        Some(Reason::NotSqlite)
    );
    assert_eq!(
        find(&plan, &w.home.root().join("messages.db-journal")).reason,
        Some(Reason::NotSqlite),
        "the unit stays together"
    );
    assert!(w.apply(&mut plan).is_none());
    assert!(w.home.messages_db().exists());

    // A database opened and never written is an empty file: moved like any other.
    put(&w.home.messages_db(), b"");
    fs::remove_file(w.home.root().join("messages.db-journal")).unwrap();
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    assert_eq!(
        find(&plan, &w.home.messages_db()).action,
        Some(Action::MoveDatabase)
    );
    w.apply(&mut plan).unwrap();
    assert!(!w.home.messages_db().exists());
    let plan = scan(&w.home, &w.scope(&State::default()));
    assert!(plan.items.is_empty(), "nothing needs attention any more");
}

#[test]
fn restore_leaves_a_conflicting_file_and_restores_the_others() {
    let w = World::new();
    let a = w.wd.join("a/.mcp.json");
    let b = w.wd.join("b/.mcp.json");
    put(&a, WITH_KEEPER);
    put(&b, GO_FILE);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let backup = w.apply(&mut plan).unwrap();
    put(&a, "{\"mcpServers\": {\"mine\": {}}}");
    let r = w.restore(None).unwrap();
    assert_eq!(r.failure.as_ref().map(|e| e.code), Some(Code::StateChanged));
    assert!(statuses(&r).contains(&(a.clone(), RestoreStatus::Conflict)));
    assert!(statuses(&r).contains(&(b.clone(), RestoreStatus::Restored)));
    assert_eq!(read(&a), "{\"mcpServers\": {\"mine\": {}}}", "left alone");
    assert_eq!(read(&b), GO_FILE);
    // Resolved by hand, the same restore finishes.
    put(&a, KEEPER_ONLY);
    let r = w.restore(None).unwrap();
    assert!(r.failure.is_none(), "{r:#?}");
    assert_eq!(r.id, backup.id);
    assert!(statuses(&r).contains(&(a.clone(), RestoreStatus::Restored)));
    assert!(statuses(&r).contains(&(b.clone(), RestoreStatus::AlreadyRestored)));
    assert_eq!(read(&a), WITH_KEEPER);
    let err = w.restore(Some("no-such-id")).unwrap_err();
    assert_eq!(err.code, Code::Usage);
}

#[test]
fn restore_skips_a_file_whose_directory_is_gone_and_recreates_nothing() {
    let w = World::new();
    let gone = w.wd.join("deleted-ws/.mcp.json");
    let kept = w.wd.join("kept-ws/.mcp.json");
    put(&gone, GO_FILE);
    put(&kept, GO_FILE);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    w.apply(&mut plan).unwrap();
    fs::remove_dir_all(w.wd.join("deleted-ws")).unwrap();
    let r = w.restore(None).unwrap();
    assert!(r.failure.is_none(), "{r:#?}");
    assert!(statuses(&r).contains(&(gone.clone(), RestoreStatus::Skipped)));
    assert!(!w.wd.join("deleted-ws").exists(), "no empty skeleton");
    assert_eq!(read(&kept), GO_FILE);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
}

#[test]
fn a_stopped_restore_is_finished_by_the_next() {
    let w = World::new();
    for i in 0..5 {
        put(&w.wd.join(format!("w{i}/.mcp.json")), GO_FILE);
    }
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let backup = w.apply(&mut plan).unwrap();
    let stop = Cancel::never();
    stop.request(2);
    let r = restore(&w.home, &w.env, None, &stop, false).unwrap();
    assert_eq!(r.failure.as_ref().map(|e| e.code), Some(Code::Cancelled));
    assert!(r.files.iter().all(|f| f.status == RestoreStatus::Pending));
    let r = w.restore(None).unwrap();
    assert_eq!(r.id, backup.id, "the unfinished restore is the one resumed");
    assert!(r.files.iter().all(|f| f.status == RestoreStatus::Restored));
    assert!(tmp_files(&w.root).is_empty());
}

#[test]
fn a_stop_request_before_apply_changes_nothing() {
    let w = World::new();
    let p = w.wd.join("ws/.mcp.json");
    put(&p, GO_FILE);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let stop = Cancel::never();
    stop.request(15);
    let applied = apply(&w.home, &mut plan, &stop).unwrap();
    assert_eq!(applied.stopped, Some(15));
    assert!(applied.backup.is_none());
    assert_eq!(find(&plan, &p).status, Status::Pending);
    assert_eq!(read(&p), GO_FILE);
}

/// Rewrites a finished run's manifest as if the process had been killed after writing
/// the intentions: only `begin` and `intend` lines remain, and half a line after them.
fn as_killed(dir: &Path) {
    let path = dir.join(manifest::MANIFEST);
    let text = read(&path);
    let mut kept: String = text
        .lines()
        .filter(|l| {
            l.starts_with("{\"record\":{\"begin\"") || l.starts_with("{\"record\":{\"intend\"")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    kept.push_str("{\"done\":{\"n\"");
    put(&path, kept);
}

#[test]
fn an_interrupted_run_is_completed_by_the_next_and_restored_exactly() {
    let w = World::new();
    let edited = w.wd.join("e/.mcp.json");
    let deleted = w.wd.join("d/.mcp.json");
    let untouched = w.wd.join("u/.mcp.json");
    put(&edited, WITH_KEEPER);
    put(&deleted, GO_FILE);
    put(&untouched, WITH_KEEPER);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let backup = w.apply(&mut plan).unwrap();
    // The kill came after the `untouched` file's intention and before its rename: it is
    // as it was, with the edited copy still beside it.
    as_killed(&backup.path);
    put(&untouched, WITH_KEEPER);
    let m = manifest::read(&backup.path, &w.home).unwrap();
    let n = m
        .entries
        .iter()
        .find(|l| l.entry.path == untouched)
        .unwrap()
        .entry
        .n;
    let tmp = files::tmp_for(&untouched, &backup.id, n, false);
    put(&tmp, KEEPER_ONLY);
    assert!(m.entries.iter().all(|l| l.state == EntryState::Intended) && !m.finished);

    // A dry run says so and changes nothing; --apply completes the record first.
    let dry = migrate(&w.home, &w.env, &Options::default(), &Cancel::never()).unwrap();
    assert!(
        dry.warnings.iter().any(|x| x.contains("interrupted")),
        "{:?}",
        dry.warnings
    );
    assert!(tmp.exists());
    let opts = Options {
        apply: true,
        ..Options::default()
    };
    let second = migrate(&w.home, &w.env, &opts, &Cancel::never()).unwrap();
    assert!(
        !tmp.exists(),
        "the interrupted run's temporary file is gone"
    );
    assert!(
        second.warnings.iter().any(|x| x.contains(&backup.id)),
        "{:?}",
        second.warnings
    );
    let m = manifest::read(&backup.path, &w.home).unwrap();
    assert!(m.finished);
    let state_of = |p: &Path| m.entries.iter().find(|l| l.entry.path == p).unwrap().state;
    assert_eq!(state_of(&edited), EntryState::Done);
    assert_eq!(state_of(&deleted), EntryState::Done);
    assert_eq!(state_of(&untouched), EntryState::NotDone);
    let second_backup = second.backup.expect("the untouched file is cleaned now");

    // Restoring both runs, newest first, gives back every byte.
    let r = w.restore(None).unwrap();
    assert_eq!(r.id, second_backup.id);
    let r = w.restore(None).unwrap();
    assert_eq!(r.id, backup.id);
    assert!(r.failure.is_none(), "{r:#?}");
    assert!(statuses(&r).contains(&(untouched.clone(), RestoreStatus::NotChanged)));
    for (p, text) in [
        (&edited, WITH_KEEPER),
        (&deleted, GO_FILE),
        (&untouched, WITH_KEEPER),
    ] {
        assert_eq!(read(p), text, "{}", p.display());
    }
    assert!(tmp_files(&w.root).is_empty());
}

#[test]
fn a_database_moved_in_part_goes_back_whole_before_the_next_run() {
    let w = World::new();
    database(&w.home);
    let before: Vec<Vec<u8>> = DATABASE_FILES
        .iter()
        .take(3)
        .map(|n| fs::read(w.home.root().join(n)).unwrap())
        .collect();
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let backup = w.apply(&mut plan).unwrap();
    // Killed after moving messages.db only: put the sidecars back where they were.
    as_killed(&backup.path);
    for n in ["messages.db-wal", "messages.db-shm"] {
        fs::rename(backup.path.join("database").join(n), w.home.root().join(n)).unwrap();
    }
    let plan = scan(&w.home, &w.scope(&State::default()));
    assert!(
        plan.items
            .iter()
            .all(|i| i.action == Some(Action::MoveDatabase)),
        "the sidecars alone are still the database's"
    );
    let opts = Options {
        apply: true,
        ..Options::default()
    };
    let again = migrate(&w.home, &w.env, &opts, &Cancel::never()).unwrap();
    // The interrupted run moved messages.db back and so changed nothing in the end: its
    // backup is gone, and the new run moved the database whole.
    let all = backups(&w.home);
    assert_eq!(all.len(), 1, "{all:#?}");
    let new = again.backup.unwrap();
    assert_eq!(all[0].id, new.id);
    for n in DATABASE_FILES.iter().take(3) {
        assert!(
            new.path.join("database").join(n).is_file(),
            "{n} moved with the rest"
        );
    }
    w.restore(None).unwrap();
    for (n, bytes) in DATABASE_FILES.iter().zip(&before) {
        assert_eq!(&fs::read(w.home.root().join(n)).unwrap(), bytes);
    }
}

#[test]
fn a_corrupt_manifest_is_named_not_mistaken_for_no_backups() {
    let w = World::new();
    put(&w.wd.join("a/.mcp.json"), GO_FILE);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let backup = w.apply(&mut plan).unwrap();
    put(&backup.path.join(manifest::MANIFEST), "{\"begin\": 12}\n");
    let err = w.restore(None).unwrap_err();
    assert_eq!(err.code, Code::CorruptState, "{err:?}");
    assert!(err.message.contains(&backup.id), "{}", err.message);
}

#[test]
fn a_second_run_waits_for_the_lock_then_says_transient() {
    let mut w = World::new();
    put(&w.wd.join("b/.mcp.json"), GO_FILE);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    w.apply(&mut plan).unwrap();
    put(&w.wd.join("a/.mcp.json"), GO_FILE);
    let _held = manifest::lock(&w.home, &w.env).unwrap();
    w.env.lock_timeout_ms = Some(50);
    let opts = Options {
        apply: true,
        ..Options::default()
    };
    let err = migrate(&w.home, &w.env, &opts, &Cancel::never()).unwrap_err();
    assert_eq!(err.code, Code::Transient, "{err:?}");
    let err = w.restore(None).unwrap_err();
    assert_eq!(err.code, Code::Transient);
    assert_eq!(read(&w.wd.join("a/.mcp.json")), GO_FILE);
    assert!(!w.wd.join("b/.mcp.json").exists(), "nothing was restored");
}

#[test]
fn paths_that_are_not_utf8_are_cleaned_and_shown_lossily() {
    use std::os::unix::ffi::OsStrExt;
    let w = World::new();
    let odd = w.wd.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    let ours = odd.join(".mcp.json");
    let foreign = odd.join("api/.mcp.json");
    put(&ours, WITH_KEEPER);
    put(&foreign, FOREIGN);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let json = serde_json::to_value(&plan).expect("a plan always serialises");
    let item = json["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["action"] == "remove_entry")
        .unwrap();
    assert_eq!(item["path_lossy"], true);
    assert!(item["path"].as_str().unwrap().contains("caf\u{fffd}"));
    let backup = w.apply(&mut plan).unwrap();
    assert_eq!(read(&ours), KEEPER_ONLY);
    let r = w.restore(Some(&backup.id)).unwrap();
    assert!(r.failure.is_none());
    serde_json::to_value(&r).expect("a restore report always serialises");
    assert_eq!(read(&ours), WITH_KEEPER);
    assert_eq!(read(&foreign), FOREIGN);
}

#[test]
fn doctor_and_gw_migrate_report_the_same_files_with_the_same_verdicts() {
    let w = World::new();
    let ws_root = w.wd.join("feat-x");
    let state = State {
        workspaces: vec![workspace("feat-x", &ws_root, &["api"])],
    };
    put(&ws_root.join(".mcp.json"), GO_FILE);
    put(&ws_root.join("api/.mcp.json"), WITH_KEEPER);
    put(&w.wd.join("orphan/.mcp.json"), GO_FILE);
    put(&w.wd.join("foreign/.mcp.json"), FOREIGN);
    put(&w.wd.join("sibling/shared.json"), GO_FILE);
    std::os::unix::fs::symlink("../sibling/shared.json", ws_root.join("link.json")).unwrap();
    fs::remove_file(ws_root.join(".mcp.json")).unwrap();
    std::os::unix::fs::symlink("../sibling/shared.json", ws_root.join(".mcp.json")).unwrap();
    database(&w.home);

    for state in [Some(&state), None] {
        let findings = doctor_findings(&w.home, None, state);
        let migrate_plan = scan(&w.home, &Scope::install(&w.home, None, state));
        let expected: Vec<(PathBuf, String)> = migrate_plan
            .items
            .iter()
            .filter(|i| i.reason != Some(Reason::ForeignEntry))
            .map(|i| (i.path.clone(), format!("({})", i.verdict())))
            .collect();
        let got: Vec<(PathBuf, String)> = findings
            .iter()
            .zip(&expected)
            .map(|(f, (_, v))| {
                (
                    f.path.clone(),
                    if f.issue.contains(v) {
                        v.clone()
                    } else {
                        f.issue.clone()
                    },
                )
            })
            .collect();
        assert_eq!(got, expected, "state readable: {}", state.is_some());
        assert!(
            findings.iter().any(|f| f.path == w.home.messages_db()),
            "the database is found with or without a readable state"
        );
        let link = findings
            .iter()
            .find(|f| f.path == ws_root.join(".mcp.json"))
            .unwrap();
        assert!(
            link.fixable,
            "a link into a sibling directory is inside the scope"
        );
    }

    let fixed = fix(&w.home, &w.env).unwrap();
    assert!(
        fixed.items.iter().all(|i| i.status == Status::Done),
        "{fixed:#?}"
    );
    assert!(fixed.backup.is_some());
    assert!(doctor_findings(&w.home, None, Some(&state)).is_empty());
    assert_eq!(read(&ws_root.join("api/.mcp.json")), KEEPER_ONLY);
    assert_eq!(read(&w.wd.join("sibling/shared.json")), EMPTIED);
}

#[test]
fn a_swap_keeps_an_edit_made_after_the_last_look() {
    let w = World::new();
    let file = w.wd.join("ws/.mcp.json");
    put(&file, WITH_KEEPER);
    let before = fsx::sha256_hex(WITH_KEEPER.as_bytes());
    let ours = fsx::sha256_hex(KEEPER_ONLY.as_bytes());
    // Someone's edit lands after gw-migrate read the file and before it swaps.
    let mine = WITH_KEEPER.replace("keeper-mcp", "mine");
    put(&file, &mine);
    let tmp = files::tmp_for(&file, "id", 1, false);
    put(&tmp, KEEPER_ONLY);
    let swapped = files::swap_in(&tmp, &file, &before, &ours).unwrap();
    assert_eq!(swapped, files::Swapped::Changed);
    assert_eq!(read(&file), mine, "the edit is in place");
    assert!(!tmp.exists());
    // Unchanged, the swap goes through and the original is gone (its copy is the backup's).
    put(&file, WITH_KEEPER);
    put(&tmp, KEEPER_ONLY);
    assert_eq!(
        files::swap_in(&tmp, &file, &before, &ours).unwrap(),
        files::Swapped::Done
    );
    assert_eq!(read(&file), KEEPER_ONLY);
    assert!(!tmp.exists());
}

#[test]
fn a_version_swapped_out_by_a_killed_run_goes_back_or_is_kept() {
    let w = World::new();
    let file = w.wd.join("ws/.mcp.json");
    let tmp = files::tmp_for(&file, "id", 1, false);
    let (before, after) = (
        fsx::sha256_hex(WITH_KEEPER.as_bytes()),
        fsx::sha256_hex(KEEPER_ONLY.as_bytes()),
    );
    let mine = WITH_KEEPER.replace("keeper-mcp", "mine");
    // Killed between the swap and the look: the edit made meanwhile is the temporary
    // file, gw-migrate's version is in place. It goes back.
    put(&file, KEEPER_ONLY);
    put(&tmp, &mine);
    assert_eq!(
        files::settle(&tmp, &file, &[&before, &after], Some(&after), Some(&before)),
        files::Settled::PutBack
    );
    assert_eq!(read(&file), mine);
    assert!(!tmp.exists());
    // Something else is in place: both versions stay, the swapped-out one under a name no
    // clean-up removes.
    put(&tmp, WITH_KEEPER.replace("keeper-mcp", "older"));
    let files::Settled::Kept(kept) =
        files::settle(&tmp, &file, &[&before, &after], Some(&after), Some(&before))
    else {
        panic!("kept");
    };
    assert!(!tmp.exists());
    assert!(
        kept.to_string_lossy().ends_with(".kept"),
        "{}",
        kept.display()
    );
    assert_eq!(read(&kept), WITH_KEEPER.replace("keeper-mcp", "older"));
    assert_eq!(read(&file), mine);
    // Killed while it wrote its version, before any exchange: the file is as it was, and
    // the temporary file, cut short, is gw-migrate's own. It is removed (the kill suite
    // found one kept as a user's version).
    put(&file, WITH_KEEPER);
    put(&tmp, &KEEPER_ONLY[..KEEPER_ONLY.len() / 2]);
    assert_eq!(
        files::settle(&tmp, &file, &[&before, &after], Some(&after), Some(&before)),
        files::Settled::Removed
    );
    assert!(!tmp.exists());
    assert_eq!(read(&file), WITH_KEEPER);
    // What gw-migrate wrote, or what the backup keeps, is simply removed.
    put(&file, &mine);
    put(&tmp, KEEPER_ONLY);
    assert_eq!(
        files::settle(&tmp, &file, &[&before, &after], Some(&after), Some(&before)),
        files::Settled::Removed
    );
    assert!(!tmp.exists());
}

#[test]
fn a_killed_run_that_swapped_out_an_edit_puts_it_back() {
    let w = World::new();
    let file = w.wd.join("e/.mcp.json");
    put(&file, WITH_KEEPER);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let backup = w.apply(&mut plan).unwrap();
    as_killed(&backup.path);
    // The kill came right after the swap: the edit made just before it is the temporary
    // file, and gw-migrate's version is in place.
    let mine = WITH_KEEPER.replace("keeper-mcp", "mine");
    let tmp = files::tmp_for(&file, &backup.id, 1, false);
    put(&tmp, &mine);
    let opts = Options {
        apply: true,
        ..Options::default()
    };
    assert!(super::recover::recover(&w.home).is_empty());
    let m = manifest::read(&backup.path, &w.home);
    // Nothing of the run is left to restore: its backup is gone.
    assert!(m.is_err(), "{m:#?}");
    assert_eq!(read(&file), mine, "the edit is back in place");
    assert!(tmp_files(&w.root).is_empty());
    let again = migrate(&w.home, &w.env, &opts, &Cancel::never()).unwrap();
    assert_eq!(again.plan.items[0].status, Status::Done);
    // The run that followed edited the user's version, which restore gives back.
    w.restore(None).unwrap();
    assert_eq!(read(&file), mine);
}

#[test]
fn a_database_opened_between_the_scan_and_the_move_is_left_whole() {
    let w = World::new();
    let mut db = b"SQLite format 3\0".to_vec();
    db.extend_from_slice(&[7; 4080]);
    put(&w.home.messages_db(), &db);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    assert_eq!(plan.items.len(), 1);
    // Opened in WAL mode after the scan: SQLite made its sidecars.
    put(&w.home.root().join("messages.db-wal"), WAL);
    put(&w.home.root().join("messages.db-shm"), b"shm bytes");
    let backup = w.apply(&mut plan);
    assert!(backup.is_none(), "nothing moved");
    let i = &plan.items[0];
    assert_eq!(
        (i.status, i.reason),
        (Status::Skipped, Some(Reason::ChangedSinceScan)),
        "{i:#?}"
    );
    assert!(
        i.detail.as_deref().unwrap().contains("messages.db-wal"),
        "{i:#?}"
    );
    for n in DATABASE_FILES.iter().take(3) {
        assert!(w.home.root().join(n).is_file(), "{n} is where it was");
    }
}

#[test]
fn a_file_changed_just_before_it_moves_goes_back() {
    let w = World::new();
    let file = w.wd.join("d/.mcp.json");
    put(&file, GO_FILE);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let backup = w.apply(&mut plan).unwrap();
    // Killed after the move, before the comparison; the file had changed just before.
    as_killed(&backup.path);
    let copy = backup.path.join("files/00001.mcp.json");
    put(&copy, format!("{GO_FILE} "));
    super::recover::recover(&w.home);
    assert_eq!(
        read(&file),
        format!("{GO_FILE} "),
        "back in place, not lost"
    );
    assert!(
        backups(&w.home).is_empty(),
        "the run changed nothing in the end"
    );
}

#[test]
fn restore_writes_only_where_the_run_scanned() {
    let w = World::new();
    let file = w.wd.join("ws/.mcp.json");
    put(&file, WITH_KEEPER);
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    w.apply(&mut plan).unwrap();
    // The directory is swapped for a symlink to somewhere else, holding the same file.
    let elsewhere = w.root.join("elsewhere");
    put(&elsewhere.join(".mcp.json"), KEEPER_ONLY);
    fs::rename(w.wd.join("ws"), w.root.join("ws-moved")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, w.wd.join("ws")).unwrap();
    let r = w.restore(None).unwrap();
    assert_eq!(statuses(&r), [(file.clone(), RestoreStatus::Conflict)]);
    assert_eq!(read(&elsewhere.join(".mcp.json")), KEEPER_ONLY, "untouched");
}

#[test]
fn restored_files_never_get_special_bits_or_a_wider_mode() {
    let w = World::new();
    let file = w.wd.join("ws/.mcp.json");
    put(&file, WITH_KEEPER);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o4640)).unwrap();
    let mut plan = scan(&w.home, &w.scope(&State::default()));
    let backup = w.apply(&mut plan).unwrap();
    let copy = backup.path.join("files/00001.mcp.json");
    assert_eq!(fs::metadata(&copy).unwrap().mode() & 0o7777, 0o640);
    assert_eq!(fs::metadata(&backup.path).unwrap().mode() & 0o777, 0o700);
    // A copy narrowed since is not widened back.
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o600)).unwrap();
    w.restore(None).unwrap();
    assert_eq!(fs::metadata(&file).unwrap().mode() & 0o7777, 0o600);
    assert_eq!(read(&file), WITH_KEEPER);
}
