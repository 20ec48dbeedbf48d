use mcp_resolve::Server;

async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

fn main() {
    let _ = Server::new("x").tool(add);
}
