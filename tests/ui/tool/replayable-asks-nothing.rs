use mcp_resolve::prelude::*;

/// Destructive, but it asks nothing: there is no answer to replay.
#[tool(destructive = true, replayable)]
async fn purge(path: String) -> String {
    path
}

/// And `replayable` is a word, not a setting.
#[tool(destructive = true, replayable = true)]
async fn wipe(path: String, #[confirm("Wipe {path}?")] ok: bool) -> String {
    format!("{path} {ok}")
}

fn main() {}
