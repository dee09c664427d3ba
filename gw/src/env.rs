//! The process environment, read once at start-up.
//!
//! Everything below `cli` receives an [`Env`] instead of calling `std::env`, so in-process
//! tests can point grove at a temporary `HOME`/`GW_HOME` without mutating the test
//! process's own environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What grove reads from the environment it was started in.
#[derive(Debug, Clone)]
pub struct Env {
    /// The user's home directory (`HOME`).
    pub home: PathBuf,
    /// The grove directory: `GW_HOME`, else `$HOME/.grove`. `GROVE_HOME` is not read: the Go
    /// grove never read it, and other tools named grove keep their own data there.
    pub grove_home: PathBuf,
    /// The current working directory, as given by the OS (not canonicalised).
    pub cwd: PathBuf,
    /// `NO_COLOR` is set to a non-empty value.
    pub no_color: bool,
    /// `CLICOLOR_FORCE` or `FORCE_COLOR` is set to something other than `0`: colour even
    /// when the output is not a terminal (`NO_COLOR` and `--color` still win).
    pub force_color: bool,
    /// `COLUMNS`: the terminal's width when it cannot be asked (tables fit it on a terminal).
    pub columns: Option<usize>,
    /// `COMPLETE`: the shell asking for completion candidates (the scripts that
    /// `gw completions SHELL` prints set it when they call `gw`).
    pub complete: Option<String>,
    /// `_CLAP_COMPLETE_INDEX`: which of the words a bash completion request completes
    /// (other shells complete the last).
    pub complete_index: Option<usize>,
    /// `GW_FORMAT`, when set.
    pub format: Option<String>,
    /// `GROVE_CD_FILE`: where gw writes the directory the shell integration is to `cd` to
    /// (the workspace `gw go` or `gw create` leads to, or one that exists after the shell's
    /// was removed or moved). Set only by the integration (`gw shell-init`).
    pub cd_file: Option<PathBuf>,
    /// `GROVE_RETURN_DIR`: where the shell was before the integration took it into a
    /// workspace, to return to when that workspace is deleted.
    pub return_dir: Option<PathBuf>,
    /// `GROVE_SUBSHELL`: the integration's function runs in a subshell (a bash pipeline,
    /// `$(…)`), so the directory it changes to is lost when it ends.
    pub subshell: bool,
    /// `PATH`, used to find plugins.
    pub path: Option<OsString>,
    /// `SHELL`, used as the default for `gw shell-init`.
    pub shell: Option<String>,
    /// `GW_LOCK_TIMEOUT_MS`: how long to wait for a lock before giving up (default 30 s).
    pub lock_timeout_ms: Option<u64>,
    /// `GW_THREADS`: the most threads grove uses for CPU work (default: the number of cores).
    pub threads: Option<usize>,
    /// `GIT_SSH_COMMAND` for git: `ssh -o BatchMode=yes` (so ssh fails instead of
    /// prompting), or `None` when the user set `GIT_SSH_COMMAND` or `GIT_SSH` themselves.
    pub ssh_command: Option<String>,
    /// The running `gw` executable, for spawning grove's own background work; `None` when
    /// grove runs inside another program (tests), where that work is done in-process.
    pub exe: Option<PathBuf>,
    /// `TZ`: the time zone of the Go grove's local `created_at` times.
    pub tz: Option<String>,
    /// How `gw` was run (the first argument: `gw`, or a path): what completion scripts
    /// call for candidates.
    pub exe_name: Option<String>,
    /// `GW_TEST_PANIC`: panic before running the command. Only for tests of how a panic is
    /// reported (an `INTERNAL` error, an envelope in machine mode).
    pub test_panic: bool,
    /// `GW_CRASH_AFTER_JOURNAL_WRITES`: kill the process after that many journal writes.
    /// Only for the crash tests.
    pub crash_after_journal_writes: Option<u32>,
    /// `GW_TEST_NOW` (RFC 3339): the time the trash's retention is judged at. Only for the
    /// tests of retention, which must not sleep for a week.
    pub test_now: Option<String>,
    /// The variables grove sets for the commands it runs for a workspace (`PORT`,
    /// `GROVE_SLOT`, `GROVE_PORT_*`, `GROVE_REPO`, …; see `ops::hooks::Vars::environment`)
    /// that gw itself inherited from grove — from a shell that ran `eval "$(gw env)"`, or
    /// a hook ([`inherited_workspace_vars`]). They are taken out of those commands'
    /// environment first, so another repository's `PORT` or another workspace's ports
    /// never reach them.
    pub inherited_workspace_vars: Vec<OsString>,
}

/// Of the variables gw inherited (`names`), those that came from grove: every `GROVE_…`
/// one grove sets, and `PORT` when it came with them (`GROVE_WORKSPACE` is set: a shell
/// that ran `eval "$(gw env)"`, or a hook). A `PORT` of the user's own, without a
/// workspace exported beside it, is theirs and reaches their commands as before.
pub fn inherited_workspace_vars(names: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let mut grove: Vec<OsString> = names
        .filter(|k| k.to_str().is_some_and(is_workspace_var))
        .collect();
    if !grove.iter().any(|k| k == "GROVE_WORKSPACE") {
        grove.retain(|k| k != "PORT");
    }
    grove
}

/// Whether grove sets `name` for the commands it runs for a workspace (see
/// [`Env::inherited_workspace_vars`]).
pub fn is_workspace_var(name: &str) -> bool {
    matches!(
        name,
        "PORT"
            | "GROVE_SLOT"
            | "GROVE_REPO"
            | "GROVE_WORKTREE"
            | "GROVE_WORKSPACE"
            | "GROVE_WORKSPACE_PATH"
            | "GROVE_BRANCH"
    ) || name.starts_with("GROVE_PORT_")
}

/// The variables the shell integration sets for gw itself (see `ops::shell_init`): no
/// process gw starts (a hook, `gw run`'s commands, git) inherits them, or a `gw go` in a
/// hook would move the shell.
pub const SHELL_INTEGRATION: &[&str] = &["GROVE_CD_FILE", "GROVE_RETURN_DIR", "GROVE_SUBSHELL"];

impl Env {
    /// Reads the environment of the running process.
    #[allow(clippy::disallowed_methods)]
    pub fn from_process() -> Env {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let home = var("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"));
        let cwd = match std::env::current_dir() {
            Ok(cwd) => cwd,
            Err(_) => {
                // The current directory was deleted. gix (and git) resolve every path
                // against it, so no repository could be read: work from `/`, and remember
                // where the shell thinks we are, to say so.
                let _ = std::env::set_current_dir("/");
                var("PWD")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| PathBuf::from("/"))
            }
        };
        let grove_home = var("GW_HOME")
            .map(PathBuf::from)
            .map(|p| absolute(&cwd, &p))
            .unwrap_or_else(|| home.join(".grove"));
        Env {
            grove_home,
            cwd,
            no_color: var("NO_COLOR").is_some(),
            force_color: ["CLICOLOR_FORCE", "FORCE_COLOR"]
                .iter()
                .any(|k| var(k).is_some_and(|v| v != "0")),
            columns: var("COLUMNS")
                .and_then(|v| v.into_string().ok())
                .and_then(|v| v.parse().ok()),
            complete: var("COMPLETE")
                .and_then(|v| v.into_string().ok())
                .filter(|v| v != "0"),
            complete_index: var("_CLAP_COMPLETE_INDEX")
                .and_then(|v| v.into_string().ok())
                .and_then(|v| v.parse().ok()),
            format: var("GW_FORMAT").and_then(|v| v.into_string().ok()),
            cd_file: var("GROVE_CD_FILE").map(PathBuf::from),
            return_dir: var("GROVE_RETURN_DIR").map(PathBuf::from),
            subshell: var("GROVE_SUBSHELL").is_some_and(|v| v != "0"),
            path: var("PATH"),
            shell: var("SHELL").and_then(|v| v.into_string().ok()),
            lock_timeout_ms: var("GW_LOCK_TIMEOUT_MS")
                .and_then(|v| v.into_string().ok())
                .and_then(|v| v.parse().ok()),
            threads: var("GW_THREADS")
                .and_then(|v| v.into_string().ok())
                .and_then(|v| v.parse().ok()),
            ssh_command: (var("GIT_SSH_COMMAND").is_none() && var("GIT_SSH").is_none())
                .then(|| "ssh -o BatchMode=yes".to_string()),
            exe: std::env::current_exe().ok(),
            tz: var("TZ").and_then(|v| v.into_string().ok()),
            test_panic: var("GW_TEST_PANIC").is_some(),
            exe_name: std::env::args_os()
                .next()
                .map(|a| a.to_string_lossy().into_owned()),
            crash_after_journal_writes: var("GW_CRASH_AFTER_JOURNAL_WRITES")
                .and_then(|v| v.into_string().ok())
                .and_then(|v| v.parse().ok()),
            test_now: var("GW_TEST_NOW").and_then(|v| v.into_string().ok()),
            inherited_workspace_vars: inherited_workspace_vars(std::env::vars_os().map(|(k, _)| k)),
            home,
        }
    }

    /// An environment rooted in `home`, for tests: `GW_HOME` is `home/.grove`.
    pub fn for_home(home: &Path, cwd: &Path) -> Env {
        Env {
            home: home.to_path_buf(),
            grove_home: home.join(".grove"),
            cwd: cwd.to_path_buf(),
            no_color: true,
            force_color: false,
            columns: None,
            complete: None,
            complete_index: None,
            format: None,
            cd_file: None,
            return_dir: None,
            subshell: false,
            path: None,
            shell: None,
            lock_timeout_ms: None,
            threads: None,
            ssh_command: None,
            exe: None,
            tz: None,
            test_panic: false,
            exe_name: None,
            crash_after_journal_writes: None,
            test_now: None,
            inherited_workspace_vars: Vec::new(),
        }
    }

    /// The name of the program that started `gw` (Linux: `/proc/<ppid>/comm`), which for
    /// `eval "$(gw shell-init)"` is the shell itself; `None` where it cannot be read.
    pub fn parent_shell(&self) -> Option<String> {
        let ppid = rustix::process::getppid()?;
        let comm = format!("/proc/{}/comm", ppid.as_raw_nonzero());
        let name = crate::fsx::read(Path::new(&comm)).ok()?.trim().to_string();
        (!name.is_empty()).then_some(name)
    }

    /// Expands a leading `~` and makes `p` absolute against the current directory.
    pub fn resolve_path(&self, p: &Path) -> PathBuf {
        let expanded = expand_tilde(p, &self.home);
        absolute(&self.cwd, &expanded)
    }
}

/// Replaces a leading `~` or `~/` with `home`.
pub fn expand_tilde(p: &Path, home: &Path) -> PathBuf {
    match p.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) => p.to_path_buf(),
    }
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    normalize(&joined)
}

/// Removes `.` and `..` components lexically (without touching the file system).
pub fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// git's per-user configuration file `name` (`$XDG_CONFIG_HOME/git/NAME`, else
/// `$HOME/.config/git/NAME`), read from the running process's environment as git (and gix,
/// for the rest of a repository's configuration) reads it: the global excludes file when
/// `core.excludesFile` is not set.
#[allow(clippy::disallowed_methods)]
pub fn git_user_file(name: &str) -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let config = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("git").join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inherited_grove_variables_and_a_port_that_came_with_them() {
        let names = |list: &[&str]| -> Vec<OsString> {
            inherited_workspace_vars(list.iter().map(OsString::from))
        };
        // From `eval "$(gw env)"`: all of them, PORT included.
        assert_eq!(
            names(&[
                "HOME",
                "GROVE_WORKSPACE",
                "PORT",
                "GROVE_PORT_API_HTTP",
                "GROVE_DIR"
            ]),
            ["GROVE_WORKSPACE", "PORT", "GROVE_PORT_API_HTTP"]
        );
        // The user's own PORT stays theirs; a stray grove variable does not.
        assert_eq!(
            names(&["PORT", "GROVE_PORT_API_HTTP", "GROVE_SLOT", "PATH"]),
            ["GROVE_PORT_API_HTTP", "GROVE_SLOT"]
        );
        assert!(names(&["PORT", "PATH"]).is_empty());
    }

    #[test]
    fn tilde_and_dots_are_resolved() {
        let env = Env::for_home(Path::new("/home/u"), Path::new("/work/x"));
        assert_eq!(
            env.resolve_path(Path::new("~/src")),
            PathBuf::from("/home/u/src")
        );
        assert_eq!(
            env.resolve_path(Path::new("../y/./z")),
            PathBuf::from("/work/y/z")
        );
        assert_eq!(env.resolve_path(Path::new("/abs")), PathBuf::from("/abs"));
        assert_eq!(
            env.resolve_path(Path::new("~user")),
            PathBuf::from("/work/x/~user")
        );
    }
}
