use mcp_resolve::prompt;

#[prompt]
async fn greet<T: ToString>(name: String) -> String {
    name
}

fn main() {}
