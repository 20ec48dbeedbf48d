use mcp_resolve::tool;

#[tool]
async fn echo(text: impl Into<String>) -> String {
    text.into()
}

fn main() {}
