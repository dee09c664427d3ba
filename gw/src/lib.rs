//! grove: multi-repository git worktree workspaces.
//!
//! This library is `gw`'s implementation, not a stable API. The layers point one way:
//! `cli` (clap, dispatch) → `ops` (one use case per module, returning reports) →
//! `git`, `state`, `config`, `discover` (adapters) → `proc`, `fsx`, `env`. Only `output`
//! writes to stdout or stderr, and only `proc` starts processes.

pub mod action;
pub mod cli;
pub mod config;
pub mod discover;
pub mod duration;
pub mod env;
pub mod error;
pub mod fsx;
pub mod git;
pub mod home;
pub mod legacy;
pub mod lock;
pub mod log;
pub mod ops;
pub mod output;
pub mod parallel;
pub mod proc;
pub mod redact;
pub mod schema;
pub mod state;
pub mod stats;
pub mod time;
