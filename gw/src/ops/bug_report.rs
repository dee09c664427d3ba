//! `gw bug-report [--print]`: what a bug report needs, with secrets redacted.
//!
//! Three sections, as in the Go grove: `## Environment` (versions, platform, shell, the
//! grove directory, workspaces, repositories and their remotes, `config.toml`), `## Doctor`
//! (the report of `gw doctor`, from [`doctor::doctor`] itself) and `## Recent Logs` (the
//! tail of `grove.log`). Credentials in URLs, `*_TOKEN`/`*_KEY`-style values and known token
//! formats are redacted everywhere ([`crate::redact`]); with `redact_home` the home
//! directory is shown as `~` too.
//!
//! The report also carries a pre-filled new-issue URL of grove's repository, which the CLI
//! offers to open in a browser ([`open`]).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::action::NextAction;
use crate::error::{Code, Error, Result};
use crate::ops::Ctx;
use crate::ops::doctor::{self, DoctorOptions, DoctorReport};
use crate::proc::Cmd;
use crate::{fsx, log, redact};

/// How many lines of the log the report carries.
pub const LOG_LINES: usize = 50;
/// How many repositories are listed (the count is always given).
const MAX_REPOS: usize = 50;
/// The longest new-issue URL the report produces; browsers and GitHub refuse much longer
/// ones, so a longer body is cut (the full report is what `--print` shows).
const MAX_URL: usize = 7000;

/// The repository issues are filed against (`repository` in the workspace manifest).
pub const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

#[derive(Debug, Clone, Copy, Default)]
pub struct BugReportOptions {
    /// Show the home directory as `~`.
    pub redact_home: bool,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BugReport {
    pub environment: Environment,
    pub doctor: DoctorSection,
    pub recent_logs: RecentLogs,
    /// The whole report as Markdown (what `gw bug-report --print` prints).
    pub markdown: String,
    /// A new-issue URL of grove's repository with the report as its body (cut to a length
    /// browsers accept; `truncated` says so).
    pub issue_url: String,
    pub truncated: bool,
    /// The URL was opened in a browser.
    pub opened: bool,
    /// Why the browser could not be opened (the report is printed instead).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Environment {
    pub gw_version: String,
    pub os: String,
    pub arch: String,
    /// `$SHELL`.
    pub shell: Option<String>,
    /// `git --version`, or why it could not be run.
    pub git_version: String,
    pub grove_dir: String,
    pub config_path: String,
    /// `config.toml` exists.
    pub initialized: bool,
    pub workspace_dir: Option<String>,
    /// `null` when `state.json` cannot be read.
    pub workspace_count: Option<usize>,
    /// The repositories grove finds (at most 50), with their origin URLs.
    pub repositories: Vec<RepoLine>,
    pub repository_count: usize,
    /// The text of `config.toml`, redacted; `null` when there is none.
    pub config: Option<String>,
    /// What could not be read (the configuration, the state, the repositories).
    pub problems: Vec<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RepoLine {
    pub name: String,
    pub remote: Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct DoctorSection {
    /// `gw doctor`'s report; `null` when doctor could not run (see `error`).
    pub report: Option<DoctorReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RecentLogs {
    pub path: String,
    /// The last lines of `grove.log` (continuing into `grove.log.1`), oldest first.
    pub lines: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl BugReport {
    pub fn next_actions(&self) -> Vec<NextAction> {
        let mut v = Vec::new();
        if self
            .doctor
            .report
            .as_ref()
            .is_some_and(|d| d.issues.iter().any(|i| i.fixable))
        {
            v.push(NextAction::write(
                "Repair what is safe to repair",
                &["gw", "doctor", "--fix", "--format", "json"],
            ));
        }
        v
    }
}

/// Applies the redactions asked for to text.
struct Redactor {
    home: Option<PathBuf>,
}

impl Redactor {
    fn text(&self, s: &str) -> String {
        let s = redact::secrets(s);
        match &self.home {
            Some(h) => redact::home(&s, h).into_owned(),
            None => s.into_owned(),
        }
    }

    fn path(&self, p: &Path) -> String {
        self.text(&p.to_string_lossy())
    }
}

/// Gathers the report. Never fails: what cannot be read is said in the report.
pub fn bug_report(ctx: &Ctx<'_>, opts: BugReportOptions) -> BugReport {
    let r = Redactor {
        home: opts.redact_home.then(|| ctx.env.home.clone()),
    };
    let environment = environment(ctx, &r);
    let doctor = match doctor::doctor(ctx, DoctorOptions { fix: false }) {
        Ok(mut report) => {
            for i in &mut report.issues {
                i.issue = r.text(&i.issue);
                i.suggested_action = r.text(&i.suggested_action);
                i.workspace = i.workspace.as_deref().map(|w| r.text(w));
                i.path = i.path.as_deref().map(|p| PathBuf::from(r.path(p)));
            }
            DoctorSection {
                report: Some(report),
                error: None,
            }
        }
        Err(e) => DoctorSection {
            report: None,
            error: Some(r.text(&e.message)),
        },
    };
    let log_path = ctx.home.log();
    let recent_logs = match log::tail(&log_path, LOG_LINES) {
        Ok(lines) => RecentLogs {
            path: r.path(&log_path),
            lines: lines.iter().map(|l| r.text(l)).collect(),
            error: None,
        },
        Err(e) => RecentLogs {
            path: r.path(&log_path),
            lines: Vec::new(),
            error: Some(r.text(&format!("cannot read {}: {e}", log_path.display()))),
        },
    };
    let mut report = BugReport {
        environment,
        doctor,
        recent_logs,
        markdown: String::new(),
        issue_url: String::new(),
        truncated: false,
        opened: false,
        warnings: Vec::new(),
    };
    report.markdown = markdown(&report);
    let (url, truncated) = issue_url(&report.markdown);
    report.issue_url = url;
    report.truncated = truncated;
    report
}

fn environment(ctx: &Ctx<'_>, r: &Redactor) -> Environment {
    let mut problems = Vec::new();
    let git_version =
        crate::git::version(&ctx.env.cwd).unwrap_or_else(|e| format!("unavailable ({e})"));
    let config_path = ctx.home.config();
    let config_text = match fsx::read_optional(&config_path) {
        Ok(t) => t,
        Err(e) => {
            problems.push(r.text(&e.to_string()));
            None
        }
    };
    let config = match ctx.config() {
        Ok(c) => Some(c),
        Err(e) if e.code == Code::NotInitialized => None,
        Err(e) => {
            problems.push(r.text(&e.message));
            None
        }
    };
    let workspace_count = match ctx.state() {
        Ok(s) => Some(s.workspaces.len()),
        Err(e) => {
            problems.push(r.text(&e.message));
            None
        }
    };
    let (repositories, repository_count) = if config.is_some() {
        match crate::ops::repos::repos(ctx) {
            Ok(found) => {
                let n = found.repos.len();
                let lines = found
                    .repos
                    .into_iter()
                    .take(MAX_REPOS)
                    .map(|repo| RepoLine {
                        name: repo.name,
                        remote: repo.remote.as_deref().map(|u| r.text(u)),
                    })
                    .collect();
                (lines, n)
            }
            Err(e) => {
                problems.push(r.text(&e.message));
                (Vec::new(), 0)
            }
        }
    } else {
        (Vec::new(), 0)
    };
    Environment {
        gw_version: env!("CARGO_PKG_VERSION").to_string(),
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        shell: ctx.env.shell.clone(),
        git_version,
        grove_dir: r.path(ctx.home.root()),
        config_path: r.path(&config_path),
        initialized: config_text.is_some(),
        workspace_dir: config.as_ref().map(|c| r.path(&c.workspace_dir)),
        workspace_count,
        repositories,
        repository_count,
        config: config_text.map(|t| r.text(&t)),
        problems,
    }
}

/// The report in Markdown: the three sections of the Go grove's bug report.
fn markdown(b: &BugReport) -> String {
    let e = &b.environment;
    let mut s = String::from("## Environment\n\n");
    let mut item = |k: &str, v: &str| s.push_str(&format!("- **{k}:** {v}\n"));
    item("gw", &e.gw_version);
    item("OS", &format!("{} ({})", e.os, e.arch));
    item("Shell", e.shell.as_deref().unwrap_or("unknown"));
    item("git", &e.git_version);
    item("Grove dir", &e.grove_dir);
    item(
        "Config",
        &format!(
            "{}{}",
            e.config_path,
            if e.initialized {
                ""
            } else {
                " (missing: grove is not initialised)"
            }
        ),
    );
    if let Some(w) = &e.workspace_dir {
        item("Workspace dir", w);
    }
    item(
        "Workspaces",
        &e.workspace_count
            .map(|n| n.to_string())
            .unwrap_or_else(|| "unknown (state.json unreadable)".into()),
    );
    item("Repositories", &e.repository_count.to_string());
    for repo in &e.repositories {
        s.push_str(&format!(
            "  - {}: {}\n",
            repo.name,
            repo.remote.as_deref().unwrap_or("(no origin)")
        ));
    }
    if e.repository_count > e.repositories.len() {
        s.push_str(&format!(
            "  - … and {} more\n",
            e.repository_count - e.repositories.len()
        ));
    }
    for p in &e.problems {
        s.push_str(&format!("- **Problem:** {p}\n"));
    }
    if let Some(config) = &e.config {
        s.push_str("\n### config.toml\n\n```toml\n");
        s.push_str(config.trim_end());
        s.push_str("\n```\n");
    }

    s.push_str("\n## Doctor\n\n");
    match (&b.doctor.report, &b.doctor.error) {
        (Some(d), _) if d.issues.is_empty() => s.push_str("All workspaces healthy\n"),
        (Some(d), _) => {
            for i in &d.issues {
                let whose = [i.workspace.as_deref(), i.repo.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("/");
                let whose = if whose.is_empty() {
                    "grove".into()
                } else {
                    whose
                };
                s.push_str(&format!(
                    "- `{}` {whose}: {} (suggested: {})\n",
                    i.kind, i.issue, i.suggested_action
                ));
            }
        }
        (None, error) => s.push_str(&format!(
            "doctor could not run: {}\n",
            error.as_deref().unwrap_or("unknown error")
        )),
    }

    s.push_str("\n## Recent Logs\n\n");
    match &b.recent_logs.error {
        Some(err) => s.push_str(&format!("{err}\n")),
        None if b.recent_logs.lines.is_empty() => {
            s.push_str(&format!("(no log yet at {})\n", b.recent_logs.path))
        }
        None => {
            s.push_str("```\n");
            for l in &b.recent_logs.lines {
                s.push_str(l);
                s.push('\n');
            }
            s.push_str("```\n");
        }
    }
    s
}

/// `<repository>/issues/new?title=…&body=…`, with the body cut (at a line) so the URL stays
/// under [`MAX_URL`]; whether it was cut.
fn issue_url(body: &str) -> (String, bool) {
    let base = format!(
        "{}/issues/new?title={}&body=",
        REPOSITORY.trim_end_matches('/'),
        percent_encode("Bug report")
    );
    let full = percent_encode(body);
    if base.len() + full.len() <= MAX_URL {
        return (base + &full, false);
    }
    const NOTE: &str = "\n…(cut; paste the rest from `gw bug-report --print`)\n";
    let budget = MAX_URL - base.len() - percent_encode(NOTE).len();
    let mut cut = String::new();
    let mut used = 0;
    for line in body.split_inclusive('\n') {
        let enc = percent_encode(line);
        if used + enc.len() > budget {
            break;
        }
        used += enc.len();
        cut.push_str(line);
    }
    cut.push_str(NOTE);
    (base + &percent_encode(&cut), true)
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Opens `url` in the browser (`open` on macOS, `xdg-open` elsewhere).
pub fn open(ctx: &Ctx<'_>, url: &str) -> Result<()> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    Cmd::new(opener, &ctx.env.cwd)
        .arg(url)
        .check()
        .map_err(|e| {
            Error::new(
                Code::Internal,
                format!("cannot open a browser with `{opener}`: {e}"),
            )
            .with_fix("Run `gw bug-report --print` and paste the report into a new issue")
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_urls_are_encoded_and_bounded() {
        let (url, cut) = issue_url("## Environment\n- a & b = c?\n");
        assert!(!cut);
        assert!(url.starts_with(&format!("{REPOSITORY}/issues/new?title=Bug%20report&body=")));
        assert!(
            url.ends_with("%23%23%20Environment%0A-%20a%20%26%20b%20%3D%20c%3F%0A"),
            "{url}"
        );
        let long: String = (0..2000)
            .map(|i| format!("line {i} of the log\n"))
            .collect();
        let (url, cut) = issue_url(&long);
        assert!(cut);
        assert!(url.len() <= MAX_URL, "{}", url.len());
        assert!(url.contains("line%200%20of"), "starts with the beginning");
        assert!(
            url.contains("bug-report%20--print"),
            "says where the rest is"
        );
    }
}
