use mcp_resolve::{Server, tool};

/// Header names that cannot be.
#[tool]
async fn route(
    #[arg(header = "Region Name")] region: String,
    #[arg(header = "")] zone: String,
    #[arg(header = "Shard")] shard: u32,
    #[arg(header = "shard")] other_shard: u32,
) -> String {
    format!("{region}{zone}{shard}{other_shard}")
}

fn main() {
    let _ = Server::new("s").tool(route);
}
