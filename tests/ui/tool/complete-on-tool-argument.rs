use mcp_resolve::{Context, tool};

async fn names(value: String, _cx: Context) -> Vec<String> {
    vec![value]
}

#[tool]
async fn greet(#[arg(complete = names)] name: String) -> String {
    name
}

fn main() {}
