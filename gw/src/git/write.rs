//! Mutations through the `git` CLI, which handles credentials, hooks, config and every
//! repository format git itself supports.

use std::path::Path;
use std::time::Instant;

use super::Error;
use crate::log;
use crate::proc::{self, Cmd, Output, Stream};

/// How far git says a step is, from what it prints with `--progress`
/// (`Updating files:  45% (9000/20000)`, `Receiving objects: 12% (120/1000), 1.2 MiB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress<'a> {
    /// git's name for the step: `Updating files`, `Receiving objects`, …
    pub what: &'a str,
    pub done: u64,
    /// `None` while git is still counting.
    pub total: Option<u64>,
}

/// Reads one line of git's progress output; `None` for anything else. Besides the
/// `What: n% (done/total)` of fetch, clone and checkout, a rebase's `Rebasing (2/5)`.
pub fn parse_progress(line: &str) -> Option<Progress<'_>> {
    let line = line.trim();
    let line = line.strip_prefix("remote: ").unwrap_or(line);
    if let Some(counts) = line.strip_prefix("Rebasing (") {
        let (done, total) = counts.strip_suffix(')')?.split_once('/')?;
        return Some(Progress {
            what: "Rebasing",
            done: done.parse().ok()?,
            total: Some(total.parse().ok()?),
        });
    }
    let (what, rest) = line.split_once(": ")?;
    if what.is_empty() || what.contains(['/', '\'', '`']) {
        return None;
    }
    let rest = rest.trim_start();
    if let Some(open) = rest.find('(') {
        let inner = &rest[open + 1..open + rest[open..].find(')')?];
        let (done, total) = inner.split_once('/')?;
        return Some(Progress {
            what,
            done: done.trim().parse().ok()?,
            total: Some(total.trim().parse().ok()?),
        });
    }
    let count = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    Some(Progress {
        what,
        done: count.parse().ok()?,
        total: None,
    })
}

/// Where a long mutation's progress goes: `None` when nothing shows it (stderr is not a
/// terminal), and then git is asked for none (`--quiet`, no `--progress`): git does not
/// count for nobody, and grove neither reads its lines as they come nor parses them.
pub type OnProgress<'a> = Option<&'a mut dyn FnMut(Progress<'_>)>;

/// Runs a git mutation that reports progress (`--progress`, or `worktree add` without
/// `--quiet`), handing each report to `on`; fails like [`check`] (and is logged like it),
/// with the progress lines left out of the error and the log. Without `on`, it is
/// [`check`] (the caller has asked git for no progress).
fn run_with_progress(cmd: &mut Cmd, repo: &Path, on: OnProgress<'_>) -> Result<(), Error> {
    let Some(on) = on else {
        check(cmd, repo)?;
        return Ok(());
    };
    // Without this, git waits two seconds before its first report.
    cmd.env("GIT_PROGRESS_DELAY", "0").progress_lines();
    logged(cmd, repo, |cmd| {
        let mut out = cmd.stream(&mut |stream, line| {
            if stream == Stream::Stderr
                && let Some(p) = parse_progress(line)
            {
                on(p);
            }
        })?;
        let stderr: Vec<&str> = out
            .stderr
            .split(['\r', '\n'])
            .filter(|l| !l.trim().is_empty() && parse_progress(l).is_none())
            .collect();
        out.stderr = stderr.join("\n");
        if out.success() {
            Ok(out)
        } else {
            Err(proc::Error::failed(
                &cmd.display(),
                out.status,
                &proc::tail_lines(&out.stderr, 20),
            ))
        }
    })?;
    Ok(())
}

/// How a worktree gets its branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checkout {
    /// Create `branch` at `start` without an upstream (`--no-track`), so ahead/behind is
    /// measured against the base rather than a branch it was merely started from.
    NewBranch { start: String },
    /// Check out a local branch that already exists.
    Existing,
    /// Create `branch` tracking `remote_ref` (`origin/<branch>`).
    Track { remote_ref: String },
}

/// `git worktree add` of `branch` at `path` in the repository at `source`, reporting the
/// checkout's progress (files written) to `on`. `worktree add` has no `--progress`, but
/// without `--quiet` its checkout reports to a pipe too; it stays one git command, so git's
/// own cleanup of a half-made worktree (on failure, or when it is signalled) still applies.
pub fn worktree_add(
    source: &Path,
    path: &Path,
    branch: &str,
    how: &Checkout,
    on: OnProgress<'_>,
) -> Result<(), Error> {
    let mut cmd = Cmd::git(source);
    parallel_checkout(&mut cmd, source);
    cmd.args(["worktree", "add"]);
    if on.is_none() {
        cmd.arg("--quiet");
    }
    match how {
        Checkout::NewBranch { start } => {
            cmd.args(["--no-track", "-b", branch]).arg(path).arg(start);
        }
        Checkout::Existing => {
            cmd.arg(path).arg(branch);
        }
        Checkout::Track { remote_ref } => {
            cmd.args(["--track", "-b", branch])
                .arg(path)
                .arg(remote_ref);
        }
    }
    run_with_progress(&mut cmd, source, on)
}

/// Lets git write a checkout's files on the threads this task may use (see
/// [`crate::parallel::share`]: every core for one repository, one each when a fan-out
/// already checks out a repository per core), unless the user set `checkout.workers`
/// themselves. git's checkout is single-threaded by default; measured on two cores
/// (docs/performance.md), two workers took 0.87 of the default's time for a 100,000-file
/// `worktree add` on tmpfs and 0.65 for a 2,000-file one on ext4.
fn parallel_checkout(cmd: &mut Cmd, repo: &Path) {
    let workers = crate::parallel::share();
    if workers > 1 && super::Repo::open(repo).is_ok_and(|r| !r.config_has("checkout.workers")) {
        cmd.arg("-c").arg(format!("checkout.workers={workers}"));
    }
}

/// `git worktree remove`; `force` discards uncommitted changes.
pub fn worktree_remove(source: &Path, path: &Path, force: bool) -> Result<(), Error> {
    let mut cmd = Cmd::git(source);
    cmd.args(["worktree", "remove"]);
    if force {
        cmd.args(["--force", "--force"]);
    }
    cmd.arg(path);
    check(&cmd, source)?;
    Ok(())
}

/// `git worktree repair`: re-links worktrees after their directories moved.
pub fn worktree_repair(source: &Path, paths: &[&Path]) -> Result<(), Error> {
    let mut cmd = Cmd::git(source);
    cmd.args(["worktree", "repair"]);
    for p in paths {
        cmd.arg(p);
    }
    check(&cmd, source)?;
    Ok(())
}

/// Deletes a local branch; without `force` git refuses an unmerged one.
pub fn branch_delete(source: &Path, branch: &str, force: bool) -> Result<(), Error> {
    check(
        Cmd::git(source).args(["branch", if force { "-D" } else { "-d" }, "--", branch]),
        source,
    )?;
    Ok(())
}

/// `git fetch --all` in the repository at `source`, reporting progress to `on`.
pub fn fetch(source: &Path, on: OnProgress<'_>) -> Result<(), Error> {
    let mut cmd = Cmd::git(source);
    cmd.args(["fetch", "--all", "--quiet"]);
    if on.is_some() {
        cmd.arg("--progress");
    }
    run_with_progress(&mut cmd, source, on)
}

/// `git clone` of `url` into `dest` (which must not exist), run from `cwd`, reporting
/// progress (objects received, files written) to `on`.
pub fn clone(url: &str, dest: &Path, cwd: &Path, on: OnProgress<'_>) -> Result<(), Error> {
    let mut cmd = Cmd::git(cwd);
    cmd.args(["clone", "--quiet"]);
    if on.is_some() {
        cmd.arg("--progress");
    }
    cmd.args(["--", url]).arg(dest);
    run_with_progress(&mut cmd, cwd, on)
}

/// `git switch` in the worktree at `path` to `target` (a branch, or a commit with `detach`).
pub fn switch(path: &Path, target: &str, detach: bool) -> Result<(), Error> {
    let mut cmd = Cmd::git(path);
    parallel_checkout(&mut cmd, path);
    cmd.args(["switch", "--quiet"]);
    if detach {
        cmd.arg("--detach");
    }
    cmd.arg(target);
    check(&cmd, path)?;
    Ok(())
}

/// Creates `branch` at `at` (a commit) without checking it out.
pub fn branch_create(source: &Path, branch: &str, at: &str) -> Result<(), Error> {
    check(
        Cmd::git(source).args(["branch", "--no-track", "--", branch, at]),
        source,
    )?;
    Ok(())
}

/// Creates the reference `full` (`refs/grove/trash/…`) at `oid`; refused by git when it
/// exists already.
pub fn ref_create(source: &Path, full: &str, oid: &str) -> Result<(), Error> {
    let zero = "0".repeat(oid.len());
    check(
        Cmd::git(source).args(["update-ref", "--no-deref", full, oid, &zero]),
        source,
    )?;
    Ok(())
}

/// One `git update-ref` transaction, all of it or nothing: each of `creates` (name, oid)
/// made where no such reference is, each of `deletes` (name, oid) deleted while it still
/// points at oid (with its reflog). Names are passed NUL-separated, never as lines.
pub fn refs_transaction(
    source: &Path,
    creates: &[(&str, &str)],
    deletes: &[(&str, &str)],
) -> Result<(), Error> {
    if let Some((name, _)) = creates
        .iter()
        .chain(deletes)
        .find(|(n, o)| n.contains('\0') || o.contains('\0') || n.is_empty() || o.is_empty())
    {
        return Err(Error::read(
            source,
            format!("not a reference to update: {name:?}"),
        ));
    }
    let mut input = Vec::new();
    for (name, oid) in creates {
        input.extend_from_slice(format!("create {name}\0{oid}\0").as_bytes());
    }
    for (name, oid) in deletes {
        input.extend_from_slice(format!("delete {name}\0{oid}\0").as_bytes());
    }
    // git commits what it read when its input ends. Input that fits in one atomic pipe
    // write (`PIPE_BUF`, 512 bytes at least) reaches it whole or not at all, even when grove
    // is killed writing it; longer input is an explicit transaction, which git aborts when
    // the input ends before its `commit` (it then prints a line per verb, each waking grove
    // on a busy machine, so only then).
    if input.len() > 512 {
        input.splice(0..0, b"start\0".iter().copied());
        input.extend_from_slice(b"commit\0");
    }
    check(update_ref(source).input(input), source)?;
    Ok(())
}

/// Starts the `git update-ref` of a coming [`refs_transaction`] in each of `sources` (once
/// each) now: it waits for its input, having changed nothing, while grove does what comes
/// first (on a busy machine git's start took most of a delete's branch deletion). One that
/// cannot be started is left out: the transaction then starts its own.
pub fn warm_update_refs<'a>(sources: impl Iterator<Item = &'a Path>) -> Vec<crate::proc::Warm> {
    let mut sources: Vec<&Path> = sources.collect();
    sources.sort();
    sources.dedup();
    sources
        .into_iter()
        .filter_map(|s| update_ref(s).prestart().ok())
        .collect()
}

fn update_ref(source: &Path) -> Cmd {
    let mut cmd = Cmd::git(source);
    cmd.args(["update-ref", "--no-deref", "-z", "--stdin"]);
    cmd
}

/// `git config --remove-section <section>` in the repository's own configuration.
pub fn config_remove_section(source: &Path, section: &str) -> Result<(), Error> {
    check(
        Cmd::git(source).args(["config", "--local", "--remove-section", section]),
        source,
    )?;
    Ok(())
}

/// Deletes the reference `full` if it still points at `oid` (git refuses otherwise).
pub fn ref_delete(source: &Path, full: &str, oid: &str) -> Result<(), Error> {
    check(
        Cmd::git(source).args(["update-ref", "--no-deref", "-d", full, oid]),
        source,
    )?;
    Ok(())
}

/// `git write-tree` of the index file `index` (not the repository's own) into the object
/// database of `source`: the tree of what it holds, so a reference can keep it.
pub fn write_tree(source: &Path, index: &Path) -> Result<String, Error> {
    // Usually there is nothing to write (a clean worktree's index is its HEAD's tree):
    // then no process, which in `gw delete` under load cost 10-35 ms (strace -ttt).
    if let Some(tree) = super::Repo::open(source)
        .ok()
        .and_then(|r| r.written_tree_of(index))
    {
        return Ok(tree);
    }
    let out = check(
        Cmd::git(source)
            .env("GIT_INDEX_FILE", index)
            .args(["write-tree"]),
        source,
    )?;
    Ok(out.stdout.trim().to_string())
}

/// Takes `paths` out of the index file `index` (not the repository's own; every stage of
/// each), as `git rm --cached` does, touching no file.
pub fn index_forget(source: &Path, index: &Path, paths: &[String]) -> Result<(), Error> {
    let mut cmd = Cmd::git(source);
    cmd.env("GIT_INDEX_FILE", index)
        .args(["rm", "--cached", "-q", "--ignore-unmatch", "--"]);
    for p in paths {
        cmd.arg(p);
    }
    check(&cmd, source)?;
    Ok(())
}

/// Adds `branch.<branch>.<key> = value` to the repository's own configuration.
pub fn branch_config_add(source: &Path, branch: &str, key: &str, value: &str) -> Result<(), Error> {
    check(
        Cmd::git(source)
            .args(["config", "--local", "--add"])
            .arg(format!("branch.{branch}.{key}"))
            .arg(value),
        source,
    )?;
    Ok(())
}

/// How a `git rebase` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rebase {
    Done,
    /// git stopped (usually on a conflict); the rebase is still in progress and must be
    /// aborted or continued.
    Stopped {
        /// The files git reported as conflicting.
        conflicts: Vec<String>,
        /// The last lines of git's output.
        output: String,
    },
}

/// `git rebase <onto>` in the worktree at `path`, reporting the commits replayed
/// (`Rebasing (2/5)`) to `on`. `Err` only when git could not be run; a rebase that stops is
/// `Ok(Rebase::Stopped)`.
pub fn rebase(path: &Path, onto: &str, mut on: OnProgress<'_>) -> Result<Rebase, Error> {
    // No editor may open: a rebase that would need one must fail, not hang. Not `--quiet`:
    // its count of commits is the progress.
    let mut cmd = Cmd::git(path);
    cmd.env("GIT_EDITOR", ":")
        .env("GIT_SEQUENCE_EDITOR", ":")
        .args(["rebase", onto])
        .progress_lines();
    let out = logged(&cmd, path, |cmd| {
        cmd.stream(&mut |stream, line| {
            if stream == Stream::Stderr
                && let Some(on) = on.as_mut()
                && let Some(p) = parse_progress(line)
            {
                on(p);
            }
        })
    })?;
    if out.success() {
        return Ok(Rebase::Done);
    }
    let all = format!("{}{}", out.stdout, out.stderr);
    let conflicts = all
        .lines()
        .filter_map(|l| l.strip_prefix("CONFLICT ("))
        .filter_map(|l| {
            l.split_once("Merge conflict in ")
                .map(|(_, f)| f.trim().to_string())
        })
        .collect();
    Ok(Rebase::Stopped {
        conflicts,
        output: crate::proc::tail_lines(&all, 20),
    })
}

/// `git rebase --abort`: puts the branch, index and files back as they were.
pub fn rebase_abort(path: &Path) -> Result<(), Error> {
    check(Cmd::git(path).args(["rebase", "--abort"]), path)?;
    Ok(())
}

/// Throws away changes to tracked files (index and working tree back to HEAD), as
/// `git switch --discard-changes` would; untracked files are not touched.
pub fn discard_changes(path: &Path) -> Result<(), Error> {
    check(
        Cmd::git(path).args(["reset", "--hard", "--quiet", "HEAD"]),
        path,
    )?;
    Ok(())
}

/// `git fetch --all --prune --quiet`: also drops remote-tracking refs whose branch is gone.
pub fn fetch_prune(source: &Path) -> Result<(), Error> {
    check(
        Cmd::git(source).args(["fetch", "--all", "--prune", "--quiet"]),
        source,
    )?;
    Ok(())
}

/// Runs a git mutation that must succeed, recording it in `grove.log`.
fn check(cmd: &Cmd, repo: &Path) -> Result<Output, proc::Error> {
    logged(cmd, repo, Cmd::check)
}

/// Runs `cmd` through `run` (`Cmd::run` or `Cmd::check`) and records the command line, the
/// repository, how it ended and how long it took in `grove.log`.
fn logged(
    cmd: &Cmd,
    repo: &Path,
    run: impl FnOnce(&Cmd) -> Result<Output, proc::Error>,
) -> Result<Output, proc::Error> {
    let start = Instant::now();
    let result = run(cmd);
    let line = cmd.display();
    let took = start.elapsed();
    match &result {
        Ok(out) if out.success() => log::git(&line, repo, log::Outcome::Ok, took, &out.stderr),
        Ok(out) => {
            let status = out.status.to_string();
            let reason = reason(&out.stderr);
            let outcome = log::Outcome::Failed {
                code: &status,
                message: &reason,
            };
            log::git(&line, repo, outcome, took, &out.stderr);
        }
        Err(e) => {
            let (code, stderr) = match e {
                proc::Error::Failed { status, stderr, .. } => (status.to_string(), stderr.as_str()),
                proc::Error::Spawn { .. } => ("spawn failed".to_string(), ""),
            };
            let message = if stderr.is_empty() {
                e.to_string()
            } else {
                reason(stderr)
            };
            let outcome = log::Outcome::Failed {
                code: &code,
                message: &message,
            };
            log::git(&line, repo, outcome, took, stderr);
        }
    }
    result
}

/// The line of git's stderr that says why: the first `fatal:`/`error:` line, else the last.
fn reason(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or(lines.last())
        .map(|l| l.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with one (empty) commit, and that commit.
    fn one_commit() -> (tempfile::TempDir, String) {
        use crate::ops::testutil::git;
        let tmp = tempfile::tempdir().unwrap();
        git(tmp.path(), &["init", "-q", "-b", "main"]);
        git(tmp.path(), &["commit", "-q", "--allow-empty", "-m", "one"]);
        let tip = git(tmp.path(), &["rev-parse", "HEAD"]).trim().to_string();
        (tmp, tip)
    }

    /// A `git update-ref` started ahead runs the transaction it is given; one never used
    /// ends without running it, so the repository's `reference-transaction` hook never
    /// hears of it.
    #[test]
    fn an_update_ref_started_ahead_runs_only_the_transaction_it_is_given() {
        use crate::ops::testutil::git;
        use std::os::unix::fs::PermissionsExt;
        let (tmp, tip) = one_commit();
        let dir = tmp.path();
        let hook = dir.join(".git/hooks/reference-transaction");
        crate::fsx::write_atomic(&hook, b"#!/bin/sh\necho \"$1\" >> hook.log\n").unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        let log = dir.join("hook.log");
        let warm = warm_update_refs([dir, dir].into_iter());
        assert_eq!(warm.len(), 1, "one for each repository");
        drop(warm);
        assert!(!log.exists(), "{:?}", crate::fsx::read(&log));
        let warm = warm_update_refs(std::iter::once(dir));
        refs_transaction(dir, &[("refs/grove/t/x", &tip)], &[]).unwrap();
        drop(warm);
        assert_eq!(crate::fsx::read(&log).unwrap(), "prepared\ncommitted\n");
        assert_eq!(git(dir, &["rev-parse", "refs/grove/t/x"]).trim(), tip);
    }

    /// Short or long (an explicit transaction), the transaction is all of it or nothing:
    /// one delete whose reference moved keeps every create from happening.
    #[test]
    fn a_refs_transaction_of_any_length_is_all_or_nothing() {
        use crate::ops::testutil::git;
        let (tmp, tip) = one_commit();
        let dir = tmp.path();
        git(dir, &["branch", "gone"]);
        let names: Vec<String> = (0..20).map(|i| format!("refs/grove/t/{i:02}")).collect();
        for n in [1usize, 20] {
            let creates: Vec<(&str, &str)> = names[..n]
                .iter()
                .map(|m| (m.as_str(), tip.as_str()))
                .collect();
            let wrong = "0".repeat(40);
            let moved = refs_transaction(dir, &creates, &[("refs/heads/gone", &wrong)]);
            assert!(moved.is_err());
            let listed = git(dir, &["for-each-ref", "--format=%(refname)"]);
            assert!(!listed.contains("refs/grove/"), "{n}: {listed}");
            refs_transaction(dir, &creates, &[("refs/heads/gone", &tip)]).unwrap();
            let listed = git(dir, &["for-each-ref", "--format=%(refname)", "refs/grove/"]);
            assert_eq!(listed.lines().count(), n, "{listed}");
            let deletes: Vec<(&str, &str)> = creates.clone();
            refs_transaction(dir, &[], &deletes).unwrap();
            git(dir, &["branch", "gone"]);
        }
    }

    #[test]
    fn reads_git_progress_lines() {
        let p = |what, done, total| Some(Progress { what, done, total });
        assert_eq!(
            parse_progress("Updating files:  45% (9000/20000)"),
            p("Updating files", 9000, Some(20000))
        );
        assert_eq!(
            parse_progress("Receiving objects: 100% (1000/1000), 1.20 MiB | 3 MiB/s, done."),
            p("Receiving objects", 1000, Some(1000))
        );
        assert_eq!(
            parse_progress("remote: Counting objects: 1234, done."),
            p("Counting objects", 1234, None)
        );
        assert_eq!(
            parse_progress("Rebasing (2/5)"),
            Some(Progress {
                what: "Rebasing",
                done: 2,
                total: Some(5)
            })
        );
        assert_eq!(parse_progress("Rebasing (x/5)"), None);
        assert_eq!(parse_progress("fatal: not a git repository"), None);
        assert_eq!(parse_progress("error: pathspec 'x' did not match"), None);
        assert_eq!(parse_progress("Preparing worktree (new branch 'x')"), None);
    }

    #[test]
    fn checkout_progress_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        let git = |dir: &Path, args: &[&str]| {
            let mut c = Cmd::git(dir);
            c.envs(e2e::HERMETIC_GIT.iter().copied())
                .args(args)
                .check()
                .unwrap();
        };
        std::fs::create_dir(&src).unwrap();
        git(&src, &["init", "-q", "-b", "main"]);
        for i in 0..300 {
            crate::fsx::write_atomic(&src.join(format!("f{i}")), i.to_string().as_bytes()).unwrap();
        }
        git(&src, &["add", "."]);
        git(&src, &["commit", "-q", "-m", "files"]);
        let wt = tmp.path().join("wt");
        let mut last = None;
        let how = Checkout::NewBranch {
            start: "main".into(),
        };
        worktree_add(
            &src,
            &wt,
            "feat",
            &how,
            Some(&mut |p| last = Some((p.what.to_string(), p.done, p.total))),
        )
        .unwrap();
        assert_eq!(last, Some(("Updating files".into(), 300, Some(300))));
        assert!(wt.join("f299").is_file());
        // A failure is an error naming git's reason, without the progress lines.
        let err = worktree_add(
            &src,
            &tmp.path().join("wt2"),
            "feat",
            &how,
            Some(&mut |_| {}),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("fatal:"), "{err}");
        assert!(!err.contains("Updating files"), "{err}");
        // Without anyone to show it, git is asked for no progress, and fails the same way.
        let wt3 = tmp.path().join("wt3");
        let quiet = Checkout::NewBranch {
            start: "main".into(),
        };
        worktree_add(&src, &wt3, "other", &quiet, None).unwrap();
        assert!(wt3.join("f299").is_file());
        let err = worktree_add(&src, &tmp.path().join("wt4"), "other", &quiet, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("fatal:"), "{err}");
    }
}
