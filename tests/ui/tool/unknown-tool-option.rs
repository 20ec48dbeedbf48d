use mcp_resolve::tool;

#[tool(nam = "x")]
async fn echo(text: String) -> String {
    text
}

fn main() {}
