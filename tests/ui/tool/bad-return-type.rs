use mcp_resolve::tool;

struct Sum {
    value: i64,
}

#[tool]
async fn add(a: i64, b: i64) -> Sum {
    Sum { value: a + b }
}

fn main() {}
