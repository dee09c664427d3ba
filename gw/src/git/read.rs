//! Reads through gix, in-process: HEAD, branches, status counts, ahead/behind, remotes and
//! the worktree list.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::Error;
use super::status::{Ask, Untracked};

/// An open repository (a main checkout or a linked worktree).
pub struct Repo {
    pub(super) repo: gix::Repository,
    path: PathBuf,
}

/// What HEAD points at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Head {
    /// The checked-out branch (short name); during a rebase, the branch being rebased.
    pub branch: Option<String>,
    /// The commit HEAD resolves to (hex); `None` for an unborn branch.
    pub oid: Option<String>,
    /// HEAD is detached (and no rebase explains it).
    pub detached: bool,
    /// An operation in progress (`rebase`, `merge`, `cherry-pick`, …).
    pub in_progress: Option<String>,
}

/// Uncommitted changes, counted the way `git status` shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    pub staged: usize,
    pub modified: usize,
    pub untracked: usize,
    pub conflicted: usize,
    /// `git status --short`-style lines (`XY path`), sorted by path.
    pub lines: Vec<String>,
    /// Paths that could not be read — a directory that cannot be opened or listed, a file
    /// that cannot be `lstat`ed or read, a rules file — sorted. git warns about these and
    /// answers without them, and so do `lines`; but what they hold is unknown, so a
    /// worktree with any is judged as holding work: [`Changes::is_clean`] is false, and a
    /// removal must count them as work it would lose (this field is for that judgement).
    pub unreadable: Vec<Unreadable>,
    /// What else git would warn about while answering (a clean filter that could not run,
    /// its file compared unfiltered).
    pub warnings: Vec<String>,
}

/// A path that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unreadable {
    /// Relative to the worktree; a directory ends in `/`.
    pub path: String,
    pub reason: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} cannot be read ({})", self.path, self.reason)
    }
}

impl Changes {
    /// The number of changed paths.
    pub fn count(&self) -> usize {
        self.lines.len()
    }

    /// Nothing uncommitted, and nothing that could not be read: removing the worktree loses
    /// no work of its files.
    pub fn is_clean(&self) -> bool {
        self.lines.is_empty() && self.unreadable.is_empty()
    }

    /// The short-status text, one line per path.
    pub fn short(&self) -> String {
        self.lines.join("\n")
    }
}

/// The base a branch is compared with and created from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// As a user would type it: `origin/main`, or `main` for a local branch.
    pub name: String,
    pub oid: String,
}

/// A local branch and its upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchInfo {
    /// The short name (`feat/x`).
    pub name: String,
    pub oid: String,
    /// The remote-tracking branch it follows (`origin/feat/x`), when one is configured.
    pub upstream: Option<String>,
    /// An upstream is configured but its remote-tracking ref no longer exists (the remote
    /// branch was deleted and fetched with `--prune`).
    pub upstream_gone: bool,
}

/// Everything `gw status` shows for one worktree.
#[derive(Debug, Clone, Default)]
pub struct WorktreeStatus {
    pub head: Head,
    pub changes: Changes,
    pub base: Option<Base>,
    /// Commits on HEAD not on the base, and on the base not on HEAD.
    pub ahead_behind: Option<(usize, usize)>,
    /// The origin URL.
    pub remote: Option<String>,
}

pub(super) fn err(path: &Path) -> impl Fn(gix::Error) -> Error + '_ {
    move |e| Error::read(path, e)
}

impl Repo {
    /// Opens the repository at `path` (a checkout or a linked worktree).
    pub fn open(path: &Path) -> Result<Repo, Error> {
        Repo::open_via(path, path)
    }

    /// Opens the repository at `path`, reaching it through `via`: the same directory,
    /// named relative to the current one (see `fsx::Inside`), so that reading its files
    /// resolves shorter paths. Errors still name `path`.
    pub fn open_via(path: &Path, via: &Path) -> Result<Repo, Error> {
        let opts = gix::open::Options::default().bail_if_untrusted(true);
        let open_error = |e: &dyn std::fmt::Display| Error::Open {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let mut repo = gix::open_opts(path, opts).map_err(|e| open_error(&e))?;
        if via != path {
            // gix makes the work tree of a linked worktree absolute; point it back at the
            // relative name (the same directory, checked by gix) for reading files.
            repo.set_workdir(via.to_path_buf())
                .map_err(|e| open_error(&e))?;
        }
        repo.object_cache_size_if_unset(4 << 20);
        Ok(Repo {
            repo,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn from_parts(repo: gix::Repository, path: PathBuf) -> Repo {
        Repo { repo, path }
    }

    pub fn head(&self) -> Result<Head, Error> {
        let head = self.repo.head().map_err(err(&self.path))?;
        let oid = head.id().map(|id| id.to_string());
        let mut branch = head.referent_name().map(|n| n.shorten().to_string());
        let in_progress = self.repo.state().map(|s| in_progress_name(s).to_string());
        if branch.is_none() && in_progress.is_some() {
            // A rebase detaches HEAD; the branch being rebased is recorded beside it.
            for f in ["rebase-merge/head-name", "rebase-apply/head-name"] {
                if let Some(name) = crate::fsx::read_optional(&self.repo.git_dir().join(f))
                    .ok()
                    .flatten()
                {
                    let name = name.trim();
                    branch = Some(name.strip_prefix("refs/heads/").unwrap_or(name).to_string());
                    break;
                }
            }
        }
        Ok(Head {
            detached: branch.is_none(),
            branch,
            oid,
            in_progress,
        })
    }

    /// The commit a full reference name points to.
    fn ref_id(&self, full: &str) -> Option<ObjectId> {
        let mut r = self.repo.try_find_reference(full).ok()??;
        r.peel_to_id().ok().map(|id| id.detach())
    }

    pub fn local_branch(&self, branch: &str) -> Option<String> {
        self.ref_id(&format!("refs/heads/{branch}"))
            .map(|o| o.to_string())
    }

    pub fn remote_branch(&self, remote: &str, branch: &str) -> Option<String> {
        self.ref_id(&format!("refs/remotes/{remote}/{branch}"))
            .map(|o| o.to_string())
    }

    /// The commit `spec` (a branch, `origin/x`, a hex id) resolves to.
    pub fn rev(&self, spec: &str) -> Option<String> {
        let id = self.repo.rev_parse_single(spec).ok()?;
        Some(id.detach().to_string())
    }

    /// Whether `key` is set in any of the configuration git reads here.
    pub fn config_has(&self, key: &str) -> bool {
        self.repo.config_snapshot().string(key).is_some()
    }

    /// `remote.origin.url` as written in the config, without its userinfo: grove
    /// compares, shows and caches (`cache/remotes.json`) it, and never keeps a credential.
    pub fn origin_url(&self) -> Option<String> {
        let cfg = self.repo.config_snapshot();
        cfg.string("remote.origin.url")
            .map(|s| crate::redact::url_without_userinfo(&s.to_string()).into_owned())
            .filter(|s| !s.is_empty())
    }

    /// Whether `git fetch --all` would change nothing, proven without running it: origin
    /// is a repository on this machine (a path or `file://` URL), the only remote, fetched
    /// with the default refspec, and each of its branches and tags is already here at the
    /// same commit. (A fetch spawns five processes; a local origin is read in a
    /// millisecond.) Any doubt answers `false`, and the caller fetches.
    pub fn origin_is_current(&self) -> bool {
        self.origin_is_current_inner().unwrap_or(false)
    }

    fn origin_is_current_inner(&self) -> Option<bool> {
        let names = self.repo.remote_names();
        if names.len() != 1 || !names.iter().any(|n| *n == "origin") {
            return Some(false);
        }
        let cfg = self.repo.config_snapshot();
        let refspecs = cfg.plumbing().strings("remote.origin.fetch")?;
        let default = ["+refs/heads/*:refs/remotes/origin/*"];
        if refspecs.len() != 1
            || refspecs[0] != default[0]
            || cfg.string("remote.origin.tagOpt").is_some()
        {
            return Some(false);
        }
        let url = self.origin_url()?;
        let path = match url.strip_prefix("file://") {
            Some(p) => PathBuf::from(p),
            None if url.starts_with('/') => PathBuf::from(&url),
            None => return Some(false),
        };
        let opts = gix::open::Options::default().bail_if_untrusted(true);
        let origin = gix::open_opts(&path, opts).ok()?;
        let platform = origin.references().ok()?;
        for r in platform.all().ok()? {
            let r = r.ok()?;
            let name = r.name().as_bstr().to_string();
            let local = if let Some(branch) = name.strip_prefix("refs/heads/") {
                format!("refs/remotes/origin/{branch}")
            } else if name.starts_with("refs/tags/") {
                name.clone()
            } else {
                // Not fetched by the default refspec.
                continue;
            };
            let theirs = r.target().try_id()?.to_owned();
            let ours = self.repo.try_find_reference(local.as_str()).ok()??;
            if ours.target().try_id()? != theirs {
                return Some(false);
            }
        }
        Some(true)
    }

    /// The base branch: `.grove.toml`'s `base_branch` (`origin/<it>`, else the local
    /// branch), else what `origin/HEAD` points to, else `origin/main` or `origin/master`,
    /// else a local `main` or `master`, else the main checkout's branch.
    pub fn resolve_base(&self, configured: Option<&str>) -> Option<Base> {
        let remote = |b: &str| {
            self.ref_id(&format!("refs/remotes/origin/{b}"))
                .map(|o| base(format!("origin/{b}"), o))
        };
        let local = |b: &str| {
            self.ref_id(&format!("refs/heads/{b}"))
                .map(|o| base(b.to_string(), o))
        };
        if let Some(b) = configured {
            return remote(b).or_else(|| local(b));
        }
        if let Ok(Some(r)) = self.repo.try_find_reference("refs/remotes/origin/HEAD")
            && let Some(target) = r.target().try_name().map(|n| n.as_bstr().to_string())
            && let Some(short) = target.strip_prefix("refs/remotes/origin/")
            && let Some(b) = remote(short)
        {
            return Some(b);
        }
        remote("main")
            .or_else(|| remote("master"))
            .or_else(|| local("main"))
            .or_else(|| local("master"))
            .or_else(|| {
                let main = self.repo.main_repo().ok()?;
                let name = main.head_name().ok()??;
                let short = name.shorten().to_string();
                let id = main.head_id().ok()?.detach();
                Some(base(short, id))
            })
    }

    /// Commits reachable from `a` but not `b`, and from `b` but not `a`.
    pub fn ahead_behind(&self, a: &str, b: &str) -> Result<(usize, usize), Error> {
        let a = ObjectId::from_hex(a.as_bytes()).map_err(|e| Error::read(&self.path, e))?;
        let b = ObjectId::from_hex(b.as_bytes()).map_err(|e| Error::read(&self.path, e))?;
        if a == b {
            return Ok((0, 0));
        }
        let count = |from: ObjectId, hide: ObjectId| -> Result<usize, Error> {
            let walk = self
                .repo
                .rev_walk([from])
                .with_hidden([hide])
                .all()
                .map_err(err(&self.path))?;
            let mut n = 0;
            for info in walk {
                info.map_err(err(&self.path))?;
                n += 1;
            }
            Ok(n)
        };
        Ok((count(a, b)?, count(b, a)?))
    }

    /// How many commits of `branch` are reachable from no other branch and no
    /// remote-tracking ref: the work that deleting the branch would lose.
    pub fn unique_commits(&self, branch: &str) -> Result<usize, Error> {
        self.unique_commits_without(branch, &[])
    }

    /// Like [`Repo::unique_commits`], counting the branches `going` (about to be deleted
    /// too) as gone already.
    pub fn unique_commits_without(&self, branch: &str, going: &[&str]) -> Result<usize, Error> {
        let full = format!("refs/heads/{branch}");
        let Some(tip) = self.ref_id(&full) else {
            return Ok(0);
        };
        self.commits_hidden_from_refs(tip, |name| {
            name != full
                && (name.starts_with("refs/remotes/")
                    || name
                        .strip_prefix("refs/heads/")
                        .is_some_and(|b| !going.contains(&b)))
        })
    }

    /// How many commits reachable from `oid` (a commit, hex) no branch, tag or
    /// remote-tracking ref reaches: the work a detached HEAD holds on its own, lost with
    /// the worktree (its HEAD and reflog) that is its only name.
    pub fn unreferenced_commits(&self, oid: &str) -> Result<usize, Error> {
        let tip = ObjectId::from_hex(oid.as_bytes()).map_err(err(&self.path))?;
        self.commits_hidden_from_refs(tip, |name| {
            ["refs/heads/", "refs/remotes/", "refs/tags/"]
                .iter()
                .any(|p| name.starts_with(p))
        })
    }

    /// How many commits reachable from `oid` no tag or remote-tracking ref reaches: for a
    /// repository whose local branches go with it (a submodule's, kept in its superproject
    /// worktree's private git directory).
    pub fn commits_not_on_remotes(&self, oid: &str) -> Result<usize, Error> {
        let tip = ObjectId::from_hex(oid.as_bytes()).map_err(err(&self.path))?;
        self.commits_hidden_from_refs(tip, |name| {
            name.starts_with("refs/remotes/") || name.starts_with("refs/tags/")
        })
    }

    /// The references private to this worktree (`refs/worktree/…`, a rebase's
    /// `refs/rewritten/…`) that reach commits no branch, tag or remote has, with how many:
    /// they live in the worktree's private git directory and go with it.
    pub fn private_refs_holding_commits(&self) -> Result<Vec<(String, usize)>, Error> {
        let refs = self.repo.references().map_err(err(&self.path))?;
        let mut out = Vec::new();
        for r in refs.all().map_err(err(&self.path))? {
            let Ok(mut r) = r else { continue };
            let name = r.name().as_bstr().to_string();
            if !(name.starts_with("refs/worktree/") || name.starts_with("refs/rewritten/")) {
                continue;
            }
            let Ok(id) = r.peel_to_id() else { continue };
            let n = self.unreferenced_commits(&id.to_string())?;
            if n > 0 {
                out.push((name, n));
            }
        }
        Ok(out)
    }

    /// How many commits reachable from `tip` are reachable from no reference `counts`.
    fn commits_hidden_from_refs(
        &self,
        tip: ObjectId,
        counts: impl Fn(&str) -> bool,
    ) -> Result<usize, Error> {
        let refs = self.repo.references().map_err(err(&self.path))?;
        let mut others = Vec::new();
        for r in refs.all().map_err(err(&self.path))? {
            let Ok(mut r) = r else { continue };
            if !counts(&r.name().as_bstr().to_string()) {
                continue;
            }
            if let Ok(id) = r.peel_to_id() {
                others.push(id.detach());
            }
        }
        let walk = self
            .repo
            .rev_walk([tip])
            .with_hidden(others)
            .all()
            .map_err(err(&self.path))?;
        let mut n = 0;
        for info in walk {
            info.map_err(err(&self.path))?;
            n += 1;
        }
        Ok(n)
    }

    /// Every local branch with its upstream, sorted by name.
    pub fn local_branches(&self) -> Result<Vec<BranchInfo>, Error> {
        let refs = self.repo.references().map_err(err(&self.path))?;
        let cfg = self.repo.config_snapshot();
        let mut out = Vec::new();
        for r in refs.local_branches().map_err(err(&self.path))? {
            let Ok(mut r) = r else { continue };
            let name = r.name().shorten().to_string();
            let Ok(id) = r.peel_to_id() else { continue };
            let remote = cfg
                .string(format!("branch.{name}.remote").as_str())
                .map(|s| s.to_string());
            let merge = cfg
                .string(format!("branch.{name}.merge").as_str())
                .map(|s| s.to_string());
            let (upstream, upstream_gone) = match (remote, merge) {
                (Some(remote), Some(merge)) => {
                    let short = merge.strip_prefix("refs/heads/").unwrap_or(&merge);
                    let (full, display) = if remote == "." {
                        (format!("refs/heads/{short}"), short.to_string())
                    } else {
                        (
                            format!("refs/remotes/{remote}/{short}"),
                            format!("{remote}/{short}"),
                        )
                    };
                    let gone = self.ref_id(&full).is_none();
                    (Some(display), gone)
                }
                _ => (None, false),
            };
            out.push(BranchInfo {
                name,
                oid: id.to_string(),
                upstream,
                upstream_gone,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Uncommitted changes: staged, modified, conflicted and untracked (directories of
    /// untracked files collapsed, as `git status` shows them by default), whatever the
    /// repository's `status.showUntrackedFiles`: what would be lost is judged on all of them.
    /// Refreshed index stat data is written back, as `git status` does, unless the index is
    /// locked, changed since it was read, or holds what gix cannot write (see `git::status`).
    pub fn changes(&self) -> Result<Changes, Error> {
        self.status_of(Ask {
            untracked: Untracked::Normal,
            ignored: false,
        })
        .map(|(c, _)| c)
    }

    /// The changes `git status` shows here: [`Repo::changes`], listing untracked files as
    /// `status.showUntrackedFiles` says (none, directories collapsed, or every file).
    pub fn changes_shown(&self) -> Result<Changes, Error> {
        self.status_of(Ask {
            untracked: self.untracked_as_configured(),
            ignored: false,
        })
        .map(|(c, _)| c)
    }

    /// [`Repo::changes`], and what is ignored (directories collapsed, with a trailing `/`):
    /// files `git status` does not show, which removing the worktree deletes too.
    pub fn changes_and_ignored(&self) -> Result<(Changes, Vec<String>), Error> {
        self.status_of(Ask {
            untracked: Untracked::Normal,
            ignored: true,
        })
    }
}

fn base(name: String, oid: ObjectId) -> Base {
    Base {
        name,
        oid: oid.to_string(),
    }
}

fn in_progress_name(s: gix::state::InProgress) -> &'static str {
    use gix::state::InProgress as P;
    match s {
        P::ApplyMailbox | P::ApplyMailboxRebase => "am",
        P::Bisect => "bisect",
        P::CherryPick | P::CherryPickSequence => "cherry-pick",
        P::Merge => "merge",
        P::Rebase | P::RebaseInteractive => "rebase",
        P::Revert | P::RevertSequence => "revert",
    }
}

/// HEAD, changes, base and ahead/behind of the worktree at `path` (reached through `via`,
/// see [`Repo::open_via`]). `base_branch` is the repository's configured base (from
/// `.grove.toml`), if any.
pub fn worktree_status(
    path: &Path,
    via: &Path,
    base_branch: Option<&str>,
) -> Result<WorktreeStatus, Error> {
    let repo = Repo::open_via(path, via)?;
    let head = repo.head()?;
    let changes = repo.changes_shown()?;
    let base = repo.resolve_base(base_branch);
    let ahead_behind = match (&head.oid, &base) {
        (Some(h), Some(b)) => Some(repo.ahead_behind(h, &b.oid)?),
        _ => None,
    };
    Ok(WorktreeStatus {
        head,
        changes,
        base,
        ahead_behind,
        remote: repo.origin_url(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::git;

    fn set_mtime(path: &Path, secs_ago: u64) {
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs_ago);
        crate::ops::testutil::set_modified(path, t);
    }

    /// A new repository at `dir` with one commit (`a.txt`) on `main`.
    fn repo_with_commit(dir: &Path) {
        crate::fsx::create_dir_all(dir).unwrap();
        git(dir, &["init", "-q", "-b", "main"]);
        crate::fsx::write_atomic(&dir.join("a.txt"), b"a\n").unwrap();
        git(dir, &["add", "."]);
        git(dir, &["commit", "-q", "-m", "one"]);
    }

    /// A repository with one commit and a linked worktree `wt` beside it.
    fn repo_with_worktree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let main = root.join("main");
        repo_with_commit(&main);
        let wt = root.join("ws").join("wt");
        git(
            &main,
            &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
        );
        (tmp, main, wt)
    }

    #[test]
    fn status_writes_refreshed_stat_data_back_unless_the_index_is_locked() {
        let (_tmp, main, wt) = repo_with_worktree();
        let index = main.join(".git/worktrees/wt/index");
        // Same content, new mtime: the stat data no longer matches, the content does.
        set_mtime(&wt.join("a.txt"), 3600);
        let before = std::fs::read(&index).unwrap();
        assert!(Repo::open(&wt).unwrap().changes().unwrap().is_clean());
        let after = std::fs::read(&index).unwrap();
        assert_ne!(before, after, "the refreshed entry was written back");
        assert!(Repo::open(&wt).unwrap().changes().unwrap().is_clean());
        assert_eq!(
            after,
            std::fs::read(&index).unwrap(),
            "nothing left to refresh"
        );

        // Someone else holds the index: status still answers and leaves it alone.
        set_mtime(&wt.join("a.txt"), 7200);
        let lock = main.join(".git/worktrees/wt/index.lock");
        crate::fsx::write_atomic(&lock, b"").unwrap();
        assert!(Repo::open(&wt).unwrap().changes().unwrap().is_clean());
        assert_eq!(after, std::fs::read(&index).unwrap());
        assert!(lock.exists(), "another process's lock is not touched");
    }

    #[test]
    fn worktrees_report_branch_and_head_without_opening_each() {
        let (_tmp, main, wt) = repo_with_worktree();
        let tip = git(&main, &["rev-parse", "HEAD"]);
        let detached = wt.parent().unwrap().join("detached");
        git(
            &main,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                detached.to_str().unwrap(),
            ],
        );
        let unborn = wt.parent().unwrap().join("unborn");
        git(
            &main,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "later",
                unborn.to_str().unwrap(),
            ],
        );
        git(&unborn, &["checkout", "-q", "--orphan", "fresh"]);
        let list = Repo::open(&main).unwrap().worktrees().unwrap();
        let find = |p: &Path| list.iter().find(|w| w.path == p).unwrap().clone();
        assert!(list[0].is_main);
        assert_eq!(list[0].branch.as_deref(), Some("main"));
        let w = find(&wt);
        assert_eq!(
            (w.branch.as_deref(), w.head.as_deref()),
            (Some("wt"), Some(tip.as_str()))
        );
        let d = find(&detached);
        assert_eq!((d.branch, d.head.as_deref()), (None, Some(tip.as_str())));
        let u = find(&unborn);
        assert_eq!((u.branch.as_deref(), u.head), (Some("fresh"), None));
        assert!(!w.prunable && !w.locked);
    }

    #[test]
    fn a_local_origin_with_nothing_new_needs_no_fetch() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let origin = root.join("origin");
        repo_with_commit(&origin);
        let url = format!("file://{}", origin.display());
        git(&root, &["clone", "-q", &url, "clone"]);
        let clone = root.join("clone");
        let current = || Repo::open(&clone).unwrap().origin_is_current();
        assert!(current());
        // A new commit, a new branch or a new tag on origin: a fetch would bring it.
        git(&origin, &["commit", "-q", "--allow-empty", "-m", "two"]);
        assert!(!current());
        git(&clone, &["fetch", "-q"]);
        assert!(current());
        git(&origin, &["branch", "side"]);
        assert!(!current());
        git(&clone, &["fetch", "-q"]);
        assert!(current());
        git(&origin, &["tag", "v1"]);
        assert!(!current());
        git(&clone, &["fetch", "-q", "--tags"]);
        assert!(current());
        // A second remote, or an origin that is not a local path: always fetch.
        git(&clone, &["remote", "add", "other", &url]);
        assert!(!current());
        git(&clone, &["remote", "remove", "other"]);
        assert!(current());
        git(
            &clone,
            &[
                "remote",
                "set-url",
                "origin",
                "https://example.invalid/a.git",
            ],
        );
        assert!(!current());
    }

    #[test]
    fn reading_through_a_relative_path_sees_the_same() {
        let (_tmp, _main, wt) = repo_with_worktree();
        crate::fsx::write_atomic(&wt.join("a.txt"), b"changed\n").unwrap();
        crate::fsx::write_atomic(&wt.join("new.txt"), b"new\n").unwrap();
        let absolute = worktree_status(&wt, &wt, None).unwrap();
        let ws = wt.parent().unwrap();
        let inside = crate::fsx::Inside::enter(ws).unwrap();
        let rel = inside.relative(ws, &wt).unwrap();
        assert_eq!(rel, Path::new("wt"));
        let relative = worktree_status(&wt, rel, None).unwrap();
        drop(inside);
        assert_eq!(relative.changes, absolute.changes);
        assert_eq!(relative.changes.lines, [" M a.txt", "?? new.txt"]);
        assert_eq!(relative.head, absolute.head);
        // Errors name the real path, not the relative one.
        let missing = ws.join("gone");
        let inside = crate::fsx::Inside::enter(ws).unwrap();
        let e = Repo::open_via(&missing, Path::new("gone")).err().unwrap();
        drop(inside);
        assert!(
            e.to_string().contains(&missing.display().to_string()),
            "{e}"
        );
    }
}
