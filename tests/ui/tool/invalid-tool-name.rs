use mcp_resolve::tool;

#[tool(name = "has space")]
async fn echo(text: String) -> String {
    text
}

fn main() {}
