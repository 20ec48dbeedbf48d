use mcp_resolve::prompt;

#[prompt]
async fn greet(#[resolve(who)] name: String) -> String {
    name
}

fn main() {}
