//! What `gw doctor` answers besides its report: exit 0 only when nothing is wrong (or,
//! with `--fix`, nothing is left), so `gw doctor && …` means healthy.

use crate::action::NextAction;
use crate::error::{Code, Error};
use crate::ops::Outcome;

use super::{DoctorReport, Issue};

/// Without `--fix`: `ISSUES_FOUND` when there are issues, saying whether `--fix` helps.
pub(super) fn found(issues: &[Issue]) -> Option<Error> {
    if issues.is_empty() {
        return None;
    }
    let fixable = issues.iter().filter(|i| i.fixable).count();
    let found = crate::ops::count(issues.len(), "issue", "issues");
    Some(if fixable == 0 {
        issues_found(
            format!("{found} found"),
            "Do what each issue's action says (`gw doctor --fix` repairs none of them)",
        )
    } else if fixable == issues.len() {
        issues_found(
            format!("{found} found"),
            "`gw doctor --fix` repairs what is safe to repair",
        )
    } else {
        issues_found(
            format!("{found} found ({fixable} fixable)"),
            "`gw doctor --fix` repairs what is safe to repair",
        )
    })
}

/// After `--fix`: `TRANSIENT` while a killed command's git processes still work (after
/// waiting for them), `RECOVERY_REFUSED` for an operation recovery would not act on,
/// `GIT_FAILED` for a repair that failed, `ISSUES_FOUND` for issues left; else nothing.
pub(super) fn after_fix(report: &DoctorReport, issues: &[Issue], finishing: bool) -> Option<Error> {
    if finishing {
        Some(
            Error::new(
                Code::Transient,
                "an operation is still running: an interrupted command's git processes \
                     are still at work, so it was left alone",
            )
            .with_fix("Run `gw doctor --fix` again in a moment")
            .with_action(NextAction::write(
                "Recover it once its git processes are done",
                &["gw", "doctor", "--fix", "--format", "json"],
            )),
        )
    } else if report.failed > 0 {
        let failed: Vec<String> = issues
            .iter()
            .filter(|i| i.outcome == Some(Outcome::Failed))
            .map(|i| format!("{}: {}", i.issue, i.detail.as_deref().unwrap_or("")))
            .collect();
        // An interrupted operation recovery would not touch needs a person, not a retry.
        let refused = issues.iter().any(|i| i.refused);
        Some(
            Error::new(
                if refused {
                    Code::RecoveryRefused
                } else {
                    Code::GitFailed
                },
                format!(
                    "could not fix {} of {}: {}",
                    report.failed,
                    crate::ops::count(issues.len(), "issue", "issues"),
                    failed.join("; ")
                ),
            )
            .with_action(NextAction::read(
                "Check again",
                &["gw", "doctor", "--format", "json"],
            )),
        )
    } else if let Some(blocked) = issues.iter().find(|i| i.refused) {
        Some(
            Error::new(
                Code::RecoveryRefused,
                format!(
                    "recovery refused: {}",
                    blocked.detail.as_deref().unwrap_or(&blocked.issue)
                ),
            )
            .with_fix("Look at the operation's journal, then move it out of `operations/` by hand"),
        )
    } else if report.left > 0 {
        Some(issues_found(
            format!(
                "{} left: doctor does not repair {} itself",
                crate::ops::count(report.left, "issue", "issues"),
                if report.left == 1 { "it" } else { "them" }
            ),
            "Do what each issue's action says",
        ))
    } else {
        None
    }
}

/// `ISSUES_FOUND`: `gw doctor` found problems (so `gw doctor && …` means healthy).
fn issues_found(message: String, fix: &str) -> Error {
    Error::new(Code::IssuesFound, message).with_fix(fix)
}
