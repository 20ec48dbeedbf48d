use mcp_resolve::prompt;

#[prompt(nam = "greet")]
async fn greet(name: String) -> String {
    name
}

fn main() {}
