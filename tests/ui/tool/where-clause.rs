use mcp_resolve::tool;

#[tool]
async fn echo(value: String) -> String
where
    String: Clone,
{
    value
}

fn main() {}
