//! `gw prune branches`: delete local branches that are merged, or (with `--gone`) whose
//! upstream was deleted.
//!
//! Candidates are local branches of every discovered repository that are merged into
//! `origin/<base>` (or, with `--gone`, whose upstream was deleted), and that no worktree
//! has checked out and no workspace records. The base branch and the main checkout's
//! branch are never candidates. Each candidate's fate is the kernel's
//! (`safety::fate::of_candidate`): it goes when deleting it loses nothing — its commits
//! are on another branch or a remote, or its changes are in the base already (a squash
//! merge) — and otherwise only with `--force`. The preview, the plan
//! (`gw plan prune branches`) and the deletion are described from the same fates.
//!
//! With `--yes` it runs as a transaction: under every candidate repository's lock it looks
//! again (candidates and fates), and each deletion is journaled with its tip (so an
//! interrupted prune is rolled back by `gw doctor --fix`, the branches re-created where
//! they were) and checked again at that tip just before `git branch -D`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::config::RepoConfig;
use crate::discover::Repo as Discovered;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::git;
use crate::ops::plan::{self, Change, ChangeKind, Described, Fact, PlanDoc, PlanKind};
use crate::ops::safety::{Fate, fate};
use crate::ops::tx::{self, Tx};
use crate::ops::{Ctx, Outcome, repos};
use crate::parallel;
use crate::state::journal::{Action, Kind};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PruneBranchesOptions {
    /// Also branches whose upstream was deleted.
    pub gone: bool,
    /// `git fetch --prune` every repository first.
    #[serde(default)]
    pub fetch: bool,
    /// Delete the candidates.
    #[serde(default)]
    pub yes: bool,
    /// Delete also candidates holding commits found nowhere else whose changes are not in
    /// the base.
    #[serde(default)]
    pub force: bool,
    /// `gw apply`: the plan this prune must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
}

/// A branch that is (or was) a prune candidate.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BranchCandidate {
    pub repo: String,
    /// The repository's main checkout.
    pub path: PathBuf,
    pub branch: String,
    /// The commit it points at.
    pub tip: String,
    /// `merged into origin/main`, or `upstream origin/x is gone`.
    pub reason: String,
    /// Deleting it loses commits found nowhere else (only with `--force`).
    pub destructive: bool,
    /// Why it is kept without `--force` (it holds commits on no remote whose changes are
    /// not in the base), or what deleting it loses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// With `--yes`: `deleted`, `kept` or `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip)]
    fate: Option<Fate>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PruneBranchesReport {
    pub applied: bool,
    pub branches: Vec<BranchCandidate>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub failure: Option<Error>,
    #[serde(skip)]
    pub argv: Vec<String>,
}

impl PruneBranchesReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        if self.applied {
            return Vec::new();
        }
        let going = self
            .branches
            .iter()
            .filter(|b| matches!(b.fate, Some(Fate::Delete { .. })))
            .count();
        let kept = self.branches.len() - going;
        let mut out = Vec::new();
        let argv: Vec<&str> = self.argv.iter().map(String::as_str).collect();
        if going > 0 {
            out.push(NextAction::destructive(
                format!("Delete {}", crate::ops::count(going, "branch", "branches")),
                &argv,
            ));
        }
        if kept > 0 && !self.argv.iter().any(|a| a == "--force") {
            let mut forced = argv.clone();
            forced.insert(forced.len() - 2, "--force");
            out.push(NextAction::destructive(
                format!(
                    "Delete also the {} holding commits found nowhere else",
                    crate::ops::count(kept, "branch", "branches")
                ),
                &forced,
            ));
        }
        out
    }
}

/// `gw prune branches [--gone] [--fetch] [--force] [--yes]`.
pub fn prune_branches(ctx: &Ctx<'_>, opts: PruneBranchesOptions) -> Result<PruneBranchesReport> {
    let config = ctx.config()?;
    let discovery = repos::discover(ctx, &config);
    let mut warnings = discovery.warnings.clone();
    if opts.fetch && opts.expect.is_none() {
        warnings.extend(fetch(ctx, &discovery.repos));
    }
    let mut argv: Vec<String> = ["gw", "prune", "branches"].map(String::from).to_vec();
    if opts.gone {
        argv.push("--gone".into());
    }
    if opts.force {
        argv.push("--force".into());
    }
    argv.extend(["--yes", "--format", "json"].map(String::from));
    // Deciding and deleting happen while no other gw changes these repositories: a create
    // checking out a candidate, another prune.
    let sources: Vec<&Path> = discovery
        .repos
        .iter()
        .filter(|r| r.remote.is_some())
        .map(|r| r.path.as_path())
        .collect();
    let _hold = if opts.yes || opts.expect.is_some() {
        Some(tx::hold_repos(ctx, &sources)?)
    } else {
        None
    };
    let (branches, found) = candidates(ctx, &discovery.repos, &opts)?;
    warnings.extend(found);
    if let Some(expect) = &opts.expect {
        plan::verify(
            PlanKind::PruneBranches,
            expect,
            &inputs(&opts),
            &describe(&branches),
        )?;
    }
    for b in branches.iter().filter(|b| b.warning.is_some()) {
        warnings.push(format!(
            "{} {}: {}",
            b.repo,
            b.branch,
            b.warning.as_deref().unwrap_or_default()
        ));
    }
    let mut report = PruneBranchesReport {
        applied: opts.yes,
        count: branches.len(),
        branches,
        warnings,
        failure: None,
        argv,
    };
    if opts.yes {
        delete(ctx, &mut report)?;
    }
    Ok(report)
}

/// Deletes every candidate whose fate is to go, in one transaction; the others are kept.
fn delete(ctx: &Ctx<'_>, report: &mut PruneBranchesReport) -> Result<()> {
    let mut tx = Tx::begin(ctx, tx::Locks::none(), Kind::PruneBranches, "", &[])?;
    for b in report.branches.iter_mut() {
        match b.fate.clone() {
            Some(Fate::Delete { tip, unique }) => {
                let action = Action::DeleteBranch {
                    repo: b.repo.clone(),
                    source: b.path.clone(),
                    branch: b.branch.clone(),
                    tip,
                    forced: unique != Some(0),
                    keep: None,
                };
                match tx.run(action) {
                    Ok(()) => b.outcome = Some(Outcome::Deleted),
                    Err(e) => {
                        b.outcome = Some(Outcome::Failed);
                        b.detail = Some(e.message.clone());
                    }
                }
            }
            Some(Fate::Keep(why)) => {
                b.outcome = Some(Outcome::Kept);
                b.detail = Some(why);
            }
            _ => {}
        }
    }
    tx.finish()?;
    let kept: Vec<String> = report
        .branches
        .iter()
        .filter(|b| b.outcome == Some(Outcome::Kept))
        .map(|b| format!("{} {}", b.repo, b.branch))
        .collect();
    let failed: Vec<String> = report
        .branches
        .iter()
        .filter(|b| b.outcome == Some(Outcome::Failed))
        .map(|b| {
            format!(
                "{} {}: {}",
                b.repo,
                b.branch,
                b.detail.as_deref().unwrap_or("failed")
            )
        })
        .collect();
    let total = crate::ops::count(report.branches.len(), "branch", "branches");
    if !failed.is_empty() {
        report.failure = Some(
            Error::new(
                Code::GitFailed,
                format!(
                    "could not delete {} of {total}: {}",
                    failed.len(),
                    failed.join("; ")
                ),
            )
            .with_details(serde_json::json!({ "failed": failed, "kept": kept })),
        );
    } else if !kept.is_empty() {
        report.failure = Some(
            Error::new(
                Code::WorktreeDirty,
                format!(
                    "kept {} of {total}: {} (they hold commits found on no remote, whose changes \
                     are not in the base)",
                    kept.len(),
                    kept.join(", ")
                ),
            )
            .with_fix("Push or merge them first, or pass --force to delete them anyway")
            .with_details(serde_json::json!({ "kept": kept })),
        );
    }
    Ok(())
}

fn fetch(ctx: &Ctx<'_>, repos: &[Discovered]) -> Vec<String> {
    let with_remote: Vec<&Discovered> = repos.iter().filter(|r| r.remote.is_some()).collect();
    ctx.events.progress(&format!(
        "fetching {}",
        crate::ops::count(with_remote.len(), "repository", "repositories")
    ));
    let results = parallel::map_processes(&with_remote, |r| {
        let _lock = tx::repo_lock(ctx, &r.path)?;
        git::fetch_prune(&r.path).map_err(Error::from)
    });
    with_remote
        .iter()
        .zip(results)
        .filter_map(|(r, res)| {
            res.err()
                .map(|e| format!("{}: fetch failed, using local state: {}", r.name, e.message))
        })
        .collect()
}

fn inputs(opts: &PruneBranchesOptions) -> serde_json::Value {
    serde_json::to_value(PruneBranchesOptions {
        gone: opts.gone,
        fetch: false,
        yes: true,
        force: opts.force,
        expect: None,
    })
    .expect("options serialise")
}

/// `gw plan prune branches`: the candidates and their fates, decided exactly as `gw prune
/// branches --yes` decides them (with `--fetch`, after fetching; applying it does not
/// fetch again).
pub fn branches_plan_doc(ctx: &Ctx<'_>, opts: &PruneBranchesOptions) -> Result<PlanDoc> {
    let config = ctx.config()?;
    let discovery = repos::discover(ctx, &config);
    let mut warnings = discovery.warnings.clone();
    if opts.fetch {
        warnings.extend(fetch(ctx, &discovery.repos));
    }
    let (branches, found) = candidates(ctx, &discovery.repos, opts)?;
    let mut described = describe(&branches);
    described.warnings.extend(warnings);
    described.warnings.extend(found);
    Ok(plan::document(
        PlanKind::PruneBranches,
        inputs(opts),
        described,
    ))
}

/// The plan's view: each candidate's tip as a fact, and its fate as a change.
fn describe(branches: &[BranchCandidate]) -> Described {
    let mut d = Described {
        workspace: String::new(),
        ..Described::default()
    };
    for b in branches {
        d.facts.push(Fact::new(
            Some(&b.repo),
            format!("branch {}", b.branch),
            &b.tip,
        ));
        let change = match &b.fate {
            Some(Fate::Delete { tip, .. }) => Change::new(ChangeKind::DeleteBranch)
                .destructive(b.destructive)
                .detail(format!("at {}; {}", &tip[..tip.len().min(7)], b.reason)),
            Some(Fate::Keep(why)) => Change::new(ChangeKind::KeepBranch).detail(why),
            _ => continue,
        };
        d.changes.push(change.repo(&b.repo).branch(&b.branch));
        d.warnings.extend(
            b.warning
                .as_ref()
                .filter(|_| b.destructive)
                .map(|w| format!("{} {}: {w}", b.repo, b.branch)),
        );
    }
    d
}

/// Every candidate of `repos`, with its fate; and warnings.
fn candidates(
    ctx: &Ctx<'_>,
    repos: &[Discovered],
    opts: &PruneBranchesOptions,
) -> Result<(Vec<BranchCandidate>, Vec<String>)> {
    let state = ctx.state()?;
    let recorded: HashSet<(PathBuf, String)> = state
        .workspaces
        .iter()
        .flat_map(|w| w.repos.iter())
        .map(|r| (fsx::canonical(&r.source_repo), r.branch.clone()))
        .collect();
    let found = parallel::map(repos, |r| repo_candidates(r, opts, &recorded));
    let mut warnings = Vec::new();
    let mut branches = Vec::new();
    for (c, w) in found {
        branches.extend(c);
        warnings.extend(w);
    }
    Ok((branches, warnings))
}

fn repo_candidates(
    r: &Discovered,
    opts: &PruneBranchesOptions,
    recorded: &HashSet<(PathBuf, String)>,
) -> (Vec<BranchCandidate>, Vec<String>) {
    let mut warnings = Vec::new();
    if r.remote.is_none() {
        return (Vec::new(), warnings);
    }
    let Ok(repo) = git::Repo::open(&r.path) else {
        return (Vec::new(), warnings);
    };
    let configured = RepoConfig::load(&r.path).ok().and_then(|c| c.base_branch);
    let Some(base) = repo.resolve_base(configured.as_deref()) else {
        return (Vec::new(), warnings);
    };
    let Some(base_short) = base.name.strip_prefix("origin/") else {
        // No remote base: nothing can be called merged upstream.
        return (Vec::new(), warnings);
    };
    let mut protected: HashSet<String> = HashSet::new();
    protected.insert(base_short.to_string());
    match repo.worktrees() {
        Ok(wts) => protected.extend(wts.into_iter().filter_map(|w| w.branch)),
        Err(e) => {
            warnings.push(format!("{}: cannot list worktrees: {e}", r.name));
            return (Vec::new(), warnings);
        }
    }
    let canonical = fsx::canonical(&r.path);
    let branches = match repo.local_branches() {
        Ok(b) => b,
        Err(e) => {
            warnings.push(format!("{}: cannot list branches: {e}", r.name));
            return (Vec::new(), warnings);
        }
    };
    let mut out = Vec::new();
    for b in branches {
        if protected.contains(&b.name) || recorded.contains(&(canonical.clone(), b.name.clone())) {
            continue;
        }
        let merged = matches!(repo.ahead_behind(&b.oid, &base.oid), Ok((0, _)));
        let reason = if merged {
            format!("merged into {}", base.name)
        } else if opts.gone && b.upstream_gone {
            format!(
                "upstream {} is gone",
                b.upstream.as_deref().unwrap_or("branch")
            )
        } else {
            continue;
        };
        let fate = fate::of_candidate(&repo, &b.name, &b.oid, &base, opts.force);
        let (destructive, warning) = match &fate {
            Fate::Keep(why) => (false, Some(why.clone())),
            Fate::Delete { unique, .. } if fate.destructive() => (
                true,
                Some(match unique {
                    Some(n) => format!(
                        "{} found nowhere else {} lost",
                        crate::ops::count(*n, "commit", "commits"),
                        if *n == 1 { "is" } else { "are" }
                    ),
                    None => "its commits could not be checked for ones found nowhere else".into(),
                }),
            ),
            _ => (false, None),
        };
        out.push(BranchCandidate {
            repo: r.name.clone(),
            path: r.path.clone(),
            branch: b.name,
            tip: b.oid,
            reason,
            destructive,
            warning,
            outcome: None,
            detail: None,
            fate: Some(fate),
        });
    }
    (out, warnings)
}
