//! Leftovers of the Go grove's MCP era, found and cleaned safely.
//!
//! The Go grove ≤ 1.1.11 registered `gw mcp-serve` in each workspace's `.mcp.json` (up to
//! 1.1.5 also in every repository worktree's) and kept announcements in
//! `<GW_HOME>/messages.db`. grove has no MCP server, so those are leftovers:
//!
//! - [`mcp`]: the one definition of grove's own entry ([`mcp::is_grove_entry`]) and the
//!   surgical edit of one file;
//! - [`cleanup`]: scanning, applying with a write-ahead manifest and backups, restoring,
//!   and the `gw doctor` API ([`cleanup::doctor_findings`], [`cleanup::fix`]), shared with
//!   `gw-migrate`;
//! - [`jsonc`]: the span-keeping JSON-with-comments reader the edit relies on.

pub mod cleanup;
pub mod jsonc;
pub mod mcp;
