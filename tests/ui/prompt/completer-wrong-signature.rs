use mcp_resolve::prompt;

async fn names(value: String) -> Vec<String> {
    vec![value]
}

#[prompt]
async fn greet(#[arg(complete = names)] name: String) -> String {
    name
}

fn main() {}
