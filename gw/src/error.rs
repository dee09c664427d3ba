//! The one error type at the edge of the library, its stable codes and exit classes.
//!
//! Every layer has its own error enum; the `From` impls at the bottom of this file are the
//! one place where a layer error becomes a [`Code`] (and so an exit class) and gets its fix.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::action::NextAction;

/// A stable, machine-readable error code (SPEC §5). Agents branch on these, never on
/// messages; renaming one or moving it to another exit class is a breaking change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    Internal,
    Usage,
    PlanInvalid,
    WorkspaceNotFound,
    RepoNotFound,
    PresetNotFound,
    NoWorkspaces,
    WorkspaceExists,
    WorktreeExists,
    BranchConflict,
    WorktreeDirty,
    StateChanged,
    PortInUse,
    NotInitialized,
    WorkspaceDirMissing,
    GitFailed,
    HookFailed,
    CorruptState,
    RecoveryPending,
    RecoveryRefused,
    IssuesFound,
    PermissionDenied,
    UntrustedCommands,
    Transient,
    Cancelled,
}

impl Code {
    /// Every code, in table order.
    pub const ALL: &'static [Code] = &[
        Code::Internal,
        Code::Usage,
        Code::PlanInvalid,
        Code::WorkspaceNotFound,
        Code::RepoNotFound,
        Code::PresetNotFound,
        Code::NoWorkspaces,
        Code::WorkspaceExists,
        Code::WorktreeExists,
        Code::BranchConflict,
        Code::WorktreeDirty,
        Code::StateChanged,
        Code::PortInUse,
        Code::NotInitialized,
        Code::WorkspaceDirMissing,
        Code::GitFailed,
        Code::HookFailed,
        Code::CorruptState,
        Code::RecoveryPending,
        Code::RecoveryRefused,
        Code::IssuesFound,
        Code::PermissionDenied,
        Code::UntrustedCommands,
        Code::Transient,
        Code::Cancelled,
    ];

    /// The process exit code for this error's class.
    pub fn exit_code(self) -> u8 {
        match self {
            Code::Internal => 1,
            Code::Usage | Code::PlanInvalid => 2,
            Code::WorkspaceNotFound
            | Code::RepoNotFound
            | Code::PresetNotFound
            | Code::NoWorkspaces => 3,
            Code::WorkspaceExists
            | Code::WorktreeExists
            | Code::BranchConflict
            | Code::WorktreeDirty
            | Code::StateChanged
            | Code::PortInUse => 4,
            Code::NotInitialized
            | Code::WorkspaceDirMissing
            | Code::GitFailed
            | Code::HookFailed
            | Code::CorruptState
            | Code::RecoveryPending
            | Code::RecoveryRefused
            | Code::IssuesFound => 5,
            Code::PermissionDenied | Code::UntrustedCommands => 6,
            Code::Transient => 7,
            Code::Cancelled => 8,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Code::Internal => "INTERNAL",
            Code::Usage => "USAGE",
            Code::PlanInvalid => "PLAN_INVALID",
            Code::WorkspaceNotFound => "WORKSPACE_NOT_FOUND",
            Code::RepoNotFound => "REPO_NOT_FOUND",
            Code::PresetNotFound => "PRESET_NOT_FOUND",
            Code::NoWorkspaces => "NO_WORKSPACES",
            Code::WorkspaceExists => "WORKSPACE_EXISTS",
            Code::WorktreeExists => "WORKTREE_EXISTS",
            Code::BranchConflict => "BRANCH_CONFLICT",
            Code::WorktreeDirty => "WORKTREE_DIRTY",
            Code::StateChanged => "STATE_CHANGED",
            Code::PortInUse => "PORT_IN_USE",
            Code::NotInitialized => "NOT_INITIALIZED",
            Code::WorkspaceDirMissing => "WORKSPACE_DIR_MISSING",
            Code::GitFailed => "GIT_FAILED",
            Code::HookFailed => "HOOK_FAILED",
            Code::CorruptState => "CORRUPT_STATE",
            Code::RecoveryPending => "RECOVERY_PENDING",
            Code::RecoveryRefused => "RECOVERY_REFUSED",
            Code::IssuesFound => "ISSUES_FOUND",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::UntrustedCommands => "UNTRUSTED_COMMANDS",
            Code::Transient => "TRANSIENT",
            Code::Cancelled => "CANCELLED",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error as the user (or agent) sees it: a code, a one-line message, optional
/// structured details, a fix and the next actions that would help. Boxed, so that
/// `Result<T, Error>` stays small on the happy path.
#[derive(Debug, Clone)]
pub struct Error(Box<ErrorData>);

#[derive(Debug, Clone)]
pub struct ErrorData {
    pub code: Code,
    pub message: String,
    pub details: Option<Value>,
    pub fix: Option<String>,
    pub next_actions: Vec<NextAction>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error(Box::new(ErrorData {
            code,
            message: message.into(),
            details: None,
            fix: None,
            next_actions: Vec::new(),
        }))
    }

    pub fn usage(message: impl Into<String>) -> Error {
        Error::new(Code::Usage, message)
    }

    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(Code::Internal, message)
    }

    pub fn with_fix(mut self, fix: impl Into<String>) -> Error {
        self.fix = Some(fix.into());
        self
    }

    pub fn with_details(mut self, details: Value) -> Error {
        self.details = Some(details);
        self
    }

    /// Adds the keys of `more` (an object) to the details, keeping those already there
    /// that it does not name (a cancellation's `signal`).
    pub fn with_more_details(mut self, more: Value) -> Error {
        match (&mut self.details, more) {
            (Some(Value::Object(have)), Value::Object(more)) => have.extend(more),
            (_, more) => self.details = Some(more),
        }
        self
    }

    pub fn with_action(mut self, action: NextAction) -> Error {
        self.next_actions.push(action);
        self
    }

    /// The same error (code, details, fix, actions) saying `message` instead.
    pub fn with_message(mut self, message: impl Into<String>) -> Error {
        self.message = message.into();
        self
    }

    /// Prefixes the message with context, keeping the code.
    pub fn context(mut self, what: impl fmt::Display) -> Error {
        self.message = format!("{what}: {}", self.message);
        self
    }
}

impl std::ops::Deref for Error {
    type Target = ErrorData;
    fn deref(&self) -> &ErrorData {
        &self.0
    }
}

impl std::ops::DerefMut for Error {
    fn deref_mut(&mut self) -> &mut ErrorData {
        &mut self.0
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<crate::fsx::Error> for Error {
    fn from(e: crate::fsx::Error) -> Error {
        use std::io::ErrorKind;
        let code = match e.kind() {
            ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => Code::PermissionDenied,
            // A file grove reads whole that is not text, not a regular file (a FIFO, a
            // device) or absurdly large (config.toml, state.json, a journal).
            ErrorKind::InvalidData | ErrorKind::FileTooLarge => Code::CorruptState,
            _ => Code::Internal,
        };
        let err = Error::new(code, e.to_string());
        match code {
            Code::PermissionDenied => {
                err.with_fix(format!("Check the permissions of `{}`", e.path.display()))
            }
            Code::CorruptState => err.with_fix(format!(
                "`{}` must be a regular file of UTF-8 text, at most {} MiB: fix or replace it by hand (grove never overwrites a file it cannot read)",
                e.path.display(),
                crate::fsx::MAX_FILE / (1024 * 1024)
            )),
            _ => err,
        }
    }
}

impl From<crate::lock::Error> for Error {
    fn from(e: crate::lock::Error) -> Error {
        match e {
            crate::lock::Error::Io(io) => io.into(),
            e @ crate::lock::Error::Timeout { .. } => Error::new(Code::Transient, e.to_string())
                .with_fix("Another gw process is working on this; retry when it has finished"),
        }
    }
}

impl From<crate::state::journal::Error> for Error {
    fn from(e: crate::state::journal::Error) -> Error {
        use crate::state::journal::Error as J;
        match e {
            J::Io(io) => io.into(),
            e @ J::Corrupt { .. } => Error::new(Code::CorruptState, e.to_string()).with_fix(
                "Run `gw doctor` to see it; grove never deletes a journal it cannot read",
            ),
        }
    }
}

impl From<crate::proc::Error> for Error {
    fn from(e: crate::proc::Error) -> Error {
        match &e {
            crate::proc::Error::Spawn { program, .. } if program == "git" => {
                Error::new(Code::GitFailed, e.to_string())
                    .with_fix("Install git and make sure it is on PATH")
            }
            crate::proc::Error::Spawn { .. } => Error::new(Code::Internal, e.to_string()),
            crate::proc::Error::Failed { .. } => crate::git::Error::Command(e).into(),
        }
    }
}

impl From<crate::git::Error> for Error {
    fn from(e: crate::git::Error) -> Error {
        let fix = e.fix();
        let code = if e.is_auth() || e.is_local_permission() {
            Code::PermissionDenied
        } else if e.is_transient() {
            Code::Transient
        } else {
            Code::GitFailed
        };
        let err = Error::new(code, e.to_string());
        match fix {
            Some(f) => err.with_fix(f),
            None => err,
        }
    }
}

impl From<crate::state::Error> for Error {
    fn from(e: crate::state::Error) -> Error {
        use crate::state::Error as S;
        match e {
            S::Io(io) => io.into(),
            S::Corrupt { .. } => Error::new(Code::CorruptState, e.to_string()).with_fix(
                "Run `gw doctor` to diagnose; grove never overwrites a file it cannot read",
            ),
            S::LockTimeout { .. } => Error::new(Code::Transient, e.to_string())
                .with_fix("Another gw process holds the lock; retry when it has finished"),
        }
    }
}

impl From<crate::config::Error> for Error {
    fn from(e: crate::config::Error) -> Error {
        use crate::config::Error as C;
        match e {
            C::Io(io) => io.into(),
            C::NotInitialized { .. } => Error::new(Code::NotInitialized, "grove is not initialized")
                .with_fix("Run `gw init <repo-dir>` to point grove at the directory holding your repositories")
                .with_action(NextAction::read(
                    "See grove's state and a suggested init command",
                    &["gw", "context", "--format", "json"],
                )),
            C::Invalid { .. } => Error::new(Code::CorruptState, e.to_string())
                .with_fix("Fix the file by hand or run `gw doctor`; grove never overwrites a file it cannot read"),
            C::RepoConfig { .. } => Error::new(Code::CorruptState, e.to_string())
                .with_fix("Fix the repository's `.grove.toml`"),
        }
    }
}
