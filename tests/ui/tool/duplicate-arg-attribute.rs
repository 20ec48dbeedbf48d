use mcp_resolve::tool;

#[tool]
async fn echo(
    #[arg(rename = "x")]
    #[arg(description = "y")]
    text: String,
) -> String {
    text
}

fn main() {}
