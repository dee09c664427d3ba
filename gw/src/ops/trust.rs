//! Trust for project commands: a repository's `.grove.toml` commands (`setup`,
//! `teardown`, `pre_sync`, `post_sync`, `pre_run`, `run`, `post_run`) are code that came
//! with the repository — one just cloned from a URL too — so grove runs them only once
//! they are approved, and approved as they are now: an edited command is asked about again.
//!
//! [`require`] is the one check, made by every operation before it runs any such command
//! (and before it changes anything it can avoid changing). A repository's commands run
//! when:
//! - `trust.json` approves the repository with the SHA-256 of its current commands
//!   (`gw trust REPO`, an answered question, or `--yes`, which record the approval);
//! - the repository is inside a directory of `config.toml`'s `[trust] dirs`;
//! - at the upgrade from a grove without trust (a grove directory with `config.toml` and
//!   no `trust.json`), every repository that grove already knew — recorded in
//!   `state.json` or found in the repo dirs — is approved as it is then, so existing
//!   workflows keep working; a repository the running command just cloned is not.
//!
//! Otherwise [`Approval`] decides: ask (a person at a terminal, shown the commands),
//! approve (`--yes`), or refuse with `UNTRUSTED_COMMANDS`, whose next action is
//! `gw trust REPO` (machine mode, or no terminal).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::config::{Config, RepoConfig};
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::ops::Ctx;
use crate::state::trust::{self, Entry, Trust};

/// How an operation may get approval for commands not approved yet.
#[derive(Clone, Copy)]
pub enum Approval<'a> {
    /// Refuse with `UNTRUSTED_COMMANDS` (machine mode, no terminal); `yes`: whether the
    /// command's `--yes` would approve them (its fix says so only then).
    Refuse { yes: bool },
    /// Approve them and remember it (`--yes`).
    Yes,
    /// Ask whoever is at the terminal, showing the commands; `Ok(false)` is a no.
    Ask(&'a (dyn Fn(&[Untrusted]) -> Result<bool> + Sync)),
}

/// A repository whose `.grove.toml` commands an operation is about to run.
pub struct Project<'a> {
    /// Its name in the workspace.
    pub name: &'a str,
    /// The source repository (its main checkout, where `.grove.toml` was read).
    pub path: &'a Path,
    /// What was read there, and what the operation will run.
    pub config: &'a RepoConfig,
    /// Cloned by this very command (never approved by the upgrade).
    pub cloned: bool,
}

impl<'a> Project<'a> {
    /// A repository of a workspace, `r`, whose `config` an operation on it will run.
    pub fn of(r: &'a crate::state::RepoEntry, config: &'a RepoConfig) -> Project<'a> {
        Project {
            name: &r.repo_name,
            path: &r.source_repo,
            config,
            cloned: false,
        }
    }
}

/// Commands waiting for approval.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Untrusted {
    pub repo: String,
    pub path: PathBuf,
    /// SHA-256 of the commands (what an approval records).
    pub sha256: String,
    /// The commands by key (`setup`, `run`, …).
    pub commands: std::collections::BTreeMap<String, Vec<String>>,
}

impl Untrusted {
    fn of(p: &Project<'_>, path: PathBuf) -> Untrusted {
        Untrusted {
            repo: p.name.to_string(),
            path,
            sha256: p.config.commands_sha256(),
            commands: commands_map(p.config),
        }
    }
}

fn commands_map(c: &RepoConfig) -> std::collections::BTreeMap<String, Vec<String>> {
    c.commands()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_vec()))
        .collect()
}

/// Makes sure the commands of `projects` may run (see the module's documentation): `Ok`
/// when they are approved (or now were), `UNTRUSTED_COMMANDS` or `CANCELLED` when not.
/// `doing` names the command for the question (`gw create`).
pub fn require(ctx: &Ctx<'_>, doing: &str, projects: &[Project<'_>]) -> Result<()> {
    let projects: Vec<&Project<'_>> = projects
        .iter()
        .filter(|p| !p.config.commands().is_empty())
        .collect();
    if projects.is_empty() {
        return Ok(());
    }
    let config = ctx.config().ok();
    let mut known = trust::load(&ctx.home)?;
    if known.is_none() && config.is_some() {
        let cloned: Vec<PathBuf> = projects
            .iter()
            .filter(|p| p.cloned)
            .map(|p| fsx::canonical(p.path))
            .collect();
        known = Some(upgrade(ctx, config.as_ref(), &cloned)?);
    }
    let known = known.unwrap_or_default();
    let untrusted: Vec<Untrusted> = projects
        .iter()
        .map(|p| (p, fsx::canonical(p.path)))
        .filter(|(p, path)| !trusted(&known, config.as_ref(), path, p.config))
        .map(|(p, path)| Untrusted::of(p, path))
        .collect();
    if untrusted.is_empty() {
        return Ok(());
    }
    let how = match ctx.approval {
        Approval::Yes => "yes",
        Approval::Ask(ask) => {
            if !ask(&untrusted)? {
                return Err(Error::new(
                    Code::Cancelled,
                    format!(
                        "not approved: the `.grove.toml` commands of {}; {doing} did nothing",
                        names(&untrusted)
                    ),
                ));
            }
            "asked"
        }
        Approval::Refuse { yes } => return Err(refused(doing, &untrusted, yes)),
    };
    record(ctx, &untrusted, how)
}

/// Whether `config`'s commands in the repository at `path` (canonical) may run.
fn trusted(known: &Trust, config: Option<&Config>, path: &Path, repo: &RepoConfig) -> bool {
    known.allows(path, &repo.commands_sha256())
        || config.is_some_and(|c| {
            c.trust_dirs
                .iter()
                .any(|d| path.starts_with(fsx::canonical(d)))
        })
}

/// Approves `untrusted` as they are, recording `how`.
fn record(ctx: &Ctx<'_>, untrusted: &[Untrusted], how: &str) -> Result<()> {
    let now = crate::time::now_utc();
    trust::update(&ctx.home, ctx.lock_timeout(), |t| {
        for u in untrusted {
            trust::approve(
                t,
                Entry {
                    repo: u.path.clone(),
                    sha256: u.sha256.clone(),
                    approved_at: now.clone(),
                    how: how.to_string(),
                },
            );
        }
    })?;
    Ok(())
}

/// The first trust check in a grove directory from before trust (`config.toml`, no
/// `trust.json`): approves the commands of every repository that grove knew, as they are
/// now, except the ones this command cloned, and writes `trust.json` (so this happens once).
fn upgrade(ctx: &Ctx<'_>, config: Option<&Config>, cloned: &[PathBuf]) -> Result<Trust> {
    let state = ctx.state().ok();
    let known = crate::ops::repos::known_sources(ctx, config, state.as_ref());
    let now = crate::time::now_utc();
    let entries: Vec<Entry> = known
        .iter()
        .map(|p| fsx::canonical(p))
        .filter(|p| !cloned.contains(p))
        .filter_map(|p| {
            let c = RepoConfig::load(&p).ok()?;
            (!c.commands().is_empty()).then(|| Entry {
                repo: p,
                sha256: c.commands_sha256(),
                approved_at: now.clone(),
                how: "upgrade".into(),
            })
        })
        .collect();
    trust::update(&ctx.home, ctx.lock_timeout(), |t| {
        // Another process may have written it meanwhile; keep what it approved.
        for e in entries {
            if t.entry(&e.repo).is_none() {
                trust::approve(t, e);
            }
        }
        t.clone()
    })
    .map_err(Error::from)
}

/// Writes an empty `trust.json` when there is none: a new grove directory (`gw init`) starts
/// trusting nothing, and is never taken for one being upgraded.
pub fn start(ctx: &Ctx<'_>) -> Result<()> {
    if trust::load(&ctx.home)?.is_none() {
        trust::update(&ctx.home, ctx.lock_timeout(), |_| ())?;
    }
    Ok(())
}

fn names(untrusted: &[Untrusted]) -> String {
    untrusted
        .iter()
        .map(|u| format!("`{}`", u.repo))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `UNTRUSTED_COMMANDS`: what would run, and how to approve it.
fn refused(doing: &str, untrusted: &[Untrusted], yes: bool) -> Error {
    let or_yes = if yes { " (or pass --yes)" } else { "" };
    let mut e = Error::new(
        Code::UntrustedCommands,
        format!(
            "{doing} would run the `.grove.toml` commands of {}, which are not approved",
            names(untrusted)
        ),
    )
    .with_fix(format!(
        "Read the commands (in `error.details`, or the repository's .grove.toml), then approve them with `gw trust REPO` and run this again{or_yes}"
    ))
    .with_details(serde_json::json!({ "repos": untrusted }));
    for u in untrusted {
        let path = u.path.to_string_lossy();
        e = e.with_action(NextAction::write(
            format!(
                "Approve the .grove.toml commands of {} as they are now",
                u.repo
            ),
            &["gw", "trust", &path, "--format", "json"],
        ));
    }
    e
}

// ---- gw trust ----

/// One repository in `gw trust list`, or what `gw trust add|remove` did to it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TrustedRepo {
    pub path: PathBuf,
    /// SHA-256 of the commands approved.
    pub sha256: String,
    /// RFC 3339, UTC.
    pub approved_at: String,
    /// `asked`, `yes`, `command` or `upgrade`.
    pub how: String,
    /// The repository's commands now, when it can be read.
    pub commands: std::collections::BTreeMap<String, Vec<String>>,
    /// Its commands now are the ones approved (`false`: they changed since, and would be
    /// asked about again; `null`: the repository cannot be read).
    pub current: Option<bool>,
}

impl TrustedRepo {
    fn of(e: &Entry) -> TrustedRepo {
        let now = RepoConfig::load(&e.repo).ok().filter(|_| e.repo.is_dir());
        TrustedRepo {
            path: e.repo.clone(),
            sha256: e.sha256.clone(),
            approved_at: e.approved_at.clone(),
            how: e.how.clone(),
            commands: now.as_ref().map(commands_map).unwrap_or_default(),
            current: now.map(|c| c.commands_sha256() == e.sha256),
        }
    }
}

/// `gw trust list`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TrustListReport {
    pub repos: Vec<TrustedRepo>,
    pub count: usize,
    /// `[trust] dirs` of config.toml: repositories inside them are trusted without a record.
    pub dirs: Vec<PathBuf>,
}

/// What `gw trust add` or `gw trust remove` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TrustOutcome {
    Approved,
    Removed,
    /// `remove` of a repository that was not approved.
    NotApproved,
}

/// `gw trust [add] REPO` or `gw trust remove REPO`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TrustReport {
    pub repo: String,
    pub path: PathBuf,
    pub outcome: TrustOutcome,
    /// The commands approved (or no longer approved).
    pub commands: std::collections::BTreeMap<String, Vec<String>>,
    pub sha256: String,
    /// `--dry-run`: validated, nothing written; the report says what would change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// Changes the approvals with `f`: under the lock and written back, or with `dry_run` on a
/// copy read now, nothing written.
fn change<T>(ctx: &Ctx<'_>, dry_run: bool, f: impl FnOnce(&mut trust::Trust) -> T) -> Result<T> {
    if dry_run {
        let mut copy = trust::load(&ctx.home)?.unwrap_or_default();
        return Ok(f(&mut copy));
    }
    Ok(trust::update(&ctx.home, ctx.lock_timeout(), f)?)
}

pub fn list(ctx: &Ctx<'_>) -> Result<TrustListReport> {
    let known = trust::load(&ctx.home)?.unwrap_or_default();
    let repos: Vec<TrustedRepo> = known.entries.iter().map(TrustedRepo::of).collect();
    let dirs = ctx.config().map(|c| c.trust_dirs).unwrap_or_default();
    Ok(TrustListReport {
        count: repos.len(),
        repos,
        dirs,
    })
}

/// The repository `repo` names: a path (absolute, relative, `~`), or the name of one
/// grove finds in its repo dirs.
fn locate(ctx: &Ctx<'_>, repo: &str) -> Result<(String, PathBuf)> {
    let as_path = ctx.env.resolve_path(Path::new(repo));
    if repo.contains('/') || repo.starts_with('.') || repo.starts_with('~') || as_path.is_dir() {
        if !as_path.join(".git").exists() {
            return Err(Error::new(
                Code::RepoNotFound,
                format!("`{}` is not a git repository", as_path.display()),
            )
            .with_fix("Name a repository's main checkout (the directory holding `.git`)"));
        }
        let name = as_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| repo.to_string());
        return Ok((name, fsx::canonical(&as_path)));
    }
    let config = ctx.config()?;
    let found = crate::ops::repos::discover(ctx, &config);
    match found.repos.iter().find(|r| r.name == repo) {
        Some(r) => Ok((r.name.clone(), fsx::canonical(&r.path))),
        None => Err(
            Error::new(Code::RepoNotFound, format!("unknown repo `{repo}`"))
                .with_fix("Name a repository from `gw repos`, or give its path")
                .with_action(NextAction::read(
                    "List the repositories grove can use",
                    &["gw", "repos", "--format", "json"],
                )),
        ),
    }
}

/// `gw trust [add] REPO`: approves the repository's commands as they are now (`dry_run`:
/// validated the same, nothing written).
pub fn add(ctx: &Ctx<'_>, repo: &str, dry_run: bool) -> Result<TrustReport> {
    let (name, path) = locate(ctx, repo)?;
    let config = RepoConfig::load(&path)?;
    let entry = Entry {
        repo: path.clone(),
        sha256: config.commands_sha256(),
        approved_at: crate::time::now_utc(),
        how: "command".into(),
    };
    let sha256 = entry.sha256.clone();
    change(ctx, dry_run, |t| trust::approve(t, entry))?;
    Ok(TrustReport {
        repo: name,
        path,
        outcome: TrustOutcome::Approved,
        commands: commands_map(&config),
        sha256,
        dry_run,
    })
}

/// `gw trust remove REPO`: forgets the approval; the commands are asked about again
/// (`dry_run`: validated the same, nothing written).
pub fn remove(ctx: &Ctx<'_>, repo: &str, dry_run: bool) -> Result<TrustReport> {
    // A repository that is gone can still be forgotten by its path.
    let (name, path) = match locate(ctx, repo) {
        Ok(found) => found,
        Err(e) => {
            let path = ctx.env.resolve_path(Path::new(repo));
            let known = trust::load(&ctx.home)?.unwrap_or_default();
            match known.entry(&path) {
                Some(_) => (repo.to_string(), path),
                None => return Err(e),
            }
        }
    };
    let removed = change(ctx, dry_run, |t| {
        let before = t.entries.len();
        let entry = t.entry(&path).cloned();
        t.entries.retain(|e| e.repo != path);
        (t.entries.len() < before).then_some(entry).flatten()
    })?;
    let config = RepoConfig::load(&path).unwrap_or_default();
    Ok(TrustReport {
        repo: name,
        outcome: if removed.is_some() {
            TrustOutcome::Removed
        } else {
            TrustOutcome::NotApproved
        },
        commands: commands_map(&config),
        sha256: removed.map(|e| e.sha256).unwrap_or_default(),
        path,
        dry_run,
    })
}
