//! The scan against git, on worktrees made to trip it.

use std::path::Path;

use crate::git::Repo;
use crate::ops::testutil::git;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    crate::fsx::create_dir_all(p.parent().unwrap()).unwrap();
    crate::fsx::write_atomic(&p, text.as_bytes()).unwrap();
}

#[cfg(target_os = "linux")]
fn fifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// rustix has no `mknodat` or `mkfifoat` for Apple's systems: POSIX's `mkfifo` utility
/// makes it there.
#[cfg(not(target_os = "linux"))]
fn fifo(path: &Path) {
    crate::proc::Cmd::new("mkfifo", path.parent().unwrap())
        .arg("-m")
        .arg("644")
        .arg(path)
        .check()
        .unwrap();
}

/// A new repository in a temporary directory, and its path.
fn new_repo() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    (tmp, dir)
}

/// `git status --porcelain` lines, conflicts as `UU` and sorted by path as gw sorts them.
fn git_status(dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "-c",
        "core.quotePath=false",
        "status",
        "--porcelain",
        "--no-renames",
    ];
    args.extend(extra);
    let mut lines: Vec<String> = git(dir, &args).lines().map(str::to_string).collect();
    lines.sort_by(|a, b| a[3..].cmp(&b[3..]).then(a.cmp(b)));
    lines
}

fn gw_status(dir: &Path) -> Vec<String> {
    let mut lines = Repo::open(dir).unwrap().changes_shown().unwrap().lines;
    lines.sort_by(|a, b| a[3..].cmp(&b[3..]).then(a.cmp(b)));
    lines
}

/// A repository whose worktree was then changed in the ways a file comparison can get
/// wrong.
fn hostile_repository() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("wt");
    std::fs::create_dir(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    write(
        &dir,
        ".gitignore",
        "*.o\nign/\ndist/\nlogs/\n!logs/keep.txt\n",
    );
    for d in ["linked", "filed", "gone", "keep"] {
        write(&dir, &format!("{d}/a.txt"), "a\n");
        write(&dir, &format!("{d}/sub/b.txt"), "b\n");
    }
    for f in [
        "to-dir.txt",
        "to-empty-dir.txt",
        "mode.sh",
        "same-size.txt",
        "crlf.txt",
        "c d/é f.txt",
        "a.b",
        "a/x",
        "a-b/c",
        "a0",
    ] {
        write(&dir, f, "content\n");
    }
    std::os::unix::fs::symlink("a0", dir.join("link")).unwrap();
    git(&dir, &["add", "-A"]);
    write(&dir, "dist/tracked.js", "t\n");
    git(&dir, &["add", "-f", "dist/tracked.js"]);
    git(&dir, &["commit", "-q", "-m", "one"]);

    // A tracked directory become a symbolic link to a copy of itself, and a file.
    std::fs::rename(dir.join("linked"), dir.join("copy")).unwrap();
    std::os::unix::fs::symlink("copy", dir.join("linked")).unwrap();
    std::fs::remove_dir_all(dir.join("filed")).unwrap();
    write(&dir, "filed", "now a file\n");
    std::fs::remove_dir_all(dir.join("gone")).unwrap();
    // Tracked files become directories, one with a file in it.
    std::fs::remove_file(dir.join("to-dir.txt")).unwrap();
    write(&dir, "to-dir.txt/inside", "x\n");
    std::fs::remove_file(dir.join("to-empty-dir.txt")).unwrap();
    std::fs::create_dir(dir.join("to-empty-dir.txt")).unwrap();
    // A fifo where a file was, and a directory where an intent-to-add file was.
    std::fs::remove_file(dir.join("a0")).unwrap();
    fifo(&dir.join("a0"));
    write(&dir, "intended.txt", "i\n");
    git(&dir, &["add", "-N", "intended.txt"]);
    std::fs::remove_file(dir.join("intended.txt")).unwrap();
    write(&dir, "intended.txt/x", "x\n");
    // The executable bit.
    std::fs::set_permissions(
        dir.join("mode.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // Same size, the old modification time: only the inode change time tells.
    let old = std::fs::metadata(dir.join("same-size.txt"))
        .unwrap()
        .modified()
        .unwrap();
    write(&dir, "same-size.txt", "CONTENT\n");
    crate::ops::testutil::set_modified(&dir.join("same-size.txt"), old);
    // A symbolic link pointing elsewhere, with a target of the same length.
    std::fs::remove_file(dir.join("link")).unwrap();
    std::os::unix::fs::symlink("a.b", dir.join("link")).unwrap();
    // Untracked: in an ignored tracked directory (ignored), re-included under an
    // ignored directory (still ignored), a directory of only ignored files, an empty
    // one, a repository, a directory of both, a symbolic link to a directory, a fifo.
    write(&dir, "dist/new.js", "n\n");
    write(&dir, "logs/keep.txt", "k\n");
    write(&dir, "only-ignored/x.o", "o\n");
    write(&dir, "only-ignored/deep/y.o", "o\n");
    std::fs::create_dir_all(dir.join("empty/inner")).unwrap();
    std::fs::create_dir(dir.join("nest")).unwrap();
    git(&dir.join("nest"), &["init", "-q"]);
    write(&dir, "both/f.txt", "f\n");
    write(&dir, "both/g.o", "o\n");
    write(&dir, "both/ign/h", "h\n");
    write(&dir, "both/deeper/i.txt", "i\n");
    write(&dir, "keep/sub/new.txt", "n\n");
    write(&dir, "keep/ign/q", "q\n");
    write(&dir, "keep/x.o", "o\n");
    std::os::unix::fs::symlink("keep", dir.join("dirlink")).unwrap();
    fifo(&dir.join("fifo"));
    (tmp, dir)
}

#[test]
fn the_comparison_agrees_with_git_on_a_hostile_worktree() {
    let (_tmp, dir) = hostile_repository();
    for untracked in ["normal", "all", "no", "false", "Off"] {
        git(&dir, &["config", "status.showUntrackedFiles", untracked]);
        assert_eq!(
            gw_status(&dir),
            git_status(&dir, &[]),
            "status.showUntrackedFiles={untracked}"
        );
    }
    git(&dir, &["config", "status.showUntrackedFiles", "normal"]);
    // The ignored files a delete would remove.
    let (_, mut ignored) = Repo::open(&dir).unwrap().changes_and_ignored().unwrap();
    ignored.sort();
    let mut by_git: Vec<String> = git_status(&dir, &["--ignored=traditional"])
        .into_iter()
        .filter_map(|l| l.strip_prefix("!! ").map(str::to_string))
        .collect();
    by_git.sort();
    assert_eq!(ignored, by_git);
    // Without executable bits, the mode change is not one.
    git(&dir, &["config", "core.fileMode", "false"]);
    assert_eq!(gw_status(&dir), git_status(&dir, &[]));
    assert!(!gw_status(&dir).iter().any(|l| l.ends_with("mode.sh")));
}

#[test]
fn a_linked_worktree_under_a_gitdir_condition_is_read_as_git_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let dir = root.join("repo");
    std::fs::create_dir(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    write(&dir, "run.sh", "#!/bin/sh\n");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    let wt = root.join("wt");
    git(
        &dir,
        &["worktree", "add", "-q", "-b", "feat", wt.to_str().unwrap()],
    );
    // git matches `gitdir:` against the worktree's own git directory, where this does not
    // apply; gix against the repository's, where it does.
    write(&root, "included", "[core]\n\tfileMode = false\n");
    git(
        &dir,
        &[
            "config",
            &format!("includeIf.gitdir:{}/.git.path", dir.display()),
            root.join("included").to_str().unwrap(),
        ],
    );
    std::fs::set_permissions(
        wt.join("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    assert_eq!(git_status(&wt, &[]), [" M run.sh"]);
    assert_eq!(gw_status(&wt), [" M run.sh"]);
}

#[test]
fn a_racily_clean_file_found_unchanged_is_written_back_no_longer_racy() {
    let (_tmp, dir) = new_repo();
    write(&dir, "f.txt", "f\n");
    git(&dir, &["add", "f.txt"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    // The file last changed an hour ago (long enough for its stat data to be written back),
    // and the index as old as the file: the file is racy, read at every status.
    let file_time = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    crate::ops::testutil::set_modified(&dir.join("f.txt"), file_time);
    git(&dir, &["update-index", "-q", "--refresh"]);
    let index = dir.join(".git/index");
    crate::ops::testutil::set_modified(&index, file_time);
    assert_eq!(gw_status(&dir), Vec::<String>::new());
    let after = std::fs::metadata(&index).unwrap().modified().unwrap();
    assert!(
        after > file_time,
        "the index is written back, later than the file"
    );
}

#[test]
fn a_racily_clean_file_is_read() {
    let (_tmp, dir) = new_repo();
    // Only modification time and size compared; the file's time is the index's second
    // or later, so an edit of the same size within it leaves the stat data equal.
    git(&dir, &["config", "core.checkStat", "minimal"]);
    write(&dir, "f.txt", "aaaa\n");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(100);
    let set = |t| crate::ops::testutil::set_modified(&dir.join("f.txt"), t);
    set(later);
    git(&dir, &["add", "f.txt"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    write(&dir, "f.txt", "bbbb\n");
    set(later);
    assert_eq!(git_status(&dir, &[]), [" M f.txt"]);
    assert_eq!(gw_status(&dir), [" M f.txt"]);
}

#[test]
fn a_touched_file_is_compared_as_git_stores_it() {
    let (_tmp, dir) = new_repo();
    write(&dir, ".gitattributes", "*.txt text eol=crlf\n");
    write(&dir, "w.txt", "one\ntwo\n");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    std::fs::remove_file(dir.join("w.txt")).unwrap();
    git(&dir, &["checkout", "--", "w.txt"]);
    assert_eq!(std::fs::read(dir.join("w.txt")).unwrap(), b"one\r\ntwo\r\n");
    // Rewritten with the same bytes: the stat data differs, the content as git stores
    // it (line ends converted) does not.
    write(&dir, "w.txt", "one\r\ntwo\r\n");
    assert_eq!(gw_status(&dir), Vec::<String>::new());
    write(&dir, "w.txt", "one\r\nTWO\r\n");
    assert_eq!(gw_status(&dir), [" M w.txt"]);
    assert_eq!(git_status(&dir, &[]), [" M w.txt"]);
}

/// The ignored names delete would remove, by grove and by git (grove lists them as git's
/// `--ignored=traditional` does with untracked directories collapsed, whatever
/// `status.showUntrackedFiles` says).
fn ignored_both_ways(dir: &Path) -> Vec<(String, Vec<String>, Vec<String>)> {
    ["normal", "all"]
        .into_iter()
        .map(|mode| {
            git(dir, &["config", "status.showUntrackedFiles", mode]);
            let (_, mut ours) = Repo::open(dir).unwrap().changes_and_ignored().unwrap();
            ours.sort();
            let mut theirs: Vec<String> =
                git_status(dir, &["--ignored=traditional", "--untracked-files=normal"])
                    .into_iter()
                    .filter_map(|l| l.strip_prefix("!! ").map(str::to_string))
                    .collect();
            theirs.sort();
            (mode.to_string(), ours, theirs)
        })
        .collect()
}

#[test]
fn an_ignored_directory_holding_nothing_is_not_listed_inside_an_untracked_one() {
    // Found by the status-diff (seed 20261283): an ignored directory holding only a fake
    // `.git` inside an untracked directory made grove list the untracked one as ignored.
    let (_tmp, dir) = new_repo();
    write(&dir, ".gitignore", "*.txt\n");
    write(&dir, "t/a", "a\n");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    std::fs::create_dir_all(dir.join("t/e.txt")).unwrap();
    std::fs::create_dir_all(dir.join("t/u/e2.txt")).unwrap();
    write(&dir, "t/v/g.txt/.git/HEAD", "ref: refs/heads/main\n");
    write(&dir, "t/f/.git/HEAD", "ref: refs/heads/main\n");
    write(&dir, "t/f/h.txt/.git/HEAD", "ref: refs/heads/main\n");
    write(&dir, "t/w/x.txt", "x\n");
    for (mode, ours, theirs) in ignored_both_ways(&dir) {
        assert_eq!(ours, theirs, "status.showUntrackedFiles={mode}");
    }
}

#[test]
fn a_fifo_where_a_symbolic_link_was_changed_kind() {
    // Found by the status-diff (seed 20261447): git takes a fifo for a regular file, so
    // where the index holds a symbolic link it is ` T`, where a file, ` M`.
    let (_tmp, dir) = new_repo();
    write(&dir, "f", "f\n");
    std::os::unix::fs::symlink("f", dir.join("link")).unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    for name in ["f", "link"] {
        std::fs::remove_file(dir.join(name)).unwrap();
        fifo(&dir.join(name));
    }
    assert_eq!(gw_status(&dir), git_status(&dir, &[]));
}

#[test]
fn attributes_from_the_worktree_and_from_the_index_in_one_scan() {
    // Found by the status-diff (seed 20270139): a file under a `.gitattributes` that is a
    // fifo takes its attributes from the index, the others from the worktree. gix's filter
    // pipeline kept one attribute outcome for both sources, and panicked (index out of
    // bounds) when the worktree's named an attribute (`eol`) the index's did not.
    let (_tmp, dir) = new_repo();
    write(&dir, "a.md", "a\n");
    write(&dir, "logs/b.md", "b\n");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    write(&dir, ".gitattributes", "*.md eol=lf\n");
    fifo(&dir.join("logs/.gitattributes"));
    // Rewritten with the same bytes: their stat data differs, so both are read, the one
    // under the worktree's attributes first.
    write(&dir, "a.md", "a\n");
    write(&dir, "logs/b.md", "b\n");
    // git would wait on the fifo forever; grove takes it for no rules file (and, as git
    // does with a fifo, does not list it).
    assert_eq!(gw_status(&dir), ["?? .gitattributes"]);
    write(&dir, "logs/b.md", "B\n");
    assert_eq!(gw_status(&dir), ["?? .gitattributes", " M logs/b.md"]);
}

#[test]
fn a_write_back_leaves_a_file_of_another_size_modified_to_git() {
    // Found by the status-diff (seed 20270728): a racy entry whose file has another size is
    // modified to git without being read; grove smudged it (size 0) when it wrote the index
    // back, and git then read it — under core.autocrlf the CRLF file cleans to the staged
    // LF blob, so git called it unchanged after grove looked.
    let (_tmp, dir) = new_repo();
    git(&dir, &["config", "core.autocrlf", "true"]);
    write(&dir, "f.txt", "one\n");
    write(&dir, "g.txt", "g\n");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    write(&dir, "f.txt", "one\r\n");
    // g.txt touched long ago, so grove has stat data to write back; the index older than
    // f.txt's entry, which is then racy.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    write(&dir, "g.txt", "g\n");
    crate::ops::testutil::set_modified(&dir.join("g.txt"), hour_ago);
    crate::ops::testutil::set_modified(&dir.join(".git/index"), hour_ago);
    // git's view without letting it write the index itself.
    let git_sees = || git(&dir, &["--no-optional-locks", "status", "--porcelain"]);
    let before = git_sees();
    assert_eq!(before, " M f.txt");
    assert_eq!(gw_status(&dir), [" M f.txt"]);
    let index = std::fs::metadata(dir.join(".git/index")).unwrap();
    assert!(
        index.modified().unwrap() > hour_ago,
        "grove wrote the index back (g.txt's stat data)"
    );
    assert_eq!(git_sees(), before, "git sees what it saw");
}

#[test]
fn an_intent_to_add_file_under_a_tree_cached_as_heads_is_not_a_staged_deletion() {
    // Found by the status-diff (seed 20270689): `git reset --hard` keeps an intent-to-add
    // entry whose blob is HEAD's (an empty file) and caches HEAD's trees in the index; git's
    // comparison of HEAD with the index passes over a directory whose cached tree is HEAD's,
    // so it shows ` A` there — and `DA` for the same file at the top, where no tree is
    // passed over. grove said `DA` for both.
    let (_tmp, dir) = new_repo();
    write(&dir, "d/e.txt", "");
    write(&dir, "top.txt", "");
    write(&dir, "f.txt", "f\n");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    git(&dir, &["rm", "-q", "--cached", "d/e.txt", "top.txt"]);
    git(&dir, &["add", "-N", "d/e.txt", "top.txt"]);
    assert_eq!(gw_status(&dir), ["DA d/e.txt", "DA top.txt"]);
    git(&dir, &["reset", "-q", "--hard"]);
    let git_sees = git(&dir, &["--no-optional-locks", "status", "--porcelain"]);
    assert_eq!(git_sees, " A d/e.txt\nDA top.txt");
    assert_eq!(gw_status(&dir), [" A d/e.txt", "DA top.txt"]);
}

#[test]
fn a_directory_named_gitattributes_is_an_empty_rules_file() {
    // Found by the status-diff (seed 20271517): git opens a `.gitattributes` that is a
    // directory, reads nothing from it, and so uses no rules there; gix passed over it and
    // read the staged file in its place. A file checked out with CRLF under `eol=crlf` is
    // then modified to git, and was unchanged to grove.
    let (_tmp, dir) = new_repo();
    write(&dir, ".gitattributes", "*.crlf text eol=crlf\n");
    write(&dir, "w.crlf", "a\nb\n");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    std::fs::remove_file(dir.join("w.crlf")).unwrap();
    git(&dir, &["checkout", "--", "w.crlf"]);
    assert_eq!(std::fs::read(dir.join("w.crlf")).unwrap(), b"a\r\nb\r\n");
    std::fs::remove_file(dir.join(".gitattributes")).unwrap();
    std::fs::create_dir(dir.join(".gitattributes")).unwrap();
    // Touched, so that both read it.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    crate::ops::testutil::set_modified(&dir.join("w.crlf"), hour_ago);
    let git_sees = git(&dir, &["--no-optional-locks", "status", "--porcelain"]);
    assert_eq!(git_sees, " D .gitattributes\n M w.crlf");
    assert_eq!(gw_status(&dir), [" D .gitattributes", " M w.crlf"]);
}

#[test]
fn a_submodule_holding_work_is_modified_when_grove_answers_itself() {
    // Found by the status-diff (seed 20271462): with a fifo where git reads rules, grove
    // answers a status itself, submodules included; it compared a submodule's HEAD alone,
    // and git calls one holding a new or changed file modified (a new one only when it shows
    // untracked files).
    let (_tmp, dir) = new_repo();
    let inner = dir.join("inner");
    write(&dir, "f", "f\n");
    git(&dir, &["init", "-q", "inner"]);
    write(&dir, "inner/i", "i\n");
    git(&inner, &["add", "i"]);
    git(&inner, &["commit", "-q", "-m", "i"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one"]);
    write(&dir, "inner/new", "n\n");
    let git_sees = |args: &[&str]| {
        let mut all = vec!["--no-optional-locks", "status", "--porcelain"];
        all.extend_from_slice(args);
        git(&dir, &all)
    };
    assert_eq!(git_sees(&[]), " M inner");
    assert_eq!(git_sees(&["-uno"]), "");
    let both = |dir: &Path| {
        let mut normal = Repo::open(dir).unwrap().changes().unwrap().lines;
        normal.sort();
        git(dir, &["config", "status.showUntrackedFiles", "no"]);
        let mut shown = Repo::open(dir).unwrap().changes_shown().unwrap().lines;
        shown.sort();
        git(dir, &["config", "--unset", "status.showUntrackedFiles"]);
        (normal, shown)
    };
    fifo(&dir.join(".gitignore"));
    assert_eq!(both(&dir), (vec![" M inner".to_string()], vec![]));
    std::fs::remove_file(dir.join("inner/new")).unwrap();
    write(&dir, "inner/i", "changed\n");
    let m = vec![" M inner".to_string()];
    assert_eq!(both(&dir), (m.clone(), m));
}

#[test]
fn the_index_fuzz_target_agrees_with_gix_on_real_indexes() {
    // Version 2, 3 (an intent-to-add entry is extended) and 4 (prefix-compressed paths),
    // with the cache tree and untracked cache extensions: what `cargo xtask fuzz index`
    // starts from (fuzz/corpus/index).
    for version in ["2", "3", "4"] {
        let (_tmp, dir) = new_repo();
        git(&dir, &["config", "core.untrackedCache", "true"]);
        for p in ["a.txt", "dir/b.txt", "dir/sub/c.txt", "dir/sub/d.txt", "e"] {
            write(&dir, p, p);
        }
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", "one"]);
        write(&dir, "new.txt", "n");
        git(&dir, &["add", "-N", "new.txt"]);
        git(&dir, &["update-index", "--index-version", version]);
        git(&dir, &["status", "--porcelain"]);
        let bytes = std::fs::read(dir.join(".git/index")).unwrap();
        crate::git::fuzz_index(&bytes);
    }
}
