use mcp_resolve::prompt;

#[prompt(scopes = "notes:read")]
async fn greet(name: String) -> String {
    name
}

fn main() {}
