use mcp_resolve::{Server, tool};

/// A floating-point number cannot be mirrored into a header (`x-mcp-header` excludes `number`).
#[tool]
async fn weigh(#[arg(header = "Weight")] weight: f64) -> String {
    weight.to_string()
}

fn main() {
    let _ = Server::new("s").tool(weigh);
}
