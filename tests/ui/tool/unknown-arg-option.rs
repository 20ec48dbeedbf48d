use mcp_resolve::tool;

#[tool]
async fn echo(#[arg(renam = "x")] text: String) -> String {
    text
}

fn main() {}
