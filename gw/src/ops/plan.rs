//! Plans: a structured preview of a mutating command, produced by the same code that
//! executes it, and applied later only if nothing it depends on has changed.
//!
//! `gw plan <command> …` validates exactly as `<command>` would and describes every change
//! it would make, the warnings, and the facts it depends on (each repository's HEAD,
//! branches, remote branches, uncommitted changes, worktree registrations), with a
//! `fingerprint` over the inputs and those facts and a `digest` over the whole document.
//! `gw apply` checks the digest (an edited plan is `PLAN_INVALID`), then runs the command
//! from the recorded inputs with the plan as its expectation: under the command's own
//! locks, after its own validation, it describes the world again and refuses with
//! `STATE_CHANGED` — naming each repository and fact that moved — unless the changes and
//! the fingerprint are identical. Otherwise it executes, and returns its ordinary result.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Code, Error, Result};
use crate::fsx::sha256_hex;

/// The plan document format version (independent of the envelope's `schemaVersion`).
pub const SCHEMA_VERSION: u32 = 1;

/// Which command a plan is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum PlanKind {
    Create,
    Delete,
    AddRepo,
    RemoveRepo,
    Rename,
    Reset,
    Sync,
    Prune,
    PruneBranches,
    Restore,
}

impl PlanKind {
    pub fn command(self) -> &'static str {
        match self {
            PlanKind::Create => "create",
            PlanKind::Delete => "delete",
            PlanKind::AddRepo => "add-repo",
            PlanKind::RemoveRepo => "remove-repo",
            PlanKind::Rename => "rename",
            PlanKind::Reset => "reset",
            PlanKind::Sync => "sync",
            PlanKind::Prune => "prune",
            PlanKind::PruneBranches => "prune branches",
            PlanKind::Restore => "restore",
        }
    }
}

/// What a change does. The vocabulary of `Change.action`; the schema is generated from
/// this enum, so it cannot drift from what is emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// create: make the workspace directory.
    CreateWorkspaceDir,
    /// create: a new branch from its base.
    CreateBranch,
    /// create: a new branch tracking the remote branch of that name.
    TrackRemoteBranch,
    /// create, add-repo: `git worktree add`.
    CreateWorktree,
    /// create, add-repo: copy a path of the repository's checkout that git ignores or does
    /// not track (`.grove.toml` `copy`) into the new worktree.
    CopyPath,
    /// A global lifecycle hook (`post_create`, `pre_delete`).
    RunHook,
    /// create, add-repo: a repository's `setup` commands.
    RunSetupHook,
    /// create: record the workspace in `state.json`.
    RecordState,
    /// delete, remove-repo: a repository's `teardown` commands.
    RunTeardownHook,
    /// delete, remove-repo: rename the workspace (or worktree) into the trash; its files
    /// are removed in the background.
    MoveToTrash,
    /// delete: drop the workspace's state entry.
    RemoveStateEntry,
    /// delete, remove-repo: remove git's registration of the worktree that went.
    RemoveRegistration,
    /// delete, remove-repo, prune branches: delete a branch (destructive when commits
    /// found nowhere else go with it).
    DeleteBranch,
    /// delete, remove-repo, prune branches: a branch that stays, and why.
    KeepBranch,
    /// sync: rebase onto the base.
    Rebase,
    /// reset: sync a worktree that is (or will be) on its branch.
    Sync,
    /// reset: switch a worktree back to the workspace's branch.
    SwitchBranch,
    /// reset --discard: throw away changes to tracked files.
    DiscardChanges,
    /// rename: move the workspace directory.
    MoveDirectory,
    /// rename: point git's registrations at the moved worktrees.
    RepairWorktrees,
    /// restore: move the workspace directory back out of the trash.
    RestoreFromTrash,
    /// restore: register a worktree again from its kept registration.
    RegisterWorktree,
    /// restore: make a deleted branch again at its kept tip.
    RestoreBranch,
    /// restore: drop what is left of the trash entry.
    RemoveTrashEntry,
    /// add-repo, remove-repo, rename: change the workspace's state entry.
    UpdateStateEntry,
    /// Nothing is done for this repository or workspace, and why.
    Skip,
}

impl std::fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match serde_json::to_value(self) {
            Ok(Value::String(s)) => f.write_str(&s),
            _ => write!(f, "{self:?}"),
        }
    }
}

/// One change the command would make.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Change {
    pub action: ChangeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Loses data that exists nowhere else (uncommitted changes, unique commits) or removes
    /// something irrecoverably.
    pub destructive: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Change {
    pub fn new(action: ChangeKind) -> Change {
        Change {
            action,
            repo: None,
            path: None,
            branch: None,
            destructive: false,
            detail: None,
        }
    }

    pub fn repo(mut self, repo: &str) -> Change {
        self.repo = Some(repo.into());
        self
    }

    pub fn path(mut self, path: impl Into<PathBuf>) -> Change {
        self.path = Some(path.into());
        self
    }

    pub fn branch(mut self, branch: &str) -> Change {
        self.branch = Some(branch.into());
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Change {
        self.detail = Some(detail.into());
        self
    }

    pub fn destructive(mut self, yes: bool) -> Change {
        self.destructive = yes;
        self
    }
}

/// A fact about the world a plan depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Fact {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// `head`, `branch <name>`, `remote_branch <name>`, `changes`, `registered`, `exists`, …
    pub fact: String,
    pub value: String,
}

impl Fact {
    pub fn new(repo: Option<&str>, fact: impl Into<String>, value: impl Into<String>) -> Fact {
        Fact {
            repo: repo.map(str::to_string),
            fact: fact.into(),
            value: value.into(),
        }
    }
}

/// What describing a command yields.
#[derive(Debug, Clone, Default)]
pub struct Described {
    pub workspace: String,
    pub changes: Vec<Change>,
    pub facts: Vec<Fact>,
    pub warnings: Vec<String>,
}

impl Described {
    /// This description as one workspace's part of a plan that covers several: every change
    /// and fact labelled `name/repo` (or `name` where it names no repository).
    pub fn under(mut self, name: &str) -> Described {
        let label = |x: &mut Option<String>| {
            *x = Some(match x.take() {
                Some(r) => format!("{name}/{r}"),
                None => name.to_string(),
            });
        };
        self.changes.iter_mut().for_each(|c| label(&mut c.repo));
        self.facts.iter_mut().for_each(|f| label(&mut f.repo));
        self
    }
}

/// The plan document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PlanDoc {
    pub schema_version: u32,
    pub grove_version: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub kind: PlanKind,
    pub workspace: String,
    /// The complete inputs of the command, as `gw apply` will run it.
    pub inputs: Value,
    /// Some change is destructive.
    pub destructive: bool,
    pub changes: Vec<Change>,
    pub change_count: usize,
    pub warnings: Vec<String>,
    /// The facts the plan depends on; `gw apply` refuses when any differs.
    pub facts: Vec<Fact>,
    /// SHA-256 over the kind, the inputs and the facts.
    pub fingerprint: String,
    /// SHA-256 over the rest of the document: any edit makes the plan invalid.
    pub digest: String,
}

/// What `gw apply` hands the command: the plan it must match.
#[derive(Debug, Clone)]
pub struct Expect(PlanDoc);

/// The fingerprint of inputs and facts.
pub fn fingerprint(kind: PlanKind, inputs: &Value, facts: &[Fact]) -> String {
    let doc = serde_json::json!([kind, inputs, facts]);
    sha256_hex(doc.to_string().as_bytes())
}

/// The digest `doc` must carry (public for the fuzz targets).
#[doc(hidden)]
pub fn digest(doc: &PlanDoc) -> String {
    let mut v = serde_json::to_value(doc).expect("plans serialise");
    if let Some(o) = v.as_object_mut() {
        o.remove("digest");
    }
    sha256_hex(v.to_string().as_bytes())
}

/// Builds the document for `described`, run with `inputs`.
pub fn document(kind: PlanKind, inputs: Value, described: Described) -> PlanDoc {
    let mut doc = PlanDoc {
        schema_version: SCHEMA_VERSION,
        grove_version: env!("CARGO_PKG_VERSION").into(),
        created_at: crate::time::now_utc(),
        kind,
        workspace: described.workspace,
        fingerprint: fingerprint(kind, &inputs, &described.facts),
        inputs,
        destructive: described.changes.iter().any(|c| c.destructive),
        change_count: described.changes.len(),
        changes: described.changes,
        warnings: described.warnings,
        facts: described.facts,
        digest: String::new(),
    };
    doc.digest = digest(&doc);
    doc
}

impl PlanDoc {
    pub fn expect(&self) -> Expect {
        Expect(self.clone())
    }
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(Code::PlanInvalid, message)
        .with_fix("Produce a new plan with `gw plan <command> … --format json` and apply that")
}

/// Reads a plan from `text`: a plan document, or a saved `gw plan` success envelope
/// holding one. Anything else — a failure envelope, invalid JSON, an unknown version or
/// kind, or a document whose digest does not match (it was edited) — is `PLAN_INVALID`.
pub fn parse(text: &str) -> Result<PlanDoc> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| invalid(format!("the plan is not valid JSON: {e}")))?;
    let value = if value.get("schemaVersion").is_some() && value.get("ok").is_some() {
        if value["ok"] != true {
            let code = value["error"]["code"].as_str().unwrap_or("?");
            let message = value["error"]["message"].as_str().unwrap_or("");
            return Err(invalid(format!(
                "refusing to apply a failure envelope ({code}: {message})"
            )));
        }
        value
            .get("result")
            .cloned()
            .ok_or_else(|| invalid("the envelope has no result"))?
    } else {
        value
    };
    match value.get("schema_version").and_then(Value::as_u64) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => {
            return Err(invalid(format!(
                "unsupported plan schema_version {v} (this gw reads {SCHEMA_VERSION})"
            ))
            .with_fix("Regenerate the plan with this version of gw"));
        }
        None => return Err(invalid("not a plan document (no schema_version)")),
    }
    let doc: PlanDoc = serde_json::from_value(value)
        .map_err(|e| invalid(format!("not a valid plan document: {e}")))?;
    if doc.digest != digest(&doc) {
        return Err(invalid(
            "the plan was modified after it was made (its digest does not match)",
        ));
    }
    Ok(doc)
}

/// Refuses unless the command, described now from the same inputs, makes exactly the plan
/// document it is given: `STATE_CHANGED` when a fact it depends on moved, `PLAN_INVALID`
/// when the world is the same but the document says something else (it was edited, and its
/// digest recomputed, or a different version of gw made it).
pub fn verify(kind: PlanKind, expect: &Expect, inputs: &Value, now: &Described) -> Result<()> {
    let plan = &expect.0;
    let fp = fingerprint(kind, inputs, &now.facts);
    if fp != plan.fingerprint {
        let mut lines = diff_facts(&plan.facts, &now.facts);
        if lines.is_empty() {
            lines.push("the inputs no longer match the plan".into());
        }
        return Err(changed(lines, plan, &fp, now));
    }
    let mut derived = document(kind, inputs.clone(), now.clone());
    derived.created_at.clone_from(&plan.created_at);
    derived.warnings.clone_from(&plan.warnings);
    derived.digest = digest(&derived);
    if derived == *plan {
        return Ok(());
    }
    let theirs = serde_json::to_value(plan).expect("plans serialise");
    let ours = serde_json::to_value(&derived).expect("plans serialise");
    let fields: Vec<String> = ours
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| *k != "digest" && theirs.get(k.as_str()) != Some(v))
        .map(|(k, _)| k.clone())
        .collect();
    if fields.iter().any(|f| f == "changes") && plan.grove_version == derived.grove_version {
        // Nothing the plan depends on moved, yet the command would do something else.
        return Err(changed(
            vec!["the changes the command would make are different".into()],
            plan,
            &fp,
            now,
        ));
    }
    Err(Error::new(
        Code::PlanInvalid,
        format!(
            "the plan says something other than what `gw {}` would do with its inputs ({}), so it was not applied",
            kind.command(),
            fields.join(", ")
        ),
    )
    .with_fix("Produce a new plan with `gw plan <command> … --format json` and apply that")
    .with_details(serde_json::json!({ "fields": fields })))
}

fn changed(lines: Vec<String>, plan: &PlanDoc, fp: &str, now: &Described) -> Error {
    Error::new(
        Code::StateChanged,
        format!(
            "the world changed since the plan was made, so it was not applied: {}",
            lines.join("; ")
        ),
    )
    .with_fix("Make a new plan, review it, and apply that one")
    .with_details(serde_json::json!({
        "changed": lines,
        "plan_fingerprint": plan.fingerprint,
        "current_fingerprint": fp,
        "current_changes": now.changes,
    }))
}

/// Human-readable differences between two fact lists (`api: HEAD moved a1b2→c3d4`).
pub fn diff_facts(before: &[Fact], after: &[Fact]) -> Vec<String> {
    let key = |f: &Fact| (f.repo.clone().unwrap_or_default(), f.fact.clone());
    let old: BTreeMap<_, _> = before.iter().map(|f| (key(f), f.value.clone())).collect();
    let new: BTreeMap<_, _> = after.iter().map(|f| (key(f), f.value.clone())).collect();
    let mut out = Vec::new();
    for (k, v) in &new {
        match old.get(k) {
            Some(o) if o == v => {}
            Some(o) => out.extend(describe_change(k, Some(o), Some(v))),
            None => out.extend(describe_change(k, None, Some(v))),
        }
    }
    for (k, o) in &old {
        if !new.contains_key(k) {
            out.extend(describe_change(k, Some(o), None));
        }
    }
    out
}

fn short(oid: &str) -> &str {
    oid.get(..7).unwrap_or(oid)
}

fn describe_change(
    (repo, fact): &(String, String),
    old: Option<&String>,
    new: Option<&String>,
) -> Vec<String> {
    let who = if repo.is_empty() {
        String::new()
    } else {
        format!("{repo}: ")
    };
    let none = String::from("(none)");
    let (o, n) = (old.unwrap_or(&none), new.unwrap_or(&none));
    if fact == "changes" {
        let ol: Vec<&str> = o
            .lines()
            .filter(|l| !l.is_empty() && *l != "(none)")
            .collect();
        let nl: Vec<&str> = n
            .lines()
            .filter(|l| !l.is_empty() && *l != "(none)")
            .collect();
        let mut out = Vec::new();
        for l in nl.iter().filter(|l| !ol.contains(l)) {
            out.push(format!("{who}{}", status_line(l, true)));
        }
        for l in ol.iter().filter(|l| !nl.contains(l)) {
            out.push(format!("{who}{}", status_line(l, false)));
        }
        return out;
    }
    let looks_like_oid = |s: &str| s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if fact == "head" || looks_like_oid(o) || looks_like_oid(n) {
        let label = if fact == "head" {
            "HEAD".to_string()
        } else {
            fact.clone()
        };
        return vec![format!("{who}{label} moved {}→{}", short(o), short(n))];
    }
    vec![format!("{who}{fact} changed: {o} → {n}")]
}

/// `?? notes.txt` → "new untracked file notes.txt"; ` M a.rs` → "a.rs modified".
fn status_line(line: &str, appeared: bool) -> String {
    let (code, path) = line.split_at(line.len().min(2));
    let path = path.trim();
    match (code, appeared) {
        ("??", true) => format!("new untracked file {path}"),
        ("??", false) => format!("untracked file {path} is gone"),
        (_, true) => format!("new uncommitted change to {path} ({})", code.trim()),
        (_, false) => format!("uncommitted change to {path} is gone"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> PlanDoc {
        document(
            PlanKind::Delete,
            serde_json::json!({"names": ["w"], "force": false}),
            Described {
                workspace: "w".into(),
                changes: vec![
                    Change::new(ChangeKind::MoveToTrash)
                        .path("/w")
                        .destructive(false),
                ],
                facts: vec![Fact::new(Some("api"), "head", "a".repeat(40))],
                warnings: vec![],
            },
        )
    }

    #[test]
    fn round_trip_and_edits_are_detected() {
        let d = doc();
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(parse(&text).unwrap(), d);
        let envelope =
            serde_json::json!({"ok": true, "schemaVersion": 1, "result": d, "next_actions": []});
        assert_eq!(parse(&envelope.to_string()).unwrap(), d);
        let mut edited: Value = serde_json::from_str(&text).unwrap();
        edited["changes"][0]["path"] = "/elsewhere".into();
        assert_eq!(
            parse(&edited.to_string()).unwrap_err().code,
            Code::PlanInvalid
        );
        let failure = serde_json::json!({"ok": false, "schemaVersion": 1, "error": {"code": "USAGE", "message": "x"}, "next_actions": []});
        assert_eq!(
            parse(&failure.to_string()).unwrap_err().code,
            Code::PlanInvalid
        );
        assert_eq!(parse("{").unwrap_err().code, Code::PlanInvalid);
        let mut future: Value = serde_json::from_str(&text).unwrap();
        future["schema_version"] = 2.into();
        assert_eq!(
            parse(&future.to_string()).unwrap_err().code,
            Code::PlanInvalid
        );
    }

    #[test]
    fn fact_differences_read_well() {
        let before = vec![
            Fact::new(Some("api"), "head", "a1b2c3d".to_string() + &"0".repeat(33)),
            Fact::new(Some("web"), "changes", "(none)"),
        ];
        let after = vec![
            Fact::new(Some("api"), "head", "c3d4e5f".to_string() + &"0".repeat(33)),
            Fact::new(Some("web"), "changes", "?? notes.txt"),
        ];
        assert_eq!(
            diff_facts(&before, &after),
            [
                "api: HEAD moved a1b2c3d→c3d4e5f",
                "web: new untracked file notes.txt"
            ]
        );
    }
}
