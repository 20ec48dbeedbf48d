use mcp_resolve::prompt;

#[prompt]
fn greet(name: String) -> String {
    format!("Greet {name}")
}

fn main() {}
