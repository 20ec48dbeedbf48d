use mcp_resolve::prelude::*;

/// Not destructive: its answers replay already, so `replayable` opts out of nothing.
#[tool(replayable)]
async fn rename(path: String, #[confirm("Rename {path}?")] ok: bool) -> String {
    format!("{path} {ok}")
}

/// Nor when it says so.
#[tool(destructive = false, replayable)]
async fn touch(path: String, #[confirm("Touch {path}?")] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
