//! The world auditor: everything grove promises about the disk after any command, however
//! it ended, checked from the outside and returned as a list of [`Violation`]s (never a
//! panic), so a harness can report all of them at once.
//!
//! What it checks, given a grove directory, its workspace directory and every source
//! repository:
//!
//! - `state.json` against `git worktree list --porcelain` of **every** source repository:
//!   each recorded worktree is registered at the recorded path **on the recorded branch**;
//!   a worktree on the branch of another workspace is [`Kind::CrossLinked`]; a registration
//!   pointing into the workspace directory that state does not record is
//!   [`Kind::UnrecordedRegistration`];
//! - each recorded worktree's own view: its `.git` file points to an admin directory whose
//!   `gitdir` points back to it (two worktrees sharing one admin directory is how a
//!   workspace ends up on another's branch);
//! - the workspace directory: every entry is a recorded workspace, and every entry of a
//!   recorded workspace is one of its recorded worktrees ([`Kind::StrayEntry`]);
//! - `.trash`: an entry some journal in `operations/` names belongs to that operation and is
//!   not reported (the journal is); a retained entry (a deleted workspace kept for
//!   `gw restore`: its `trash.json`) must be whole — its `workspace/` directory, and the
//!   reference `refs/grove/trash/<id>/<i>` at the tip of each branch it records as deleted
//!   ([`Kind::BrokenTrash`]); any other entry is [`Kind::LeftoverTrash`] — callers wait for
//!   grove's background `gw unlink-trash` and `gw trash tidy` to end before they audit; a
//!   reference under `refs/grove/trash/` whose entry is gone is [`Kind::LeakedTrashRef`];
//! - branches grove created that no workspace uses ([`Kind::LeakedBranch`]), given a
//!   [`Baseline`] of the branches that existed before: a new branch no state entry uses and
//!   whose commits are all reachable from another ref is a leak (one holding commits found
//!   nowhere else is work grove rightly kept);
//! - git's lock files (`index.lock`, `HEAD.lock`, `config.lock`, `packed-refs.lock`,
//!   `refs/**.lock`) in every source repository and every worktree's admin directory;
//! - rebases, merges, cherry-picks and reverts in progress there;
//! - journals, their lock files and half-written temporary files left in
//!   `<grove dir>/operations/` (and temporary files beside `state.json`);
//! - pre-existing work ([`Preserved`]): files compared byte for byte, commits still on their
//!   branch (exactly, or, where a rebase is allowed, as an equivalent patch).
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// What kind of promise a [`Violation`] breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `state.json` cannot be read or parsed (nothing state-dependent is checked then).
    StateUnreadable,
    /// Two state entries claim the same workspace name or the same worktree path.
    DuplicateState,
    /// A recorded worktree has no registration in its source repository.
    NotRegistered,
    /// A recorded worktree is registered on another branch than state says.
    BranchMismatch,
    /// A recorded worktree is on the branch of another workspace, or its `.git` leads to
    /// another worktree's admin directory.
    CrossLinked,
    /// A recorded worktree's `.git` link is missing or leads nowhere.
    BrokenLink,
    /// A registration points into the workspace directory but state does not record it.
    UnrecordedRegistration,
    /// A recorded workspace directory does not exist.
    WorkspaceMissing,
    /// A recorded worktree directory does not exist.
    WorktreeMissing,
    /// A recorded path lies outside the workspace directory.
    PathOutsideWorkspaceDir,
    /// A file or directory under the workspace directory that no state entry owns.
    StrayEntry,
    /// A `.trash` entry no journal refers to.
    LeftoverTrash,
    /// A retained trash entry that is not whole (its workspace directory or a kept
    /// branch tip is missing).
    BrokenTrash,
    /// A reference under `refs/grove/trash/` whose trash entry is gone.
    LeakedTrashRef,
    /// A branch grove created that no workspace uses and that holds no work of its own.
    LeakedBranch,
    /// A git lock file (`index.lock`, `HEAD.lock`, …).
    GitLockLeft,
    /// A rebase, merge, cherry-pick or revert in progress.
    OperationInProgress,
    /// An operation journal left in `operations/`.
    JournalLeft,
    /// A journal's lock file without its journal.
    JournalLockLeft,
    /// A half-written temporary file left beside a journal or `state.json`.
    TempFileLeft,
    /// Pre-existing work changed or disappeared.
    WorkLost,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::StateUnreadable => "state_unreadable",
            Kind::DuplicateState => "duplicate_state",
            Kind::NotRegistered => "not_registered",
            Kind::BranchMismatch => "branch_mismatch",
            Kind::CrossLinked => "cross_linked",
            Kind::BrokenLink => "broken_link",
            Kind::UnrecordedRegistration => "unrecorded_registration",
            Kind::WorkspaceMissing => "workspace_missing",
            Kind::WorktreeMissing => "worktree_missing",
            Kind::PathOutsideWorkspaceDir => "path_outside_workspace_dir",
            Kind::StrayEntry => "stray_entry",
            Kind::LeftoverTrash => "leftover_trash",
            Kind::BrokenTrash => "broken_trash",
            Kind::LeakedTrashRef => "leaked_trash_ref",
            Kind::LeakedBranch => "leaked_branch",
            Kind::GitLockLeft => "git_lock_left",
            Kind::OperationInProgress => "operation_in_progress",
            Kind::JournalLeft => "journal_left",
            Kind::JournalLockLeft => "journal_lock_left",
            Kind::TempFileLeft => "temp_file_left",
            Kind::WorkLost => "work_lost",
        }
    }

    /// Whether this kind is about git and `state.json` agreeing (what
    /// `TestEnv::assert_git_agrees_with_state` asserts).
    pub fn is_git_vs_state(self) -> bool {
        matches!(
            self,
            Kind::StateUnreadable
                | Kind::DuplicateState
                | Kind::NotRegistered
                | Kind::BranchMismatch
                | Kind::CrossLinked
                | Kind::BrokenLink
                | Kind::UnrecordedRegistration
        )
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken promise.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    pub kind: Kind,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

fn v(kind: Kind, detail: impl Into<String>) -> Violation {
    Violation {
        kind,
        detail: detail.into(),
    }
}

/// Violations one per line (for a panic message or a report).
pub fn render(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|x| format!("  - {x}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where grove lives and what it may touch.
#[derive(Debug, Clone)]
pub struct World {
    /// `$GW_HOME`.
    pub grove_dir: PathBuf,
    /// The configured workspace directory.
    pub workspace_dir: PathBuf,
    /// Every source repository (a work tree with a `.git` directory). Source repositories
    /// that `state.json` names are added to these.
    pub sources: Vec<PathBuf>,
}

/// A worktree as `git worktree list --porcelain` reports it.
#[derive(Debug, Clone)]
struct Registration {
    path: PathBuf,
    /// `None` when detached.
    branch: Option<String>,
}

/// One `repos[]` entry of `state.json`, with its workspace.
#[derive(Debug, Clone)]
struct Entry {
    workspace: String,
    workspace_path: PathBuf,
    source: PathBuf,
    path: PathBuf,
    branch: String,
}

/// What `state.json` says, read leniently (a field missing is a violation, not a panic).
struct StateView {
    workspaces: Vec<(String, PathBuf)>,
    entries: Vec<Entry>,
}

impl World {
    pub fn new(
        grove_dir: impl Into<PathBuf>,
        workspace_dir: impl Into<PathBuf>,
        sources: Vec<PathBuf>,
    ) -> World {
        World {
            grove_dir: grove_dir.into(),
            workspace_dir: workspace_dir.into(),
            sources,
        }
    }

    /// Every check that needs no record of the past.
    pub fn audit(&self) -> Vec<Violation> {
        self.run(None, None)
    }

    /// Every check, including leaked branches (against `baseline`) and pre-existing work.
    pub fn audit_with(&self, baseline: &Baseline, preserved: &Preserved) -> Vec<Violation> {
        self.run(Some(baseline), Some(preserved))
    }

    /// Only whether git's registrations and the worktrees themselves agree with
    /// `state.json` (same path, same branch, no worktree on another workspace's branch, no
    /// unrecorded registration into the workspace directory).
    pub fn git_vs_state(&self) -> Vec<Violation> {
        let mut out = Vec::new();
        if let Some(state) = self.read_state(&mut out) {
            self.check_registrations(&state, &mut out);
        }
        out.sort();
        out
    }

    fn run(&self, baseline: Option<&Baseline>, preserved: Option<&Preserved>) -> Vec<Violation> {
        let mut out = Vec::new();
        let journals = self.check_operations(&mut out);
        let state = self.read_state(&mut out);
        if let Some(state) = &state {
            self.check_registrations(state, &mut out);
            self.check_dirs(state, &journals, &mut out);
            if let Some(b) = baseline {
                self.check_branches(state, b, &mut out);
            }
        }
        let sources = self.all_sources(state.as_ref());
        for s in &sources {
            check_git_dir_files(s, &mut out);
        }
        self.check_trash_refs(&sources, &journals, &mut out);
        if let Some(p) = preserved {
            p.check(&mut out);
        }
        out.sort();
        out.dedup();
        out
    }

    /// The given sources and every source state names, de-duplicated.
    fn all_sources(&self, state: Option<&StateView>) -> Vec<PathBuf> {
        let mut set: BTreeSet<PathBuf> = self.sources.iter().cloned().collect();
        if let Some(st) = state {
            for e in &st.entries {
                if e.source.join(".git").is_dir() {
                    set.insert(e.source.clone());
                }
            }
        }
        set.into_iter().collect()
    }

    fn read_state(&self, out: &mut Vec<Violation>) -> Option<StateView> {
        let path = self.grove_dir.join("state.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                out.push(v(Kind::StateUnreadable, format!("{}: {e}", path.display())));
                return None;
            }
        };
        if text.trim().is_empty() {
            return Some(StateView {
                workspaces: Vec::new(),
                entries: Vec::new(),
            });
        }
        let value: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                out.push(v(Kind::StateUnreadable, format!("{}: {e}", path.display())));
                return None;
            }
        };
        let Some(list) = value.as_array() else {
            out.push(v(
                Kind::StateUnreadable,
                format!("{}: not a JSON array", path.display()),
            ));
            return None;
        };
        let mut view = StateView {
            workspaces: Vec::new(),
            entries: Vec::new(),
        };
        let str_of = |x: &Value, k: &str| x[k].as_str().map(str::to_string);
        for ws in list {
            let (Some(name), Some(wpath)) = (str_of(ws, "name"), str_of(ws, "path")) else {
                out.push(v(
                    Kind::StateUnreadable,
                    format!("a workspace without name or path: {ws}"),
                ));
                continue;
            };
            view.workspaces.push((name.clone(), PathBuf::from(&wpath)));
            for r in ws["repos"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
                match (
                    str_of(r, "source_repo"),
                    str_of(r, "worktree_path"),
                    str_of(r, "branch"),
                ) {
                    (Some(source), Some(path), Some(branch)) => view.entries.push(Entry {
                        workspace: name.clone(),
                        workspace_path: PathBuf::from(&wpath),
                        source: PathBuf::from(source),
                        path: PathBuf::from(path),
                        branch,
                    }),
                    _ => out.push(v(
                        Kind::StateUnreadable,
                        format!("workspace {name}: a repo entry without source_repo, worktree_path or branch: {r}"),
                    )),
                }
            }
        }
        let mut names = BTreeSet::new();
        for (n, _) in &view.workspaces {
            if !names.insert(n) {
                out.push(v(
                    Kind::DuplicateState,
                    format!("workspace `{n}` is recorded twice"),
                ));
            }
        }
        let mut paths = BTreeMap::new();
        for e in &view.entries {
            if let Some(other) = paths.insert(&e.path, &e.workspace) {
                out.push(v(
                    Kind::DuplicateState,
                    format!(
                        "worktree {} is recorded by `{other}` and by `{}`",
                        e.path.display(),
                        e.workspace
                    ),
                ));
            }
        }
        Some(view)
    }

    fn check_registrations(&self, state: &StateView, out: &mut Vec<Violation>) {
        for source in self.all_sources(Some(state)) {
            let regs = match registrations(&source) {
                Ok(r) => r,
                Err(e) => {
                    out.push(v(
                        Kind::NotRegistered,
                        format!("cannot list the worktrees of {}: {e}", source.display()),
                    ));
                    continue;
                }
            };
            let entries: Vec<&Entry> = state
                .entries
                .iter()
                .filter(|e| e.source == source)
                .collect();
            // Whose branch is this, in this repository?
            let owner_of_branch = |branch: &str, except: &str| {
                entries
                    .iter()
                    .find(|e| e.branch == branch && e.workspace != except)
                    .map(|e| e.workspace.clone())
            };
            for e in &entries {
                match regs.iter().find(|r| r.path == e.path) {
                    None => {
                        let mut detail = format!(
                            "{}: workspace `{}` records {} on `{}`, which git does not register",
                            source.display(),
                            e.workspace,
                            e.path.display(),
                            e.branch
                        );
                        if let Some(link) = link_target(&e.path) {
                            detail.push_str(&format!("; its .git leads to {}", link.display()));
                        }
                        out.push(v(Kind::NotRegistered, detail));
                    }
                    Some(r) if r.branch.as_deref() != Some(e.branch.as_str()) => {
                        let actual = r.branch.as_deref().unwrap_or("(detached HEAD)");
                        let other = r
                            .branch
                            .as_deref()
                            .and_then(|b| owner_of_branch(b, &e.workspace));
                        let (kind, whose) = match other {
                            Some(w) => (
                                Kind::CrossLinked,
                                format!(", the branch of workspace `{w}`"),
                            ),
                            None => (Kind::BranchMismatch, String::new()),
                        };
                        out.push(v(
                            kind,
                            format!(
                                "{}: {} (workspace `{}`) is on `{actual}`{whose}; state says `{}`",
                                source.display(),
                                e.path.display(),
                                e.workspace,
                                e.branch
                            ),
                        ));
                    }
                    Some(_) => {}
                }
                self.check_link(e, &entries, out);
            }
            for r in &regs {
                let recorded = entries.iter().any(|e| e.path == r.path);
                if !recorded && r.path.starts_with(&self.workspace_dir) {
                    out.push(v(
                        Kind::UnrecordedRegistration,
                        format!(
                            "{}: git registers a worktree at {} (on {}) that state does not record",
                            source.display(),
                            r.path.display(),
                            r.branch.as_deref().unwrap_or("a detached HEAD")
                        ),
                    ));
                }
            }
        }
    }

    /// The worktree's own view: its `.git` file must lead to an admin directory whose
    /// `gitdir` leads back to it, whose HEAD is the recorded branch.
    fn check_link(&self, e: &Entry, entries: &[&Entry], out: &mut Vec<Violation>) {
        if !e.path.exists() {
            return; // reported by check_dirs as a missing worktree
        }
        let Some(admin) = link_target(&e.path) else {
            out.push(v(
                Kind::BrokenLink,
                format!(
                    "{} (workspace `{}`) has no readable .git file",
                    e.path.display(),
                    e.workspace
                ),
            ));
            return;
        };
        let back = read_trimmed(&admin.join("gitdir")).map(PathBuf::from);
        let expected = e.path.join(".git");
        match back {
            None => out.push(v(
                Kind::BrokenLink,
                format!(
                    "{} (workspace `{}`): its .git leads to {}, which is not an admin directory",
                    e.path.display(),
                    e.workspace,
                    admin.display()
                ),
            )),
            Some(b) if b != expected => {
                let owner = entries
                    .iter()
                    .find(|o| o.path.join(".git") == b)
                    .map(|o| format!(" (workspace `{}`)", o.workspace))
                    .unwrap_or_default();
                out.push(v(
                    Kind::CrossLinked,
                    format!(
                        "{} (workspace `{}`) shares git's admin directory {} with {}{owner}",
                        e.path.display(),
                        e.workspace,
                        admin.display(),
                        b.parent().unwrap_or(&b).display()
                    ),
                ));
            }
            Some(_) => {}
        }
    }

    fn check_dirs(&self, state: &StateView, journals: &[String], out: &mut Vec<Violation>) {
        let mut owned: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        for (name, path) in &state.workspaces {
            if !path.starts_with(&self.workspace_dir) {
                out.push(v(
                    Kind::PathOutsideWorkspaceDir,
                    format!(
                        "workspace `{name}` is recorded at {}, outside {}",
                        path.display(),
                        self.workspace_dir.display()
                    ),
                ));
            }
            if !path.is_dir() {
                out.push(v(
                    Kind::WorkspaceMissing,
                    format!("workspace `{name}`: {} does not exist", path.display()),
                ));
            }
            owned.entry(path.clone()).or_default();
        }
        for e in &state.entries {
            if !e.path.starts_with(&e.workspace_path) {
                out.push(v(
                    Kind::PathOutsideWorkspaceDir,
                    format!(
                        "workspace `{}` records worktree {} outside its directory {}",
                        e.workspace,
                        e.path.display(),
                        e.workspace_path.display()
                    ),
                ));
            }
            if !e.path.exists() {
                out.push(v(
                    Kind::WorktreeMissing,
                    format!(
                        "workspace `{}`: worktree {} does not exist",
                        e.workspace,
                        e.path.display()
                    ),
                ));
            }
            owned
                .entry(e.workspace_path.clone())
                .or_default()
                .insert(e.path.clone());
        }
        for entry in list_dir(&self.workspace_dir) {
            if entry.file_name().is_some_and(|n| n == ".trash") {
                self.check_trash(&entry, journals, out);
                continue;
            }
            match owned.get(&entry) {
                None => out.push(v(
                    Kind::StrayEntry,
                    format!("{} belongs to no workspace in state", describe(&entry)),
                )),
                Some(worktrees) => {
                    for inner in list_dir(&entry) {
                        if !worktrees.contains(&inner) {
                            out.push(v(
                                Kind::StrayEntry,
                                format!(
                                    "{} is in a workspace directory but is none of its recorded worktrees",
                                    describe(&inner)
                                ),
                            ));
                        }
                    }
                }
            }
        }
    }

    fn check_trash(&self, trash: &Path, journals: &[String], out: &mut Vec<Violation>) {
        for t in list_dir(trash) {
            let s = t.to_string_lossy();
            if journals.iter().any(|j| j.contains(s.as_ref())) {
                continue; // belongs to an interrupted operation, reported as its journal
            }
            match std::fs::read_to_string(t.join("trash.json")) {
                Ok(text) => check_retained(&t, &text, out),
                Err(_) => out.push(v(
                    Kind::LeftoverTrash,
                    format!("{} (no journal refers to it)", describe(&t)),
                )),
            }
        }
    }

    /// References under `refs/grove/trash/<id>/` whose entry `…-<id>` is in no trash.
    fn check_trash_refs(&self, sources: &[PathBuf], journals: &[String], out: &mut Vec<Violation>) {
        let ids: BTreeSet<String> = list_dir(&self.workspace_dir.join(".trash"))
            .iter()
            .filter_map(|e| {
                let name = e.file_name()?.to_string_lossy().into_owned();
                Some(name.rsplit_once('-')?.1.to_string())
            })
            .collect();
        for source in sources {
            let Ok(refs) = git(
                source,
                &["for-each-ref", "--format=%(refname)", "refs/grove/trash/"],
            ) else {
                continue;
            };
            for name in refs.lines().filter(|l| !l.is_empty()) {
                let id = name
                    .trim_start_matches("refs/grove/trash/")
                    .split('/')
                    .next()
                    .unwrap_or_default();
                if ids.contains(id) || journals.iter().any(|j| j.contains(name)) {
                    continue;
                }
                out.push(v(
                    Kind::LeakedTrashRef,
                    format!(
                        "{}: {name} keeps a tip for a trash entry that is gone",
                        source.display()
                    ),
                ));
            }
        }
    }

    fn check_branches(&self, state: &StateView, baseline: &Baseline, out: &mut Vec<Violation>) {
        for source in self.all_sources(Some(state)) {
            let Ok(now) = branches(&source) else { continue };
            let before = baseline.branches.get(&source);
            for branch in now.keys() {
                if before.is_some_and(|b| b.contains_key(branch)) {
                    continue;
                }
                if state
                    .entries
                    .iter()
                    .any(|e| e.source == source && &e.branch == branch)
                {
                    continue;
                }
                // Commits of this branch found on no other ref: work, rightly kept.
                let unique = git(
                    &source,
                    &[
                        "rev-list",
                        "--max-count=1",
                        &format!("refs/heads/{branch}"),
                        "--not",
                        &format!("--exclude=refs/heads/{branch}"),
                        "--all",
                    ],
                );
                if matches!(unique, Ok(ref s) if s.trim().is_empty()) {
                    out.push(v(
                        Kind::LeakedBranch,
                        format!(
                            "{}: branch `{branch}` did not exist before, no workspace uses it, and it holds no commit of its own",
                            source.display()
                        ),
                    ));
                }
            }
        }
    }

    /// Journals, lock files and temporary files in `operations/` (and temporary files
    /// beside `state.json`); returns the journals' texts.
    fn check_operations(&self, out: &mut Vec<Violation>) -> Vec<String> {
        let ops = self.grove_dir.join("operations");
        let mut texts = Vec::new();
        let entries = list_dir(&ops);
        for p in &entries {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with('.') && name.ends_with(".tmp") {
                out.push(v(Kind::TempFileLeft, describe(p)));
            } else if name.ends_with(".json") {
                let text = std::fs::read_to_string(p).unwrap_or_default();
                let summary = serde_json::from_str::<Value>(&text)
                    .map(|j| {
                        let steps = j["steps"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                        let statuses: Vec<String> = steps
                            .iter()
                            .map(|s| {
                                format!(
                                    "{}={}",
                                    s["action"].as_str().unwrap_or("?"),
                                    s["status"].as_str().unwrap_or("?")
                                )
                            })
                            .collect();
                        format!(
                            "{} of `{}`, phase {}, steps [{}]",
                            j["kind"].as_str().unwrap_or("?"),
                            j["workspace"].as_str().unwrap_or("?"),
                            j["phase"].as_str().unwrap_or("?"),
                            statuses.join(", ")
                        )
                    })
                    .unwrap_or_else(|e| format!("unreadable: {e}"));
                out.push(v(Kind::JournalLeft, format!("{}: {summary}", describe(p))));
                texts.push(text);
            } else if let Some(stem) = name.strip_suffix(".lock")
                && !ops.join(format!("{stem}.json")).exists()
            {
                out.push(v(
                    Kind::JournalLockLeft,
                    format!("{} without its journal", describe(p)),
                ));
            }
        }
        for p in list_dir(&self.grove_dir) {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with('.') && name.ends_with(".tmp") {
                out.push(v(Kind::TempFileLeft, describe(&p)));
            }
        }
        texts
    }
}

/// Git's lock files and operations in progress in `source`'s git directory and in each of
/// its worktrees' admin directories.
fn check_git_dir_files(source: &Path, out: &mut Vec<Violation>) {
    let git_dir = source.join(".git");
    if !git_dir.is_dir() {
        return;
    }
    let mut admin_dirs = vec![git_dir.clone()];
    admin_dirs.extend(list_dir(&git_dir.join("worktrees")));
    for dir in &admin_dirs {
        let whose = read_trimmed(&dir.join("gitdir"))
            .map(|g| {
                let g = PathBuf::from(g);
                format!(" (worktree {})", g.parent().unwrap_or(&g).display())
            })
            .unwrap_or_default();
        for f in list_dir(dir) {
            let name = f.file_name().unwrap_or_default().to_string_lossy();
            if name.ends_with(".lock") {
                out.push(v(Kind::GitLockLeft, format!("{}{whose}", f.display())));
            }
        }
        for marker in [
            "rebase-merge",
            "rebase-apply",
            "MERGE_HEAD",
            "CHERRY_PICK_HEAD",
            "REVERT_HEAD",
        ] {
            if dir.join(marker).exists() {
                out.push(v(
                    Kind::OperationInProgress,
                    format!("{}{whose}: {marker} exists", dir.display()),
                ));
            }
        }
    }
    let mut stack = vec![git_dir.join("refs")];
    while let Some(d) = stack.pop() {
        for p in list_dir(&d) {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "lock") {
                out.push(v(Kind::GitLockLeft, p.display().to_string()));
            }
        }
    }
}

/// The branches of the repository at `dir` and their tips.
fn branches(dir: &Path) -> Result<BTreeMap<String, String>, String> {
    let text = git(
        dir,
        &[
            "for-each-ref",
            "--format=%(refname:short) %(objectname)",
            "refs/heads",
        ],
    )?;
    Ok(text
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(b, o)| (b.to_string(), o.to_string()))
        .collect())
}

/// The branches of every source repository, recorded before an operation, so the auditor
/// can tell a branch grove made from one that was there.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    branches: BTreeMap<PathBuf, BTreeMap<String, String>>,
}

impl Baseline {
    pub fn record(world: &World) -> Baseline {
        let mut b = Baseline::default();
        for s in &world.sources {
            b.branches
                .insert(s.clone(), branches(s).unwrap_or_default());
        }
        b
    }
}

/// Pre-existing work the auditor checks afterwards: files (dirty tracked, untracked)
/// byte for byte, and commits (unpushed) still on their branch.
#[derive(Debug, Clone, Default)]
pub struct Preserved {
    files: Vec<(PathBuf, Vec<u8>)>,
    commits: Vec<PreservedCommit>,
}

#[derive(Debug, Clone)]
struct PreservedCommit {
    repo: PathBuf,
    branch: String,
    tip: String,
    rebase_ok: bool,
}

impl Preserved {
    pub fn new() -> Preserved {
        Preserved::default()
    }

    /// Records the current bytes of `path` (which must exist).
    pub fn file(&mut self, path: &Path) -> &mut Preserved {
        let bytes =
            std::fs::read(path).unwrap_or_else(|e| panic!("cannot record {}: {e}", path.display()));
        self.files.push((path.to_path_buf(), bytes));
        self
    }

    /// Records the tip of `branch` in the repository (or worktree) at `repo`: afterwards
    /// the branch must still have it — exactly, or, with `rebase_ok`, as equivalent
    /// patches (a sync rebases it).
    pub fn commits(&mut self, repo: &Path, branch: &str, rebase_ok: bool) -> &mut Preserved {
        let tip = git(repo, &["rev-parse", &format!("refs/heads/{branch}")])
            .unwrap_or_else(|e| panic!("cannot record {branch} in {}: {e}", repo.display()));
        self.commits.push(PreservedCommit {
            repo: repo.to_path_buf(),
            branch: branch.to_string(),
            tip: tip.trim().to_string(),
            rebase_ok,
        });
        self
    }

    /// How many things are watched (so a fixture can prove it watches something).
    pub fn len(&self) -> usize {
        self.files.len() + self.commits.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check(&self, out: &mut Vec<Violation>) {
        for (path, bytes) in &self.files {
            match std::fs::read(path) {
                Ok(now) if &now == bytes => {}
                Ok(now) => out.push(v(
                    Kind::WorkLost,
                    format!(
                        "{} changed ({} bytes before, {} now)",
                        path.display(),
                        bytes.len(),
                        now.len()
                    ),
                )),
                Err(e) => out.push(v(Kind::WorkLost, format!("{}: {e}", path.display()))),
            }
        }
        for c in &self.commits {
            let r = format!("refs/heads/{}", c.branch);
            let now = match git(&c.repo, &["rev-parse", "--verify", "-q", &r]) {
                Ok(t) => t.trim().to_string(),
                Err(_) => {
                    out.push(v(
                        Kind::WorkLost,
                        format!(
                            "{}: branch `{}` (with commits at {}) is gone",
                            c.repo.display(),
                            c.branch,
                            short(&c.tip)
                        ),
                    ));
                    continue;
                }
            };
            if now == c.tip {
                continue;
            }
            if !c.rebase_ok {
                out.push(v(
                    Kind::WorkLost,
                    format!(
                        "{}: branch `{}` moved from {} to {}",
                        c.repo.display(),
                        c.branch,
                        short(&c.tip),
                        short(&now)
                    ),
                ));
                continue;
            }
            // `git cherry NOW TIP`: commits of TIP not in NOW, `-` when an equivalent
            // patch is in NOW, `+` when the work is missing.
            match git(&c.repo, &["cherry", &now, &c.tip]) {
                Ok(list) => {
                    let lost: Vec<&str> =
                        list.lines().filter_map(|l| l.strip_prefix("+ ")).collect();
                    if !lost.is_empty() {
                        out.push(v(
                            Kind::WorkLost,
                            format!(
                                "{}: branch `{}` (now {}) lost commit(s) {}",
                                c.repo.display(),
                                c.branch,
                                short(&now),
                                lost.iter().map(|s| short(s)).collect::<Vec<_>>().join(", ")
                            ),
                        ));
                    }
                }
                Err(e) => out.push(v(
                    Kind::WorkLost,
                    format!("{}: cannot compare `{}`: {e}", c.repo.display(), c.branch),
                )),
            }
        }
    }
}

fn short(oid: &str) -> &str {
    &oid[..oid.len().min(10)]
}

/// The registered linked worktrees of `source` (its main worktree excluded).
fn registrations(source: &Path) -> Result<Vec<Registration>, String> {
    let list = git(source, &["worktree", "list", "--porcelain"])?;
    let mut out = Vec::new();
    for block in list.split("\n\n").skip(1) {
        let mut path = None;
        let mut branch = None;
        for line in block.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if let Some(b) = line.strip_prefix("branch refs/heads/") {
                branch = Some(b.to_string());
            }
        }
        if let Some(path) = path {
            out.push(Registration { path, branch });
        }
    }
    Ok(out)
}

/// The admin directory a worktree's `.git` file leads to.
fn link_target(worktree: &Path) -> Option<PathBuf> {
    let text = read_trimmed(&worktree.join(".git"))?;
    let target = PathBuf::from(text.strip_prefix("gitdir: ")?);
    Some(if target.is_absolute() {
        target
    } else {
        worktree.join(target)
    })
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// The entries of `dir`, sorted; empty when it cannot be read.
fn list_dir(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn describe(p: &Path) -> String {
    let what = match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => {
            let n = std::fs::read_dir(p).map(|rd| rd.count()).unwrap_or(0);
            format!("directory, {n} entries")
        }
        Ok(m) if m.file_type().is_symlink() => "symlink".to_string(),
        Ok(m) => format!("file, {} bytes", m.len()),
        Err(_) => "gone".to_string(),
    };
    format!("{} ({what})", p.display())
}

/// git, hermetic (no host or system configuration), output as text.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .envs(crate::HERMETIC_GIT.iter().copied())
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "git {} in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A retained trash entry `entry` with the record `text` is whole: it holds the workspace
/// directory, and each branch it records as deleted has its tip kept in its source.
fn check_retained(entry: &Path, text: &str, out: &mut Vec<Violation>) {
    let broken = |why: String| v(Kind::BrokenTrash, format!("{}: {why}", describe(entry)));
    let Ok(record) = serde_json::from_str::<Value>(text) else {
        out.push(broken("trash.json is not JSON".into()));
        return;
    };
    if !entry.join("workspace").is_dir() {
        out.push(broken("it holds no workspace directory".into()));
    }
    let id = entry
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .and_then(|n| n.rsplit_once('-').map(|(_, id)| id.to_string()))
        .unwrap_or_default();
    let repos = record["repos"].as_array().cloned().unwrap_or_default();
    for (i, r) in repos.iter().enumerate() {
        if r["fate"] != "deleted" {
            continue;
        }
        let source = PathBuf::from(r["source"].as_str().unwrap_or_default());
        let name = format!("refs/grove/trash/{id}/{i}");
        let at = git(&source, &["rev-parse", "--verify", "--quiet", &name]).unwrap_or_default();
        if at.trim() != r["tip"].as_str().unwrap_or_default() {
            out.push(broken(format!(
                "{name} in {} is not at the deleted branch's tip {}",
                source.display(),
                r["tip"]
            )));
        }
    }
}
