//! `Work`: what a worktree, the registration of one whose directory is gone, or a
//! repository whose git directory goes with it holds that exists nowhere else — the
//! inventory every remover's verdict is read from.
//!
//! "Elsewhere" is any reference that stays: a branch, tag, remote-tracking ref, the stash
//! or a note of the repository, which live in its shared git directory. What a worktree
//! takes with it is its files, its private git directory (its HEAD and HEAD's reflog, its
//! `refs/worktree/…`, an operation in progress, its lock, its submodules' repositories)
//! and whatever lies in its ignored directories. A repository inside it (a clone in an
//! ignored directory, a submodule's repository) takes all its references with it: only its
//! remote-tracking refs say a commit is elsewhere.

use std::path::Path;

use crate::git;

/// The kinds of work, one per variant of [`Held`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Changes,
    Untracked,
    Ignored,
    HiddenEdits,
    DetachedHead,
    Reflog,
    PrivateRef,
    InProgress,
    Locked,
    Stash,
    LocalCommits,
    Nested,
    Submodule,
    Stray,
    Unreadable,
}

impl Kind {
    pub const ALL: [Kind; 15] = [
        Kind::Changes,
        Kind::Untracked,
        Kind::Ignored,
        Kind::HiddenEdits,
        Kind::DetachedHead,
        Kind::Reflog,
        Kind::PrivateRef,
        Kind::InProgress,
        Kind::Locked,
        Kind::Stash,
        Kind::LocalCommits,
        Kind::Nested,
        Kind::Submodule,
        Kind::Stray,
        Kind::Unreadable,
    ];
}

/// One thing removing would lose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// Uncommitted changes to tracked files: `git status --short` lines.
    Changes(Vec<String>),
    /// Untracked files and directories (`?? path` lines).
    Untracked(Vec<String>),
    /// Ignored files and directories (`node_modules/`, `.env`). Deleted with a worktree
    /// (`gw delete` lists them in its plan), but not known to be disposable elsewhere.
    Ignored(Vec<String>),
    /// Tracked files marked skip-worktree or assume-unchanged that were edited:
    /// `git status` does not show them.
    HiddenEdits(Vec<String>),
    /// Commits only a detached HEAD has.
    DetachedHead { oid: String, commits: usize },
    /// Commits only the worktree's HEAD reflog names (made on a detached HEAD, then left):
    /// git would keep them for `gc.reflogExpireUnreachable` (30 days); the reflog goes
    /// with the worktree.
    Reflog {
        commits: usize,
        newest: Option<String>,
    },
    /// A reference private to the worktree (`refs/worktree/…`, a rebase's
    /// `refs/rewritten/…`) reaching commits nothing else has.
    PrivateRef { name: String, commits: usize },
    /// A rebase, merge, cherry-pick, revert or bisect in progress.
    InProgress(String),
    /// A lock a person put on the worktree (`git worktree lock`), with its reason.
    Locked(String),
    /// Entries of the stash of a repository whose git directory goes.
    Stash(usize),
    /// Commits only the branches, tags or HEAD of a repository whose git directory goes
    /// have (none of its remotes has them); the references named.
    LocalCommits { refs: Vec<String>, commits: usize },
    /// A repository (or a worktree, `worktree`) inside an ignored directory that holds
    /// work; its path relative to the worktree.
    Nested {
        path: String,
        worktree: bool,
        held: Vec<Held>,
    },
    /// An initialised submodule whose repository (in the worktree's private git directory)
    /// holds work.
    Submodule { name: String, held: Vec<Held> },
    /// Files in a workspace directory outside any of its worktrees.
    Stray(Vec<String>),
    /// What could not be read: it cannot be told to hold nothing.
    Unreadable(String),
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub(super) fn short(oid: &str) -> &str {
    oid.get(..7).unwrap_or(oid)
}

fn commits_nowhere_else(n: usize) -> String {
    format!(
        "{} no branch, tag or remote has",
        plural(n, "commit", "commits")
    )
}

impl Held {
    pub fn kind(&self) -> Kind {
        match self {
            Held::Changes(_) => Kind::Changes,
            Held::Untracked(_) => Kind::Untracked,
            Held::Ignored(_) => Kind::Ignored,
            Held::HiddenEdits(_) => Kind::HiddenEdits,
            Held::DetachedHead { .. } => Kind::DetachedHead,
            Held::Reflog { .. } => Kind::Reflog,
            Held::PrivateRef { .. } => Kind::PrivateRef,
            Held::InProgress(_) => Kind::InProgress,
            Held::Locked(_) => Kind::Locked,
            Held::Stash(_) => Kind::Stash,
            Held::LocalCommits { .. } => Kind::LocalCommits,
            Held::Nested { .. } => Kind::Nested,
            Held::Submodule { .. } => Kind::Submodule,
            Held::Stray(_) => Kind::Stray,
            Held::Unreadable(_) => Kind::Unreadable,
        }
    }

    /// One line saying what it is.
    pub fn describe(&self) -> String {
        match self {
            Held::Changes(l) => plural(l.len(), "uncommitted change", "uncommitted changes"),
            Held::Untracked(l) => plural(l.len(), "untracked file", "untracked files"),
            Held::Ignored(l) => format!("ignored files: {}", l.join(", ")),
            Held::HiddenEdits(f) => format!(
                "edits git status does not show (skip-worktree or assume-unchanged): {}",
                f.join(", ")
            ),
            Held::DetachedHead { oid, commits } => format!(
                "its detached HEAD ({}) has {}",
                short(oid),
                commits_nowhere_else(*commits)
            ),
            Held::Reflog { commits, newest } => format!(
                "its HEAD's reflog alone names {}{} (made on a detached HEAD; git would keep \
                 them 30 days, the reflog goes with the worktree)",
                commits_nowhere_else(*commits),
                newest
                    .as_deref()
                    .map(|o| format!(", the newest {}", short(o)))
                    .unwrap_or_default()
            ),
            Held::PrivateRef { name, commits } => {
                format!("its own ref {name} has {}", commits_nowhere_else(*commits))
            }
            Held::InProgress(op) => format!("a {op} is in progress"),
            Held::Locked(r) if r.is_empty() => "it is locked (`git worktree lock`)".into(),
            Held::Locked(r) => format!("it is locked (`git worktree lock`): {r}"),
            Held::Stash(n) => plural(*n, "stash entry", "stash entries"),
            Held::LocalCommits { refs, commits } => format!(
                "{} only its own {} ({}) {}, on none of its remotes",
                plural(*commits, "commit", "commits"),
                if refs.len() == 1 {
                    "reference"
                } else {
                    "references"
                },
                refs.join(", "),
                if refs.len() == 1 { "has" } else { "have" }
            ),
            Held::Nested {
                path,
                worktree,
                held,
            } => format!(
                "`{path}/`, a {} in an ignored directory, holds work: {}",
                if *worktree { "worktree" } else { "repository" },
                describe_all(held)
            ),
            Held::Submodule { name, held } => {
                format!("submodule `{name}` holds work: {}", describe_all(held))
            }
            Held::Stray(f) => format!("files outside any worktree: {}", f.join(", ")),
            Held::Unreadable(why) => why.clone(),
        }
    }
}

fn describe_all(held: &[Held]) -> String {
    held.iter()
        .map(Held::describe)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Everything something holds, each kind at most once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Work(pub Vec<Held>);

impl Work {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn kinds(&self) -> Vec<Kind> {
        self.0.iter().map(Held::kind).collect()
    }

    pub fn get(&self, kind: Kind) -> Option<&Held> {
        self.0.iter().find(|h| h.kind() == kind)
    }

    /// The `git status --short` lines: uncommitted changes, then untracked files.
    pub fn status_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for h in &self.0 {
            if let Held::Changes(l) | Held::Untracked(l) = h {
                out.extend(l.iter().cloned());
            }
        }
        out.sort_by(|a, b| a.get(3..).cmp(&b.get(3..)));
        out
    }

    /// What is ignored (deleted with a worktree, never called work by `gw delete`).
    pub fn ignored(&self) -> &[String] {
        match self.get(Kind::Ignored) {
            Some(Held::Ignored(l)) => l,
            _ => &[],
        }
    }

    pub(super) fn push(&mut self, h: Held) {
        self.0.push(h);
    }
}

/// Entries of the workspace directory that belong to no worktree: deleted with the
/// workspace ([`Held::Stray`]).
pub fn stray_files(ws: &crate::state::Workspace) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(&ws.path) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !ws.repos.iter().any(|r| r.worktree_path == e.path()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// A status as work: its lines ([`from_status`]), and each path it could not read, which
/// cannot be told to hold nothing (issue 26: unreadable paths are an answer, not an error).
pub fn from_changes(c: git::Changes) -> Vec<Held> {
    let mut out = from_status(c.lines);
    out.extend(c.unreadable.iter().map(|u| Held::Unreadable(u.to_string())));
    out
}

/// `git status` lines split into uncommitted changes and untracked files.
pub fn from_status(lines: Vec<String>) -> Vec<Held> {
    let (untracked, changes): (Vec<String>, Vec<String>) =
        lines.into_iter().partition(|l| l.starts_with("??"));
    let mut out = Vec::new();
    if !changes.is_empty() {
        out.push(Held::Changes(changes));
    }
    if !untracked.is_empty() {
        out.push(Held::Untracked(untracked));
    }
    out
}

/// The references that stay when a worktree goes: every one but those private to a
/// worktree.
fn shared(refs: &[(String, String)]) -> Vec<String> {
    refs.iter()
        .filter(|(n, _)| !is_private(n))
        .map(|(_, oid)| oid.clone())
        .collect()
}

fn is_private(name: &str) -> bool {
    ["refs/worktree/", "refs/rewritten/", "refs/bisect/"]
        .iter()
        .any(|p| name.starts_with(p))
}

pub(super) fn unknown(what: &str, e: impl std::fmt::Display) -> Held {
    Held::Unreadable(format!("cannot tell whether {what}: {e}"))
}

/// What the worktree at `root` holds: its uncommitted changes and untracked files, what is
/// ignored, edits git status does not show, the work beyond its files
/// ([`beyond_files`]), and repositories in its ignored directories that hold work.
pub fn of_worktree(root: &Path) -> Work {
    let repo = match git::Repo::open(root) {
        Ok(r) => r,
        Err(e) => return Work(vec![Held::Unreadable(format!("cannot be read: {e}"))]),
    };
    let mut work = Work::default();
    match repo.changes_and_ignored() {
        Ok((changes, ignored)) => {
            work.0.extend(from_changes(changes));
            let nested = super::nested::search(root, &ignored);
            if !ignored.is_empty() {
                work.push(Held::Ignored(ignored));
            }
            work.0.extend(nested);
        }
        Err(e) => work.push(Held::Unreadable(format!("cannot be read: {e}"))),
    }
    work.0.extend(hidden(&repo));
    work.0.extend(beyond_files(&repo));
    work
}

/// The HEAD and the references of `repo`, with the operation in progress at HEAD pushed on
/// `held`; `None` when either cannot be read, which `held` then says.
pub(super) fn head_and_refs(
    repo: &git::Repo,
    held: &mut Vec<Held>,
) -> Option<(git::Head, Vec<(String, String)>)> {
    let head = match repo.head() {
        Ok(h) => h,
        Err(e) => {
            held.push(Held::Unreadable(format!("cannot read its HEAD: {e}")));
            return None;
        }
    };
    held.extend(head.in_progress.clone().map(Held::InProgress));
    match repo.references() {
        Ok(refs) => Some((head, refs)),
        Err(e) => {
            held.push(Held::Unreadable(format!("cannot read its refs: {e}")));
            None
        }
    }
}

/// What the worktree `repo` holds beyond its files, which removing it loses although
/// `git status` is clean: an operation in progress, commits only its detached HEAD has,
/// commits only its HEAD's reflog names, its own refs' commits, its submodules' work, a
/// lock a person put on it.
pub fn beyond_files(repo: &git::Repo) -> Vec<Held> {
    let mut held = Vec::new();
    let Some((head, refs)) = head_and_refs(repo, &mut held) else {
        return held;
    };
    let kept = shared(&refs);
    if let (true, Some(oid)) = (head.detached, &head.oid) {
        held.extend(detached(repo, oid, &kept));
    }
    held.extend(reflog_only(
        repo,
        repo.git_dir(),
        head.oid.as_deref(),
        &refs,
    ));
    for (name, oid) in refs.iter().filter(|(n, _)| is_private(n)) {
        if name.starts_with("refs/bisect/") {
            continue;
        }
        match repo.count_beyond(std::slice::from_ref(oid), &kept) {
            Ok(0) => {}
            Ok(commits) => held.push(Held::PrivateRef {
                name: name.clone(),
                commits,
            }),
            Err(e) => held.push(unknown(&format!("its ref {name} holds commits"), e)),
        }
    }
    held.extend(super::repository::submodules(repo.git_dir()));
    held.extend(person_lock(repo.git_dir()));
    held
}

/// The commits a detached HEAD at `oid` has that none of `kept` has.
fn detached(repo: &git::Repo, oid: &str, kept: &[String]) -> Option<Held> {
    match repo.count_beyond(&[oid.to_string()], kept) {
        Ok(0) => None,
        Ok(commits) => Some(Held::DetachedHead {
            oid: oid.to_string(),
            commits,
        }),
        Err(e) => Some(unknown(
            &format!(
                "its detached HEAD ({}) has commits found nowhere else",
                short(oid)
            ),
            e,
        )),
    }
}

/// The commits only the HEAD reflog in `git_dir` names: reached by none of `refs` nor
/// `head`, and never on a branch (no branch's reflog names them — what a rebase or an
/// amend replaced was, and is the user's own rewrite).
pub(super) fn reflog_only(
    repo: &git::Repo,
    git_dir: &Path,
    head: Option<&str>,
    refs: &[(String, String)],
) -> Option<Held> {
    let entries = match git::reflog(&git_dir.join("logs/HEAD")) {
        Ok(e) => e,
        Err(e) => {
            return Some(unknown(
                "its HEAD's reflog names commits found nowhere else",
                e,
            ));
        }
    };
    let entries: Vec<String> = entries.into_iter().filter(|o| repo.has_commit(o)).collect();
    let mut hidden: Vec<String> = refs.iter().map(|(_, o)| o.clone()).collect();
    hidden.extend(head.map(str::to_string));
    let count = |hidden: &[String]| repo.count_beyond(&entries, hidden);
    match count(&hidden) {
        Ok(0) => return None,
        Ok(_) => {}
        Err(e) => {
            return Some(unknown(
                "its HEAD's reflog names commits found nowhere else",
                e,
            ));
        }
    }
    let common = repo.common_dir();
    for (name, _) in refs.iter().filter(|(n, _)| n.starts_with("refs/heads/")) {
        if let Ok(logged) = git::reflog(&common.join("logs").join(name)) {
            hidden.extend(logged.into_iter().filter(|o| repo.has_commit(o)));
        }
    }
    match count(&hidden) {
        Ok(0) => None,
        Ok(commits) => {
            let newest = entries
                .iter()
                .take(50)
                .find(|e| {
                    repo.count_beyond(std::slice::from_ref(e), &hidden)
                        .is_ok_and(|n| n > 0)
                })
                .cloned();
            Some(Held::Reflog { commits, newest })
        }
        Err(e) => Some(unknown(
            "its HEAD's reflog names commits found nowhere else",
            e,
        )),
    }
}

/// The lock a person put on the worktree whose private git directory is `admin`. `git
/// worktree add` locks the worktree it is making ("initializing") until its checkout is
/// done: a checkout cut short leaves that lock, and it is not a person's.
pub fn person_lock(admin: &Path) -> Option<Held> {
    git::lock_reason(admin)
        .filter(|r| r != "initializing")
        .map(Held::Locked)
}

/// The uncommitted changes, untracked files and hidden edits of the worktree `repo`.
pub fn of_worktree_files(repo: &git::Repo) -> Vec<Held> {
    let mut held = match repo.changes() {
        Ok(c) => from_changes(c),
        Err(e) => vec![unknown("it has uncommitted changes", e)],
    };
    held.extend(hidden(repo));
    held
}

/// The edits of the worktree `repo` git status does not show, if any.
pub fn hidden(repo: &git::Repo) -> Option<Held> {
    match repo.hidden_edits() {
        Ok(f) if f.is_empty() => None,
        Ok(f) => Some(Held::HiddenEdits(f)),
        Err(e) => Some(unknown("files git takes on trust were edited", e)),
    }
}

/// What a registration whose directory is gone still holds in its private git directory
/// (the worktree cannot be opened): a lock, an operation in progress, commits only its
/// detached HEAD has or only its HEAD's reflog names, its submodules' work. A directory
/// that was merely moved comes back with `git worktree repair`; without the registration
/// it cannot.
pub fn of_registration(source: &git::Repo, wt: &git::WorktreeInfo) -> Work {
    let mut work = Work::default();
    work.0.extend(person_lock(&wt.admin));
    work.0
        .extend(git::in_progress(&wt.admin).map(|op| Held::InProgress(op.into())));
    let refs = match source.references() {
        Ok(r) => r,
        Err(e) => {
            work.push(Held::Unreadable(format!("cannot read its refs: {e}")));
            return work;
        }
    };
    let kept = shared(&refs);
    if let (None, Some(oid)) = (&wt.branch, &wt.head) {
        work.0.extend(detached(source, oid, &kept));
    }
    work.0
        .extend(reflog_only(source, &wt.admin, wt.head.as_deref(), &refs));
    work.0.extend(super::repository::submodules(&wt.admin));
    work
}
