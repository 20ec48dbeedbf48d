use mcp_resolve::tool;

#[tool]
struct Add {
    a: i64,
    b: i64,
}

fn main() {}
