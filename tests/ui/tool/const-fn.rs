use mcp_resolve::tool;

#[tool]
const async fn answer() -> String {
    String::new()
}

fn main() {}
