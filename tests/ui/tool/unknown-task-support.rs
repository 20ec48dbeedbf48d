use mcp_resolve::prelude::*;

/// A deploy that takes minutes: "sometimes" is not one of the ways a tool runs.
#[tool(task = "sometimes")]
async fn deploy(service: String) -> String {
    service
}

/// A task support that is not a string.
#[tool(task = true)]
async fn report() -> String {
    String::new()
}

fn main() {
    let _ = Server::new("t").tool(deploy).tool(report);
}
