use mcp_resolve::tool;

#[tool]
async fn add((a, b): (u8, u8)) -> String {
    (a + b).to_string()
}

fn main() {}
