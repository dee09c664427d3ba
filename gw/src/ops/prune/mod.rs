//! `gw prune`: delete old workspaces, and `gw prune branches`: delete merged branches.
//!
//! Both preview by default and change nothing; `--yes` attempts every candidate and
//! reports each outcome, exiting non-zero if any failed.
//!
//! Workspace candidates are those created at least `--min-age` ago (default 7 days) and,
//! whatever their age, every workspace whose directory is gone. They are deleted through
//! `gw delete`'s operation, so uncommitted work is refused, `pre_delete` runs, git's
//! registrations are pruned and branches are deleted under the same rules.
//!
//! `gw prune branches` is [`branches`].

mod branches;

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use branches::{
    BranchCandidate, PruneBranchesOptions, PruneBranchesReport, branches_plan_doc, prune_branches,
};

use serde::Serialize;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::fsx;
use crate::ops::delete::{self, DeleteOptions};
use crate::ops::plan::{self, Change, ChangeKind, Described, Fact, PlanDoc, PlanKind};
use crate::ops::safety::Remover;
use crate::ops::{Ctx, Outcome, RepoResult};
use crate::state::State;

/// The default `--min-age`.
pub const DEFAULT_MIN_AGE: &str = "7d";

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PruneOptions {
    /// `--min-age` as given (`12h`, `7d`, `2w`, a bare number of days).
    pub min_age: Option<String>,
    /// Delete the candidates (otherwise only list them).
    pub yes: bool,
    /// `gw apply`: the plan this prune must match.
    #[serde(skip)]
    pub expect: Option<plan::Expect>,
}

/// A workspace that is (or was) a prune candidate.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Candidate {
    pub name: String,
    pub branch: String,
    pub path: PathBuf,
    /// RFC 3339, UTC; `null` when the recorded time cannot be read (see `unknown`).
    pub created_at: Option<String>,
    /// Whole days since `created_at`; `null` when it cannot be read.
    pub age_days: Option<u64>,
    /// For each field that is `null` because it could not be determined, the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown: BTreeMap<&'static str, String>,
    /// `created_at` as recorded in `state.json` (the Go grove's local time), for the
    /// legacy `--json` shape.
    #[serde(skip)]
    pub recorded_created_at: String,
    /// The workspace directory is gone.
    pub missing: bool,
    /// With `--yes`: `deleted` or `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// With `--yes`: what happened to each repository.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repos: Vec<RepoResult>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PruneReport {
    pub min_age: String,
    /// `--yes` was given: the candidates were deleted (see each `outcome`).
    pub applied: bool,
    pub workspaces: Vec<Candidate>,
    pub count: usize,
    #[serde(skip)]
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub failure: Option<Error>,
}

impl PruneReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        if !self.applied && !self.workspaces.is_empty() {
            return vec![NextAction::destructive(
                format!(
                    "Delete {}",
                    crate::ops::count(self.workspaces.len(), "workspace", "workspaces")
                ),
                &[
                    "gw",
                    "prune",
                    "--min-age",
                    &self.min_age,
                    "--yes",
                    "--format",
                    "json",
                ],
            )];
        }
        vec![NextAction::read(
            "List the remaining workspaces",
            &["gw", "list", "--format", "json"],
        )]
    }
}

/// `gw prune [--min-age AGE] [--yes]`.
pub fn prune(ctx: &Ctx<'_>, opts: PruneOptions) -> Result<PruneReport> {
    let (min_age_text, min_age) = min_age(&opts)?;
    ctx.config()?;
    let state = ctx.state()?;
    let (mut candidates, mut warnings) = candidates(&state, min_age.as_secs());
    let mut report = PruneReport {
        min_age: min_age_text,
        applied: opts.yes,
        count: candidates.len(),
        workspaces: Vec::new(),
        warnings: Vec::new(),
        failure: None,
    };
    if let Some(expect) = &opts.expect {
        let config = ctx.config()?;
        let now = describe(ctx, &config, &candidates);
        plan::verify(PlanKind::Prune, expect, &inputs(&report.min_age), &now)?;
    }
    if !opts.yes || candidates.is_empty() {
        report.workspaces = candidates;
        report.warnings = warnings;
        return Ok(report);
    }
    let deleted = delete::delete_as(
        ctx,
        DeleteOptions {
            names: candidates.iter().map(|c| c.name.clone()).collect(),
            force: false,
            purge: false,
            expect: None,
        },
        Remover::Prune,
    )?;
    warnings.extend(deleted.warnings.iter().cloned());
    let mut failed: Vec<(String, Code, String)> = Vec::new();
    for c in candidates.iter_mut() {
        let Some(d) = deleted.deleted.iter().find(|d| d.name == c.name) else {
            continue;
        };
        c.repos = d.repos.clone();
        if d.outcome == delete::WorkspaceOutcome::Deleted {
            c.outcome = Some(Outcome::Deleted);
        } else {
            c.outcome = Some(Outcome::Failed);
            let (code, message) = match &d.error {
                Some(e) => (e.code, e.message.clone()),
                None => (
                    Code::GitFailed,
                    d.repos
                        .iter()
                        .filter(|r| r.outcome == Outcome::Failed)
                        .map(|r| format!("{}: {}", r.repo, r.detail.as_deref().unwrap_or("failed")))
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
            };
            c.detail = Some(message.clone());
            failed.push((c.name.clone(), code, message));
        }
    }
    if let Some((_, code, _)) = failed.first() {
        let summary: Vec<String> = failed.iter().map(|(n, _, m)| format!("{n}: {m}")).collect();
        report.failure = Some(
            Error::new(
                *code,
                format!(
                    "could not prune {} of {}: {}",
                    failed.len(),
                    crate::ops::count(candidates.len(), "workspace", "workspaces"),
                    summary.join("; ")
                ),
            )
            .with_fix("The failed workspaces were kept; see each one's detail (`gw delete NAME --force` discards uncommitted work)")
            .with_details(serde_json::json!({
                "failed": failed.iter().map(|(n, c, m)| serde_json::json!({"workspace": n, "code": c, "message": m})).collect::<Vec<_>>(),
            }))
            .with_action(NextAction::read(
                "List the remaining workspaces",
                &["gw", "list", "--format", "json"],
            )),
        );
    }
    report.workspaces = candidates;
    report.warnings = warnings;
    Ok(report)
}

/// `--min-age` as given (default `7d`) and as a duration.
fn min_age(opts: &PruneOptions) -> Result<(String, std::time::Duration)> {
    let text = opts
        .min_age
        .clone()
        .unwrap_or_else(|| DEFAULT_MIN_AGE.to_string());
    let age = crate::duration::parse_age(&text).map_err(|e| {
        Error::usage(e).with_fix("Pass --min-age as a number with h, d or w (for example 7d)")
    })?;
    Ok((text, age))
}

fn inputs(min_age: &str) -> serde_json::Value {
    serde_json::to_value(PruneOptions {
        min_age: Some(min_age.to_string()),
        yes: true,
        expect: None,
    })
    .expect("options serialise")
}

/// `gw plan prune`: the candidates, chosen exactly as `gw prune` chooses them, and what
/// deleting them (`--yes`) would do; a candidate whose delete would be refused (it holds
/// uncommitted work) is a `skip`, as `gw prune --yes` would leave it.
pub fn plan_doc(ctx: &Ctx<'_>, opts: &PruneOptions) -> Result<PlanDoc> {
    let (min_age_text, min_age) = min_age(opts)?;
    let config = ctx.config()?;
    let state = ctx.state()?;
    let (candidates, warnings) = candidates(&state, min_age.as_secs());
    let mut described = describe(ctx, &config, &candidates);
    described.warnings.extend(warnings);
    Ok(plan::document(
        PlanKind::Prune,
        inputs(&min_age_text),
        described,
    ))
}

fn describe(ctx: &Ctx<'_>, config: &crate::config::Config, candidates: &[Candidate]) -> Described {
    let mut d = Described {
        workspace: candidates
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
            .join(", "),
        ..Described::default()
    };
    d.facts
        .push(Fact::new(None, "candidates", d.workspace.clone()));
    // Prune deletes the candidates in turn: each branch is judged with the earlier ones gone.
    let mut going = Vec::new();
    for c in candidates {
        match delete::describe_after(
            ctx,
            config,
            std::slice::from_ref(&c.name),
            false,
            delete::keeps(config, false),
            Remover::Prune,
            &mut going,
        ) {
            Ok(one) => {
                let one = one.under(&c.name);
                d.changes.extend(one.changes);
                d.facts.extend(one.facts);
                d.warnings.extend(one.warnings);
            }
            Err(e) => d.changes.push(
                Change::new(ChangeKind::Skip)
                    .repo(&c.name)
                    .detail(e.message.clone()),
            ),
        }
    }
    d
}

/// The workspaces at least `min_age_secs` old or with their directory gone.
fn candidates(state: &State, min_age_secs: u64) -> (Vec<Candidate>, Vec<String>) {
    let now = jiff::Timestamp::now().as_second();
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for ws in &state.workspaces {
        let missing = !fsx::exists(&ws.path);
        let age = crate::time::parse_created_at(&ws.created_at)
            .map(|t| u64::try_from(now - t.as_second()).unwrap_or(0));
        if age.is_none() && !missing {
            warnings.push(format!(
                "{}: cannot read created_at {:?}; not considered by age",
                ws.name, ws.created_at
            ));
        }
        if !(missing || age.is_some_and(|a| a >= min_age_secs)) {
            continue;
        }
        let mut unknown = BTreeMap::new();
        if age.is_none() {
            let why = format!("unreadable recorded time {:?}", ws.created_at);
            unknown.insert("created_at", why.clone());
            unknown.insert("age_days", why);
        }
        out.push(Candidate {
            name: ws.name.clone(),
            branch: ws.branch.clone(),
            path: ws.path.clone(),
            created_at: crate::time::created_at_utc(&ws.created_at),
            age_days: age.map(|a| a / 86_400),
            unknown,
            recorded_created_at: ws.created_at.clone(),
            missing,
            outcome: None,
            detail: None,
            repos: Vec::new(),
        });
    }
    (out, warnings)
}
