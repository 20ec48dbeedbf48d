//! A name the crate root had before the modules warns with its new path.
#![deny(deprecated)]

use mcp_resolve::{CallToolResult, ProtocolVersion, StateKeys};

fn main() {
    let _ = mcp_resolve::Json(1);
    let _ = mcp_resolve::ListRoots;
    let _: Option<(CallToolResult, ProtocolVersion, StateKeys)> = None;
}
