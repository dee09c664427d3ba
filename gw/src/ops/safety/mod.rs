//! The safety kernel: the one judge of what a removal loses, and the one place grove
//! removes anything.
//!
//! - [`work`]: what a worktree, a registration whose directory is gone, or a repository
//!   whose git directory goes holds that exists nowhere else (`Work`, one [`Held`] per
//!   kind);
//! - [`verdict`]: which of it each [`Remover`] would lose and which `--force` lets go
//!   (`Work::refusal`), and the inspection of a workspace's worktrees;
//! - [`fate`]: what happens to a branch when its worktree goes, and to a branch
//!   `gw prune branches` would delete;
//! - [`territory`]: where grove may act at all;
//! - [`remove`]: the removal actions, each through one function that knows what it
//!   removes, with their undo ([`in_git`]: how a branch and a registration go);
//! - [`keep`]: what a retained removal keeps for the trash (a branch's tip, a worktree's
//!   registration) and the removal of that again.
//!
//! Every remover asks it — `gw delete`, `gw remove-repo`, `gw prune`, `gw prune
//! branches`, a rollback, recovery, `gw doctor --fix`, `gw reset --discard`, `gw create
//! --replace` — and their plans describe the same verdicts. `gw/tests/tidy.rs` fails when
//! a branch deletion, a worktree removal or a recursive delete is reached from anywhere
//! else.

pub mod fate;
mod in_git;
pub mod keep;
mod nested;
pub mod remove;
mod repository;
pub mod territory;
pub mod verdict;
pub mod work;

#[cfg(test)]
mod tests;

pub use fate::Fate;
pub use territory::Territory;
pub use verdict::{Inspection, Remover, inspect, inspect_all, refused};
pub use work::{Held, Kind, Work};
