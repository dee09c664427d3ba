//! The MCP era, as the Go grove ≤ 1.1.11 shipped it (the legacy baseline).
//!
//! - [`server`]: hidden `gw mcp-serve --workspace NAME`, JSON-RPC 2.0 over stdio with the
//!   tools `announce`, `get_announcements` and `list_workspaces`;
//! - [`store`]: the announcements database `<GROVE_HOME>/messages.db` (SQLite, WAL);
//! - [`config`]: the `grove` entry `gw create` writes into the workspace's `.mcp.json` and
//!   `gw delete` removes.
//!
//! This surface exists only so that its cost can be measured before it is removed (SPEC §9);
//! it follows the Go grove's behaviour, including its known flaws (an unparseable
//! `.mcp.json` is overwritten, `gw delete` removes any `grove` entry).

pub mod config;
pub mod server;
pub mod store;
