use mcp_resolve::prompt;

#[prompt]
async fn greet(name: String, #[arg(rename = "name")] other: String) -> String {
    format!("{name} {other}")
}

fn main() {}
