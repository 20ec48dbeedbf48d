use mcp_resolve::tool;

#[tool]
async fn echo<T>(value: T) -> String {
    let _ = value;
    String::new()
}

fn main() {}
