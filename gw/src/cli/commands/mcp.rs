//! `gw mcp-serve` (hidden): the Go grove's MCP server for a workspace's agents.

use clap::Args;

use crate::cli::{CmdResult, Out};
use crate::ops::Ctx;
use crate::output::render::Done;

#[derive(Debug, Args)]
pub struct McpServeArgs {
    /// The workspace the agent works in (its own announcements are not shown to it)
    #[arg(short, long)]
    pub workspace: String,
}

pub fn serve(ctx: &Ctx<'_>, args: McpServeArgs) -> CmdResult {
    let (mut input, mut output) = crate::output::protocol_stdio();
    crate::mcp::server::serve(ctx, &args.workspace, &mut input, &mut output)?;
    // The protocol was the output; there is nothing left to report.
    Ok(Out::new(Done {
        message: String::new(),
        result: serde_json::json!({}),
        warnings: Vec::new(),
    }))
}
